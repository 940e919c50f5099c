"""Commands over one toolkit each: ``risk``, ``anonymize``, ``ldp``, ``mask`` and ``geo``.

Each command reads one table (CSV or Parquet, see :mod:`veil.cli.files`), calls the
public functions of one package (:mod:`veil.risk`, :mod:`veil.anonymity`,
:mod:`veil.ldp`, :mod:`veil.masking`, :mod:`veil.geo`) and, except ``risk``, writes the
released table atomically. It prints what was done and what it cost in privacy, as a
table or, with ``--json``, as JSON. No privacy decision is made here.

The path around the treatment is part of the guarantee, as in a release plan:

* columns the command does not name are refused unless ``--drop-other`` leaves them
  out or ``--keep-other`` copies them (with a warning naming those that carry the
  treated information, found by :func:`veil.risk.find_carriers`);
* released rows are in a random order from the secure generator
  (:func:`veil.frames.shuffle_rows`; ``--keep-order`` opts out, with a warning);
* CSV cells a spreadsheet would run as formulas are escaped (``--raw-csv`` opts out);
* every output is checked before any work (never over an input, never two outputs on
  one file) and written only when everything is built.
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import math
import os
import re
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
import pandas as pd
import typer

from veil.cli.console import (
    Warnings,
    captured_warnings,
    emit_json,
    print_note,
    print_table,
    print_text,
    print_warnings,
    status,
)
from veil.cli.errors import CheckFailedError, CliUsageError, reporting_errors
from veil.cli.files import (
    check_encoding,
    check_outputs,
    escape_csv_cells,
    read_table,
    require_columns,
    split_list,
    split_numbers,
    table_format,
    write_release,
)
from veil.cli.options import (
    DropOther,
    Encoding,
    Json,
    KeepOrder,
    KeepOther,
    OutFile,
    OutFormat,
    RawCsv,
    Seed,
    Sep,
    TableFormatChoice,
)
from veil.errors import PrivacyWarning

if TYPE_CHECKING:
    from veil.masking import SecretKey

__all__ = [
    "GeoMask",
    "GeoProjection",
    "LdpMechanism",
    "MaskMethod",
    "OutsidePolicy",
    "anonymize",
    "geo",
    "ldp",
    "mask",
    "risk",
]

Data = Annotated[
    Path, typer.Argument(help="The input table: .csv (.tsv, .csv.gz, ...) or .parquet.")
]


def _costs(ledger: Any) -> list[dict[str, Any]]:
    return [dataclasses.asdict(entry) for entry in ledger.entries]


def _print_costs(costs: list[dict[str, Any]]) -> None:
    print_table(
        "Privacy cost",
        ["scope", "mechanism", "notion", "epsilon", "delta", "unit"],
        [
            [c["scope"], c["mechanism"], c["notion"], c["epsilon"], c["delta"], c["unit"]]
            for c in costs
        ],
    )


def _distinct(columns: Sequence[str], parameter: str) -> None:
    """Refuse a column named twice (``--lat lat --lon lat``)."""
    twice = [c for c, n in collections.Counter(columns).items() if n > 1]
    if twice:
        raise CliUsageError(
            f"{parameter}: {', '.join(repr(c) for c in twice)} named more than once; each "
            "needs its own column"
        )


@dataclasses.dataclass(frozen=True)
class _Treated:
    """The columns a command names, by what it does to them (for the carrier check)."""

    location: tuple[str, str] | None = None
    numeric: tuple[str, ...] = ()
    categorical: tuple[str, ...] = ()
    identifiers: tuple[str, ...] = ()
    # Named by the command and released as they are (anonymize's sensitive attributes).
    kept: tuple[str, ...] = ()

    @property
    def columns(self) -> list[str]:
        return list(
            dict.fromkeys(
                [*(self.location or ()), *self.numeric, *self.categorical, *self.identifiers,
                 *self.kept]
            )
        )  # fmt: skip


def _listed(names: Sequence[str], limit: int = 12) -> str:
    shown = ", ".join(repr(str(n)) for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _other_columns(
    frame: pd.DataFrame, treated: _Treated, keep_other: bool, drop_other: bool, name: str
) -> pd.DataFrame:
    """``frame`` with the columns the command does not name, dropped or kept (warned).

    Raises
    ------
    CliUsageError
        There are such columns and neither --keep-other nor --drop-other is given (the
        message names the ones that carry the treated information), or both are given.
    """
    from veil.risk import find_carriers

    if keep_other and drop_other:
        raise CliUsageError("--keep-other, --drop-other: give one of them, not both")
    named = set(treated.columns)
    others = [str(c) for c in frame.columns if c not in named]
    if not others:
        return frame
    if drop_other:
        return frame[[c for c in frame.columns if c in named]]
    carriers = find_carriers(
        frame,
        location=treated.location,
        numeric=treated.numeric,
        categorical=treated.categorical,
        identifiers=treated.identifiers,
    )
    found = "; ".join(c.describe() for c in carriers)
    if keep_other:
        if carriers:
            warnings.warn(
                f"--keep-other: {len(carriers)} of the columns copied unchanged carry what the "
                f"command protects or identify the record: {found}",
                PrivacyWarning,
                stacklevel=2,
            )
        return frame
    carried = (
        f"; {len(carriers)} of them carry what the command protects or identify the record: {found}"
        if carriers
        else ""
    )
    raise CliUsageError(
        f"--keep-other, --drop-other: {name} has {len(others)} column(s) the command does not "
        f"treat ({_listed(others)}){carried}; give --drop-other to release only "
        f"{_listed(treated.columns)}, or --keep-other to copy the others unchanged"
    )


def _row_order(frame: pd.DataFrame, keep_order: bool, rng: np.random.Generator) -> pd.DataFrame:
    """``frame``'s rows shuffled with ``rng``, or as they are with a warning (--keep-order)."""
    from veil.frames import shuffle_rows

    if keep_order:
        warnings.warn(
            "--keep-order: released rows keep the input's order, which links them to people "
            "by position (a file sorted by date, or with the positive cases first)",
            PrivacyWarning,
            stacklevel=2,
        )
        return frame
    return shuffle_rows(frame, rng)


def _streams(seed: int | None) -> tuple[np.random.Generator, np.random.Generator]:
    """Independent generators for the noise and the row order, from ``--seed`` or the CSPRNG."""
    from veil.rng import resolve_rng, spawn

    noise, order = spawn(resolve_rng(seed, stacklevel=4), 2)
    return noise, order


