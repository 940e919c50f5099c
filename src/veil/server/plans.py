"""Versioned release plans of a dataset: checked, stored, compared.

A plan on the platform is a :mod:`veil.release` plan without the parts the platform
owns: the input (the dataset, decrypted for the run), the engine (the configured Dask
scheduler, if any) and the custodian folder. Keyed treatments and files other than the
bundled hierarchies are refused (the platform holds no keys for plans yet), and so are
raw CSV output and allocations measured on data, which would need files or the records
at validation time.

Every edit is a new version; a version is stored only if the plan validates, meets the
operator's policy (:func:`veil.release.run` with ``dry_run=True`` and the policy) and
its dataset's remaining budget can pay for it. Nothing is stored otherwise.
"""

from __future__ import annotations

import difflib
import hashlib
import shutil
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy import func, select
from sqlalchemy.orm import Session as DbSession

from veil.release import PlanError, load_plan, render_ledger, run
from veil.release.dataset_ledger import Spend, planned_spend
from veil.release.guidance import (
    HARM_QUESTIONS,
    HARM_TIERS,
    HarmTier,
    default_delta,
    expected_errors,
    harm_tier,
)
from veil.server.accounts import Identity, event, now
from veil.server.budget import dataset_ledger, get_policy, release_policy
from veil.server.config import ServerConfig
from veil.server.errors import Conflict, InputError
from veil.server.models import Dataset, Plan, PlanVersion

__all__ = [
    "FORM_METHODS",
    "FORM_ROLES",
    "Checked",
    "check_plan",
    "create_plan",
    "diff_versions",
    "form_plan",
    "new_version",
    "plan_files",
]

