"""Secrets of the accounts: argon2id password hashes, random tokens and their digests."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from veil.errors import ParameterError

__all__ = [
    "MIN_PASSWORD",
    "check_password_strength",
    "digest",
    "hash_password",
    "new_token",
    "same",
    "verify_password",
]

MIN_PASSWORD = 12
"""Least length of a password (OWASP ASVS 2.1.1)."""

# argon2-cffi's defaults are argon2id with RFC 9106's low-memory parameters.
_HASHER = PasswordHasher()
# A hash to verify against when the account does not exist, so that the time taken does
# not tell whether a user name is known.
_DUMMY = _HASHER.hash(secrets.token_urlsafe(16))


def check_password_strength(password: str, *, field: str = "password") -> None:
    """Refuse a password shorter than :data:`MIN_PASSWORD` characters or over 1,024."""
    if not isinstance(password, str) or len(password) < MIN_PASSWORD:
        raise ParameterError(f"{field}: must be at least {MIN_PASSWORD} characters long")
    if len(password) > 1024:
        raise ParameterError(f"{field}: must be at most 1024 characters long")


def hash_password(password: str) -> str:
    """The argon2id hash of ``password`` (with its own random salt)."""
    return _HASHER.hash(password)


def verify_password(stored: str | None, password: str) -> bool:
    """Whether ``password`` matches the hash ``stored`` (None: an unknown account)."""
    try:
        return _HASHER.verify(stored or _DUMMY, password) and stored is not None
    except (VerificationError, InvalidHashError):
        return False


def new_token() -> str:
    """A random token: 32 bytes from the operating system, URL-safe base64."""
    return secrets.token_urlsafe(32)


def digest(token: str) -> str:
    """SHA-256 of a token, as stored (tokens have 256 random bits: no salt needed)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def same(a: str | None, b: str | None) -> bool:
    """Constant-time equality of two tokens (False when either is missing)."""
    if not a or not b:
        return False
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))
