"""Geographic masks: frame contract, bad input, and the noise laws measured in metres.

Distribution tests draw from ``numpy.random.Generator(PCG64(seed))`` with fixed seeds and
accept a Kolmogorov-Smirnov p-value above ``KS_P`` (a correct sampler fails one such
test with probability 1e-3 over seeds; with the seeds fixed the outcome is stable).
Displacements are measured in the projection the mask used, and for isotropy also along
the ellipsoid (``pyproj.Geod``), independently of any projection.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pyproj
import pytest
from scipy import stats

from veil.errors import (
    ColumnError,
    DataTypeError,
    DomainError,
    MissingValueError,
    ParameterError,
    PrivacyLeakWarning,
    ReproducibleNoiseWarning,
)
from veil.geo import (
    LocalProjection,
    donut,
    grid,
    jitter,
    planar_laplace,
    projection_at,
    projection_for_region,
)
from veil.mechanisms import PlanarLaplace, PrivacyLedger

GEOD = pyproj.Geod(ellps="WGS84")
KS_P = 1e-3
NYC = (40.75, -73.98)


def _rng(seed: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed))


Mask = Callable[..., pd.DataFrame]

# Each mask with parameters giving displacements of a few hundred metres.
PUBLIC = projection_at(*NYC)


def _public(kw: dict[str, Any]) -> dict[str, Any]:
    """The keywords with a public projection (New York's centre) unless one is given."""
    return {"projection": PUBLIC, **kw}


MASKS: dict[str, Mask] = {
    "planar_laplace": lambda df, **kw: planar_laplace(
        df, "lat", "lon", 0.01, rng=kw.pop("rng", _rng(0)), **_public(kw)
    ),
    "jitter_disc": lambda df, **kw: jitter(
        df, "lat", "lon", 300.0, kind="disc", rng=kw.pop("rng", _rng(0)), **_public(kw)
    ),
    "jitter_gaussian": lambda df, **kw: jitter(
        df, "lat", "lon", 150.0, kind="gaussian", rng=kw.pop("rng", _rng(0)), **_public(kw)
    ),
    "donut": lambda df, **kw: donut(
        df, "lat", "lon", 100.0, 500.0, rng=kw.pop("rng", _rng(0)), **_public(kw)
    ),
    "grid": lambda df, **kw: grid(df, "lat", "lon", 250.0, **_public(kw)),
}
ALL = pytest.mark.parametrize("name", list(MASKS))


def _frame(n: int = 200, seed: int = 0) -> pd.DataFrame:
    rng = _rng(seed)
    df = pd.DataFrame(
        {
            "id": np.arange(n, dtype=np.int64),
            "lat": NYC[0] + rng.uniform(-0.05, 0.05, n),
            "label": [f"person {i}" for i in range(n)],
            "lon": NYC[1] + rng.uniform(-0.05, 0.05, n),
            "score": rng.normal(size=n),
        },
        index=pd.Index([f"r{i}" for i in rng.permutation(n)], name="key"),
    )
    df.attrs["source"] = "test"
    return df


def _same_point(n: int, lat: float, lon: float) -> pd.DataFrame:
    return pd.DataFrame({"lat": np.full(n, lat), "lon": np.full(n, lon)})


def _displacement(
    df: pd.DataFrame, out: pd.DataFrame, projection: LocalProjection
) -> tuple[np.ndarray, np.ndarray]:
    x0, y0 = projection.forward(df["lat"].to_numpy(), df["lon"].to_numpy())
    x1, y1 = projection.forward(out["lat"].to_numpy(), out["lon"].to_numpy())
    return x1 - x0, y1 - y0


def _angle_fraction(east: np.ndarray, north: np.ndarray) -> np.ndarray:
    """Bearing of each displacement as a fraction of the full turn, in [0, 1)."""
    return np.asarray(np.remainder(np.arctan2(east, north), 2 * math.pi) / (2 * math.pi))


# --- the frame contract ----------------------------------------------------------------------


@ALL
def test_returns_a_new_frame_and_leaves_the_input_alone(name: str) -> None:
    df = _frame()
    before = df.copy(deep=True)
    out = MASKS[name](df)
    assert out is not df
    pd.testing.assert_frame_equal(df, before)
    assert df.attrs == {"source": "test"}
    out.loc[out.index[0], "lat"] = 0.0  # editing the result must not reach the input
    pd.testing.assert_frame_equal(df, before)


@ALL
def test_other_columns_index_and_order_are_kept(name: str) -> None:
    df = _frame()
    out = MASKS[name](df)
    assert list(out.columns) == list(df.columns)
    pd.testing.assert_index_equal(out.index, df.index)
    for column in ("id", "label", "score"):
        pd.testing.assert_series_equal(out[column], df[column])
    assert out["lat"].dtype == np.float64 and out["lon"].dtype == np.float64
    assert out["lat"].notna().all() and out["lon"].notna().all()
    moved = (out["lat"] != df["lat"]) | (out["lon"] != df["lon"])
    assert moved.all()
    assert out.attrs["source"] == "test"


@ALL
def test_missing_coordinates_raise_by_default(name: str) -> None:
    df = _frame()
    df.iloc[3, df.columns.get_loc("lat")] = np.nan
    with pytest.raises(MissingValueError, match="missing='keep'"):
        MASKS[name](df)


@ALL
def test_missing_keep_leaves_those_rows_missing_and_masks_the_rest(name: str) -> None:
    df = _frame()
    df.iloc[3, df.columns.get_loc("lat")] = np.nan
    df.iloc[7, df.columns.get_loc("lon")] = np.nan
    df.iloc[9, [df.columns.get_loc("lat"), df.columns.get_loc("lon")]] = np.nan
    out = MASKS[name](df, missing="keep")
    gaps = [3, 7, 9]
    assert out["lat"].iloc[gaps].isna().all()
    # A half-present pair is not released raw: the present coordinate of an unmasked
    # row would be the true one.
    assert out["lon"].iloc[gaps].isna().all()
    rest = np.setdiff1d(np.arange(len(df)), gaps)
    assert out["lat"].iloc[rest].notna().all() and out["lon"].iloc[rest].notna().all()
    assert (out["lat"].iloc[rest] != df["lat"].iloc[rest]).all()


@ALL
def test_unknown_missing_policy_is_refused(name: str) -> None:
    with pytest.raises(ParameterError, match="missing"):
        MASKS[name](_frame(), missing="drop")


@ALL
@pytest.mark.parametrize(
    ("column", "value"),
    [("lat", 91.0), ("lat", -90.01), ("lon", 180.5), ("lon", -361.0), ("lat", np.inf)],
)
def test_out_of_range_coordinates_raise_domain_error(name: str, column: str, value: float) -> None:
    df = _frame()
    df.iloc[5, df.columns.get_loc(column)] = value
    with pytest.raises(DomainError, match=f"column '{column}'"):
        MASKS[name](df)


@ALL
def test_non_numeric_coordinates_raise_a_type_error(name: str) -> None:
    df = _frame()
    df["lat"] = df["lat"].astype(str)
    with pytest.raises(DataTypeError, match="numeric") as info:
        MASKS[name](df)
    assert isinstance(info.value, TypeError)
    df = _frame()
    df["lon"] = df["lon"] > -73.98
    with pytest.raises(DataTypeError, match="numeric"):
        MASKS[name](df)


@ALL
def test_not_a_dataframe_is_refused(name: str) -> None:
    with pytest.raises(DataTypeError, match="DataFrame"):
        MASKS[name](_frame()[["lat", "lon"]].to_numpy())


def test_absent_column_raises_column_error() -> None:
    # veil.errors documents ColumnError as "a column named by the caller is absent from
    # the data", as veil.ldp and veil.metrics raise; veil.geo._frame._column raises
    # ParameterError instead.
    for mask in MASKS.values():
        with pytest.raises(ColumnError, match="'lat'"):
            mask(_frame().drop(columns="lat"))


@ALL
def test_continent_wide_data_is_refused(name: str) -> None:
    rng = _rng(1)
    df = pd.DataFrame({"lat": rng.uniform(25.0, 49.0, 300), "lon": rng.uniform(-124.0, -67.0, 300)})
    with pytest.raises(DomainError, match="km from their centre"):
        MASKS[name](df, projection="data")
    with pytest.raises(DomainError, match=r"\d+ records lie outside the region"):
        MASKS[name](df)


@ALL
def test_empty_frame_gives_an_empty_frame(name: str) -> None:
    df = pd.DataFrame(
        {"lat": pd.Series([], dtype=np.float64), "lon": pd.Series([], dtype=np.float64), "x": []}
    )
    out = MASKS[name](df)
    assert out.empty and list(out.columns) == ["lat", "lon", "x"]
    assert out["lat"].dtype == np.float64


@ALL
def test_all_missing_with_keep_gives_all_missing(name: str) -> None:
    df = pd.DataFrame({"lat": [np.nan, np.nan], "lon": [np.nan, 1.0]})
    out = MASKS[name](df, missing="keep")
    assert out[["lat", "lon"]].isna().all().all()


@ALL
def test_a_given_projection_is_used(name: str) -> None:
    df = _frame()
    projection = projection_at(*NYC, method="utm")
    out = MASKS[name](df, projection=projection)
    assert out["lat"].notna().all()
    with pytest.raises(ParameterError, match="projection"):
        MASKS[name](df, projection="mercator")


@ALL
@pytest.mark.parametrize("method", ["aeqd", "stereographic"])
def test_masks_near_the_pole_and_across_the_antimeridian(name: str, method: str) -> None:
    for lat0, lon0 in ((86.0, 20.0), (-17.0, 179.999)):
        df = _same_point(500, lat0, lon0)
        out = MASKS[name](df, projection=projection_at(lat0, lon0, method=method))  # type: ignore[arg-type]
        assert ((out["lon"] >= -180.0) & (out["lon"] < 180.0)).all()
        _, _, dist = GEOD.inv(df["lon"].to_numpy(), df["lat"].to_numpy(), out["lon"], out["lat"])
        assert np.max(dist) < 5_000.0  # metres, not a jump across the globe


# --- parameter validation --------------------------------------------------------------------


@pytest.mark.parametrize("epsilon", [0, -1.0, float("nan"), float("inf"), "0.1"])
def test_planar_laplace_refuses_bad_epsilon(epsilon: Any) -> None:
    with pytest.raises(ParameterError, match="epsilon"):
        planar_laplace(_frame(), "lat", "lon", epsilon, rng=_rng(0), projection=PUBLIC)


@pytest.mark.parametrize("reports", [0, -2, 1.5, True])
def test_planar_laplace_refuses_bad_reports(reports: Any) -> None:
    with pytest.raises(ParameterError, match="reports"):
        planar_laplace(
            _frame(), "lat", "lon", 0.01, reports=reports, rng=_rng(0), projection=PUBLIC
        )


def test_bad_sizes_are_refused() -> None:
    df = _frame()
    with pytest.raises(ParameterError, match="grid_m"):
        planar_laplace(df, "lat", "lon", 0.01, grid_m=0.0, rng=_rng(0), projection=PUBLIC)
    with pytest.raises(ParameterError, match="truncate_to"):
        planar_laplace(df, "lat", "lon", 0.01, truncate_to=[(0, 0)], rng=_rng(0), projection=PUBLIC)
    with pytest.raises(ParameterError, match="radius_m"):
        jitter(df, "lat", "lon", -5.0, rng=_rng(0), projection=PUBLIC)
    with pytest.raises(ParameterError, match="kind"):
        jitter(df, "lat", "lon", 5.0, kind="square", rng=_rng(0), projection=PUBLIC)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="cell_m"):
        grid(df, "lat", "lon", 0.0, projection=PUBLIC)
    for min_count in (0, True, 2.5):
        with pytest.raises(ParameterError, match="min_count"):
            grid(df, "lat", "lon", 100.0, min_count=min_count, projection=PUBLIC)  # type: ignore[arg-type]


