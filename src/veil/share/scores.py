"""What a candidate of the OptimShare search scores on the original: two counts.

:class:`CandidateScorer` holds what every candidate is measured against (the original's
folds, encoded features and S, and the similarity groups of its Q) and gives a
candidate's :class:`Scores`:

* ``correct``: original records that GaussianNB, trained on the candidate's rows of the
  other folds, classifies correctly (:func:`veil.share.candidate_correct`; ``U_p`` is
  this count over the records);
* ``linkable``: original records whose own candidate row is the most similar to their
  original S within their group of identical Q (:func:`veil.share.linkable_records`;
  ``L`` is this count over the records).

**Sensitivity 1 of each count, by construction.** Hold the candidate and the folds
fixed, and let the original tables ``D`` and ``D'`` differ in one record ``i``, in any of
its values. Both counts are sums over records ``j`` of a 0/1 term:

* ``correct``: ``1[h_F(j)(x_j) = y_j]``, where ``h_f`` is trained on the candidate's
  rows outside fold ``f``; it reads the candidate and the folds, never ``D``. The folds
  are a random permutation of the record indices (:func:`veil.share.record_folds`), a
  function of ``n`` and the generator only, so they are the same for ``D`` and ``D'``;
* ``linkable``: record ``j``'s term compares its own original S with the candidate rows
  of its similarity group. With Q the same on ``D`` and ``D'`` (the private selection's
  neighbour relation) the groups are the same, so only the ``i``-th term reads record
  ``i``.

Every term but the ``i``-th is therefore equal on ``D`` and ``D'``, and the counts move
by at most 1. When the released Q changes, the groups (and, through the exact Q, the
candidate) change too: outside the relation, as Q is published exactly. The private
selection (:mod:`veil.share.search`) adds discrete Gaussian noise sized for sensitivity 1
to both counts.

These are measurements of the raw data: no privacy guarantee of their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.share.encoding import record_vectors
from veil.share.linkage import linkable_records, similarity_groups
from veil.share.utility import UtilityReference, candidate_correct
from veil.synth import TableDomain

__all__ = ["CandidateScorer", "Scores"]


@dataclass(frozen=True)
class Scores:
    """A candidate's two counts over the original's records.

    Attributes
    ----------
    correct : int
        Records classified correctly by GaussianNB trained on the candidate.
    linkable : int
        Records linkable to their own candidate row within their similarity group.
    """

    correct: int
    linkable: int


@dataclass(frozen=True)
class CandidateScorer:
    """The original, encoded once, that every candidate is scored against.

    Attributes
    ----------
    domain : TableDomain
        Public domain of the released columns.
    label : str
        The class column.
    features : tuple of str
        The classifier's features: every released column but the label.
    s : tuple of str
        The synthesized columns (the linkage compares them).
    reference : UtilityReference
        The original's folds, features, labels and cross-validated accuracy.
    original_s : numpy.ndarray
        The original's encoded S, one row per record.
    groups : numpy.ndarray of int
        Similarity group of every record (records with identical Q share one).
    """

    domain: TableDomain
    label: str
    features: tuple[str, ...]
    s: tuple[str, ...]
    reference: UtilityReference
    original_s: npt.NDArray[np.float64]
    groups: npt.NDArray[np.int64]

    @classmethod
    def build(
        cls,
        data: pd.DataFrame,
        domain: TableDomain,
        *,
        q: Sequence[str],
        s: Sequence[str],
        label: str,
        folds: int,
        rng: np.random.Generator,
    ) -> CandidateScorer:
        """Encode the original, draw its folds from ``rng`` and cross-validate it.

        Parameters
        ----------
        data : pandas.DataFrame
            The original records (not modified), with the columns of ``q`` and ``s``.
        domain : TableDomain
            Public domain of every column of ``q`` and ``s``.
        q, s : sequence of str
            The exact and the synthesized columns; ``label`` is one of them.
        label : str
            The class column.
        folds : int
            Number of folds, in ``[2, len(data)]``.
        rng : numpy.random.Generator
            Source of the folds (:mod:`veil.rng`).
        """
        features = tuple(c for c in (*q, *s) if c != label)
        labels = domain.encode(data, [label])[label]
        reference = UtilityReference.build(
            record_vectors(data, domain, features), labels, folds, rng
        )
        return cls(
            domain,
            label,
            features,
            tuple(s),
            reference,
            record_vectors(data, domain, s),
            similarity_groups(data, q),
        )

    def score(self, candidate: pd.DataFrame) -> Scores:
        """The candidate's counts; row ``i`` of ``candidate`` stands for record ``i``."""
        features = record_vectors(candidate, self.domain, self.features)
        labels = self.domain.encode(candidate, [self.label])[self.label]
        correct = candidate_correct(self.reference, features, labels)
        perturbed = record_vectors(candidate, self.domain, self.s)
        linked = linkable_records(self.original_s, perturbed, self.groups)
        return Scores(correct, int(np.count_nonzero(linked)))
