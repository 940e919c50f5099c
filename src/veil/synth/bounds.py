"""Numeric bounds estimated under DP, for columns whose range nobody can declare.

Each bound is a DP quantile drawn with the exponential mechanism over a coarse public
range (Smith, "Privacy-preserving statistical estimation with optimal convergence
rates", STOC 2011): an output ``x`` in ``[a, b]`` has density proportional to
``exp(ε/2 · u(x))`` with ``u(x) = -|#{records below x} - q n|``, which adding or
removing one record changes by at most 1, so each quantile is ε-DP. The draw is rounded
outward to a public grid (1/1024 of the coarse range; integers for integer columns),
which is post-processing and keeps the output free of the records' floating-point bits.

The columns returned clip to their estimated bounds (``clip=True``): records beyond
them are moved to the nearest bound, which the DP guarantee allows and the domain
states.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.errors import ColumnError, DataTypeError, ParameterError
from veil.mechanisms import PrivacyCost
from veil.mechanisms._validation import check_epsilon
from veil.rng import RngLike, resolve_rng
from veil.synth.domain import DEFAULT_BINS, NumericColumn, TableDomain

__all__ = ["DPBounds", "dp_bounds", "dp_quantile"]

_GRID = 1024  # steps of the coarse range the bounds are rounded to


def dp_quantile(
    values: np.ndarray,
    q: float,
    epsilon: float,
    lower: float,
    upper: float,
    rng: np.random.Generator,
) -> float:
    """An ε-DP estimate of the ``q`` quantile of ``values`` within public ``[lower, upper]``.

    Values outside the range are clipped to it; missing values must be removed first.
    """
    x = np.sort(np.clip(np.asarray(values, dtype=np.float64), lower, upper))
    edges = np.concatenate([[lower], x, [upper]])
    width = np.diff(edges)
    rank = np.arange(width.size, dtype=np.float64)  # records below each interval
    with np.errstate(divide="ignore"):
        log_weight = np.log(width) - 0.5 * epsilon * np.abs(rank - q * x.size)
    log_weight -= log_weight.max()
    cdf = np.cumsum(np.exp(log_weight))
    cdf /= cdf[-1]
    i = int(np.searchsorted(cdf, rng.random(), side="right"))
    i = min(i, width.size - 1)
    return float(edges[i] + rng.random() * width[i])


@dataclass(frozen=True)
class DPBounds:
    """Columns with DP-estimated bounds, and what estimating them cost.

    Attributes
    ----------
    columns : dict of str to NumericColumn
        Clipping numeric columns, binned equally between their bounds.
    cost : PrivacyCost
        ε of all the quantiles (pure DP, δ = 0; notion ``dp-synthetic`` per dataset,
        so that it adds to a synthesizer's cost).
    """

    columns: dict[str, NumericColumn]
    cost: PrivacyCost

    def domain(self, others: Mapping[str, object] | None = None) -> TableDomain:
        """A TableDomain of ``others`` (public specs, first) and these columns, with the cost."""
        public = TableDomain.from_dict(dict(others)).columns if others else {}
        return TableDomain({**public, **self.columns}, costs=(self.cost,))


def dp_bounds(
    data: pd.DataFrame,
    coarse: Mapping[str, Sequence[float]],
    epsilon: float,
    *,
    quantiles: tuple[float, float] = (0.01, 0.99),
    bins: int = DEFAULT_BINS,
    integer: Sequence[str] = (),
    missing: Sequence[str] = (),
    rng: RngLike = None,
) -> DPBounds:
    """Estimate numeric bounds under DP, spending ``epsilon`` in all.

    Parameters
    ----------
    data : DataFrame
        The records (only the columns of ``coarse`` are read; nothing is modified).
    coarse : mapping of column to [lower, upper]
        A public range per column (a physical or coding limit). Keep it within a few
        orders of magnitude of the data: the empty stretch beyond the records keeps a
        weight of about its width times ``exp(-ε_q n (1 - q) / 2)`` (``ε_q`` the
        quantile's share of ε) against the records' own spread, and a draw landing
        there gives a loose bound.
    epsilon : float
        Budget for all the bounds, split evenly: each column gets ``ε / len(coarse)``,
        half for each quantile (every column touches every record, so the columns
        compose sequentially).
    quantiles : (float, float), default (0.01, 0.99)
        Ranks of the lower and upper bound; the records beyond are clipped.
    bins : int, default 16
        Equal-width bins of each resulting column.
    integer, missing : sequence of str
        Columns holding integers; columns whose missing values form a category (their
        missing values are left out of the quantiles).
    rng : None, int or numpy.random.Generator
        Randomness, see :mod:`veil.rng`.

    Returns
    -------
    DPBounds
        ``epsilon``-DP (pure) for adding or removing one record.
    """
    eps = check_epsilon(epsilon)
    if not isinstance(data, pd.DataFrame):
        raise DataTypeError(f"data: must be a pandas DataFrame, got {type(data).__name__}")
    if not isinstance(coarse, Mapping) or not coarse:
        raise ParameterError("coarse: needs a public [lower, upper] for at least one column")
    absent = [c for c in coarse if c not in data.columns]
    if absent:
        raise ColumnError(f"coarse: {absent} are not columns of data")
    q_lo, q_hi = quantiles
    if not (0.0 <= q_lo < q_hi <= 1.0):
        raise ParameterError(f"quantiles: need 0 <= lower < upper <= 1, got {quantiles!r}")
    gen = resolve_rng(rng)
    each = eps / len(coarse)
    columns = {}
    for name, rng_bounds in coarse.items():
        a, b = (float(v) for v in rng_bounds)
        if not (math.isfinite(a) and math.isfinite(b) and a < b):
            raise ParameterError(f"coarse[{name!r}]: need finite lower < upper, got {rng_bounds!r}")
        series = data[name]
        if not pd.api.types.is_numeric_dtype(series):
            raise DataTypeError(f"{name}: needs a numeric column, got dtype {series.dtype}")
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
        values = values[~np.isnan(values)] if name in missing else values
        if np.isnan(values).any():
            raise ParameterError(f"{name}: holds missing values; list it in missing= to model them")
        lo = dp_quantile(values, q_lo, each / 2, a, b, gen)
        hi = dp_quantile(values, q_hi, each / 2, a, b, gen)
        step = (b - a) / _GRID
        lo = max(a, a + math.floor((min(lo, hi) - a) / step) * step)
        hi = min(b, a + math.ceil((max(lo, hi) - a) / step) * step)
        if name in integer:
            lo, hi = float(math.floor(lo)), float(math.ceil(hi))
        width = 1.0 if name in integer else step
        if hi - lo < width:  # both draws in one grid step: widen to one step
            hi = min(b, lo + width)
            lo = hi - width
        columns[name] = NumericColumn.with_bins(
            lo, hi, bins, integer=name in integer, missing=name in missing, clip=True
        )
    cost = PrivacyCost(
        eps, 0.0, "dp-synthetic", "dataset", ", ".join(coarse), "DP quantile bounds (Smith 2011)"
    )
    return DPBounds(columns, cost)
