"""The custodian's review of a share: PIF before and after, QPIF and QSPIF, Table 2."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

from veil.errors import ParameterError
from veil.risk import assess_pif
from veil.share import optimshare_search, public_bins, review_share
from veil.synth import TableDomain

pytestmark = pytest.mark.filterwarnings("ignore::veil.errors.ReproducibleNoiseWarning")

DOMAIN: dict[str, Any] = {
    "sex": ["F", "M"],
    "age": {"bounds": [18, 90], "integer": True, "bins": 8},
    "income": {"bounds": [0, 100], "bins": 10},
    "y": ["hi", "lo"],
}


def _table(n: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"sex": rng.choice(["F", "M"], n), "age": rng.integers(18, 90, n)})
    df["income"] = (df["age"] * 0.6 + rng.normal(0, 5, n)).clip(0, 100)
    df["y"] = np.where(df["income"] > 40, "hi", "lo")
    return df


def _search(merge: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return optimshare_search(
            _table(),
            q=["sex", "age"],
            s=["income", "y"],
            label="y",
            domain=DOMAIN,
            pairs=[(2.0, 1e-6)],
            synthesizer="independent",
            instances=1,
            e_threshold=0.0,
            merge=merge,  # type: ignore[arg-type]
            selection="paper",
            rng=3,
        )


def test_public_bins_are_the_domains_edges_of_numeric_columns() -> None:
    bins = public_bins(TableDomain.from_dict(DOMAIN))
    assert set(bins) == {"age", "income"}
    assert bins["income"] == pytest.approx(list(np.linspace(0, 100, 11)))


def test_the_review_measures_both_tables_and_keeps_q_figures_apart() -> None:
    data = _table()
    before = data.copy()
    result = _search("conditional")
    domain = TableDomain.from_dict(DOMAIN)
    review = review_share(
        data, result.data, q=["sex", "age"], s=["income", "y"], label="y",
        domain=domain, model=result.model, rng=5,
    )  # fmt: skip
    pd.testing.assert_frame_equal(data, before)
    edges = public_bins(domain)["age"]
    q_only = assess_pif(data[["sex", "age"]], bins={"age": edges}, default_bins="exact")
    assert review["pif"]["qpif"] == pytest.approx({k: float(v) for k, v in q_only.pif_a.items()})
    assert review["pif"]["qspif"] == {c: review["pif"]["before"][c] for c in ("sex", "age")}
    # Q is exact, so its mean and spread are the original's in the release.
    table = review["comparison"]
    assert table["age_mean"]["OptimShare"] == pytest.approx(table["age_mean"]["Original"])
    assert "Fully synthetic" in table["age_mean"]
    assert "sampled whole" in review["fully_synthetic"]


def test_table2_is_measured_over_several_fold_draws_with_its_spread() -> None:
    data = _table()
    result = _search("conditional")
    domain = TableDomain.from_dict(DOMAIN)
    review = review_share(
        data, result.data, q=["sex", "age"], s=["income", "y"], label="y",
        domain=domain, model=result.model, repeats=4, rng=5,
    )  # fmt: skip
    assert review["repeats"] == 4
    spread = review["comparison_spread"]
    for row, tables in review["comparison"].items():
        for name, mean in tables.items():
            cell = spread[row][name]
            assert len(cell["values"]) == 4
            assert mean == pytest.approx(np.mean(cell["values"]))
            assert cell["min"] <= mean <= cell["max"]
            assert cell["sd"] == pytest.approx(np.std(cell["values"], ddof=1))
    # each draw is Table 2 with its own folds: the classifier's figures move between
    # draws, the exact Q's mean does not
    assert spread["NB_recall"]["Original"]["max"] > spread["NB_recall"]["Original"]["min"]
    assert spread["age_mean"]["OptimShare"]["sd"] == pytest.approx(0.0, abs=1e-12)
    # one draw is comparison_table with the review's first fold stream
    single = review_share(
        data, result.data, q=["sex", "age"], s=["income", "y"], label="y",
        domain=domain, model=result.model, repeats=1, rng=5,
    )  # fmt: skip
    assert single["comparison_spread"]["NB_RMSE"]["Original"]["sd"] == 0.0
    with pytest.raises(ParameterError, match="repeats: must be an integer >= 1, got 0"):
        review_share(data, result.data, q=["sex"], s=["y"], label="y", domain=domain, repeats=0)


def test_the_linkage_is_the_raw_fraction_beside_p_n() -> None:
    data = _table()
    result = _search("conditional")
    domain = TableDomain.from_dict(DOMAIN)
    review = review_share(
        data, result.data, q=["sex", "age"], s=["income", "y"], label="y", domain=domain,
        model=result.model, repeats=1, epsilon=2.0, t_epsilon=8.0, rng=5,
    )  # fmt: skip
    link = review["linkage"]
    # the fraction the search measured for the released candidate (paper selection: the
    # counts are not noisy)
    assert link["linkable_fraction"] == pytest.approx(result.chosen["linkable"])
    assert link["linkable_records"] == round(result.chosen["linkable"] * len(data))
    assert link["p_n"] == pytest.approx(min(1.0, 2.0 * link["linkable_fraction"] / 8.0))
    assert link["p_n"] == pytest.approx(result.chosen["p_n"])
    # records alone on their exact Q are linkable by definition: they are counted
    alone = int((data.groupby(["sex", "age"])["y"].transform("size") == 1).sum())
    assert link["alone"] == alone and link["linkable_records"] >= alone
    assert link["groups"] == data.groupby(["sex", "age"]).ngroups
    without = review_share(
        data, result.data, q=["sex", "age"], s=["income", "y"], label="y", domain=domain,
        repeats=1, rng=5,
    )  # fmt: skip
    assert without["linkage"]["p_n"] is None
    assert without["linkage"]["linkable_fraction"] == link["linkable_fraction"]


def test_the_paper_merge_has_no_fully_synthetic_table_and_says_why() -> None:
    result = _search("paper")
    review = review_share(
        _table(), result.data, q=["sex", "age"], s=["income", "y"], label="y",
        domain=TableDomain.from_dict(DOMAIN), model=result.model, rng=5,
    )  # fmt: skip
    assert set(review["comparison"]["NB_recall"]) == {"Original", "OptimShare"}
    assert review["fully_synthetic"].startswith("not drawn")


def test_tables_of_different_lengths_are_refused_naming_released() -> None:
    data = _table()
    with pytest.raises(ParameterError, match="released: has 10 rows, the original 300"):
        review_share(
            data, data.head(10), q=["sex"], s=["y"], label="y",
            domain=TableDomain.from_dict(DOMAIN),
        )  # fmt: skip
