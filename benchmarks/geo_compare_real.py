"""The seed's location privacy/utility comparison on real data (``--data DIR``).

Runs ``veil.geo.compare`` (grid, donut, quadtree cloak, planar Laplace over the seed's
parameter grids) on Chicago crime reports, NYC taxi pickups and US ZIP centroids (one
state: the whole country spans more than any local projection holds, and veil refuses
it), prints each table and writes its two-panel figure.

    python benchmarks/geo_compare_real.py --data DIR --out geo-compare

``--data`` is a folder holding ``chicago_crime50k.csv.gz`` (the nanocube project's
Chicago crime sample) and ``us_zipcodes.csv`` (vega-datasets' ZIP centroids).
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from veil.datasets import load_nyc_taxi
from veil.errors import VeilError
from veil.geo import compare, evaluate, plot_comparison


def run(name: str, df: pd.DataFrame, lat: str, lon: str, seed: int, out: Path) -> None:
    rng = np.random.Generator(np.random.PCG64(seed))  # evaluation probes, not privacy noise
    distinct = len(df[[lat, lon]].drop_duplicates())
    start = time.perf_counter()
    table = compare(df, lat, lon, rng=rng)
    identity = evaluate(df, df, lat, lon, rng=rng)
    took = time.perf_counter() - start
    print(
        f"\n== {name}: {len(df)} rows, {distinct} distinct locations, linkage rate of an "
        f"unmasked release {identity.reid_rate:.3f} ({took:.1f} s)"
    )
    shown = table.round({"reid_rate": 3, "median_shift_m": 0, "density_corr": 3})
    print(
        shown[["method", "setting", "reid_rate", "median_shift_m", "density_corr"]].to_string(
            index=False
        )
    )
    plot_comparison(table, out / f"{name}.png")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--data",
        type=Path,
        required=True,
        metavar="DIR",
        help="folder with chicago_crime50k.csv.gz and us_zipcodes.csv",
    )
    parser.add_argument("--out", type=Path, default=Path("geo-compare"))
    parser.add_argument("--state", default="MO", help="US state for the ZIP centroids")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    warnings.simplefilter("ignore")  # data-derived projections and bounds are expected here
    chicago = pd.read_csv(
        args.data / "chicago_crime50k.csv.gz", usecols=["Latitude", "Longitude"]
    ).dropna()
    run("chicago", chicago, "Latitude", "Longitude", 1, args.out)
    taxi = load_nyc_taxi()
    taxi = taxi[(taxi["pickup_latitude"] != 0) & (taxi["pickup_longitude"] != 0)]
    run("nyc_taxi", taxi, "pickup_latitude", "pickup_longitude", 2, args.out)
    zips = pd.read_csv(args.data / "us_zipcodes.csv", dtype={"zip_code": str}).dropna(
        subset=["latitude", "longitude"]
    )
    try:
        compare(zips, "latitude", "longitude", rng=np.random.Generator(np.random.PCG64(0)))
    except VeilError as exc:
        print(f"\n== US ZIP centroids, whole country: refused ({type(exc).__name__}: {exc})")
    state = zips[zips["state"] == args.state]
    run(f"zip_{args.state.lower()}", state, "latitude", "longitude", 3, args.out)


if __name__ == "__main__":
    main()
