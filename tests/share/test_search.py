"""The OptimShare search: fits per pair, U_l, linkage, E_l and E^T, selection, costs, errors.

Most tests use the independent-marginals baseline (fast, no JAX); the tests that need a
model of the relations between Q and S use one MST search, fitted once per module.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from veil.errors import ColumnError, DomainError, ParameterError
from veil.share import (
    NoCandidateError,
    ShareResult,
    UtilityReference,
    budget_pairs,
    candidate_correct,
    candidates_figure,
    comparison_table,
    compose_fits,
    effectiveness,
    linkable_records,
    normalized_leak,
    optimshare,
    optimshare_search,
    random_stopping_epsilon,
    record_vectors,
    similarity_groups,
    utility_loss,
)
from veil.synth import IndependentMarginals, TableDomain, epsilon_from_rho, rho_from_epsilon

DOMAIN: dict[str, Any] = {
    "sex": ["F", "M"],
    "region": ["a", "b", "c"],
    "age": {"bounds": [18, 90], "integer": True, "bins": 8},
    "income": {"bounds": [0, 100], "bins": 10},
    "y": ["hi", "lo"],
}
Q = ["sex", "region"]
S = ["age", "income", "y"]
PAIRS = [(1.0, 1e-6), (4.0, 1e-6)]


def _table(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """Q = sex, region; S = age, income (depending on age and sex) and the label y."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "sex": rng.choice(["F", "M"], n),
            "region": rng.choice(["a", "b", "c"], n),
            "age": rng.integers(18, 90, n),
        }
    )
    df["income"] = (df["age"] * 0.6 + np.where(df["sex"] == "M", 10, 0) + rng.normal(0, 5, n)).clip(
        0, 100
    )
    df["y"] = np.where(df["income"] + rng.normal(0, 5, n) > 45, "hi", "lo")
    return df


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    # Seeded noise warns (ReproducibleNoiseWarning) by design; the tests seed on purpose.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


class CountingMarginals(IndependentMarginals):
    """The baseline, counting its fits."""

    def __init__(self) -> None:
        self.fits = 0

    def fit(self, *args: Any, **kwargs: Any) -> Any:
        self.fits += 1
        return super().fit(*args, **kwargs)


def _search(**options: Any) -> ShareResult:
    settings: dict[str, Any] = {
        "q": Q,
        "s": S,
        "label": "y",
        "domain": DOMAIN,
        "pairs": PAIRS,
        "synthesizer": "independent",
        "instances": 2,
        "rng": 7,
    }
    settings.update(options)
    data = settings.pop("data", None)
    return optimshare_search(_table() if data is None else data, **settings)


@pytest.fixture(scope="module")
def paper_result() -> ShareResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _search(instances=3)


# ----------------------------------------------------------------------------- fits


def test_each_pair_is_fitted_once_and_its_instances_drawn_from_that_model() -> None:
    synth = CountingMarginals()
    pairs = [(0.5, 1e-6), (1.0, 1e-6), (2.0, 1e-6)]
    result = _search(synthesizer=synth, pairs=pairs, instances=4)
    assert synth.fits == len(pairs)
    table = result.table
    assert len(table) == len(pairs) * 4
    assert list(table["pair"]) == [p for p in range(3) for _ in range(4)]
    # every instance of a pair reports its one fit's time; instances differ (fresh draws)
    assert (table.groupby("pair")["fit_seconds"].nunique() == 1).all()
    assert table.groupby("pair")["u_p"].nunique().max() > 1
    assert "one fit per (epsilon, delta) pair" in result.readings["fits"]


def test_the_released_table_keeps_q_exactly_row_by_row_and_the_input_is_untouched() -> None:
    data = _table()
    before = data.copy()
    result = _search(data=data)
    pd.testing.assert_frame_equal(data, before)
    assert list(result.data.columns) == [*Q, *S]
    assert result.data.index.equals(data.index)
    pd.testing.assert_frame_equal(result.data[Q], data[Q])
    assert not result.data[S].equals(data[S])


