"""Tests for veil.rng: the single source of randomness."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from randomgen import AESCounter

from veil.errors import ParameterError, ReproducibleNoiseWarning
from veil.mechanisms import (
    BinaryRandomizedResponse,
    Exponential,
    Gaussian,
    Laplace,
    PlanarLaplace,
    RandomizedResponse,
    clipped_mean,
    noisy_count,
    noisy_histogram,
    sample_discrete_gaussian,
    sample_discrete_laplace,
)
from veil.rng import resolve_rng, secure_generator, spawn


def _draws(rng: np.random.Generator, n: int = 8) -> np.ndarray:
    return rng.integers(0, 2**63, size=n, dtype=np.int64)


def test_none_gives_a_secure_aes_counter_generator() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning for the secure default
        rng = resolve_rng(None)
    assert isinstance(rng, np.random.Generator)
    assert isinstance(rng.bit_generator, AESCounter)


def test_two_unseeded_generators_give_different_streams() -> None:
    first, second = _draws(resolve_rng(None)), _draws(resolve_rng(None))
    assert not np.array_equal(first, second)
    assert not np.array_equal(_draws(secure_generator()), _draws(secure_generator()))


def test_secure_generator_is_aes_counter() -> None:
    assert isinstance(secure_generator().bit_generator, AESCounter)


def test_int_seed_is_reproducible_and_warns() -> None:
    with pytest.warns(ReproducibleNoiseWarning, match=r"rng=42"):
        first = resolve_rng(42)
    with pytest.warns(ReproducibleNoiseWarning):
        second = resolve_rng(42)
    assert isinstance(first.bit_generator, AESCounter)
    np.testing.assert_array_equal(_draws(first), _draws(second))


def test_different_seeds_give_different_streams() -> None:
    with pytest.warns(ReproducibleNoiseWarning):
        first, second = resolve_rng(1), resolve_rng(2)
    assert not np.array_equal(_draws(first), _draws(second))


def test_numpy_integer_seed_is_accepted() -> None:
    with pytest.warns(ReproducibleNoiseWarning):
        first = resolve_rng(np.int64(7))
    with pytest.warns(ReproducibleNoiseWarning):
        second = resolve_rng(7)
    np.testing.assert_array_equal(_draws(first), _draws(second))


def test_seed_warning_points_at_the_caller() -> None:
    with pytest.warns(ReproducibleNoiseWarning) as record:
        resolve_rng(3, stacklevel=2)
    assert record[0].filename == __file__


def test_generator_is_passed_through_unchanged_without_warning() -> None:
    rng = np.random.Generator(np.random.PCG64(0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert resolve_rng(rng) is rng


@pytest.mark.parametrize("bad", [-1, -(2**70), 1.0, 1.5, "1", True, False, np.bool_(True), [1]])
def test_invalid_rng_raises_parameter_error(bad: Any) -> None:
    with pytest.raises(ParameterError, match=r"rng"):
        resolve_rng(bad)
    with pytest.raises(ValueError):
        resolve_rng(bad)


def test_legacy_random_state_is_rejected() -> None:
    with pytest.raises(ParameterError, match=r"rng.*RandomState"):
        resolve_rng(np.random.RandomState(0))  # the legacy API must be refused


def test_spawn_gives_distinct_independent_children() -> None:
    parent = np.random.Generator(np.random.PCG64(11))
    children = spawn(parent, 4)
    assert len(children) == 4
    assert all(isinstance(child.bit_generator, AESCounter) for child in children)
    streams = [child.random(100_000) for child in children]
    for i in range(4):
        for j in range(i + 1, 4):
            assert not np.array_equal(streams[i], streams[j])
            # Independent uniform streams: |correlation| has sd 1/sqrt(1e5) ≈ 0.003;
            # tolerance 0.02 is over 6 sd.
            assert abs(np.corrcoef(streams[i], streams[j])[0, 1]) < 0.02
    # The children do not replay the parent's own continuation either.
    assert not any(np.array_equal(parent.random(100_000), s) for s in streams)


def test_spawn_from_a_seeded_parent_is_reproducible() -> None:
    first = spawn(np.random.Generator(np.random.PCG64(5)), 3)
    second = spawn(np.random.Generator(np.random.PCG64(5)), 3)
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(_draws(a), _draws(b))


def test_spawn_zero_children_and_negative_count() -> None:
    rng = np.random.Generator(np.random.PCG64(0))
    assert spawn(rng, 0) == []
    with pytest.raises(ParameterError, match=r"n: must be >= 0"):
        spawn(rng, -1)


def test_veil_never_touches_numpy_global_state() -> None:
    np.random.seed(12345)  # noqa: NPY002 - the global state is what is being checked
    before = np.random.get_state()  # noqa: NPY002
    rng = resolve_rng(None)
    values = np.linspace(0.0, 1.0, 50)
    codes = np.arange(50) % 3
    Laplace(1.0, 0.0, 1.0).randomise(values, rng)
    Laplace(1.0, 0, 10, integer=True).randomise(np.arange(10), resolve_rng(None))
    Gaussian(0.5, 1e-6, 0.0, 1.0).randomise(values, rng)
    RandomizedResponse(1.0, 3).randomise(codes, rng)
    BinaryRandomizedResponse(1.0).randomise(codes % 2, rng)
    Exponential(1.0, 3).randomise(codes, rng)
    Exponential(1.0, scores=-np.abs(np.subtract.outer(np.arange(3), np.arange(3)))).randomise(
        codes, rng
    )
    PlanarLaplace(0.01).sample(50, rng)
    noisy_count(10, 1.0, rng)
    noisy_histogram(np.array([1, 2, 3]), 1.0, rng)
    clipped_mean(values, 0.0, 1.0, 1.0, rng)
    sample_discrete_laplace(3.0, 10, rng)
    sample_discrete_gaussian(3.0, 10, rng)
    spawn(secure_generator(), 2)
    after = np.random.get_state()  # noqa: NPY002
    assert before[0] == after[0]
    np.testing.assert_array_equal(before[1], after[1])
    assert before[2:] == after[2:]
