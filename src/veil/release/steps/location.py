"""Location pairs: planar Laplace, grid aggregation, jitter, donut masking and quadtree cloaking.

Every mask projects the points to metres with a public projection (a centre, a region or
a named CRS), so each record's mask is independent of the other records and the mask is
a row step. ``projection: data`` lets the records choose it instead (a listed leak): the
mask then needs the whole table. A grid with ``min_count`` suppresses the cells holding
fewer points, which needs the cell counts of the whole table (a group-by of the cell
centres); quadtree cloaking needs the whole table.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd
from pydantic import Field, field_validator, model_validator

from veil import geo
from veil.errors import ParameterError
from veil.frames import output_frame
from veil.mechanisms import PlanarLaplace, PrivacyCost
from veil.release.errors import PlanError
from veil.release.schema import Missing, Role, SpecModel, tagged
from veil.release.steps.base import (
    RECORDS,
    Counted,
    Finished,
    LedgerStep,
    Need,
    Step,
    public_parameters,
)

__all__ = [
    "MASKS",
    "CloakMask",
    "DonutMask",
    "GridMask",
    "JitterMask",
    "LocationKind",
    "LocationSpec",
    "Mask",
    "PlanarLaplaceMask",
    "location_projection",
]

MASKS = ("planar_laplace", "grid", "jitter", "donut", "cloak")


class PlanarLaplaceMask(SpecModel):
    """Geo-indistinguishability: epsilon per metre (:func:`veil.geo.planar_laplace`)."""

    method: Literal["planar_laplace"] = "planar_laplace"
    epsilon: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None
    weight: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 1.0
    reports: Annotated[int, Field(ge=1)] = 1
    grid_m: Annotated[float, Field(gt=0)] | None = None


class GridMask(SpecModel):
    """Cell centres of a square grid (:func:`veil.geo.grid`); no formal guarantee."""

    method: Literal["grid"] = "grid"
    cell_m: Annotated[float, Field(gt=0)]
    min_count: Annotated[int, Field(ge=1)] | None = None


class JitterMask(SpecModel):
    """Random displacement (:func:`veil.geo.jitter`); no formal guarantee."""

    method: Literal["jitter"] = "jitter"
    radius_m: Annotated[float, Field(gt=0)]
    kind: Literal["disc", "gaussian"] = "disc"


class DonutMask(SpecModel):
    """Displacement uniform over an annulus (:func:`veil.geo.donut`); no formal guarantee."""

    method: Literal["donut"] = "donut"
    r_min_m: Annotated[float, Field(ge=0)]
    r_max_m: Annotated[float, Field(gt=0)]

    @model_validator(mode="after")
    def _ordered(self) -> DonutMask:
        if self.r_min_m >= self.r_max_m:
            raise ValueError(f"r_min_m ({self.r_min_m:g}) must be below r_max_m ({self.r_max_m:g})")
        return self


class CloakMask(SpecModel):
    """Quadtree k-cloaking (:func:`veil.geo.cloak`): syntactic, no epsilon."""

    method: Literal["cloak"] = "cloak"
    k: Annotated[int, Field(ge=1)]
    bounds_m: tuple[float, float, float] | None = None
    max_depth: Annotated[int, Field(ge=0, le=31)] | None = None
    min_cell_m: Annotated[float, Field(gt=0)] = 1.0


Mask = Annotated[
    PlanarLaplaceMask | GridMask | JitterMask | DonutMask | CloakMask,
    Field(discriminator="method"),
]


class LocationSpec(SpecModel):
    """A latitude/longitude pair (degrees) and its mask.

    The planar projection is public: a ``centre`` (a city centre: by default an oblique
    stereographic projection about it, computed in NumPy, within 0.1 % of geodesic
    distances up to 400 km away; ``projection: aeqd`` for the azimuthal equidistant, also
    in NumPy, 490 km; ``projection: utm`` for the centre's UTM zone),
    a ``region`` (``[south, west, north, east]`` in degrees) or a named planar ``crs``
    (``EPSG:32618``). Each record's mask is then independent of the other records and
    of the partitioning. ``projection: data`` instead lets the projection be chosen from
    the records' extent: an explicit opt-in, warned about and listed in the manifest's
    ``leaks`` (moving one record can change the projection and every released point).
    Records outside the extent the projection keeps distances true on are refused
    (``outside: error``) or dropped and counted (``outside: drop``); dropping more than
    ``max_outside`` of the records (default 0.2) is refused, naming the centre, since a
    centre with a sign typo would otherwise empty the release. On Dask the share is
    checked per partition, which can only refuse more, never less.
    """

    lat: str
    lon: str
    role: Role = "quasi_identifier"
    mask: Mask
    projection: Literal["stereographic", "aeqd", "utm", "data"] | None = None
    centre: tuple[float, float] | None = None
    region: tuple[float, float, float, float] | None = None
    crs: str | None = None
    outside: Literal["error", "drop"] = "error"
    max_outside: Annotated[float, Field(ge=0, le=1)] = 0.2
    missing: Missing = "error"

    @model_validator(mode="after")
    def _public_projection(self) -> LocationSpec:
        given = [n for n in ("centre", "region", "crs") if getattr(self, n) is not None]
        if len(given) > 1:
            raise ValueError(f"give one of centre, region or crs, got {', '.join(given)}")
        if self.projection == "data" and given:
            raise ValueError(
                f"projection: data chooses the projection from the records; drop it, or "
                f"drop {given[0]}"
            )
        if not given and self.projection != "data":
            raise ValueError(
                "a public projection is required: give centre: [lat, lon] (a public "
                "point such as the city centre), region: [south, west, north, east] or "
                "crs: EPSG:xxxx; or projection: data to let the records choose it (a "
                "listed leak)"
            )
        if self.projection in ("utm", "aeqd", "stereographic") and self.centre is None:
            raise ValueError(
                f"projection: {self.projection} needs a centre (the point it is taken about)"
            )
        return self

    @field_validator("region")
    @classmethod
    def _region(
        cls, value: tuple[float, float, float, float] | None
    ) -> tuple[float, float, float, float] | None:
        if value is None:
            return value
        south, west, north, east = value
        if not (-90 <= south < north <= 90 and -180 <= west <= 180 and -180 <= east <= 180):
            raise ValueError(
                "must be [south, west, north, east] in degrees with south < north, got "
                f"{list(value)}"
            )
        return value

    @field_validator("mask", mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        return tagged(value, "method", MASKS)

    @field_validator("centre")
    @classmethod
    def _on_earth(cls, value: tuple[float, float] | None) -> tuple[float, float] | None:
        if value is not None and not (-90 <= value[0] <= 90 and -180 <= value[1] <= 180):
            raise ValueError(
                f"must be [latitude in -90..90, longitude in -180..180], got {list(value)}"
            )
        return value

    @property
    def name(self) -> str:
        """``"lat, lon"``: the scope under which the mask's cost is recorded."""
        return f"{self.lat}, {self.lon}"

    @property
    def public_projection(self) -> bool:
        """Whether the projection is public (a centre, region or CRS), not the data's."""
        return self.centre is not None or self.crs is not None or self.region is not None


_GUARANTEES = {
    "grid": "aggregated to grid cells; no formal guarantee",
    "jitter": "random displacement; no formal guarantee",
    "donut": "random displacement outside a minimum radius; no formal guarantee",
}


def location_projection(loc: LocationSpec) -> Any:
    """The location's public projection, or ``"data"`` (the warned opt-in)."""
    if loc.centre is not None:
        # A public centre: the NumPy stereographic unless the plan names another.
        method: Literal["stereographic", "aeqd", "utm"] = (
            loc.projection if loc.projection in ("aeqd", "utm") else "stereographic"
        )
        return geo.projection_at(*loc.centre, method=method)
    if loc.crs is not None:
        return geo.projection_for_crs(loc.crs)
    if loc.region is not None:
        return geo.projection_for_region(*loc.region)
    return "data"


def _mask(loc: LocationSpec, mask: Any) -> Any:
    """``fn(frame, generator)``: the :mod:`veil.geo` call of the mask."""
    common: dict[str, Any] = {
        "projection": location_projection(loc),
        "outside": loc.outside,
        "max_outside": loc.max_outside,
        "missing": loc.missing,
    }
    lat, lon = loc.lat, loc.lon
    if isinstance(mask, PlanarLaplaceMask):
        eps = mask.epsilon
        assert eps is not None
        return lambda df, g: geo.planar_laplace(
            df, lat, lon, eps, reports=mask.reports, grid_m=mask.grid_m, **common, rng=g
        )
    if isinstance(mask, GridMask):
        return lambda df, _: geo.grid(df, lat, lon, mask.cell_m, min_count=mask.min_count, **common)
    if isinstance(mask, JitterMask):
        return lambda df, g: geo.jitter(
            df, lat, lon, mask.radius_m, kind=mask.kind, **common, rng=g
        )
    if isinstance(mask, DonutMask):
        return lambda df, g: geo.donut(df, lat, lon, mask.r_min_m, mask.r_max_m, **common, rng=g)
    assert isinstance(mask, CloakMask)
    return lambda df, _: geo.cloak(
        df,
        lat,
        lon,
        mask.k,
        bounds_m=mask.bounds_m,
        max_depth=mask.max_depth,
        min_cell_m=mask.min_cell_m,
        **common,
    )


def _pairs(frame: pd.DataFrame, lat: str, lon: str) -> npt.NDArray[np.complex128]:
    values = np.ascontiguousarray(frame[[lat, lon]].to_numpy(dtype=np.float64))
    key: npt.NDArray[np.complex128] = values.view(np.complex128).ravel()
    return key


def _sparse_cells(lat: str, lon: str, min_count: int) -> Any:
    """From the cell counts, the finisher that suppresses the points of sparse cells.

    The cells are those :func:`veil.geo.grid` would suppress with ``min_count`` on the
    whole table (fewer points than ``min_count``), found by a group-by of the centres.
    """

    def from_counts(counts: pd.DataFrame, _rows: int) -> Finished:
        sparse = counts.loc[counts[RECORDS] < min_count, [lat, lon]]
        centres = _pairs(sparse, lat, lon)

        def suppress(frame: pd.DataFrame) -> pd.DataFrame:
            hit = np.isin(_pairs(frame, lat, lon), centres)
            if not hit.any():
                return frame
            out = output_frame(frame)
            out.loc[hit, [lat, lon]] = np.nan
            return out

        detail = (
            f"cell centres per partition; a group-by of the {len(counts)} cells found "
            f"{len(sparse)} with fewer than {min_count} points, whose points were suppressed"
        )
        return Finished(suppress, detail)

    return from_counts


class LocationKind:
    """The geo masks of a location pair."""

    def planned(self, index: int, loc: LocationSpec) -> LedgerStep:
        """The mask's cost: epsilon per metre for planar Laplace, syntactic for cloaking."""
        path = f"locations.{index}.mask"
        mask = loc.mask
        params = {**public_parameters(mask), "lat": loc.lat, "lon": loc.lon}
        if loc.centre is not None:
            params["centre"] = list(loc.centre)
        cost: PrivacyCost | None = None
        guarantee = _GUARANTEES.get(mask.method, "")
        if isinstance(mask, PlanarLaplaceMask):
            if mask.epsilon is None:
                raise PlanError(f"{path}.epsilon: not set (allocate the budget first)")
            try:
                one = PlanarLaplace(mask.epsilon).cost(loc.name)
            except ParameterError as exc:
                raise PlanError(f"{path}: {exc}") from None
            cost = one
            for _ in range(mask.reports - 1):
                cost = cost + one
            guarantee = "epsilon-geo-indistinguishability (epsilon per metre, planar Laplace)"
        elif isinstance(mask, CloakMask):
            cost = PrivacyCost(
                0.0, 0.0, "syntactic", "record", loc.name, f"quadtree cloaking (k={mask.k})"
            )
            guarantee = f"each reported cell holds at least {mask.k} locations (syntactic)"
        return LedgerStep(loc.name, mask.method, params, cost, guarantee)

    def build(self, loc: LocationSpec) -> Step:
        """The mask as a step: row-wise in a public projection, else on the whole table."""
        mask = loc.mask
        label = f"{loc.name}: {mask.method}"
        columns = (loc.lat, loc.lon)
        if isinstance(mask, GridMask) and mask.min_count is not None and loc.public_projection:
            bare = _mask(loc, mask.model_copy(update={"min_count": None}))
            counted = Counted(columns, _sparse_cells(loc.lat, loc.lon, mask.min_count), True)
            return Step(label, loc.name, "counts", bare, columns, counted)
        row_wise = loc.public_projection and not isinstance(mask, CloakMask)
        need: Need = "row" if row_wise else "table"
        return Step(label, loc.name, need, _mask(loc, mask), columns)
