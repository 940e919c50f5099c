"""The result of an OptimShare search: the released table and everything behind it.

:class:`ShareResult` carries the released table (Q exact, S synthetic), the search table
of every candidate, the cost of the release under the selection used (and what the
private rule would cost), the model the released S was drawn from, and, for the
manifest, every reading, every leak and the guarantee in words.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from veil.mechanisms import PrivacyCost
from veil.synth import SynthModel

__all__ = ["Selection", "ShareResult"]

Selection = Literal["paper", "private"]


@dataclass(frozen=True)
class ShareResult:
    """The released table of an OptimShare search, how it was chosen and what it costs.

    Attributes
    ----------
    data : pandas.DataFrame
        The released table: Q exact, S synthetic, rows in the input's order and index
        (shuffle them before publishing, :func:`veil.frames.shuffle_rows`).
    table : pandas.DataFrame
        Every candidate: pair, ε, δ, instance, utility (1 - U_l), U_o, U_p, U_l, the
        linkable fraction L, P_N, E_l, e, whether it qualifies (e >= E^T) and was chosen,
        whether its scores are noisy (private selection), and the fit, sample and score
        times in seconds (the fit time is that of the instance's model). Computed from
        the raw records: for the custodian.
    chosen : dict
        The released candidate's row of ``table``.
    cost : PrivacyCost
        Under ``selection="private"``, what releasing ``data`` costs; under ``"paper"``,
        what publishing every fitted model costs (the argmax's choice among them, made
        on the raw records, is a leak no bound covers).
    costs : dict of str to PrivacyCost
        ``"paper"``: the composition of every fit (only for ``selection="paper"``);
        ``"private"``: the random-stopping bound with the search's settings (what a
        private selection costs, also stated when the paper's rule was used).
    model : SynthModel
        The fitted model the released S was drawn from.
    readings, leaks, guarantee, settings, details
        Every reading made, every data-dependent choice not covered by the cost, the
        guarantee in words (Theorem 3.2 not claimed), the settings, and the composition
        and selection details (for the manifest).
    """

    data: pd.DataFrame
    table: pd.DataFrame
    chosen: dict[str, Any]
    cost: PrivacyCost
    costs: dict[str, PrivacyCost]
    model: SynthModel
    selection: Selection
    q: tuple[str, ...]
    s: tuple[str, ...]
    label: str
    readings: dict[str, str] = field(default_factory=dict)
    leaks: tuple[str, ...] = ()
    guarantee: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python summary for a manifest or ``--json`` (no data rows)."""
        return {
            "method": "OptimShare search (partially perturbed sharing)",
            "selection": self.selection,
            "q": list(self.q),
            "s": list(self.s),
            "label": self.label,
            "chosen": {k: _plain(v) for k, v in self.chosen.items()},
            "cost": _cost_dict(self.cost),
            "costs": {rule: _cost_dict(c) for rule, c in self.costs.items()},
            "guarantee": self.guarantee,
            "leaks": list(self.leaks),
            "readings": dict(self.readings),
            "settings": {k: _plain(v) for k, v in self.settings.items()},
            "details": self.details,
            "model": self.model.describe(),
            "candidates": [
                {k: _plain(v) for k, v in row.items()} for row in self.table.to_dict("records")
            ],
        }


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _cost_dict(cost: PrivacyCost) -> dict[str, Any]:
    return dataclasses.asdict(cost)
