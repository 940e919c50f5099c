"""Tests for the error and warning hierarchy (veil.errors)."""

from __future__ import annotations

import pytest

from veil.errors import (
    ColumnError,
    DataTypeError,
    DomainError,
    MissingValueError,
    ParameterError,
    PrivacyLeakWarning,
    PrivacyWarning,
    ReproducibleNoiseWarning,
    VeilError,
)


@pytest.mark.parametrize(
    "error", [ParameterError, ColumnError, DomainError, MissingValueError, DataTypeError]
)
def test_every_error_is_a_veil_error_and_a_value_error(error: type[Exception]) -> None:
    # trasgoDP users catch ValueError; veil users catch VeilError: both must work.
    assert issubclass(error, VeilError)
    assert issubclass(error, ValueError)
    with pytest.raises(VeilError):
        raise error("x")
    with pytest.raises(ValueError):
        raise error("x")


def test_parameter_error_is_caught_as_value_error_with_its_message() -> None:
    with pytest.raises(ValueError, match=r"epsilon: must be > 0"):
        raise ParameterError("epsilon: must be > 0")


def test_data_type_error_is_also_a_type_error() -> None:
    assert issubclass(DataTypeError, TypeError)
    with pytest.raises(TypeError):
        raise DataTypeError("column 'age': dtype object")


def test_value_errors_are_not_type_errors() -> None:
    for error in (ParameterError, ColumnError, DomainError, MissingValueError):
        assert not issubclass(error, TypeError)


def test_veil_error_is_an_exception_not_a_warning() -> None:
    assert issubclass(VeilError, Exception)
    assert not issubclass(VeilError, Warning)


def test_warning_hierarchy() -> None:
    assert issubclass(PrivacyWarning, UserWarning)
    assert issubclass(PrivacyLeakWarning, PrivacyWarning)
    assert issubclass(ReproducibleNoiseWarning, PrivacyWarning)
    assert not issubclass(ReproducibleNoiseWarning, PrivacyLeakWarning)
    assert not issubclass(PrivacyLeakWarning, ReproducibleNoiseWarning)


def test_privacy_warnings_are_caught_by_their_base_class() -> None:
    with pytest.warns(PrivacyWarning):
        import warnings

        warnings.warn("bounds derived from data", PrivacyLeakWarning, stacklevel=1)
