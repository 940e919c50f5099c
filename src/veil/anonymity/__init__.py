"""Anonymization by generalization: hierarchies, privacy models, the optimal search.

:func:`anonymize` searches the lattice of hierarchy levels for the transformation with
the best quality metric (ARX's Loss by default) that satisfies every privacy model within
a record suppression limit; :func:`evaluate` scores any given transformation;
:func:`anonymize_local` recodes the records a global transformation suppresses with
their own levels (local recoding), and :func:`microaggregate` replaces numeric
quasi-identifiers by group means of at least k records (MDAV).

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
from veil.anonymity.local import LocalRecodingResult, anonymize_local
from veil.anonymity.metrics import METRICS
from veil.anonymity.microaggregation import (
    AGGREGATES,
    MICROAGGREGATION_METHODS,
    MicroaggregationResult,
    microaggregate,
)
from veil.anonymity.models import (
    AlphaKAnonymity,
    BasicBetaLikeness,
    DeltaDisclosure,
    DistinctLDiversity,
    EnhancedBetaLikeness,
    EntropyLDiversity,
    KAnonymity,
    PrivacyModel,
    RecursiveCLDiversity,
    TCloseness,
)
from veil.anonymity.search import (
    AnonymizationResult,
    NoSolutionError,
    SearchBudgetWarning,
    anonymize,
    evaluate,
)

__all__ = [
    "AGGREGATES",
    "METRICS",
    "MICROAGGREGATION_METHODS",
    "AlphaKAnonymity",
    "AnonymizationResult",
    "BasicBetaLikeness",
    "DeltaDisclosure",
    "DistinctLDiversity",
    "EnhancedBetaLikeness",
    "EntropyLDiversity",
    "Hierarchy",
    "KAnonymity",
    "LocalRecodingResult",
    "MicroaggregationResult",
    "NoSolutionError",
    "PrivacyModel",
    "RecursiveCLDiversity",
    "SearchBudgetWarning",
    "TCloseness",
    "alpha_k_anonymity",
    "anonymize",
    "anonymize_local",
    "basic_beta_likeness",
    "delta_disclosure",
    "enhanced_beta_likeness",
    "entropy_l_diversity",
    "equivalence_classes",
    "evaluate",
    "k_anonymity",
    "l_diversity",
    "microaggregate",
    "recursive_c_l_diversity",
    "t_closeness",
]
