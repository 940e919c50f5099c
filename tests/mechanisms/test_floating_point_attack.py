"""Mironov's floating-point attack (CCS 2012) works on naive Laplace, not on veil's.

Textbook Laplace in floating point, ``x + rng.laplace(0, b)`` as trasgoDP does, draws a
double ``U = k / 2^53`` and returns ``x + b·ln(2U)`` (or ``x - b·ln(2 - 2U)``) rounded
to a double. The doubles this can produce are a sparse, input-dependent subset of the
reals: from input 0 every output is exactly a value of the sampler, from input 0.1 the
rounded sum usually is not. An attacker who recomputes the sampler's possible values
around an output tells the two inputs apart far better than ε allows.

veil's Laplace outputs an integer number of grid steps (times a power-of-two step), a
post-processing of the discrete Laplace integer: every output is reachable from every
input, and no test on its bits does better than the ε-DP bound.
"""

from __future__ import annotations

import math

import numpy as np

from veil.mechanisms import Laplace

N = 20_000  # outputs per input
SCALE = 1.0  # Laplace scale b: ε = 1 per unit of the input
X_FAR = 0.1  # the second input; 0.1 has low-order bits in every position of its mantissa
_TWO53 = 2.0**53
_WINDOW = 4  # candidate uniforms tried on each side of the inverted one


def _rng(seed: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed))


def _numpy_laplace(u: float, scale: float) -> float:
    """NumPy's Laplace sampler for one uniform double ``u`` (loc 0), bit for bit.

    NumPy's C code computes ``loc ± scale * log(...)`` with the C library ``log``, the
    same function as :func:`math.log` (``np.log`` may differ in the last bit).
    """
    if u >= 0.5:
        return 0.0 - scale * math.log(2.0 - u - u)
    return 0.0 + scale * math.log(u + u)


def _reachable(y: float, x: float, scale: float) -> bool:
    """Whether ``x + rng.laplace(0, scale)`` can return exactly ``y``.

    Inverts the sampler at ``y - x`` to a uniform, then tries every ``k / 2^53`` within
    a few steps of it on both branches (the map from ``k`` to the output is monotone,
    and at this scale at most one ``k`` lands on a given double).
    """
    noise = y - x
    candidates = []
    if noise >= 0.0:
        candidates.append(1.0 - math.exp(-noise / scale) / 2.0)
    if noise <= 0.0:
        candidates.append(math.exp(noise / scale) / 2.0)
    for u in candidates:
        centre = round(u * _TWO53)
        for k in range(max(1, centre - _WINDOW), min(2**53 - 1, centre + _WINDOW) + 1):
            if x + _numpy_laplace(k / _TWO53, scale) == y:
                return True
    return False


def _accuracy_of_reachability_attack(out_near: np.ndarray, out_far: np.ndarray) -> float:
    """Attacker guesses 0 when the output is a possible value of the sampler from 0."""
    guess_near_when_near = np.mean([_reachable(y, 0.0, SCALE) for y in out_near.tolist()])
    guess_near_when_far = np.mean([_reachable(y, 0.0, SCALE) for y in out_far.tolist()])
    return float(0.5 * guess_near_when_near + 0.5 * (1.0 - guess_near_when_far))


def _accuracy_of_round_trip_attack(
    out_near: np.ndarray, out_far: np.ndarray, x_far: float
) -> float:
    """Attacker guesses ``x_far`` when ``(y - x_far) + x_far`` gives back ``y``."""
    far_when_far = np.mean((out_far - x_far) + x_far == out_far)
    far_when_near = np.mean((out_near - x_far) + x_far == out_near)
    return float(0.5 * far_when_far + 0.5 * (1.0 - far_when_near))


def _dp_accuracy_bound(epsilon: float) -> float:
    """Best accuracy of any test between two ε-DP neighbours with equal priors."""
    return math.exp(epsilon) / (1.0 + math.exp(epsilon))


