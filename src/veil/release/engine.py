"""Execution engines of the release runner: where the records live while steps run.

The runner splits a plan into *row steps*, which transform each record on its own (masking,
local-DP noise, geo masks with a fixed projection), and *table steps*, which need the
whole table (k-anonymity, cloaking, grid suppression). An engine reads the input and runs
the row steps.

* :class:`PandasEngine` (default): the table in memory, each row step once over it; the
  table steps and the outputs work on that frame.
* :class:`DaskEngine`: the input read as partitions (Parquet row groups or CSV blocks),
  the row steps run per partition in parallel, each partition with its own independent
  random stream (:func:`veil.rng.spawn`), so the noise of one partition says nothing
  about another's and the result has the same distribution as on pandas.

On Dask the runner streams the partitions into the release file
(:meth:`DaskEngine.stream`), a batch of partitions at a time, so the table never has to
fit in memory. Table steps that only need class sizes run as distributed group-bys in a
first pass over the partitions (which returns small frames of counts, never records):

* k-anonymity and the other models of the plan's ``anonymization``: records are counted
  per combination of the quasi-identifiers and the models' sensitive attributes; the
  lattice search runs on those counts (:func:`veil.anonymity.anonymize` with
  ``weights=``); then each partition, while streamed, has its quasi-identifiers
  generalized to the chosen levels and the records of suppressed classes removed (or
  marked). Levels, suppressed records and metrics are those of a run on the whole table.
* a ``grid`` mask with ``min_count`` (and a fixed ``centre``): cell centres per
  partition, a group-by of the centres, then the points of the sparse cells suppressed.
* the report's risk before and after (in the manifest): :func:`veil.risk.summary` on the
  class counts of the released quasi-identifiers.

The first pass recomputes the row steps from copies of the partitions' random streams,
so the second pass sees exactly the same noise (a pass changes no generator). The report
needs records in memory: on Dask it is built from a deterministic sample, evenly spaced
partitions holding about 50 000 records (its title says how many). ``cloak`` masks, and
``grid`` masks without a fixed ``centre`` (their projection is fitted to all the
points), are not distributed: a plan with one gathers the released partitions into one
pandas frame, and the manifest's ``execution`` section says so for each such step
("gathered in memory").

A row step is ``fn(frame, generator) -> frame``. Every engine gives step ``i`` and
partition ``p`` the stream ``spawn(streams[i], n_partitions)[p]``: on pandas there is
one partition.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd

from veil.frames import MASKING_ATTR, PRIVACY_ATTR, shuffle_rows
from veil.release.errors import LedgerMismatchError, PlanError
from veil.release.plan import InputSpec, Plan
from veil.rng import spawn

__all__ = [
    "DaskEngine",
    "Engine",
    "InputData",
    "PandasEngine",
    "Probe",
    "Progress",
    "RowResult",
    "RowStep",
    "StreamResult",
    "get_engine",
    "input_digest",
    "input_spec",
    "read_input",
]

Progress = Callable[[str], None]
"""Receives the label of each step as it starts (for progress bars)."""

_DATASET_FILES = {"adult": "adult.csv.gz", "nyc_taxi": "nyc_taxi_2016_sample.csv.gz"}
_CHUNK = 1 << 20


@dataclass(frozen=True)
class RowStep:
    """A step applied to each record on its own: ``fn(frame, generator) -> frame``.

    ``columns`` names the columns the step reads and writes (empty: unknown); a pass
    that only needs some columns skips the steps that cannot touch them.
    """

    label: str
    fn: Callable[[pd.DataFrame, np.random.Generator], pd.DataFrame]
    columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class InputData:
    """What an engine read: the engine's table, its row count, digest and column names."""

    table: Any
    rows: int
    sha256: str
    source: str
    columns: tuple[str, ...]


@dataclass(frozen=True)
class RowResult:
    """The row steps' output as one pandas frame, with what the steps recorded.

    ``privacy`` and ``masking`` are the new entries of ``attrs["veil.privacy"]`` and
    ``attrs["veil.masking"]`` (from the first partition: every partition records the
    same costs). ``timings`` holds seconds per step (pandas) or for all steps (Dask).
    """

    frame: pd.DataFrame
    privacy: list[dict[str, Any]]
    masking: list[dict[str, Any]]
    timings: dict[str, float]


