"""Hierarchies written in the plan: recipes, their values, missing values and errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from veil.release import PlanError, load_plan, run
from veil.release.engine import DaskEngine
from veil.release.hierarchies import HierarchySpec


def _spec(value: Any) -> HierarchySpec:
    return HierarchySpec.model_validate(value)


@pytest.mark.parametrize(
    ("recipe", "values", "level", "expected"),
    [
        (
            {"intervals": {"widths": [5, 10]}},
            [17, 23, 39],
            1,
            ["[15, 20)", "[20, 25)", "[35, 40)"],
        ),
        (
            {"intervals": {"widths": [5, 10]}},
            [17, 23, 39],
            2,
            ["[10, 20)", "[20, 30)", "[30, 40)"],
        ),
        (
            {"intervals": {"bounds": [18, 65]}},
            [3, 18, 64, 70],
            1,
            ["<18", "[18, 65)", "[18, 65)", ">=65"],
        ),
        (
            {"intervals": {"bounds": [[0, 18, 30, 65], [0, 65]]}},
            [20, 40, 70],
            2,
            ["[0, 65)", "[0, 65)", ">=65"],
        ),
        ({"mask": 2}, ["33012", "33015"], 2, ["330**", "330**"]),
        ({"mask": {"steps": 1, "char": "x"}}, ["4301"], 1, ["430x"]),
        ({"dates": True}, ["2024-03-15", "2023-12-01"], 1, ["2024-03", "2023-12"]),
        ("*", ["a", "b"], 1, ["*", "*"]),
        (
            {"mapping": [{"Married": "Couple", "Divorced": "Alone", "Widowed": "Alone"}]},
            ["Married", "Widowed"],
            1,
            ["Couple", "Alone"],
        ),
    ],
)
def test_each_recipe_labels_values_by_its_rule(
    recipe: Any, values: list[Any], level: int, expected: list[str]
) -> None:
    hierarchy = _spec(recipe).load("h", values)
    assert hierarchy.generalize(pd.Series(values), level).tolist() == expected
    assert set(hierarchy.labels(hierarchy.levels - 1)) == {"*"}


def test_a_recipe_labels_a_value_alike_whatever_else_is_present() -> None:
    spec = _spec({"intervals": {"widths": [10]}})
    one = spec.load("h", [12, 97]).generalize(pd.Series([12]), 1).tolist()
    other = spec.load("h", [12, 13, 55]).generalize(pd.Series([12]), 1).tolist()
    assert one == other == ["[10, 20)"]


def test_declared_values_are_the_recipes_domain() -> None:
    spec = _spec({"suppress": True, "values": ["a", "b", "c"]})
    assert not spec.needs_values
    assert spec.load("h").values.tolist() == ["a", "b", "c"]


def test_missing_values_keep_their_own_label_below_the_top() -> None:
    hierarchy = _spec({"intervals": {"widths": [10]}}).load("h", [12.0, np.nan, 25.0])
    generalized = hierarchy.generalize(pd.Series([np.nan, 12.0]), 1).tolist()
    assert generalized == ["nan", "[10, 20)"]


@pytest.mark.parametrize(
    ("recipe", "message"),
    [
        ({"intervals": {"widths": [5], "bounds": [1]}}, "give one of widths"),
        ({"intervals": {"bounds": [5, 1]}}, "bounds must increase"),
        ({"intervals": {"bounds": [[0, 10], [0, 5]]}}, "must keep only points of the previous"),
        ({"intervals": {"bounds": [0, 10], "lower": 0}}, "lower and upper go with widths"),
        ({"mask": 2, "dates": True}, "give exactly one of path, intervals, mask"),
        ({"path": "x.csv", "values": [1]}, "values is for a recipe"),
        ({"suppress": True, "sep": ";"}, "sep is for a path"),
    ],
)
def test_a_bad_recipe_names_what_is_wrong(recipe: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _spec(recipe)


def _people(tmp_path: Path) -> Path:
    gen = np.random.default_rng(4)
    n = 2000
    ages = gen.integers(18, 90, n).astype(float)
    ages[:20] = np.nan  # read as float: the hierarchy is written with integers
    frame = pd.DataFrame(
        {
            "age": ages,
            "zip": gen.choice(["33012", "33015", "33021", "33024"], n),
            "diagnosis": gen.choice(["a", "b", "c"], n),
        }
    )
    frame.to_csv(tmp_path / "people.csv", index=False)
    return tmp_path / "people.csv"


def _plan(source: Path, age: Any, zip_code: Any) -> dict[str, Any]:
    return {
        "input": {"path": str(source)},
        "columns": {
            "age": {"role": "quasi_identifier", "treatment": "keep"},
            "zip": {"role": "quasi_identifier", "treatment": "keep"},
            "diagnosis": {"role": "sensitive", "treatment": "keep"},
        },
        "anonymization": {
            "quasi_identifiers": {"age": age, "zip": zip_code},
            "models": [{"k_anonymity": 10}],
            "max_suppression": 0.02,
        },
        "output": {"report": False},
    }


def test_an_anonymization_with_recipes_matches_the_same_hierarchies_as_files(
    tmp_path: Path,
) -> None:
    source = _people(tmp_path)
    ages = [*range(18, 90)]
    lines = [f"{a},{a // 5 * 5}-{a // 5 * 5 + 4},{a // 10 * 10}-{a // 10 * 10 + 9},*" for a in ages]
    (tmp_path / "age.csv").write_text("\n".join([*lines, "nan,nan,nan,*"]) + "\n")
    zips = ["33012", "33015", "33021", "33024"]
    (tmp_path / "zip.csv").write_text("".join(f"{z},{z[:4]}*,{z[:3]}**,*\n" for z in zips))
    files = run(_plan(source, str(tmp_path / "age.csv"), str(tmp_path / "zip.csv")),
                tmp_path / "files", rng=1)  # fmt: skip
    recipe = _plan(source, {"intervals": {"widths": [5, 10], "labels": "a-b"}}, {"mask": 2})
    inline = run(recipe, tmp_path / "inline", rng=1)
    on_dask = run(recipe, tmp_path / "dask", rng=1, engine=DaskEngine("threads", npartitions=3))
    levels = files.manifest["anonymization"]["levels"]
    assert levels["age"] > 0  # the search had to generalize
    for result in (inline, on_dask):
        assert result.manifest["anonymization"]["levels"] == levels
        assert result.rows_out == files.rows_out
    assert "intervals" in inline.manifest["plan"]["anonymization"]["quasi_identifiers"]["age"]


def test_a_generalize_treatment_with_a_recipe_keeps_missing_values_missing(
    tmp_path: Path,
) -> None:
    source = _people(tmp_path)
    plan = {
        "input": {"path": str(source)},
        "columns": {
            "age": {
                "role": "quasi_identifier",
                "treatment": {
                    "method": "generalize",
                    "hierarchy": {"intervals": {"bounds": [30, 60]}},
                    "level": 1,
                },
            },
            "zip": {"role": "quasi_identifier", "treatment": {"method": "generalize",
                                                               "hierarchy": {"mask": 1},
                                                               "level": 1}},
            "diagnosis": {"role": "sensitive", "treatment": "keep"},
        },
        "output": {"report": False},
    }  # fmt: skip
    for engine in ("pandas", DaskEngine("threads", npartitions=4)):
        released = run(plan, tmp_path / str(id(engine)), rng=2, engine=engine).read_release()
        assert set(released["age"].dropna()) == {"<30", "[30, 60)", ">=60"}
        assert released["age"].isna().sum() == 20
        assert set(released["zip"]) == {"3301*", "3302*"}


def test_a_recipe_over_text_names_the_plan_field(tmp_path: Path) -> None:
    source = _people(tmp_path)
    plan = _plan(source, {"intervals": {"widths": [5]}}, {"mask": 1})
    plan["anonymization"]["quasi_identifiers"]["diagnosis"] = {"intervals": {"widths": [5]}}
    plan["columns"]["diagnosis"]["role"] = "quasi_identifier"
    with pytest.raises(PlanError, match=r"anonymization.quasi_identifiers.diagnosis: "):
        run(plan, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_file_and_its_separator_stay_as_before(tmp_path: Path) -> None:
    plan = load_plan(
        {
            "input": {"dataset": "adult"},
            "columns": {
                "age": {
                    "role": "quasi_identifier",
                    "treatment": {"method": "generalize", "hierarchy": "h.csv", "sep": ";",
                                  "level": 1},
                }
            },
            "unlisted": "drop",
        },
        base_dir=tmp_path,
    )  # fmt: skip
    hierarchy = plan.columns["age"].treatment.hierarchy  # type: ignore[union-attr]
    assert hierarchy.path == tmp_path / "h.csv" and hierarchy.sep == ";"


def test_a_hierarchy_file_that_is_not_utf8_names_its_plan_field(tmp_path: Path) -> None:
    source = _people(tmp_path)
    (tmp_path / "zip.csv").write_bytes("33012,Gij\xf3n,*\n".encode("latin-1"))
    plan = _plan(source, {"intervals": {"widths": [5]}}, str(tmp_path / "zip.csv"))
    with pytest.raises(
        PlanError, match=r"anonymization.quasi_identifiers.zip: 'zip.csv' is not UTF-8 text"
    ):
        run(plan, tmp_path / "out")
    missing = _plan(source, {"intervals": {"widths": [5]}}, str(tmp_path / "none.csv"))
    with pytest.raises(PlanError, match=r"anonymization.quasi_identifiers.zip: cannot read"):
        run(missing, tmp_path / "out")
    assert not (tmp_path / "out").exists()
