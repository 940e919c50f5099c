"""veil.geo.circle: centres and extents of longitudes on the circle (the antimeridian)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.errors import DomainError, ParameterError
from veil.geo import planar_laplace, projection_at
from veil.geo.circle import (
    longitude_centre,
    longitude_extent,
    unwrap_longitudes,
    wrap_longitudes,
)

from .._data import DATA


def test_wrap_maps_0_360_to_the_half_open_range() -> None:
    out = wrap_longitudes([0.0, 179.9, 180.0, 181.6, 359.0, -180.0, np.nan])
    np.testing.assert_allclose(out[:6], [0.0, 179.9, -180.0, -178.4, -1.0, -180.0])
    assert np.isnan(out[6])


def test_the_centre_of_points_around_the_antimeridian_lies_among_them() -> None:
    """The raw median of 179.5 and -179.5 is 0, the far side of the Earth."""
    assert longitude_centre([179.5, -179.5]) in (180.0, -180.0)
    assert longitude_centre([179.0, -179.0, 178.5]) == 179.0
    assert longitude_centre([-74.0, -73.9, -73.8]) == pytest.approx(-73.9)
    # The same points in 0-360 give the same centre, in [-180, 180).
    assert longitude_centre([181.0, 179.0, 178.5]) == pytest.approx(179.0)


def test_quakes_centre_and_extent() -> None:
    """R's quakes: longitudes 165.67 to 188.13 (0-360). Their centre is near Fiji, not
    at 0 (the raw median of the wrapped values would be there for an even split), and
    their extent crosses the antimeridian."""
    quakes = pd.read_csv(DATA / "quakes" / "quakes.csv")
    centre = longitude_centre(quakes["long"])
    assert centre == pytest.approx(wrap_longitudes([quakes["long"].median()])[0], abs=1.0)
    west, east = longitude_extent(quakes["long"])
    assert west == pytest.approx(165.67) and east == pytest.approx(188.13 - 360.0)
    # Wrapped to -180..180, a min/max would claim the whole world.
    wrapped = wrap_longitudes(quakes["long"])
    assert wrapped.max() - wrapped.min() > 340.0
    unwrapped = unwrap_longitudes(wrapped, centre)
    assert unwrapped.max() - unwrapped.min() == pytest.approx(188.13 - 165.67)


def test_extent_of_points_that_do_not_cross() -> None:
    assert longitude_extent([-74.0, -73.5, -73.9]) == (-74.0, -73.5)
    assert longitude_extent([10.0]) == (10.0, 10.0)


def test_no_finite_longitude_is_refused() -> None:
    with pytest.raises(ParameterError, match="lon: needs at least one finite longitude"):
        longitude_centre([np.nan])
    with pytest.raises(ParameterError, match="lon: needs at least one finite longitude"):
        longitude_extent([])


def test_a_mask_takes_0_360_longitudes_and_writes_them_in_minus_180_180() -> None:
    """Longitudes east of Greenwich in 0-360 are measured on the circle by the projection;
    the masked points come back in [-180, 180) and stay near their originals."""
    n = 500
    frame = pd.DataFrame({"lat": np.linspace(-18.0, -17.5, n), "lon": np.linspace(179.5, 180.5, n)})
    with pytest.warns(UserWarning, match="0-360"):
        out = planar_laplace(
            frame,
            "lat",
            "lon",
            0.01,
            projection=projection_at(-17.75, 180.0 - 360.0),
            rng=np.random.Generator(np.random.PCG64(5)),
        )
    assert out["lon"].between(-180.0, 180.0).all()
    shift = np.abs(wrap_longitudes(out["lon"].to_numpy() - frame["lon"].to_numpy()))
    assert float(np.median(shift)) < 0.01  # about 170 m at 0.01 per metre
    assert frame["lon"].max() == 180.5  # the input is not modified


def test_longitudes_beyond_both_conventions_are_refused_with_both_named() -> None:
    frame = pd.DataFrame({"lat": [10.0, 10.1], "lon": [-20.0, 350.0]})
    with pytest.raises(DomainError, match=r"\[-180, 180\], or \[0, 360\]"):
        planar_laplace(frame, "lat", "lon", 0.01, projection=projection_at(10.0, 0.0))


def test_0_360_longitudes_are_said_to_come_back_in_minus_180_180() -> None:
    frame = pd.DataFrame({"lat": [-17.8, -17.7], "lon": [179.9, 180.1]})
    with pytest.warns(UserWarning, match=r"'lon': longitudes in 0-360 .* -180\.\.180"):
        planar_laplace(
            frame,
            "lat",
            "lon",
            0.01,
            projection=projection_at(-17.75, 180.0 - 360.0),
            rng=np.random.Generator(np.random.PCG64(6)),
        )
