"""Keyed pseudonyms: HMAC-SHA256 of each value under a secret key.

A pseudonym is ``HMAC-SHA256(key, utf8(namespace) + b"|" + utf8(value))`` written as
lowercase hex. Equal values get equal pseudonyms (joins survive); without the key
nobody can compute the mapping, so the dictionary attack that inverts an unkeyed hash
(:func:`veil.masking.hash_reversal`) recovers nothing. The output is still personal
data under the GDPR (Article 4(5)): whoever holds the key can re-link it.

The namespace separates columns: the same value pseudonymized in two namespaces gives
unrelated pseudonyms, so two columns link only when given the same namespace.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from veil.errors import ColumnError, DataTypeError, ParameterError, PrivacyWarning
from veil.frames import MASKING_ATTR, output_frame, record_masking
from veil.masking.keys import SecretKey, as_secret_key

__all__ = [
    "COLLISION_THRESHOLD",
    "MASKING_ATTR",
    "Normalize",
    "collision_probability",
    "pseudonymize",
    "pseudonymize_columns",
]

Normalize = Literal["case", "whitespace", "both"] | None

COLLISION_THRESHOLD = 1e-6
"""Collision probability above which a truncated pseudonym raises a PrivacyWarning."""

"""``attrs`` key under which masking functions record what they did (never a secret)."""

_FULL_HEX = 64
_SPACES = re.compile(r"\s+")


def collision_probability(n_distinct: int, length: int) -> float:
    """Probability that ``n_distinct`` values share at least one pseudonym of ``length`` hex.

    The birthday bound for m values in a space of N = 16^length = 2^(4 length) pseudonyms:
    ``p ≈ 1 - exp(-m^2 / 2^(4 length + 1))`` (that is, ``1 - exp(-m^2 / (2N))``).

    Examples
    --------
    >>> round(collision_probability(10_000, 8), 4)
    0.0116
    >>> collision_probability(1, 8)
    0.0
    """
    if n_distinct < 2:
        return 0.0
    exponent = 2.0 * math.log(n_distinct) - (4 * length + 1) * math.log(2.0)
    return float(-math.expm1(-math.exp(exponent)))


def _check_options(normalize: Any, length: Any, namespace: Any) -> None:
    if normalize not in (None, "case", "whitespace", "both"):
        raise ParameterError(
            f"normalize: must be None, 'case', 'whitespace' or 'both', got {normalize!r}"
        )
    if length is not None and (
        isinstance(length, bool) or not isinstance(length, int) or not 1 <= length <= _FULL_HEX
    ):
        raise ParameterError(
            f"length: must be None (all {_FULL_HEX} hex characters) or an integer from 1 "
            f"to {_FULL_HEX}, got {length!r}"
        )
    if not isinstance(namespace, str) or "|" in namespace:
        raise ParameterError(
            f"namespace: must be a string without '|' (the separator), got {namespace!r}"
        )


def _as_text(value: Any) -> str:
    """The text a value is pseudonymized as; integral floats read as integers.

    A column of integer ids with a missing value is read by pandas as float64, and
    ``1234.0`` must pseudonymize like ``1234`` for joins to hold.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, (bytes, bytearray)):
        raise DataTypeError("values: bytes values are not supported; decode them to str first")
    return str(value)


def _normalized(uniques: Sequence[str], normalize: Normalize) -> list[str]:
    texts = [_as_text(u) for u in uniques]
    if normalize in ("whitespace", "both"):
        texts = [_SPACES.sub(" ", t).strip() for t in texts]
    if normalize in ("case", "both"):
        texts = [t.casefold() for t in texts]
    return texts


def _hmac_hex(texts: list[str], key: SecretKey, namespace: str, length: int | None) -> list[str]:
    # The keyed inner/outer states are computed once; each value costs one copy and
    # two compression-function passes.
    base = key.new_hmac("sha256")
    base.update(namespace.encode("utf-8") + b"|")
    out: list[str] = []
    append = out.append
    for text in texts:
        h = base.copy()
        h.update(text.encode("utf-8"))
        append(h.hexdigest())
    if length is not None and length < _FULL_HEX:
        out = [p[:length] for p in out]
    return out


