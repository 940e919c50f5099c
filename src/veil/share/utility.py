"""OptimShare's utility loss U_l: GaussianNB on a candidate against the original.

The paper's application A is classification with Gaussian naive Bayes, and its utility
loss is ``U_l = (U_o - U_p) / U_o`` (Section 3.3, "Analysis of utility and
effectiveness"), clipped to ``[0, 1]``. veil reads it as follows (each reading is
reported by the search):

* the original's records are split into ``k`` stratified folds once, with a permutation
  drawn from :mod:`veil.rng`;
* ``U_o``: GaussianNB trained on the original's other folds, tested on each held-out
  fold, pooled over the folds (correct predictions / records);
* ``U_p``: GaussianNB trained on the *candidate's* rows of the same training folds
  (the candidate's row ``i`` stands for record ``i``), tested on the same held-out
  original folds, pooled likewise. Training on the candidate and testing on original
  records the classifier did not see is what a data user's model meets;
* features are every released column but the label, encoded as in
  :mod:`veil.share.encoding` (one-hot categories, numbers scaled by their public
  bounds); the label is its public domain code.

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
    "stratified_folds",
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


def stratified_folds(labels: IntArray, k: int, rng: np.random.Generator) -> IntArray:
    """Fold ``0..k-1`` of every record: each class dealt round-robin in a random order."""
    n = labels.size
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 2 <= k <= n:
        raise ParameterError(f"folds: must be an integer in [2, {n}] (the records), got {k!r}")
    perm = rng.permutation(n)
    permuted = labels[perm]
    by_class = np.argsort(permuted, kind="stable")
    ordered = permuted[by_class]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    first_of = np.repeat(starts, np.diff(np.r_[starts, n]))
    folds = np.empty(n, dtype=np.int64)
    folds[perm[by_class]] = (np.arange(n) - first_of) % int(k)
    return folds


def _predict(train_x: FloatArray, train_y: IntArray, test_x: FloatArray) -> IntArray:
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
        """Split into folds and cross-validate GaussianNB on the original."""
        folds = stratified_folds(labels, k, rng)
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