@pytest.mark.parametrize(("r_min", "r_max"), [(-1.0, 10.0), (10.0, 10.0), (20.0, 10.0), (1.0, 0.0)])
def test_donut_refuses_bad_radii(r_min: float, r_max: float) -> None:
    with pytest.raises(ParameterError, match="r_m"):
        donut(_frame(), "lat", "lon", r_min, r_max, rng=_rng(0), projection=PUBLIC)


# --- planar Laplace: the law of the displacement ----------------------------------------------


@pytest.mark.parametrize(("lat0", "lon0"), [NYC, (65.0, 25.0), (0.0, 10.0), (-0.0001, 10.0)])
def test_planar_laplace_radius_is_gamma_2_and_angle_uniform(lat0: float, lon0: float) -> None:
    epsilon, n = 0.01, 20_000
    df = _same_point(n, lat0, lon0)
    projection = projection_at(lat0, lon0)
    out = planar_laplace(df, "lat", "lon", epsilon, projection=projection, rng=_rng(11))
    east, north = _displacement(df, out, projection)
    radius = np.hypot(east, north)
    assert stats.kstest(radius, stats.gamma(a=2.0, scale=1.0 / epsilon).cdf).pvalue > KS_P
    assert stats.kstest(_angle_fraction(east, north), "uniform").pvalue > KS_P
    assert radius.mean() == pytest.approx(2.0 / epsilon, rel=0.03)  # SE 0.5 %


