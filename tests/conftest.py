"""Shared fixtures: the bundled datasets, read once per session and copied per test."""

from __future__ import annotations

import functools

import pandas as pd
import pytest

from veil.datasets import load_adult, load_nyc_taxi

from ._browser import browser as browser  # the session's one Chromium


@functools.cache
def _adult() -> pd.DataFrame:
    return load_adult()


@functools.cache
def _nyc_taxi() -> pd.DataFrame:
    return load_nyc_taxi()


@pytest.fixture
def adult() -> pd.DataFrame:
    """UCI Adult (32 561 rows); a fresh deep copy, so a test may not leak into another."""
    return _adult().copy(deep=True)


@pytest.fixture
def nyc_taxi() -> pd.DataFrame:
    """The 998 NYC taxi trips; a fresh deep copy."""
    return _nyc_taxi().copy(deep=True)