@dataclasses.dataclass(frozen=True)
class _Output:
    """Where and how a command writes its release (options shared by every command)."""

    out: Path
    sep: str | None
    declared: TableFormatChoice | None
    raw_csv: bool
    keep_order: bool
    inputs: tuple[Path, ...]

    def check(self, extra: dict[str, Path | None] | None = None) -> None:
        """Refuse bad outputs before any work is done."""
        table_format(self.out, "--out", None if self.declared is None else self.declared.value)
        check_outputs({"--out": self.out, **(extra or {})}, self.inputs)

    @property
    def is_csv(self) -> bool:
        return table_format(self.out, "--out") == "csv"

    def publish(
        self,
        frame: pd.DataFrame,
        rng: np.random.Generator,
        extras: Sequence[tuple[str, Path, Callable[[str], object]]] = (),
    ) -> tuple[pd.DataFrame, dict[str, Any]]:
        """Shuffle the rows with ``rng`` (unless --keep-order) and write them with ``extras``.

        Returns
        -------
        released : pandas.DataFrame
            The rows as written.
        facts : dict
            What was done to the rows and the CSV cells, for the command's output.
        """
        # Parquet would carry attrs (the recorded costs) into the file's metadata.
        frame = _row_order(frame, self.keep_order, rng).copy(deep=False)
        frame.attrs = {}
        if self.is_csv and self.raw_csv:
            _, would = escape_csv_cells(frame)
            if would:
                warnings.warn(
                    f"--raw-csv: {sum(would.values())} cell(s) start like spreadsheet formulas "
                    f"and are written as they are (columns {_listed(list(would))})",
                    UserWarning,
                    stacklevel=2,
                )
        escaped = write_release(
            frame,
            self.out,
            sep=self.sep,
            inputs=self.inputs,
            raw_csv=self.raw_csv,
            declared=None if self.declared is None else self.declared.value,
            extras=extras,
        )
        return frame, {
            "released_columns": [str(c) for c in frame.columns],
            "row_order": "input" if self.keep_order else "shuffled",
            "csv_formulas": None if not self.is_csv else "raw" if self.raw_csv else "escaped",
            "csv_cells_escaped": escaped,
        }


def _escaped_text(written: dict[str, Any]) -> str:
    counts: dict[str, int] = written["csv_cells_escaped"]
    if not counts:
        return ""
    return (
        f"; escaped {sum(counts.values())} cell(s) a spreadsheet would run as formulas "
        f"({', '.join(f'{c}: {n}' for c, n in counts.items())}; --raw-csv writes them as read)"
    )


def _order_text(keep_order: bool) -> str:
    return "rows in input order" if keep_order else "rows shuffled"


# ----------------------------------------------------------------------------- risk


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
    sep: Sep = None,
    encoding: Encoding = None,
    as_json: Json = False,
) -> None:
    """Re-identification risk of a table from its quasi-identifiers (nothing is written).

    Prosecutor, journalist and marketer risk, sample uniques and, with
    --sampling-fraction, the estimated share of population uniques (veil.risk.summary).
    Without --qi, the suggested quasi-identifiers are used, and said. --scan adds the
    riskiest combinations, the records behind them and the direct identifiers.
    """
    from veil.risk import suggest_roles, summary

    columns = None if qi is None else split_list(qi, "--qi")
    if columns is not None:
        _distinct(columns, "--qi")
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


def _in_range(value: float, parameter: str, *, low_open: bool) -> None:
    """Refuse a risk or fraction outside (0, 1] (``low_open``) or [0, 1], NaN included."""
    low_ok = value > 0.0 if low_open else value >= 0.0
    if not (math.isfinite(value) and low_ok and value <= 1.0):
        allowed = "in (0, 1]" if low_open else "in [0, 1]"
        raise CliUsageError(f"{parameter}: must be a number {allowed}, got {value!r}")


# ------------------------------------------------------------------------- anonymize


def _named_pairs(
    items: list[str], parameter: str, separator: str, form: str
) -> list[tuple[str, str]]:
    pairs = []
    for item in items:
        name, found, value = item.partition(separator)
        if not found or not name.strip() or not value.strip():
            raise CliUsageError(f"{parameter}: expected {form}, got {item!r}")
        pairs.append((name.strip(), value.strip()))
    return pairs


def _number(text: str, parameter: str, kind: type[int] | type[float]) -> Any:
    try:
        return kind(text)
    except ValueError:
        raise CliUsageError(
            f"{parameter}: {text!r} is not {'an integer' if kind is int else 'a number'}"
        ) from None


def _models(k: int | None, l_specs: list[str], t_specs: list[str]) -> list[Any]:
    from veil.anonymity import DistinctLDiversity, KAnonymity, TCloseness

    models: list[Any] = []
    if k is not None:
        models.append(KAnonymity(k))
    for attribute, value in _named_pairs(l_specs, "--l", ":", "ATTRIBUTE:L"):
        models.append(DistinctLDiversity(attribute, _number(value, "--l", int)))
    for attribute, value in _named_pairs(t_specs, "--t", ":", "ATTRIBUTE:T[:DISTANCE]"):
        t, _, distance = value.partition(":")
        models.append(TCloseness(attribute, _number(t, "--t", float), distance or "equal"))
    if not models:
        raise CliUsageError("--k, --l, --t: give at least one privacy model (e.g. --k 5)")
    return models


