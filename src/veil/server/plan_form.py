"""The guided plan form: one role and treatment per column, k-anonymity and l-diversity.

The form writes a plan of :mod:`veil.release` (YAML) that is then checked as any other
(:func:`veil.server.plans.check_plan`). Per column it offers the local-DP treatments
(with their public bounds or categories), keep, drop, redact, and **generalize**: the
column becomes a quasi-identifier of the table's anonymization, generalized along a
hierarchy that is a public rule (intervals of given widths, masked digits, dates, full
suppression, or one of the bundled hierarchy files). The table's models are
k-anonymity (``k``) and distinct l-diversity of one sensitive column (``l``,
``l_attribute``), with at most ``max_suppression`` of the records suppressed.

Each column starts from the risk summary's suggestion (:func:`form_defaults`): an
identifier is dropped, a quasi-identifier generalized (k = 5), a sensitive or other
column kept, and a column with no suggestion dropped; nothing else is derived from the
records.
"""

from __future__ import annotations

import math
from typing import Any

import yaml

from veil.release.guidance import HARM_QUESTIONS, HARM_TIERS, HarmTier, default_delta, harm_tier
from veil.server.errors import InputError

__all__ = [
    "FORM_METHODS",
    "FORM_ROLES",
    "HIERARCHIES",
    "form_defaults",
    "form_plan",
]

FORM_METHODS = (
    "keep",
    "generalize",
    "drop",
    "redact",
    "laplace",
    "gaussian",
    "randomized_response",
    "exponential",
)
"""Treatments the plan form offers per column (other treatments are written in YAML)."""
FORM_ROLES = ("identifier", "quasi_identifier", "sensitive", "insensitive")
"""Roles the plan form offers per column."""
HIERARCHIES = ("intervals", "mask", "dates", "suppress")
"""Hierarchy recipes of a generalized column (besides the bundled files)."""

_YES = ("on", "true", "yes", "1", True)
_NOISE = ("laplace", "gaussian", "randomized_response", "exponential")
_DEFAULT_WIDTHS = "10, 20, 40"


def form_defaults(
    profile: dict[str, Any], suggested: dict[str, str], files: list[str]
) -> dict[str, dict[str, str]]:
    """Each column's starting role, treatment and hierarchy on the form.

    ``suggested`` maps columns to the roles the risk summary suggests; ``files`` are the
    bundled hierarchy files (``hierarchies/<name>.csv``): one named after a column
    (``adult_education.csv`` for ``education``) is its default hierarchy.
    """
    out: dict[str, dict[str, str]] = {}
    for column in profile.get("columns", []):
        name = column["name"]
        role = suggested.get(name, "insensitive")
        # Without a suggestion (no risk summary) a column starts dropped, as is safe.
        method = {"identifier": "drop", "quasi_identifier": "generalize"}.get(role, "keep")
        if name not in suggested:
            method = "drop"
        bundled = next((f for f in files if f.endswith(f"_{name}.csv")), None)
        numeric = column.get("type") in ("integer", "float")
        hierarchy = bundled or ("intervals" if numeric else "suppress")
        argument = _DEFAULT_WIDTHS if hierarchy == "intervals" else ""
        out[name] = {"role": role, "method": method, "hierarchy": hierarchy, "argument": argument}
    return out


def _split(text: Any, integer: bool) -> list[Any]:
    values: list[Any] = [v.strip() for v in str(text or "").split(",") if v.strip()]
    if integer:
        try:
            return [int(v) for v in values]
        except ValueError:
            return values
    return values


def _numbers(fields: dict[str, Any], key: str, column: str, what: str) -> list[float]:
    raw = str(fields.get(key) or "")
    try:
        values = [float(v) for v in raw.split(",") if v.strip()]
    except (ValueError, OverflowError):
        values = []
    values = values if all(math.isfinite(v) for v in values) else []
    if not values:
        raise InputError(f"{key}: column {column!r} needs {what}, got {raw!r}", field=key)
    return values


