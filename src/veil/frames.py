"""Returning new data frames: never mutating the caller's, and recording privacy costs."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.mechanisms import PrivacyCost, PrivacyLedger

__all__ = [
    "MASKING_ATTR",
    "PRIVACY_ATTR",
    "arrow_strings",
    "copy_on_write",
    "default_string_dtype",
    "factorize_objects",
    "merge_masking",
    "output_frame",
    "record_cost",
    "record_masking",
    "shuffle_rows",
]

PRIVACY_ATTR = "veil.privacy"
MASKING_ATTR = "veil.masking"
MASKING_COUNTS = ("dropped", "rows_permuted", "pairs_requested", "pairs_swapped")
"""Fields of a masking entry that count records: summed when parts of a table are merged."""


def copy_on_write() -> bool:
    """Whether pandas copies on write: a frame may then share a column with another."""
    if int(pd.__version__.split(".", 1)[0]) >= 3:
        return True
    return pd.get_option("mode.copy_on_write") is True


def output_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A new frame holding ``df``'s data, for a function to write its result into.

    Under copy-on-write (pandas 3, or pandas 2 with ``mode.copy_on_write`` on) it shares
    the columns with ``df`` at no cost; otherwise it is a deep copy, as
    ``DataFrame.assign`` makes, so that editing the result in place cannot reach ``df``.
    """
    return df.copy(deep=not copy_on_write())


def record_cost(
    out: pd.DataFrame, source: pd.DataFrame, cost: PrivacyCost, ledger: PrivacyLedger | None
) -> None:
    """Append ``cost`` to ``out.attrs["veil.privacy"]`` (after ``source``'s) and the ledger."""
    history = list(source.attrs.get(PRIVACY_ATTR, []))
    history.append(dataclasses.asdict(cost))
    out.attrs = {**source.attrs, PRIVACY_ATTR: history}
    if ledger is not None:
        ledger.record(cost)


def record_masking(out: pd.DataFrame, source: pd.DataFrame, entries: list[dict[str, Any]]) -> None:
    """Append non-randomized treatments to ``out.attrs["veil.masking"]``, after ``source``'s.

    Entries describe what was done (method, key id, parameters), never secrets.
    """
    history = list(source.attrs.get(MASKING_ATTR, []))
    history.extend(entries)
    out.attrs = {**source.attrs, MASKING_ATTR: history}


def merge_masking(
    entries: list[dict[str, Any]], more: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The masking entries of two parts of one table, as one table's.

    An entry of ``more`` that ``entries`` also holds (equal but for the counts of
    :data:`MASKING_COUNTS`) adds its counts to it; any other is inserted after the
    entry that preceded it in ``more``, so a step recorded by one part only (a drop in
    the one part that dropped records) keeps its place among the steps. Neither list
    is changed.
    """
    merged = [dict(entry) for entry in entries]
    place = 0
    for entry in more:
        same = _uncounted(entry)
        found = next((i for i, e in enumerate(merged) if _uncounted(e) == same), None)
        if found is None:
            merged.insert(place, dict(entry))
            found = place
        else:
            for key in MASKING_COUNTS:
                if key in entry:
                    merged[found][key] = merged[found].get(key, 0) + entry[key]
        place = found + 1
    return merged


def _uncounted(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k not in MASKING_COUNTS}


def default_string_dtype() -> Any:
    """The dtype pandas gives a column of Python strings (``str`` on pandas 3, else object)."""
    return pd.Series(["x"]).dtype


def arrow_strings(codes: npt.NDArray[np.integer], labels: Any, dtype: pd.StringDtype) -> Any:
    """``labels[codes]`` (-1: missing) as an Arrow-backed string array of ``dtype``.

    Taken from the labels by Arrow: several times faster than building the array from
    Python strings. ``dtype`` must have ``storage == "pyarrow"`` and ``labels`` be
    strings. The buffers come from the system allocator: Arrow's default pool
    (mimalloc) gave back the previous call's pages between calls, and a call then took
    about 5 ms more for 8 columns of 30,000 labels in some calls out of five.
    """
    import pyarrow as pa

    codes = np.asarray(codes)
    missing = codes < 0
    positions = codes.astype(np.int32, copy=False)
    indices = pa.array(positions, mask=missing) if missing.any() else pa.array(positions)
    import pyarrow.compute as pc

    taken = pc.take(
        pa.array(list(labels), pa.large_string()), indices, memory_pool=pa.system_memory_pool()
    )
    return pd.array(taken, dtype=dtype)


def factorize_objects(values: npt.NDArray[np.object_]) -> tuple[npt.NDArray[np.intp], Any]:
    """Codes of an object array by object identity, and one object of each code.

    Hashes the objects' addresses instead of the objects: a repeated value is usually
    one shared object (``read_csv`` and NumPy's fancy indexing share them), and hashing
    integers costs several times less than hashing Python objects (1M strings: about 3
    against 17 ms). Equal values held by distinct objects get distinct codes, so a caller
    must map the returned objects by value (``Index.get_indexer``, ``pd.factorize``)
    and index that mapping with the codes: the result does not depend on the sharing.
    """
    values = np.ascontiguousarray(values, dtype=object)
    # The buffer of an object array holds the objects' addresses, kept alive by it.
    codes, _ = pd.factorize(np.frombuffer(values, dtype=np.intp), sort=False)
    first = np.empty(int(codes.max(initial=-1)) + 1, dtype=np.intp)
    first[codes] = np.arange(len(codes), dtype=np.intp)
    return np.asarray(codes, dtype=np.intp), values[first]


def shuffle_rows(frame: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """``frame``'s rows in a uniformly random order drawn from ``rng``; labels are kept.

    A release that keeps the input's row order links its records to people by position
    (a file sorted by date, or with the positive cases first). The permutation is drawn
    from ``rng``, which must come from :mod:`veil.rng` (the CSPRNG by default), so the
    order says nothing about the input's. ``frame`` is not modified.

    Examples
    --------
    >>> import pandas as pd
    >>> from veil.rng import resolve_rng
    >>> frame = pd.DataFrame({"x": range(5)})
    >>> out = shuffle_rows(frame, resolve_rng(None))
    >>> sorted(out["x"]) == list(range(5)) and sorted(out.index) == list(range(5))
    True
    """
    order = rng.permutation(len(frame))
    return frame.take(order)
