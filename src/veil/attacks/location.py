"""Location re-identification: the nearest released point is the target's own record.

An attacker who knows where a target was (they saw the trip start, they know the address)
takes the released record whose masked location is nearest to it. The attack succeeds when
that record is the target's own. With the exact columns the attacker also knows (a count, a
time cell, a magnitude) only released records agreeing with the target on them are
candidates, and a location released as cells (a grid) is matched by cell when the release
says how its cells are drawn (:attr:`veil.attacks.Release.cells`); locations released as
points are compared by distance, all of them at once.

When several candidates are equally near (records in one cell), the attacker picks one at
random, and the attack counts the chance of picking the right one.

**Baseline.** Chance: a record picked at random from the release is the target's with
probability one over the number of released records.

Distances are measured on the sphere (chord length of unit vectors, reported in metres
with a mean Earth radius of 6 371 008.8 m), so no projection is needed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.spatial import cKDTree

from veil.attacks.encoding import encode, groups
from veil.attacks.result import AttackResult
from veil.attacks.spec import AttackSpec, Location, Release
from veil.attacks.stats import Rate, rate
from veil.attacks.targets import Inputs, check_count, check_inputs
from veil.errors import ParameterError
from veil.rng import RngLike

__all__ = ["location"]

_EARTH_RADIUS_M = 6_371_008.8
# A target's cell matches a released cell within this distance (rounding in a file).
_CELL_TOLERANCE_M = 1.0
# Separates groups of candidates in the search space: farther than any two points.
_GROUP_GAP = 100.0
_RELATIVE_TIE = 1e-9

FloatMatrix = npt.NDArray[np.float64]
FloatArray = npt.NDArray[np.float64]


def _unit_vectors(lat: pd.Series, lon: pd.Series) -> FloatMatrix:
    """Points on the unit sphere; missing coordinates give NaN."""
    phi = np.radians(lat.to_numpy(dtype=np.float64, na_value=np.nan))
    lam = np.radians(lon.to_numpy(dtype=np.float64, na_value=np.nan))
    return np.column_stack([np.cos(phi) * np.cos(lam), np.cos(phi) * np.sin(lam), np.sin(phi)])


def _metres(chord: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    return np.asarray(2.0 * _EARTH_RADIUS_M * np.arcsin(np.clip(chord / 2.0, 0.0, 1.0)))


@dataclass(frozen=True)
class _Variant:
    name: str
    exact: tuple[str, ...]
    cells: tuple[Location, ...]
    points: tuple[Location, ...]


def _cell_ids(
    release: Release, targets: pd.DataFrame, where: Location
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Cell numbers of the released rows and of the targets' true points (-1: missing)."""
    released = _unit_vectors(release.frame[where.lat], release.frame[where.lon])
    present = ~np.isnan(released).any(axis=1)
    ids = np.full(len(released), -1, dtype=np.int64)
    centres, inverse = np.unique(np.round(released[present], 9), axis=0, return_inverse=True)
    ids[present] = inverse.ravel()
    cells = release.cell_view(targets, where)
    assert cells is not None
    wanted = _unit_vectors(cells[where.lat], cells[where.lon])
    found = np.full(len(wanted), -1, dtype=np.int64)
    ok = ~np.isnan(wanted).any(axis=1)
    if len(centres) and ok.any():
        gap, nearest = cKDTree(centres).query(wanted[ok])
        found[ok] = np.where(_metres(gap) <= _CELL_TOLERANCE_M, nearest, -1)
    return ids, found


