"""The release file: written partition by partition into its staged path.

:class:`ReleaseWriter` is the sink an engine streams the released partitions into (one
partition, the whole table, on pandas). CSV text cells that a spreadsheet would run as
formulas, and column names that would, are escaped on the way (OWASP's rule,
:func:`veil.gate.escape_formulas`)
unless the plan asks for raw CSV; the counts of escaped cells per column are kept for
the manifest. Parquet partitions share the schema of the first one that holds records.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pandas as pd

from veil.gate import HEADER, escape_formulas

__all__ = ["ReleaseWriter", "layout_facts", "sha256_file"]


def sha256_file(path: str | os.PathLike[str]) -> str:
    """SHA-256 (hex) of a file, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class ReleaseWriter:
    """Appends partitions to one CSV or Parquet file (the schema of the first one).

    Empty partitions (every record suppressed) are skipped for Parquet until one holds
    records, whose types then make the schema; an empty file is written if none does.
    Use it as a context manager: the file is closed (and completed) on exit.
    ``scratch`` is a private folder an engine may spill intermediate files to (removed
    with the staged outputs).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        fmt: str,
        escape: bool = True,
        scratch: Path | None = None,
    ) -> None:
        self.path = os.fspath(path)
        self.scratch = scratch
        self.fmt = fmt
        self.escape = escape and fmt == "csv"
        self.escaped: dict[str, int] = {}
        self.columns: list[str] = []
        self.rows = 0
        self._csv: Any = None
        self._parquet: Any = None
        self._schema: Any = None
        self._empty: pd.DataFrame | None = None

    def __enter__(self) -> ReleaseWriter:
        if self.fmt == "csv":
            self._csv = open(self.path, "w", encoding="utf-8", newline="")
        return self

    def write(self, part: pd.DataFrame) -> None:
        """Append the records of ``part`` (the header with the first one)."""
        first = not self.columns
        self.rows += len(part)
        if self.fmt == "csv":
            if self.escape:
                part, counts = escape_formulas(part)
                for column, n in counts.items():
                    if column != HEADER or first:
                        self.escaped[column] = self.escaped.get(column, 0) + n
            if first:
                self.columns = [str(c) for c in part.columns]
            part.to_csv(self._csv, header=first, index=False)
            return
        if first:
            self.columns = [str(c) for c in part.columns]
        if self._parquet is None and len(part) == 0:
            self._empty = part
            return
        self._write_parquet(part)

    def _write_parquet(self, part: pd.DataFrame) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(part, preserve_index=False, schema=self._schema)
        if self._parquet is None:
            self._schema = table.schema
            self._parquet = pq.ParquetWriter(self.path, table.schema)
        self._parquet.write_table(table)

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        if kind is None and self._parquet is None and self._empty is not None:
            self._write_parquet(self._empty)
        if self._csv is not None:
            self._csv.close()
        if self._parquet is not None:
            self._parquet.close()


def layout_facts(order: str | None, writer: ReleaseWriter) -> dict[str, Any]:
    """How the release file was laid out: row order and spreadsheet escaping (public).

    ``order`` is the engine's description of the shuffle, or None when the plan keeps
    the input's order.
    """
    if order is None:
        order = "input order (output.keep_order): rows can be linked by position"
    if writer.fmt != "csv":
        formulas = "not applicable (Parquet)"
    elif writer.escape:
        formulas = (
            "text cells starting with = + - @ tab or CR were prefixed with an apostrophe (OWASP)"
        )
    else:
        formulas = "not escaped (output.raw_csv)"
    return {"row_order": order, "csv_formulas": formulas, "cells_escaped": dict(writer.escaped)}
