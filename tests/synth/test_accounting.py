"""zCDP accounting and its (epsilon, delta) conversion."""

from __future__ import annotations

import math

import numpy as np
import pytest

from veil.errors import ParameterError
from veil.synth import ZCDPAccountant, epsilon_from_rho, rho_from_epsilon
from veil.synth.measure import contingency, exponential_select, measure


def test_conversion_matches_bun_steinke_and_inverts() -> None:
    # Bun and Steinke 2016, Prop. 1.3: rho-zCDP gives (rho + 2 sqrt(rho ln(1/delta)), delta).
    assert epsilon_from_rho(0.5, 1e-5) == pytest.approx(0.5 + 2 * math.sqrt(0.5 * math.log(1e5)))
    for eps in (0.01, 0.1, 1.0, 8.0):
        for delta in (1e-9, 1e-5, 0.01):
            rho = rho_from_epsilon(eps, delta)
            assert epsilon_from_rho(rho, delta) == pytest.approx(eps, rel=1e-12)
    # A value worked by hand: eps 1, delta 1e-5 -> (sqrt(ln 1e5 + 1) - sqrt(ln 1e5))^2.
    log_term = math.log(1e5)
    assert rho_from_epsilon(1.0, 1e-5) == pytest.approx(
        (math.sqrt(log_term + 1) - math.sqrt(log_term)) ** 2, rel=1e-12
    )


def test_accountant_adds_gaussian_and_exponential_costs() -> None:
    acc = ZCDPAccountant(1.0, 1e-6)
    assert acc.gaussian(10.0, "m") == pytest.approx(1 / 200)
    assert acc.exponential(0.1, "s") == pytest.approx(0.01 / 8)
    assert acc.spent == pytest.approx(1 / 200 + 0.01 / 8)
    cost = acc.cost("cols", "test")
    assert (cost.notion, cost.unit, cost.delta) == ("dp-synthetic", "dataset", 1e-6)
    assert cost.epsilon == pytest.approx(epsilon_from_rho(acc.spent, 1e-6))
    assert [e["kind"] for e in acc.to_dict()["entries"]] == ["gaussian", "exponential"]


def test_accountant_refuses_to_overspend() -> None:
    acc = ZCDPAccountant(0.1, 1e-6)
    with pytest.raises(ParameterError, match=r"^budget: spending rho="):
        acc.gaussian(0.1, "too much")
    assert acc.entries == []


@pytest.mark.parametrize(("eps", "delta"), [(0.0, 1e-5), (-1.0, 1e-5), (1.0, 0.0), (1.0, 1.0)])
def test_bad_targets_are_refused(eps: float, delta: float) -> None:
    with pytest.raises(ParameterError, match=r"^(epsilon|delta):"):
        ZCDPAccountant(eps, delta)


def test_measured_noise_has_the_recorded_scale() -> None:
    # Statistical: 200 000 cells, the sample std is within 1 % of sigma (about 6 s.e.).
    acc = ZCDPAccountant(1.0, 1e-6)
    rng = np.random.default_rng(11)
    counts = np.zeros((400, 500), dtype=np.int64)
    m = measure(counts, ("a", "b"), 7.5, acc, rng)
    assert m.noisy.std() == pytest.approx(7.5, rel=0.01)
    assert np.all(m.noisy == np.round(m.noisy))  # integer noise: no float trace of counts
    assert acc.entries[0].parameter == 7.5 and acc.entries[0].rho == pytest.approx(1 / (2 * 56.25))


def test_contingency_counts_cells() -> None:
    codes = {"a": np.array([0, 1, 1, 2]), "b": np.array([1, 0, 0, 1])}
    table = contingency(codes, ("a", "b"), {"a": 3, "b": 2})
    assert table.tolist() == [[0, 1], [2, 0], [0, 1]]


def test_exponential_selection_follows_its_law() -> None:
    # Statistical: 20 000 draws, frequencies within 0.015 of exp(eps*u/2)/Z (about 5 s.e.).
    acc = ZCDPAccountant(1e5, 0.5)  # room for 20 000 selections
    rng = np.random.default_rng(5)
    scores = np.array([0.0, 1.0, 2.0])
    draws = [exponential_select(scores, 1.0, 1.0, acc, rng) for _ in range(20_000)]
    expected = np.exp(0.5 * scores) / np.exp(0.5 * scores).sum()
    np.testing.assert_allclose(np.bincount(draws, minlength=3) / 20_000, expected, atol=0.015)


def test_spending_the_whole_budget_in_pieces_never_records_more_than_asked() -> None:
    for eps in (0.1, 1.0, 3.0):
        acc = ZCDPAccountant(eps, 1e-8)
        piece = acc.budget / 997
        sigma = math.sqrt(1 / (2 * piece))
        for i in range(997):
            acc.gaussian(sigma, f"m{i}")
        assert acc.cost("", "").epsilon <= eps
        assert acc.cost("", "").epsilon == pytest.approx(eps, rel=1e-9)