class Engine(Protocol):
    """What the runner needs from an engine."""

    name: str

    def session(self) -> contextlib.AbstractContextManager[None]:
        """Set up (and finally tear down) what the engine needs for one run."""
        ...

    def read(self, spec: InputSpec) -> InputData:
        """Open the input (hash it, count its rows)."""
        ...

    def original(self, data: InputData) -> pd.DataFrame:
        """The input as a pandas frame (for the report and the table steps)."""
        ...

    def apply(
        self,
        data: InputData,
        steps: Sequence[RowStep],
        streams: Sequence[np.random.Generator],
        progress: Progress | None = None,
    ) -> RowResult:
        """Run the row steps, step ``i`` drawing from ``streams[i]``; report to ``progress``."""
        ...


def input_digest(spec: InputSpec) -> tuple[str, str]:
    """SHA-256 (hex) of the input file, and a description of the source."""
    if spec.dataset is not None:
        name = _DATASET_FILES[spec.dataset]
        resource = resources.files("veil.datasets").joinpath("data").joinpath(name)
        with resources.as_file(resource) as file:
            return _sha256(file), f"bundled dataset {spec.dataset!r} ({name})"
    assert spec.path is not None
    return _sha256(spec.path), os.fspath(spec.path)


def _sha256(path: Path) -> str:
    """SHA-256 of a file; of a folder (a Parquet dataset), over its files' names and bytes."""
    digest = hashlib.sha256()
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))
        if not files:
            raise PlanError(f"input.path: folder {os.fspath(path)!r} holds no files")
        for file in files:
            digest.update(file.relative_to(path).as_posix().encode("utf-8") + b"\0")
            digest.update(bytes.fromhex(_sha256(file)))
        return digest.hexdigest()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(_CHUNK), b""):
                digest.update(block)
    except FileNotFoundError:
        raise PlanError(f"input.path: file {os.fspath(path)!r} does not exist") from None
    return digest.hexdigest()


def _csv_options(spec: InputSpec) -> dict[str, Any]:
    options: dict[str, Any] = {
        "sep": spec.sep,
        "skipinitialspace": spec.skipinitialspace,
        "encoding": spec.encoding,
        # A blank line is a record whose values are missing (in a one-column file, a
        # missing value), never silently dropped: the missing-value policies decide.
        "skip_blank_lines": False,
    }
    if spec.na_values is not None:
        options["na_values"] = spec.na_values
    if spec.columns is not None:
        options["usecols"] = spec.columns
    if spec.text_columns:
        options["dtype"] = dict.fromkeys(spec.text_columns, str)
    return options


def input_spec(plan: Plan) -> InputSpec:
    """The plan's input, with the columns of keyed or redacted treatments read as text.

    CSV columns treated by ``hmac``, ``token``, ``ff1`` or ``redact`` are read as text
    (so ``"00123"`` keeps its zeros and a key sees the characters of the file).
    """
    textual = [
        n
        for n, s in plan.columns.items()
        if s.treatment.method in ("hmac", "token", "ff1", "redact")
        and n not in plan.input.text_columns
    ]
    if not textual:
        return plan.input
    return plan.input.model_copy(update={"text_columns": [*plan.input.text_columns, *textual]})


def read_input(source: Plan | InputSpec) -> pd.DataFrame:
    """Read a plan's input into memory with the plan's read options, as a release does.

    Parameters
    ----------
    source : Plan or InputSpec
        A plan (its ``input``, with the columns of keyed treatments read as text, see
        :func:`input_spec`) or an input section.

    Returns
    -------
    pandas.DataFrame
        The records; a bundled dataset is loaded from the package.

    Raises
    ------
    PlanError
        The file does not exist or cannot be read (the message names ``input.path``),
        or ``input.columns`` names columns the input does not have.
    """
    spec = input_spec(source) if isinstance(source, Plan) else source
    return _read_pandas(spec)


def _read_pandas(spec: InputSpec) -> pd.DataFrame:
    if spec.dataset is not None:
        from veil import datasets

        frame = datasets.load_adult() if spec.dataset == "adult" else datasets.load_nyc_taxi()
        if spec.columns is not None:
            absent = [c for c in spec.columns if c not in frame.columns]
            if absent:
                raise PlanError(
                    f"input.columns: {absent} not in dataset {spec.dataset!r} "
                    f"(columns: {list(frame.columns)})"
                )
            frame = frame[spec.columns]
        return frame
    assert spec.path is not None
    if not spec.path.exists():
        raise PlanError(f"input.path: file {os.fspath(spec.path)!r} does not exist")
    try:
        if spec.file_format() == "parquet":
            frame = pd.read_parquet(spec.path, columns=spec.columns)
        else:
            frame = pd.read_csv(spec.path, **_csv_options(spec))
        return frame
    except (ValueError, OSError) as exc:
        reason = " ".join(str(exc).split())[:300]
        raise PlanError(f"input.path: cannot read {os.fspath(spec.path)!r} ({reason})") from None


