"""The report's attacks section and the verdict's attack findings (issue 22, item 4).

A run whose plan names ``evaluation.attacks`` records the battery's results on a shadow
release in the custodian record; the report shows each attack with its figures, says
that it was measured on a shadow release with its numbers of records, and turns every
attack that beats its baseline by more than the margin into a finding, ranked with the
other risks, with the columns that made it succeed and the plan edit that would stop it.
"""

from __future__ import annotations

import contextlib
import html
import io
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from veil.attacks import AttackResult, BatteryResult, Rate
from veil.attacks.stats import rate
from veil.release import RunResult, example_plan, load_plan, run
from veil.release.report import build_report, findings_in

from ..cli._verdict import attack_share, label
from ._quakes import QUAKES, exact_measures_plan


def _section(page: str, anchor: str) -> str:
    match = re.search(rf'<section id="{anchor}">(.*?)</section>', page, re.S)
    assert match, anchor
    return match.group(1)


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def _at_risk(page: str) -> list[str]:
    verdict = _section(page, "verdict")
    block = verdict[verdict.index("What is left at risk") :]
    items = re.search(r"<ul>(.*?)</ul>", block, re.S)
    assert items
    return [_text(i) for i in re.findall(r"<li>(.*?)</li>", items.group(1), re.S)]


def _rows(table_html: str) -> list[list[str]]:
    rows = re.findall(r"<tr>(.*?)</tr>", table_html, re.S)
    return [[_text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)] for r in rows[1:]]


def _pct(value: float) -> str:
    return f"{100.0 * value:.2f} %"


def _with_attacks(plan: Any, attacks: list[str]) -> Any:
    return plan.model_copy(
        update={
            "evaluation": plan.evaluation.model_copy(
                update={"attacks": attacks, "attack_seed": 22, "attack_sample": 1000}
            )
        }
    )


def _quakes_plan(**evaluation: Any) -> dict[str, Any]:
    return exact_measures_plan(str(QUAKES), **{"attack_seed": 3, **evaluation})


def _page(result: RunResult) -> str:
    assert result.report_path is not None
    return result.report_path.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def taxi(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunResult, str]:
    """The NYC taxi example plan, attacked with the location attack."""
    plan = _with_attacks(load_plan(example_plan("location")), ["location"])
    result = run(plan, tmp_path_factory.mktemp("taxi") / "r", rng=5)
    return result, _page(result)


@pytest.fixture(scope="module")
def quakes(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunResult, str]:
    result = run(_quakes_plan(), tmp_path_factory.mktemp("quakes") / "q", rng=3)
    return result, _page(result)


def test_the_section_shows_each_attack_as_the_custodian_record_holds_it(
    taxi: tuple[RunResult, str],
) -> None:
    result, page = taxi
    battery = result.custodian["attacks"]
    section = _section(page, "attacks")
    said = _text(section)
    assert (
        f"Measured on a shadow release, not on the published one: the plan was run again, "
        f"in memory, on {battery['n_released_records']:,} records drawn at random from "
        f"{battery['n_records']:,}; the other {battery['n_control']:,} were held out as the "
        "control, and the shadow release was never written."
    ) in said
    rows = _rows(section)
    assert len(rows) == len(battery["results"]) > 0
    for row, r in zip(rows, battery["results"], strict=True):
        low, high = r["success_ci"]
        a_low, a_high = r["advantage_ci"]
        assert row == [
            label(r),
            f"{_pct(r['success_rate'])} ({_pct(low)} to {_pct(high)})",
            f"{_pct(r['baseline'])} (chance)",
            f"{r['advantage']:.3f} ({a_low:.3f} to {a_high:.3f})",
            f"{r['n_targets']:,}",
            ", ".join(r["columns"][:-1]) + " and " + r["columns"][-1]
            if len(r["columns"]) > 1
            else r["columns"][0],
            "yes" if r["finding"] else "no",
            r["suggestion"],
        ]
    # Each measure links to its definition.
    for anchor in ("def-shadow-release", "def-attack-advantage", "def-location-attack"):
        assert f'href="#{anchor}"' in section and f'<dt id="{anchor}">' in page