@pytest.mark.parametrize(("lat0", "lon0"), [(65.0, 25.0), (0.0, 10.0), (-40.0, 175.0)])
def test_planar_laplace_is_isotropic_in_metres(lat0: float, lon0: float) -> None:
    # Noise added in degrees, or in Earth-centred coordinates (privkit), has an east and a
    # north spread that differ by cos or sin of the latitude (10 % to 60 % here). Each
    # component of the planar Laplace has standard deviation sqrt(3) / epsilon.
    epsilon, n = 0.01, 50_000
    expected = math.sqrt(3.0) / epsilon
    df = _same_point(n, lat0, lon0)
    projection = projection_at(lat0, lon0)
    out = planar_laplace(df, "lat", "lon", epsilon, projection=projection, rng=_rng(12))
    east, north = _displacement(df, out, projection)
    assert east.std() == pytest.approx(expected, rel=0.03)  # SE about 0.6 %
    assert north.std() == pytest.approx(expected, rel=0.03)
    assert east.std() / north.std() == pytest.approx(1.0, abs=0.03)
    # The same along the ellipsoid, independent of the projection.
    azimuth, _, distance = GEOD.inv(
        df["lon"].to_numpy(), df["lat"].to_numpy(), out["lon"], out["lat"]
    )
    geo_east = distance * np.sin(np.radians(azimuth))
    geo_north = distance * np.cos(np.radians(azimuth))
    assert geo_east.std() == pytest.approx(expected, rel=0.03)
    assert geo_north.std() == pytest.approx(expected, rel=0.03)
    assert abs(np.corrcoef(geo_east, geo_north)[0, 1]) < 0.02


