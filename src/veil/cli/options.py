"""Options shared by several commands, declared once so that they read the same."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated

import typer

__all__ = [
    "Acknowledge",
    "DropOther",
    "Encoding",
    "Json",
    "KeepOrder",
    "KeepOther",
    "OutFile",
    "OutFormat",
    "RawCsv",
    "Seed",
    "Sep",
    "TableFormatChoice",
]

Json = Annotated[
    bool,
    typer.Option("--json", help="Print the result as JSON on standard output (for scripts)."),
]
Seed = Annotated[
    int | None,
    typer.Option(
        "--seed",
        help="Reproducible noise, for demonstrations and tests only: anyone who knows the "
        "seed can remove the noise. Default: cryptographically secure randomness.",
    ),
]
Sep = Annotated[
    str | None,
    typer.Option(
        "--sep",
        help="CSV separator of the input and output files (one character, or \\t). "
        "Default: ',' (a tab for .tsv); an input no comma splits evenly is read with the "
        "';', tab or '|' that does.",
    ),
]
OutFile = Annotated[
    Path,
    typer.Option(
        "--out",
        help="The released table: .csv (.tsv, .csv.gz, ...) or .parquet; written "
        "atomically, never over the input.",
    ),
]


class TableFormatChoice(str, enum.Enum):
    """The format of a released table."""

    csv = "csv"
    parquet = "parquet"


OutFormat = Annotated[
    TableFormatChoice | None,
    typer.Option(
        "--format",
        help="csv or parquet: must agree with the --out file name (default: from the name).",
    ),
]
Encoding = Annotated[
    str | None,
    typer.Option(
        "--encoding",
        help="Text encoding of the input CSV (e.g. latin-1). Default: utf-8. Outputs are "
        "written in UTF-8.",
    ),
]
KeepOther = Annotated[
    bool,
    typer.Option(
        "--keep-other",
        help="Copy the columns the command does not treat into the release unchanged. "
        "Those that carry the treated information (another coordinate pair, coordinates "
        "as text, the same numbers, an identifier, addresses, personal data in text) are "
        "refused unless named in --acknowledge. Default: refuse a table with untreated "
        "columns.",
    ),
]
Acknowledge = Annotated[
    str | None,
    typer.Option(
        "--acknowledge",
        help="COL,COL: columns copied by --keep-other that carry the treated information "
        "or single out records, released knowingly (a warning lists each as a leak).",
    ),
]

DropOther = Annotated[
    bool,
    typer.Option(
        "--drop-other",
        help="Release only the columns the command names; the others are left out.",
    ),
]
KeepOrder = Annotated[
    bool,
    typer.Option(
        "--keep-order",
        help="Keep the input's row order (a warning says that it can link released rows "
        "to people by position). Default: rows in a random order from the secure "
        "generator (from --seed where the command has one).",
    ),
]
RawCsv = Annotated[
    bool,
    typer.Option(
        "--raw-csv",
        help="Write CSV cells as they are, even those a spreadsheet would run as a "
        "formula (starting with =, +, -, @, a tab or a carriage return). Default: such "
        "text cells get a leading apostrophe. Parquet is never changed.",
    ),
]
