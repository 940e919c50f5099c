"""OptimShare in a release plan: Q exact, S synthetic, the bound planned, the leaks listed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from veil.release import BudgetError, PlanError, load_plan, plan_ledger, run
from veil.release.engine import DaskEngine
from veil.release.progress import Cancelled, CancelToken, Progress
from veil.share import search_cost_bound

DOMAIN: dict[str, Any] = {
    "sex": ["F", "M"],
    "region": ["a", "b", "c"],
    "age": {"bounds": [18, 90], "integer": True, "bins": 8},
    "income": {"bounds": [0, 100], "bins": 10},
    "y": ["hi", "lo"],
}
PAIRS = [[1.0, 1e-6], [4.0, 1e-6]]


def _table(n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "id": np.arange(n),
            "sex": rng.choice(["F", "M"], n),
            "region": rng.choice(["a", "b", "c"], n),
            "age": rng.integers(18, 90, n),
        }
    )
    df["income"] = (df["age"] * 0.6 + rng.normal(0, 5, n)).clip(0, 100).round(1)
    df["y"] = np.where(df["income"] + rng.normal(0, 5, n) > 45, "hi", "lo")
    return df


def _plan(tmp_path: Path, **share: Any) -> dict[str, Any]:
    _table().to_csv(tmp_path / "people.csv", index=False)
    keep = {"treatment": "keep"}
    return {
        "input": {"path": str(tmp_path / "people.csv")},
        "columns": {
            "id": {"role": "identifier", "treatment": "drop"},
            "sex": {"role": "quasi_identifier", **keep},
            "region": {"role": "quasi_identifier", **keep},
            "age": {"role": "sensitive", **keep},
            "income": {"role": "sensitive", **keep},
            "y": {"role": "sensitive", **keep},
        },
        "share": {
            "quasi_identifiers": ["sex", "region"],
            "synthesized": ["age", "income", "y"],
            "label": "y",
            "domain": DOMAIN,
            "pairs": PAIRS,
            "synthesizer": "independent",
            "instances": 2,
            "e_threshold": 0.0,
            **share,
        },
        "budget": {"synthetic": {"epsilon": 50.0, "delta": 1e-4}},
        "output": {"report": False},
    }


@pytest.mark.filterwarnings("ignore::veil.errors.ReproducibleNoiseWarning")
@pytest.mark.parametrize("selection", ["private", "paper"])
def test_a_share_plan_keeps_q_exact_and_spends_at_most_its_bound(
    tmp_path: Path, selection: str
) -> None:
    plan = _plan(tmp_path, selection=selection)
    bound = search_cost_bound(
        [tuple(p) for p in PAIRS],
        selection=selection,
        instances=2,  # type: ignore[misc]
    )
    ledger = plan_ledger(load_plan(plan))
    assert ledger.total("dp-synthetic").epsilon == pytest.approx(bound.epsilon)
    result = run(plan, tmp_path / "out", rng=3)
    released, original = result.read_release(), _table()
    assert list(released.columns) == ["sex", "region", "age", "income", "y"]
    kept = original.loc[released.index]
    # Q is exact, row by row; S is synthetic, within its public domain.
    assert (released["sex"].to_numpy() == kept["sex"].to_numpy()).all()
    assert (released["region"].to_numpy() == kept["region"].to_numpy()).all()
    assert released["age"].between(18, 90).all() and set(released["y"]) <= {"hi", "lo"}
    assert (released["age"].to_numpy() != kept["age"].to_numpy()).mean() > 0.5
    manifest = result.manifest
    step = manifest["steps"]["table (share)"]
    assert step["cost"]["notion"] == "dp-synthetic"
    assert step["cost"]["epsilon"] <= bound.epsilon * (1 + 1e-9)
    assert manifest["totals"]["synthetic"]["epsilon"] == pytest.approx(bound.epsilon)
    (synthetic,) = [g for g in manifest["guarantees"] if g["notion"] == "dp-synthetic"]
    assert synthetic["unit"] == "dataset"
    assert synthetic["neighbouring"].startswith("two tables that differ by adding or removing")
    assert manifest["not_protected"]["released_exactly_not_covered_by_dp"] == ["sex", "region"]
    assert manifest["not_protected"]["columns_kept_as_is"] == []
    assert "NOT covered by any DP guarantee" in manifest["share"]["guarantee"]
    assert "Theorem 3.2" in manifest["share"]["guarantee"]
    # The candidates' scores are measured on the raw records: the custodian's only.
    assert "candidates" not in manifest["share"]
    assert len(result.custodian["share"]["candidates"]) >= 2
    assert "utility" not in json.dumps(manifest["share"]["chosen"])
    if selection == "paper":
        assert any("selection" in leak for leak in manifest["leaks"])


@pytest.mark.filterwarnings("ignore::veil.errors.ReproducibleNoiseWarning")
def test_fuzzy_pairs_are_bounded_before_reading_and_listed_as_a_leak(tmp_path: Path) -> None:
    plan = _plan(tmp_path, pairs={"fuzzy": {"delta": 1e-6, "t_epsilon": 4.0, "tn": 3}})
    ledger = plan_ledger(load_plan(plan))
    bound = search_cost_bound([(4 / 3, 1e-6), (8 / 3, 1e-6), (4.0, 1e-6)], selection="private",
                              instances=2)  # fmt: skip
    assert ledger.total("dp-synthetic").epsilon == pytest.approx(bound.epsilon)
    result = run(plan, tmp_path / "out", rng=4)
    assert any("PIF_thresh" in leak for leak in result.manifest["leaks"])
    recorded = result.manifest["steps"]["table (share)"]["cost"]
    assert recorded["epsilon"] <= bound.epsilon * (1 + 1e-9)


def test_a_share_plan_over_its_synthetic_budget_is_refused_before_reading(
    tmp_path: Path,
) -> None:
    plan = _plan(tmp_path)
    plan["budget"] = {"synthetic": {"epsilon": 1.0, "delta": 1e-4}}
    plan["input"]["path"] = str(tmp_path / "missing.csv")
    with pytest.raises(BudgetError, match=r"budget\.synthetic\.epsilon: the steps spend"):
        run(plan, tmp_path / "out")
    plan["budget"] = {}
    with pytest.raises(BudgetError, match=r"budget\.synthetic: .* declares no synthetic budget"):
        run(plan, tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"synthesized": ["age", "sex"]}, "quasi_identifiers and synthesized overlap"),
        ({"label": "id"}, "label 'id' must be in quasi_identifiers or synthesized"),
        ({"domain": {"sex": ["F", "M"]}}, "domain: no public domain for"),
        ({"pairs": [[0.0, 1e-6]]}, "pairs: each needs epsilon > 0"),
    ],
)
def test_a_bad_share_section_names_what_is_wrong(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    with pytest.raises(PlanError, match=message):
        load_plan(_plan(tmp_path, **change))


def test_every_released_column_is_exact_or_synthesized(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    plan["columns"]["id"]["treatment"] = {"method": "hmac", "key_env": "X"}
    with pytest.raises(PlanError, match=r"columns \['id'\] are neither exact"):
        load_plan(plan)
    plan = _plan(tmp_path)
    plan["columns"]["age"]["treatment"] = {"method": "laplace", "epsilon": 1, "bounds": [0, 1]}
    with pytest.raises(PlanError, match=r"columns.age.treatment: a share column's treatment"):
        load_plan(plan)


@pytest.mark.filterwarnings("ignore::veil.errors.ReproducibleNoiseWarning")
def test_the_search_reports_progress_runs_on_dask_and_stops_at_cancel(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    events: list[Progress] = []
    on_dask = run(plan, tmp_path / "dask", rng=5, engine=DaskEngine("threads", npartitions=2),
                  progress=events.append)  # fmt: skip
    assert on_dask.rows_out == 400
    assert any(e.step and e.step.startswith("share:") for e in events)
    note = on_dask.custodian["execution"]["steps"]["share (OptimShare)"]
    assert note.startswith("gathered in memory")
    token = CancelToken()

    def cancel_in_search(event: Progress) -> None:
        if event.step and event.step.startswith("share:"):
            token.cancel()

    with pytest.raises(Cancelled):
        run(plan, tmp_path / "cancelled", rng=5, progress=cancel_in_search, cancel=token)
    assert not (tmp_path / "cancelled").exists()


@pytest.mark.filterwarnings("ignore::veil.errors.ReproducibleNoiseWarning")
def test_the_report_reviews_the_share_and_the_review_stays_with_the_custodian(
    tmp_path: Path,
) -> None:
    from veil.risk import assess_pif

    plan = _plan(tmp_path)
    plan["output"] = {"report": True}
    result = run(plan, tmp_path / "out", rng=4)
    # The review reads the raw records: never in the public manifest.
    assert "review" not in result.manifest["share"]
    review = result.custodian["share"]["review"]
    original = _table()
    # PIF_A before is the assessment of the raw Q ∪ S on the domain's public bins.
    columns = ["sex", "region", "age", "income", "y"]
    expected = assess_pif(
        original[columns],
        bins={"age": review["bins"]["age"], "income": review["bins"]["income"]},
        default_bins="exact",
    )
    assert review["pif"]["before"] == pytest.approx(
        {k: float(v) for k, v in expected.pif_a.items()}
    )
    assert review["bins"]["income"] == pytest.approx(list(np.linspace(0, 100, 11)))
    assert set(review["pif"]["qpif"]) == {"sex", "region"}
    # Synthetic S breaks the cohorts: the released S single records out less.
    assert review["pif"]["after"]["income"] < review["pif"]["before"]["income"]
    # Table 2: the original, the model sampled whole and the release, row by row.
    recall = review["comparison"]["NB_recall"]
    assert set(recall) == {"Original", "Fully synthetic", "OptimShare"}
    assert all(0.0 <= v <= 1.0 for v in recall.values())
    page = result.report_path.read_text(encoding="utf-8")
    section = page[page.index('id="share"') :]
    assert "Partially perturbed sharing" in page
    assert "NOT covered by" in section and "Theorem 3.2 is not claimed" in section
    assert section.count("data:image/png;base64") >= 4  # Fig. 7, Fig. 6a, PIF bars, Fig. 8
    assert "NB_precision" in section and "Fully synthetic" in section
    assert 'href="#def-csf"' in section and 'href="#def-effectiveness"' in section


@pytest.mark.filterwarnings("ignore::veil.errors.ReproducibleNoiseWarning")
def test_a_synthesized_quasi_identifier_is_no_class_key_after_release(tmp_path: Path) -> None:
    # S is drawn from the DP model: its released values belong to no record, so the
    # risk after release counts classes on the exact Q only.
    plan = _plan(tmp_path)
    plan["columns"]["age"]["role"] = "quasi_identifier"
    plan["evaluation"] = {"metrics": ["risk"]}
    plan["output"] = {"report": True}
    result = run(plan, tmp_path / "out", rng=4)
    risk = result.manifest["risk"]
    assert risk["not_class_keys"] == ["age"]
    assert risk["after"]["quasi_identifiers"] == ["sex", "region"]


def test_the_min_k_guard_checks_the_q_the_plan_releases_with_explicit_pairs(
    tmp_path: Path,
) -> None:
    # Explicit pairs and no refinement: no PIF is needed, but the Q released exact must
    # still be min_k-anonymous (here one record is alone on its sex and region).
    plan = _plan(tmp_path, refine=False)
    frame = _table()
    frame.loc[0, "region"] = "c"
    frame.loc[0, "sex"] = "X"
    frame.to_csv(tmp_path / "people.csv", index=False)
    plan["share"]["domain"] = {**DOMAIN, "sex": ["F", "M", "X"]}
    from veil.errors import DisclosureRiskError

    with pytest.raises(DisclosureRiskError, match=r"min_k|alone|2-anonymous"):
        run(plan, tmp_path / "out", rng=1)
    assert not (tmp_path / "out").exists()