def _hierarchy(fields: dict[str, Any], i: int, column: str, files: list[str]) -> Any:
    """The hierarchy of generalized column ``i``: a recipe or a bundled file."""
    choice = _choice(fields, f"hierarchy_{i}", (*HIERARCHIES, *files), "suppress", column)
    argument = f"hierarchy_arg_{i}"
    if choice == "intervals":
        return {"intervals": {"widths": _numbers(fields, argument, column, "widths '5, 10, 20'")}}
    if choice == "mask":
        steps = _numbers(fields, argument, column, "the digits to mask, e.g. '2'")
        if len(steps) != 1 or steps[0] != int(steps[0]) or not 1 <= steps[0] <= 64:
            raise InputError(f"{argument}: a number of digits from 1 to 64", field=argument)
        return {"mask": int(steps[0])}
    if choice == "dates":
        return {"dates": True}
    if choice == "suppress":
        return "*"
    return choice


def _treatment(fields: dict[str, Any], i: int, column: dict[str, Any], method: str) -> Any:
    """Column ``i``'s treatment from its method and parameters."""
    name = column["name"]
    treatment: dict[str, Any] = {"method": "keep" if method == "generalize" else method}
    if method in ("laplace", "gaussian"):
        bounds = _numbers(fields, f"bounds_{i}", name, "public bounds 'lower, upper'")
        if len(bounds) != 2:
            raise InputError(
                f"bounds_{i}: column {name!r} needs public bounds 'lower, upper'",
                field=f"bounds_{i}",
            )
        treatment["bounds"] = bounds
        if column.get("missing"):
            treatment["missing"] = "keep"
    if method == "gaussian":
        treatment["delta"] = _float(fields, f"delta_{i}", 1e-6)
    if method in ("randomized_response", "exponential"):
        treatment["domain"] = _split(fields.get(f"domain_{i}"), column.get("type") == "integer")
        treatment["missing"] = "keep" if column.get("missing") else "error"
    if method in _NOISE and fields.get(f"epsilon_{i}"):
        treatment["epsilon"] = _float(fields, f"epsilon_{i}", None)
    return treatment if len(treatment) > 1 else treatment["method"]


def _anonymization(
    fields: dict[str, Any], qis: dict[str, Any], names: list[str]
) -> dict[str, Any] | None:
    """The table's anonymization section, or None when no column is generalized."""
    k = _whole(fields, "k", 2)
    l_value = _whole(fields, "l", 2)
    if not qis:
        if k is not None or l_value is not None:
            raise InputError(
                "k: no column is generalized; choose generalize for the quasi-identifiers",
                field="k",
            )
        return None
    if k is None:
        raise InputError("k: generalized columns need k (k-anonymity), e.g. 5", field="k")
    models: list[Any] = [{"k_anonymity": k}]
    if l_value is not None:
        attribute = fields.get("l_attribute")
        if attribute not in names or attribute in qis:
            raise InputError(
                f"l_attribute: l-diversity needs a sensitive column that is not generalized, "
                f"got {attribute!r}",
                field="l_attribute",
            )
        models.append({"distinct_l_diversity": {"attribute": attribute, "l": l_value}})
    suppression = _float(fields, "max_suppression", 0.0)
    if suppression is None or not 0 <= suppression <= 1:
        raise InputError("max_suppression: a share of the records from 0 to 1", field="k")
    return {"quasi_identifiers": qis, "models": models, "max_suppression": suppression}


def form_plan(profile: dict[str, Any], fields: dict[str, Any], files: list[str]) -> str:
    """A plan's YAML from the plan form.

    Fields per column ``i`` (the profile's order): ``role_i``, ``method_i`` (one of
    :data:`FORM_METHODS`), ``bounds_i`` (``lower, upper``), ``domain_i``
    (comma-separated categories), ``epsilon_i`` (optional), ``delta_i`` (Gaussian),
    ``hierarchy_i`` and ``hierarchy_arg_i`` (a generalized column); for the table ``k``,
    ``l``, ``l_attribute`` and ``max_suppression``; for the budget (only when a column
    is noised) ``ldp_epsilon``, ``ldp_delta`` (default
    :func:`~veil.release.guidance.default_delta` of the rows) and, when ``ldp_epsilon``
    is empty, the harm tier's epsilon: ``harm_tier`` (0 to 5), else the tier of the harm
    questions answered yes (``harm_<key>``, or ``harm_none``). The plan's first line says
    where its budget came from.

    Raises
    ------
    InputError
        A choice, bound or number that is not allowed, naming its field.
    """
    columns: dict[str, Any] = {}
    qis: dict[str, Any] = {}
    for i, column in enumerate(profile.get("columns", [])):
        name = column["name"]
        method = _choice(fields, f"method_{i}", FORM_METHODS, "drop", name)
        role = _choice(fields, f"role_{i}", FORM_ROLES, "insensitive", name)
        columns[name] = {"role": role, "treatment": _treatment(fields, i, column, method)}
        if method == "generalize":
            qis[name] = _hierarchy(fields, i, name, files)
    plan: dict[str, Any] = {"columns": columns, "unlisted": "drop"}
    anonymization = _anonymization(fields, qis, list(columns))
    if anonymization is not None:
        plan["anonymization"] = anonymization
    why = "no column is noised: no budget"
    if any(
        isinstance(c["treatment"], dict) and c["treatment"]["method"] in _NOISE
        for c in columns.values()
    ):
        plan["budget"], why = _budget(profile, fields, columns)
    return f"# {why}\n" + yaml.safe_dump(plan, sort_keys=False, allow_unicode=True)