@reporting_errors
def anonymize(
    data: Data,
    hierarchy: Annotated[
        list[str],
        typer.Option(
            "--hierarchy",
            metavar="COLUMN=FILE",
            help="COLUMN=FILE.csv: a quasi-identifier and its generalization hierarchy "
            "(anjana's ',' or ARX's ';' format); repeat for each quasi-identifier.",
        ),
    ],
    out: OutFile,
    k: Annotated[
        int | None, typer.Option("--k", help="k-anonymity: every class holds >= k records.")
    ] = None,
    l_diversity: Annotated[
        list[str] | None,
        typer.Option(
            "--l",
            metavar="ATTRIBUTE:L",
            help="ATTRIBUTE:L, distinct l-diversity of a sensitive column; repeatable.",
        ),
    ] = None,
    t_closeness: Annotated[
        list[str] | None,
        typer.Option(
            "--t",
            metavar="ATTRIBUTE:T[:DISTANCE]",
            help="ATTRIBUTE:T[:DISTANCE], t-closeness of a sensitive column, DISTANCE "
            "'equal' (default) or 'ordered'; repeatable.",
        ),
    ] = None,
    max_suppression: Annotated[
        float,
        typer.Option(
            "--max-suppression", help="Largest share of records that may be suppressed, [0, 1]."
        ),
    ] = 0.0,
    metric: Annotated[
        str,
        typer.Option(
            "--metric",
            help="Objective: loss, discernibility, aecs, precision or entropy.",
        ),
    ] = "loss",
    time_limit: Annotated[
        float | None,
        typer.Option(
            "--time-limit",
            help="Seconds after which the best transformation found so far is returned "
            "(not proven optimal; a warning says so).",
        ),
    ] = None,
    mark: Annotated[
        bool,
        typer.Option(
            "--mark-suppressed",
            help="Keep suppressed records with every quasi-identifier '*' instead of "
            "removing them.",
        ),
    ] = False,
    keep_other: KeepOther = False,
    drop_other: DropOther = False,
    keep_order: KeepOrder = False,
    raw_csv: RawCsv = False,
    out_format: OutFormat = None,
    sep: Sep = None,
    encoding: Encoding = None,
    as_json: Json = False,
) -> None:
    """Optimal generalization of the quasi-identifiers with record suppression.

    Searches the lattice of hierarchy levels for the transformation with the best
    metric satisfying every model (veil.anonymity.anonymize) and writes the released
    table, its rows in a random order. Columns other than the quasi-identifiers and the
    sensitive attributes of --l/--t need --drop-other or --keep-other. Exit code 1 when
    no transformation satisfies the models.
    """
    from veil.anonymity import Hierarchy
    from veil.anonymity import anonymize as run_search
    from veil.rng import resolve_rng

    pairs = _named_pairs(hierarchy, "--hierarchy", "=", "COLUMN=FILE.csv")
    _distinct([column for column, _ in pairs], "--hierarchy")
    models = _models(k, l_diversity or [], t_closeness or [])
    check_encoding(encoding)
    files = [Path(path) for _, path in pairs]
    output = _Output(out, sep, out_format, raw_csv, keep_order, (data, *files))
    output.check()
    hierarchies: dict[str, Hierarchy] = {}
    for column, path in pairs:
        hierarchies[column] = _hierarchy(column, Path(path))
    # Generalization maps the values as written in the hierarchy files: read them as text.
    frame = read_table(data, sep=sep, text_columns=list(hierarchies), encoding=encoding)
    require_columns(frame, list(hierarchies), "--hierarchy", data.name)
    sensitive = sorted({a for m in models if (a := getattr(m, "attribute", None)) is not None})
    require_columns(frame, sensitive, "--l, --t", data.name)
    treated = _Treated(categorical=tuple(hierarchies), kept=tuple(sensitive))
    with captured_warnings() as caught:
        frame = _other_columns(frame, treated, keep_other, drop_other, data.name)
        with status("searching the generalization lattice"):
            result = run_search(
                frame,
                hierarchies,
                models,
                max_suppression=max_suppression,
                metric=metric,
                sensitive=sensitive or None,
                suppression="mark" if mark else "remove",
                time_limit=time_limit,
            )
        released, written = output.publish(result.data, resolve_rng(None))
    print_warnings(caught)
    payload = {
        "out": out,
        "rows_in": len(frame),
        "rows_out": len(released),
        "suppressed": result.suppressed,
        "levels": result.levels,
        "optimal": result.optimal,
        "metrics": result.metrics,
        "models": [repr(m) for m in models],
        **written,
        "warnings": caught,
    }
    if as_json:
        emit_json(payload)
        return
    found = "optimal" if result.optimal else "best found, not proven optimal"
    print_table(
        f"Generalization levels ({found})",
        ["quasi-identifier", "level"],
        [[c, level] for c, level in result.levels.items()],
    )
    print_table("Quality", ["metric", "value"], [[m, v] for m, v in result.metrics.items()])
    print_text(
        f"models: {', '.join(repr(m) for m in models)}\n"
        f"suppressed {result.suppressed} of {len(frame)} records; {_order_text(keep_order)}; "
        f"wrote {out}{_escaped_text(written)}"
    )


def _hierarchy(column: str, path: Path) -> Any:
    """The hierarchy file of ``column``, or an error naming --hierarchy and the file."""
    from veil.anonymity import Hierarchy

    where = f"--hierarchy: file {os.fspath(path)!r} (for {column!r})"
    if not path.is_file():
        raise CliUsageError(f"{where} does not exist")
    try:
        return Hierarchy.from_csv(path)
    except UnicodeDecodeError as exc:
        raise CliUsageError(
            f"{where} is not UTF-8 text (byte {exc.start}: {exc.reason}); save it as UTF-8"
        ) from None


# ------------------------------------------------------------------------------- ldp


class LdpMechanism(str, enum.Enum):
    """Local-DP mechanisms of :mod:`veil.ldp`."""

    laplace = "laplace"
    gaussian = "gaussian"
    exponential = "exponential"
    krr = "krr"
    binary_rr = "binary-rr"


class MissingPolicy(str, enum.Enum):
    """What happens to missing values."""

    error = "error"
    keep = "keep"


_NUMERICAL = (LdpMechanism.laplace, LdpMechanism.gaussian)


def _domain_values(values: list[str], series: pd.Series[Any]) -> list[Any]:
    """The declared categories in the column's type (numbers for a numeric column)."""
    if pd.api.types.is_integer_dtype(series.dtype):
        return [_number(v, "--domain", int) for v in values]
    if pd.api.types.is_float_dtype(series.dtype):
        return [_number(v, "--domain", float) for v in values]
    return values


