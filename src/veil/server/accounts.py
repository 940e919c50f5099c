"""Accounts, sessions and API tokens.

Signing in (and its throttling) is :mod:`veil.server.signin`: a successful sign-in
always creates a new session with a new random id (a session id known before is never
adopted: no session fixation); the cookie holds the id, the database only its SHA-256.
API tokens are scoped to one role, the account's own, and stored as digests.

An account made by an admin (or the first admin, made by ``veil serve``) has a
one-time password: it signs in once, into a session that may do nothing but set a new
password (ASVS 2.3.1). Each account records who created it; the audit log says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy import delete, select
from sqlalchemy.orm import Session as DbSession

from veil.server import audit
from veil.server.clock import aware as _aware
from veil.server.clock import now
from veil.server.errors import Conflict, Forbidden, InputError, NotFound
from veil.server.models import ROLES, ApiToken, Session, User
from veil.server.security import (
    check_password_strength,
    digest,
    hash_password,
    new_token,
    verify_password,
)
from veil.server.throttle import unlock

__all__ = [
    "Identity",
    "authenticate_token",
    "create_token",
    "create_user",
    "logout",
    "now",
    "session_identity",
]

_USERNAME = re.compile(r"^[A-Za-z0-9_.-]{3,64}$")


@dataclass(frozen=True)
class Identity:
    """Who makes a request: the account, the role in force and how they authenticated."""

    user: User
    role: str
    session: Session | None = None
    token: ApiToken | None = None

    @property
    def name(self) -> str:
        """The account's user name."""
        return self.user.username

    @property
    def csrf(self) -> str | None:
        """The session's CSRF token (None for an API token, which needs none)."""
        return None if self.session is None else self.session.csrf_token


def event(
    db: DbSession,
    who: Identity | None,
    action: str,
    kind: str = "",
    oid: object = "",
    *,
    actor: str = "anonymous",
    actor_role: str = "-",
    **detail: object,
) -> None:
    """Record an audit event for ``who`` (or, when None, ``actor`` in ``actor_role``)."""
    audit.record(
        db,
        actor=who.name if who is not None else actor,
        role=who.role if who is not None else actor_role,
        action=action,
        object_type=kind,
        object_id=str(oid),
        detail=dict(detail),
    )


def create_user(
    db: DbSession,
    by: Identity | None,
    username: str,
    role: str,
    password: str,
    *,
    one_time: bool | None = None,
) -> User:
    """A new account (``by`` must be an admin, or None when the platform makes one).

    Parameters
    ----------
    one_time : bool, optional
        Whether ``password`` signs in once only, into a session that must set a new
        password; by default when an admin makes the account (its initial password).

    Raises
    ------
    InputError
        A user name that is not 3-64 letters, digits, ``_.-``, a role not in
        :data:`~veil.server.models.ROLES`, or a weak password
        (:func:`~veil.server.security.check_password_strength`).
    Conflict
        The user name is taken.
    """
    if by is not None and by.role != "admin":
        raise Forbidden("accounts: only an admin creates accounts")
    if not isinstance(username, str) or not _USERNAME.match(username):
        raise InputError(
            "username: must be 3 to 64 letters, digits, '_', '.' or '-'", field="username"
        )
    if role not in ROLES:
        raise InputError(f"role: must be one of {', '.join(ROLES)}, got {role!r}", field="role")
    try:
        check_password_strength(password, username=username)
    except ValueError as exc:
        raise InputError(str(exc), field="password") from None
    if db.scalar(select(User).where(User.username == username)) is not None:
        raise Conflict(f"username: {username!r} is taken", field="username")
    once = by is not None if one_time is None else one_time
    user = User(
        username=username,
        role=role,
        password_hash=hash_password(password),
        active=True,
        failed_logins=0,
        created_at=now(),
        created_by=None if by is None else by.user.id,
        password_state="one_time" if once else "ok",
    )
    db.add(user)
    db.flush()
    event(
        db,
        by,
        "account.create",
        "user",
        user.id,
        username=username,
        new_role=role,
        created_by=by.name if by is not None else "platform",
        one_time_password=once,
        actor="platform",
        actor_role="system",
    )
    return user


