"""PIF assessment: piflib 0.1.1 as the oracle, its documented examples, bins, priors, figures."""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.errors import (
    ColumnError,
    DataTypeError,
    DomainError,
    ParameterError,
    PrivacyLeakWarning,
)
from veil.risk import assess_pif, csf_heatmap, pif_bars, pif_figure

# piflib's own test tables (tests/test_pif_calculator.py of piflib 0.1.1).
DIVERSE = pd.DataFrame(
    {"A": [1, 2, 3, 4], "B": ["a", "b", "c", "d"], "C": ["blue", "green", "red", "cyan"]}
)
SAME = pd.DataFrame({"A": [1, 1, 1, 1], "B": ["a"] * 4, "C": ["red"] * 4})
DEPENDENT = pd.DataFrame(
    {"A": [1, 1, 2, 2], "B": ["a", "a", "b", "b"], "C": ["blue", "green", "red", "cyan"]}
)
# The table of piflib's CSF tutorial (docs/tutorials/tutorial_csf.ipynb).
TUTORIAL = pd.DataFrame({"A": list("aaabbcccc"), "B": list("ghigghhhi")})


@pytest.fixture(scope="module")
def piflib() -> ModuleType:
    """piflib 0.1.1 (the ``test`` extra installs it); its import warns about pkg_resources."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import piflib as module
    return module


def _piflib_all(piflib: ModuleType, df: pd.DataFrame, **options: Any) -> dict[str, pd.DataFrame]:
    from piflib.entropy import create_conditional_entropy_table

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "csf": piflib.compute_csfs(df, **options),
            "cig": piflib.compute_cigs(df, **options),
            "wcig": piflib.compute_weighted_cigs(df, **options),
            "entropy": create_conditional_entropy_table(df, round_digits=15),
            "rounded_entropy": create_conditional_entropy_table(df),
        }


def _assert_matches_piflib(piflib: ModuleType, ours: pd.DataFrame, theirs: pd.DataFrame) -> None:
    """veil on ``ours`` equals piflib on ``theirs`` (the same table, NaN as a sentinel)."""
    from piflib.pif_calculator import compute_pif

    result = assess_pif(ours)
    expected = _piflib_all(piflib, theirs)
    np.testing.assert_allclose(result.csf.to_numpy(), expected["csf"].to_numpy(), atol=1e-12)
    np.testing.assert_allclose(result.cig.to_numpy(), expected["cig"].to_numpy(), atol=1e-12)
    np.testing.assert_allclose(
        result.entropy["H"].to_numpy(), expected["entropy"]["H(X)"].to_numpy(), atol=1e-9
    )
    np.testing.assert_allclose(
        result.entropy["H_given_others"].to_numpy(),
        expected["entropy"]["H(X|Y)"].to_numpy(),
        atol=1e-9,
    )
    # piflib rounds H(X), H(X|Y) and the wCIGs to two decimals; veil does not. With
    # piflib's rounded weights, veil's CIGs give piflib's wCIGs, but for a product that
    # falls on a rounding tie (x.xx5), which float noise may send either way.
    table = expected["rounded_entropy"]
    with np.errstate(divide="ignore", invalid="ignore"):
        piflib_weights = np.nan_to_num(table["H(X|Y)"].to_numpy() / table["H(X)"].to_numpy())
    product = result.cig.to_numpy() * piflib_weights
    tie = np.abs((product * 100.0) % 1.0 - 0.5) < 1e-6
    difference = np.abs(product.round(2) - expected["wcig"].to_numpy())
    assert (difference[~tie] < 1e-9).all()
    assert (difference[tie] < 0.01 + 1e-9).all()
    np.testing.assert_allclose(
        result.wcig.to_numpy(), result.cig.to_numpy() * result.weights.to_numpy(), atol=1e-12
    )
    for percentile in (0, 50, 95, 100):
        assert result.pif_n(percentile) == pytest.approx(
            compute_pif(expected["cig"], percentile), abs=1e-12
        )


# ------------------------------------------------------------- piflib's documented examples


def test_piflib_test_tables_give_piflibs_stated_values() -> None:
    same, diverse, dependent = assess_pif(SAME), assess_pif(DIVERSE), assess_pif(DEPENDENT)
    assert (same.cig.to_numpy() == 0).all() and (same.csf.to_numpy() == 0).all()
    assert np.unique(diverse.cig.to_numpy()).size == 1
    assert (dependent.cig.to_numpy() == 1).all()
    assert (diverse.csf.to_numpy() == 0.75).all()
    assert dependent.csf["A"].eq(0.5).all() and dependent.csf["B"].eq(0.5).all()
    assert dependent.csf["C"].eq(0.25).all()
    assert (diverse.wcig.to_numpy() == 0).all() and (same.wcig.to_numpy() == 0).all()
    # A and B determine each other (weight 0); C keeps half of its 2 bits given A, B.
    assert dependent.wcig["A"].eq(0).all() and dependent.wcig["B"].eq(0).all()
    assert dependent.wcig["C"].eq(0.5).all()


def test_cig_documentation_example_with_the_australian_gender_prior() -> None:
    # piflib docs/cig.rst: the prior of Gender is 51 % male, 49 % female.
    df = pd.DataFrame(
        {
            "Gender": ["male", "female", "male", "male"],
            "Eye color": ["blue", "blue", "green", "green"],
            "Occupation": ["dentist", "dentist", "accountant", "accountant"],
        }
    )
    result = assess_pif(df, priors={"Gender": {"male": 0.51, "female": 0.49}})
    blue = 0.5 * math.log2(0.5 / 0.51) + 0.5 * math.log2(0.5 / 0.49)
    green = math.log2(1 / 0.51)
    assert result.cig["Gender"].tolist() == pytest.approx([blue, blue, green, green])
    assert result.csf["Gender"].tolist() == pytest.approx([0.01, 0.01, 0.49, 0.49])
    assert result.priors == {"Gender": "public", "Eye color": "data", "Occupation": "data"}


def test_wcig_documentation_caution_example() -> None:
    # piflib docs/wcig.rst: A and B determine each other, every value is unique.
    df = pd.DataFrame({"A": ["a", "c", "f"], "B": ["b", "r", "e"]})
    result = assess_pif(df)
    assert (result.wcig.to_numpy() == 0).all()
    assert result.cig.to_numpy() == pytest.approx(np.full((3, 2), math.log2(3)))


def test_csf_tutorial_table_matches_piflib(piflib: ModuleType) -> None:
    _assert_matches_piflib(piflib, TUTORIAL, TUTORIAL)
    assert assess_pif(TUTORIAL).csf["B"].iloc[3] == pytest.approx(2 / 3)


@pytest.mark.parametrize("table", [DIVERSE, SAME, DEPENDENT], ids=["diverse", "same", "dependent"])
def test_piflib_test_tables_match_piflib(piflib: ModuleType, table: pd.DataFrame) -> None:
    _assert_matches_piflib(piflib, table, table)


# -------------------------------------------------------------------- random tables


def _random_table(seed: int, *, missing: bool) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 120))
    m = int(rng.integers(1, 5))
    data: dict[str, Any] = {}
    for j in range(m):
        values = rng.integers(0, int(rng.integers(1, 7)), n).astype(np.float64)
        if missing:
            values[rng.random(n) < 0.2] = np.nan
        data[f"n{j}"] = values
    letters = rng.choice(np.array(list("xyz"), dtype=object), n)
    if missing:
        letters[rng.random(n) < 0.2] = None
    data["s"] = letters
    return pd.DataFrame(data)


def _with_sentinels(df: pd.DataFrame) -> pd.DataFrame:
    """What piflib can take: every missing value replaced by a value absent from the data."""
    out = df.copy()
    for column in out.columns:
        if pd.api.types.is_numeric_dtype(out[column]):
            out[column] = out[column].fillna(-999.0)
        else:
            out[column] = out[column].astype(object).where(out[column].notna(), "<NA>")
    return out


@pytest.mark.parametrize("seed", range(12))
def test_random_tables_match_piflib(piflib: ModuleType, seed: int) -> None:
    table = _random_table(seed, missing=False)
    _assert_matches_piflib(piflib, table, table)


@pytest.mark.parametrize("seed", range(12))
def test_missing_values_are_a_category_as_piflib_sees_a_sentinel(
    piflib: ModuleType, seed: int
) -> None:
    table = _random_table(100 + seed, missing=True)
    _assert_matches_piflib(piflib, table, _with_sentinels(table))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.sampled_from(["u", "v", "w"]), st.integers(0, 1)),
        min_size=1,
        max_size=40,
    )
)
def test_any_small_table_matches_piflib(rows: list[tuple[int, str, int]]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import piflib
    table = pd.DataFrame(rows, columns=["a", "b", "c"])
    _assert_matches_piflib(piflib, table, table)


@pytest.mark.parametrize("seed", range(6))
def test_accuracies_and_public_priors_match_piflib(piflib: ModuleType, seed: int) -> None:
    table = _random_table(200 + seed, missing=False)
    last = len(table.columns) - 1
    prior = {"x": 0.2, "y": 0.3, "z": 0.4, "w": 0.1}  # w is never drawn
    ours = assess_pif(table, priors={"s": prior}, accuracies={table.columns[0]: 0.7, "s": 0.35})
    options = {"feature_priors": {last: prior}, "feature_accuracies": {0: 0.7, last: 0.35}}
    theirs = _piflib_all(piflib, table, **options)
    np.testing.assert_allclose(ours.csf.to_numpy(), theirs["csf"].to_numpy(), atol=1e-12)
    np.testing.assert_allclose(ours.cig.to_numpy(), theirs["cig"].to_numpy(), atol=1e-12)
    assert ours.accuracies[table.columns[0]] == 0.7


# --------------------------------------------------------------------- the summaries


def test_pif_a_is_the_mean_csf_in_unit_interval_and_pif_n_a_percentile_of_rig() -> None:
    table = _random_table(7, missing=True)
    result = assess_pif(table)
    assert result.pif_a.to_numpy() == pytest.approx(result.csf.mean(axis=0).to_numpy())
    assert ((result.pif_a >= 0) & (result.pif_a <= 1)).all()
    assert result.rig.to_numpy() == pytest.approx(result.cig.sum(axis=1).to_numpy())
    assert result.pif_n(100) == pytest.approx(result.rig.max())
    assert result.pif_n(50) == pytest.approx(float(np.percentile(result.rig, 50)))
    summary = result.summary()
    assert list(summary.columns) == ["pif_a", "max_csf", "mean_cig", "weight", "bins"]
    data = result.to_dict(percentile=90)
    assert data["pif_n"] == {"percentile": 90.0, "bits": result.pif_n(90)}
    assert set(data["pif_a"]) == {str(c) for c in table.columns}
    with pytest.raises(ParameterError, match="percentile must be in"):
        result.pif_n(101)


def test_a_missing_value_is_its_own_category() -> None:
    df = pd.DataFrame({"a": [1.0, np.nan, 1.0, np.nan], "b": ["x", "x", "y", "y"]})
    result = assess_pif(df)
    # Each (b) cohort holds one 1.0 and one NaN: the posterior equals the prior.
    assert (result.csf["a"] == 0).all()
    record = result.bins[0]
    assert record.kind == "exact" and record.n_categories == 2 and record.n_missing == 2


def test_the_index_and_the_input_frame_are_kept() -> None:
    df = pd.DataFrame({"a": [3, 1, 3, 2], "b": ["p", "q", "p", None]}, index=[10, 10, 5, 7])
    df.attrs["source"] = "test"
    before = df.copy(deep=True)
    result = assess_pif(df, for_publication=True)
    pd.testing.assert_frame_equal(df, before)
    assert df.attrs == {"source": "test"}
    assert result.csf.index.tolist() == [10, 10, 5, 7]
    assert result.rig.index.tolist() == [10, 10, 5, 7]


def test_columns_restrict_the_cohorts() -> None:
    df = pd.DataFrame({"a": [1, 1, 2, 2], "b": [1, 2, 1, 2], "c": [5, 5, 5, 6]})
    only = assess_pif(df, ["a", "b"])
    assert list(only.csf.columns) == ["a", "b"]
    pd.testing.assert_frame_equal(only.csf, assess_pif(df[["a", "b"]]).csf)


# ---------------------------------------------------------------------------- bins


def test_public_bins_are_recorded_and_give_the_binned_assessment() -> None:
    df = pd.DataFrame({"x": [0.5, 1.5, 2.5, 3.0, 0.1], "g": ["a", "a", "b", "b", "a"]})
    result = assess_pif(df, bins={"x": [0, 1, 2, 3]})
    record = result.bins[0]
    assert (record.kind, record.edges, record.from_data) == ("public", (0.0, 1.0, 2.0, 3.0), False)
    assert record.labels() == ["[0, 1)", "[1, 2)", "[2, 3]"]
    codes = pd.DataFrame({"x": ["[0,1)", "[1,2)", "[2,3]", "[2,3]", "[0,1)"], "g": df["g"]})
    pd.testing.assert_frame_equal(result.csf, assess_pif(codes).csf)
    assert not result.data_dependent or all("prior" in d for d in result.data_dependent)


def test_quantile_bins_come_from_the_data_and_warn_only_for_publication() -> None:
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"x": rng.normal(size=200), "g": rng.integers(0, 3, 200)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = assess_pif(df, bins={"x": 4})
    record = quiet.bins[0]
    assert record.kind == "quantile" and record.from_data and len(record.edges) == 5
    assert record.edges[0] == df["x"].min() and record.edges[-1] == df["x"].max()
    assert any("quantile bins of 'x'" in d for d in quiet.data_dependent)
    with pytest.warns(PrivacyLeakWarning, match="quantile bins of \\['x'\\]"):
        assess_pif(df, bins={"x": 4}, for_publication=True)
    public = assess_pif(df, bins={"x": [-np.inf, 0, np.inf]}, for_publication=True)
    assert public.bins[0].kind == "public"


def test_default_bins_and_whole_number_floats() -> None:
    df = pd.DataFrame({"whole": [1.0, 2.0, np.nan], "real": [0.5, 0.25, 0.125]})
    result = assess_pif(df, default_bins="exact")
    assert [b.kind for b in result.bins] == ["exact", "exact"]
    assert assess_pif(df, ["whole"]).bins[0].kind == "exact"
    assert assess_pif(df, default_bins=2).bins[1].kind == "quantile"


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({}, ParameterError, "column 'real' holds non-integer numbers"),
        ({"bins": {"real": [0, 0.3]}}, DomainError, "1 values fall outside the edges"),
        ({"bins": {"real": [1, 0]}}, ParameterError, "strictly increasing"),
        ({"bins": {"real": [0]}}, ParameterError, "at least two edges"),
        ({"bins": {"real": 1}}, ParameterError, "q >= 2"),
        ({"bins": {"real": 2.0}}, ParameterError, "must be an int >= 2"),
        ({"bins": {"real": "fine"}}, ParameterError, "expected 'exact'"),
        ({"bins": {"real": "exact", "name": 3}}, ParameterError, "numeric columns only"),
        ({"bins": {"zz": 3}}, ColumnError, "not assessed"),
    ],
)
def test_bad_bins_name_the_column(options: dict[str, Any], error: type, message: str) -> None:
    df = pd.DataFrame({"real": [0.5, 0.25, 0.125], "name": ["a", "b", "c"]})
    with pytest.raises(error, match=message):
        assess_pif(df, **options)


# ---------------------------------------------------------------- priors and inputs


@pytest.mark.parametrize(
    ("prior", "error", "message"),
    [
        ({"a": 0.5, "b": 0.4}, ParameterError, "sum to 1"),
        ({"a": 1.0}, DomainError, "1 categories present in the data"),
        ({"a": 0.5, "b": 0.5, "c": -0.1}, ParameterError, "in \\[0, 1\\]"),
        ({"a": 1.0, "b": 0.0}, DomainError, "no positive prior"),
    ],
)
def test_bad_public_priors(prior: dict[str, float], error: type, message: str) -> None:
    df = pd.DataFrame({"v": ["a", "b", "a"], "w": [1, 1, 2]})
    with pytest.raises(error, match=message):
        assess_pif(df, priors={"v": prior})


def test_a_prior_may_name_the_missing_category() -> None:
    df = pd.DataFrame({"v": ["a", None, "a", "a"], "w": [1, 1, 2, 2]})
    result = assess_pif(df, priors={"v": {"a": 0.6, None: 0.4}})
    assert result.csf["v"].tolist() == pytest.approx([0.1, 0.1, 0.4, 0.4])


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda df: assess_pif(df, ["a", "zz"]), ColumnError, "absent from the data"),
        (lambda df: assess_pif(df, []), ParameterError, "at least one column"),
        (lambda df: assess_pif(df, ["a", "a"]), ParameterError, "repeat a column"),
        (lambda df: assess_pif(df.iloc[:0]), ParameterError, "at least one record"),
        (lambda df: assess_pif(df.to_numpy()), DataTypeError, "pandas DataFrame"),
        (lambda df: assess_pif(df, accuracies={"a": 1.5}), ParameterError, "in \\[0, 1\\]"),
        (lambda df: assess_pif(df, accuracies={"a": "x"}), ParameterError, "a number"),
    ],
)
def test_bad_inputs_name_the_parameter(call: Any, error: type, message: str) -> None:
    df = pd.DataFrame({"a": [1, 2, 2], "b": ["x", "y", "y"]})
    with pytest.raises(error, match=message):
        call(df)


# ------------------------------------------------------------------------- figures


def test_figures_are_returned_and_written_atomically(tmp_path: Path) -> None:
    result = assess_pif(DEPENDENT)
    heat = csf_heatmap(result, path=tmp_path / "csf.png")
    assert (tmp_path / "csf.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = heat.axes[0].images[0].get_array()
    assert np.asarray(image) == pytest.approx(result.csf.to_numpy())
    bars = pif_bars(result, highlight=["A"], path=tmp_path / "pif.svg")
    assert (tmp_path / "pif.svg").read_text(encoding="utf-8").lstrip().startswith("<?xml")
    heights = [p.get_height() for p in bars.axes[0].patches]
    assert heights == pytest.approx(result.pif_a.tolist())
    colours = {p.get_facecolor()[:3] for p in bars.axes[0].patches}
    assert len(colours) == 2  # the highlighted attribute stands out
    side = pd.DataFrame({"QPIF": [0.1, 0.2], "QSPIF": [0.5, 0.3]}, index=["q1", "q2"])
    grouped = pif_bars(side)
    assert len(grouped.axes[0].patches) == 4
    both = pif_figure(result, highlight=["C"], path=tmp_path / "both.pdf")
    assert len(both.axes) == 3  # heat map, its colour bar, the bars
    assert sorted(p.name for p in tmp_path.iterdir()) == ["both.pdf", "csf.png", "pif.svg"]


def test_figure_errors(tmp_path: Path) -> None:
    result = assess_pif(DEPENDENT)
    with pytest.raises(ParameterError, match="path: must end in"):
        csf_heatmap(result, path=tmp_path / "csf.jpg")
    with pytest.raises(ParameterError, match="highlight"):
        pif_bars(result, highlight=["nope"])
    with pytest.raises(DataTypeError, match="PifAssessment"):
        pif_figure(result.csf)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []
