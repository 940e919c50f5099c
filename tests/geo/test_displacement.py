"""The displacement a location mask's parameters promise, against the masks themselves.

Each median formula is checked against a Monte Carlo estimate: ``N`` points at one
public centre are masked by the real mask (noise from :func:`veil.rng.resolve_rng` with
a fixed seed) and the median distance is measured in the projection the mask displaced
in. Tolerance: 2 % relative. With ``N = 50,000`` the sample median's standard error is
at most 0.43 % of the median (planar Laplace, the widest law: ``0.95 / sqrt(N)``), so the
tolerance is over four standard errors; with the seeds fixed the outcome is stable.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

from veil.errors import ParameterError, ReproducibleNoiseWarning
from veil.geo import (
    donut,
    expected_scale,
    jitter,
    median_displacement,
    planar_laplace,
    projection_at,
    scale_concern,
)
from veil.geo.displacement import EXCESSIVE_M, NEGLIGIBLE_M
from veil.mechanisms import PlanarLaplace
from veil.rng import resolve_rng

N = 50_000
RTOL = 0.02
NYC = (40.75, -73.98)
PUBLIC = projection_at(*NYC)


def _generator(seed: int) -> np.random.Generator:
    with pytest.warns(ReproducibleNoiseWarning):
        return resolve_rng(seed)


def _measured_median(mask: Callable[..., pd.DataFrame], seed: int) -> float:
    """The median distance the mask moved ``N`` points at the centre, in its own plane."""
    points = pd.DataFrame({"lat": np.full(N, NYC[0]), "lon": np.full(N, NYC[1])})
    masked = mask(points, "lat", "lon", rng=_generator(seed), projection=PUBLIC)
    x0, y0 = PUBLIC.forward(points["lat"].to_numpy(), points["lon"].to_numpy())
    x1, y1 = PUBLIC.forward(masked["lat"].to_numpy(), masked["lon"].to_numpy())
    return float(np.median(np.hypot(x1 - x0, y1 - y0)))


CASES: dict[str, tuple[dict[str, Any], Callable[..., pd.DataFrame]]] = {
    "planar_laplace": (
        {"method": "planar_laplace", "epsilon": 0.01},
        lambda df, lat, lon, **kw: planar_laplace(df, lat, lon, 0.01, **kw),
    ),
    "jitter_disc": (
        {"method": "jitter", "radius_m": 300.0, "kind": "disc"},
        lambda df, lat, lon, **kw: jitter(df, lat, lon, 300.0, kind="disc", **kw),
    ),
    "jitter_gaussian": (
        {"method": "jitter", "radius_m": 150.0, "kind": "gaussian"},
        lambda df, lat, lon, **kw: jitter(df, lat, lon, 150.0, kind="gaussian", **kw),
    ),
    "donut": (
        {"method": "donut", "r_min_m": 100.0, "r_max_m": 500.0},
        lambda df, lat, lon, **kw: donut(df, lat, lon, 100.0, 500.0, **kw),
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_median_displacement_is_what_the_mask_does(name: str) -> None:
    parameters, mask = CASES[name]
    method = parameters["method"]
    arguments = {k: v for k, v in parameters.items() if k != "method"}
    promised = median_displacement(method, **arguments)
    assert promised is not None
    measured = _measured_median(mask, seed=list(CASES).index(name) + 11)
    assert measured == pytest.approx(promised, rel=RTOL)
    assert expected_scale(method, **arguments) == ("expected median displacement", promised)


def test_planar_laplace_median_is_the_gamma_quantile() -> None:
    # The literal against scipy's inverse incomplete gamma function (an independent
    # computation of the root of 1 - (1 + r) e^-r = 1/2).
    for epsilon in (0.001, 0.01, 1.0):
        assert median_displacement("planar_laplace", epsilon=epsilon) == pytest.approx(
            PlanarLaplace(epsilon).radius_quantile(0.5), rel=1e-12
        )
    assert median_displacement("planar_laplace", epsilon=0.01) == pytest.approx(167.83, abs=0.01)


def test_closed_forms() -> None:
    assert median_displacement("jitter", radius_m=100.0) == pytest.approx(100 / math.sqrt(2))
    assert median_displacement("jitter", radius_m=100.0, kind="gaussian") == pytest.approx(
        100 * math.sqrt(2 * math.log(2))
    )
    assert median_displacement("donut", r_min_m=0.0, r_max_m=100.0) == pytest.approx(
        100 / math.sqrt(2)
    )
    assert median_displacement("donut", r_min_m=30.0, r_max_m=40.0) == pytest.approx(
        math.sqrt(1250.0)
    )


def test_masks_without_a_random_displacement_say_what_the_figure_is() -> None:
    assert median_displacement("grid") is None and median_displacement("cloak") is None
    assert expected_scale("grid", cell_m=250.0) == ("cell side", 250.0)
    assert expected_scale("cloak", root_size_m=4000.0) == (
        "root cell side (cells halve until each holds k locations)",
        4000.0,
    )
    assert expected_scale("cloak") == (
        "cell size set by the data (each cell holds at least k locations)",
        None,
    )
    # A budget allocated at run time: nothing is known before.
    assert expected_scale("planar_laplace") == ("displacement not known before the run", None)


@pytest.mark.parametrize(
    ("parameters", "mask"),
    [
        ({"method": "planar_laplace", "epsilon": 0.0}, lambda df, **kw: planar_laplace(
            df, "lat", "lon", 0.0, **kw)),
        ({"method": "planar_laplace", "epsilon": -1.0}, lambda df, **kw: planar_laplace(
            df, "lat", "lon", -1.0, **kw)),
        ({"method": "jitter", "radius_m": 0.0}, lambda df, **kw: jitter(
            df, "lat", "lon", 0.0, **kw)),
        ({"method": "jitter", "radius_m": 5.0, "kind": "square"}, lambda df, **kw: jitter(
            df, "lat", "lon", 5.0, kind="square", **kw)),  # type: ignore[arg-type]
        ({"method": "donut", "r_min_m": 10.0, "r_max_m": 5.0}, lambda df, **kw: donut(
            df, "lat", "lon", 10.0, 5.0, **kw)),
        ({"method": "donut", "r_min_m": -1.0, "r_max_m": 5.0}, lambda df, **kw: donut(
            df, "lat", "lon", -1.0, 5.0, **kw)),
    ],
)  # fmt: skip
def test_out_of_range_parameters_are_refused_as_the_mask_refuses_them(
    parameters: dict[str, Any], mask: Callable[..., pd.DataFrame]
) -> None:
    # Said before any data is read, with the mask's own message (epsilon 0 used to
    # divide by zero here).
    arguments = {k: v for k, v in parameters.items() if k != "method"}
    with pytest.raises(ParameterError) as promised:
        expected_scale(parameters["method"], **arguments)
    frame = pd.DataFrame({"lat": [NYC[0]], "lon": [NYC[1]]})
    with pytest.raises(ParameterError) as refused:
        mask(frame, projection=PUBLIC, rng=_generator(0))
    assert str(promised.value) == str(refused.value)


def test_scale_concern_thresholds() -> None:
    assert (NEGLIGIBLE_M, EXCESSIVE_M) == (1.0, 10_000.0)
    assert scale_concern(0.99) == "negligible"
    assert scale_concern(1.0) is None
    assert scale_concern(10_000.0) is None
    assert scale_concern(10_001.0) == "excessive"
    for unknown in (None, 0.0, -5.0, math.inf, math.nan):
        assert scale_concern(unknown) is None
