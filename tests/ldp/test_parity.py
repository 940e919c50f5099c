"""API parity with trasgoDP, derived from the trasgoDP paper (Tables 1-3, Example Codes 1-2).

A trasgoDP user switches by changing the import: the same function names, the same
positional parameters in the same order with the same defaults (except ``seed=None`` in
``metric_privacy``, where trasgoDP's fixed 42 makes the noise removable), extras only as
keywords, the same return types, and ``ValueError`` on the same mistakes. trasgoDP itself
is not imported: the expected signatures are written out below.
"""

from __future__ import annotations

import inspect
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import veil.ldp
from veil.errors import PrivacyLeakWarning
from veil.ldp import categorical, geoindis, numerical

_NO_DEFAULT = inspect.Parameter.empty

# (module, function, [(parameter, default), ...]) for every positional parameter.
EXPECTED: list[tuple[Any, str, list[tuple[str, Any]]]] = [
    (
        numerical,
        "dp_clip_laplace",
        [
            ("df", _NO_DEFAULT),
            ("column", _NO_DEFAULT),
            ("epsilon", _NO_DEFAULT),
            ("lower_bound", _NO_DEFAULT),
            ("upper_bound", _NO_DEFAULT),
            ("new_column", False),
        ],
    ),
    (
        numerical,
        "dp_clip_laplace_array",
        [
            ("data", _NO_DEFAULT),
            ("epsilon", _NO_DEFAULT),
            ("lower_bound", _NO_DEFAULT),
            ("upper_bound", _NO_DEFAULT),
        ],
    ),
    (
        numerical,
        "dp_clip_gaussian",
        [
            ("df", _NO_DEFAULT),
            ("column", _NO_DEFAULT),
            ("epsilon", _NO_DEFAULT),
            ("lower_bound", _NO_DEFAULT),
            ("upper_bound", _NO_DEFAULT),
            ("delta", 1e-3),
            ("new_column", False),
        ],
    ),
    (
        numerical,
        "dp_clip_gaussian_array",
        [
            ("data", _NO_DEFAULT),
            ("epsilon", _NO_DEFAULT),
            ("lower_bound", _NO_DEFAULT),
            ("upper_bound", _NO_DEFAULT),
            ("delta", 1e-3),
        ],
    ),
    (
        categorical,
        "dp_exponential",
        [
            ("df", _NO_DEFAULT),
            ("column", _NO_DEFAULT),
            ("epsilon", _NO_DEFAULT),
            ("new_column", False),
        ],
    ),
    (categorical, "dp_exponential_array", [("data", _NO_DEFAULT), ("epsilon", _NO_DEFAULT)]),
    (
        categorical,
        "dp_randomized_response_binary",
        [
            ("df", _NO_DEFAULT),
            ("column", _NO_DEFAULT),
            ("epsilon", _NO_DEFAULT),
            ("new_column", False),
            ("positive_label", None),
        ],
    ),
    (
        categorical,
        "dp_randomized_response_binary_array",
        [("data", _NO_DEFAULT), ("epsilon", _NO_DEFAULT), ("positive_label", None)],
    ),
    (
        categorical,
        "dp_randomized_response_kary",
        [
            ("df", _NO_DEFAULT),
            ("column", _NO_DEFAULT),
            ("epsilon", _NO_DEFAULT),
            ("new_column", False),
        ],
    ),
    (
        categorical,
        "dp_randomized_response_kary_array",
        [("data", _NO_DEFAULT), ("epsilon", _NO_DEFAULT)],
    ),
    (
        geoindis,
        "metric_privacy",
        [
            ("df", _NO_DEFAULT),
            ("column_lat", _NO_DEFAULT),
            ("column_lon", _NO_DEFAULT),
            ("epsilon", _NO_DEFAULT),
            ("new_cols", False),
            ("earth_radius_m", 6_371_000),
            ("seed", None),  # deliberate: trasgoDP's default is 42
        ],
    ),
    (
        geoindis,
        "plot_metric_dp_map",
        [
            ("df_dp", _NO_DEFAULT),
            ("column_lat", _NO_DEFAULT),
            ("column_lon", _NO_DEFAULT),
            ("save_file", "metric_dp_map.html"),
        ],
    ),
]
IDS = [name for _, name, _ in EXPECTED]


@pytest.mark.parametrize(("module", "name", "expected"), EXPECTED, ids=IDS)
def test_positional_parameters_and_defaults_match_trasgodp(
    module: Any, name: str, expected: list[tuple[str, Any]]
) -> None:
    sig = inspect.signature(getattr(module, name))
    positional = [
        p
        for p in sig.parameters.values()
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    assert [(p.name, p.default) for p in positional] == expected
    assert all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in positional)


@pytest.mark.parametrize(("module", "name", "expected"), EXPECTED, ids=IDS)
def test_extras_are_keyword_only(module: Any, name: str, expected: list[tuple[str, Any]]) -> None:
    sig = inspect.signature(getattr(module, name))
    extras = list(sig.parameters.values())[len(expected) :]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in extras), extras
    assert all(p.default is not _NO_DEFAULT for p in extras)


