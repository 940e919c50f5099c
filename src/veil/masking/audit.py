"""Dictionary attack on hashed identifier columns: how much of an unkeyed hash falls.

An unkeyed hash of an identifier (SHA-256 of a PIN, MD5 of a phone number) is not a
pseudonym: identifier spaces are small enough to enumerate, and whoever hashes every
candidate inverts the column by lookup. :func:`hash_reversal` mounts that attack: it
hashes a described candidate space with common unkeyed hashes (MD5, SHA-1, SHA-256,
their truncations, hex or base64), detects which one the column uses, and reports the
fraction of values recovered and the time it took. A keyed pseudonym
(:func:`veil.masking.pseudonymize`) recovers nothing.

The attack streams the candidates in chunks and matches them against the column's
distinct hashes, so its memory is that of the column, not of the candidate space. Its
cost, one hash per candidate and algorithm, is the attacker's cost; the report states it.
"""

from __future__ import annotations

import base64
import hashlib
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from veil.errors import DataTypeError, ParameterError

__all__ = [
    "CandidateSpace",
    "HashReversalReport",
    "digits",
    "hash_reversal",
    "phone_numbers",
]

Encoding = Literal["hex", "base64"]

_CHUNK = 1 << 16


@dataclass(frozen=True)
class CandidateSpace:
    """A described set of candidate identifiers, generated in chunks of NumPy strings.

    Build one with :func:`digits` or :func:`phone_numbers`; any iterable of strings is
    also accepted by :func:`hash_reversal`.
    """

    description: str
    size: int
    _generate: Any = field(repr=False, compare=False)

    def chunks(self, chunk_size: int = _CHUNK) -> Iterator[np.ndarray]:
        """The candidates, ``chunk_size`` at a time, as NumPy unicode arrays."""
        for start in range(0, self.size, chunk_size):
            yield self._generate(start, min(start + chunk_size, self.size))


def _check_limit(limit: Any, total: int) -> int:
    if limit is None:
        return total
    if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 1:
        raise ParameterError(f"limit: must be None or an integer >= 1, got {limit!r}")
    return min(int(limit), total)


