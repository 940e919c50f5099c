"""OptimShare: partially perturbed sharing, where mandated columns Q stay exact.

The fuzzy budget choice (:mod:`veil.share.fuzzy`) maps a measured privacy need to
candidate (ε, δ) pairs for the DP synthesizers of :mod:`veil.synth`. The requirements
(:mod:`veil.share.requirements`) come first: direct identifiers found by uniqueness, the
PIF refinement of Q, PIF_thresh, and the absolute guard on the exactly released Q.
"""

from veil.share.fuzzy import (
    FIS_MEANS,
    FIS_SIGMA,
    BudgetPairs,
    FuzzySurface,
    budget_pairs,
    fis_output,
    fis_surface,
)
from veil.share.requirements import (
    QGuard,
    ShareRequirements,
    derive_requirements,
    detect_identifiers,
)

__all__ = [
    "FIS_MEANS",
    "FIS_SIGMA",
    "BudgetPairs",
    "FuzzySurface",
    "QGuard",
    "ShareRequirements",
    "budget_pairs",
    "derive_requirements",
    "detect_identifiers",
    "fis_output",
    "fis_surface",
]
