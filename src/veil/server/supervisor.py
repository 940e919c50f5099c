"""``veil serve``'s supervisor: it keeps the job workers running and their jobs honest.

The web process starts ``count`` worker processes and a supervisor thread that, about
once a second:

* sees a worker process that has ended (killed, crashed, out of memory), reclaims its
  jobs at once (:func:`veil.server.jobs.reclaim`: the job is marked interrupted, its
  reservation freed, any uncommitted output removed) and starts a new worker in its
  place, waiting longer after each quick death (1 s, 2 s, 4 s ... up to a minute) so
  that a worker that cannot start does not spin;
* reclaims jobs whose lease ran out (a worker that hangs, or one on another host);
* stops a worker still holding a profile job past its time limit
  (:func:`veil.server.jobs.overdue`), which is then restarted.

So a lost worker's job is interrupted within a second when its process dies, and
within its lease (``lease_seconds``) when it hangs; the next job runs on the new worker,
with no restart of the server.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.context import SpawnContext, SpawnProcess
from typing import Any

from veil.server.config import ServerConfig
from veil.server.database import Database
from veil.server.jobs import overdue, reclaim

__all__ = ["Supervisor"]

_LOG = logging.getLogger("veil.server.supervisor")
_LONGEST_WAIT = 60.0
_STEADY = 30.0


@dataclass
class _Slot:
    """One worker's place: its process, and when it may be started again."""

    process: SpawnProcess | None = None
    started: float = 0.0
    wait: float = 1.0
    not_before: float = 0.0
    restarts: int = 0
    pids: list[int] = field(default_factory=list)


class Supervisor:
    """Starts ``count`` processes running ``target(*args)`` and keeps them running.

    Parameters
    ----------
    config : ServerConfig
    db : Database
        The platform's database (opened with the audit key: reclaiming writes events).
    count : int
        Worker processes to keep.
    target : callable
        The worker's entry point (a module-level function, for the spawn start method).
    args : tuple
        Its arguments.
    context : SpawnContext
    every : float, default 1.0
        Seconds between two looks.
    """

    def __init__(
        self,
        config: ServerConfig,
        db: Database,
        count: int,
        target: Callable[..., Any],
        args: tuple[Any, ...],
        context: SpawnContext,
        every: float = 1.0,
    ) -> None:
        self.config, self.db = config, db
        self.target, self.args, self.context = target, args, context
        self.every = every
        self.slots = [_Slot() for _ in range(count)]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="veil-supervisor", daemon=True)
        self._last_reclaim = 0.0

    @property
    def restarts(self) -> int:
        """Workers started again after one ended."""
        return sum(slot.restarts for slot in self.slots)

    def start(self) -> None:
        """Start the workers and the supervising thread."""
        for slot in self.slots:
            self._spawn(slot)
        self._thread.start()

    def stop(self) -> None:
        """Stop supervising and end the workers (SIGTERM, then SIGKILL after 10 s)."""
        self._stop.set()
        self._thread.join(timeout=10)
        for slot in self.slots:
            if slot.process is not None:
                slot.process.terminate()
        for slot in self.slots:
            if slot.process is not None:
                slot.process.join(timeout=10)
                if slot.process.is_alive():
                    slot.process.kill()
                    slot.process.join(timeout=5)

    def _spawn(self, slot: _Slot) -> None:
        process = self.context.Process(target=self.target, args=self.args, daemon=True)
        process.start()
        slot.process, slot.started = process, time.monotonic()
        if process.pid is not None:
            slot.pids.append(process.pid)

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.check()
            except Exception:  # the database may be briefly unavailable: look again
                _LOG.exception("supervisor: a check failed")

    def check(self) -> None:
        """One look at the workers and the running jobs (see the module documentation)."""
        moment = time.monotonic()
        ended = [s for s in self.slots if s.process is not None and not s.process.is_alive()]
        if ended or moment - self._last_reclaim >= min(5.0, self.config.lease_seconds / 3):
            reclaim(self.db, self.config)
            self._last_reclaim = moment
        for slot in ended:
            assert slot.process is not None
            _LOG.warning(
                "worker %s ended (exit code %s); its jobs were reclaimed, starting another",
                slot.process.pid,
                slot.process.exitcode,
            )
            lived = moment - slot.started
            slot.wait = 1.0 if lived >= _STEADY else min(slot.wait * 2, _LONGEST_WAIT)
            slot.not_before = moment + (0.0 if lived >= _STEADY else slot.wait)
            slot.process = None
        for slot in self.slots:
            if slot.process is None and moment >= slot.not_before and not self._stop.is_set():
                self._spawn(slot)
                slot.restarts += 1
        self._stop_overdue()

    def _stop_overdue(self) -> None:
        """Kill the workers of this host that hold a profile past its time limit."""
        host = socket.gethostname()[:32]
        ours = {s.process.pid for s in self.slots if s.process is not None}
        for worker in overdue(self.db, self.config):
            name, _, rest = worker.partition(":")
            pid = rest.partition(":")[0]
            if name == host and pid.isdigit() and int(pid) in ours:
                _LOG.warning("worker %s: its profile ran past its time limit; stopping it", pid)
                os.kill(int(pid), signal.SIGKILL)