def session_identity(db: DbSession, cookie: str | None) -> Identity | None:
    """The identity of a session cookie, or None (unknown, expired or disabled account)."""
    if not cookie:
        return None
    session = db.get(Session, digest(cookie))
    if session is None:
        return None
    if _aware(session.expires_at) <= now():
        db.delete(session)
        return None
    user = db.get(User, session.user_id)
    if user is None or not user.active:
        return None
    return Identity(user, user.role, session=session)


def logout(db: DbSession, who: Identity) -> None:
    """End the session."""
    if who.session is not None:
        event(db, who, "logout", "user", who.user.id)
        db.execute(delete(Session).where(Session.id == who.session.id))


def create_token(db: DbSession, who: Identity, name: str) -> str:
    """A new API token for the caller's own role; returns it (shown once, stored hashed)."""
    if who.token is not None:
        raise Forbidden("tokens: an API token cannot create tokens; log in")
    if not isinstance(name, str) or not 1 <= len(name.strip()) <= 64:
        raise InputError("name: must be 1 to 64 characters", field="name")
    token = new_token()
    row = ApiToken(
        user_id=who.user.id,
        name=name.strip(),
        role=who.role,
        token_hash=digest(token),
        created_at=now(),
        revoked=False,
    )
    db.add(row)
    db.flush()
    event(db, who, "token.create", "token", row.id, name=row.name, scope=row.role)
    return token


def revoke_token(db: DbSession, who: Identity, token_id: int) -> None:
    """Revoke one of the caller's tokens."""
    row = db.get(ApiToken, token_id)
    if row is None or row.user_id != who.user.id:
        raise NotFound(f"token: no token {token_id} of yours", field="token")
    row.revoked = True
    event(db, who, "token.revoke", "token", row.id)


def authenticate_token(db: DbSession, token: str) -> Identity | None:
    """The identity of an API token (its scope is its role), or None."""
    row = db.scalar(select(ApiToken).where(ApiToken.token_hash == digest(token)))
    if row is None or row.revoked:
        return None
    user = db.get(User, row.user_id)
    if user is None or not user.active or user.role != row.role:
        return None
    return Identity(user, row.role, token=row)


def change_password(db: DbSession, who: Identity, current: str, new: str) -> None:
    """Change the caller's password (other sessions of the account end).

    A session opened with a one-time password may do only this; once done, it may do
    everything its role may.
    """
    if not verify_password(who.user.password_hash, current):
        raise InputError("current_password: is wrong", field="current_password")
    try:
        check_password_strength(new, username=who.user.username, field="new_password")
    except ValueError as exc:
        raise InputError(str(exc), field="new_password") from None
    if verify_password(who.user.password_hash, new):
        raise InputError("new_password: must differ from the current one", field="new_password")
    who.user.password_hash = hash_password(new)
    who.user.password_state = "ok"
    keep = who.session.id if who.session is not None else ""
    if who.session is not None:
        who.session.must_change = False
    db.execute(delete(Session).where(Session.user_id == who.user.id, Session.id != keep))
    event(db, who, "account.password", "user", who.user.id)


def must_change_password(who: Identity | None) -> bool:
    """Whether the caller's session was opened with a one-time password not yet replaced."""
    return who is not None and who.session is not None and bool(who.session.must_change)


def admin_update(db: DbSession, who: Identity, user_id: int, action: str) -> User:
    """``unlock``, ``deactivate`` or ``activate`` an account (admins only)."""
    if who.role != "admin":
        raise Forbidden("accounts: only an admin changes accounts")
    user = db.get(User, user_id)
    if user is None:
        raise NotFound(f"user: no user {user_id}", field="user")
    if action == "unlock":
        unlock(db, user.username)
    elif action in ("deactivate", "activate"):
        if user.id == who.user.id:
            raise Conflict("user: an admin cannot deactivate their own account", field="user")
        user.active = action == "activate"
        if not user.active:
            db.execute(delete(Session).where(Session.user_id == user.id))
    else:
        raise InputError(
            f"action: must be unlock, activate or deactivate, got {action!r}", field="action"
        )
    event(db, who, f"account.{action}", "user", user.id, username=user.username)
    return user
