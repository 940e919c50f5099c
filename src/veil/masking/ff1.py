"""Format-preserving encryption with FF1 (NIST SP 800-38G).

:class:`FF1` encrypts a string over an alphabet (2 to 65,536 distinct symbols) to a
string of the same length over the same alphabet, under an AES-128/192/256 key and an
optional tweak. The cipher itself is `libffx <https://pypi.org/project/libffx/>`_ (pure
Python on pyca ``cryptography``), pinned in ``pyproject.toml`` and checked in the test
suite against all nine NIST FF1 samples and NIST ACVP AES-FF1 vectors. This module
validates every parameter up front so that errors are veil's own
:class:`~veil.errors.ParameterError` and never carry the key or the text.

Example:
    >>> from veil.masking.ff1 import FF1
    >>> fpe = FF1(bytes.fromhex("2b7e151628aed2a6abf7158809cf4f3c"), "0123456789")
    >>> fpe.encrypt("0123456789")
    '2433477484'
    >>> fpe.decrypt("2433477484")
    '0123456789'
    >>> fpe
    FF1(alphabet='0123456789', radix=10, key=<AES-128, hidden>)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from veil.errors import DataTypeError, MissingValueError, ParameterError
from veil.masking.keys import SecretKey

__all__ = ["FF1", "MAX_RADIX", "MAX_TWEAK_BYTES", "MIN_DOMAIN", "MIN_RADIX"]

#: Smallest alphabet (radix) FF1 allows.
MIN_RADIX = 2
#: Largest alphabet (radix) FF1 allows (SP 800-38G: radix <= 2**16).
MAX_RADIX = 65_536
#: Smallest domain radix**length a text may have (SP 800-38G Rev. 1 draft: 1,000,000).
MIN_DOMAIN = 1_000_000
#: Longest tweak accepted, in bytes (the ``maxTlen`` SP 800-38G asks implementations to
#: fix; NIST ACVP tests tweaks of up to 16 bytes).
MAX_TWEAK_BYTES = 256
#: Longest text accepted (SP 800-38G: maxlen <= 2**32).
_MAX_LENGTH = 2**32

_KEY_LENGTHS = (16, 24, 32)
_REPR_ALPHABET_CHARS = 40


def _min_length(radix: int) -> int:
    """The smallest n >= 2 with radix**n >= MIN_DOMAIN (exact integer arithmetic)."""
    n = 2
    while radix**n < MIN_DOMAIN:
        n += 1
    return n


def _ffx() -> Any:
    """The libffx module, imported on first use (it comes with the ``masking`` extra)."""
    try:
        import ffx  # type: ignore[import-untyped]  # libffx ships no type information
    except ImportError as exc:  # pragma: no cover - exercised without the extra
        raise ImportError("veil.masking.FF1 needs libffx: pip install 'veil[masking]'") from exc
    return ffx


class FF1:
    """FF1 format-preserving encryption (NIST SP 800-38G) over an alphabet.

    Args:
        key: the AES key, 16, 24 or 32 bytes (AES-128, -192, -256). It is kept only
            inside the cipher object and never appears in a repr, a message or a pickle.
        alphabet: the symbols of the text, 2 to 65,536 distinct characters; a symbol's
            position is its numeral (``"0123456789"`` is radix 10 with the usual digits,
            ``"0123456789abcdefghijklmnopqrstuvwxyz"`` radix 36 as in the NIST samples).

    A text must be at least :attr:`min_length` symbols long, so that the domain
    ``radix**length`` is at least 1,000,000. A tweak is public, non-secret data of up to
    :data:`MAX_TWEAK_BYTES` bytes (for instance a column name) that changes the
    permutation; decrypt with the same tweak as was used to encrypt.

    Errors are :class:`~veil.errors.ParameterError` (a ``ValueError``) naming the
    parameter; a text is described by its length and the position of an offending
    character, never echoed. Instances hold no per-call state and can be shared between
    threads. They cannot be pickled or copied, which would write the key out.

    Example:
        >>> fpe = FF1(bytes(range(32)), "abcdefghijklmnopqrstuvwxyz")
        >>> secret = fpe.encrypt("helloworld", tweak=b"col:name")
        >>> len(secret), fpe.decrypt(secret, tweak=b"col:name")
        (10, 'helloworld')
    """

    __slots__ = ("_alphabet", "_cipher", "_key_bits", "_min_length", "_radix")

    def __init__(self, key: bytes | SecretKey, alphabet: str) -> None:
        if isinstance(key, SecretKey):
            key = key.reveal()
        if not isinstance(key, (bytes, bytearray, memoryview)):
            raise DataTypeError(f"key must be bytes or a SecretKey, got {type(key).__name__}")
        key_bytes = bytes(key)
        if len(key_bytes) not in _KEY_LENGTHS:
            raise ParameterError(
                f"key must be 16, 24 or 32 bytes (AES-128/192/256), got {len(key_bytes)} bytes"
            )
        if not isinstance(alphabet, str):
            raise DataTypeError(f"alphabet must be a str, got {type(alphabet).__name__}")
        radix = len(alphabet)
        if not MIN_RADIX <= radix <= MAX_RADIX:
            raise ParameterError(
                f"alphabet must have {MIN_RADIX} to {MAX_RADIX} symbols, got {radix}"
            )
        if len(set(alphabet)) != radix:
            raise ParameterError(
                f"alphabet has repeated symbols (the first repeat is at position"
                f" {_first_repeat(alphabet)}); each symbol must appear once"
            )
        self._alphabet = alphabet
        self._radix = radix
        self._min_length = _min_length(radix)
        self._key_bits = 8 * len(key_bytes)
        try:
            self._cipher: Any = _ffx().FF1(key_bytes, alphabet=alphabet)
        except _ffx().FFXError:  # pragma: no cover - every input was checked above
            raise ParameterError("key or alphabet rejected by the FF1 cipher") from None

    # -- properties ---------------------------------------------------------------------

    @property
    def alphabet(self) -> str:
        """The alphabet; a symbol's position is its numeral."""
        return self._alphabet

    @property
    def radix(self) -> int:
        """The number of symbols in the alphabet."""
        return self._radix

    @property
    def min_length(self) -> int:
        """The shortest text accepted: the least n >= 2 with radix**n >= 1,000,000."""
        return self._min_length

    @property
    def key_bits(self) -> int:
        """The AES key size in bits (128, 192 or 256); the key itself is not exposed."""
        return self._key_bits

    def __repr__(self) -> str:
        shown = self._alphabet[:_REPR_ALPHABET_CHARS]
        more = "..." if self._radix > _REPR_ALPHABET_CHARS else ""
        return (
            f"FF1(alphabet={shown!r}{more}, radix={self._radix}, "
            f"key=<AES-{self._key_bits}, hidden>)"
        )

    def __reduce__(self) -> Any:
        raise TypeError("FF1 objects cannot be pickled or copied: that would write out the key")

    # -- one text -----------------------------------------------------------------------

    def encrypt(self, text: str, tweak: bytes = b"") -> str:
        """Encrypt ``text`` (symbols of the alphabet) to a text of the same length."""
        return self._run(self._cipher.encrypt, text, _check_tweak(tweak), "text")

    def decrypt(self, text: str, tweak: bytes = b"") -> str:
        """Decrypt ``text`` produced by :meth:`encrypt` with the same key and tweak."""
        return self._run(self._cipher.decrypt, text, _check_tweak(tweak), "text")

    # -- many texts ---------------------------------------------------------------------

    def encrypt_many(
        self,
        values: Iterable[Any],
        tweak: bytes = b"",
        *,
        missing: Literal["error", "keep"] = "error",
    ) -> Any:
        """Encrypt every text of a list, a NumPy array or a pandas Series.

        Returns the same kind of container: a list for a list (or any other iterable), a
        NumPy array of the same shape for an array (``object`` dtype, or the same fixed
        width ``str`` dtype), a Series with the same index and name for a Series.
        ``missing="keep"`` passes missing values (``None``, ``NaN``, ``pd.NA``) through;
        the default ``"error"`` raises :class:`~veil.errors.MissingValueError`.
        """
        return self._many(self._cipher.encrypt, values, tweak, missing)

    def decrypt_many(
        self,
        values: Iterable[Any],
        tweak: bytes = b"",
        *,
        missing: Literal["error", "keep"] = "error",
    ) -> Any:
        """Decrypt every text of a list, a NumPy array or a pandas Series (see
        :meth:`encrypt_many`)."""
        return self._many(self._cipher.decrypt, values, tweak, missing)

    # -- internals ----------------------------------------------------------------------

    def _run(self, op: Any, text: object, tweak: bytes, name: str) -> str:
        if not isinstance(text, str):
            raise DataTypeError(f"{name} must be a str, got {type(text).__name__}")
        n = len(text)
        if n < self._min_length:
            raise ParameterError(
                f"{name} has length {n}; over an alphabet of {self._radix} symbols FF1 needs"
                f" at least {self._min_length} (radix**length >= {MIN_DOMAIN:,})"
            )
        if n >= _MAX_LENGTH:
            raise ParameterError(f"{name} has length {n}; FF1 allows fewer than 2**32 symbols")
        try:
            out: str = op(text, tweak=tweak)
        except _ffx().AlphabetError:
            raise self._alphabet_error(text, name) from None
        except _ffx().FFXError:  # pragma: no cover - every input was checked above
            raise ParameterError(f"{name} rejected by the FF1 cipher") from None
        return out

    def _alphabet_error(self, text: str, name: str) -> ParameterError:
        symbols = set(self._alphabet)
        position = next(i for i, ch in enumerate(text) if ch not in symbols)
        return ParameterError(
            f"{name} (length {len(text)}) has a character outside the alphabet at position"
            f" {position}"
        )

    def _many(self, op: Any, values: Iterable[Any], tweak: bytes, missing: str) -> Any:
        if missing not in ("error", "keep"):
            raise ParameterError(f"missing must be 'error' or 'keep', got {missing!r}")
        tweak = _check_tweak(tweak)
        if isinstance(values, (str, bytes)):
            raise DataTypeError(
                "values must be a list, array or Series of texts; for one text use"
                " encrypt()/decrypt()"
            )
        if isinstance(values, pd.Series):
            out = self._loop(op, values.tolist(), tweak, missing)
            return pd.Series(out, index=values.index, name=values.name, dtype=values.dtype)
        if isinstance(values, np.ndarray):
            flat = self._loop(op, values.ravel().tolist(), tweak, missing)
            dtype = values.dtype if values.dtype.kind == "U" else np.dtype(object)
            result = np.empty(values.shape, dtype=dtype)
            result.ravel()[:] = flat if dtype.kind == "U" else _object_array(flat)
            return result
        return self._loop(op, values, tweak, missing)

    def _loop(self, op: Any, values: Iterable[Any], tweak: bytes, missing: str) -> list[Any]:
        # One cipher object (one AES key schedule) for the whole batch; the fast path only
        # checks the length, the cipher itself rejects symbols outside the alphabet.
        min_length = self._min_length
        out: list[Any] = []
        append = out.append
        for i, value in enumerate(values):
            if type(value) is str and len(value) >= min_length:
                try:
                    append(op(value, tweak=tweak))
                    continue
                except _ffx().FFXError:
                    pass
            if not isinstance(value, str) and _is_missing(value):
                if missing == "keep":
                    append(value)
                    continue
                raise MissingValueError(
                    f"values[{i}] is missing; pass missing='keep' to leave missing values as"
                    " they are"
                )
            append(self._run(op, value, tweak, f"values[{i}]"))
        return out


def _check_tweak(tweak: object) -> bytes:
    if not isinstance(tweak, (bytes, bytearray, memoryview)):
        raise DataTypeError(f"tweak must be bytes, got {type(tweak).__name__}")
    tweak_bytes = bytes(tweak)
    if len(tweak_bytes) > MAX_TWEAK_BYTES:
        raise ParameterError(
            f"tweak is {len(tweak_bytes)} bytes long; at most {MAX_TWEAK_BYTES} are allowed"
        )
    return tweak_bytes


def _first_repeat(alphabet: str) -> int:
    seen: set[str] = set()
    for i, ch in enumerate(alphabet):
        if ch in seen:
            return i
        seen.add(ch)
    return -1  # pragma: no cover - only called when there is a repeat


def _is_missing(value: object) -> bool:
    if value is None:
        return True
    try:
        return bool(pd.isna(value))  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return False


def _object_array(items: Sequence[Any]) -> np.ndarray[Any, np.dtype[np.object_]]:
    arr = np.empty(len(items), dtype=object)
    arr[:] = items
    return arr
