"""``veil geo``: location masks in metres (:mod:`veil.geo`); needs the geo extra.

Checks the chosen mask's parameters, says the displacement they give before reading any
data (:func:`veil.geo.expected_scale`, with a warning when it protects nothing or leaves
little use), projects with a public centre or CRS and applies the mask.
"""

from __future__ import annotations

import enum
import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import pandas as pd
import typer

from veil.cli.console import (
    Warnings,
    captured_warnings,
    emit_json,
    print_note,
    print_text,
    print_warnings,
)
from veil.cli.errors import CliUsageError, reporting_errors
from veil.cli.files import check_encoding, read_table, require_columns, split_numbers
from veil.cli.flags import as_flags
from veil.cli.one_table import (
    Data,
    MissingPolicy,
    Output,
    Treated,
    distinct,
    escaped_text,
    ledger_costs,
    order_text,
    other_columns,
    print_costs,
    streams,
)
from veil.cli.options import (
    Acknowledge,
    DropOther,
    Encoding,
    Json,
    KeepOrder,
    KeepOther,
    OutFile,
    OutFormat,
    RawCsv,
    Seed,
    Sep,
)
from veil.errors import PrivacyWarning

__all__ = ["GeoMask", "GeoProjection", "OutsidePolicy", "geo", "metres_text", "scale_warnings"]


class GeoMask(str, enum.Enum):
    """Location masks of :mod:`veil.geo`."""

    planar_laplace = "planar-laplace"
    grid = "grid"
    donut = "donut"
    jitter = "jitter"
    cloak = "cloak"


_GEO_PARAMETERS: dict[GeoMask, tuple[str, ...]] = {
    GeoMask.planar_laplace: ("--epsilon",),
    GeoMask.grid: ("--cell-m",),
    GeoMask.donut: ("--r-min-m", "--r-max-m"),
    GeoMask.jitter: ("--radius-m",),
    GeoMask.cloak: ("--k",),
}

_GUARANTEE: dict[GeoMask, str] = {
    GeoMask.planar_laplace: "geo-indistinguishability: epsilon per metre",
    GeoMask.grid: "aggregated to grid cells; no formal guarantee",
    GeoMask.donut: "random displacement outside a minimum radius; no formal guarantee",
    GeoMask.jitter: "random displacement; no formal guarantee",
    GeoMask.cloak: "every reported cell holds at least k of the table's locations",
}


class GeoProjection(str, enum.Enum):
    """How --centre projects, or the explicit opt-in to a projection from the data."""

    aeqd = "aeqd"
    utm = "utm"
    stereographic = "stereographic"
    data = "data"


class OutsidePolicy(str, enum.Enum):
    """Points outside the projection's supported extent."""

    error = "error"
    drop = "drop"


def _expected_scale(
    mask_name: GeoMask, values: dict[str, Any], kind: str, root_m: str | None
) -> tuple[str, float | None]:
    """What the mask's options say of the displacement (:func:`veil.geo.expected_scale`)."""
    from veil.geo.displacement import expected_scale

    root = None if root_m is None else split_numbers(root_m, "--root-m", count=3)[2]
    return expected_scale(
        mask_name.value.replace("-", "_"),
        epsilon=values["--epsilon"],
        radius_m=values["--radius-m"],
        kind=kind,
        r_min_m=values["--r-min-m"],
        r_max_m=values["--r-max-m"],
        cell_m=values["--cell-m"],
        root_size_m=root,
    )


def scale_warnings(phrase: str, metres: float | None) -> Warnings:
    """A warning when the displacement protects nothing or leaves little use.

    The thresholds are :data:`veil.geo.displacement.NEGLIGIBLE_M` (1 m) and
    :data:`~veil.geo.displacement.EXCESSIVE_M` (10 km); see
    :func:`veil.geo.scale_concern`.
    """
    from veil.geo.displacement import EXCESSIVE_M, NEGLIGIBLE_M, scale_concern

    concern = scale_concern(metres)
    if concern is None or metres is None:
        return []
    if concern == "negligible":
        return [
            {
                "category": PrivacyWarning.__name__,
                "message": f"the {phrase} is {metres:.3g} m, under {NEGLIGIBLE_M:g} m: the "
                "mask barely moves the points and protects practically nothing",
            }
        ]
    return [
        {
            "category": UserWarning.__name__,
            "message": f"the {phrase} is {metres / 1000:.3g} km, over "
            f"{EXCESSIVE_M / 1000:g} km: little of the locations' use is left (the "
            "parameters are in metres; epsilon is per metre)",
        }
    ]


