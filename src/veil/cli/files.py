"""Tables in and out of the command line: CSV or Parquet by file name, written atomically.

A file ending in ``.parquet`` or ``.pq`` is Parquet (needs pyarrow, the ``release``
extra); ``.csv``, ``.tsv``, ``.txt`` and compressed CSV (``.csv.gz``, ``.csv.bz2``,
``.csv.xz``, ``.csv.zip``) are CSV, with ``--sep`` as the separator (default ``,``, a tab
for ``.tsv``, or the ``;``, tab or ``|`` that splits a file no comma does:
:func:`input_separator`). Errors name the option or argument, the file and what is allowed.

Every CSV written here has its formula-like text cells and column names escaped
(:func:`veil.gate.escape_formulas`) unless the caller asks for raw cells; a
release and the files that go with it (a map) are built first and written last, never
over an input file.
"""

from __future__ import annotations

import bz2
import codecs
import contextlib
import csv
import gzip
import io
import lzma
import os
import zipfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import pandas as pd

from veil.cli.errors import CliUsageError
from veil.formats import (
    CSV_SUFFIXES,
    PARQUET_SUFFIXES,
    TableFormat,
    format_of,
    space_aligned,
    space_aligned_refusal,
)
from veil.gate import escape_formulas

__all__ = [
    "CSV_SUFFIXES",
    "PARQUET_SUFFIXES",
    "check_encoding",
    "check_outputs",
    "escape_csv_cells",
    "input_separator",
    "output_folder",
    "read_table",
    "require_columns",
    "split_list",
    "split_numbers",
    "table_format",
    "write_release",
    "write_table",
]


def table_format(path: Path, parameter: str, declared: str | None = None) -> TableFormat:
    """``"csv"`` or ``"parquet"`` from the file name, which must agree with ``declared``.

    Parameters
    ----------
    path : pathlib.Path
        The file.
    parameter : str
        The option or argument it came from, for error messages.
    declared : {"csv", "parquet"}, optional
        A format given explicitly (``--format``, a plan's ``format:``).

    Raises
    ------
    CliUsageError
        The name ends in neither (the message lists the allowed endings), or in the
        other format than ``declared`` (Parquet written into ``x.csv``).
    """
    found = format_of(path.name)
    if found is None:
        raise CliUsageError(
            f"{parameter}: cannot tell the format of {os.fspath(path)!r}; the name must end "
            f"in one of {', '.join(CSV_SUFFIXES + PARQUET_SUFFIXES)}"
        )
    if declared is not None and declared != found:
        suffixes = PARQUET_SUFFIXES if declared == "parquet" else CSV_SUFFIXES
        raise CliUsageError(
            f"{parameter}: {os.fspath(path)!r} is named as {found} but the format is "
            f"{declared}; name it with one of {', '.join(suffixes)}"
        )
    return found


def check_encoding(encoding: str | None, parameter: str = "--encoding") -> str | None:
    """``encoding`` when Python knows it (None stays None: UTF-8).

    Raises
    ------
    CliUsageError
        An unknown encoding name.
    """
    if encoding is None:
        return None
    try:
        return codecs.lookup(encoding).name
    except LookupError:
        raise CliUsageError(
            f"{parameter}: unknown text encoding {encoding!r}; use a name Python knows, "
            "such as utf-8, latin-1 or cp1252"
        ) from None


def _separator(path: Path, sep: str | None) -> str:
    if sep is not None:
        if len(sep) != 1 and sep != "\\t":
            raise CliUsageError(f"--sep: must be one character, got {sep!r}")
        return "\t" if sep == "\\t" else sep
    return "\t" if path.name.lower().endswith(".tsv") else ","


# Separators tried when a CSV's --sep is not given, after the comma.
_OTHER_SEPARATORS = (";", "\t", "|")
_SNIFFED_LINES = 50


def _first_lines(path: Path, encoding: str | None) -> list[str]:
    """Up to the first 50 lines of a CSV, decompressed by its suffix."""
    suffix = path.suffix.lower()
    with contextlib.ExitStack() as stack:
        raw: IO[bytes] | gzip.GzipFile | bz2.BZ2File | lzma.LZMAFile
        if suffix == ".zip":
            archive = stack.enter_context(zipfile.ZipFile(path))
            members = archive.namelist()
            if not members:
                return []
            raw = stack.enter_context(archive.open(members[0]))
        elif suffix == ".gz":
            raw = stack.enter_context(gzip.open(path, "rb"))
        elif suffix == ".bz2":
            raw = stack.enter_context(bz2.open(path, "rb"))
        elif suffix == ".xz":
            raw = stack.enter_context(lzma.open(path, "rb"))
        else:
            raw = stack.enter_context(open(path, "rb"))
        text = io.TextIOWrapper(raw, encoding=encoding or "utf-8", errors="replace")
        return [line for line, _ in zip(text, range(_SNIFFED_LINES), strict=False)]


