"""Errors and warnings raised by veil.

Every error is a :class:`VeilError`; each subclass also derives from the built-in
exception a caller would catch for the same mistake (``ValueError`` for a bad value,
``TypeError`` for a bad type, ``KeyError`` semantics are expressed as ``ValueError``
so that trasgoDP users catching ``ValueError`` keep working).
"""

from __future__ import annotations

__all__ = [
    "ColumnError",
    "DataTypeError",
    "DisclosureRiskError",
    "DomainError",
    "MissingValueError",
    "ParameterError",
    "PrivacyLeakWarning",
    "PrivacyWarning",
    "ReproducibleNoiseWarning",
    "SearchBudgetWarning",
    "VeilError",
]


class VeilError(Exception):
    """Base class of every error raised by veil."""


class ParameterError(VeilError, ValueError):
    """A parameter is outside its allowed range (the message names it and the range)."""


class ColumnError(VeilError, ValueError):
    """A column named by the caller is absent from the data."""


class DomainError(VeilError, ValueError):
    """Data holds values outside the declared (public) domain or bounds."""


class MissingValueError(VeilError, ValueError):
    """Data holds missing values and the missing-value policy is ``"error"``."""


class DataTypeError(VeilError, ValueError, TypeError):
    """A column or array has a dtype the operation cannot handle.

    It is both a ``ValueError`` (what trasgoDP raises for a wrong column type) and a
    ``TypeError``.
    """


class DisclosureRiskError(VeilError):
    """Columns meant to be released exactly would single people out (a refused release).

    The exception carries the assessment that led to the refusal as ``details`` (or
    ``None``), so that the caller can show every reading.
    """

    def __init__(self, message: str, details: object = None) -> None:
        super().__init__(message)
        self.details = details


class PrivacyWarning(UserWarning):
    """Something weakens the privacy guarantee the caller may expect."""


class PrivacyLeakWarning(PrivacyWarning):
    """A public parameter (bounds, domain) was derived from the private data itself.

    The stated guarantee does not hold for the derived parameter: its value depends on
    the records (a category seen once reveals that its holder is in the data).
    """


class ReproducibleNoiseWarning(PrivacyWarning):
    """Noise comes from an explicit seed: anyone who knows the seed can remove it."""


class SearchBudgetWarning(UserWarning):
    """A search stopped at its time limit: the result is not proven optimal."""
