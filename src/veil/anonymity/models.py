"""Privacy models for the lattice search: class-level checks on integer-coded classes.

Each model decides, class by class, whether an equivalence class may be released; the
search (:mod:`veil.anonymity.search`) suppresses every record of a class that some model
rejects and accepts a transformation when the suppressed share stays within the limit.
The checks follow ARX's criteria [1]_ and the models' papers.

A model that needs to know the sensitive attribute's values themselves (hierarchical
t-closeness maps them onto a hierarchy) receives them once per search, before any class
is checked, through :meth:`PrivacyModel._prepare`.

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
import pandas as pd

from veil.anonymity.hierarchy import Hierarchy
from veil.errors import DataTypeError, ParameterError, VeilError

__all__ = [
    "AlphaKAnonymity",
    "BasicBetaLikeness",
    "DeltaDisclosure",
    "DistinctLDiversity",
    "EnhancedBetaLikeness",
    "EntropyLDiversity",
    "KAnonymity",
    "PrivacyModel",
    "RecursiveCLDiversity",
    "TCloseness",
]

_MAX_LISTED = 20
_DISTANCES = ("equal", "ordered", "hierarchical")

# Cells of a dense (class x value) block in the ordered-distance EMD (about 80 MB).
_BLOCK_CELLS = 10_000_000

#: Slack of t-closeness's test: a class is within t when its EMD is at most t plus this.
_T_TOLERANCE = 1e-12
#: Rounding allowance on EMDs and entropies in the floors on a refinement's suppression
#: (t-closeness, entropy l-diversity).
_FLOOR_MARGIN = 1e-9

#: Largest class size :meth:`TCloseness._minimum_size` tries.
_SIZE_SEARCH_LIMIT = 1000

_Ints = npt.NDArray[np.int64]
_Bools = npt.NDArray[np.bool_]
_Floats = npt.NDArray[np.float64]


class _PairCounts:
    """Record counts of the distinct (class, value) pairs of a table.

    Either three arrays listing the pairs present (``cls``, ``value``, ``count``, in
    any order), or a dense (values x classes) matrix of counts, ``dense``, from which
    those arrays are derived on first use (by value, then class). A roll-up sums the
    counts into that matrix anyway; the models that can read it (equal-distance
    t-closeness, distinct l-diversity) then need no arrays, and a table rolled up no
    further never builds them. Value-major, so that a per-class sum adds whole rows.
    """

    __slots__ = ("_arrays", "_present", "dense", "rows")

    def __init__(
        self,
        arrays: tuple[_Ints, _Ints, _Ints] | None = None,
        dense: _Floats | None = None,
    ) -> None:
        self._arrays = arrays
        self.dense = dense
        self._present: _Bools | None = None
        if arrays is not None:
            self.rows = len(arrays[2])
        else:
            assert dense is not None
            self._present = dense > 0  # counts are >= 0
            self.rows = int(np.count_nonzero(self._present))

    @property
    def arrays(self) -> tuple[_Ints, _Ints, _Ints]:
        """(class, value, count) of each pair present."""
        if self._arrays is None:
            assert self.dense is not None and self._present is not None
            keys = np.flatnonzero(self._present)
            value, cls = np.divmod(keys, self.dense.shape[1])
            self._arrays = (cls, value, self.dense.reshape(-1)[keys].astype(np.int64))
            self._present = None
        return self._arrays


@dataclass(frozen=True)
class _Pairs:
    """(class, sensitive value) pairs of one attribute with their record counts."""

    counts: _PairCounts
    n_values: int
    prior: _Floats  # table-wide share of each value code (ordered codes when ordered)

    @property
    def cls(self) -> _Ints:
        return self.counts.arrays[0]

    @property
    def value(self) -> _Ints:
        return self.counts.arrays[1]

    @property
    def count(self) -> _Ints:
        return self.counts.arrays[2]

    @property
    def dense(self) -> _Floats | None:
        """The (classes x values) count matrix, when the pairs were summed into one."""
        return self.counts.dense


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


def _number(name: str, value: object, allowed: str) -> float:
    """``value`` as a float when it is a real number (not a bool), else ParameterError."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        raise ParameterError(f"{name} must be {allowed}, got {value!r}")
    return float(value)


def _positive_number(name: str, value: object) -> float:
    allowed = "a positive finite number"
    number = _number(name, value, allowed)
    if not (math.isfinite(number) and number > 0):
        raise ParameterError(f"{name} must be {allowed}, got {value!r}")
    return number


