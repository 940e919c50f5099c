"""OptimShare requirements: identifiers, the Q refinement rule, PIF_thresh and the guard."""

from __future__ import annotations

import json
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

from veil.errors import (
    ColumnError,
    DisclosureRiskError,
    ParameterError,
    PrivacyLeakWarning,
    PrivacyWarning,
)
from veil.risk import assess_pif
from veil.share import derive_requirements, detect_identifiers, refinement_notes


def _table(seed: int = 0, n: int = 400) -> pd.DataFrame:
    """Two coarse Q attributes, one fine one (cholesterol-like), a numeric S and an id."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "sex": rng.integers(1, 3, n),
            "bp": rng.integers(1, 3, n),
            "chol": rng.integers(120, 320, n),
            "bmi": rng.normal(27.0, 4.0, n).round(1),
            "age": rng.integers(18, 80, n),
            "id": np.arange(n),
        }
    )


def test_identifiers_are_found_by_uniqueness() -> None:
    df = pd.DataFrame(
        {
            "id": ["a", "b", "c", "d", "e"],
            "near": [1, 2, 3, 4, 4],
            "sex": ["F", "M", "F", "M", "F"],
            "gap": [None, None, 1.0, 2.0, 3.0],
        }
    )
    table = detect_identifiers(df, threshold=0.6)
    assert table["identifier"].to_dict() == {"id": True, "near": True, "sex": False, "gap": True}
    assert table.loc["near", "unique_records"] == 3
    assert table.loc["gap", "uniqueness"] == pytest.approx(0.6)  # the two NaN share a value
    assert not detect_identifiers(df, threshold=0.9).loc["near", "identifier"]
    with pytest.raises(ParameterError, match="threshold must be a number in \\(0, 1\\]"):
        detect_identifiers(df, threshold=0)


def test_the_rule_moves_exactly_the_attributes_whose_pif_jumps() -> None:
    df = _table()
    result = derive_requirements(
        df, ["sex", "bp", "chol"], ["bmi", "age", "id"], default_bins="exact"
    )
    # The rule, recomputed from the two assessments it reports.
    q_only = assess_pif(df, ["sex", "bp", "chol"])
    qs = assess_pif(df, ["sex", "bp", "chol", "bmi", "age"], default_bins="exact")
    for attribute in ("sex", "bp", "chol"):
        qpif, qspif = q_only.pif_a[attribute], qs.pif_a[attribute]
        row = result.table.loc[attribute]
        assert (row["qpif"], row["qspif"]) == pytest.approx((qpif, qspif))
        assert bool(row["moved"]) == (qspif - qpif >= qpif)
    assert result.moved == ("chol",)
    assert result.refined_q == ("sex", "bp")
    assert result.refined_s == ("bmi", "age", "chol")
    assert result.left_out == ("id",)
    assert result.pif_thresh == pytest.approx(result.table.loc[["sex", "bp"], "qspif"].max())
    assert result.max_qs_pif == pytest.approx(qs.pif_a.max())
    pd.testing.assert_series_equal(result.refined_qpif, assess_pif(df, ["sex", "bp"]).pif_a)
    assert result.guard.passed and result.guard.k >= 2
    assert any("'chol'" in step and "moves to S" in step for step in result.steps)
    assert any("left out of the assessment" in step for step in result.steps)
    json.dumps(result.to_dict())  # plain data all through


def test_alpha_scales_the_bound() -> None:
    df = _table(1)
    strict = derive_requirements(df, ["sex", "bp", "chol"], ["bmi", "age"], default_bins="exact")
    with pytest.warns(PrivacyWarning, match="records are in classes of fewer than 2"):
        loose = derive_requirements(
            df,
            ["sex", "bp", "chol"],
            ["bmi", "age"],
            alpha=1000.0,
            default_bins="exact",
            on_violation="warn",
        )
    assert loose.moved == ()
    assert loose.table["bound"].to_numpy() == pytest.approx(1000 * strict.table["qpif"])
    assert set(strict.moved) >= set(loose.moved)


def test_a_single_q_attribute_has_qpif_zero_and_moves_as_the_rule_says() -> None:
    df = _table(2)
    result = derive_requirements(df, ["sex"], ["bmi"], default_bins="exact")
    assert result.table.loc["sex", "qpif"] == 0
    assert result.moved == ("sex",) and result.refined_q == ()
    assert result.pif_thresh is None
    assert result.refined_assessment is None and result.guard.passed
    assert any("QPIF = 0" in step for step in result.steps)
    assert any("fully synthetic" in step for step in result.steps)


def test_refine_false_keeps_q_and_reports_what_the_rule_would_move() -> None:
    df = _table()
    refined = derive_requirements(df, ["sex", "bp", "chol"], ["bmi", "age"], default_bins="exact")
    with pytest.warns(PrivacyWarning, match="only 1-anonymous"):
        kept = derive_requirements(
            df, ["sex", "bp", "chol"], ["bmi", "age"], refine=False, default_bins="exact",
            on_violation="warn",
        )  # fmt: skip
    # nothing moves; the table still says what the rule would have moved
    assert kept.moved == () and kept.refined_q == ("sex", "bp", "chol")
    assert kept.table["moved"].equals(refined.table["moved"]) and kept.table.loc["chol", "moved"]
    # PIF_thresh over Q as given; the guard checks that Q (chol singles records out)
    assert kept.pif_thresh == pytest.approx(min(kept.table["qspif"].max(), 1.0))
    assert kept.guard.columns == ("sex", "bp", "chol") and not kept.guard.passed
    assert any("'chol'" in step and "would move to S" in step for step in kept.steps)
    assert any("refinement off" in step for step in kept.steps)
    assert kept.to_dict()["refine"] is False and refined.to_dict()["refine"] is True
    with pytest.raises(ParameterError, match="refine must be True or False; got 'no'"):
        derive_requirements(df, ["sex"], ["bmi"], refine="no")  # type: ignore[arg-type]


def test_refinement_notes_give_the_figures_and_the_way_out() -> None:
    df = _table()
    result = derive_requirements(df, ["sex", "bp", "chol"], ["bmi", "age"], default_bins="exact")
    notes = refinement_notes(result.table, result.alpha)
    row = result.table.loc["chol"]
    assert notes == [
        f"'chol': QPIF {row['qpif']:.4f}, QSPIF {row['qspif']:.4f}: QSPIF - QPIF = "
        f"{row['delta']:.4f} >= alpha * QPIF = {row['qpif']:.4f}; it stays with alpha above "
        f"{row['delta'] / row['qpif']:.4g}"
    ]
    # with that alpha, it does stay
    above = row["delta"] / row["qpif"] * 1.001
    with pytest.warns(PrivacyWarning, match="only 1-anonymous"):  # chol stays: Q is unique
        kept = derive_requirements(
            df, ["sex", "bp", "chol"], ["bmi", "age"], alpha=above, default_bins="exact",
            on_violation="warn",
        )  # fmt: skip
    assert not kept.table.loc["chol", "moved"]
    single = derive_requirements(df, ["sex"], ["bmi"], default_bins="exact")
    (note,) = refinement_notes(single.table, single.alpha)
    assert "QPIF = 0" in note and "degenerates" in note


def test_the_guard_refuses_a_q_that_singles_people_out() -> None:
    df = _table(3)
    # Q alone is unique: the id stays in Q (its QSPIF cannot rise above its QPIF of 1 - 1/n).
    with pytest.raises(DisclosureRiskError, match="only 1-anonymous") as caught:
        derive_requirements(df, ["id", "sex"], ["bmi"], alpha=1000.0, default_bins="exact")
    details = caught.value.details
    assert details is not None and details.guard.unique_records == len(df)
    assert details.guard.reasons and not details.guard.passed
    with pytest.warns(PrivacyWarning, match="only 1-anonymous"):
        warned = derive_requirements(
            df, ["id", "sex"], ["bmi"], alpha=1000.0, default_bins="exact", on_violation="warn"
        )
    assert warned.guard.k == 1 and warned.refined_q == ("id", "sex")
    assert any("identifiers in Q ['id']" in step for step in warned.steps)


def test_the_guard_checks_min_k_and_the_worst_csf() -> None:
    df = pd.DataFrame(
        {
            "a": [1, 1, 1, 2, 2, 2, 2, 1],
            "b": ["x", "x", "y", "y", "x", "y", "y", "y"],
            "s": [5, 6, 7, 8, 9, 10, 11, 12],
        }
    )
    with pytest.warns(PrivacyWarning):
        loose = derive_requirements(
            df, ["a", "b"], ["s"], alpha=1000.0, identifier_threshold=None, on_violation="warn"
        )
    assert loose.guard.k == 1 and not loose.guard.passed
    worst = float(loose.refined_assessment.csf.to_numpy().max())  # type: ignore[union-attr]
    assert loose.guard.worst_csf == pytest.approx(worst)
    ok = derive_requirements(
        df, ["a", "b"], ["s"], alpha=1000.0, identifier_threshold=None, min_k=1
    )
    assert ok.guard.passed
    with pytest.raises(DisclosureRiskError, match="worst CSF"):
        derive_requirements(
            df,
            ["a", "b"],
            ["s"],
            alpha=1000.0,
            identifier_threshold=None,
            min_k=1,
            max_csf=worst / 2,
        )


def test_bins_apply_to_both_tables_and_quantiles_warn_for_publication() -> None:
    df = _table(4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = derive_requirements(df, ["sex", "bp"], ["bmi", "age"], bins={"bmi": 4})
    kinds = {b.column: b.kind for b in quiet.qs_assessment.bins}
    assert kinds == {"sex": "exact", "bp": "exact", "bmi": "quantile", "age": "exact"}
    assert quiet.to_dict()["bins"][2]["from_data"] is True
    with pytest.warns(PrivacyLeakWarning, match="quantile bins"):
        derive_requirements(
            df, ["sex", "bp"], ["bmi", "age"], bins={"bmi": 4}, for_publication=True
        )


def test_the_input_frame_is_not_modified() -> None:
    df = _table(5)
    before = df.copy(deep=True)
    derive_requirements(df, ["sex", "bp", "chol"], ["bmi", "age", "id"], default_bins="exact")
    pd.testing.assert_frame_equal(df, before)


@pytest.mark.parametrize(
    ("q", "s", "options", "error", "message"),
    [
        ([], ["bmi"], {}, ParameterError, "q must name at least one column"),
        (["sex"], [], {}, ParameterError, "s must name at least one column"),
        (
            ["sex", "bp"],
            ["bp", "age"],
            {},
            ParameterError,
            "must not overlap; both name \\['bp'\\]",
        ),
        (["sex", "zz"], ["age"], {}, ColumnError, "q names columns absent"),
        (["sex"], ["age", "age"], {}, ParameterError, "s must not repeat"),
        (["sex"], ["age"], {"alpha": 0}, ParameterError, "alpha must be a finite number > 0"),
        (["sex"], ["age"], {"alpha": float("nan")}, ParameterError, "alpha"),
        (["sex"], ["age"], {"min_k": 0}, ParameterError, "min_k must be an integer >= 1"),
        (["sex"], ["age"], {"max_csf": 2}, ParameterError, "max_csf must be None or"),
        (["sex"], ["age"], {"on_violation": "ignore"}, ParameterError, "on_violation"),
        (["sex"], ["age"], {"bins": {"chol": 3}}, ColumnError, "neither q nor s"),
        (["sex"], ["bmi"], {}, ParameterError, "column 'bmi' holds non-integer numbers"),
    ],
)
def test_bad_input_names_the_parameter(
    q: list[str], s: list[str], options: dict[str, Any], error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        derive_requirements(_table(6, n=50), q, s, **options)
