"""Intersection: two releases of the same records, under different hierarchies, joined.

Each release may be k-anonymous on its own: a target's quasi-identifiers, generalized as
that release generalizes them, match a class of at least k rows. But the target's own row
sits in its class of both releases, with the same values in the columns both releases
carry unchanged (sensitive and exact columns): only the values found in both classes can
be the target's, and the joined classes are smaller than either (Ganta, Kasiviswanathan
and Smith, "Composition attacks and auxiliary information in data privacy", KDD 2008).

The attacker guesses the target's values in the joined columns (its "profile"): from one
release, the profile most frequent in the target's class; from both, the most probable
profile given both classes, each class taken as independent evidence about the target:
``n_a(p) * n_b(p) / share(p)``, the counts of profile ``p`` in the two classes over its
share of all released rows (a profile missing from either class is ruled out). When the
joined columns tell people apart (an exact count next to a diagnosis), the profiles found
in both classes are those of the few people in both, and the join points at the target's
own row. Where the join leaves no profile (the target's class is suppressed in one
release), the attacker falls back on the other release alone. Ties are drawn at random, and
the attack counts the chance of the right draw.

**Baseline.** The better of the two releases attacked alone. The advantage is what
publishing both adds, which a ledger kept per release cannot see.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.attacks.encoding import encode, groups
from veil.attacks.result import AttackResult
from veil.attacks.spec import AttackSpec, Release, as_release
from veil.attacks.stats import rate
from veil.attacks.targets import Inputs, check_count, check_inputs, sample_rows
from veil.errors import ParameterError
from veil.rng import RngLike

__all__ = ["intersection"]

FloatArray = npt.NDArray[np.float64]


def _classes(
    release: Release, qis: list[str], targets: pd.DataFrame
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Each released row's class and each target's (-1: no class matches)."""
    encoded = encode(qis, [release.frame, release.view(targets, qis)])
    return groups(encoded.frames[0], encoded.frames[1])