def _new_entries(before: pd.DataFrame, after: pd.DataFrame, key: str) -> list[dict[str, Any]]:
    old = len(before.attrs.get(key, []))
    return [dict(e) for e in after.attrs.get(key, [])[old:]]


def _run_steps(
    frame: pd.DataFrame,
    steps: Sequence[RowStep],
    streams: Sequence[np.random.Generator],
    progress: Progress | None = None,
) -> tuple[pd.DataFrame, list[dict[str, Any]], list[dict[str, Any]], dict[str, float]]:
    privacy: list[dict[str, Any]] = []
    masking: list[dict[str, Any]] = []
    timings: dict[str, float] = {}
    for step, stream in zip(steps, streams, strict=True):
        if progress is not None:
            progress(step.label)
        start = time.perf_counter()
        out = step.fn(frame, stream)
        privacy.extend(_new_entries(frame, out, PRIVACY_ATTR))
        masking.extend(_new_entries(frame, out, MASKING_ATTR))
        timings[step.label] = time.perf_counter() - start
        frame = out
    return frame, privacy, masking, timings


class PandasEngine:
    """The table in memory; each row step runs once over the whole frame."""

    name = "pandas"

    def session(self) -> contextlib.AbstractContextManager[None]:
        """Nothing to set up."""
        return contextlib.nullcontext()

    def read(self, spec: InputSpec) -> InputData:
        """Hash the input and read it with pandas (the read options of ``spec``)."""
        digest, source = input_digest(spec)
        frame = _read_pandas(spec)
        if not frame.index.is_unique:
            # Released records are paired with their originals by label (the report).
            frame = frame.reset_index(drop=True)
        return InputData(frame, len(frame), digest, source, tuple(map(str, frame.columns)))

    def original(self, data: InputData) -> pd.DataFrame:
        """The frame read."""
        frame: pd.DataFrame = data.table
        return frame

    def apply(
        self,
        data: InputData,
        steps: Sequence[RowStep],
        streams: Sequence[np.random.Generator],
        progress: Progress | None = None,
    ) -> RowResult:
        """Run the steps in order over the frame (one partition)."""
        children = [spawn(s, 1)[0] for s in streams]
        frame, privacy, masking, timings = _run_steps(data.table, steps, children, progress)
        return RowResult(frame, privacy, masking, timings)