@pytest.mark.parametrize(
    ("method", "reach_m"), [("stereographic", 370_000.0), ("aeqd", 460_000.0), ("utm", 150_000.0)]
)
@pytest.mark.parametrize("epsilon", [0.01, 0.001])
def test_planar_laplace_displacements_are_within_0_1_percent_of_the_geodesic(
    method: str, reach_m: float, epsilon: float
) -> None:
    """The length each record moves along the ellipsoid (pyproj.Geod) is the drawn radius
    to within 0.1 %, anywhere in the public projection's region (less the noise's reach:
    the longest draw here is about 15 km; NYC's UTM zone ends 170 km east of the centre)."""
    n = 20_000
    rng = _rng(31)
    lon, lat, _ = GEOD.fwd(
        np.full(n, NYC[1]),
        np.full(n, NYC[0]),
        rng.uniform(0.0, 360.0, n),
        reach_m * np.sqrt(rng.uniform(0.0, 1.0, n)),
    )
    df = pd.DataFrame({"lat": lat, "lon": lon})
    projection = projection_at(*NYC, method=method)  # type: ignore[arg-type]
    out = planar_laplace(df, "lat", "lon", epsilon, projection=projection, rng=_rng(32))
    _, _, drawn = PlanarLaplace(epsilon).sample(n, _rng(32))  # the same stream
    _, _, moved = GEOD.inv(lon, lat, out["lon"].to_numpy(), out["lat"].to_numpy())
    error = np.abs(np.asarray(moved) / drawn - 1.0)
    assert error.max() < 1e-3, error.max()
    # Close to the centre the projections are all but exact (stereographic: 1 + rho^2/4R^2).
    if method != "utm":
        near = np.hypot(*projection.forward(lat, lon)) < 50_000.0
        assert error[near].max() < 2e-5, error[near].max()


def test_planar_laplace_records_its_cost() -> None:
    df = _frame()
    df.attrs["veil.privacy"] = [{"epsilon": 1.0, "notion": "ldp"}]
    ledger = PrivacyLedger()
    out = planar_laplace(
        df, "lat", "lon", 0.004, reports=3, projection=PUBLIC, rng=_rng(0), ledger=ledger
    )
    history = out.attrs["veil.privacy"]
    assert len(history) == 2 and history[0] == {"epsilon": 1.0, "notion": "ldp"}
    cost = history[-1]
    assert cost["epsilon"] == pytest.approx(3 * 0.004)
    assert cost["delta"] == 0.0
    assert (cost["notion"], cost["unit"]) == ("metric", "metre")
    assert "3 reports" in cost["mechanism"]
    assert len(ledger) == 1
    assert ledger.entries[-1].epsilon == pytest.approx(0.012)
    assert ledger.total("metric", "metre").epsilon == pytest.approx(0.012)
    assert df.attrs["veil.privacy"] == [{"epsilon": 1.0, "notion": "ldp"}]  # input untouched


def test_planar_laplace_reports_spend_but_do_not_change_the_noise() -> None:
    df = _frame()
    once = planar_laplace(df, "lat", "lon", 0.01, projection=PUBLIC, rng=_rng(5))
    thrice = planar_laplace(df, "lat", "lon", 0.01, reports=3, projection=PUBLIC, rng=_rng(5))
    pd.testing.assert_frame_equal(once, thrice)
    assert once.attrs["veil.privacy"][-1]["epsilon"] == pytest.approx(0.01)


def test_planar_laplace_grid_m_snaps_to_cell_centres() -> None:
    df = _frame(2000)
    projection = projection_at(*NYC, method="utm")
    out = planar_laplace(df, "lat", "lon", 0.01, grid_m=50.0, projection=projection, rng=_rng(3))
    x, y = projection.forward(out["lat"].to_numpy(), out["lon"].to_numpy())
    for coord in (x, y):
        cells = coord / 50.0 - 0.5
        np.testing.assert_allclose(cells, np.round(cells), atol=1e-6)
    raw = planar_laplace(df, "lat", "lon", 0.01, projection=projection, rng=_rng(3))
    rx, ry = projection.forward(raw["lat"].to_numpy(), raw["lon"].to_numpy())
    assert np.abs(rx - x).max() <= 25.0 + 1e-6 and np.abs(ry - y).max() <= 25.0 + 1e-6


