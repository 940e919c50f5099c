"""Geographic masking, geo-indistinguishability in metres, and location privacy evaluation.

Masks work in a local projection in metres (never in degrees), take a DataFrame and the
latitude/longitude column names, and return a new DataFrame with masked coordinates.
Needs the ``geo`` extra (pyproj; shapely for truncation; matplotlib for figures).
"""

from veil.geo.attributes import bin_attribute, swap_within_cells
from veil.geo.cloak import cloak, cloak_xy
from veil.geo.compare import compare, plot_comparison
from veil.geo.displacement import expected_scale, median_displacement, scale_concern
from veil.geo.evaluate import LocationEvaluation, evaluate, evaluate_xy
from veil.geo.maps import location_map, neighbourhood_png
from veil.geo.masks import donut, grid, jitter, planar_laplace
from veil.geo.projection import (
    LocalProjection,
    local_projection,
    projection_at,
    projection_for_crs,
    projection_for_region,
)
from veil.geo.synthetic import synthetic_city

__all__ = [
    "LocalProjection",
    "LocationEvaluation",
    "bin_attribute",
    "cloak",
    "cloak_xy",
    "compare",
    "donut",
    "evaluate",
    "evaluate_xy",
    "expected_scale",
    "grid",
    "jitter",
    "local_projection",
    "location_map",
    "median_displacement",
    "neighbourhood_png",
    "planar_laplace",
    "plot_comparison",
    "projection_at",
    "projection_for_crs",
    "projection_for_region",
    "scale_concern",
    "swap_within_cells",
    "synthetic_city",
]
