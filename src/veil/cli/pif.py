"""``veil pif``: the personal information factor assessment of a table (nothing released).

Reads one table, calls :func:`veil.risk.assess_pif` and prints, per attribute, the
OptimShare paper's PIF_A (mean cell surprise factor, in [0, 1]), the worst CSF, the mean
CIG in bits and the wCIG weight, with piflib's PIF_n (a percentile of row information
gains, in bits). ``--plot`` writes the CSF heat map beside the PIF_A bars
(:func:`veil.risk.pif_figure`) atomically. The figures are computed from the raw records
and are for the custodian: no privacy guarantee is stated or implied.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from veil.cli.console import (
    captured_warnings,
    emit_json,
    print_note,
    print_table,
    print_warnings,
    status,
)
from veil.cli.errors import CliUsageError, reporting_errors
from veil.cli.files import check_outputs, read_table, require_columns, split_list
from veil.cli.options import Encoding, Json, Sep

if TYPE_CHECKING:
    from veil.risk import PifAssessment

__all__ = ["pif"]

Data = Annotated[
    Path, typer.Argument(help="The input table: .csv (.tsv, .csv.gz, ...) or .parquet.")
]

_PLOT_SUFFIXES = (".png", ".svg", ".pdf")


def _bin_spec(text: str, parameter: str) -> Any:
    """``exact``, ``qN`` (N quantile bins) or comma-separated edges (``inf`` allowed)."""
    value = text.strip()
    if value == "exact":
        return "exact"
    if value.lower().startswith("q"):
        try:
            count = int(value[1:])
        except ValueError:
            count = 0
        if count < 2:
            raise CliUsageError(f"{parameter}: {text!r}: quantile bins are qN with N >= 2")
        return count
    edges = []
    for item in split_list(value, parameter):
        try:
            edges.append(float(item))
        except ValueError:
            raise CliUsageError(
                f"{parameter}: {item!r} is not a number; a binning is 'exact', qN or "
                f"comma-separated edges (got {text!r})"
            ) from None
    return edges


def _bins(items: list[str]) -> dict[Hashable, Any]:
    bins: dict[Hashable, Any] = {}
    for item in items:
        column, found, spec = item.rpartition(":")
        if not found or not column.strip() or not spec.strip():
            raise CliUsageError(
                f"--bins: expected COLUMN:exact, COLUMN:qN or COLUMN:e0,e1,...; got {item!r}"
            )
        name = column.strip()
        if name in bins:
            raise CliUsageError(f"--bins: column {name!r} is binned twice")
        bins[name] = _bin_spec(spec, "--bins")
    return bins


def _rows(result: PifAssessment) -> list[list[Any]]:
    summary = result.summary()
    return [
        [str(name), row["pif_a"], row["max_csf"], row["mean_cig"], row["weight"], row["bins"]]
        for name, row in summary.to_dict("index").items()
    ]


@reporting_errors
def pif(
    data: Data,
    columns: Annotated[
        str | None,
        typer.Option(
            "--columns",
            help="The attributes assessed, comma-separated (default: every column). A "
            "cell's cohort is the records equal on all the other attributes named here.",
        ),
    ] = None,
    bins: Annotated[
        list[str] | None,
        typer.Option(
            "--bins",
            help="How a numeric column becomes categories, repeatable: COLUMN:exact (each "
            "value), COLUMN:qN (N quantile bins, computed from the data) or "
            "COLUMN:e0,e1,... (public edges that cover the column; -inf and inf allowed).",
        ),
    ] = None,
    default_bins: Annotated[
        str | None,
        typer.Option(
            "--default-bins",
            help="exact, qN or e0,e1,... for numeric columns without --bins. Without it, "
            "whole-number columns are taken exactly and other numeric columns are refused.",
        ),
    ] = None,
    percentile: Annotated[
        float,
        typer.Option("--percentile", help="n of piflib's PIF_n, in [0, 100]."),
    ] = 95.0,
    plot: Annotated[
        Path | None,
        typer.Option(
            "--plot",
            help="Write the CSF heat map and the PIF_A bars here (.png, .svg or .pdf).",
        ),
    ] = None,
    highlight: Annotated[
        str | None,
        typer.Option(
            "--highlight",
            help="Attributes drawn in red in the bars of --plot, comma-separated (e.g. the "
            "quasi-identifiers).",
        ),
    ] = None,
    sep: Sep = None,
    encoding: Encoding = None,
    as_json: Json = False,
) -> None:
    """Personal information factor of a table: CSF, CIG, the paper's PIF_A, piflib's PIF_n.

    Nothing is released: the assessment is computed from the raw records for their
    custodian and carries no privacy guarantee. Missing values are a category of their
    own.
    """
    from veil.risk import assess_pif, pif_figure

    chosen = None if columns is None else split_list(columns, "--columns")
    marked = [] if highlight is None else split_list(highlight, "--highlight")
    if not (math.isfinite(percentile) and 0.0 <= percentile <= 100.0):
        raise CliUsageError(f"--percentile: must be a number in [0, 100], got {percentile!r}")
    binning = _bins(bins or [])
    default = None if default_bins is None else _bin_spec(default_bins, "--default-bins")
    if plot is not None and plot.suffix.lower() not in _PLOT_SUFFIXES:
        raise CliUsageError(f"--plot: must end in .png, .svg or .pdf, got {str(plot)!r}")
    if marked and plot is None:
        raise CliUsageError("--highlight: only applies to --plot; give --plot FILE too")
    check_outputs({"--plot": plot}, [data])
    frame = read_table(data, sep=sep, encoding=encoding)
    if chosen is not None:
        require_columns(frame, chosen, "--columns", data.name)
    assessed = chosen if chosen is not None else [str(c) for c in frame.columns]
    require_columns(frame, [str(c) for c in binning], "--bins", data.name)
    outside = [c for c in [*binning, *marked] if c not in assessed]
    if outside:
        raise CliUsageError(f"--bins, --highlight: {outside!r} are not among the assessed columns")
    with captured_warnings() as caught, status("Assessing the personal information factor"):
        result = assess_pif(frame, chosen, bins=binning, default_bins=default)
        if plot is not None:
            pif_figure(result, highlight=marked, path=plot)
    print_warnings(caught)
    _report(data, result, percentile, plot, as_json)


def _report(
    data: Path, result: PifAssessment, percentile: float, plot: Path | None, as_json: bool
) -> None:
    if as_json:
        emit_json({"file": data, **result.to_dict(percentile), "plot": plot})
        return
    print_table(
        f"Personal information factor of {data.name} ({result.n_records} records)",
        ["attribute", "PIF_A (mean CSF)", "max CSF", "mean CIG (bits)", "wCIG weight", "bins"],
        _rows(result),
    )
    pif_n = result.pif_n(percentile)
    print_table(
        None,
        ["measure", "value"],
        [[f"PIF_{percentile:g} (piflib: percentile of row CIG sums, bits)", pif_n]],
    )
    for note in result.data_dependent:
        if note.startswith("quantile"):
            print_note(f"veil: note: {note}")
    if plot is not None:
        print_note(f"veil: wrote {plot}")