def metres_text(value: float | None) -> str:
    """`` 168 m`` or `` 1.2 km`` (empty for None)."""
    if value is None:
        return ""
    return f" {value / 1000:.3g} km" if value >= 1000 else f" {value:.3g} m"


def _projection(
    toolkit: Any, centre: str | None, crs: str | None, method: GeoProjection | None
) -> Any:
    """The public projection of --centre or --crs, or "data" (--projection data)."""
    given = [name for name, v in (("--centre", centre), ("--crs", crs)) if v is not None]
    if method is GeoProjection.data:
        if given:
            raise CliUsageError(
                f"--projection data, {', '.join(given)}: a projection from the data or a "
                "public one, not both"
            )
        return "data"
    if len(given) != 1:
        raise CliUsageError(
            "--centre, --crs: give exactly one public projection: --centre LAT,LON (a public "
            "point such as the city centre) or --crs EPSG:CODE (a projected CRS in metres); "
            "--projection data chooses one from the data instead (a PrivacyLeakWarning "
            "says so)"
            if not given
            else "--centre, --crs: give one of them, not both"
        )
    if crs is not None:
        if method is not None:
            raise CliUsageError("--projection: not with --crs (the CRS is the projection)")
        if not re.fullmatch(r"(?i)epsg:\d{4,6}", crs.strip()):
            raise CliUsageError(f"--crs: expected EPSG:CODE (e.g. EPSG:32616), got {crs!r}")
        return toolkit.projection_for_crs(crs.strip().upper())
    assert centre is not None
    centre_lat, centre_lon = split_numbers(centre, "--centre", count=2)
    return toolkit.projection_at(
        centre_lat, centre_lon, method="stereographic" if method is None else method.value
    )


def _check_geo_parameters(
    mask_name: GeoMask, values: dict[str, float | None], min_count: Any, root_m: Any
) -> None:
    """Refuse a geo mask's missing, stray or non-finite parameters, naming each."""
    needed = _GEO_PARAMETERS[mask_name]
    absent = [name for name in needed if values[name] is None]
    if absent:
        raise CliUsageError(f"{', '.join(absent)}: required by --mask {mask_name.value}")
    stray = [name for name, v in values.items() if v is not None and name not in needed]
    if min_count is not None and mask_name is not GeoMask.grid:
        stray.append("--min-count")
    if root_m is not None and mask_name is not GeoMask.cloak:
        stray.append("--root-m")
    if stray:
        raise CliUsageError(f"{', '.join(stray)}: not for --mask {mask_name.value}")
    for name in needed:
        if not math.isfinite(float(values[name] or 0.0)):
            raise CliUsageError(f"{name}: must be a finite number, got {values[name]!r}")


def _geo_mask(
    toolkit: Any,
    mask_name: GeoMask,
    frame: pd.DataFrame,
    where: tuple[str, str],
    values: dict[str, float | None],
    options: dict[str, Any],
) -> pd.DataFrame:
    """``frame`` with the chosen mask applied, its parameters checked beforehand.

    ``options`` holds the projection, missing and outside policies every mask takes,
    and the noise stream, ledger, jitter kind, grid minimum count and cloak root that
    only some do.
    """
    lat, lon = where
    common = {key: options[key] for key in ("projection", "missing", "outside", "max_outside")}
    noise = options["rng"]
    if mask_name is GeoMask.planar_laplace:
        epsilon = values["--epsilon"]
        assert epsilon is not None
        return toolkit.planar_laplace(  # type: ignore[no-any-return]
            frame, lat, lon, epsilon, rng=noise, ledger=options["ledger"], **common
        )
    if mask_name is GeoMask.grid:
        cell = values["--cell-m"]
        assert cell is not None
        return toolkit.grid(  # type: ignore[no-any-return]
            frame, lat, lon, cell, min_count=options["min_count"], **common
        )
    if mask_name is GeoMask.donut:
        r_min, r_max = values["--r-min-m"], values["--r-max-m"]
        assert r_min is not None and r_max is not None
        return toolkit.donut(  # type: ignore[no-any-return]
            frame, lat, lon, r_min, r_max, rng=noise, **common
        )
    if mask_name is GeoMask.jitter:
        radius = values["--radius-m"]
        assert radius is not None
        return toolkit.jitter(  # type: ignore[no-any-return]
            frame, lat, lon, radius, kind=options["kind"], rng=noise, **common
        )
    k = values["--k"]
    assert k is not None
    root_m = options["root_m"]
    root = None if root_m is None else split_numbers(root_m, "--root-m", count=3)
    return toolkit.cloak(  # type: ignore[no-any-return]
        frame,
        lat,
        lon,
        int(k),
        bounds_m=None if root is None else (root[0], root[1], root[2]),
        **common,
    )


