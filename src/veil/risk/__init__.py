"""Re-identification risk from quasi-identifiers.

Equivalence-class summaries (sample uniqueness, prosecutor, journalist and marketer
risk), per-record risk, the QI-combination scan, attribute disclosure, and population
uniqueness estimated from a sample (Zayatz, Pitman, and Dankar et al.'s rule), and
the personal information factor assessment (CSF, CIG, wCIG, RIG, the OptimShare paper's
PIF_A and piflib's PIF_n) with its figures.
"""

from veil.risk.carriers import Carrier, find_carriers
from veil.risk.pif import ColumnBins, PifAssessment, assess_pif
from veil.risk.pif_plots import csf_heatmap, pif_bars, pif_figure
from veil.risk.population import (
    PopulationUniqueness,
    class_size_histogram,
    pitman,
    population_uniqueness,
    zayatz,
)
from veil.risk.reidentification import (
    RiskSummary,
    attribute_disclosure,
    qi_scan,
    record_risk,
    summary,
)
from veil.risk.roles import ColumnRole, RoleSuggestions, suggest_roles

__all__ = [
    "Carrier",
    "ColumnBins",
    "ColumnRole",
    "PifAssessment",
    "PopulationUniqueness",
    "RiskSummary",
    "RoleSuggestions",
    "assess_pif",
    "attribute_disclosure",
    "class_size_histogram",
    "csf_heatmap",
    "find_carriers",
    "pif_bars",
    "pif_figure",
    "pitman",
    "population_uniqueness",
    "qi_scan",
    "record_risk",
    "suggest_roles",
    "summary",
    "zayatz",
]
