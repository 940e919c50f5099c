"""marginal_tvd: the k-way marginal distance the synthesizers are judged by."""

from __future__ import annotations

import pandas as pd
import pytest

from veil.errors import ParameterError
from veil.synth import TableDomain, marginal_tvd

_DOMAIN = TableDomain.from_dict(
    {"a": ["x", "y"], "b": ["u", "v"], "n": {"bounds": [0, 4], "bins": 2}}
)


def test_identical_tables_are_at_zero_and_disjoint_ones_at_one() -> None:
    a = pd.DataFrame({"a": ["x", "y"], "b": ["u", "v"], "n": [0, 4]})
    assert marginal_tvd(_DOMAIN, a, a) == 0.0
    b = pd.DataFrame({"a": ["y", "x"], "b": ["u", "v"], "n": [0, 4]})
    assert marginal_tvd(_DOMAIN, a, a.iloc[::-1]) == 0.0
    # One-way: a's shares are equal in both; 2-way (a, b) and (a, n) fully disjoint.
    assert marginal_tvd(_DOMAIN, a, b, way=1) == 0.0
    assert marginal_tvd(_DOMAIN, a, b, way=2) == pytest.approx((1 + 1 + 0) / 3)


def test_a_worked_example() -> None:
    a = pd.DataFrame({"a": ["x", "x", "x", "y"], "b": ["u"] * 4, "n": [1] * 4})
    b = pd.DataFrame({"a": ["x", "y"], "b": ["u", "u"], "n": [1, 1]})
    # Column a: 0.5 * (|0.75 - 0.5| + |0.25 - 0.5|) = 0.25; b and n agree.
    assert marginal_tvd(_DOMAIN, a, b, way=1) == pytest.approx(0.25 / 3)


def test_bad_requests_are_refused() -> None:
    a = pd.DataFrame({"a": ["x"], "b": ["u"], "n": [1]})
    with pytest.raises(ParameterError, match=r"^way: must be an integer in \[1, 3\]"):
        marginal_tvd(_DOMAIN, a, a, way=4)
    with pytest.raises(ParameterError, match="both tables need rows"):
        marginal_tvd(_DOMAIN, a, a.iloc[:0])
