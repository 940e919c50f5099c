"""What the command line prints: rich tables, JSON, warnings, errors and progress.

Results go to standard output (a rich table, or JSON with ``--json``); warnings, errors
and progress go to standard error, so that ``veil ... --json | jq`` sees JSON only.
Progress bars are drawn only when standard error is a terminal. Everything printed is
plain text: column names, file names and values are never read as rich markup
(``[/x]``) or emoji codes (``:x:``).
"""

from __future__ import annotations

import contextlib
import json
import math
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table
from rich.text import Text

__all__ = [
    "Warnings",
    "captured_warnings",
    "emit_json",
    "jsonable",
    "print_error",
    "print_note",
    "print_table",
    "print_text",
    "print_warnings",
    "progress",
    "release_progress",
    "status",
]

Warnings = list[dict[str, str]]


# Tables written to a pipe or a file are this wide (a terminal gives its own width).
_PIPE_WIDTH = 120


def _console(stream: Any) -> Console:
    # Built per call: tests (and callers) replace sys.stdout between commands.
    width = None if stream.isatty() else _PIPE_WIDTH
    return Console(
        file=stream, highlight=False, soft_wrap=True, width=width, markup=False, emoji=False
    )


def _stdout() -> Console:
    return _console(sys.stdout)


def _stderr() -> Console:
    return _console(sys.stderr)


def print_text(text: str) -> None:
    """Print plain text (no rich markup) on standard output."""
    _stdout().print(text, markup=False)


def print_note(text: str) -> None:
    """Print one line of information on standard error (stdout stays for results)."""
    _stderr().print(text)


def print_error(text: str) -> None:
    """Print one line on standard error, without markup."""
    _stderr().print(text, markup=False, style="bold red" if sys.stderr.isatty() else None)


def print_table(
    title: str | None,
    header: Sequence[str],
    rows: Sequence[Sequence[Any]],
) -> None:
    """Print a table on standard output.

    Parameters
    ----------
    title : str or None
        A caption above the table.
    header : sequence of str
        Column names.
    rows : sequence of sequences
        The cells; numbers are shown with up to 6 significant digits, None as ``-``.
    """
    table = Table(
        title=None if title is None else Text(title),
        title_justify="left",
        header_style="bold",
    )
    for name in header:
        table.add_column(Text(name), overflow="fold")
    for row in rows:
        table.add_row(*(Text(_cell(value)) for value in row))
    _stdout().print(table)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float | np.floating):
        return f"{float(value):.6g}"
    return str(value)


def jsonable(value: Any) -> Any:
    """``value`` with paths as text, NumPy scalars as Python numbers, NaN/inf as None."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def emit_json(payload: Mapping[str, Any]) -> None:
    """Write ``payload`` as indented JSON (strict: no NaN) on standard output."""
    sys.stdout.write(json.dumps(jsonable(payload), indent=2, allow_nan=False) + "\n")
    sys.stdout.flush()


def print_warnings(records: Sequence[Mapping[str, str]]) -> None:
    """Print each warning as ``veil: warning: Category: message`` on standard error."""
    console = _stderr()
    for record in records:
        line = " ".join(str(record.get("message", "")).split())
        console.print(
            f"veil: warning: {record.get('category', 'Warning')}: {line}",
            markup=False,
            style="yellow" if sys.stderr.isatty() else None,
        )


@contextlib.contextmanager
def captured_warnings() -> Iterator[Warnings]:
    """Collect the warnings raised in the block as ``{"category", "message"}`` records.

    Every user-facing warning is kept (each occurrence once per distinct message); the
    filters that turn warnings into errors (for example under a test runner) still apply.
    """
    records: Warnings = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        yield records
    from veil.gate import redact

    seen: set[tuple[str, str]] = set()
    for item in caught:
        # A warning may quote a database URL or key material (a driver's message).
        key = (item.category.__name__, redact(str(item.message)))
        if key not in seen:
            seen.add(key)
            records.append({"category": key[0], "message": key[1]})


@contextlib.contextmanager
def status(message: str) -> Iterator[None]:
    """A spinner with ``message`` on standard error while the block runs (terminal only)."""
    if not sys.stderr.isatty():
        yield
        return
    with _stderr().status(Text(message)):
        yield


@contextlib.contextmanager
def progress(description: str, total: int) -> Iterator[Callable[[str], None]]:
    """A progress bar of ``total`` steps on standard error (terminal only).

    Yields
    ------
    callable
        ``advance(label)``: one step done; ``label`` names the next one.
    """
    if not sys.stderr.isatty():
        yield lambda _label: None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=_stderr(),
        transient=True,
    ) as bar:
        task = bar.add_task(description, total=total)

        def advance(label: str) -> None:
            bar.update(task, advance=1, description=f"{description}: {label}")

        yield advance


@contextlib.contextmanager
def release_progress(description: str) -> Iterator[Callable[[Any], None] | None]:
    """A live display of a release's progress events on standard error (terminal only).

    Each :class:`veil.release.progress.Progress` event shows its phase and step; while
    partitions are streamed, a bar of the partitions done and the records so far.

    Yields
    ------
    callable or None
        ``on_event(event)``; None when standard error is not a terminal, so callers
        skip the reports.
    """
    if not sys.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        TextColumn("{task.fields[detail]}", markup=False),
        TimeElapsedColumn(),
        console=_stderr(),
        transient=True,
    ) as bar:
        task = bar.add_task(description, total=None, detail="")

        def on_event(event: Any) -> None:
            where = event.phase if event.step is None else f"{event.phase}: {event.step}"
            if event.total is None:
                bar.update(task, description=f"{description}: {where}", total=None, detail="")
                return
            detail = f"{event.done}/{event.total} partitions, {event.rows or 0:,} records"
            bar.update(
                task,
                description=f"{description}: {where}",
                total=event.total,
                completed=event.done,
                detail=detail,
            )

        yield on_event