# ----------------------------------------------------------------------------- U_l


def test_utility_loss_is_the_clipped_normalized_drop() -> None:
    assert utility_loss(0.8, 0.6) == pytest.approx(0.25)
    assert utility_loss(0.8, 0.9) == 0.0  # a candidate better than the original loses nothing
    assert utility_loss(0.5, 0.0) == 1.0
    with pytest.raises(ParameterError, match="u_o"):
        utility_loss(0.0, 0.5)


def test_the_original_as_its_own_candidate_has_no_utility_loss() -> None:
    data = _table()
    domain = TableDomain.from_dict(DOMAIN)
    features = record_vectors(data, domain, ["sex", "region", "age", "income"])
    labels = domain.encode(data, ["y"])["y"]
    reference = UtilityReference.build(features, labels, 5, np.random.default_rng(3))
    assert 0.5 < reference.accuracy <= 1.0
    assert candidate_correct(reference, features, labels) == reference.correct
    # folds are balanced and read no value: other labels, the same generator, the same folds
    counts = np.bincount(reference.folds, minlength=5)
    assert counts.max() - counts.min() <= 1
    other = UtilityReference.build(features[::-1], labels[::-1], 5, np.random.default_rng(3))
    np.testing.assert_array_equal(other.folds, reference.folds)


def test_the_table_applies_the_u_l_formula(paper_result: ShareResult) -> None:
    table = paper_result.table
    expected = np.clip((table["u_o"] - table["u_p"]) / table["u_o"], 0, 1)
    np.testing.assert_allclose(table["u_l"], expected)
    np.testing.assert_allclose(table["utility"], 1 - table["u_l"])
    assert table["u_o"].nunique() == 1  # one cross-validation of the original


# ----------------------------------------------------------------------------- linkage


def test_linkage_on_a_hand_built_table() -> None:
    # group 0: records 0, 1, 2; group 1: record 3 alone; group 2: records 4, 5 (a tie)
    original = np.array(
        [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, 0, 1], [1, 0, 1]], dtype=float
    )
    perturbed = np.array(
        [
            [0.9, 0.1, 0.0],  # record 0: its own row is the closest -> linkable
            [0.0, 0.2, 1.0],  # record 1: record 2's row [0, 1, .1] is closer -> not
            [0.0, 1.0, 0.1],  # record 2: own row [0, 1, .1] vs [0, .2, 1]: the other -> not
            [0.0, 0.0, 1.0],  # record 3: alone in its group -> linkable whatever it is
            [1.0, 0.0, 1.0],  # records 4 and 5: identical rows, a tie -> both linkable
            [1.0, 0.0, 1.0],
        ]
    )
    groups = np.array([0, 0, 0, 1, 2, 2])
    linked = linkable_records(original, perturbed, groups)
    assert linked.tolist() == [True, False, False, True, True, True]


def test_linkage_in_blocks_matches_a_brute_force_count() -> None:
    rng = np.random.default_rng(5)
    n = 700
    groups = rng.choice(40, n, p=np.r_[0.5, np.full(39, 0.5 / 39)])  # one large group
    original = rng.random((n, 4))
    perturbed = original + rng.normal(0, 0.3, (n, 4))
    expected = np.zeros(n, dtype=bool)
    unit_o = original / np.linalg.norm(original, axis=1, keepdims=True)
    unit_p = perturbed / np.linalg.norm(perturbed, axis=1, keepdims=True)
    for i in range(n):
        members = np.flatnonzero(groups == groups[i])
        sims = unit_p[members] @ unit_o[i]
        expected[i] = sims.max() <= unit_p[i] @ unit_o[i] + 1e-9
    for block in (1 << 22, 500, 7):  # stacked groups, row blocks of the large group, tiny
        np.testing.assert_array_equal(
            linkable_records(original, perturbed, groups, block_cells=block), expected
        )


