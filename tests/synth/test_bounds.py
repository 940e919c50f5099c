"""Numeric bounds estimated under DP: the quantile mechanism, clipping, the cost."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.errors import ColumnError, ParameterError
from veil.synth import IndependentMarginals, NumericColumn, dp_bounds, dp_quantile


def test_dp_quantile_lands_near_the_quantile_at_a_useful_epsilon() -> None:
    # Statistical (seeded): 10 000 values; at epsilon 1 the rank error is a few units,
    # so the estimate is within 0.05 of the true quantile of Uniform(0, 1).
    rng = np.random.default_rng(1)
    values = rng.random(10_000)
    for q in (0.1, 0.5, 0.9):
        est = [dp_quantile(values, q, 1.0, -5.0, 5.0, rng) for _ in range(20)]
        assert np.all(np.abs(np.array(est) - np.quantile(values, q)) < 0.05)


def test_dp_quantile_at_tiny_epsilon_is_uniform_over_the_public_range() -> None:
    # Statistical: epsilon 1e-9 leaves the output uniform on [0, 10]: mean within 0.15
    # of 5 over 2 000 draws (about 5 s.e.).
    rng = np.random.default_rng(2)
    values = np.full(100, 9.0)
    draws = np.array([dp_quantile(values, 0.5, 1e-9, 0.0, 10.0, rng) for _ in range(2000)])
    assert draws.min() >= 0.0 and draws.max() <= 10.0
    assert draws.mean() == pytest.approx(5.0, abs=0.15)


def test_dp_bounds_cover_the_bulk_clip_the_rest_and_charge_the_model() -> None:
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"x": rng.normal(50, 10, 5000).round(), "s": ["a", "b"] * 2500})
    df.loc[0, "x"] = 10_000.0  # an outlier the bounds should not follow
    before = df.copy(deep=True)
    bounds = dp_bounds(df, {"x": [0, 1000]}, 1.0, integer=["x"], rng=rng)
    pd.testing.assert_frame_equal(df, before)
    col = bounds.columns["x"]
    assert isinstance(col, NumericColumn) and col.clip and col.integer
    assert 0 <= col.lower <= np.quantile(df["x"], 0.02) and col.upper >= np.quantile(df["x"], 0.98)
    assert col.upper < 200 and col.lower == int(col.lower)
    assert (bounds.cost.epsilon, bounds.cost.delta) == (1.0, 0.0)
    assert bounds.cost.notion == "dp-synthetic"
    domain = bounds.domain({"s": ["a", "b"]})
    assert domain.names == ("s", "x") and domain.costs == (bounds.cost,)
    codes = domain.encode(df)  # the outlier is clipped into the last bin, not refused
    assert codes["x"][0] == col.bins - 1
    model = IndependentMarginals().fit(df, domain, 0.5, 1e-7, rng=rng)
    assert model.cost.epsilon == pytest.approx(1.5, rel=1e-9)
    assert model.describe()["domain_costs"][0]["mechanism"].startswith("DP quantile")


def test_dp_bounds_refuse_bad_input() -> None:
    df = pd.DataFrame({"x": [1.0, 2.0, None]})
    with pytest.raises(ParameterError, match=r"^epsilon:"):
        dp_bounds(df, {"x": [0, 10]}, 0.0)
    with pytest.raises(ColumnError, match=r"^coarse: \['y'\] are not columns"):
        dp_bounds(df, {"y": [0, 10]}, 1.0)
    with pytest.raises(ParameterError, match=r"^coarse\['x'\]: need finite lower < upper"):
        dp_bounds(df, {"x": [10, 0]}, 1.0)
    with pytest.raises(ParameterError, match=r"^x: holds missing values"):
        dp_bounds(df, {"x": [0, 10]}, 1.0)
    with pytest.raises(ParameterError, match=r"^quantiles:"):
        dp_bounds(df, {"x": [0, 10]}, 1.0, quantiles=(0.9, 0.1), missing=["x"])
