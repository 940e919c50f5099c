"""Tests for the analyst-side estimators of local-DP releases (veil.ldp.estimate)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pytest

from veil.errors import DataTypeError, DomainError, ParameterError
from veil.ldp.estimate import (
    MeanEstimate,
    estimate_frequencies,
    estimate_mean,
    project_to_simplex,
)
from veil.mechanisms import (
    BinaryRandomizedResponse,
    Exponential,
    Gaussian,
    Laplace,
    RandomizedResponse,
    ordinal_scores,
)

DOMAIN = ["a", "b", "c", "d", "e"]
TRUE_P = np.array([0.4, 0.3, 0.15, 0.1, 0.05])


def _rng(seed: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed))


def _true_codes(n: int, rng: np.random.Generator) -> npt.NDArray[np.int64]:
    return np.asarray(rng.choice(len(DOMAIN), size=n, p=TRUE_P), dtype=np.int64)


def _labels(codes: npt.NDArray[np.int64]) -> npt.NDArray[Any]:
    return np.asarray(DOMAIN, dtype=object)[codes]


# ---------------------------------------------------------------------------
# estimate_frequencies: accuracy
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mech", "kwargs"),
    [
        (RandomizedResponse(1.0, 5), {"epsilon": 1.0, "mechanism": "rr"}),
        (Exponential(1.0, 5), {"epsilon": 1.0, "mechanism": "exponential"}),
        (RandomizedResponse(0.5, 5), {"channel": RandomizedResponse(0.5, 5)}),
        (Exponential(2.0, scores=ordinal_scores(5)), {"channel": "mech"}),
    ],
    ids=["rr", "exponential", "rr-channel-object", "ordinal-exponential-matrix"],
)
def test_true_proportions_within_four_standard_errors(mech: Any, kwargs: dict[str, Any]) -> None:
    rng = _rng(11)
    n = 200_000
    reports = _labels(mech.randomise(_true_codes(n, rng), rng))
    if kwargs.get("channel") == "mech":
        kwargs = {"channel": mech.channel}  # a general (not keep-or-other) matrix
    est = estimate_frequencies(reports, DOMAIN, **kwargs)
    assert list(est.index) == DOMAIN
    assert list(est.columns) == [
        "count",
        "estimate",
        "std_error",
        "ci_low",
        "ci_high",
        "estimated_count",
    ]
    assert est["count"].sum() == n
    # Tolerance: 4 standard errors per category (two-sided miss probability ~6e-5).
    z = np.abs(est["estimate"].to_numpy() - TRUE_P) / est["std_error"].to_numpy()
    assert np.all(z < 4.0), z
    np.testing.assert_allclose(est["estimated_count"], est["estimate"] * n)
    # The channel inverse preserves the total: estimates sum to 1 up to rounding.
    assert est["estimate"].sum() == pytest.approx(1.0, abs=1e-12)


def test_closed_form_matches_matrix_inverse_and_full_covariance() -> None:
    rng = _rng(3)
    mech = RandomizedResponse(1.5, 5)
    n = 5_000
    reports = _labels(mech.randomise(_true_codes(n, rng), rng))
    est = estimate_frequencies(reports, DOMAIN, epsilon=1.5)
    q = np.bincount(np.searchsorted(DOMAIN, reports), minlength=5) / n  # DOMAIN is sorted
    p_inv_t = np.linalg.inv(mech.channel.T)
    covariance = p_inv_t @ (np.diag(q) - np.outer(q, q)) @ p_inv_t.T / n
    np.testing.assert_allclose(est["estimate"], p_inv_t @ q, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(est["std_error"] ** 2, np.diag(covariance), rtol=1e-9)


def test_confidence_interval_coverage_near_nominal() -> None:
    rng = _rng(2024)
    mech = RandomizedResponse(1.0, 5)
    covered = 0
    total = 0
    for _ in range(200):
        reports = _labels(mech.randomise(_true_codes(2_000, rng), rng))
        est = estimate_frequencies(reports, DOMAIN, epsilon=1.0, confidence=0.95)
        low, high = est["ci_low"].to_numpy(), est["ci_high"].to_numpy()
        inside = (low <= TRUE_P) & (high >= TRUE_P)
        covered += int(inside.sum())
        total += inside.size
    # 1000 intervals at nominal 0.95: binomial sd ~0.007, so [0.9, 0.99] is > 5 sd wide.
    assert 0.9 <= covered / total <= 0.99


def test_wider_confidence_gives_wider_intervals() -> None:
    rng = _rng(5)
    reports = _labels(RandomizedResponse(1.0, 5).randomise(_true_codes(1_000, rng), rng))
    narrow = estimate_frequencies(reports, DOMAIN, epsilon=1.0, confidence=0.5)
    wide = estimate_frequencies(reports, DOMAIN, epsilon=1.0, confidence=0.99)
    np.testing.assert_allclose(narrow["estimate"], wide["estimate"])
    assert np.all(wide["ci_high"] - wide["ci_low"] > narrow["ci_high"] - narrow["ci_low"])


def test_binary_randomized_response() -> None:
    rng = _rng(7)
    n = 200_000
    truth = rng.random(n) < 0.2
    released = BinaryRandomizedResponse(0.8).randomise(truth, rng)
    reports = np.where(released == 1, "yes", "no")
    est = estimate_frequencies(reports, ["no", "yes"], epsilon=0.8)
    # Tolerance: 4 standard errors.
    assert abs(est.loc["yes", "estimate"] - 0.2) < 4 * est.loc["yes", "std_error"]
    assert est.loc["no", "estimate"] + est.loc["yes", "estimate"] == pytest.approx(1.0)


def test_categorical_and_series_inputs_match_plain_array() -> None:
    rng = _rng(8)
    reports = _labels(RandomizedResponse(1.0, 5).randomise(_true_codes(3_000, rng), rng))
    plain = estimate_frequencies(reports, DOMAIN, epsilon=1.0)
    # Categories in another order, plus an unused one outside the domain.
    categorical = pd.Categorical(reports, categories=["e", "zz", "c", "a", "b", "d"])
    from_cat = estimate_frequencies(categorical, DOMAIN, epsilon=1.0)
    series = pd.Series(categorical, name="colour")
    from_series = estimate_frequencies(series, DOMAIN, epsilon=1.0)
    pd.testing.assert_frame_equal(plain, from_cat)
    pd.testing.assert_frame_equal(plain.rename_axis("colour"), from_series)


def test_domain_order_sets_row_order_and_unseen_categories_get_zero_counts() -> None:
    reports = ["b", "b", "a", "b"]
    est = estimate_frequencies(reports, ["c", "b", "a"], epsilon=2.0)
    assert list(est.index) == ["c", "b", "a"]
    assert est["count"].tolist() == [0, 3, 1]


def test_integer_domain() -> None:
    rng = _rng(9)
    codes = _true_codes(50_000, rng)
    reports = RandomizedResponse(2.0, 5).randomise(codes, rng) + 10
    est = estimate_frequencies(reports, [10, 11, 12, 13, 14], epsilon=2.0)
    # Tolerance: 4 standard errors per category.
    assert np.all(np.abs(est["estimate"].to_numpy() - TRUE_P) < 4 * est["std_error"].to_numpy())


# ---------------------------------------------------------------------------
# Projection onto the simplex
# ---------------------------------------------------------------------------


def test_projection_is_a_distribution_even_with_negative_estimates() -> None:
    rng = _rng(10)
    probabilities = np.array([0.6, 0.3, 0.07, 0.02, 0.01])
    codes = np.asarray(rng.choice(5, size=300, p=probabilities), dtype=np.int64)
    reports = _labels(RandomizedResponse(0.5, 5).randomise(codes, rng))
    est = estimate_frequencies(reports, DOMAIN, epsilon=0.5, project=True)
    assert (est["estimate"] < 0).any()  # small n, small epsilon: raw estimates overshoot
    assert est["projected"].sum() == pytest.approx(1.0, abs=1e-12)
    assert (est["projected"] >= 0).all()
    assert (est["projected"] == 0).any()


def test_projection_known_values() -> None:
    # Norm-Sub: subtract a common θ, zero what goes negative.
    np.testing.assert_allclose(project_to_simplex([0.7, 0.5, -0.2]), [0.6, 0.4, 0.0])
    inside = np.array([0.2, 0.3, 0.5])
    np.testing.assert_allclose(project_to_simplex(inside), inside)
    np.testing.assert_allclose(project_to_simplex([5.0, 5.0]), [0.5, 0.5])


def test_projection_is_closest_point_of_the_simplex() -> None:
    rng = _rng(12)
    v = rng.normal(0.2, 0.3, 6)
    w = project_to_simplex(v)
    candidates = rng.dirichlet(np.ones(6), size=5_000)
    assert np.linalg.norm(v - w) <= np.min(np.linalg.norm(candidates - v, axis=1)) + 1e-12


def test_projection_rejects_bad_input() -> None:
    with pytest.raises(ParameterError, match="values"):
        project_to_simplex([np.nan, 1.0])
    with pytest.raises(ParameterError, match="values"):
        project_to_simplex([])


# ---------------------------------------------------------------------------
# estimate_frequencies: errors
# ---------------------------------------------------------------------------


def test_reports_outside_domain_raise_domain_error_listing_them() -> None:
    reports = ["a", "b", *[f"x{i}" for i in range(15)]]
    with pytest.raises(DomainError, match="15 reports") as info:
        estimate_frequencies(reports, DOMAIN, epsilon=1.0)
    message = str(info.value)
    assert "x0" in message and "x9" in message and "x10" not in message


def test_categorical_with_out_of_domain_category_raises() -> None:
    reports = pd.Categorical(["a", "zz", "b"])
    with pytest.raises(DomainError, match="zz"):
        estimate_frequencies(reports, DOMAIN, epsilon=1.0)


@pytest.mark.parametrize(
    "reports",
    [[], np.array([], dtype=object), pd.Series([], dtype="category")],
    ids=["list", "array", "categorical"],
)
def test_empty_reports_raise(reports: Any) -> None:
    with pytest.raises(ParameterError, match="reports"):
        estimate_frequencies(reports, DOMAIN, epsilon=1.0)


@pytest.mark.parametrize(
    "reports",
    [["a", None, "b"], np.array(["a", np.nan], dtype=object), pd.Categorical(["a", None])],
    ids=["none", "nan", "categorical"],
)
def test_missing_reports_raise(reports: Any) -> None:
    with pytest.raises(ParameterError, match="missing"):
        estimate_frequencies(reports, DOMAIN, epsilon=1.0)


def test_two_dimensional_reports_raise() -> None:
    with pytest.raises(ParameterError, match="1-D"):
        estimate_frequencies(np.array([["a", "b"]]), DOMAIN, epsilon=1.0)


@pytest.mark.parametrize("confidence", [0.0, 1.0, 1.5, -0.1, True, "0.95"])
def test_bad_confidence_raises(confidence: Any) -> None:
    with pytest.raises(ParameterError, match="confidence"):
        estimate_frequencies(["a"], DOMAIN, epsilon=1.0, confidence=confidence)


def test_exactly_one_of_channel_and_epsilon() -> None:
    with pytest.raises(ParameterError, match="neither"):
        estimate_frequencies(["a"], DOMAIN)
    with pytest.raises(ParameterError, match="both"):
        estimate_frequencies(["a"], DOMAIN, epsilon=1.0, channel=RandomizedResponse(1.0, 5))


def test_bad_mechanism_and_epsilon_raise() -> None:
    with pytest.raises(ParameterError, match="mechanism"):
        estimate_frequencies(["a"], DOMAIN, epsilon=1.0, mechanism="laplace")  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="epsilon"):
        estimate_frequencies(["a"], DOMAIN, epsilon=-1.0)


def test_singular_channel_raises() -> None:
    uniform = np.full((5, 5), 0.2)
    with pytest.raises(ParameterError, match="singular"):
        estimate_frequencies(["a"], DOMAIN, channel=uniform)
    rank_deficient = np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])
    with pytest.raises(ParameterError, match="singular"):
        estimate_frequencies(["a"], ["a", "b", "c"], channel=rank_deficient)
    # At epsilon 1e-20 keeping and moving are equally likely in float64.
    with pytest.raises(ParameterError, match="singular"):
        estimate_frequencies(["a"], DOMAIN, epsilon=1e-20)


@pytest.mark.parametrize(
    ("channel", "match"),
    [
        (np.eye(4), "5 x 5"),
        (np.full((5, 5), 0.3), "sum to 1"),
        (np.eye(5) * 2 - np.full((5, 5), 0.25), ">= 0"),
        (RandomizedResponse(1.0, 3), "5 x 5"),
    ],
    ids=["shape", "row-sums", "negative", "mechanism-size"],
)
def test_invalid_channel_raises(channel: Any, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        estimate_frequencies(["a"], DOMAIN, channel=channel)


@pytest.mark.parametrize(
    ("domain", "match"),
    [
        (["a"], "at least 2"),
        (["a", "a", "b"], "unique"),
        (["a", None], "missing"),
        ("ab", "string"),
    ],
    ids=["too-small", "repeats", "missing", "string"],
)
def test_invalid_domain_raises(domain: Any, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        estimate_frequencies(["a"], domain, epsilon=1.0)


# ---------------------------------------------------------------------------
# estimate_mean
# ---------------------------------------------------------------------------


def _skewed_values(n: int, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    # Mass near the upper bound of [0, 100], a few values beyond it (clipped at release).
    return np.asarray(100.0 * rng.beta(5.0, 1.0, n) + rng.exponential(1.0, n), dtype=np.float64)


def _snapped_mean(mech: Laplace | Gaussian, values: npt.NDArray[np.float64]) -> float:
    return float(np.mean(mech.grid.snap(values) * mech.grid.step))


@pytest.mark.parametrize(
    "mech",
    [
        Laplace(1.0, 0.0, 100.0),
        Laplace(2.0, 0, 100, integer=True),
        Gaussian(1.0, 1e-6, 0.0, 100.0),
        Gaussian(2.0, 1e-6, 0.0, 100.0, calibration="analytic"),
    ],
    ids=["laplace", "laplace-integer", "gaussian-classic", "gaussian-analytic"],
)
def test_unclipped_mean_is_unbiased(mech: Laplace | Gaussian) -> None:
    rng = _rng(21)
    n = 200_000
    values = _skewed_values(n, rng)
    if mech.integer:
        values = np.round(values)
    noisy = mech.randomise(values, rng)
    kwargs: dict[str, Any] = {"integer": mech.integer}
    if isinstance(mech, Gaussian):
        kwargs |= {"mechanism": "gaussian", "delta": mech.delta, "calibration": mech.calibration}
    est = estimate_mean(noisy, lower=0, upper=100, epsilon=mech.epsilon, clipped=False, **kwargs)
    assert isinstance(est, MeanEstimate)
    assert est.n == n
    # The SE comes from the sample variance: data variance plus noise variance. The
    # sample variance's relative sd is about sqrt((kurtosis - 1) / n) < 0.6%; allow 3%.
    snapped = mech.grid.snap(values) * mech.grid.step
    assert est.std_error**2 * n == pytest.approx(mech.variance() + snapped.var(), rel=0.03)
    # Tolerance: 4 standard errors around the mean of the clipped, snapped truth.
    assert abs(est.mean - _snapped_mean(mech, values)) < 4 * est.std_error
    assert est.ci_low < est.mean < est.ci_high
    assert "Unbiased" in est.bias_note


def test_unclipped_mean_interval_coverage() -> None:
    rng = _rng(22)
    mech = Laplace(1.0, 0.0, 10.0)
    covered = 0
    for _ in range(200):
        values = 10.0 * rng.beta(2.0, 1.0, 1_000)
        est = estimate_mean(
            mech.randomise(values, rng), lower=0.0, upper=10.0, epsilon=1.0, clipped=False
        )
        covered += est.ci_low <= _snapped_mean(mech, values) <= est.ci_high
    # 200 intervals at nominal 0.95: binomial sd ~0.015; [0.9, 0.99] is > 3 sd each way.
    assert 0.9 <= covered / 200 <= 0.99


def test_clipped_mean_bias_is_visible_and_noted() -> None:
    rng = _rng(23)
    mech = Laplace(1.0, 0.0, 100.0)
    values = _skewed_values(100_000, rng)
    released = np.clip(mech.randomise(values, rng), 0.0, 100.0)
    est = estimate_mean(released, lower=0.0, upper=100.0, epsilon=1.0)
    truth = _snapped_mean(mech, values)
    # Clipping pulls the mean of data piled near the upper bound far down: > 4 SE off.
    assert truth - est.mean > 4 * est.std_error
    assert "Biased" in est.bias_note and "debias" in est.bias_note
    # What it does estimate: the mean of the expected clipped outputs (4 SE tolerance).
    expected = float(np.mean(mech.grid.snap(values) * mech.grid.step + mech.bias(values)))
    assert abs(est.mean - expected) < 4 * est.std_error


@pytest.mark.parametrize(
    ("mech", "constant"),
    [
        (Laplace(1.0, 0, 100, integer=True), 90),
        (Laplace(0.5, 0.0, 1.0), 0.125),
        (Gaussian(1.0, 1e-5, 0.0, 100.0, calibration="analytic"), 80.0),
    ],
    ids=["laplace-integer", "laplace-float", "gaussian"],
)
def test_debias_recovers_constant_input(mech: Laplace | Gaussian, constant: float) -> None:
    rng = _rng(24)
    n = 200_000
    values = np.full(n, constant, dtype=np.int64 if mech.integer else np.float64)
    released = np.clip(mech.randomise(values, rng), mech.grid.lower, mech.grid.upper)
    kwargs: dict[str, Any] = {"integer": mech.integer}
    if isinstance(mech, Gaussian):
        kwargs |= {"mechanism": "gaussian", "delta": mech.delta, "calibration": "analytic"}
    bounds = {"lower": mech.grid.lower, "upper": mech.grid.upper, "epsilon": mech.epsilon}
    plain = estimate_mean(released, **bounds, **kwargs)
    fixed = estimate_mean(released, **bounds, debias=True, **kwargs)
    # Tolerance: 4 (delta-method) standard errors; the plain mean misses by far more.
    assert abs(fixed.mean - constant) < 4 * fixed.std_error
    assert abs(plain.mean - constant) > 4 * plain.std_error
    assert fixed.ci_low < constant < fixed.ci_high
    assert fixed.std_error > plain.std_error  # inverting a flattened map widens the SE
    assert "method of moments" in fixed.bias_note


def test_debias_at_a_bound_returns_the_bound() -> None:
    released = np.zeros(100)
    est = estimate_mean(released, lower=0, upper=10, epsilon=1.0, integer=True, debias=True)
    assert est.mean == 0.0
    assert est.ci_low == 0.0


def test_mean_accepts_series() -> None:
    est = estimate_mean(
        pd.Series([1.0, 2.0, 3.0, 6.0]), lower=0, upper=10, epsilon=1.0, clipped=False
    )
    assert est.mean == 3.0 and est.n == 4


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"delta": 1e-6}, ParameterError, "delta"),
        ({"mechanism": "gaussian"}, ParameterError, "delta"),
        ({"mechanism": "gaussian", "delta": 1e-6, "epsilon": 2.0}, ParameterError, "epsilon"),
        ({"mechanism": "median"}, ParameterError, "mechanism"),
        ({"clipped": False, "debias": True}, ParameterError, "debias"),
        ({"confidence": 1.0}, ParameterError, "confidence"),
        ({"epsilon": 0.0}, ParameterError, "epsilon"),
        ({"lower": 5, "upper": 5}, ParameterError, "lower_bound"),
    ],
    ids=[
        "laplace-delta",
        "gaussian-no-delta",
        "classic-epsilon",
        "mechanism",
        "debias-unclipped",
        "confidence",
        "epsilon",
        "bounds",
    ],
)
def test_mean_parameter_errors(kwargs: dict[str, Any], error: type[Exception], match: str) -> None:
    arguments: dict[str, Any] = {"lower": 0.0, "upper": 10.0, "epsilon": 1.0} | kwargs
    with pytest.raises(error, match=match):
        estimate_mean([1.0, 2.0, 3.0], **arguments)


@pytest.mark.parametrize(
    ("values", "error", "match"),
    [
        ([1.0], ParameterError, "at least 2"),
        ([], ParameterError, "at least 2"),
        ([1.0, np.nan], ParameterError, "NaN"),
        (["a", "b"], DataTypeError, "numeric"),
        (np.ones((2, 2)), ParameterError, "1-D"),
        ([1.0, 11.0, -1.0], DomainError, "outside"),
    ],
    ids=["one", "empty", "nan", "strings", "2d", "outside-bounds"],
)
def test_mean_value_errors(values: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        estimate_mean(values, lower=0.0, upper=10.0, epsilon=1.0)


def test_unclipped_values_may_leave_the_bounds() -> None:
    est = estimate_mean([-3.0, 14.0, 5.0], lower=0.0, upper=10.0, epsilon=1.0, clipped=False)
    assert est.mean == pytest.approx(16.0 / 3.0)
