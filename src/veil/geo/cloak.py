"""Quadtree spatial cloaking: every released location is shared by >= k records.

Gruteser and Grunwald ("Anonymous usage of location-based services through spatial and
temporal cloaking", MobiSys 2003) divide a square region recursively into four
quadrants and report each location as the smallest quadrant that holds it and at least
``k - 1`` other locations. That construction is not reciprocal (Kalnis et al., IEEE
TKDE 2007): the points of a quadrant's sparse children are reported at the quadrant
while its dense children go deeper, so as few as one record can be released at a
quadrant's centre (a check found a minimum of 1 at ``k=10``). The default here is
reciprocal: a quadrant keeps back, with its sparse children, its smallest dense child
whenever the sparse ones alone hold between 1 and ``k - 1`` records, so every released
location is shared by at least ``k`` records. The paper's construction remains as
``variant="paper"``. The guarantee is syntactic: no epsilon is spent, and the step is
recorded in the frame's privacy history with ``notion="syntactic"``.

Cells are found level by level rather than point by point: every point's cell index at
the finest level is interleaved into a Morton (Z-order) key and sorted once, so that
the cells of every coarser level are contiguous runs of the sorted keys and their
counts come from one vectorized pass per level; O(n log n) for the sort plus O(n) per
level, at most 31 levels.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.errors import DomainError, ParameterError, PrivacyLeakWarning
from veil.geo._frame import MAX_METRES, MAX_OUTSIDE, check_metres, read_points, write_points
from veil.geo.projection import LocalProjection
from veil.mechanisms import PrivacyCost

__all__ = ["cloak", "cloak_xy"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

# Two cell indices of at most 31 bits interleave into 62 bits of a uint64 key, and every
# shift of a key stays below 64 bits.
_DEPTH_LIMIT = 31
# The default square is the points' bounding square widened by this fraction, so that
# the largest coordinate falls strictly inside the half-open root cell.
_WIDEN = 2.0**-20
_SIZE_COLUMN = "cloak_size_m"
_COUNT_COLUMN = "cloak_count"


def cloak(
    df: pd.DataFrame,
    lat: str,
    lon: str,
    k: int,
    *,
    output: Literal["centre", "cell"] = "centre",
    bounds_m: tuple[float, float, float] | None = None,
    max_depth: int | None = None,
    min_cell_m: float = 1.0,
    projection: LocalProjection | str | None = None,
    outside: Literal["error", "drop"] = "error",
    max_outside: float = MAX_OUTSIDE,
    missing: str = "error",
    variant: Literal["reciprocal", "paper"] = "reciprocal",
) -> pd.DataFrame:
    """Quadtree k-cloaking: every released cell centre is shared by at least ``k`` records.

    The locations are projected to a planar system in metres; a square region is
    divided recursively into four quadrants, and each location is moved to the centre
    of a quadrant holding at least ``k`` locations (Gruteser and Grunwald, MobiSys
    2003). Dense areas get small cells and sparse ones large cells.

    Guarantee (default ``variant="reciprocal"``): every released location is the
    released location of at least ``k`` records, whatever the data. A quadrant splits
    off its children holding ``k`` or more locations; the others stay with it, and when
    they hold between 1 and ``k - 1`` locations the smallest dense child stays too
    (rather than suppressing records), so the quadrant's centre is released for at
    least ``k`` of them. ``variant="paper"`` is the published construction, whose
    anonymity set is the cell's population rather than the records released at its
    centre: fewer than ``k`` records (as few as one) may share a released centre.

    Parameters
    ----------
    df : pandas.DataFrame
        Not modified.
    lat, lon : str
        Coordinate columns, in degrees.
    k : int
        Anonymity level: at least 1 and at most the number of rows with a location.
    output : {"centre", "cell"}, default "centre"
        ``"centre"`` writes the cell centre as the coordinates; ``"cell"`` also adds
        ``cloak_size_m`` (the cell's side in metres) and ``cloak_count`` (nullable
        ``Int64``: the records released at the same centre, or with
        ``variant="paper"`` the locations in the cell). Both describe the cell only,
        never the location within it.
    bounds_m : (x0, y0, size), optional
        The root square ``[x0, x0 + size) x [y0, y0 + size)`` in the projected metres;
        it must contain every location. Default: the smallest square covering the
        locations, widened by a relative 2**-20 (see Notes).
    max_depth : int, optional
        Deepest level of the tree, 0 to 31 (level ``L`` has cells of ``size / 2**L``).
        Default: the deepest level whose cells are at least ``min_cell_m`` wide.
    min_cell_m : float, default 1.0
        Smallest cell side in metres when ``max_depth`` is not given, in
        (0, 20,000 km].
    projection : LocalProjection or "data"
        The planar system, from public knowledge (:func:`veil.geo.projection_at`,
        :func:`veil.geo.projection_for_region`, :func:`veil.geo.projection_for_crs`);
        required. ``"data"`` (or ``"auto"``, ``"utm"``, ``"aeqd"``) chooses it from the
        records: a :class:`~veil.errors.PrivacyLeakWarning` and an entry in
        ``attrs["veil.leaks"]`` record it.
    outside : {"error", "drop"}, default "error"
        Records beyond the projection's 0.1 % region are refused, or left out of the
        output (their number recorded in ``attrs["veil.masking"]``).
    max_outside : float, default 0.2
        With ``outside="drop"``, the largest share of the records that may be dropped;
        more is refused (a centre with a sign typo would empty the release).
    missing : {"error", "keep"}, default "error"
        ``"keep"`` leaves rows without a location missing; they take no part in the
        counts.
    variant : {"reciprocal", "paper"}, default "reciprocal"
        ``"paper"`` reproduces Gruteser and Grunwald's construction (see above).

    Returns
    -------
    pandas.DataFrame
        A copy of ``df`` with the cloaked coordinates (float64); its
        ``attrs["veil.privacy"]`` gains a zero-epsilon ``"syntactic"`` entry.

    Raises
    ------
    veil.errors.ParameterError
        ``k`` not an integer in ``[1, n]``, an unknown ``output`` or ``variant``,
        malformed ``bounds_m`` (sizes and corners beyond 20,000 km included) or bounds
        that miss a location, no ``projection``, ``max_depth`` outside ``[0, 31]``,
        ``output="cell"`` on a frame that already has a ``cloak_*`` column.
    veil.errors.MissingValueError, veil.errors.DomainError
        Missing locations with ``missing="error"``; out-of-range coordinates.

    Notes
    -----
    With ``variant="paper"`` the anonymity set of a location is the population of its
    reported cell; it is not reciprocal (Kalnis et al., IEEE TKDE 2007): a cell
    holding ``k + 2`` locations, ``k`` of them in one quadrant, reports the other 2 at
    its centre and those ``k`` deeper, so 2 rows share a released centre, and an
    adversary who knows every location can narrow the set accordingly. The default
    keeps the ``k`` back with the 2 instead (merging, not suppressing: no record is
    lost, at the price of coarser cells for the merged child).

    The default root square is derived from the data: its corner is the smallest
    easting and northing and its side the extent, which the released cell grid
    reveals; a :class:`~veil.errors.PrivacyLeakWarning` says so and
    ``attrs["veil.leaks"]`` records it. Pass ``bounds_m`` (and a public
    ``projection``) chosen from public knowledge, such as a city's limits, to keep the
    grid independent of the records.
    """
    k_value = _check_k_type(k)
    if variant not in ("reciprocal", "paper"):
        raise ParameterError(f"variant: must be 'reciprocal' or 'paper', got {variant!r}")
    if output not in ("centre", "cell"):
        raise ParameterError(f"output: must be 'centre' or 'cell', got {output!r}")
    if output == "cell":
        taken = [name for name in (_SIZE_COLUMN, _COUNT_COLUMN) if name in df.columns]
        if taken:
            raise ParameterError(
                f"output: 'cell' adds the columns {_SIZE_COLUMN!r} and {_COUNT_COLUMN!r}, "
                f"but the frame already has {taken}; rename or drop them first"
            )
    points = read_points(
        df,
        lat,
        lon,
        missing=missing,
        projection=projection,
        outside=outside,
        max_outside=max_outside,
    )
    leaks = []
    if bounds_m is None:
        leaks.append(
            {
                "scope": f"{lat}, {lon}",
                "leak": "quadtree root square derived from the data",
                "detail": "the corner and side of the cloaking grid are the records' extent",
            }
        )
        warnings.warn(
            "cloak: the quadtree's root square is derived from the data (its corner and "
            "extent show in the released grid); pass bounds_m chosen from public knowledge",
            PrivacyLeakWarning,
            stacklevel=2,
        )
    cx, cy, size, count = _cloak(
        points.x,
        points.y,
        k_value,
        bounds_m,
        max_depth,
        min_cell_m,
        bounds_name="bounds_m",
        min_cell_name="min_cell_m",
        reciprocal=variant == "reciprocal",
    )
    label = f"quadtree cloaking (k={k_value})"
    if variant == "paper":
        label = f"quadtree cloaking (k={k_value}, paper's variant: not k per released location)"
    cost = PrivacyCost(0.0, 0.0, "syntactic", "record", f"{lat}, {lon}", label)
    extra = {_SIZE_COLUMN: size} if output == "cell" else None
    out = write_points(df, lat, lon, points, cx, cy, cost=cost, extra=extra, leaks=leaks)
    if output == "cell":
        values = np.zeros(points.present.shape, dtype=np.int64)
        values[points.present] = count
        kept = points.kept
        out[_COUNT_COLUMN] = pd.arrays.IntegerArray(values[kept], ~points.present[kept])
    return out


def cloak_xy(
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    k: int,
    *,
    bounds: tuple[float, float, float] | None = None,
    max_depth: int | None = None,
    min_cell: float = 1.0,
    variant: Literal["reciprocal", "paper"] = "reciprocal",
) -> tuple[FloatArray, FloatArray, FloatArray, IntArray]:
    """Quadtree k-cloaking of planar points (NumPy arrays in the same unit, e.g. metres).

    Each point is mapped to the centre of a quadrant of a quadtree over the square
    ``bounds``; with the default ``variant="reciprocal"`` every reported centre is
    reported for at least ``k`` points. ``variant="paper"`` maps each point to the
    smallest quadrant holding it and at least ``k - 1`` other points (Gruteser and
    Grunwald, MobiSys 2003), which may report a centre for fewer than ``k`` points.
    See :func:`cloak` for the parameters and the construction.

    Returns
    -------
    cx, cy : numpy.ndarray of float64
        Centre of each point's cell.
    size : numpy.ndarray of float64
        Side of each point's cell.
    count : numpy.ndarray of int64
        Points reported at each point's centre (at least ``k``); with
        ``variant="paper"``, points in each point's cell (at least ``k``).

    Examples
    --------
    The point at (9, 9) is alone in its quadrant: the paper reports it alone at the
    root's centre (8, 8), the reciprocal variant keeps the other three there with it.

    >>> x, y = [1.0, 2.0, 3.0, 9.0], [1.0, 3.0, 2.0, 9.0]
    >>> cx, cy, size, count = cloak_xy(x, y, 3, bounds=(0.0, 0.0, 16.0), variant="paper")
    >>> cx.tolist(), size.tolist(), count.tolist()
    ([2.0, 2.0, 2.0, 8.0], [4.0, 4.0, 4.0, 16.0], [3, 3, 3, 4])
    >>> cx, cy, size, count = cloak_xy(x, y, 3, bounds=(0.0, 0.0, 16.0))
    >>> cx.tolist(), size.tolist(), count.tolist()
    ([8.0, 8.0, 8.0, 8.0], [16.0, 16.0, 16.0, 16.0], [4, 4, 4, 4])
    """
    if variant not in ("reciprocal", "paper"):
        raise ParameterError(f"variant: must be 'reciprocal' or 'paper', got {variant!r}")
    x_arr = np.asarray(x, dtype=np.float64)
    y_arr = np.asarray(y, dtype=np.float64)
    if x_arr.ndim != 1 or x_arr.shape != y_arr.shape:
        raise ParameterError(
            f"x, y: must be one-dimensional arrays of equal length, got shapes "
            f"{x_arr.shape} and {y_arr.shape}"
        )
    for name, values in (("x", x_arr), ("y", y_arr)):
        bad = ~np.isfinite(values)
        if bad.any():
            raise DomainError(f"{name}: {int(bad.sum())} missing or infinite coordinates")
    return _cloak(
        x_arr,
        y_arr,
        _check_k_type(k),
        bounds,
        max_depth,
        min_cell,
        bounds_name="bounds",
        min_cell_name="min_cell",
        reciprocal=variant == "reciprocal",
        metres=False,
    )


def _check_k_type(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise ParameterError(f"k: must be an integer >= 1, got {k!r}")
    return int(k)


def _cloak(
    x: FloatArray,
    y: FloatArray,
    k: int,
    bounds: Any,
    max_depth: Any,
    min_cell: Any,
    *,
    bounds_name: str,
    min_cell_name: str,
    reciprocal: bool,
    metres: bool = True,
) -> tuple[FloatArray, FloatArray, FloatArray, IntArray]:
    """Validate the tree parameters against the points, then cloak."""
    n = x.size
    if k > n:
        raise ParameterError(
            f"k: must be at most the number of points with a location ({n}), got {k}"
        )
    limit = MAX_METRES if metres else math.inf
    if metres:
        smallest = check_metres(min_cell, min_cell_name)
    else:
        smallest = _check_finite_positive(min_cell, min_cell_name)
    x0, y0, size = _root_square(x, y, bounds, smallest, bounds_name, limit)
    depth = _depth(max_depth, size, smallest)
    return _quadtree(x, y, k, x0, y0, size, depth, reciprocal)


def _check_finite_positive(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(f"{name}: must be a finite number > 0, got {value!r}")
    number = float(value)
    if not (math.isfinite(number) and number > 0):
        raise ParameterError(f"{name}: must be a finite number > 0, got {value!r}")
    return number


def _root_square(
    x: FloatArray, y: FloatArray, bounds: Any, min_cell: float, name: str, limit: float
) -> tuple[float, float, float]:
    if bounds is None:
        x0, y0 = float(x.min()), float(y.min())
        extent = max(float(x.max()) - x0, float(y.max()) - y0)
        return x0, y0, extent * (1.0 + _WIDEN) if extent > 0 else min_cell
    try:
        x0, y0, size = (float(v) for v in bounds)
    except (TypeError, ValueError):
        raise ParameterError(
            f"{name}: must be (x0, y0, size) in projected metres, got {bounds!r}"
        ) from None
    finite = math.isfinite(x0) and math.isfinite(y0) and math.isfinite(size)
    if not (finite and 0 < size <= limit and abs(x0) <= limit and abs(y0) <= limit):
        allowed = "finite (x0, y0, size) with size > 0"
        if math.isfinite(limit):
            allowed += f" and every value within {limit:,.0f} m (20,000 km)"
        raise ParameterError(f"{name}: must be {allowed}, got {bounds!r}")
    beyond = np.maximum.reduce([x0 - x, x - (x0 + size), y0 - y, y - (y0 + size)], initial=-np.inf)
    outside = (x < x0) | (x >= x0 + size) | (y < y0) | (y >= y0 + size)
    if outside.any():
        raise ParameterError(
            f"{name}: the square [{x0:g}, {x0 + size:g}) x [{y0:g}, {y0 + size:g}) must "
            f"contain every point, but {int(outside.sum())} lie outside it (the farthest "
            f"{float(beyond.max()):.3g} beyond its edge)"
        )
    return x0, y0, size


def _depth(max_depth: Any, size: float, min_cell: float) -> int:
    if max_depth is None:
        # frexp gives size / min_cell = m * 2**e with m in [0.5, 1): floor(log2) = e - 1,
        # exactly, where math.log2 could round across an integer.
        _, exponent = math.frexp(size / min_cell)
        return max(0, min(exponent - 1, _DEPTH_LIMIT))
    if (
        isinstance(max_depth, bool)
        or not isinstance(max_depth, numbers.Integral)
        or not 0 <= int(max_depth) <= _DEPTH_LIMIT
    ):
        raise ParameterError(
            f"max_depth: must be an integer in [0, {_DEPTH_LIMIT}], got {max_depth!r}"
        )
    return int(max_depth)


def _quadtree(
    x: FloatArray,
    y: FloatArray,
    k: int,
    x0: float,
    y0: float,
    size: float,
    depth: int,
    reciprocal: bool,
) -> tuple[FloatArray, FloatArray, FloatArray, IntArray]:
    n = x.size
    finest = math.ldexp(size, -depth)
    top = float((1 << depth) - 1)
    # Clipping only catches rounding at the upper edge: the points lie in the square.
    ix = np.clip(np.floor((x - x0) / finest), 0.0, top).astype(np.uint64)
    iy = np.clip(np.floor((y - y0) / finest), 0.0, top).astype(np.uint64)
    morton = (_spread_bits(ix) << np.uint64(1)) | _spread_bits(iy)
    order = np.argsort(morton, kind="stable")
    keys = morton[order]
    # Level 0 (the root, holding all n >= k points) qualifies for every point. At each
    # level, the points still descending sit in the children of the cells that split;
    # a child holding >= k points descends further, the others stay at their parent.
    # The loop stops when no child descends.
    level = np.zeros(n, dtype=np.int64)
    count = np.full(n, n, dtype=np.int64)
    active = np.arange(n)
    for current in range(1, depth + 1):
        cells = keys >> np.uint64(2 * (depth - current))
        starts = np.flatnonzero(np.concatenate(([True], cells[1:] != cells[:-1])))
        sizes = np.diff(np.append(starts, cells.size))
        descends = sizes >= k
        stay_count = None
        if reciprocal:
            descends, stay_count = _reciprocal_split(cells[starts] >> np.uint64(2), sizes, k)
        per_point = np.repeat(descends, sizes)
        if not per_point.any():
            break
        if stay_count is not None:
            staying = ~per_point
            count[active[staying]] = np.repeat(stay_count, sizes)[staying]
        active, keys = active[per_point], keys[per_point]
        level[active] = current
        count[active] = np.repeat(sizes, sizes)[per_point]
    sorted_level, sorted_count = level, count
    level = np.empty(n, dtype=np.int64)
    count = np.empty(n, dtype=np.int64)
    level[order], count[order] = sorted_level, sorted_count
    shift = (depth - level).astype(np.uint64)
    cell = np.ldexp(np.full(n, size), -level)
    cx = x0 + ((ix >> shift).astype(np.float64) + 0.5) * cell
    cy = y0 + ((iy >> shift).astype(np.float64) + 0.5) * cell
    return cx, cy, cell, count


def _reciprocal_split(
    parents: npt.NDArray[np.uint64], sizes: IntArray, k: int
) -> tuple[npt.NDArray[np.bool_], IntArray]:
    """Which children descend, and how many points each child's parent releases.

    ``parents`` is the (sorted) parent key of each non-empty child, ``sizes`` its
    point count. Children with ``>= k`` points descend, except that when a parent's
    other children hold between 1 and ``k - 1`` points its smallest dense child (the
    first in Z-order among equals) stays with them, so the parent's centre is released
    for 0 or at least ``k`` points.
    """
    new_parent = np.concatenate(([True], parents[1:] != parents[:-1]))
    parent_id = np.cumsum(new_parent) - 1
    first = np.flatnonzero(new_parent)
    dense = sizes >= k
    sparse_total = np.bincount(parent_id, weights=np.where(dense, 0, sizes)).astype(np.int64)
    big = np.iinfo(np.int64).max
    smallest_dense = np.minimum.reduceat(np.where(dense, sizes, big), first)
    short = (sparse_total > 0) & (sparse_total < k) & (smallest_dense < big)
    candidate = dense & (sizes == smallest_dense[parent_id])
    rank = np.cumsum(candidate) - np.repeat(
        np.cumsum(candidate)[first] - candidate[first], np.diff(np.append(first, sizes.size))
    )
    kept_back = candidate & (rank == 1) & short[parent_id]
    descends = dense & ~kept_back
    stay = sparse_total + np.where(short, smallest_dense, 0)
    return descends, stay[parent_id]


def _spread_bits(v: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """Put bit ``i`` of each (at most 32-bit) value at bit ``2 i``: half a Morton key."""
    v = v & np.uint64(0x00000000FFFFFFFF)
    v = (v | (v << np.uint64(16))) & np.uint64(0x0000FFFF0000FFFF)
    v = (v | (v << np.uint64(8))) & np.uint64(0x00FF00FF00FF00FF)
    v = (v | (v << np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    v = (v | (v << np.uint64(2))) & np.uint64(0x3333333333333333)
    return (v | (v << np.uint64(1))) & np.uint64(0x5555555555555555)
