"""Tests for veil.metrics.ml_utility: train on the release, test on the original."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import veil.metrics
from veil.errors import ColumnError, DataTypeError, ParameterError, ReproducibleNoiseWarning

# From the submodule: pytest's importlib mode rebinds ``veil.metrics.ml_utility`` to the
# module when it collects the module's doctest.
from veil.metrics.ml_utility import MLUtility, ml_utility

TARGET = "salary-class"
FEATURES = ["age", "workclass", "education", "marital-status", "occupation", "sex"]


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed))


def test_exported_from_veil_metrics() -> None:
    assert {"MLModel", "MLUtility", "ml_utility"} <= set(veil.metrics.__all__)


def test_identical_release_has_no_gap(adult: pd.DataFrame) -> None:
    result = ml_utility(adult, adult.copy(), TARGET, rng=_rng())
    assert isinstance(result, MLUtility)
    assert result.accuracy_gap == 0.0
    assert result.f1_macro_gap == 0.0
    assert result.auc_gap == 0.0
    assert result.n_classes == 2
    assert result.alignment == "index"
    # A logistic regression on Adult predicts the salary class of 4 in 5 people.
    assert 0.8 < result.baseline_accuracy < 0.9
    assert result.baseline_auc is not None and result.baseline_auc > 0.85
    assert result.n_test == pytest.approx(0.3 * len(adult), abs=2)
    assert result.n_train_original + result.n_test == len(adult)
    assert TARGET not in result.features and "age" in result.features


@pytest.mark.parametrize("model", ["random_forest", "gradient_boosting"])
def test_identical_release_has_no_gap_for_every_model(adult: pd.DataFrame, model: str) -> None:
    sample = adult.iloc[:4000]
    result = ml_utility(sample, sample, TARGET, features=FEATURES, model=model, rng=_rng(1))  # type: ignore[arg-type]
    assert result.model == model
    assert result.accuracy_gap == 0.0 and result.auc_gap == 0.0
    assert result.baseline_accuracy > 0.75


def test_shuffled_target_has_large_gap(adult: pd.DataFrame) -> None:
    released = adult.copy()
    released[TARGET] = _rng(5).permutation(adult[TARGET].to_numpy())
    result = ml_utility(adult, released, TARGET, rng=_rng())
    # The shuffled release carries no signal: its AUC is at chance (0.5 +- 0.05 on
    # ~9 800 test records) while the baseline's is near 0.9.
    assert result.released_auc is not None and abs(result.released_auc - 0.5) < 0.08
    assert result.auc_gap is not None and result.auc_gap > 0.3
    assert result.f1_macro_gap > 0.2
    assert result.accuracy_gap > 0.05


def test_same_generator_seed_reproduces_the_result(adult: pd.DataFrame) -> None:
    sample = adult.iloc[:3000]
    noisy = sample.assign(age=sample["age"] + _rng(2).integers(-10, 11, len(sample)))
    first = ml_utility(sample, noisy, TARGET, features=FEATURES, rng=_rng(9))
    second = ml_utility(sample, noisy, TARGET, features=FEATURES, rng=_rng(9))
    assert first == second


def test_int_seed_warns_like_every_seeded_function(adult: pd.DataFrame) -> None:
    sample = adult.iloc[:1000]
    with pytest.warns(ReproducibleNoiseWarning):
        ml_utility(sample, sample, TARGET, features=["age", "sex"], rng=3)


def test_suppressed_rows_are_matched_by_index(adult: pd.DataFrame) -> None:
    sample = adult.iloc[:4000]
    kept = sample.drop(index=sample.index[::3])
    result = ml_utility(sample, kept, TARGET, features=FEATURES, rng=_rng())
    assert result.alignment == "index"
    # The release model is trained on the released versions of the baseline's training
    # records that survived: two thirds of them.
    assert result.n_train_released == pytest.approx(result.n_train_original * 2 / 3, rel=0.05)
    assert result.n_train_released < result.n_train_original
    # The same records, unchanged: the model loses a little data, not its skill.
    assert abs(result.accuracy_gap) < 0.03


def test_shuffled_rows_are_matched_by_index_not_position(adult: pd.DataFrame) -> None:
    sample = adult.iloc[:4000]
    shuffled = sample.iloc[_rng(4).permutation(len(sample))]
    result = ml_utility(sample, shuffled, TARGET, features=FEATURES, rng=_rng())
    assert result.accuracy_gap == 0.0


def test_reset_index_of_same_length_is_matched_by_position(adult: pd.DataFrame) -> None:
    sample = adult.iloc[1000:3000]
    released = sample.reset_index(drop=True)
    result = ml_utility(sample, released, TARGET, features=FEATURES, rng=_rng())
    assert result.alignment == "position"
    assert result.accuracy_gap == 0.0


def test_unmatchable_rows_are_rejected(adult: pd.DataFrame) -> None:
    sample = adult.iloc[:2000]
    released = sample.iloc[:1500].reset_index(drop=True)
    released.index = released.index + 10_000
    with pytest.raises(ParameterError, match=r"released: .*index labels"):
        ml_utility(sample, released, TARGET, features=FEATURES, rng=_rng())


def test_removed_records_with_a_reset_index_are_rejected(adult: pd.DataFrame) -> None:
    sample = adult.iloc[:2000]
    reset = sample.drop(index=sample.index[::5]).reset_index(drop=True)
    with pytest.raises(ParameterError, match=r"released: has 1600 rows .* as after reset_index"):
        ml_utility(sample, reset, TARGET, features=FEATURES, rng=_rng())


def test_generalized_labels_are_categories(adult: pd.DataFrame) -> None:
    sample = adult.iloc[:4000]
    low = (sample["age"] // 10) * 10
    labels = "[" + low.astype(str) + "-" + (low + 10).astype(str) + "["
    released = sample.assign(age=labels)
    result = ml_utility(sample, released, TARGET, features=["age", "sex"], rng=_rng())
    # Generalized ages share no category with the raw ones: the release model sees age
    # as unknown on the original records and can only use sex: its ranking is far worse.
    assert result.auc_gap is not None and result.auc_gap > 0.1
    assert result.released_auc is not None and result.released_auc < 0.65


def test_generalized_target_counts_as_wrong(adult: pd.DataFrame) -> None:
    sample = adult.iloc[:3000]
    released = sample.assign(**{TARGET: "*"})
    released.loc[released.index[::2], TARGET] = sample.loc[sample.index[::2], TARGET]
    result = ml_utility(sample, released, TARGET, features=FEATURES, rng=_rng())
    assert result.released_accuracy < result.baseline_accuracy


def test_missing_values_are_handled(adult: pd.DataFrame) -> None:
    sample = adult.iloc[:3000].copy()
    sample["age"] = sample["age"].astype("float64")
    sample.loc[sample.index[::7], "age"] = np.nan
    sample.loc[sample.index[::5], "workclass"] = None
    released = sample.copy()
    released.loc[released.index[::4], TARGET] = None
    result = ml_utility(sample, released, TARGET, features=["age", "workclass"], rng=_rng())
    assert result.n_train_released < result.n_train_original
    assert 0.5 < result.released_accuracy <= 1.0


def test_multiclass_target_has_no_auc(adult: pd.DataFrame) -> None:
    sample = adult.iloc[:3000]
    result = ml_utility(sample, sample, "race", features=["age", "native-country"], rng=_rng())
    assert result.n_classes == 5
    assert result.baseline_auc is None and result.auc_gap is None
    assert result.f1_macro_gap == 0.0


def test_high_cardinality_feature_is_capped(adult: pd.DataFrame) -> None:
    sample = adult.iloc[:3000].assign(person=[f"id{i}" for i in range(3000)])
    result = ml_utility(
        sample, sample, TARGET, features=["person", "sex"], max_categories=10, rng=_rng()
    )
    assert result.accuracy_gap == 0.0


def test_inputs_are_not_modified(adult: pd.DataFrame) -> None:
    sample = adult.iloc[:2000].copy()
    released = sample.assign(age=sample["age"] + 1)
    before, before_released = sample.copy(), released.copy()
    ml_utility(sample, released, TARGET, features=FEATURES, rng=_rng())
    pd.testing.assert_frame_equal(sample, before)
    pd.testing.assert_frame_equal(released, before_released)


def test_dropped_column_is_not_a_default_feature(adult: pd.DataFrame) -> None:
    sample = adult.iloc[:2000]
    released = sample.drop(columns=["fnlwgt", "native-country"])
    result = ml_utility(sample, released, TARGET, rng=_rng())
    assert "fnlwgt" not in result.features and "native-country" not in result.features


def test_to_dict_holds_every_measure(adult: pd.DataFrame) -> None:
    sample = adult.iloc[:2000]
    result = ml_utility(sample, sample, TARGET, features=["age", "sex"], rng=_rng())
    measures = result.to_dict()
    assert {"accuracy_gap", "f1_macro_gap", "auc_gap", "baseline_auc"} <= set(measures)


# --- error paths -------------------------------------------------------------------------


@pytest.fixture
def small(adult: pd.DataFrame) -> pd.DataFrame:
    return adult.iloc[:500]


def test_target_absent(small: pd.DataFrame) -> None:
    with pytest.raises(ColumnError, match="target: column 'income' is not in original"):
        ml_utility(small, small, "income", rng=_rng())
    with pytest.raises(ColumnError, match=r"target: .* is not in released"):
        ml_utility(small, small.drop(columns=[TARGET]), TARGET, rng=_rng())


def test_target_constant(small: pd.DataFrame) -> None:
    constant = small.assign(**{TARGET: "<=50K"})
    with pytest.raises(ParameterError, match=r"target: .* at least 2 values in original, got 1"):
        ml_utility(constant, constant, TARGET, rng=_rng())


def test_released_training_target_constant(small: pd.DataFrame) -> None:
    released = small.assign(**{TARGET: "<=50K"})
    with pytest.raises(ParameterError, match="released: the training records hold fewer than 2"):
        ml_utility(small, released, TARGET, features=["age"], rng=_rng())


def test_continuous_target(small: pd.DataFrame) -> None:
    noisy = small.assign(score=small["age"] + 0.5)
    with pytest.raises(DataTypeError, match="target: 'score' holds fractional numbers"):
        ml_utility(noisy, noisy, "score", features=["sex"], rng=_rng())


def test_too_many_classes(small: pd.DataFrame) -> None:
    with pytest.raises(ParameterError, match=r"target: 'fnlwgt' takes .* values"):
        ml_utility(small, small, "fnlwgt", features=["sex"], rng=_rng())


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"model": "svm"}, "model: must be one of"),
        ({"test_size": 0.0}, r"test_size: must be a number in \(0, 1\), got 0.0"),
        ({"test_size": 1}, r"test_size: must be a number in \(0, 1\), got 1"),
        ({"test_size": True}, "test_size"),
        ({"max_categories": 1}, "max_categories: must be an int >= 2, got 1"),
        ({"features": []}, "features: must name at least one column"),
        ({"features": "age"}, "features: expected a sequence"),
        ({"features": ["age", "age"]}, "features: must not repeat"),
        ({"features": ["age", TARGET]}, "features: must not hold the target"),
    ],
)
def test_bad_parameters(small: pd.DataFrame, kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ParameterError, match=message):
        ml_utility(small, small, TARGET, rng=_rng(), **kwargs)  # type: ignore[arg-type]


def test_feature_absent(small: pd.DataFrame) -> None:
    with pytest.raises(ColumnError, match="features: column 'zip' is not in original"):
        ml_utility(small, small, TARGET, features=["zip"], rng=_rng())
    with pytest.raises(ColumnError, match="features: column 'age' is not in released"):
        ml_utility(small, small.drop(columns=["age"]), TARGET, features=["age"], rng=_rng())


def test_not_a_frame(small: pd.DataFrame) -> None:
    with pytest.raises(DataTypeError, match="released: must be a pandas DataFrame, got dict"):
        ml_utility(small, {}, TARGET, rng=_rng())  # type: ignore[arg-type]


def test_empty_release(small: pd.DataFrame) -> None:
    with pytest.raises(ParameterError, match="released: must hold at least 1 row"):
        ml_utility(small, small.iloc[:0], TARGET, rng=_rng())


def test_no_shared_feature(small: pd.DataFrame) -> None:
    with pytest.raises(ParameterError, match="features: original and released share no column"):
        ml_utility(small, small[[TARGET]], TARGET, rng=_rng())
