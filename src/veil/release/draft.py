"""A first release plan drafted from a raw table, commented for the custodian to edit.

:func:`draft_plan` reads the table's columns through :func:`veil.risk.suggest_roles` and
writes a plan that runs as it is:

* direct identifiers and free text with personal data are dropped (a comment shows the
  keyed pseudonym to use instead);
* quasi-identifiers are kept and generalized by a 5-anonymity search with at most 5 %
  suppression, with hierarchies written in the plan: intervals for numbers, masks for
  codes, month and year for dates, ``*`` for categories;
* the first categorical sensitive attribute gets 2-diversity;
* other sensitive attributes are kept (the manifest lists them as not protected; a
  comment shows local-DP noise on public bounds);
* a latitude/longitude pair gets planar Laplace at 0.01 per metre (a median shift of
  about 170 m), about a centre rounded to a tenth of a degree (about 11 km) from the
  data, which the plan says to replace with a public point.

Nothing in the plan is read from the data silently: each choice taken from it is
written out in a comment beside it.
"""

from __future__ import annotations

import dataclasses
import math
import os
import textwrap
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from veil.risk.roles import ColumnRole, RoleSuggestions, suggest_roles

__all__ = ["Draft", "draft_plan"]

_K = 5
_SUPPRESSION = 0.05
_GEO_EPSILON = 0.01


@dataclasses.dataclass(frozen=True)
class Draft:
    """A drafted plan: the mapping, a comment per entry, and the roles it came from."""

    plan: dict[str, Any]
    comments: dict[str, str]
    roles: RoleSuggestions

    def to_yaml(self) -> str:
        """The plan as YAML, each column and location with its comment."""
        lines = [
            "# A release plan drafted by `veil init` from the table's columns.",
            "# Every role and treatment is a suggestion: read each line, change what is",
            "# wrong, then `veil release PLAN --dry-run` and `veil release PLAN --out DIR`.",
            "# Fields: veil release --schema; docs/plans.md.",
            "version: 1",
        ]
        for section, value in self.plan.items():
            if section == "version":
                continue
            lines.append("")
            lines.extend(_comment(self.comments.get(section, ""), ""))
            lines.extend(self._section(section, value))
        return "\n".join(lines) + "\n"

    def _section(self, section: str, value: Any) -> list[str]:
        if section == "columns":
            out = ["columns:"]
            for name, spec in value.items():
                out.extend(_comment(self.comments.get(f"columns.{name}", ""), "  "))
                out.append(f"  {_flow({name: spec})}")
            return out
        if section == "locations":
            out = ["locations:"]
            for i, spec in enumerate(value):
                out.extend(_comment(self.comments.get(f"locations.{i}", ""), "  "))
                out.append(f"  - {_flow(spec, braces=True)}")
            return out
        if not isinstance(value, dict) or not value:
            return [f"{section}: {_flow(value)}"]
        flat = not any(isinstance(v, (dict, list)) for v in value.values())
        text = yaml.safe_dump(
            value, sort_keys=False, width=96, default_flow_style=False if flat else None
        )
        return [f"{section}:", *(f"  {line}" for line in text.rstrip().splitlines())]


def _comment(text: str, indent: str) -> list[str]:
    """``text`` as comment lines of at most 96 characters."""
    if not text:
        return []
    return textwrap.wrap(
        text, width=96, initial_indent=f"{indent}# ", subsequent_indent=f"{indent}#   "
    )


def _flow(value: Any, *, braces: bool = False) -> str:
    """``value`` on one line of YAML; a mapping without its outer braces unless asked."""
    text = yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=1_000)
    text = text.strip().removesuffix("\n...").strip()
    if not braces and isinstance(value, dict) and value and text.startswith("{"):
        return text[1:-1]
    return text


def _nice(step: float) -> float:
    """1, 2 or 5 times a power of ten, at least ``step``."""
    power = 10.0 ** math.floor(math.log10(step))
    return float(next(m * power for m in (1, 2, 5, 10) if m * power >= step))


_DATE_FORMATS = (
    "%m/%d/%Y %I:%M:%S %p",
    "%m/%d/%Y %H:%M:%S",
    "%m/%d/%Y %H:%M",
    "%m/%d/%Y",
    "%d/%m/%Y %H:%M:%S",
    "%d/%m/%Y",
    "%d.%m.%Y",
    "%Y/%m/%d",
    "%d-%m-%Y",
)


def _date_format(series: pd.Series) -> str | None:
    """None for ISO 8601 dates, else the first common format every sampled date fits."""
    sample = series.dropna().astype(str).head(500)
    if pd.to_datetime(sample, format="ISO8601", errors="coerce").notna().all():
        return None
    for candidate in _DATE_FORMATS:
        if pd.to_datetime(sample, format=candidate, errors="coerce").notna().all():
            return candidate
    return None


def _hierarchy(series: pd.Series, role: ColumnRole) -> tuple[Any, str]:
    """A hierarchy recipe for a quasi-identifier, and the words for it."""
    if role.kind == "date":
        found = _date_format(series)
        recipe: Any = True if found is None else {"format": found}
        return {"dates": recipe}, "dates to month, then year"
    values = series.dropna()
    if role.numeric and len(values):
        spread = float(values.max() - values.min())
        width = _nice(max(spread / 20, 1e-12))
        widths = [width, width * 2, width * 4]
        words = ", ".join(f"{w:g}" for w in widths)
        return {"intervals": {"widths": widths}}, (
            f"intervals of {words}, from the range of the data: prefer public widths"
        )
    text = values.astype(str)
    lengths = text.str.len()
    if len(text) and bool(text.str.fullmatch(r"\d+").all()) and lengths.nunique() == 1:
        steps = max(1, int(lengths.iloc[0]) - 1)
        return {"mask": steps}, f"codes masked from the right ({steps} levels)"
    return "*", "categories to * (write a mapping to group them first)"


