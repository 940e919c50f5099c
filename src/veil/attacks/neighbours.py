"""Nearest released rows to each target, by a Gower-type distance over mixed columns.

The distance between two encoded rows (:mod:`veil.attacks.encoding`) adds, column by
column, the absolute difference of two numbers (each column scaled to a range of 1; a
missing number differs by 1 from everything) or 1 for two different categories (Gower,
"A general coefficient of similarity and some of its properties", Biometrics 1971; the
distance of Giomi et al. 2023). The search is exact and brute force, in blocks of targets
against every released row, so that memory stays near 16 MB whatever the sizes.

Ties are broken uniformly at random: the released rows are put in an order drawn from the
caller's generator before each search, and the first of the tied rows in that order wins.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["agreement", "nearest"]

FloatMatrix = npt.NDArray[np.float64]
IntMatrix = npt.NDArray[np.intp]
# Distances held at once: a block of targets times every released row (float32).
_BLOCK_CELLS = 1 << 18


def _distances(
    queries: npt.NDArray[np.float32],
    base: npt.NDArray[np.float32],
    numeric: npt.NDArray[np.bool_],
    out: npt.NDArray[np.float32],
    scratch: npt.NDArray[np.float32],
    mismatches: npt.NDArray[np.uint8],
) -> None:
    """Gower distances of ``queries`` to every row of ``base``, into ``out``.

    Category mismatches are counted in bytes (a quarter of the memory traffic of floats)
    and added to the numbers' distances once at the end.
    """
    out.fill(0.0)
    mismatches.fill(0)
    categories = 0
    for j in range(base.shape[1]):
        q = queries[:, j, None]
        b = base[None, :, j]
        if numeric[j]:
            np.subtract(q, b, out=scratch)
            np.abs(scratch, out=scratch)
            np.fmin(scratch, 1.0, out=scratch)  # a missing number (NaN) differs by 1
            out += scratch
        else:
            np.add(mismatches, q != b, out=mismatches)
            categories += 1
            if categories == 255:  # a byte counts up to 255 mismatches
                out += mismatches
                mismatches.fill(0)
                categories = 0
    if categories:
        out += mismatches


def nearest(
    queries: FloatMatrix,
    base: FloatMatrix,
    numeric: npt.NDArray[np.bool_],
    rng: np.random.Generator,
    *,
    k: int = 1,
) -> tuple[IntMatrix, npt.NDArray[np.float32]]:
    """The ``k`` rows of ``base`` nearest to each row of ``queries``.

    Parameters
    ----------
    queries, base : numpy.ndarray
        Encoded rows (same columns, same encoding).
    numeric : numpy.ndarray of bool
        Which columns are numbers.
    rng : numpy.random.Generator
        Breaks ties (see the module's notes).
    k : int, default 1

    Returns
    -------
    (indices, distances)
        Both of shape ``(len(queries), k)``, nearest first; indices into ``base``.
    """
    n = base.shape[0]
    k = min(k, n)
    order = rng.permutation(n)
    shuffled = np.ascontiguousarray(base[order], dtype=np.float32)
    targets = np.asarray(queries, dtype=np.float32)
    block = max(1, min(len(targets), _BLOCK_CELLS // max(n, 1)))
    out = np.empty((block, n), dtype=np.float32)
    scratch = np.empty((block, n), dtype=np.float32)
    mismatches = np.empty((block, n), dtype=np.uint8)
    indices = np.empty((len(targets), k), dtype=np.intp)
    distances = np.empty((len(targets), k), dtype=np.float32)
    for start in range(0, len(targets), block):
        stop = min(start + block, len(targets))
        d = out[: stop - start]
        _distances(
            targets[start:stop],
            shuffled,
            numeric,
            d,
            scratch[: stop - start],
            mismatches[: stop - start],
        )
        if k == 1:
            best = np.argmin(d, axis=1)[:, None]
        else:
            best = np.argpartition(d, k - 1, axis=1)[:, :k]
            ranked = np.argsort(np.take_along_axis(d, best, axis=1), axis=1, kind="stable")
            best = np.take_along_axis(best, ranked, axis=1)
        indices[start:stop] = order[best]
        distances[start:stop] = np.take_along_axis(d, best, axis=1)
    return indices, distances


def agreement(
    queries: FloatMatrix, rows: FloatMatrix, numeric: npt.NDArray[np.bool_]
) -> npt.NDArray[np.bool_]:
    """Which columns of each target equal those of the row matched to it (same shape)."""
    same = queries == rows
    both_missing = np.isnan(queries) & np.isnan(rows)
    return np.asarray(same | (both_missing & numeric[None, :]), dtype=bool)