def test_similarity_groups_are_records_with_identical_q() -> None:
    frame = pd.DataFrame({"a": [1, 1, 2, 1, None, None], "b": ["x", "x", "x", "y", "z", "z"]})
    ids = similarity_groups(frame, ["a", "b"])
    assert ids[0] == ids[1] and len(set(ids[[0, 2, 3, 4]])) == 4 and ids[4] == ids[5]
    assert (similarity_groups(frame, []) == 0).all()


def test_p_n_is_epsilon_times_l_over_t_epsilon_capped_at_one(paper_result: ShareResult) -> None:
    assert normalized_leak(2.0, 0.5, 8.0) == 0.125
    assert normalized_leak(8.0, 1.0, 4.0) == 1.0
    table = paper_result.table
    np.testing.assert_allclose(
        table["p_n"], np.minimum(1.0, table["epsilon"] * table["linkable"] / 8.0)
    )


# ----------------------------------------------------------------------------- E_l, E^T


def test_e_l_is_the_weighted_sum_and_e_threshold_filters(paper_result: ShareResult) -> None:
    assert effectiveness(0.4, 0.2, 0.5) == pytest.approx((0.3, 0.7))
    assert effectiveness(0.4, 0.2, 1.0) == pytest.approx((0.4, 0.6))
    table = paper_result.table
    np.testing.assert_allclose(table["e_l"], 0.5 * table["u_l"] + 0.5 * table["p_n"])
    np.testing.assert_allclose(table["e"], 1 - table["e_l"])
    # a threshold between the scores: only the candidates above it qualify, and the
    # best of them is released
    cut = float(np.median(table["e"]))
    result = _search(instances=3, e_threshold=cut)
    assert (result.table["qualifies"] == (result.table["e"] >= cut)).all()
    chosen = result.table[result.table["chosen"]]
    assert len(chosen) == 1
    assert chosen["e"].iloc[0] == result.table.loc[result.table["qualifies"], "e"].max()
    assert result.chosen["e"] == chosen["e"].iloc[0]


def test_no_candidate_passing_releases_nothing_and_names_e_threshold() -> None:
    with pytest.raises(
        NoCandidateError, match=r"E\^T = 0\.999.*best effectiveness found was e"
    ) as err:
        _search(e_threshold=0.999)
    assert isinstance(err.value.table, pd.DataFrame) and len(err.value.table) == 4
    assert not err.value.table["qualifies"].any()


# ----------------------------------------------------------------------------- costs


def test_the_paper_selection_costs_the_composition_of_every_fit(paper_result: ShareResult) -> None:
    cost = paper_result.costs["paper"]
    assert paper_result.cost == cost
    assert (cost.notion, cost.unit) == ("dp-synthetic", "dataset")
    rhos = [rho_from_epsilon(e, d) for e, d in PAIRS]
    assert cost.epsilon == pytest.approx(epsilon_from_rho(sum(rhos), 2e-6), rel=1e-9)
    assert cost.epsilon < sum(e for e, _ in PAIRS)  # tighter than adding the epsilons
    assert cost.delta == pytest.approx(2e-6)
    # the argmax reads the raw records: its leak and the guarantee say no bound covers it,
    # and no longer that the composition of the fits does
    leak = next(x for x in paper_result.leaks if x.startswith("selection='paper'"))
    assert "raw records" in leak and "no stated bound covers that choice" in leak
    assert "covered only by" not in leak
    assert "no stated bound covers the released table" in paper_result.guarantee
    assert "no stated bound covers the choice" in paper_result.readings["selection"]
    assert "Theorem 3.2" in paper_result.guarantee and "not claimed" in paper_result.guarantee
    assert "NOT covered" in paper_result.guarantee