def digits(n: int, *, limit: int | None = None) -> CandidateSpace:
    """All ``n``-digit strings, ``"00...0"`` to ``"99...9"`` (10^n candidates).

    ``limit`` keeps only the first ``limit`` of them.

    Examples
    --------
    >>> space = digits(4)
    >>> space.size, next(space.chunks())[[0, -1]].tolist()
    (10000, ['0000', '9999'])
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= 18:
        raise ParameterError(f"n: must be an integer from 1 to 18, got {n!r}")
    width = int(n)
    size = _check_limit(limit, 10**width)

    def generate(start: int, stop: int) -> np.ndarray:
        return np.char.zfill(np.arange(start, stop, dtype=np.int64).astype(f"U{width}"), width)

    return CandidateSpace(f"{width}-digit strings", size, generate)


def phone_numbers(pattern: str, *, limit: int | None = None) -> CandidateSpace:
    """Every string matching ``pattern``, where each ``#`` is a digit: ``"###-###-####"``.

    Other characters are kept as they are. The space has 10^(number of #) candidates,
    often too many to enumerate: ``limit`` keeps the first ``limit``.

    Examples
    --------
    >>> next(phone_numbers("(555) ###-##", limit=2).chunks()).tolist()
    ['(555) 000-00', '(555) 000-01']
    """
    if not isinstance(pattern, str) or "#" not in pattern:
        raise ParameterError(f"pattern: must be a string with '#' for each digit, got {pattern!r}")
    slots = np.array([i for i, ch in enumerate(pattern) if ch == "#"])
    k = slots.size
    if k > 18:
        raise ParameterError(f"pattern: at most 18 '#' digits, got {k}")
    size = _check_limit(limit, 10**k)
    template = np.array(list(pattern), dtype="U1")

    def generate(start: int, stop: int) -> np.ndarray:
        numbers = np.char.zfill(np.arange(start, stop, dtype=np.int64).astype(f"U{k}"), k)
        chars = np.broadcast_to(template, (stop - start, template.size)).copy()
        chars[:, slots] = numbers.view("U1").reshape(stop - start, k)
        return chars.view(f"U{template.size}").ravel()

    return CandidateSpace(f"pattern {pattern!r}", size, generate)


def _list_space(candidates: Iterable[Any]) -> CandidateSpace:
    items = np.array([str(c) for c in candidates], dtype=str)
    if items.size == 0:
        raise ParameterError("candidates: the candidate list is empty")
    return CandidateSpace(
        f"list of {items.size} candidates", int(items.size), lambda a, b: items[a:b]
    )


@dataclass(frozen=True)
class HashReversalReport:
    """What a dictionary attack on a hashed column recovered.

    ``recovered`` maps the recovered rows (the input's index) to their plaintext; it is
    kept in this object only and left out of its ``repr``, so printing or logging a
    report shows the figures, not the identifiers.
    """

    algorithm: str | None
    truncation: int | None
    encoding: str | None
    salt_position: str | None
    recovered_fraction: float
    n_recovered: int
    n: int
    candidates_tried: int
    candidate_space: str
    seconds: float
    attempts: tuple[tuple[str, int | None, str, str | None, int], ...] = field(repr=False)
    recovered: pd.Series = field(repr=False, compare=False)

    def summary(self) -> str:
        """One line for a report: the hash detected, the fraction recovered, the time."""
        if self.algorithm is None:
            return (
                f"no value recovered from {self.n} hashes with {self.candidates_tried} "
                f"candidates ({self.candidate_space}) in {self.seconds:.3g} s"
            )
        trunc = "" if self.truncation is None else f" truncated to {self.truncation}"
        return (
            f"{self.algorithm} ({self.encoding}{trunc}): recovered {self.n_recovered} of "
            f"{self.n} values ({self.recovered_fraction:.1%}) with {self.candidates_tried} "
            f"candidates ({self.candidate_space}) in {self.seconds:.3g} s"
        )


def _check_algorithms(algorithms: Any) -> tuple[str, ...]:
    names = (algorithms,) if isinstance(algorithms, str) else tuple(algorithms)
    if not names:
        raise ParameterError("algorithms: give at least one hash algorithm")
    for name in names:
        if name not in hashlib.algorithms_available or name.startswith("shake"):
            raise ParameterError(
                f"algorithms: {name!r} is not an available fixed-length hashlib algorithm "
                f"(for example 'md5', 'sha1', 'sha256')"
            )
    return names


def _check_encodings(encodings: Any) -> tuple[Encoding, ...]:
    names = (encodings,) if isinstance(encodings, str) else tuple(encodings)
    for name in names:
        if name not in ("hex", "base64"):
            raise ParameterError(f"encodings: each must be 'hex' or 'base64', got {name!r}")
    if not names:
        raise ParameterError("encodings: give at least one of 'hex', 'base64'")
    return names


def _encoded_length(algorithm: str, encoding: Encoding) -> int:
    size = hashlib.new(algorithm).digest_size
    return 2 * size if encoding == "hex" else 4 * -(-size // 3)


def _truncations(
    truncations: Sequence[int] | None, observed: set[int], full: int
) -> list[int | None]:
    """``None`` (no truncation) first, then the lengths to try below ``full``."""
    if truncations is None:
        chosen = sorted(n for n in observed if n < full)
    else:
        for t in truncations:
            if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or t < 1:
                raise ParameterError(f"truncations: each must be an integer >= 1, got {t!r}")
        chosen = sorted({int(t) for t in truncations if t < full})
    return [None, *chosen]


def _salted(chunk: np.ndarray, salt: bytes, position: str | None) -> list[bytes]:
    encoded: list[bytes] = np.char.encode(chunk, "utf-8").tolist()
    if position == "prefix":
        return [salt + c for c in encoded]
    if position == "suffix":
        return [c + salt for c in encoded]
    return encoded


def _digests(algorithm: str, messages: list[bytes], encoding: Encoding) -> np.ndarray:
    constructor = getattr(hashlib, algorithm, None)
    if encoding == "hex":
        if constructor is not None:
            return np.array([constructor(m).hexdigest() for m in messages])
        return np.array([hashlib.new(algorithm, m).hexdigest() for m in messages])
    return np.array(
        [base64.b64encode(hashlib.new(algorithm, m).digest()).decode("ascii") for m in messages]
    )


def hash_reversal(
    values: Any,
    candidates: CandidateSpace | Iterable[Any],
    *,
    algorithms: str | Sequence[str] = ("md5", "sha1", "sha256"),
    truncations: Sequence[int] | None = None,
    encodings: Encoding | Sequence[Encoding] = ("hex",),
    salt: str | bytes | None = None,
) -> HashReversalReport:
    """Invert a column of unkeyed hashes by hashing every candidate identifier.

    Each combination of algorithm, encoding, truncation (and salt position, when a
    ``salt`` is known) is tried; the report is that of the combination that recovers
    most values, which is the one the column was most likely hashed with.

    Parameters
    ----------
    values : pandas Series, NumPy array or sequence of str
        The hashed column. Hex hashes are compared case-insensitively; missing values
        are left out of ``n``.
    candidates : CandidateSpace or iterable
        The identifiers the attacker believes possible: :func:`digits`,
        :func:`phone_numbers`, or any list of strings. Candidates are hashed as UTF-8.
    algorithms : str or sequence of str, default ("md5", "sha1", "sha256")
        :mod:`hashlib` algorithm names.
    truncations : sequence of int, optional
        Prefix lengths (in encoded characters) to try besides the full hash. By default
        the lengths seen in the column.
    encodings : {"hex", "base64"} or sequence of them, default ("hex",)
        How the digests are written in the column.
    salt : str or bytes, optional
        A known salt (a salt stored with the data is known to the attacker); tried both
        before and after the identifier.

    Returns
    -------
    HashReversalReport
        The detected hash, the fraction and number recovered, the candidates tried and
        the seconds the attack took; ``report.recovered`` maps rows to plaintexts.

    Examples
    --------
    >>> import hashlib
    >>> pins = ["0420", "1234", "9999"]
    >>> hashed = [hashlib.sha256(p.encode()).hexdigest()[:16] for p in pins]
    >>> report = hash_reversal(hashed, digits(4))
    >>> report.algorithm, report.truncation, report.recovered_fraction
    ('sha256', 16, 1.0)
    >>> report.recovered.tolist()
    ['0420', '1234', '9999']
    """
    names = _check_algorithms(algorithms)
    codecs = _check_encodings(encodings)
    salt_bytes = salt.encode("utf-8") if isinstance(salt, str) else salt
    if salt_bytes is not None and not isinstance(salt_bytes, bytes):
        raise ParameterError(f"salt: must be None, str or bytes, got {type(salt).__name__}")
    positions: list[str | None] = ["prefix", "suffix"] if salt_bytes else [None]
    space = candidates if isinstance(candidates, CandidateSpace) else _list_space(candidates)

    if isinstance(values, pd.DataFrame):
        raise DataTypeError("values: got a DataFrame; pass the hashed column (a Series)")
    column = (
        values if isinstance(values, pd.Series) else pd.Series(np.asarray(values, dtype=object))
    )
    present = column[column.notna()].astype(str).str.strip()
    n = int(present.size)
    targets = {
        enc: pd.Index(present.str.lower() if enc == "hex" else present).unique() for enc in codecs
    }
    observed = {int(x) for x in present.str.len().unique()} if n else set()

    configs = [
        (alg, enc, trunc, pos)
        for alg in names
        for enc in codecs
        for trunc in _truncations(truncations, observed, _encoded_length(alg, enc))
        for pos in positions
    ]
    found: dict[tuple[str, Encoding, int | None, str | None], dict[str, str]] = {
        c: {} for c in configs
    }

    start = time.perf_counter()
    tried = 0
    for chunk in space.chunks():
        tried += int(chunk.size)
        for pos in positions:
            messages = _salted(chunk, salt_bytes or b"", pos)
            for alg in names:
                for enc in codecs:
                    full = _digests(alg, messages, enc)
                    index = targets[enc]
                    for trunc in _truncations(truncations, observed, _encoded_length(alg, enc)):
                        hashes = full if trunc is None else full.astype(f"U{trunc}")
                        hits = np.flatnonzero(pd.Index(hashes).isin(index))
                        table = found[(alg, enc, trunc, pos)]
                        for i in hits:
                            table.setdefault(str(hashes[i]), str(chunk[i]))
        if n and any(len(t) == targets[c[1]].size for c, t in found.items()):
            break
    seconds = time.perf_counter() - start

    best: tuple[str, Encoding, int | None, str | None] | None = None
    best_series = pd.Series([], index=column.index[:0], dtype=object)
    best_count = 0
    counts = []
    for config in configs:
        table = found[config]
        keys = present.str.lower() if config[1] == "hex" else present
        plain = keys.map(table) if table else pd.Series(np.nan, index=present.index)
        hit = plain.notna()
        count = int(hit.sum())
        counts.append(count)
        if count > best_count:
            best, best_count, best_series = config, count, plain[hit].astype(object)
    attempts = tuple(
        (alg, trunc, enc, pos, c) for (alg, enc, trunc, pos), c in zip(configs, counts, strict=True)
    )
    return HashReversalReport(
        algorithm=None if best is None else best[0],
        truncation=None if best is None else best[2],
        encoding=None if best is None else best[1],
        salt_position=None if best is None else best[3],
        recovered_fraction=best_count / n if n else 0.0,
        n_recovered=best_count,
        n=n,
        candidates_tried=tried,
        candidate_space=space.description,
        seconds=seconds,
        attempts=attempts,
        recovered=best_series,
    )
