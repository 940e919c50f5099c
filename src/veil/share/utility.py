"""OptimShare's utility loss U_l: GaussianNB on a candidate against the original.

The paper's application A is classification with Gaussian naive Bayes, and its utility
loss is ``U_l = (U_o - U_p) / U_o`` (Section 3.3, "Analysis of utility and
effectiveness"), clipped to ``[0, 1]``. veil reads it as follows (each reading is
reported by the search):

* the original's records are split into ``k`` folds once, by a uniformly random
  permutation drawn from :mod:`veil.rng` dealt round-robin (:func:`record_folds`): the
  folds depend on the number of records and the generator only, never on a value;
* ``U_o``: GaussianNB trained on the original's other folds, tested on each held-out
  fold, pooled over the folds (correct predictions / records);
* ``U_p``: GaussianNB trained on the *candidate's* rows of the same training folds
  (the candidate's row ``i`` stands for record ``i``), tested on the same held-out
  original folds, pooled likewise. Training on the candidate and testing on original
  records the classifier did not see is what a data user's model meets;
* features are every released column but the label, encoded as in
  :mod:`veil.share.encoding` (one-hot categories, numbers scaled by their public
  bounds); the label is its public domain code.

**Sensitivity of the count of correct predictions.** Let ``C`` be the candidate (the
training table) and ``F`` the folds, both held fixed, and let the original tables ``D``
and ``D'`` differ in one record ``i``, in any of its values (label and features). The
count is ``Σ_j 1[h_F(j)(x_j) = y_j]``, where ``h_f`` is GaussianNB trained on the rows of
``C`` outside fold ``f``. No ``h_f`` reads ``D``: it reads ``C`` and ``F`` only, and ``F``
is a function of ``n`` and the generator (:func:`record_folds`), the same for ``D`` and
``D'``. So every term but the ``i``-th is the same on both tables, and that term is 0 or
1: the count moves by at most 1. Folds stratified on the labels break this: one label
changed re-deals the folds, every ``h_f`` sees other rows, and the count moved by up to
32 on a table of a few thousand records. The private selection of
:mod:`veil.share.search` rests on this bound (its candidate is fixed when one record's
S changes: S is drawn from the DP model given the exact Q).

These are measurements of the raw data for the custodian: no privacy guarantee.
Requires scikit-learn (``pip install 'veil[release]'``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from veil.errors import ParameterError

__all__ = [
    "UtilityReference",
    "candidate_correct",
    "fold_predictions",
    "record_folds",
    "utility_loss",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

SKLEARN_HINT = "pip install 'veil[release]'"


def _naive_bayes() -> Any:
    try:
        from sklearn.naive_bayes import GaussianNB
    except ImportError as exc:
        raise ImportError(
            f"veil.share's utility measure needs scikit-learn: {SKLEARN_HINT}", name="sklearn"
        ) from exc
    return GaussianNB


def record_folds(n: int, k: int, rng: np.random.Generator) -> IntArray:
    """Fold ``0..k-1`` of each of ``n`` records: a random permutation dealt round-robin.

    The folds are a function of ``n``, ``k`` and the generator only, never of a record's
    value, so changing one record moves no record to another fold (the module notes'
    sensitivity argument). Every fold holds ``floor(n/k)`` or ``ceil(n/k)`` records.

    Parameters
    ----------
    n : int
        Number of records.
    k : int
        Number of folds, in ``[2, n]``.
    rng : numpy.random.Generator
        Source of the permutation (:mod:`veil.rng`).
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 2 <= k <= n:
        raise ParameterError(f"folds: must be an integer in [2, {n}] (the records), got {k!r}")
    folds = np.empty(n, dtype=np.int64)
    folds[rng.permutation(n)] = np.arange(n, dtype=np.int64) % int(k)
    return folds


