"""Signing in: the password check, backoff after failures, and the history of sign-ins.

Every failed sign-in is answered the same way, whatever failed: an unknown user name, a
wrong password, an account in its backoff, a deactivated account or a one-time password
already used all get the same status and message, after the same password hash work, so
that the answer never tells which accounts exist.

Failures are throttled three ways, none of which can keep an account's owner out:

* **per account**: after ``max_lockout_failures`` failures in a row the account backs
  off, each further failure doubling the wait before the next try (1 s, 2 s, 4 s ... up
  to ``lockout_minutes``); the wait applies to addresses the account has **not** signed
  in from (within ``known_address_days``). From an address it has signed in from, only
  that address's own failures for it count. So an attacker elsewhere cannot lock the only
  admin out: their failures slow down new addresses, never the admin's own.
* **per account and address**: the same backoff, for one address's tries at one account.
* **per address**: past ``max_attempts_per_client`` failures in ``attempt_window_minutes``
  an address is throttled: from it, only accounts that have signed in from it before
  can sign in (with a correct password, they are never refused because of the address);
  every other try from it is refused (429), whatever the account.

The client address is the connection's, or the forwarded one only from a proxy named
in the configuration (:func:`veil.server.web.proxy.client_address`). A successful sign-in
is recorded in ``sign_ins`` (its address becomes known to the account, and four-eyes
compares the history of requester and approver; see :mod:`veil.server.reviews`).
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session as DbSession

from veil.server.accounts import Identity, event
from veil.server.clock import now
from veil.server.config import ServerConfig
from veil.server.errors import InputError, TooManyAttempts
from veil.server.models import LoginAttempt, Session, SignIn, User
from veil.server.security import digest, new_token, verify_password
from veil.server.throttle import account_key, clear_backoff, fail, pair_key, waiting

__all__ = ["REFUSED", "known_address", "login", "start_session"]

REFUSED = (
    "login: the user name or password is wrong, or the account must wait before another "
    "try; check them and try again in a while"
)
"""The one answer to every refused sign-in (but a throttled address's)."""


def known_address(db: DbSession, user_id: int, client: str, config: ServerConfig) -> bool:
    """Whether ``user_id`` signed in from ``client`` within ``known_address_days``."""
    since = now() - timedelta(days=config.known_address_days)
    found = db.scalar(
        select(SignIn.id)
        .where(SignIn.user_id == user_id, SignIn.client == client[:64], SignIn.at >= since)
        .limit(1)
    )
    return found is not None


def _client_failures(db: DbSession, client: str, config: ServerConfig) -> int:
    since = now() - timedelta(minutes=config.attempt_window_minutes)
    return int(
        db.scalar(
            select(func.count())
            .select_from(LoginAttempt)
            .where(LoginAttempt.client == client[:64], LoginAttempt.at >= since)
        )
        or 0
    )


def login(
    db: DbSession, config: ServerConfig, username: str, password: str, client: str
) -> tuple[Identity, str]:
    """Check a sign-in; returns the new session and the cookie value to set.

    Failures are recorded (and audited) in ``db``: the caller commits them even though
    the sign-in is refused. A one-time password (the first admin's, or one an admin set)
    signs in once, into a session that may only change the password.

    Raises
    ------
    InputError
        Any refusal of the account's sign-in (one message for every cause, naming
        ``password``; see the module documentation).
    TooManyAttempts
        The address is throttled and the account has not signed in from it before.
    """
    name = str(username)[:64]
    user = db.scalar(select(User).where(User.username == name))
    known = user is not None and known_address(db, user.id, client, config)
    keys = [pair_key(name, client)] + ([] if known else [account_key(name)])
    throttled = not known and _client_failures(db, client, config) >= (
        config.max_attempts_per_client
    )
    held_back = waiting(db, keys) is not None
    # The hash is checked whatever else refuses the try, so that every answer takes as long.
    correct = verify_password(None if user is None else user.password_hash, password)
    usable = user is not None and user.active and user.password_state != "one_time_used"
    if throttled or held_back or not correct or not usable:
        db.add(LoginAttempt(client=client[:64], at=now()))
        if not correct or not usable:
            fail(db, keys, config)
        why = "address" if throttled else "backoff" if held_back and correct else "credentials"
        event(db, None, "login.failed", "user", "", actor=name, client=client, why=why)
        if throttled:
            raise TooManyAttempts(
                f"login: too many failed sign-ins from this address; wait "
                f"{config.attempt_window_minutes} minutes (accounts that signed in from "
                "here before are not held back)",
                field="username",
            )
        raise InputError(REFUSED, field="password")
    assert user is not None
    # The keys this try passed are cleared: from a known address only its own (an
    # attacker elsewhere keeps the account's backoff), from a new one the account's too.
    clear_backoff(db, keys)
    return start_session(db, config, user, client)


def start_session(
    db: DbSession, config: ServerConfig, user: User, client: str, mode: str = "password"
) -> tuple[Identity, str]:
    """A new session for ``user`` (a new random id: no fixation), its sign-in recorded.

    Returns the identity and the cookie value (the database keeps only its SHA-256).
    """
    one_time = user.password_state == "one_time" and mode == "password"
    if one_time:
        user.password_state = "one_time_used"
    cookie = new_token()
    session = Session(
        id=digest(cookie),
        user_id=user.id,
        csrf_token=new_token(),
        created_at=now(),
        expires_at=now() + timedelta(minutes=config.session_minutes),
        must_change=one_time,
    )
    db.add(session)
    db.add(SignIn(user_id=user.id, client=client[:64], at=now()))
    db.flush()
    who = Identity(user, user.role, session=session)
    event(db, who, "login", "user", user.id, client=client, one_time=one_time, mode=mode)
    return who, cookie
