"""Every mechanism validates its parameters up front, naming the parameter."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from veil.errors import ParameterError
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
    ordinal_scores,
    sample_discrete_gaussian,
    sample_discrete_laplace,
)


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed))


# One factory per public entry point that takes an epsilon.
EPSILON_USERS: dict[str, Callable[[Any], object]] = {
    "laplace": lambda e: Laplace(e, 0.0, 1.0),
    "laplace-integer": lambda e: Laplace(e, 0, 10, integer=True),
    "gaussian-classic": lambda e: Gaussian(e, 1e-6, 0.0, 1.0),
    "gaussian-analytic": lambda e: Gaussian(e, 1e-6, 0.0, 1.0, calibration="analytic"),
    "gaussian-discrete": lambda e: Gaussian(e, 1e-6, 0.0, 1.0, sampler="discrete"),
    "randomized-response": lambda e: RandomizedResponse(e, 3),
    "binary-randomized-response": lambda e: BinaryRandomizedResponse(e),
    "exponential": lambda e: Exponential(e, 3),
    "exponential-full": lambda e: Exponential(e, 3, calibration="full"),
    "exponential-ordinal": lambda e: Exponential(e, scores=ordinal_scores(4)),
    "planar-laplace": lambda e: PlanarLaplace(e),
    "noisy-count": lambda e: noisy_count(10, e, _rng()),
    "noisy-histogram": lambda e: noisy_histogram(np.array([1, 2]), e, _rng()),
    "clipped-mean": lambda e: clipped_mean(np.array([0.5]), 0.0, 1.0, e, _rng()),
}

BAD_EPSILONS = [0, 0.0, -1.0, -1e-300, math.nan, math.inf, -math.inf, True, False, "1", None]


@pytest.mark.parametrize("name", sorted(EPSILON_USERS))
@pytest.mark.parametrize("epsilon", BAD_EPSILONS, ids=repr)
def test_bad_epsilon_is_rejected(name: str, epsilon: Any) -> None:
    with pytest.raises(ParameterError, match=r"^epsilon: "):
        EPSILON_USERS[name](epsilon)


@pytest.mark.parametrize("name", sorted(EPSILON_USERS))
def test_numpy_scalar_epsilon_is_accepted(name: str) -> None:
    EPSILON_USERS[name](np.float64(0.5))
    EPSILON_USERS[name](np.int64(1))


def test_epsilon_message_names_the_value() -> None:
    with pytest.raises(ParameterError, match=r"epsilon: must be finite and > 0, got -2\.0"):
        Laplace(-2.0, 0, 1)


@pytest.mark.parametrize("delta", [0, 0.0, 1, 1.0, -0.1, 1.5, math.nan, math.inf, True, "1e-5"])
@pytest.mark.parametrize("calibration", ["classic", "analytic"])
def test_bad_delta_is_rejected(delta: Any, calibration: Any) -> None:
    with pytest.raises(ParameterError, match=r"^delta: "):
        Gaussian(0.5, delta, 0.0, 1.0, calibration=calibration)


BAD_BOUNDS = [
    (math.nan, 1.0),
    (0.0, math.nan),
    (-math.inf, 1.0),
    (0.0, math.inf),
    (1.0, 1.0),
    (2.0, 1.0),
    ("0", 1.0),
    (0.0, None),
    (False, 1.0),
]

BOUNDED: dict[str, Callable[[Any, Any], object]] = {
    "laplace": lambda lo, hi: Laplace(1.0, lo, hi),
    "laplace-integer": lambda lo, hi: Laplace(1.0, lo, hi, integer=True),
    "gaussian": lambda lo, hi: Gaussian(0.5, 1e-6, lo, hi),
    "clipped-mean": lambda lo, hi: clipped_mean(np.array([0.5]), lo, hi, 1.0, _rng()),
}


@pytest.mark.parametrize("name", sorted(BOUNDED))
@pytest.mark.parametrize("bounds", BAD_BOUNDS, ids=repr)
def test_bad_bounds_are_rejected(name: str, bounds: tuple[Any, Any]) -> None:
    with pytest.raises(ParameterError, match=r"lower_bound|upper_bound"):
        BOUNDED[name](*bounds)


@pytest.mark.parametrize("name", sorted(BOUNDED))
@pytest.mark.parametrize(
    "bounds", [(-1e308, 1e308), (-1.7e308, 1.7e308), (-1e308, 9e307)], ids=repr
)
def test_bounds_wider_than_a_float_are_rejected(name: str, bounds: tuple[float, float]) -> None:
    # Each bound is finite but the width, the sensitivity, is not: an OverflowError once.
    with pytest.raises(ParameterError, match=r"lower_bound, upper_bound: .*wider than the largest"):
        BOUNDED[name](*bounds)


def test_the_widest_float_bounds_are_still_taken() -> None:
    assert Laplace(1.0, -8e307, 8e307).cost().epsilon == 1.0


@pytest.mark.parametrize("epsilon", [1e3, 1e200, 1e308, 1.7976931348623157e308])
def test_full_exponential_calibration_survives_a_huge_epsilon(epsilon: float) -> None:
    # 2 * epsilon overflowed to inf, and inf * 0 scores gave a nan channel.
    with pytest.warns(Warning):
        mechanism = Exponential(epsilon, 4, calibration="full")
    channel = mechanism.channel
    assert np.isfinite(channel).all() and np.allclose(channel.sum(axis=1), 1.0)
    assert 0 < mechanism.cost().epsilon <= epsilon


def test_reversed_bounds_message_shows_both_values() -> None:
    with pytest.raises(ParameterError, match=r"need lower_bound < upper_bound, got 5\.0 >= 1\.0"):
        Laplace(1.0, 5.0, 1.0)


def test_integer_bounds_holding_a_single_integer_are_rejected() -> None:
    # [0.2, 1.5] holds only the integer 1: no room for a neighbouring value.
    with pytest.raises(ParameterError, match=r"lower_bound, upper_bound: .*fewer than two points"):
        Laplace(1.0, 0.2, 1.5, integer=True)


def test_float_bounds_narrower_than_the_resolution_are_rejected() -> None:
    with pytest.raises(ParameterError, match=r"fewer than two points.*refine resolution"):
        Laplace(1.0, 0.0, 1.0, resolution=2.0)


@pytest.mark.parametrize("epsilon", [1.0 + 1e-9, 1.5, 10.0])
def test_classic_gaussian_needs_epsilon_at_most_one(epsilon: float) -> None:
    with pytest.raises(ParameterError, match=r"epsilon: .*classic.*analytic"):
        Gaussian(epsilon, 1e-6, 0.0, 1.0)
    # The analytic calibration covers every epsilon.
    assert Gaussian(epsilon, 1e-6, 0.0, 1.0, calibration="analytic").epsilon == epsilon


def test_classic_gaussian_accepts_epsilon_one() -> None:
    assert Gaussian(1.0, 1e-6, 0.0, 1.0).epsilon == 1.0


@pytest.mark.parametrize("calibration", ["Analytic", "renyi", "", None])
def test_unknown_gaussian_calibration_is_rejected(calibration: Any) -> None:
    with pytest.raises(ParameterError, match=r"^calibration: "):
        Gaussian(0.5, 1e-6, 0.0, 1.0, calibration=calibration)


@pytest.mark.parametrize("sampler", ["Rounded", "continuous", "", None])
def test_unknown_gaussian_sampler_is_rejected(sampler: Any) -> None:
    with pytest.raises(ParameterError, match=r"^sampler: "):
        Gaussian(0.5, 1e-6, 0.0, 1.0, sampler=sampler)


@pytest.mark.parametrize("calibration", ["Standard", "exact", None])
def test_unknown_exponential_calibration_is_rejected(calibration: Any) -> None:
    with pytest.raises(ParameterError, match=r"^calibration: "):
        Exponential(1.0, 3, calibration=calibration)


@pytest.mark.parametrize("resolution", [0.5, 2, 0.0, -1.0])
@pytest.mark.parametrize("mechanism", [Laplace, Gaussian])
def test_integer_data_needs_resolution_one(mechanism: Any, resolution: float) -> None:
    args = (1.0, 0, 10) if mechanism is Laplace else (0.5, 1e-6, 0, 10)
    with pytest.raises(ParameterError, match=r"^resolution: integer data .* got"):
        mechanism(*args, integer=True, resolution=resolution)


@pytest.mark.parametrize("resolution", [None, 1, 1.0])
def test_integer_data_accepts_resolution_none_or_one(resolution: Any) -> None:
    assert Laplace(1.0, 0, 10, integer=True, resolution=resolution).grid.step == 1.0


@pytest.mark.parametrize("resolution", [0.0, -0.5, math.nan, math.inf, True, "0.1"])
def test_float_resolution_must_be_positive_and_finite(resolution: Any) -> None:
    with pytest.raises(ParameterError, match=r"^resolution: "):
        Laplace(1.0, 0.0, 1.0, resolution=resolution)


def test_resolution_too_fine_for_exact_noise_is_rejected() -> None:
    with pytest.raises(ParameterError, match=r"resolution: .*2\^40"):
        Laplace(1.0, 0.0, 1.0, resolution=2.0**-41)


@pytest.mark.parametrize("k", [1, 0, -3])
def test_randomized_response_needs_two_categories(k: int) -> None:
    with pytest.raises(ParameterError, match=r"domain: needs at least 2 categories"):
        RandomizedResponse(1.0, k)


@pytest.mark.parametrize("k", [1, 0])
def test_exponential_needs_two_categories(k: int) -> None:
    with pytest.raises(ParameterError, match=r"domain: needs at least 2 categories"):
        Exponential(1.0, k)
    with pytest.raises(ParameterError, match=r"domain: needs at least 2 categories"):
        ordinal_scores(k)


def test_exponential_one_by_one_scores_are_rejected() -> None:
    with pytest.raises(ParameterError, match=r"^scores: needs at least 2 categories"):
        Exponential(1.0, scores=np.zeros((1, 1)))


def test_exponential_empty_scores_are_rejected() -> None:
    with pytest.raises(ParameterError, match=r"^scores: "):
        Exponential(1.0, scores=np.zeros((0, 0)))


def test_exponential_needs_k_or_scores() -> None:
    with pytest.raises(ParameterError, match=r"k, scores"):
        Exponential(1.0)


@pytest.mark.parametrize(
    "scores", [np.zeros((2, 3)), np.zeros(4), np.zeros((2, 2, 2)), [[0.0, 1.0]]], ids=repr
)
def test_exponential_scores_must_be_square(scores: Any) -> None:
    with pytest.raises(ParameterError, match=r"^scores: must be a square k x k matrix"):
        Exponential(1.0, scores=scores)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_exponential_scores_must_be_finite(bad: float) -> None:
    scores = np.eye(3)
    scores[1, 2] = bad
    with pytest.raises(ParameterError, match=r"^scores: every score must be finite"):
        Exponential(1.0, scores=scores)


def test_exponential_k_must_match_scores() -> None:
    with pytest.raises(ParameterError, match=r"^k: 4 does not match scores of size 3"):
        Exponential(1.0, 4, scores=np.eye(3))


def test_exponential_constant_columns_carry_no_information() -> None:
    with pytest.raises(ParameterError, match=r"^sensitivity: "):
        Exponential(1.0, scores=np.ones((3, 3)))


@pytest.mark.parametrize("sensitivity", [0.1, 0.999])
def test_exponential_sensitivity_below_the_score_spread_is_rejected(sensitivity: float) -> None:
    # An understated sensitivity would make the channel leak more than epsilon.
    with pytest.raises(ParameterError, match=r"^sensitivity: .* below the score spread"):
        Exponential(1.0, scores=np.eye(3), sensitivity=sensitivity)


@pytest.mark.parametrize("sensitivity", [0.0, -1.0, math.nan, math.inf])
def test_exponential_sensitivity_must_be_positive_and_finite(sensitivity: float) -> None:
    with pytest.raises(ParameterError, match=r"^sensitivity: "):
        Exponential(1.0, 3, sensitivity=sensitivity)


@pytest.mark.parametrize("codes", [[0, 3], [-1, 0], [5]], ids=repr)
@pytest.mark.parametrize(
    "mechanism",
    [RandomizedResponse(1.0, 3), Exponential(1.0, 3), Exponential(1.0, scores=ordinal_scores(3))],
    ids=["randomized-response", "exponential", "exponential-ordinal"],
)
def test_codes_out_of_range_are_rejected(mechanism: Any, codes: list[int]) -> None:
    with pytest.raises(ParameterError, match=r"^codes: every code must be in \[0, 3\)"):
        mechanism.randomise(np.array(codes), _rng())


@pytest.mark.parametrize("codes", [[0, 2], [-1], [0, 1, 7]], ids=repr)
def test_binary_codes_out_of_range_are_rejected(codes: list[int]) -> None:
    with pytest.raises(ParameterError, match=r"^codes: every code must be in \[0, 2\)"):
        BinaryRandomizedResponse(1.0).randomise(np.array(codes), _rng())


@pytest.mark.parametrize(
    "mechanism",
    [RandomizedResponse(1.0, 2), Exponential(1.0, 2), BinaryRandomizedResponse(1.0)],
    ids=["randomized-response", "exponential", "binary-randomized-response"],
)
def test_non_integer_codes_are_rejected(mechanism: Any) -> None:
    # A float "code" such as 0.7 is not a category: it must not be silently truncated.
    with pytest.raises(ParameterError, match=r"^codes: must be integer category codes"):
        mechanism.randomise(np.array([0.7, 1.0]), _rng())


def test_binary_randomized_response_accepts_bool_codes() -> None:
    out = BinaryRandomizedResponse(1.0).randomise(np.array([True, False, True]), _rng())
    assert out.dtype == np.int64
    assert set(out.tolist()) <= {0, 1}


def test_empty_codes_give_empty_output() -> None:
    empty = np.array([], dtype=np.int64)
    assert RandomizedResponse(1.0, 3).randomise(empty, _rng()).size == 0
    assert Exponential(1.0, 3).randomise(empty, _rng()).size == 0
    assert BinaryRandomizedResponse(1.0).randomise(empty, _rng()).size == 0


@pytest.mark.parametrize("scale", [0, -1.0, math.nan, math.inf, True])
def test_discrete_laplace_scale_is_validated(scale: Any) -> None:
    with pytest.raises(ParameterError, match=r"^scale: "):
        sample_discrete_laplace(scale, 10, _rng())


@pytest.mark.parametrize("sigma", [0, -1.0, math.nan, math.inf, True])
def test_discrete_gaussian_sigma_is_validated(sigma: Any) -> None:
    with pytest.raises(ParameterError, match=r"^sigma: "):
        sample_discrete_gaussian(sigma, 10, _rng())


def test_samplers_accept_size_zero() -> None:
    assert sample_discrete_laplace(2.0, 0, _rng()).shape == (0,)
    assert sample_discrete_gaussian(2.0, 0, _rng()).shape == (0,)


# Large but valid budgets: the parameters pass validation, so the mechanisms must run
# (and return the input almost surely) instead of crashing in their own arithmetic.


@pytest.mark.parametrize("epsilon", [1e3, 1e4, 1e6])
def test_laplace_with_a_very_large_epsilon_runs(epsilon: float) -> None:
    # Laplace scale Δ/ε = 10/ε steps; below about 1/709 steps exp(-1/scale) underflows
    # to 0 inside sample_discrete_laplace. At ε = 1e3 a noise draw is non-zero with
    # probability about 2 e^-100, so the output equals the input.
    mech = Laplace(epsilon, 0, 10, integer=True)
    out = mech.randomise(np.arange(11), _rng())
    np.testing.assert_array_equal(out, np.arange(11))


@pytest.mark.parametrize("epsilon", [1e3, 1e6])
def test_noisy_count_with_a_very_large_epsilon_runs(epsilon: float) -> None:
    assert noisy_count(7, epsilon, _rng()).value == 7.0


@pytest.mark.parametrize("epsilon", [30.0, 40.0, 100.0, 1e4])
def test_randomized_response_with_a_very_large_epsilon_runs(epsilon: float) -> None:
    # Above epsilon ≈ 37 the keep probability rounds to 1.0 and sample_keep_or_other
    # divides by 1 - keep.
    codes = np.arange(3)
    np.testing.assert_array_equal(RandomizedResponse(epsilon, 3).randomise(codes, _rng()), codes)
    np.testing.assert_array_equal(
        BinaryRandomizedResponse(epsilon).randomise(codes % 2, _rng()), codes % 2
    )


@pytest.mark.parametrize("epsilon", [40.0, 80.0, 1e4])
def test_exponential_with_a_very_large_epsilon_runs(epsilon: float) -> None:
    codes = np.arange(3)
    np.testing.assert_array_equal(Exponential(epsilon, 3).randomise(codes, _rng()), codes)
