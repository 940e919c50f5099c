"""Custody of raw data: datasets encrypted at rest with AES-GCM, and crypto-shredding.

Each dataset has its own random 256-bit data key. The file is encrypted in chunks of
64 KiB with AES-256-GCM in the STREAM construction (Hoang, Reyhanitabar, Rogaway and
Vizár 2015): chunk ``i``'s nonce is a random 7-byte prefix, ``i`` on 4 bytes and a
last-chunk flag, and every chunk authenticates the file header and the dataset id. A
changed, re-ordered, removed or appended chunk, or a file cut short, fails to decrypt.
Files are written and read a chunk at a time, so a large file never sits in memory.

The data key is stored only wrapped (AES-GCM) by a subkey of the server key, which
comes from the environment or a key file the way :class:`veil.masking.SecretKey` loads
keys. Deleting a dataset removes its wrapped key and its file: without the key the
ciphertext (in a backup, say) cannot be read again.
"""

from __future__ import annotations

import io
import os
import secrets
import struct
from pathlib import Path
from typing import IO, Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from veil.errors import ParameterError, VeilError
from veil.masking import SecretKey

__all__ = [
    "CHUNK",
    "CustodyError",
    "DecryptingReader",
    "EncryptingWriter",
    "KeyRing",
    "load_server_key",
]

CHUNK = 1 << 16
_MAGIC = b"VEIL-DS1"
_PREFIX = 7
_HEADER = len(_MAGIC) + _PREFIX
_LENGTH = struct.Struct(">I")
_TAG = 16
_WRAP_PURPOSE = "veil.server.dataset-key-wrap"
_AUDIT_PURPOSE = "veil.server.audit-chain"


class CustodyError(VeilError, ValueError):
    """An encrypted dataset cannot be read (wrong key, altered or truncated file)."""


def load_server_key(key_env: str, key_file: Path | None) -> SecretKey:
    """The server key: from ``key_env`` if set, else from ``key_file``.

    Raises
    ------
    ParameterError
        Neither is available, or the key is not 32 random bytes (see
        :class:`~veil.masking.SecretKey`); the message names the variable or file.
    """
    if os.environ.get(key_env):
        return SecretKey.from_env(key_env)
    if key_file is not None:
        return SecretKey.from_file(key_file)
    raise ParameterError(
        f"server key: set the environment variable {key_env!r} to a key (veil key new "
        "PATH, then export it) or give a key file; it encrypts every dataset at rest"
    )


class KeyRing:
    """Wraps and unwraps datasets' data keys with a subkey of the server key, and holds
    the audit chain's key (another subkey)."""

    def __init__(self, server_key: SecretKey) -> None:
        self._wrap = AESGCM(server_key.derive(_WRAP_PURPOSE).reveal())
        self.key_id = server_key.key_id
        self.audit_key = server_key.derive(_AUDIT_PURPOSE).reveal()
        """The audit chain's HMAC key (a subkey of the server key: independent of the
        wrapping key, and useless without the server key to anyone who reads the log)."""

    def new_data_key(self) -> bytes:
        """A fresh 256-bit data key."""
        return secrets.token_bytes(32)

    def wrap(self, data_key: bytes, uid: str) -> bytes:
        """``data_key`` encrypted for dataset ``uid`` (nonce and ciphertext)."""
        nonce = secrets.token_bytes(12)
        return nonce + self._wrap.encrypt(nonce, data_key, uid.encode())

    def unwrap(self, wrapped: bytes | None, uid: str) -> bytes:
        """The data key of dataset ``uid``.

        Raises
        ------
        CustodyError
            The key was destroyed (the dataset is deleted) or the server key differs.
        """
        if wrapped is None:
            raise CustodyError(f"dataset {uid}: its key was destroyed (the raw data is deleted)")
        try:
            return self._wrap.decrypt(wrapped[:12], wrapped[12:], uid.encode())
        except InvalidTag:
            raise CustodyError(
                f"dataset {uid}: its key cannot be unwrapped with this server key (another "
                f"key than the one with id {self.key_id!r} encrypted it)"
            ) from None