def _profiles(
    joined: list[str], a: Release, b: Release, targets: pd.DataFrame
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Profile numbers (distinct joined values) of A's rows, B's rows and the targets."""
    encoded = encode(joined, [a.frame, b.frame, targets])
    keys = np.nan_to_num(np.concatenate(encoded.frames), nan=-np.inf)
    _, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.ravel().astype(np.int64)
    n_a, n_b = len(a.frame), len(b.frame)
    return inverse[:n_a], inverse[n_a : n_a + n_b], inverse[n_a + n_b :]


def _table(
    classes: npt.NDArray[np.int64], profiles: npt.NDArray[np.int64], name: str
) -> pd.DataFrame:
    """Rows per (class, profile)."""
    frame = pd.DataFrame({"cls": classes, "profile": profiles})
    return frame.groupby(["cls", "profile"]).size().rename(name).reset_index()


def _chance_right(candidates: pd.DataFrame, score: str, n_targets: int) -> FloatArray:
    """Per target, the chance that a uniform pick among its best-scoring profiles is right."""
    out = np.zeros(n_targets)
    if candidates.empty:
        return out
    best = candidates.groupby("target")[score].transform("max")
    top = candidates[candidates[score] == best]
    ties = top.groupby("target").size()
    right = top[top["profile"] == top["truth"]].groupby("target").size()
    chance = (right / ties).dropna()
    out[chance.index.to_numpy()] = chance.to_numpy()
    return out


def _attack(
    inputs: Inputs, other: Release, qis: list[str], joined: list[str], targets: pd.DataFrame
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Per target: chance of the right profile from A, from B, from both; and isolated."""
    a, b = inputs.release, other
    cls_a, tgt_a = _classes(a, qis, targets)
    cls_b, tgt_b = _classes(b, qis, targets)
    prof_a, prof_b, truth = _profiles(joined, a, b, targets)
    people = pd.DataFrame(
        {"target": np.arange(len(targets)), "a": tgt_a, "b": tgt_b, "truth": truth}
    )
    from_a = people.merge(_table(cls_a, prof_a, "n_a"), left_on="a", right_on="cls")
    from_b = people.merge(_table(cls_b, prof_b, "n_b"), left_on="b", right_on="cls")
    both = from_a.drop(columns="cls").merge(
        _table(cls_b, prof_b, "n_b"), left_on=["b", "profile"], right_on=["cls", "profile"]
    )
    # Bayes' rule with both classes as evidence: P(p | A, B) ~ P(p | A) P(p | B) / P(p).
    share = np.bincount(np.concatenate([prof_a, prof_b])).astype(np.float64)
    both["n_both"] = both["n_a"] * both["n_b"] / share[both["profile"].to_numpy()]
    n = len(targets)
    chance_a, chance_b = _chance_right(from_a, "n_a", n), _chance_right(from_b, "n_b", n)
    # Where the join leaves nothing (a class suppressed in one release), the attacker falls
    # back on the release that has the target's class.
    in_both = np.zeros(n, dtype=bool)
    in_both[both["target"].to_numpy()] = True
    fallback = np.where(tgt_a >= 0, chance_a, chance_b)
    chance_both = np.where(in_both, _chance_right(both, "n_both", n), fallback)
    # The join isolates the target's record: one profile left, held by one row in each class.
    options = both.groupby("target").size()
    single = both[(both["n_a"] == 1) & (both["n_b"] == 1) & (both["profile"] == both["truth"])]
    isolated = np.zeros(n)
    lone = single["target"][single["target"].map(options).to_numpy() == 1].to_numpy()
    isolated[lone] = 1.0
    return chance_a, chance_b, chance_both, isolated


def _differing(inputs: Inputs, other: Release, qis: list[str], targets: pd.DataFrame) -> list[str]:
    """The quasi-identifiers the two releases put in different forms."""
    a = inputs.release.view(targets, qis)
    b = other.view(targets, qis)
    return [q for q in qis if not a[q].astype(str).equals(b[q].astype(str))]


def intersection(
    raw: pd.DataFrame,
    release: pd.DataFrame | Release,
    spec: AttackSpec,
    control: pd.DataFrame | None = None,
    *,
    other: pd.DataFrame | Release,
    n_attacks: int = 2000,
    rng: RngLike = None,
) -> tuple[AttackResult, ...]:
    """Join ``release`` and ``other``, two releases of ``raw``, against each target.

    Parameters
    ----------
    raw : pandas.DataFrame
        The records both releases were made from.
    release, other : pandas.DataFrame or Release
        The two releases; each one's ``recode`` maps true quasi-identifiers to its form.
    spec : AttackSpec
        Its quasi-identifiers that both releases hold define the classes; its exact and
        sensitive columns that both hold are joined.
    control : pandas.DataFrame, optional
        Records not in either release: the same attack on them is reported in the details
        (what the population alone lets the attacker guess).
    n_attacks : int, default 2000
        Targets drawn from ``raw``.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    tuple of AttackResult
        One result.
    """
    inputs = check_inputs(raw, release, spec, control, rng)
    second = as_release(other, "other")
    n_attacks = check_count(n_attacks, "n_attacks")
    held = set(inputs.release.frame.columns) & set(second.frame.columns)
    qis = [q for q in spec.quasi_identifiers if q in held]
    joined = [c for c in spec.tabular if c in held and c not in qis]
    if not qis or not joined:
        raise ParameterError(
            "intersection: both releases must hold a quasi-identifier and a sensitive or "
            f"exact column to join on; they share quasi-identifiers {qis} and columns {joined}"
        )
    targets = sample_rows(inputs.raw, n_attacks, inputs.rng)
    from_a, from_b, from_both, isolated = _attack(inputs, second, qis, joined, targets)
    single = [rate(float(x.sum()), len(targets)) for x in (from_a, from_b)]
    details: dict[str, object] = {
        "joined_columns": joined,
        "first_release_rate": single[0].value,
        "second_release_rate": single[1].value,
        "isolated_share": float(isolated.mean()),
    }
    if inputs.control is not None:
        held_out = sample_rows(inputs.control, n_attacks, inputs.rng)
        details["control_rate"] = float(_attack(inputs, second, qis, joined, held_out)[2].mean())
    columns = tuple(_differing(inputs, second, qis, targets))
    return (
        AttackResult(
            attack="intersection",
            variant=f"joined on {', '.join(joined)}",
            success=rate(float(from_both.sum()), len(targets)),
            baseline=max(single, key=lambda r: r.value),
            baseline_kind="single release",
            n_targets=len(targets),
            columns=columns,
            suggestion=(
                f"release {', '.join(columns or qis)} under one hierarchy in both releases (or "
                "one a coarsening of the other), or count both releases against one ledger: "
                "joined, they narrow each person's class"
            ),
            details=details,
        ),
    )
