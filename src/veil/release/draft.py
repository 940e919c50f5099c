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
written out in a comment beside it. The plan's comments give reasons in words only:
figures measured on the records (how many values are distinct, which combinations single
out how many records) go to :attr:`Draft.notes`, for the custodian to read, never into the
plan file, whose content and hash a release publishes. Text codes with leading zeros
(postcodes) are listed in ``input.text_columns`` so that they are read as text.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import textwrap
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import yaml

from veil.errors import ColumnError
from veil.geo.circle import longitude_centre, wrap_longitudes
from veil.risk.roles import ColumnRole, RoleSuggestions, suggest_roles, zero_padded_columns

__all__ = ["Draft", "draft_plan", "text_columns"]

# A character a plan's one-line column entry cannot hold (line breaks, other controls).
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")

_K = 5
_SUPPRESSION = 0.05
_GEO_EPSILON = 0.01
# The largest share of a pair's locations a drafted mask may drop as outside its
# projection (the release refuses more than its max_outside, 20 % by default).
_MAX_SPREAD = 0.05


@dataclasses.dataclass(frozen=True)
class Draft:
    """A drafted plan: the mapping, a comment per entry, and the roles it came from.

    Attributes
    ----------
    plan : dict
        The plan, as :func:`veil.release.load_plan` takes it.
    comments : dict
        A comment per entry (``"columns.NAME"``, ``"locations.I"``, a section's name),
        in words only: no figure measured on the records.
    roles : RoleSuggestions
        The suggestions the plan came from.
    notes : list of str
        Figures measured on the raw records beyond each column's evidence (the riskiest
        quasi-identifier combinations): for the custodian's screen or record only,
        never the plan file.
    """

    plan: dict[str, Any]
    comments: dict[str, str]
    roles: RoleSuggestions
    notes: list[str] = dataclasses.field(default_factory=list)

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
                out.extend(_entry(name, spec, "  "))
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


def _entry(key: str, value: Any, indent: str) -> list[str]:
    """``key: value`` as block-mapping lines, for any column name.

    A key YAML cannot hold as a simple key (over 1,024 characters once quoted: PyYAML
    would switch to ``? key`` inside the flow mapping) is written as an explicit key.
    """
    name = _flow(key)
    spec = _flow(value, braces=True)
    if len(name) < 1_000:
        return [f"{indent}{name}: {spec}"]
    return [f"{indent}? {name}", f"{indent}: {spec}"]


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
    if role.numeric and len(values) and not pd.api.types.is_bool_dtype(series.dtype):
        spread = float(values.max() - values.min())
        numbers = values.to_numpy(dtype=np.float64)
        # Whole numbers (years, counts) get whole-number bands: never [2003.5, 2004).
        smallest = 1.0 if bool(np.all(numbers == np.round(numbers))) else 1e-12
        width = _nice(max(spread / 20, smallest))
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
    lats, lons, ok = _coordinates(frame, lat, lon)
    centre = _centre(lats[ok], lons[ok])
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
        "a public point (the city centre); records beyond the projection's 400 km are "
        "dropped; masked longitudes are written in -180..180"
    )
    return spec, comment


