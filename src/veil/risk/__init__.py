"""Re-identification risk from quasi-identifiers.

Equivalence-class summaries (sample uniqueness, prosecutor, journalist and marketer
risk), per-record risk, the QI-combination scan, attribute disclosure, and population
uniqueness estimated from a sample (Zayatz, Pitman, and Dankar et al.'s rule).
"""

from veil.risk.carriers import find_carriers as find_carriers
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

__all__ = [
    "PopulationUniqueness",
    "RiskSummary",
    "attribute_disclosure",
    "class_size_histogram",
    "pitman",
    "population_uniqueness",
    "qi_scan",
    "record_risk",
    "summary",
    "zayatz",
]
