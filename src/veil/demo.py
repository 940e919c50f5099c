"""The bundled demonstration: privatize Adult with every mechanism and map locations.

Run as ``veil demo`` (or ``python -m veil demo``). It uses only the public API of
:mod:`veil.ldp`, :mod:`veil.metrics` and :mod:`veil.datasets`; its outputs are

* ``adult_ldp.csv``: Adult with one privatized column per mechanism (``dp_*``);
* ``privacy.json``: every step's privacy cost and the composed total per record;
* ``utility.csv``: divergences and correlation loss per privatized column;
* ``taxi_map.html``: privatized NYC taxi pickups (originals not drawn).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from veil.atomic import write_atomic, write_text_atomic
from veil.datasets import ADULT_BOUNDS, ADULT_DOMAINS, load_adult, load_nyc_taxi
from veil.ldp import (
    dp_clip_gaussian,
    dp_clip_laplace,
    dp_exponential,
    dp_randomized_response_binary,
    dp_randomized_response_kary,
    metric_privacy,
    plot_metric_dp_map,
)
from veil.mechanisms import PlanarLaplace, PrivacyLedger, ordinal_scores
from veil.metrics import correlation_loss, divergence_distributions
from veil.rng import RngLike, resolve_rng

__all__ = ["run_demo"]

GEO_EPSILON = 0.01
CORRELATION_FEATURES = ["age", "education-num", "hours-per-week", "sex", "salary-class"]


def run_demo(
    out_dir: str | os.PathLike[str],
    *,
    epsilon: float = 1.0,
    rng: RngLike = None,
    echo: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Run the demonstration and write its files to ``out_dir``; return the summary.

    Parameters
    ----------
    out_dir : path
        Folder for the outputs (created if needed).
    epsilon : float, default 1.0
        Budget per record of each Adult column (the Gaussian uses δ = 1e-6).
    rng : None, int or numpy.random.Generator
        None (default) draws secure noise; an int gives a reproducible run.
    echo : callable
        Receives the printed report, line by line.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    generator = resolve_rng(rng, stacklevel=3)
    ledger = PrivacyLedger()
    adult = load_adult()
    lo, hi = ADULT_BOUNDS["age"]
    hlo, hhi = ADULT_BOUNDS["hours-per-week"]
    released = dp_clip_laplace(
        adult, "age", epsilon, lo, hi, new_column=True, rng=generator, ledger=ledger
    )
    released = dp_clip_gaussian(
        released,
        "hours-per-week",
        min(epsilon, 1.0),
        hlo,
        hhi,
        1e-6,
        new_column=True,
        rng=generator,
        ledger=ledger,
    )
    released = dp_exponential(
        released,
        "education",
        epsilon,
        new_column=True,
        domain=ADULT_DOMAINS["education"],
        scores=ordinal_scores(len(ADULT_DOMAINS["education"])),
        calibration="full",
        rng=generator,
        ledger=ledger,
    )
    released = dp_exponential(
        released,
        "workclass",
        epsilon,
        new_column=True,
        domain=ADULT_DOMAINS["workclass"],
        missing="keep",
        rng=generator,
        ledger=ledger,
    )
    released = dp_randomized_response_kary(
        released,
        "native-country",
        epsilon,
        new_column=True,
        domain=ADULT_DOMAINS["native-country"],
        missing="keep",
        rng=generator,
        ledger=ledger,
    )
    released = dp_randomized_response_binary(
        released,
        "sex",
        epsilon,
        new_column=True,
        positive_label="Female",
        domain=ADULT_DOMAINS["sex"],
        rng=generator,
        ledger=ledger,
    )
    privatized = ["age", "hours-per-week", "education", "workclass", "native-country", "sex"]
    rows = []
    for column in privatized:
        div = divergence_distributions(adult, released, column, new_column=True)
        rows.append(
            {
                "column": column,
                "mechanism": next(e.mechanism for e in ledger.entries if e.scope == column),
                **div,
            }
        )
    utility = pd.DataFrame(rows).set_index("column")
    loss = correlation_loss(adult, released, CORRELATION_FEATURES, new_column=True)
    total = ledger.total()

    taxi = load_nyc_taxi()
    geo_ledger = PrivacyLedger()
    taxi_dp = metric_privacy(
        taxi,
        "pickup_latitude",
        "pickup_longitude",
        GEO_EPSILON,
        new_cols=True,
        radius=False,
        rng=generator,
        ledger=geo_ledger,
    )
    map_path = out / "taxi_map.html"
    plot_metric_dp_map(taxi_dp, "pickup_latitude", "pickup_longitude", map_path)

    write_atomic(out / "adult_ldp.csv", lambda p: released.to_csv(p, index=False))
    write_atomic(out / "utility.csv", lambda p: utility.to_csv(p))
    summary = {
        "steps": [dataclasses.asdict(e) for e in ledger.entries + geo_ledger.entries],
        "total_ldp_per_record": dataclasses.asdict(total),
        "total_metric_per_metre": dataclasses.asdict(geo_ledger.total("metric", "metre")),
        "correlation_loss_percent": loss,
    }

    write_text_atomic(out / "privacy.json", json.dumps(summary, indent=2) + "\n")

    echo(f"Adult: {len(adult)} rows, {len(privatized)} columns privatized")
    with pd.option_context("display.width", 120, "display.max_columns", 10):
        echo(utility.round(4).to_string())
    echo(f"correlation loss over {CORRELATION_FEATURES}: {loss:.1f} %")
    echo(
        f"privacy per record (sequential composition): epsilon={total.epsilon:g}, "
        f"delta={total.delta:g}"
    )
    planar = PlanarLaplace(GEO_EPSILON)
    echo(
        f"NYC taxi pickups: {len(taxi)} points, epsilon {GEO_EPSILON} per metre; each point "
        f"moves {planar.radius_quantile(0.5):.0f} m (median), 95% within "
        f"{planar.radius_quantile(0.95):.0f} m"
    )
    echo(
        f"wrote {out / 'adult_ldp.csv'}, {out / 'utility.csv'}, {out / 'privacy.json'}, {map_path}"
    )
    return summary
