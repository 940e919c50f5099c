"""``veil init``: a first release plan for a raw table, written beside it and dry-run at once.

Reads the table, suggests a role for every column (:func:`veil.risk.suggest_roles`),
writes a commented plan (:func:`veil.release.draft.draft_plan`) and runs its dry run, so
the custodian starts from a plan that validates and reads each suggestion in place.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from veil.atomic import write_text_atomic
from veil.cli.console import captured_warnings, emit_json, print_table, print_text, print_warnings
from veil.cli.errors import CliUsageError, errors_about, reporting_errors
from veil.cli.files import input_separator, read_table, table_format
from veil.cli.options import Encoding, Json, Sep

if TYPE_CHECKING:
    import pandas as pd

    from veil.risk.roles import RoleSuggestions

__all__ = ["init"]


@reporting_errors
def init(
    data: Annotated[Path, typer.Argument(help="The raw table: .csv (.tsv, .csv.gz) or .parquet.")],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="The plan file to write (default: DATA's name with .plan.yaml, beside it).",
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing plan file.")] = False,
    target_error: Annotated[
        float | None,
        typer.Option(
            "--target-error",
            help="For each numeric sensitive column, print the epsilon per record at which "
            "Laplace noise on public bounds keeps the column's mean within this share of "
            "the bounds' width (95 %% interval), as DP Wizard does; printed, not written "
            "into the plan (it reads the number of records).",
        ),
    ] = None,
    sep: Sep = None,
    encoding: Encoding = None,
    as_json: Json = False,
) -> None:
    """Write a commented release plan for DATA, then dry-run it (nothing else is written).

    Every column gets a suggested role from its values and its name: direct identifier
    (nearly every value distinct), quasi-identifier (a category or code with few levels,
    years, dates, a known fact by name; the riskiest combinations are scanned), sensitive
    (measurements with many values, health or money by name), a location pair (latitude
    and longitude by name and range, 0-360 longitudes included), or free text with
    personal data; with treatments (identifiers dropped, quasi-identifiers generalized to
    5-anonymity with hierarchies written in the plan, locations under planar Laplace) and
    a budget. Digit codes with leading zeros (postcodes) are read as text. The figures
    measured on the records are printed, never written into the plan. Read each line,
    then `veil release PLAN --out DIR`.
    """
    import yaml

    from veil.release import load_plan, run
    from veil.release.draft import draft_plan, text_columns

    if target_error is not None and not 0.0 < target_error <= 1.0:
        raise CliUsageError(f"--target-error: must be a share in (0, 1], got {target_error!r}")
    target = out if out is not None else data.with_name(f"{data.name.split('.')[0]}.plan.yaml")
    if target.suffix.lower() not in (".yaml", ".yml"):
        raise CliUsageError(f"--out: {os.fspath(target)!r} must end in .yaml or .yml")
    if target.exists() and not force:
        raise CliUsageError(
            f"--out: {os.fspath(target)!r} exists; give --force to replace it, or another --out"
        )
    if target.resolve() == data.resolve():
        raise CliUsageError(f"--out: {os.fspath(target)!r} is DATA itself")
    frame = read_table(data, sep=sep, encoding=encoding)
    codes: list[str] = []
    separator = ","
    if table_format(data, "DATA") == "csv":
        # The plan names the separator the table was read with (found when --sep is not
        # given), so the release reads the same columns.
        separator = input_separator(data, sep, encoding)
        # Digit codes with leading zeros ("02139") are read as text, here and in the plan.
        codes = text_columns(read_table(data, sep=sep, encoding=encoding, all_text=True))
        if codes:
            frame = read_table(data, sep=sep, encoding=encoding, text_columns=codes)
    source = os.path.relpath(data.resolve(), target.resolve().parent)
    with captured_warnings() as caught:
        draft = draft_plan(frame, source, sep=separator, text=codes)
    text = draft.to_yaml()
    # The draft must load and pass its dry run before it is written.
    with errors_about(os.fspath(target)), captured_warnings() as dry:
        plan = load_plan(yaml.safe_load(text), base_dir=target.resolve().parent)
        result = run(plan, dry_run=True)
    write_text_atomic(target, text)
    print_warnings([*caught, *dry, *result.warnings])
    roles = draft.roles.to_frame()
    targets = {} if target_error is None else _epsilons(frame, draft.roles, target_error)
    if as_json:
        emit_json(
            {
                "plan_file": target,
                "plan": draft.plan,
                "roles": roles.reset_index().to_dict(orient="records"),
                "locations": [list(pair) for pair in draft.roles.locations],
                "measured": draft.notes,
                "target_error": {c: {"epsilon": eps, "rows": n} for c, (eps, n) in targets.items()},
                "ledger": result.ledger.to_dict(),
            }
        )
        return
    print_table(
        f"Suggested roles of {data.name}",
        ["column", "role", "kind", "why", "measured"],
        [
            [str(c), r["role"], r["kind"], r["reason"], r["evidence"]]
            for c, r in roles.to_dict("index").items()
        ],
    )
    for note in draft.notes:
        print_text(note)
    for column, (epsilon, rows) in targets.items():
        print_text(
            f"{column}: Laplace on public bounds [LOW, HIGH] keeps the mean of its {rows:,} "
            f"values within {target_error:.3g} of HIGH - LOW (95 %) at epsilon = "
            f"{epsilon:.3g} per record: {{method: laplace, bounds: [LOW, HIGH], "
            f"epsilon: {epsilon:.3g}}}"
        )
    print_text(
        f"wrote {target} (a draft: read every line; the figures above are measured on the "
        "records and stay out of the plan, which a release publishes)"
    )
    print_text(f"dry run: within budget; next: veil release {target} --out {data.stem}-release")


def _epsilons(
    frame: pd.DataFrame, roles: RoleSuggestions, target_error: float
) -> dict[str, tuple[float, int]]:
    """Per numeric sensitive column: the epsilon meeting the target, and its rows."""
    import pandas as pd

    from veil.release.guidance import epsilon_for_target

    out = {}
    for role in roles.columns:
        series = frame[role.column]
        numeric = pd.api.types.is_numeric_dtype(series.dtype)
        # Flags (two values) want randomized response, not noise on bounds.
        if role.role != "sensitive" or not numeric or series.nunique() <= 2:
            continue
        rows = int(series.notna().sum())
        if rows:
            out[str(role.column)] = (epsilon_for_target(target_error, rows), rows)
    return out
