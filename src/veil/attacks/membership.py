"""Membership inference: is a person's record among those the release was made from?

The attacker holds a person's record and measures its distance to the closest released
row (DCR, Gower distance over every released column, :mod:`veil.attacks.neighbours`): a
synthesizer that memorised its training records releases rows closer to them than to
anybody else's. Given as many members (records the release was made from) as non-members
(control records), the attacker calls "member" the half of the people with the smallest
distances, ties drawn at random (the threshold is their median, which the attacker can
set without knowing who is who). The success rate is the share of right calls.

**Baseline.** A coin: one half of the calls is right by chance. The advantage over it,
``2 * rate - 1``, is the gap between the attacker's true and false positive rates (Yeom
et al., "Privacy risk in machine learning", CSF 2018).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from veil.attacks.neighbours import agreement, nearest
from veil.attacks.result import AttackResult, distinctness, driving_columns
from veil.attacks.spec import AttackSpec, Release
from veil.attacks.stats import Rate, rate
from veil.attacks.targets import check_count, check_inputs, sample_rows
from veil.errors import ParameterError
from veil.rng import RngLike

__all__ = ["membership"]


def membership(
    raw: pd.DataFrame,
    release: pd.DataFrame | Release,
    spec: AttackSpec,
    control: pd.DataFrame | None = None,
    *,
    n_attacks: int = 2000,
    rng: RngLike = None,
) -> tuple[AttackResult, ...]:
    """Distance-to-closest-record membership inference on ``release``.

    Parameters
    ----------
    raw : pandas.DataFrame
        The records the release was made from (the members).
    release : pandas.DataFrame or Release
    spec : AttackSpec
        Every column it names that the release holds is compared.
    control : pandas.DataFrame
        Records of the same population not in the release (the non-members); required.
    n_attacks : int, default 2000
        Members drawn, and as many non-members (fewer when either set is smaller).
    rng : None, int or numpy.random.Generator

    Returns
    -------
    tuple of AttackResult
        One result.
    """
    inputs = check_inputs(raw, release, spec, control, rng)
    n_attacks = check_count(n_attacks, "n_attacks")
    if inputs.control is None:
        raise ParameterError(
            "membership: needs control records (people not in the release); a shadow "
            "release provides them"
        )
    columns = inputs.released([*spec.tabular, *spec.coordinates])
    if not columns:
        raise ParameterError("release: holds none of the columns the attack spec names")
    m = min(n_attacks, len(inputs.raw), len(inputs.control))
    members = sample_rows(inputs.raw, m, inputs.rng)
    others = sample_rows(inputs.control, m, inputs.rng)
    encoded = inputs.encode(columns, members, others)
    release_rows, member_rows, other_rows = encoded.frames
    people = np.concatenate([member_rows, other_rows])
    index, distances = nearest(people, release_rows, encoded.numeric, inputs.rng)
    agree = agreement(people, release_rows[index[:, 0]], encoded.numeric)
    # Columns on which members meet their closest released row more often than others do.
    copied, score = driving_columns(
        encoded.columns, agree[:m], agree[m:], distinctness(release_rows)
    )
    dcr = distances[:, 0].astype(np.float64)
    # The m smallest distances are called members; ties are ordered at random.
    order = np.lexsort((inputs.rng.random(2 * m), dcr))
    called = np.zeros(2 * m, dtype=bool)
    called[order[:m]] = True
    is_member = np.arange(2 * m) < m
    right = int(np.count_nonzero(called == is_member))
    success = rate(float(right), 2 * m)
    return (
        AttackResult(
            attack="membership",
            variant="distance to closest record",
            success=success,
            baseline=Rate.exact(0.5),
            baseline_kind="chance",
            n_targets=2 * m,
            columns=copied,
            suggestion=(
                "make the synthetic data with a smaller epsilon or a simpler model (fewer or "
                "coarser marginals)"
                + (f", or generalize {', '.join(copied)}, which copy records" if copied else "")
            ),
            details={
                "median_dcr_members": float(np.median(dcr[:m])),
                "median_dcr_non_members": float(np.median(dcr[m:])),
                "exact_copies_members": float(np.mean(dcr[:m] == 0)),
                "exact_copies_non_members": float(np.mean(dcr[m:] == 0)),
                "column_scores": score,
            },
        ),
    )
