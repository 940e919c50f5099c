"""Table file formats by name: which endings are CSV and which are Parquet.

One table for every reader: the command line's files and a plan's ``input`` and
``output`` agree on what a name means (a ``.txt`` table the command line reads is one a
plan reads too).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

__all__ = [
    "CSV_SUFFIXES",
    "PARQUET_SUFFIXES",
    "TableFormat",
    "format_of",
    "space_aligned",
    "space_aligned_refusal",
]

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


def space_aligned(lines: Sequence[str]) -> int:
    """The fields of a space-aligned table's first ``lines`` (0 if it is not one).

    UCI's ``page-blocks.data``, say: numbers aligned with spaces, which a CSV reader
    takes as one column named by the first line. Its lines all split on runs of spaces
    into the same three or more fields, and each is indented or holds a run of two
    spaces: columns aligned for the eye, not a column of text whose values hold words.
    """
    kept = [line.rstrip("\r\n") for line in lines]
    kept = [line for line in kept if line.strip()]
    widths = {len(line.split()) for line in kept}
    if len(widths) != 1 or (width := widths.pop()) < 3:
        return 0
    aligned = all(line.startswith(" ") or "  " in line.strip() for line in kept)
    return width if aligned else 0


def space_aligned_refusal(width: int) -> str:
    """Why a space-aligned table of ``width`` fields is refused, and the way out."""
    return (
        f"reads as one column, but each of its first lines holds {width} fields aligned "
        "with spaces; veil reads tables whose fields are separated by ',', ';', a tab or "
        "'|', under a header line of column names: write it so"
    )
