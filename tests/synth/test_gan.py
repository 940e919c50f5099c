"""The DP-WGAN: its account against dp-accounting and published values, clipping and
noise, conditional sampling, membership inference, bad input.

Fits are few and small (JAX compiles the training once per settings and shapes): a
conditional model on a toy table and an unconditional one on 4 000 Adult records, each
fitted once per module.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from typing import Any

import dp_accounting
import numpy as np
import pandas as pd
import pytest
from dp_accounting.rdp import RdpAccountant
from scipy.spatial import cKDTree
from scipy.stats import mannwhitneyu

import veil.synth.gan as gan_module
from veil.errors import ColumnError, DomainError, ParameterError
from veil.synth import (
    DPWGAN,
    CategoricalColumn,
    DPSGDAccounting,
    DPWGANModel,
    TableDomain,
    calibrate_noise,
    make_synthesizer,
)
from veil.synth.dpsgd import clip_rows, gaussian_noise, noisy_clipped_sum, per_example_gradients

from ._adult import ADULT_COLUMNS, adult_domain, split

DELTA = 1e-5
TOY_DOMAIN = {
    "group": ["a", "b"],
    "k": {"bounds": [0, 10], "integer": True, "missing": True},
    "x": {"bounds": [0.0, 1.0]},
    "y": {"bounds": [-1.0, 2.0], "missing": True},
    "c": ["u", "v", "w"],
}
TOY_Q = ["group", "k"]


def _toy(n: int = 1000, seed: int = 5) -> pd.DataFrame:
    """Q = (group, k); x, y and c depend on the group: x in [0, 0.3] for a, [0.7, 1] for
    b; y is x plus noise, missing for 10 % of the rows; k is missing for 10 %."""
    gen = np.random.default_rng(seed)
    group = gen.choice(["a", "b"], n, p=[0.4, 0.6])
    k = gen.integers(0, 11, n).astype(np.float64)
    k[gen.random(n) < 0.1] = np.nan
    x = np.where(group == "a", gen.uniform(0.0, 0.3, n), gen.uniform(0.7, 1.0, n))
    y = x + gen.normal(0.0, 0.1, n)
    y[gen.random(n) < 0.1] = np.nan
    c = np.where(gen.random(n) < 0.8, np.where(group == "a", "u", "v"), "w")
    return pd.DataFrame({"group": group, "k": k, "x": x, "y": y, "c": c})


@pytest.fixture(scope="module")
def toy() -> Iterator[tuple[DPWGANModel, pd.DataFrame, list[np.ndarray]]]:
    """Conditional on Q = (group, k), ε = 8, with every noise array the fit drew."""
    data = _toy()
    before = data.copy(deep=True)
    drawn: list[np.ndarray] = []

    def spy(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        out = gaussian_noise(rng, shape)
        drawn.append(out)
        return out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gan_module, "gaussian_noise", spy)
        model = DPWGAN(condition=TOY_Q, steps=200).fit(
            data, TOY_DOMAIN, 8.0, DELTA, rng=np.random.default_rng(11)
        )
    pd.testing.assert_frame_equal(data, before)  # the fit read the frame, changed nothing
    yield model, data, drawn


@pytest.fixture(scope="module")
def adult() -> Iterator[DPWGANModel]:
    """Unconditional, ε = 1, on the 4 000 member records."""
    members = split()[0]
    yield DPWGAN(steps=150).fit(members, adult_domain(), 1.0, 1e-6, rng=np.random.default_rng(12))


def _rdp_event(q: float, sigma: float, steps: int, hist_sigma: float | None) -> Any:
    """The account built here from dp-accounting's own events, not veil's."""
    sampled = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))
    events = [dp_accounting.SelfComposedDpEvent(sampled, steps)]
    if hist_sigma is not None:
        events.append(dp_accounting.ZCDpEvent(1.0 / (2.0 * hist_sigma**2)))
    return dp_accounting.ComposedDpEvent(events)


def test_recorded_cost_equals_the_accountant_for_the_steps_run(
    toy: tuple[DPWGANModel, pd.DataFrame, list[np.ndarray]], adult: DPWGANModel
) -> None:
    for model, target, delta in ((toy[0], 8.0, DELTA), (adult, 1.0, 1e-6)):
        acc = model.details["accounting"]
        assert (
            acc["steps_run"]
            == acc["steps"]
            == (model.details["settings"]["steps"] * model.details["settings"]["critic_steps"])
        )
        event = _rdp_event(
            acc["sampling_rate"], acc["noise_multiplier"], acc["steps_run"], acc["histogram_sigma"]
        )
        expected = RdpAccountant().compose(event).get_epsilon(delta)
        cost = model.cost
        assert (cost.notion, cost.unit, cost.delta) == ("dp-synthetic", "dataset", delta)
        assert cost.epsilon == pytest.approx(expected, rel=1e-12)
        assert cost.epsilon == acc["epsilon_spent"] == model.describe()["cost"]["epsilon"]
        # The calibrated noise spends the budget, and never more.
        assert cost.epsilon <= target
        assert cost.epsilon == pytest.approx(target, rel=1e-4)
    # Sampling rate q = batch_size / n; the toy's Q table is accounted too.
    assert toy[0].details["accounting"]["sampling_rate"] == 64 / 1000
    assert toy[0].details["accounting"]["histogram_sigma"] > 0
    assert adult.details["accounting"]["histogram_sigma"] is None


# TF Privacy's orders (compute_dp_sgd_privacy), under which its published figure holds.
_TFP_ORDERS = [1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 3.0, 3.5, 4.0, 4.5, *range(5, 64), 128, 256, 512]


@pytest.mark.parametrize(
    ("q", "sigma", "steps", "published"),
    [
        # Abadi et al., "Deep learning with differential privacy" (CCS 2016), section
        # 3.1: q = 0.01, σ = 4, δ = 1e-5, T = 10 000 gives ε ≈ 1.26 (moments accountant).
        (0.01, 4.0, 10_000, 1.26),
        # TF Privacy, compute_dp_sgd_privacy.py docstring: N = 60 000, batch 256,
        # noise multiplier 1.12, 60 epochs (14 063 steps), δ = 1e-5: (2.92, 1e-5)-DP.
        (256 / 60_000, 1.12, math.ceil(60 * 60_000 / 256), 2.92),
    ],
)
def test_accounting_reproduces_published_values(
    q: float, sigma: float, steps: int, published: float
) -> None:
    account = DPSGDAccounting(q, sigma, steps)
    # The published figures use the classic RDP conversion, eps = RDP(a) + log(1/δ)/(a - 1)
    # minimized over the orders: veil's event under it gives them to two decimals.
    rdp = RdpAccountant(_TFP_ORDERS).compose(account.event())
    classic = float(np.min(rdp.rdp + math.log(1 / DELTA) / (rdp.orders - 1)))
    assert round(classic, 2) == published
    # veil records dp-accounting's tighter conversion, and PLD is tighter still.
    recorded = account.epsilon(DELTA)
    assert 0.75 * published < recorded <= published
    pld = DPSGDAccounting(q, sigma, steps, accountant="pld").epsilon(DELTA)
    assert 0.7 * published < pld <= recorded


@pytest.mark.parametrize(
    ("epsilon", "q", "steps", "hist_sigma"),
    [(1.0, 0.013, 1500, None), (8.0, 0.064, 1000, 6.1)],
)
def test_calibration_is_the_smallest_noise_within_the_budget(
    epsilon: float, q: float, steps: int, hist_sigma: float | None
) -> None:
    account = calibrate_noise(epsilon, DELTA, q, steps, histogram_sigma=hist_sigma)
    spent = account.epsilon(DELTA)
    assert spent <= epsilon and spent == pytest.approx(epsilon, rel=1e-4)
    less = DPSGDAccounting(q, account.noise_multiplier * 0.999, steps, hist_sigma)
    assert less.epsilon(DELTA) > epsilon
    # Fewer steps than planned cost less.
    assert account.epsilon(DELTA, steps // 2) < spent


def test_pld_accounts_the_q_table_too() -> None:
    plain = DPSGDAccounting(0.064, 1.5, 1000, accountant="pld")
    with_table = DPSGDAccounting(0.064, 1.5, 1000, histogram_sigma=6.1, accountant="pld")
    rdp = DPSGDAccounting(0.064, 1.5, 1000, histogram_sigma=6.1)
    assert plain.epsilon(DELTA) < with_table.epsilon(DELTA) <= rdp.epsilon(DELTA)


def test_clipping_bounds_each_per_example_gradient() -> None:
    import jax.numpy as jnp

    # Toy loss 0.5 * s * |w - x|^2: the gradient of row x is s * (w - x).
    gen = np.random.default_rng(0)
    w = {"w": jnp.asarray(gen.normal(size=5), jnp.float32)}
    rows = gen.normal(size=(64, 6)).astype(np.float32)  # last entry: the scale s

    def loss(p: dict[str, Any], row: Any) -> Any:
        return 0.5 * jnp.exp(row[-1]) * jnp.sum((p["w"] - row[:-1]) ** 2)

    grads = np.asarray(per_example_gradients(loss, w, jnp.asarray(rows)))
    expected = np.exp(rows[:, -1:]) * (np.asarray(w["w"])[None, :] - rows[:, :-1])
    np.testing.assert_allclose(grads, expected, rtol=1e-5, atol=1e-6)
    norms = np.linalg.norm(grads, axis=1)
    assert norms.min() < 0.5 < 3.0 < norms.max()  # some rows inside the bound, some far out
    clipped = np.asarray(clip_rows(jnp.asarray(grads), 1.0))
    clipped_norms = np.linalg.norm(clipped, axis=1)
    assert np.all(clipped_norms <= 1.0 + 1e-5)
    inside = norms <= 1.0
    np.testing.assert_allclose(clipped[inside], grads[inside], rtol=1e-6)
    np.testing.assert_allclose(clipped_norms[~inside], 1.0, rtol=1e-5)
    cosine = np.sum(clipped * grads, axis=1) / (clipped_norms * norms)
    np.testing.assert_allclose(cosine, 1.0, rtol=1e-5)  # the direction is kept
    # The private sum adds only the sampled rows, each clipped.
    mask = (gen.random(64) < 0.5).astype(np.float32)
    total = noisy_clipped_sum(jnp.asarray(grads), mask, 1.0, np.zeros(5, np.float32), 2.0)
    np.testing.assert_allclose(total, (clipped * mask[:, None]).sum(axis=0), rtol=1e-5)


def test_added_noise_has_the_calibrated_sigma(
    toy: tuple[DPWGANModel, pd.DataFrame, list[np.ndarray]],
) -> None:
    model, _, drawn = toy
    sigma = model.details["accounting"]["noise_multiplier"]
    clip = model.details["settings"]["clip_norm"]
    # On zero gradients the private sum is the noise alone: sigma * C * xi.
    xi = gaussian_noise(np.random.default_rng(3), (200_000,))
    zero = np.zeros((8, xi.size), np.float32)
    out = np.asarray(noisy_clipped_sum(zero, np.ones(8, np.float32), clip, xi, sigma))
    # Statistical, seeded: the standard deviation is sigma * C within 5 standard errors
    # (1 / sqrt(2 N) relative, 0.16 % for N = 200 000); the mean is 0 within 5 s.e.
    assert np.std(out) / (sigma * clip) == pytest.approx(1.0, abs=5 / math.sqrt(2 * xi.size))
    assert abs(np.mean(out)) < 5 * sigma * clip / math.sqrt(xi.size)
    # The fit drew one fresh standard normal vector per DP-SGD step, from veil.rng.
    steps = model.details["accounting"]["steps_run"]
    noise = np.concatenate([d.reshape(-1, d.shape[-1]) for d in drawn])
    assert noise.shape[0] == steps
    assert np.var(noise) == pytest.approx(1.0, abs=5 * math.sqrt(2 / noise.size))
    assert np.abs(np.corrcoef(noise[:-1].ravel(), noise[1:].ravel())[0, 1]) < 0.01


def test_sampling_given_q_keeps_it_exact_and_s_within_the_domain(
    toy: tuple[DPWGANModel, pd.DataFrame, list[np.ndarray]],
) -> None:
    model, data, _ = toy
    given = data[["k", "group"]].iloc[::2].set_axis(pd.Index(range(500)) * 7 + 3)
    before = given.copy(deep=True)
    out = model.sample(given=given, rng=np.random.default_rng(4))
    pd.testing.assert_frame_equal(given, before)
    pd.testing.assert_frame_equal(out[["k", "group"]], given)  # missing k kept missing
    assert list(out.columns) == list(TOY_DOMAIN) and out.index.equals(given.index)
    assert out["x"].between(0.0, 1.0).all() and out["x"].dtype == np.float64
    assert out["y"].dropna().between(-1.0, 2.0).all()
    assert out["c"].isin(["u", "v", "w"]).all()
    # Statistical, seeded (ε = 8, 1 000 records): the model follows Q. The data's mean
    # x is 0.15 for a and 0.85 for b; asked: within 0.15 of each, and c mostly u for a
    # and v for b (0.8 in the data).
    means = out.groupby("group")["x"].mean()
    assert means["a"] == pytest.approx(0.15, abs=0.15)
    assert means["b"] == pytest.approx(0.85, abs=0.15)
    shares = pd.crosstab(out["group"], out["c"], normalize="index")
    assert shares.loc["a", "u"] > 0.5 and shares.loc["b", "v"] > 0.5
    # Declared missing values of y are generated too (10 % in the data).
    assert 0.0 < out["y"].isna().mean() < 0.3


def test_sampling_without_given_draws_q_from_the_noisy_table(
    toy: tuple[DPWGANModel, pd.DataFrame, list[np.ndarray]],
) -> None:
    model, data, _ = toy
    free = model.sample(rng=np.random.default_rng(5))
    # The default size is the noisy table's total (σ about 6 per cell, 24 cells).
    assert len(free) == pytest.approx(len(data), abs=100)
    assert free["group"].isin(["a", "b"]).all()
    k = free["k"].dropna()
    assert k.between(0, 10).all() and (k == np.round(k)).all()
    # Statistical, seeded: the shares of Q follow the data (b: 0.6, k missing: 0.1)
    # within 0.06; x still follows the drawn group.
    assert (free["group"] == "b").mean() == pytest.approx(0.6, abs=0.06)
    assert free["k"].isna().mean() == pytest.approx(0.1, abs=0.06)
    means = free.groupby("group")["x"].mean()
    assert means["b"] - means["a"] > 0.4


def _dcr_auc(
    domain: TableDomain, release: pd.DataFrame, members: pd.DataFrame, others: pd.DataFrame
) -> float:
    """AUC of 'closeness of my nearest released record' as a members-vs-others score."""

    def features(frame: pd.DataFrame) -> np.ndarray:
        codes = domain.encode(frame)
        parts = []
        for name, col in domain.columns.items():
            if isinstance(col, CategoricalColumn):
                parts.append(np.eye(col.size)[codes[name]])
            else:
                x = frame[name].to_numpy(dtype=np.float64)
                parts.append(((x - col.lower) / (col.upper - col.lower))[:, None])
        return np.concatenate(parts, axis=1)

    tree = cKDTree(features(release))
    near_members = tree.query(features(members))[0]
    near_others = tree.query(features(others))[0]
    stat = mannwhitneyu(-near_members, -near_others).statistic
    return float(stat / (len(members) * len(others)))


def test_membership_inference_shows_no_gross_leak(
    adult: DPWGANModel, members: pd.DataFrame, non_members: pd.DataFrame
) -> None:
    # The distance-to-closest-record attack works on the raw table (AUC about 0.65: a
    # member's closest record is itself) and not on the DP-WGAN's sample at ε = 1
    # (about 0.5; the AUC's standard error is about 0.007 here).
    domain = adult_domain()
    assert _dcr_auc(domain, members, members, non_members) > 0.6
    synthetic = adult.sample(40_000, rng=np.random.default_rng(19))
    assert list(synthetic.columns) == ADULT_COLUMNS
    assert _dcr_auc(domain, synthetic, members, non_members) < 0.55


def test_describe_states_the_account_and_the_leaks(adult: DPWGANModel) -> None:
    info = adult.describe()
    assert info["method"] == "DP-WGAN" and info["condition"] == []
    assert info["accounting"]["sampling"] == "Poisson"
    assert "RdpAccountant" in info["accounting"]["accountant"]
    assert any("number of records (4000)" in leak for leak in info["leaks"])
    assert TableDomain.from_dict(info["domain"]).sizes == adult.domain.sizes


def test_made_by_name_with_checked_settings() -> None:
    synth = make_synthesizer("dpwgan", steps=10, condition=["sex"])
    assert isinstance(synth, DPWGAN) and synth.steps == 10 and synth.condition == ("sex",)
    with pytest.raises(ParameterError, match=r"^synthesizer settings: \['epochs'\]"):
        make_synthesizer("dpwgan", epochs=3)


@pytest.mark.parametrize("module", ["optax", "dp_accounting", "jax"])
def test_missing_gan_extra_gives_the_pip_command(
    module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ImportError, match=r"pip install 'veil\[gan\]'"):
        DPWGAN().fit(_toy(100), TOY_DOMAIN, 1.0, DELTA)


@pytest.mark.parametrize("epsilon", [0.0, -1.0, float("nan")])
def test_epsilon_must_be_positive(epsilon: float) -> None:
    with pytest.raises(ParameterError, match=r"^epsilon:"):
        DPWGAN().fit(_toy(100), TOY_DOMAIN, epsilon, DELTA)


def test_a_domain_that_does_not_cover_the_data_is_refused() -> None:
    data = _toy(100)
    data.loc[3, "x"] = 1.5
    with pytest.raises(DomainError, match=r"^x: 1 values fall outside the public bounds"):
        DPWGAN().fit(data, TOY_DOMAIN, 1.0, DELTA)
    data = _toy(100)
    data.loc[0, "c"] = "z"
    with pytest.raises(DomainError, match=r"^c: 1 values are not among its 3"):
        DPWGAN().fit(data, TOY_DOMAIN, 1.0, DELTA)


def test_bad_condition_and_batch_are_refused() -> None:
    data = _toy(100)
    with pytest.raises(ColumnError, match=r"^condition: \['zip'\] are not columns"):
        DPWGAN(condition=["zip"]).fit(data, TOY_DOMAIN, 1.0, DELTA)
    with pytest.raises(ParameterError, match=r"^condition: .* covers every column"):
        DPWGAN(condition=list(TOY_DOMAIN)).fit(data, TOY_DOMAIN, 1.0, DELTA)
    with pytest.raises(ParameterError, match=r"^batch_size: 200 is above the 100 records"):
        DPWGAN(batch_size=200).fit(data, TOY_DOMAIN, 1.0, DELTA)


def test_given_must_be_the_condition_columns(
    toy: tuple[DPWGANModel, pd.DataFrame, list[np.ndarray]], adult: DPWGANModel
) -> None:
    model, data, _ = toy
    with pytest.raises(ParameterError, match=r"^given: columns \['group'\] must be exactly"):
        model.sample(given=data[["group"]])
    with pytest.raises(ParameterError, match=r"^given: columns \['sex'\] must be exactly"):
        adult.sample(given=split()[1][["sex"]])
    with pytest.raises(DomainError, match=r"^group: 1 values are not among"):
        model.sample(given=pd.DataFrame({"group": ["a", "zz"], "k": [1, 2]}))


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"steps": 0}, r"^steps: must be an integer >= 1"),
        ({"clip_norm": 0.0}, r"^clip_norm: must be a real number > 0"),
        ({"weight_clip": float("inf")}, r"^weight_clip:"),
        ({"condition_share": 1.0}, r"^condition_share: must be a real number in \(0, 1\)"),
        ({"average": 1.0}, r"^average: must be a real number in \[0, 1\)"),
        ({"hidden": ()}, r"^hidden:"),
        ({"accountant": "moments"}, r"^accountant: must be one of \['rdp', 'pld'\]"),
        ({"condition": "group"}, r"^condition: must be a list of column names"),
    ],
)
def test_bad_settings_are_refused(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ParameterError, match=message):
        DPWGAN(**settings)
