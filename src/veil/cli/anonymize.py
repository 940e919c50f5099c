"""``veil anonymize``: optimal generalization with suppression (:mod:`veil.anonymity`).

Reads the hierarchy files and the privacy models (k-anonymity, distinct l-diversity,
t-closeness) from the options, runs :func:`veil.anonymity.anonymize` and writes the
released table through :class:`veil.cli.one_table.Output`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from veil.cli.console import (
    captured_warnings,
    emit_json,
    print_table,
    print_text,
    print_warnings,
    status,
)
from veil.cli.errors import CliUsageError, reporting_errors
from veil.cli.files import check_encoding, read_table, require_columns
from veil.cli.one_table import (
    Data,
    Output,
    Treated,
    distinct,
    escaped_text,
    order_text,
    other_columns,
    parse_number,
)
from veil.cli.options import (
    Acknowledge,
    DropOther,
    Encoding,
    Json,
    KeepOrder,
    KeepOther,
    OutFile,
    OutFormat,
    RawCsv,
    Sep,
)

__all__ = ["anonymize"]


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


def _models(k: int | None, l_specs: list[str], t_specs: list[str]) -> list[Any]:
    from veil.anonymity import DistinctLDiversity, KAnonymity, TCloseness

    models: list[Any] = []
    if k is not None:
        models.append(KAnonymity(k))
    for attribute, value in _named_pairs(l_specs, "--l", ":", "ATTRIBUTE:L"):
        models.append(DistinctLDiversity(attribute, parse_number(value, "--l", int)))
    for attribute, value in _named_pairs(t_specs, "--t", ":", "ATTRIBUTE:T[:DISTANCE]"):
        t, _, distance = value.partition(":")
        models.append(TCloseness(attribute, parse_number(t, "--t", float), distance or "equal"))
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
            metavar="COLUMN=FILE|RECIPE",
            help="COLUMN=FILE.csv: a quasi-identifier and its generalization hierarchy "
            "(anjana's ',' or ARX's ';' format), or COLUMN=RECIPE, a plan's inline recipe: "
            "'age={intervals: {widths: [5, 10, 20]}}', 'zip={mask: 3}', 'date={dates: "
            "true}', 'race=*' (see docs/plans.md); repeat for each quasi-identifier.",
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
    acknowledge: Acknowledge = None,
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
    distinct([column for column, _ in pairs], "--hierarchy")
    models = _models(k, l_diversity or [], t_closeness or [])
    check_encoding(encoding)
    recipes = {column: _recipe(column, text) for column, text in pairs if _is_recipe(text)}
    files = [Path(path) for column, path in pairs if column not in recipes]
    output = Output(out, sep, out_format, raw_csv, keep_order, (data, *files))
    output.check()
    hierarchies: dict[str, Hierarchy] = {}
    for column, path in pairs:
        if column not in recipes:
            hierarchies[column] = _hierarchy(column, Path(path))
    # Generalization maps the values as written in the hierarchy files: read them as text.
    # A recipe builds on the values the column holds, as a plan does.
    frame = read_table(data, sep=sep, text_columns=list(hierarchies), encoding=encoding)
    require_columns(frame, [c for c, _ in pairs], "--hierarchy", data.name)
    for column, recipe in recipes.items():
        hierarchies[column] = recipe.load(f"--hierarchy {column}", frame[column])
    hierarchies = {column: hierarchies[column] for column, _ in pairs}
    sensitive = sorted({a for m in models if (a := getattr(m, "attribute", None)) is not None})
    require_columns(frame, sensitive, "--l, --t", data.name)
    treated = Treated(categorical=tuple(hierarchies), kept=tuple(sensitive))
    with captured_warnings() as caught:
        frame = other_columns(frame, treated, keep_other, drop_other, data.name, acknowledge)
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
        f"suppressed {result.suppressed} of {len(frame)} records; {order_text(keep_order)}; "
        f"wrote {out}{escaped_text(written)}"
    )


def _is_recipe(text: str) -> bool:
    """Whether a --hierarchy value is a plan's inline recipe rather than a file name."""
    value = text.strip()
    return value == "*" or value.startswith("{")


def _recipe(column: str, text: str) -> Any:
    """A --hierarchy recipe, read as a plan reads ``anonymization.quasi_identifiers``."""
    import yaml
    from pydantic import ValidationError

    from veil.release.hierarchies import HierarchySpec

    where = f"--hierarchy {column}"
    try:
        # '*' alone is YAML's alias mark: it is the recipe "every value to *".
        value = "*" if text.strip() == "*" else yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at column {mark.column + 1}" if mark is not None else ""
        raise CliUsageError(f"{where}: {text!r} is not a recipe (YAML{at})") from None
    try:
        recipe = HierarchySpec.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        detail = f"{field}: {first['msg']}" if field else str(first["msg"])
        raise CliUsageError(f"{where}: {text!r}: {detail}") from None
    if recipe.from_file:
        raise CliUsageError(f"{where}: give a file as COLUMN=FILE.csv, not inside a recipe")
    return recipe


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