def test_compose_fits_keeps_basic_composition_without_rho() -> None:
    from veil.mechanisms import PrivacyCost

    costs = [
        PrivacyCost(1.0, 1e-6, "dp-synthetic", "dataset", "s"),
        PrivacyCost(2.0, 1e-6, "dp-synthetic", "dataset", "s"),
    ]
    cost, details = compose_fits(costs, [{}, {}])
    assert (cost.epsilon, cost.delta) == (3.0, 2e-6)
    assert "basic" in details["rule"]


def test_compose_fits_takes_the_zcdp_route_at_the_summed_delta() -> None:
    from veil.mechanisms import PrivacyCost

    # twelve fits at a delta so small that summing it in another order changes its last
    # bit (letter: 5e-9): the zCDP bound must still be the one kept
    pairs = [(8 * i / 12, 5e-9) for i in range(1, 13)]
    costs = [PrivacyCost(e, d, "dp-synthetic", "dataset", "s") for e, d in pairs]
    rhos = [rho_from_epsilon(e, d) for e, d in pairs]
    cost, details = compose_fits(costs, [{"accounting": {"rho_spent": r}} for r in rhos])
    total_delta = sum(c.delta for c in costs[1:]) + costs[0].delta
    assert "zCDP" in cost.mechanism and cost.delta == pytest.approx(12 * 5e-9)
    assert cost.epsilon == pytest.approx(epsilon_from_rho(sum(rhos), total_delta))
    assert cost.epsilon < details["basic"]["epsilon"] / 2


def test_random_stopping_matches_the_theorem_evaluated_by_brute_force() -> None:
    rho, gamma, delta = 0.4, 1 / 12, 1e-6
    lam = np.linspace(1.001, 80, 8000)[:, None]
    lam_hat = np.linspace(1.0, 80, 8000)[None, :]
    inner = (2 * (1 - 1 / lam_hat) * rho * lam_hat + 2 * math.log(1 / gamma) / lam_hat).min()
    rdp = rho * lam[:, 0] + inner + math.log(1 / gamma) / (lam[:, 0] - 1)
    brute = (
        rdp + np.log1p(-1 / lam[:, 0]) - (math.log(delta) + np.log(lam[:, 0])) / (lam[:, 0] - 1)
    ).min()
    # both read the bound at a grid of orders: they agree to the grids' resolution
    assert random_stopping_epsilon(rho, gamma, delta) == pytest.approx(brute, rel=1e-5)
    # more runs on average cost more; one run costs at most the zCDP conversion
    assert random_stopping_epsilon(rho, 1 / 24, delta) > random_stopping_epsilon(rho, gamma, delta)
    assert random_stopping_epsilon(rho, 1.0, delta) <= epsilon_from_rho(rho, delta)


def test_private_selection_states_its_cost_and_scores_with_noise() -> None:
    result = _search(selection="private", stop_probability=0.5, score_noise=5.0)
    st = result.settings
    rho_run = 4 * max(rho_from_epsilon(e, d) for e, d in PAIRS) + 2 / 5.0**2
    assert result.cost == result.costs["private"]
    assert result.cost.epsilon == pytest.approx(random_stopping_epsilon(rho_run, 0.5, 1e-6))
    assert "one record's S changed" in result.cost.mechanism
    assert "paper" not in result.costs
    assert not any("selection='paper'" in leak for leak in result.leaks)
    assert "releasing this table costs" in result.guarantee
    table = result.table
    assert st["reference_accuracy"] == 1.0
    assert table["noisy"].all() and (table["u_o"] == 1.0).all()
    runs = result.details["runs"]
    assert runs >= 1 and len(table) == runs * 2
    assert result.details["private_selection"]["rho_run"] == pytest.approx(rho_run)
    # the paper's run also states what the private rule would cost with these settings
    paper = _search()
    assert paper.costs["private"].epsilon == pytest.approx(
        random_stopping_epsilon(4 * rho_from_epsilon(4.0, 1e-6) + 2 / 100, 0.5, 1e-6)
    )


