"""The attacked records: the inputs every attack checks, and the targets it draws.

Every attack takes the same four inputs: ``raw``, the records the release was made from;
``release``; ``spec``; and ``control``, records of the same population that the release was
not made from (held out, or the rest of a shadow release's records). Targets are drawn
without replacement with the caller's generator.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil.attacks.encoding import Encoded, encode
from veil.attacks.result import BaselineKind
from veil.attacks.spec import AttackSpec, Release, as_release
from veil.attacks.stats import Rate, rate
from veil.errors import ParameterError
from veil.rng import RngLike, resolve_rng

__all__ = ["Inputs", "check_count", "check_inputs", "control_baseline", "sample_rows"]


def check_count(value: object, name: str, low: int = 1) -> int:
    """An integer parameter of at least ``low``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ParameterError(f"{name}: must be an integer >= {low}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class Inputs:
    """An attack's checked inputs and its generator."""

    raw: pd.DataFrame
    release: Release
    spec: AttackSpec
    control: pd.DataFrame | None
    rng: np.random.Generator

    def released(self, columns: Iterable[str]) -> list[str]:
        """The columns among ``columns`` that the release holds (a plan may drop some)."""
        held = set(self.release.frame.columns)
        return [c for c in columns if c in held]

    def encode(self, columns: Sequence[str], *targets: pd.DataFrame) -> Encoded:
        """The release and the attacker's views of ``targets``, encoded on one scale."""
        views = [self.release.view(t, columns, self.spec.locations) for t in targets]
        return encode(columns, [self.release.frame, *views])


def check_inputs(
    raw: pd.DataFrame,
    release: pd.DataFrame | Release,
    spec: AttackSpec,
    control: pd.DataFrame | None,
    rng: RngLike,
) -> Inputs:
    """Check an attack's inputs: frames with the spec's columns, a release with rows."""
    if not isinstance(spec, AttackSpec):
        raise ParameterError(f"spec: must be a veil.attacks.AttackSpec, got {type(spec).__name__}")
    spec.check(raw, "raw")
    if len(raw) == 0:
        raise ParameterError("raw: holds no records to attack")
    checked = as_release(release)
    if len(checked.frame) == 0:
        raise ParameterError("release: holds no rows to attack with")
    if control is not None:
        spec.check(control, "control")
        if len(control) == 0:
            control = None
    return Inputs(raw, checked, spec, control, resolve_rng(rng, stacklevel=4))


def sample_rows(frame: pd.DataFrame, n: int, rng: np.random.Generator) -> pd.DataFrame:
    """``n`` rows of ``frame`` drawn without replacement (all of them when it has fewer)."""
    if len(frame) <= n:
        return frame
    return frame.iloc[np.sort(rng.choice(len(frame), size=n, replace=False))]


def control_baseline(
    inputs: Inputs,
    n_attacks: int,
    attack: Callable[[pd.DataFrame], npt.NDArray[np.bool_]],
    without: Rate,
) -> tuple[Rate, BaselineKind]:
    """The attack's success on ``n_attacks`` control records, or ``without`` when there are
    none (a chance rate)."""
    if inputs.control is None:
        return without, "chance"
    held_out = sample_rows(inputs.control, n_attacks, inputs.rng)
    return rate(float(np.count_nonzero(attack(held_out))), len(held_out)), "control"