def _groups(
    inputs: Inputs, variant: _Variant, targets: pd.DataFrame
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Candidate group of each released row and of each target (-1: no released row)."""
    parts_rel: list[FloatMatrix] = [np.zeros((len(inputs.release.frame), 0))]
    parts_tgt: list[FloatMatrix] = [np.zeros((len(targets), 0))]
    if variant.exact:
        encoded = encode(
            list(variant.exact),
            [inputs.release.frame, inputs.release.view(targets, variant.exact)],
        )
        parts_rel.append(encoded.frames[0])
        parts_tgt.append(encoded.frames[1])
    for where in variant.cells:
        rel_ids, tgt_ids = _cell_ids(inputs.release, targets, where)
        parts_rel.append(rel_ids[:, None].astype(np.float64))
        parts_tgt.append(tgt_ids[:, None].astype(np.float64))
    return groups(np.hstack(parts_rel), np.hstack(parts_tgt))


def _success(
    inputs: Inputs, variant: _Variant, targets: pd.DataFrame, own: npt.NDArray[np.intp]
) -> tuple[FloatArray, FloatArray, npt.NDArray[np.int64], FloatArray]:
    """Each target's chance of being found, with points and by matching alone; its
    candidates (released records agreeing on exact columns and cells); its point's
    displacement in metres."""
    rel_groups, tgt_groups = _groups(inputs, variant, targets)
    sizes = np.bincount(rel_groups)
    candidates = np.where(tgt_groups >= 0, sizes[np.maximum(tgt_groups, 0)], 0)
    same_group = (tgt_groups >= 0) & (rel_groups[own] == tgt_groups)
    matching = np.where(same_group, 1.0 / np.maximum(candidates, 1), 0.0)
    if not variant.points:
        return matching, matching, candidates, np.full(len(targets), np.nan)
    frame = inputs.release.frame
    rel_xyz = np.hstack([_unit_vectors(frame[p.lat], frame[p.lon]) for p in variant.points])
    tgt_xyz = np.hstack([_unit_vectors(targets[p.lat], targets[p.lon]) for p in variant.points])
    moved = _metres(np.linalg.norm(tgt_xyz[:, :3] - rel_xyz[own, :3], axis=1))
    rel_xyz = np.where(np.isnan(rel_xyz), 10.0, rel_xyz)  # a missing point is never nearest
    rel_space = np.column_stack([rel_xyz, rel_groups * _GROUP_GAP])
    tgt_space = np.column_stack([tgt_xyz, np.maximum(tgt_groups, 0) * _GROUP_GAP])
    tree = cKDTree(rel_space)
    best, _ = tree.query(tgt_space)
    reach = best * (1.0 + _RELATIVE_TIE) + 1e-15
    tied = tree.query_ball_point(tgt_space, reach, return_length=True)
    own_gap = np.linalg.norm(tgt_space - rel_space[own], axis=1)
    chance = np.where(same_group & (own_gap <= reach), 1.0 / np.maximum(tied, 1), 0.0)
    return chance, matching, candidates, moved


def _variants(inputs: Inputs) -> list[_Variant]:
    spec, release = inputs.spec, inputs.release
    held = set(release.frame.columns)
    usable = [p for p in spec.locations if p.lat in held and p.lon in held]
    if not usable:
        raise ParameterError("location: the release holds none of the spec's locations")
    cells = tuple(p for p in usable if (p.lat, p.lon) in release.cells)
    points = tuple(p for p in usable if p not in cells)
    out = [
        _Variant(f"alone: {p.name}", (), (p,) if p in cells else (), () if p in cells else (p,))
        for p in usable
    ]
    exact = tuple(c for c in spec.exact if c in held and c not in spec.sensitive)
    if exact or len(usable) > 1:
        names = [p.name for p in usable] + list(exact)
        out.append(_Variant("with " + ", ".join(names), exact, cells, points))
    return out


def _result(
    variant: _Variant,
    found: tuple[FloatArray, FloatArray, npt.NDArray[np.int64], FloatArray],
    n_rows: int,
) -> AttackResult:
    chance, matching, candidates, moved = found
    success = rate(float(chance.sum()), len(chance))
    locations = [p.name for p in (*variant.cells, *variant.points)]
    any_target = len(chance) > 0
    # What matching on exact columns and cells gives alone, picking among the matches.
    alone = float(np.mean(matching)) if any_target else 0.0
    mean_candidates = float(np.mean(candidates)) if any_target else None
    if variant.exact and any_target and alone >= 0.5 * success.value:
        suggestion = (
            f"generalize or drop {', '.join(variant.exact)}: on their own they narrow a "
            f"person's candidates to {mean_candidates:.1f} records on average"
        )
    else:
        suggestion = (
            f"mask {', '.join(locations)} more strongly (a smaller epsilon per metre, larger "
            "cells, or cloaking to k records)"
            + (f", or generalize {', '.join(variant.exact)}" if variant.exact else "")
        )
    present = moved[~np.isnan(moved)]
    return AttackResult(
        attack="location",
        variant=variant.name,
        success=success,
        baseline=Rate.exact(1.0 / n_rows),
        baseline_kind="chance",
        n_targets=len(chance),
        columns=(*locations, *variant.exact),
        suggestion=suggestion,
        details={
            "mean_candidates": mean_candidates,
            "single_candidate_share": (
                float(np.mean((candidates == 1) & (chance > 0))) if any_target else None
            ),
            "matching_alone_rate": alone if variant.exact or variant.cells else None,
            "median_displacement_m": float(np.median(present)) if present.size else None,
        },
    )


def location(
    raw: pd.DataFrame,
    release: pd.DataFrame | Release,
    spec: AttackSpec,
    control: pd.DataFrame | None = None,
    *,
    n_targets: int = 10_000,
    rng: RngLike = None,
) -> tuple[AttackResult, ...]:
    """Location re-identification on ``release``, scored on ``raw``.

    Parameters
    ----------
    raw : pandas.DataFrame
        The records the release was made from.
    release : Release
        Must carry ``source`` (which record each released row came from); a location
        released as cells is matched by cell when ``cells`` has its recoder.
    spec : AttackSpec
        Its locations, and its exact columns (the sensitive ones left out) for the variant
        with auxiliary columns.
    control : pandas.DataFrame, optional
        Not used: the baseline is chance (the interface is the same for every attack).
    n_targets : int, default 10 000
        Released records attacked, drawn at random when there are more.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    tuple of AttackResult
        One per location alone, then one with every location and the exact columns (when
        there are exact columns or several locations).
    """
    inputs = check_inputs(raw, release, spec, control, rng)
    n_targets = check_count(n_targets, "n_targets")
    if spec.synthetic:
        raise ParameterError("location: a synthetic release has no record of anybody to find")
    source = inputs.release.source
    if source is None:
        raise ParameterError(
            "location: needs release.source (the record each released row came from); "
            "a shadow release provides it"
        )
    own = np.flatnonzero(source.isin(inputs.raw.index))
    if len(own) < len(source):
        raise ParameterError(
            f"release.source: {len(source) - len(own)} labels are not records of raw"
        )
    if len(own) > n_targets:
        own = np.sort(inputs.rng.choice(own, size=n_targets, replace=False))
    targets = inputs.raw.loc[source[own]]
    results = []
    for variant in _variants(inputs):
        known = np.ones(len(targets), dtype=bool)
        for p in variant.points:
            known &= targets[p.lat].notna().to_numpy() & targets[p.lon].notna().to_numpy()
        found = _success(inputs, variant, targets[known], own[known])
        results.append(_result(variant, found, len(inputs.release.frame)))
    return tuple(results)