def test_planar_laplace_truncate_to_keeps_outputs_in_the_region() -> None:
    import shapely

    region = shapely.box(-74.00, 40.72, -73.96, 40.78)  # lon/lat, as shapely orders them
    rng = _rng(21)
    n = 3000
    df = pd.DataFrame(
        {"lat": rng.uniform(40.725, 40.775, n), "lon": rng.uniform(-73.995, -73.965, n)}
    )
    projection = projection_at(40.75, -73.98, method="utm")
    kwargs: dict[str, Any] = {"projection": projection}
    out = planar_laplace(df, "lat", "lon", 0.002, truncate_to=region, rng=_rng(4), **kwargs)
    raw = planar_laplace(df, "lat", "lon", 0.002, rng=_rng(4), **kwargs)

    def to_metres(coords: np.ndarray) -> np.ndarray:
        px, py = projection.forward(coords[:, 1], coords[:, 0])
        return np.column_stack([px, py])

    planar = shapely.transform(shapely.segmentize(region, 0.001), to_metres)
    x, y = projection.forward(out["lat"].to_numpy(), out["lon"].to_numpy())
    assert shapely.distance(planar, shapely.points(x, y)).max() <= 1.0  # metres
    rx, ry = projection.forward(raw["lat"].to_numpy(), raw["lon"].to_numpy())
    inside = shapely.contains_xy(planar, rx, ry)
    assert 0.2 < inside.mean() < 0.9  # the test exercises both branches
    np.testing.assert_array_equal(out["lat"].to_numpy()[inside], raw["lat"].to_numpy()[inside])
    np.testing.assert_array_equal(out["lon"].to_numpy()[inside], raw["lon"].to_numpy()[inside])
    # outside points go to the nearest point of the region, so onto its boundary
    edge = shapely.distance(planar.boundary, shapely.points(x[~inside], y[~inside]))
    assert edge.max() <= 1.0


def test_planar_laplace_truncate_to_refuses_an_empty_region() -> None:
    import shapely

    with pytest.raises(ParameterError, match="truncate_to"):
        planar_laplace(
            _frame(),
            "lat",
            "lon",
            0.01,
            truncate_to=shapely.Polygon(),
            rng=_rng(0),
            projection=PUBLIC,
        )


# --- jitter and donut ---------------------------------------------------------------------


@pytest.mark.parametrize(("lat0", "lon0"), [NYC, (65.0, 25.0)])
def test_jitter_disc_is_uniform_over_the_disc(lat0: float, lon0: float) -> None:
    radius_m, n = 300.0, 20_000
    df = _same_point(n, lat0, lon0)
    projection = projection_at(lat0, lon0)
    out = jitter(df, "lat", "lon", radius_m, kind="disc", projection=projection, rng=_rng(31))
    east, north = _displacement(df, out, projection)
    r = np.hypot(east, north)
    assert r.max() <= radius_m + 1e-6
    assert stats.kstest((r / radius_m) ** 2, "uniform").pvalue > KS_P
    assert stats.kstest(_angle_fraction(east, north), "uniform").pvalue > KS_P


@pytest.mark.parametrize(("lat0", "lon0"), [NYC, (65.0, 25.0)])
def test_jitter_gaussian_components_have_the_stated_std(lat0: float, lon0: float) -> None:
    sigma, n = 150.0, 20_000
    df = _same_point(n, lat0, lon0)
    projection = projection_at(lat0, lon0)
    out = jitter(df, "lat", "lon", sigma, kind="gaussian", projection=projection, rng=_rng(32))
    east, north = _displacement(df, out, projection)
    for component in (east, north):
        assert component.std() == pytest.approx(sigma, rel=0.02)  # SE 0.5 %
        assert abs(component.mean()) < 5.0  # SE about 1 m
        assert stats.kstest(component / sigma, "norm").pvalue > KS_P
    assert abs(np.corrcoef(east, north)[0, 1]) < 0.03


@pytest.mark.parametrize(("lat0", "lon0"), [NYC, (65.0, 25.0), (-33.87, 151.21)])
def test_donut_is_uniform_over_the_annulus_area(lat0: float, lon0: float) -> None:
    r_min, r_max, n = 100.0, 500.0, 20_000
    df = _same_point(n, lat0, lon0)
    projection = projection_at(lat0, lon0)
    out = donut(df, "lat", "lon", r_min, r_max, projection=projection, rng=_rng(33))
    east, north = _displacement(df, out, projection)
    r = np.hypot(east, north)
    assert r.min() >= r_min - 1e-6 and r.max() <= r_max + 1e-6
    area_fraction = (r**2 - r_min**2) / (r_max**2 - r_min**2)
    assert stats.kstest(area_fraction, "uniform").pvalue > KS_P
    # uniform over the radius instead (MaskMyPy's "uniform") would put half the points
    # within 300 m; uniform over the area puts (300^2 - 100^2) / (500^2 - 100^2) = 1/3
    assert (r <= 300.0).mean() == pytest.approx(1 / 3, abs=0.015)
    assert stats.kstest(_angle_fraction(east, north), "uniform").pvalue > KS_P


