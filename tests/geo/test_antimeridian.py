"""Points around the antimeridian on every map and figure (issue 20, item 4).

A cluster from 179.5 E to 179.5 W (longitudes 179.5..180 and -180..-179.5) was drawn at
both edges of a whole-world map, centred on the far side of the Earth, and the report's
location figure left every point out or squashed them into a strip.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from veil.geo import jitter, projection_at
from veil.geo.circle import wrap_longitudes
from veil.maps import render_privacy_map
from veil.release.report import build_report

N = 400


def _fiji() -> pd.DataFrame:
    step = np.linspace(0.0, 1.0, N)
    return pd.DataFrame(
        {
            "lat": -17.8 + 0.3 * step,
            "lon": wrap_longitudes(179.5 + 1.0 * step),
            "kind": np.where(step < 0.5, "a", "b"),
        }
    )


def _km(lat0: float, lon0: float, lat1: float, lon1: float) -> float:
    p0, p1 = math.radians(lat0), math.radians(lat1)
    d = math.radians(lon1 - lon0)
    a = math.sin((p1 - p0) / 2) ** 2 + math.cos(p0) * math.cos(p1) * math.sin(d / 2) ** 2
    return 2 * 6371.0 * math.asin(math.sqrt(a))


def test_the_interactive_map_is_centred_among_the_points(tmp_path: Path) -> None:
    fiji = _fiji()
    page = render_privacy_map(fiji["lat"], fiji["lon"], None, tmp_path / "map.html")
    lat0, lon0 = page.centre
    # The raw mean of the longitudes is about 0: 16,000 km away.
    points = zip(fiji["lat"], fiji["lon"], strict=True)
    assert max(_km(lat0, lon0, la, lo) for la, lo in points) < 100.0
    assert page.bounds is not None
    (south, west), (north, east) = page.bounds
    assert 0.0 < east - west < 1.5  # one degree of longitude, not the whole world
    assert north - south < 0.5


def test_the_report_draws_and_measures_the_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    import veil.release.report.maps as report_maps
    from veil.release.report.plots import _figure as made

    figures = []

    def kept(*args: float) -> object:
        figure = made(*args)
        figures.append(figure)
        return figure

    monkeypatch.setattr(report_maps, "_figure", kept)
    fiji = _fiji()
    released = jitter(
        fiji, "lat", "lon", 200.0, projection=projection_at(-17.65, 180.0 - 360.0),
        rng=np.random.Generator(np.random.PCG64(3)),
    )  # fmt: skip
    page = build_report(
        fiji,
        released,
        manifest={},
        quasi_identifiers=[],
        sensitive=[],
        locations=[("lat", "lon")],
        target=None,
        rng=np.random.Generator(np.random.PCG64(4)),
        metrics=["maps"],
    )
    maps = page[page.index('<section id="maps">') :]
    assert "Not drawn" not in maps and "left out" not in maps
    assert "Not computed" not in maps
    assert "median displacement (m)" in maps
    # The location figure frames the cluster: a degree of longitude across, as tall as
    # its 0.3 degree of latitude (the 0.5 % tails and padding aside), not a strip of
    # the whole world.
    (figure,) = figures
    original = figure.axes[0]
    west, east = original.get_xlim()
    south, north = original.get_ylim()
    assert 0.8 < east - west < 1.5 and 0.2 < north - south < 0.5
    assert 179.0 < (west + east) / 2 % 360.0 < 181.0  # drawn about the antimeridian
