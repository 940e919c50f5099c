"""The bundled demonstration: two full releases through the shipped example plans.

Run as ``veil demo --out DIR`` (or ``python -m veil demo``). It writes

* ``DIR/adult/``: UCI Adult released through the example plan ``adult.yaml`` (local-DP
  noise on public bounds and domains, generalization, k-anonymity with l-diversity),
  attacked before publishing (singling out, linkability, inference on a shadow release of
  2,000 records): ``adult_release.csv`` and ``manifest.json``;
* ``DIR/location/``: the NYC taxi sample released through ``location.yaml`` (planar
  Laplace on pickups, grid aggregation of drop-offs, noisy amounts), attacked before
  publishing (the nearest masked pickup, alone and with the drop-off cell and passenger
  count): ``taxi_release.csv``, ``manifest.json`` and ``map.html``, an interactive map of
  the masked pickups (the original points are not drawn);
* ``DIR/adult.custodian/`` and ``DIR/location.custodian/``: each release's confidential
  ``custodian.json`` and ``report.html`` (with the attacks' section).

It only calls :func:`veil.release.run` and :func:`veil.maps.render_privacy_map`, on the
released file's points alone (the map needs nothing of the raw data); every privacy
decision is in the plans.

The example plans show each family of treatment at a setting a reader can compare, not
the best one for each column, so their reports raise findings. The demo explains each:
:attr:`DemoResult.explained` pairs every finding of a report with why the example keeps
it and what a real release would do instead; a finding the demo does not expect says so.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from veil.release import RunResult, example_plan, run
from veil.rng import RngLike

__all__ = ["DEMO_STEPS", "MAP_COLUMNS", "DemoResult", "explain_findings", "run_demo"]

#: The pickup pair drawn on the demo's map.
MAP_COLUMNS = ("pickup_latitude", "pickup_longitude")
#: What the demo does, in order (for progress reports).
DEMO_STEPS = ("Adult release", "location release", "map")


_CLIPPED = (
    "the noise is wider than the public bounds, "
    "so most released values are clipped onto them. The example keeps it to show the "
    "check; such a column serves aggregate estimates (veil.ldp's estimators), not rows. "
    "A release read row by row generalizes the column instead, or gives it more epsilon."
)
_LDP_AMOUNT = "local DP on one value at a small epsilon: " + _CLIPPED
# Why each example keeps what its report flags, by example and finding subject.
_WHY: dict[str, dict[str, str]] = {
    "adult": {
        "age": _LDP_AMOUNT,
        "hours-per-week": "the Gaussian mechanism at a small epsilon: " + _CLIPPED,
        "workclass": (
            "the exponential mechanism at epsilon 1 over 8 categories keeps the true value "
            "for about a quarter of the records: the distribution moves by design, and an "
            "analyst de-biases the frequencies (veil.ldp's estimators)."
        ),
        "salary-class": (
            "distinct 2-diversity asks for two salary classes per class, not balance: with "
            "three quarters of Adult earning <=50K, many classes are mostly <=50K. A real "
            "release adds t_closeness on salary-class, as the finding says."
        ),
    },
    "location": {
        "pickup_latitude, pickup_longitude": (
            "planar Laplace at 0.01 per metre moves a pickup by about 170 m: in dense "
            "Manhattan many points stay nearest to their own. The example shows the "
            "metric guarantee's scale; a real release picks epsilon from the neighbourhood "
            "each trip must hide in (a smaller epsilon, or a grid or cloak)."
        ),
        "dropoff_latitude, dropoff_longitude": (
            "a 250 m grid with min_count 3 has no formal guarantee: a cell's centre stays "
            "near the true drop-off. The example contrasts it with the pickups' planar "
            "Laplace; a real release uses larger cells or cloak with k."
        ),
        "trip_distance": _LDP_AMOUNT,
        "fare_amount": _LDP_AMOUNT,
        "tip_amount": _LDP_AMOUNT,
        "Location re-identification (alone: pickup_latitude/pickup_longitude)": (
            "the attack on the shadow release (80 % of the trips, never written) finds the "
            "pickup's own trip as the nearest masked point for about a quarter of the "
            "trips, against a chance of one in 800: planar Laplace at 0.01 per metre is "
            "the example's reading scale, not a setting for Manhattan. A real release "
            "takes a smaller epsilon, or a grid or cloak with k."
        ),
        "Location re-identification (alone: dropoff_latitude/dropoff_longitude)": (
            "a 250 m drop-off cell holds few trips in Manhattan: the cell alone finds the "
            "right trip for about one in ten. A real release uses larger cells or cloak "
            "with k."
        ),
        "Location re-identification (with pickup_latitude/pickup_longitude, "
        "dropoff_latitude/dropoff_longitude, passenger_count)": (
            "the passenger count, released exactly, and the drop-off cell narrow the "
            "candidates, and the nearest masked pickup among them is the trip's own for "
            "about two trips in three: the taxi case of issue 22, kept to show the attack. "
            "A real release generalizes or drops passenger_count and masks both locations "
            "more strongly, as the finding says."
        ),
    },
}


# Findings any example's report may raise, by subject.
_ANY_EXAMPLE = {
    "ReproducibleNoiseWarning": (
        "the demo was given --seed, so its noise can be reproduced by whoever knows the "
        "seed: not private, as the warning says. A release is never seeded."
    ),
}


def explain_findings(example: str, report_html: str) -> list[tuple[str, str]]:
    """Each finding of an example's report, with why the example keeps it.

    Parameters
    ----------
    example : {"adult", "location"}
        The example plan the report comes from.
    report_html : str
        Its report page.

    Returns
    -------
    list of (subject, explanation)
        One per finding, in the report's order; a finding the demo does not expect is
        explained as such ("not expected by the demo: read it in the report").
    """
    from veil.release.report import findings_in

    why = {**_ANY_EXAMPLE, **_WHY.get(example, {})}
    return [
        (f.subject, why.get(f.subject, "not expected by the demo: read it in the report"))
        for f in findings_in(report_html)
    ]


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
    explained : dict
        Per example (``"adult"``, ``"location"``), each finding of its report with why
        the example keeps it (:func:`explain_findings`).
    """

    adult: RunResult
    location: RunResult
    map_path: Path
    explained: dict[str, list[tuple[str, str]]]


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
    explained = {
        name: explain_findings(name, result.report_path.read_text(encoding="utf-8"))
        for name, result in (("adult", adult), ("location", location))
        if result.report_path is not None
    }
    return DemoResult(adult, location, map_path, explained)
