"""The attack phase of a run: the plan's own release attacked before it is published.

A custodian releases every record, so there is no held-out control to measure an attack
against. The phase runs the plan again, in memory, on a random part of the records (a
*shadow release*: :func:`release_records`, never written), and runs
:func:`veil.attacks.run_battery` on it with the rest of the records as control. What
the plan says of its columns becomes the attacks' :class:`~veil.attacks.AttackSpec`
(:func:`attack_spec`); what an attacker knows of how the release was made (the
hierarchies at the levels the shadow search chose, a grid's cells) becomes the shadow
release's recoders, so a generalized or gridded column is compared as released.

The results are measured on the raw records: they belong to the custodian record and the
report, never to the public manifest. :func:`veil.release.policy.check_attack_limits`
refuses a release whose attacks beat an operator's limits (the platform's policy).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from veil import geo
from veil.attacks import AttackSpec, BatteryResult, Location, Release, run_battery
from veil.release.engine import PandasEngine
from veil.release.plan import GeneralizeTreatment, GridMask, Plan
from veil.release.progress import Reporter
from veil.release.protect import check_columns, plan_steps, plan_steps_dropping, protect
from veil.release.steps.location import location_projection

__all__ = ["attack_published", "attack_release", "attack_spec", "release_records"]


class _Held:
    """A sink that keeps what an engine streams into it, in memory."""

    scratch: Path | None = None

    def __init__(self) -> None:
        self.parts: list[pd.DataFrame] = []

    def write(self, part: pd.DataFrame) -> None:
        self.parts.append(part)


def release_records(
    plan: Plan, records: pd.DataFrame, *, rng: np.random.Generator
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The plan's release of ``records``, made in memory: nothing is read or written.

    The plan's steps run on ``records`` (an allocated plan: every epsilon set) exactly as
    :func:`run` runs them, on pandas, and the released rows come back shuffled, each
    keeping the index label of the record it comes from (a synthetic share release's rows
    come from nobody). The attack phase releases a shadow sample this way
    (:func:`attack_release`).

    Returns
    -------
    released : pandas.DataFrame
    facts : dict
        What the counted and whole-table steps found (the anonymization's levels).
    """
    engine = PandasEngine()
    data = engine.adopt(records, "records given to release_records (in memory)")
    steps = plan_steps_dropping(plan_steps(plan), check_columns(plan, data.columns))
    from veil.rng import spawn

    streams = spawn(rng, steps.streams_needed + 1)
    reporter = Reporter(None, None)
    protected = protect(engine, data, steps, streams[:-1], reporter)
    sink = _Held()
    protected.engine.stream(
        protected.rows, sink, reporter, finish=protected.finish, order=streams[-1]
    )
    released = pd.concat(sink.parts) if sink.parts else records.iloc[:0]
    return released, dict(protected.facts)


def _exact(plan: Plan) -> list[str]:
    """The columns released exactly as they are read, whatever their role."""
    anonymized = set(plan.anonymization.quasi_identifiers) if plan.anonymization else set()
    exact = [
        name
        for name, spec in plan.columns.items()
        if spec.treatment.method == "keep" and name not in anonymized
    ]
    if plan.share is not None:
        synthesized = set(plan.share.synthesized)
        exact = [c for c in exact if c not in synthesized]
    return exact


def attack_spec(plan: Plan) -> AttackSpec:
    """What the plan says of its released columns, as the attacks read it.

    Quasi-identifiers and sensitive columns by their roles (dropped ones left out), the
    columns kept exactly, the masked locations, and whether the rows are synthetic (a
    share plan: its S is drawn from a model).
    """
    return AttackSpec(
        quasi_identifiers=tuple(plan.columns_with("quasi_identifier")),
        sensitive=tuple(plan.columns_with("sensitive")),
        # Kept exactly and known to an attacker: every role but the sensitive value.
        exact=tuple(c for c in _exact(plan) if plan.columns[c].role != "sensitive"),
        locations=tuple(Location(loc.lat, loc.lon) for loc in plan.locations),
        synthetic=plan.share is not None,
    )


def _recoders(plan: Plan, levels: Mapping[str, int], raw: pd.DataFrame) -> dict[str, Any]:
    """A generalized column's public recoding: its hierarchy at the level released."""
    recoders: dict[str, Any] = {}
    hierarchies: dict[str, tuple[Any, int]] = {}
    if plan.anonymization is not None:
        for qi, spec in plan.anonymization.quasi_identifiers.items():
            if qi in levels:
                hierarchies[qi] = (spec, int(levels[qi]))
    for name, column in plan.columns.items():
        if isinstance(column.treatment, GeneralizeTreatment):
            hierarchies[name] = (column.treatment.hierarchy, column.treatment.level)
    for name, (spec, level) in hierarchies.items():
        where = f"the attack on {name}"
        values = raw[name].dropna().unique()
        hierarchy = spec.load(where, values) if spec.needs_values else spec.load(where)
        recoders[name] = lambda s, h=hierarchy, lv=level: h.generalize(s, lv)
    return recoders


