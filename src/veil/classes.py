"""Equivalence classes: dense ids for rows that agree on a set of columns.

Shared by the anonymity checks and the risk models. Missing values are a value of their
own, ids follow the rows by position (never the index), and the combined key cannot
overflow however many columns there are.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

__all__ = ["class_ids", "class_sizes", "value_codes"]

IntArray = npt.NDArray[np.int64]


def value_codes(values: pd.Series | pd.Index | np.ndarray) -> tuple[IntArray, int]:
    """Positional codes ``0 .. k-1`` of the values (first-appearance order) and ``k``."""
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    return codes.astype(np.int64, copy=False), len(uniques)


def class_ids(columns: Iterable[pd.Series | pd.Index], n: int) -> tuple[IntArray, int]:
    """Dense class id per row (0..k-1, in order of first appearance) and ``k``.

    ``columns`` are ``n``-long; rows share a class when they agree on every column.
    """
    key = np.zeros(n, dtype=np.int64)
    cardinality = 1
    for column in columns:
        codes, size = value_codes(column)
        if cardinality > (2**62) // max(size, 1):
            # The mixed-radix key would overflow: compress it to dense ids first.
            key, cardinality = value_codes(pd.Index(key))
        key = key * size + codes
        cardinality *= size
    return value_codes(pd.Index(key))


def class_sizes(coded: Sequence[tuple[IntArray, int]], n: int) -> IntArray:
    """Sizes of the non-empty classes of ``n`` rows, from each column's :func:`value_codes`.

    The same classes as :func:`class_ids`, counted without numbering them: a scan over
    many combinations of a few columns codes each column once and combines the codes
    here. The combined key is counted directly while it stays within a few times ``n``
    values, else numbered by hashing first.
    """
    key = np.zeros(n, dtype=np.int64)
    cardinality = 1
    for codes, size in coded:
        if cardinality > (2**62) // max(size, 1):
            key, cardinality = value_codes(pd.Index(key))
        key = key * size + codes
        cardinality *= size
    if cardinality > 8 * n + 1024:
        key, cardinality = value_codes(pd.Index(key))
    counts = np.bincount(key, minlength=cardinality)
    return counts[counts > 0]