def test_private_selection_refuses_the_paper_merge() -> None:
    with pytest.raises(ParameterError, match="selection: 'private' needs merge='conditional'"):
        _search(selection="private", merge="paper")


# ----------------------------------------------------------------------------- leaks


def test_the_paper_merge_by_label_lists_its_leaks() -> None:
    result = _search(merge="paper", groups="label")
    assert any("raw class label 'y'" in leak for leak in result.leaks)
    assert any("released exactly" in leak for leak in result.leaks)
    data = _table()
    assert (result.data["y"] == data["y"]).all()  # the label is the group: kept exact
    pd.testing.assert_frame_equal(result.data[Q], data[Q])


def test_the_paper_merge_by_kmeans_lists_its_clusters() -> None:
    result = _search(merge="paper", groups="kmeans", clusters=[2, 3])
    leak = next(x for x in result.leaks if "k-means" in x)
    assert "raw Q ∪ S" in leak and "silhouette" in leak
    assert "_optimshare_cluster" not in result.data.columns


def test_rescaling_to_the_raw_bounds_is_a_listed_leak() -> None:
    data = _table()
    result = _search(rescale="data")
    assert any("rescale='data': income: raw bounds" in leak for leak in result.leaks)
    for c in ("age", "income"):
        assert result.data[c].min() == pytest.approx(data[c].min())
        assert result.data[c].max() == pytest.approx(data[c].max())
    public = _search()
    assert not any("rescale" in leak for leak in public.leaks)
    assert public.data["income"].between(0, 100).all()


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"q": ["sex"], "s": ["sex", "age", "y"]}, ParameterError, "q and s must not overlap"),
        ({"q": []}, ParameterError, "q: needs at least one column"),
        ({"s": []}, ParameterError, "s: needs at least one column"),
        ({"label": "nope"}, ColumnError, "label: 'nope' is not a column"),
        ({"s": ["age", "income"]}, ColumnError, "label: 'y' must be one of the released"),
        ({"pairs": [(0.0, 1e-6)]}, ParameterError, r"pairs\[0\]\.epsilon"),
        ({"pairs": [(1.0, -1.0)]}, ParameterError, r"pairs\[0\]\.delta"),
        ({"domain": {k: v for k, v in DOMAIN.items() if k != "age"}}, ColumnError, "domain"),
        (
            {"domain": {**DOMAIN, "income": {"bounds": [0, 50]}}},
            DomainError,
            "income: .* outside the public bounds",
        ),
        ({"instances": 0}, ParameterError, "instances: must be an integer >= 1"),
        ({"c": 1.5}, ParameterError, r"c: must be in \[0, 1\]"),
        ({"merge": "zip"}, ParameterError, "merge: must be one of"),
    ],
)
def test_bad_input_is_refused_naming_the_parameter(
    options: dict[str, Any], error: type[Exception], match: str
) -> None:
    data = _table()
    before = data.copy()
    with pytest.raises(error, match=match):
        _search(data=data, **options)
    pd.testing.assert_frame_equal(data, before)


def test_a_constant_label_is_refused() -> None:
    data = _table().assign(y="hi")
    with pytest.raises(ParameterError, match="label: 'y' takes a single value"):
        _search(data=data)


# ----------------------------------------------------------------------------- progress


def test_progress_counts_every_step_and_cancel_stops_the_search() -> None:
    seen: list[tuple[str, int, int]] = []
    _search(progress=lambda label, done, total: seen.append((label, done, total)))
    assert [d for _, d, _ in seen] == list(range(len(seen)))
    assert all(t == 2 * (1 + 2) for _, _, t in seen)
    assert seen[0][0].startswith("fit pair 1/2") and seen[-1][1] == seen[-1][2]

    class Stop(Exception):
        pass

    class Token:
        def __init__(self) -> None:
            self.calls = 0

        def check(self, where: str) -> None:
            self.calls += 1
            if self.calls == 3:
                raise Stop(where)

    synth = CountingMarginals()
    with pytest.raises(Stop, match="optimshare search: pair 1/2, instance 2/2"):
        _search(synthesizer=synth, cancel=Token())
    assert synth.fits == 1