def _budget(
    profile: dict[str, Any], fields: dict[str, Any], columns: dict[str, Any]
) -> tuple[dict[str, Any], str]:
    """The plan's local-DP budget, and where its epsilon came from."""
    tier, why = _tier(fields)
    epsilon = _float(fields, "ldp_epsilon", None)
    if epsilon is None:
        if tier is None:
            raise InputError(
                "harm_tier: answer the harm questions, choose a harm tier, or give "
                "ldp_epsilon (the budget)",
                field="harm_tier",
            )
        epsilon, why = tier.ldp_epsilon, f"budget: epsilon of harm tier {why}"
    else:
        why = "budget: epsilon given on the form"
    delta = _float(fields, "ldp_delta", default_delta(profile.get("rows") or None))
    explicit = any(
        isinstance(c["treatment"], dict) and "epsilon" in c["treatment"] for c in columns.values()
    )
    budget = {
        "ldp": {"epsilon": epsilon, "delta": delta},
        "allocation": "explicit" if explicit else "equal",
    }
    return budget, why


def _whole(fields: dict[str, Any], name: str, least: int) -> int | None:
    raw = fields.get(name)
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    text = str(raw).strip()
    if not text.isdigit() or len(text) > 9 or int(text) < least:
        raise InputError(
            f"{name}: must be a whole number of at least {least}, got {raw!r}", field=name
        )
    return int(text)


def _tier(fields: dict[str, Any]) -> tuple[HarmTier | None, str]:
    """The harm tier the form chose (a tier number wins over the answers), and why."""
    raw = fields.get("harm_tier")
    if raw is not None and str(raw).strip():
        text = str(raw).strip()
        if not text.isdigit() or not 0 <= int(text) < len(HARM_TIERS):
            raise InputError(
                f"harm_tier: must be a tier from 0 to {len(HARM_TIERS) - 1}, got {raw!r}",
                field="harm_tier",
            )
        tier = HARM_TIERS[int(text)]
        return tier, f"{tier.level} ({tier.name}), chosen on the form"
    answers = [k for k, _, _ in HARM_QUESTIONS if fields.get(f"harm_{k}") in _YES]
    if not answers and fields.get("harm_none") not in _YES:
        return None, ""
    tier = harm_tier(answers)
    said = ", ".join(answers) if answers else "no harm"
    return tier, f"{tier.level} ({tier.name}), from the harm questions ({said})"


def _choice(
    fields: dict[str, Any], key: str, allowed: tuple[str, ...], default: str, column: str
) -> str:
    raw = fields.get(key)
    if raw is None or raw == "":
        return default
    if raw not in allowed:
        raise InputError(
            f"{key}: the choice for column {column!r} must be one of {', '.join(allowed)}, "
            f"got {raw!r}",
            field=key,
        )
    return str(raw)


def _float(fields: dict[str, Any], name: str, default: float | None) -> float | None:
    raw = fields.get(name)
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return default
    try:
        number = float(raw)
    except (TypeError, ValueError, OverflowError):
        number = math.nan
    if not math.isfinite(number):
        raise InputError(
            f"{name}: must be a finite number, got {str(raw)[:40]!r}", field=name
        ) from None
    return number