def _nonce(prefix: bytes, index: int, last: bool) -> bytes:
    if index >= 1 << 32:
        raise CustodyError("dataset: more than 2^32 chunks (256 TiB) cannot be encrypted")
    return prefix + index.to_bytes(4, "big") + (b"\x01" if last else b"\x00")


class EncryptingWriter:
    """Writes a dataset file encrypted, a chunk at a time (use as a context manager).

    The last chunk is written by :meth:`close`; a writer left without closing leaves a
    file that fails to decrypt (no last chunk).
    """

    def __init__(self, path: Path, data_key: bytes, uid: str) -> None:
        self._aes = AESGCM(data_key)
        self._prefix = secrets.token_bytes(_PREFIX)
        self._header = _MAGIC + self._prefix
        self._aad = self._header + uid.encode()
        self._buffer = bytearray()
        self._index = 0
        self.plain_bytes = 0
        self._file: IO[bytes] = open(path, "xb")  # noqa: SIM115 (closed by close())
        os.chmod(path, 0o600)
        self._file.write(self._header)

    def write(self, data: bytes) -> None:
        """Encrypt ``data`` (buffered to whole chunks)."""
        self._buffer += data
        self.plain_bytes += len(data)
        while len(self._buffer) > CHUNK:
            self._emit(bytes(self._buffer[:CHUNK]), last=False)
            del self._buffer[:CHUNK]

    def _emit(self, plain: bytes, *, last: bool) -> None:
        sealed = self._aes.encrypt(_nonce(self._prefix, self._index, last), plain, self._aad)
        self._file.write(_LENGTH.pack(len(sealed)))
        self._file.write(sealed)
        self._index += 1

    def close(self) -> None:
        """Write the last chunk and close the file."""
        if self._file.closed:
            return
        self._emit(bytes(self._buffer), last=True)
        self._buffer.clear()
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()

    def abort(self) -> None:
        """Close the file without its last chunk (the caller removes it)."""
        self._file.close()

    def __enter__(self) -> EncryptingWriter:
        return self

    def __exit__(self, kind: Any, *rest: Any) -> None:
        if kind is None:
            self.close()
        else:
            self.abort()


class DecryptingReader(io.RawIOBase):
    """Reads an encrypted dataset file as plain bytes, checking every chunk.

    Raises
    ------
    CustodyError
        On read, when a chunk fails its authentication or the file ends before its
        last chunk.
    """

    def __init__(self, path: Path, data_key: bytes, uid: str) -> None:
        super().__init__()
        self._file: IO[bytes] = open(path, "rb")  # noqa: SIM115 (closed by close())
        header = self._file.read(_HEADER)
        if len(header) != _HEADER or not header.startswith(_MAGIC):
            self._file.close()
            raise CustodyError(f"dataset {uid}: not an encrypted dataset file")
        self._aes = AESGCM(data_key)
        self._prefix = header[len(_MAGIC) :]
        self._aad = header + uid.encode()
        self._uid = uid
        self._index = 0
        self._pending = b""
        self._done = False

    def readable(self) -> bool:
        return True

    def _next(self) -> None:
        size_bytes = self._file.read(_LENGTH.size)
        if len(size_bytes) < _LENGTH.size:
            raise CustodyError(f"dataset {self._uid}: the file is truncated (no last chunk)")
        (size,) = _LENGTH.unpack(size_bytes)
        sealed = self._file.read(size)
        if size < _TAG or size > CHUNK + _TAG or len(sealed) != size:
            raise CustodyError(f"dataset {self._uid}: chunk {self._index} is damaged")
        for last in (False, True):
            try:
                plain = self._aes.decrypt(
                    _nonce(self._prefix, self._index, last), sealed, self._aad
                )
            except InvalidTag:
                continue
            self._index += 1
            self._pending = plain
            if last:
                if self._file.read(1):
                    raise CustodyError(f"dataset {self._uid}: data after the last chunk")
                self._done = True
            return
        raise CustodyError(
            f"dataset {self._uid}: chunk {self._index} fails authentication (altered file "
            "or wrong key)"
        )

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        while not self._pending and not self._done:
            self._next()
        n = min(len(view), len(self._pending))
        view[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()
        super().close()