def _check_ldp_options(
    mechanism: LdpMechanism,
    bounds: str | None,
    resolution: float | None,
    domain: str | None,
    domain_from_data: bool,
    ordinal: bool,
    delta: float | None,
    calibration: str | None,
) -> tuple[float, float]:
    """Refuse options the mechanism does not take or lacks; a numerical one's bounds.

    Categorical mechanisms get ``(nan, nan)``: they have no bounds.
    """
    lo = hi = math.nan
    if mechanism in _NUMERICAL:
        if bounds is None:
            raise CliUsageError(f"--bounds: required by --mechanism {mechanism.value}")
        if domain is not None or domain_from_data or ordinal:
            raise CliUsageError(
                f"--domain, --domain-from-data, --ordinal: not for --mechanism {mechanism.value}"
            )
        lo, hi = split_numbers(bounds, "--bounds", count=2)
    else:
        if bounds is not None or resolution is not None:
            raise CliUsageError(f"--bounds, --resolution: not for --mechanism {mechanism.value}")
        if (domain is None) == (not domain_from_data):
            raise CliUsageError(
                f"--domain: --mechanism {mechanism.value} needs the public categories "
                "(--domain A,B,C), or --domain-from-data to read them from the data"
            )
    if ordinal and (mechanism is not LdpMechanism.exponential or domain is None):
        raise CliUsageError("--ordinal: for --mechanism exponential with --domain (in order)")
    if mechanism is LdpMechanism.gaussian and delta is None:
        raise CliUsageError("--delta: required by --mechanism gaussian")
    if delta is not None and mechanism is not LdpMechanism.gaussian:
        raise CliUsageError(f"--delta: not for --mechanism {mechanism.value}")
    if calibration is not None and mechanism not in (
        LdpMechanism.gaussian,
        LdpMechanism.exponential,
    ):
        raise CliUsageError(f"--calibration: not for --mechanism {mechanism.value}")
    return lo, hi


@reporting_errors
def ldp(
    data: Data,
    column: Annotated[str, typer.Option("--column", help="The column to privatize.")],
    mechanism: Annotated[
        LdpMechanism,
        typer.Option(
            "--mechanism",
            help="laplace or gaussian (numbers, need --bounds); exponential, krr (k-ary "
            "randomized response) or binary-rr (categories, need --domain).",
        ),
    ],
    epsilon: Annotated[float, typer.Option("--epsilon", help="Privacy budget per record, > 0.")],
    out: OutFile,
    bounds: Annotated[
        str | None,
        typer.Option("--bounds", help="LOW,HIGH: public bounds of a numerical column."),
    ] = None,
    domain: Annotated[
        str | None,
        typer.Option("--domain", help="A,B,C: the public categories of a categorical column."),
    ] = None,
    domain_from_data: Annotated[
        bool,
        typer.Option(
            "--domain-from-data",
            help="Read the categories from the data instead of --domain; leaks which "
            "categories occur (a PrivacyLeakWarning says so).",
        ),
    ] = False,
    delta: Annotated[
        float | None, typer.Option("--delta", help="delta of the Gaussian mechanism, (0, 1).")
    ] = None,
    calibration: Annotated[
        str | None,
        typer.Option(
            "--calibration",
            help="gaussian: classic (default, epsilon <= 1) or analytic; exponential: "
            "standard (trasgoDP's, spends epsilon/2; default) or full.",
        ),
    ] = None,
    ordinal: Annotated[
        bool,
        typer.Option(
            "--ordinal",
            help="exponential: score reports by their distance in the --domain order.",
        ),
    ] = False,
    resolution: Annotated[
        float | None,
        typer.Option("--resolution", help="laplace/gaussian: the public grid of float noise."),
    ] = None,
    missing: Annotated[
        MissingPolicy,
        typer.Option("--missing", help="Missing values: error (default) or keep as missing."),
    ] = MissingPolicy.error,
    new_column: Annotated[
        bool,
        typer.Option(
            "--new-column", help="Add dp_COLUMN next to the original instead of replacing it."
        ),
    ] = False,
    keep_other: KeepOther = False,
    drop_other: DropOther = False,
    keep_order: KeepOrder = False,
    raw_csv: RawCsv = False,
    out_format: OutFormat = None,
    seed: Seed = None,
    sep: Sep = None,
    encoding: Encoding = None,
    as_json: Json = False,
) -> None:
    """Local differential privacy on one column (the veil.ldp functions).

    Prints the privacy cost per record the mechanism recorded. The other columns need
    --drop-other or --keep-other; released rows are in a random order.
    """
    from veil import ldp as toolkit
    from veil.mechanisms import PrivacyLedger, ordinal_scores

    numerical = mechanism in _NUMERICAL
    lo, hi = _check_ldp_options(
        mechanism, bounds, resolution, domain, domain_from_data, ordinal, delta, calibration
    )
    check_encoding(encoding)
    output = _Output(out, sep, out_format, raw_csv, keep_order, (data,))
    output.check()
    text = [] if numerical else [column]
    frame = read_table(data, sep=sep, text_columns=text, encoding=encoding)
    require_columns(frame, [column], "--column", data.name)
    categories = (
        None if domain is None else _domain_values(split_list(domain, "--domain"), frame[column])
    )
    treated = _Treated(numeric=(column,)) if numerical else _Treated(categorical=(column,))
    ledger = PrivacyLedger()
    extra: dict[str, Any] = {} if calibration is None else {"calibration": calibration}
    with captured_warnings() as caught:
        frame = _other_columns(frame, treated, keep_other, drop_other, data.name)
        noise, order = _streams(seed)
        common: dict[str, Any] = {"missing": missing.value, "rng": noise, "ledger": ledger}
        if new_column:
            warnings.warn(
                f"--new-column: the original column {column!r} is released beside "
                f"dp_{column}, unprotected",
                PrivacyWarning,
                stacklevel=1,
            )
        if mechanism is LdpMechanism.laplace:
            released = toolkit.dp_clip_laplace(
                frame, column, epsilon, lo, hi, new_column, resolution=resolution, **common
            )
        elif mechanism is LdpMechanism.gaussian:
            assert delta is not None
            released = toolkit.dp_clip_gaussian(
                frame,
                column,
                epsilon,
                lo,
                hi,
                delta,
                new_column,
                resolution=resolution,
                **extra,
                **common,
            )
        elif mechanism is LdpMechanism.exponential:
            scores = ordinal_scores(len(categories)) if ordinal and categories else None
            released = toolkit.dp_exponential(
                frame,
                column,
                epsilon,
                new_column,
                domain=categories,
                scores=scores,
                **extra,
                **common,
            )
        elif mechanism is LdpMechanism.krr:
            released = toolkit.dp_randomized_response_kary(
                frame, column, epsilon, new_column, domain=categories, **common
            )
        else:
            released = toolkit.dp_randomized_response_binary(
                frame, column, epsilon, new_column, domain=categories, **common
            )
        released, written = output.publish(released, order)
    print_warnings(caught)
    costs = _costs(ledger)
    if as_json:
        emit_json(
            {
                "out": out,
                "column": column,
                "mechanism": mechanism.value,
                "rows": len(released),
                "costs": costs,
                "total": dataclasses.asdict(ledger.total()),
                **written,
                "warnings": caught,
            }
        )
        return
    _print_costs(costs)
    total = ledger.total()
    print_text(
        f"privacy per record: epsilon={total.epsilon:.6g}, delta={total.delta:.3g}; "
        f"wrote {len(released)} rows to {out} ({_order_text(keep_order)}){_escaped_text(written)}"
    )


