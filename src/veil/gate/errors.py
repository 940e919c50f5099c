"""The errors the release gate raises: each names the column, file or field, and the fix."""

from __future__ import annotations

from veil.errors import VeilError

__all__ = ["CarrierError", "GateError", "PlacementError"]


class GateError(VeilError, ValueError):
    """An output the gate refuses to let out of veil (nothing is written)."""


class CarrierError(GateError):
    """A column released as it is carries a protected value or singles out records."""


class PlacementError(GateError):
    """A confidential output would be written where public outputs are published."""