@pytest.mark.parametrize(
    ("name", "keywords"),
    [
        ("dp_clip_laplace", {"missing", "rng", "ledger", "clip_output", "resolution"}),
        ("dp_clip_gaussian", {"missing", "rng", "ledger", "calibration", "clip_output"}),
        ("dp_exponential", {"domain", "missing", "rng", "ledger", "calibration"}),
        ("dp_randomized_response_binary", {"domain", "missing", "rng", "ledger"}),
        ("dp_randomized_response_kary", {"domain", "missing", "rng", "ledger"}),
        ("dp_randomized_response_kary_array", {"domain", "missing", "rng", "ledger"}),
        ("metric_privacy", {"missing", "rng", "ledger", "shared_noise_for_duplicates"}),
        ("plot_metric_dp_map", {"show_original"}),
    ],
)
def test_documented_keyword_extras_exist(name: str, keywords: set[str]) -> None:
    params = inspect.signature(getattr(veil.ldp, name)).parameters
    assert keywords <= set(params)
    assert all(params[k].kind is inspect.Parameter.KEYWORD_ONLY for k in keywords)


def test_every_function_is_exported_from_its_module_and_the_package() -> None:
    for module, name, _ in EXPECTED:
        assert name in module.__all__
        assert getattr(veil.ldp, name) is getattr(module, name)
        assert name in veil.ldp.__all__


def _gen(seed: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed))


FRAME = pd.DataFrame(
    {
        "age": [23, 35, 47, 59],
        "sex": ["F", "M", "M", "F"],
        "color": ["red", "green", "blue", "red"],
        "lat": [40.7, 40.71, 40.72, 40.73],
        "lon": [-73.9, -73.91, -73.92, -73.93],
    }
)


