"""The baseline of independent DP marginals: cost, noise, sampling, no extra needed."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from veil.errors import ParameterError, PrivacyWarning
from veil.synth import (
    SYNTHESIZERS,
    IndependentMarginals,
    epsilon_from_rho,
    make_synthesizer,
    rho_from_epsilon,
)

from ._adult import adult_domain


def test_cost_equals_the_accountant_and_needs_no_mbi(
    members: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mbi", None)
    domain = adult_domain()
    model = IndependentMarginals().fit(members, domain, 0.5, 1e-7, rng=np.random.default_rng(1))
    entries = model.details["accounting"]["entries"]
    d = len(domain.names)
    rho = rho_from_epsilon(0.5, 1e-7)
    assert [e["what"] for e in entries] == [f"marginal {c}" for c in domain.names]
    for e in entries:  # one histogram per column, sigma^2 = d / (2 rho)
        assert e["parameter"] ** 2 == pytest.approx(d / (2 * rho), rel=1e-9)
    spent = sum(1 / (2 * e["parameter"] ** 2) for e in entries)
    assert model.cost.epsilon == pytest.approx(epsilon_from_rho(spent, 1e-7), rel=1e-12)
    assert model.cost.epsilon == pytest.approx(0.5, rel=1e-9) and model.cost.epsilon <= 0.5
    assert model.cost.notion == "dp-synthetic" and model.cost.unit == "dataset"


def test_samples_keep_each_column_and_given_columns(members: pd.DataFrame) -> None:
    # Statistical (eps 8, 4 000 records): each category's share within 0.03.
    domain = adult_domain(["sex", "salary-class"])
    data = members[["sex", "salary-class"]]
    model = IndependentMarginals().fit(data, domain, 8.0, 1e-6, rng=np.random.default_rng(2))
    out = model.sample(20_000, rng=np.random.default_rng(3))
    for col in data.columns:
        expected = data[col].value_counts(normalize=True)
        got = out[col].value_counts(normalize=True).reindex(expected.index, fill_value=0)
        np.testing.assert_allclose(got.to_numpy(), expected.to_numpy(), atol=0.03)
    given = data[["sex"]].iloc[:100]
    conditioned = model.sample(given=given, rng=np.random.default_rng(4))
    pd.testing.assert_frame_equal(conditioned[["sex"]], given)


def test_a_delta_not_below_one_over_n_warns(members: pd.DataFrame) -> None:
    domain = adult_domain(["sex"])
    with pytest.warns(PrivacyWarning, match=r"^delta: 0.001 is not below 1 / n"):
        IndependentMarginals().fit(members[["sex"]], domain, 1.0, 1e-3)


def test_synthesizers_are_made_by_name_with_checked_settings() -> None:
    assert isinstance(make_synthesizer("independent"), IndependentMarginals)
    assert make_synthesizer("mst", iters=10).iters == 10
    assert set(SYNTHESIZERS) == {"mst", "aim", "independent", "dpwgan"}
    with pytest.raises(ParameterError, match=r"^synthesizer: 'ctgan' is unknown; allowed"):
        make_synthesizer("ctgan")
    with pytest.raises(ParameterError, match=r"^synthesizer settings: \['epochs'\]"):
        make_synthesizer("aim", epochs=3)
    with pytest.raises(ParameterError, match=r"^rounds:"):
        make_synthesizer("aim", rounds=0)