def test_the_taxi_location_attacks_are_findings_with_their_columns_and_edit(
    taxi: tuple[RunResult, str],
) -> None:
    # Issue 22: the nearest masked pickup finds the right trip far above chance, more
    # with the drop-off cell and the passenger count.
    result, page = taxi
    results = result.custodian["attacks"]["results"]
    findings = {f.subject: f for f in findings_in(page)}
    attacked = {label(r): r for r in results}
    assert {s for s in findings if s in attacked} == {
        label for label, r in attacked.items() if r["finding"]
    }
    alone = findings["Location re-identification (alone: pickup_latitude/pickup_longitude)"]
    r = attacked[alone.subject]
    assert f"succeeds for {_pct(r['success_rate'])} of {r['n_targets']:,} targets" in alone.what
    assert "On a shadow release of " in alone.what
    assert alone.change.startswith("Mask pickup_latitude, pickup_longitude more strongly")
    assert "ε = 0.01 per metre now" in alone.change
    joint = next(f for s, f in findings.items() if s.startswith("Location re-identification (with"))
    assert "passenger_count" in joint.what
    assert "generalize passenger_count" in joint.change
    assert "Larger cells for dropoff_latitude, dropoff_longitude (cell_m: 250 now)" in joint.change
    # The maps' nearest-location finding asks for the same edit of the same mask.
    grid = findings["dropoff_latitude, dropoff_longitude"].change
    assert grid.startswith("Larger cells for dropoff_latitude, dropoff_longitude (cell_m: 250")


def test_the_verdict_ranks_the_attacks_with_the_other_risks(taxi: tuple[RunResult, str]) -> None:
    _, page = taxi
    items = _at_risk(page)
    shares = [s for s in map(attack_share, items) if s is not None]
    assert len(shares) >= 4  # three attacks and the two maps' nearest-location figures
    assert shares == sorted(shares, reverse=True)
    assert items[0].startswith("Location re-identification (with ")
    # The findings that put people at risk come first in the same order.
    subjects = [f.subject for f in findings_in(page)]
    assert subjects[0] == items[0].split(" on a shadow release")[0]


def test_exact_quake_measures_beside_masked_points_are_a_finding(
    quakes: tuple[RunResult, str],
) -> None:
    # Issue 22: the exact depth, magnitude and station count re-link nearly every masked
    # quake; the report says so, names them, and says a stronger mask would not help.
    result, page = quakes
    joint = next(
        r for r in result.custodian["attacks"]["results"] if r["variant"].startswith("with ")
    )
    assert joint["finding"] and joint["success_rate"] > 0.9
    finding = next(f for f in findings_in(page) if f.subject == label(joint))
    assert "The columns that made it succeed: lat/long, depth, mag and stations." in finding.what
    assert finding.change.startswith(
        "Matching on depth, mag and stations alone narrows a person's candidates"
    )
    assert "so a stronger mask alone would not stop it" in finding.change
    assert "generalize depth, mag and stations" in finding.change
    assert "or drop them (treatment: drop)" in finding.change
    assert any(item.startswith(label(joint) + " on a shadow release") for item in _at_risk(page))


def test_a_run_without_attacks_says_it_was_not_attacked(tmp_path: Path) -> None:
    result = run(_quakes_plan(attacks=[]), tmp_path / "q", rng=3)
    page = _page(result)
    assert result.custodian["attacks"] is None
    assert any(i.startswith("No attack was run on this release") for i in _at_risk(page))
    assert '<section id="attacks">' not in page


def test_a_report_without_the_custodian_record_claims_nothing_about_attacks() -> None:
    frame = pd.DataFrame({"a": [1, 2, 3, 4]})
    for manifest in ({}, {"totals": {}, "not_protected": {}}):
        page = build_report(
            frame, frame, manifest=manifest, quasi_identifiers=[], sensitive=[],
            locations=[], target=None, metrics=[],
        )  # fmt: skip
        assert "attack was run" not in page and '<section id="attacks">' not in page
        assert "shadow release" not in _section(page, "verdict")


# ------------------------------------------------------- results given as the record holds


def _result(
    attack: str,
    variant: str,
    hits: int,
    baseline: float,
    *,
    n: int = 800,
    columns: tuple[str, ...] = (),
    details: dict[str, Any] | None = None,
) -> AttackResult:
    return AttackResult(
        attack=attack,
        variant=variant,
        success=rate(hits, n),
        baseline=Rate.exact(baseline) if attack == "location" else rate(baseline * n, n),
        baseline_kind="chance" if attack == "location" else "control",
        n_targets=n,
        columns=columns,
        suggestion="the attack's own suggestion",
        details=details or {},
    )


def _facts(*results: AttackResult, **extra: Any) -> dict[str, Any]:
    battery = BatteryResult(
        results=results, shadow=True, n_records=1000, n_released_records=800, n_control=200
    )
    return {"attacks": battery.to_dict(), **extra}


def _report(facts: dict[str, Any], original: pd.DataFrame | None = None) -> str:
    frame = original if original is not None else pd.DataFrame({"a": range(10)})
    return build_report(
        frame, frame, manifest=facts, quasi_identifiers=[], sensitive=[], locations=[],
        target=None, metrics=[],
    )  # fmt: skip


