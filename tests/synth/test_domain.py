"""TableDomain: public categories, bounds and bins; coverage and missing-value checks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.errors import (
    ColumnError,
    DataTypeError,
    DomainError,
    MissingValueError,
    ParameterError,
    PrivacyLeakWarning,
)
from veil.synth import CategoricalColumn, NumericColumn, TableDomain


def test_from_dict_reads_categories_bounds_and_bins() -> None:
    domain = TableDomain.from_dict(
        {
            "sex": ["Female", "Male"],
            "work": {"values": ["a", "b", "c"], "missing": True},
            "age": {"bounds": [16, 100], "bins": 4, "integer": True},
            "score": {"bounds": [0.0, 1.0], "edges": [0.0, 0.5, 0.9, 1.0]},
        }
    )
    assert domain.names == ("sex", "work", "age", "score")
    assert domain.sizes == {"sex": 2, "work": 4, "age": 4, "score": 3}
    assert domain.leaks == ()
    again = TableDomain.from_dict(domain.to_dict())
    assert again.sizes == domain.sizes
    assert again.columns["age"] == domain.columns["age"]


def test_integer_bins_hold_at_least_one_integer_each() -> None:
    col = NumericColumn.with_bins(16, 100, 4, integer=True)
    lo, hi = col.integer_ranges()
    assert lo[0] == 16 and hi[-1] == 100
    assert np.all(lo <= hi) and np.all(lo[1:] == hi[:-1] + 1)
    assert NumericColumn.with_bins(1, 5, 50, integer=True).bins == 5  # one per integer


def test_encode_maps_values_to_codes_without_touching_the_frame() -> None:
    domain = TableDomain.from_dict(
        {
            "c": ["x", "y"],
            "n": {"bounds": [0, 10], "bins": 2},
            "m": {"values": ["p"], "missing": True},
        }
    )
    df = pd.DataFrame({"c": ["y", "x", "y"], "n": [0.0, 5.0, 10.0], "m": ["p", None, "p"]})
    before = df.copy(deep=True)
    codes = domain.encode(df)
    pd.testing.assert_frame_equal(df, before)
    assert codes["c"].tolist() == [1, 0, 1]
    assert codes["n"].tolist() == [0, 1, 1]  # the upper bound falls in the last bin
    assert codes["m"].tolist() == [0, 1, 0]  # missing is the last code


def test_decode_draws_inside_each_bin() -> None:
    domain = TableDomain.from_dict(
        {
            "age": {"bounds": [16, 100], "bins": 4, "integer": True},
            "f": {"bounds": [0, 1], "bins": 2},
        }
    )
    rng = np.random.default_rng(0)
    codes = {"age": np.repeat(np.arange(4), 500), "f": np.repeat([0, 1], 1000)}
    values = domain.decode(codes, rng)
    lo, hi = domain.columns["age"].integer_ranges()  # type: ignore[union-attr]
    assert values["age"].dtype.kind == "i"
    assert np.all((values["age"] >= lo[codes["age"]]) & (values["age"] <= hi[codes["age"]]))
    assert set(np.unique(values["age"][codes["age"] == 0])) == set(range(lo[0], hi[0] + 1))
    assert np.all((values["f"][:1000] >= 0) & (values["f"][:1000] < 0.5))
    assert np.all((values["f"][1000:] >= 0.5) & (values["f"][1000:] <= 1.0))


def test_a_domain_that_does_not_cover_the_data_is_refused_without_echoing_values() -> None:
    domain = TableDomain.from_dict({"c": ["x", "y"], "n": {"bounds": [0, 10]}})
    with pytest.raises(DomainError, match=r"^c: 1 values are not among its 2") as err:
        domain.encode(pd.DataFrame({"c": ["x", "secret-z"], "n": [1, 2]}))
    assert "secret-z" not in str(err.value)
    with pytest.raises(DomainError, match=r"^n: 2 values fall outside the public bounds \[0, 10\]"):
        domain.encode(pd.DataFrame({"c": ["x", "y"], "n": [-1, 12345]}))


def test_missing_values_need_a_declaration() -> None:
    domain = TableDomain.from_dict({"c": ["x", "y"]})
    with pytest.raises(MissingValueError, match=r"^c: 1 missing values.*missing: true"):
        domain.encode(pd.DataFrame({"c": ["x", None]}))


def test_bad_columns_and_types_name_the_problem() -> None:
    domain = TableDomain.from_dict({"c": ["x"], "n": {"bounds": [0, 1]}})
    with pytest.raises(ColumnError, match=r"lacks the domain columns \['n'\]"):
        domain.encode(pd.DataFrame({"c": ["x"]}))
    with pytest.raises(DataTypeError, match=r"^n: a numeric domain needs a numeric column"):
        domain.encode(pd.DataFrame({"c": ["x"], "n": ["0.5"]}))
    with pytest.raises(ColumnError, match=r"^names: \['zz'\] are not columns of the domain"):
        domain.project(["zz"])


def test_integer_domain_refuses_fractions() -> None:
    domain = TableDomain.from_dict({"n": {"bounds": [0, 10], "integer": True}})
    with pytest.raises(DomainError, match="integer"):
        domain.encode(pd.DataFrame({"n": [1.5]}))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"c": "xy"}, r"domain\['c'\]: must be a list"),
        ({"c": []}, r"^values: must be a non-empty"),
        ({"c": ["x", "x"]}, r"^values: categories must be unique"),
        ({"n": {"bounds": [5, 1]}}, r"^bounds: need lower < upper"),
        ({"n": {"bounds": [0, 1], "bins": 0}}, r"^bins: must be an integer >= 1"),
        ({"n": {"bounds": [0, 1], "edges": [0, 0.5, 0.4, 1]}}, r"^edges: must be strictly"),
        ({"n": {"bounds": [0, 2], "edges": [0, 1]}}, r"^edges: must cover the bounds"),
        ({"n": {"bounds": [0, 1], "color": 1}}, r"unknown keys \['color'\]"),
        ({"n": {"integer": True}}, r"needs 'values' \(categorical\) or 'bounds'"),
        (
            {"n": {"bounds": [0, 3], "edges": [0, 0.2, 0.4, 3], "integer": True}},
            r"holds no integer",
        ),
        ({}, r"^domain: needs at least one column"),
    ],
)
def test_bad_specs_are_refused_with_the_parameter_named(
    spec: dict[str, object], message: str
) -> None:
    with pytest.raises(ParameterError, match=message):
        TableDomain.from_dict(spec)


def test_from_data_warns_and_records_every_leak() -> None:
    df = pd.DataFrame({"c": ["b", "a", None], "n": [3, 7, 5]})
    with pytest.warns(PrivacyLeakWarning, match="not protected"):
        domain = TableDomain.from_data(df)
    assert domain.columns["c"] == CategoricalColumn(("a", "b"), missing=True)
    numeric = domain.columns["n"]
    assert isinstance(numeric, NumericColumn) and (numeric.lower, numeric.upper) == (3.0, 7.0)
    assert numeric.integer
    assert any("bounds [3, 7] read from the data" in leak for leak in domain.leaks)
    assert any("2 categories read from the data" in leak for leak in domain.leaks)
    assert any("missing values read" in leak for leak in domain.leaks)
