"""Reading a plan's input: its digest, its read options and the records in memory."""

from __future__ import annotations

import hashlib
import os
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from veil.formats import space_aligned, space_aligned_refusal
from veil.release.errors import PlanError
from veil.release.plan import InputSpec, Plan
from veil.release.steps import reads_text

_DATASET_FILES = {"adult": "adult.csv.gz", "nyc_taxi": "nyc_taxi_2016_sample.csv.gz"}
_CHUNK = 1 << 20


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
    return read_pandas(spec)


def check_layout(spec: InputSpec) -> None:
    """Refuse a CSV input whose lines are a space-aligned table (one column to a reader).

    Every engine calls it before reading, as the command line does for its files
    (:func:`veil.formats.space_aligned`); a file that cannot be read is left to the
    read, which names what is wrong.
    """
    if spec.path is None or spec.file_format() != "csv" or not spec.path.exists():
        return
    try:
        head = pd.read_csv(
            spec.path, sep=spec.sep, encoding=spec.encoding, header=None, nrows=50,
            dtype=str, keep_default_na=False,
        )  # fmt: skip
    except (ValueError, OSError):
        return
    if head.shape[1] == 1 and (width := space_aligned(head[0].tolist())):
        raise PlanError(f"input.path: {os.fspath(spec.path)!r} {space_aligned_refusal(width)}")


def read_pandas(spec: InputSpec) -> pd.DataFrame:
    """The input section's records in memory (a file with its read options, or a bundled
    dataset), every failure a :class:`PlanError` naming ``input``."""
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
    check_layout(spec)
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
