"""The operator's policy and each dataset's ledger, as the database stores them.

The figures are the library's: :class:`veil.release.Policy` checks a plan, and
:class:`veil.release.dataset_ledger.DatasetLedger` composes a dataset's releases and
says what remains. This module only loads and saves them, with an audit event for every
change, and keeps a job's reservation in step with its run.

Every reservation goes through :func:`reserve`, in one transaction that serializes the
dataset's budget: on PostgreSQL its dataset row is locked (``SELECT ... FOR UPDATE``),
on SQLite the transaction takes the database's write lock (``BEGIN IMMEDIATE``) before
the ledger is read. Queuing a release and starting its run call that same function, so
two requests can never both spend what only one can pay for.
"""

from __future__ import annotations

import math
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session as DbSession

from veil.attacks import ATTACKS
from veil.release import Policy, PolicyError
from veil.release.dataset_ledger import DatasetBudget, DatasetLedger, LedgerEntry, Spend
from veil.release.steps import TREATMENTS
from veil.release.steps.location import MASKS
from veil.server.access import require_role
from veil.server.accounts import Identity, event, now
from veil.server.errors import InputError
from veil.server.models import BudgetEntry, Dataset, Job, OperatorPolicy

__all__ = [
    "ATTACK_LIMITS",
    "METHODS",
    "dataset_ledger",
    "get_policy",
    "lock_dataset",
    "release_policy",
    "reserve",
    "settle",
    "unreserve",
    "update_policy",
]

METHODS: tuple[str, ...] = (*TREATMENTS, *MASKS, "anonymization")
"""Every treatment, mask and table step a policy can allow."""

ATTACK_LIMITS: tuple[str, ...] = tuple(a for a in ATTACKS if a != "intersection")
"""The attacks whose success rate the policy can cap: those a release's own run makes
(the intersection attack needs a second release of the same records, which one run of a
plan does not have)."""

_ATTACK_FIELD = "max_attack_success"
_MAX_K = 1_000_000_000
_FLOATS = (
    "max_ldp_epsilon",
    "max_ldp_delta",
    "max_metric_epsilon",
    "dataset_ldp_epsilon",
    "dataset_ldp_delta",
    "dataset_metric_epsilon",
)


def get_policy(db: DbSession) -> OperatorPolicy:
    """The policy row (created with no limits and four-eyes on, if missing)."""
    row = db.get(OperatorPolicy, 1)
    if row is None:
        row = OperatorPolicy(id=1, allow_leaks=False, four_eyes=True)
        db.add(row)
        db.flush()
    return row


def policy_view(row: OperatorPolicy) -> dict[str, Any]:
    """The policy as plain data."""
    return {
        **{name: getattr(row, name) for name in _FLOATS},
        "min_k": row.min_k,
        "allowed_methods": row.allowed_methods,
        "allow_leaks": row.allow_leaks,
        "four_eyes": row.four_eyes,
        _ATTACK_FIELD: dict(row.max_attack_success or {}),
        "updated_at": None if row.updated_at is None else row.updated_at.isoformat(),
    }


def _number(name: str, value: Any) -> float | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(
            f"{name}: must be a number >= 0 or empty, got {value!r}", field=name
        ) from None
    if not (math.isfinite(number) and number >= 0):
        raise InputError(f"{name}: must be a finite number >= 0, got {value!r}", field=name)
    if name.endswith("delta") and number >= 1:
        raise InputError(f"{name}: a delta must be below 1, got {value!r}", field=name)
    return number


def _rate(name: str, value: Any) -> float | None:
    if isinstance(value, bool):
        raise InputError(f"{name}: must be a rate from 0 to 1 or empty, got {value!r}", field=name)
    number = _number(name, value)
    if number is not None and number > 1:
        raise InputError(
            f"{name}: must be a rate from 0 to 1 (0.05 is 5 %), got {str(value)[:40]!r}",
            field=name,
        )
    return number


