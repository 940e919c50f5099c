"""Object string columns are encoded by object identity first, then by value.

``veil.frames.factorize_objects`` hashes the objects' addresses (a repeated value is
usually one shared object); every caller then maps the distinct objects by value. These
tests pin that the codes never depend on the sharing: equal strings held by distinct
objects, and missing values, encode as they would value by value.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from veil.anonymity import Hierarchy
from veil.errors import DomainError, PrivacyLeakWarning
from veil.frames import factorize_objects
from veil.ldp import dp_randomized_response_kary
from veil.ldp._column import categorical_input

VALUES = ["beta", "alpha", "gamma", "alpha", "beta", "beta", "gamma", "alpha"]
DOMAIN = ["alpha", "beta", "gamma"]


def _unshared(values: list[str]) -> np.ndarray:
    """The values as an object array whose every entry is its own string object."""
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        out[i] = (v + "#")[:-1]  # a new object, equal to v
    assert len({id(x) for x in out}) == len(values)
    return out


def _shared(values: list[str]) -> np.ndarray:
    objects = {v: v for v in values}
    return np.array([objects[v] for v in values], dtype=object)


def test_factorize_objects_codes_by_identity_and_returns_one_object_per_code() -> None:
    values = _shared(VALUES)
    codes, objects = factorize_objects(values)
    assert len(objects) == 3
    np.testing.assert_array_equal(objects[codes], values)
    empty_codes, empty_objects = factorize_objects(np.array([], dtype=object))
    assert empty_codes.size == 0 and empty_objects.size == 0


@pytest.mark.parametrize("build", [_shared, _unshared], ids=["shared", "unshared"])
def test_declared_domain_codes_do_not_depend_on_sharing(build: object) -> None:
    values = build(VALUES)  # type: ignore[operator]
    column = categorical_input(
        pd.Series(values, dtype=object), name="x", domain=DOMAIN, missing="error", mechanism="RR"
    )
    np.testing.assert_array_equal(column.codes, [1, 0, 2, 0, 1, 1, 2, 0])


@pytest.mark.parametrize("build", [_shared, _unshared], ids=["shared", "unshared"])
def test_inferred_domain_is_the_sorted_distinct_values(build: object) -> None:
    values = build(VALUES)  # type: ignore[operator]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        column = categorical_input(
            pd.Series(values, dtype=object), name="x", domain=None, missing="error", mechanism="RR"
        )
    assert column.categories.tolist() == DOMAIN
    np.testing.assert_array_equal(column.codes, [1, 0, 2, 0, 1, 1, 2, 0])


def test_missing_objects_stay_missing_and_unknown_values_are_refused() -> None:
    values = np.array(["a", None, "b", np.nan, "a"], dtype=object)
    column = categorical_input(
        pd.Series(values, dtype=object), name="x", domain=["a", "b"], missing="keep", mechanism="RR"
    )
    np.testing.assert_array_equal(column.codes, [0, -1, 1, -1, 0])
    assert column.missing is not None and column.missing.tolist() == [
        False,
        True,
        False,
        True,
        False,
    ]
    with pytest.raises(DomainError, match="'z'"):
        categorical_input(
            pd.Series(np.array(["a", "z"], dtype=object), dtype=object),
            name="x",
            domain=["a", "b"],
            missing="error",
            mechanism="RR",
        )


def test_mechanism_output_for_a_seed_does_not_depend_on_sharing() -> None:
    frame_shared = pd.DataFrame({"x": pd.Series(_shared(VALUES * 50), dtype=object)})
    frame_unshared = pd.DataFrame({"x": pd.Series(_unshared(VALUES * 50), dtype=object)})
    a = dp_randomized_response_kary(frame_shared, "x", 1.0, domain=DOMAIN, rng=3)
    b = dp_randomized_response_kary(frame_unshared, "x", 1.0, domain=DOMAIN, rng=3)
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize("build", [_shared, _unshared], ids=["shared", "unshared"])
def test_hierarchy_encoding_does_not_depend_on_sharing(build: object) -> None:
    hierarchy = Hierarchy.from_frame(pd.DataFrame({"0": DOMAIN, "1": ["*"] * 3}))
    values = build(VALUES)  # type: ignore[operator]
    np.testing.assert_array_equal(
        hierarchy.encode(pd.Series(values, dtype=object)), [1, 0, 2, 0, 1, 1, 2, 0]
    )
