"""Every attack on one release, in one call: :func:`run_battery`.

Given a release function (a plan's runner), the battery makes a shadow release
(:mod:`veil.attacks.shadow`) and attacks it with the held-out records as control; given a
release already made, it attacks that one, with control records if the caller has them.
Each attack draws from its own child generator, so adding one does not change the others'
draws.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from veil.attacks.inference import inference
from veil.attacks.intersection import intersection
from veil.attacks.linkability import linkability
from veil.attacks.location import location
from veil.attacks.membership import membership
from veil.attacks.result import AttackResult, BatteryResult
from veil.attacks.shadow import (
    DEFAULT_FRACTION,
    DEFAULT_SAMPLE,
    ReleaseFn,
    shadow_release,
)
from veil.attacks.singling_out import singling_out
from veil.attacks.spec import AttackSpec, Release, as_release
from veil.errors import ParameterError
from veil.rng import RngLike, resolve_rng, spawn

__all__ = ["ATTACKS", "run_battery"]

Attack = Callable[..., tuple[AttackResult, ...]]

ATTACKS: Mapping[str, Attack] = {
    "singling_out": singling_out,
    "linkability": linkability,
    "inference": inference,
    "location": location,
    "membership": membership,
    "intersection": intersection,
}
"""The attacks by name, in the order the battery runs them."""

LABELS: Mapping[str, str] = {
    "singling_out": "Singling out",
    "linkability": "Linkability",
    "inference": "Attribute inference",
    "location": "Location re-identification",
    "membership": "Membership inference",
    "intersection": "Intersection of two releases",
}
"""Each attack's name in words, as reports and pages show it."""


def _why_not(
    name: str,
    spec: AttackSpec,
    release: Release,
    control: pd.DataFrame | None,
    other: Release | None,
) -> str | None:
    """Why an attack does not apply to this release (None when it does)."""
    if name == "inference" and not spec.sensitive:
        return "the spec names no sensitive column"
    if name == "location" and not spec.locations:
        return "the spec names no location"
    if name == "location" and spec.synthetic:
        return "synthetic rows are nobody's records"
    if name == "location" and release.source is None:
        return "the release does not say which record each row came from (release.source)"
    if name == "membership" and control is None:
        return "no control records (pass a release function or control=)"
    if name == "intersection" and other is None:
        return (
            "no second release of these records to join (veil attack RAW RELEASE --other "
            "OTHER, or other= in veil.attacks)"
        )
    return None


def _chosen(attacks: Sequence[str] | None, spec: AttackSpec, has_other: bool) -> list[str]:
    if attacks is None:
        chosen = ["singling_out", "linkability", "inference", "location"]
        chosen += ["membership"] if spec.synthetic else []
        chosen += ["intersection"] if has_other else []
        return chosen
    if isinstance(attacks, str) or not all(isinstance(a, str) for a in attacks):
        raise ParameterError(f"attacks: must be a list of attack names, got {attacks!r}")
    unknown = [a for a in attacks if a not in ATTACKS]
    if unknown:
        raise ParameterError(f"attacks: unknown {unknown}; allowed: {', '.join(ATTACKS)}")
    return [a for a in ATTACKS if a in attacks]


def _check_options(options: Mapping[str, Mapping[str, Any]] | None) -> dict[str, dict[str, Any]]:
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ParameterError(f"options: must map attack names to settings, got {options!r}")
    out: dict[str, dict[str, Any]] = {}
    for name, settings in options.items():
        if name not in ATTACKS or not isinstance(settings, Mapping):
            raise ParameterError(
                f"options: {name!r} must be an attack ({', '.join(ATTACKS)}) mapped to its settings"
            )
        reserved = {"rng", "other"} & set(settings)
        if reserved:
            raise ParameterError(f"options[{name!r}]: {sorted(reserved)} are set by the battery")
        out[name] = dict(settings)
    return out


def run_battery(
    raw: pd.DataFrame,
    release: ReleaseFn | pd.DataFrame | Release,
    spec: AttackSpec,
    *,
    attacks: Sequence[str] | None = None,
    other: ReleaseFn | pd.DataFrame | Release | None = None,
    control: pd.DataFrame | None = None,
    sample: int | None = DEFAULT_SAMPLE,
    fraction: float = DEFAULT_FRACTION,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    rng: RngLike = None,
) -> BatteryResult:
    """Attack a release with every applicable attack.

    Parameters
    ----------
    raw : pandas.DataFrame
        Every record. Not modified.
    release : callable, pandas.DataFrame or Release
        A release function (see :data:`veil.attacks.shadow.ReleaseFn`): the battery runs
        it on a random part of ``raw`` and attacks that shadow release, with the rest as
        control (never written anywhere). Or a release made from all of ``raw``, attacked
        as it is, with ``control`` as held-out records if there are any.
    spec : AttackSpec
    attacks : sequence of str, optional
        Names from :data:`ATTACKS`. By default: singling out, linkability, inference,
        location, membership for a synthetic release, intersection when ``other`` is given.
        An attack that does not apply is listed in ``skipped`` with the reason.
    other : callable, pandas.DataFrame or Release, optional
        A second release of the same records, for the intersection attack (a function when
        ``release`` is one, run on the same records).
    control : pandas.DataFrame, optional
        Held-out records, for a release given as a frame.
    sample : int or None, default 10 000
        The shadow release holds at most this many records.
    fraction : float, default 0.8
        The share of the records the shadow release holds.
    options : mapping, optional
        Settings per attack, passed to its function (``{"singling_out": {"n_attacks": 1000}}``).
    rng : None, int or numpy.random.Generator
        The split and every attack's draws.

    Returns
    -------
    BatteryResult
    """
    settings = _check_options(options)
    generator = resolve_rng(rng, stacklevel=3)
    seconds: dict[str, float] = {}
    targets: pd.DataFrame = raw
    held_out: pd.DataFrame | None = control
    second: Release | None
    is_shadow = not isinstance(release, (pd.DataFrame, Release))
    if isinstance(release, (pd.DataFrame, Release)):
        attacked = as_release(release)
        if other is not None and not isinstance(other, (pd.DataFrame, Release)):
            raise ParameterError("other: must be a release (a frame) when release is one")
        second = None if other is None else as_release(other, "other")
    else:
        if other is not None and isinstance(other, (pd.DataFrame, Release)):
            raise ParameterError("other: must be a release function when release is one")
        shadow = shadow_release(
            raw, release, spec, other_fn=other, fraction=fraction, sample=sample, rng=generator
        )
        targets, held_out = shadow.train, shadow.control
        attacked, second, seconds["release"] = shadow.release, shadow.other, shadow.seconds
    names = _chosen(attacks, spec, second is not None)
    skipped: dict[str, str] = {}
    results: list[AttackResult] = []
    for name, child in zip(names, spawn(generator, len(names)), strict=True):
        reason = _why_not(name, spec, attacked, held_out, second)
        if reason is not None:
            skipped[name] = reason
            continue
        extra: dict[str, Any] = {"other": second} if name == "intersection" else {}
        start = time.perf_counter()
        results += ATTACKS[name](
            targets, attacked, spec, held_out, rng=child, **extra, **settings.get(name, {})
        )
        seconds[name] = time.perf_counter() - start
    return BatteryResult(
        results=tuple(results),
        shadow=is_shadow,
        n_records=len(raw),
        n_released_records=len(targets),
        n_control=0 if held_out is None else len(held_out),
        seconds=seconds,
        skipped=skipped,
    )