def _column(name: Hashable, series: pd.Series, role: ColumnRole) -> tuple[dict[str, Any], str, Any]:
    """The column's spec, its comment, and its hierarchy if it is a quasi-identifier."""
    if role.role == "identifier":
        comment = (
            f"{role.kind}: {role.reason}. Dropped; or keyed pseudonyms: "
            "{method: hmac, key_file: keys/hmac.key} (veil key new keys/hmac.key)"
        )
        return {"role": "identifier", "treatment": "drop"}, comment, None
    if role.role == "quasi_identifier":
        hierarchy, words = _hierarchy(series, role)
        comment = f"quasi-identifier: {role.reason}; generalized by the anonymization ({words})"
        return {"role": "quasi_identifier", "treatment": "keep"}, comment, hierarchy
    comment = (
        f"sensitive: {role.reason}. Kept as is (listed as not protected); or local-DP "
        "noise on public bounds: {method: laplace, bounds: [LOW, HIGH]}"
    )
    return {"role": "sensitive", "treatment": "keep"}, comment, None


def _location(frame: pd.DataFrame, lat: Hashable, lon: Hashable) -> tuple[dict[str, Any], str]:
    lats = pd.to_numeric(frame[lat], errors="coerce").to_numpy(dtype=np.float64)
    lons = pd.to_numeric(frame[lon], errors="coerce").to_numpy(dtype=np.float64)
    ok = np.isfinite(lats) & np.isfinite(lons) & ((lats != 0) | (lons != 0))
    centre = [0.0, 0.0]
    if ok.any():
        centre = [round(float(np.median(lats[ok])), 1), round(float(np.median(lons[ok])), 1)]
    spec = {
        "lat": str(lat),
        "lon": str(lon),
        "role": "quasi_identifier",
        "mask": {"method": "planar_laplace", "epsilon": _GEO_EPSILON},
        "centre": centre,
        "outside": "drop",
    }
    comment = (
        f"a location: planar Laplace at {_GEO_EPSILON} per metre (median shift about 170 m). "
        f"The centre {centre} is the data's median rounded to 0.1 degree: replace it with "
        "a public point (the city centre); records beyond the projection's 400 km are dropped"
    )
    return spec, comment


def draft_plan(frame: pd.DataFrame, source: str | os.PathLike[str], *, sep: str = ",") -> Draft:
    """Draft a plan for ``frame``, read from ``source`` (written into the plan as given).

    Parameters
    ----------
    frame : pandas.DataFrame
        The raw table (not modified).
    source : path
        The input file as the plan should name it (relative to the plan's folder).
    sep : str, default ","
        The CSV separator to write into the plan.

    Returns
    -------
    Draft
    """
    roles = suggest_roles(frame)
    located = {c for pair in roles.locations for c in pair}
    input_spec: dict[str, Any] = {"path": os.fspath(Path(source))}
    if sep != ",":
        input_spec["sep"] = sep
    columns: dict[str, Any] = {}
    comments: dict[str, str] = {}
    hierarchies: dict[str, Any] = {}
    for role in roles.columns:
        if role.column in located:
            continue
        name = str(role.column)
        spec, comment, hierarchy = _column(role.column, frame[role.column], role)
        columns[name], comments[f"columns.{name}"] = spec, comment
        if hierarchy is not None:
            hierarchies[name] = hierarchy
    plan: dict[str, Any] = {"version": 1, "name": Path(source).stem, "input": input_spec}
    plan["columns"] = columns
    locations = [_location(frame, lat, lon) for lat, lon in roles.locations]
    if locations:
        plan["locations"] = [spec for spec, _ in locations]
        for i, (_, comment) in enumerate(locations):
            comments[f"locations.{i}"] = comment
    if hierarchies:
        plan["anonymization"] = _anonymization(frame, roles, hierarchies)
        comments["anonymization"] = (
            f"every released combination of {', '.join(hierarchies)} holds at least {_K} "
            f"records; up to {_SUPPRESSION:.0%} of the records may be suppressed. Riskiest "
            f"combinations now: {_riskiest(roles)}"
        )
    spent = round(_GEO_EPSILON * len(locations), 12)
    plan["budget"] = {"ldp": {"epsilon": 1.0}}
    if locations:
        plan["budget"]["metric"] = {"epsilon": spent}
    comments["budget"] = (
        "what the release may spend: local DP per record (ldp; a column you give local-DP "
        "noise without an epsilon gets all of it), per metre (metric; the location masks "
        "of one record add up)"
    )
    plan["output"] = {"format": "csv"}
    return Draft(plan, comments, roles)


def _anonymization(
    frame: pd.DataFrame, roles: RoleSuggestions, hierarchies: dict[str, Any]
) -> dict[str, Any]:
    models: list[Any] = [{"k_anonymity": _K}]
    sensitive = [
        c for c in roles.columns if c.role == "sensitive" and not c.numeric and c.distinct >= 2
    ]
    if sensitive:
        models.append({"distinct_l_diversity": {"attribute": str(sensitive[0].column), "l": 2}})
    return {
        "quasi_identifiers": hierarchies,
        "models": models,
        "max_suppression": _SUPPRESSION,
    }


def _riskiest(roles: RoleSuggestions) -> str:
    top = roles.combinations.head(3)
    if top.empty:
        return "none scanned"
    return "; ".join(f"{name} singles out {rate:.1%}" for name, rate in top["unique_rate"].items())
