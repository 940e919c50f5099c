"""Quadtree k-cloaking: the k guarantee, agreement with a per-point rescan, errors.

The paper's construction (``variant="paper"``) is checked against the seed's per-point
rescan; the default (reciprocal) construction against its guarantee: every released
location is shared by at least k records, on random and adversarial data.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from veil.errors import DomainError, MissingValueError, ParameterError, PrivacyLeakWarning
from veil.geo.cloak import cloak, cloak_xy
from veil.geo.projection import projection_at

# A dyadic square: every quadrant boundary and centre is exact in float64, so the
# vectorized tree and the per-point rescan see the same cells bit for bit.
DYADIC = (-8192.0, -8192.0, 16384.0)


def _rng(seed: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed))


def _clustered(seed: int, n: int = 3000) -> tuple[np.ndarray, np.ndarray]:
    """A dense core, two looser clusters and sparse scatter, in metres."""
    rng = _rng(seed)
    parts = [
        rng.normal((0.0, 0.0), 150.0, (n // 2, 2)),
        rng.normal((2500.0, -1500.0), 400.0, (n // 4, 2)),
        rng.normal((-3000.0, 2000.0), 600.0, (n // 8, 2)),
    ]
    used = sum(len(p) for p in parts)
    parts.append(rng.uniform(-7000.0, 7000.0, (n - used, 2)))
    xy = np.vstack(parts)
    return xy[:, 0], xy[:, 1]


def _rescan(
    x: np.ndarray, y: np.ndarray, k: int, bounds: tuple[float, float, float], max_depth: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The per-point rescan of Gruteser and Grunwald (2003) over the same square."""
    xy = np.column_stack([x, y])
    centres = np.empty_like(xy)
    sizes = np.empty(len(xy))
    counts = np.empty(len(xy), dtype=np.int64)
    for i, p in enumerate(xy):
        lo = np.array([bounds[0], bounds[1]])
        hi = lo + bounds[2]
        best, cand = (lo + hi) / 2, xy
        for _ in range(max_depth):
            mid = (lo + hi) / 2
            q_lo = np.where(p < mid, lo, mid)
            q_hi = np.where(p < mid, mid, hi)
            inside = cand[np.all((cand >= q_lo) & (cand < q_hi), axis=1)]
            if len(inside) < k:
                break
            lo, hi, cand, best = q_lo, q_hi, inside, (q_lo + q_hi) / 2
        centres[i], sizes[i], counts[i] = best, hi[0] - lo[0], len(cand)
    return centres, sizes, counts


def _points_in(x: np.ndarray, y: np.ndarray, cx: float, cy: float, size: float) -> np.ndarray:
    half = size / 2
    return (x >= cx - half) & (x < cx + half) & (y >= cy - half) & (y < cy + half)


@pytest.mark.parametrize("k", [2, 5, 20])
def test_every_reported_cell_holds_at_least_k_true_points(k: int) -> None:
    x, y = _clustered(11)
    cx, cy, size, count = cloak_xy(x, y, k, bounds=DYADIC, variant="paper")
    cells = np.unique(np.column_stack([cx, cy, size]), axis=0)
    for ccx, ccy, csize in cells:
        inside = _points_in(x, y, ccx, ccy, csize)
        reported = (cx == ccx) & (cy == ccy) & (size == csize)
        assert inside.sum() >= k
        # Every point reporting the cell lies in it, and the reported count is the truth.
        assert inside[reported].all()
        assert (count[reported] == inside.sum()).all()


@pytest.mark.parametrize("k", [1, 3, 10, 50])
def test_agrees_with_the_per_point_rescan(k: int) -> None:
    x, y = _clustered(12, n=1500)
    expected, sizes, counts = _rescan(x, y, k, DYADIC, 12)
    cx, cy, size, count = cloak_xy(x, y, k, bounds=DYADIC, max_depth=12, variant="paper")
    np.testing.assert_array_equal(cx, expected[:, 0])
    np.testing.assert_array_equal(cy, expected[:, 1])
    np.testing.assert_array_equal(size, sizes)
    np.testing.assert_array_equal(count, counts)


