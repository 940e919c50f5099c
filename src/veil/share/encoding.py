"""Records as numeric vectors for OptimShare's two measures: utility and linkage.

Both the GaussianNB utility (:mod:`veil.share.utility`) and the cosine-similarity
linkage (:mod:`veil.share.linkage`) compare records as vectors. The encoding reads only
the public :class:`~veil.synth.TableDomain`, never a statistic of the records:

* a categorical column becomes one indicator per declared category (plus one for
  missing when the domain declares it): one-hot, as the brief of the linkage asks;
* a numeric column becomes ``(x - lower) / (upper - lower)`` with the public bounds, so
  every feature lies in ``[0, 1]`` whatever its unit (0 when the bounds coincide); a
  missing value becomes 0 with an indicator feature of its own when the domain
  declares ``missing``.

The same encoding of an original record and of its synthetic counterpart is therefore
comparable, and no min, max or spread of the data enters the vectors.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.synth import CategoricalColumn, TableDomain

__all__ = ["record_vectors"]

FloatArray = npt.NDArray[np.float64]


def record_vectors(frame: pd.DataFrame, domain: TableDomain, columns: Sequence[str]) -> FloatArray:
    """The rows of ``frame[columns]`` as vectors in ``[0, 1]`` (one-hot, public scaling).

    Parameters
    ----------
    frame : pandas.DataFrame
        The records (only read).
    domain : TableDomain
        Public categories and bounds of every column named.
    columns : sequence of str
        The columns encoded, in this order.

    Returns
    -------
    numpy.ndarray of float64, shape (len(frame), features)
        Per categorical column one indicator per code; per numeric column its scaled
        value, and a missing indicator when the domain declares missing values.

    Raises
    ------
    veil.errors.DomainError, veil.errors.MissingValueError, veil.errors.ColumnError
        A value outside its public domain, as :meth:`TableDomain.encode`.
    """
    codes = domain.encode(frame, list(columns))
    n = len(frame)
    blocks: list[FloatArray] = []
    for name in columns:
        col = domain.columns[name]
        code = codes[name]
        if isinstance(col, CategoricalColumn):
            block = np.zeros((n, col.size), dtype=np.float64)
            block[np.arange(n), code] = 1.0
            blocks.append(block)
            continue
        values = frame[name].to_numpy(dtype=np.float64, na_value=np.nan)
        if col.clip:
            values = np.clip(values, col.lower, col.upper)
        span = col.upper - col.lower
        missing = np.isnan(values)
        scaled = np.where(missing, 0.0, (values - col.lower) / span if span > 0 else 0.0)
        blocks.append(np.asarray(scaled, dtype=np.float64).reshape(n, 1))
        if col.missing:
            blocks.append(missing.astype(np.float64).reshape(n, 1))
    if not blocks:
        return np.zeros((n, 0), dtype=np.float64)
    return np.ascontiguousarray(np.hstack(blocks))
