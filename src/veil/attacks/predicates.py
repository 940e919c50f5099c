"""Predicates over released columns ("age >= 71 and occupation == Farming"), counted in bulk.

Every column of the release and of the attacked frames is turned into integer ranks shared
by all of them (:func:`rank`): the distinct present values in increasing order (a
category's code for categorical columns), -1 for a missing value. A condition is then an
interval of ranks, possibly negated ("!="), and "is missing" is the interval [-1, -1].

A batch of ``q`` predicates of ``m`` conditions each is a few ``(q, m)`` arrays. Counting the
rows that satisfy each predicate runs block by block, each block comparing every row with a
few hundred predicates at once in one subtraction and one unsigned comparison per
condition. A condition other than "is missing" never holds for a missing value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from veil.attacks.encoding import Encoded

__all__ = ["EQ", "GE", "GT", "LE", "LT", "MISSING", "NE", "Predicates", "Ranked", "count", "rank"]

EQ, NE, LT, LE, GT, GE, MISSING = range(7)
_WORDS = ("==", "!=", "<", "<=", ">", ">=", "is missing")
# Cells compared at once: a block of predicates times every row.
_BLOCK_CELLS = 1 << 18
_TOP = np.iinfo(np.int32).max

IntMatrix = npt.NDArray[np.int32]


@dataclass(frozen=True)
class Ranked:
    """Encoded frames as shared integer ranks, one ``(columns, rows)`` matrix per frame.

    Attributes
    ----------
    frames : tuple of numpy.ndarray
        Column-major rank matrices, the release first.
    values : tuple of numpy.ndarray
        For each column, its encoded value at each rank.
    encoded : Encoded
        What the ranks were computed from (for describing predicates).
    """

    frames: tuple[IntMatrix, ...]
    values: tuple[npt.NDArray[np.float64], ...]
    encoded: Encoded


def rank(encoded: Encoded) -> Ranked:
    """Shared ranks of every encoded frame (see the module's notes)."""
    sizes = [f.shape[0] for f in encoded.frames]
    bounds = np.cumsum([0, *sizes])
    stacked = np.concatenate(encoded.frames, axis=0)
    ranks = np.full(stacked.shape[::-1], -1, dtype=np.int32)
    values = []
    for j in range(stacked.shape[1]):
        x = stacked[:, j]
        present = ~np.isnan(x) if encoded.numeric[j] else x >= 0
        distinct, inverse = np.unique(x[present], return_inverse=True)
        ranks[j, present] = inverse
        values.append(distinct)
    frames = tuple(
        np.ascontiguousarray(ranks[:, bounds[i] : bounds[i + 1]]) for i in range(len(sizes))
    )
    return Ranked(frames, tuple(values), encoded)


@dataclass(frozen=True)
class Predicates:
    """``q`` conjunctions of ``m`` conditions: column, operator and value rank of each."""

    columns: npt.NDArray[np.intp]
    operators: npt.NDArray[np.int8]
    ranks: IntMatrix

    def __len__(self) -> int:
        return int(self.columns.shape[0])

    def take(self, keep: npt.NDArray[np.bool_] | npt.NDArray[np.intp]) -> Predicates:
        """The predicates selected by a mask or positions."""
        return Predicates(self.columns[keep], self.operators[keep], self.ranks[keep])

    @staticmethod
    def concat(parts: list[Predicates]) -> Predicates:
        """One batch of several batches with the same number of conditions."""
        return Predicates(
            np.concatenate([p.columns for p in parts]),
            np.concatenate([p.operators for p in parts]),
            np.concatenate([p.ranks for p in parts]),
        )

    def first_unique(self) -> npt.NDArray[np.intp]:
        """Positions of the first occurrence of each distinct predicate, in order.

        Conditions are compared as a set (their order within a predicate does not count).
        """
        order = np.argsort(self.columns, axis=1, kind="stable")
        key = np.concatenate(
            [
                np.take_along_axis(self.columns, order, axis=1),
                np.take_along_axis(self.operators, order, axis=1),
                np.take_along_axis(self.ranks, order, axis=1),
            ],
            axis=1,
        )
        _, first = np.unique(key, axis=0, return_index=True)
        return np.sort(first)

    def intervals(self) -> tuple[IntMatrix, IntMatrix, npt.NDArray[np.bool_]]:
        """Each condition as an interval of ranks ``[low, high]`` and whether it is negated."""
        r, op = self.ranks, self.operators
        low = np.where(
            op == MISSING, -1, np.where((op == EQ) | (op == NE) | (op == GE), r, 0)
        ).astype(np.int32)
        low = np.where(op == GT, r + 1, low).astype(np.int32)
        high = np.where((op == EQ) | (op == NE) | (op == LE) | (op == MISSING), r, _TOP)
        high = np.where(op == LT, r - 1, high).astype(np.int32)
        high = np.where(op == MISSING, -1, high).astype(np.int32)
        return low, high, op == NE

    def describe(self, i: int, ranked: Ranked) -> str:
        """Predicate ``i`` in words, with the values as they read in the data."""
        parts = []
        for column, op, r in zip(self.columns[i], self.operators[i], self.ranks[i], strict=True):
            name = ranked.encoded.columns[int(column)]
            if op == MISSING:
                parts.append(f"{name} is missing")
            else:
                value = ranked.values[int(column)][int(r)]
                text = ranked.encoded.decode(int(column), float(value))
                parts.append(f"{name} {_WORDS[int(op)]} {text}")
        return " and ".join(parts)


def count(frame: IntMatrix, predicates: Predicates) -> npt.NDArray[np.int64]:
    """How many rows of ``frame`` (a column-major rank matrix) satisfy each predicate."""
    n = frame.shape[1]
    out = np.zeros(len(predicates), dtype=np.int64)
    if len(predicates) == 0 or n == 0:
        return out
    low, high, negated = predicates.intervals()
    empty = high < low  # "< the smallest value": no rank reaches _TOP, so it never holds
    low = np.where(empty, _TOP, low).astype(np.int32)
    width = np.where(empty, 0, high.astype(np.int64) - low).astype(np.uint32)
    # Blocks small enough for the processor's cache: each pass over a block stays there.
    block = max(1, _BLOCK_CELLS // n)
    x = np.empty((block, n), dtype=np.int32)
    inside = np.empty((block, n), dtype=bool)
    hold = np.empty((block, n), dtype=bool)
    for start in range(0, len(predicates), block):
        stop = min(start + block, len(predicates))
        b = stop - start
        for slot in range(predicates.columns.shape[1]):
            np.take(frame, predicates.columns[start:stop, slot], axis=0, out=x[:b])
            flip = negated[start:stop, slot]
            present = x[:b][flip] >= 0 if flip.any() else None
            np.subtract(x[:b], low[start:stop, slot, None], out=x[:b])
            np.less_equal(x[:b].view(np.uint32), width[start:stop, slot, None], out=inside[:b])
            if present is not None:
                inside[:b][flip] = ~inside[:b][flip] & present
            if slot == 0:
                hold[:b] = inside[:b]
            else:
                np.logical_and(hold[:b], inside[:b], out=hold[:b])
        out[start:stop] = np.count_nonzero(hold[:b], axis=1)
    return out