def test_agrees_with_the_rescan_on_the_default_square() -> None:
    x, y = _clustered(13, n=1500)
    cx, cy, size, count = cloak_xy(x, y, 7, variant="paper")
    # The default square: corner at the minima, side the extent widened by 2**-20,
    # depth down to cells of at least 1 m.
    side = max(np.ptp(x), np.ptp(y)) * (1 + 2.0**-20)
    depth = int(np.floor(np.log2(side)))
    expected, sizes, counts = _rescan(x, y, 7, (x.min(), y.min(), side), depth)
    # Same cells; the centres differ only by the rounding of repeated halving.
    np.testing.assert_allclose(cx, expected[:, 0], rtol=0, atol=1e-9)
    np.testing.assert_allclose(cy, expected[:, 1], rtol=0, atol=1e-9)
    np.testing.assert_allclose(size, sizes, rtol=1e-12)
    np.testing.assert_array_equal(count, counts)


@pytest.mark.parametrize("k", [3, 15])
def test_reported_cell_is_the_smallest_quadrant_holding_k(k: int) -> None:
    x, y = _clustered(14)
    depth = 12
    cx, cy, size, _ = cloak_xy(x, y, k, bounds=DYADIC, max_depth=depth, variant="paper")
    finest = DYADIC[2] / 2**depth
    for i in np.flatnonzero(size > finest)[::7]:
        half = size[i] / 2
        # The child quadrant of the reported cell that holds point i.
        child_x = cx[i] - half / 2 if x[i] < cx[i] else cx[i] + half / 2
        child_y = cy[i] - half / 2 if y[i] < cy[i] else cy[i] + half / 2
        assert _points_in(x, y, child_x, child_y, half).sum() < k


def test_dense_areas_get_smaller_cells_than_sparse_ones() -> None:
    x, y = _clustered(15)
    _, _, size, _ = cloak_xy(x, y, 10, bounds=DYADIC, variant="paper")
    core = slice(0, 1500)  # normal, sd 150 m
    scatter = slice(3000 - 375, 3000)  # uniform over 14 km
    assert np.median(size[core]) * 8 <= np.median(size[scatter])
    # The reciprocal default keeps some dense quadrants back with sparse neighbours.
    _, _, size, _ = cloak_xy(x, y, 10, bounds=DYADIC)
    assert np.median(size[core]) * 2 <= np.median(size[scatter])


def test_k_one_gives_the_deepest_cells() -> None:
    x, y = _clustered(16, n=500)
    cx, cy, size, count = cloak_xy(x, y, 1, bounds=DYADIC, max_depth=10)
    np.testing.assert_array_equal(size, np.full(500, DYADIC[2] / 2**10))
    assert (count >= 1).all()
    assert (np.abs(cx - x) <= size / 2).all() and (np.abs(cy - y) <= size / 2).all()


def test_default_depth_stops_at_min_cell() -> None:
    x, y = _clustered(17, n=500)
    _, _, size, _ = cloak_xy(x, y, 1, bounds=DYADIC, min_cell=10.0)
    # 16384 / 2**10 = 16 m >= 10 m > 8 m.
    np.testing.assert_array_equal(size, np.full(500, 16.0))


def test_k_equal_to_n_gives_the_root_cell() -> None:
    x, y = _clustered(18, n=400)
    cx, cy, size, count = cloak_xy(x, y, 400)
    side = max(np.ptp(x), np.ptp(y)) * (1 + 2.0**-20)
    np.testing.assert_allclose(cx, x.min() + side / 2, rtol=1e-15)
    np.testing.assert_allclose(cy, y.min() + side / 2, rtol=1e-15)
    np.testing.assert_allclose(size, side, rtol=1e-15)
    assert (count == 400).all()


