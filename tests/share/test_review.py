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
