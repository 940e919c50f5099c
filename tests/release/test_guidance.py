"""Harm tiers and expected errors, computed from the mechanisms' calibration only."""

from __future__ import annotations

import math

import numpy as np
import pytest

from veil.errors import ParameterError
from veil.mechanisms import Laplace, PlanarLaplace
from veil.release import PlanError, example_plan, load_plan
from veil.release.guidance import HARM_TIERS, default_delta, expected_errors, harm_tier
from veil.rng import resolve_rng


def _plan(columns: dict, **extra: object):
    return load_plan({"input": {"path": "x.csv"}, "columns": columns, **extra})


def test_the_highest_yes_sets_the_tier_and_tiers_tighten_with_harm() -> None:
    assert harm_tier({}).level == 0
    assert harm_tier({"nuisance": True, "legal": True}).level == 4
    assert harm_tier(["safety"]).ldp_epsilon == 0.25
    eps = [t.ldp_epsilon for t in HARM_TIERS]
    radii = [t.radius_m for t in HARM_TIERS]
    assert eps == sorted(eps, reverse=True) and radii == sorted(radii)
    assert HARM_TIERS[2].metric_epsilon == pytest.approx(math.log(4) / 200)
    with pytest.raises(ParameterError, match=r"unknown harm questions \['bogus'\]"):
        harm_tier(["bogus"])


def test_default_delta_is_one_over_100_n_at_most_1e6() -> None:
    assert default_delta(None) == 1e-6
    assert default_delta(10) == 1e-6
    assert default_delta(1_000_000) == pytest.approx(1e-8)
    assert HARM_TIERS[1].defaults(1_000_000)["ldp_delta"] == pytest.approx(1e-8)
    with pytest.raises(ParameterError, match="rows: must be an integer >= 1"):
        default_delta(0)


def test_laplace_error_matches_the_noise_actually_drawn() -> None:
    plan = _plan(
        {
            "age": {
                "role": "quasi_identifier",
                "treatment": {"laplace": {"bounds": [0, 100], "epsilon": 1.0}},
            }
        }
    )
    (err,) = expected_errors(plan, rows=10_000, integer=["age"])
    mech = Laplace(1.0, 0, 100, integer=True)
    assert err.noise_std == pytest.approx(math.sqrt(mech.variance()))
    assert err.mean_std == pytest.approx(err.noise_std / 100)
    assert err.relative_std == pytest.approx(err.noise_std / 100)
    # Seeded check, tolerance 3 %: 200 000 draws estimate the std to about 0.3 %.
    draws = mech.randomise(np.full(200_000, 50), resolve_rng(np.random.default_rng(7)))
    assert np.std(draws - 50) == pytest.approx(err.noise_std, rel=0.03)


def test_categorical_error_is_the_chance_of_change_and_bounds_the_tvd() -> None:
    plan = _plan(
        {
            "sex": {
                "role": "quasi_identifier",
                "treatment": {
                    "randomized_response": {"domain": ["F", "M"], "epsilon": math.log(3)}
                },
            }
        }
    )
    (err,) = expected_errors(plan)
    assert err.change_probability == pytest.approx(0.25)
    assert err.max_tvd == pytest.approx(0.25)
    assert "25.0%" in err.note


def test_exponential_and_location_errors() -> None:
    plan = _plan(
        {
            "lvl": {
                "role": "sensitive",
                "treatment": {
                    "exponential": {"domain": ["a", "b", "c"], "epsilon": 2.0, "ordinal": True}
                },
            }
        },
        locations=[
            {
                "lat": "la",
                "lon": "lo",
                "mask": {"method": "planar_laplace", "epsilon": 0.01},
                "centre": [40.0, -3.0],
            }
        ],
        budget={"ldp": {"epsilon": 2.0}, "metric": {"epsilon": 0.01}},
    )
    lvl, where = expected_errors(plan)
    assert 0 < lvl.change_probability < 1
    assert where.kind == "location"
    assert where.mean_displacement_m == pytest.approx(PlanarLaplace(0.01).mean_radius)
    assert where.p95_displacement_m > where.mean_displacement_m


def test_unnoised_columns_say_what_happens_to_them() -> None:
    errors = {e.column: e for e in expected_errors(load_plan(example_plan("adult")))}
    assert errors["fnlwgt"].kind == "removed"
    assert errors["salary-class"].kind == "exact"
    assert errors["education"].method == "anonymization"
    assert errors["age"].epsilon is not None and errors["age"].noise_std > 0


def test_a_target_allocation_has_no_expected_error_before_a_dry_run(tmp_path) -> None:
    plan = load_plan(
        {
            "input": {"path": "x.csv"},
            "columns": {
                "age": {"role": "quasi_identifier", "treatment": {"laplace": {"bounds": [0, 9]}}}
            },
            "budget": {
                "ldp": {"epsilon": 1.0},
                "allocation": "target",
                "target": {"value": 0.1, "sample": "s.csv"},
            },
        },
        base_dir=tmp_path,
    )
    with pytest.raises(PlanError, match=r"budget\.allocation: 'target'"):
        expected_errors(plan)
    with pytest.raises(PlanError, match="rows: must be an integer"):
        expected_errors(load_plan(example_plan("adult")), rows=0)
