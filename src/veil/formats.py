"""Table file formats by name: which endings are CSV and which are Parquet.

One table for every reader: the command line's files and a plan's ``input`` and
``output`` agree on what a name means (a ``.txt`` table the command line reads is one a
plan reads too).
"""

from __future__ import annotations

from typing import Literal

__all__ = ["CSV_SUFFIXES", "PARQUET_SUFFIXES", "TableFormat", "format_of"]

TableFormat = Literal["csv", "parquet"]

CSV_SUFFIXES = (".csv", ".tsv", ".txt", ".csv.gz", ".csv.bz2", ".csv.xz", ".csv.zip")
PARQUET_SUFFIXES = (".parquet", ".pq")


def format_of(name: str) -> TableFormat | None:
    """``"parquet"``, ``"csv"`` or None (unknown) from a file name's ending, any case."""
    lowered = name.lower()
    if lowered.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if lowered.endswith(CSV_SUFFIXES):
        return "csv"
    return None
