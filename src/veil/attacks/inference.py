"""Attribute inference: the release tells an attacker a target's sensitive value.

The attacker knows a target's quasi-identifiers and exact columns, finds the released row
nearest to them (Gower distance, :mod:`veil.attacks.neighbours`) and guesses that the
target's sensitive value is that row's (Giomi et al., PETS 2023, Section 5.3). A guess of
a category is right when it is the target's category; a guess of a number when it lies
within ``tolerance`` (5 %) of the target's value, relative to the target's value (so a
true 0 must be guessed exactly). Each sensitive column is attacked apart.

**Baseline.** The same attack on control records, which the release was not made from:
what the population's correlations let anybody infer, release or not (that part is
statistics, not a leak). Without control records, the naive attacker who guesses a
random released value.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.attacks.encoding import Encoded
from veil.attacks.neighbours import agreement, nearest
from veil.attacks.result import AttackResult, distinctness, driving_columns
from veil.attacks.spec import AttackSpec, Release
from veil.attacks.stats import rate
from veil.attacks.targets import (
    Inputs,
    check_count,
    check_inputs,
    control_baseline,
    sample_rows,
)
from veil.errors import ParameterError
from veil.rng import RngLike

__all__ = ["inference"]


def _correct(
    guesses: npt.NDArray[np.float64],
    truth: npt.NDArray[np.float64],
    numeric: bool,
    tolerance: float,
) -> npt.NDArray[np.bool_]:
    """Which guesses are right (encoded values of the secret column; numbers are scaled
    without a shift, so the relative tolerance reads the same on them)."""
    if not numeric:
        return np.asarray(guesses == truth)
    both_missing = np.isnan(guesses) & np.isnan(truth)
    with np.errstate(invalid="ignore"):
        close = np.abs(guesses - truth) <= tolerance * np.abs(truth)
    return np.asarray(both_missing | close)


def _attack(
    inputs: Inputs, aux: list[str], secret: str, targets: pd.DataFrame, tolerance: float
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_], Encoded]:
    """Each target's guess scored; the aux columns' agreement with the matched row."""
    encoded = inputs.encode([*aux, secret], targets)
    release, known = encoded.frames
    a = len(aux)
    index, _ = nearest(known[:, :a], release[:, :a], encoded.numeric[:a], inputs.rng)
    matched = release[index[:, 0]]
    right = _correct(matched[:, a], known[:, a], bool(encoded.numeric[a]), tolerance)
    return right, agreement(known[:, :a], matched[:, :a], encoded.numeric[:a]), encoded


def _naive(
    inputs: Inputs, secret: str, targets: pd.DataFrame, tolerance: float
) -> npt.NDArray[np.bool_]:
    """The random guess: each target gets the secret of a random released row."""
    encoded = inputs.encode([secret], targets)
    release, known = encoded.frames
    picks = release[inputs.rng.integers(0, len(release), size=len(known)), 0]
    return _correct(picks, known[:, 0], bool(encoded.numeric[0]), tolerance)


def _one_secret(
    inputs: Inputs, secret: str, aux: list[str], n_attacks: int, tolerance: float
) -> AttackResult:
    targets = sample_rows(inputs.raw, n_attacks, inputs.rng)
    right, agree, encoded = _attack(inputs, aux, secret, targets, tolerance)
    success = rate(float(right.sum()), len(targets))
    naive = _naive(inputs, secret, targets, tolerance)
    naive_rate = rate(float(naive.sum()), len(targets))
    baseline, kind = control_baseline(
        inputs,
        n_attacks,
        lambda held_out: _attack(inputs, aux, secret, held_out, tolerance)[0],
        naive_rate,
    )
    distinct = distinctness(encoded.frames[0][:, : len(aux)])
    columns, score = driving_columns(tuple(aux), agree[right], agree[~right], distinct)
    return AttackResult(
        attack="inference",
        variant=secret,
        success=success,
        baseline=baseline,
        baseline_kind=kind,
        n_targets=len(targets),
        columns=columns,
        suggestion=(
            f"generalize or perturb {', '.join(columns)}, or perturb {secret}: the release "
            f"row that matches a person on them gives away their {secret}"
            if columns
            else f"perturb {secret} more: the release gives it away"
        ),
        details={
            "known_columns": list(aux),
            "naive_rate": float(naive_rate.value),
            "tolerance": tolerance,
            "column_scores": score,
        },
    )


def inference(
    raw: pd.DataFrame,
    release: pd.DataFrame | Release,
    spec: AttackSpec,
    control: pd.DataFrame | None = None,
    *,
    n_attacks: int = 2000,
    tolerance: float = 0.05,
    rng: RngLike = None,
) -> tuple[AttackResult, ...]:
    """Attribute inference on each sensitive column of ``release``, scored on ``raw``.

    Parameters
    ----------
    raw : pandas.DataFrame
        The records the release was made from.
    release : pandas.DataFrame or Release
    spec : AttackSpec
        The attacker knows the quasi-identifiers and exact columns (not the other sensitive
        ones); each sensitive column the release holds is a secret to guess.
    control : pandas.DataFrame, optional
        Records of the same population not in the release: the baseline.
    n_attacks : int, default 2000
        Targets drawn from ``raw`` (and as many from ``control``) per secret.
    tolerance : float, default 0.05
        How far, relative to the true value, a guess of a number may be and still count.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    tuple of AttackResult
        One per sensitive column the release holds.
    """
    inputs = check_inputs(raw, release, spec, control, rng)
    n_attacks = check_count(n_attacks, "n_attacks")
    if (
        isinstance(tolerance, bool)
        or not isinstance(tolerance, (int, float))
        or not (0.0 <= tolerance < 1.0)
    ):
        raise ParameterError(f"tolerance: must be a number in [0, 1), got {tolerance!r}")
    secrets = inputs.released(spec.sensitive)
    if not secrets:
        raise ParameterError(
            "inference: the attack spec names no sensitive column that the release holds"
        )
    known = [c for c in (*spec.quasi_identifiers, *spec.exact) if c not in spec.sensitive]
    aux = inputs.released(dict.fromkeys(known))
    if not aux:
        raise ParameterError(
            "inference: the release holds none of the quasi-identifiers or exact columns an "
            "attacker would know"
        )
    return tuple(_one_secret(inputs, s, aux, n_attacks, float(tolerance)) for s in secrets)
