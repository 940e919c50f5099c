"""Tests for veil.release.report: the self-contained HTML report of a release."""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from veil.datasets import load_adult
from veil.errors import ColumnError, DataTypeError, ParameterError
from veil.geo import jitter, projection_at, synthetic_city
from veil.release.report import build_report, write_report

MALICIOUS = "<script>alert(1)</script>"
MALICIOUS_COLUMN = '<img src=x onerror="alert(2)">'
QIS = ["age", "sex", "race", "education"]
# synthetic_city's default centre: a public point, so the masks' projection is public.
CITY = projection_at(39.0, -94.5)
SECTIONS = [
    "summary",
    "ledger",
    "risk",
    "distributions",
    "divergence",
    "correlation",
    "ml-utility",
    "maps",
    "warnings",
    "unprotected",
]


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed))


@pytest.fixture(scope="module")
def original() -> pd.DataFrame:
    """3 000 Adult records with a person's home location and a name (shared: never modified)."""
    sample = load_adult().iloc[:3000].copy()
    city = synthetic_city(1500, 700, 500, 300, rng=_rng(1))
    sample["lat"] = city["lat"].to_numpy()
    sample["lon"] = city["lon"].to_numpy()
    sample["name"] = [f"person {i}" for i in range(len(sample))]
    # A hostile value frequent enough to be among the drawn categories.
    sample.loc[sample.index[::4], "workclass"] = MALICIOUS
    sample.loc[sample.index[::9], "workclass"] = "$5 and $6"
    return sample.rename(columns={"relationship": MALICIOUS_COLUMN})


@pytest.fixture(scope="module")
def released(original: pd.DataFrame) -> pd.DataFrame:
    """Noisy ages, generalized education-num, jittered homes, no names, no fnlwgt."""
    rng = _rng(2)
    out = original.drop(columns=["name", "fnlwgt"])
    out["age"] = (out["age"] + rng.integers(-5, 6, len(out))).clip(17, 90)
    low = (original["education-num"] // 4) * 4
    out["education-num"] = "[" + low.astype(str) + "-" + (low + 4).astype(str) + "["
    masked = jitter(original, "lat", "lon", 150.0, projection=CITY, rng=rng)
    out["lat"], out["lon"] = masked["lat"], masked["lon"]
    return out


@pytest.fixture(scope="module")
def manifest() -> dict[str, Any]:
    """A manifest shaped as veil.release.manifest writes it, with hostile strings."""
    return {
        "veil_version": "0.1.0",
        "input": {"source": "adult.csv", "sha256": "ab" * 32, "rows": 3000},
        "steps": {
            "age": {
                "scope": "age",
                "step": "laplace",
                "parameters": {"epsilon": 1.0, "bounds": [17, 90], "note": MALICIOUS},
                "cost": {
                    "epsilon": 1.0,
                    "delta": 0.0,
                    "notion": "ldp",
                    "unit": "record",
                    "scope": "age",
                    "mechanism": "laplace",
                },
                "guarantee": "1.0-LDP per record",
                "role": "quasi-identifier",
            },
            "lat, lon": {"step": "jitter", "parameters": {"radius_m": 150}, "cost": None},
            "name": {"step": "drop"},
            MALICIOUS_COLUMN: {"step": "keep"},
        },
        "totals": {
            "ldp": {"unit": "record", "epsilon": 1.0, "delta": 0.0, "budget_epsilon": 2.0},
            "metric": {"unit": "metre", "epsilon": 0.0, "budget_epsilon": None},
            "syntactic": [],
        },
        "warnings": [
            {"category": "PrivacyLeakWarning", "message": f"domain of {MALICIOUS} inferred"},
            "a plain-text warning",
        ],
        "not_protected": {"columns_kept_as_is": ["sex", MALICIOUS], "other": []},
        "timings_s": {"read": 0.1, "protect": 0.4},
    }


def _build(original: pd.DataFrame, released: pd.DataFrame, **kwargs: Any) -> str:
    arguments: dict[str, Any] = {
        "manifest": {},
        "quasi_identifiers": QIS,
        "sensitive": ["occupation"],
        "locations": [("lat", "lon")],
        "target": "salary-class",
        "rng": _rng(3),
    }
    arguments.update(kwargs)
    return build_report(original, released, **arguments)


def _section(page: str, anchor: str) -> str:
    match = re.search(rf'<section id="{anchor}">(.*?)</section>', page, flags=re.S)
    assert match is not None, f"no section {anchor!r}"
    return match.group(1)


@pytest.fixture(scope="module")
def page(original: pd.DataFrame, released: pd.DataFrame, manifest: dict[str, Any]) -> str:
    return _build(original, released, manifest=manifest)


def test_page_is_self_contained(page: str) -> None:
    assert page.startswith("<!DOCTYPE html>")
    # Nothing is fetched: no script, no external source or link, no CSS import or url().
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, flags=re.I)
    assert "http://" not in page and "https://" not in page and "://" not in page
    assert "<script" not in page.lower()
    assert "@import" not in page and "url(" not in page
    assert "<link" not in page.lower()
    sources = re.findall(r'src="([^"]*)"', page)
    assert sources, "the page has no image"
    assert all(s.startswith("data:image/png;base64,") for s in sources)
    for source in sources:
        assert base64.b64decode(source.split(",", 1)[1]).startswith(b"\x89PNG")
    # Every in-page link points at a section of the page.
    for anchor in re.findall(r'href="([^"]*)"', page):
        assert anchor.startswith("#")
        assert f'id="{anchor[1:]}"' in page
    assert "default-src 'none'" in page