class DaskEngine:
    """Partitions processed in parallel with Dask (threads by default).

    Parameters
    ----------
    scheduler : str, default "threads"
        A local Dask scheduler (``"threads"``, ``"synchronous"``, ``"processes"``),
        ``"local"`` for a :class:`distributed.LocalCluster` of worker processes started
        for the run, or the address of a running scheduler (``"tcp://host:8786"``).
    blocksize : str or int, default "64MB"
        CSV block size per partition.
    npartitions : int, optional
        Repartition the input into this many partitions after reading.
    workers : int, optional
        Worker processes of the ``"local"`` cluster (default: Dask's choice).
    batch : int, optional
        Partitions computed at once when the release is streamed to its file
        (:meth:`stream`); default the number of CPUs.

    Notes
    -----
    With worker processes (``"processes"``, ``"local"``, an address) the steps travel to
    the workers by pickling: keys of ``hmac`` and ``token`` treatments are pickled with
    them (never to storage), and ``ff1`` treatments, whose cipher refuses pickling, need
    a threaded scheduler.
    """

    name = "dask"

    def __init__(
        self,
        scheduler: str = "threads",
        *,
        blocksize: str | int = "64MB",
        npartitions: int | None = None,
        workers: int | None = None,
        batch: int | None = None,
    ) -> None:
        self.scheduler = scheduler
        self.blocksize = blocksize
        self.npartitions = npartitions
        self.workers = workers
        self.batch = batch
        self._client: Any = None

    @contextlib.contextmanager
    def session(self) -> Iterator[None]:
        """Connect to (or start) the distributed scheduler for the run, if one is used.

        Text columns keep the types pandas reads them with (Dask's conversion to Arrow
        strings is off for the run), so a missing value is the same on both engines
        (``nan``, not ``<NA>``, which hierarchies and domains would see apart).
        """
        import dask

        with contextlib.ExitStack() as stack:
            stack.enter_context(dask.config.set({"dataframe.convert-string": False}))
            if self.scheduler != "local" and "://" not in self.scheduler:
                yield
                return
            from distributed import Client, LocalCluster

            if self.scheduler == "local":
                cluster = stack.enter_context(
                    LocalCluster(  # type: ignore[no-untyped-call]
                        n_workers=self.workers,
                        threads_per_worker=1,
                        processes=True,
                        dashboard_address=None,
                    )
                )
                client = stack.enter_context(Client(cluster))  # type: ignore[no-untyped-call]
            else:
                client = stack.enter_context(Client(self.scheduler))  # type: ignore[no-untyped-call]
            self._client = client
            try:
                yield
            finally:
                self._client = None

    def _compute(self, *items: Any) -> Any:
        from dask.base import compute

        if self._client is not None:
            return tuple(self._client.compute(list(items), sync=True))
        if self.scheduler == "local" or "://" in self.scheduler:
            raise PlanError(
                f"engine: the Dask scheduler {self.scheduler!r} needs an open session "
                "(use the engine inside `with engine.session():`)"
            )
        return compute(*items, scheduler=self.scheduler)  # type: ignore[no-untyped-call]

    def read(self, spec: InputSpec) -> InputData:
        """Hash the input and open it lazily as Dask partitions."""
        import dask.dataframe as dd

        digest, source = input_digest(spec)
        if spec.dataset is not None:
            table = dd.from_pandas(  # type: ignore[no-untyped-call]
                _read_pandas(spec), npartitions=self.npartitions or 1
            )
        else:
            assert spec.path is not None
            try:
                if spec.file_format() == "parquet":
                    table = dd.read_parquet(spec.path, columns=spec.columns)
                else:
                    table = dd.read_csv(
                        os.fspath(spec.path), blocksize=self.blocksize, **_csv_options(spec)
                    )
            except ValueError as exc:
                raise PlanError(f"input: cannot read {os.fspath(spec.path)!r}: {exc}") from None
            if self.npartitions is not None:
                table = table.repartition(npartitions=self.npartitions)
        (rows,) = self._compute(table.shape[0])
        return InputData(table, int(rows), digest, source, tuple(map(str, table.columns)))

    def original(self, data: InputData) -> pd.DataFrame:
        """All partitions gathered into one pandas frame."""
        (frame,) = self._compute(data.table)
        return _clean_index(frame)

    def apply(
        self,
        data: InputData,
        steps: Sequence[RowStep],
        streams: Sequence[np.random.Generator],
        progress: Progress | None = None,
    ) -> RowResult:
        """Run the steps over every partition, each with its own child streams."""
        from dask.delayed import delayed

        parts = data.table.to_delayed()
        if progress is not None:
            progress(f"{len(steps)} row steps on {len(parts)} partitions")
        per_step = [spawn(s, len(parts)) for s in streams]
        tasks = [
            delayed(_run_steps)(part, steps, [children[p] for children in per_step])
            for p, part in enumerate(parts)
        ]
        start = time.perf_counter()
        results = self._compute(*tasks)
        elapsed = time.perf_counter() - start
        frame = _clean_index(pd.concat([r[0] for r in results]))
        privacy, masking = (results[0][1], results[0][2]) if results else ([], [])
        return RowResult(frame, privacy, masking, {f"row steps ({len(parts)} partitions)": elapsed})

    def partitions(self, data: InputData) -> int:
        """The number of partitions of the input."""
        return int(data.table.npartitions)

    def stream(
        self,
        data: InputData,
        steps: Sequence[RowStep],
        streams: Sequence[np.random.Generator],
        sink: Callable[[pd.DataFrame], None] | None,
        progress: Progress | None = None,
        *,
        finish: Callable[[pd.DataFrame], pd.DataFrame] | None = None,
        probe: Probe | None = None,
        collect: Callable[[int, Any], None] | None = None,
        order: np.random.Generator | None = None,
    ) -> StreamResult:
        """Run the steps per partition and hand each result to ``sink``.

        Partitions are computed ``batch`` at a time, in parallel, and released to the
        sink before the next batch starts: memory holds one batch of partitions, never
        the whole table (the path for data larger than memory). Partition ``p`` of step
        ``i`` draws from ``spawn(streams[i], n_partitions)[p]``, as in :meth:`apply`.

        Each partition draws from a copy of its streams, so two passes over the input
        (one to count classes, one to write) see the same noise: a pass changes no
        generator.

        Parameters
        ----------
        data, steps, streams, progress
            As for :meth:`apply`.
        sink : callable or None
            Receives each partition's output, in partition order; None for a pass that
            only probes (the outputs stay on the workers).
        finish : callable, optional
            Applied to each partition's output after the steps, on the worker (drop
            columns, generalize, remove suppressed records).
        probe : callable, optional
            ``probe(p, original, output)`` runs on the worker for partition ``p``; its
            (small) result goes to ``collect(p, result)`` on the client (class counts of
            a distributed group-by, a report sample).
        order : numpy.random.Generator, optional
            Shuffle the released records: each partition's output rows are permuted
            (from the partition's own child stream) and the partitions go to ``sink`` in
            a random order. Records are not mixed across partitions: an output block
            holds the records of one input partition. Without it, partitions go to the
            sink in input order, unshuffled.

        Raises
        ------
        LedgerMismatchError
            Two partitions recorded different privacy costs.
        """
        from dask.delayed import delayed

        parts = data.table.to_delayed()
        # Children are derived from copies of the step streams: every pass over the
        # input (one to count classes, one to write) gets the same children, so the
        # records the search counted are the records released.
        per_step = [spawn(copy.deepcopy(s), len(parts)) for s in streams]
        shufflers: list[np.random.Generator | None] = [None] * len(parts)
        sequence = list(range(len(parts)))
        if order is not None:
            *children, draw = spawn(copy.deepcopy(order), len(parts) + 1)
            shufflers = list(children)
            sequence = [int(p) for p in draw.permutation(len(parts))]
        batch = self.batch or os.cpu_count() or 1
        rows = 0
        first: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None = None
        start = time.perf_counter()
        for begin in range(0, len(parts), batch):
            if progress is not None:
                progress(f"partitions {begin + 1}-{min(begin + batch, len(parts))} of {len(parts)}")
            chosen = sequence[begin : begin + batch]
            tasks = [
                delayed(_partition)(
                    p,
                    parts[p],
                    steps,
                    [children[p] for children in per_step],
                    finish,
                    probe,
                    sink is not None,
                    shufflers[p],
                )
                for p in chosen
            ]
            results = self._compute(*tasks)
            for p, (frame, privacy, masking, probed, count) in zip(chosen, results, strict=True):
                if first is None:
                    first = (privacy, masking)
                elif privacy != first[0]:
                    raise LedgerMismatchError(
                        "partitions recorded different privacy costs: "
                        f"{privacy} and {first[0]}; nothing was written"
                    )
                rows += count
                if collect is not None:
                    collect(p, probed)
                if sink is not None:
                    sink(frame)
        elapsed = time.perf_counter() - start
        privacy, masking = first if first is not None else ([], [])
        what = "row steps and write" if sink is not None else "row steps and counts"
        return StreamResult(
            rows,
            len(parts),
            privacy,
            masking,
            {f"{what}, streamed ({len(parts)} partitions)": elapsed},
        )


