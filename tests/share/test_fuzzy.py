"""OptimShare's fuzzy system: against scikit-fuzzy, the rescaling and the pair reading."""

from __future__ import annotations

import numpy as np
import pytest
import skfuzzy  # the test extra installs scikit-fuzzy, the oracle
from skfuzzy import control as ctrl

from veil.errors import ParameterError
from veil.share import budget_pairs, fis_output, fis_surface

# scikit-fuzzy 0.5 calls np.maximum with three positional arguments.
pytestmark = pytest.mark.filterwarnings("ignore:Passing more than 2 positional:DeprecationWarning")

# scikit-fuzzy samples the output universe; with 20 001 points its trapezoid centroid
# differs from the exact one by about h² = 2.5e-9 at most.
_UNIVERSE = 20_001
_ORACLE_TOLERANCE = 1e-7


def _oracle() -> ctrl.ControlSystemSimulation:
    """The paper's system written with scikit-fuzzy (Eq. 13, Gaussian sigma 1)."""
    x = np.linspace(0.0, 1.0, _UNIVERSE)
    eps = ctrl.Antecedent(x, "epsilon")
    delta = ctrl.Antecedent(x, "delta")
    pif = ctrl.Consequent(x, "pif", defuzzify_method="centroid")
    for var in (eps, delta, pif):
        for name, mean in (("low", 0.0), ("medium", 0.5), ("high", 1.0)):
            var[name] = skfuzzy.gaussmf(var.universe, mean, 1.0)
    rules = [
        ctrl.Rule(eps["low"], pif["high"]),
        ctrl.Rule(delta["low"], pif["high"]),
        ctrl.Rule(eps["medium"] & delta["medium"], pif["medium"]),
        ctrl.Rule(eps["high"], pif["low"]),
        ctrl.Rule(delta["high"], pif["low"]),
    ]
    return ctrl.ControlSystemSimulation(ctrl.ControlSystem(rules))


def test_literal_surface_matches_scikit_fuzzy() -> None:
    sim = _oracle()
    rng = np.random.default_rng(7)
    # Inputs on the universe points, where scikit-fuzzy's interpolated membership is exact.
    points = rng.integers(0, _UNIVERSE, size=(40, 2)) / (_UNIVERSE - 1)
    points = np.vstack([points, [[0, 0], [1, 1], [0, 1], [0.5, 0.5], [0.25, 0.75]]])
    expected = []
    for e, d in points:
        sim.input["epsilon"] = e
        sim.input["delta"] = d
        sim.compute()
        expected.append(sim.output["pif"])
    got = fis_output(points[:, 0], points[:, 1], rescale=False)
    np.testing.assert_allclose(got, expected, atol=_ORACLE_TOLERANCE, rtol=0)


def test_literal_output_spans_only_a_narrow_band_and_rescaling_maps_it_to_unit() -> None:
    lo, hi = fis_surface(50, rescale=False).literal_range
    assert lo == pytest.approx(0.4868, abs=1e-4)
    assert hi == pytest.approx(0.5132, abs=1e-4)
    surface = fis_surface(50)
    assert surface.values.max() == pytest.approx(1.0, abs=1e-12)
    assert surface.values.min() == pytest.approx(0.0, abs=1e-12)
    literal = fis_surface(50, rescale=False)
    np.testing.assert_allclose(
        surface.values, (literal.values - lo) / (hi - lo), rtol=0, atol=1e-12
    )


def test_surface_is_symmetric_and_falls_in_both_inputs() -> None:
    surface = fis_surface(120)
    np.testing.assert_allclose(surface.values, surface.values.T, atol=0)
    assert np.diff(surface.values, axis=1).max() <= 1e-12
    assert np.diff(surface.values, axis=0).max() <= 1e-12
    # The grid triangle trick agrees with direct evaluation.
    e, d = np.meshgrid(surface.epsilon, surface.delta)
    np.testing.assert_allclose(surface.values, fis_output(e, d), atol=1e-12)


def test_pairs_follow_the_stated_reading() -> None:
    n = 4412
    choice = budget_pairs(0.7, n)
    assert len(choice.pairs) == 12
    delta = 0.01 / (100 * n)
    eps = [p[0] for p in choice.pairs]
    assert all(p[1] == pytest.approx(delta, rel=1e-15) for p in choice.pairs)
    assert np.all(np.diff(eps) > 0)
    np.testing.assert_allclose(eps, choice.epsilon_star * np.arange(1, 13) / 12, rtol=1e-12)
    # The largest pair lies on the contour, every pair answers at least the need.
    assert fis_output(choice.epsilon_star / 8.0, delta * n) == pytest.approx(0.7, abs=1e-8)
    assert min(choice.outputs) >= 0.7
    assert not choice.capped and 0 < choice.epsilon_star < 8.0
    record = choice.to_dict()
    for key in ("inputs", "delta", "rescaling", "pairs", "capped", "centroid", "contour"):
        assert record["readings"][key]
    assert record["pairs"][0] == list(choice.pairs[0])
    assert record["literal_output_range"][0] == pytest.approx(0.4868, abs=1e-4)


def test_higher_need_gives_smaller_epsilon_and_low_need_caps_at_t_epsilon() -> None:
    stars = [budget_pairs(p, 1000).epsilon_star for p in (0.55, 0.7, 0.9, 0.99)]
    assert np.all(np.diff(stars) < 0)
    low = budget_pairs(0.2, 1000, t_epsilon=4.0, tn=3)
    assert low.capped and low.epsilon_star == 4.0
    assert [p[0] for p in low.pairs] == pytest.approx([4 / 3, 8 / 3, 4.0])


def test_contour_falls_in_delta_and_matches_the_target() -> None:
    choice = budget_pairs(0.6, 500, grid=100)
    eps = np.array([c[0] for c in choice.contour])
    deltas = np.array([c[1] for c in choice.contour])
    assert eps.size > 10
    assert np.all(np.diff(deltas) > 0) and np.all(np.diff(eps) <= 1e-12)
    np.testing.assert_allclose(fis_output(eps / 8.0, deltas * 500), 0.6, atol=2e-3)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"pif_thresh": 1.0}, "pif_thresh"),
        ({"pif_thresh": -0.1}, "pif_thresh"),
        ({"pif_thresh": float("nan")}, "pif_thresh"),
        ({"n_rows": 0}, "n_rows"),
        ({"t_epsilon": 0.0}, "t_epsilon"),
        ({"p_l": 0.0}, "p_l"),
        ({"p_l": 150.0}, "p_l"),
        ({"tn": 0}, "tn"),
        ({"grid": 1}, "grid"),
    ],
)
def test_bad_parameters_name_themselves(kwargs: dict[str, float], name: str) -> None:
    args = {"pif_thresh": 0.6, "n_rows": 100, **kwargs}
    with pytest.raises(ParameterError, match=rf"^{name}:"):
        budget_pairs(**args)  # type: ignore[arg-type]


def test_every_need_below_one_gets_pairs() -> None:
    # At epsilon = 0 the output is 1 whatever delta, so a need just below 1 is met by a
    # tiny epsilon, never refused.
    near_one = budget_pairs(1.0 - 1e-6, 1000)
    assert 0.0 < near_one.epsilon_star < 1e-3
    assert min(near_one.outputs) >= 1.0 - 1e-6


def test_inputs_outside_unit_square_are_refused() -> None:
    with pytest.raises(ParameterError, match=r"^epsilon:"):
        fis_output(1.5, 0.0)
    with pytest.raises(ParameterError, match=r"^delta:"):
        fis_output(0.0, -0.1)