def test_page_holds_every_section(page: str) -> None:
    for anchor in SECTIONS:
        _section(page, anchor)
    summary = _section(page, "summary")
    assert "3,000" in summary and "ab" * 32 in summary
    assert "fnlwgt" in summary and "name" in summary  # columns not released
    ledger = _section(page, "ledger")
    assert "laplace" in ledger and "ε = 1 per record (ldp)" in ledger
    assert "no formal guarantee" in ledger  # a step without a cost
    risk = _section(page, "risk")
    assert "prosecutor risk, highest" in risk and "marketer" in risk and "journalist" in risk
    assert "sample uniques" in risk and "occupation" in risk
    assert _section(page, "distributions").count("<img") >= 10
    divergence = _section(page, "divergence")
    assert "TVD" in divergence and "Wasserstein" in divergence
    assert "education-num (numeric on one side only" in divergence
    correlation = _section(page, "correlation")
    assert "correlation loss (%)" in correlation and "<img" in correlation
    ml = _section(page, "ml-utility")
    assert "ROC AUC" in ml and "trained on the release" in ml
    maps = _section(page, "maps")
    assert "<img" in maps and "median displacement (m)" in maps
    assert "PrivacyLeakWarning" in _section(page, "warnings")
    assert "a plain-text warning" in _section(page, "warnings")
    assert "columns kept as is" in _section(page, "unprotected")


def test_risk_figures_match_veil_risk(
    page: str, original: pd.DataFrame, released: pd.DataFrame
) -> None:
    from veil.risk import summary

    before, after = summary(original, QIS), summary(released, QIS)
    rows = re.search(r"sample uniques \(records alone in their class\)</td>(.*?)</tr>", page)
    assert rows is not None
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", rows.group(1))
    assert cells == [f"{before.sample_uniques:,}", f"{after.sample_uniques:,}"]


def test_data_and_manifest_strings_are_escaped(page: str) -> None:
    assert MALICIOUS not in page
    assert MALICIOUS_COLUMN not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=&quot;alert(2)&quot;&gt;" in page
    assert "onerror=" not in page.replace("onerror=&quot;", "")


def test_title_is_escaped(original: pd.DataFrame, released: pd.DataFrame) -> None:
    page = _build(original, released, title=f"Release {MALICIOUS}", target=None, locations=[])
    assert "<title>Release &lt;script&gt;" in page
    assert "<script" not in page.lower()


def test_identifier_like_values_are_not_drawn(
    original: pd.DataFrame, released: pd.DataFrame
) -> None:
    kept = released.assign(name=original["name"])
    page = _build(original, kept, target=None, locations=[])
    distributions = _section(page, "distributions")
    assert "Identifier-like columns (values not shown)" in distributions
    assert "person 0" not in page
    assert 'alt="distribution of name"' not in page