def test_attacks_within_the_margin_are_said_so() -> None:
    facts = _facts(
        _result("singling_out", "multivariate", 60, 0.07, n=500, columns=("sex",)),
        _result("inference", "salary", 520, 0.64),
    )
    assert not any(r["finding"] for r in facts["attacks"]["results"])
    page = _report(facts)
    assert (
        "No attack on the shadow release (2 run, on 800 of 1,000 records) beats its "
        "baseline by more than the 5 % margin (Attacks)."
    ) in _at_risk(page)
    assert findings_in(page) == []
    assert "Nothing needs attention" in _section(page, "verdict")
    assert len(_rows(_section(page, "attacks"))) == 2


def test_attack_findings_are_ranked_by_the_share_they_win_beyond_the_baseline() -> None:
    weaker = _result("location", "alone: lat/lon", 240, 0.001, columns=("lat/lon",))
    stronger = _result("linkability", "3 + 2 columns", 600, 0.02, columns=("zip", "age"))
    within = _result("inference", "income", 400, 0.49)
    page = _report(_facts(weaker, stronger, within))
    items = _at_risk(page)
    assert items[0].startswith("Linkability (3 + 2 columns) on a shadow release")
    assert items[1].startswith("Location re-identification (alone: lat/lon) on a shadow")
    assert items[2] == (
        "The other attack on the shadow release stays within the 5 % margin of its "
        "baseline (Attacks)."
    )
    assert [f.subject for f in findings_in(page)] == [
        "Linkability (3 + 2 columns)",
        "Location re-identification (alone: lat/lon)",
    ]
    assert "it succeeds through zip and age" in items[0]


def test_the_edit_follows_each_columns_treatment() -> None:
    original = pd.DataFrame(
        {
            "pickup_time": ["2016-06-09 08:15:00", "2016-06-09 09:40:00"] * 5,
            "count": [1, 2] * 5,
            "fare": [10.0, 12.5] * 5,
        }
    )
    steps = {
        "pickup_time": {"step": "keep", "parameters": {"method": "keep"}},
        "count": {"step": "keep", "parameters": {"method": "keep"}},
        "fare": {"step": "laplace", "parameters": {"method": "laplace", "epsilon": 1.0}},
        "lat, lon": {"step": "grid", "parameters": {"method": "grid", "cell_m": 500}},
    }
    with_exact = _result(
        "location",
        "with lat/lon, pickup_time, count",
        700,
        0.001,
        columns=("lat/lon", "pickup_time", "count"),
        details={"matching_alone_rate": 0.8, "mean_candidates": 1.3},
    )
    noised = _result("inference", "tip", 500, 0.2, columns=("fare",))
    page = _report(_facts(with_exact, noised, steps=steps), original)
    change = {f.subject: f.change for f in findings_in(page)}
    assert change["Location re-identification (with lat/lon, pickup_time, count)"] == (
        "Matching on pickup_time and count alone narrows a person's candidates to 1.3 "
        "records on average, so a stronger mask alone would not stop it: drop the exact "
        "time pickup_time (treatment: drop), or release it coarsened; generalize count "
        "(treatment: {method: generalize, hierarchy: ..., level: ...}, or add it to the "
        "anonymization's quasi-identifiers) or drop it (treatment: drop); larger cells for "
        "lat, lon (cell_m: 500 now), or mask: {method: cloak, k: 5}."
    )
    assert (
        change["Attribute inference (tip)"] == "More noise on fare (a smaller epsilon; ε = 1 now)."
    )


def test_an_unreadable_attack_record_is_said_not_hidden() -> None:
    page = _report({"attacks": {"results": "none"}})
    said = "The attack results could not be read: results: expected a list, got 'none'"
    assert said in _text(_section(page, "attacks"))
    assert any(i.startswith(said) for i in _at_risk(page))


def test_veil_report_with_the_custodian_record_shows_the_attacks(
    quakes: tuple[RunResult, str], tmp_path: Path
) -> None:
    """The report command reads the attacks from the custodian record, as veil release."""
    from veil.cli import main

    result, page = quakes
    assert result.release_path is not None and result.manifest_path is not None
    assert result.report_path is not None
    release_file, manifest = result.release_path, result.manifest_path
    custodian = result.report_path.with_name("custodian.json")
    pages = {}
    for name, extra in (("with", ["--custodian", custodian]), ("without", [])):
        out = tmp_path / f"{name}.html"
        said = io.StringIO()
        with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
            code = main(
                [str(a) for a in ("report", QUAKES, release_file, "--manifest", manifest,
                                  "--out", out, "--seed", 1, *extra)]
            )  # fmt: skip
        assert code == 0, said.getvalue()
        pages[name] = out.read_text(encoding="utf-8")
    assert _rows(_section(pages["with"], "attacks")) == _rows(_section(page, "attacks"))
    attack_findings = [f for f in findings_in(pages["with"]) if f.subject.startswith("Location re")]
    assert attack_findings == [f for f in findings_in(page) if f.subject.startswith("Location re")]
    # The public manifest alone knows nothing of the attacks: the report claims nothing.
    assert '<section id="attacks">' not in pages["without"]
    assert "attack was run" not in pages["without"]
