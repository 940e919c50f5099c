"""Baseline: independent DP marginals, one noisy histogram per column.

Every column's counts get discrete Gaussian noise; the columns are then drawn
independently of each other. It keeps each column's distribution and nothing of the
relations between columns: the yardstick the marginal models must beat.

Guarantee: (ε, δ)-DP for adding or removing one record, where (ε, δ) is the
conversion of the zCDP ρ spent (Canonne, Kamath and Steinke 2020): d histograms, each
with σ² = d / (2ρ) (:mod:`veil.synth.accounting`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.rng import RngLike, resolve_rng
from veil.synth.accounting import ZCDPAccountant
from veil.synth.base import Synthesizer, check_fit_input, with_domain_costs
from veil.synth.domain import TableDomain
from veil.synth.graphical import GraphicalModel
from veil.synth.measure import contingency, measure

__all__ = ["IndependentMarginals"]


class IndependentMarginals(Synthesizer):
    """One noisy histogram per column, columns sampled independently.

    Noisy counts are clipped at 0 and normalized (post-processing); a column whose
    clipped counts are all 0 is drawn uniformly. Sampling ``given`` columns is exact
    and trivial: under the model the other columns do not depend on them.

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.synth import IndependentMarginals
    >>> df = pd.DataFrame({"a": ["x", "y"] * 50})
    >>> model = IndependentMarginals().fit(df, {"a": ["x", "y"]}, 1.0, 1e-5)
    >>> round(model.cost.epsilon, 9), sorted(model.sample(20)["a"].unique()) <= ["x", "y"]
    (1.0, True)
    """

    name = "independent"

    def fit(
        self,
        data: pd.DataFrame,
        domain: TableDomain | Mapping[str, Any],
        epsilon: float,
        delta: float,
        *,
        rng: RngLike = None,
    ) -> GraphicalModel:
        """Fit the baseline; see :meth:`veil.synth.Synthesizer.fit`."""
        inp = check_fit_input(data, domain, epsilon, delta)
        gen = resolve_rng(rng)
        acc = ZCDPAccountant(inp.epsilon, inp.delta)
        sizes = inp.domain.sizes
        sigma = math.sqrt(len(sizes) / (2 * acc.budget))
        potentials: dict[tuple[str, ...], npt.NDArray[np.float64]] = {}
        totals = []
        for name in inp.domain.names:
            m = measure(contingency(inp.codes, (name,), sizes), (name,), sigma, acc, gen)
            clipped = np.clip(m.noisy, 0.0, None)
            totals.append(float(m.noisy.sum()))
            with np.errstate(divide="ignore"):
                log_p = np.log(clipped) if clipped.sum() > 0 else np.zeros(clipped.size)
            potentials[(name,)] = np.asarray(log_p, dtype=np.float64)
        mechanism = "independent marginals (discrete Gaussian, zCDP)"
        cost = with_domain_costs(acc.cost(", ".join(inp.domain.names), mechanism), inp.domain)
        details = {"method": "independent marginals", "accounting": acc.to_dict()}
        total = max(float(np.mean(totals)), 1.0)
        return GraphicalModel(inp.domain, potentials, total, cost, details)
