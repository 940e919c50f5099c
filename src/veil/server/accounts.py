"""Accounts, login sessions and API tokens.

Logins are rate limited twice: an account is locked for ``lockout_minutes`` after
``max_lockout_failures`` failures in a row, and a client address may fail at most
``max_attempts_per_client`` times in ``attempt_window_minutes``. A successful login
always creates a new session with a new random id (a session id known before the login
is never adopted: no session fixation); the cookie holds the id, the database only its
SHA-256. API tokens are scoped to one role, the account's own, and stored as digests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session as DbSession

from veil.server import audit
from veil.server.config import ServerConfig
from veil.server.errors import Conflict, Forbidden, InputError, NotFound, TooManyAttempts
from veil.server.models import ROLES, ApiToken, LoginAttempt, Session, User
from veil.server.security import (
    check_password_strength,
    digest,
    hash_password,
    new_token,
    verify_password,
)

__all__ = [
    "Identity",
    "authenticate_token",
    "create_token",
    "create_user",
    "login",
    "logout",
    "now",
    "session_identity",
]

_USERNAME = re.compile(r"^[A-Za-z0-9_.-]{3,64}$")


def now() -> datetime:
    """The current time, in UTC."""
    return datetime.now(timezone.utc)


def _aware(moment: datetime) -> datetime:
    # SQLite returns naive datetimes; every stored time is UTC.
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


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
    db: DbSession, by: Identity | None, username: str, role: str, password: str
) -> User:
    """A new account (``by`` must be an admin, or None when the platform makes the first one).

    Raises
    ------
    InputError
        A user name that is not 3-64 letters, digits, ``_.-``, a role not in
        :data:`~veil.server.models.ROLES`, or a password too short.
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
        check_password_strength(password)
    except ValueError as exc:
        raise InputError(str(exc), field="password") from None
    if db.scalar(select(User).where(User.username == username)) is not None:
        raise Conflict(f"username: {username!r} is taken", field="username")
    user = User(
        username=username,
        role=role,
        password_hash=hash_password(password),
        active=True,
        failed_logins=0,
        created_at=now(),
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
        actor="platform",
        actor_role="system",
    )
    return user


def _client_failures(db: DbSession, client: str, config: ServerConfig) -> int:
    since = now() - timedelta(minutes=config.attempt_window_minutes)
    return int(
        db.scalar(
            select(func.count())
            .select_from(LoginAttempt)
            .where(LoginAttempt.client == client, LoginAttempt.at >= since)
        )
        or 0
    )


def login(
    db: DbSession, config: ServerConfig, username: str, password: str, client: str
) -> tuple[Identity, str]:
    """Check a login; returns the new session and the cookie value to set.

    Failures are recorded (and audited) in ``db``: the caller commits them even though
    the login is refused.

    Raises
    ------
    InputError
        Wrong user name or password (one message for both).
    TooManyAttempts
        The account is locked or the client failed too often.
    """
    if _client_failures(db, client, config) >= config.max_attempts_per_client:
        raise TooManyAttempts(
            f"login: too many failed logins from this address; wait "
            f"{config.attempt_window_minutes} minutes",
            field="username",
        )
    user = db.scalar(select(User).where(User.username == username))
    if user is not None and user.locked_until is not None and _aware(user.locked_until) > now():
        event(db, None, "login.locked", "user", user.id, actor=username)
        raise TooManyAttempts(
            f"login: the account is locked after {config.max_lockout_failures} failed logins; "
            f"try again after {config.lockout_minutes} minutes or ask an admin to unlock it",
            field="username",
        )
    ok = verify_password(None if user is None else user.password_hash, password)
    if not ok or user is None or not user.active:
        db.add(LoginAttempt(client=client[:64], at=now()))
        if user is not None:
            user.failed_logins += 1
            if user.failed_logins >= config.max_lockout_failures:
                user.locked_until = now() + timedelta(minutes=config.lockout_minutes)
        event(
            db,
            None,
            "login.failed",
            "user",
            "" if user is None else user.id,
            actor=username[:64],
            client=client,
        )
        raise InputError("login: wrong user name or password", field="password")
    user.failed_logins = 0
    user.locked_until = None
    cookie = new_token()
    session = Session(
        id=digest(cookie),
        user_id=user.id,
        csrf_token=new_token(),
        created_at=now(),
        expires_at=now() + timedelta(minutes=config.session_minutes),
    )
    db.add(session)
    db.flush()
    who = Identity(user, user.role, session=session)
    event(db, who, "login", "user", user.id, client=client)
    return who, cookie


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
    """Change the caller's password (other sessions of the account end)."""
    if not verify_password(who.user.password_hash, current):
        raise InputError("current_password: is wrong", field="current_password")
    try:
        check_password_strength(new, field="new_password")
    except ValueError as exc:
        raise InputError(str(exc), field="new_password") from None
    who.user.password_hash = hash_password(new)
    keep = who.session.id if who.session is not None else ""
    db.execute(delete(Session).where(Session.user_id == who.user.id, Session.id != keep))
    event(db, who, "account.password", "user", who.user.id)


def admin_update(db: DbSession, who: Identity, user_id: int, action: str) -> User:
    """``unlock``, ``deactivate`` or ``activate`` an account (admins only)."""
    if who.role != "admin":
        raise Forbidden("accounts: only an admin changes accounts")
    user = db.get(User, user_id)
    if user is None:
        raise NotFound(f"user: no user {user_id}", field="user")
    if action == "unlock":
        user.failed_logins, user.locked_until = 0, None
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
