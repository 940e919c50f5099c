"""The JSON Schema of release plans: what editors check plan files with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from veil.cli import main
from veil.release import plan_schema

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "veil" / "release" / "examples"


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = plan_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("name", ["adult", "location"])
def test_the_example_plans_follow_the_schema(
    validator: jsonschema.Draft202012Validator, name: str
) -> None:
    plan = yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text(encoding="utf-8"))
    assert list(validator.iter_errors(plan)) == []


def _shorthands() -> dict[str, Any]:
    return {
        "input": {"path": "people.csv"},
        "columns": {
            "name": {"role": "identifier", "treatment": "drop"},
            "age": {"role": "quasi_identifier", "treatment": {"laplace": {"bounds": [16, 100]}}},
            "zip": {"role": "quasi_identifier", "treatment": "keep"},
            "town": {
                "role": "quasi_identifier",
                "treatment": {"method": "generalize", "hierarchy": "town.csv", "sep": ";",
                              "level": 1},
            },
            "job": {"role": "sensitive", "treatment": {"method": "generalize", "hierarchy": "*",
                                                       "level": 1}},
        },
        "locations": [{"lat": "la", "lon": "lo", "centre": [43.36, -5.85], "mask": "grid"}],
        "anonymization": {
            "quasi_identifiers": {"zip": {"mask": 2}},
            "models": [{"k_anonymity": 5}, {"distinct_l_diversity": {"attribute": "job", "l": 2}}],
        },
        "budget": {"ldp": {"epsilon": 1.0}},
    }  # fmt: skip


def test_the_shorthands_load_plan_accepts_are_in_the_schema(
    validator: jsonschema.Draft202012Validator,
) -> None:
    assert list(validator.iter_errors(_shorthands())) == []


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("columns", "age", "treatment", "laplace", "epsilo"), 1.0),
        (("colums",), {}),
        (("columns", "age", "role"), "quasi_identifer"),
        (("budget", "allocation"), "greedy"),
    ],
)
def test_the_schema_refuses_what_load_plan_refuses(
    validator: jsonschema.Draft202012Validator, path: tuple[str, ...], value: Any
) -> None:
    plan = _shorthands()
    node = plan
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    assert list(validator.iter_errors(plan))


def test_veil_release_prints_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["release", "--schema"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["title"] == "veil release plan"
    assert "ColumnSpec" in printed["$defs"]
    assert main(["release"]) == 2
    assert "PLAN: required" in capsys.readouterr().err
