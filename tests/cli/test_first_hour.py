"""A custodian's first hour (issue 12): from a raw file to a reviewed release, no Python.

A new user has the stroke registry (``tests/data/stroke``, a plain CSV file once
decompressed) and the commands the README shows. Nothing below writes Python or a CSV
by hand: ``veil risk --scan`` says what is risky, ``veil init`` drafts the plan, the user
edits two lines of it as text (the glucose column gets Laplace noise on public bounds,
the budget gets an epsilon), ``veil release --dry-run`` and ``veil release`` run it,
and the report explains every finding it raises. The user also masks a file of crime
points with ``veil geo`` and a map. The report and the map are then opened in headless
Chromium with the network cut off; the screenshots are kept under
``$VEIL_TEST_ARTIFACTS/<test>`` (else the test's temporary folder, which pytest keeps for
its last runs).
"""

from __future__ import annotations

import contextlib
import gzip
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from .._data import DATA
from ..browser._page import LOCAL_SCHEMES, OfflinePage
from ..browser.test_report import artefacts_folder, check_report_fits

# The two lines the user edits in the drafted plan, before and after.
_EDITS = {
    "  avg_glucose_level: {role: sensitive, treatment: keep}\n": (
        "  avg_glucose_level: {role: sensitive, treatment: {method: laplace, bounds: [50, 300]}}\n"
    ),
    "  - {k_anonymity: 5}\n": "  - {k_anonymity: 10}\n",
}


@dataclass(frozen=True)
class FirstHour:
    folder: Path
    scan: str
    plan: str
    dry_run: str
    release: str
    report: Path
    released: pd.DataFrame


@pytest.fixture(scope="module")
def first_hour(tmp_path_factory: pytest.TempPathFactory) -> FirstHour:
    """The user's session, from the raw file to the release (commands only)."""
    from veil.cli import main

    folder = tmp_path_factory.mktemp("custodian")
    raw = folder / "stroke.csv"
    raw.write_bytes(gzip.decompress((DATA / "stroke" / "stroke.csv.gz").read_bytes()))
    outputs = {}
    capture = pytest.MonkeyPatch()
    with capture.context() as patch:
        patch.chdir(folder)
        for step, args in (
            ("scan", ["risk", "stroke.csv", "--scan"]),
            ("init", ["init", "stroke.csv"]),
        ):
            with _captured() as out:
                assert main(args) == 0, step
            outputs[step] = out.getvalue()
        plan_file = folder / "stroke.plan.yaml"
        text = plan_file.read_text(encoding="utf-8")
        for before, after in _EDITS.items():
            assert text.count(before) == 1, f"the drafted plan has no line {before!r}"
            text = text.replace(before, after)
        plan_file.write_text(text, encoding="utf-8")
        for step, args in (
            ("dry_run", ["release", "stroke.plan.yaml", "--dry-run"]),
            ("release", ["release", "stroke.plan.yaml", "--out", "stroke-release"]),
        ):
            with _captured() as out:
                assert main(args) == 0, step
            outputs[step] = out.getvalue()
    return FirstHour(
        folder,
        outputs["scan"],
        text,
        outputs["dry_run"],
        outputs["release"],
        folder / "stroke-release.custodian" / "report.html",
        pd.read_csv(folder / "stroke-release" / "release.csv"),
    )


@contextlib.contextmanager
def _captured() -> Iterator[Any]:
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        yield buffer


def _section(page: str, anchor: str) -> str:
    match = re.search(rf'<section id="{anchor}">(.*?)</section>', page, flags=re.S)
    assert match is not None, f"no section {anchor!r}"
    return match.group(1)


def test_the_scan_shows_the_risk_before_any_plan(first_hour: FirstHour) -> None:
    scan = first_hour.scan
    assert (
        "using the suggested quasi-identifiers gender, age, ever_married, work_type, "
        "Residence_type" in scan
    )
    assert "Riskiest quasi-identifier combinations of stroke.csv" in scan
    assert "Records that drive the risk on" in scan
    assert re.search(r"│ id\s+│ identifier", scan)


def test_two_edited_lines_give_a_release(first_hour: FirstHour) -> None:
    assert "dry run: within budget" in first_hour.dry_run
    assert re.search(r"released \d[\d,]* of 5110 records", first_hour.release)
    assert "wrote stroke-release/release.csv" in first_hour.release
    released = first_hour.released
    assert "id" not in released.columns
    assert set(released["age"].dropna().unique()) <= {
        "[0, 20)", "[20, 40)", "[40, 60)", "[60, 80)", "[80, 100)"
    }  # fmt: skip
    glucose = released["avg_glucose_level"]
    assert glucose.between(50, 300).all()


