"""Attributes attached to locations: swapping within cells and binning."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.errors import ColumnError, ParameterError
from veil.geo import grid, projection_at
from veil.geo.attributes import bin_attribute, swap_within_cells

NYC = projection_at(40.75, -73.98)


def _gen(seed: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed))


def _frame(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    g = _gen(seed)
    return pd.DataFrame(
        {
            "lat": 40.75 + g.normal(0, 0.02, n),
            "lon": -73.98 + g.normal(0, 0.02, n),
            "wealth": g.integers(0, 1000, n),
        }
    )


def test_swap_keeps_each_cells_values_and_breaks_the_links() -> None:
    masked = grid(_frame(), "lat", "lon", 500, projection=NYC)
    before = masked.copy(deep=True)
    out = swap_within_cells(masked, "lat", "lon", "wealth", 500, projection=NYC, rng=_gen(1))
    pd.testing.assert_frame_equal(masked, before)
    assert out["wealth"].dtype == masked["wealth"].dtype
    cells_out = out.groupby(["lat", "lon"])["wealth"].apply(lambda s: sorted(s))
    cells_in = masked.groupby(["lat", "lon"])["wealth"].apply(lambda s: sorted(s))
    assert cells_out.equals(cells_in)
    # Most cells hold dozens of records: almost every value moves to another record.
    assert (out["wealth"] != masked["wealth"]).mean() > 0.8


def test_swap_in_a_two_record_cell_is_a_fair_coin() -> None:
    # Both points lie well inside one 500 m cell (the projection centre is a cell corner).
    df = pd.DataFrame({"lat": [40.751, 40.75101], "lon": [-73.977, -73.97701], "v": [1, 2]})
    swapped = [
        swap_within_cells(df, "lat", "lon", "v", 500, projection=NYC, rng=_gen(s))["v"].iloc[0] == 2
        for s in range(400)
    ]
    # Binomial(400, 1/2): sd 10; tolerance 4 sd.
    assert abs(sum(swapped) - 200) < 40


def test_rows_without_coordinates_and_singleton_cells_keep_their_value() -> None:
    df = pd.DataFrame(
        {"lat": [40.75, np.nan, 41.5], "lon": [-73.98, -73.9, -73.5], "v": [1.0, 2.0, 3.0]}
    )
    out = swap_within_cells(df, "lat", "lon", "v", 100, projection=NYC, rng=_gen(3))
    assert out["v"].tolist() == [1.0, 2.0, 3.0]


def test_swap_errors_name_the_parameter() -> None:
    df = _frame(10)
    with pytest.raises(ColumnError, match="nope"):
        swap_within_cells(df, "lat", "lon", "nope", 100, rng=_gen(0))
    with pytest.raises(ParameterError, match="cell_m"):
        swap_within_cells(df, "lat", "lon", "wealth", -1, rng=_gen(0))


def test_bin_attribute_uses_public_edges() -> None:
    df = pd.DataFrame({"v": [0.0, 24.9, 25.0, 100.0, np.nan]})
    out = bin_attribute(df, "v", [0, 25, 50, 100])
    assert out["v"].astype(object).tolist()[:4] == ["[0, 25)", "[0, 25)", "[25, 50)", "[50, 100]"]
    assert pd.isna(out["v"].iloc[4])
    assert out["v"].cat.ordered
    labelled = bin_attribute(df, "v", [0, 25, 50, 100], labels=["low", "mid", "high"])
    assert labelled["v"].astype(object).tolist()[:4] == ["low", "low", "mid", "high"]
    assert df["v"].iloc[1] == 24.9


@pytest.mark.parametrize(
    ("edges", "match"), [([0], "edges"), ([0, 10, 5], "edges"), ([0, 50], "outside")]
)
def test_bin_attribute_refuses_bad_edges(edges: list[float], match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        bin_attribute(pd.DataFrame({"v": [1.0, 99.0]}), "v", edges)
