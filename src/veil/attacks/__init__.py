"""Attacks on a release: what an attacker can actually do with it.

Each attack takes the raw records the release was made from, the release, a description of
its columns (:class:`AttackSpec`) and held-out control records, and returns
:class:`AttackResult` objects: the success rate, the baseline an attacker reaches without
the release's leak, the advantage over it with a 95 % confidence interval, the number of
targets, the columns that made the attack succeed and an edit that would stop it.

* :func:`singling_out`, :func:`linkability`, :func:`inference`: the three risks of the
  Article 29 Working Party, measured as in Giomi et al., "A Unified Framework for
  Quantifying Privacy Risk in Synthetic Data", PETS 2023 (anonymeter);
* :func:`location`: the nearest released point to each original, alone and with the exact
  columns an attacker knows, against chance;
* :func:`membership`: distance to the closest released record, members against control;
* :func:`intersection`: two releases of the same records under different hierarchies,
  joined.

:func:`shadow_release` runs a release function on part of the records and keeps the rest
as control; :func:`run_battery` does that and runs every applicable attack. Results are
computed from raw records: they belong to the custodian, never to a public manifest.
"""

from veil.attacks.battery import ATTACKS, LABELS, run_battery
from veil.attacks.inference import inference
from veil.attacks.intersection import intersection
from veil.attacks.linkability import linkability
from veil.attacks.location import location
from veil.attacks.membership import membership
from veil.attacks.result import DEFAULT_MARGIN, AttackResult, BatteryResult
from veil.attacks.shadow import (
    DEFAULT_FRACTION,
    DEFAULT_SAMPLE,
    ReleaseFn,
    Shadow,
    shadow_release,
)
from veil.attacks.singling_out import singling_out
from veil.attacks.spec import AttackSpec, CellRecoder, Location, Recoder, Release
from veil.attacks.stats import Rate

__all__ = [
    "ATTACKS",
    "DEFAULT_FRACTION",
    "DEFAULT_MARGIN",
    "DEFAULT_SAMPLE",
    "LABELS",
    "AttackResult",
    "AttackSpec",
    "BatteryResult",
    "CellRecoder",
    "Location",
    "Rate",
    "Recoder",
    "Release",
    "ReleaseFn",
    "Shadow",
    "inference",
    "intersection",
    "linkability",
    "location",
    "membership",
    "run_battery",
    "shadow_release",
    "singling_out",
]