def test_suppressed_rows_removed(original: pd.DataFrame, released: pd.DataFrame) -> None:
    suppressed = released.drop(index=released.index[::7])
    page = _build(original, suppressed)
    summary = _section(page, "summary")
    assert "rows removed" in summary and f"{len(original) - len(suppressed):,}" in summary
    # Rows are matched by index: the correlation, ML and location measures are computed.
    assert "correlation loss (%)" in _section(page, "correlation")
    ml = _section(page, "ml-utility")
    assert "ROC AUC" in ml and "Not computed" not in ml
    maps = _section(page, "maps")
    assert "re-identified by a nearest-location attacker" in maps
    assert "Not computed" not in page


def test_unmatchable_rows_still_give_a_report(
    original: pd.DataFrame, released: pd.DataFrame
) -> None:
    shuffled = released.iloc[::2].reset_index(drop=True)
    shuffled.index = shuffled.index + 100_000
    page = _build(original, shuffled)
    assert "cannot be matched" in _section(page, "correlation")
    assert "cannot be matched" in _section(page, "maps")
    assert "Not computed" in _section(page, "ml-utility")
    assert "<img" in _section(page, "distributions")


def test_removed_records_with_a_reset_index_are_not_matched(
    original: pd.DataFrame, released: pd.DataFrame
) -> None:
    # Labels 0..m-1 after removing records would pair kept records with the wrong ones.
    base = original.reset_index(drop=True)
    reset = released.reset_index(drop=True).drop(index=range(0, len(released), 7))
    reset = reset.reset_index(drop=True)
    page = _build(base, reset)
    assert "cannot be matched" in _section(page, "correlation")
    assert "cannot be matched" in _section(page, "maps")
    assert "as after reset_index" in _section(page, "ml-utility")


def test_location_pairs(original: pd.DataFrame, released: pd.DataFrame) -> None:
    page = _build(original, released, target=None)
    maps = _section(page, "maps")
    assert 'alt="locations lat, lon before and after"' in maps
    assert "records with spatial k below 5" in maps
    # Coordinates are drawn on the map, not as distributions.
    assert 'alt="distribution of lat"' not in page
    dropped = released.drop(columns=["lat", "lon"])
    maps = _section(_build(original, dropped, target=None), "maps")
    assert "Not released." in maps


def test_far_placeholder_locations_are_left_out(
    original: pd.DataFrame, released: pd.DataFrame
) -> None:
    rows = original.index[:12]
    placeholder = original.copy()
    placeholder.loc[rows, ["lat", "lon"]] = 0.0
    masked = released.copy()
    masked.loc[rows, ["lat", "lon"]] = 0.0
    maps = _section(_build(placeholder, masked, target=None), "maps")
    assert "Not computed" not in maps
    assert "Not drawn: 12 original and 12 released points more than 500 km" in maps
    assert "Measured on the 2,988 records" in maps and "12 are left out" in maps


def test_no_target_and_no_locations(original: pd.DataFrame, released: pd.DataFrame) -> None:
    page = _build(original, released, target=None, locations=[], rng=None)
    assert 'id="ml-utility"' not in page
    assert 'id="maps"' not in page
    for anchor in ("summary", "risk", "distributions", "divergence", "correlation"):
        _section(page, anchor)


def test_missing_manifest_sections_are_omitted(
    original: pd.DataFrame, released: pd.DataFrame
) -> None:
    page = _build(original, released, manifest={}, target=None, locations=[])
    for anchor in ("ledger", "warnings", "unprotected"):
        assert f'id="{anchor}"' not in page
    assert "Privacy totals" not in page


def test_manifest_with_columns_and_unprotected_keys(
    original: pd.DataFrame, released: pd.DataFrame
) -> None:
    manifest = {
        "columns": {
            "age": {"treatment": "laplace", "parameters": {"epsilon": 0.5}, "cost": 0.5},
            "sex": {"treatment": "keep"},
            "race": "odd entry",
        },
        "unprotected": ["sex", {"column": "race", "reason": "kept"}],
        "timings": {"total": 1.0},
        "totals": {"ldp": 0.5},
        "warnings": [],
    }
    page = _build(original, released, manifest=manifest, target=None, locations=[])
    ledger = _section(page, "ledger")
    assert "laplace" in ledger and "epsilon = 0.5" in ledger and "odd entry" in ledger
    assert "column = race; reason = kept" in _section(page, "unprotected")
    assert 'id="warnings"' not in page
    assert "Timings" in _section(page, "summary")