# ------------------------------------------------------------------------------ mask


class MaskMethod(str, enum.Enum):
    """Masking treatments of :mod:`veil.masking`."""

    redact = "redact"
    hmac = "hmac"
    ff1 = "ff1"
    mask_email = "mask-email"
    mask_partial = "mask-partial"
    mask_phone = "mask-phone"
    mask_card = "mask-card"


_KEYED = (MaskMethod.hmac, MaskMethod.ff1)


def _scrub(text: str, secret: str | None, name: str) -> str:
    """``text`` without ``secret`` (an option value that may be a key passed by mistake)."""
    if not secret:
        return text
    for form in {secret, repr(secret), secret.strip()}:
        if form:
            text = text.replace(form, name)
    return text


def _load_key(key_file: Path | None, key_env: str | None, key_id: str | None) -> SecretKey:
    """The key of --key-file or --key-env; no message repeats either option's value.

    A key passed by mistake as the value (``--key-env "$VK"``) must not be printed: the
    variable name is replaced by a placeholder in every message, and a key file's name
    is shown only when it looks like a file name (holds a dot).
    """
    from veil.errors import VeilError
    from veil.masking import SecretKey

    hidden = str(key_env) if key_file is None else os.fspath(key_file)
    placeholder = (
        "the variable named by --key-env" if key_file is None else "the file named by --key-file"
    )
    if key_file is not None and "." in key_file.name:
        hidden = ""
    try:
        key = (
            SecretKey.from_file(key_file)
            if key_file is not None
            else SecretKey.from_env(str(key_env))
        )
        if key_id is not None:
            key.require_id(key_id)
    except (VeilError, OSError) as error:
        option = "--key-file" if key_file is not None else "--key-env"
        if isinstance(error, OSError) and not isinstance(error, VeilError):
            reason = error.strerror or type(error).__name__
            text = f"{os.fspath(key_file or '')!r}: {reason}"
        else:
            text = str(error)
        raise CliUsageError(f"{option}: {_scrub(text, hidden, placeholder)}") from None
    return key


@reporting_errors
def mask(
    data: Data,
    column: Annotated[
        list[str],
        typer.Option("--column", metavar="COLUMN", help="A column to mask; repeatable."),
    ],
    method: Annotated[
        MaskMethod,
        typer.Option(
            "--method",
            help="redact, hmac (keyed pseudonyms), ff1 (format-preserving encryption), "
            "mask-email, mask-partial, mask-phone or mask-card.",
        ),
    ],
    out: OutFile,
    key_file: Annotated[
        Path | None,
        typer.Option(
            "--key-file", help="hmac/ff1: a file holding the key (hex, base64:..., or raw)."
        ),
    ] = None,
    key_env: Annotated[
        str | None,
        typer.Option("--key-env", help="hmac/ff1: an environment variable holding the key."),
    ] = None,
    key_id: Annotated[
        str | None,
        typer.Option(
            "--key-id",
            help="Refuse to run unless the key has this id (guards against the wrong key).",
        ),
    ] = None,
    namespace: Annotated[
        str | None,
        typer.Option("--namespace", help="hmac: namespace of the pseudonyms (default: column)."),
    ] = None,
    length: Annotated[
        int | None, typer.Option("--length", help="hmac: hex characters kept, 1 to 64.")
    ] = None,
    normalize: Annotated[
        str | None,
        typer.Option("--normalize", help="hmac: case, whitespace or both before hashing."),
    ] = None,
    alphabet: Annotated[
        str,
        typer.Option("--alphabet", help="ff1: the symbols of the values (a string)."),
    ] = "0123456789",
    missing: Annotated[
        MissingPolicy,
        typer.Option("--missing", help="ff1: missing values raise (error) or stay (keep)."),
    ] = MissingPolicy.error,
    replacement: Annotated[
        str, typer.Option("--replacement", help="redact: the replacement text.")
    ] = "[REDACTED]",
    keep_last: Annotated[
        int,
        typer.Option("--keep-last", help="mask-partial/mask-phone: characters left visible."),
    ] = 4,
    keep_other: KeepOther = False,
    drop_other: DropOther = False,
    keep_order: KeepOrder = False,
    raw_csv: RawCsv = False,
    out_format: OutFormat = None,
    sep: Sep = None,
    encoding: Encoding = None,
    as_json: Json = False,
) -> None:
    """Mask direct identifiers (veil.masking); keys come from a file or a variable.

    Keyed methods (hmac, ff1) need exactly one of --key-file or --key-env; the key is
    never printed or written, only its id. The other columns need --drop-other or
    --keep-other; released rows are in a random order.
    """
    from veil import masking
    from veil.rng import resolve_rng

    if method in _KEYED:
        if (key_file is None) == (key_env is None):
            raise CliUsageError(
                f"--key-file, --key-env: --method {method.value} needs exactly one of them"
            )
    elif key_file is not None or key_env is not None or key_id is not None:
        raise CliUsageError(f"--key-file, --key-env, --key-id: not for --method {method.value}")
    _distinct(column, "--column")
    check_encoding(encoding)
    inputs = (data,) if key_file is None else (data, key_file)
    output = _Output(out, sep, out_format, raw_csv, keep_order, inputs)
    output.check()
    key = _load_key(key_file, key_env, key_id) if method in _KEYED else None
    # Text throughout: the columns passed through are written back as they were read.
    frame = read_table(data, sep=sep, all_text=True, encoding=encoding)
    require_columns(frame, column, "--column", data.name)
    with captured_warnings() as caught:
        frame = _other_columns(
            frame, _Treated(identifiers=tuple(column)), keep_other, drop_other, data.name
        )
        if key is not None and method is MaskMethod.hmac:
            released = masking.pseudonymize_columns(
                frame,
                column,
                key,
                normalize=normalize,  # type: ignore[arg-type]  # checked by veil.masking
                length=length,
                namespace=namespace,
            )
        else:
            released = frame.copy()
            cipher = masking.FF1(key, alphabet) if key is not None else None
            for name in column:
                values = frame[name]
                if cipher is not None:
                    released[name] = cipher.encrypt_many(
                        values, tweak=name.encode("utf-8"), missing=missing.value
                    )
                elif method is MaskMethod.redact:
                    released[name] = masking.redact(values, replacement)
                elif method is MaskMethod.mask_email:
                    released[name] = masking.mask_email(values)
                elif method is MaskMethod.mask_partial:
                    released[name] = masking.mask_partial(values, keep_last)
                elif method is MaskMethod.mask_phone:
                    released[name] = masking.mask_phone(values, keep_last)
                else:
                    released[name] = masking.mask_card(values)
        released, written = output.publish(released, resolve_rng(None))
    print_warnings(caught)
    payload = {
        "out": out,
        "columns": column,
        "method": method.value,
        "key_id": None if key is None else key.key_id,
        "rows": len(released),
        **written,
        "warnings": caught,
    }
    if as_json:
        emit_json(payload)
        return
    keyed = f" with key {key.key_id}" if key is not None else ""
    print_text(
        f"masked {', '.join(column)} ({method.value}{keyed}) in {len(released)} rows "
        f"({_order_text(keep_order)}); wrote {out}{_escaped_text(written)}"
    )


