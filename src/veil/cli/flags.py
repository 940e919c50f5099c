"""Library messages in the words of a command's flags.

The library names its keyword arguments in Python syntax (``outside='drop'``,
``calibration='analytic'``, ``missing='keep'``): right for a caller of the function,
wrong on a command line, where the same choice is a flag (``--outside drop``). A command
wraps its library calls in :func:`as_flags` with the keywords it exposes as flags.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

from veil.errors import VeilError

__all__ = ["as_flags"]


def _rewrite(text: str, names: tuple[str, ...]) -> str:
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")='([^']*)'")
    return pattern.sub(lambda m: f"--{m.group(1).replace('_', '-')} {m.group(2)}", text)


@contextlib.contextmanager
def as_flags(*names: str) -> Iterator[None]:
    """Re-raise a veil error with ``name='value'`` written as ``--name value``.

    Parameters
    ----------
    *names : str
        The library keywords the command exposes as flags of the same name.

    Raises
    ------
    veil.errors.VeilError
        The error raised in the block, its message rewritten (same class, same exit code).
    """
    try:
        yield
    except VeilError as error:
        if error.args and isinstance(error.args[0], str):
            error.args = (_rewrite(error.args[0], names), *error.args[1:])
        raise