def test_donut_with_zero_inner_radius_is_a_disc() -> None:
    df = _same_point(20_000, *NYC)
    out = donut(df, "lat", "lon", 0, 200.0, projection=PUBLIC, rng=_rng(34))
    east, north = _displacement(df, out, PUBLIC)
    assert stats.kstest((np.hypot(east, north) / 200.0) ** 2, "uniform").pvalue > KS_P


# --- grid -------------------------------------------------------------------------------


def test_grid_outputs_cell_centres() -> None:
    df = _frame(3000)
    projection = PUBLIC
    out = grid(df, "lat", "lon", 250.0, projection=projection)
    x, y = projection.forward(out["lat"].to_numpy(), out["lon"].to_numpy())
    x0, y0 = projection.forward(df["lat"].to_numpy(), df["lon"].to_numpy())
    for coord, true in ((x, x0), (y, y0)):
        cells = coord / 250.0 - 0.5
        np.testing.assert_allclose(cells, np.round(cells), atol=1e-6)
        np.testing.assert_array_equal(np.round(cells), np.floor(true / 250.0))
    assert out.groupby(["lat", "lon"]).ngroups < len(df) / 2


def test_grid_is_deterministic_and_takes_no_rng() -> None:
    df = _frame()
    pd.testing.assert_frame_equal(
        grid(df, "lat", "lon", 100.0, projection=PUBLIC),
        grid(df, "lat", "lon", 100.0, projection=PUBLIC),
    )
    with pytest.raises(TypeError):
        grid(df, "lat", "lon", 100.0, projection=PUBLIC, rng=_rng(0))  # type: ignore[call-arg]


def test_grid_min_count_suppresses_sparse_cells() -> None:
    rng = _rng(41)
    dense = pd.DataFrame(
        {"lat": 40.75 + rng.uniform(0, 0.004, 400), "lon": -73.98 + rng.uniform(0, 0.004, 400)}
    )
    sparse = pd.DataFrame(
        {"lat": 40.80 + rng.uniform(0, 0.05, 40), "lon": -73.90 + rng.uniform(0, 0.05, 40)}
    )
    df = pd.concat([dense, sparse], ignore_index=True)
    projection = projection_at(*NYC, method="utm")
    plain = grid(df, "lat", "lon", 200.0, projection=projection)
    out = grid(df, "lat", "lon", 200.0, min_count=5, projection=projection)
    cell_size = plain.groupby(["lat", "lon"])["lat"].transform("size")
    suppressed = out["lat"].isna()
    np.testing.assert_array_equal(suppressed.to_numpy(), (cell_size < 5).to_numpy())
    assert out["lon"].isna().equals(suppressed)
    assert 0 < suppressed.sum() < len(df)
    released = out.dropna().groupby(["lat", "lon"]).size()
    assert released.min() >= 5
    kept = ~suppressed
    pd.testing.assert_frame_equal(out[kept], plain[kept])
    one = grid(df, "lat", "lon", 200.0, min_count=1, projection=projection)
    pd.testing.assert_frame_equal(one, plain)


# --- reproducibility --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["planar_laplace", "jitter_disc", "jitter_gaussian", "donut"])
def test_same_seed_same_output_other_seed_other_output(name: str) -> None:
    df = _frame()
    first = MASKS[name](df, rng=_rng(7))
    pd.testing.assert_frame_equal(first, MASKS[name](df, rng=_rng(7)))
    other = MASKS[name](df, rng=_rng(8))
    assert (other["lat"] != first["lat"]).all()


@pytest.mark.parametrize("name", ["planar_laplace", "jitter_disc", "jitter_gaussian", "donut"])
def test_int_seed_is_reproducible_and_warns(name: str) -> None:
    df = _frame()
    with pytest.warns(ReproducibleNoiseWarning):
        first = MASKS[name](df, rng=3)
    with pytest.warns(ReproducibleNoiseWarning):
        second = MASKS[name](df, rng=3)
    pd.testing.assert_frame_equal(first, second)


@pytest.mark.parametrize("name", ["planar_laplace", "jitter_disc", "jitter_gaussian", "donut"])
def test_default_rng_is_fresh_and_silent(name: str) -> None:
    df = _frame()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        first = MASKS[name](df, rng=None)
        second = MASKS[name](df, rng=None)
    assert (first["lat"] != second["lat"]).all()


# --- the projection is public (soundness audit, items 1, 2 and 5) ---------------------------


@ALL
def test_no_projection_is_refused_naming_projection(name: str) -> None:
    with pytest.raises(ParameterError, match=r"projection: .*public centre.*projection='data'"):
        MASKS[name](_frame(), projection=None)