Probe = Callable[[int, pd.DataFrame, pd.DataFrame], Any]
"""``probe(p, original, output)``: a small summary of partition ``p`` (on the worker)."""


def _partition(
    p: int,
    part: pd.DataFrame,
    steps: Sequence[RowStep],
    streams: Sequence[np.random.Generator],
    finish: Callable[[pd.DataFrame], pd.DataFrame] | None,
    probe: Probe | None,
    keep: bool,
    shuffler: np.random.Generator | None = None,
) -> tuple[pd.DataFrame | None, list[dict[str, Any]], list[dict[str, Any]], Any, int]:
    """One partition through the steps (from copies of its streams), finish and probe."""
    if not part.index.is_unique:
        # The probe pairs output records with their originals by label.
        part = part.reset_index(drop=True)
    copies = [copy.deepcopy(s) for s in streams]
    out, privacy, masking, _ = _run_steps(part, steps, copies)
    if finish is not None:
        out = finish(out)
    if shuffler is not None:
        out = shuffle_rows(out, copy.deepcopy(shuffler))
    probed = probe(p, part, out) if probe is not None else None
    return (out if keep else None), privacy, masking, probed, len(out)


@dataclass(frozen=True)
class StreamResult:
    """What a streamed run of the row steps handed to its sink, and what it recorded."""

    rows: int
    partitions: int
    privacy: list[dict[str, Any]]
    masking: list[dict[str, Any]]
    timings: dict[str, float]


def _clean_index(frame: pd.DataFrame) -> pd.DataFrame:
    """A default range index (partitions each start theirs at 0)."""
    return frame.reset_index(drop=True)


_LOCAL_SCHEDULERS = ("threads", "synchronous", "processes", "local")


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
        if scheduler not in _LOCAL_SCHEDULERS and "://" not in scheduler:
            raise PlanError(
                f"scheduler: must be one of {', '.join(_LOCAL_SCHEDULERS)} or a scheduler "
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
