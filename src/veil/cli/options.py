"""Options shared by several commands, declared once so that they read the same."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["Json", "OutFile", "Seed", "Sep"]

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
        "Default: ',' (a tab for .tsv).",
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
