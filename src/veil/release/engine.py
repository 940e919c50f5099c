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

import contextlib
import copy
import hashlib
import os
import socket
import struct
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
import pandas as pd

from veil.frames import MASKING_ATTR, PRIVACY_ATTR, shuffle_rows
from veil.release.errors import LedgerMismatchError, PlanError
from veil.release.plan import InputSpec, Plan
from veil.release.progress import Reporter
from veil.release.steps import reads_text
from veil.release.steps.base import RECORDS, Counted, Step, record_counts
from veil.rng import spawn

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

_DATASET_FILES = {"adult": "adult.csv.gz", "nyc_taxi": "nyc_taxi_2016_sample.csv.gz"}
_CHUNK = 1 << 20

Where = Literal["row", "counts", "table", "gathered", "input", "order"]
"""Kinds of work an engine describes: a row step, a counted step, a whole-table step,
a counted step on a table gathered for a whole-table step, the input read whole, and
how the released rows are shuffled."""

Finisher = Callable[[pd.DataFrame], pd.DataFrame]
Probe = Callable[[int, pd.DataFrame, pd.DataFrame], Any]
"""``probe(p, original, output)``: a small summary of partition ``p`` (on the worker)."""


class Sink(Protocol):
    """Where released partitions go (the staged release file), in the order written.

    ``scratch`` is a private folder for intermediate files (a shuffle's spilled
    buckets), removed with the staged outputs.
    """

    scratch: Path | None

    def write(self, part: pd.DataFrame) -> None:
        """Append one partition (or the whole table)."""
        ...


@dataclass(frozen=True)
class InputData:
    """What an engine read: the engine's table, its row count, digest and column names."""

    table: Any
    rows: int
    sha256: str
    source: str
    columns: tuple[str, ...]


@dataclass
class Recorded:
    """What the row steps recorded: new ``veil.privacy`` and ``veil.masking`` entries."""

    privacy: list[dict[str, Any]] = field(default_factory=list)
    masking: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Gathered:
    """The rows' output as one pandas frame, with what the steps recorded."""

    frame: pd.DataFrame
    privacy: list[dict[str, Any]]
    masking: list[dict[str, Any]]
    timings: dict[str, float]


@dataclass(frozen=True)
class StreamResult:
    """What a stream handed to its sink, and what the steps recorded.

    ``frame`` is the released table when the engine held it in memory (None when the
    partitions were streamed into the file and never held together).
    """

    rows: int
    partitions: int
    privacy: list[dict[str, Any]]
    masking: list[dict[str, Any]]
    timings: dict[str, float]
    frame: pd.DataFrame | None = None


class Engine(Protocol):
    """The primitives the runner needs from an engine (see the module docstring)."""

    name: str

    def session(self) -> contextlib.AbstractContextManager[None]:
        """Set up (and finally tear down) what the engine needs for one run."""
        ...

    def read(self, spec: InputSpec) -> InputData:
        """Open the input (hash it, count its rows)."""
        ...

    def adopt(self, frame: pd.DataFrame, source: str) -> InputData:
        """Records the caller holds in memory, as this engine's input (nothing read)."""
        ...

    def original(self, data: InputData) -> pd.DataFrame:
        """The input as one pandas frame."""
        ...

    def sample(self, data: InputData, rows: int) -> pd.DataFrame:
        """At most ``rows`` records of the input, spread over it, as a pandas frame."""
        ...

    def partitions(self, data: InputData) -> int:
        """How many partitions the input has (1 in memory)."""
        ...

    def where(self, kind: Where) -> str:
        """Where a kind of work runs on this engine, in words (custodian record)."""
        ...

    def rows(
        self,
        data: InputData,
        steps: Sequence[Step],
        streams: Sequence[np.random.Generator],
        reporter: Reporter,
    ) -> Any:
        """The row steps over the input (run now, or in each later pass)."""
        ...

    def count(
        self, rows: Any, counted: Mapping[str, Counted], reporter: Reporter
    ) -> tuple[dict[str, pd.DataFrame], dict[str, float]]:
        """Records per combination of each counted step's keys, over the whole table."""
        ...

    def gather(self, rows: Any, reporter: Reporter) -> Gathered:
        """The rows' output as one pandas frame."""
        ...

    def stream(
        self,
        rows: Any,
        sink: Sink,
        reporter: Reporter,
        *,
        finish: Finisher | None = None,
        probe: Probe | None = None,
        collect: Callable[[int, Any], None] | None = None,
        order: np.random.Generator | None = None,
    ) -> StreamResult:
        """The rows' output, finished, shuffled with ``order``, into ``sink``."""
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


