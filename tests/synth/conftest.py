"""Fixtures of the synthesizer tests: members and non-members drawn from Adult."""

from __future__ import annotations

import pandas as pd
import pytest

from ._adult import split


@pytest.fixture
def members() -> pd.DataFrame:
    """4 000 Adult records a synthesizer is fitted on (a fresh copy)."""
    return split()[0].copy()


@pytest.fixture
def non_members() -> pd.DataFrame:
    """4 000 other Adult records, never shown to a synthesizer."""
    return split()[1].copy()
