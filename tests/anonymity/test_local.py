"""Tests of local recoding (ARX's iterative local transformation)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veil.anonymity.checks import (
    entropy_l_diversity,
    k_anonymity,
    l_diversity,
    recursive_c_l_diversity,
)
from veil.anonymity.hierarchy import Hierarchy
from veil.anonymity.local import anonymize_local
from veil.anonymity.models import (
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    PrivacyModel,
    RecursiveCLDiversity,
    TCloseness,
)
from veil.anonymity.search import NoSolutionError, anonymize
from veil.errors import ColumnError, DataTypeError, ParameterError

from .._data import DATA

ADULT = DATA / "arx_adult"
ADULT_QIS = [
    "sex", "age", "race", "marital-status", "education", "native-country", "workclass",
    "salary-class",
]  # fmt: skip
ZIPS = ["1301", "1302", "1311", "1312"]


def _zip_hierarchy() -> dict[str, Hierarchy]:
    return {"zip": Hierarchy.masking(ZIPS, steps=2)}


def _labels_match_levels(
    df: pd.DataFrame, result_data: pd.DataFrame, levels: pd.DataFrame, h: dict[str, Hierarchy]
) -> None:
    """Every released label is the hierarchy's label of the record at its own levels."""
    released = levels.dropna()
    for q, hierarchy in h.items():
        for level in released[q].unique():
            rows = released.index[released[q] == level]
            expected = hierarchy.generalize(df.loc[rows, q], int(level)).astype(str)
            assert (result_data.loc[rows, q].astype(str) == expected).all()


# -------------------------------------------------------------------- hand-computed


def test_suppressed_records_get_their_own_levels_by_hand() -> None:
    df = pd.DataFrame(
        {"zip": ["1301"] * 3 + ["1302"] * 3 + ["1311", "1312"], "x": range(8)},
        index=list("abcdefgh"),
    )
    result = anonymize_local(df, _zip_hierarchy(), KAnonymity(2), max_suppression=0.25)
    # Round 0 keeps the ZIPs (loss 2/8 from suppressing 1311 and 1312; level 1 costs
    # 1/3 per record). Round 1 releases those two as 131* (2 of 4 leaves: 1/3 each).
    assert result.data["zip"].tolist() == ["1301"] * 3 + ["1302"] * 3 + ["131*", "131*"]
    assert result.subset.tolist() == [0] * 6 + [1, 1]
    assert result.levels["zip"].tolist() == [0] * 6 + [1, 1]
    assert result.suppressed == 0 and result.repaired == 0
    assert result.metrics["loss"] == pytest.approx((2 / 3) / 8)
    assert result.metrics["loss_mean"] == pytest.approx((2 / 3) / 8)
    assert result.metrics["precision"] == pytest.approx((2 / 3) / 8)  # height 3
    assert result.metrics["discernibility"] == 3**2 + 3**2 + 2**2
    assert result.metrics["aecs"] == pytest.approx(8 / 3)
    # Non-uniform entropy: each 131* record keeps 1 of the 2 input records under 131*.
    assert result.metrics["entropy"] == pytest.approx(2.0)
    rounds = result.rounds
    assert rounds["round"].tolist() == [0, 1]
    assert rounds["records"].tolist() == [8, 2]
    assert rounds["zip"].tolist() == [0, 1]
    assert rounds["released"].tolist() == [6, 2]
    assert rounds["suppressed"].tolist() == [2, 0]
    assert rounds["loss"].tolist() == pytest.approx([2 / 8, (2 / 3) / 8])
    assert result.data.index.tolist() == list("abcdefgh")
    assert result.data["x"].tolist() == list(range(8))


def test_merged_t_closeness_class_failing_the_whole_table_is_suppressed() -> None:
    # Table distribution of s: x 4/10, y 6/10. Round 0 (levels 0): classes a and c hold
    # {x: 2, y: 2} (EMD 0.1 <= 0.2), b holds {y: 2} (EMD 0.4) and is suppressed.
    # Round 1 sees only the two b records: against their own distribution (all y) the
    # class is at EMD 0 and released, but against the table's it is not: the final
    # check suppresses it again.
    df = pd.DataFrame(
        {"g": list("aaaaccccbb"), "s": list("xyxyxyxyyy")},
    )
    h = {
        "g": Hierarchy.from_frame(
            pd.DataFrame({0: list("abcd"), 1: ["ab", "ab", "cd", "cd"], 2: ["*"] * 4})
        )
    }
    result = anonymize_local(df, h, TCloseness("s", 0.2), max_suppression=0.2)
    assert result.rounds["released"].tolist() == [8, 2]
    assert result.rounds["repaired"].tolist() == [0, 2]
    assert result.repaired == 2 and result.suppressed == 2
    assert result.subset.isna().tolist() == [False] * 8 + [True, True]
    assert result.levels["g"].isna().tolist() == [False] * 8 + [True, True]
    assert str(result.levels["g"].dtype) == "Int64"
    assert result.data["g"].tolist() == list("aaaacccc")
    global_only = anonymize(df, h, TCloseness("s", 0.2), max_suppression=0.2)
    assert result.metrics["loss"] == pytest.approx(global_only.metrics["loss"])