def _coordinates(
    frame: pd.DataFrame, lat: Hashable, lon: Hashable
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """The pair as numbers, and the rows with a real location (not missing, not (0, 0))."""
    lats = pd.to_numeric(frame[lat], errors="coerce").to_numpy(dtype=np.float64)
    lons = pd.to_numeric(frame[lon], errors="coerce").to_numpy(dtype=np.float64)
    ok = np.isfinite(lats) & np.isfinite(lons) & ((lats != 0) | (lons != 0))
    return lats, lons, ok


def _centre(lats: npt.NDArray[np.float64], lons: npt.NDArray[np.float64]) -> list[float]:
    """The median point, on the circle for longitudes, rounded to 0.1 degree."""
    if not lats.size:
        return [0.0, 0.0]
    # Points around the antimeridian (or in 0-360) are centred among them, in [-180, 180).
    lon0 = float(wrap_longitudes(np.array([round(longitude_centre(lons), 1)]))[0])
    return [round(float(np.median(lats)), 1), lon0]


def _spread(frame: pd.DataFrame, lat: Hashable, lon: Hashable) -> float:
    """The share of real locations beyond the region a projection at their centre holds."""
    from veil.geo.projection import projection_at

    lats, lons, ok = _coordinates(frame, lat, lon)
    if not ok.any():
        return 0.0
    centre = _centre(lats[ok], lons[ok])
    far, _ = projection_at(centre[0], centre[1]).outside(lats[ok], lons[ok])
    return float(np.mean(far))


def text_columns(text: pd.DataFrame) -> list[str]:
    """The columns of a table read as text whose digit codes start with a 0 in some row.

    Read as numbers, ``"02139"`` would become 2139: a plan lists these columns in
    ``input.text_columns``.

    Parameters
    ----------
    text : pandas.DataFrame
        The table with every column read as text (not modified).

    Returns
    -------
    list of str
    """
    found = zero_padded_columns(text, list(text.columns))
    return [str(name) for name in text.columns if name in found]


def draft_plan(
    frame: pd.DataFrame,
    source: str | os.PathLike[str],
    *,
    sep: str = ",",
    text: Sequence[str] = (),
) -> Draft:
    """Draft a plan for ``frame``, read from ``source`` (written into the plan as given).

    Parameters
    ----------
    frame : pandas.DataFrame
        The raw table (not modified).
    source : path
        The input file as the plan should name it (relative to the plan's folder).
    sep : str, default ","
        The CSV separator to write into the plan.
    text : sequence of str
        Columns the plan must read as text (``input.text_columns``), as
        :func:`text_columns` finds them.

    Returns
    -------
    Draft

    Raises
    ------
    veil.errors.ColumnError
        If a column name holds a line break or another control character (a plan names
        each column on one line): rename it in the file.
    """
    for name in frame.columns:
        if _CONTROL.search(str(name)):
            raise ColumnError(
                f"column {str(name)!r}: its name holds a line break or another control "
                "character; rename it in the file (a plan names each column on one line)"
            )
    roles = suggest_roles(frame)
    # A pair spread wider than one local projection holds (earthquakes over an ocean)
    # cannot be masked in metres without dropping most records: both coordinates are
    # generalized with the other quasi-identifiers instead.
    spread = {pair: _spread(frame, *pair) for pair in roles.locations}
    masked = [pair for pair, share in spread.items() if share <= _MAX_SPREAD]
    located = {c for pair in masked for c in pair}
    input_spec: dict[str, Any] = {"path": os.fspath(Path(source))}
    if sep != ",":
        input_spec["sep"] = sep
    if text:
        input_spec["text_columns"] = [str(c) for c in text]
    columns: dict[str, Any] = {}
    comments: dict[str, str] = {}
    hierarchies: dict[str, Any] = {}
    for role in roles.columns:
        if role.column in located:
            continue
        name = str(role.column)
        spec, comment, hierarchy = _column(role.column, frame[role.column], role)
        if role.kind in ("latitude", "longitude"):
            words = _hierarchy(frame[role.column], role)[1]
            comment = (
                f"{role.kind}: {role.reason}. The points spread wider than a local projection "
                "in metres holds (400 km from their centre), so a location mask would drop "
                "most records: generalized by the anonymization instead "
                f"({words}); or split the table by region and mask each part"
            )
        columns[name], comments[f"columns.{name}"] = spec, comment
        if hierarchy is not None:
            hierarchies[name] = hierarchy
    plan: dict[str, Any] = {"version": 1, "name": Path(source).stem, "input": input_spec}
    plan["columns"] = columns
    locations = [_location(frame, lat, lon) for lat, lon in masked]
    if locations:
        plan["locations"] = [spec for spec, _ in locations]
        for i, (_, comment) in enumerate(locations):
            comments[f"locations.{i}"] = comment
    if hierarchies:
        plan["anonymization"] = _anonymization(frame, roles, hierarchies)
        comments["anonymization"] = (
            f"every released combination of {', '.join(hierarchies)} holds at least {_K} "
            f"records; up to {_SUPPRESSION:.0%} of the records may be suppressed"
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
    _drop_carriers(frame, plan, comments)
    return Draft(plan, comments, roles, _notes(roles))


_WHY = {
    "coordinates": "is a coordinate of the masked location {r}",
    "coordinate-text": "holds the masked location {r} as text",
    "same-numbers": "gives {r} away",
    "same-categories": "gives {r} away",
    "identifier": "singles out records by itself",
    "address": "holds street addresses",
    "pii-text": "holds personal data in free text",
}


def _drop_carriers(frame: pd.DataFrame, plan: dict[str, Any], comments: dict[str, str]) -> None:
    """Drop the kept columns the release gate would refuse, saying why in their comment.

    The gate refuses a column released as it is that carries a treated value (a copy of
    the masked point in ``X``/``Y``) or singles out records (:mod:`veil.gate.carriers`):
    the draft asks the gate itself, so that ``veil init`` then ``veil release`` runs.
    """
    from veil.gate import released_carriers
    from veil.release.manifest import declared
    from veil.release.plan import PlanError, load_plan

    try:
        drafted = load_plan(plan)
    except PlanError:
        return  # the dry run that follows the draft names what is wrong
    for carrier in released_carriers(frame, declared(drafted, [str(c) for c in frame.columns])):
        name = str(carrier.column)
        related = ", ".join(str(c) for c in carrier.related)
        plan["columns"][name]["treatment"] = "drop"
        comments[f"columns.{name}"] = (
            f"dropped: it {_WHY[carrier.reason].format(r=related)}, which the release gate "
            "refuses for a column released as it is; name it under acknowledge: to keep "
            "it knowingly (listed as a leak)"
        )


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


def _notes(roles: RoleSuggestions) -> list[str]:
    """The figures behind the suggestions that no column's evidence holds."""
    notes = []
    top = roles.combinations.head(3)
    if not top.empty:
        notes.append(
            "riskiest quasi-identifier combinations now: "
            + "; ".join(
                f"{name} singles out {rate:.1%}" for name, rate in top["unique_rate"].items()
            )
        )
    return notes
