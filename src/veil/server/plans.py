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

from sqlalchemy import func, select
from sqlalchemy.orm import Session as DbSession

from veil.release import PlanError, load_plan, render_ledger, run
from veil.release.dataset_ledger import Spend, planned_spend
from veil.release.guidance import (
    expected_errors,
)
from veil.release.plan_yaml import read_plan_text
from veil.server.accounts import Identity, event, now
from veil.server.budget import dataset_ledger, get_policy, release_policy
from veil.server.config import ServerConfig
from veil.server.errors import Conflict, InputError
from veil.server.models import Dataset, Plan, PlanVersion

__all__ = [
    "Checked",
    "check_plan",
    "create_plan",
    "diff_versions",
    "hierarchy_files",
    "new_version",
    "plan_files",
]

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


def hierarchy_files(config: ServerConfig) -> list[str]:
    """The bundled hierarchy files a plan may name, as ``hierarchies/<file>.csv``."""
    folder = plan_files(config) / "hierarchies"
    return sorted(f"hierarchies/{p.name}" for p in folder.glob("*.csv"))


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
    """The plan mapping of ``text`` (YAML), or an :class:`InputError` naming ``plan``.

    Read as ``veil release`` reads a plan file
    (:func:`veil.release.plan_yaml.read_plan_text`): a duplicate key, nesting deeper than
    a plan's, a huge integer or an alias bomb is refused with the line it is on, and
    ``1e-6`` is a number (YAML 1.2), not text.
    """
    if not isinstance(text, str) or not text.strip():
        raise InputError("plan: is empty; write a release plan in YAML", field="plan")
    if len(text) > _MAX_TEXT:
        raise InputError(f"plan: longer than {_MAX_TEXT:,} characters", field="plan")
    try:
        data = read_plan_text(text)
    except PlanError as exc:
        raise InputError(str(exc), field="plan") from None
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
    ledger: bool = True,
) -> Checked:
    """Validate ``data`` for ``dataset``: platform rules, plan, policy, dataset ledger.

    With ``ledger`` (a plan being saved or previewed) the dataset's remaining budget must
    pay for it now. A queued or running release is checked against the budget by
    :func:`veil.server.budget.reserve` instead, under the dataset's lock.
    """
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
        if ledger:
            dataset_ledger(db, dataset, row).check(spend)
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