def test_paper_variant_releases_centres_for_fewer_than_k() -> None:
    # The paper's limitation: the 2 points outside the crowded quadrant report the
    # parent cell, which holds k + 2 points, yet only 2 rows carry its centre.
    x = np.array([1.0, 1.5, 2.0, 2.5, 3.0, 13.0, 14.0])
    y = np.array([1.0, 1.5, 2.0, 2.5, 3.0, 13.0, 14.0])
    cx, _, size, count = cloak_xy(x, y, 5, bounds=(0.0, 0.0, 16.0), variant="paper")
    assert (count >= 5).all()
    assert (cx[5:] == 8.0).all() and (size[5:] == 16.0).all() and (count[5:] == 7).all()
    assert (size[:5] == 4.0).all()


def test_reciprocal_default_keeps_the_crowded_quadrant_with_the_two() -> None:
    # Regression: the same points under the default release 7 rows at the root centre.
    x = np.array([1.0, 1.5, 2.0, 2.5, 3.0, 13.0, 14.0])
    y = np.array([1.0, 1.5, 2.0, 2.5, 3.0, 13.0, 14.0])
    cx, cy, size, count = cloak_xy(x, y, 5, bounds=(0.0, 0.0, 16.0))
    assert (cx == 8.0).all() and (cy == 8.0).all() and (size == 16.0).all()
    assert (count == 7).all()


