"""Differentially private synthetic data behind one interface.

``Synthesizer.fit(data, domain, epsilon, delta)`` spends the budget once and returns a
``SynthModel``; ``model.sample(n, given=...)`` draws records (post-processing), keeping
``given`` columns exact and sampling the others conditionally on them. Every model
reports the (ε, δ) it actually spent as a :class:`~veil.mechanisms.PrivacyCost` of
notion ``"dp-synthetic"`` per dataset.

* :class:`MST` and :class:`AIM`: marginal-based (McKenna et al. 2021, 2022), estimated
  with mbi 2.0 (``pip install 'veil[synth]'``).
* :class:`IndependentMarginals`: the baseline of one noisy histogram per column.

Domains (:class:`TableDomain`) are public inputs: categories, bounds and bins.
"""

from veil.synth.accounting import ZCDPAccountant, ZCDPEntry, epsilon_from_rho, rho_from_epsilon
from veil.synth.base import Synthesizer, SynthModel
from veil.synth.domain import CategoricalColumn, ColumnDomain, NumericColumn, TableDomain
from veil.synth.graphical import GraphicalModel
from veil.synth.independent import IndependentMarginals
from veil.synth.marginal import AIM, MST
from veil.synth.measure import Measurement

__all__ = [
    "AIM",
    "MST",
    "CategoricalColumn",
    "ColumnDomain",
    "GraphicalModel",
    "IndependentMarginals",
    "Measurement",
    "NumericColumn",
    "SynthModel",
    "Synthesizer",
    "TableDomain",
    "ZCDPAccountant",
    "ZCDPEntry",
    "epsilon_from_rho",
    "rho_from_epsilon",
]
