"""A guard for tests of calls that used to hang: fail after a generous bound, never hang.

This is not a timing test (performance lives in ``benchmarks/``): the bound is tens of
seconds for calls that finish in milliseconds, so that a regression fails instead of
stalling the suite. Test modules import it relatively (``from .._hang import within``).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

T = TypeVar("T")


def within(seconds: float, what: str, call: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``call(*args, **kwargs)`` run in a forked child; the test fails if it runs too long.

    A child is used so that a call stuck inside one C routine (which no signal handler
    interrupts) is still stopped: it is killed after ``seconds``. The call's result is
    returned and its exception re-raised in the test (both must pickle); warnings are
    raised in the child under the test's filters, so a warning turned into an error
    comes back as that error.
    """
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)

    def run() -> None:
        try:
            outcome: tuple[bool, Any] = (True, call(*args, **kwargs))
        except BaseException as error:  # every outcome goes back to the test
            outcome = (False, error)
        sender.send(outcome)

    child = context.Process(target=run, daemon=True)
    child.start()
    try:
        if not receiver.poll(seconds):
            pytest.fail(f"{what} still running after {seconds:g} s: it hangs")
        ok, value = receiver.recv()
    finally:
        child.kill()
        child.join()
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]
