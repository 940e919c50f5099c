"""What the release did to each column, in words, from the manifest: "generalized by
the anonymization, in 20-year bands", "Laplace noise on public bounds [50, 300], ε = 1
per record", "removed".
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, Final

from veil.release.report.context import _Context
from veil.release.report.levels import _level_words
from veil.release.report.page import _fmt, _text

_NOISE_NAMES: Final[dict[str, str]] = {
    "laplace": "Laplace noise",
    "gaussian": "Gaussian noise",
    "exponential": "the exponential mechanism",
    "randomized_response": "randomized response",
}
_MASK_NAMES: Final[dict[str, str]] = {
    "planar_laplace": "planar Laplace (geo-indistinguishability)",
    "grid": "aggregated to a grid",
    "jitter": "jittered",
    "donut": "donut masking",
    "cloak": "quadtree cloaking",
}


def _epsilon(ctx: _Context, column: Hashable) -> float | None:
    entry = ctx.steps.get(str(column), {})
    cost = entry.get("cost")
    if isinstance(cost, Mapping) and isinstance(cost.get("epsilon"), (int, float)):
        return float(cost["epsilon"])
    value = ctx.parameters(column).get("epsilon")
    return float(value) if isinstance(value, (int, float)) else None


def _column_spec(ctx: _Context, column: Hashable) -> Mapping[str, Any]:
    columns = ctx.plan.get("columns")
    spec = columns.get(str(column)) if isinstance(columns, Mapping) else None
    return spec if isinstance(spec, Mapping) else {}


#: How a missing value reads once a release wrote it as text (a generalized QI's label).
_MISSING_TEXT = frozenset({"nan", "NaN", "<NA>", "None", "NaT", ""})


def _most_common(ctx: _Context, column: Hashable) -> tuple[Any, bool]:
    """A released value to show as an example, and whether every value is ``*``.

    The most common value that is not a missing one, even written as text (``"nan"``
    is the label of a missing value in a generalized column): a missing value is no
    example of a band.
    """
    if column not in ctx.released.columns or not len(ctx.released):
        return None, False
    counts = ctx.released[column].value_counts(dropna=True)
    present = [value for value in counts.index if _text(value) not in _MISSING_TEXT]
    if not present:
        return None, False
    top = present[0]
    return top, len(counts) == 1 and _text(top) == "*"


def _generalized(ctx: _Context, column: Hashable) -> str:
    """The level of a generalized column in words (inside or outside the anonymization)."""
    example, suppressed = _most_common(ctx, column)
    if ctx.method(column) == "quasi-identifier":
        section = ctx.plan.get("anonymization")
        specs = section.get("quasi_identifiers") if isinstance(section, Mapping) else None
        spec = specs.get(str(column)) if isinstance(specs, Mapping) else None
        levels = ctx.anonymization.get("levels")
        level = levels.get(str(column)) if isinstance(levels, Mapping) else None
        words = _level_words(str(column), spec, level, example, all_suppressed=suppressed)
        return f"generalized with the table anonymization: {words}"
    treatment = _column_spec(ctx, column).get("treatment")
    spec = treatment.get("hierarchy") if isinstance(treatment, Mapping) else None
    level = ctx.parameters(column).get("level")
    words = _level_words(str(column), spec, level, example, all_suppressed=suppressed)
    return f"generalized on its own (no k guarantee): {words}"


def _how(ctx: _Context, column: Hashable) -> str:
    """What was done to ``column``, in words ("" when the manifest does not say)."""
    method = ctx.method(column)
    parameters = ctx.parameters(column)
    epsilon = _epsilon(ctx, column)
    if method in _NOISE_NAMES:
        text = _NOISE_NAMES[method]
        bounds = parameters.get("bounds")
        if isinstance(bounds, (list, tuple)) and len(bounds) == 2:
            text += f" on public bounds [{_fmt(bounds[0])}, {_fmt(bounds[1])}]"
        domain = parameters.get("domain")
        if isinstance(domain, (list, tuple)):
            text += f" over {len(domain)} public categories"
        return text + ("" if epsilon is None else f", ε = {_fmt(epsilon)} per record")
    if method in _MASK_NAMES:
        text = _MASK_NAMES[method]
        if method == "planar_laplace" and epsilon is not None:
            text += f", ε = {_fmt(epsilon)} per metre"
        return text
    if method in ("quasi-identifier", "generalize"):
        return _generalized(ctx, column)
    return {
        "keep": "released as is",
        "drop": "removed",
        "hmac": "replaced by keyed pseudonyms (hmac)",
        "token": "replaced by tokens from a vault",
        "ff1": "encrypted, keeping its format (FF1)",
        "redact": "redacted",
    }.get(method, method)
