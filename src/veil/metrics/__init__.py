"""Utility metrics: how much of the data's usefulness survives a privatized release.

Metrics read the original and the released tables and return numbers; they never modify
their inputs and spend no privacy budget.
"""

from __future__ import annotations

from veil.metrics.correlation import CorrelationMethod, correlation_loss
from veil.metrics.divergence import divergence_distributions
from veil.metrics.ml_utility import MLModel, MLUtility, ml_utility

__all__ = [
    "CorrelationMethod",
    "MLModel",
    "MLUtility",
    "correlation_loss",
    "divergence_distributions",
    "ml_utility",
]
