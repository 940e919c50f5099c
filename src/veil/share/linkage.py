"""OptimShare's residual linkage: can an attacker who knows Q find a record's own row?

The threat model of the paper (Section 3.3, "Privacy analysis", Definition 2): the
attacker knows every record's Q exactly (it is published) and its original S. Records
with identical released Q form a *similarity group*; within its group, the attacker
links a record to the released row whose S is the most cosine-similar to the record's
original S. The record is *linkable* when that row is its own perturbed row.

Readings veil makes (the paper's definition writes the inequality the other way round,
which would make the least similar row the link):

* a record is linkable when the cosine similarity of its original S to its own
  perturbed S is at least the largest similarity to any perturbed S in its group; a tie
  counts as linkable (the worst case for the record);
* a record alone in its group is always linkable (its Q already singles it out);
* S is encoded one-hot (categories) and scaled by the public bounds (numbers), see
  :mod:`veil.share.encoding`; a zero vector has similarity 0 to everything;
* ``L`` is the *fraction* of linkable records, and the normalized residual leak is
  ``P_N = min(1, ε L / T_ε)`` (the paper's "ε L / T_ε if T_ε > ε L, 1 otherwise").

The computation is group-wise matrix products: groups of the same size are stacked and
multiplied in batches, a large group in row blocks, so that memory stays within
``block_cells`` similarities whatever the group sizes; no Python loop runs over
records.

No privacy guarantee comes from this measure: it reads the original S, and is for the
custodian's choice among candidates (the paper's Theorem 3.2, which derives a DP
guarantee from it, is not claimed by veil).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.classes import class_ids
from veil.errors import ParameterError

__all__ = ["linkable_records", "normalized_leak", "similarity_groups"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

_TIE = 1e-9  # similarities closer than this count as equal (a tie is linkable)
_BLOCK_CELLS = 1 << 22  # similarities held at once (32 MiB of float64)
_BLOCK_ROWS = 1 << 16  # records gathered at once for stacked small groups


def similarity_groups(frame: pd.DataFrame, q: Sequence[str]) -> IntArray:
    """Group id of every record: records with identical released Q share one.

    Missing values are equal to each other (a missing Q value is released as missing).
    With no Q column every record is in one group.
    """
    if not q:
        return np.zeros(len(frame), dtype=np.int64)
    ids, _ = class_ids([frame[c] for c in q], len(frame))
    return ids


def _unit_rows(x: FloatArray) -> FloatArray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.asarray(np.divide(x, norms, out=np.zeros_like(x), where=norms > 0), np.float64)


def linkable_records(
    original: FloatArray,
    perturbed: FloatArray,
    groups: IntArray,
    *,
    block_cells: int = _BLOCK_CELLS,
) -> BoolArray:
    """Which records are linkable to their own perturbed row within their group.

    Parameters
    ----------
    original, perturbed : numpy.ndarray, shape (n, features)
        Row ``i`` of ``perturbed`` is record ``i``'s released S (same encoding).
    groups : numpy.ndarray of int, shape (n,)
        Similarity group of every record (:func:`similarity_groups`).
    block_cells : int
        Largest number of similarities computed at once (memory: 8 bytes each).

    Returns
    -------
    numpy.ndarray of bool, shape (n,)
        True where the record's own perturbed row is (one of) the most cosine-similar
        to its original S in its group.
    """
    o = np.asarray(original, dtype=np.float64)
    p = np.asarray(perturbed, dtype=np.float64)
    g = np.asarray(groups, dtype=np.int64)
    if o.shape != p.shape or o.ndim != 2 or g.shape != (o.shape[0],):
        raise ParameterError(
            f"original, perturbed, groups: need shapes (n, f), (n, f), (n,); got "
            f"{o.shape}, {p.shape}, {g.shape}"
        )
    if block_cells < 1:
        raise ParameterError(f"block_cells: must be >= 1, got {block_cells}")
    n = o.shape[0]
    o, p = _unit_rows(o), _unit_rows(p)
    own = np.einsum("ij,ij->i", o, p)
    best = own.copy()  # a group of one: its own row is the only one
    order = np.argsort(g, kind="stable")
    sorted_groups = g[order]
    starts = np.flatnonzero(np.r_[True, sorted_groups[1:] != sorted_groups[:-1]])
    sizes = np.diff(np.r_[starts, n])
    for size in np.unique(sizes[sizes > 1]):
        firsts = starts[sizes == size]
        if size * size <= block_cells:
            _stacked(o, p, order, firsts, int(size), best, block_cells)
        else:
            for first in firsts:
                _row_blocks(o, p, order[first : first + size], best, block_cells)
    return np.asarray(own >= best - _TIE, dtype=np.bool_)


def _stacked(
    o: FloatArray,
    p: FloatArray,
    order: IntArray,
    firsts: IntArray,
    size: int,
    best: FloatArray,
    block_cells: int,
) -> None:
    """Groups of one size, stacked: a batch of ``size x size`` similarity matrices."""
    per = max(1, min(block_cells // (size * size), _BLOCK_ROWS // size))
    offsets = np.arange(size)
    for chunk in range(0, firsts.size, per):
        rows = order[firsts[chunk : chunk + per, None] + offsets]  # (m, size)
        sims = np.matmul(o[rows], p[rows].transpose(0, 2, 1))  # (m, size, size)
        best[rows] = sims.max(axis=2)


def _row_blocks(
    o: FloatArray, p: FloatArray, rows: IntArray, best: FloatArray, block_cells: int
) -> None:
    """One large group, in blocks of its records against all of its perturbed rows."""
    targets = p[rows].T
    step = max(1, block_cells // rows.size)
    for start in range(0, rows.size, step):
        sub = rows[start : start + step]
        best[sub] = (o[sub] @ targets).max(axis=1)


def normalized_leak(epsilon: float, linkable_fraction: float, t_epsilon: float) -> float:
    """The paper's normalized residual linkage leak ``P_N = min(1, ε L / T_ε)``.

    Parameters
    ----------
    epsilon : float
        ε of the candidate's fit (> 0).
    linkable_fraction : float
        ``L``, the fraction of linkable records, in [0, 1].
    t_epsilon : float
        The curator's ε threshold ``T_ε`` (> 0).
    """
    if not (t_epsilon > 0 and epsilon > 0):
        raise ParameterError(
            f"epsilon, t_epsilon: must be > 0, got epsilon={epsilon!r}, t_epsilon={t_epsilon!r}"
        )
    return float(min(1.0, epsilon * linkable_fraction / t_epsilon))
