"""The optimum of a full-domain generalization by evaluating every node of its lattice."""

from __future__ import annotations

import itertools
import math
from typing import Any

import pandas as pd

from veil.anonymity.hierarchy import Hierarchy
from veil.anonymity.models import PrivacyModel
from veil.anonymity.search import evaluate


def brute_force_optimum(
    df: pd.DataFrame,
    hierarchies: dict[str, Hierarchy],
    models: list[PrivacyModel],
    max_suppression: float,
    metric: str = "loss",
    **options: Any,
) -> float:
    """The least ``metric`` over the feasible nodes (inf when none is feasible).

    ``options`` go to :func:`veil.anonymity.evaluate` (``reference=``, ``weights=``).
    """
    best = math.inf
    for node in itertools.product(*(range(h.levels) for h in hierarchies.values())):
        levels = dict(zip(hierarchies, node, strict=True))
        result = evaluate(
            df, hierarchies, levels, models, max_suppression=max_suppression, **options
        )
        if bool(result.lattice["feasible"].iloc[0]):
            best = min(best, result.metrics[metric])
    return best
