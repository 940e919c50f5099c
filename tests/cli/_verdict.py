"""Check every statement of a release report's verdict against the manifest, the custodian
record, the release file and the tables below it.

The attacks' statements (what is left at risk, the findings, the attacks section) are
checked against the custodian record's ``attacks``: every figure, the columns, and that
each attack beating its margin is stated, the others counted, a run without attacks said.

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


# The attacks' names in words, as the report writes them ("Singling out (multivariate)").
LABELS = {
    "singling_out": "Singling out",
    "linkability": "Linkability",
    "inference": "Attribute inference",
    "location": "Location re-identification",
    "membership": "Membership inference",
    "intersection": "Intersection of two releases",
}
# What each kind of baseline is said to be.
BASELINES = {
    "control": "for the same attack on held-out records",
    "chance": "by chance",
    "single release": "with either release alone",
}


def label(result: dict[str, Any]) -> str:
    """An attack's result as the report names it."""
    return f"{LABELS[result['attack']]} ({result['variant']})"


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
        manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        released = out / manifest["outputs"]["release"]["file"]
        return cls(
            (custodian_dir / "report.html").read_text(encoding="utf-8"),
            manifest,
            json.loads((custodian_dir / "custodian.json").read_text(encoding="utf-8")),
            pd.read_csv(released, dtype=str, keep_default_na=False),
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

    @property
    def attacks(self) -> dict[str, Any] | None:
        """The attack battery the custodian record holds (None: the plan named none)."""
        battery = self.custodian.get("attacks")
        return battery if isinstance(battery, dict) else None

    def attack(self, named: str) -> dict[str, Any]:
        """The result the report calls ``named``."""
        assert self.attacks is not None, named
        found = [a for a in self.attacks["results"] if label(a) == named]
        assert len(found) == 1, (named, [label(a) for a in self.attacks["results"]])
        return found[0]


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
        elif item.startswith("Noised under local DP: "):
            _check_noised(r, item.removeprefix("Noised under local DP: ").rstrip("."))
        elif item.startswith("Locations: "):
            counts = re.findall(r"([\d,]+) records whose .*? were dropped", item)
            assert sum(int(c.replace(",", "")) for c in counts) == r.dropped(), item
            for epsilon in re.findall(r"ε = ([0-9.e-]+) per metre", item):
                masks = [s for s in r.manifest["guarantees"] if s.get("notion") == "metric"]
                assert any(math.isclose(float(epsilon), float(m["epsilon"])) for m in masks), item
        else:
            unchecked.append(item)
    return unchecked


_NOISE = {"laplace", "gaussian", "exponential", "randomized_response"}


def _check_noised(r: Release, listed: str) -> None:
    """'col (Laplace noise on public bounds [a, b], ε = e per record); ...' against the steps."""
    named = []
    for entry in listed.split("); "):
        column, _, how = entry.partition(" (")
        step = r.manifest["steps"][column]
        assert step["step"] in _NOISE, entry
        epsilon = re.search(r"ε = ([0-9.e-]+) per record", how)
        assert epsilon is not None and math.isclose(
            float(epsilon.group(1)), float(step["cost"]["epsilon"]), rel_tol=1e-3
        ), entry
        bounds = re.search(r"public bounds \[([-0-9.e]+), ([-0-9.e]+)\]", how)
        if bounds is not None:
            stated = [float(bounds.group(1)), float(bounds.group(2))]
            assert stated == [float(b) for b in step["parameters"]["bounds"]], entry
        categories = re.search(r"over (\d+) public categories", how)
        if categories is not None:
            assert int(categories.group(1)) == len(step["parameters"]["domain"]), entry
        named.append(column)
    noised = {c for c, s in r.manifest["steps"].items() if s["step"] in _NOISE}
    assert set(named) == noised, (named, noised)


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
        values = set(r.released[column].dropna())
        if words == "kept exact":
            # NaN is not equal to itself: missing values are compared apart.
            assert values <= set(r.original[column].dropna()), (column, item)
            if r.released[column].isna().any():
                assert r.original[column].isna().any(), (column, item)
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


_NOISED_QIS = ": noised, not matchable exactly; protected by their ε."


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
            for column, count in re.findall(r"(?:^|, | and )([^,()]+?) \(([\d,]+) records\)",
                                            listed):  # fmt: skip
                cell = next(row for row in _rows(risk) if row and row[0] == column.strip())[5]
                assert cell.startswith(f"{count} records"), (item, cell)
        elif item.endswith(": noised, not matchable exactly; protected by their ε."):
            for column in _names(item.removesuffix(_NOISED_QIS)):
                step = r.manifest["steps"][column]
                assert step["step"] in _NOISE and step["role"] == "quasi_identifier", item
        elif item.startswith("Re-identification risk on the quasi-identifiers is not measured"):
            assert "risk" not in r.manifest["plan"]["evaluation"]["metrics"], item
            assert '<section id="risk">' not in r.page, item
        elif item.startswith("No class reveals a sensitive value beyond its base rate"):
            for row in _rows(risk):
                if len(row) == 6 and row[0] != "sensitive column":
                    assert row[5] in ("none", "—") or row[5].startswith("0 "), (item, row)
        elif item.startswith("No column is declared a quasi-identifier"):
            assert "Quasi-identifiers (facts an attacker may know)" not in risk, item
        else:
            unchecked.append(item)
    return unchecked


_CLAIM = (
    r"the attack succeeds for (?P<success>[\d.]+ %) of (?P<n>[\d,]+) (?P<unit>targets|attempts), "
    r"against (?P<baseline>[\d.]+ %) (?P<kind>[\w -]+?); advantage (?P<adv>-?[\d.]+) "
    r"\(95 % interval (?P<low>-?[\d.]+) to (?P<high>-?[\d.]+)\), above the "
    r"(?P<margin>[\d.]+ %) margin"
)


def _check_claim(r: Release, result: dict[str, Any], claim: re.Match[str]) -> None:
    """An attack's figures as a sentence states them, against the custodian record."""
    battery = r.attacks
    assert battery is not None
    # A finding is an attack whose advantage's interval lies above the margin.
    assert result["finding"] is (result["advantage_ci"][0] > battery["margin"]) is True, result
    assert claim["success"] == _pct(result["success_rate"]), (claim[0], result)
    assert int(claim["n"].replace(",", "")) == result["n_targets"], claim[0]
    assert claim["unit"] == ("attempts" if result["attack"] == "singling_out" else "targets")
    assert claim["baseline"] == _pct(result["baseline"]), claim[0]
    assert claim["kind"] == BASELINES[result["baseline_kind"]], claim[0]
    # The sentence rounds to 3 decimals the value the record keeps to 6, so the two can
    # differ by half a unit of the third decimal plus the record's own rounding.
    for key, value in (("adv", result["advantage"]), ("low", result["advantage_ci"][0]),
                       ("high", result["advantage_ci"][1])):  # fmt: skip
        assert abs(float(claim[key]) - value) <= 5e-4 + 5e-7, (key, claim[0], value)
    assert claim["margin"].removesuffix(" %") == f"{100 * battery['margin']:.0f}", claim[0]


def attack_share(item: str) -> float | None:
    """The share of records (or targets beyond the baseline) an at-risk item states."""
    attack = re.search(r"succeeds for ([\d.]+) % of .*?against ([\d.]+) %", item)
    if attack:
        return (float(attack.group(1)) - float(attack.group(2))) / 100
    located = re.search(r"re-identifies ([\d.]+) % of the released records", item)
    return float(located.group(1)) / 100 if located else None


def _check_attack_items(r: Release, items: list[str], ranked: list[str]) -> list[str]:
    """The verdict's statements on the attacks, against the custodian record's ``attacks``.

    Every attack that is a finding has its item, with its figures and columns; the others
    are counted; a run without attacks says so; the measured items come largest first.
    """
    battery = r.attacks
    unchecked = []
    stated: set[str] = set()
    for item in items:
        finding = re.match(rf"(.+?) on a shadow release: {_CLAIM}(?:; it succeeds through "
                           r"(?P<columns>.+))? \(Attacks\)\.$", item)  # fmt: skip
        others = re.match(r"The other (?:(\d+) )?attacks? on the shadow release stays? within "
                          r"the ([\d.]+ %) margin of (?:its baseline|their baselines) "
                          r"\(Attacks\)\.$", item)  # fmt: skip
        none = re.match(r"No attack on the shadow release \((\d+) run, on ([\d,]+) of ([\d,]+) "
                        r"records\) beats its baseline by more than the ([\d.]+ %) margin "
                        r"\(Attacks\)\.$", item)  # fmt: skip
        if finding is not None:
            result = r.attack(finding.group(1))
            _check_claim(r, result, finding)
            columns = finding["columns"]
            assert (_names(columns) if columns else []) == result["columns"], item
            stated.add(finding.group(1))
        elif others is not None:
            assert battery is not None, item
            count = int(others.group(1) or 1)
            assert count == sum(not a["finding"] for a in battery["results"]) > 0, item
        elif none is not None:
            assert battery is not None, item
            assert int(none.group(1)) == len(battery["results"]), item
            assert not any(a["finding"] for a in battery["results"]), item
            assert int(none.group(2).replace(",", "")) == battery["n_released_records"], item
            assert int(none.group(3).replace(",", "")) == battery["n_records"], item
        elif item.startswith("No attack was run on this release"):
            assert r.custodian.get("attacks", "absent") is None, item
        else:
            unchecked.append(item)
    if battery is not None:
        assert stated == {label(a) for a in battery["results"] if a["finding"]}, stated
    shares = [s for s in map(attack_share, ranked) if s is not None]
    assert shares == sorted(shares, reverse=True), ("not the largest first", ranked)
    return unchecked


def _check_attack_findings(r: Release) -> None:
    """'Needs attention' holds one finding per attack that is one, with its figures."""
    battery = r.attacks
    attention = _section(r.page, "attention")
    flags = re.findall(r'<li class="flag"><b>(.*?)</b>: (.*?)<span class="change">', attention,
                       re.S)  # fmt: skip
    found = {_text(s): _text(w) for s, w in flags if _text(s).split(" (")[0] in LABELS.values()}
    if battery is None:
        assert not found, found
        assert '<section id="attacks">' not in r.page
        return
    assert set(found) == {label(a) for a in battery["results"] if a["finding"]}, found
    for subject, what in found.items():
        result = r.attack(subject)
        shadow = re.match(rf"On a shadow release of ([\d,]+) records \(([\d,]+) held out\), "
                          rf"{_CLAIM}\.", what)  # fmt: skip
        assert shadow is not None, what
        assert int(shadow.group(1).replace(",", "")) == battery["n_released_records"], what
        assert int(shadow.group(2).replace(",", "")) == battery["n_control"], what
        _check_claim(r, result, shadow)
        if result["columns"]:
            said = f"The columns that made it succeed: {_names_in_words(result['columns'])}."
            assert said in what, (said, what)


def _names_in_words(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _check_attack_section(r: Release) -> None:
    """The attacks section: the shadow release's numbers, and one row per result."""
    battery = r.attacks
    if battery is None:
        return
    section = _section(r.page, "attacks")
    said = _text(section)
    assert (
        f"on {battery['n_released_records']:,} records drawn at random from "
        f"{battery['n_records']:,}"
    ) in said
    assert f"the other {battery['n_control']:,} were held out as the control" in said
    assert "the shadow release was never written" in said
    rows = [row for row in _rows(section) if len(row) == 8 and row[0] != "attack"]
    assert len(rows) == len(battery["results"]), rows
    for row, result in zip(rows, battery["results"], strict=True):
        assert row[0] == label(result), row
        assert row[1].startswith(_pct(result["success_rate"]) + " ("), row
        assert row[2].startswith(_pct(result["baseline"]) + " ("), row
        assert row[3].startswith(f"{result['advantage']:.3f} ("), row
        assert row[4] == f"{result['n_targets']:,}", row
        assert row[6] == ("yes" if result["finding"] else "no"), row


_MISSING = "Whether a value is missing is released as it is: "
_MASKED = "Changed, but with no formal guarantee: "


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
        "missingness_released_as_is": lambda i: i.startswith(_MISSING),
        "masked_without_formal_guarantee": lambda i: i.startswith(_MASKED),
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
        if kinds[0] in ("missingness_released_as_is", "masked_without_formal_guarantee"):
            # Their entries may hold commas ("lat, lon: grid"): the whole list, in order.
            prefix = _MISSING if kinds[0] == "missingness_released_as_is" else _MASKED
            assert item == f"{prefix}{_names_in_words(listed[kinds[0]])}.", item
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
    at_risk = blocks["What is left at risk, the largest first"]
    unchecked += _check_attack_items(r, _check_at_risk(r, at_risk), at_risk)
    unchecked += _check_not_protected(r, blocks["What is not protected"])
    assert not unchecked, f"statements no rule checks: {unchecked}"
    _check_attack_findings(r)
    _check_attack_section(r)
    details = _section(r.page, "details")
    assert _table_value(details, "rows out") == f"{len(r.released):,}"
