"""Exit codes of the ``veil`` command line and the errors that choose them.

Every command ends with one of three codes, documented in ``veil --help``:

* ``0``: done;
* ``1``: a veil check failed: a plan over its privacy budget, no anonymization meeting
  the models, costs recorded differently from the plan, a risk above ``--fail-above``;
* ``2``: bad usage, a bad input file or a bad plan (the message names the option, file or
  plan field, the value and what is allowed).

A failure is reported on standard error as one line, ``veil: error: ...``, without a
traceback, and without a credential: the release gate's :func:`veil.gate.redact` removes
database passwords and key material from every message.
"""

from __future__ import annotations

import contextlib
import enum
import functools
from collections.abc import Callable, Iterator
from typing import ParamSpec, TypeVar

import typer

from veil.errors import VeilError

__all__ = [
    "CheckFailedError",
    "CliUsageError",
    "ExitCode",
    "errors_about",
    "exit_code",
    "fail",
    "one_line",
    "reporting_errors",
]

_P = ParamSpec("_P")
_R = TypeVar("_R")


class ExitCode(enum.IntEnum):
    """The exit status of a ``veil`` command."""

    OK = 0
    CHECK_FAILED = 1
    USAGE = 2


class CliUsageError(VeilError, ValueError):
    """An option, argument or input file the command cannot use (exit code 2)."""


class CheckFailedError(VeilError):
    """A check the user asked the command to make did not pass (exit code 1)."""


def _check_failures() -> tuple[type[BaseException], ...]:
    # Imported here so that ``veil --help`` does not load the release and search code.
    from veil.anonymity import NoSolutionError
    from veil.release import BudgetError, LedgerMismatchError

    return (CheckFailedError, BudgetError, LedgerMismatchError, NoSolutionError)


def exit_code(error: BaseException) -> ExitCode:
    """The exit code for an error raised by a command.

    Parameters
    ----------
    error : BaseException
        A :class:`~veil.errors.VeilError`, an :class:`OSError` or an :class:`ImportError`.

    Returns
    -------
    ExitCode
        ``CHECK_FAILED`` for a failed veil check (budget exceeded, no anonymization,
        ledger mismatch, ``--fail-above``), ``USAGE`` for everything else.
    """
    if isinstance(error, _check_failures()):
        return ExitCode.CHECK_FAILED
    return ExitCode.USAGE


def one_line(text: str) -> str:
    """``text`` on one line: its lines stripped and joined with ``"; "`` (a space after
    a line ending in a colon)."""
    joined = ""
    for part in (p.strip() for p in str(text).splitlines()):
        if part:
            glue = "" if not joined else " " if joined.endswith(":") else "; "
            joined += glue + part
    return joined


# The optional dependencies and the extra that installs each (pyproject.toml).
_EXTRAS = {
    "pyproj": "geo",
    "folium": "geo",
    "shapely": "geo",
    "matplotlib": "geo",
    "sklearn": "release",
    "pyarrow": "release",
    "dask": "dask",
    "distributed": "dask",
    "libffx": "masking",
    "cryptography": "masking",
    "sqlalchemy": "masking",
}


def _is_encoding_error(error: BaseException) -> bool:
    """A text file in another encoding, or an unknown encoding name (from a plan field)."""
    if isinstance(error, UnicodeError):
        return True
    return type(error) is LookupError and "encoding" in str(error)


def _message(error: BaseException, context: str | None) -> str:
    if isinstance(error, UnicodeDecodeError):
        text = (
            f"not valid {error.encoding} text (byte {error.start}: {error.reason}); give "
            "the file's encoding (e.g. latin-1)"
        )
        return f"veil: error: {text if context is None else f'{context}: {text}'}"
    if _is_encoding_error(error):
        text = f"{one_line(str(error))}; use an encoding Python knows (utf-8, latin-1, cp1252)"
        return f"veil: error: {text if context is None else f'{context}: {text}'}"
    if isinstance(error, ImportError):
        module = (error.name or "").partition(".")[0]
        extra = _EXTRAS.get(module)
        hint = f": pip install 'veil[{extra}]'" if extra else ""
        return f"veil: error: this command needs the module {module or error.name!r}{hint}"
    if isinstance(error, OSError) and not isinstance(error, VeilError):
        parts = [] if context is None else [context]
        if error.filename is not None and str(error.filename) != context:
            parts.append(str(error.filename))
        text = ": ".join([*parts, error.strerror or str(error)])
    else:
        text = one_line(str(error))
        if context is not None and not text.startswith(context):
            text = f"{context}: {text}"
    return f"veil: error: {text}"


def fail(error: BaseException, context: str | None = None) -> typer.Exit:
    """Print ``error`` as one line on standard error; return the ``typer.Exit`` to raise.

    Parameters
    ----------
    error : BaseException
        The error to report.
    context : str, optional
        The file or option the error is about, put in front of the message unless the
        message already starts with it.
    """
    from veil.cli.console import print_error
    from veil.gate import redact

    print_error(redact(_message(error, context)))
    return typer.Exit(int(exit_code(error)))


def reporting_errors(command: Callable[_P, _R]) -> Callable[_P, _R]:
    """Decorate a command so that veil errors and file errors end it with a clear line.

    A :class:`~veil.errors.VeilError` or :class:`OSError` becomes one line on standard
    error and the exit code of :func:`exit_code`; a missing optional dependency names the
    extra that installs it, text in another encoding or an unknown encoding name says so
    (exit code 2); other exceptions (bugs) propagate.
    """

    @functools.wraps(command)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return command(*args, **kwargs)
        except (VeilError, OSError, ImportError, UnicodeError) as error:
            raise fail(error) from None
        except LookupError as error:
            if not _is_encoding_error(error):
                raise
            raise fail(error) from None

    return wrapper


@contextlib.contextmanager
def errors_about(context: str) -> Iterator[None]:
    """Report a veil, file or text-encoding error raised in the block as about ``context``.

    Parameters
    ----------
    context : str
        A file name or an option (``"plan.yaml"``, ``"--manifest"``) put in front of the
        message.

    Raises
    ------
    typer.Exit
        With the error's exit code, after printing it.
    """
    try:
        yield
    except (VeilError, OSError, UnicodeError) as error:
        raise fail(error, context) from None
    except LookupError as error:
        if not _is_encoding_error(error):
            raise
        raise fail(error, context) from None
