"""Privacy models for the lattice search: class-level checks on integer-coded classes.

Each model decides, class by class, whether an equivalence class may be released; the
search (:mod:`veil.anonymity.search`) suppresses every record of a class that some model
rejects and accepts a transformation when the suppressed share stays within the limit.
The checks follow ARX's criteria [1]_ and the models' papers.

References
----------
.. [1] F. Prasser, F. Kohlmayer, "Putting Statistical Disclosure Control into Practice:
   The ARX Data Anonymization Tool", in Medical Data Privacy Handbook, Springer, 2015.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from veil.errors import ParameterError

__all__ = [
    "DistinctLDiversity",
    "EntropyLDiversity",
    "KAnonymity",
    "PrivacyModel",
    "RecursiveCLDiversity",
    "TCloseness",
]

_Ints = npt.NDArray[np.int64]
_Bools = npt.NDArray[np.bool_]
_Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class _Pairs:
    """(class, sensitive value) pairs of one attribute with their record counts."""

    cls: _Ints
    value: _Ints
    count: _Ints
    n_values: int
    prior: _Floats  # table-wide share of each value code (ordered codes when ordered)


@dataclass
class _Classes:
    """The equivalence classes of one transformation, as the models see them."""

    n_classes: int
    sizes: _Ints
    pairs: dict[str, _Pairs] = field(default_factory=dict)


def _positive_int(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ParameterError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _attribute(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise ParameterError(f"attribute must be a non-empty column name, got {value!r}")
    return value


class PrivacyModel(ABC):
    """A privacy model checked class by class (ARX's ``PrivacyCriterion``)."""

    #: Sensitive attribute the model reads, or None for models on the QIs only.
    attribute: str | None = None

    def monotone(self, suppression: bool) -> bool:
        """Whether generalizing a satisfying transformation keeps it satisfying.

        With ``suppression`` (a non-zero suppression limit) only k-anonymity and
        distinct l-diversity stay monotone: a merged class that violates them is made of
        classes that all violated them, so the suppressed set can only shrink.
        """
        return not suppression

    @abstractmethod
    def _accepts(self, classes: _Classes) -> _Bools:
        """True for each class the model lets through unsuppressed."""


class KAnonymity(PrivacyModel):
    """k-anonymity: every released class holds at least ``k`` records.

    Each released record is indistinguishable, on its quasi-identifiers, from at least
    ``k - 1`` others (Sweeney 2002).

    Parameters
    ----------
    k : int
        At least 1.
    """

    def __init__(self, k: int) -> None:
        self.k = _positive_int("k", k, 1)

    def __repr__(self) -> str:
        return f"KAnonymity({self.k})"

    def monotone(self, suppression: bool) -> bool:
        return True

    def _accepts(self, classes: _Classes) -> _Bools:
        return classes.sizes >= self.k


class DistinctLDiversity(PrivacyModel):
    """Distinct l-diversity: every released class holds ``l`` distinct sensitive values.

    Parameters
    ----------
    attribute : str
        The sensitive column.
    l : int
        At least 1.
    """

    def __init__(self, attribute: str, l: int) -> None:  # noqa: E741
        self.attribute = _attribute(attribute)
        self.l = _positive_int("l", l, 1)

    def __repr__(self) -> str:
        return f"DistinctLDiversity({self.attribute!r}, {self.l})"

    def monotone(self, suppression: bool) -> bool:
        return True

    def _accepts(self, classes: _Classes) -> _Bools:
        assert self.attribute is not None
        pairs = classes.pairs[self.attribute]
        distinct = np.bincount(pairs.cls, minlength=classes.n_classes)
        return distinct >= self.l


class EntropyLDiversity(PrivacyModel):
    """Entropy l-diversity: every released class has sensitive entropy >= log(l).

    Machanavajjhala et al. (2007); ARX ``EntropyLDiversity`` (base 2, the same test).

    Parameters
    ----------
    attribute : str
        The sensitive column.
    l : float
        At least 1.
    """

    def __init__(self, attribute: str, l: float) -> None:  # noqa: E741
        self.attribute = _attribute(attribute)
        if isinstance(l, bool) or not isinstance(l, (int, float)) or not l >= 1:
            raise ParameterError(f"l must be a number >= 1, got {l!r}")
        self.l = float(l)

    def __repr__(self) -> str:
        return f"EntropyLDiversity({self.attribute!r}, {self.l:g})"

    def _accepts(self, classes: _Classes) -> _Bools:
        assert self.attribute is not None
        pairs = classes.pairs[self.attribute]
        q = pairs.count / classes.sizes[pairs.cls]
        entropy = -np.bincount(pairs.cls, weights=q * np.log(q), minlength=classes.n_classes)
        # A tolerance so that a uniform class over exactly l values is accepted.
        return entropy >= math.log(self.l) - 1e-12


class RecursiveCLDiversity(PrivacyModel):
    """Recursive (c, l)-diversity: r_1 < c (r_l + ... + r_m) in every released class.

    r_1 >= r_2 >= ... are the class's sensitive-value counts in descending order
    (Machanavajjhala et al. 2007; ARX ``RecursiveCLDiversity``).

    Parameters
    ----------
    attribute : str
        The sensitive column.
    c : float
        Positive.
    l : int
        At least 1.
    """

    def __init__(self, attribute: str, c: float, l: int) -> None:  # noqa: E741
        self.attribute = _attribute(attribute)
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not c > 0:
            raise ParameterError(f"c must be a positive number, got {c!r}")
        self.c = float(c)
        self.l = _positive_int("l", l, 1)

    def __repr__(self) -> str:
        return f"RecursiveCLDiversity({self.attribute!r}, {self.c:g}, {self.l})"

    def _accepts(self, classes: _Classes) -> _Bools:
        assert self.attribute is not None
        pairs = classes.pairs[self.attribute]
        order = np.lexsort((-pairs.count, pairs.cls))
        cls, count = pairs.cls[order], pairs.count[order]
        starts = np.flatnonzero(np.r_[True, cls[1:] != cls[:-1]])
        rank = np.arange(len(cls)) - np.repeat(starts, np.diff(np.r_[starts, len(cls)]))
        first = np.zeros(classes.n_classes)
        first[cls[starts]] = count[starts]
        tail = np.bincount(
            cls, weights=np.where(rank >= self.l - 1, count, 0), minlength=classes.n_classes
        )
        return first < self.c * tail


class TCloseness(PrivacyModel):
    """t-closeness: each released class's sensitive distribution is within EMD ``t``.

    Earth Mover's Distance to the table's distribution (Li, Li, Venkatasubramanian
    2007) with ARX's ground distances: ``"equal"`` (0.5 sum |Q - P|) or ``"ordered"``
    (sum of the absolute cumulative differences over the m sorted values, / (m - 1)).

    Parameters
    ----------
    attribute : str
        The sensitive column.
    t : float
        In [0, 1].
    distance : {"equal", "ordered"}
        Ground distance; ``"ordered"`` sorts the attribute's values (numbers
        numerically, anything else as text).
    """

    def __init__(self, attribute: str, t: float, distance: str = "equal") -> None:
        self.attribute = _attribute(attribute)
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t <= 1:
            raise ParameterError(f"t must be a number in [0, 1], got {t!r}")
        if distance not in ("equal", "ordered"):
            raise ParameterError(f'distance must be "equal" or "ordered", got {distance!r}')
        self.t = float(t)
        self.distance = distance

    def __repr__(self) -> str:
        return f"TCloseness({self.attribute!r}, {self.t:g}, distance={self.distance!r})"

    def _accepts(self, classes: _Classes) -> _Bools:
        assert self.attribute is not None
        pairs = classes.pairs[self.attribute]
        q = pairs.count / classes.sizes[pairs.cls]
        m = pairs.n_values
        if self.distance == "equal":
            gap = np.bincount(
                pairs.cls, weights=np.abs(q - pairs.prior[pairs.value]), minlength=classes.n_classes
            )
            present = np.bincount(
                pairs.cls, weights=pairs.prior[pairs.value], minlength=classes.n_classes
            )
            emd = 0.5 * (gap + np.clip(1.0 - present, 0.0, None))
        elif m == 1:
            emd = np.zeros(classes.n_classes)
        else:
            dense = np.zeros((classes.n_classes, m))
            np.add.at(dense, (pairs.cls, pairs.value), q)
            emd = np.abs(np.cumsum(dense - pairs.prior, axis=1)).sum(axis=1) / (m - 1)
        accepted: _Bools = emd <= self.t + 1e-12
        return accepted