def test_the_report_flags_nothing_unexplained(first_hour: FirstHour) -> None:
    page = first_hour.report.read_text(encoding="utf-8")
    assert page.index('id="verdict"') < page.index('id="details"')
    assert "Not computed" not in page
    attention = _section(page, "attention")
    flags = re.findall(r'<li class="flag">(.*?)</li>', attention, flags=re.S)
    assert flags, "the glucose noise at epsilon 1 on [50, 300] must be flagged"
    verdict = _section(page, "verdict")
    count = len(flags)
    assert f"{count} finding{'s' if count > 1 else ''} need" in verdict
    for flag in flags:
        # Each finding says what is wrong, what to change, and where the figures are.
        assert "<b>What to change:</b>" in flag
        target = re.search(r'href="#([\w-]+)">details</a>', flag)
        assert target is not None and f'<section id="{target.group(1)}">' in page
    glucose = next(f for f in flags if f.startswith("<b>avg_glucose_level</b>"))
    assert "sit on the lower bound 50" in glucose and "on the upper bound 300" in glucose
    assert "Give it more epsilon" in glucose
    # The verdict says what was done, in words, and what it cost.
    assert "Removed: id." in verdict
    assert "age in 20-year bands" in verdict
    assert "avg_glucose_level (Laplace noise on public bounds [50, 300], ε = 1 per record)" in (
        verdict
    )
    assert "ε = 1 per record" in _section(page, "verdict")
    smallest = re.search(r"the smallest class holds (\d+) records", verdict)
    assert smallest is not None and int(smallest.group(1)) >= 10  # the edited k
    # Majority homogeneity (95 % have stroke = 0) is not reported as disclosure.
    assert "<b>stroke</b>" not in attention
    # No release warning stands unexplained: each privacy warning is a finding.
    warnings = re.search(r'<section id="warnings">(.*?)</section>', page, flags=re.S)
    if warnings is not None:
        for category in re.findall(r"<tr><td>(\w*Warning)</td>", warnings.group(1)):
            assert f"<b>{category}</b>" in attention or "Privacy" not in category


def test_the_report_and_a_map_in_a_browser_offline(
    first_hour: FirstHour, browser: Any, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    from veil.cli import main

    folder = artefacts_folder(request, tmp_path)
    with _offline(browser) as page:
        check_report_fits(page.page, first_hour.report, folder, "stroke_report")
        assert page.network_requests() == [] and page.console_errors == []
    # The same user masks crime points in metres, with a map of the masked points.
    crimes = first_hour.folder / "crimes.csv"
    shutil.copy(DATA / "chicago_crime_sample.csv", crimes)
    map_file = first_hour.folder / "crimes_map.html"
    with _captured() as out:
        code = main(
            [
                "geo", str(crimes), "--lat", "Latitude", "--lon", "Longitude",
                "--mask", "planar-laplace", "--epsilon", "0.01", "--centre", "41.88,-87.63",
                "--drop-other", "--out", str(first_hour.folder / "crimes_masked.csv"),
                "--map", str(map_file),
            ]
        )  # fmt: skip
    assert code == 0, out.getvalue()
    assert "expected median displacement 168 m" in out.getvalue()
    with _offline(browser) as page:
        page.open(map_file)
        page.page.screenshot(path=str(folder / "crimes_map.png"))
        assert (folder / "crimes_map.png").read_bytes()[:4] == b"\x89PNG"
        assert page.network_requests() == [] and page.routed == []
        assert page.console_errors == []


@contextlib.contextmanager
def _offline(browser: Any) -> Iterator[OfflinePage]:
    """A page whose every request off the machine is aborted and recorded."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    recorder = OfflinePage(page)

    def route(route: Any) -> None:
        if route.request.url.startswith(LOCAL_SCHEMES):
            route.continue_()
        else:
            recorder.routed.append(route.request.url)
            route.abort()

    page.on("request", lambda request: recorder.requests.append(request.url))
    page.on("pageerror", lambda error: recorder.console_errors.append(str(error)))
    page.on(
        "console",
        lambda message: (
            recorder.console_errors.append(message.text) if message.type == "error" else None
        ),
    )
    context.route("**/*", route)
    try:
        yield recorder
    finally:
        context.close()
