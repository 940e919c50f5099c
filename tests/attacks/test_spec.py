"""The attack spec and the release description: checks, views and recoders."""

from __future__ import annotations

import pandas as pd
import pytest

from veil.attacks import AttackSpec, Location, Release
from veil.attacks.spec import as_release
from veil.errors import ColumnError, DataTypeError, ParameterError


def test_spec_keeps_the_roles_in_order() -> None:
    spec = AttackSpec(["age", "zip"], sensitive=["disease"], exact=["zip", "visits"])
    assert spec.quasi_identifiers == ("age", "zip")
    assert spec.tabular == ("age", "zip", "visits", "disease")
    assert AttackSpec(["a"], locations=[Location("y", "x")]).coordinates == ("y", "x")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"quasi_identifiers": "age"}, "quasi_identifiers: must be a list"),
        ({"quasi_identifiers": ["age", "age"]}, "names column 'age' twice"),
        ({"quasi_identifiers": ["age", ""]}, "non-empty strings"),
        ({"quasi_identifiers": ["age"], "sensitive": ["age"]}, "also listed as quasi"),
        ({"quasi_identifiers": ["a"], "locations": [("y", "x")]}, "list of Location"),
        (
            {"quasi_identifiers": ["y"], "locations": [Location("y", "x")]},
            "named twice",
        ),
        ({"quasi_identifiers": ["a"], "link_split": (["a"], [])}, "at least one column"),
        ({"quasi_identifiers": ["a"], "link_split": (["a"], ["a"])}, "on both sides"),
        ({"quasi_identifiers": ["a"], "link_split": ["a"]}, "two lists"),
        ({"quasi_identifiers": ["a"], "synthetic": "yes"}, "synthetic"),
    ],
)
def test_spec_refuses_bad_fields(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ParameterError, match=message):
        AttackSpec(**kwargs)  # type: ignore[arg-type]


def test_location_refuses_one_column_twice() -> None:
    with pytest.raises(ParameterError, match="one column"):
        Location("lat", "lat")


def test_spec_check_names_the_missing_column() -> None:
    spec = AttackSpec(["age"], sensitive=["income"])
    with pytest.raises(ColumnError, match="raw: has no column 'income'"):
        spec.check(pd.DataFrame({"age": [1]}))
    with pytest.raises(DataTypeError, match="raw: must be a pandas DataFrame"):
        spec.check([1, 2])  # type: ignore[arg-type]


def test_release_source_must_name_each_row_once() -> None:
    frame = pd.DataFrame({"a": [1, 2]})
    with pytest.raises(ParameterError, match="2 rows"):
        Release(frame, source=pd.Index([0]))
    with pytest.raises(ParameterError, match="two released rows"):
        Release(frame, source=pd.Index([0, 0]))
    with pytest.raises(DataTypeError, match="release: must be a pandas DataFrame"):
        as_release([1])  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match=r"release\.recode"):
        Release(frame, recode={"a": 3})  # type: ignore[dict-item]


def test_view_applies_the_public_recoders_and_leaves_raw_alone() -> None:
    raw = pd.DataFrame({"age": [23, 47], "zip": ["47677", "47602"]})
    before = raw.copy()
    release = Release(
        pd.DataFrame({"age": ["[20-30)", "[40-50)"], "zip": ["476**", "476**"]}),
        recode={
            "age": lambda s: (
                "[" + (s // 10 * 10).astype(str) + "-" + (s // 10 * 10 + 10).astype(str) + ")"
            )
        },
    )
    view = release.view(raw, ["age", "zip"])
    assert view["age"].tolist() == ["[20-30)", "[40-50)"]
    assert view["zip"].tolist() == ["47677", "47602"]
    pd.testing.assert_frame_equal(raw, before)


def test_a_recoder_that_returns_the_wrong_shape_is_named() -> None:
    release = Release(pd.DataFrame({"age": [1]}), recode={"age": lambda s: s.iloc[:0]})
    with pytest.raises(ParameterError, match=r"release.recode\['age'\]: must return a Series of 1"):
        release.view(pd.DataFrame({"age": [3]}), ["age"])
    cells = Release(pd.DataFrame({"y": [1.0], "x": [2.0]}), cells={("y", "x"): lambda f: f[["y"]]})
    with pytest.raises(ParameterError, match=r"release.cells\['y/x'\]"):
        cells.cell_view(pd.DataFrame({"y": [1.0], "x": [2.0]}), Location("y", "x"))
