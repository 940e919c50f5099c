"""Tables in and out of the command line: CSV or Parquet by file name, written atomically.

A file ending in ``.parquet`` or ``.pq`` is Parquet (needs pyarrow, the ``release``
extra); ``.csv``, ``.tsv``, ``.txt`` and compressed CSV (``.csv.gz``, ``.csv.bz2``,
``.csv.xz``, ``.csv.zip``) are CSV, with ``--sep`` as the separator (default ``,``, or a
tab for ``.tsv``). Errors name the option or argument, the file and what is allowed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from veil.atomic import write_atomic
from veil.cli.errors import CliUsageError

__all__ = [
    "CSV_SUFFIXES",
    "PARQUET_SUFFIXES",
    "output_folder",
    "read_table",
    "require_columns",
    "split_list",
    "split_numbers",
    "table_format",
    "write_table",
]

CSV_SUFFIXES = (".csv", ".tsv", ".txt", ".csv.gz", ".csv.bz2", ".csv.xz", ".csv.zip")
PARQUET_SUFFIXES = (".parquet", ".pq")

TableFormat = Literal["csv", "parquet"]


def table_format(path: Path, parameter: str) -> TableFormat:
    """``"csv"`` or ``"parquet"`` from the file name.

    Raises
    ------
    CliUsageError
        The name ends in neither (the message lists the allowed endings).
    """
    name = path.name.lower()
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if name.endswith(CSV_SUFFIXES):
        return "csv"
    raise CliUsageError(
        f"{parameter}: cannot tell the format of {os.fspath(path)!r}; the name must end in "
        f"one of {', '.join(CSV_SUFFIXES + PARQUET_SUFFIXES)}"
    )


def _separator(path: Path, sep: str | None) -> str:
    if sep is not None:
        if len(sep) != 1 and sep != "\\t":
            raise CliUsageError(f"--sep: must be one character, got {sep!r}")
        return "\t" if sep == "\\t" else sep
    return "\t" if path.name.lower().endswith(".tsv") else ","


def read_table(
    path: Path,
    *,
    sep: str | None = None,
    text_columns: Sequence[str] = (),
    all_text: bool = False,
    parameter: str = "DATA",
) -> pd.DataFrame:
    """Read a CSV or Parquet table.

    Parameters
    ----------
    path : pathlib.Path
        The file.
    sep : str, optional
        CSV separator (one character, or ``\\t``); default ``,`` (tab for ``.tsv``).
    text_columns : sequence of str
        CSV columns read as text, so that ``"00123"`` keeps its zeros.
    all_text : bool, default False
        Read every CSV column as text (columns passed through unchanged are then
        written back exactly as read).
    parameter : str
        The argument or option the file came from, for error messages.

    Raises
    ------
    CliUsageError
        The file is missing, a folder, of an unknown format or unreadable.
    """
    fmt = table_format(path, parameter)
    where = f"{parameter}: {os.fspath(path)!r}"
    if not path.exists():
        raise CliUsageError(f"{where} does not exist")
    if path.is_dir():
        raise CliUsageError(f"{where} is a folder, not a file")
    try:
        if fmt == "parquet":
            frame: pd.DataFrame = pd.read_parquet(path)
            return frame
        options: dict[str, Any] = {"sep": _separator(path, sep)}
        if all_text:
            options["dtype"] = str
        elif text_columns:
            options["dtype"] = dict.fromkeys(text_columns, str)
        table: pd.DataFrame = pd.read_csv(path, **options)
        return table
    except ImportError as exc:
        raise CliUsageError(
            f"{where}: reading Parquet needs pyarrow: pip install 'veil[release]' ({exc})"
        ) from None
    except pd.errors.EmptyDataError:
        raise CliUsageError(f"{where} is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError, OSError) as exc:
        kind = "Parquet" if fmt == "parquet" else "CSV"
        reason = " ".join(str(exc).split())[:300]
        raise CliUsageError(f"{where} is not a readable {kind} file ({reason})") from None


def _check_target(path: Path, parameter: str, inputs: Sequence[Path]) -> None:
    parent = path.resolve().parent
    if not parent.is_dir():
        raise CliUsageError(f"{parameter}: the folder {os.fspath(parent)!r} does not exist")
    if path.is_dir():
        raise CliUsageError(f"{parameter}: {os.fspath(path)!r} is a folder, not a file")
    for source in inputs:
        if source.exists() and path.exists() and path.samefile(source):
            raise CliUsageError(
                f"{parameter}: {os.fspath(path)!r} is the input file; write the release "
                "to another file"
            )


def write_table(
    frame: pd.DataFrame,
    path: Path,
    *,
    sep: str | None = None,
    parameter: str = "--out",
    inputs: Sequence[Path] = (),
) -> None:
    """Write ``frame`` (without its index) to ``path`` atomically, CSV or Parquet by name.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table.
    path : pathlib.Path
        The target; its folder must exist, and it must not be one of ``inputs``.
    sep : str, optional
        CSV separator, as for :func:`read_table`.
    parameter : str
        The option the path came from, for error messages.
    inputs : sequence of pathlib.Path
        Files the command read, which must not be overwritten.

    Raises
    ------
    CliUsageError
        Unknown format, missing folder, or the target is an input.
    """
    fmt = table_format(path, parameter)
    _check_target(path, parameter, inputs)
    if fmt == "parquet":
        write_atomic(path, lambda tmp: frame.to_parquet(tmp, index=False))
    else:
        separator = _separator(path, sep)
        write_atomic(path, lambda tmp: frame.to_csv(tmp, index=False, sep=separator))


def output_folder(path: Path, parameter: str = "--out") -> Path:
    """Create ``path`` (and its parents) as the output folder; refuse an existing file."""
    if path.exists() and not path.is_dir():
        raise CliUsageError(f"{parameter}: {os.fspath(path)!r} is a file, not a folder")
    path.mkdir(parents=True, exist_ok=True)
    return path


def split_list(text: str, parameter: str) -> list[str]:
    """Comma-separated items, stripped; an empty item is refused.

    Raises
    ------
    CliUsageError
        No items, or an empty one (``a,,b``).
    """
    items = [item.strip() for item in text.split(",")]
    if not text.strip() or any(not item for item in items):
        raise CliUsageError(f"{parameter}: expected comma-separated names, got {text!r}")
    return items


def split_numbers(text: str, parameter: str, *, count: int | None = None) -> list[float]:
    """Comma-separated numbers (``count`` of them when given).

    Raises
    ------
    CliUsageError
        An item is not a number, or the count differs.
    """
    numbers: list[float] = []
    for item in split_list(text, parameter):
        try:
            numbers.append(float(item))
        except ValueError:
            raise CliUsageError(f"{parameter}: {item!r} is not a number (in {text!r})") from None
    if count is not None and len(numbers) != count:
        raise CliUsageError(f"{parameter}: expected {count} comma-separated numbers, got {text!r}")
    return numbers


def require_columns(frame: pd.DataFrame, columns: Sequence[str], parameter: str, name: str) -> None:
    """Refuse columns absent from ``frame`` (the message lists the table's columns).

    Raises
    ------
    CliUsageError
        Some of ``columns`` are not columns of ``frame`` (read from file ``name``).
    """
    absent = [c for c in columns if c not in frame.columns]
    if absent:
        shown = [str(c) for c in frame.columns[:40]]
        raise CliUsageError(
            f"{parameter}: {', '.join(repr(c) for c in absent)} not in {name} "
            f"(its columns: {', '.join(shown)}{', ...' if len(frame.columns) > 40 else ''})"
        )
