"""Who may see what: every object is looked up through its owner or the caller's role.

An object the caller may not see is reported as absent (404), so that ids cannot be
probed; a role that may never do a thing gets 403.

* curators see their own datasets, plans, jobs and releases, and the releases of a
  dataset they are assigned to review (:mod:`veil.server.reviews`) while those await
  approval;
* operators see the policy and the published catalogue, never raw data, previews or
  unpublished outputs;
* data users see the published catalogue only;
* admins manage accounts and read the audit log.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session as DbSession

from veil.server.accounts import Identity
from veil.server.errors import Forbidden, NotFound
from veil.server.models import Dataset, Job, Plan, PlanVersion, Release
from veil.server.reviews import is_reviewer

__all__ = [
    "dataset_of",
    "job_of",
    "plan_of",
    "published_release",
    "release_for_review",
    "require_role",
    "version_of",
]


def require_role(who: Identity, *roles: str) -> None:
    """Refuse a caller whose role is not one of ``roles``."""
    if who.role not in roles:
        raise Forbidden(
            f"role: a {who.role.replace('_', ' ')} may not do this (allowed: "
            f"{', '.join(r.replace('_', ' ') for r in roles)})"
        )


def dataset_of(db: DbSession, who: Identity, dataset_id: int) -> Dataset:
    """The caller's own dataset ``dataset_id`` (curators only)."""
    require_role(who, "curator")
    dataset = db.get(Dataset, dataset_id)
    if dataset is None or dataset.owner_id != who.user.id:
        raise NotFound(f"dataset: no dataset {dataset_id} of yours", field="dataset")
    return dataset


def plan_of(db: DbSession, who: Identity, plan_id: int) -> Plan:
    """The caller's own plan ``plan_id``."""
    require_role(who, "curator")
    plan = db.get(Plan, plan_id)
    if plan is None:
        raise NotFound(f"plan: no plan {plan_id} of yours", field="plan")
    dataset = db.get(Dataset, plan.dataset_id)
    if dataset is None or dataset.owner_id != who.user.id:
        raise NotFound(f"plan: no plan {plan_id} of yours", field="plan")
    return plan


def version_of(db: DbSession, who: Identity, plan_id: int, number: int) -> PlanVersion:
    """Version ``number`` of the caller's plan ``plan_id``."""
    plan = plan_of(db, who, plan_id)

    version = db.scalar(
        select(PlanVersion).where(PlanVersion.plan_id == plan.id, PlanVersion.number == number)
    )
    if version is None:
        raise NotFound(f"version: plan {plan_id} has no version {number}", field="version")
    return version


def job_of(db: DbSession, who: Identity, job_id: int) -> Job:
    """The caller's own job ``job_id``."""
    require_role(who, "curator")
    job = db.get(Job, job_id)
    if job is None or job.created_by != who.user.id:
        raise NotFound(f"job: no job {job_id} of yours", field="job")
    return job


def release_for_review(db: DbSession, who: Identity, release_id: int) -> tuple[Release, bool]:
    """A release the caller may review: their own, or one awaiting the approval of a
    dataset they are assigned to review.

    Returns the release and whether the caller owns its dataset.
    """
    require_role(who, "curator")
    release = db.get(Release, release_id)
    if release is None:
        raise NotFound(f"release: no release {release_id} you may review", field="release")
    dataset = db.get(Dataset, release.dataset_id)
    owner = dataset is not None and dataset.owner_id == who.user.id
    if not owner and (
        release.status != "awaiting_approval"
        or not is_reviewer(db, who.user.id, release.dataset_id)
    ):
        raise NotFound(f"release: no release {release_id} you may review", field="release")
    return release, owner


def published_release(db: DbSession, who: Identity, release_id: int) -> Release:
    """A published release (any signed-in role may see the catalogue)."""
    release = db.get(Release, release_id)
    if release is None or release.status != "published":
        raise NotFound(f"release: no published release {release_id}", field="release")
    return release
