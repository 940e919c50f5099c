"""A small public-domain slice of Adult for the synthesizer tests."""

from __future__ import annotations

import functools

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
