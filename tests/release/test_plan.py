"""Release plans: validation errors name the field path, the value and what is allowed."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from veil.errors import VeilError
from veil.release import PlanError, allocate, example_plan, load_plan
from veil.release.plan import (
    ExponentialTreatment,
    HmacTreatment,
    KAnonymitySpec,
    LaplaceTreatment,
    Plan,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "veil" / "release" / "examples"


def _plan(**sections: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "input": {"dataset": "adult"},
        "columns": {
            "age": {
                "role": "quasi_identifier",
                "treatment": {"method": "laplace", "epsilon": 1.0, "bounds": [16, 100]},
            },
            "sex": {"role": "quasi_identifier", "treatment": "keep"},
        },
        "budget": {"ldp": {"epsilon": 2.0}},
    }
    base.update(copy.deepcopy(sections))
    return base


def _error(plan: dict[str, Any]) -> str:
    with pytest.raises(PlanError) as info:
        load_plan(plan)
    return str(info.value)


@pytest.mark.parametrize("name", ["adult", "location"])
def test_example_plans_validate_from_the_source_tree(name: str) -> None:
    plan = load_plan(EXAMPLES / f"{name}.yaml")
    assert isinstance(plan, Plan)
    assert example_plan(name) == EXAMPLES / f"{name}.yaml"


def test_a_valid_plan_parses_shorthand_forms() -> None:
    plan = load_plan(
        _plan(
            columns={
                "age": {
                    "role": "quasi_identifier",
                    "treatment": {"laplace": {"epsilon": 0.5, "bounds": [16, 100]}},
                },
                "education": {"role": "quasi_identifier", "treatment": "keep"},
                "salary-class": {"role": "sensitive", "treatment": "keep"},
                "workclass": {
                    "role": "quasi_identifier",
                    "treatment": {
                        "method": "exponential",
                        "epsilon": 1,
                        "domain": ["a", "b", "c"],
                    },
                },
            },
            anonymization={
                "quasi_identifiers": {"education": "h.csv"},
                "models": [
                    {"k_anonymity": 5},
                    {"distinct_l_diversity": {"attribute": "salary-class", "l": 2}},
                ],
            },
        )
    )
    assert isinstance(plan.columns["age"].treatment, LaplaceTreatment)
    assert isinstance(plan.columns["workclass"].treatment, ExponentialTreatment)
    assert plan.columns["education"].treatment.method == "keep"
    assert plan.anonymization is not None
    assert plan.anonymization.models[0] == KAnonymitySpec(k=5)


@pytest.mark.parametrize(
    ("change", "path", "allowed"),
    [
        (
            {"columns.age.treatment.epsilon": -1},
            "columns.age.treatment.epsilon: ",
            "greater than 0 (got -1)",
        ),
        (
            {"columns.age.treatment.bounds": [100, 16]},
            "columns.age.treatment.bounds: ",
            "lower < upper",
        ),
        (
            {"columns.age.role": "qi"},
            "columns.age.role: ",
            "must be one of identifier, quasi_identifier, sensitive, insensitive (got 'qi'); "
            "did you mean 'quasi_identifier'?",
        ),
        (
            {"columns.age.treatment": "blur"},
            "columns.age.treatment: unknown value 'blur'",
            "allowed: drop, keep, redact, hmac, token, ff1, generalize, laplace, gaussian, "
            "exponential, randomized_response",
        ),
        (
            {"columns.age.treatment.calibration": "x"},
            "columns.age.treatment.calibration: ",
            "unknown field",
        ),
        (
            {"output.format": "xlsx"},
            "output.format: ",
            "must be one of csv, parquet (got 'xlsx')",
        ),
        (
            {"budget.allocation": "greedy"},
            "budget.allocation: ",
            "must be one of explicit, equal, weights, target",
        ),
        (
            {"input.dataset": "census"},
            "input.dataset: ",
            "must be one of adult, nyc_taxi (got 'census')",
        ),
        (
            {"engine.name": "spark"},
            "engine.name: ",
            "must be one of pandas, dask, dask-local (got 'spark')",
        ),
        (
            {"engine.scheduler": "tcp://h:8786"},
            "engine: ",
            "scheduler is only for name 'dask', got name 'pandas'",
        ),
    ],
)
def test_errors_name_the_field_path_and_the_allowed_values(
    change: dict[str, Any], path: str, allowed: str
) -> None:
    plan = _plan()
    for dotted, value in change.items():
        *parents, leaf = dotted.split(".")
        node = plan
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    message = _error(plan)
    assert path in message
    assert allowed in message


def test_every_error_is_reported_at_once() -> None:
    plan = _plan()
    plan["columns"]["age"]["treatment"]["epsilon"] = 0
    plan["columns"]["sex"]["role"] = "gender"
    message = _error(plan)
    assert "2 errors" in message
    assert "columns.age.treatment.epsilon" in message
    assert "columns.sex.role" in message


def test_gaussian_needs_delta_and_names_it() -> None:
    plan = _plan()
    plan["columns"]["age"]["treatment"] = {"method": "gaussian", "epsilon": 1, "bounds": [0, 1]}
    assert "columns.age.treatment.delta: Field required" in _error(plan)


def test_inline_keys_are_refused() -> None:
    plan = _plan()
    plan["columns"]["name"] = {
        "role": "identifier",
        "treatment": {"method": "hmac", "key": "00112233445566778899aabbccddeeff"},
    }
    message = _error(plan)
    assert "columns.name.treatment: inline keys are not allowed" in message
    assert "key_file" in message and "key_env" in message
    assert "00112233" not in message


def test_a_keyed_treatment_needs_exactly_one_key_source() -> None:
    plan = _plan()
    plan["columns"]["name"] = {"role": "identifier", "treatment": {"method": "hmac"}}
    assert "columns.name.treatment: " in _error(plan)
    plan["columns"]["name"]["treatment"] = {
        "method": "hmac",
        "key_env": "K",
        "key_file": "k.key",
    }
    assert "exactly one of key_file or key_env" in _error(plan)


def test_identifiers_cannot_be_kept_or_noised() -> None:
    plan = _plan()
    plan["columns"]["name"] = {"role": "identifier", "treatment": "keep"}
    message = _error(plan)
    assert "columns.name.treatment: an identifier cannot be released with 'keep'" in message
    assert "allowed: drop, redact, hmac, token, ff1" in message


def test_explicit_allocation_gives_a_lone_open_column_the_budget_left() -> None:
    plan = _plan()
    del plan["columns"]["age"]["treatment"]["epsilon"]
    allocated = allocate(load_plan(plan))
    stated = sum(
        getattr(spec.treatment, "epsilon", None) or 0.0
        for name, spec in allocated.columns.items()
        if name != "age"
    )
    eps = allocated.columns["age"].treatment.epsilon  # type: ignore[union-attr]
    assert eps == pytest.approx(plan["budget"]["ldp"]["epsilon"] - stated)
    # Two open columns, or no declared budget, still need their epsilons.
    plan["columns"]["income"] = {
        "role": "sensitive",
        "treatment": {"method": "laplace", "bounds": [0, 10]},
    }
    message = _error(plan)
    assert "columns.age.treatment.epsilon: required with budget.allocation 'explicit' when 2" in (
        message
    )
    assert "set budget.allocation to equal or weights" in message
    plan["budget"]["allocation"] = "equal"
    assert load_plan(plan).columns["age"].treatment.epsilon is None  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("change", "line"),
    [
        (
            {"columns.age.treatment.method": "pseudonymize"},
            "did you mean 'hmac'?",
        ),
        ({"columns.age.treatment.method": "noise"}, "did you mean 'laplace'?"),
        ({"columns.age.treatment.epsilo": 1.0}, "did you mean 'epsilon'?"),
        ({"columns.age.treatment.bound": [0, 1]}, "did you mean 'bounds'?"),
        ({"budget.allocaton": "equal"}, "budget.allocaton: unknown field; allowed: ldp, metric"),
    ],
)
def test_a_mistake_gets_a_suggestion(change: dict[str, Any], line: str) -> None:
    plan = _plan()
    for path, value in change.items():
        *parents, last = path.split(".")
        node = plan
        for part in parents:
            node = node[part]
        node[last] = value
    assert line in _error(plan)


def test_a_pasted_key_is_never_echoed() -> None:
    key = "d1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4"
    for path in ("columns.age.treatment", "columns.age.treatment.method", "columns.age.role"):
        plan = _plan()
        *parents, last = path.split(".")
        node = plan
        for part in parents:
            node = node[part]
        node[last] = key
        message = _error(plan)
        assert key not in message and key[:12] not in message


def test_anonymization_must_refer_to_kept_columns() -> None:
    plan = _plan(
        anonymization={
            "quasi_identifiers": {"age": "h.csv", "zip": "z.csv"},
            "models": [{"t_closeness": {"attribute": "sex", "t": 1.5}}],
        }
    )
    message = _error(plan)
    assert "anonymization.models.0.t_closeness.t: " in message
    plan["anonymization"]["models"] = [{"t_closeness": {"attribute": "income", "t": 0.2}}]
    message = _error(plan)
    assert "anonymization.quasi_identifiers.age: its column treatment must be 'keep'" in message
    assert "anonymization.quasi_identifiers.zip: not in columns" in message
    assert "anonymization.models.0.t_closeness.attribute: 'income' must be a released" in message


def test_location_masks_are_validated() -> None:
    plan = _plan(
        locations=[
            {"lat": "a", "lon": "b", "mask": {"method": "donut", "r_min_m": 50, "r_max_m": 10}},
            {"lat": "c", "lon": "d", "mask": {"method": "teleport"}},
            {"lat": "e", "lon": "f", "mask": "grid", "centre": [91, 0]},
        ]
    )
    message = _error(plan)
    assert "locations.0.mask: r_min_m (50) must be below r_max_m (10)" in message
    assert "locations.1.mask: unknown value 'teleport'" in message
    assert "allowed: planar_laplace, grid, jitter, donut, cloak" in message
    assert "locations.2.mask.cell_m: Field required" in message
    assert "locations.2.centre: " in message


def test_location_columns_are_not_also_plain_columns() -> None:
    plan = _plan(
        locations=[
            {
                "lat": "age",
                "lon": "lon",
                "centre": [40.75, -73.98],
                "mask": {"method": "planar_laplace", "epsilon": 0.01},
            }
        ]
    )
    assert "locations.0: column 'age' is also in columns" in _error(plan)


def test_input_needs_exactly_one_source_and_a_known_format() -> None:
    assert "input: give exactly one of" in _error(_plan(input={}))
    assert "input: cannot tell the format of 'data.xls'" in _error(
        _plan(input={"path": "data.xls"})
    )


def test_output_file_is_a_plain_name() -> None:
    message = _error(_plan(output={"file": "../x.csv"}))
    assert "output.file: must be a plain file name" in message
    assert "output.file: " in _error(_plan(output={"file": "manifest.json"}))


def test_evaluation_target_must_be_released() -> None:
    message = _error(_plan(evaluation={"target": "salary"}))
    assert "evaluation.target: 'salary' is not in columns" in message


def test_relative_paths_are_taken_from_the_plan_file(tmp_path: Path) -> None:
    folder = tmp_path / "plans"
    folder.mkdir()
    (folder / "plan.yaml").write_text(
        "input: {path: data/in.csv}\n"
        "columns:\n"
        "  id: {role: identifier, treatment: {method: hmac, key_file: keys/id.key}}\n",
        encoding="utf-8",
    )
    plan = load_plan(folder / "plan.yaml")
    assert plan.input.path == folder / "data" / "in.csv"
    treatment = plan.columns["id"].treatment
    assert isinstance(treatment, HmacTreatment)
    assert treatment.key_file == folder / "keys" / "id.key"


def test_missing_or_malformed_files_are_plan_errors(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="does not exist"):
        load_plan(tmp_path / "absent.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("input: [unclosed\n", encoding="utf-8")
    with pytest.raises(PlanError, match="not valid YAML"):
        load_plan(bad)
    bad.write_text("- just a list\n", encoding="utf-8")
    with pytest.raises(PlanError, match="must be a mapping"):
        load_plan(bad)


def test_plan_error_is_a_veil_value_error() -> None:
    assert issubclass(PlanError, VeilError)
    assert issubclass(PlanError, ValueError)


def test_unknown_example_lists_the_available_ones() -> None:
    with pytest.raises(PlanError, match=r"available: \['adult', 'location'\]"):
        example_plan("census")


def test_categorical_domains_are_unique_lists() -> None:
    plan = _plan()
    plan["columns"]["sex"]["treatment"] = {
        "method": "randomized_response",
        "epsilon": 1,
        "domain": ["F", "M", "F"],
    }
    assert "columns.sex.treatment.domain: categories must be unique, repeated: ['F']" in (
        _error(plan)
    )
    plan["columns"]["sex"]["treatment"]["domain"] = ["F"]
    assert "columns.sex.treatment.domain: List should have at least 2 items" in _error(plan)


def test_the_documented_plan_validates() -> None:
    import yaml

    from veil.release import plan as plan_module

    assert plan_module.__doc__ is not None
    block = plan_module.__doc__.split("A small plan::\n\n")[1].split("\n\nShorthands")[0]
    text = "\n".join(line[4:] for line in block.splitlines())
    plan = load_plan(yaml.safe_load(text))
    assert list(plan.columns) == ["name", "age", "sex", "zip", "income"]
    assert plan.budget.allocation == "equal"
