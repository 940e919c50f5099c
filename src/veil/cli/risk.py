"""``veil risk``: the re-identification risk of a table (:mod:`veil.risk`); writes nothing.

Prints the risk measures of the quasi-identifiers (given, or suggested and said), and
with ``--scan`` the riskiest combinations, the records behind them and the columns that
look like direct identifiers.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import pandas as pd
import typer

from veil.cli.console import (
    captured_warnings,
    emit_json,
    print_note,
    print_table,
    print_text,
    print_warnings,
)
from veil.cli.errors import CheckFailedError, CliUsageError, reporting_errors
from veil.cli.files import read_table, require_columns, split_list
from veil.cli.one_table import Data, distinct
from veil.cli.options import Encoding, Json, Sep
from veil.gate import check_confidential_place

__all__ = ["risk"]


# Rows of the scan tables printed (the JSON holds as many).
_SCAN_ROWS = 10
_DRIVER_ROWS = 20


def _suggested_qis(frame: pd.DataFrame, suggestions: Any, data: Path) -> list[str]:
    """The suggested quasi-identifiers, said on standard error (or why there are none)."""
    from rich.markup import escape

    columns = [str(c) for c in suggestions.quasi_identifiers]
    if not columns:
        raise CliUsageError(
            f"--qi: not given, and no column of {data.name} looks like a quasi-identifier "
            "(a fact an attacker may know, such as age, sex, a postcode or a date); name "
            "them: --qi age,sex,zip"
        )
    print_note(
        escape(
            f"veil: risk: no --qi given: using the suggested quasi-identifiers "
            f"{', '.join(columns)} (named like facts an attacker may know, or dates; "
            "veil.risk.suggest_roles); give --qi to choose them"
        )
    )
    return columns


def _combination(label: str, columns: list[str], size: int) -> list[str]:
    """The columns of the qi_scan row labelled ``label`` (``"a + b"``)."""
    import itertools

    for combo in itertools.combinations(columns, size):
        if " + ".join(combo) == label:
            return list(combo)
    return columns


def _risk_scan(
    frame: pd.DataFrame, columns: list[str], suggestions: Any, size: int, time_limit: float
) -> dict[str, Any]:
    """The riskiest combinations, the records behind the riskiest one, and the flags."""
    from veil.risk import qi_scan, record_risk

    scanned = qi_scan(frame, columns, max_size=min(size, len(columns)), time_limit=time_limit)
    progress = scanned.attrs.get("veil.qi_scan", {"complete": True})
    # The riskiest first; among equals, the one an attacker needs least knowledge for.
    order = np.lexsort((scanned["n_qis"].to_numpy(), -scanned["unique_rate"].to_numpy()))
    ranked = scanned.iloc[order]
    combinations: list[dict[str, Any]] = [
        {
            "combination": str(label),
            "n_qis": int(row["n_qis"]),
            "n_classes": int(row["n_classes"]),
            "unique_rate": float(row["unique_rate"]),
            "mean_risk": float(row["mean_risk"]),
            "max_risk": float(row["max_risk"]),
        }
        for label, row in ranked.to_dict("index").items()
    ]
    drivers: dict[str, Any] = {}
    if combinations:
        top = combinations[0]
        combo = _combination(top["combination"], columns, top["n_qis"])
        size_of = np.rint(1.0 / record_risk(frame, combo).to_numpy(dtype=np.float64))
        small = frame.loc[size_of <= 2, combo].assign(class_size=size_of[size_of <= 2])
        classes = (
            small.groupby([*combo, "class_size"], dropna=False, sort=False)
            .size()
            .reset_index(name="records")
            .sort_values(["class_size", *combo], kind="stable")
        )
        drivers = {
            "combination": combo,
            "alone": int((size_of == 1).sum()),
            "in_pairs": int((size_of == 2).sum()),
            "classes": classes.to_dict(orient="records"),
        }
    flagged = [
        {"column": str(c.column), "kind": c.kind, "reason": c.reason}
        for c in suggestions.columns
        if c.kind in ("identifier", "free-text")
    ]
    return {
        "combinations": combinations,
        "complete": bool(progress.get("complete", True)),
        "drivers": drivers,
        "flagged": flagged,
    }


def _print_scan(scan: dict[str, Any], data: Path) -> None:
    rows = [
        [
            c["combination"],
            c["n_classes"],
            f"{100 * c['unique_rate']:.2f} %",
            c["max_risk"],
            c["mean_risk"],
        ]
        for c in scan["combinations"][:_SCAN_ROWS]
    ]
    complete = "" if scan["complete"] else " (cut short by --time-limit: larger ones not scanned)"
    print_table(
        f"Riskiest quasi-identifier combinations of {data.name}{complete}",
        ["combination", "classes", "records alone", "highest risk", "mean risk"],
        rows,
    )
    drivers = scan["drivers"]
    if drivers:
        combo = drivers["combination"]
        title = (
            f"Records that drive the risk on {' + '.join(combo)}: {drivers['alone']} alone "
            f"in their class, {drivers['in_pairs']} in pairs (your own data: shown here, "
            "written nowhere)"
        )
        shown = drivers["classes"][:_DRIVER_ROWS]
        print_table(
            title,
            ["class size", *combo, "records"],
            [[int(c["class_size"]), *(c[q] for q in combo), c["records"]] for c in shown],
        )
        if len(drivers["classes"]) > len(shown):
            print_text(
                f"... and {len(drivers['classes']) - len(shown)} more classes of 1 or 2 "
                "records (--json lists them all)"
            )
    if scan["flagged"]:
        print_table(
            "Direct identifiers and free text with personal data: drop or mask them",
            ["column", "kind", "why"],
            [[f["column"], f["kind"], f["reason"]] for f in scan["flagged"]],
        )
    else:
        print_text("No column looks like a direct identifier or free text with personal data.")


@reporting_errors
def risk(
    data: Data,
    qi: Annotated[
        str | None,
        typer.Option(
            "--qi",
            help="Quasi-identifiers, comma-separated (e.g. age,sex,zip). Default: the "
            "columns veil.risk.suggest_roles takes for quasi-identifiers (named like facts "
            "an attacker may know, and dates), said on standard error.",
        ),
    ] = None,
    scan: Annotated[
        bool,
        typer.Option(
            "--scan",
            help="Also list the riskiest combinations of the quasi-identifiers "
            "(veil.risk.qi_scan), the records that drive the risk (the classes of 1 or 2 "
            "records of the riskiest combination: the custodian's own data, printed here "
            "and written nowhere) and the columns that look like direct identifiers or free "
            "text with personal data.",
        ),
    ] = False,
    scan_size: Annotated[
        int, typer.Option("--scan-size", help="--scan: the largest combination scanned.")
    ] = 3,
    time_limit: Annotated[
        float,
        typer.Option(
            "--time-limit",
            help="Seconds the combination scan may take (--scan, and the suggestion of "
            "quasi-identifiers); a scan cut short says so.",
        ),
    ] = 10.0,
    sampling_fraction: Annotated[
        float | None,
        typer.Option(
            "--sampling-fraction",
            help="n / N in (0, 1] when the table is a sample of a known population: adds "
            "the journalist risk and the population-uniqueness estimate.",
        ),
    ] = None,
    threshold: Annotated[
        float,
        typer.Option(
            "--threshold", help="Prosecutor risk threshold in (0, 1] for 'records at risk'."
        ),
    ] = 0.2,
    fail_above: Annotated[
        float | None,
        typer.Option(
            "--fail-above",
            help="Exit with code 1 when the highest prosecutor risk exceeds this value.",
        ),
    ] = None,
    risk_records: Annotated[
        Path | None,
        typer.Option(
            "--risk-records",
            help="Write each record's class size and prosecutor risk on the "
            "quasi-identifiers to this CSV, riskiest first (as sdcMicro's per-record risk): "
            "the custodian's own data, written 0600 and refused beside a public manifest.",
        ),
    ] = None,
    sep: Sep = None,
    encoding: Encoding = None,
    as_json: Json = False,
) -> None:
    """Re-identification risk of a table from its quasi-identifiers (nothing is written
    unless --risk-records names a file).

    Prosecutor, journalist and marketer risk, sample uniques and, with
    --sampling-fraction, the estimated share of population uniques (veil.risk.summary).
    Without --qi, the suggested quasi-identifiers are used, and said. --scan adds the
    riskiest combinations, the records behind them and the direct identifiers.
    """
    from veil.risk import suggest_roles, summary

    columns = None if qi is None else split_list(qi, "--qi")
    if columns is not None:
        distinct(columns, "--qi")
    _in_range(threshold, "--threshold", low_open=True)
    if sampling_fraction is not None:
        _in_range(sampling_fraction, "--sampling-fraction", low_open=True)
    if fail_above is not None:
        _in_range(fail_above, "--fail-above", low_open=False)
    if isinstance(scan_size, bool) or scan_size < 1:
        raise CliUsageError(f"--scan-size: must be an integer >= 1, got {scan_size!r}")
    if not (math.isfinite(time_limit) and time_limit > 0):
        raise CliUsageError(
            f"--time-limit: must be a positive number of seconds, got {time_limit!r}"
        )
    if risk_records is not None:
        if risk_records.suffix.lower() != ".csv":
            raise CliUsageError(f"--risk-records: must end in .csv, got {str(risk_records)!r}")
        check_confidential_place(risk_records, "--risk-records")
    frame = read_table(data, sep=sep, encoding=encoding)
    if columns is not None:
        require_columns(frame, columns, "--qi", data.name)
    with captured_warnings() as caught:
        suggestions = (
            suggest_roles(frame, scan_size=1, time_limit=time_limit)
            if columns is None or scan
            else None
        )
        if columns is None:
            columns = _suggested_qis(frame, suggestions, data)
        result = summary(frame, columns, threshold=threshold, sampling_fraction=sampling_fraction)
        scanned = _risk_scan(frame, columns, suggestions, scan_size, time_limit) if scan else None
    print_warnings(caught)
    if risk_records is not None:
        _write_risk_records(frame, columns, risk_records)
    measures = result.to_dict()
    failed = fail_above is not None and result.prosecutor_highest > fail_above
    if as_json:
        emit_json(
            {
                "file": data,
                "quasi_identifiers": columns,
                "suggested": qi is None,
                **measures,
                **({"scan": scanned} if scanned is not None else {}),
                "fail_above": fail_above,
                "passed": not failed,
                "warnings": caught,
            }
        )
    else:
        print_table(
            f"Re-identification risk of {data.name} on {', '.join(columns)}",
            ["measure", "value"],
            [[name, value] for name, value in measures.items()],
        )
        if scanned is not None:
            _print_scan(scanned, data)
    if failed:
        raise CheckFailedError(
            f"--fail-above: the highest prosecutor risk {result.prosecutor_highest:.6g} "
            f"exceeds {fail_above:g}"
        )


def _write_risk_records(frame: pd.DataFrame, columns: list[str], path: Path) -> None:
    """Each record's row, quasi-identifier values, class size and prosecutor risk."""
    from veil.atomic import write_text_atomic
    from veil.risk import record_risk

    risk = record_risk(frame, columns)
    table = frame[columns].copy()
    table.insert(0, "row", range(len(frame)))
    table["class_size"] = (1.0 / risk).round().astype("int64").to_numpy()
    table["prosecutor_risk"] = risk.to_numpy()
    table = table.sort_values(["prosecutor_risk", "row"], ascending=[False, True], kind="stable")
    write_text_atomic(path, table.to_csv(index=False), confidential=True)
    print_note(f"wrote {path} (confidential: each record's risk; keep it with the custodian)")


def _in_range(value: float, parameter: str, *, low_open: bool) -> None:
    """Refuse a risk or fraction outside (0, 1] (``low_open``) or [0, 1], NaN included."""
    low_ok = value > 0.0 if low_open else value >= 0.0
    if not (math.isfinite(value) and low_ok and value <= 1.0):
        allowed = "in (0, 1]" if low_open else "in [0, 1]"
        raise CliUsageError(f"{parameter}: must be a number {allowed}, got {value!r}")