# ------------------------------------------------------------------------------- geo


class GeoMask(str, enum.Enum):
    """Location masks of :mod:`veil.geo`."""

    planar_laplace = "planar-laplace"
    grid = "grid"
    donut = "donut"
    jitter = "jitter"
    cloak = "cloak"


_GEO_PARAMETERS: dict[GeoMask, tuple[str, ...]] = {
    GeoMask.planar_laplace: ("--epsilon",),
    GeoMask.grid: ("--cell-m",),
    GeoMask.donut: ("--r-min-m", "--r-max-m"),
    GeoMask.jitter: ("--radius-m",),
    GeoMask.cloak: ("--k",),
}

_GUARANTEE: dict[GeoMask, str] = {
    GeoMask.planar_laplace: "geo-indistinguishability: epsilon per metre",
    GeoMask.grid: "aggregated to grid cells; no formal guarantee",
    GeoMask.donut: "random displacement outside a minimum radius; no formal guarantee",
    GeoMask.jitter: "random displacement; no formal guarantee",
    GeoMask.cloak: "every reported cell holds at least k of the table's locations",
}


class GeoProjection(str, enum.Enum):
    """How --centre projects, or the explicit opt-in to a projection from the data."""

    aeqd = "aeqd"
    utm = "utm"
    stereographic = "stereographic"
    data = "data"


class OutsidePolicy(str, enum.Enum):
    """Points outside the projection's supported extent."""

    error = "error"
    drop = "drop"


# The median distance between a point and its masked version, in metres, of each mask
# with a random displacement (from its parameters alone):
# planar Laplace: radius ~ Gamma(2, 1/epsilon), median 1.678347 / epsilon (the root of
# 1 - (1 + r) e^-r = 1/2); disc of radius R: R / sqrt(2); Gaussian offsets of sigma:
# Rayleigh, sigma sqrt(2 ln 2); annulus r_min..r_max uniform in area:
# sqrt((r_min^2 + r_max^2) / 2).
_GAMMA2_MEDIAN = 1.6783469900166608
_TOO_SMALL_M = 1.0
_TOO_LARGE_M = 10_000.0


def expected_scale(
    method: str,
    *,
    epsilon: float | None = None,
    radius_m: float | None = None,
    kind: str = "disc",
    r_min_m: float | None = None,
    r_max_m: float | None = None,
    cell_m: float | None = None,
    root_size_m: float | None = None,
) -> tuple[str, float | None]:
    """What a location mask's parameters say of the displacement: a phrase and metres.

    From the parameters alone (no data): the median displacement of planar Laplace
    (``epsilon`` per metre), jitter and donut masking, the cell side of a grid, the root
    cell of quadtree cloaking (or None when the data set it).
    """
    if method == "planar_laplace" and epsilon is not None:
        return "expected median displacement", _GAMMA2_MEDIAN / float(epsilon)
    if method == "jitter" and radius_m is not None:
        factor = math.sqrt(2.0 * math.log(2.0)) if kind == "gaussian" else 1.0 / math.sqrt(2.0)
        return "expected median displacement", float(radius_m) * factor
    if method == "donut" and r_min_m is not None and r_max_m is not None:
        inner, outer = float(r_min_m), float(r_max_m)
        return "expected median displacement", math.sqrt((inner**2 + outer**2) / 2.0)
    if method == "grid" and cell_m is not None:
        return "cell side", float(cell_m)
    if method == "cloak" and root_size_m is not None:
        return "root cell side (cells halve until each holds k locations)", float(root_size_m)
    if method == "cloak":
        return "cell size set by the data (each cell holds at least k locations)", None
    return "displacement not known before the run", None


def _expected_scale(
    mask_name: GeoMask, values: dict[str, Any], kind: str, root_m: str | None
) -> tuple[str, float | None]:
    """What the mask's options say of the displacement: a phrase and metres (or None)."""
    root = None if root_m is None else split_numbers(root_m, "--root-m", count=3)[2]
    return expected_scale(
        mask_name.value.replace("-", "_"),
        epsilon=values["--epsilon"],
        radius_m=values["--radius-m"],
        kind=kind,
        r_min_m=values["--r-min-m"],
        r_max_m=values["--r-max-m"],
        cell_m=values["--cell-m"],
        root_size_m=root,
    )