@reporting_errors
def geo(
    data: Data,
    lat: Annotated[str, typer.Option("--lat", help="Latitude column (degrees, WGS 84).")],
    lon: Annotated[str, typer.Option("--lon", help="Longitude column (degrees, WGS 84).")],
    mask_name: Annotated[
        GeoMask,
        typer.Option(
            "--mask",
            help="planar-laplace (--epsilon), grid (--cell-m [--min-count]), donut "
            "(--r-min-m --r-max-m), jitter (--radius-m [--kind]) or cloak (--k).",
        ),
    ],
    out: OutFile,
    epsilon: Annotated[
        float | None, typer.Option("--epsilon", help="planar-laplace: epsilon per metre.")
    ] = None,
    cell_m: Annotated[
        float | None, typer.Option("--cell-m", help="grid: cell side in metres.")
    ] = None,
    min_count: Annotated[
        int | None,
        typer.Option("--min-count", help="grid: suppress cells holding fewer points."),
    ] = None,
    r_min_m: Annotated[
        float | None, typer.Option("--r-min-m", help="donut: smallest displacement, metres.")
    ] = None,
    r_max_m: Annotated[
        float | None, typer.Option("--r-max-m", help="donut: largest displacement, metres.")
    ] = None,
    radius_m: Annotated[
        float | None, typer.Option("--radius-m", help="jitter: radius (or sigma), metres.")
    ] = None,
    kind: Annotated[
        str, typer.Option("--kind", help="jitter: disc (default) or gaussian.")
    ] = "disc",
    k: Annotated[
        int | None, typer.Option("--k", help="cloak: locations per reported cell.")
    ] = None,
    root_m: Annotated[
        str | None,
        typer.Option(
            "--root-m",
            help="cloak: X0,Y0,SIZE, the quadtree's root square in projected metres, chosen "
            "from public knowledge (default: from the data, with a PrivacyLeakWarning).",
        ),
    ] = None,
    centre: Annotated[
        str | None,
        typer.Option(
            "--centre",
            help="LAT,LON: a public point (a city centre) to project around, oblique "
            "stereographic by default (--projection aeqd or utm). One of --centre, "
            "--crs or --projection data is required.",
        ),
    ] = None,
    crs: Annotated[
        str | None,
        typer.Option(
            "--crs",
            help="EPSG:CODE: a public projected CRS in metres (a UTM zone, a State Plane "
            "zone) to mask in.",
        ),
    ] = None,
    projection_method: Annotated[
        GeoProjection | None,
        typer.Option(
            "--projection",
            help="stereographic (the default), aeqd or utm: how --centre projects; data: "
            "choose the "
            "projection from the data (each record's mask then depends on the others; a "
            "PrivacyLeakWarning says so).",
        ),
    ] = None,
    outside: Annotated[
        OutsidePolicy,
        typer.Option(
            "--outside",
            help="Points outside the projection's supported extent: error (default) or "
            "drop (their rows are left out of the release).",
        ),
    ] = OutsidePolicy.error,
    max_outside: Annotated[
        float,
        typer.Option(
            "--max-outside",
            help="With --outside drop: the largest share of the rows that may be dropped "
            "(default 0.2); more is refused, naming the centre (a sign typo would empty "
            "the release).",
        ),
    ] = 0.2,
    missing: Annotated[
        MissingPolicy,
        typer.Option("--missing", help="Missing coordinates: error (default) or keep."),
    ] = MissingPolicy.error,
    map_file: Annotated[
        Path | None,
        typer.Option(
            "--map",
            help="Also write an interactive map (.html) of the masked points (originals "
            "are not drawn).",
        ),
    ] = None,
    keep_other: KeepOther = False,
    acknowledge: Acknowledge = None,
    drop_other: DropOther = False,
    keep_order: KeepOrder = False,
    raw_csv: RawCsv = False,
    out_format: OutFormat = None,
    seed: Seed = None,
    sep: Sep = None,
    encoding: Encoding = None,
    as_json: Json = False,
) -> None:
    """Mask a latitude/longitude pair in metres (veil.geo); needs the geo extra.

    Projects with a public centre (--centre) or CRS (--crs), and prints the displacement
    the parameters give before running. The other columns need --drop-other or
    --keep-other (a text copy of the coordinates, a second coordinate pair, a block or
    an identifier would undo the mask); released rows are in a random order.
    """
    from veil import geo as toolkit
    from veil.mechanisms import PrivacyLedger

    values = {
        "--epsilon": epsilon,
        "--cell-m": cell_m,
        "--r-min-m": r_min_m,
        "--r-max-m": r_max_m,
        "--radius-m": radius_m,
        "--k": k,
    }
    _check_geo_parameters(mask_name, values, min_count, root_m)
    distinct([lat, lon], "--lat, --lon")
    if map_file is not None and map_file.suffix.lower() != ".html":
        raise CliUsageError(f"--map: must end in .html, got {os.fspath(map_file)!r}")
    check_encoding(encoding)
    output = Output(out, sep, out_format, raw_csv, keep_order, (data,))
    output.check({"--map": map_file})
    projection = _projection(toolkit, centre, crs, projection_method)

    phrase, metres = _expected_scale(mask_name, values, kind, root_m)
    scale = scale_warnings(phrase, metres)
    print_note(f"veil: geo: {mask_name.value}: {phrase}{metres_text(metres)}")
    print_warnings(scale)

    frame = read_table(data, sep=sep, encoding=encoding)
    require_columns(frame, [lat, lon], "--lat, --lon", data.name)
    ledger = PrivacyLedger()
    with as_flags("outside", "missing"), captured_warnings() as caught:
        frame = other_columns(
            frame, Treated(location=(lat, lon)), keep_other, drop_other, data.name, acknowledge
        )
        noise, order = streams(seed)
        options = {
            "projection": projection,
            "missing": missing.value,
            "outside": outside.value,
            "max_outside": max_outside,
            "rng": noise,
            "ledger": ledger,
            "kind": kind,
            "min_count": min_count,
            "root_m": root_m,
        }
        masked = _geo_mask(toolkit, mask_name, frame, (lat, lon), values, options)
        extras: list[tuple[str, Path, Callable[[str], object]]] = []
        if map_file is not None:
            # Drawn from the rows in mask order (the map pairs them with the originals);
            # only the masked points are drawn.
            drawn, source = masked, frame.loc[masked.index]

            def build_map(tmp: str) -> None:
                toolkit.location_map(source, drawn, lat, lon, tmp)

            extras.append(("--map", map_file, build_map))
        released, written = output.publish(masked, order, extras)
    print_warnings(caught)
    caught = [*scale, *caught]
    costs = ledger_costs(ledger)
    payload = {
        "out": out,
        "map": map_file,
        "mask": mask_name.value,
        "parameters": {
            name.removeprefix("--").replace("-", "_"): v
            for name, v in [
                *values.items(),
                ("--min-count", min_count),
                ("--root-m", root_m),
                ("--kind", kind if mask_name is GeoMask.jitter else None),
            ]
            if v is not None
        },
        "projection": "data" if isinstance(projection, str) else str(projection),
        "outside": outside.value,
        "guarantee": _GUARANTEE[mask_name],
        "scale": {"what": phrase, "metres": metres},
        "costs": costs,
        "rows_in": len(frame),
        "rows": len(released),
        **written,
        "warnings": caught,
    }
    if as_json:
        emit_json(payload)
        return
    if costs:
        print_costs(costs)
    written_to = f"{out}" + (f" and {map_file}" if map_file is not None else "")
    print_text(
        f"{mask_name.value}: {_GUARANTEE[mask_name]}; {phrase}{metres_text(metres)}; "
        f"{len(released)} of {len(frame)} rows ({order_text(keep_order)}); wrote "
        f"{written_to}{escaped_text(written)}"
    )
