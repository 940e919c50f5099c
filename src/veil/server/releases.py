"""Releases: review, approval (four-eyes when the policy says so), publication, download.

A committed run becomes a ``draft`` release, seen only by its dataset's curator. With
four-eyes on, the curator asks for approval (``awaiting_approval``: the curators an
admin assigned to review the dataset may then see it), one of them approves it
(``approved``, with any flags :func:`veil.server.reviews.approval_flags` raises) or
rejects it, and only then can the owner publish it. Publication checks the release's
attack results against the operator's limits of that moment
(:func:`veil.server.attack_review.check_publishable`) and its files against its manifest
(:func:`veil.release.outputs.verify_release`) and, if the dataset asks for it, deletes
the raw data. Data users see published releases only; the confidential report, the
custodian record and the attack results are never part of what they see or download.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session as DbSession

from veil.gate import escape_formulas
from veil.release import PlanError
from veil.release.dataset_ledger import Spend
from veil.release.outputs import verify_release
from veil.server.accounts import Identity, event, now
from veil.server.attack_review import check_publishable, recorded_attacks
from veil.server.budget import get_policy, settle
from veil.server.config import ServerConfig
from veil.server.datasets import delete_raw
from veil.server.errors import Conflict, Forbidden, InputError
from veil.server.folders import job_paths
from veil.server.models import Dataset, Job, Plan, PlanVersion, Release, User
from veil.server.reviews import approval_flags, is_reviewer, reviewers

__all__ = [
    "adopt_committed",
    "approve",
    "attack_results",
    "csv_export",
    "privacy_summary",
    "publish",
    "record_release",
    "reject",
    "release_file",
    "release_view",
    "report_html",
    "request_approval",
]


def record_release(
    db: DbSession, config: ServerConfig, job: Job, manifest: dict[str, Any]
) -> Release:
    """The draft release of a committed run, and its spend settled in the ledger."""
    entry = manifest["outputs"]["release"]
    totals = manifest.get("totals", {})
    ldp, metric = totals.get("ldp", {}), totals.get("metric", {})
    settle(
        db, job, Spend(ldp.get("epsilon", 0.0), ldp.get("delta", 0.0), metric.get("epsilon", 0.0))
    )
    dataset = db.get(Dataset, job.dataset_id)
    assert job.plan_version_id is not None
    version = db.get(PlanVersion, job.plan_version_id)
    plan = db.get(Plan, version.plan_id) if version is not None else None
    title = (
        f"{plan.name} v{version.number}"
        if plan is not None and version is not None
        else f"release of job {job.id}"
    )
    release = Release(
        uid=job.uid,
        job_id=job.id,
        dataset_id=job.dataset_id,
        plan_version_id=job.plan_version_id,
        title=f"{title}: {dataset.name}"[:200] if dataset is not None else title[:200],
        status="draft",
        file_name=str(entry["file"]),
        file_format=str(entry.get("format", "csv")),
        file_sha256=str(entry["sha256"]),
        rows=int(entry.get("rows", 0)),
        manifest=manifest,
        created_at=now(),
    )
    db.add(release)
    db.flush()
    job.status, job.finished_at = "done", now()
    return release


def adopt_committed(db: DbSession, config: ServerConfig, job: Job) -> Release:
    """Record a release its run committed before the platform stopped."""
    paths = job_paths(config, job)
    manifest = json.loads((paths.release / "manifest.json").read_text(encoding="utf-8"))
    release = record_release(db, config, job, manifest)
    job.result = {"note": "committed before an interruption; recovered at start"}
    return release


_NOT_PROTECTED = {
    "columns_kept_as_is": "Released as is",
    "quasi_identifiers_generalized_only": "Quasi-identifiers only generalized (no noise)",
    "released_exactly_not_covered_by_dp": "Released exactly, not covered by differential privacy",
    "missingness_released_as_is": "Which values are missing is released as is",
    "unlisted_columns_dropped": "Dropped (not named in the plan)",
    "masked_without_formal_guarantee": "Masked, with no formal guarantee",
    "carriers_acknowledged": "Columns that carry other columns, acknowledged by the plan",
}
_NOTIONS = {
    "ldp": ("Local differential privacy", "per record"),
    "metric": ("Geo-indistinguishability", "per metre"),
    "synthetic": ("Differentially private synthetic data", "per dataset"),
}


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) else str(value)


def privacy_summary(manifest: dict[str, Any]) -> dict[str, Any]:
    """What a release guarantees and leaves unprotected, in words, from its public manifest.

    ``guarantees``: one line per privacy notion the release spends (local DP, metric,
    synthetic) or syntactic model it meets; ``columns``: each released column with its
    treatment and guarantee; ``unprotected``: labelled lists of columns (dropped,
    released as is, ...), the empty ones left out.
    """
    lines = []
    totals = manifest.get("totals") or {}
    for key, (name, unit) in _NOTIONS.items():
        total = totals.get(key) or {}
        epsilon = total.get("epsilon") or 0
        if epsilon:
            delta = total.get("delta")
            extra = f", delta = {_number(delta)}" if delta else ""
            lines.append(f"{name}: epsilon = {_number(epsilon)} {unit}{extra}")
    for model in totals.get("syntactic") or []:
        lines.append(
            " ".join(f"{k} = {_number(v)}" for k, v in model.items())
            if isinstance(model, dict)
            else str(model)
        )
    columns = []
    for name, step in (manifest.get("steps") or {}).items():
        if isinstance(step, dict):
            cost = step.get("cost") or {}
            columns.append(
                {
                    "column": name,
                    "treatment": str(step.get("step", "")).replace("_", " "),
                    "guarantee": step.get("guarantee") or "",
                    "epsilon": cost.get("epsilon"),
                }
            )
    unprotected = []
    for key, names in (manifest.get("not_protected") or {}).items():
        if names:
            label = _NOT_PROTECTED.get(key, key.replace("_", " ").capitalize())
            unprotected.append({"label": label, "columns": [str(n) for n in names]})
    return {"guarantees": lines, "columns": columns, "unprotected": unprotected}


def release_view(db: DbSession, release: Release, *, public: bool) -> dict[str, Any]:
    """A release as plain data; ``public`` keeps to what data users may see."""
    view: dict[str, Any] = {
        "id": release.id,
        "title": release.title,
        "status": release.status,
        "file": release.file_name,
        "format": release.file_format,
        "sha256": release.file_sha256,
        "rows": release.rows,
        "published_at": None if release.published_at is None else release.published_at.isoformat(),
        "totals": release.manifest.get("totals"),
        "not_protected": release.manifest.get("not_protected"),
        "privacy": privacy_summary(release.manifest),
    }
    if not public:
        names = {}
        for key in ("requested_by", "approved_by", "published_by"):
            uid = getattr(release, key)
            user = db.get(User, uid) if uid is not None else None
            names[key] = None if user is None else user.username
        view.update(
            {
                "dataset_id": release.dataset_id,
                "plan_version_id": release.plan_version_id,
                "job_id": release.job_id,
                "created_at": release.created_at.isoformat(),
                "approval_flags": release.approval_flags or [],
                **names,
            }
        )
    return view


def _owner(db: DbSession, who: Identity, release: Release) -> Dataset:
    dataset = db.get(Dataset, release.dataset_id)
    if dataset is None or dataset.owner_id != who.user.id:
        raise Forbidden("release: only the curator of its dataset may do this")
    return dataset


def request_approval(db: DbSession, who: Identity, release: Release) -> None:
    """The owner asks a second curator to review a draft."""
    _owner(db, who, release)
    if release.status not in ("draft", "rejected"):
        raise Conflict(f"release {release.id}: is {release.status}, not a draft", field="release")
    if not reviewers(db, release.dataset_id):
        raise Conflict(
            f"release {release.id}: no curator is assigned to review dataset "
            f"{release.dataset_id}; ask an admin to assign a reviewer (Accounts, Reviewers)",
            field="release",
        )
    release.status, release.requested_by, release.approved_by = (
        "awaiting_approval",
        who.user.id,
        None,
    )
    event(db, who, "release.request_approval", "release", release.id)


def approve(db: DbSession, who: Identity, release: Release) -> None:
    """A second curator (not the owner, not the requester) approves the release."""
    dataset = db.get(Dataset, release.dataset_id)
    if release.status != "awaiting_approval":
        raise Conflict(
            f"release {release.id}: is {release.status}; only a release awaiting approval can "
            "be approved",
            field="release",
        )
    if (
        dataset is not None and dataset.owner_id == who.user.id
    ) or release.requested_by == who.user.id:
        raise Forbidden("approval: a second curator must approve (four-eyes); not the owner")
    if not is_reviewer(db, who.user.id, release.dataset_id):
        raise Forbidden("approval: only a curator assigned to review this dataset approves")
    requester = db.get(User, release.requested_by) if release.requested_by else None
    flags = approval_flags(db, requester, who.user)
    release.status, release.approved_by = "approved", who.user.id
    release.approval_flags = flags or None
    event(db, who, "release.approve", "release", release.id, flags=flags)


def reject(db: DbSession, who: Identity, release: Release, reason: Any) -> None:
    """A reviewer sends the release back to its owner, with a reason."""
    if release.status != "awaiting_approval":
        raise Conflict(f"release {release.id}: is {release.status}", field="release")
    text = str(reason or "").strip()
    if not 1 <= len(text) <= 500:
        raise InputError("reason: say why, in 1 to 500 characters", field="reason")
    dataset = db.get(Dataset, release.dataset_id)
    if dataset is not None and dataset.owner_id == who.user.id:
        raise Forbidden("approval: the owner cannot review their own release")
    if not is_reviewer(db, who.user.id, release.dataset_id):
        raise Forbidden("approval: only a curator assigned to review this dataset rejects")
    release.status = "rejected"
    event(db, who, "release.reject", "release", release.id, reason=text)


def publish(db: DbSession, config: ServerConfig, who: Identity, release: Release) -> None:
    """The owner publishes an approved release (or a draft, when four-eyes is off)."""
    dataset = _owner(db, who, release)
    four_eyes = get_policy(db).four_eyes
    allowed = ("approved",) if four_eyes else ("approved", "draft")
    if release.status not in allowed:
        need = "approved by a second curator (four-eyes)" if four_eyes else "a draft or approved"
        raise Conflict(
            f"release {release.id}: is {release.status}; it must be {need}", field="release"
        )
    paths = job_paths(config, _job(db, release))
    check_publishable(release, recorded_attacks(paths.custodian), get_policy(db))
    folder = paths.release
    try:
        verify_release(folder)
    except PlanError as exc:
        raise Conflict(
            f"release {release.id}: its files do not verify ({exc})", field="release"
        ) from None
    release.status, release.published_by, release.published_at = "published", who.user.id, now()
    event(
        db,
        who,
        "release.publish",
        "release",
        release.id,
        sha256=release.file_sha256,
        approval_flags=release.approval_flags or [],
    )
    if dataset.delete_after_publish and dataset.custody == "encrypted":
        delete_raw(db, config, who, dataset, f"deleted after publishing release {release.id}")


def _job(db: DbSession, release: Release) -> Job:
    job = db.get(Job, release.job_id)
    assert job is not None
    return job


def release_file(db: DbSession, config: ServerConfig, release: Release) -> Path:
    """The release file on disk."""
    return job_paths(config, _job(db, release)).release / release.file_name


def manifest_text(release: Release) -> str:
    """The public manifest, as JSON."""
    return json.dumps(release.manifest, indent=2, default=str) + "\n"


def attack_results(db: DbSession, config: ServerConfig, release: Release) -> dict[str, Any] | None:
    """The attacks its run made on a shadow release (custodian record; None if none)."""
    return recorded_attacks(job_paths(config, _job(db, release)).custodian)


def report_html(db: DbSession, config: ServerConfig, release: Release) -> str | None:
    """The confidential report of a release (None when the plan wrote none)."""
    path = job_paths(config, _job(db, release)).custodian / "report.html"
    return path.read_text(encoding="utf-8") if path.exists() else None


def csv_export(path: Path, batch_rows: int = 50_000) -> Iterator[bytes]:
    """A Parquet release as CSV, a batch at a time, formula cells escaped."""
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(path)
    first = True
    for batch in parquet.iter_batches(batch_size=batch_rows):
        frame, _ = escape_formulas(batch.to_pandas())
        out = io.StringIO()
        frame.to_csv(out, index=False, header=first, quoting=csv.QUOTE_MINIMAL)
        first = False
        yield out.getvalue().encode("utf-8")
