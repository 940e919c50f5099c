"""Seeded generators of large benchmark frames shaped like Adult and NYC taxi pickups.

This is benchmark data, not privacy noise: it comes from a seeded NumPy ``Generator``
(PCG64) so that every run of a benchmark sees the same input.

* :func:`adult_frame` returns the real Adult table (the copy bundled with veil) restricted
  to the benchmark columns, with missing categories written as the string ``"?"`` as in
  trasgoDP's examples.
* :func:`generate_adult` draws ``n`` rows whose columns are sampled i.i.d. from the
  empirical marginals of Adult (each column independently, so the columns are
  uncorrelated), as object string columns or as pandas categoricals.
* :func:`adult_domains` gives the public domain of each categorical column: the categories
  of its source marginal, sorted.
* :func:`generate_locations` draws ``n`` points around New York City by resampling the
  bundled taxi pickups and moving each by a small Gaussian jitter, so the points are
  almost all distinct.

Run ``python benchmarks/generate.py --rows 1e6 --seed 0`` for a summary of a generated
frame, or add ``--out frame.csv.gz`` (or ``.pkl``) to save it.
"""

from __future__ import annotations

import argparse
import functools
import math
from pathlib import Path

import numpy as np
import pandas as pd

from veil.datasets import load_adult, load_nyc_taxi

__all__ = [
    "ADULT_COLUMNS",
    "CATEGORICAL_COLUMNS",
    "NUMERIC_COLUMNS",
    "adult_domains",
    "adult_frame",
    "adult_marginals",
    "generate_adult",
    "generate_locations",
    "parse_count",
]

NUMERIC_COLUMNS = ("age", "hours-per-week")
CATEGORICAL_COLUMNS = ("workclass", "native-country", "sex", "education")
ADULT_COLUMNS = ("age", "workclass", "native-country", "sex", "education", "hours-per-week")
MISSING_CATEGORY = "?"

# Plausible NYC box; the taxi sample holds a few (0, 0) placeholders, which are dropped.
_NYC_LAT = (40.4, 41.1)
_NYC_LON = (-74.4, -73.5)
_METRES_PER_DEGREE = 6_371_000.0 * math.pi / 180.0


def parse_count(text: str | float | int) -> int:
    """Parse ``"1e6"``, ``"1_000_000"`` or ``1e6`` as a positive integer row count."""
    value = float(str(text).replace("_", ""))
    if not value.is_integer() or value < 1:
        raise ValueError(f"expected a positive whole number of rows, got {text!r}")
    return int(value)


@functools.cache
def _adult_source() -> pd.DataFrame:
    adult = load_adult()[list(ADULT_COLUMNS)].copy()
    for column in CATEGORICAL_COLUMNS:
        adult[column] = adult[column].fillna(MISSING_CATEGORY).astype(object)
    for column in NUMERIC_COLUMNS:
        adult[column] = adult[column].astype(np.int64)
    return adult


def adult_marginals() -> dict[str, pd.Series]:
    """Empirical marginal of each benchmark column: probabilities indexed by sorted value."""
    source = _adult_source()
    return {
        column: source[column].value_counts(normalize=True, sort=False).sort_index()
        for column in ADULT_COLUMNS
    }


def adult_domains() -> dict[str, list[str]]:
    """Public domain (sorted categories, ``"?"`` included) of each categorical column."""
    marginals = adult_marginals()
    return {column: [str(v) for v in marginals[column].index] for column in CATEGORICAL_COLUMNS}


def _as_categorical(frame: pd.DataFrame) -> pd.DataFrame:
    domains = adult_domains()
    out = frame.copy(deep=False)
    for column in CATEGORICAL_COLUMNS:
        out[column] = pd.Categorical(frame[column], categories=domains[column])
    return out


def adult_frame(*, categorical: bool = False) -> pd.DataFrame:
    """The real Adult table (32 561 rows) with the benchmark columns, ``"?"`` for missing.

    Parameters
    ----------
    categorical : bool, default False
        Return the string columns as pandas categoricals over :func:`adult_domains`
        instead of object columns.
    """
    frame = _adult_source().copy()
    return _as_categorical(frame) if categorical else frame


