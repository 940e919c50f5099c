"""The shadow release: the plan run on part of the records, the rest held out as control.

A custodian releases every record, so no record is left to tell what an attacker learns
from the release from what they would know of anybody. The shadow release makes that
control: the same release function runs on a random part of the records (80 % by
default, at most ``sample`` records), and the attacks target it with the other records as
control. It lives in memory only: nothing here writes a file.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.attacks.spec import AttackSpec, Release
from veil.errors import DataTypeError, ParameterError
from veil.rng import RngLike, resolve_rng

__all__ = ["DEFAULT_FRACTION", "DEFAULT_SAMPLE", "ReleaseFn", "Shadow", "shadow_release"]

ReleaseFn = Callable[[pd.DataFrame], "pd.DataFrame | Release"]
"""Releases a frame: returns the released rows (their index labels those of the records
they come from, as veil's steps keep them) or a :class:`Release`."""

DEFAULT_FRACTION = 0.8
DEFAULT_SAMPLE = 10_000


@dataclass(frozen=True)
class Shadow:
    """A shadow release and the records around it.

    Attributes
    ----------
    train : pandas.DataFrame
        The records given to the release function (index: positions in the raw frame).
    control : pandas.DataFrame
        The records held out (index: positions in the raw frame).
    release : Release
        What the release function returned, with ``source`` set for record-level releases.
    other : Release or None
        The second release function's output on the same records (intersection attack).
    seconds : float
        Wall time of the release function(s).
    """

    train: pd.DataFrame
    control: pd.DataFrame
    release: Release
    other: Release | None
    seconds: float


def _check_share(fraction: object, sample: object, n: int) -> int:
    if (
        isinstance(fraction, bool)
        or not isinstance(fraction, (int, float))
        or not (0.0 < fraction < 1.0)
    ):
        raise ParameterError(f"fraction: must be a number in (0, 1), got {fraction!r}")
    if sample is not None and (
        isinstance(sample, bool) or not isinstance(sample, (int, np.integer)) or sample < 1
    ):
        raise ParameterError(f"sample: must be an integer >= 1 or None, got {sample!r}")
    size = int(np.floor(fraction * n))
    if sample is not None:
        size = min(size, int(sample))
    if size < 1 or size >= n:
        raise ParameterError(
            f"fraction: {fraction!r} of {n} records leaves {size} to release and {n - size} "
            "to hold out; both need at least one"
        )
    return size


def as_shadow_release(
    out: object, train: pd.DataFrame, spec: AttackSpec, name: str = "release_fn"
) -> Release:
    """A release function's output as a :class:`Release`, its rows traced to ``train``.

    Record-level output must keep the index labels of the records it releases (a
    shuffle keeps them); they become ``source``. Synthetic output (``spec.synthetic``) has
    no source.
    """
    if isinstance(out, pd.DataFrame):
        release = Release(out)
    elif isinstance(out, Release):
        release = out
    else:
        raise DataTypeError(
            f"{name}: must return a pandas DataFrame or a veil.attacks.Release, got "
            f"{type(out).__name__}"
        )
    if spec.synthetic:
        return Release(release.frame, None, release.recode, release.cells)
    source = release.source if release.source is not None else release.frame.index
    unknown = int((~pd.Index(source).isin(train.index)).sum())
    if unknown or not pd.Index(source).is_unique:
        raise ParameterError(
            f"{name}: {unknown} released rows have index labels that are not the records "
            "given to it (or a label repeats); a record-level release must keep each "
            "record's label, and synthetic data needs spec.synthetic=True"
        )
    return Release(release.frame, pd.Index(source), release.recode, release.cells)


def shadow_release(
    raw: pd.DataFrame,
    release_fn: ReleaseFn,
    spec: AttackSpec,
    *,
    other_fn: ReleaseFn | None = None,
    fraction: float = DEFAULT_FRACTION,
    sample: int | None = DEFAULT_SAMPLE,
    rng: RngLike = None,
) -> Shadow:
    """Run ``release_fn`` on a random part of ``raw`` and hold out the rest.

    Parameters
    ----------
    raw : pandas.DataFrame
        Every record. Not modified.
    release_fn : callable
        Takes the records to release and returns the release (see :data:`ReleaseFn`).
    spec : AttackSpec
        Its ``synthetic`` flag says whether released rows are records.
    other_fn : callable, optional
        A second release of the same records (for the intersection attack).
    fraction : float, default 0.8
        Share of the records released; the others are the control.
    sample : int or None, default 10 000
        At most this many records are released (None: no cap).
    rng : None, int or numpy.random.Generator
        Draws the split.

    Returns
    -------
    Shadow
    """
    if not isinstance(raw, pd.DataFrame):
        raise DataTypeError(f"raw: must be a pandas DataFrame, got {type(raw).__name__}")
    for name, fn in (("release_fn", release_fn), ("other_fn", other_fn)):
        if fn is not None and not callable(fn):
            raise ParameterError(f"{name}: must be a function that releases a frame")
    size = _check_share(fraction, sample, len(raw))
    generator = resolve_rng(rng, stacklevel=3)
    # The records are labelled by position, so a raw index with repeated labels still
    # traces every released row to one record.
    records = raw.set_axis(pd.RangeIndex(len(raw)), axis=0)
    order = generator.permutation(len(raw))
    train = records.iloc[np.sort(order[:size])]
    control = records.iloc[np.sort(order[size:])]
    start = time.perf_counter()
    # Each function gets a frame of its own, free to change it.
    release = as_shadow_release(release_fn(train.copy()), train, spec)
    other = (
        None
        if other_fn is None
        else as_shadow_release(other_fn(train.copy()), train, spec, "other_fn")
    )
    return Shadow(train, control, release, other, time.perf_counter() - start)
