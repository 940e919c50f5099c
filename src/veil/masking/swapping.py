"""Shuffling, data swapping and rank swapping: moving values between records.

These are statistical disclosure control (SDC) methods: they keep the released values
(every column's marginal exactly) while breaking the link between a value and the
record it belonged to. None of them gives a formal differential-privacy guarantee, so
nothing is written to the privacy ledger; each call appends a description of what it
did (method, columns, how many records or pairs moved) to ``out.attrs["veil.masking"]``.

References
----------
Dalenius, T. and Reiss, S. P. (1982). Data-swapping: a technique for disclosure
control. Journal of Statistical Planning and Inference 6(1), 73-85.

Moore, R. A. (1996). Controlled data-swapping techniques for masking public use
microdata sets. Research Report RR96-04, U.S. Bureau of the Census.

Hundepool, A. et al. (2012). Statistical Disclosure Control, Wiley, section 3.4.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from veil.errors import ColumnError, DataTypeError, ParameterError, PrivacyWarning
from veil.frames import MASKING_ATTR, output_frame, record_masking
from veil.rng import RngLike, resolve_rng

__all__ = ["MASKING_ATTR", "rank_swap", "shuffle", "swap"]


_IntArray = np.ndarray[Any, np.dtype[np.int64]]


def shuffle(
    df: pd.DataFrame,
    columns: str | Sequence[str],
    *,
    within: str | Sequence[str] | None = None,
    rng: RngLike = None,
) -> pd.DataFrame:
    """Randomly permute the values of ``columns`` across rows, optionally within groups.

    All listed columns move with the same permutation, so their joint distribution (the
    tuple of values a record holds in them) is kept; only its link to the other columns
    is broken. Every marginal of ``columns`` is preserved exactly, and with ``within``
    so is its distribution inside each group of equal ``within`` values.

    No formal privacy guarantee: shuffling is a statistical disclosure control method,
    not differential privacy; the released multiset of values is the original one.

    Parameters
    ----------
    df : pandas.DataFrame
        The data; not modified.
    columns : str or sequence of str
        The column(s) whose values are permuted (jointly).
    within : str or sequence of str, optional
        Group columns: values only move between rows that agree on all of them. Rows
        with a missing value in a group column keep their values. Must not overlap
        ``columns``.
    rng : None, int or numpy.random.Generator
        Source of randomness, see :func:`veil.rng.resolve_rng`.

    Returns
    -------
    pandas.DataFrame
        A new frame with the permuted columns (dtypes unchanged); its
        ``attrs["veil.masking"]`` gains an entry with ``"rows_permuted"``, the number of
        rows taking part in the permutation.

    Raises
    ------
    veil.errors.ColumnError
        A column of ``columns`` or ``within`` is not in ``df``.
    veil.errors.ParameterError
        ``columns`` empty or with duplicates, or ``within`` overlapping ``columns``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> df = pd.DataFrame({"sex": ["f", "f", "m", "m"], "income": [1, 2, 3, 4]})
    >>> out = shuffle(df, "income", within="sex", rng=np.random.default_rng(0))
    >>> sorted(out.loc[out["sex"] == "f", "income"])
    [1, 2]
    """
    targets = _check_columns(df, columns, "columns")
    groups = _check_columns(df, within, "within", empty_ok=True, disjoint=targets)
    generator = resolve_rng(rng, stacklevel=3)
    codes = _group_codes(df, groups)
    rows = np.flatnonzero(codes >= 0)
    # Sort the rows by (group, random rank): inside each group they come in a uniformly
    # random order, and giving the group's rows (in their own order) the values of that
    # random order is a uniform permutation within the group.
    random_rank = generator.permutation(rows.size)
    shuffled = rows[np.lexsort((random_rank, codes[rows]))]
    ordered = rows[np.argsort(codes[rows], kind="stable")]
    source = np.arange(len(df), dtype=np.int64)
    source[ordered] = shuffled
    out = _take_rows(df, targets, source)
    _record(out, df, method="shuffle", columns=targets, within=groups, rows_permuted=rows.size)
    return out


def swap(
    df: pd.DataFrame,
    columns: str | Sequence[str],
    *,
    fraction: float,
    keys: str | Sequence[str] | None = None,
    rng: RngLike = None,
) -> pd.DataFrame:
    """Swap the values of ``columns`` between random disjoint pairs of records.

    Data swapping (Dalenius and Reiss 1982): ``round(fraction * n / 2)`` disjoint pairs of
    records are drawn at random (``n`` the number of rows, Python rounding, half to even)
    and the two records of each pair exchange their values of ``columns`` (all listed
    columns together). With ``keys``, both records of a pair agree on every key column,
    so every key group keeps exactly its multiset of values. Marginals of ``columns`` are
    preserved exactly.

    No formal privacy guarantee: swapping is a statistical disclosure control method,
    not differential privacy; records outside the pairs are released unchanged.

    Parameters
    ----------
    df : pandas.DataFrame
        The data; not modified.
    columns : str or sequence of str
        The column(s) whose values are exchanged within each pair.
    fraction : float
        In ``[0, 1]``: the share of records to swap (``2 * pairs / n``).
    keys : str or sequence of str, optional
        Key variables a pair must agree on. Rows with a missing key value agree with no
        other row and are never swapped. Must not overlap ``columns``.
    rng : None, int or numpy.random.Generator
        Source of randomness, see :func:`veil.rng.resolve_rng`.

    Returns
    -------
    pandas.DataFrame
        A new frame with the swapped values (dtypes unchanged); its
        ``attrs["veil.masking"]`` gains an entry with ``"pairs_requested"`` and
        ``"pairs_swapped"``. Exactly ``2 * pairs_swapped`` rows took part in a swap
        (fewer rows change if the two records of a pair held equal values).

    Raises
    ------
    veil.errors.ColumnError
        A column of ``columns`` or ``keys`` is not in ``df``.
    veil.errors.ParameterError
        ``fraction`` outside ``[0, 1]``, ``columns`` empty or with duplicates, or
        ``keys`` overlapping ``columns``.

    Warns
    -----
    veil.errors.PrivacyWarning
        Fewer pairs can be formed than requested (key groups too small): only
        ``pairs_swapped`` pairs are swapped.

    Notes
    -----
    Rows are put in a random order inside their key group and the group's rows are cut
    into consecutive pairs (positions 0-1, 2-3, ...; the last row of an odd group is left
    out). These candidate pairs form a uniformly random matching inside each group;
    ``pairs_requested`` of them are then drawn uniformly without replacement over all
    groups, so a group receives pairs in proportion to its size.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> df = pd.DataFrame({"income": np.arange(100)})
    >>> out = swap(df, "income", fraction=0.2, rng=np.random.default_rng(0))
    >>> out.attrs["veil.masking"][-1]["pairs_swapped"], int((out != df).sum().iloc[0])
    (10, 20)
    """
    share = _check_fraction(fraction)
    targets = _check_columns(df, columns, "columns")
    groups = _check_columns(df, keys, "keys", empty_ok=True, disjoint=targets)
    generator = resolve_rng(rng, stacklevel=3)
    n = len(df)
    requested = round(share * n / 2)
    codes = _group_codes(df, groups)
    rows = np.flatnonzero(codes >= 0)
    random_rank = generator.permutation(rows.size)
    order = rows[np.lexsort((random_rank, codes[rows]))]
    sorted_codes = codes[order]
    starts_mask = np.ones(order.size, dtype=bool)
    starts_mask[1:] = sorted_codes[1:] != sorted_codes[:-1]
    starts = np.flatnonzero(starts_mask)
    group_of = np.cumsum(starts_mask) - 1
    sizes = np.diff(np.append(starts, order.size))
    position = np.arange(order.size) - starts[group_of]
    first = np.flatnonzero((position % 2 == 0) & (position + 1 < sizes[group_of]))
    pairs = min(requested, first.size)
    if pairs < requested:
        warnings.warn(
            f"swap: only {pairs} disjoint pairs agree on keys {groups}, fewer than the "
            f"{requested} requested by fraction={share:g}; the other records are released "
            "unswapped",
            PrivacyWarning,
            stacklevel=2,
        )
    chosen = first[generator.choice(first.size, size=pairs, replace=False)]
    a, b = order[chosen], order[chosen + 1]
    source = np.arange(n, dtype=np.int64)
    source[a] = b
    source[b] = a
    out = _take_rows(df, targets, source)
    _record(
        out,
        df,
        method="swap",
        columns=targets,
        keys=groups,
        fraction=share,
        pairs_requested=requested,
        pairs_swapped=pairs,
    )
    return out


def rank_swap(df: pd.DataFrame, column: str, p: float, *, rng: RngLike = None) -> pd.DataFrame:
    """Rank swapping (Moore 1996): swap each value with one at most ``p`` % of ranks away.

    The non-missing values of ``column`` are ranked (ties in random order); values are
    exchanged in disjoint pairs whose ranks differ by at most ``w = floor(p * m / 100)``,
    ``m`` the number of non-missing values. The constraint holds exactly for every pair;
    all values but at most two are swapped. The marginal is
    preserved exactly and each value stays close to its original in the ordering.
    Missing values stay in their rows and take no part.

    No formal privacy guarantee: rank swapping is a statistical disclosure control
    method, not differential privacy; a value is displaced by at most ``w`` ranks, so an
    intruder who knows a record's value approximately can still locate it.

    Parameters
    ----------
    df : pandas.DataFrame
        The data; not modified.
    column : str
        A numeric column (integer, float, or their nullable variants; not boolean).
    p : float
        In ``(0, 100]``: the largest rank difference of a pair, in percent of ``m``.
    rng : None, int or numpy.random.Generator
        Source of randomness, see :func:`veil.rng.resolve_rng`.

    Returns
    -------
    pandas.DataFrame
        A new frame with the swapped column (dtype unchanged); its
        ``attrs["veil.masking"]`` gains an entry with ``"max_rank_distance"`` (``w``) and
        ``"pairs_swapped"``.

    Raises
    ------
    veil.errors.ColumnError
        ``column`` is not in ``df``.
    veil.errors.DataTypeError
        ``column`` is not numeric.
    veil.errors.ParameterError
        ``p`` outside ``(0, 100]``.

    Warns
    -----
    veil.errors.PrivacyWarning
        ``w < 1`` (``p`` percent of ``m`` is less than one rank): no value can move.

    Notes
    -----
    Moore's algorithm is sequential: the lowest unswapped rank ``i`` is swapped with a
    random unswapped rank in ``(i, i + w]``. This function keeps its constraint exactly
    and its typical displacement, in a block-wise vectorized form:

    1. Rank the values: sort by (value, random key), positions ``0 .. m-1``.
    2. Cut the ranks into consecutive blocks of ``B = 2 * floor((w + 1) / 2)`` ranks
       (the largest even number ``<= w + 1``), starting at a random offset, so the first
       and last blocks may be shorter; any two ranks of a block differ by at most
       ``B - 1 <= w``.
    3. In a block of ``s`` ranks, each of the lower ``h = floor(s / 2)`` ranks is paired
       with one of the next ``h`` ranks through a uniformly random matching (a random
       permutation of the upper half); the last rank of an odd block stays.

    As in Moore's algorithm every pair joins a lower and a higher rank; the rank
    distance of a pair is triangular on ``1 .. B - 1`` with mean ``B / 2`` (about
    ``w / 2``, close to the sequential algorithm's roughly uniform choice in
    ``1 .. w``). The random offset hides where the blocks start.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> df = pd.DataFrame({"income": np.arange(1000.0)})
    >>> out = rank_swap(df, "income", 5, rng=np.random.default_rng(0))
    >>> int((out["income"] - df["income"]).abs().max()) <= 50
    True
    """
    if column not in df.columns:
        raise ColumnError(f"column: {column!r} is not in the dataframe")
    series = df[column]
    if not pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_bool_dtype(series.dtype):
        raise DataTypeError(
            f"column: rank swapping needs a numeric column, {column!r} has dtype {series.dtype}"
        )
    percent = _check_percent(p)
    generator = resolve_rng(rng, stacklevel=3)
    # Codes of the sorted unique values are dense ranks, exact for any numeric dtype
    # (no float conversion); missing values get -1.
    codes = pd.factorize(series, sort=True, use_na_sentinel=True)[0].astype(np.int64)
    rows = np.flatnonzero(codes >= 0)
    m = rows.size
    window = math.floor(percent * m / 100)
    source = np.arange(len(df), dtype=np.int64)
    pairs = 0
    if window < 1:
        warnings.warn(
            f"rank_swap: p={percent:g} % of {m} values is less than one rank, so no value "
            f"of {column!r} is swapped; raise p",
            PrivacyWarning,
            stacklevel=2,
        )
    else:
        # Random tie-breaking, so equal values do not reveal the original row order.
        ranked = rows[np.lexsort((generator.permutation(m), codes[rows]))]
        partner = _block_partners(m, 2 * ((window + 1) // 2), generator)
        source[ranked] = ranked[partner]
        pairs = int(np.count_nonzero(partner > np.arange(m)))
    out = _take_rows(df, [column], source)
    _record(
        out,
        df,
        method="rank_swap",
        columns=[column],
        p=percent,
        max_rank_distance=window,
        pairs_swapped=pairs,
    )
    return out


def _block_partners(m: int, block: int, generator: np.random.Generator) -> _IntArray:
    """Partner rank of each rank ``0 .. m-1`` (itself if unpaired); see :func:`rank_swap`."""
    shift = int(generator.integers(0, block))
    rank = np.arange(m, dtype=np.int64)
    block_of = (rank + shift) // block
    start = np.maximum(block_of * block - shift, 0)
    end = np.minimum((block_of + 1) * block - shift, m)
    half = (end - start) // 2
    offset = rank - start
    lower = np.flatnonzero(offset < half)
    upper = np.flatnonzero((offset >= half) & (offset < 2 * half))
    # Lower halves are in (block, rank) order; ordering the upper halves by (block, random
    # key) lines up each block's lower ranks with a random permutation of its upper ranks.
    upper = upper[np.lexsort((generator.permutation(upper.size), block_of[upper]))]
    partner = rank.copy()
    partner[lower] = upper
    partner[upper] = lower
    return partner


def _check_columns(
    df: pd.DataFrame,
    columns: str | Sequence[str] | None,
    name: str,
    *,
    empty_ok: bool = False,
    disjoint: Sequence[str] = (),
) -> list[str]:
    """Return ``columns`` as a list after checking they exist, are distinct and allowed."""
    if columns is None:
        names: list[str] = []
    elif isinstance(columns, str):
        names = [columns]
    else:
        names = list(columns)
    if not names and not empty_ok:
        raise ParameterError(f"{name}: must name at least one column, got {columns!r}")
    if len(set(names)) != len(names):
        raise ParameterError(f"{name}: columns must be distinct, got {names!r}")
    missing = [c for c in names if c not in df.columns]
    if missing:
        raise ColumnError(f"{name}: {missing!r} not in the dataframe")
    overlap = [c for c in names if c in disjoint]
    if overlap:
        raise ParameterError(f"{name}: must not include the swapped columns, got {overlap!r}")
    return names


def _check_fraction(fraction: Any) -> float:
    if isinstance(fraction, bool) or not isinstance(
        fraction, (int, float, np.integer, np.floating)
    ):
        raise ParameterError(f"fraction: must be a real number in [0, 1], got {fraction!r}")
    value = float(fraction)
    if not 0.0 <= value <= 1.0:
        raise ParameterError(f"fraction: must be in [0, 1], got {fraction!r}")
    return value


def _check_percent(p: Any) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)):
        raise ParameterError(f"p: must be a real number in (0, 100], got {p!r}")
    value = float(p)
    if not 0.0 < value <= 100.0:
        raise ParameterError(f"p: must be in (0, 100], got {p!r}")
    return value


def _group_codes(df: pd.DataFrame, columns: list[str]) -> _IntArray:
    """Group number of each row (-1 where a group column is missing); 0 for no groups."""
    if not columns:
        return np.zeros(len(df), dtype=np.int64)
    codes = df.groupby(columns, sort=False, dropna=True, observed=True).ngroup()
    return codes.to_numpy(dtype=np.int64, na_value=-1).astype(np.int64, copy=False)


def _take_rows(df: pd.DataFrame, columns: list[str], source: _IntArray) -> pd.DataFrame:
    """A new frame whose ``columns`` at row ``i`` hold ``df``'s values at row ``source[i]``."""
    out = output_frame(df)
    for column in columns:
        out[column] = df[column].take(source).set_axis(df.index)
    return out


def _record(out: pd.DataFrame, source: pd.DataFrame, **entry: Any) -> None:
    """Append ``entry`` to ``out.attrs["veil.masking"]``, after ``source``'s entries."""
    record_masking(out, source, [entry])