@ALL
@pytest.mark.parametrize("choice", ["data", "auto", "utm", "aeqd"])
def test_projection_from_the_data_warns_and_is_recorded(name: str, choice: str) -> None:
    df = _frame()
    with pytest.warns(PrivacyLeakWarning, match="chosen from the data"):
        out = MASKS[name](df, projection=choice)
    (leak,) = out.attrs["veil.leaks"]
    assert leak["leak"] == "projection chosen from the data"
    assert leak["scope"] == "lat, lon"
    assert "veil.leaks" not in df.attrs
    if name == "planar_laplace":
        assert "projection chosen from the data" in out.attrs["veil.privacy"][-1]["mechanism"]


@ALL
def test_a_public_projection_records_no_leak_and_does_not_warn(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = MASKS[name](_frame())
    assert "veil.leaks" not in out.attrs


def _moved(df: pd.DataFrame, row: int, metres_east: float) -> pd.DataFrame:
    lon2, lat2, _ = GEOD.fwd(df["lon"].iloc[row], df["lat"].iloc[row], 90.0, metres_east)
    moved = df.copy()
    moved.iloc[row, moved.columns.get_loc("lat")] = lat2
    moved.iloc[row, moved.columns.get_loc("lon")] = lon2
    return moved


@pytest.mark.parametrize("name", ["planar_laplace", "jitter_disc", "donut", "grid"])
def test_moving_one_record_leaves_every_other_release_unchanged(name: str) -> None:
    # The audit's attack: with the projection chosen from the data, moving one record
    # 17 m switched UTM to AEQD and moved the other 999 points by a median 1.9 m. With a
    # public projection every other row is released bit for bit the same.
    rng = _rng(50)
    n = 1000
    df = pd.DataFrame(
        {"lat": 40.75 + rng.uniform(-0.2, 0.2, n), "lon": -74.5 + rng.uniform(-1.6, 1.6, n)}
    )
    for moved in (_moved(df, 0, 17.0), _moved(df, 0, 90_000.0)):
        first = MASKS[name](df, rng=_rng(51)) if name != "grid" else MASKS[name](df)
        second = MASKS[name](moved, rng=_rng(51)) if name != "grid" else MASKS[name](moved)
        pd.testing.assert_frame_equal(first.iloc[1:], second.iloc[1:])
        if name == "planar_laplace":
            assert first.attrs["veil.privacy"] == second.attrs["veil.privacy"]


def test_the_data_chosen_projection_is_what_moved_the_others() -> None:
    # The same attack against projection="data": one record 10 m inside the UTM zone's
    # 3-degree margin moves 17 m east, across it; "auto" switches from UTM to AEQD and
    # every other record's release moves (the leak the warning names is real).
    rng = _rng(50)
    n = 1000
    df = pd.DataFrame(
        {"lat": 40.75 + rng.uniform(-0.2, 0.2, n), "lon": -74.5 + rng.uniform(-1.4, 1.4, n)}
    )
    edge_lon, _, _ = GEOD.fwd(-72.0, 40.75, 270.0, 10.0)
    df.iloc[0] = (40.75, edge_lon)
    moved = _moved(df, 0, 17.0)
    with pytest.warns(PrivacyLeakWarning):
        first = planar_laplace(df, "lat", "lon", 0.01, projection="data", rng=_rng(51))
    with pytest.warns(PrivacyLeakWarning):
        second = planar_laplace(moved, "lat", "lon", 0.01, projection="data", rng=_rng(51))
    assert "(utm" in first.attrs["veil.privacy"][-1]["mechanism"]
    assert "(aeqd" in second.attrs["veil.privacy"][-1]["mechanism"]
    shift = GEOD.inv(first["lon"][1:], first["lat"][1:], second["lon"][1:], second["lat"][1:])[2]
    assert np.median(shift) > 0.1  # metres


def test_adding_one_person_does_not_move_any_grid_cell() -> None:
    df = _frame(500)
    extra = pd.DataFrame({"lat": [40.69], "lon": [-74.03]})
    before = grid(df[["lat", "lon"]], "lat", "lon", 250.0, projection=PUBLIC)
    after = grid(
        pd.concat([df[["lat", "lon"]], extra], ignore_index=True),
        "lat",
        "lon",
        250.0,
        projection=PUBLIC,
    )
    np.testing.assert_array_equal(
        after[["lat", "lon"]].to_numpy()[:500], before[["lat", "lon"]].to_numpy()
    )


@ALL
def test_a_centre_far_from_the_data_is_refused_without_echoing_coordinates(name: str) -> None:
    # The audit's sign typo: centre (-40.75, 106.02) for New York data shrank the
    # east-west noise from 95 m to 2.3 m while the manifest claimed 0.01 per metre.
    typo = projection_at(-40.75, 106.02)
    df = _frame()
    with pytest.raises(DomainError, match=r"200 records lie outside .* km beyond it") as info:
        MASKS[name](df, projection=typo)
    message = str(info.value)
    for value in np.concatenate([df["lat"].to_numpy()[:20], df["lon"].to_numpy()[:20]]):
        assert f"{value:.4f}" not in message


@ALL
def test_outside_drop_removes_the_far_records_and_records_their_number(name: str) -> None:
    df = _frame()
    df.iloc[[4, 9], df.columns.get_loc("lat")] = 47.6  # 780 km north: beyond 490 km
    with pytest.raises(DomainError, match="2 records lie outside"):
        MASKS[name](df)
    out = MASKS[name](df, outside="drop")
    assert len(out) == len(df) - 2
    pd.testing.assert_index_equal(out.index, df.index.delete([4, 9]))
    assert out[["lat", "lon"]].notna().all().all()
    (entry,) = out.attrs["veil.masking"]
    assert entry["dropped"] == 2 and entry["columns"] == ["lat", "lon"]
    with pytest.raises(ParameterError, match="outside: must be 'error' or 'drop'"):
        MASKS[name](df, outside="keep")


def test_utm_region_is_three_degrees_from_the_central_meridian() -> None:
    utm = projection_at(*NYC, method="utm")  # zone 18: central meridian 75 W
    df = pd.DataFrame({"lat": [40.7, 40.7, 40.7], "lon": [-73.98, -72.1, -71.5]})
    with pytest.raises(DomainError, match=r"1 records lie outside .*EPSG:32618"):
        grid(df, "lat", "lon", 100.0, projection=utm)
    # One of three is more than the default 20 % a drop may lose: allowed explicitly.
    kept = grid(df, "lat", "lon", 100.0, projection=utm, outside="drop", max_outside=0.5)
    assert len(kept) == 2


def test_region_projection_refuses_points_outside_its_box() -> None:
    region = projection_for_region(40.49, -74.26, 40.92, -73.70)
    df = pd.DataFrame({"lat": [40.75, 40.60, 41.2], "lon": [-73.98, -74.1, -73.9]})
    with pytest.raises(DomainError, match=r"1 records lie outside .*region"):
        planar_laplace(df, "lat", "lon", 0.01, projection=region, rng=_rng(0))
    out = planar_laplace(
        df, "lat", "lon", 0.01, projection=region, outside="drop", max_outside=0.5, rng=_rng(0)
    )
    assert len(out) == 2


@pytest.mark.parametrize("value", [1e308, float("inf"), float("nan"), 2.0e7 + 1.0, -1.0, 0.0, "5"])
def test_absurd_lengths_are_refused_for_every_metric_parameter(value: Any) -> None:
    # Regression: grid(cell_m=1e308) gave infinite coordinates.
    df = _frame()
    calls: dict[str, Callable[[], pd.DataFrame]] = {
        "cell_m": lambda: grid(df, "lat", "lon", value, projection=PUBLIC),
        "radius_m": lambda: jitter(df, "lat", "lon", value, projection=PUBLIC, rng=_rng(0)),
        "r_max_m": lambda: donut(df, "lat", "lon", 10.0, value, projection=PUBLIC, rng=_rng(0)),
        "grid_m": lambda: planar_laplace(
            df, "lat", "lon", 0.01, grid_m=value, projection=PUBLIC, rng=_rng(0)
        ),
    }
    if value != 0.0:
        calls["r_min_m"] = lambda: donut(
            df, "lat", "lon", value, 2.0e7, projection=PUBLIC, rng=_rng(0)
        )
    for name, call in calls.items():
        with pytest.raises(ParameterError, match=name):
            call()


def test_the_same_column_as_latitude_and_longitude_is_refused() -> None:
    # Issue 14 C ("--lat lat --lon lat"): with points where latitude equals longitude
    # inside the projection's region, the masks used to mask one column as both.
    df = pd.DataFrame({"x": [10.0, 10.001, 10.002], "lon": [10.0, 10.001, 10.002]})
    public = projection_at(10.0, 10.0)
    calls: dict[str, Callable[[], pd.DataFrame]] = {
        "grid": lambda: grid(df, "x", "x", 100.0, projection=public),
        "planar_laplace": lambda: planar_laplace(df, "x", "x", 0.01, projection=public, rng=1),
        "jitter": lambda: jitter(df, "x", "x", 100.0, projection=public, rng=1),
        "donut": lambda: donut(df, "x", "x", 10.0, 50.0, projection=public, rng=1),
    }
    for name, call in calls.items():
        with pytest.raises(ParameterError, match="lat, lon: both name the column 'x'"):
            call()
        assert df["x"].tolist() == [10.0, 10.001, 10.002], name


def test_cell_m_at_the_limit_still_gives_finite_coordinates() -> None:
    out = grid(_frame(), "lat", "lon", 2.0e7, projection=PUBLIC)
    assert np.isfinite(out[["lat", "lon"]].to_numpy()).all()


def test_planar_laplace_refuses_an_epsilon_too_small_to_represent() -> None:
    with pytest.raises(ParameterError, match="epsilon: must be at least 1e-07"):
        planar_laplace(_frame(), "lat", "lon", 1e-300, projection=PUBLIC, rng=_rng(0))
