"""Four-eyes: who may review a dataset's releases, and what makes an approval doubtful.

An admin assigns reviewers to each dataset: active curators other than its owner. Only
they see the dataset's releases awaiting approval (and their confidential reports), and
only they approve or reject them; no other curator does.

Two accounts can be one person. An approval is **flagged** (the flags are stored on the
release, shown with it, and written into the audit event) when

* the approver created the requester's account, or the requester the approver's;
* the two accounts share sign-in history: a successful sign-in of each from one client
  address (:mod:`veil.server.signin` records them);
* the account that created the approver's shares sign-in history with the requester (or
  the one that created the requester's with the approver): an admin who signs in from
  the requester's machine and made the approver's account, say.

A flag does not refuse the approval (colleagues behind one proxy share an address); it
says what a second look should check. The audit log says who created whom
(``account.create`` names ``created_by``).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session as DbSession

from veil.server.accounts import Identity, event, now
from veil.server.errors import Conflict, Forbidden, InputError, NotFound
from veil.server.models import Dataset, DatasetReviewer, SignIn, User

__all__ = ["approval_flags", "assign", "is_reviewer", "reviewer_view", "reviewers"]


def is_reviewer(db: DbSession, user_id: int, dataset_id: int) -> bool:
    """Whether ``user_id`` is assigned to review ``dataset_id``'s releases."""
    return db.get(DatasetReviewer, (dataset_id, user_id)) is not None


def reviewers(db: DbSession, dataset_id: int) -> list[User]:
    """The curators assigned to ``dataset_id``."""
    return list(
        db.scalars(
            select(User)
            .join(DatasetReviewer, DatasetReviewer.user_id == User.id)
            .where(DatasetReviewer.dataset_id == dataset_id)
            .order_by(User.username)
        )
    )


def assign(db: DbSession, who: Identity, dataset_id: int, user_id: Any, action: Any) -> None:
    """An admin assigns (``action="assign"``) or removes (``"remove"``) a reviewer.

    Raises
    ------
    Forbidden
        The caller is not an admin.
    InputError
        ``action`` or ``user_id`` is not one allowed: a reviewer is an active curator who
        does not own the dataset.
    """
    if who.role != "admin":
        raise Forbidden("reviewers: only an admin assigns reviewers")
    dataset = db.get(Dataset, dataset_id)
    if dataset is None:
        raise NotFound(f"dataset: no dataset {dataset_id}", field="dataset")
    if action not in ("assign", "remove"):
        raise InputError(f"action: must be assign or remove, got {action!r}", field="action")
    text = str(user_id if user_id is not None else "")
    user = db.get(User, int(text)) if text.isdigit() and len(text) < 10 else None
    if user is None or user.role != "curator" or not user.active:
        raise InputError(
            f"user_id: must be the id of an active curator, got {user_id!r}", field="user_id"
        )
    if user.id == dataset.owner_id:
        raise InputError("user_id: the dataset's own curator cannot review it", field="user_id")
    row = db.get(DatasetReviewer, (dataset.id, user.id))
    if action == "assign" and row is None:
        db.add(
            DatasetReviewer(
                dataset_id=dataset.id, user_id=user.id, assigned_by=who.user.id, assigned_at=now()
            )
        )
    elif action == "remove":
        if row is None:
            raise Conflict(
                f"user_id: {user.username} does not review dataset {dataset.id}", field="user_id"
            )
        db.delete(row)
    db.flush()
    event(db, who, f"reviewer.{action}", "dataset", dataset.id, reviewer=user.username)


def _addresses(db: DbSession, user_id: int | None) -> set[str]:
    if user_id is None:
        return set()
    return set(db.scalars(select(SignIn.client).where(SignIn.user_id == user_id)))


def _shared(db: DbSession, a: User | None, b: User | None) -> set[str]:
    if a is None or b is None:
        return set()
    return _addresses(db, a.id) & _addresses(db, b.id)


def approval_flags(db: DbSession, requester: User | None, approver: User) -> list[str]:
    """Why an approval by ``approver`` of ``requester``'s release may be one person's.

    Returns one sentence per finding (see the module documentation); empty when none.
    """
    flags: list[str] = []
    if requester is None:
        return ["the release has no requester on record"]
    if requester.created_by == approver.id:
        flags.append(f"the approver {approver.username} created the requester's account")
    if approver.created_by == requester.id:
        flags.append(f"the requester {requester.username} created the approver's account")
    shared = _shared(db, requester, approver)
    if shared:
        flags.append(
            f"the requester and the approver signed in from the same address "
            f"({', '.join(sorted(shared)[:3])})"
        )
    for made, other, role in (
        (approver, requester, "approver"),
        (requester, approver, "requester"),
    ):
        creator = db.get(User, made.created_by) if made.created_by is not None else None
        if creator is None or creator.id in (requester.id, approver.id):
            continue
        common = _shared(db, creator, other)
        if common:
            flags.append(
                f"the {role}'s account was created by {creator.username}, who signed in from "
                f"the {'requester' if role == 'approver' else 'approver'}'s address "
                f"({', '.join(sorted(common)[:3])})"
            )
    return flags


def reviewer_view(db: DbSession) -> list[dict[str, Any]]:
    """Every dataset with its owner and reviewers, for the admin's page (names only)."""
    names = {u.id: u.username for u in db.scalars(select(User))}
    out = []
    for dataset in db.scalars(select(Dataset).order_by(Dataset.id)):
        out.append(
            {
                "id": dataset.id,
                "name": dataset.name,
                "owner": names.get(dataset.owner_id, "?"),
                "reviewers": [
                    {"id": u.id, "username": u.username} for u in reviewers(db, dataset.id)
                ],
            }
        )
    return out
