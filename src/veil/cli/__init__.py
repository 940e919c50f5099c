"""The ``veil`` command line (typer + rich).

Commands over one table, one module each (:mod:`veil.cli.risk`, :mod:`veil.cli.anonymize`,
:mod:`veil.cli.ldp`, :mod:`veil.cli.mask`, :mod:`veil.cli.geo`; the path around their
treatment is :mod:`veil.cli.one_table`): ``risk``, ``anonymize``, ``ldp``, ``mask``,
``geo``; commands over whole releases (:mod:`veil.cli.release`): ``release``, ``sweep``,
``report``, ``demo``. :func:`main` runs it in-process and returns the exit code (see
:mod:`veil.cli.errors`); the console script ``veil`` calls it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import typer

from veil import __version__
from veil.cli import (
    anonymize,
    attack,
    geo,
    init,
    keys,
    ldp,
    mask,
    pif,
    release,
    risk,
    server,
    share,
)
from veil.cli.errors import ExitCode

__all__ = ["app", "main"]

_EPILOG = (
    "Exit codes: 0 done; 1 a veil check failed (plan over its privacy budget, no "
    "anonymization meets the models, recorded costs differ from the plan, risk above "
    "--fail-above); 2 bad usage, bad input file or bad plan (the message names the "
    "option, file or plan field). Errors are one line on standard error; --json output "
    "goes to standard output alone."
)

app = typer.Typer(
    name="veil",
    help="Release record-level data without exposing the people in it: assess risk, "
    "protect columns (masking, anonymization, local DP, geo masks), evaluate, publish.",
    epilog=_EPILOG,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"veil {__version__}")
        raise typer.Exit(int(ExitCode.OK))


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Release record-level data without exposing the people in it."""


app.command("risk")(risk.risk)
app.command("anonymize")(anonymize.anonymize)
app.command("ldp")(ldp.ldp)
app.command("mask")(mask.mask)
app.command("geo")(geo.geo)
app.command("pif")(pif.pif)
app.command("share")(share.share)
app.command("init")(init.init)
app.command("release")(release.release)
app.command("sweep")(release.sweep)
app.command("report")(release.report)
app.command("attack")(attack.attack)
app.command("demo")(release.demo)
app.add_typer(keys.app, name="key")
app.command("serve")(server.serve)
app.command("ui")(server.ui)
app.add_typer(server.app, name="server")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit code.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after ``veil``.

    Returns
    -------
    int
        0 done, 1 a veil check failed, 2 bad usage, file or plan (see ``veil --help``).
    """
    try:
        app(args=None if argv is None else list(argv), prog_name="veil", standalone_mode=True)
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return int(ExitCode.OK)
        return code if isinstance(code, int) else int(ExitCode.USAGE)
    return int(ExitCode.OK)