def _shares(classes: _Classes, attribute: str | None) -> tuple[_Pairs, _Floats, _Floats]:
    """The attribute's pairs with, per pair, the class share q and the table share p."""
    assert attribute is not None
    pairs = classes.pairs[attribute]
    return pairs, pairs.count / classes.sizes[pairs.cls], pairs.prior[pairs.value]


def _without(classes: _Classes, pairs: _Pairs, violating: _Bools) -> _Bools:
    """True for each class none of whose (class, value) pairs is ``violating``."""
    accepted: _Bools = np.bincount(pairs.cls[violating], minlength=classes.n_classes) == 0
    return accepted


def _dense_ids(key: _Ints, span: int) -> tuple[_Ints, _Ints]:
    """The distinct values of ``key`` (in [0, span)), sorted, and each entry's index in them.

    A lookup table when the span is small next to the keys (linear), else a sort.
    """
    if span <= 4 * len(key) + 4096:
        present = np.zeros(span, dtype=bool)
        present[key] = True
        lookup = np.cumsum(present, dtype=np.int64) - 1
        return np.flatnonzero(present).astype(np.int64), lookup[key]
    distinct, index = np.unique(key, return_inverse=True)
    return distinct.astype(np.int64), index.astype(np.int64).ravel()


def equal_distance_emd(n_classes: int, cls: _Ints, q: _Floats, p: _Floats) -> _Floats:
    """Per class, the EMD to the table with equal ground distance: 0.5 sum_v |Q - P|.

    ``cls``, ``q`` and ``p`` list the (class, value) pairs present: the class, the
    value's share in it and in the table. Absent values contribute P(v) each, 1 minus
    the present values' P in all.
    """
    difference = q - p
    np.abs(difference, out=difference)
    emd: _Floats = np.bincount(cls, weights=difference, minlength=n_classes).astype(
        np.float64, copy=False
    )
    absent = np.bincount(cls, weights=p, minlength=n_classes)
    np.subtract(1.0, absent, out=absent)  # the absent values' P, 1 - the present ones'
    np.maximum(absent, 0.0, out=absent)
    emd += absent
    emd *= 0.5
    return emd


def equal_distance_emd_dense(sizes: _Ints, counts: _Floats, p: _Floats) -> _Floats:
    """:func:`equal_distance_emd` from a dense (values x classes) matrix of counts.

    Per class c of ``sizes[c]`` records, 0.5 sum_v |counts[v, c] - sizes[c] P(v)| /
    sizes[c]: a few passes over the matrix, each over whole rows, instead of some
    fifteen over the pairs (the matrix is small when a roll-up built it).
    """
    size = sizes.astype(np.float64)
    difference = p[:, np.newaxis] * size
    np.subtract(counts, difference, out=difference)
    np.abs(difference, out=difference)
    emd: _Floats = np.add.reduce(difference, axis=0)
    emd /= size
    emd *= 0.5
    return emd


#: Relative distance to an integer under which an entropy l-diversity level is that
#: integer: a class spread evenly over l values has exp(H) = l only up to rounding.
ENTROPY_L_TOLERANCE = 1e-12


def class_entropy(n_classes: int, cls: _Ints, q: _Floats) -> _Floats:
    """Per class, the Shannon entropy (natural log) of its sensitive values.

    ``cls`` and ``q`` list the (class, value) pairs present, in any order: the class
    and the value's share in it. The terms are summed in one canonical order (by class,
    then share), so the same classes give the same bits whatever order their pairs
    come in: the model and the table check agree exactly.
    """
    order = np.lexsort((q, cls))
    q = q[order]
    entropy = np.bincount(cls[order], weights=q * np.log(q), minlength=n_classes)
    return np.asarray(-entropy, dtype=np.float64)


def entropy_l(entropy: _Floats) -> _Floats:
    """The entropy l-diversity level exp(H) of each entropy, as the model and check see it.

    Within a relative :data:`ENTROPY_L_TOLERANCE` of an integer the level is that
    integer, so a class spread evenly over l values has level exactly l. The model
    (:class:`EntropyLDiversity`) and the table check
    (:func:`veil.anonymity.entropy_l_diversity`) both use this function: a class
    passes the model with ``l`` exactly when the check reports a level >= ``l``.
    """
    level = np.exp(np.asarray(entropy, dtype=np.float64))
    nearest = np.round(level)
    snapped: _Floats = np.where(
        np.abs(level - nearest) <= ENTROPY_L_TOLERANCE * nearest, nearest, level
    )
    return snapped


