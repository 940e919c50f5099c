"""Where the tests find their data: the tables vendored in ``tests/data`` (see its README).

Paths are computed from this file, so a plain clone of the repository runs the suite.
Test modules import them relatively (``from .._data import DATA``).
"""

from __future__ import annotations

from pathlib import Path

import veil.datasets

DATA = Path(__file__).resolve().parent / "data"

# UCI Adult (32 561 rows) is not vendored a second time: the package ships the same
# bytes, gzipped, for veil.datasets.load_adult.
UCI_ADULT_CSV = Path(veil.datasets.__file__).resolve().parent / "data" / "adult.csv.gz"