def test_the_same_seed_gives_the_same_search() -> None:
    a, b = _search(), _search()
    cols = ["u_p", "linkable", "e"]
    pd.testing.assert_frame_equal(a.table[cols], b.table[cols])
    pd.testing.assert_frame_equal(a.data, b.data)


def test_to_dict_is_plain_data_for_a_manifest(paper_result: ShareResult) -> None:
    import json

    summary = paper_result.to_dict()
    text = json.dumps(summary)
    assert summary["cost"]["notion"] == "dp-synthetic"
    assert len(summary["candidates"]) == len(paper_result.table)
    assert "readings" in summary and "fits" in summary["readings"]
    assert "Theorem 3.2" in text


# ----------------------------------------------------------------------------- pipeline


def test_the_pipeline_refines_q_derives_the_pairs_and_lists_the_readings() -> None:
    rng = np.random.default_rng(1)
    data = _table(600)
    data["chol"] = rng.integers(120, 320, len(data))  # fine: leaves Q once S is known
    domain = {**DOMAIN, "chol": {"bounds": [100, 340], "integer": True, "bins": 12}}
    result, requirements = optimshare(
        data,
        q=["sex", "region", "chol"],
        s=S,
        label="y",
        domain=domain,
        refine=True,
        alpha=4.5,  # sex and region stay above alpha 3.2 and 3.6 on this table, chol 5.1
        synthesizer="independent",
        instances=1,
        tn=3,
        rng=3,
    )
    assert requirements.refine and list(requirements.moved) == ["chol"] and "chol" in result.s
    assert set(result.q) == set(requirements.refined_q)
    expected = budget_pairs(requirements.pif_thresh, len(data), tn=3).pairs
    assert [tuple(p) for p in result.settings["pairs"]] == [tuple(p) for p in expected]
    assert any("PIF_thresh" in leak for leak in result.leaks)
    assert any("Q refinement" in leak for leak in result.leaks)
    assert "requirements" in result.readings


def test_the_pipeline_refuses_when_refinement_empties_q() -> None:
    data = _table(300)
    data["chol"] = np.random.default_rng(2).integers(120, 320, len(data))
    domain = {**DOMAIN, "chol": {"bounds": [100, 340], "integer": True}}
    with pytest.raises(ParameterError, match="moved every Q attribute") as err:
        optimshare(
            data, q=["chol"], s=S, label="y", domain=domain, refine=True,
            synthesizer="independent",
        )  # fmt: skip
    # one Q attribute: its cohort is the whole table, QPIF = 0, the rule degenerates
    assert "'chol': QPIF 0.0000" in str(err.value)
    assert "degenerates and moves it whatever QSPIF is" in str(err.value)
    assert "refine=False" in str(err.value)


def test_the_pipeline_keeps_q_as_given_by_default() -> None:
    data = _table(600)
    data["chol"] = np.random.default_rng(2).integers(120, 320, len(data))
    domain = {**DOMAIN, "chol": {"bounds": [100, 340], "integer": True, "bins": 12}}
    result, requirements = optimshare(
        data, q=["sex", "region"], s=[*S, "chol"], label="y", domain=domain,
        synthesizer="independent", instances=1, tn=3, rng=3,
    )  # fmt: skip
    assert not requirements.refine and requirements.moved == ()
    assert result.q == ("sex", "region")
    pd.testing.assert_frame_equal(result.data[["sex", "region"]], data[["sex", "region"]])
    # PIF_thresh is the largest QSPIF over the Q as given, the PIF read in public bins
    assert requirements.pif_thresh == pytest.approx(requirements.table["qspif"].max())
    assert [b.column for b in requirements.qs_assessment.bins if b.column == "chol"]
    assert not any("Q refinement" in leak for leak in result.leaks)
    assert "refinement off" in result.readings["requirements"]