def _predict(train_x: FloatArray, train_y: IntArray, test_x: FloatArray) -> IntArray:
    """GaussianNB's classes for ``test_x``; the majority class when no feature varies.

    With every training feature constant GaussianNB's variances are all 0 (its smoothing
    is a share of the largest one) and its likelihoods undefined; the features then say
    nothing, and the prior's choice, the most frequent training class, is returned.
    """
    if train_x.shape[1] == 0 or not np.any(train_x.var(axis=0) > 0):
        majority = int(np.argmax(np.bincount(train_y)))
        return np.full(test_x.shape[0], majority, dtype=np.int64)
    model = _naive_bayes()()
    model.fit(train_x, train_y)
    return np.asarray(model.predict(test_x), dtype=np.int64)


def fold_predictions(
    features: FloatArray,
    labels: IntArray,
    folds: IntArray,
    k: int,
    test_features: FloatArray,
) -> IntArray:
    """Every test record's class, by GaussianNB trained on the training rows of other folds.

    Row ``i`` of ``features``/``labels`` (the training table: the original or a
    candidate) and row ``i`` of ``test_features`` (the original) share fold ``folds[i]``;
    record ``i`` is predicted by the model trained on the rows of the other folds.
    """
    out = np.empty(folds.size, dtype=np.int64)
    for j in range(k):
        held = folds == j
        if held.any():
            out[held] = _predict(features[~held], labels[~held], test_features[held])
    return out


@dataclass(frozen=True)
class UtilityReference:
    """The original's folds, features and labels, and its cross-validated accuracy U_o.

    Attributes
    ----------
    features : numpy.ndarray, shape (n, f)
        The original's encoded features (every released column but the label).
    labels : numpy.ndarray of int, shape (n,)
        The label's public domain codes.
    folds : numpy.ndarray of int, shape (n,)
        Fold of every record.
    k : int
        Number of folds.
    correct : int
        Records the GaussianNB trained on the other folds classifies correctly.
    """

    features: FloatArray
    labels: IntArray
    folds: IntArray
    k: int
    correct: int

    @classmethod
    def build(
        cls, features: FloatArray, labels: IntArray, k: int, rng: np.random.Generator
    ) -> UtilityReference:
        """Split into folds (:func:`record_folds`) and cross-validate GaussianNB on the original."""
        folds = record_folds(labels.size, k, rng)
        predicted = fold_predictions(features, labels, folds, int(k), features)
        return cls(features, labels, folds, int(k), int(np.count_nonzero(predicted == labels)))

    @property
    def accuracy(self) -> float:
        """U_o: pooled cross-validated accuracy of GaussianNB on the original."""
        return self.correct / self.labels.size

    def predictions(
        self, features: FloatArray | None = None, labels: IntArray | None = None
    ) -> IntArray:
        """Predicted class of every original record, trained on a table's training folds.

        ``features`` and ``labels`` are a candidate's (row ``i`` stands for record ``i``);
        None gives the original's own cross-validated predictions.
        """
        if features is None or labels is None:
            return fold_predictions(self.features, self.labels, self.folds, self.k, self.features)
        return fold_predictions(features, labels, self.folds, self.k, self.features)


def candidate_correct(reference: UtilityReference, features: FloatArray, labels: IntArray) -> int:
    """Original records classified correctly by GaussianNB trained on the candidate.

    For each fold, the classifier is trained on the candidate's rows of the other folds
    and tested on the original's records of the fold; the counts are summed (``U_p`` is
    this count over the number of records).
    """
    predicted = reference.predictions(features, labels)
    return int(np.count_nonzero(predicted == reference.labels))


def utility_loss(u_o: float, u_p: float) -> float:
    """The paper's normalized utility loss ``clip((U_o - U_p) / U_o, 0, 1)``.

    Parameters
    ----------
    u_o : float
        Utility of the original (> 0).
    u_p : float
        Utility of the candidate.

    Examples
    --------
    >>> from veil.share import utility_loss
    >>> utility_loss(0.5, 0.375), utility_loss(0.5, 0.75)
    (0.25, 0.0)
    """
    if not u_o > 0:
        raise ParameterError(
            f"u_o: the original's utility must be > 0 to normalize the loss, got {u_o!r}"
        )
    return float(np.clip((u_o - u_p) / u_o, 0.0, 1.0))
