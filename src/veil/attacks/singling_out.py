"""Singling out: predicates read off the release that isolate one person in the raw records.

The attacker looks for predicates that hold for exactly one released row, and bets that
each also holds for exactly one person of the data the release was made from (Article 29
Working Party, Opinion 05/2014; the attack of Giomi et al., PETS 2023, Section 5.1):

* **univariate**: a value seen once in a column, or a column's smallest or largest value
  ("capital-loss >= 4356");
* **multivariate**: ``n_cols`` columns of a random released row, an equality for a
  category and, for a number, "at least" when it lies above the column's median and "at
  most" below ("age <= 19 and education == Doctorate and hours-per-week >= 80").

Success is the share of the ``n_attacks`` attempts whose predicate holds for exactly one raw
record (an attempt that finds no predicate singling out a released row fails).

**Baseline.** A predicate can isolate a person by chance in any data of that size, whether
or not the release leaked it. The control records estimate how often the predicates
isolate somebody in data of the raw size drawn from the same population: with at least as
many control records as raw ones, exactly (the hypergeometric chance that a random subset
of the raw size holds one match); with fewer, by comparing raw and control records at the
control's size and scaling the difference up (see ``_chance_baseline``): no estimate from
fewer records can be unbiased at a larger size, and this one is when the release leaks
nothing, at the price of a wider interval. Without control records the baseline is the
naive attacker's: predicates of random released values and random operators.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.stats import hypergeom

from veil.attacks.predicates import EQ, GE, GT, LE, LT, MISSING, NE, Predicates, Ranked, count, rank
from veil.attacks.result import AttackResult, BaselineKind, distinctness, driving_columns
from veil.attacks.spec import AttackSpec, Release
from veil.attacks.stats import Z95, Rate, rate
from veil.attacks.targets import check_count, check_inputs
from veil.errors import ParameterError
from veil.rng import RngLike

__all__ = ["singling_out"]

Mode = Literal["univariate", "multivariate"]
# Predicates drawn and counted at once while looking for multivariate ones.
_BATCH = 1000
# Rows of the release sampled to screen candidate predicates (see _multivariate).
_SCREEN_ROWS = 1000


def _univariate(ranked: Ranked, n: int, rng: np.random.Generator) -> Predicates:
    """Rare values, extremes and a lone missing value of each column, that isolate a row."""
    release = ranked.frames[0]
    numeric = ranked.encoded.numeric
    cols: list[npt.NDArray[np.intp]] = []
    ops: list[npt.NDArray[np.int8]] = []
    found_ranks: list[npt.NDArray[np.int32]] = []
    for j in range(release.shape[0]):
        x = release[j]
        counts = np.bincount(x[x >= 0], minlength=len(ranked.values[j]))
        seen = np.flatnonzero(counts)
        found = [(EQ, np.flatnonzero(counts == 1))]
        if numeric[j] and seen.size:
            found += [(LE, seen[:1]), (GE, seen[-1:])]
        if np.count_nonzero(x < 0) == 1:
            found.append((MISSING, np.array([-1])))
        for op, r in found:
            cols.append(np.full(r.size, j, dtype=np.intp))
            ops.append(np.full(r.size, op, dtype=np.int8))
            found_ranks.append(r.astype(np.int32))
    candidates = Predicates(
        np.concatenate(cols)[:, None],
        np.concatenate(ops)[:, None],
        np.concatenate(found_ranks)[:, None],
    )
    candidates = candidates.take(rng.permutation(len(candidates)))
    candidates = candidates.take(count(release, candidates) == 1)
    return candidates.take(np.arange(min(n, len(candidates))))


def _medians(ranked: Ranked) -> npt.NDArray[np.float64]:
    """The released median rank of each numeric column (NaN for the others)."""
    release = ranked.frames[0]
    medians = np.full(release.shape[0], np.nan)
    for j in np.flatnonzero(ranked.encoded.numeric):
        present = release[j][release[j] >= 0]
        if present.size:
            medians[j] = np.median(present)
    return medians


def _from_rows(
    ranked: Ranked,
    medians: npt.NDArray[np.float64],
    size: int,
    n_cols: int,
    rng: np.random.Generator,
) -> Predicates:
    """``size`` predicates, each on ``n_cols`` columns of a random released row."""
    release = ranked.frames[0]
    rows = rng.integers(0, release.shape[1], size=size)
    cols = np.argsort(rng.random((size, release.shape[0])), axis=1)[:, :n_cols]
    ranks = release[cols, rows[:, None]]
    ops = np.where(
        ranked.encoded.numeric[cols], np.where(ranks > medians[cols], GE, LE), EQ
    ).astype(np.int8)
    ops[ranks < 0] = MISSING
    return Predicates(cols.astype(np.intp), ops, ranks)


def _multivariate(
    ranked: Ranked, n: int, n_cols: int, max_attempts: int, rng: np.random.Generator
) -> tuple[Predicates, int]:
    """Up to ``n`` distinct predicates that isolate a released row; and the attempts made.

    Most random predicates hold for many rows; a count on a random tenth of the release
    (at least 1 000 rows) rules those out cheaply before the full count, since a predicate
    holding for one released row holds for at most one row of any part of the release.
    """
    release = ranked.frames[0]
    n_cols = min(n_cols, release.shape[0])
    medians = _medians(ranked)
    part_size = max(_SCREEN_ROWS, release.shape[1] // 10)
    screen = (
        release[:, np.sort(rng.choice(release.shape[1], size=part_size, replace=False))]
        if release.shape[1] > 2 * part_size
        else None
    )
    found = Predicates(
        np.empty((0, n_cols), np.intp),
        np.empty((0, n_cols), np.int8),
        np.empty((0, n_cols), np.int32),
    )
    attempts = 0
    while len(found) < n and attempts < max_attempts:
        size = min(_BATCH, max_attempts - attempts)
        batch = _from_rows(ranked, medians, size, n_cols, rng)
        attempts += size
        if screen is not None:
            batch = batch.take(count(screen, batch) <= 1)
        merged = Predicates.concat([found, batch.take(count(release, batch) == 1)])
        found = merged.take(merged.first_unique())
    return found.take(np.arange(min(n, len(found)))), attempts


def _naive(ranked: Ranked, n: int, n_cols: int, rng: np.random.Generator) -> Predicates:
    """The random-guess attacker: random columns, released values and operators."""
    release = ranked.frames[0]
    n_cols = min(n_cols, release.shape[0])
    cols = np.argsort(rng.random((n, release.shape[0])), axis=1)[:, :n_cols]
    ranks = release[cols, rng.integers(0, release.shape[1], size=(n, n_cols))]
    numeric_ops = np.array([EQ, NE, LT, LE, GT, GE], dtype=np.int8)
    category_ops = np.array([EQ, NE], dtype=np.int8)
    ops = np.where(
        ranked.encoded.numeric[cols],
        numeric_ops[rng.integers(0, 6, size=cols.shape)],
        category_ops[rng.integers(0, 2, size=cols.shape)],
    ).astype(np.int8)
    ops[ranks < 0] = MISSING
    return Predicates(cols.astype(np.intp), ops, ranks)


def _chance_baseline(
    raw_counts: npt.NDArray[np.int64],
    control_counts: npt.NDArray[np.int64],
    sizes: tuple[int, int],
    n_attacks: int,
) -> Rate:
    """How often the predicates would isolate somebody by chance in data of the raw size.

    With at least as many control records as raw ones: for each predicate, the exact
    chance that a random subset of the control of the raw size holds one match
    (hypergeometric; unbiased). With fewer, raw and control are compared at the control's
    size (a random subset of the raw records of that size, in expectation), which is
    unbiased when the release leaks nothing; the difference, scaled up to the raw size, is
    the part of the success owed to the release, and the rest is the baseline. Its
    interval carries the scaling.
    """
    n_raw, n_control = sizes
    pad = n_attacks - len(raw_counts)
    if n_control >= n_raw:
        chance = hypergeom.pmf(1, n_control, control_counts, n_raw)
        return rate(float(np.sum(chance)), n_attacks)
    scale = n_raw / n_control
    sub = np.concatenate([hypergeom.pmf(1, n_raw, raw_counts, n_control), np.zeros(pad)])
    held = np.concatenate([(control_counts == 1).astype(np.float64), np.zeros(pad)])
    leak = scale * (sub.mean() - held.mean())
    value = float(np.clip(np.count_nonzero(raw_counts == 1) / n_attacks - leak, 0.0, 1.0))
    half = Z95 * scale * float(np.sqrt((sub.var() + held.var()) / n_attacks))
    return Rate(value, max(0.0, value - half), min(1.0, value + half), n_attacks)


def _one_mode(
    mode: Mode,
    ranked: Ranked,
    sizes: tuple[int, int],
    n_attacks: int,
    n_cols: int,
    max_attempts: int,
    rng: np.random.Generator,
) -> AttackResult:
    release, raw = ranked.frames[0], ranked.frames[1]
    if mode == "univariate":
        predicates, attempts = _univariate(ranked, n_attacks, rng), n_attacks
    else:
        predicates, attempts = _multivariate(ranked, n_attacks, n_cols, max_attempts, rng)
    raw_counts = count(raw, predicates)
    hits = raw_counts == 1
    success = rate(float(hits.sum()), n_attacks)
    naive = _naive(ranked, n_attacks, 1 if mode == "univariate" else n_cols, rng)
    naive_rate = rate(float((count(raw, naive) == 1).sum()), n_attacks)
    kind: BaselineKind = "control" if len(ranked.frames) > 2 else "chance"
    if kind == "control":
        control_counts = count(ranked.frames[2], predicates)
        baseline = _chance_baseline(raw_counts, control_counts, sizes, n_attacks)
    else:
        baseline = naive_rate
    uses = np.zeros((len(predicates), release.shape[0]), dtype=bool)
    np.put_along_axis(uses, predicates.columns, True, axis=1)
    columns, score = driving_columns(
        ranked.encoded.columns, uses[hits], uses[~hits], distinctness(ranked.encoded.frames[0])
    )
    examples = [predicates.describe(int(i), ranked) for i in np.flatnonzero(hits)[:5]]
    return AttackResult(
        attack="singling_out",
        variant=mode,
        success=success,
        baseline=baseline,
        baseline_kind=kind,
        n_targets=n_attacks,
        columns=columns,
        suggestion=(
            f"generalize, perturb or drop {', '.join(columns)}: predicates on them read off "
            "the release isolate one person in the raw records"
            if columns
            else "no column stands out; keep the release as it is"
        ),
        details={
            "predicates_found": len(predicates),
            "attempts": int(attempts),
            "naive_rate": float(naive_rate.value),
            "column_scores": score,
            "examples": examples,
        },
    )


def singling_out(
    raw: pd.DataFrame,
    release: pd.DataFrame | Release,
    spec: AttackSpec,
    control: pd.DataFrame | None = None,
    *,
    modes: tuple[Mode, ...] = ("univariate", "multivariate"),
    n_attacks: int = 500,
    n_cols: int = 3,
    max_attempts: int = 100_000,
    rng: RngLike = None,
) -> tuple[AttackResult, ...]:
    """Singling-out attacks on ``release``, scored on ``raw``.

    Parameters
    ----------
    raw : pandas.DataFrame
        The records the release was made from.
    release : pandas.DataFrame or Release
    spec : AttackSpec
        Its quasi-identifiers, exact, sensitive and location columns are the ones the
        predicates use (those the release holds).
    control : pandas.DataFrame, optional
        Records of the same population not in the release: the baseline (see the module).
    modes : tuple of {"univariate", "multivariate"}
    n_attacks : int, default 500
        Predicates to try per mode.
    n_cols : int, default 3
        Conditions per multivariate predicate.
    max_attempts : int, default 100 000
        Random released rows to try when looking for multivariate predicates that isolate
        a released row; a release where few do (a k-anonymous one) stops there, and the
        attempts left without a predicate count as failures.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    tuple of AttackResult
        One per mode.
    """
    inputs = check_inputs(raw, release, spec, control, rng)
    n_attacks = check_count(n_attacks, "n_attacks")
    n_cols = check_count(n_cols, "n_cols")
    max_attempts = check_count(max_attempts, "max_attempts")
    if not modes or any(m not in ("univariate", "multivariate") for m in modes):
        raise ParameterError(f"modes: must name 'univariate' and/or 'multivariate', got {modes!r}")
    columns = inputs.released([*spec.tabular, *spec.coordinates])
    if not columns:
        raise ParameterError("release: holds none of the columns the attack spec names")
    frames = [inputs.raw] if inputs.control is None else [inputs.raw, inputs.control]
    ranked = rank(inputs.encode(columns, *frames))
    sizes = (len(inputs.raw), 0 if inputs.control is None else len(inputs.control))
    return tuple(
        _one_mode(m, ranked, sizes, n_attacks, n_cols, max_attempts, inputs.rng) for m in modes
    )
