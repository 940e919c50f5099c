"""The NumPy graphical model: exact marginals and exact (conditional) sampling."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from veil.errors import ColumnError, DomainError, ParameterError
from veil.mechanisms import PrivacyCost
from veil.synth import GraphicalModel, TableDomain
from veil.synth.graphical import log_marginal

_DOMAIN = {
    "a": ["x", "y", "z"],
    "b": ["u", "v"],
    "c": {"bounds": [0, 3], "integer": True},
    "d": ["p", "q"],
}


def _model(seed: int = 0) -> tuple[GraphicalModel, np.ndarray]:
    """A loopy model (a-b-c-d-a) with random potentials, and its joint by brute force."""
    rng = np.random.default_rng(seed)
    domain = TableDomain.from_dict(_DOMAIN)
    pots = {
        ("a", "b"): rng.normal(0, 1.5, (3, 2)),
        ("b", "c"): rng.normal(0, 1.5, (2, 4)),
        ("c", "d"): rng.normal(0, 1.5, (4, 2)),
        ("a", "d"): rng.normal(0, 1.5, (3, 2)),
    }
    joint = np.zeros((3, 2, 4, 2))
    for i, j, k, m in itertools.product(range(3), range(2), range(4), range(2)):
        joint[i, j, k, m] = (
            pots[("a", "b")][i, j]
            + pots[("b", "c")][j, k]
            + pots[("c", "d")][k, m]
            + pots[("a", "d")][i, m]
        )
    joint = np.exp(joint - joint.max())
    cost = PrivacyCost(1.0, 1e-6, "dp-synthetic", "dataset")
    return GraphicalModel(domain, pots, 1000.0, cost, {"method": "test"}), joint / joint.sum()


def test_marginals_equal_brute_force_sums() -> None:
    model, joint = _model()
    np.testing.assert_allclose(model.marginal(["d", "a"]), joint.sum(axis=(1, 2)).T, atol=1e-14)
    np.testing.assert_allclose(model.marginal(["c"]), joint.sum(axis=(0, 1, 3)), atol=1e-14)
    lm = log_marginal(model.potentials, model.domain.sizes, ["a", "b", "c", "d"])
    np.testing.assert_allclose(np.exp(lm), joint, atol=1e-14)


def test_unconditional_samples_follow_the_joint() -> None:
    # Statistical: 200 000 draws; every cell within 0.004 of its probability (>= 4 s.e.).
    model, joint = _model()
    out = model.sample(200_000, rng=np.random.default_rng(1))
    codes = model.domain.encode(out)
    counts = np.zeros_like(joint)
    np.add.at(counts, (codes["a"], codes["b"], codes["c"], codes["d"]), 1)
    np.testing.assert_allclose(counts / counts.sum(), joint, atol=0.004)


def test_conditional_samples_keep_given_columns_and_follow_the_conditional() -> None:
    # Statistical: 25 000 rows per given cell; conditional cells within 0.012 (>= 4 s.e.).
    model, joint = _model()
    given = pd.DataFrame(
        {"a": ["x"] * 25_000 + ["z"] * 25_000 + ["y"] * 25_000, "c": [0] * 50_000 + [3] * 25_000},
        index=np.arange(75_000) * 3,
    )
    before = given.copy(deep=True)
    out = model.sample(given=given, rng=np.random.default_rng(2))
    pd.testing.assert_frame_equal(given, before)
    assert list(out.columns) == ["a", "b", "c", "d"]
    assert out.index.equals(given.index)
    assert out["a"].tolist() == given["a"].tolist() and out["c"].tolist() == given["c"].tolist()
    codes = model.domain.encode(out)
    for a, c in [(0, 0), (2, 0), (1, 3)]:
        rows = (codes["a"] == a) & (codes["c"] == c)
        cond = joint[a, :, c, :] / joint[a, :, c, :].sum()
        counts = np.zeros((2, 2))
        np.add.at(counts, (codes["b"][rows], codes["d"][rows]), 1)
        np.testing.assert_allclose(counts / counts.sum(), cond, atol=0.012)


def test_seeded_sampling_is_reproducible_and_a_column_in_no_clique_is_uniform() -> None:
    domain = TableDomain.from_dict({"a": ["x", "y"], "e": ["1", "2", "3", "4"]})
    cost = PrivacyCost(1.0, 1e-6, "dp-synthetic", "dataset")
    model = GraphicalModel(domain, {("a",): np.log([0.9, 0.1])}, 10.0, cost, {"method": "t"})
    first = model.sample(40_000, rng=np.random.default_rng(4))
    pd.testing.assert_frame_equal(first, model.sample(40_000, rng=np.random.default_rng(4)))
    freq = first["e"].value_counts(normalize=True)
    np.testing.assert_allclose(freq.sort_index().to_numpy(), 0.25, atol=0.01)
    assert len(model.sample(rng=np.random.default_rng(0))) == 10  # default n: the noisy total


def test_bad_sampling_requests_are_refused() -> None:
    model, _ = _model()
    with pytest.raises(ColumnError, match=r"^given: \['zz'\] are not columns of the domain"):
        model.sample(given=pd.DataFrame({"zz": [1]}))
    with pytest.raises(DomainError, match=r"^a: 1 values are not among"):
        model.sample(given=pd.DataFrame({"a": ["w"]}))
    with pytest.raises(ParameterError, match=r"^n: 5 does not match the 2 rows of given"):
        model.sample(5, given=pd.DataFrame({"a": ["x", "y"]}))
    with pytest.raises(ParameterError, match=r"^n: must be an integer >= 1"):
        model.sample(0)


def test_describe_states_cost_cliques_and_sampling() -> None:
    model, _ = _model()
    info = model.describe()
    assert info["cost"]["notion"] == "dp-synthetic" and info["cost"]["epsilon"] == 1.0
    assert ["a", "b"] in info["cliques"] and "post-processing" in info["sampling"]
    assert info["domain"]["a"]["values"] == ["x", "y", "z"] and info["leaks"] == []


def test_merged_codes_spread_evenly_in_marginals_and_samples() -> None:
    # Statistical: 100 000 draws; cells within 0.005 (>= 5 s.e.).
    domain = TableDomain.from_dict({"a": ["p", "q", "r", "s"], "b": ["u", "v"]})
    joint = np.array([[0.3, 0.1], [0.2, 0.2], [0.1, 0.1]])  # r and s merged into one code
    cost = PrivacyCost(1.0, 1e-6, "dp-synthetic", "dataset")
    model = GraphicalModel(
        domain,
        {("a", "b"): np.log(joint)},
        100.0,
        cost,
        {"method": "t"},
        compression={"a": np.array([0, 1, 2, 2])},
    )
    expected = np.array([[0.3, 0.1], [0.2, 0.2], [0.05, 0.05], [0.05, 0.05]])
    np.testing.assert_allclose(model.marginal(["a", "b"]), expected, atol=1e-12)
    np.testing.assert_allclose(model.marginal(["b", "a"]), expected.T, atol=1e-12)
    out = model.sample(100_000, rng=np.random.default_rng(5))
    codes = domain.encode(out)
    counts = np.zeros((4, 2))
    np.add.at(counts, (codes["a"], codes["b"]), 1)
    np.testing.assert_allclose(counts / counts.sum(), expected, atol=0.005)
    given = pd.DataFrame({"a": ["s"] * 20_000})
    drawn = model.sample(given=given, rng=np.random.default_rng(6))
    assert (drawn["a"] == "s").all()
    assert (drawn["b"] == "u").mean() == pytest.approx(0.5, abs=0.02)
    assert model.describe()["merged_codes"] == {"a": 2}
    assert model.model_sizes == {"a": 3, "b": 2}
