"""Tests for PrivacyCost and PrivacyLedger (veil.mechanisms.cost)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from veil.errors import ParameterError
from veil.mechanisms import (
    Exponential,
    Gaussian,
    Laplace,
    PlanarLaplace,
    PrivacyCost,
    PrivacyLedger,
    RandomizedResponse,
)


def test_defaults_describe_pure_local_dp_per_record() -> None:
    cost = PrivacyCost(1.0)
    assert (cost.epsilon, cost.delta, cost.notion, cost.unit) == (1.0, 0.0, "ldp", "record")


def test_zero_epsilon_is_allowed() -> None:
    # A step that spends nothing (e.g. the empty ledger total) is a valid cost.
    assert PrivacyCost(0.0).epsilon == 0.0


@pytest.mark.parametrize("epsilon", [-0.1, math.nan, math.inf, -math.inf])
def test_invalid_epsilon_is_rejected(epsilon: float) -> None:
    with pytest.raises(ParameterError, match=r"epsilon"):
        PrivacyCost(epsilon)


@pytest.mark.parametrize("epsilon", ["1", None, True])
def test_non_numeric_epsilon_is_rejected_with_parameter_error(epsilon: Any) -> None:
    # House rule: errors are VeilErrors whose message names the parameter; bool is not
    # a budget (the mechanisms reject it too).
    with pytest.raises(ParameterError, match=r"epsilon"):
        PrivacyCost(epsilon)


@pytest.mark.parametrize("value", [np.int64(1), np.float32(0.5), np.float64(0.5)], ids=repr)
def test_numpy_scalars_are_accepted_like_in_the_mechanisms(value: Any) -> None:
    # Every mechanism accepts NumPy scalars for epsilon (check_epsilon); a cost built
    # from the same value (e.g. an epsilon computed with NumPy) must be accepted too.
    assert PrivacyCost(value).epsilon == pytest.approx(float(value))
    assert PrivacyCost(1.0, value / 10).delta == pytest.approx(float(value) / 10)


@pytest.mark.parametrize("delta", [-1e-9, 1.0, 2.0, math.nan])
def test_invalid_delta_is_rejected(delta: float) -> None:
    with pytest.raises(ParameterError, match=r"delta"):
        PrivacyCost(1.0, delta)


def test_unknown_notion_is_rejected() -> None:
    with pytest.raises(ParameterError, match=r"notion"):
        PrivacyCost(1.0, 0.0, "renyi")  # type: ignore[arg-type]


def test_costs_are_immutable() -> None:
    cost = PrivacyCost(1.0)
    with pytest.raises(AttributeError):
        cost.epsilon = 2.0  # type: ignore[misc]


def test_addition_is_sequential_composition() -> None:
    a = PrivacyCost(0.5, 1e-6, "ldp", "record", "age", "laplace")
    b = PrivacyCost(1.25, 2e-6, "ldp", "record", "sex", "randomized response")
    total = a + b
    assert total.epsilon == pytest.approx(1.75)
    assert total.delta == pytest.approx(3e-6)
    assert (total.notion, total.unit) == ("ldp", "record")
    assert total.scope == "age, sex"
    assert total.mechanism == "laplace + randomized response"
    # Addition is commutative in epsilon and delta.
    assert (b + a).epsilon == total.epsilon and (b + a).delta == total.delta


def test_addition_skips_empty_scopes() -> None:
    total = PrivacyCost(1.0) + PrivacyCost(1.0, scope="age")
    assert total.scope == "age"
    assert total.mechanism == ""


def test_composed_delta_stays_a_valid_delta() -> None:
    total = PrivacyCost(1.0, 0.75) + PrivacyCost(1.0, 0.75)
    assert 0.75 < total.delta < 1.0


@pytest.mark.parametrize(
    "other",
    [
        PrivacyCost(0.01, 0.0, "metric", "metre"),
        PrivacyCost(1.0, 0.0, "dp-central", "dataset"),
        PrivacyCost(1.0, 0.0, "ldp", "column"),
    ],
)
def test_costs_of_different_notion_or_unit_do_not_add(other: PrivacyCost) -> None:
    with pytest.raises(ParameterError, match=r"other: cannot compose"):
        PrivacyCost(1.0) + other


def test_mechanism_costs_state_their_notion() -> None:
    assert Laplace(1.0, 0, 1).cost("age").notion == "ldp"
    assert Laplace(1.0, 0, 1).cost("age").scope == "age"
    gauss = Gaussian(0.5, 1e-6, 0, 1).cost()
    assert (gauss.epsilon, gauss.delta) == (0.5, 1e-6)
    planar = PlanarLaplace(0.01).cost()
    assert (planar.epsilon, planar.notion, planar.unit) == (0.01, "metric", "metre")


def test_empty_ledger_totals_zero() -> None:
    ledger = PrivacyLedger()
    assert len(ledger) == 0
    total = ledger.total()
    assert (total.epsilon, total.delta, total.notion, total.unit) == (0.0, 0.0, "ldp", "record")


def test_ledger_totals_per_notion_without_mixing() -> None:
    ledger = PrivacyLedger()
    ledger.record(Laplace(0.5, 0, 100).cost("age"))
    ledger.record(RandomizedResponse(1.0, 3).cost("sex"))
    ledger.record(Gaussian(0.25, 1e-6, 0, 1).cost("income"))
    ledger.record(PlanarLaplace(0.01).cost("location"))
    ledger.record(PlanarLaplace(0.02).cost("location"))
    ledger.record(PrivacyCost(2.0, 0.0, "dp-central", "dataset", "", "noisy count"))
    assert len(ledger) == 6

    ldp = ledger.total()
    assert ldp.epsilon == pytest.approx(1.75)
    assert ldp.delta == pytest.approx(1e-6)
    assert ldp.notion == "ldp"
    assert ldp.scope == "age, sex, income"

    metric = ledger.total("metric", "metre")
    assert metric.epsilon == pytest.approx(0.03)
    assert metric.delta == 0.0

    central = ledger.total("dp-central", "dataset")
    assert central.epsilon == pytest.approx(2.0)

    # A notion with the wrong unit matches nothing rather than mixing units.
    assert ledger.total("metric", "record").epsilon == 0.0


def test_ledger_records_the_privacy_actually_spent() -> None:
    # trasgoDP's exponential mechanism spends half the budget it is given; the ledger
    # must show the half, not the budget.
    ledger = PrivacyLedger()
    ledger.record(Exponential(2.0, 4).cost("education"))
    assert ledger.total().epsilon == pytest.approx(1.0)
    assert "PrivacyCost" in repr(ledger)