def ordered_distance_emd(
    n_classes: int, cls: _Ints, value: _Ints, q: _Floats, prior: _Floats
) -> _Floats:
    """Per class, the EMD with ordered distance: sum of |cumulative Q - P| / (m - 1).

    ``value`` codes are values in ascending order; ``prior`` their table shares. The m
    values are those of positive share (a value no record of the reference table holds
    is not one of its values); every pair's value must be one of them. Classes go in
    blocks so the dense (class x value) matrix stays within about 80 MB.
    """
    present = prior > 0
    if not present.all():
        value = (np.cumsum(present, dtype=np.int64) - 1)[value]
        prior = prior[present]
    m = len(prior)
    emd = np.zeros(n_classes)
    if m <= 1:
        return emd
    block = max(1, _BLOCK_CELLS // m)
    for start in range(0, n_classes, block):
        stop = min(start + block, n_classes)
        rows = (cls >= start) & (cls < stop)
        dense = np.bincount(
            (cls[rows] - start) * m + value[rows], weights=q[rows], minlength=(stop - start) * m
        ).reshape(stop - start, m)
        emd[start:stop] = np.abs(np.cumsum(dense - prior, axis=1)).sum(axis=1) / (m - 1)
    return emd


class PrivacyModel(ABC):
    """A privacy model checked class by class (ARX's ``PrivacyCriterion``)."""

    #: Sensitive attribute the model reads, or None for models on the QIs only.
    attribute: str | None = None

    #: Whether a class's verdict depends on the reference distribution of ``attribute``
    #: (the table's), which suppression changes: such models are checked again against
    #: the released records' distribution (see :func:`veil.anonymity.anonymize`).
    compares_distribution: bool = False

    #: Whether :meth:`_verdicts` gives a floor on what refinements suppress.
    floors_refinements: bool = False

    def monotone(self, suppression: bool) -> bool:
        """Whether generalizing a satisfying transformation keeps it satisfying.

        With ``suppression`` (a non-zero suppression limit) only k-anonymity and
        distinct l-diversity stay monotone: a merged class that violates them is made of
        classes that all violated them, so the suppressed set can only shrink.
        """
        return not suppression

    def _prepare(self, values: pd.Index) -> None:
        """Learn the sensitive attribute's values before a search; most models need not.

        The search calls it once per search with the sorted distinct values of
        ``attribute`` (missing last): position ``i`` is the value of code ``i`` in the
        classes' pairs. Raises if the model cannot handle some value.
        """
        return

    def _minimum_size(self, prior: _Floats) -> int:
        """A class size below which the model rejects every class (1: no such size).

        ``prior`` holds the table-wide share of each sensitive value code. The search
        suppresses classes smaller than this size as k-anonymity would: that part of
        the model is monotone even with suppression, so it prunes the lattice when the
        model itself is not monotone.
        """
        return 1

    @abstractmethod
    def _accepts(self, classes: _Classes) -> _Bools:
        """True for each class the model lets through unsuppressed."""

    def _verdicts(self, classes: _Classes) -> tuple[_Bools, _Floats | None]:
        """:meth:`_accepts`, and per class a floor on what any refinement suppresses.

        The floor is a share of the class's records that every finer node (one that
        splits the class into parts) suppresses, whatever the split: the parts this
        model rejects hold at least that share. None when the model knows no floor
        beyond its monotone part (a model monotone with suppression rejects every part
        of a class it rejects: the search counts that class whole).
        """
        return self._accepts(classes), None


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

    def _minimum_size(self, prior: _Floats) -> int:
        return self.k

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

    def _minimum_size(self, prior: _Floats) -> int:
        return self.l  # l distinct values need l records

    def monotone(self, suppression: bool) -> bool:
        return True

    def _accepts(self, classes: _Classes) -> _Bools:
        assert self.attribute is not None
        pairs = classes.pairs[self.attribute]
        if pairs.dense is not None:
            distinct = np.count_nonzero(pairs.dense > 0, axis=0)
        else:
            distinct = np.bincount(pairs.cls, minlength=classes.n_classes)
        accepted: _Bools = distinct >= self.l
        return accepted


class EntropyLDiversity(PrivacyModel):
    """Entropy l-diversity: every released class has sensitive entropy >= log(l).

    Machanavajjhala et al. (2007); ARX ``EntropyLDiversity`` (base 2, the same test).
    A class is accepted exactly when :func:`veil.anonymity.entropy_l_diversity` of the
    class reports a level >= ``l``: both compare :func:`entropy_l` (exp(H), snapped to
    an integer within a relative 1e-12), so a class spread evenly over ``l`` values
    passes.

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

    def _minimum_size(self, prior: _Floats) -> int:
        # d values give an entropy of at most log(d): log(d) >= log(l) needs d >= l.
        return max(1, math.ceil(self.l - 1e-9))

    floors_refinements = True

    def _entropy(self, classes: _Classes) -> _Floats:
        assert self.attribute is not None
        pairs = classes.pairs[self.attribute]
        q = pairs.count / classes.sizes[pairs.cls]
        return class_entropy(classes.n_classes, pairs.cls, q)

    def _accepts(self, classes: _Classes) -> _Bools:
        accepted: _Bools = entropy_l(self._entropy(classes)) >= self.l
        return accepted

    def _verdicts(self, classes: _Classes) -> tuple[_Bools, _Floats | None]:
        """The classes of entropy l or more, and per class what every refinement suppresses.

        Entropy is concave in the class's distribution: a class of entropy H split into
        parts of shares w_i and entropies H_i has H >= sum w_i H_i. The accepted parts
        have H_i >= log l and the others H_i >= 0, so H >= (1 - W) log l: every split
        suppresses at least a share 1 - H / log l of the class (see
        :meth:`TCloseness._verdicts` for how the search uses it).
        """
        entropy = self._entropy(classes)
        accepted: _Bools = entropy_l(entropy) >= self.l
        least = math.log(self.l) - _FLOOR_MARGIN  # an accepted part's entropy, at least
        if least <= _FLOOR_MARGIN:
            return accepted, None
        floor: _Floats = np.clip(1.0 - (entropy + _FLOOR_MARGIN) / least, 0.0, 1.0)
        return accepted, floor


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
        At least 2, as :func:`veil.anonymity.recursive_c_l_diversity` requires: with
        l = 1 the tail r_1 + ... + r_m holds r_1 and the test says nothing.

    Raises
    ------
    ParameterError
        For a ``c`` that is not a positive number or an ``l`` that is not an integer
        >= 2.
    """

    def __init__(self, attribute: str, c: float, l: int) -> None:  # noqa: E741
        self.attribute = _attribute(attribute)
        if (
            isinstance(c, (bool, np.bool_))
            or not isinstance(c, (int, float, np.integer, np.floating))
            or not c > 0
            or not math.isfinite(c)
        ):
            raise ParameterError(f"c must be a positive finite number, got {c!r}")
        self.c = float(c)
        if isinstance(l, bool) or not isinstance(l, (int, np.integer)) or l < 2:
            raise ParameterError(
                f"l must be an integer >= 2 for recursive (c, l)-diversity (the table "
                f"check recursive_c_l_diversity needs l >= 2 too), got {l!r}"
            )
        self.l = int(l)

    def __repr__(self) -> str:
        return f"RecursiveCLDiversity({self.attribute!r}, {self.c:g}, {self.l})"

    def _minimum_size(self, prior: _Floats) -> int:
        # With fewer than l values the tail r_l + ... + r_m is empty: r_1 < 0 fails.
        return self.l

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

    A class E is released when EMD(Q_E, P) <= t, Q_E the sensitive distribution in E and
    P the reference distribution (below), with the Earth Mover's Distance of Li, Li and
    Venkatasubramanian [1]_ and ARX's ground distances [2]_:

    * ``"equal"`` (ARX ``EqualDistanceTCloseness``): every two values are at distance
      1, and EMD = 0.5 sum_v |Q_E(v) - P(v)|;
    * ``"ordered"`` (ARX ``OrderedDistanceTCloseness``): the m values, sorted, are at
      distance |i - j| / (m - 1), and EMD = sum_i |sum_{j <= i} (Q_E(v_j) - P(v_j))| /
      (m - 1);
    * ``"hierarchical"`` (ARX ``HierarchicalDistanceTCloseness``): two values are at
      distance level(N) / H, N their lowest common ancestor in ``hierarchy`` and H its
      height (``hierarchy.levels - 1``). The EMD is computed bottom-up as in [1]_: a
      leaf v has extra(v) = P(v) - Q_E(v); an inner node N has pos(N), the sum of its
      children's positive extras, neg(N), the sum of the absolute values of their
      negative extras, and extra(N) = pos(N) - neg(N); then EMD = sum over inner
      nodes N of level(N) / H * min(pos(N), neg(N)). Every leaf of a hierarchy is at
      level 0, so a node's level is the height of its subtree, the paper's height(N).
      A hierarchy of one level under ``*`` gives the equal distance.

    P is the reference distribution: by default the released records' (the search
    checks again after suppression, so the released table passes the table check);
    the whole input's with ``reference="input"`` (ARX's semantics), see
    :func:`veil.anonymity.anonymize`.

    Parameters
    ----------
    attribute : str
        The sensitive column.
    t : float
        In [0, 1].
    distance : {"equal", "ordered", "hierarchical"}
        Ground distance; ``"ordered"`` sorts the attribute's values (numbers
        numerically, anything else as text).
    hierarchy : Hierarchy, optional
        With ``distance="hierarchical"`` only, and then required: a hierarchy whose
        level-0 values cover every value of ``attribute`` (compared as ``str()``, as
        :meth:`Hierarchy.encode` does; a missing value is ``"nan"``).

    Raises
    ------
    ParameterError
        For a ``t`` outside [0, 1], an unknown ``distance``, a missing or superfluous
        ``hierarchy``; and, when the search starts, if ``hierarchy`` does not cover
        every value of the column (the uncovered values are listed).
    DataTypeError
        If ``hierarchy`` is not a :class:`~veil.anonymity.Hierarchy`.

    Notes
    -----
    With a hierarchy the model maps the column's values onto it at the start of each
    search; one instance should not serve two searches running at the same time.

    References
    ----------
    .. [1] N. Li, T. Li, S. Venkatasubramanian, "t-closeness: privacy beyond
       k-anonymity and l-diversity", ICDE 2007.
    .. [2] F. Prasser, F. Kohlmayer, "Putting Statistical Disclosure Control into
       Practice: The ARX Data Anonymization Tool", in Medical Data Privacy Handbook,
       Springer, 2015.
    """

    def __init__(
        self,
        attribute: str,
        t: float,
        distance: str = "equal",
        hierarchy: Hierarchy | None = None,
    ) -> None:
        self.attribute = _attribute(attribute)
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t <= 1:
            raise ParameterError(f"t must be a number in [0, 1], got {t!r}")
        if distance not in _DISTANCES:
            raise ParameterError(f"distance must be one of {_DISTANCES}, got {distance!r}")
        if distance == "hierarchical":
            if hierarchy is None:
                raise ParameterError(
                    'distance="hierarchical" needs hierarchy=, a Hierarchy of the '
                    f"sensitive attribute {attribute!r}; got none"
                )
            if not isinstance(hierarchy, Hierarchy):
                raise DataTypeError(
                    f"hierarchy must be a Hierarchy, got {type(hierarchy).__name__}"
                )
        elif hierarchy is not None:
            raise ParameterError(
                f'hierarchy is only used with distance="hierarchical", got distance={distance!r}'
            )
        self.t = float(t)
        self.distance = distance
        self.hierarchy = hierarchy
        # Set by _prepare: per level, the group of each value code, and per level L >= 1
        # the parent (level L) of each level L - 1 group; groups are dense ids.
        self._groups: tuple[_Ints, ...] | None = None
        self._parents: tuple[_Ints, ...] = ()

    def __repr__(self) -> str:
        extra = "" if self.hierarchy is None else f", hierarchy={self.hierarchy!r}"
        return f"TCloseness({self.attribute!r}, {self.t:g}, distance={self.distance!r}{extra})"

    compares_distribution = True
    floors_refinements = True

    def _minimum_size(self, prior: _Floats) -> int:
        """The least class size whose closest distribution to ``prior`` is within t.

        Equal distance only: a class of s records has shares n_v / s, and
        0.5 sum |n_v / s - P(v)| is least with n_v rounded from s P(v), up for the
        largest fractional parts (largest remainders). Other distances return 1.
        """
        if self.distance != "equal" or len(prior) == 0:
            return 1
        for size in range(1, _SIZE_SEARCH_LIMIT + 1):
            exact = size * prior
            low = np.floor(exact)
            fraction = exact - low
            extra = round(size - low.sum())
            # Rounding up the `extra` largest fractions costs (1 - f), the rest f.
            order = np.sort(fraction)
            cost = order[: len(order) - extra].sum() + (1.0 - order[len(order) - extra :]).sum()
            if 0.5 * cost / size <= self.t + _T_TOLERANCE:
                return size
        return _SIZE_SEARCH_LIMIT + 1

    def monotone(self, suppression: bool) -> bool:
        # Without suppression: a merged class's Q is the size-weighted mean of its
        # parts' and the EMD (a transport problem's optimum) is convex in Q, so it stays
        # within t (Li et al.'s generalization property). With suppression, a merged
        # class can exceed t because of one part and take the other part's records.
        return not suppression

    def _prepare(self, values: pd.Index) -> None:
        if self.hierarchy is None:
            return
        h = self.hierarchy
        keys = pd.Index([str(x) for x in values.tolist()], dtype=object)
        leaf = pd.Index(h.values, dtype=object).get_indexer(keys)
        absent = leaf < 0
        if absent.any():
            uncovered = sorted(keys[absent].tolist())
            listed = ", ".join(repr(x) for x in uncovered[:_MAX_LISTED])
            if len(uncovered) > _MAX_LISTED:
                listed += f", ... ({len(uncovered)} in all)"
            raise ParameterError(
                f"hierarchy of TCloseness({self.attribute!r}) does not cover "
                f"{len(uncovered)} value(s) of column {self.attribute!r}: {listed}; its "
                "level-0 values must include every value of the column"
            )
        groups = []
        for level in range(h.levels):
            _, dense = np.unique(h.codes(level)[leaf], return_inverse=True)
            groups.append(dense.astype(np.int64).ravel())
        parents = []
        for level in range(1, h.levels):
            parent = np.zeros(int(groups[level - 1].max()) + 1, dtype=np.int64)
            parent[groups[level - 1]] = groups[level]
            parents.append(parent)
        self._groups = tuple(groups)
        self._parents = tuple(parents)

    def _emd(self, classes: _Classes) -> _Floats:
        """Per class, its EMD to the reference distribution."""
        assert self.attribute is not None
        dense = classes.pairs[self.attribute].dense
        if self.distance == "equal" and dense is not None:
            prior = classes.pairs[self.attribute].prior
            return equal_distance_emd_dense(classes.sizes, dense, prior)
        pairs, q, p = _shares(classes, self.attribute)
        if self.distance == "equal":
            return equal_distance_emd(classes.n_classes, pairs.cls, q, p)
        if self.distance == "ordered":
            return self._ordered(classes, pairs, q)
        return self._hierarchical(classes, pairs, q)

    def _accepts(self, classes: _Classes) -> _Bools:
        accepted: _Bools = self._emd(classes) <= self.t + _T_TOLERANCE
        return accepted

    def _verdicts(self, classes: _Classes) -> tuple[_Bools, _Floats | None]:
        """The classes within t, and per class the share every refinement suppresses.

        A class of EMD e split into parts of shares w_i and EMDs e_i has e <= sum w_i
        e_i: the EMD, a transport problem's optimum, is convex in the class's
        distribution. The parts within t (e_i <= t) and the rejected ones (e_i <= 1)
        then give e <= t + (1 - t) W, W the rejected parts' share: every refinement
        suppresses at least (e - t) / (1 - t) of the class. Summed over a node's
        classes this is a floor on the suppressed records of every finer node, so a
        node whose floor exceeds the suppression limit settles its whole down-set.
        Against the input's distribution, that is the first check; the check against
        the released records' only suppresses more.
        """
        emd = self._emd(classes)
        limit = self.t + _T_TOLERANCE
        accepted: _Bools = emd <= limit
        if limit >= 1.0:
            return accepted, None
        floor: _Floats = np.clip((emd - limit - _FLOOR_MARGIN) / (1.0 - limit), 0.0, 1.0)
        return accepted, floor

    @staticmethod
    def _ordered(classes: _Classes, pairs: _Pairs, q: _Floats) -> _Floats:
        return ordered_distance_emd(classes.n_classes, pairs.cls, pairs.value, q, pairs.prior)

    def _hierarchical(self, classes: _Classes, pairs: _Pairs, q: _Floats) -> _Floats:
        if self._groups is None or len(self._groups[0]) != pairs.n_values:
            raise VeilError(
                f"{self!r} was not prepared for this column's {pairs.n_values} values; "
                "use it through veil.anonymity.anonymize or evaluate"
            )
        height = len(self._parents)
        emd = np.zeros(classes.n_classes)
        # Rows are the (class, node) pairs whose node holds some of the class's records,
        # with Q_E(node) in `mass`. A child holding none of them has extra = P(child)
        # >= 0: together such children add P(parent) - (the present children's P) to pos.
        cls: _Ints = pairs.cls
        node: _Ints = self._groups[0][pairs.value]
        mass: _Floats = q
        for level in range(1, height + 1):
            p_child = np.bincount(self._groups[level - 1], weights=pairs.prior)[node]
            p_parent = np.bincount(self._groups[level], weights=pairs.prior)
            n_parents = len(p_parent)
            extra = p_child - mass
            keys, row = _dense_ids(
                cls * n_parents + self._parents[level - 1][node], classes.n_classes * n_parents
            )
            parent = keys % n_parents
            absent_p = np.maximum(p_parent[parent] - np.bincount(row, weights=p_child), 0.0)
            pos = np.bincount(row, weights=np.maximum(extra, 0.0)) + absent_p
            neg = np.bincount(row, weights=np.maximum(-extra, 0.0))
            cls = keys // n_parents
            emd += (level / height) * np.bincount(
                cls, weights=np.minimum(pos, neg), minlength=classes.n_classes
            )
            node = parent
            mass = np.bincount(row, weights=mass).astype(np.float64)
        return emd


class DeltaDisclosure(PrivacyModel):
    """delta-disclosure privacy: no released class shifts a value's odds by 2**delta.

    A class E is released when |log2(Q_E(v) / P(v))| < delta for every sensitive value v
    present in E, Q_E(v) its share in E and P(v) in the reference (Brickell & Shmatikov
    [1]_; ARX ``DDisclosurePrivacy`` [2]_, whose test is strict and skips the values
    absent from E: the paper's definition over every value would reject any class
    lacking one). delta is in bits, as in ARX: :func:`veil.anonymity.delta_disclosure`
    reports the table's delta in natural-log units (pyCANON's convention), so a table
    satisfies ``DeltaDisclosure(a, d)`` as it is when that value is below
    ``d * ln 2``.

    P is the reference distribution: by default the released records' (the search
    checks again after suppression, so the released table passes the table check);
    the whole input's with ``reference="input"`` (ARX's semantics), see
    :func:`veil.anonymity.anonymize`.

    Not monotone, with or without suppression (ARX): merging classes makes a value
    present in a class where it is rare, which can break the lower bound.

    Parameters
    ----------
    attribute : str
        The sensitive column.
    delta : float
        Positive and finite, in bits (log base 2).

    References
    ----------
    .. [1] J. Brickell, V. Shmatikov, "The cost of privacy: destruction of data-mining
       utility in anonymized data publishing", KDD 2008.
    .. [2] F. Prasser, F. Kohlmayer, "Putting Statistical Disclosure Control into
       Practice: The ARX Data Anonymization Tool", in Medical Data Privacy Handbook,
       Springer, 2015.
    """

    compares_distribution = True

    def __init__(self, attribute: str, delta: float) -> None:
        self.attribute = _attribute(attribute)
        self.delta = _positive_number("delta", delta)

    def __repr__(self) -> str:
        return f"DeltaDisclosure({self.attribute!r}, {self.delta:g})"

    def monotone(self, suppression: bool) -> bool:
        # ARX DDisclosurePrivacy: monotone neither way. A merged class can hold a value
        # at a share far below P(v) that none of its parts held at all.
        return False

    def _accepts(self, classes: _Classes) -> _Bools:
        pairs, q, p = _shares(classes, self.attribute)
        return _without(classes, pairs, np.abs(np.log2(q / p)) >= self.delta)


class _BetaLikeness(PrivacyModel):
    """What basic and enhanced beta-likeness share: parameters, size bound, monotonicity."""

    compares_distribution = True

    def __init__(self, attribute: str, beta: float) -> None:
        self.attribute = _attribute(attribute)
        self.beta = _positive_number("beta", beta)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.attribute!r}, {self.beta:g})"

    def _minimum_size(self, prior: _Floats) -> int:
        # Every value present in a class of s records has a share >= 1 / s, which must
        # stay within P(v) (1 + beta) <= max P (1 + beta) (enhanced: a lower bound still).
        top = float(prior.max()) if len(prior) else 1.0
        return max(1, math.ceil(1.0 / (top * (1.0 + self.beta)) - 1e-9))

    def monotone(self, suppression: bool) -> bool:
        # ARX Basic/EnhancedBLikeness: monotone with generalization, not with suppression.
        return not suppression


class BasicBetaLikeness(_BetaLikeness):
    """Basic beta-likeness: no released class raises a value's share by more than beta.

    A class E is released when (Q_E(v) - P(v)) / P(v) <= beta for every sensitive value
    v with Q_E(v) > P(v), Q_E(v) its share in E and P(v) in the reference (Cao & Karras
    [1]_, Definition 2; ARX ``BasicBLikeness``). The same as
    :func:`veil.anonymity.basic_beta_likeness` of the table <= beta.

    P is the reference distribution: by default the released records' (the search
    checks again after suppression, so the released table passes the table check);
    the whole input's with ``reference="input"`` (ARX's semantics), see
    :func:`veil.anonymity.anonymize`.

    Monotone without suppression (ARX): a merged class's shares are averages of its
    parts', so they stay under P(v) (1 + beta); not with suppression.

    Parameters
    ----------
    attribute : str
        The sensitive column.
    beta : float
        Positive and finite.

    References
    ----------
    .. [1] J. Cao, P. Karras, "Publishing microdata with a robust privacy guarantee",
       PVLDB 5(11), 2012.
    """

    def _accepts(self, classes: _Classes) -> _Bools:
        pairs, q, p = _shares(classes, self.attribute)
        return _without(classes, pairs, (q - p) / p > self.beta)


class EnhancedBetaLikeness(_BetaLikeness):
    """Enhanced beta-likeness: basic beta-likeness with a tighter bound for common values.

    A class E is released when (Q_E(v) - P(v)) / P(v) <= min(beta, -ln P(v)) for every
    sensitive value v with Q_E(v) > P(v) (Cao & Karras [1]_, Definition 3; ARX
    ``EnhancedBLikeness``): a value already frequent in the table may not become
    (nearly) certain in a class. The same as
    :func:`veil.anonymity.enhanced_beta_likeness` of the table <= beta.

    P is the reference distribution: by default the released records' (the search
    checks again after suppression, so the released table passes the table check);
    the whole input's with ``reference="input"`` (ARX's semantics), see
    :func:`veil.anonymity.anonymize`.

    Monotone without suppression (ARX), for the reason given in
    :class:`BasicBetaLikeness`; not with suppression.

    Parameters
    ----------
    attribute : str
        The sensitive column.
    beta : float
        Positive and finite.

    References
    ----------
    .. [1] J. Cao, P. Karras, "Publishing microdata with a robust privacy guarantee",
       PVLDB 5(11), 2012.
    """

    def _accepts(self, classes: _Classes) -> _Bools:
        pairs, q, p = _shares(classes, self.attribute)
        return _without(classes, pairs, (q - p) / p > np.minimum(self.beta, -np.log(p)))


class AlphaKAnonymity(PrivacyModel):
    """(alpha, k)-anonymity: classes of at least k records, no value above share alpha.

    A class E is released when |E| >= k and count(E, v) / |E| <= alpha for every
    sensitive value v (Wong et al. [1]_, Definition 2). ARX has no such criterion; it is
    :class:`KAnonymity` with a bound on each value's share. The same as
    :func:`veil.anonymity.alpha_k_anonymity` reporting an alpha <= ``alpha`` and a
    k >= ``k``.

    Monotone without suppression (a merged class's shares are averages of its parts');
    not with suppression: a merged class can exceed alpha because of one part only, and
    the other part's records are then suppressed too.

    Parameters
    ----------
    attribute : str
        The sensitive column.
    alpha : float
        In (0, 1].
    k : int
        At least 1.

    References
    ----------
    .. [1] R. C.-W. Wong, J. Li, A. W.-C. Fu, K. Wang, "(alpha, k)-anonymity: an
       enhanced k-anonymity model for privacy preserving data publishing", KDD 2006.
    """

    def __init__(self, attribute: str, alpha: float, k: int) -> None:
        self.attribute = _attribute(attribute)
        allowed = "a number in (0, 1]"
        number = _number("alpha", alpha, allowed)
        if not 0 < number <= 1:
            raise ParameterError(f"alpha must be {allowed}, got {alpha!r}")
        self.alpha = number
        self.k = _positive_int("k", k, 1)

    def __repr__(self) -> str:
        return f"AlphaKAnonymity({self.attribute!r}, {self.alpha:g}, {self.k})"

    def _minimum_size(self, prior: _Floats) -> int:
        # In a class of s records some value has a share >= 1 / s.
        return max(self.k, math.ceil(1.0 / self.alpha - 1e-9))

    def monotone(self, suppression: bool) -> bool:
        # Shares average and sizes add when classes merge; see the class docstring for
        # the counterexample with suppression.
        return not suppression

    def _accepts(self, classes: _Classes) -> _Bools:
        pairs, q, _ = _shares(classes, self.attribute)
        accepted: _Bools = _without(classes, pairs, q > self.alpha) & (classes.sizes >= self.k)
        return accepted
