"""Linkability: the release joins two sources an attacker holds about the same people.

The attacker holds two datasets about the same people, each with some of the release's
columns (a registry with age, sex and postcode; a survey with occupation and income), and
wants to know which record of one is which of the other. For each target, the release
row nearest to what the first source says and the row nearest to what the second says
are looked up (Gower distance, :mod:`veil.attacks.neighbours`); when the two are the same
row, the release has linked the target's two records (Giomi et al., PETS 2023, Section
5.2). With ``n_neighbors = k`` the link holds when the ``k`` nearest rows of each side
share one.

**Baseline.** The same attack on control records, which the release was not made from:
what the population's patterns alone let the attacker link. Without control records, the
chance that two random draws of ``k`` rows share one.
"""

from __future__ import annotations

from math import lgamma

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.attacks.encoding import Encoded
from veil.attacks.neighbours import agreement, nearest
from veil.attacks.result import AttackResult, distinctness, driving_columns
from veil.attacks.spec import AttackSpec, Release
from veil.attacks.stats import Rate, rate
from veil.attacks.targets import (
    Inputs,
    check_count,
    check_inputs,
    control_baseline,
    sample_rows,
)
from veil.errors import ParameterError
from veil.rng import RngLike

__all__ = ["default_split", "linkability"]


def default_split(spec: AttackSpec, held: list[str]) -> tuple[list[str], list[str]]:
    """The two sources of the attack: the spec's ``link_split``, or its default.

    By default the quasi-identifiers (what a registry holds) on one side and the other
    released columns (exact, then sensitive) on the other; when either would be empty,
    the quasi-identifiers split alternately in two. Only columns the release holds count.
    """
    if spec.link_split is not None:
        first = [c for c in spec.link_split[0] if c in held]
        second = [c for c in spec.link_split[1] if c in held]
    else:
        first = [c for c in spec.quasi_identifiers if c in held]
        second = [c for c in spec.tabular if c in held and c not in first]
        if not first or not second:
            pool = first or second
            first, second = pool[0::2], pool[1::2]
    if not first or not second:
        raise ParameterError(
            "linkability: needs a column on each side of the attacker's two sources among "
            f"the released columns, got {first} and {second}"
        )
    return first, second


def _links(
    inputs: Inputs, sides: tuple[list[str], list[str]], targets: pd.DataFrame, k: int
) -> tuple[npt.NDArray[np.bool_], list[Encoded], list[npt.NDArray[np.intp]]]:
    """Whether each target's two sides meet on a released row; the encodings and matches."""
    encodings: list[Encoded] = []
    matches: list[npt.NDArray[np.intp]] = []
    for columns in sides:
        encoded = inputs.encode(columns, targets)
        index, _ = nearest(encoded.frames[1], encoded.frames[0], encoded.numeric, inputs.rng, k=k)
        encodings.append(encoded)
        matches.append(index)
    first, second = matches
    linked = (first[:, :, None] == second[:, None, :]).any(axis=(1, 2))
    return linked, encodings, matches


def _chance(n_rows: int, k: int) -> float:
    """The chance that two random ``k``-subsets of ``n_rows`` rows share a row."""
    if 2 * k > n_rows:
        return 1.0
    log_disjoint = (
        lgamma(n_rows - k + 1)
        - lgamma(n_rows - 2 * k + 1)
        - lgamma(n_rows + 1)
        + lgamma(n_rows - k + 1)
    )
    return float(1.0 - np.exp(log_disjoint))


def linkability(
    raw: pd.DataFrame,
    release: pd.DataFrame | Release,
    spec: AttackSpec,
    control: pd.DataFrame | None = None,
    *,
    n_attacks: int = 2000,
    n_neighbors: int = 1,
    rng: RngLike = None,
) -> tuple[AttackResult, ...]:
    """The linkability attack on ``release``, scored on ``raw``.

    Parameters
    ----------
    raw : pandas.DataFrame
        The records the release was made from.
    release : pandas.DataFrame or Release
    spec : AttackSpec
        Its ``link_split`` (or the default of :func:`default_split`) gives the two sources.
    control : pandas.DataFrame, optional
        Records of the same population not in the release: the baseline.
    n_attacks : int, default 2000
        Targets drawn from ``raw`` (and as many from ``control``).
    n_neighbors : int, default 1
    rng : None, int or numpy.random.Generator

    Returns
    -------
    tuple of AttackResult
        One result.
    """
    inputs = check_inputs(raw, release, spec, control, rng)
    n_attacks = check_count(n_attacks, "n_attacks")
    k = check_count(n_neighbors, "n_neighbors")
    sides = default_split(spec, inputs.released(spec.tabular + _split_columns(spec)))
    targets = sample_rows(inputs.raw, n_attacks, inputs.rng)
    linked, encodings, matches = _links(inputs, sides, targets, k)
    success = rate(float(linked.sum()), len(targets))
    chance = _chance(len(inputs.release.frame), k)
    baseline, kind = control_baseline(
        inputs,
        n_attacks,
        lambda held_out: _links(inputs, sides, held_out, k)[0],
        Rate.exact(chance),
    )
    agree = np.concatenate(
        [
            agreement(e.frames[1], e.frames[0][m[:, 0]], e.numeric)
            for e, m in zip(encodings, matches, strict=True)
        ],
        axis=1,
    )
    names = (*sides[0], *sides[1])
    distinct = np.concatenate([distinctness(e.frames[0]) for e in encodings])
    columns, score = driving_columns(names, agree[linked], agree[~linked], distinct)
    return (
        AttackResult(
            attack="linkability",
            variant=f"{len(sides[0])} + {len(sides[1])} columns",
            success=success,
            baseline=baseline,
            baseline_kind=kind,
            n_targets=len(targets),
            columns=columns,
            suggestion=(
                f"generalize or perturb {', '.join(columns)}: the release matches them "
                "exactly to the records an attacker holds, and so joins the attacker's "
                "two sources"
                if columns
                else "no column stands out; keep the release as it is"
            ),
            details={
                "sources": [list(sides[0]), list(sides[1])],
                "n_neighbors": k,
                "chance_rate": chance,
                "column_scores": score,
            },
        ),
    )


def _split_columns(spec: AttackSpec) -> tuple[str, ...]:
    if spec.link_split is None:
        return ()
    return tuple(c for side in spec.link_split for c in side if c not in spec.tabular)
