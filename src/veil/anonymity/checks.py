"""Table-level privacy checks: the level of each privacy model a table achieves.

Each function takes a data frame, its quasi-identifiers (QIs) and, where the model needs
them, its sensitive attributes, and returns the strongest parameter of the model that
the table satisfies as it is (no transformation). Names, argument order and return
conventions follow pyCANON (``pycanon.anonymity``), so code written for it keeps
working; the definitions follow ARX (``org.deidentifier.arx.criteria``) and the papers
cited in each docstring.

Unlike pyCANON, the result never depends on the index (rows are grouped by position),
and a missing value in a QI or a sensitive attribute is a value of its own: records
with a missing QI form their own equivalence class instead of being dropped.

Several sensitive attributes (``gen=True``, the default) are checked over the same
equivalence classes and the weakest level is returned (the minimum of k, l; the
maximum of alpha, t, delta, beta). With ``gen=False`` each sensitive attribute is
checked with the other sensitive attributes added to the QIs, as in pyCANON.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Sequence
from typing import TypeAlias

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.anonymity.models import (
    class_entropy,
    entropy_l,
    equal_distance_emd,
    ordered_distance_emd,
)
from veil.classes import class_ids, value_codes
from veil.errors import ColumnError, DataTypeError, MissingValueError, ParameterError

__all__ = [
    "alpha_k_anonymity",
    "basic_beta_likeness",
    "delta_disclosure",
    "enhanced_beta_likeness",
    "entropy_l_diversity",
    "equivalence_classes",
    "k_anonymity",
    "l_diversity",
    "recursive_c_l_diversity",
    "t_closeness",
]

Columns: TypeAlias = "str | Sequence[str] | npt.NDArray[np.str_] | npt.NDArray[np.object_]"
_Codes: TypeAlias = npt.NDArray[np.int64]
_Floats: TypeAlias = npt.NDArray[np.float64]


# --------------------------------------------------------------------------- validation


def _column_list(df: pd.DataFrame, columns: Columns, name: str) -> list[str]:
    cols = [columns] if isinstance(columns, str) else [str(c) for c in list(columns)]
    if not cols:
        raise ParameterError(f"{name} must name at least one column, got an empty list")
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ColumnError(f"{name}: columns {missing} are not in the data frame")
    duplicated = [c for c in cols if isinstance(df[c], pd.DataFrame)]
    if duplicated:
        raise ColumnError(f"{name}: columns {duplicated} appear more than once in the data")
    return list(dict.fromkeys(cols))


def _validate(
    df: pd.DataFrame, quasi_ident: Columns, sens_att: Columns | None = None
) -> tuple[list[str], list[str]]:
    if not isinstance(df, pd.DataFrame):
        raise DataTypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    if len(df) == 0:
        raise ParameterError("df must hold at least one record, got an empty data frame")
    qi = _column_list(df, quasi_ident, "quasi_ident")
    if sens_att is None:
        return qi, []
    sa = _column_list(df, sens_att, "sens_att")
    overlap = [c for c in sa if c in qi]
    if overlap:
        raise ParameterError(
            f"sens_att {overlap} are also quasi-identifiers; a column is either a "
            "quasi-identifier or a sensitive attribute"
        )
    return qi, sa


# ------------------------------------------------------------------------ grouping core


def _classvalue_codes(df: pd.DataFrame, columns: list[str]) -> tuple[_Codes, int]:
    return class_ids((df[col] for col in columns), len(df))


def equivalence_classes(df: pd.DataFrame, quasi_ident: Columns) -> npt.NDArray[np.int64]:
    """Equivalence class of every record, as positional integer codes.

    Two records share a class when they agree on every quasi-identifier; a missing
    value is a value (two records missing the same QI and agreeing elsewhere share a
    class). Codes are ``0 .. n_classes - 1`` in order of first appearance and are
    aligned with the rows by position, whatever the index.

    Parameters
    ----------
    df : pandas.DataFrame
        The table; not modified.
    quasi_ident : str or sequence of str
        Quasi-identifier columns.

    Returns
    -------
    numpy.ndarray of int64
        One class code per row.

    Examples
    --------
    >>> df = pd.DataFrame({"a": [1, 2, 1, None]}, index=[7, 7, 3, 0])
    >>> equivalence_classes(df, ["a"]).tolist()
    [0, 1, 0, 2]
    """
    qi, _ = _validate(df, quasi_ident)
    return _classvalue_codes(df, qi)[0]


class _Pairs:
    """Counts of each (equivalence class, sensitive value) pair present in the table.

    ``cls``, ``val`` and ``count`` list the non-empty pairs, sorted by class; ``size``
    is the number of records per class, ``p`` the table-wide distribution of the
    sensitive value and ``q`` the within-class share of each pair.
    """

    def __init__(self, classes: _Codes, n_classes: int, values: _Codes, n_values: int):
        n = len(classes)
        keys, counts = np.unique(classes * n_values + values, return_counts=True)
        self.n_classes = n_classes
        self.n_values = n_values
        self.cls: _Codes = keys // n_values
        self.val: _Codes = keys % n_values
        self.count: _Codes = counts.astype(np.int64)
        self.size: _Codes = np.bincount(classes, minlength=n_classes).astype(np.int64)
        self.p: _Floats = np.bincount(values, minlength=n_values) / n
        self.q: _Floats = self.count / self.size[self.cls]
        self.p_pair: _Floats = self.p[self.val]


def _per_attribute(
    df: pd.DataFrame, qi: list[str], sa: list[str], gen: bool
) -> Iterator[tuple[str, _Codes, int]]:
    """Yield each sensitive attribute with the class codes it is checked against."""
    shared = _classvalue_codes(df, qi) if gen else None
    for i, att in enumerate(sa):
        classes, n_classes = (
            shared if shared is not None else _classvalue_codes(df, qi + sa[:i] + sa[i + 1 :])
        )
        yield att, classes, n_classes


def _pairs_per_attribute(
    df: pd.DataFrame, qi: list[str], sa: list[str], gen: bool
) -> Iterator[_Pairs]:
    for att, classes, n_classes in _per_attribute(df, qi, sa, gen):
        values, n_values = value_codes(df[att])
        yield _Pairs(classes, n_classes, values, n_values)


def _class_max(pairs: _Pairs, x: _Floats) -> _Floats:
    """Maximum of a per-pair quantity within each class (pairs are sorted by class)."""
    starts = np.flatnonzero(np.r_[True, pairs.cls[1:] != pairs.cls[:-1]])
    return np.maximum.reduceat(x, starts)


# ------------------------------------------------------------------------- the checks


def k_anonymity(df: pd.DataFrame, quasi_ident: Columns) -> int:
    """k for k-anonymity: the size of the smallest equivalence class.

    The table is k-anonymous: every record shares its QI values with at least k - 1
    others (Sweeney 2002). Missing QI values are a value; no record is dropped.

    Parameters
    ----------
    df : pandas.DataFrame
        The table; not modified. Any index.
    quasi_ident : str or sequence of str
        Quasi-identifier columns.

    Returns
    -------
    int
        k >= 1.

    References
    ----------
    L. Sweeney, "k-anonymity: a model for protecting privacy", IJUFKS 10(5), 2002.

    Examples
    --------
    >>> df = pd.DataFrame({"zip": [1, 1, 2, 2, 2], "age": [3, 3, 4, 4, 4]})
    >>> k_anonymity(df, ["zip", "age"])
    2
    """
    qi, _ = _validate(df, quasi_ident)
    classes, n_classes = _classvalue_codes(df, qi)
    return int(np.bincount(classes, minlength=n_classes).min())


def alpha_k_anonymity(
    df: pd.DataFrame, quasi_ident: Columns, sens_att: Columns, gen: bool = True
) -> tuple[float, int]:
    """alpha and k for (alpha, k)-anonymity.

    alpha = max over classes E and sensitive values v of count(E, v) / |E|: no
    sensitive value makes up more than a share alpha of any class; k is
    :func:`k_anonymity` over ``quasi_ident`` (Wong et al. 2006; ARX has no (alpha, k)
    criterion). With several sensitive attributes alpha is the maximum over them.

    Parameters
    ----------
    df : pandas.DataFrame
        The table; not modified. Any index.
    quasi_ident : str or sequence of str
        Quasi-identifier columns.
    sens_att : str or sequence of str
        Sensitive attributes; none may be a quasi-identifier.
    gen : bool, default True
        If False, each sensitive attribute is checked with the others added to the QIs.

    Returns
    -------
    tuple of (float, int)
        ``(alpha, k)`` with 0 < alpha <= 1.

    References
    ----------
    R. C.-W. Wong, J. Li, A. W.-C. Fu, K. Wang, "(alpha, k)-anonymity: an enhanced
    k-anonymity model for privacy preserving data publishing", KDD 2006.
    """
    qi, sa = _validate(df, quasi_ident, sens_att)
    alpha = max(
        float(_class_max(pairs, pairs.q).max()) for pairs in _pairs_per_attribute(df, qi, sa, gen)
    )
    return alpha, k_anonymity(df, qi)


def l_diversity(df: pd.DataFrame, quasi_ident: Columns, sens_att: Columns, gen: bool = True) -> int:
    """l for distinct l-diversity: the fewest distinct sensitive values in a class.

    Every equivalence class holds at least l distinct values of each sensitive
    attribute (Machanavajjhala et al. 2007; ARX ``DistinctLDiversity``). A missing
    sensitive value counts as one value.

    Parameters
    ----------
    df : pandas.DataFrame
        The table; not modified. Any index.
    quasi_ident : str or sequence of str
        Quasi-identifier columns.
    sens_att : str or sequence of str
        Sensitive attributes; the minimum over them is returned.
    gen : bool, default True
        If False, each sensitive attribute is checked with the others added to the QIs.

    Returns
    -------
    int
        l >= 1.

    References
    ----------
    A. Machanavajjhala, D. Kifer, J. Gehrke, M. Venkitasubramaniam, "l-diversity:
    privacy beyond k-anonymity", ACM TKDD 1(1), 2007.

    Examples
    --------
    >>> df = pd.DataFrame({"zip": [1, 1, 2, 2], "disease": ["a", "b", "a", "a"]})
    >>> l_diversity(df, ["zip"], ["disease"])
    1
    """
    qi, sa = _validate(df, quasi_ident, sens_att)
    return min(
        int(np.bincount(pairs.cls, minlength=pairs.n_classes).min())
        for pairs in _pairs_per_attribute(df, qi, sa, gen)
    )


def entropy_l_diversity(
    df: pd.DataFrame, quasi_ident: Columns, sens_att: Columns, gen: bool = True
) -> float:
    """l for entropy l-diversity: exp of the smallest class entropy, not rounded.

    The table is entropy l-diversity for l = min over classes E of
    exp(H(E)), H(E) = -sum_v q(E, v) ln q(E, v), q the within-class share of value v
    (Machanavajjhala et al. 2007). ARX ``EntropyLDiversity`` checks H(E) >= log2(l)
    with base-2 entropy, which is the same l. pyCANON truncates this l to an integer;
    here it is the real number, snapped to the nearest integer when within a relative
    1e-12 of it (so a class spread evenly over l values gives exactly l, whatever the
    rounding of exp and log). :class:`~veil.anonymity.EntropyLDiversity` uses the same
    function (:func:`veil.anonymity.models.entropy_l`): a table satisfies the model
    with l exactly when this check returns a value >= l.

    Parameters
    ----------
    df : pandas.DataFrame
        The table; not modified. Any index.
    quasi_ident : str or sequence of str
        Quasi-identifier columns.
    sens_att : str or sequence of str
        Sensitive attributes; the minimum over them is returned.
    gen : bool, default True
        If False, each sensitive attribute is checked with the others added to the QIs.

    Returns
    -------
    float
        l >= 1.

    References
    ----------
    A. Machanavajjhala, D. Kifer, J. Gehrke, M. Venkitasubramaniam, "l-diversity:
    privacy beyond k-anonymity", ACM TKDD 1(1), 2007.

    Examples
    --------
    >>> df = pd.DataFrame({"zip": [1, 1, 1], "disease": ["a", "a", "b"]})
    >>> round(entropy_l_diversity(df, ["zip"], ["disease"]), 4)
    1.8899
    """
    qi, sa = _validate(df, quasi_ident, sens_att)
    entropy = math.inf
    for pairs in _pairs_per_attribute(df, qi, sa, gen):
        h = class_entropy(pairs.n_classes, pairs.cls, pairs.q)
        entropy = min(entropy, float(h.min()))
    return float(entropy_l(np.array([entropy]))[0])


def recursive_c_l_diversity(
    df: pd.DataFrame,
    quasi_ident: Columns,
    sens_att: Columns,
    imp: bool = False,
    gen: bool = True,
    *,
    l: int | None = None,  # noqa: E741  (the name of the model's parameter)
) -> tuple[float, int]:
    """c and l for recursive (c, l)-diversity.

    With each class's counts sorted in *descending* order r_1 >= r_2 >= ... >= r_m, a
    class is recursive (c, l)-diverse when r_1 < c (r_l + r_{l+1} + ... + r_m)
    (Machanavajjhala et al. 2007; ARX ``RecursiveCLDiversity``). The returned c is the
    smallest integer for which every class satisfies this, floor(max_E r_1 / tail) + 1,
    pyCANON's convention; the table satisfies the model for any real c' > max_E r_1 /
    tail. pyCANON sorts the counts ascending, which is not the model.

    Parameters
    ----------
    df : pandas.DataFrame
        The table; not modified. Any index.
    quasi_ident : str or sequence of str
        Quasi-identifier columns.
    sens_att : str or sequence of str
        Sensitive attributes; the maximum c over them is returned.
    imp : bool, default False
        If True, warn when c cannot be computed (l < 2).
    gen : bool, default True
        If False, each sensitive attribute is checked with the others added to the QIs.
    l : int, optional
        The l to compute c for, at least 2. By default the table's distinct
        l-diversity (:func:`l_diversity`), as in pyCANON. A class with fewer than l
        distinct values satisfies no c: c is then ``inf``.

    Returns
    -------
    tuple of (float, int)
        ``(c, l)``; c is ``nan`` when l < 2 (the model needs l >= 2).

    References
    ----------
    A. Machanavajjhala, D. Kifer, J. Gehrke, M. Venkitasubramaniam, "l-diversity:
    privacy beyond k-anonymity", ACM TKDD 1(1), 2007.
    """
    qi, sa = _validate(df, quasi_ident, sens_att)
    if l is None:
        l_used = l_diversity(df, qi, sa, gen)
    elif isinstance(l, (int, np.integer)) and not isinstance(l, bool) and l >= 2:
        l_used = int(l)
    else:
        raise ParameterError(f"l must be an integer >= 2, got {l!r}")
    if l_used < 2:
        if imp:
            warnings.warn(
                f"c for recursive (c, l)-diversity cannot be computed: l = {l_used} < 2",
                UserWarning,
                stacklevel=2,
            )
        return math.nan, l_used
    c = 0.0
    for pairs in _pairs_per_attribute(df, qi, sa, gen):
        # Rank each pair within its class by descending count (0 = most frequent).
        order = np.lexsort((-pairs.count, pairs.cls))
        cls, count = pairs.cls[order], pairs.count[order]
        starts = np.flatnonzero(np.r_[True, cls[1:] != cls[:-1]])
        rank = np.arange(len(cls)) - np.repeat(starts, np.diff(np.r_[starts, len(cls)]))
        r1 = count[starts]
        tail = np.bincount(
            cls, weights=np.where(rank >= l_used - 1, count, 0), minlength=pairs.n_classes
        )
        if np.any(tail == 0):
            return math.inf, l_used
        c = max(c, float(np.floor((r1 / tail).max()) + 1))
    return c, l_used


def t_closeness(
    df: pd.DataFrame, quasi_ident: Columns, sens_att: Columns, gen: bool = True
) -> float:
    """t for t-closeness: the largest Earth Mover's Distance of a class to the table.

    t = max over classes E of EMD(Q_E, P), P the table-wide distribution of the
    sensitive value and Q_E its distribution in E (Li, Li, Venkatasubramanian 2007),
    with the ground distance of ARX:

    * numeric attributes (not boolean) — ordered distance (ARX
      ``OrderedDistanceTCloseness``): over the m distinct values of the table in
      ascending order, EMD = sum_i |sum_{j <= i} (Q_E(v_j) - P(v_j))| / (m - 1)
      (0 when m = 1);
    * any other attribute — equal distance (ARX ``EqualDistanceTCloseness``):
      EMD = 0.5 sum_v |Q_E(v) - P(v)|.

    ARX's hierarchical distance needs a generalization hierarchy and is not offered.

    Parameters
    ----------
    df : pandas.DataFrame
        The table; not modified. Any index.
    quasi_ident : str or sequence of str
        Quasi-identifier columns.
    sens_att : str or sequence of str
        Sensitive attributes; the maximum over them is returned.
    gen : bool, default True
        If False, each sensitive attribute is checked with the others added to the QIs.

    Returns
    -------
    float
        0 <= t <= 1.

    Raises
    ------
    MissingValueError
        If a numeric sensitive attribute has missing values (they have no order).

    References
    ----------
    N. Li, T. Li, S. Venkatasubramanian, "t-closeness: privacy beyond k-anonymity and
    l-diversity", ICDE 2007.

    Examples
    --------
    >>> df = pd.DataFrame({"zip": [1, 1, 2, 2], "disease": ["a", "b", "a", "a"]})
    >>> t_closeness(df, ["zip"], ["disease"])
    0.25
    """
    qi, sa = _validate(df, quasi_ident, sens_att)
    t = 0.0
    for att, classes, n_classes in _per_attribute(df, qi, sa, gen):
        column = df[att]
        if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
            if column.isna().any():
                raise MissingValueError(
                    f"sens_att {att!r} is numeric and has missing values; the ordered "
                    "distance of t-closeness needs every value to be ordered"
                )
            codes, uniques = pd.factorize(column, sort=True)
            pairs = _Pairs(classes, n_classes, codes.astype(np.int64, copy=False), len(uniques))
            emd = ordered_distance_emd(n_classes, pairs.cls, pairs.val, pairs.q, pairs.p)
        else:
            values, n_values = value_codes(column)
            pairs = _Pairs(classes, n_classes, values, n_values)
            emd = equal_distance_emd(n_classes, pairs.cls, pairs.q, pairs.p_pair)
        t = max(t, float(emd.max()))
    return t


def delta_disclosure(
    df: pd.DataFrame, quasi_ident: Columns, sens_att: Columns, gen: bool = True
) -> float:
    """delta for delta-disclosure privacy.

    delta = max over classes E and values v present in E of |ln(Q_E(v) / P(v))|
    (Brickell & Shmatikov 2008), Q_E the within-class and P the table-wide share of v.
    As in ARX ``DDisclosurePrivacy`` (and pyCANON) only values present in the class
    count; the paper's definition over all values would make delta infinite as soon
    as a class lacks a value. ARX uses log2, so its delta is this one divided by ln 2.
    The table satisfies delta'-disclosure privacy (strict inequality) for any
    delta' > delta.

    Parameters
    ----------
    df : pandas.DataFrame
        The table; not modified. Any index.
    quasi_ident : str or sequence of str
        Quasi-identifier columns.
    sens_att : str or sequence of str
        Sensitive attributes; the maximum over them is returned.
    gen : bool, default True
        If False, each sensitive attribute is checked with the others added to the QIs.

    Returns
    -------
    float
        delta >= 0 (natural logarithm).

    References
    ----------
    J. Brickell, V. Shmatikov, "The cost of privacy: destruction of data-mining
    utility in anonymized data publishing", KDD 2008.
    """
    qi, sa = _validate(df, quasi_ident, sens_att)
    return max(
        float(np.abs(np.log(pairs.q / pairs.p_pair)).max())
        for pairs in _pairs_per_attribute(df, qi, sa, gen)
    )


def _relative_gain(pairs: _Pairs) -> _Floats:
    return (pairs.q - pairs.p_pair) / pairs.p_pair


def basic_beta_likeness(
    df: pd.DataFrame, quasi_ident: Columns, sens_att: Columns, gen: bool = True
) -> float:
    """beta for basic beta-likeness: the largest relative gain of a sensitive value.

    beta = max over classes E and values v with Q_E(v) > P(v) of
    (Q_E(v) - P(v)) / P(v) (Cao & Karras 2012; ARX ``BasicBLikeness``), Q_E the
    within-class and P the table-wide share of v; 0 when every class has the table's
    distribution.

    Parameters
    ----------
    df : pandas.DataFrame
        The table; not modified. Any index.
    quasi_ident : str or sequence of str
        Quasi-identifier columns.
    sens_att : str or sequence of str
        Sensitive attributes; the maximum over them is returned.
    gen : bool, default True
        If False, each sensitive attribute is checked with the others added to the QIs.

    Returns
    -------
    float
        beta >= 0.

    References
    ----------
    J. Cao, P. Karras, "Publishing microdata with a robust privacy guarantee",
    PVLDB 5(11), 2012.
    """
    qi, sa = _validate(df, quasi_ident, sens_att)
    return max(
        max(0.0, float(_relative_gain(pairs).max()))
        for pairs in _pairs_per_attribute(df, qi, sa, gen)
    )


def enhanced_beta_likeness(
    df: pd.DataFrame, quasi_ident: Columns, sens_att: Columns, gen: bool = True
) -> float:
    """beta for enhanced beta-likeness: the smallest beta the table satisfies.

    ARX ``EnhancedBLikeness`` (after Cao & Karras 2012) accepts a class E when every
    value v in it has (Q_E(v) - P(v)) / P(v) <= min(beta, -ln P(v)). The smallest such
    beta is the basic beta (:func:`basic_beta_likeness`) when every relative gain is
    also at most -ln P(v), and no beta works otherwise: the result is then ``inf``.
    pyCANON returns max_v min(basic beta, -ln P(v)) instead, a number that does not
    tell whether the table satisfies the model.

    Parameters
    ----------
    df : pandas.DataFrame
        The table; not modified. Any index.
    quasi_ident : str or sequence of str
        Quasi-identifier columns.
    sens_att : str or sequence of str
        Sensitive attributes; the maximum over them is returned.
    gen : bool, default True
        If False, each sensitive attribute is checked with the others added to the QIs.

    Returns
    -------
    float
        beta >= 0, or ``inf``.

    References
    ----------
    J. Cao, P. Karras, "Publishing microdata with a robust privacy guarantee",
    PVLDB 5(11), 2012.
    """
    qi, sa = _validate(df, quasi_ident, sens_att)
    beta = 0.0
    for pairs in _pairs_per_attribute(df, qi, sa, gen):
        gain = _relative_gain(pairs)
        if np.any(gain > -np.log(pairs.p_pair)):
            return math.inf
        beta = max(beta, float(gain.max()))
    return beta