def _grid_cells(lat: str, lon: str, size: float, projection: Any) -> Any:
    """Maps a frame's true coordinates to the centres of the grid cells they fall in."""

    def recode(frame: pd.DataFrame) -> pd.DataFrame:
        coded = geo.grid(
            frame, lat, lon, size, projection=projection, outside="drop", max_outside=1.0,
            missing="keep",
        )  # fmt: skip
        return coded[[lat, lon]].reindex(frame.index)

    return recode


def _cells(plan: Plan) -> dict[tuple[str, str], Any]:
    """A gridded location's public recoding: the centre of the cell a point falls in."""
    return {
        (loc.lat, loc.lon): _grid_cells(loc.lat, loc.lon, loc.mask.cell_m, location_projection(loc))
        for loc in plan.locations
        if isinstance(loc.mask, GridMask)
    }


def attack_release(
    plan: Plan,
    raw: pd.DataFrame,
    *,
    attacks: list[str] | None = None,
    rng: np.random.Generator | int | None = None,
) -> BatteryResult:
    """Run the plan's attacks on a shadow release of ``raw`` (nothing written).

    Parameters
    ----------
    plan : Plan
        An allocated plan (every epsilon set).
    attacks : list of str, optional
        The attacks to run (default: the plan's ``evaluation.attacks``, every applicable
        one when that is empty).
    raw : pandas.DataFrame
        The records the plan releases (or an evenly spread sample of them). Not modified.
    rng : numpy.random.Generator, int or None
        The split, the shadow release's noise and the attacks' draws (by default the
        plan's ``attack_seed``, else the secure generator).

    Returns
    -------
    veil.attacks.BatteryResult
    """
    from veil.rng import resolve_rng, spawn

    evaluation = plan.evaluation
    seed = rng if rng is not None else evaluation.attack_seed
    split, noise = spawn(resolve_rng(seed, stacklevel=3), 2)
    spec = attack_spec(plan)
    cells = _cells(plan)

    def shadow(records: pd.DataFrame) -> Release:
        released, facts = release_records(plan, records, rng=noise)
        levels = dict((facts.get("anonymization") or {}).get("levels", {}))
        return Release(
            released,
            source=None if spec.synthetic else released.index,
            recode=_recoders(plan, levels, raw),
            cells=cells,
        )

    return run_battery(
        raw,
        shadow,
        spec,
        attacks=(attacks if attacks is not None else list(evaluation.attacks)) or None,
        sample=evaluation.attack_sample,
        fraction=evaluation.attack_fraction,
        rng=split,
    )


def attack_published(
    plan: Plan,
    raw: pd.DataFrame,
    released: pd.DataFrame,
    *,
    levels: Mapping[str, int] | None = None,
    other: pd.DataFrame | None = None,
    attacks: list[str] | None = None,
    rng: np.random.Generator | int | None = None,
) -> BatteryResult:
    """Attack a published release of ``raw`` as it is (no held-out control).

    The release was made from every record, so no record is held out: the attacks that
    need a control or which record each released row came from (location, membership)
    are skipped, with the reason; the shadow release of :func:`attack_release` measures
    them instead.

    Parameters
    ----------
    plan : Plan
        The plan the release was made with.
    raw, released : pandas.DataFrame
        The records and the release (not modified).
    levels : mapping of str to int, optional
        The anonymization's levels (the public manifest's ``anonymization.levels``), so
        that an attacker's knowledge is generalized as the release is.
    other : pandas.DataFrame, optional
        Another release of the same records, for the intersection attack.
    attacks : list of str, optional
        Default: the plan's ``evaluation.attacks``, every applicable one when empty.
    rng : numpy.random.Generator, int or None
    """
    from veil.rng import resolve_rng

    release = Release(released, recode=_recoders(plan, dict(levels or {}), raw), cells=_cells(plan))
    wanted = attacks if attacks is not None else list(plan.evaluation.attacks)
    return run_battery(
        raw,
        release,
        attack_spec(plan),
        attacks=wanted or None,
        other=other,
        rng=resolve_rng(rng if rng is not None else plan.evaluation.attack_seed, stacklevel=3),
    )
