"""Geographic masking, geo-indistinguishability in metres, and location privacy evaluation.

Masks work in a local projection in metres (never in degrees), take a DataFrame and the
latitude/longitude column names, and return a new DataFrame with masked coordinates.
Needs the ``geo`` extra (pyproj; shapely for truncation; matplotlib for figures).
"""

from veil.geo.cloak import cloak, cloak_xy
from veil.geo.maps import location_map, neighbourhood_png
from veil.geo.masks import donut, grid, jitter, planar_laplace
from veil.geo.projection import LocalProjection, local_projection, projection_at

__all__ = [
    "LocalProjection",
    "cloak",
    "cloak_xy",
    "donut",
    "grid",
    "jitter",
    "local_projection",
    "location_map",
    "neighbourhood_png",
    "planar_laplace",
    "projection_at",
]