def test_chosen_metrics_only(original: pd.DataFrame, released: pd.DataFrame) -> None:
    page = _build(original, released, metrics=["risk", "maps"])
    for anchor in ("summary", "risk", "maps"):
        _section(page, anchor)
    for anchor in ("distributions", "divergence", "correlation", "ml-utility"):
        assert f'id="{anchor}"' not in page


def test_no_quasi_identifiers(original: pd.DataFrame, released: pd.DataFrame) -> None:
    page = _build(original, released, quasi_identifiers=[], sensitive=[], target=None)
    assert "No quasi-identifiers were declared" in _section(page, "risk")


def test_report_is_deterministic_for_a_seeded_generator(
    original: pd.DataFrame, released: pd.DataFrame, manifest: dict[str, Any]
) -> None:
    first = _build(original, released, manifest=manifest, rng=_rng(7))
    second = _build(original, released, manifest=manifest, rng=_rng(7))
    assert first == second


def test_inputs_are_not_modified(
    original: pd.DataFrame, released: pd.DataFrame, manifest: dict[str, Any]
) -> None:
    before, before_released = original.copy(), released.copy()
    _build(original, released, manifest=manifest)
    pd.testing.assert_frame_equal(original, before)
    pd.testing.assert_frame_equal(released, before_released)


def test_large_table_plots_a_sample_of_locations(adult: pd.DataFrame) -> None:
    n = 12_000
    city = synthetic_city(6000, 3000, 2000, 1000, rng=_rng(4))
    original = pd.DataFrame(
        {
            "age": np.resize(adult["age"].to_numpy(), n),
            "sex": np.resize(adult["sex"].to_numpy(), n),
            "lat": city["lat"].to_numpy(),
            "lon": city["lon"].to_numpy(),
        }
    )
    released = jitter(original, "lat", "lon", 100.0, projection=CITY, rng=_rng(5))
    page = _build(original, released, quasi_identifiers=["age", "sex"], sensitive=[], target=None)
    assert 'alt="locations lat, lon before and after"' in page
    # At most 5 000 points per panel are drawn: the page stays small.
    assert len(page) < 1_000_000


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"quasi_identifiers": ["zip"]}, ColumnError, r"quasi_identifiers: columns \['zip'\]"),
        ({"sensitive": ["diagnosis"]}, ColumnError, "sensitive: columns"),
        ({"target": "income"}, ColumnError, "target: columns"),
        ({"locations": [("lat", "longitude")]}, ColumnError, "locations: columns"),
        ({"locations": [("lat",)]}, ParameterError, "locations: each entry must be a"),
        ({"locations": ["lat"]}, ParameterError, "locations: each entry must be a"),
        ({"quasi_identifiers": "age"}, ParameterError, "quasi_identifiers: expected a sequence"),
        ({"manifest": []}, DataTypeError, "manifest: must be a mapping, got list"),
        (
            {"metrics": ["risk", "utility"]},
            ParameterError,
            r"metrics: unknown sections \['utility'\]",
        ),
        ({"metrics": "risk"}, ParameterError, "metrics: expected a sequence"),
    ],
)
def test_bad_arguments(
    original: pd.DataFrame,
    released: pd.DataFrame,
    kwargs: dict[str, Any],
    error: type[Exception],
    message: str,
) -> None:
    with pytest.raises(error, match=message):
        _build(original, released, **kwargs)


def test_not_a_frame(original: pd.DataFrame) -> None:
    with pytest.raises(DataTypeError, match="released: must be a pandas DataFrame, got dict"):
        _build(original, {})  # type: ignore[arg-type]


def test_write_report(tmp_path: Path, page: str) -> None:
    path = tmp_path / "report.html"
    path.write_text("previous", encoding="utf-8")
    write_report(path, page)
    assert path.read_text(encoding="utf-8") == page
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]
    with pytest.raises(DataTypeError, match="html_text: must be a str, got bytes"):
        write_report(path, page.encode())  # type: ignore[arg-type]
    assert path.read_text(encoding="utf-8") == page
