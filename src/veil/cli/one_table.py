"""What every one-table command shares: the path around its treatment.

``veil anonymize``, ``ldp``, ``mask`` and ``geo`` (and ``risk``, which writes nothing)
each read one table (CSV or Parquet, see :mod:`veil.cli.files`) and call the public
functions of one package. The path around the treatment is part of the guarantee, as in
a release plan, and is written once, here:

* columns the command does not name are refused unless ``--drop-other`` leaves them
  out or ``--keep-other`` copies them; the release gate refuses a copied column that
  carries the treated information or singles out records unless ``--acknowledge``
  names it (:func:`veil.gate.check_carriers`): :func:`other_columns`;
* released rows are in a random order from the secure generator
  (:func:`veil.frames.shuffle_rows`; ``--keep-order`` opts out, with a warning), the
  noise from an independent stream (:func:`streams`);
* CSV cells a spreadsheet would run as formulas are escaped (``--raw-csv`` opts out);
* every output is checked before any work (never over an input, never two outputs on
  one file) and written only when everything is built (:class:`Output`).

It also holds what the commands print alike: the privacy cost table, the row order and
the escaped cells.
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import pandas as pd
import typer

from veil.cli.console import print_table
from veil.cli.errors import CliUsageError
from veil.cli.files import (
    check_outputs,
    escape_csv_cells,
    split_list,
    table_format,
    write_release,
)
from veil.cli.options import TableFormatChoice
from veil.errors import PrivacyWarning

__all__ = [
    "Data",
    "MissingPolicy",
    "Output",
    "Treated",
    "distinct",
    "escaped_text",
    "ledger_costs",
    "order_text",
    "other_columns",
    "parse_number",
    "print_costs",
    "streams",
]


Data = Annotated[
    Path, typer.Argument(help="The input table: .csv (.tsv, .csv.gz, ...) or .parquet.")
]


class MissingPolicy(str, enum.Enum):
    """What happens to missing values."""

    error = "error"
    keep = "keep"


def ledger_costs(ledger: Any) -> list[dict[str, Any]]:
    """The entries of a :class:`veil.mechanisms.PrivacyLedger`, as dictionaries."""
    return [dataclasses.asdict(entry) for entry in ledger.entries]


def print_costs(costs: list[dict[str, Any]]) -> None:
    """Print the privacy cost table of :func:`ledger_costs`."""
    print_table(
        "Privacy cost",
        ["scope", "mechanism", "notion", "epsilon", "delta", "unit"],
        [
            [c["scope"], c["mechanism"], c["notion"], c["epsilon"], c["delta"], c["unit"]]
            for c in costs
        ],
    )


def distinct(columns: Sequence[str], parameter: str) -> None:
    """Refuse a column named twice (``--lat lat --lon lat``)."""
    twice = [c for c, n in collections.Counter(columns).items() if n > 1]
    if twice:
        raise CliUsageError(
            f"{parameter}: {', '.join(repr(c) for c in twice)} named more than once; each "
            "needs its own column"
        )


@dataclasses.dataclass(frozen=True)
class Treated:
    """The columns a command names, by what it does to them (for the carrier check)."""

    location: tuple[str, str] | None = None
    numeric: tuple[str, ...] = ()
    categorical: tuple[str, ...] = ()
    identifiers: tuple[str, ...] = ()
    # Named by the command and released as they are (anonymize's sensitive attributes).
    kept: tuple[str, ...] = ()
    # Named by the command and released exactly as quasi-identifiers (share's Q).
    exact: tuple[str, ...] = ()

    @property
    def columns(self) -> list[str]:
        return list(
            dict.fromkeys(
                [*(self.location or ()), *self.numeric, *self.categorical, *self.identifiers,
                 *self.kept, *self.exact]
            )
        )  # fmt: skip


def _listed(names: Sequence[str], limit: int = 12) -> str:
    shown = ", ".join(repr(str(n)) for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _carried(frame: pd.DataFrame, treated: Treated) -> str:
    """``"; N of them carry ...: <each>"`` for the refusal message (empty if none does)."""
    from veil.risk import find_carriers

    carriers = find_carriers(
        frame,
        location=treated.location,
        numeric=treated.numeric,
        categorical=treated.categorical,
        identifiers=treated.identifiers,
    )
    if not carriers:
        return ""
    found = "; ".join(c.describe() for c in carriers)
    return (
        f"; {len(carriers)} of them carry what the command protects or identify the record: {found}"
    )


def other_columns(
    frame: pd.DataFrame,
    treated: Treated,
    keep_other: bool,
    drop_other: bool,
    name: str,
    acknowledge: str | None = None,
) -> pd.DataFrame:
    """``frame`` with the columns the command does not name, dropped or kept.

    Kept columns, and the columns the command names but releases as they are, pass the
    release gate's carrier check (:func:`veil.gate.check_carriers`): one that carries
    the treated information or singles out records is refused unless ``--acknowledge``
    names it; an acknowledged one is released with a :class:`~veil.errors.PrivacyWarning`
    naming it as a leak.

    Raises
    ------
    CliUsageError
        There are such columns and neither --keep-other nor --drop-other is given (the
        message names the ones that carry the treated information), or both are given.
    veil.gate.CarrierError
        A kept column carries the treated information and is not acknowledged.
    """
    from veil.gate import Declared, acknowledged_unknown, check_carriers

    if keep_other and drop_other:
        raise CliUsageError("--keep-other, --drop-other: give one of them, not both")
    named = set(treated.columns)
    others = [str(c) for c in frame.columns if c not in named]
    if others and not (keep_other or drop_other):
        raise CliUsageError(
            f"--keep-other, --drop-other: {name} has {len(others)} column(s) the command does "
            f"not treat ({_listed(others)}){_carried(frame, treated)}; give --drop-other to "
            f"release only {_listed(treated.columns)}, or --keep-other to copy the others "
            "unchanged"
        )
    if drop_other:
        frame = frame[[c for c in frame.columns if c in named]]
        others = []
    declared = Declared(
        locations=() if treated.location is None else (treated.location,),
        numeric=treated.numeric,
        categorical=treated.categorical,
        identifiers=treated.identifiers,
        kept={
            **dict.fromkeys(treated.kept, "sensitive"),
            **dict.fromkeys(treated.exact, "quasi_identifier"),
            **dict.fromkeys(others, "unknown"),
        },
        acknowledged=tuple(split_list(acknowledge, "--acknowledge")) if acknowledge else (),
    )
    acknowledged_unknown(declared, [str(c) for c in frame.columns], "--acknowledge")
    carriers = check_carriers(frame, declared, field_name="--acknowledge")
    if carriers:
        warnings.warn(
            "--acknowledge: released as they are, and not protected (leaks): "
            + "; ".join(c.describe() for c in carriers),
            PrivacyWarning,
            stacklevel=2,
        )
    return frame


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


def streams(seed: int | None) -> tuple[np.random.Generator, np.random.Generator]:
    """Independent generators for the noise and the row order, from ``--seed`` or the CSPRNG."""
    from veil.rng import resolve_rng, spawn

    noise, order = spawn(resolve_rng(seed, stacklevel=4), 2)
    return noise, order


@dataclasses.dataclass(frozen=True)
class Output:
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


def escaped_text(written: dict[str, Any]) -> str:
    """What :meth:`Output.publish` escaped, for the command's last line (empty if none)."""
    counts: dict[str, int] = written["csv_cells_escaped"]
    if not counts:
        return ""
    return (
        f"; escaped {sum(counts.values())} cell(s) a spreadsheet would run as formulas "
        f"({', '.join(f'{c}: {n}' for c, n in counts.items())}; --raw-csv writes them as read)"
    )


def order_text(keep_order: bool) -> str:
    """The row order of the release, for the command's last line."""
    return "rows in input order" if keep_order else "rows shuffled"


def parse_number(text: str, parameter: str, kind: type[int] | type[float]) -> Any:
    """``text`` as an int or float, or an error naming ``parameter``."""
    try:
        return kind(text)
    except ValueError:
        raise CliUsageError(
            f"{parameter}: {text!r} is not {'an integer' if kind is int else 'a number'}"
        ) from None
