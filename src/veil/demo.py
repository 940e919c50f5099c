"""The bundled demonstration: two full releases through the shipped example plans.

Run as ``veil demo --out DIR`` (or ``python -m veil demo``). It writes

* ``DIR/adult/``: UCI Adult released through the example plan ``adult.yaml`` (local-DP
  noise on public bounds and domains, generalization, k-anonymity with l-diversity):
  ``adult_release.csv``, ``manifest.json`` and ``report.html``;
* ``DIR/location/``: the NYC taxi sample released through ``location.yaml`` (planar
  Laplace on pickups, grid aggregation of drop-offs, noisy amounts): ``taxi_release.csv``,
  ``manifest.json``, ``report.html`` and ``map.html``, an interactive map of the masked
  pickups (the original points are not drawn).

It only calls :func:`veil.release.run` and :func:`veil.maps.render_privacy_map`, on the
released file's points alone (the map needs nothing of the raw data); every privacy
decision is in the plans.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from veil.release import RunResult, example_plan, run
from veil.rng import RngLike

__all__ = ["DEMO_STEPS", "MAP_COLUMNS", "DemoResult", "run_demo"]

#: The pickup pair drawn on the demo's map.
MAP_COLUMNS = ("pickup_latitude", "pickup_longitude")
#: What the demo does, in order (for progress reports).
DEMO_STEPS = ("Adult release", "location release", "map")


@dataclass(frozen=True)
class DemoResult:
    """The two releases of the demonstration and the map.

    Attributes
    ----------
    adult : RunResult
        The release of Adult through the example plan ``adult``.
    location : RunResult
        The release of the NYC taxi sample through the example plan ``location``.
    map_path : pathlib.Path
        The interactive map of the masked pickups.
    """

    adult: RunResult
    location: RunResult
    map_path: Path


def run_demo(
    out_dir: str | os.PathLike[str],
    *,
    rng: RngLike = None,
    on_step: Callable[[str], None] | None = None,
) -> DemoResult:
    """Release Adult and the NYC taxi sample through the example plans, and map the taxis.

    Parameters
    ----------
    out_dir : path
        Folder for the outputs; ``adult/`` and ``location/`` are created in it.
    rng : None, int or numpy.random.Generator
        None (default) draws secure noise; an int seed gives a reproducible (not
        private) run, recorded in each manifest.
    on_step : callable, optional
        Called with the name of each step of :data:`DEMO_STEPS` once it is done.

    Returns
    -------
    DemoResult

    Raises
    ------
    veil.errors.VeilError
        From the releases (see :func:`veil.release.run`); outputs already written stay.
    """
    from veil.maps import render_privacy_map

    out = Path(out_dir)
    adult = run(example_plan("adult"), out / "adult", rng=rng)
    if on_step is not None:
        on_step(DEMO_STEPS[0])
    location = run(example_plan("location"), out / "location", rng=rng)
    if on_step is not None:
        on_step(DEMO_STEPS[1])
    released = location.read_release()
    map_path = out / "location" / "map.html"
    lat, lon = MAP_COLUMNS
    render_privacy_map(
        released[lat], released[lon], None, map_path, heatmap=True, released_label="Masked"
    )
    if on_step is not None:
        on_step(DEMO_STEPS[2])
    return DemoResult(adult, location, map_path)