def _warn_collisions(n_distinct: int, length: int | None, stacklevel: int) -> None:
    if length is None:
        return
    p = collision_probability(n_distinct, length)
    if p > COLLISION_THRESHOLD:
        warnings.warn(
            f"length={length}: {n_distinct} distinct values in {length} hex characters "
            f"collide with probability about {p:.2g} (birthday bound "
            f"1 - exp(-m^2 / 2^(4*length+1))); two people may share a pseudonym. "
            f"Use a longer length (or None for all 64).",
            PrivacyWarning,
            stacklevel=stacklevel,
        )


def _pseudonymize(
    values: Any,
    key: SecretKey,
    normalize: Normalize,
    length: int | None,
    namespace: str,
    stacklevel: int,
) -> tuple[np.ndarray, int]:
    """Pseudonyms for ``values`` as an object array (missing kept) and the distinct count."""
    array = values.to_numpy() if isinstance(values, pd.Series) else values
    codes, uniques = pd.factorize(array, use_na_sentinel=True)
    texts = _normalized(list(uniques), normalize)
    distinct = len(set(texts)) if normalize is not None else len(texts)
    _warn_collisions(distinct, length, stacklevel + 1)
    hashed = np.empty(len(texts) + 1, dtype=object)
    hashed[: len(texts)] = _hmac_hex(texts, key, namespace, length)
    hashed[-1] = None
    out = hashed[np.where(codes < 0, len(texts), codes)]
    missing = codes < 0
    if missing.any():
        # Keep each missing value's own marker (None, NaN, pd.NA).
        out[missing] = np.asarray(array, dtype=object)[missing]
    return out, distinct


def _as_1d(values: Any) -> pd.Series | np.ndarray:
    if isinstance(values, pd.DataFrame):
        raise DataTypeError(
            "values: got a DataFrame; use pseudonymize_columns(df, columns, key) for frames"
        )
    if isinstance(values, pd.Series):
        return values
    if isinstance(values, (str, bytes)):
        raise DataTypeError("values: must be a sequence of values, got a single string")
    array = np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) else values
    if array.ndim != 1:
        raise DataTypeError(f"values: must be one-dimensional, got shape {array.shape}")
    return array


def _record(
    key: SecretKey, normalize: Normalize, length: int | None, namespace: str
) -> dict[str, Any]:
    return {
        "method": "hmac-sha256",
        "key_id": key.key_id,
        "namespace": namespace,
        "normalize": normalize,
        "length": _FULL_HEX if length is None else length,
    }


