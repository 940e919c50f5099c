"""The least class size each model accepts, which the search prunes with.

A model's ``_minimum_size(prior)`` claims that every class with fewer records is
rejected; the search then treats "class size >= that" as a monotone part of the model.
These tests enumerate every class (every composition of its records over the sensitive
values) below the claimed size and check that the model rejects all of them.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from veil.anonymity.models import (
    AlphaKAnonymity,
    BasicBetaLikeness,
    DistinctLDiversity,
    EnhancedBetaLikeness,
    EntropyLDiversity,
    KAnonymity,
    PrivacyModel,
    RecursiveCLDiversity,
    TCloseness,
    _Classes,
    _PairCounts,
    _Pairs,
)


def _every_class(size: int, n_values: int) -> np.ndarray:
    """Every composition of ``size`` records over ``n_values`` values (one per row)."""
    rows = []
    for combo in itertools.combinations_with_replacement(range(n_values), size):
        rows.append(np.bincount(np.array(combo, dtype=np.int64), minlength=n_values))
    return np.array(rows, dtype=np.int64)


def _classes(compositions: np.ndarray, prior: np.ndarray, dense: bool = False) -> _Classes:
    """The classes as a roll-up hands them to the models: their pairs listed, or summed
    into a dense (values x classes) matrix of counts."""
    cls, value = np.nonzero(compositions)
    counts = compositions[cls, value]
    classes = _Classes(len(compositions), compositions.sum(axis=1))
    pairs = (
        _PairCounts(dense=compositions.T.astype(np.float64))
        if dense
        else _PairCounts((cls.astype(np.int64), value.astype(np.int64), counts))
    )
    classes.pairs["s"] = _Pairs(pairs, len(prior), prior)
    return classes


PRIORS = [
    np.array([0.4, 0.3, 0.2, 0.1]),
    np.array([0.7, 0.1, 0.1, 0.1]),
    np.array([0.25, 0.25, 0.25, 0.25]),
    np.array([0.05, 0.15, 0.3, 0.5]),
]

MODELS: list[PrivacyModel] = [
    KAnonymity(4),
    DistinctLDiversity("s", 3),
    EntropyLDiversity("s", 2.5),
    RecursiveCLDiversity("s", 2, 3),
    AlphaKAnonymity("s", 0.3, 2),
    BasicBetaLikeness("s", 0.5),
    EnhancedBetaLikeness("s", 0.2),
    TCloseness("s", 0.15),
    TCloseness("s", 0.3),
    TCloseness("s", 0.05),
]


@pytest.mark.parametrize("dense", [False, True], ids=["pairs", "dense"])
@pytest.mark.parametrize("model", MODELS, ids=repr)
@pytest.mark.parametrize("prior", PRIORS, ids=lambda p: "-".join(f"{x:g}" for x in p))
def test_every_class_below_the_minimum_size_is_rejected(
    model: PrivacyModel, prior: np.ndarray, dense: bool
) -> None:
    least = model._minimum_size(prior)
    assert least >= 1
    for size in range(1, min(least, 12)):
        compositions = _every_class(size, len(prior))
        assert not model._accepts(_classes(compositions, prior, dense)).any(), size


@pytest.mark.parametrize("dense", [False, True], ids=["pairs", "dense"])
@pytest.mark.parametrize("t", [0.05, 0.15, 0.3, 0.45])
@pytest.mark.parametrize("prior", PRIORS, ids=lambda p: "-".join(f"{x:g}" for x in p))
def test_t_closeness_minimum_size_is_tight(t: float, prior: np.ndarray, dense: bool) -> None:
    # Some class of exactly the minimum size is t-close: the bound prunes no feasible node.
    least = TCloseness("s", t)._minimum_size(prior)
    compositions = _every_class(least, len(prior))
    assert TCloseness("s", t)._accepts(_classes(compositions, prior, dense)).any()


@pytest.mark.parametrize("model", MODELS, ids=repr)
@pytest.mark.parametrize("prior", PRIORS, ids=lambda p: "-".join(f"{x:g}" for x in p))
def test_dense_counts_give_the_verdicts_of_the_listed_pairs(
    model: PrivacyModel, prior: np.ndarray
) -> None:
    # A roll-up hands the models a dense matrix of counts; they must decide as they do
    # from the pairs, class by class, and the pairs derived from the matrix are the same.
    compositions = np.concatenate([_every_class(size, len(prior)) for size in (1, 3, 5, 8)])
    listed = _classes(compositions, prior)
    summed = _classes(compositions, prior, dense=True)
    np.testing.assert_array_equal(model._accepts(summed), model._accepts(listed))
    by_class = np.lexsort((summed.pairs["s"].value, summed.pairs["s"].cls))
    for name in ("cls", "value", "count"):
        np.testing.assert_array_equal(
            getattr(summed.pairs["s"], name)[by_class], getattr(listed.pairs["s"], name)
        )


def test_models_without_a_size_bound_claim_none() -> None:
    prior = PRIORS[0]
    assert TCloseness("s", 0.2, distance="ordered")._minimum_size(prior) == 1
