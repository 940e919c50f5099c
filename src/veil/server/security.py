"""Secrets of the accounts: password rules, argon2id hashes, random tokens and digests.

A password is refused (OWASP ASVS 2.1.1, 2.1.2, 2.1.7; NIST SP 800-63B 5.1.1.2) when it
is shorter than 12 characters or longer than 1024, when it is one of the 30,000 most
common passwords (an offline list shipped with veil, ``veil/server/data``), also once the
digits and symbols around a word are taken off (``password1234`` is ``password``), when
it holds the account's user name, and when it repeats a few characters
(``aaaaaaaaaaaa``, ``abababababab``) or runs through consecutive characters
(``abcdefghijkl``, ``123456789012``). No other composition rule applies: any character,
spaces included, is allowed.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import hmac
import secrets
import string
from importlib import resources

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from veil.errors import ParameterError

__all__ = [
    "MIN_DISTINCT",
    "MIN_PASSWORD",
    "check_password_strength",
    "common_passwords",
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


MIN_DISTINCT = 5
"""Fewest different characters a password must hold."""
_AROUND = string.digits + string.punctuation + " "


@functools.cache
def common_passwords() -> frozenset[str]:
    """The offline list of common passwords (lower-cased), read once."""
    data = resources.files("veil.server").joinpath("data", "common-passwords.txt.gz")
    with data.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as text:
        return frozenset(line.strip() for line in text if line.strip())


_DIGIT_RUN = string.digits * 103
_RUNS = (_DIGIT_RUN, _DIGIT_RUN[::-1], string.ascii_lowercase, string.ascii_lowercase[::-1])


def _consecutive(text: str) -> bool:
    """Whether ``text`` runs through consecutive letters, or digits (9 then 0 included)."""
    return any(text in run for run in _RUNS)


def check_password_strength(
    password: str, *, username: str | None = None, field: str = "password"
) -> None:
    """Refuse a weak password (see the module documentation); the message names ``field``.

    Raises
    ------
    ParameterError
        The rule the password breaks, without repeating the password.
    """
    if not isinstance(password, str) or len(password) < MIN_PASSWORD:
        raise ParameterError(f"{field}: must be at least {MIN_PASSWORD} characters long")
    if len(password) > 1024:
        raise ParameterError(f"{field}: must be at most 1024 characters long")
    lower = password.lower()
    if username and len(username) >= 3 and username.lower() in lower:
        raise ParameterError(f"{field}: must not contain the user name")
    if len(set(lower)) < MIN_DISTINCT:
        raise ParameterError(
            f"{field}: repeats too few characters (it needs at least {MIN_DISTINCT} different "
            "ones); a few unrelated words make a strong password"
        )
    if _consecutive(lower):
        raise ParameterError(f"{field}: is a run of consecutive characters")
    core = lower.strip(_AROUND)
    common = common_passwords()
    if lower in common or (len(core) >= 4 and core in common):
        raise ParameterError(
            f"{field}: is one of the most common passwords (or one with digits or symbols "
            "added); choose another"
        )


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