# ----------------------------------------------------------------------------- figures


def test_fig7_and_table2(paper_result: ShareResult, tmp_path: Path) -> None:
    path = tmp_path / "fig7.png"
    figure = candidates_figure(paper_result, path=path)
    assert path.stat().st_size > 1000 and len(figure.axes) == 2
    data = _table()
    full = paper_result.model.sample(len(data), rng=2)
    table = comparison_table(
        data,
        {"Fully synthetic": full, "OptimShare": paper_result.data},
        q=["age"],
        label="y",
        domain=DOMAIN,
        rng=4,
    )
    assert list(table.columns) == ["Original", "Fully synthetic", "OptimShare"]
    assert list(table.index) == ["age_mean", "age_std", "NB_RMSE", "NB_precision", "NB_recall"]
    assert table.at["age_mean", "Original"] == pytest.approx(data["age"].mean())
    # the weighted recall is the accuracy; on 0/1 codes RMSE is sqrt(error rate)
    recall = table.loc["NB_recall"]
    np.testing.assert_allclose(table.loc["NB_RMSE"], np.sqrt(1 - recall))


# ----------------------------------------------------------------------------- MST


@pytest.fixture(scope="module")
def mst_result() -> ShareResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _search(
            synthesizer="mst", synthesizer_settings={"iters": 200}, pairs=[(2.0, 1e-6), (8.0, 1e-6)]
        )


def test_mst_draws_s_given_q_and_composes_its_zcdp_costs(mst_result: ShareResult) -> None:
    data = _table()
    pd.testing.assert_frame_equal(mst_result.data[Q], data[Q])
    # income depends on sex in the data: the conditional draws keep that relation,
    # which independent marginals cannot
    gap = mst_result.data.groupby("sex")["income"].mean()
    assert gap["M"] - gap["F"] > 4.0  # the data's gap is about 10 (tolerance: noise at eps 8)
    rhos = [m["accounting"]["rho_spent"] for m in [mst_result.model.describe()]]
    assert rhos[0] <= rho_from_epsilon(*mst_result.settings["pairs"][mst_result.chosen["pair"]])
    assert mst_result.cost.epsilon < 10.0  # zCDP composition of eps 2 and 8, below the sum
    baseline = _search()
    assert mst_result.table["u_l"].min() < baseline.table["u_l"].min()


def test_default_settings_fit_mst_without_compression() -> None:
    from veil.share import DEFAULT_SYNTHESIZER_SETTINGS

    assert DEFAULT_SYNTHESIZER_SETTINGS["mst"] == {"compress": False}
    with pytest.raises(ParameterError, match="synthesizer_settings"):
        _search(synthesizer=IndependentMarginals(), synthesizer_settings={"x": 1})


def test_synthesizer_names_come_from_the_registry() -> None:
    with pytest.raises(ParameterError, match="synthesizer: 'nope' is unknown"):
        _search(synthesizer="nope")


def test_a_dpwgan_without_condition_is_fitted_on_q_and_keeps_it_exact() -> None:
    # The DP-WGAN's networks read the given columns, so the search conditions it on
    # what the merge gives (Q here); the caller need not repeat Q in its settings.
    data = _table(200)
    result = _search(
        data=data,
        pairs=[(2.0, 1e-6)],
        instances=1,
        synthesizer="dpwgan",
        synthesizer_settings={"steps": 3, "critic_steps": 1, "hidden": [8], "latent_dim": 4},
    )
    assert result.model is not None
    assert list(result.model.describe()["settings"]["condition"]) == Q
    pd.testing.assert_frame_equal(result.data[Q], data[Q])