def generate_adult(n: int, seed: int, *, categorical: bool = False) -> pd.DataFrame:
    """Draw ``n`` rows whose columns are i.i.d. samples of Adult's empirical marginals.

    Columns: age (int64), workclass, native-country, sex, education (strings, ``"?"``
    included as a category), hours-per-week (int64). Columns are sampled independently.

    Parameters
    ----------
    n : int
        Number of rows.
    seed : int
        Seed of the NumPy ``Generator(PCG64(seed))`` (benchmark data, not noise).
    categorical : bool, default False
        Return the string columns as pandas categoricals (categories: the source
        marginal's, see :func:`adult_domains`) instead of object columns.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    rng = np.random.Generator(np.random.PCG64(seed))
    columns: dict[str, object] = {}
    for column, marginal in adult_marginals().items():
        probabilities = marginal.to_numpy(dtype=np.float64)
        codes = rng.choice(probabilities.size, size=n, p=probabilities)
        values = marginal.index.to_numpy()
        if column in NUMERIC_COLUMNS:
            columns[column] = values.astype(np.int64).take(codes)
        elif categorical:
            columns[column] = pd.Categorical.from_codes(
                codes.astype(np.int8), categories=pd.Index(values, dtype=object)
            )
        else:
            columns[column] = values.astype(object).take(codes)
        del codes
    return pd.DataFrame(columns, columns=list(ADULT_COLUMNS))


def generate_locations(n: int, seed: int, *, jitter_m: float = 50.0) -> pd.DataFrame:
    """Draw ``n`` points around NYC: resampled taxi pickups plus Gaussian jitter.

    Parameters
    ----------
    n : int
        Number of points.
    seed : int
        Seed of the NumPy ``Generator(PCG64(seed))``.
    jitter_m : float, default 50
        Standard deviation of the jitter, in metres, along each axis.

    Returns
    -------
    pandas.DataFrame
        Columns ``lat`` and ``lon`` (float64 degrees).
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    taxi = load_nyc_taxi()
    lat = taxi["pickup_latitude"].to_numpy(dtype=np.float64)
    lon = taxi["pickup_longitude"].to_numpy(dtype=np.float64)
    inside = (lat > _NYC_LAT[0]) & (lat < _NYC_LAT[1]) & (lon > _NYC_LON[0]) & (lon < _NYC_LON[1])
    lat, lon = lat[inside], lon[inside]
    rng = np.random.Generator(np.random.PCG64(seed))
    pick = rng.integers(0, lat.size, size=n)
    step = jitter_m / _METRES_PER_DEGREE
    out_lat = lat.take(pick) + rng.normal(0.0, step, size=n)
    out_lon = lon.take(pick) + rng.normal(0.0, step, size=n) / np.cos(np.radians(lat.take(pick)))
    return pd.DataFrame({"lat": out_lat, "lon": out_lon})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1e6", help="number of rows (e.g. 1e6)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--categorical", action="store_true", help="categorical dtype")
    parser.add_argument("--locations", action="store_true", help="NYC points instead of Adult")
    parser.add_argument("--out", type=Path, help="write the frame (.csv, .csv.gz or .pkl)")
    args = parser.parse_args(argv)
    n = parse_count(args.rows)
    if args.locations:
        frame = generate_locations(n, args.seed)
    else:
        frame = generate_adult(n, args.seed, categorical=args.categorical)
    print(frame.head())
    print(frame.dtypes.to_string())
    print(f"{len(frame)} rows, {frame.memory_usage(deep=False).sum() / 2**20:.1f} MB (shallow)")
    if args.out is not None:
        if args.out.suffix == ".pkl":
            frame.to_pickle(args.out)
        else:
            frame.to_csv(args.out, index=False)
        print(f"written to {args.out}")


if __name__ == "__main__":
    main()
