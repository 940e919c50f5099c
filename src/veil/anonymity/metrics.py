"""Quality metrics of a full-domain generalization with record suppression.

* ``"loss"`` — ARX's Loss (Iyengar 2002, generalized; ARX ``MetricMDNMLoss``). For one
  quasi-identifier the loss of a record is (leaves under its generalized value - 1) /
  (leaves of the hierarchy - 1), and 1 for a suppressed record; its mean over records
  is the attribute's loss. ARX aggregates the attributes with its default geometric
  mean, ``prod_j (1 + loss_j) ** (1 / d) - 1``, which is what this metric returns (it
  reproduces ARX's published optima on the Adult benchmark to four decimals); the
  arithmetic mean is reported as ``"loss_mean"``.
* ``"discernibility"`` — sum of squared sizes of the released classes plus ``n`` per
  suppressed record (Bayardo & Agrawal 2005).
* ``"aecs"`` — average equivalence class size, ``n`` / number of classes, suppressed
  records forming one class (LeFevre et al. 2006).
* ``"precision"`` — Sweeney's precision loss: mean over records and attributes of
  level / height, 1 for a suppressed record (0 is the original table).
* ``"entropy"`` — non-uniform entropy (de Waal & Willenborg 1999; ARX
  ``MetricMDNUEntropy``): the bits lost per record and QI, ``-log2 P(original value |
  released value)`` with both frequencies taken over the whole input table, summed over
  records and QIs; a suppressed record's value is the hierarchy's root (its loss is
  ``-log2(count(original) / n)``).

Lower is better for every metric. ``"classes"`` (released equivalence classes) is
reported beside them, not an objective.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["METRICS"]

METRICS = ("loss", "discernibility", "aecs", "precision", "entropy")
#: Metrics whose :func:`lower_bounds` is their value when no record is suppressed.
BOUND_IS_VALUE = ("loss", "precision", "entropy")

_Ints = npt.NDArray[np.int64]
_Floats = npt.NDArray[np.float64]


def _aggregate_loss(per_attribute: _Floats) -> float:
    return float(np.exp(np.log1p(per_attribute).mean()) - 1.0)


def compute(
    *,
    n: int,
    levels: Sequence[int],
    heights: Sequence[int],
    loss_table: _Floats,
    log_count_table: _Floats,
    table_start: Sequence[int],
    entropy_offset: Sequence[float],
    row_codes: npt.NDArray[np.int64],
    row_count: _Ints,
    row_kept: npt.NDArray[np.bool_],
) -> dict[str, float]:
    """Every metric of one transformation from its (class, ...) rows.

    ``loss_table[table_start[j] + g]`` is the normalized loss of group ``g`` of QI ``j``
    at ``levels[j]`` and ``log_count_table[...]`` log2 of its record count in the
    input; ``entropy_offset[j]`` is the sum over all records of log2 of their original
    value's count. ``row_codes[j]`` holds each row's group id of QI ``j`` (QIs x rows),
    ``row_count`` its records, ``row_kept`` whether its class is released.
    """
    if row_kept.all():
        kept = row_count.astype(np.float64)
        kept_sizes = row_count
    else:
        kept = np.where(row_kept, row_count, 0).astype(np.float64)
        kept_sizes = row_count[row_kept]
    released = float(kept.sum())
    suppressed = n - released
    d = len(row_codes)
    # Per QI, the records' summed loss and summed log2 count, in one lookup each.
    index = row_codes + np.asarray(table_start, dtype=np.int64)[:, None]
    loss_sums = (loss_table[index] @ kept).tolist() if d else []
    log_sums = (log_count_table[index] @ kept).tolist() if d else []
    per = np.array([(x + suppressed) / n for x in loss_sums], dtype=np.float64)
    entropy = 0.0
    for j in range(d):
        # sum over records of log2(count(released value) / count(original value)).
        entropy += log_sums[j] + suppressed * math.log2(n)
        entropy -= entropy_offset[j]
    shares = [lv / h if h else 0.0 for lv, h in zip(levels, heights, strict=True)]
    precision = sum(s * released + suppressed for s in shares) / d / n if d else 0.0
    classes = len(kept_sizes) + (1 if suppressed > 0 else 0)
    sizes = kept_sizes.astype(np.float64)
    return {
        "loss": _aggregate_loss(per),
        "loss_mean": sum(per.tolist()) / d if d else math.nan,
        "discernibility": float(sizes @ sizes) + n * suppressed,
        "aecs": n / classes if classes else math.nan,
        "precision": precision,
        "entropy": max(entropy, 0.0),
        "classes": float(len(kept_sizes)),
    }


def lower_bounds(
    metric: str,
    nodes: npt.NDArray[np.integer],
    heights: Sequence[int],
    generalization_loss: Sequence[_Floats],
    generalization_entropy: Sequence[_Floats],
) -> _Floats:
    """Per node (row of ``nodes``, one level per QI), a value it cannot beat.

    Suppressing a record costs at least as much as generalizing it, so the loss,
    precision and entropy with no record suppressed bound them from below, whatever a
    node suppresses; the other metrics have no cheap bound (-inf).
    ``generalization_loss[j][level]`` is QI ``j``'s loss at ``level`` with every record
    released, ``generalization_entropy[j][level]`` its entropy.
    """
    columns = range(nodes.shape[1])
    if metric == "loss":
        logs = sum(np.log1p(generalization_loss[j][nodes[:, j]]) for j in columns)
        bound: _Floats = np.expm1(np.asarray(logs, dtype=np.float64) / max(len(columns), 1))
        return bound
    if metric == "precision":
        scale = np.array([1.0 / h if h else 0.0 for h in heights])
        return np.asarray(nodes @ scale / max(len(columns), 1), dtype=np.float64)
    if metric == "entropy":
        total = sum(generalization_entropy[j][nodes[:, j]] for j in columns)
        return np.asarray(total, dtype=np.float64)
    return np.full(nodes.shape[0], -math.inf)
