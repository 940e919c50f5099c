"""Anonymization by generalization: hierarchies and privacy-model checks.

:class:`Hierarchy` holds a generalization hierarchy (loaded from anjana's or ARX's CSV
format, or built for intervals, codes, dates and groupings) with integer codes per
level. The table-level checks carry pyCANON's names and arguments and return the level a
table achieves, computed independently of the index and with missing quasi-identifier
values treated as a value.
"""

from veil.anonymity.checks import (
    alpha_k_anonymity,
    basic_beta_likeness,
    delta_disclosure,
    enhanced_beta_likeness,
    entropy_l_diversity,
    equivalence_classes,
    k_anonymity,
    l_diversity,
    recursive_c_l_diversity,
    t_closeness,
)
from veil.anonymity.hierarchy import Hierarchy

__all__ = [
    "Hierarchy",
    "alpha_k_anonymity",
    "basic_beta_likeness",
    "delta_disclosure",
    "enhanced_beta_likeness",
    "entropy_l_diversity",
    "equivalence_classes",
    "k_anonymity",
    "l_diversity",
    "recursive_c_l_diversity",
    "t_closeness",
]
