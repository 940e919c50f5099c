"""Differentially private synthetic data behind one interface.

``Synthesizer.fit(data, domain, epsilon, delta)`` spends the budget once and returns a
``SynthModel``; ``model.sample(n, given=...)`` draws records (post-processing), keeping
``given`` columns exact and sampling the others conditionally on them. Every model
reports the (ε, δ) it actually spent as a :class:`~veil.mechanisms.PrivacyCost` of
notion ``"dp-synthetic"`` per dataset.

* :class:`MST` and :class:`AIM`: marginal-based (McKenna et al. 2021, 2022), estimated
  with mbi 2.0 (``pip install 'veil[synth]'``).
* :class:`IndependentMarginals`: the baseline of one noisy histogram per column.
* :class:`DPWGAN`: a conditional Wasserstein GAN whose critic learns under DP-SGD
  (Xie et al. 2018), in JAX with optax, accounted with dp-accounting
  (``pip install 'veil[gan]'``).

Domains (:class:`TableDomain`) are public inputs: categories, bounds and bins; numeric
bounds nobody can declare are estimated under DP by :func:`dp_bounds`, whose cost the
model adds to its own.
"""

from veil.synth.accounting import (
    CONVERSION,
    ZCDPAccountant,
    ZCDPEntry,
    epsilon_from_rdp,
    epsilon_from_rho,
    rho_from_epsilon,
)
from veil.synth.base import Synthesizer, SynthModel
from veil.synth.bounds import DPBounds, dp_bounds, dp_quantile
from veil.synth.domain import CategoricalColumn, ColumnDomain, NumericColumn, TableDomain
from veil.synth.dpsgd import DPSGDAccounting, calibrate_noise
from veil.synth.fidelity import marginal_tvd
from veil.synth.gan import DPWGAN, DPWGANModel
from veil.synth.graphical import GraphicalModel
from veil.synth.independent import IndependentMarginals
from veil.synth.marginal import AIM, MST
from veil.synth.measure import Measurement
from veil.synth.registry import SYNTHESIZERS, make_synthesizer

__all__ = [
    "AIM",
    "CONVERSION",
    "DPWGAN",
    "MST",
    "SYNTHESIZERS",
    "CategoricalColumn",
    "ColumnDomain",
    "DPBounds",
    "DPSGDAccounting",
    "DPWGANModel",
    "GraphicalModel",
    "IndependentMarginals",
    "Measurement",
    "NumericColumn",
    "SynthModel",
    "Synthesizer",
    "TableDomain",
    "ZCDPAccountant",
    "ZCDPEntry",
    "calibrate_noise",
    "dp_bounds",
    "dp_quantile",
    "epsilon_from_rdp",
    "epsilon_from_rho",
    "make_synthesizer",
    "marginal_tvd",
    "rho_from_epsilon",
]
