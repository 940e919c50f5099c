"""What a running release tells its caller, and how the caller stops it.

:class:`Progress` events go to the ``progress=`` callback of :func:`veil.release.run`:
one as each phase starts, one as each step starts, and one per batch of partitions
when the records are streamed. The command line renders them with rich; the web
platform streams them to the page.

A :class:`CancelToken` passed as ``cancel=`` is checked between phases, steps and
batches of partitions. Once it is set, the run raises :class:`Cancelled` at the next
check: the staged outputs are removed, the previous release in the output folder stays
as it was, and no temporary file is left behind.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

from veil.errors import VeilError

__all__ = [
    "PHASES",
    "CancelToken",
    "Cancelled",
    "Phase",
    "Progress",
    "ProgressCallback",
    "Reporter",
    "current_reporter",
    "reporting",
]

Phase = Literal[
    "validate",
    "allocate",
    "ledger",
    "read",
    "protect",
    "write",
    "check",
    "attack",
    "evaluate",
    "manifest",
]
PHASES: tuple[Phase, ...] = (
    "validate",
    "allocate",
    "ledger",
    "read",
    "protect",
    "write",
    "check",
    "attack",
    "evaluate",
    "manifest",
)
"""The phases of a run, in order (a dry run stops after ``ledger``).

``write`` fills the staged release file (on Dask the row steps run in this pass);
nothing is visible before the ``manifest`` phase commits the staged files, so the
``check`` of the recorded costs still comes before anything is released; ``attack`` runs
the plan's attacks on a shadow release (only when the plan or the policy asks for them).
"""


@dataclass(frozen=True)
class Progress:
    """One event of a running release.

    Attributes
    ----------
    phase : str
        One of :data:`PHASES`.
    step : str or None
        The step being run (``"age: laplace"``), or None for the phase itself.
    done, total : int or None
        Partitions done and in all, while records are streamed (None otherwise).
    rows : int or None
        Records processed so far, when known.
    """

    phase: Phase
    step: str | None = None
    done: int | None = None
    total: int | None = None
    rows: int | None = None

    @property
    def label(self) -> str:
        """A short text for a terminal: the step, else the phase, with partitions."""
        text = self.step if self.step is not None else self.phase
        if self.total is not None:
            text = f"{text} ({self.done or 0} of {self.total} partitions)"
        return text


ProgressCallback = Callable[[Progress], None]
"""Receives each :class:`Progress` event of a run."""


class Cancelled(VeilError, RuntimeError):
    """The run was cancelled through its :class:`CancelToken`; nothing was committed."""


class CancelToken:
    """Set from any thread to stop a run at its next check.

    Examples
    --------
    >>> token = CancelToken()
    >>> token.cancelled
    False
    >>> token.cancel()
    >>> token.cancelled
    True
    """

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        """Ask the run to stop."""
        self._event.set()

    @property
    def cancelled(self) -> bool:
        """Whether :meth:`cancel` was called."""
        return self._event.is_set()

    def check(self, where: str = "") -> None:
        """Raise :class:`Cancelled` if the run was cancelled.

        Parameters
        ----------
        where : str
            What the run was about to do (for the message).
        """
        if self._event.is_set():
            at = f" before {where}" if where else ""
            raise Cancelled(f"cancel: the run was cancelled{at}; nothing was committed")


@dataclass(frozen=True)
class Reporter:
    """The run's progress callback and cancel token, together (either may be None)."""

    callback: ProgressCallback | None = None
    token: CancelToken | None = None

    def phase(self, phase: Phase) -> None:
        """A phase starts (checks the token first)."""
        self.check(phase)
        self.emit(Progress(phase))

    def step(self, phase: Phase, step: str) -> None:
        """A step starts (checks the token first)."""
        self.check(step)
        self.emit(Progress(phase, step))

    def partitions(self, phase: Phase, step: str | None, done: int, total: int, rows: int) -> None:
        """A batch of partitions is done (checks the token after it)."""
        self.emit(Progress(phase, step, done, total, rows))

    def emit(self, event: Progress) -> None:
        """Hand ``event`` to the callback, if any."""
        if self.callback is not None:
            self.callback(event)

    def check(self, where: str = "") -> None:
        """Raise :class:`Cancelled` if the token was set."""
        if self.token is not None:
            self.token.check(where)


_CURRENT: contextvars.ContextVar[Reporter | None] = contextvars.ContextVar(
    "veil_release_reporter", default=None
)


def current_reporter() -> Reporter:
    """The running step's reporter (a silent one outside a run).

    A whole-table step that runs long (an OptimShare search) reports its own progress
    and honours the run's cancel token through it.
    """
    found = _CURRENT.get()
    return found if found is not None else Reporter()


@contextlib.contextmanager
def reporting(reporter: Reporter) -> Iterator[None]:
    """Make ``reporter`` the current one while the block runs."""
    token = _CURRENT.set(reporter)
    try:
        yield
    finally:
        _CURRENT.reset(token)