def _naive_outputs(x_far: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = _rng(seed)
    return 0.0 + rng.laplace(0.0, SCALE, N), x_far + rng.laplace(0.0, SCALE, N)


def _veil_outputs(x_far: float, seed: int) -> tuple[Laplace, np.ndarray, np.ndarray]:
    mech = Laplace(1.0 / SCALE, 0.0, 1.0)  # same ε per unit as the naive mechanism
    rng = _rng(seed)
    return mech, mech.randomise(np.zeros(N), rng), mech.randomise(np.full(N, x_far), rng)


def test_sampler_model_reproduces_numpy_laplace_bit_for_bit() -> None:
    # The attack relies on recomputing NumPy's sampler exactly.
    draws = _rng(1).laplace(0.0, SCALE, 2_000)
    uniforms = _rng(1).random(2_000)
    model = np.array([_numpy_laplace(u, SCALE) for u in uniforms.tolist()])
    np.testing.assert_array_equal(model, draws)


def test_reachability_attack_breaks_naive_laplace() -> None:
    out_near, out_far = _naive_outputs(X_FAR, 2)
    # Every output of input 0 is a sampler value; most outputs of 0.1 are not.
    assert all(_reachable(y, 0.0, SCALE) for y in out_near[:2_000].tolist())
    assert all(_reachable(y, X_FAR, SCALE) for y in out_far[:2_000].tolist())
    accuracy = _accuracy_of_reachability_attack(out_near, out_far)
    # ε between 0 and 0.1 is 0.1 / b = 0.1, so no test may exceed 52.5 %; measured ≈ 91 %
    # (standard error 0.25 % at N = 20 000 per input).
    assert _dp_accuracy_bound(X_FAR / SCALE) < 0.53
    assert accuracy > 0.85


def test_round_trip_attack_breaks_naive_laplace() -> None:
    # The cheapest distinguisher: one subtraction and one addition. Outputs of 0.1
    # always survive the round trip, about 15 % of the outputs of 0 do not: accuracy
    # ≈ 57.7 % against the 52.5 % any test may reach under ε = 0.1 (standard error
    # 0.35 %, so the margin of 0.03 is over 8 standard errors).
    out_near, out_far = _naive_outputs(X_FAR, 3)
    accuracy = _accuracy_of_round_trip_attack(out_near, out_far, X_FAR)
    assert accuracy > _dp_accuracy_bound(X_FAR / SCALE) + 0.03


def test_veil_outputs_are_grid_multiples_from_every_input() -> None:
    mech, out_near, out_far = _veil_outputs(X_FAR, 4)
    step = mech.grid.step
    assert step == 2.0**-10
    for out in (out_near, out_far):
        steps = out / step
        np.testing.assert_array_equal(steps, np.rint(steps))
    # "Is the output on the grid?" is true for both inputs: a coin flip for the attacker.


def test_reachability_attack_fails_on_veil_laplace() -> None:
    mech, out_near, out_far = _veil_outputs(X_FAR, 5)
    accuracy = _accuracy_of_reachability_attack(out_near, out_far)
    # 0.1 snaps to 102 grid steps out of 1024, so the pair is (102/1024)·ε-DP and no
    # test beats 52.5 %. Tolerance 0.01 is 4 standard errors (0.25 %) of the accuracy.
    bound = _dp_accuracy_bound(mech.epsilon * 102 / 1024)
    assert 0.5 - 0.01 < accuracy < bound + 0.01


def test_round_trip_attack_fails_on_veil_laplace() -> None:
    mech, out_near, out_far = _veil_outputs(X_FAR, 6)
    accuracy = _accuracy_of_round_trip_attack(out_near, out_far, X_FAR)
    # Same bound as above (0.1 snaps to 102 of 1024 steps, ≤ 52.5 %); tolerance 0.015
    # is about 4 standard errors (0.35 %) of the measured accuracy.
    bound = _dp_accuracy_bound(mech.epsilon * 102 / 1024)
    assert 0.5 - 0.015 < accuracy < bound + 0.015