@pytest.mark.parametrize(
    "call",
    [
        lambda: numerical.dp_clip_laplace(FRAME, "age", 1.0, 16, 100, True, rng=_gen(0)),
        lambda: numerical.dp_clip_gaussian(FRAME, "age", 1.0, 16, 100, 1e-5, True, rng=_gen(0)),
        lambda: categorical.dp_exponential(FRAME, "color", 1.0, True, rng=_gen(0)),
        lambda: categorical.dp_randomized_response_binary(
            FRAME, "sex", 1.0, True, "F", rng=_gen(0)
        ),
        lambda: categorical.dp_randomized_response_kary(FRAME, "color", 1.0, True, rng=_gen(0)),
        lambda: geoindis.metric_privacy(FRAME, "lat", "lon", 0.01, True, 6_371_000, 7),
    ],
    ids=["laplace", "gaussian", "exponential", "binary", "kary", "metric"],
)
def test_frame_functions_return_a_dataframe(call: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # inferred domains, seeded noise
        out = call()
    assert isinstance(out, pd.DataFrame)
    assert len(out) == len(FRAME)


@pytest.mark.parametrize(
    "call",
    [
        lambda d: numerical.dp_clip_laplace_array(d["ages"], 1.0, 16, 100, rng=_gen(0)),
        lambda d: numerical.dp_clip_gaussian_array(d["ages"], 1.0, 16, 100, 1e-5, rng=_gen(0)),
        lambda d: categorical.dp_exponential_array(d["colors"], 1.0, rng=_gen(0)),
        lambda d: categorical.dp_randomized_response_binary_array(
            d["sexes"], 1.0, "M", rng=_gen(0)
        ),
        lambda d: categorical.dp_randomized_response_kary_array(d["colors"], 1.0, rng=_gen(0)),
    ],
    ids=["laplace", "gaussian", "exponential", "binary", "kary"],
)
@pytest.mark.parametrize("as_list", [True, False], ids=["list", "ndarray"])
def test_array_functions_return_a_numpy_array(call: Any, as_list: bool) -> None:
    data = {
        "ages": [23, 35, 47, 59],
        "colors": ["red", "green", "blue", "red"],
        "sexes": ["F", "M", "M", "F"],
    }
    if not as_list:
        data = {k: np.asarray(v) for k, v in data.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        out = call(data)
    assert isinstance(out, np.ndarray)
    assert out.shape == (4,)


# trasgoDP raises ValueError on each of these; so does veil (its errors subclass it).
ERROR_CASES = [
    ("laplace-missing-column", lambda: numerical.dp_clip_laplace(FRAME, "x", 1.0, 0, 1)),
    ("laplace-strings", lambda: numerical.dp_clip_laplace(FRAME, "sex", 1.0, 0, 1)),
    ("laplace-epsilon-0", lambda: numerical.dp_clip_laplace(FRAME, "age", 0, 0, 100)),
    ("laplace-array-strings", lambda: numerical.dp_clip_laplace_array(["a"], 1.0, 0, 1)),
    ("gaussian-epsilon-neg", lambda: numerical.dp_clip_gaussian(FRAME, "age", -1, 0, 100)),
    ("gaussian-epsilon-2", lambda: numerical.dp_clip_gaussian(FRAME, "age", 2.0, 0, 100)),
    ("gaussian-delta-0", lambda: numerical.dp_clip_gaussian(FRAME, "age", 0.5, 0, 100, 0.0)),
    ("gaussian-delta-1", lambda: numerical.dp_clip_gaussian_array([1], 0.5, 0, 100, 1.0)),
    ("gaussian-strings", lambda: numerical.dp_clip_gaussian(FRAME, "color", 0.5, 0, 1)),
    ("exp-missing-column", lambda: categorical.dp_exponential(FRAME, "x", 1.0)),
    ("exp-numbers", lambda: categorical.dp_exponential(FRAME, "age", 1.0)),
    ("exp-epsilon-0", lambda: categorical.dp_exponential(FRAME, "color", 0.0)),
    ("exp-array-numbers", lambda: categorical.dp_exponential_array(np.array([1, 2]), 1.0)),
    ("binary-numbers", lambda: categorical.dp_randomized_response_binary(FRAME, "age", 1.0)),
    ("binary-three", lambda: categorical.dp_randomized_response_binary(FRAME, "color", 1.0)),
    (
        "binary-label",
        lambda: categorical.dp_randomized_response_binary(FRAME, "sex", 1.0, False, "X"),
    ),
    ("binary-epsilon-0", lambda: categorical.dp_randomized_response_binary(FRAME, "sex", 0)),
    (
        "binary-array-three",
        lambda: categorical.dp_randomized_response_binary_array(["a", "b", "c"], 1.0),
    ),
    ("kary-numbers", lambda: categorical.dp_randomized_response_kary(FRAME, "age", 1.0)),
    ("kary-two", lambda: categorical.dp_randomized_response_kary(FRAME, "sex", 1.0)),
    ("kary-epsilon-0", lambda: categorical.dp_randomized_response_kary(FRAME, "color", 0)),
    (
        "kary-array-numbers",
        lambda: categorical.dp_randomized_response_kary_array(np.array([1.0]), 1.0),
    ),
    ("metric-epsilon-0", lambda: geoindis.metric_privacy(FRAME, "lat", "lon", 0)),
    ("metric-missing-column", lambda: geoindis.metric_privacy(FRAME, "latitude", "lon", 0.1)),
    (
        "metric-latitude-range",
        lambda: geoindis.metric_privacy(FRAME.assign(lat=91.0), "lat", "lon", 0.1),
    ),
    (
        "metric-longitude-range",
        lambda: geoindis.metric_privacy(FRAME.assign(lon=-180.5), "lat", "lon", 0.1),
    ),
]


@pytest.mark.parametrize("call", [c for _, c in ERROR_CASES], ids=[n for n, _ in ERROR_CASES])
def test_trasgodp_error_paths_raise_value_error(call: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        with pytest.raises(ValueError):
            call()


def test_paper_example_code_1_runs_on_adult(adult: pd.DataFrame) -> None:
    # Example Code 1, with only the import changed. The paper's "processed" Adult has no
    # missing values, so rows with a missing value are dropped first.
    data = adult.dropna().reset_index(drop=True)
    epsilon = 1
    lower_bound = 16
    upper_bound = 100
    df_lap = veil.ldp.dp_clip_laplace(
        data, "age", epsilon, lower_bound, upper_bound, new_column=True
    )
    df_gauss = veil.ldp.dp_clip_gaussian(
        data, "age", epsilon, lower_bound, upper_bound, new_column=True
    )
    with pytest.warns(PrivacyLeakWarning):
        df_exp = veil.ldp.dp_exponential(data, "workclass", epsilon, new_column=True)
    with pytest.warns(PrivacyLeakWarning):
        df_kary = veil.ldp.dp_randomized_response_kary(
            data, "native-country", epsilon, new_column=True
        )
    with pytest.warns(PrivacyLeakWarning):
        df_bin = veil.ldp.dp_randomized_response_binary(data, "sex", epsilon, new_column=True)
    for out, column in [
        (df_lap, "age"),
        (df_gauss, "age"),
        (df_exp, "workclass"),
        (df_kary, "native-country"),
        (df_bin, "sex"),
    ]:
        assert out.shape == (len(data), data.shape[1] + 1)
        assert f"dp_{column}" in out.columns
        pd.testing.assert_series_equal(out[column], data[column])
    assert df_lap["dp_age"].between(16, 100).all()
    assert set(df_bin["dp_sex"]) == {"Female", "Male"}


def test_paper_example_code_2_runs_on_nyc_taxi(nyc_taxi: pd.DataFrame, tmp_path: Path) -> None:
    import folium  # noqa: F401  # the test extra installs it; a missing one fails

    data = nyc_taxi
    column_lat = "pickup_latitude"
    column_lon = "pickup_longitude"
    epsilon = 1.0e-3
    data_priv = veil.ldp.metric_privacy(data, column_lat, column_lon, epsilon, new_cols=True)
    save_file = tmp_path / "example_map.html"
    veil.ldp.plot_metric_dp_map(data_priv, column_lat, column_lon, save_file=str(save_file))
    assert save_file.stat().st_size > 0
    assert {"lat_dp", "lon_dp", "radius_m"} <= set(data_priv.columns)
    assert data_priv.index.equals(data.index)