def test_a_round_that_would_make_the_final_check_suppress_more_is_not_taken() -> None:
    # Found by the property test below: with reference="release", the records a later
    # round releases change the distribution every class is compared with, and here
    # round 0's classes then fail 0.15-closeness in the final check (15 suppressed
    # instead of the global round's 6, at a higher loss). The round is not taken.
    rng = np.random.default_rng(5)
    n = 20
    df = pd.DataFrame(
        {
            "zip": rng.choice(ZIPS, n, p=[0.5, 0.3, 0.15, 0.05]),
            "age": rng.integers(20, 40, n),
            "s": rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1]),
        },
        index=rng.permutation(n) % (n // 2),
    )
    h = {**_zip_hierarchy(), "age": Hierarchy.intervals(range(20, 40), widths=(5, 10))}
    models: list[PrivacyModel] = [KAnonymity(3), TCloseness("s", 0.15)]
    found = anonymize(df, h, models, max_suppression=0.3)
    for suppression in ("remove", "mark"):
        result = anonymize_local(df, h, models, max_suppression=0.3, suppression=suppression)
        assert result.suppressed == found.suppressed == 6
        assert result.metrics["loss"] == pytest.approx(found.metrics["loss"])
        assert result.repaired == 0
        assert result.rounds["released"].tolist()[1:] == [0]


def test_no_rounds_is_the_global_search() -> None:
    rng = np.random.default_rng(4)
    df = pd.DataFrame(
        {
            "zip": rng.choice(ZIPS, 40),
            "age": rng.integers(20, 40, 40),
            "disease": rng.choice(["flu", "cold", "hiv"], 40),
        }
    )
    h = {**_zip_hierarchy(), "age": Hierarchy.intervals(range(20, 40), widths=(5, 10))}
    models: list[PrivacyModel] = [KAnonymity(3), DistinctLDiversity("disease", 2)]
    local = anonymize_local(df, h, models, max_suppression=0.1, max_rounds=0, sensitive="disease")
    found = anonymize(df, h, models, max_suppression=0.1, sensitive="disease")
    for key in set(local.metrics) & set(found.metrics):
        assert local.metrics[key] == pytest.approx(found.metrics[key], rel=1e-12), key
    assert local.suppressed == found.suppressed
    pd.testing.assert_frame_equal(local.data.astype(str), found.data.astype(str))
    assert local.rounds["round"].tolist() == [0]


def test_mark_keeps_every_row_with_stars() -> None:
    df = pd.DataFrame({"zip": ["1301"] * 3 + ["1302"] * 3 + ["1311"], "v": range(7)})
    result = anonymize_local(
        df, _zip_hierarchy(), KAnonymity(2), max_suppression=0.2, suppression="mark"
    )
    # The lone 1311 record cannot form a class of 2 in any round.
    assert len(result.data) == 7
    assert result.data["zip"].tolist() == ["1301"] * 3 + ["1302"] * 3 + ["*"]
    assert result.suppressed == 1
    assert result.rounds["released"].tolist() == [6, 0]
    assert pd.isna(result.rounds["zip"].iloc[1])


# ------------------------------------------------------------------------- ARX Adult


def test_adult_local_recoding_releases_more_at_lower_loss_than_global() -> None:
    df = pd.read_csv(f"{ADULT}/adult.csv.gz", sep=";", dtype=str)
    h = {q: Hierarchy.from_csv(f"{ADULT}/adult_hierarchy_{q}.csv") for q in ADULT_QIS}
    before = df.copy()
    local = anonymize_local(df, h, KAnonymity(5), max_suppression=0.05)
    pd.testing.assert_frame_equal(df, before)
    first = local.rounds.iloc[0]
    # Round 0 is ARX's global optimum for k = 5, 5 % suppression (loss 0.1701).
    assert round(float(first["loss"]), 4) == 0.1701
    assert int(first["suppressed"]) == 1346
    assert local.suppressed < 10
    assert local.metrics["loss"] < 0.150
    assert len(local.data) == len(df) - local.suppressed
    assert k_anonymity(local.data, ADULT_QIS) >= 5
    assert local.rounds["loss"].is_monotonic_decreasing
    assert local.subset.max() == len(local.rounds) - 2  # the last round found nothing
    pd.testing.assert_series_equal(local.data["occupation"], df["occupation"].loc[local.data.index])
    _labels_match_levels(df, local.data, local.levels, h)


# -------------------------------------------------------------------------- properties


def _models(draw: st.DrawFn) -> list[PrivacyModel]:
    kind = draw(st.sampled_from(["k", "l", "entropy", "recursive", "t"]))
    k = draw(st.integers(2, 4))
    models: list[PrivacyModel] = [KAnonymity(k)]
    if kind == "l":
        models.append(DistinctLDiversity("s", 2))
    elif kind == "entropy":
        models.append(EntropyLDiversity("s", 1.5))
    elif kind == "recursive":
        models.append(RecursiveCLDiversity("s", 2, 2))
    elif kind == "t":
        models.append(TCloseness("s", 0.15))
    return models


