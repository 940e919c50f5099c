"""The evaluate phase of a run: risk before and after, and the custodian's report.

The writing pass carries an :class:`Evaluation` probe: per partition it counts the
records per combination of the released quasi-identifiers, before and after (so the
risk covers every record, from class counts, whatever the engine), and it keeps the
original and released records of a deterministic sample of partitions, evenly spaced
and holding about :data:`REPORT_ROWS` records (every partition in memory). The report
compares those records: it is as confidential as the raw data and goes to the
custodian folder, never beside the release.

Risk after release is measured on what an attacker can match (:func:`attacker_keys`):
the quasi-identifiers released as they are or generalized. A noised one (local DP) or a
pseudonymized one is no class key: its released value is not the one the attacker
knows, and counting it as exact would report records as unique on their noise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

import numpy as np
import pandas as pd

from veil.release.engine import Probe
from veil.release.plan import Plan
from veil.release.steps.base import RECORDS, record_counts
from veil.risk import summary as risk_summary

__all__ = ["REPORT_ROWS", "Evaluation", "attacker_keys", "build_report"]

REPORT_ROWS = 50_000
"""Records of the sample a report is built from (at least one partition)."""

# The risk threshold of the records' risk summary (the report's).
_RISK_THRESHOLD = 0.2
# Treatments whose released values are not the ones an attacker knows.
_NOT_KEYS: Final[frozenset[str]] = frozenset(
    {"laplace", "gaussian", "exponential", "randomized_response", "hmac", "token", "ff1", "redact"}
)


def attacker_keys(plan: Plan, qis: Sequence[str]) -> list[str]:
    """The quasi-identifiers of ``qis`` an attacker can match exactly in the release.

    Those released as they are or generalized; a noised (local-DP), pseudonymized or
    synthesized (a share step's S, drawn from a DP model) quasi-identifier is left out.
    No privacy cost: it reads the plan only.

    Parameters
    ----------
    plan : Plan
        The run's plan.
    qis : sequence of str
        The released quasi-identifiers.

    Returns
    -------
    list of str
        The class keys, in the order of ``qis``.
    """
    synthesized = set(plan.share.synthesized) if plan.share is not None else set()
    return [
        q
        for q in qis
        if q not in synthesized
        and (q not in plan.columns or plan.columns[q].treatment.method not in _NOT_KEYS)
    ]


def _risk(frame: pd.DataFrame, qis: list[str]) -> dict[str, Any]:
    if not qis or len(frame) == 0:
        return {}
    summary = risk_summary(frame, qis, threshold=_RISK_THRESHOLD, weights=RECORDS)
    return {"quasi_identifiers": qis, **summary.to_dict()}


def _sum_counts(parts: list[pd.DataFrame], columns: list[str]) -> pd.DataFrame:
    if not parts:
        return pd.DataFrame({**{c: [] for c in columns}, RECORDS: []})
    both = pd.concat(parts, ignore_index=True)
    summed = both.groupby(columns, dropna=False, observed=True, sort=False)[RECORDS]
    return summed.sum().reset_index()


class Evaluation:
    """The probe of the writing pass, and what it collected.

    Parameters
    ----------
    risk_qis : list of str
        The released quasi-identifiers the risk is measured on (empty: no risk).
    partitions, rows : int
        The input's partitions and records.
    report : bool
        Whether a report sample is kept.
    keys : list of str, optional
        The quasi-identifiers the risk after release is measured on (default all of
        ``risk_qis``); :func:`attacker_keys` gives those an attacker can match.
    """

    def __init__(
        self,
        risk_qis: list[str],
        partitions: int,
        rows: int,
        report: bool,
        *,
        keys: Sequence[str] | None = None,
    ) -> None:
        self.risk_qis = risk_qis
        self.keys = list(risk_qis) if keys is None else [q for q in risk_qis if q in set(keys)]
        self.partitions = partitions
        self.rows = rows
        self.sample = _sample_partitions(partitions, rows) if report else set()
        self._before: list[pd.DataFrame] = []
        self._after: list[pd.DataFrame] = []
        self._sampled: dict[int, tuple[pd.DataFrame, pd.DataFrame]] = {}

    @property
    def active(self) -> bool:
        """Whether the pass needs to run the probe at all."""
        return bool(self.risk_qis or self.sample)

    def probe(self) -> Probe:
        """The probe for the workers: class counts before and after, sampled records.

        It holds only the quasi-identifiers and the sampled partitions (it travels to
        worker processes), not what was collected.
        """
        qis, sample = list(self.risk_qis), set(self.sample)

        def probe(p: int, original: pd.DataFrame, part: pd.DataFrame) -> Any:
            counts = (record_counts(original, qis), record_counts(part, qis)) if qis else None
            return counts, ((original, part) if p in sample else None)

        return probe

    def collect(self, p: int, probed: Any) -> None:
        """On the client: keep what partition ``p``'s probe returned."""
        counts, pair = probed
        if counts is not None:
            self._before.append(counts[0])
            self._after.append(counts[1])
        if pair is not None:
            self._sampled[p] = pair

    def risk(self, computed_on: str) -> dict[str, Any] | None:
        """Risk before and after on every record (None when no risk is measured)."""
        if not self.risk_qis:
            return None
        qis, keys = self.risk_qis, self.keys
        # Counts per combination of every quasi-identifier sum to counts per key.
        result = {
            "before": _risk(_sum_counts(self._before, qis), qis),
            "after": _risk(_sum_counts(self._after, keys), keys) if keys else {},
            "computed_on": computed_on,
        }
        left_out = [q for q in qis if q not in keys]
        if left_out:
            result["not_class_keys"] = left_out
        return result

    def sample_note(self) -> str | None:
        """What the report sample covers, or None when it holds every record."""
        if len(self._sampled) >= self.partitions:
            return None
        held = sum(len(before) for before, _ in self._sampled.values())
        return (
            f"a deterministic sample: {len(self._sampled)} of {self.partitions} "
            f"partitions, evenly spaced ({held} of {self.rows} records)"
        )

    def paired_sample(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Sampled originals and releases, with labels pairing their records."""
        originals: list[pd.DataFrame] = []
        released: list[pd.DataFrame] = []
        offset = 0
        for p in sorted(self._sampled):
            before, after = self._sampled[p]
            positions = pd.Index(before.index).get_indexer(after.index)
            originals.append(before.set_axis(pd.RangeIndex(offset, offset + len(before))))
            released.append(after.set_axis(pd.Index(positions + offset)))
            offset += len(before)
        return pd.concat(originals), pd.concat(released)


def _sample_partitions(partitions: int, rows: int) -> set[int]:
    """Evenly spaced partitions holding about :data:`REPORT_ROWS` records (at least one)."""
    wanted = math.ceil(partitions * REPORT_ROWS / max(rows, 1))
    m = min(partitions, max(1, wanted))
    return {int(p) for p in np.linspace(0, partitions - 1, m).round()}


def build_report(
    original: pd.DataFrame,
    released: pd.DataFrame,
    plan: Plan,
    manifest: dict[str, Any],
    rng: np.random.Generator,
    *,
    title: str = "Release report",
) -> str:
    """The custodian's HTML report of a run (see :func:`veil.release.report.build_report`)."""
    from veil.release.report import build_report as render

    present = set(released.columns)
    locations: Sequence[tuple[str, str]] = [
        (loc.lat, loc.lon) for loc in plan.locations if loc.lat in present and loc.lon in present
    ]
    return render(
        original,
        released,
        manifest=manifest,
        quasi_identifiers=[c for c in plan.columns_with("quasi_identifier") if c in present],
        sensitive=[c for c in plan.columns_with("sensitive") if c in present],
        locations=list(locations),
        target=plan.evaluation.target,
        rng=rng,
        metrics=plan.evaluation.metrics,
        title=title,
    )