def input_separator(path: Path, sep: str | None, encoding: str | None = None) -> str:
    """The separator a CSV is read with: ``sep`` if given, else the one its lines use.

    Without ``sep``: a tab for ``.tsv``; otherwise a comma, unless commas do not split
    the first 50 lines into the same number of fields (more than one) while one of
    ``;``, tab or ``|`` does (spreadsheets in much of Europe write ``;``, their decimal
    mark being the comma). A file the comma splits evenly is always read with it.
    """
    if sep is not None or path.name.lower().endswith(".tsv"):
        return _separator(path, sep)
    try:
        lines = _first_lines(path, check_encoding(encoding))
    except (OSError, LookupError, ValueError, zipfile.BadZipFile, EOFError, lzma.LZMAError):
        return ","  # read_table reports what is wrong with the file

    def fields(separator: str) -> int:
        """The fields every line splits into, or 1 when they differ or there is one."""
        widths = {len(row) for row in csv.reader(lines, delimiter=separator) if row}
        return widths.pop() if len(widths) == 1 else 1

    if fields(",") > 1:
        return ","
    width, best = max((fields(c), c) for c in _OTHER_SEPARATORS)
    return best if width > 1 else ","


def read_table(
    path: Path,
    *,
    sep: str | None = None,
    text_columns: Sequence[str] = (),
    all_text: bool = False,
    parameter: str = "DATA",
    encoding: str | None = None,
) -> pd.DataFrame:
    """Read a CSV or Parquet table.

    A blank line of a one-column CSV is a missing value, not a line to skip.

    Parameters
    ----------
    path : pathlib.Path
        The file.
    sep : str, optional
        CSV separator (one character, or ``\\t``); default as :func:`input_separator`
        finds it (``,``; a tab for ``.tsv``; ``;``, tab or ``|`` where no comma splits).
    text_columns : sequence of str
        CSV columns read as text, so that ``"00123"`` keeps its zeros.
    all_text : bool, default False
        Read every CSV column as text (columns passed through unchanged are then
        written back exactly as read).
    parameter : str
        The argument or option the file came from, for error messages.
    encoding : str, optional
        Text encoding of a CSV (default UTF-8).

    Raises
    ------
    CliUsageError
        The file is missing, a folder, of an unknown format, not in ``encoding`` or
        unreadable; the encoding is unknown.
    """
    fmt = table_format(path, parameter)
    codec = check_encoding(encoding)
    where = f"{parameter}: {os.fspath(path)!r}"
    if not path.exists():
        raise CliUsageError(f"{where} does not exist")
    if path.is_dir():
        raise CliUsageError(f"{where} is a folder, not a file")
    try:
        if fmt == "parquet":
            frame: pd.DataFrame = pd.read_parquet(path)
            return frame
        # low_memory=False: each column's type from all its values, not chunk by chunk
        # (which warns of "mixed types" and can type one column two ways).
        options: dict[str, Any] = {
            "sep": input_separator(path, sep, codec),
            "encoding": codec,
            "low_memory": False,
        }
        # One column: a blank line is an empty value (pandas would skip it, shifting
        # every later row); in a wider table a blank line is no record.
        header = pd.read_csv(path, nrows=0, **options)
        if len(header.columns) == 1:
            if sep is None and (width := space_aligned(_first_lines(path, codec))):
                raise CliUsageError(f"{where} {space_aligned_refusal(width)}")
            options["skip_blank_lines"] = False
        if all_text:
            options["dtype"] = str
        elif text_columns:
            options["dtype"] = dict.fromkeys(text_columns, str)
        table: pd.DataFrame = pd.read_csv(path, **options)
        return table
    except CliUsageError:
        raise
    except ImportError as exc:
        raise CliUsageError(
            f"{where}: reading Parquet needs pyarrow: pip install 'veil[release]' ({exc})"
        ) from None
    except pd.errors.EmptyDataError:
        raise CliUsageError(f"{where} is empty") from None
    except UnicodeDecodeError as exc:
        raise CliUsageError(
            f"{where} is not valid {codec or 'utf-8'} text (byte {exc.start}: "
            f"{exc.reason}); give its encoding with --encoding (e.g. latin-1)"
        ) from None
    except (pd.errors.ParserError, ValueError, OSError) as exc:
        kind = "Parquet" if fmt == "parquet" else "CSV"
        reason = " ".join(str(exc).split())[:300]
        raise CliUsageError(f"{where} is not a readable {kind} file ({reason})") from None


def _same_file(a: Path, b: Path) -> bool:
    if a.exists() and b.exists():
        return a.samefile(b)
    return a.resolve() == b.resolve()


