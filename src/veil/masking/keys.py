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
import os
import re
import secrets
from pathlib import Path
from typing import Literal

from veil.errors import ParameterError

__all__ = ["MIN_KEY_BYTES", "KeyEncoding", "SecretKey", "as_secret_key", "hkdf_sha256"]

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


def _decode(data: bytes, encoding: KeyEncoding, source: str) -> bytes:
    """Key bytes from a file's or variable's content; errors name ``source``, never the data."""
    if encoding not in ("auto", "raw", "hex", "base64"):
        raise ParameterError(
            f"encoding: must be 'auto', 'raw', 'hex' or 'base64', got {encoding!r}"
        )
    if encoding == "raw":
        return data
    text = data.strip()
    if encoding == "hex" or (encoding == "auto" and _HEX.match(text)):
        if not _HEX.match(text):
            raise ParameterError(
                f"{source}: is not a hex key (an even number of 0-9a-f characters)"
            )
        return bytes.fromhex(text.decode("ascii"))
    if encoding == "base64" or text.startswith(_BASE64_PREFIX):
        payload = text.removeprefix(_BASE64_PREFIX)
        try:
            return base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            raise ParameterError(f"{source}: is not a valid base64 key") from None
    return data


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
        """Read a key from a file.

        With ``encoding="auto"`` (the default) a file whose content, without surrounding
        whitespace, is hex digits (an even number of them) holds a hex key; a file
        starting ``base64:`` holds a base64 key; any other file is the raw key bytes,
        taken as they are (no whitespace removed). ``"raw"``, ``"hex"`` and ``"base64"``
        force one reading.

        Raises
        ------
        ParameterError
            The file is missing or unreadable (the message names the path), does not
            decode, or holds fewer than 16 key bytes. No message holds key material.
        """
        file = Path(path)
        try:
            data = file.read_bytes()
        except FileNotFoundError:
            raise ParameterError(f"key file: {str(file)!r} does not exist") from None
        except OSError as exc:
            raise ParameterError(
                f"key file: {str(file)!r} cannot be read ({exc.strerror})"
            ) from None
        return cls._checked(
            _decode(data, encoding, f"key file {str(file)!r}"), f"key file {str(file)!r}"
        )

    @classmethod
    def from_env(cls, name: str, *, encoding: KeyEncoding = "auto") -> SecretKey:
        """Read a key from the environment variable ``name``: hex, or ``base64:...``.

        ``encoding="auto"`` accepts hex digits or a ``base64:`` prefix and refuses any
        other text (a passphrase is not a key); ``"raw"`` takes the variable's UTF-8 bytes.

        Raises
        ------
        ParameterError
            The variable is unset or empty (the message names it), does not decode, or
            holds fewer than 16 key bytes. No message holds key material.
        """
        value = os.environ.get(name)
        if not value:
            raise ParameterError(
                f"key: environment variable {name!r} is not set or empty; put a hex key "
                f"in it (python -c 'import secrets; print(secrets.token_hex(32))')"
            )
        data = value.encode("utf-8")
        source = f"environment variable {name!r}"
        if encoding == "auto" and not (_HEX.match(data.strip()) or data.startswith(_BASE64_PREFIX)):
            raise ParameterError(f"{source}: must hold a hex key or 'base64:<key>'")
        return cls._checked(_decode(data, encoding, source), source)

    @classmethod
    def generate(cls, n_bytes: int = 32) -> SecretKey:
        """A new random key from the operating system's CSPRNG (:mod:`secrets`)."""
        if isinstance(n_bytes, bool) or not isinstance(n_bytes, int) or n_bytes < MIN_KEY_BYTES:
            raise ParameterError(f"n_bytes: must be an integer >= {MIN_KEY_BYTES}, got {n_bytes!r}")
        return cls(secrets.token_bytes(n_bytes))

    @classmethod
    def _checked(cls, material: bytes, source: str) -> SecretKey:
        if len(material) < MIN_KEY_BYTES:
            raise ParameterError(
                f"{source}: holds {len(material)} key bytes, fewer than the minimum "
                f"{MIN_KEY_BYTES} (128 bits)"
            )
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

    A ``str`` is refused: it is usually a passphrase or a hex key pasted into code, and
    the caller should say which with :meth:`SecretKey.from_env` or :meth:`SecretKey.from_file`.
    """
    if isinstance(key, SecretKey):
        return key
    if key is None:
        raise ParameterError(
            "key: no key given; load one with SecretKey.from_file(path) or SecretKey.from_env(name)"
        )
    if isinstance(key, (bytes, bytearray, memoryview)):
        return SecretKey(key)
    raise ParameterError(
        f"key: must be a SecretKey or bytes, got {type(key).__name__} (load text keys with "
        f"SecretKey.from_env or SecretKey.from_file)"
    )