def _attack_limits(fields: dict[str, Any]) -> dict[str, float] | None:
    """The largest success rate per attack, from the ``max_attack_success.<attack>``
    fields (the form's and the API's); None when none is set."""
    if _ATTACK_FIELD in fields:
        raise InputError(
            f"{_ATTACK_FIELD}: give one field per attack, {_ATTACK_FIELD}.<attack> (one of "
            f"{', '.join(ATTACK_LIMITS)}), each a rate from 0 to 1",
            field=_ATTACK_FIELD,
        )
    limits: dict[str, float] = {}
    for name, value in fields.items():
        if not name.startswith(f"{_ATTACK_FIELD}."):
            continue
        attack = name.split(".", 1)[1]
        if attack not in ATTACK_LIMITS:
            raise InputError(
                f"{name[:60]}: no attack {attack[:40]!r} to limit; the policy can limit "
                f"{', '.join(ATTACK_LIMITS)}",
                field=name[:60],
            )
        rate = _rate(name, value)
        if rate is not None:
            limits[attack] = rate
    return limits or None


def _flag(value: Any) -> bool:
    return value in (True, "true", "on", "1", 1, "yes")


def update_policy(db: DbSession, who: Identity, fields: dict[str, Any]) -> OperatorPolicy:
    """Set the policy from ``fields`` (operators only); every field is checked first.

    Empty numbers mean no limit; ``allowed_methods`` is a list (or comma-separated
    text) of :data:`METHODS`, empty for any; ``max_attack_success.<attack>`` is the
    largest success rate, from 0 to 1, allowed for an attack of :data:`ATTACK_LIMITS`
    (that attack then runs on every release; a field left out lifts its limit).
    """
    require_role(who, "operator")
    values: dict[str, Any] = {name: _number(name, fields.get(name)) for name in _FLOATS}
    min_k = fields.get("min_k")
    if min_k is None or (isinstance(min_k, str) and not min_k.strip()):
        values["min_k"] = None
    else:
        text = str(min_k).strip()
        if not text.isdigit() or len(text) > 10 or not 1 <= int(text) <= _MAX_K:
            raise InputError(
                f"min_k: must be a whole number from 1 to {_MAX_K:,}, got {str(min_k)[:40]!r}",
                field="min_k",
            )
        values["min_k"] = int(text)
    methods = fields.get("allowed_methods")
    if isinstance(methods, str):
        methods = [m.strip() for m in methods.split(",") if m.strip()]
    elif methods is not None and not (
        isinstance(methods, list) and all(isinstance(m, str) for m in methods)
    ):
        raise InputError(
            f"allowed_methods: must be a list of method names or comma-separated text, "
            f"got {methods!r}",
            field="allowed_methods",
        )
    if methods:
        unknown = sorted(set(methods) - set(METHODS))
        if unknown:
            raise InputError(
                f"allowed_methods: unknown methods {unknown}; known: {', '.join(METHODS)}",
                field="allowed_methods",
            )
        values["allowed_methods"] = sorted(set(methods))
    else:
        values["allowed_methods"] = None
    values[_ATTACK_FIELD] = _attack_limits(fields)
    values["allow_leaks"] = _flag(fields.get("allow_leaks"))
    values["four_eyes"] = _flag(fields.get("four_eyes"))
    row = get_policy(db)
    before = policy_view(row)
    for name, value in values.items():
        setattr(row, name, value)
    row.updated_by, row.updated_at = who.user.id, now()
    event(db, who, "policy.update", "policy", 1, before=before, after=policy_view(row))
    return row


def release_policy(row: OperatorPolicy) -> Policy:
    """The library's :class:`~veil.release.Policy` for one release under ``row``."""
    try:
        return Policy(
            max_ldp_epsilon=row.max_ldp_epsilon,
            max_ldp_delta=row.max_ldp_delta,
            max_metric_epsilon=row.max_metric_epsilon,
            min_k=row.min_k,
            allowed_methods=None if row.allowed_methods is None else frozenset(row.allowed_methods),
            allow_leaks=row.allow_leaks,
            max_attack_success=dict(row.max_attack_success or {}) or None,
        )
    except PolicyError as exc:
        raise InputError(str(exc), field="policy") from None


