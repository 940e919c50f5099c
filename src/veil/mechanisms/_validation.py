"""Parameter checks shared by the mechanisms; messages name parameter, value and range."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from veil.errors import ParameterError


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """Return ``epsilon`` as a float after checking it is finite and > 0."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.integer, np.floating)):
        raise ParameterError(f"{name}: must be a real number > 0, got {epsilon!r}")
    value = float(epsilon)
    if not (math.isfinite(value) and value > 0):
        raise ParameterError(f"{name}: must be finite and > 0, got {epsilon!r}")
    return value


def check_delta(delta: Any) -> float:
    """Return ``delta`` as a float after checking it lies in the open interval (0, 1)."""
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.integer, np.floating)):
        raise ParameterError(f"delta: must be a real number in (0, 1), got {delta!r}")
    value = float(delta)
    if not (0.0 < value < 1.0):
        raise ParameterError(f"delta: must be in the open interval (0, 1), got {delta!r}")
    return value


def check_bounds(lower: Any, upper: Any) -> tuple[float, float]:
    """Return finite ``(lower, upper)`` with ``lower < upper`` and a finite width.

    The width ``upper - lower`` is the sensitivity of a bounded mechanism: bounds such
    as ``[-1e308, 1e308]`` are each finite but their width is not a float.
    """
    for name, value in (("lower_bound", lower), ("upper_bound", upper)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ParameterError(f"{name}: must be a finite real number, got {value!r}")
        if not math.isfinite(float(value)):
            raise ParameterError(f"{name}: must be finite, got {value!r}")
    lo, hi = float(lower), float(upper)
    if not lo < hi:
        raise ParameterError(
            f"lower_bound, upper_bound: need lower_bound < upper_bound, got {lo!r} >= {hi!r}"
        )
    if not math.isfinite(hi - lo):
        raise ParameterError(
            f"lower_bound, upper_bound: [{lo!r}, {hi!r}] is wider than the largest float "
            "(about 1.8e308): no noise can cover it; give the bounds the values can take"
        )
    return lo, hi


def check_positive(value: Any, name: str) -> float:
    """Return ``value`` as a float after checking it is finite and > 0."""
    return check_epsilon(value, name)


def check_domain_size(k: int, minimum: int, name: str = "domain") -> None:
    """Check that a categorical domain holds at least ``minimum`` categories."""
    if k < minimum:
        raise ParameterError(f"{name}: needs at least {minimum} categories, got {k}")


def check_codes(codes: Any, k: int, name: str = "codes", *, widen: bool = True) -> np.ndarray:
    """Return ``codes`` after checking every code is in ``[0, k)``.

    As an int64 array, or with ``widen=False`` in the integer dtype they came in (no
    copy of int32 codes for a caller that only reads them).
    """
    arr = np.asarray(codes)
    if arr.dtype.kind not in "iu":
        raise ParameterError(f"{name}: must be integer category codes, got dtype {arr.dtype}")
    if arr.size and (arr.min() < 0 or arr.max() >= k):
        raise ParameterError(
            f"{name}: every code must be in [0, {k}), got values in [{arr.min()}, {arr.max()}]"
        )
    return arr.astype(np.int64, copy=False) if widen else arr


def unique_labels(domain: Sequence[Any] | np.ndarray, name: str = "domain") -> np.ndarray:
    """Return the domain as a 1-D array after checking it is non-empty and unique.

    A bare string or bytes is refused (it would otherwise be split into characters).
    """
    if isinstance(domain, (str, bytes)):
        raise ParameterError(
            f"{name}: must be a sequence of categories, got the {type(domain).__name__} "
            f"{domain!r}; write [{domain!r}] for a single category"
        )
    arr = np.asarray(domain, dtype=object) if not isinstance(domain, np.ndarray) else domain
    if arr.ndim != 1 or arr.size == 0:
        raise ParameterError(f"{name}: must be a non-empty 1-D sequence, got {domain!r}")
    try:
        n_unique = len(set(arr.tolist()))
    except TypeError as exc:
        raise ParameterError(f"{name}: values must be hashable ({exc})") from exc
    if n_unique != arr.size:
        raise ParameterError(f"{name}: values must be unique, got {arr.size - n_unique} repeats")
    return arr