def check_outputs(outputs: Mapping[str, Path | None], inputs: Sequence[Path]) -> None:
    """Refuse, before any work, outputs that cannot be written or would replace an input.

    Parameters
    ----------
    outputs : mapping of str to pathlib.Path or None
        Option name (``"--out"``, ``"--map"``) to target; None entries are skipped.
    inputs : sequence of pathlib.Path
        Every file the command reads (the data, hierarchy files, a key file).

    Raises
    ------
    CliUsageError
        A target's folder is missing, the target is a folder, it is one of ``inputs``
        (also through a link), or two options name the same file.
    """
    given = [(name, path) for name, path in outputs.items() if path is not None]
    for name, path in given:
        parent = path.resolve().parent
        if not parent.is_dir():
            raise CliUsageError(f"{name}: the folder {os.fspath(parent)!r} does not exist")
        if path.is_dir():
            raise CliUsageError(f"{name}: {os.fspath(path)!r} is a folder, not a file")
        for source in inputs:
            if _same_file(path, source):
                raise CliUsageError(
                    f"{name}: {os.fspath(path)!r} is an input file ({os.fspath(source)!r}); "
                    "write to another file"
                )
    for i, (name, path) in enumerate(given):
        for other, other_path in given[i + 1 :]:
            if _same_file(path, other_path):
                raise CliUsageError(
                    f"{name}, {other}: both name {os.fspath(path)!r}; give different files"
                )


def escape_csv_cells(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """Escape the text cells and column names a spreadsheet would run as formulas.

    The release gate's rule (:func:`veil.gate.escape_formulas`, OWASP's): text that is
    only a signed number (``"-5"``) is a number to a spreadsheet and is left as it is.
    """
    return escape_formulas(frame)


def _write_one(
    frame: pd.DataFrame, path: Path, fmt: TableFormat, separator: str
) -> Callable[[str], object]:
    if fmt == "parquet":
        return lambda tmp: frame.to_parquet(tmp, index=False)
    return lambda tmp: frame.to_csv(tmp, index=False, sep=separator)


def write_table(
    frame: pd.DataFrame,
    path: Path,
    *,
    sep: str | None = None,
    parameter: str = "--out",
    inputs: Sequence[Path] = (),
    raw_csv: bool = False,
    declared: str | None = None,
) -> dict[str, int]:
    """Write ``frame`` (without its index) to ``path`` atomically, CSV or Parquet by name.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table; not modified.
    path : pathlib.Path
        The target; its folder must exist, and it must not be one of ``inputs``.
    sep : str, optional
        CSV separator, as for :func:`read_table`.
    parameter : str
        The option the path came from, for error messages.
    inputs : sequence of pathlib.Path
        Files the command read, which must not be overwritten.
    raw_csv : bool, default False
        Write CSV cells as they are; by default text cells that a spreadsheet would run
        as formulas get a leading apostrophe (:func:`escape_csv_cells`).
    declared : {"csv", "parquet"}, optional
        A format given explicitly, which must agree with the name.

    Returns
    -------
    dict of str to int
        CSV cells escaped per column (empty for Parquet, with ``raw_csv``, or when no
        cell needed it).

    Raises
    ------
    CliUsageError
        Unknown format or one the name disagrees with, missing folder, or the target is
        an input.
    """
    return write_release(
        frame,
        path,
        sep=sep,
        parameter=parameter,
        inputs=inputs,
        raw_csv=raw_csv,
        declared=declared,
    )


def write_release(
    frame: pd.DataFrame,
    path: Path,
    *,
    sep: str | None = None,
    parameter: str = "--out",
    inputs: Sequence[Path] = (),
    raw_csv: bool = False,
    declared: str | None = None,
    extras: Sequence[tuple[str, Path, Callable[[str], object]]] = (),
) -> dict[str, int]:
    """Write a released table and the files that go with it, all or none.

    Through the release gate's output set (:class:`veil.gate.OutputSet`): every file is
    built into a ``0o700`` staging folder beside its target, and only when every one is
    built are they moved into place; a failure, or a kill, leaves no output behind (a
    killed run's staging folder is removed by the next write into that folder).

    Parameters
    ----------
    frame, path, sep, parameter, inputs, raw_csv, declared
        As for :func:`write_table`.
    extras : sequence of (str, pathlib.Path, callable)
        Each extra file: the option that named it, its target, and
        ``build(temporary_path)`` writing it (the temporary path ends like the target).

    Returns
    -------
    dict of str to int
        CSV cells escaped per column, as :func:`write_table`.
    """
    from veil.gate import OutputSet

    fmt = table_format(path, parameter, declared)
    check_outputs({parameter: path, **{name: target for name, target, _ in extras}}, inputs)
    counts: dict[str, int] = {}
    if fmt == "csv" and not raw_csv:
        frame, counts = escape_formulas(frame)
    write = _write_one(frame, path, fmt, _separator(path, sep))
    targets = [path, *(target for _, target, _ in extras)]
    folders = tuple(dict.fromkeys(t.resolve().parent for t in targets))
    with OutputSet(folders, commit_point=None) as outputs:
        for _, target, build in extras:
            build(os.fspath(outputs.stage(target.resolve())))
        write(os.fspath(outputs.stage(path.resolve())))
        outputs.commit()
    return counts


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