FORM_METHODS = (
    "keep",
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

_MAX_TEXT = 200_000
_YES = ("on", "true", "yes", "1", True)
_KEYED = ("hmac", "token", "ff1")


def plan_files(config: ServerConfig) -> Path:
    """The folder plans are read from: the bundled hierarchies, under ``hierarchies/``."""
    folder = config.folder("plan-files")
    target = folder / "hierarchies"
    if not target.is_dir():
        source = resources.files("veil.release").joinpath("examples", "hierarchies")
        shutil.copytree(str(source), target)
    return folder


@dataclass
class Checked:
    """A plan checked against the platform, the policy and the dataset's ledger."""

    data: dict[str, Any]
    errors: list[dict[str, str]] = field(default_factory=list)
    ledger: dict[str, Any] = field(default_factory=dict)
    ledger_text: str = ""
    expected: list[dict[str, Any]] = field(default_factory=list)
    spend: Spend | None = None

    @property
    def ok(self) -> bool:
        """Whether the plan may be stored and run."""
        return not self.errors


def _error_lines(message: str) -> list[dict[str, str]]:
    lines = [line.strip() for line in message.splitlines()]
    body = lines[1:] if len(lines) > 1 and lines[0].endswith(":") else lines
    out = []
    for line in body:
        where, sep, _ = line.partition(": ")
        if sep and " " not in where:
            out.append({"field": where, "message": line})
        else:
            out.append({"field": "plan", "message": line})
    return out


def parse_text(text: str) -> dict[str, Any]:
    """The plan mapping of ``text`` (YAML), or an :class:`InputError` naming ``plan``."""
    if not isinstance(text, str) or not text.strip():
        raise InputError("plan: is empty; write a release plan in YAML", field="plan")
    if len(text) > _MAX_TEXT:
        raise InputError(f"plan: longer than {_MAX_TEXT:,} characters", field="plan")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InputError(f"plan: not valid YAML ({exc})", field="plan") from None
    if not isinstance(data, dict):
        raise InputError("plan: must be a mapping of sections (input, columns, ...)", field="plan")
    return data


def _platform_rules(data: dict[str, Any]) -> list[dict[str, str]]:
    errors = []

    def refuse(where: str, why: str) -> None:
        errors.append({"field": where, "message": f"{where}: {why}"})

    source = data.get("input")
    if source is not None and not isinstance(source, dict):
        refuse("input", "must be a mapping of CSV options")
    elif isinstance(source, dict):
        for key in ("path", "dataset", "format"):
            if key in source:
                refuse(f"input.{key}", "is set by the platform (the plan's dataset); remove it")
    if "engine" in data:
        refuse("engine", "is set by the platform's configuration; remove it")
    output = data.get("output")
    if isinstance(output, dict):
        if output.get("custodian_dir") is not None:
            refuse("output.custodian_dir", "is set by the platform; remove it")
        if output.get("raw_csv"):
            refuse("output.raw_csv", "is not allowed: released CSV cells are formula-escaped")
    budget = data.get("budget")
    if isinstance(budget, dict) and budget.get("allocation") == "target":
        refuse(
            "budget.allocation",
            "'target' is not available on the platform; use explicit, equal or weights",
        )
    columns = data.get("columns")
    if isinstance(columns, dict):
        for name, spec in columns.items():
            treatment = spec.get("treatment") if isinstance(spec, dict) else None
            method = treatment if isinstance(treatment, str) else None
            if isinstance(treatment, dict):
                method = treatment.get("method") or next(iter(treatment), None)
            if method in _KEYED:
                refuse(
                    f"columns.{name}.treatment",
                    f"{method!r} needs a key, which the platform does not hold for plans yet; "
                    "use drop or redact for identifiers",
                )
    return errors


def check_plan(
    db: DbSession,
    config: ServerConfig,
    dataset: Dataset,
    data: dict[str, Any],
    *,
    exclude: str | None = None,
) -> Checked:
    """Validate ``data`` for ``dataset``: platform rules, plan, policy, dataset ledger."""
    checked = Checked(data)
    checked.errors = _platform_rules(data)
    if checked.errors:
        return checked
    folder = plan_files(config)
    mapping = {**data, "input": {**(data.get("input") or {}), "path": "input.csv"}}
    row = get_policy(db)
    try:
        plan = load_plan(mapping, base_dir=folder)
        result = run(plan, dry_run=True, policy=release_policy(row))
        spend = planned_spend(plan)
        ledger = dataset_ledger(db, dataset, row)
        ledger.check(spend, exclude=exclude)
    except PlanError as exc:
        checked.errors = _error_lines(str(exc))
        return checked
    checked.ledger = result.ledger.to_dict()
    checked.ledger_text = render_ledger(result.ledger)
    checked.spend = spend
    profile = dataset.profile
    integers = [c["name"] for c in profile.get("columns", []) if c.get("type") == "integer"]
    rows = profile.get("rows") or None
    try:
        checked.expected = [e.to_dict() for e in expected_errors(plan, rows=rows, integer=integers)]
    except PlanError as exc:
        checked.errors = _error_lines(str(exc))
    return checked


def create_plan(db: DbSession, who: Identity, dataset: Dataset, name: Any) -> Plan:
    """A new, empty plan of ``dataset`` (its first version comes with the first edit)."""
    if dataset.custody != "encrypted":
        raise Conflict(f"dataset {dataset.id}: its raw data was deleted", field="dataset")
    text = "" if name is None else str(name).strip()
    if not 1 <= len(text) <= 200:
        raise InputError("name: must be 1 to 200 characters", field="name")
    plan = Plan(dataset_id=dataset.id, name=text, created_by=who.user.id, created_at=now())
    db.add(plan)
    db.flush()
    event(db, who, "plan.create", "plan", plan.id, dataset=dataset.id, name=text)
    return plan


def new_version(
    db: DbSession,
    config: ServerConfig,
    who: Identity,
    plan: Plan,
    dataset: Dataset,
    text: str,
    note: Any = "",
) -> tuple[PlanVersion | None, Checked]:
    """Store ``text`` as the plan's next version if it checks; else store nothing."""
    checked = check_plan(db, config, dataset, parse_text(text))
    if not checked.ok:
        return None, checked
    number = (
        db.scalar(select(func.max(PlanVersion.number)).where(PlanVersion.plan_id == plan.id)) or 0
    ) + 1
    version = PlanVersion(
        plan_id=plan.id,
        number=number,
        text=text,
        note=str(note or "")[:500],
        created_by=who.user.id,
        created_at=now(),
        ledger={
            "ledger": checked.ledger,
            "text": checked.ledger_text,
            "expected": checked.expected,
        },
        errors=[],
    )
    db.add(version)
    db.flush()
    event(
        db,
        who,
        "plan.edit",
        "plan",
        plan.id,
        version=number,
        sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        note=version.note,
    )
    return version, checked


def diff_versions(a: PlanVersion, b: PlanVersion) -> list[str]:
    """The unified diff from version ``a`` to version ``b``."""
    return list(
        difflib.unified_diff(
            a.text.splitlines(),
            b.text.splitlines(),
            fromfile=f"version {a.number}",
            tofile=f"version {b.number}",
            lineterm="",
        )
    )


def _split(text: Any, integer: bool) -> list[Any]:
    values: list[Any] = [v.strip() for v in str(text or "").split(",") if v.strip()]
    if integer:
        try:
            return [int(v) for v in values]
        except ValueError:
            return values
    return values


def form_plan(profile: dict[str, Any], fields: dict[str, Any]) -> str:
    """A plan's YAML from the plan form (one role and treatment per column).

    Fields per column ``i`` (the profile's order): ``role_i``, ``method_i``,
    ``bounds_i`` (``lower, upper``), ``domain_i`` (comma-separated categories),
    ``epsilon_i`` (optional), ``delta_i`` (Gaussian); for the budget ``ldp_epsilon``,
    ``ldp_delta`` (default :func:`~veil.release.guidance.default_delta` of the rows)
    and, when ``ldp_epsilon`` is empty, the harm tier's epsilon: ``harm_tier`` (0 to
    5), else the tier of the harm questions answered yes (``harm_<key>`` of
    :data:`~veil.release.guidance.HARM_QUESTIONS`, or ``harm_none`` for none). The
    plan's first line says where its budget came from.

    Raises
    ------
    InputError
        A bound or number that does not parse, naming its field.
    """
    columns: dict[str, Any] = {}
    for i, column in enumerate(profile.get("columns", [])):
        name = column["name"]
        method = _choice(fields, f"method_{i}", FORM_METHODS, "drop", name)
        role = _choice(fields, f"role_{i}", FORM_ROLES, "insensitive", name)
        treatment: dict[str, Any] = {"method": method}
        if method in ("laplace", "gaussian"):
            raw = str(fields.get(f"bounds_{i}") or "")
            try:
                lo, hi = (float(v) for v in raw.split(","))
            except ValueError:
                raise InputError(
                    f"bounds_{i}: column {name!r} needs public bounds 'lower, upper', got {raw!r}",
                    field=f"bounds_{i}",
                ) from None
            treatment["bounds"] = [lo, hi]
        if method == "gaussian":
            treatment["delta"] = _float(fields, f"delta_{i}", 1e-6)
        if method in ("randomized_response", "exponential"):
            treatment["domain"] = _split(fields.get(f"domain_{i}"), column.get("type") == "integer")
            treatment["missing"] = "keep" if column.get("missing") else "error"
        if method in ("laplace", "gaussian") and column.get("missing"):
            treatment["missing"] = "keep"
        eps = fields.get(f"epsilon_{i}")
        if method in ("laplace", "gaussian", "randomized_response", "exponential") and eps:
            treatment["epsilon"] = _float(fields, f"epsilon_{i}", None)
        columns[name] = {"role": role, "treatment": treatment if len(treatment) > 1 else method}
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
    rows = profile.get("rows") or None
    delta = _float(fields, "ldp_delta", default_delta(rows))
    plan: dict[str, Any] = {"columns": columns, "unlisted": "drop"}
    explicit = any(
        isinstance(c["treatment"], dict) and "epsilon" in c["treatment"] for c in columns.values()
    )
    plan["budget"] = {
        "ldp": {"epsilon": epsilon, "delta": delta},
        "allocation": "explicit" if explicit else "equal",
    }
    head = f"# {why}\n"
    return head + yaml.safe_dump(plan, sort_keys=False, allow_unicode=True)


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
        return float(raw)
    except (TypeError, ValueError):
        raise InputError(f"{name}: must be a number, got {raw!r}", field=name) from None