def csv_options(spec: InputSpec) -> dict[str, Any]:
    """The ``pandas.read_csv`` keywords that read a plan's input as its ``input`` says.

    Separator, encoding, missing-value markers, the columns read and the columns kept as
    text; each column typed from all its values, and a blank line read as a record of
    missing values (never dropped silently). The engines read a plan's input with these,
    and so does any caller that reads the same records another way (the platform
    decrypting a dataset into memory), so both see the same table.
    """
    options: dict[str, Any] = {
        "sep": spec.sep,
        "skipinitialspace": spec.skipinitialspace,
        "encoding": spec.encoding,
        # Each column's type from all its values, not chunk by chunk (which warns of
        # "mixed types" and can type one column two ways).
        "low_memory": False,
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


_csv_options = csv_options  # the earlier private name, for callers not yet moved


def input_spec(plan: Plan) -> InputSpec:
    """The plan's input, with the columns of keyed or redacted treatments read as text.

    CSV columns treated by ``hmac``, ``token``, ``ff1`` or ``redact`` are read as text
    (so ``"00123"`` keeps its zeros and a key sees the characters of the file).
    """
    textual = [
        n
        for n, s in plan.columns.items()
        if reads_text(s.treatment) and n not in plan.input.text_columns
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
            frame = pd.read_csv(spec.path, **csv_options(spec))
        return frame
    except (ValueError, OSError) as exc:
        reason = " ".join(str(exc).split())[:300]
        raise PlanError(f"input.path: cannot read {os.fspath(spec.path)!r} ({reason})") from None


def frame_digest(frame: pd.DataFrame) -> str:
    """SHA-256 (hex) of a frame's column names and records (pandas' row hashes, in order)."""
    digest = hashlib.sha256()
    digest.update("\0".join(map(str, frame.columns)).encode("utf-8"))
    rows = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    digest.update(rows.tobytes())
    return digest.hexdigest()


def _held(frame: pd.DataFrame) -> pd.DataFrame:
    if not frame.index.is_unique:
        # Released records are paired with their originals by label (the report).
        frame = frame.reset_index(drop=True)
    return frame


def _new_entries(before: pd.DataFrame, after: pd.DataFrame, key: str) -> list[dict[str, Any]]:
    old = len(before.attrs.get(key, []))
    return [dict(e) for e in after.attrs.get(key, [])[old:]]


def _run_steps(
    frame: pd.DataFrame,
    steps: Sequence[Step],
    streams: Sequence[np.random.Generator],
    reporter: Reporter | None = None,
) -> tuple[pd.DataFrame, Recorded, dict[str, float]]:
    """The steps in order over one frame, step ``i`` drawing from ``streams[i]``."""
    recorded = Recorded()
    timings: dict[str, float] = {}
    for step, stream in zip(steps, streams, strict=True):
        if reporter is not None:
            reporter.step("protect", step.label)
        assert step.apply is not None, f"{step.label}: a row step without rows part"
        start = time.perf_counter()
        out = step.apply(frame, stream)
        recorded.privacy.extend(_new_entries(frame, out, PRIVACY_ATTR))
        recorded.masking.extend(_new_entries(frame, out, MASKING_ATTR))
        timings[step.label] = time.perf_counter() - start
        frame = out
    return frame, recorded, timings


_Keys = dict[str, tuple[list[str], bool]]
"""Per counted step: its keys and whether only records with every key present count."""


def _keys(counted: Mapping[str, Counted]) -> _Keys:
    """What a counting probe needs of the counted steps (it travels to the workers)."""
    return {name: (list(c.keys), c.present_only) for name, c in counted.items()}


def _counts_of(frame: pd.DataFrame, keys: _Keys) -> dict[str, pd.DataFrame]:
    """Records per combination of each step's keys (of present keys, where asked)."""
    return {
        name: record_counts(frame[columns].dropna() if present else frame, columns)
        for name, (columns, present) in keys.items()
    }


def _partitions(n: int) -> str:
    return f"{n} partition{'s' if n != 1 else ''}"


# ------------------------------------------------------------------------- pandas


@dataclass(frozen=True)
class HeldRows:
    """Rows held in memory: the input and the row steps' output (pandas)."""

    original: pd.DataFrame
    frame: pd.DataFrame
    recorded: Recorded
    timings: dict[str, float]


class PandasEngine:
    """The table in memory; each row step runs once over the whole frame."""

    name = "pandas"

    def session(self) -> contextlib.AbstractContextManager[None]:
        """Nothing to set up."""
        return contextlib.nullcontext()

    def read(self, spec: InputSpec) -> InputData:
        """Hash the input and read it with pandas (the read options of ``spec``)."""
        digest, source = input_digest(spec)
        frame = _held(_read_pandas(spec))
        return InputData(frame, len(frame), digest, source, tuple(map(str, frame.columns)))

    def adopt(self, frame: pd.DataFrame, source: str) -> InputData:
        """The caller's frame as the input (not copied: the steps never modify it)."""
        held = _held(frame)
        return InputData(
            held, len(held), frame_digest(frame), source, tuple(map(str, held.columns))
        )

    def original(self, data: InputData) -> pd.DataFrame:
        """The frame read."""
        frame: pd.DataFrame = data.table
        return frame

    def sample(self, data: InputData, rows: int) -> pd.DataFrame:
        """The frame read (the checks that use a sample space their rows themselves)."""
        return self.original(data)

    def partitions(self, data: InputData) -> int:
        """One: the whole table."""
        return 1

    def where(self, kind: Where) -> str:
        """Everything runs in memory; the rows are shuffled as one table."""
        if kind == "order":
            return "shuffled with the CSPRNG (a uniformly random permutation)"
        return "in memory"

    def rows(
        self,
        data: InputData,
        steps: Sequence[Step],
        streams: Sequence[np.random.Generator],
        reporter: Reporter,
    ) -> HeldRows:
        """Run the steps now, in order, over the frame (one partition)."""
        children = [spawn(copy.deepcopy(s), 1)[0] for s in streams]
        frame, recorded, timings = _run_steps(data.table, steps, children, reporter)
        return HeldRows(data.table, frame, recorded, timings)

    def hold(self, original: pd.DataFrame, gathered: Gathered) -> HeldRows:
        """Rows another engine gathered, held in memory for the steps after them."""
        return HeldRows(original, gathered.frame, Recorded(gathered.privacy, gathered.masking), {})

    def count(
        self, rows: HeldRows, counted: Mapping[str, Counted], reporter: Reporter
    ) -> tuple[dict[str, pd.DataFrame], dict[str, float]]:
        """A group-by of the frame per counted step."""
        start = time.perf_counter()
        counts = _counts_of(rows.frame, _keys(counted))
        return counts, {"class counts (in memory)": time.perf_counter() - start}

    def gather(self, rows: HeldRows, reporter: Reporter) -> Gathered:
        """The frame itself."""
        recorded = rows.recorded
        return Gathered(rows.frame, recorded.privacy, recorded.masking, rows.timings)

    def stream(
        self,
        rows: HeldRows,
        sink: Sink,
        reporter: Reporter,
        *,
        finish: Finisher | None = None,
        probe: Probe | None = None,
        collect: Callable[[int, Any], None] | None = None,
        order: np.random.Generator | None = None,
    ) -> StreamResult:
        """Finish the frame, shuffle it whole with ``order``, hand it to ``sink``."""
        start = time.perf_counter()
        out = rows.frame if finish is None else finish(rows.frame)
        if order is not None:
            out = shuffle_rows(out, order)
        if probe is not None and collect is not None:
            collect(0, probe(0, rows.original, out))
        reporter.check("write")
        sink.write(out)
        recorded = rows.recorded
        timings = {**rows.timings, "finish and write": time.perf_counter() - start}
        return StreamResult(len(out), 1, recorded.privacy, recorded.masking, timings, out)


# --------------------------------------------------------------------------- dask


@dataclass(frozen=True)
class PartitionedRows:
    """Row steps to run over the partitions, in each pass, from copies of the streams."""

    data: InputData
    steps: tuple[Step, ...]
    streams: tuple[np.random.Generator, ...]


def _partition(
    p: int,
    part: pd.DataFrame,
    steps: Sequence[Step],
    streams: Sequence[np.random.Generator],
    finish: Finisher | None,
    probe: Probe | None,
    keep: bool,
    assigner: tuple[np.random.Generator, int] | None = None,
) -> tuple[pd.DataFrame | None, Any, Recorded, Any, int]:
    """One partition through the steps (from copies of its streams), finish and probe.

    With ``assigner`` (a stream and a number of buckets), each output record also gets
    a uniformly random bucket (the first half of the shuffle, see :meth:`_spill`).
    """
    if not part.index.is_unique:
        # The probe pairs output records with their originals by label.
        part = part.reset_index(drop=True)
    copies = [copy.deepcopy(s) for s in streams]
    out, recorded, _ = _run_steps(part, steps, copies)
    if finish is not None:
        out = finish(out)
    buckets = None
    if assigner is not None:
        stream, n_buckets = assigner
        buckets = copy.deepcopy(stream).integers(0, n_buckets, len(out))
    probed = probe(p, part, out) if probe is not None else None
    return (out if keep else None), buckets, recorded, probed, len(out)


def _clean_index(frame: pd.DataFrame) -> pd.DataFrame:
    """A default range index (partitions each start theirs at 0)."""
    return frame.reset_index(drop=True)


def _same_costs(first: Recorded | None, other: Recorded) -> Recorded:
    """Every partition must record the same costs (the ledger is per record)."""
    if first is None:
        return other
    if other.privacy != first.privacy:
        raise LedgerMismatchError(
            "partitions recorded different privacy costs: "
            f"{other.privacy} and {first.privacy}; nothing was written"
        )
    return first


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
    connect_timeout : float, default 10
        Seconds a running scheduler has to answer (:func:`check_scheduler`, then the
        client's connection): a peer that is not a Dask scheduler is refused in bounded
        time.

    Notes
    -----
    With worker processes (``"processes"``, ``"local"``, an address) the steps travel to
    the workers by pickling: keys of ``hmac`` and ``token`` treatments are pickled with
    them (never to storage), and ``ff1`` treatments, whose cipher refuses pickling, need
    a threaded scheduler.
    """

    name = "dask"

    _WHERE: Mapping[str, str] = {
        "row": "per partition",
        "counts": "distributed",
        "table": "gathered in memory: this step needs the whole table and is not distributed",
        "gathered": "gathered in memory: the table was gathered for another table step",
        "input": (
            "gathered in memory: the input was read whole to draw the sample the utility "
            "target is measured on"
        ),
        "order": (
            "shuffled with the CSPRNG across every partition (each record sent to a "
            "uniformly random bucket, each bucket permuted): every order of the records "
            "is equally likely"
        ),
    }

    def __init__(
        self,
        scheduler: str = "threads",
        *,
        blocksize: str | int = "64MB",
        npartitions: int | None = None,
        workers: int | None = None,
        batch: int | None = None,
        connect_timeout: float = 10.0,
    ) -> None:
        self.scheduler = scheduler
        self.blocksize = blocksize
        self.npartitions = npartitions
        self.workers = workers
        self.batch = batch
        self.connect_timeout = connect_timeout
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
                check_scheduler(self.scheduler, self.connect_timeout)
                client = stack.enter_context(
                    Client(self.scheduler, timeout=self.connect_timeout)  # type: ignore[no-untyped-call]
                )
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
                        os.fspath(spec.path), blocksize=self.blocksize, **csv_options(spec)
                    )
            except ValueError as exc:
                raise PlanError(f"input: cannot read {os.fspath(spec.path)!r}: {exc}") from None
            if self.npartitions is not None:
                table = table.repartition(npartitions=self.npartitions)
        (rows,) = self._compute(table.shape[0])
        return InputData(table, int(rows), digest, source, tuple(map(str, table.columns)))

    def adopt(self, frame: pd.DataFrame, source: str) -> InputData:
        """The caller's frame as the input, split into ``npartitions`` (default 1)."""
        import dask.dataframe as dd

        table = dd.from_pandas(  # type: ignore[no-untyped-call]
            _held(frame), npartitions=self.npartitions or 1
        )
        return InputData(
            table, len(frame), frame_digest(frame), source, tuple(map(str, frame.columns))
        )

    def original(self, data: InputData) -> pd.DataFrame:
        """All partitions gathered into one pandas frame."""
        (frame,) = self._compute(data.table)
        return _clean_index(frame)

    def sample(self, data: InputData, rows: int) -> pd.DataFrame:
        """The first rows of evenly spaced partitions, at most ``rows`` in all."""
        parts = data.table.to_delayed()
        chosen = sorted({round(i) for i in np.linspace(0, len(parts) - 1, min(len(parts), 8))})
        each = max(1, rows // len(chosen))
        heads = self._compute(*(parts[p].head(each) for p in chosen))
        return _clean_index(pd.concat(list(heads)))

    def partitions(self, data: InputData) -> int:
        """The number of partitions of the input."""
        return int(data.table.npartitions)

    def where(self, kind: Where) -> str:
        """Row steps per partition, counts distributed, whole-table steps gathered."""
        return self._WHERE[kind]

    def rows(
        self,
        data: InputData,
        steps: Sequence[Step],
        streams: Sequence[np.random.Generator],
        reporter: Reporter,
    ) -> PartitionedRows:
        """Nothing runs yet: each later pass runs the steps per partition."""
        return PartitionedRows(data, tuple(steps), tuple(streams))

    def count(
        self, rows: PartitionedRows, counted: Mapping[str, Counted], reporter: Reporter
    ) -> tuple[dict[str, pd.DataFrame], dict[str, float]]:
        """A first pass: class counts per partition, summed on the client.

        Only the row steps that write a counted column run in this pass, each on its
        own stream: the counted values are those the writing pass releases.
        """
        start = time.perf_counter()
        needed = {c for spec in counted.values() for c in spec.keys}
        useful = [
            i for i, step in enumerate(rows.steps) if not step.columns or needed & set(step.columns)
        ]
        scan = PartitionedRows(
            rows.data,
            tuple(rows.steps[i] for i in useful),
            tuple(rows.streams[i] for i in useful),
        )
        sums = {name: _Counts(list(spec.keys)) for name, spec in counted.items()}

        def collect(_p: int, found: dict[str, pd.DataFrame]) -> None:
            for name, counts in found.items():
                sums[name].add(counts)

        keys = _keys(counted)
        result = self._pass(
            scan, None, reporter, probe=lambda _p, _o, part: _counts_of(part, keys), collect=collect
        )
        timing = {f"class counts ({_partitions(result.partitions)})": time.perf_counter() - start}
        return {name: s.frame() for name, s in sums.items()}, timing

    def gather(self, rows: PartitionedRows, reporter: Reporter) -> Gathered:
        """Run the steps over every partition and concatenate the outputs."""
        from dask.delayed import delayed

        parts = rows.data.table.to_delayed()
        reporter.step("protect", f"{len(rows.steps)} row steps on {_partitions(len(parts))}")
        per_step = [spawn(copy.deepcopy(s), len(parts)) for s in rows.streams]
        tasks = [
            delayed(_run_steps)(part, rows.steps, [children[p] for children in per_step])
            for p, part in enumerate(parts)
        ]
        start = time.perf_counter()
        results = self._compute(*tasks)
        elapsed = time.perf_counter() - start
        reporter.check("the whole-table steps")
        frame = _clean_index(pd.concat([r[0] for r in results]))
        first: Recorded | None = None
        for _, recorded, _ in results:
            first = _same_costs(first, recorded)
        recorded = first or Recorded()
        timings = {f"row steps ({_partitions(len(parts))})": elapsed}
        return Gathered(frame, recorded.privacy, recorded.masking, timings)

    def stream(
        self,
        rows: PartitionedRows,
        sink: Sink,
        reporter: Reporter,
        *,
        finish: Finisher | None = None,
        probe: Probe | None = None,
        collect: Callable[[int, Any], None] | None = None,
        order: np.random.Generator | None = None,
    ) -> StreamResult:
        """Run the steps per partition and hand each result to ``sink``.

        Partitions are computed ``batch`` at a time, in parallel, and released to the
        sink before the next batch starts: memory holds one batch of partitions, never
        the whole table. With ``order``, the records are shuffled across every
        partition (:class:`_Shuffle`: spilled to the sink's scratch folder in random
        buckets, each bucket permuted), so the release order is a uniformly random
        permutation of all its records.
        """
        return self._pass(
            rows, sink, reporter, finish=finish, probe=probe, collect=collect, order=order
        )

    def _pass(
        self,
        rows: PartitionedRows,
        sink: Sink | None,
        reporter: Reporter,
        *,
        finish: Finisher | None = None,
        probe: Probe | None = None,
        collect: Callable[[int, Any], None] | None = None,
        order: np.random.Generator | None = None,
    ) -> StreamResult:
        """One pass over the partitions, a batch at a time (see :meth:`stream`)."""
        from dask.delayed import delayed

        parts = rows.data.table.to_delayed()
        # Children are derived from copies of the step streams: every pass over the
        # input (one to count classes, one to write) gets the same children, so the
        # records the search counted are the records released.
        per_step = [spawn(copy.deepcopy(s), len(parts)) for s in rows.streams]
        shuffle = _Shuffle(order, len(parts), sink) if order is not None and sink else None
        batch = self.batch or os.cpu_count() or 1
        total = 0
        first: Recorded | None = None
        phase: Literal["protect", "write"] = "protect" if sink is None else "write"
        start = time.perf_counter()
        for begin in range(0, len(parts), batch):
            reporter.check("the next partitions")
            chosen = range(begin, min(begin + batch, len(parts)))
            tasks = [
                delayed(_partition)(
                    p,
                    parts[p],
                    rows.steps,
                    [children[p] for children in per_step],
                    finish,
                    probe,
                    sink is not None,
                    None if shuffle is None else shuffle.assigner(p),
                )
                for p in chosen
            ]
            for p, (frame, buckets, recorded, probed, count) in zip(
                chosen, self._compute(*tasks), strict=True
            ):
                first = _same_costs(first, recorded)
                total += count
                if collect is not None:
                    collect(p, probed)
                if shuffle is not None and frame is not None:
                    shuffle.spill(p, frame, buckets)
                elif sink is not None and frame is not None:
                    sink.write(frame)
            reporter.partitions(phase, None, chosen.stop, len(parts), total)
        if shuffle is not None:
            shuffle.drain(reporter)
        elapsed = time.perf_counter() - start
        recorded = first or Recorded()
        what = "row steps and write" if sink is not None else "row steps and counts"
        return StreamResult(
            total,
            len(parts),
            recorded.privacy,
            recorded.masking,
            {f"{what}, streamed ({_partitions(len(parts))})": elapsed},
        )


class _Shuffle:
    """A uniform shuffle of records across every partition, in memory of one partition.

    Each released record goes to one of ``n`` buckets, uniformly at random and
    independently of the others (on the worker, from the partition's own stream); the
    client spills every partition's pieces to the sink's scratch folder; then each
    bucket, gathered from every partition, is permuted uniformly and written. For any
    bucket sizes, every arrangement of the records into positions is then equally
    likely, so the release order is a uniformly random permutation of all its records,
    as on pandas: a record's position says nothing of its input partition.
    """

    def __init__(self, order: np.random.Generator, buckets: int, sink: Sink) -> None:
        assign, permute = spawn(copy.deepcopy(order), 2)
        self._assigners = spawn(assign, buckets)
        self._permuters = spawn(permute, buckets)
        self._sink = sink
        scratch = sink.scratch
        if scratch is None:
            raise PlanError("engine: a shuffle across partitions needs a scratch folder")
        self._folder = scratch
        self.buckets = buckets

    def assigner(self, p: int) -> tuple[np.random.Generator, int]:
        """Partition ``p``'s bucket stream and the number of buckets."""
        return self._assigners[p], self.buckets

    def spill(self, p: int, frame: pd.DataFrame, buckets: Any) -> None:
        """Partition ``p``'s records, one file per bucket they went to."""
        codes = np.asarray(buckets, dtype=np.int64)
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(self.buckets + 1))
        for b in range(self.buckets):
            rows = order[bounds[b] : bounds[b + 1]]
            if len(rows):
                frame.iloc[rows].to_pickle(self._folder / f"{b:06d}-{p:06d}.pkl")

    def drain(self, reporter: Reporter) -> None:
        """Each bucket gathered, permuted and written; its spilled pieces removed."""
        empty: pd.DataFrame | None = None
        for b in range(self.buckets):
            reporter.check("the next bucket")
            files = sorted(self._folder.glob(f"{b:06d}-*.pkl"))
            if not files:
                continue
            pieces = [pd.read_pickle(f) for f in files]
            for f in files:
                f.unlink()
            frame = pd.concat(pieces) if len(pieces) > 1 else pieces[0]
            if len(frame) == 0:
                empty = frame
                continue
            self._sink.write(shuffle_rows(frame, self._permuters[b]))
            empty = None
        if empty is not None:
            self._sink.write(empty)


class _Counts:
    """Class counts summed over partitions: the reduce side of a distributed group-by."""

    def __init__(self, columns: list[str]) -> None:
        self.columns = columns
        self._parts: list[pd.DataFrame] = []

    def add(self, part: pd.DataFrame) -> None:
        self._parts.append(part)
        if len(self._parts) >= 32:
            self._parts = [self.frame()]

    def frame(self) -> pd.DataFrame:
        if not self._parts:
            return pd.DataFrame({**{c: [] for c in self.columns}, RECORDS: []})
        both = pd.concat(self._parts, ignore_index=True)
        summed = both.groupby(self.columns, dropna=False, observed=True, sort=False)[RECORDS]
        return summed.sum().reset_index()


_LOCAL_SCHEDULERS = ("threads", "synchronous", "processes", "local")
# The largest first message taken for a scheduler's handshake (Dask's is about 200 bytes).
_MAX_HANDSHAKE = 1 << 16


def _read_exactly(sock: socket.socket, n: int, deadline: float) -> bytes:
    chunks: list[bytes] = []
    while n > 0:
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        chunk = sock.recv(min(n, 1 << 16))
        if not chunk:
            raise ConnectionError("the peer closed the connection")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def check_scheduler(address: str, timeout: float = 10.0) -> None:
    """Refuse, within ``timeout`` seconds, a ``tcp://`` address that is not a Dask scheduler.

    A Dask scheduler sends its handshake as soon as a connection opens: a length, then
    that many bytes of frames holding a small mapping. A peer that sends nothing (an
    HTTP server waits for a request: Dask's client would wait forever) or announces a
    huge message (an SSH banner read as a length: Dask's client would try to allocate
    exabytes) is refused before Dask's client sees it. Other schemes (``tls://``, ...)
    are left to the client's own timeout.

    Raises
    ------
    PlanError
        Naming the address and what the peer did.
    """
    from distributed.comm.addressing import parse_address, parse_host_port
    from distributed.protocol.core import loads
    from distributed.protocol.utils import unpack_frames

    scheme, location = parse_address(address)
    if scheme != "tcp":
        return
    where = f"scheduler {address!r}"
    deadline = time.monotonic() + timeout
    try:
        host, port = parse_host_port(location)
        with socket.create_connection((host, port), timeout=timeout) as sock:
            (length,) = struct.unpack("<Q", _read_exactly(sock, 8, deadline))
            if length > _MAX_HANDSHAKE:
                raise PlanError(
                    f"{where}: is not a Dask scheduler (its first message does not follow "
                    "Dask's protocol); give the address of a running Dask scheduler"
                )
            frames = unpack_frames(_read_exactly(sock, length, deadline))
            message = loads(frames)  # type: ignore[no-untyped-call]
    except PlanError:
        raise
    except TimeoutError:
        raise PlanError(
            f"{where}: did not answer as a Dask scheduler within {timeout:g} s (a Dask "
            "scheduler speaks first; an HTTP server, for one, waits); give the address of a "
            "running Dask scheduler"
        ) from None
    except (OSError, ValueError) as exc:
        raise PlanError(f"{where}: cannot connect ({exc})") from None
    except Exception:  # whatever the peer sent, it was not Dask's handshake
        message = None
    if not isinstance(message, dict) or "compression" not in message:
        raise PlanError(
            f"{where}: is not a Dask scheduler (its first message is not Dask's handshake); "
            "give the address of a running Dask scheduler"
        )


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