def pseudonymize(
    values: Any,
    key: SecretKey | bytes,
    *,
    normalize: Normalize = None,
    length: int | None = None,
    namespace: str = "",
    key_id: str | None = None,
) -> Any:
    """Replace each value with its keyed pseudonym, HMAC-SHA256 in hex.

    Guarantee: without the key, the pseudonyms reveal only which records share a value
    (equality), however small the value space; a dictionary attack needs the key.

    Parameters
    ----------
    values : pandas Series, NumPy array or sequence
        The identifiers. Strings are hashed as UTF-8; other values as ``str(value)``,
        with integral floats read as integers (``1234.0`` as ``"1234"``).
    key : SecretKey or bytes
        At least 16 bytes; load it with :meth:`SecretKey.from_file` or
        :meth:`SecretKey.from_env`.
    normalize : {None, "case", "whitespace", "both"}, default None
        Applied before hashing: ``"case"`` case-folds, ``"whitespace"`` strips and
        collapses runs of whitespace to one space, ``"both"`` does both, so that
        ``" Ann  Lee"`` and ``"ann lee"`` share a pseudonym.
    length : int, optional
        Keep the first ``length`` hex characters (1 to 64; default all 64). A
        :class:`~veil.errors.PrivacyWarning` is raised when the birthday bound
        ``1 - exp(-m^2 / 2^(4 length + 1))`` for the ``m`` distinct values exceeds 1e-6
        (see :func:`collision_probability`).
    namespace : str, default ""
        Hashed before the value (``namespace|value``), so that equal values in different
        namespaces get unrelated pseudonyms. Must not contain ``"|"``.
    key_id : str, optional
        If given, the key's id must equal it (guards against a wrong key file).

    Returns
    -------
    pandas Series or NumPy object array
        A Series (same index and name) for a Series, an object array otherwise;
        missing values stay missing. The Series' ``attrs["veil.masking"]`` records the
        method, key id, namespace, normalisation and length, never the key.

    Examples
    --------
    >>> key = SecretKey(bytes(range(32)))
    >>> pseudonymize(["0420", "0420", None], key, length=12)
    array(['01d4dcfa6cee', '01d4dcfa6cee', None], dtype=object)
    """
    secret = as_secret_key(key)
    if key_id is not None:
        secret.require_id(key_id)
    _check_options(normalize, length, namespace)
    column = _as_1d(values)
    out, _ = _pseudonymize(column, secret, normalize, length, namespace, stacklevel=3)
    if isinstance(column, pd.Series):
        result = pd.Series(out, index=column.index, name=column.name, dtype=object)
        result.attrs = {
            **column.attrs,
            MASKING_ATTR: [_record(secret, normalize, length, namespace)],
        }
        return result
    return out


def pseudonymize_columns(
    df: pd.DataFrame,
    columns: str | Sequence[str],
    key: SecretKey | bytes,
    *,
    normalize: Normalize = None,
    length: int | None = None,
    namespace: str | Mapping[str, str] | None = None,
    key_id: str | None = None,
) -> pd.DataFrame:
    """A new frame with ``columns`` replaced by keyed pseudonyms (``df`` is not changed).

    By default each column is its own namespace (its name), so the same value in two
    columns gets unrelated pseudonyms. Pass one ``namespace`` string to make all the
    columns link, or a mapping column -> namespace to choose per column. The other
    parameters are those of :func:`pseudonymize`. ``attrs["veil.masking"]`` lists one
    record per column (method, key id, namespace, length), never the key.

    Examples
    --------
    >>> key = SecretKey(bytes(range(32)))
    >>> df = pd.DataFrame({"a": ["x"], "b": ["x"]})
    >>> out = pseudonymize_columns(df, ["a", "b"], key, length=8)
    >>> bool(out.loc[0, "a"] == out.loc[0, "b"])
    False
    """
    if not isinstance(df, pd.DataFrame):
        raise DataTypeError(f"df: expected a pandas DataFrame, got {type(df).__name__}")
    secret = as_secret_key(key)
    if key_id is not None:
        secret.require_id(key_id)
    names = [columns] if isinstance(columns, str) else list(columns)
    missing = [c for c in names if c not in df.columns]
    if missing:
        raise ColumnError(
            f"columns: {missing} not in the dataframe (columns: {list(df.columns)[:20]})"
        )
    spaces = {
        c: (
            c
            if namespace is None
            else namespace
            if isinstance(namespace, str)
            else namespace.get(c, c)
        )
        for c in names
    }
    for c in names:
        _check_options(normalize, length, str(spaces[c]))
    # Compute every column before touching the output, so an error writes nothing.
    results = {
        c: _pseudonymize(df[c], secret, normalize, length, str(spaces[c]), stacklevel=3)[0]
        for c in names
    }
    out = output_frame(df)
    for c, pseudonyms in results.items():
        out[c] = pd.Series(pseudonyms, index=df.index, dtype=object)
    record_masking(
        out,
        df,
        [{"column": c, **_record(secret, normalize, length, str(spaces[c]))} for c in names],
    )
    return out