def scale_warnings(phrase: str, metres: float | None) -> Warnings:
    """A warning when the displacement is under 1 m (no protection) or over 10 km."""
    if metres is None or not math.isfinite(metres) or metres <= 0.0:
        return []
    if metres < _TOO_SMALL_M:
        return [
            {
                "category": PrivacyWarning.__name__,
                "message": f"the {phrase} is {metres:.3g} m, under {_TOO_SMALL_M:g} m: the "
                "mask barely moves the points and protects practically nothing",
            }
        ]
    if metres > _TOO_LARGE_M:
        return [
            {
                "category": UserWarning.__name__,
                "message": f"the {phrase} is {metres / 1000:.3g} km, over "
                f"{_TOO_LARGE_M / 1000:g} km: little of the locations' use is left (the "
                "parameters are in metres; epsilon is per metre)",
            }
        ]
    return []


def metres_text(value: float | None) -> str:
    """`` 168 m`` or `` 1.2 km`` (empty for None)."""
    if value is None:
        return ""
    return f" {value / 1000:.3g} km" if value >= 1000 else f" {value:.3g} m"


def _projection(
    toolkit: Any, centre: str | None, crs: str | None, method: GeoProjection | None
) -> Any:
    """The public projection of --centre or --crs, or "data" (--projection data)."""
    given = [name for name, v in (("--centre", centre), ("--crs", crs)) if v is not None]
    if method is GeoProjection.data:
        if given:
            raise CliUsageError(
                f"--projection data, {', '.join(given)}: a projection from the data or a "
                "public one, not both"
            )
        return "data"
    if len(given) != 1:
        raise CliUsageError(
            "--centre, --crs: give exactly one public projection: --centre LAT,LON (a public "
            "point such as the city centre) or --crs EPSG:CODE (a projected CRS in metres); "
            "--projection data chooses one from the data instead (a PrivacyLeakWarning "
            "says so)"
            if not given
            else "--centre, --crs: give one of them, not both"
        )
    if crs is not None:
        if method is not None:
            raise CliUsageError("--projection: not with --crs (the CRS is the projection)")
        if not re.fullmatch(r"(?i)epsg:\d{4,6}", crs.strip()):
            raise CliUsageError(f"--crs: expected EPSG:CODE (e.g. EPSG:32616), got {crs!r}")
        return toolkit.projection_for_crs(crs.strip().upper())
    assert centre is not None
    centre_lat, centre_lon = split_numbers(centre, "--centre", count=2)
    return toolkit.projection_at(
        centre_lat, centre_lon, method="stereographic" if method is None else method.value
    )


def _check_geo_parameters(
    mask_name: GeoMask, values: dict[str, float | None], min_count: Any, root_m: Any
) -> None:
    """Refuse a geo mask's missing, stray or non-finite parameters, naming each."""
    needed = _GEO_PARAMETERS[mask_name]
    absent = [name for name in needed if values[name] is None]
    if absent:
        raise CliUsageError(f"{', '.join(absent)}: required by --mask {mask_name.value}")
    stray = [name for name, v in values.items() if v is not None and name not in needed]
    if min_count is not None and mask_name is not GeoMask.grid:
        stray.append("--min-count")
    if root_m is not None and mask_name is not GeoMask.cloak:
        stray.append("--root-m")
    if stray:
        raise CliUsageError(f"{', '.join(stray)}: not for --mask {mask_name.value}")
    for name in needed:
        if not math.isfinite(float(values[name] or 0.0)):
            raise CliUsageError(f"{name}: must be a finite number, got {values[name]!r}")


def _geo_mask(
    toolkit: Any,
    mask_name: GeoMask,
    frame: pd.DataFrame,
    where: tuple[str, str],
    values: dict[str, float | None],
    options: dict[str, Any],
) -> pd.DataFrame:
    """``frame`` with the chosen mask applied, its parameters checked beforehand.

    ``options`` holds the projection, missing and outside policies every mask takes,
    and the noise stream, ledger, jitter kind, grid minimum count and cloak root that
    only some do.
    """
    lat, lon = where
    common = {key: options[key] for key in ("projection", "missing", "outside")}
    noise = options["rng"]
    if mask_name is GeoMask.planar_laplace:
        epsilon = values["--epsilon"]
        assert epsilon is not None
        return toolkit.planar_laplace(  # type: ignore[no-any-return]
            frame, lat, lon, epsilon, rng=noise, ledger=options["ledger"], **common
        )
    if mask_name is GeoMask.grid:
        cell = values["--cell-m"]
        assert cell is not None
        return toolkit.grid(  # type: ignore[no-any-return]
            frame, lat, lon, cell, min_count=options["min_count"], **common
        )
    if mask_name is GeoMask.donut:
        r_min, r_max = values["--r-min-m"], values["--r-max-m"]
        assert r_min is not None and r_max is not None
        return toolkit.donut(  # type: ignore[no-any-return]
            frame, lat, lon, r_min, r_max, rng=noise, **common
        )
    if mask_name is GeoMask.jitter:
        radius = values["--radius-m"]
        assert radius is not None
        return toolkit.jitter(  # type: ignore[no-any-return]
            frame, lat, lon, radius, kind=options["kind"], rng=noise, **common
        )
    k = values["--k"]
    assert k is not None
    root_m = options["root_m"]
    root = None if root_m is None else split_numbers(root_m, "--root-m", count=3)
    return toolkit.cloak(  # type: ignore[no-any-return]
        frame,
        lat,
        lon,
        int(k),
        bounds_m=None if root is None else (root[0], root[1], root[2]),
        **common,
    )


