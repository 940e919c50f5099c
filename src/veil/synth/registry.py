"""Synthesizers by name, so that a plan can say ``synthesizer: mst`` without a switch.

A new synthesizer (the DP-WGAN, for example) adds one entry to :data:`SYNTHESIZERS`.
"""

from __future__ import annotations

import inspect
from typing import Any

from veil.errors import ParameterError
from veil.synth.base import Synthesizer
from veil.synth.gan import DPWGAN
from veil.synth.independent import IndependentMarginals
from veil.synth.marginal import AIM, MST

__all__ = ["SYNTHESIZERS", "make_synthesizer"]

SYNTHESIZERS: dict[str, type[Synthesizer]] = {
    "mst": MST,
    "aim": AIM,
    "independent": IndependentMarginals,
    "dpwgan": DPWGAN,
}
"""Every synthesizer veil knows, by the name a plan gives it."""


def make_synthesizer(name: str, **settings: Any) -> Synthesizer:
    """The synthesizer called ``name``, built with ``settings`` (its keyword arguments).

    Raises
    ------
    veil.errors.ParameterError
        For an unknown name or setting (the message lists the allowed ones), or a
        setting outside its range.

    Examples
    --------
    >>> from veil.synth import make_synthesizer
    >>> make_synthesizer("aim", rounds=20).rounds
    20
    """
    if name not in SYNTHESIZERS:
        raise ParameterError(f"synthesizer: {name!r} is unknown; allowed: {sorted(SYNTHESIZERS)}")
    cls = SYNTHESIZERS[name]
    allowed = [
        p.name
        for p in inspect.signature(cls.__init__).parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    ]
    unknown = sorted(set(settings) - set(allowed))
    if unknown:
        raise ParameterError(
            f"synthesizer settings: {unknown} are not settings of {name!r}; allowed: {allowed}"
        )
    return cls(**settings)