def dataset_ledger(db: DbSession, dataset: Dataset, row: OperatorPolicy) -> DatasetLedger:
    """Every job's line of ``dataset``'s ledger, against the policy's per-dataset budget."""
    entries = db.scalars(select(BudgetEntry).where(BudgetEntry.dataset_id == dataset.id)).all()
    return DatasetLedger(
        DatasetBudget(row.dataset_ldp_epsilon, row.dataset_ldp_delta, row.dataset_metric_epsilon),
        [
            LedgerEntry(
                str(e.job_id),
                Spend(e.ldp_epsilon, e.ldp_delta, e.metric_epsilon),
                "spent" if e.state == "spent" else "reserved",
            )
            for e in entries
        ],
    )


def lock_dataset(db: DbSession, dataset_id: int) -> None:
    """Hold ``dataset_id``'s budget until the transaction ends (see the module documentation).

    On SQLite a transaction begins at its first write, which takes the write lock;
    before any, ``BEGIN IMMEDIATE`` takes it at once. Either way no other writer can
    commit until this transaction does, so what is read next is the newest state.
    """
    if db.get_bind().dialect.name == "postgresql":
        db.execute(select(Dataset.id).where(Dataset.id == dataset_id).with_for_update())
        return
    connection = db.connection()
    driver = connection.connection.driver_connection
    if driver is not None and not driver.in_transaction:
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def reserve(db: DbSession, job: Job, spend: Spend, *, hold: bool = True) -> None:
    """Check that ``job``'s dataset can pay ``spend`` and reserve it, atomically.

    The one budget check of a release: when it is queued and when its run starts. The
    dataset is locked first; its ledger (every other job's reservation and spend) is
    read under the lock and must leave room for ``spend`` under the policy's
    per-dataset budget; the job's own line is then written (or refreshed). With
    ``hold=False`` (a dry run) the check is made and nothing written.

    Raises
    ------
    InputError
        The dataset's remaining budget cannot pay ``spend`` (naming ``budget`` and the
        budget short).
    """
    lock_dataset(db, job.dataset_id)
    dataset = db.get(Dataset, job.dataset_id)
    assert dataset is not None
    row = db.execute(
        select(OperatorPolicy)
        .where(OperatorPolicy.id == 1)
        .execution_options(populate_existing=True)
    ).scalar_one_or_none() or get_policy(db)
    try:
        dataset_ledger(db, dataset, row).check(spend, exclude=str(job.id))
    except PolicyError as exc:
        raise InputError(str(exc), field="budget") from None
    if hold:
        _line(db, job, "reserved", spend)
        db.flush()


def _line(db: DbSession, job: Job, state: str, spend: Spend) -> None:
    """Write ``job``'s line of its dataset's ledger (made if missing)."""
    entry = db.scalar(select(BudgetEntry).where(BudgetEntry.job_id == job.id))
    if entry is None:
        entry = BudgetEntry(dataset_id=job.dataset_id, job_id=job.id, created_at=now())
        db.add(entry)
    entry.state = state
    entry.ldp_epsilon, entry.ldp_delta = spend.ldp_epsilon, spend.ldp_delta
    entry.metric_epsilon = spend.metric_epsilon


def settle(db: DbSession, job: Job, spend: Spend) -> None:
    """The job's release was committed: its line becomes what it spent."""
    _line(db, job, "spent", spend)


def unreserve(db: DbSession, job: Job) -> None:
    """The job ended without a release: its reservation is removed (nothing was spent)."""
    entry = db.scalar(select(BudgetEntry).where(BudgetEntry.job_id == job.id))
    if entry is not None and entry.state == "reserved":
        db.delete(entry)
