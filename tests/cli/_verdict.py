"""Check every statement of a release report's verdict against the manifest, the custodian
record, the release file and the tables below it.

The verdict is the custodian's basis for signing off a release: each sentence it writes
is parsed here and compared with the figure it must agree with, read from another place
(never from the sentence itself). A sentence the checker does not recognise fails the
check, so a new kind of statement needs a rule here before a report may say it.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment)).strip()


def _section(page: str, anchor: str) -> str:
    match = re.search(rf'<section id="{anchor}">(.*?)</section>', page, re.S)
    assert match is not None, f"no section {anchor!r}"
    return match.group(1)


def _names(words: str) -> list[str]:
    """'a, b and c' -> ['a', 'b', 'c'] (the report's list of names in words)."""
    head, _, last = words.rpartition(" and ")
    return [*(n.strip() for n in head.split(", ") if n.strip()), last.strip()] if head else [words]


def _rows(table_html: str) -> list[list[str]]:
    rows = re.findall(r"<tr>(.*?)</tr>", table_html, re.S)
    return [[_text(c) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", r, re.S)] for r in rows]


def _table_value(section_html: str, label: str, column: int = 1) -> str:
    for row in _rows(section_html):
        if row and row[0] == label:
            return row[column]
    raise AssertionError(f"no row {label!r}")


def _pct(value: float) -> str:
    return f"{100.0 * value:.2f} %"


@dataclass
class Release:
    """One run's files: the report, the manifest, the custodian record, the release."""

    page: str
    manifest: dict[str, Any]
    custodian: dict[str, Any]
    released: pd.DataFrame
    original: pd.DataFrame

    @classmethod
    def read(cls, out: Path, source: Path) -> Release:
        """The files of the release in ``out``, and its input ``source`` as text."""
        custodian_dir = out.with_name(out.name + ".custodian")
        return cls(
            (custodian_dir / "report.html").read_text(encoding="utf-8"),
            json.loads((out / "manifest.json").read_text(encoding="utf-8")),
            json.loads((custodian_dir / "custodian.json").read_text(encoding="utf-8")),
            pd.read_csv(out / "release.csv", dtype=str, keep_default_na=False),
            pd.read_csv(source, dtype=str, keep_default_na=False),
        )

    @property
    def rows_in(self) -> int:
        return int(self.custodian["input"]["rows"])

    @property
    def columns_in(self) -> list[str]:
        return list(self.original.columns)

    def dropped(self) -> int:
        return sum(int(m.get("dropped", 0)) for m in self.custodian.get("masking", []))

    def suppressed(self) -> int:
        return int(self.custodian.get("anonymization", {}).get("suppressed") or 0)


def _check_headline(r: Release, verdict: str) -> None:
    flags = _section(r.page, "attention").count('<li class="flag">')
    headline = _text(re.search(r"<p><b>(.*?)</b></p>", verdict, re.S).group(1))  # type: ignore[union-attr]
    if flags == 0:
        assert headline.startswith("Nothing needs attention"), headline
    else:
        assert headline.startswith(f"{flags} finding{'s' if flags != 1 else ''} need"), headline


def _blocks(verdict: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for title, items in re.findall(r"<h3>(.*?)</h3><ul>(.*?)</ul>", verdict, re.S):
        out[_text(title)] = [_text(i) for i in re.findall(r"<li>(.*?)</li>", items, re.S)]
    return out


def _check_protected(r: Release, items: list[str]) -> list[str]:
    """'What was protected, and how': each item against the release and the records."""
    unchecked = []
    for item in items:
        if item.startswith("Removed: "):
            removed = _names(item.removeprefix("Removed: ").rstrip("."))
            assert set(removed) == set(r.columns_in) - set(r.released.columns), item
        elif item.startswith("Generalized together"):
            _check_generalized(r, item)
        elif item.startswith("Locations: "):
            counts = re.findall(r"([\d,]+) records whose .*? were dropped", item)
            assert sum(int(c.replace(",", "")) for c in counts) == r.dropped(), item
            for epsilon in re.findall(r"ε = ([0-9.e-]+) per metre", item):
                masks = [s for s in r.manifest["guarantees"] if s.get("notion") == "metric"]
                assert any(math.isclose(float(epsilon), float(m["epsilon"])) for m in masks), item
        else:
            unchecked.append(item)
    return unchecked


def _check_generalized(r: Release, item: str) -> None:
    match = re.search(r"([\d,]+) records \(([^)]*)\) were suppressed", item)
    suppressed = r.suppressed()
    if suppressed:
        assert match is not None and int(match.group(1).replace(",", "")) == suppressed, item
    else:
        assert match is None, item
    assert r.rows_in - len(r.released) == suppressed + r.dropped()
    k = re.search(r"shared by at least (\d+) records", item)
    keys = list(r.custodian["anonymization"]["levels"])
    if k is not None:
        sizes = r.released.groupby(keys).size()
        assert int(sizes.min()) >= int(k.group(1)), item
    for column, words in re.findall(r"(?:\. |; )([^;.]+?) (kept exact|suppressed to \*)", item):
        values = set(r.released[column])
        if words == "kept exact":
            assert values <= set(r.original[column]), (column, item)
        else:
            assert values == {"*"}, (column, item)


def _check_cost(r: Release, items: list[str]) -> None:
    (item,) = items
    totals = r.manifest["totals"]
    for notion, pattern in (
        ("ldp", r"ε = ([0-9.e-]+) per record"),
        ("metric", r"ε = ([0-9.e-]+) per metre"),
        ("synthetic", r"ε = ([0-9.e-]+)(?:, δ = [0-9.e-]+)? per dataset"),
    ):
        stated = re.search(pattern, item)
        spent = float(totals.get(notion, {}).get("epsilon") or 0.0)
        if spent > 0:
            assert stated is not None and math.isclose(float(stated.group(1)), spent, rel_tol=1e-3)
        else:
            assert stated is None, (notion, item)
    if not any(
        float(totals.get(n, {}).get("epsilon") or 0) for n in ("ldp", "metric", "synthetic")
    ):
        assert totals.get("syntactic") or item.startswith("Nothing is randomized"), item


def _check_at_risk(r: Release, items: list[str]) -> list[str]:
    unchecked = []
    risk = _section(r.page, "risk") if '<section id="risk">' in r.page else ""
    maps = _section(r.page, "maps") if '<section id="maps">' in r.page else ""
    for item in items:
        location = re.match(r"(.+?): a nearest-location attacker .* re-identifies ([\d.]+ %)", item)
        classes = re.match(r"On (.+?), what an attacker can match: the smallest class holds "
                           r"([\d,]+) records? \(highest prosecutor risk ([0-9.e-]+)\), "
                           r"([\d,]+) records are alone in their class \(before release: "
                           r"([\d,]+)", item)  # fmt: skip
        if location is not None:
            heading = f"<h3>{html.escape(location.group(1))}</h3>"
            table = maps[maps.index(heading) :]
            rate = _table_value(table, "re-identified by a nearest-location attacker")
            assert rate == location.group(2), item
        elif classes is not None:
            keys = _names(classes.group(1))
            sizes = r.released.groupby(keys).size()
            assert int(classes.group(2).replace(",", "")) == int(sizes.min()), item
            uniques = int((sizes == 1).sum())
            assert int(classes.group(4).replace(",", "")) == uniques, item
            assert _table_value(risk, "sample uniques", 3) == f"{uniques:,}", item
            before = _table_value(risk, "sample uniques", 2)
            assert classes.group(5).rstrip(",") == before, item
        elif item.startswith("Attribute disclosure: classes reveal "):
            listed = item.removeprefix("Attribute disclosure: classes reveal ")
            for column, count in re.findall(r"(\w[\w ]*) \(([\d,]+) records\)", listed):
                cell = next(row for row in _rows(risk) if row and row[0] == column.strip())[5]
                assert cell.startswith(f"{count} records"), (item, cell)
        elif item.startswith("No class reveals a sensitive value beyond its base rate"):
            for row in _rows(risk):
                if len(row) == 6 and row[0] != "sensitive column":
                    assert row[5] in ("none", "—") or row[5].startswith("0 "), (item, row)
        elif item.startswith("No column is declared a quasi-identifier"):
            assert "Quasi-identifiers (facts an attacker may know)" not in risk, item
        else:
            unchecked.append(item)
    return unchecked


def _check_not_protected(r: Release, items: list[str]) -> list[str]:
    listed = r.manifest["not_protected"]
    phrases: dict[str, Callable[[str], bool]] = {
        "columns_kept_as_is": lambda i: i.startswith("Released exactly, with no guarantee"),
        "quasi_identifiers_generalized_only": lambda i: i.startswith(
            "Protected by generalization only"
        ),
        "released_exactly_not_covered_by_dp": lambda i: i.startswith(
            "Released exactly and NOT covered"
        ),
    }
    unchecked = []
    for item in items:
        if item == "Every released column is covered by a treatment.":
            assert not any(v for k, v in listed.items() if k != "unlisted_columns_dropped"), item
            continue
        kinds = [k for k, is_kind in phrases.items() if is_kind(item)]
        if not kinds:
            unchecked.append(item)
            continue
        named = _names(item.split("): ", 1)[-1].split(": ", 1)[-1].rstrip("."))
        assert set(named) == set(listed[kinds[0]]), (item, listed[kinds[0]])
    for kind, columns in listed.items():
        if columns and kind in phrases:
            assert any(phrases[kind](i) for i in items), (kind, columns)
    return unchecked


def check_verdict(r: Release) -> None:
    """Every statement of the verdict agrees with the manifest, the records and the tables."""
    verdict = _section(r.page, "verdict")
    _check_headline(r, verdict)
    blocks = _blocks(verdict)
    assert list(blocks) == [
        "What was protected, and how",
        "Cost, per record, per metre or per dataset",
        "What is left at risk, the largest first",
        "What is not protected",
    ]
    unchecked = _check_protected(r, blocks["What was protected, and how"])
    _check_cost(r, blocks["Cost, per record, per metre or per dataset"])
    unchecked += _check_at_risk(r, blocks["What is left at risk, the largest first"])
    unchecked += _check_not_protected(r, blocks["What is not protected"])
    assert not unchecked, f"statements no rule checks: {unchecked}"
    details = _section(r.page, "details")
    assert _table_value(details, "rows out") == f"{len(r.released):,}"
