"""A small public-domain slice of Adult for the synthesizer tests, and a utility measure."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pandas as pd

from veil.datasets import ADULT_BOUNDS, ADULT_DOMAINS, load_adult
from veil.synth import TableDomain

# Six Adult columns without missing values; age in one-year bins, so that records are
# distinct enough for a membership attack on the raw table to succeed.
ADULT_COLUMNS = ["age", "education", "marital-status", "relationship", "sex", "salary-class"]


def adult_domain(columns: list[str] = ADULT_COLUMNS, age_bins: int = 85) -> TableDomain:
    """The public domain of the columns (veil.datasets.ADULT_DOMAINS / ADULT_BOUNDS)."""
    spec: dict[str, object] = {c: list(ADULT_DOMAINS[c]) for c in columns if c in ADULT_DOMAINS}
    if "age" in columns:
        spec["age"] = {"bounds": list(ADULT_BOUNDS["age"]), "bins": age_bins, "integer": True}
    return TableDomain.from_dict({c: spec[c] for c in columns})


@functools.cache
def split() -> tuple[pd.DataFrame, pd.DataFrame]:
    adult = load_adult()[ADULT_COLUMNS]
    order = np.random.default_rng(3).permutation(len(adult))
    return adult.iloc[order[:4000]].copy(), adult.iloc[order[4000:8000]].copy()


def pairwise_tvd(domain: TableDomain, a: pd.DataFrame, b: pd.DataFrame) -> float:
    """Mean total variation distance between the 2-way marginals of a and b (binned)."""
    ca, cb = domain.encode(a), domain.encode(b)
    sizes = domain.sizes
    out = []
    for x, y in itertools.combinations(domain.names, 2):
        cells = sizes[x] * sizes[y]
        ha = np.bincount(ca[x] * sizes[y] + ca[y], minlength=cells) / len(a)
        hb = np.bincount(cb[x] * sizes[y] + cb[y], minlength=cells) / len(b)
        out.append(0.5 * np.abs(ha - hb).sum())
    return float(np.mean(out))
