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

Lower is better for every metric.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["METRICS"]

METRICS = ("loss", "discernibility", "aecs", "precision")

_Ints = npt.NDArray[np.int64]
_Floats = npt.NDArray[np.float64]


def _aggregate_loss(per_attribute: _Floats) -> float:
    return float(np.exp(np.log1p(per_attribute).mean()) - 1.0)


def compute(
    *,
    n: int,
    levels: Sequence[int],
    heights: Sequence[int],
    leaf_loss: Sequence[_Floats],
    row_codes: Sequence[_Ints],
    row_count: _Ints,
    row_kept: npt.NDArray[np.bool_],
    kept_sizes: _Ints,
) -> dict[str, float]:
    """Every metric of one transformation from its (class, ...) rows.

    ``leaf_loss[j]`` maps a level-``levels[j]`` group id of attribute ``j`` to its
    normalized loss; ``row_codes[j]`` holds each row's group id, ``row_count`` its
    records, ``row_kept`` whether its class is released; ``kept_sizes`` the sizes of
    the released classes.
    """
    kept = np.where(row_kept, row_count, 0).astype(np.float64)
    released = float(kept.sum())
    suppressed = n - released
    per = np.array(
        [
            (float(kept @ loss[codes]) + suppressed) / n
            for loss, codes in zip(leaf_loss, row_codes, strict=True)
        ]
    )
    share = np.array([lv / h if h else 0.0 for lv, h in zip(levels, heights, strict=True)])
    precision = float((share * released + suppressed).mean() / n) if len(share) else 0.0
    classes = len(kept_sizes) + (1 if suppressed > 0 else 0)
    sizes = kept_sizes.astype(np.float64)
    return {
        "loss": _aggregate_loss(per),
        "loss_mean": float(per.mean()),
        "discernibility": float(sizes @ sizes) + n * suppressed,
        "aecs": n / classes if classes else math.nan,
        "precision": precision,
    }


def lower_bound(
    metric: str, levels: Sequence[int], heights: Sequence[int], generalization_loss: _Floats
) -> float:
    """A value no transformation at ``levels`` can beat, whatever it suppresses.

    Suppressing a record costs at least as much as generalizing it, so the loss and
    precision with no record suppressed bound them from below; the other metrics have
    no cheap bound (-inf).
    """
    if metric == "loss":
        return _aggregate_loss(generalization_loss)
    if metric == "precision":
        return float(np.mean([lv / h if h else 0.0 for lv, h in zip(levels, heights, strict=True)]))
    return -math.inf
