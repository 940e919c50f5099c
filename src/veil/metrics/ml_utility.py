"""Machine-learning utility: train a classifier on the release, test it on the original."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd
from pandas.api.types import is_float_dtype, is_numeric_dtype

from veil.errors import ColumnError, DataTypeError, ParameterError
from veil.rng import RngLike, resolve_rng

__all__ = ["MLModel", "MLUtility", "ml_utility"]

MLModel = Literal["logistic", "random_forest", "gradient_boosting"]

_MODELS: Final[tuple[str, ...]] = ("logistic", "random_forest", "gradient_boosting")
# A classifier over more labels than this is not what the metric is for (a continuous
# or identifying target); the caller should bin the target first.
_MAX_CLASSES: Final[int] = 100
_OTHER: Final[str] = "<other>"

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class MLUtility:
    """How well a classifier trained on a release predicts the original data.

    ``*_gap`` fields are ``baseline - released``: positive when the release lost
    predictive utility, zero when it lost none.

    Attributes
    ----------
    target : column label
        The predicted column.
    model : str
        The classifier family (see :func:`ml_utility`).
    features : tuple of column labels
        The predictors used.
    alignment : {"index", "position"}
        How released rows were matched to original rows (see :func:`ml_utility`).
    n_classes : int
        Distinct target values among the original's rows.
    n_train_original, n_train_released, n_test : int
        Rows the baseline and the release model were trained on, and original rows
        they were both tested on.
    baseline_accuracy, released_accuracy, accuracy_gap : float
        Share of test rows predicted right.
    baseline_f1_macro, released_f1_macro, f1_macro_gap : float
        F1 score averaged over the target classes present in the test rows.
    baseline_auc, released_auc, auc_gap : float or None
        Area under the ROC curve; only for a binary target, else ``None``.
    """

    target: Hashable
    model: str
    features: tuple[Hashable, ...]
    alignment: str
    n_classes: int
    n_train_original: int
    n_train_released: int
    n_test: int
    baseline_accuracy: float
    released_accuracy: float
    accuracy_gap: float
    baseline_f1_macro: float
    released_f1_macro: float
    f1_macro_gap: float
    baseline_auc: float | None
    released_auc: float | None
    auc_gap: float | None

    def to_dict(self) -> dict[str, Any]:
        """Return the measures as a plain dictionary."""
        return asdict(self)


def ml_utility(
    original: pd.DataFrame,
    released: pd.DataFrame,
    target: Hashable,
    *,
    features: Sequence[Hashable] | None = None,
    model: MLModel = "logistic",
    test_size: float = 0.3,
    max_categories: int = 100,
    rng: RngLike = None,
) -> MLUtility:
    """Train a classifier on the release and test it on held-out original records.

    The original's records are split once into a training and a test part (stratified by
    the target). Two classifiers of the same family and settings are trained: the
    *baseline* on the original training records, the *release model* on the released
    versions of those same records. Both predict the target of the original test records;
    the gap between their scores is the predictive utility the release lost. The released
    versions of the test records are never used, so the release model cannot have seen
    the records it is scored on. The metric reads data only: it spends no privacy
    budget, but its result depends on the original records and is as private as they
    are.

    Parameters
    ----------
    original : pandas.DataFrame
        The original table. Not modified.
    released : pandas.DataFrame
        The released table. Not modified. Its rows must correspond to original rows:
        either it keeps the original's index labels (a subset of them when records were
        suppressed or removed, in any order), or it has as many rows as ``original`` in
        the same order (see Notes).
    target : column label
        The class to predict, in both tables.
    features : sequence of column labels, optional
        Predictors, in both tables. Default: every column of ``original`` other than
        ``target`` that ``released`` also holds (a column dropped from the release is
        not used).
    model : {"logistic", "random_forest", "gradient_boosting"}, default "logistic"
        ``"logistic"``: multinomial logistic regression on standardized features
        (L2, ``C=1``, up to 2 000 L-BFGS iterations); ``"random_forest"``: 100 trees;
        ``"gradient_boosting"``: scikit-learn's histogram gradient boosting.
    test_size : float, default 0.3
        Share of the original records held out for testing, in (0, 1).
    max_categories : int, default 100
        Largest number of one-hot columns per categorical feature (>= 2): the
        ``max_categories - 1`` most frequent values (over both tables) keep their own
        column and the rest share one, so that an identifier-like column cannot blow up
        the design matrix.
    rng : None, int or numpy.random.Generator
        Source of the split and of the classifiers' randomness (one integer seed drawn
        from it; see :mod:`veil.rng`).

    Returns
    -------
    MLUtility
        Accuracy, macro F1 and (binary target) ROC AUC of both classifiers, and the gaps.

    Raises
    ------
    veil.errors.DataTypeError
        If a table is not a DataFrame, or the target is continuous (floats that are not
        whole numbers).
    veil.errors.ColumnError
        If ``target`` or a feature is missing from either table.
    veil.errors.ParameterError
        If ``model``, ``test_size`` or ``max_categories`` is out of range, ``features`` is
        empty, repeats a column or holds ``target``, the rows cannot be matched, the target
        is constant or has more than 100 classes, or a training part holds a single
        class.

    Notes
    -----
    *Matching rows.* When every index label of ``released`` is an index label of
    ``original`` (both unique), released rows are matched by label: this is the case when
    a release suppressed or removed records and kept the index. Otherwise, when both
    tables have the same number of rows, they are matched by position. A release with
    fewer rows than the original and a fresh ``0..m-1`` range index (what
    ``reset_index`` leaves) is rejected when the original also has a range index: its
    labels would match the first ``m`` original rows, not the kept ones. Keep the
    original's index labels when removing records.

    *Encoding.* A feature numeric (or boolean) in both tables is used as a number; its
    missing values are replaced by the training median, with an indicator column. Any
    other feature is categorical and one-hot encoded over the categories of both tables;
    a feature numeric in one table and not in the other (an age released as
    ``"[20-30["``) is compared as text, so the original ages are categories the release
    model never saw and the feature carries no signal for it: this is the utility a
    generalized column loses for a model applied to raw records. A missing categorical
    value is a category. The target is compared as text when its kind differs between
    the tables. Rows whose target is missing are left out.

    *Memory.* The design matrices are dense float64: (rows of both tables) x (numeric
    features + one-hot columns) x 8 bytes, so lower ``max_categories`` or sample the
    records for wide categorical tables.

    *Scores.* Macro F1 averages over the classes present in the test rows; a release
    model predicting a class the original lacks (a generalized target) scores that
    prediction as wrong. The ROC AUC uses the predicted probability of the class met
    second in the original's rows; a release model that never saw that class scores 0.5.

    References
    ----------
    .. [1] J. Hittmeir, A. Ekelhart and R. Mayer, "Utility and privacy assessments of
       synthetic data for regression tasks", IEEE Big Data 2019 (train on the release,
       test on the original).

    Examples
    --------
    >>> import numpy as np
    >>> from veil.datasets import load_adult
    >>> from veil.metrics.ml_utility import ml_utility
    >>> adult = load_adult().head(2000)
    >>> result = ml_utility(
    ...     adult, adult, "salary-class", features=["age", "education", "sex"],
    ...     rng=np.random.Generator(np.random.PCG64(0)),
    ... )
    >>> result.accuracy_gap
    0.0
    """
    for name, df in (("original", original), ("released", released)):
        if not isinstance(df, pd.DataFrame):
            raise DataTypeError(f"{name}: must be a pandas DataFrame, got {type(df).__name__}")
    if model not in _MODELS:
        raise ParameterError(f"model: must be one of {_MODELS!r}, got {model!r}")
    if (
        isinstance(test_size, bool)
        or not isinstance(test_size, (int, float, np.integer, np.floating))
        or not 0.0 < float(test_size) < 1.0
    ):
        raise ParameterError(f"test_size: must be a number in (0, 1), got {test_size!r}")
    if (
        isinstance(max_categories, bool)
        or not isinstance(max_categories, (int, np.integer))
        or max_categories < 2
    ):
        raise ParameterError(f"max_categories: must be an int >= 2, got {max_categories!r}")
    _check_column(original, target, "original", "target")
    _check_column(released, target, "released", "target")
    columns = _check_features(original, released, target, features)
    positions, alignment = _align(original, released)

    y_original, y_released, n_classes = _encode_target(original[target], released[target])
    valid = y_original >= 0
    if n_classes < 2:
        raise ParameterError(
            f"target: {target!r} must take at least 2 values in original, got {n_classes}"
        )
    generator = resolve_rng(rng)
    is_test = _stratified_test(y_original, valid, float(test_size), generator)
    seed = int(generator.integers(0, 2**31 - 1))

    x_original, x_released = _design(original, released, columns, int(max_categories))
    train_original = valid & ~is_test
    train_released = train_original[positions] & (y_released >= 0)
    for name, mask, y in (
        ("original", train_original, y_original),
        ("released", train_released, y_released),
    ):
        if np.unique(y[mask]).size < 2:
            raise ParameterError(
                f"{name}: the training records hold fewer than 2 target classes; "
                "ml_utility needs at least 2 to train a classifier"
            )

    x_test, y_test = x_original[is_test], y_original[is_test]
    from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

    # The design matrices are small and dense: threaded BLAS gains little on them and,
    # on a busy machine, spins for far longer than the single-threaded fit takes.
    with threadpool_limits(limits=1, user_api="blas"):
        baseline = _fit(model, seed, x_original[train_original], y_original[train_original])
        release_model = _fit(model, seed, x_released[train_released], y_released[train_released])
        base_acc, base_f1, base_auc = _scores(baseline, x_test, y_test)
        rel_acc, rel_f1, rel_auc = _scores(release_model, x_test, y_test)
    binary = n_classes == 2
    return MLUtility(
        target=target,
        model=model,
        features=tuple(columns),
        alignment=alignment,
        n_classes=n_classes,
        n_train_original=int(train_original.sum()),
        n_train_released=int(train_released.sum()),
        n_test=int(is_test.sum()),
        baseline_accuracy=base_acc,
        released_accuracy=rel_acc,
        accuracy_gap=base_acc - rel_acc,
        baseline_f1_macro=base_f1,
        released_f1_macro=rel_f1,
        f1_macro_gap=base_f1 - rel_f1,
        baseline_auc=base_auc if binary else None,
        released_auc=rel_auc if binary else None,
        auc_gap=_gap(base_auc, rel_auc) if binary else None,
    )


def _gap(baseline: float | None, released: float | None) -> float | None:
    return None if baseline is None or released is None else baseline - released


def _check_column(df: pd.DataFrame, column: Hashable, name: str, parameter: str) -> None:
    if column not in df.columns:
        raise ColumnError(f"{parameter}: column {column!r} is not in {name}")
    if isinstance(df[column], pd.DataFrame):
        raise ColumnError(f"{parameter}: label {column!r} appears more than once in {name}")


def _check_features(
    original: pd.DataFrame,
    released: pd.DataFrame,
    target: Hashable,
    features: Sequence[Hashable] | None,
) -> list[Hashable]:
    if features is None:
        columns: list[Hashable] = [
            c for c in original.columns if c != target and c in released.columns
        ]
        if not columns:
            raise ParameterError(
                "features: original and released share no column besides the target"
            )
        return columns
    if isinstance(features, (str, bytes)):
        raise ParameterError(f"features: expected a sequence of column labels, got {features!r}")
    columns = [*features]
    if not columns:
        raise ParameterError("features: must name at least one column, got none")
    if len(set(columns)) != len(columns):
        raise ParameterError(f"features: must not repeat a column, got {columns!r}")
    if target in columns:
        raise ParameterError(f"features: must not hold the target {target!r}")
    for column in columns:
        _check_column(original, column, "original", "features")
        _check_column(released, column, "released", "features")
    return columns


def _align(original: pd.DataFrame, released: pd.DataFrame) -> tuple[IntArray, str]:
    """Position in ``original`` of every released row, and how it was found."""
    if len(released) == 0:
        raise ParameterError("released: must hold at least 1 row, got 0")
    if len(released) < len(original) and _fresh(released.index) and _fresh(original.index):
        raise ParameterError(
            f"released: has {len(released)} rows for the {len(original)} of original and a "
            "fresh 0..n-1 index, as after reset_index: its rows cannot be matched to "
            "original rows; keep the original's index labels when removing records"
        )
    if original.index.is_unique and released.index.is_unique:
        positions = original.index.get_indexer(released.index)
        if (positions >= 0).all():
            return positions.astype(np.int64), "index"
    if len(released) == len(original):
        return np.arange(len(original), dtype=np.int64), "position"
    raise ParameterError(
        f"released: its {len(released)} rows cannot be matched to the {len(original)} rows "
        "of original: a release with records removed must keep the original's (unique) "
        "index labels"
    )


def _fresh(index: pd.Index[Any]) -> bool:
    """Whether ``index`` is a default 0..n-1 range, as ``reset_index`` leaves it."""
    return isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1


def _kind_is_numeric(series: pd.Series[Any]) -> bool:
    return bool(is_numeric_dtype(series.dtype))


def _union_codes(
    first: pd.Series[Any], second: pd.Series[Any], *, missing_is_value: bool
) -> tuple[IntArray, pd.Index[Any]]:
    """Codes of both columns' values over the union of their values (first's rows first).

    Values are compared as text when one column is numeric and the other is not.
    """
    both = pd.concat([first, second], ignore_index=True)
    if _kind_is_numeric(first) != _kind_is_numeric(second):
        both = both.astype(str).where(both.notna(), None)
    codes, uniques = pd.factorize(both, use_na_sentinel=not missing_is_value)
    return np.asarray(codes, dtype=np.int64), pd.Index(uniques)


def _encode_target(
    original: pd.Series[Any], released: pd.Series[Any]
) -> tuple[IntArray, IntArray, int]:
    """Integer class codes (-1 when missing) and the class count of the original."""
    for series in (original, released):
        if is_float_dtype(series.dtype):
            values = series.to_numpy(dtype=np.float64, na_value=np.nan)
            finite = values[np.isfinite(values)]
            if (finite != np.round(finite)).any():
                raise DataTypeError(
                    f"target: {series.name!r} holds fractional numbers; ml_utility trains a "
                    "classifier, so bin a continuous target into classes first"
                )
    codes, _ = _union_codes(original, released, missing_is_value=False)
    n = len(original)
    y_original, y_released = codes[:n], codes[n:]
    for name, y in (("original", y_original), ("released", y_released)):
        k = np.unique(y[y >= 0]).size
        if k > _MAX_CLASSES:
            raise ParameterError(
                f"target: {original.name!r} takes {k} values in {name}, more than the "
                f"{_MAX_CLASSES} a classifier is evaluated on; bin it into classes first"
            )
    return y_original, y_released, int(np.unique(y_original[y_original >= 0]).size)


def _stratified_test(
    y: IntArray, valid: npt.NDArray[np.bool_], test_size: float, generator: np.random.Generator
) -> npt.NDArray[np.bool_]:
    """Test-set mask: per class, a random ``test_size`` share, at least one row each side.

    A class with a single record goes to training.
    """
    labels = np.where(valid, y, -1)
    codes = np.unique(labels, return_inverse=True)[1].reshape(-1)
    counts = np.bincount(codes)
    order = np.lexsort((generator.random(labels.size), codes))
    starts = np.cumsum(counts) - counts
    rank = np.empty(labels.size, dtype=np.int64)
    rank[order] = np.arange(labels.size) - np.repeat(starts, counts)
    lower = np.where(counts >= 2, 1, 0)
    n_test = np.clip(np.floor(test_size * counts + 0.5), lower, np.maximum(counts - 1, 0))
    is_test: npt.NDArray[np.bool_] = (rank < n_test[codes]) & valid
    return is_test


def _design(
    original: pd.DataFrame, released: pd.DataFrame, columns: list[Hashable], max_categories: int
) -> tuple[FloatArray, FloatArray]:
    """Design matrices of both tables, with the same columns."""
    n_original, n_released = len(original), len(released)
    blocks: list[FloatArray] = []
    for column in columns:
        first, second = original[column], released[column]
        if _kind_is_numeric(first) and _kind_is_numeric(second):
            blocks.append(
                np.concatenate(
                    [
                        first.to_numpy(dtype=np.float64, na_value=np.nan),
                        second.to_numpy(dtype=np.float64, na_value=np.nan),
                    ]
                )[:, None]
            )
            continue
        codes, uniques = _union_codes(first, second, missing_is_value=True)
        k = len(uniques)
        if k > max_categories:
            # Keep the most frequent values; the rest share the last column.
            counts = np.bincount(codes, minlength=k)
            ranks = np.empty(k, dtype=np.int64)
            ranks[np.argsort(-counts, kind="stable")] = np.arange(k)
            codes = np.minimum(ranks[codes], max_categories - 1)
            k = max_categories
        onehot = np.zeros((n_original + n_released, k), dtype=np.float64)
        onehot[np.arange(codes.size), codes] = 1.0
        blocks.append(onehot)
    matrix = np.hstack(blocks)
    return matrix[:n_original], matrix[n_original:]


def _fit(model: str, seed: int, x: FloatArray, y: IntArray) -> Any:
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline

    steps: list[Any] = []
    if model != "gradient_boosting" and np.isnan(x).any():
        steps.append(SimpleImputer(strategy="median", add_indicator=True, keep_empty_features=True))
    if model == "gradient_boosting":
        from sklearn.ensemble import HistGradientBoostingClassifier

        steps.append(HistGradientBoostingClassifier(random_state=seed))
    elif model == "logistic":
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import StandardScaler

        steps += [StandardScaler(), LogisticRegression(max_iter=2000, random_state=seed)]
    else:
        from sklearn.ensemble import RandomForestClassifier

        steps.append(RandomForestClassifier(n_estimators=100, random_state=seed))
    estimator = make_pipeline(*steps)
    estimator.fit(x, y)
    return estimator


def _scores(estimator: Any, x: FloatArray, y: IntArray) -> tuple[float, float, float | None]:
    """Accuracy, macro F1 over the classes in ``y``, and the binary ROC AUC (or None)."""
    from sklearn.metrics import f1_score, roc_auc_score

    predicted = np.asarray(estimator.predict(x))
    accuracy = float(np.mean(predicted == y))
    present = np.unique(y)
    f1 = float(f1_score(y, predicted, labels=present, average="macro", zero_division=0))
    if present.size != 2:
        return accuracy, f1, None
    positive = present[1]
    classes = np.asarray(estimator.classes_)
    if positive in classes:
        proba = np.asarray(estimator.predict_proba(x), dtype=np.float64)
        score = proba[:, int(np.flatnonzero(classes == positive)[0])]
    else:
        score = np.zeros(y.size, dtype=np.float64)
    auc = float(roc_auc_score(y == positive, score))
    return accuracy, f1, auc if math.isfinite(auc) else None
