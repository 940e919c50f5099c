"""Errors of release plans and runs."""

from __future__ import annotations

from veil.errors import VeilError

__all__ = ["BudgetError", "LedgerMismatchError", "PlanError"]


class PlanError(VeilError, ValueError):
    """A release plan is invalid; the message names each field path and what is allowed."""


class BudgetError(PlanError):
    """The plan's privacy costs exceed its declared budget (refused before reading data)."""


class LedgerMismatchError(VeilError, RuntimeError):
    """A step recorded a different privacy cost from the one planned; nothing is written."""
