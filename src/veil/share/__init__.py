"""OptimShare: partially perturbed sharing, where mandated columns Q stay exact.

The fuzzy budget choice (:mod:`veil.share.fuzzy`) maps a measured privacy need to
candidate (ε, δ) pairs for the DP synthesizers of :mod:`veil.synth`. The requirements
(:mod:`veil.share.requirements`) come first: direct identifiers found by uniqueness, the
PIF refinement of Q, PIF_thresh, and the absolute guard on the exactly released Q. The
search (:func:`optimshare_search`, :mod:`veil.share.search`) fits one DP model per pair,
merges synthetic S with the exact Q, scores every candidate by utility
(:mod:`veil.share.utility`) and residual linkage (:mod:`veil.share.linkage`) and selects
one, by the paper's argmax or privately (:mod:`veil.share.selection`, on the counts of
:mod:`veil.share.scores`); :func:`optimshare` runs the three steps in order,
:mod:`veil.share.plots` draws the paper's Fig. 7 and Table 2, and :func:`review_share`
measures a release for its custodian's report.
"""

from veil.share.budget import fuzzy_pair_bound, search_cost_bound
from veil.share.encoding import record_vectors
from veil.share.fuzzy import (
    FIS_MEANS,
    FIS_SIGMA,
    BudgetPairs,
    FuzzySurface,
    budget_pairs,
    fis_output,
    fis_surface,
)
from veil.share.linkage import linkable_records, normalized_leak, similarity_groups
from veil.share.merge import MergePlan, plan_merge
from veil.share.pipeline import optimshare
from veil.share.plots import candidates_figure, comparison_table
from veil.share.requirements import (
    QGuard,
    ShareRequirements,
    derive_requirements,
    detect_identifiers,
    refinement_notes,
)
from veil.share.result import ShareResult
from veil.share.review import public_bins, review_share
from veil.share.scores import CandidateScorer, Scores
from veil.share.search import DEFAULT_SYNTHESIZER_SETTINGS, Cancellable, optimshare_search
from veil.share.selection import (
    NoCandidateError,
    compose_fits,
    effectiveness,
    geometric_runs,
    random_stopping_epsilon,
)
from veil.share.utility import (
    UtilityReference,
    candidate_correct,
    fold_predictions,
    record_folds,
    utility_loss,
)

__all__ = [
    "DEFAULT_SYNTHESIZER_SETTINGS",
    "FIS_MEANS",
    "FIS_SIGMA",
    "BudgetPairs",
    "Cancellable",
    "CandidateScorer",
    "FuzzySurface",
    "MergePlan",
    "NoCandidateError",
    "QGuard",
    "Scores",
    "ShareRequirements",
    "ShareResult",
    "UtilityReference",
    "budget_pairs",
    "candidate_correct",
    "candidates_figure",
    "comparison_table",
    "compose_fits",
    "derive_requirements",
    "detect_identifiers",
    "effectiveness",
    "fis_output",
    "fis_surface",
    "fold_predictions",
    "fuzzy_pair_bound",
    "geometric_runs",
    "linkable_records",
    "normalized_leak",
    "optimshare",
    "optimshare_search",
    "plan_merge",
    "public_bins",
    "random_stopping_epsilon",
    "record_folds",
    "record_vectors",
    "refinement_notes",
    "review_share",
    "search_cost_bound",
    "similarity_groups",
    "utility_loss",
]