def _released_per_location(
    cx: np.ndarray, cy: np.ndarray, size: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Rows per released (centre, size), and each row's location's count."""
    _, inverse, counts = np.unique(
        np.column_stack([cx, cy, size]), axis=0, return_inverse=True, return_counts=True
    )
    return counts, counts[inverse.ravel()]


@pytest.mark.parametrize("k", [2, 5, 10, 20])
@pytest.mark.parametrize("seed", [31, 32, 33])
def test_reciprocal_every_released_location_is_shared_by_k_rows(k: int, seed: int) -> None:
    x, y = _clustered(seed)
    cx, cy, size, count = cloak_xy(x, y, k, bounds=DYADIC)
    per_location, per_row = _released_per_location(cx, cy, size)
    assert per_location.min() >= k
    np.testing.assert_array_equal(count, per_row)
    # Each row is released at a cell that holds it.
    assert (np.abs(x - cx) <= size / 2).all() and (np.abs(y - cy) <= size / 2).all()


def test_paper_variant_releases_a_location_for_one_record_at_k_10() -> None:
    # The audit's check: with the paper's construction some released centre is shared
    # by a single record at k = 10; the default never goes below k.
    x, y = _clustered(34)
    cx, cy, size, _ = cloak_xy(x, y, 10, bounds=DYADIC, variant="paper")
    assert _released_per_location(cx, cy, size)[0].min() < 10
    cx, cy, size, _ = cloak_xy(x, y, 10, bounds=DYADIC)
    assert _released_per_location(cx, cy, size)[0].min() >= 10


@pytest.mark.parametrize("k", [2, 3, 7])
def test_reciprocal_holds_on_adversarial_layouts(k: int) -> None:
    # Adversarial: one lone point next to dense quadrants, at every level of nesting;
    # duplicates stacked on one spot; points on the quadrant edges.
    lone = [(15.9, 15.9), (7.9, 7.9), (3.9, 3.9), (1.9, 1.9)]
    dense = [(0.1 + 0.01 * i, 0.1 + 0.01 * j) for i in range(k) for j in range(2)]
    stacked = [(5.0, 5.0)] * (k - 1)
    edges = [(8.0, 0.0), (0.0, 8.0), (4.0, 4.0), (12.0, 12.0)]
    xy = np.array(lone + dense + stacked + edges)
    for variant_k in (k, k + 1):
        cx, cy, size, count = cloak_xy(xy[:, 0], xy[:, 1], variant_k, bounds=(0.0, 0.0, 16.0))
        per_location, per_row = _released_per_location(cx, cy, size)
        assert per_location.min() >= variant_k
        np.testing.assert_array_equal(count, per_row)
    rng = _rng(35)
    for _ in range(50):
        n = int(rng.integers(k, 400))
        pts = rng.integers(0, 64, (n, 2)).astype(float) / 4.0  # many ties on a lattice
        cx, cy, size, _ = cloak_xy(pts[:, 0], pts[:, 1], k, bounds=(0.0, 0.0, 16.0))
        assert _released_per_location(cx, cy, size)[0].min() >= k


def test_bad_variant_is_refused() -> None:
    with pytest.raises(ParameterError, match="variant: must be 'reciprocal' or 'paper'"):
        cloak_xy([0.0, 1.0], [0.0, 1.0], 1, variant="gruteser")  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="variant"):
        cloak(_frame(30, 20), "lat", "lon", 2, projection=NYC, variant="x")  # type: ignore[arg-type]


@pytest.mark.parametrize("k", [0, -1, 2.0, True, "3"])
def test_k_must_be_a_positive_integer(k: object) -> None:
    with pytest.raises(ParameterError, match="k: must be an integer >= 1"):
        cloak_xy([0.0, 1.0], [0.0, 1.0], k)  # type: ignore[arg-type]


def test_k_larger_than_the_number_of_points_raises() -> None:
    with pytest.raises(ParameterError, match=r"k: must be at most .* \(3\), got 4"):
        cloak_xy([0.0, 1.0, 2.0], [0.0, 1.0, 2.0], 4)


@pytest.mark.parametrize(
    "bounds, match",
    [
        ((0.0, 0.0, 2.0), "must contain every point"),
        ((0.0, 0.0, 3.0), "must contain every point"),  # half-open: x = 3 is outside
        ((0.0, 0.0, 0.0), "size > 0"),
        ((0.0, 0.0, np.inf), "size > 0"),
        ((0.0, 0.0), "must be \\(x0, y0, size\\)"),
        ("abc", "must be \\(x0, y0, size\\)"),
    ],
)
def test_bad_bounds_raise(bounds: object, match: str) -> None:
    with pytest.raises(ParameterError, match="bounds: .*" + match):
        cloak_xy([0.0, 1.0, 3.0], [0.0, 1.0, 2.0], 1, bounds=bounds)  # type: ignore[arg-type]


@pytest.mark.parametrize("max_depth", [-1, 32, 2.0, True])
def test_max_depth_out_of_range_raises(max_depth: object) -> None:
    with pytest.raises(ParameterError, match=r"max_depth: must be an integer in \[0, 31\]"):
        cloak_xy([0.0, 1.0], [0.0, 1.0], 1, max_depth=max_depth)  # type: ignore[arg-type]


def test_non_finite_or_misshapen_arrays_raise() -> None:
    with pytest.raises(DomainError, match="x: 1 missing"):
        cloak_xy([0.0, np.nan], [0.0, 1.0], 1)
    with pytest.raises(ParameterError, match="x, y: must be one-dimensional"):
        cloak_xy([0.0, 1.0], [0.0], 1)


# Frames ------------------------------------------------------------------------------

NYC = projection_at(40.75, -73.98)


def _frame(seed: int, n: int) -> pd.DataFrame:
    rng = _rng(seed)
    return pd.DataFrame(
        {
            "id": np.arange(n),
            "lat": rng.normal(40.75, 0.05, n),
            "lon": rng.normal(-73.98, 0.05, n),
        }
    )


def test_frame_matches_cloak_xy_on_the_projected_metres() -> None:
    df = _frame(21, 2000)
    x, y = NYC.forward(df["lat"].to_numpy(), df["lon"].to_numpy())
    bounds = (-20480.0, -20480.0, 40960.0)
    out = cloak(df, "lat", "lon", 8, bounds_m=bounds, projection=NYC)
    cx, cy, _, _ = cloak_xy(x, y, 8, bounds=bounds)
    lat, lon = NYC.inverse(cx, cy)
    np.testing.assert_allclose(out["lat"], lat, rtol=0, atol=1e-9)
    np.testing.assert_allclose(out["lon"], lon, rtol=0, atol=1e-9)
    # Each released location is shared with the cell: at least k rows fall in it.
    back_x, back_y = NYC.forward(out["lat"].to_numpy(), out["lon"].to_numpy())
    np.testing.assert_allclose(back_x, cx, atol=1e-6)
    np.testing.assert_allclose(back_y, cy, atol=1e-6)


def test_cell_output_adds_size_and_count_and_float64_coordinates() -> None:
    df = _frame(22, 1000)
    out = cloak(df, "lat", "lon", 5, output="cell", projection=NYC)
    assert out["lat"].dtype == np.float64 and out["lon"].dtype == np.float64
    assert out["cloak_size_m"].dtype == np.float64
    assert str(out["cloak_count"].dtype) == "Int64"
    assert (out["cloak_count"] >= 5).all()
    assert list(out.columns) == ["id", "lat", "lon", "cloak_size_m", "cloak_count"]
    x, y = NYC.forward(df["lat"].to_numpy(), df["lon"].to_numpy())
    cx, cy = NYC.forward(out["lat"].to_numpy(), out["lon"].to_numpy())
    half = out["cloak_size_m"].to_numpy() / 2
    # The true location lies in the reported cell (up to projection round-trip error).
    assert (np.abs(x - cx) <= half + 1e-6).all() and (np.abs(y - cy) <= half + 1e-6).all()


def test_centre_output_adds_no_columns() -> None:
    df = _frame(23, 200)
    out = cloak(df, "lat", "lon", 5, projection=NYC)
    assert list(out.columns) == ["id", "lat", "lon"]
    np.testing.assert_array_equal(out["id"], df["id"])


def test_records_a_zero_epsilon_syntactic_cost() -> None:
    out = cloak(_frame(24, 200), "lat", "lon", 4, projection=NYC)
    (entry,) = out.attrs["veil.privacy"]
    assert entry["epsilon"] == 0.0 and entry["delta"] == 0.0
    assert entry["notion"] == "syntactic" and entry["unit"] == "record"
    assert entry["scope"] == "lat, lon"
    assert entry["mechanism"] == "quadtree cloaking (k=4)"


def test_input_frame_is_not_mutated() -> None:
    df = _frame(25, 500)
    before = df.copy(deep=True)
    cloak(df, "lat", "lon", 5, output="cell", projection=NYC)
    pd.testing.assert_frame_equal(df, before)
    assert df.attrs == {}


def test_missing_error_raises_and_keep_keeps() -> None:
    df = _frame(26, 300)
    df.loc[[3, 10], "lat"] = np.nan
    with pytest.raises(MissingValueError):
        cloak(df, "lat", "lon", 5, projection=NYC)
    out = cloak(df, "lat", "lon", 5, output="cell", missing="keep", projection=NYC)
    assert out.loc[[3, 10], ["lat", "lon", "cloak_size_m"]].isna().all().all()
    assert out["cloak_count"].isna().sum() == 2
    assert out.drop(index=[3, 10])[["lat", "lon"]].notna().all().all()
    # Missing rows take no part in the counts: k can reach the present rows only.
    cloak(df, "lat", "lon", 298, missing="keep", projection=NYC)
    with pytest.raises(ParameterError, match=r"k: must be at most .* \(298\)"):
        cloak(df, "lat", "lon", 299, missing="keep", projection=NYC)


def test_out_of_range_latitude_raises() -> None:
    df = _frame(27, 50)
    df.loc[0, "lat"] = 95.0
    with pytest.raises(DomainError, match="'lat'"):
        cloak(df, "lat", "lon", 5, projection=NYC)


def test_frame_parameter_errors_name_the_parameter() -> None:
    df = _frame(28, 50)
    with pytest.raises(ParameterError, match="output: must be 'centre' or 'cell'"):
        cloak(df, "lat", "lon", 5, output="box", projection=NYC)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match=r"bounds_m: .*must contain every point"):
        cloak(df, "lat", "lon", 5, bounds_m=(0.0, 0.0, 10.0), projection=NYC)
    with pytest.raises(ParameterError, match="min_cell_m"):
        cloak(df, "lat", "lon", 5, min_cell_m=0.0, projection=NYC)
    with pytest.raises(ParameterError, match="k: must be at most"):
        cloak(df, "lat", "lon", 51, projection=NYC)
    taken = df.assign(cloak_count=1)
    with pytest.raises(ParameterError, match="already has \\['cloak_count'\\]"):
        cloak(taken, "lat", "lon", 5, output="cell", projection=NYC)


def test_hundred_thousand_points() -> None:
    df = _frame(29, 100_000)
    out = cloak(df, "lat", "lon", 10, output="cell", projection=NYC)
    assert len(out) == 100_000
    assert (out["cloak_count"] >= 10).all()
    assert out[["lat", "lon"]].notna().all().all()


def test_bounds_derived_from_the_data_warn_and_public_bounds_do_not() -> None:
    df = _frame(41, 200)
    with pytest.warns(PrivacyLeakWarning, match="bounds_m"):
        cloak(df, "lat", "lon", 5, projection=NYC)
    x, y = NYC.forward(df["lat"].to_numpy(), df["lon"].to_numpy())
    bounds = (float(x.min()) - 1000.0, float(y.min()) - 1000.0, 50_000.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cloak(df, "lat", "lon", 5, bounds_m=bounds, projection=NYC)


def test_frame_without_a_projection_is_refused() -> None:
    with pytest.raises(ParameterError, match=r"projection: .*public"):
        cloak(_frame(42, 50), "lat", "lon", 5)


def test_projection_from_the_data_warns_and_is_recorded() -> None:
    df = _frame(43, 200)
    with pytest.warns(PrivacyLeakWarning, match="chosen from the data"):
        out = cloak(df, "lat", "lon", 5, projection="data", bounds_m=None)
    leaks = [entry["leak"] for entry in out.attrs["veil.leaks"]]
    assert "projection chosen from the data" in leaks
    assert "quadtree root square derived from the data" in leaks


def test_public_bounds_and_projection_record_no_leak() -> None:
    df = _frame(44, 200)
    out = cloak(df, "lat", "lon", 5, bounds_m=(-40960.0, -40960.0, 81920.0), projection=NYC)
    assert "veil.leaks" not in out.attrs


@pytest.mark.parametrize(
    "bounds",
    [(0.0, 0.0, 1e308), (-1e300, 0.0, 10.0), (0.0, 0.0, 2.1e7), (0.0, float("nan"), 10.0)],
)
def test_bounds_beyond_what_a_projection_holds_are_refused(bounds: object) -> None:
    with pytest.raises(ParameterError, match=r"bounds_m: .*20,000 km"):
        cloak(_frame(45, 50), "lat", "lon", 5, bounds_m=bounds, projection=NYC)  # type: ignore[arg-type]


@pytest.mark.parametrize("min_cell", [1e308, float("inf"), -1.0, 0.0])
def test_min_cell_m_beyond_what_a_projection_holds_is_refused(min_cell: float) -> None:
    with pytest.raises(ParameterError, match=r"min_cell_m: .*20,000,000"):
        cloak(_frame(46, 50), "lat", "lon", 5, min_cell_m=min_cell, projection=NYC)


def test_outside_records_raise_or_are_dropped() -> None:
    df = _frame(47, 300)
    df.loc[7, ["lat", "lon"]] = (-40.75, 106.02)  # the sign typo, far from New York
    with pytest.raises(DomainError, match="1 records lie outside") as info:
        cloak(df, "lat", "lon", 5, projection=NYC)
    assert "106.02" not in str(info.value) and "-40.75" not in str(info.value)
    out = cloak(df, "lat", "lon", 5, projection=NYC, outside="drop", output="cell")
    assert len(out) == 299 and 7 not in out.index
    assert out["cloak_count"].notna().all() and (out["cloak_count"] >= 5).all()
    (entry,) = out.attrs["veil.masking"]
    assert entry["dropped"] == 1