@reporting_errors
def geo(
    data: Data,
    lat: Annotated[str, typer.Option("--lat", help="Latitude column (degrees, WGS 84).")],
    lon: Annotated[str, typer.Option("--lon", help="Longitude column (degrees, WGS 84).")],
    mask_name: Annotated[
        GeoMask,
        typer.Option(
            "--mask",
            help="planar-laplace (--epsilon), grid (--cell-m [--min-count]), donut "
            "(--r-min-m --r-max-m), jitter (--radius-m [--kind]) or cloak (--k).",
        ),
    ],
    out: OutFile,
    epsilon: Annotated[
        float | None, typer.Option("--epsilon", help="planar-laplace: epsilon per metre.")
    ] = None,
    cell_m: Annotated[
        float | None, typer.Option("--cell-m", help="grid: cell side in metres.")
    ] = None,
    min_count: Annotated[
        int | None,
        typer.Option("--min-count", help="grid: suppress cells holding fewer points."),
    ] = None,
    r_min_m: Annotated[
        float | None, typer.Option("--r-min-m", help="donut: smallest displacement, metres.")
    ] = None,
    r_max_m: Annotated[
        float | None, typer.Option("--r-max-m", help="donut: largest displacement, metres.")
    ] = None,
    radius_m: Annotated[
        float | None, typer.Option("--radius-m", help="jitter: radius (or sigma), metres.")
    ] = None,
    kind: Annotated[
        str, typer.Option("--kind", help="jitter: disc (default) or gaussian.")
    ] = "disc",
    k: Annotated[
        int | None, typer.Option("--k", help="cloak: locations per reported cell.")
    ] = None,
    root_m: Annotated[
        str | None,
        typer.Option(
            "--root-m",
            help="cloak: X0,Y0,SIZE, the quadtree's root square in projected metres, chosen "
            "from public knowledge (default: from the data, with a PrivacyLeakWarning).",
        ),
    ] = None,
    centre: Annotated[
        str | None,
        typer.Option(
            "--centre",
            help="LAT,LON: a public point (a city centre) to project around, oblique "
            "stereographic by default (--projection aeqd or utm). One of --centre, "
            "--crs or --projection data is required.",
        ),
    ] = None,
    crs: Annotated[
        str | None,
        typer.Option(
            "--crs",
            help="EPSG:CODE: a public projected CRS in metres (a UTM zone, a State Plane "
            "zone) to mask in.",
        ),
    ] = None,
    projection_method: Annotated[
        GeoProjection | None,
        typer.Option(
            "--projection",
            help="stereographic (the default), aeqd or utm: how --centre projects; data: "
            "choose the "
            "projection from the data (each record's mask then depends on the others; a "
            "PrivacyLeakWarning says so).",
        ),
    ] = None,
    outside: Annotated[
        OutsidePolicy,
        typer.Option(
            "--outside",
            help="Points outside the projection's supported extent: error (default) or "
            "drop (their rows are left out of the release).",
        ),
    ] = OutsidePolicy.error,
    missing: Annotated[
        MissingPolicy,
        typer.Option("--missing", help="Missing coordinates: error (default) or keep."),
    ] = MissingPolicy.error,
    map_file: Annotated[
        Path | None,
        typer.Option(
            "--map",
            help="Also write an interactive map (.html) of the masked points (originals "
            "are not drawn).",
        ),
    ] = None,
    keep_other: KeepOther = False,
    drop_other: DropOther = False,
    keep_order: KeepOrder = False,
    raw_csv: RawCsv = False,
    out_format: OutFormat = None,
    seed: Seed = None,
    sep: Sep = None,
    encoding: Encoding = None,
    as_json: Json = False,
) -> None:
    """Mask a latitude/longitude pair in metres (veil.geo); needs the geo extra.

    Projects with a public centre (--centre) or CRS (--crs), and prints the displacement
    the parameters give before running. The other columns need --drop-other or
    --keep-other (a text copy of the coordinates, a second coordinate pair, a block or
    an identifier would undo the mask); released rows are in a random order.
    """
    from veil import geo as toolkit
    from veil.mechanisms import PrivacyLedger

    values = {
        "--epsilon": epsilon,
        "--cell-m": cell_m,
        "--r-min-m": r_min_m,
        "--r-max-m": r_max_m,
        "--radius-m": radius_m,
        "--k": k,
    }
    _check_geo_parameters(mask_name, values, min_count, root_m)
    _distinct([lat, lon], "--lat, --lon")
    if map_file is not None and map_file.suffix.lower() != ".html":
        raise CliUsageError(f"--map: must end in .html, got {os.fspath(map_file)!r}")
    check_encoding(encoding)
    output = _Output(out, sep, out_format, raw_csv, keep_order, (data,))
    output.check({"--map": map_file})
    projection = _projection(toolkit, centre, crs, projection_method)

    phrase, metres = _expected_scale(mask_name, values, kind, root_m)
    scale = scale_warnings(phrase, metres)
    print_note(f"veil: geo: {mask_name.value}: {phrase}{metres_text(metres)}")
    print_warnings(scale)

    frame = read_table(data, sep=sep, encoding=encoding)
    require_columns(frame, [lat, lon], "--lat, --lon", data.name)
    ledger = PrivacyLedger()
    with captured_warnings() as caught:
        frame = _other_columns(
            frame, _Treated(location=(lat, lon)), keep_other, drop_other, data.name
        )
        noise, order = _streams(seed)
        options = {
            "projection": projection,
            "missing": missing.value,
            "outside": outside.value,
            "rng": noise,
            "ledger": ledger,
            "kind": kind,
            "min_count": min_count,
            "root_m": root_m,
        }
        masked = _geo_mask(toolkit, mask_name, frame, (lat, lon), values, options)
        extras: list[tuple[str, Path, Callable[[str], object]]] = []
        if map_file is not None:
            # Drawn from the rows in mask order (the map pairs them with the originals);
            # only the masked points are drawn.
            drawn, source = masked, frame.loc[masked.index]

            def build_map(tmp: str) -> None:
                toolkit.location_map(source, drawn, lat, lon, tmp)

            extras.append(("--map", map_file, build_map))
        released, written = output.publish(masked, order, extras)
    print_warnings(caught)
    caught = [*scale, *caught]
    costs = _costs(ledger)
    payload = {
        "out": out,
        "map": map_file,
        "mask": mask_name.value,
        "parameters": {
            name.removeprefix("--").replace("-", "_"): v
            for name, v in [
                *values.items(),
                ("--min-count", min_count),
                ("--root-m", root_m),
                ("--kind", kind if mask_name is GeoMask.jitter else None),
            ]
            if v is not None
        },
        "projection": "data" if isinstance(projection, str) else str(projection),
        "outside": outside.value,
        "guarantee": _GUARANTEE[mask_name],
        "scale": {"what": phrase, "metres": metres},
        "costs": costs,
        "rows_in": len(frame),
        "rows": len(released),
        **written,
        "warnings": caught,
    }
    if as_json:
        emit_json(payload)
        return
    if costs:
        _print_costs(costs)
    written_to = f"{out}" + (f" and {map_file}" if map_file is not None else "")
    print_text(
        f"{mask_name.value}: {_GUARANTEE[mask_name]}; {phrase}{metres_text(metres)}; "
        f"{len(released)} of {len(frame)} rows ({_order_text(keep_order)}); wrote "
        f"{written_to}{_escaped_text(written)}"
    )