@st.composite
def _cases(draw: st.DrawFn) -> tuple[pd.DataFrame, list[PrivacyModel], float]:
    n = draw(st.integers(6, 50))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "zip": rng.choice(ZIPS, n, p=[0.5, 0.3, 0.15, 0.05]),
            "age": rng.integers(20, 40, n),
            "s": rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1]),
        },
        index=rng.permutation(n) % max(n // 2, 1),  # duplicated labels
    )
    return df, _models(draw), draw(st.sampled_from([0.0, 0.1, 0.3]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases(), st.sampled_from(["remove", "mark"]))
def test_released_table_satisfies_every_model_and_beats_global(
    case: tuple[pd.DataFrame, list[PrivacyModel], float], suppression: str
) -> None:
    df, models, max_suppression = case
    h = {**_zip_hierarchy(), "age": Hierarchy.intervals(range(20, 40), widths=(5, 10))}
    before = df.copy()
    try:
        found = anonymize(df, h, models, max_suppression=max_suppression)
    except NoSolutionError:
        with pytest.raises(NoSolutionError):
            anonymize_local(df, h, models, max_suppression=max_suppression)
        return
    result = anonymize_local(
        df, h, models, max_suppression=max_suppression, suppression=suppression
    )
    pd.testing.assert_frame_equal(df, before)
    assert result.suppressed <= found.suppressed
    assert result.metrics["loss"] <= found.metrics["loss"] + 1e-12
    released_rows = result.subset.notna().to_numpy()
    assert released_rows.sum() == len(df) - result.suppressed
    released = result.data if suppression == "remove" else result.data[released_rows]
    assert len(released) == len(df) - result.suppressed
    if len(released) == 0:
        return
    qis = ["zip", "age"]
    for model in models:
        if isinstance(model, KAnonymity):
            assert k_anonymity(released, qis) >= model.k
        elif isinstance(model, DistinctLDiversity):
            assert l_diversity(released, qis, ["s"]) >= model.l
        elif isinstance(model, EntropyLDiversity):
            assert entropy_l_diversity(released, qis, ["s"]) >= model.l - 1e-9
        elif isinstance(model, RecursiveCLDiversity):
            # pyCANON's c is the smallest integer every class satisfies; the model's c
            # is an integer here, so satisfying it means not needing a larger one.
            c, _ = recursive_c_l_diversity(released, qis, ["s"], l=model.l)
            assert c <= model.c
        elif isinstance(model, TCloseness):
            # Against the released records' distribution: the models' default reference
            # (reference="release"), which the search and local recoding both measure.
            prior = released["s"].value_counts(normalize=True)
            keys = released[qis].astype(str).agg("|".join, axis=1).to_numpy()
            for key in np.unique(keys):
                share = released["s"][keys == key].value_counts(normalize=True)
                gap = share.reindex(prior.index, fill_value=0.0) - prior
                assert 0.5 * gap.abs().sum() <= model.t + 1e-9
    pd.testing.assert_series_equal(
        result.data["s"].reset_index(drop=True),
        df["s"][released_rows if suppression == "remove" else slice(None)].reset_index(drop=True),
    )


# -------------------------------------------------------------------------- error paths


@pytest.mark.parametrize("rounds", [-1, 1.5, True, "2"])
def test_bad_max_rounds(rounds: object) -> None:
    df = pd.DataFrame({"zip": ZIPS})
    with pytest.raises(ParameterError, match=r"max_rounds must be an integer >= 0, got"):
        anonymize_local(
            df,
            _zip_hierarchy(),
            KAnonymity(2),
            max_suppression=0.0,
            max_rounds=rounds,  # type: ignore[arg-type]
        )


def test_argument_errors_name_the_argument() -> None:
    df = pd.DataFrame({"zip": ZIPS})
    h = _zip_hierarchy()
    with pytest.raises(ParameterError, match=r"suppression must be one of \('remove', 'mark'\)"):
        anonymize_local(df, h, KAnonymity(2), max_suppression=0.0, suppression="drop")
    with pytest.raises(DataTypeError, match="df must be a pandas DataFrame, got list"):
        anonymize_local([1], h, KAnonymity(2), max_suppression=0.0)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="hierarchies must map QI columns"):
        anonymize_local(df, [h], KAnonymity(2), max_suppression=0.0)  # type: ignore[arg-type]
    with pytest.raises(ColumnError, match="'postcode'"):
        anonymize_local(df, {"postcode": h["zip"]}, KAnonymity(2), max_suppression=0.0)
    with pytest.raises(ParameterError, match=r"max_suppression must be in \[0, 1\], got 2"):
        anonymize_local(df, h, KAnonymity(2), max_suppression=2)
    with pytest.raises(ParameterError, match="metric must be one of"):
        anonymize_local(df, h, KAnonymity(2), max_suppression=0.0, metric="gain")


def test_k_above_the_table_has_no_solution() -> None:
    df = pd.DataFrame({"zip": ZIPS})
    with pytest.raises(NoSolutionError, match=r"max_suppression=0\.5"):
        anonymize_local(df, _zip_hierarchy(), KAnonymity(5), max_suppression=0.5)
