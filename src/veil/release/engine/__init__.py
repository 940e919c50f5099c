"""Execution engines of the release runner: where the records live while steps run.

The runner (:mod:`veil.release.runner`) sees an engine only through the few primitives
its steps need (:class:`Engine`):

* ``read``: open the input (hash it, count its rows);
* ``rows``: the row steps over the input, each step ``i`` and partition ``p`` drawing
  from ``spawn(streams[i], n_partitions)[p]`` (:func:`veil.rng.spawn`);
* ``count``: class counts by some keys of the rows' output, a group-by that returns small
  frames of counts, never records (k-anonymity, grid cells with a minimum count);
* ``gather``: the rows' output as one pandas frame, for the steps that need the whole
  table (quadtree cloaking, a projection chosen from the data);
* ``stream``: the rows' output through a per-partition finisher (generalize, suppress,
  drop), shuffled, into a sink that writes the release file;
* ``where``: how the engine describes where a kind of step ran (for the custodian record).

:class:`PandasEngine` (default) holds the table in memory: its row steps run once over
the whole frame and every primitive works on that frame. :class:`DaskEngine` reads the
input as partitions (Parquet row groups or CSV blocks): row steps run per partition in
parallel, each partition with its own independent random stream, so the noise of one
partition says nothing about another's and the result has the same distribution as on
pandas. Its passes (one to count, one to write) recompute the row steps from copies of
the partitions' streams, so both see exactly the same noise, and the partitions are
streamed into the release file a batch at a time: the table never has to fit in memory.

A release's rows are shuffled with the CSPRNG into a uniformly random permutation of the
whole table: on pandas in memory; on Dask across every partition, by random buckets
spilled to the staging folder (each about one partition) and permuted one at a time.
"""

from __future__ import annotations

from veil.release.engine.base import Engine, Gathered, InputData, Probe, Sink, StreamResult, Where
from veil.release.engine.inputs import (
    csv_options,
    frame_digest,
    input_digest,
    input_spec,
    read_input,
)
from veil.release.engine.memory import PandasEngine
from veil.release.engine.partitioned import DaskEngine
from veil.release.engine.scheduler import LOCAL_SCHEDULERS, check_scheduler
from veil.release.errors import PlanError

__all__ = [
    "DaskEngine",
    "Engine",
    "Gathered",
    "InputData",
    "PandasEngine",
    "Probe",
    "Sink",
    "StreamResult",
    "Where",
    "check_scheduler",
    "csv_options",
    "frame_digest",
    "get_engine",
    "input_digest",
    "input_spec",
    "read_input",
]


def get_engine(engine: str | Engine, *, scheduler: str | None = None) -> Engine:
    """An engine from its name or as given.

    ``"pandas"``; ``"dask"`` (threads); ``"dask-local"`` (a local cluster of processes).

    Parameters
    ----------
    engine : str or Engine
        The engine's name, or an engine (returned as is).
    scheduler : str, optional
        With ``"dask"`` only: the Dask scheduler, one of ``"threads"``,
        ``"synchronous"``, ``"processes"``, ``"local"`` or the address of a running
        scheduler (``"tcp://host:8786"``); see :class:`DaskEngine`.

    Raises
    ------
    PlanError
        An unknown engine name, or a scheduler that is not allowed.
    """
    if scheduler is not None:
        if engine != "dask":
            raise PlanError(
                f"scheduler: only with engine 'dask', got engine {engine!r} (scheduler "
                f"{scheduler!r})"
            )
        if scheduler not in LOCAL_SCHEDULERS and "://" not in scheduler:
            raise PlanError(
                f"scheduler: must be one of {', '.join(LOCAL_SCHEDULERS)} or a scheduler "
                f"address such as 'tcp://host:8786', got {scheduler!r}"
            )
        return DaskEngine(scheduler)
    if not isinstance(engine, str):
        return engine
    if engine == "pandas":
        return PandasEngine()
    if engine == "dask":
        return DaskEngine()
    if engine == "dask-local":
        return DaskEngine("local")
    raise PlanError(f"engine: must be 'pandas', 'dask' or 'dask-local', got {engine!r}")
