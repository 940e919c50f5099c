"""Secret keys for keyed masking: loading, identifying and deriving them without leaking them.

A :class:`SecretKey` holds the key bytes privately. Everything it shows (``repr``,
``str``, error messages) carries only its :attr:`~SecretKey.key_id`, a one-way
fingerprint: 16 hex characters of SHA-256 over a domain-separation prefix and the key.
The id names the key in manifests and reports and lets a later run check that it uses
the same key, but reveals nothing about the key itself (inverting it is a preimage
search over at least 2^128 keys).

Keys come from a key file (:meth:`SecretKey.from_file`), an environment variable
(:meth:`SecretKey.from_env`) or fresh OS entropy (:meth:`SecretKey.generate`); they are
never taken from a plan, a command line or a data frame. Per-purpose subkeys come from
:meth:`SecretKey.derive`, HKDF-SHA256 (RFC 5869).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import itertools
import os
import re
import secrets
import shlex
import stat
from pathlib import Path
from typing import Literal

from veil.errors import ParameterError

__all__ = [
    "KEY_BYTES",
    "MIN_KEY_BYTES",
    "NEW_KEY_HINT",
    "KeyEncoding",
    "SecretKey",
    "as_secret_key",
    "check_env_name",
    "check_key_path",
    "hkdf_sha256",
    "looks_like_key_material",
]

MIN_KEY_BYTES = 16
"""Shortest accepted key: 128 bits, the security level HMAC-SHA256 needs against guessing."""

KeyEncoding = Literal["auto", "raw", "hex", "base64"]

_KEY_ID_PREFIX = b"veil.key-id.v1\x00"
_DERIVE_SALT = b"veil.masking.derive.v1"
_HEX = re.compile(rb"\A(?:[0-9a-fA-F]{2})+\Z")
_BASE64_PREFIX = b"base64:"
_HASH_LEN = 32


def hkdf_sha256(ikm: bytes, *, salt: bytes = b"", info: bytes = b"", length: int = 32) -> bytes:
    """HKDF with HMAC-SHA256: extract then expand (RFC 5869, sections 2.2 and 2.3).

    Parameters
    ----------
    ikm : bytes
        Input keying material.
    salt : bytes, default b""
        Optional salt; empty means a string of 32 zero bytes, as the RFC specifies.
    info : bytes, default b""
        Context that separates the derived keys of different purposes.
    length : int, default 32
        Output length in bytes, 1 to 8160 (255 blocks of 32 bytes).

    Returns
    -------
    bytes
        The output keying material.

    References
    ----------
    H. Krawczyk and P. Eronen, "HMAC-based Extract-and-Expand Key Derivation Function
    (HKDF)", RFC 5869, 2010.

    Examples
    --------
    >>> hkdf_sha256(b"\\x0b" * 22, length=42).hex()[:16]
    '8da4e775a563c18f'
    """
    if isinstance(length, bool) or not isinstance(length, int) or not 1 <= length <= 255 * 32:
        raise ParameterError(f"length: must be an integer from 1 to {255 * 32}, got {length!r}")
    prk = hmac.new(salt or bytes(_HASH_LEN), ikm, hashlib.sha256).digest()
    blocks: list[bytes] = []
    previous = b""
    for counter in range(1, -(-length // _HASH_LEN) + 1):
        previous = hmac.new(prk, previous + info + bytes([counter]), hashlib.sha256).digest()
        blocks.append(previous)
    return b"".join(blocks)[:length]


KEY_BYTES = 32
"""Length of a key read from a file or an environment variable: 256 random bits."""

_MAX_KEY_FILE_BYTES = 4096
_MIN_DISTINCT = 18
"""Fewest distinct byte values (and distinct steps between neighbouring bytes) in a key
of 32 bytes. 32 uniform random bytes have about 30; fewer than 18 happens with
probability about 1e-13 (1e-12 for the 31 steps), while a repeated or counting pattern
has a handful."""
_ENV_NAME = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]*\Z")
_HEX64 = re.compile(rb"\A[0-9a-fA-F]{64}\Z")
_B64_32 = re.compile(rb"\A(?:[A-Za-z0-9+/]{43}|[A-Za-z0-9_-]{43})=?\Z")
_TEXT_BYTES = frozenset(range(0x20, 0x7F)) | {0x09, 0x0A, 0x0D}
NEW_KEY_HINT = "create a key with `veil key new PATH` (32 random bytes, written as hex)"
"""What every refusal of a weak or malformed key suggests instead."""

_FORMATS = (
    "32 raw bytes, 64 hex characters, or the base64 of 32 bytes (44 characters, "
    "optionally prefixed 'base64:')"
)


def _one_newline_less(data: bytes) -> bytes:
    if data.endswith(b"\r\n"):
        return data[:-2]
    if data.endswith(b"\n"):
        return data[:-1]
    return data


def _from_base64(text: bytes, source: str) -> bytes:
    payload = text.removeprefix(_BASE64_PREFIX).strip()
    if not _B64_32.match(payload):
        raise ParameterError(
            f"{source}: is not the base64 of {KEY_BYTES} bytes (43 characters of "
            f"A-Z a-z 0-9 + / or - _, then an optional '='); {NEW_KEY_HINT}"
        )
    padded = payload.rstrip(b"=") + b"="
    try:
        if b"-" in payload or b"_" in payload:
            return base64.urlsafe_b64decode(padded)
        return base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):  # pragma: no cover - the pattern admits only base64
        raise ParameterError(f"{source}: is not a valid base64 key; {NEW_KEY_HINT}") from None


def _decode(data: bytes, encoding: KeyEncoding, source: str, *, allow_raw: bool) -> bytes:
    """The 32 key bytes in a file's or variable's content; errors name ``source``, never data.

    ``auto`` reads, in this order: ``base64:`` then base64; 64 hex digits; the base64
    of 32 bytes (43 characters, optional ``=``; standard or URL-safe alphabet); and, if
    ``allow_raw``, exactly 32 raw bytes. Surrounding whitespace is ignored around text
    encodings; one trailing newline (LF or CRLF) is ignored after raw bytes.
    """
    if encoding not in ("auto", "raw", "hex", "base64"):
        raise ParameterError(
            f"encoding: must be 'auto', 'raw', 'hex' or 'base64', got {encoding!r}"
        )
    text = data.strip()
    if encoding == "base64" or (
        encoding == "auto" and (text.startswith(_BASE64_PREFIX) or _B64_32.match(text))
    ):
        return _from_base64(text, source)
    if encoding == "hex" or (encoding == "auto" and _HEX64.match(text)):
        if not _HEX64.match(text):
            raise ParameterError(
                f"{source}: is not a hex key of {KEY_BYTES} bytes (exactly 64 characters "
                f"0-9 a-f); {NEW_KEY_HINT}"
            )
        return bytes.fromhex(text.decode("ascii"))
    raw = data if len(data) == KEY_BYTES else _one_newline_less(data)
    if (encoding == "raw" or allow_raw) and len(raw) == KEY_BYTES:
        return raw
    if encoding == "raw":
        raise ParameterError(
            f"{source}: holds {len(data)} bytes, not {KEY_BYTES} raw key bytes; {NEW_KEY_HINT}"
        )
    accepted = _FORMATS if allow_raw else _FORMATS.removeprefix("32 raw bytes, ")
    raise ParameterError(
        f"{source}: is not a key ({len(data)} bytes; a key is {accepted}): a password, "
        f"a text or a data file is not a key; {NEW_KEY_HINT}"
    )


def _weakness(material: bytes) -> str | None:
    """Why ``material`` cannot be random key bytes, or ``None``; never quotes the bytes."""
    n = len(material)
    if all(b in _TEXT_BYTES for b in material):
        return "is printable text, not random bytes (a password or passphrase?)"
    floor = min(_MIN_DISTINCT, n * 9 // 16)
    distinct = len(set(material))
    if distinct < floor:
        return (
            f"has only {distinct} distinct byte values in {n} bytes (random keys have "
            f"about {n - n * (n - 1) // 512}): a repeated or low-entropy pattern"
        )
    steps = len({(b - a) & 0xFF for a, b in itertools.pairwise(material)})
    if steps < floor:
        return "follows a regular pattern (a counting or repeating sequence), not random bytes"
    return None


def _require_strong(material: bytes, source: str) -> None:
    reason = _weakness(material)
    if reason is not None:
        raise ParameterError(f"{source}: {reason}; {NEW_KEY_HINT}")


def looks_like_key_material(name: str) -> bool:
    """Whether a text that should be a name (of a variable, a field's value) looks like a key.

    Long hex, ``base64:`` text, or long mixed-case alphanumerics: such a value is never
    echoed in an error, as a secret pasted where a name belongs.
    """
    if name.startswith("base64:") or len(name) >= 40:
        return True
    if len(name) >= 16 and all(c in "0123456789abcdefABCDEF" for c in name):
        return True
    mixed = (
        any(c.islower() for c in name)
        and any(c.isupper() for c in name)
        and any(c.isdigit() for c in name)
    )
    return len(name) >= 20 and mixed


_KEY_LENGTHS = frozenset({22, 24, 32, 43, 44})
"""Lengths of the base64 of 16, 24 and 32 bytes, with and without padding."""
_BASE64_TEXT = re.compile(r"\A[A-Za-z0-9+/_-]+=*\Z")
_MAX_PATH = 4096


def _key_not_path(text: str) -> str | None:
    """Why ``text``, given as a key file's path, is not plausibly a path, or ``None``."""
    bare = text.strip()
    if not bare:
        return "is empty"
    if len(text) > _MAX_PATH:
        return f"is longer than any path ({_MAX_PATH} characters)"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        return "holds control characters, which no key file's name has"
    hex_digits = all(c in "0123456789abcdefABCDEF" for c in bare)
    if bare.startswith("base64:") or (hex_digits and len(bare) >= 32):
        return "looks like key material (hex or base64), not a path"
    if (
        len(bare) in _KEY_LENGTHS
        and _BASE64_TEXT.match(bare)
        and any(c.islower() for c in bare)
        and any(c.isupper() for c in bare)
    ):
        return "looks like key material (the base64 of a key), not a path"
    return None


def check_env_name(name: object) -> None:
    """Refuse a key's environment variable name that is not one, without echoing it.

    Every name :meth:`SecretKey.from_env` reads passes here first, and so does a plan's
    ``key_env`` when the plan loads (a dry run refuses what the run would).

    Raises
    ------
    ParameterError
        ``name`` is not a non-empty string, looks like key material (a key pasted in
        place of the variable's name), or is not letters, digits and ``_`` not starting
        with a digit. The message never repeats the value.
    """
    if not isinstance(name, str) or not name:
        raise ParameterError(
            f"key_env: must be the name of an environment variable, got "
            f"{type(name).__name__ if not isinstance(name, str) else 'an empty string'}"
        )
    if looks_like_key_material(name):
        raise ParameterError(
            "key_env: the environment variable name given looks like key material; "
            "pass the variable's NAME (e.g. --key-env VEIL_KEY), not its value (the "
            "value given is not shown)"
        )
    if not _ENV_NAME.match(name):
        raise ParameterError(
            "key_env: is not an environment variable name (letters, digits and '_', "
            "not starting with a digit; the value given is not shown)"
        )


def check_key_path(path: str | os.PathLike[str], source: str = "key file") -> None:
    """Refuse a key file's path that is key material pasted in its place, without echoing it.

    A path is refused when it is empty, longer than 4096 characters, holds control
    characters, or reads as a key: 32 or more hex digits, ``base64:`` text, or the
    base64 of 16, 24 or 32 bytes (22 to 44 characters of its alphabet, both cases). A
    file name with an extension (``hmac.key``) is never taken for a key. Every path
    :meth:`SecretKey.from_file` opens passes here first.

    Raises
    ------
    ParameterError
        Naming ``source`` and the reason; never the value given.
    """
    reason = _key_not_path(os.fspath(path))
    if reason is not None:
        raise ParameterError(
            f"{source}: the path given {reason} (the value given is not shown); give the "
            f"path of a key file instead; {NEW_KEY_HINT}"
        )


class SecretKey:
    """A secret key held privately and shown only by its id.

    Parameters
    ----------
    key : bytes
        The key, at least :data:`MIN_KEY_BYTES` (16) bytes. Prefer the constructors
        :meth:`from_file`, :meth:`from_env` and :meth:`generate`, which keep the key out
        of source code.

    Notes
    -----
    Equality compares the key bytes in constant time (:func:`hmac.compare_digest`);
    the hash is that of the key id. A key pickles with its bytes (so that it can reach
    worker processes): never pickle it to storage.

    Examples
    --------
    >>> key = SecretKey(bytes(range(32)))
    >>> key
    SecretKey(key_id='998e3f5127d3dda3')
    >>> key.derive("pseudonym") == key
    False
    """

    __slots__ = ("_key", "_key_id")

    def __init__(self, key: bytes) -> None:
        if not isinstance(key, (bytes, bytearray, memoryview)):
            raise ParameterError(
                f"key: must be bytes (or use SecretKey.from_file / from_env), "
                f"got {type(key).__name__}"
            )
        material = bytes(key)
        if len(material) < MIN_KEY_BYTES:
            raise ParameterError(
                f"key: must be at least {MIN_KEY_BYTES} bytes (128 bits), got "
                f"{len(material)} bytes; generate one with SecretKey.generate()"
            )
        self._key = material
        self._key_id = hashlib.sha256(_KEY_ID_PREFIX + material).hexdigest()[:16]

    @property
    def key_id(self) -> str:
        """16 hex characters identifying the key; safe to write into manifests and logs."""
        return self._key_id

    def __len__(self) -> int:
        return len(self._key)

    def __repr__(self) -> str:
        return f"SecretKey(key_id={self._key_id!r})"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SecretKey):
            return NotImplemented
        return hmac.compare_digest(self._key, other._key)

    def __hash__(self) -> int:
        return hash(self._key_id)

    # ------------------------------------------------------------------ constructors

    @classmethod
    def from_file(
        cls, path: str | os.PathLike[str], *, encoding: KeyEncoding = "auto"
    ) -> SecretKey:
        """Read a 32-byte key from a file that only its owner can read.

        With ``encoding="auto"`` (the default) the file holds, in the order tried:

        * ``base64:`` followed by the base64 of 32 bytes;
        * 64 hex digits (either case), as ``veil key new`` writes;
        * the base64 of 32 bytes: 43 characters of the standard (``+/``) or URL-safe
          (``-_``) alphabet and an optional ``=`` (``secrets.token_urlsafe(32)``);
        * exactly 32 raw bytes.

        Whitespace around the text forms and one trailing newline (LF or CRLF) after raw
        bytes are ignored. ``"raw"``, ``"hex"`` and ``"base64"`` force one reading.

        The key must look random: printable text read as raw bytes (a password), and
        bytes with few distinct values or a regular pattern are refused.

        Raises
        ------
        ParameterError
            The path is key material pasted in its place (:func:`check_key_path`: the
            message does not repeat it); the file is missing, unreadable or not a
            regular file; on POSIX, it can be
            read or written by group or others (the message gives the ``chmod`` to run);
            it does not hold a key in one of the forms above; or the key is not random.
            The message names the path and suggests ``veil key new``; it never holds
            key material or file content.
        """
        check_key_path(path)
        file = Path(path)
        source = f"key file {str(file)!r}"
        try:
            with file.open("rb") as handle:
                info = os.fstat(handle.fileno())
                if not stat.S_ISREG(info.st_mode):
                    raise ParameterError(f"{source}: is not a regular file; {NEW_KEY_HINT}")
                if os.name == "posix" and info.st_mode & 0o077:
                    raise ParameterError(
                        f"{source}: can be read or written by group or others (mode "
                        f"{stat.S_IMODE(info.st_mode):04o}); a key file must be private "
                        f"to its owner: run chmod 600 {shlex.quote(str(file))}"
                    )
                data = handle.read(_MAX_KEY_FILE_BYTES + 1)
        except FileNotFoundError:
            raise ParameterError(f"key file: {str(file)!r} does not exist") from None
        except OSError as exc:
            raise ParameterError(
                f"key file: {str(file)!r} cannot be read ({exc.strerror})"
            ) from None
        if len(data) > _MAX_KEY_FILE_BYTES:
            raise ParameterError(
                f"{source}: is over {_MAX_KEY_FILE_BYTES} bytes, not a key (a data "
                f"file?); a key is {_FORMATS}; {NEW_KEY_HINT}"
            )
        return cls._checked(_decode(data, encoding, source, allow_raw=True), source)

    @classmethod
    def from_env(cls, name: str, *, encoding: KeyEncoding = "auto") -> SecretKey:
        """Read a 32-byte key from the environment variable ``name``.

        ``encoding="auto"`` accepts 64 hex digits or the base64 of 32 bytes (with or
        without a ``base64:`` prefix), as :meth:`from_file` reads them, and refuses any
        other text (a passphrase is not a key); ``"raw"`` takes the variable's UTF-8
        bytes, which must be 32 and not printable text. The key must look random, as
        for :meth:`from_file`.

        Raises
        ------
        ParameterError
            ``name`` is not a variable name (the message does not repeat it, nor
            anything that looks like key material passed instead of a name), the
            variable is unset or empty (the message names it), does not decode to 32
            bytes, or the key is not random. No message holds key material.
        """
        check_env_name(name)
        value = os.environ.get(name)
        if not value:
            raise ParameterError(
                f"key: environment variable {name!r} is not set or empty; put a hex key "
                f'in it ({NEW_KEY_HINT}, then export {name}="$(cat PATH)")'
            )
        source = f"environment variable {name!r}"
        return cls._checked(
            _decode(value.encode("utf-8"), encoding, source, allow_raw=False), source
        )

    @classmethod
    def generate(cls, n_bytes: int = KEY_BYTES) -> SecretKey:
        """A new random key from the operating system's CSPRNG (:mod:`secrets`).

        A draw that the checks of :meth:`from_file` would refuse (probability below
        1e-12 for 32 bytes) is drawn again, so that every generated key can be loaded.
        """
        if isinstance(n_bytes, bool) or not isinstance(n_bytes, int) or n_bytes < MIN_KEY_BYTES:
            raise ParameterError(f"n_bytes: must be an integer >= {MIN_KEY_BYTES}, got {n_bytes!r}")
        material = secrets.token_bytes(n_bytes)
        while _weakness(material) is not None:  # pragma: no cover - about 1e-12
            material = secrets.token_bytes(n_bytes)
        return cls(material)

    @classmethod
    def _checked(cls, material: bytes, source: str) -> SecretKey:
        if len(material) != KEY_BYTES:
            raise ParameterError(
                f"{source}: holds {len(material)} key bytes, not {KEY_BYTES} (256 bits); "
                f"{NEW_KEY_HINT}"
            )
        _require_strong(material, source)
        return cls(material)

    # ------------------------------------------------------------------ use

    def derive(self, purpose: str, length: int = 32) -> SecretKey:
        """A subkey for one purpose: HKDF-SHA256 (RFC 5869) with ``info=purpose``.

        Subkeys of different purposes are independent: knowing one reveals neither the
        parent key nor another subkey, so one master key can serve pseudonyms, tokens and
        FPE without one use weakening another.
        """
        if not isinstance(purpose, str) or not purpose:
            raise ParameterError(f"purpose: must be a non-empty string, got {purpose!r}")
        if isinstance(length, bool) or not isinstance(length, int) or length < MIN_KEY_BYTES:
            raise ParameterError(f"length: must be an integer >= {MIN_KEY_BYTES}, got {length!r}")
        return SecretKey(
            hkdf_sha256(self._key, salt=_DERIVE_SALT, info=purpose.encode("utf-8"), length=length)
        )

    def new_hmac(self, digestmod: str = "sha256") -> hmac.HMAC:
        """A fresh HMAC object keyed with this key; ``.copy()`` it per message."""
        return hmac.new(self._key, digestmod=digestmod)

    def reveal(self) -> bytes:
        """The key bytes, for handing to a cipher; never print, log or store them."""
        return self._key

    def require_id(self, key_id: str) -> None:
        """Raise :class:`ParameterError` unless this key's id is ``key_id``.

        Guards against running with the wrong key, which would silently produce
        pseudonyms that no longer join with an earlier release.
        """
        if not hmac.compare_digest(str(key_id).encode(), self._key_id.encode()):
            raise ParameterError(
                f"key_id: expected key {key_id!r}, but the key supplied has id "
                f"{self._key_id!r} (wrong key file or variable?)"
            )


def as_secret_key(key: SecretKey | bytes) -> SecretKey:
    """``key`` as a :class:`SecretKey`: a key passes through, bytes are checked and wrapped.

    Bytes must look random as :meth:`SecretKey.from_file` requires (not printable text,
    no repeated or counting pattern). A ``str`` is refused: it is usually a passphrase or
    a hex key pasted into code, and the caller should say which with
    :meth:`SecretKey.from_env` or :meth:`SecretKey.from_file`.
    """
    if isinstance(key, SecretKey):
        return key
    if key is None:
        raise ParameterError(
            "key: no key given; load one with SecretKey.from_file(path) or SecretKey.from_env(name)"
        )
    if isinstance(key, (bytes, bytearray, memoryview)):
        secret = SecretKey(key)
        _require_strong(bytes(key), "key")
        return secret
    raise ParameterError(
        f"key: must be a SecretKey or bytes, got {type(key).__name__} (load text keys with "
        f"SecretKey.from_env or SecretKey.from_file)"
    )
