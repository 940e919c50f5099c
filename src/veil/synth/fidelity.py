"""How close a synthetic table is to the original: k-way marginal distances in the bins.

Reads two tables under the same public :class:`~veil.synth.TableDomain` and spends no
privacy budget; the result is computed from the original records, so it belongs in the
custodian's record, not in a public manifest.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from veil.errors import ParameterError
from veil.synth.domain import TableDomain

__all__ = ["marginal_tvd"]


def marginal_tvd(
    domain: TableDomain, original: pd.DataFrame, synthetic: pd.DataFrame, *, way: int = 2
) -> float:
    """Mean total variation distance over every ``way``-column marginal (binned).

    Parameters
    ----------
    domain : TableDomain
        Categories and bins both tables are counted in (their values must lie in it).
    original, synthetic : DataFrame
        The two tables (only the domain's columns are read).
    way : int, default 2
        Columns per marginal.

    Returns
    -------
    float in [0, 1]
        ``mean over column sets of 0.5 · sum |p_original - p_synthetic|``.
    """
    if isinstance(way, bool) or not isinstance(way, int) or not 1 <= way <= len(domain.names):
        raise ParameterError(f"way: must be an integer in [1, {len(domain.names)}], got {way!r}")
    if len(original) == 0 or len(synthetic) == 0:
        raise ParameterError("original, synthetic: both tables need rows")
    codes = domain.encode(original), domain.encode(synthetic)
    sizes = domain.sizes
    out = []
    for cols in itertools.combinations(domain.names, way):
        shape = tuple(sizes[c] for c in cols)
        cells = math.prod(shape)
        hist = [
            np.bincount(np.ravel_multi_index(tuple(c[k] for k in cols), shape), minlength=cells)
            / len(next(iter(c.values())))
            for c in codes
        ]
        out.append(0.5 * float(np.abs(hist[0] - hist[1]).sum()))
    return float(np.mean(out))
