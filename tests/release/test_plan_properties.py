"""Generated plans, valid and broken, never end in a traceback or a hang.

Plans are drawn from the plan's own vocabulary (columns with every treatment, budgets,
anonymization models, locations, output and engine sections), then broken: a value
replaced by one of the wrong type or size (a bool, text, a 400-digit number, an infinite
float, nesting 100 deep, 10 000 characters, key material), a field added or removed, a
key said twice, nesting 5000 deep or an integer of 5000 digits in the YAML text. ``load_plan`` and
``run(dry_run=True)`` must accept the plan or raise a :class:`~veil.errors.VeilError`;
``veil release --dry-run`` must exit 0, 1 or 2 with one ``veil: error:`` line and no
traceback. Hypothesis' deadline bounds each example's time.
"""

from __future__ import annotations

import contextlib
import copy
import datetime
import math
import re
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veil.cli import main
from veil.errors import VeilError
from veil.release import load_plan, run

NAMES = ("age", "sex", "zip", "income", "city", "lat", "lon", "id")
ROLES = ("identifier", "quasi_identifier", "sensitive", "insensitive")

_DEADLINE = datetime.timedelta(seconds=20)
_SETTINGS = {
    "deadline": _DEADLINE,
    "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    "derandomize": True,
}


def _finite() -> st.SearchStrategy[float]:
    return st.floats(min_value=1e-3, max_value=1e3, allow_nan=False, allow_infinity=False)


@st.composite
def treatments(draw: st.DrawFn) -> Any:
    """A treatment as a plan writes it (bare names, mappings, shorthands)."""
    kind = draw(
        st.sampled_from(
            [
                "keep",
                "drop",
                "redact",
                "laplace",
                "gaussian",
                "rr",
                "exponential",
                "generalize",
                "hmac",
                "short",
            ]
        )
    )
    if kind in ("keep", "drop", "redact"):
        return kind
    epsilon = draw(st.none() | _finite())
    if kind in ("laplace", "gaussian", "short"):
        lo = draw(st.integers(-100, 100))
        spec: dict[str, Any] = {"bounds": [lo, lo + draw(st.integers(1, 200))]}
        if epsilon is not None:
            spec["epsilon"] = epsilon
        if kind == "gaussian":
            spec["delta"] = draw(st.sampled_from([1e-6, 1e-3, 0.1]))
        if kind == "short":
            return {"laplace": spec}
        return {"method": kind, **spec}
    if kind in ("rr", "exponential"):
        domain = draw(
            st.lists(st.sampled_from(list("abcdefgh")), min_size=2, max_size=6, unique=True)
        )
        spec = {
            "method": "randomized_response" if kind == "rr" else "exponential",
            "domain": domain,
        }
        if epsilon is not None:
            spec["epsilon"] = epsilon
        return spec
    if kind == "generalize":
        return {"method": "generalize", "hierarchy": {"mask": 2}, "level": draw(st.integers(0, 3))}
    return {"method": "hmac", "key_file": "keys/hmac.key"}


@st.composite
def plans(draw: st.DrawFn) -> dict[str, Any]:
    """A plan that often validates: every section drawn from its vocabulary."""
    names = draw(st.lists(st.sampled_from(NAMES[:5]), min_size=1, max_size=4, unique=True))
    columns = {
        n: {"role": draw(st.sampled_from(ROLES)), "treatment": draw(treatments())} for n in names
    }
    plan: dict[str, Any] = {"input": {"path": "people.csv"}, "columns": columns}
    if draw(st.booleans()):
        plan["budget"] = {
            "ldp": {"epsilon": draw(_finite())},
            "allocation": draw(st.sampled_from(["explicit", "equal", "weights"])),
        }
    if draw(st.booleans()):
        plan["anonymization"] = {
            "quasi_identifiers": {names[0]: draw(st.sampled_from(["*", {"mask": 1}]))},
            "models": draw(
                st.lists(
                    st.sampled_from(
                        [
                            {"k_anonymity": 3},
                            {"distinct_l_diversity": {"attribute": names[-1], "l": 2}},
                            {"t_closeness": {"attribute": names[-1], "t": 0.3}},
                        ]
                    ),
                    min_size=1,
                    max_size=2,
                )
            ),
        }
    if draw(st.booleans()):
        plan["locations"] = [
            {
                "lat": "lat",
                "lon": "lon",
                "centre": [40.7, -74.0],
                "mask": draw(
                    st.sampled_from(
                        [
                            "planar_laplace",
                            {"grid": {"cell_m": 200}},
                            {"method": "planar_laplace", "epsilon": 0.01},
                        ]
                    )
                ),
            }
        ]
        plan["budget"] = {**plan.get("budget", {}), "metric": {"epsilon": 0.01}}
    if draw(st.booleans()):
        plan["output"] = {"format": draw(st.sampled_from(["csv", "parquet"]))}
    if draw(st.booleans()):
        plan["engine"] = draw(st.sampled_from([{"name": "pandas"}, {"name": "dask"}]))
    return plan


def _deep(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


BAD_VALUES = st.one_of(
    st.sampled_from([True, False, None]),
    st.sampled_from(["", " ", "1", "yes", "true", "1e-6", "x" * 10_000, "\x00", "line\nbreak"]),
    st.sampled_from(["c0ffee00" * 8, "base64:" + "A" * 43, "../../../etc/passwd", "/dev/zero"]),
    st.sampled_from([10**400, -(10**5000), 10**4301, 2**63, -(2**63) - 1]),
    st.sampled_from([math.inf, -math.inf, math.nan, 1e308, -1e308, 5e-324, -0.0]),
    st.integers(-3, 3),
    # Containers are built afresh for each example: a later mutation never reaches the pool.
    st.sampled_from(
        [
            list,
            lambda: [1],
            lambda: [-1e308, 1e308],
            lambda: [1e308, -1e308],
            lambda: ["a", "a"],
            lambda: [[1, 2]],
            dict,
            lambda: {"method": "nope"},
            lambda: {"k_anonymity": True},
            lambda: _deep(100),
            lambda: _deep(5000),
        ]
    ).map(lambda build: build()),
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value in a plan (mapping keys and list indices), 12 levels deep."""
    found = [prefix] if prefix else []
    if len(prefix) >= 12:
        return found
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += _paths(value, (*prefix, i))
    return found


@st.composite
def broken_plans(draw: st.DrawFn) -> dict[str, Any]:
    """A plan with one to three values replaced, fields added or removed."""
    plan = copy.deepcopy(draw(plans()))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(plan)))
        *parents, last = path
        node: Any = plan
        for part in parents:
            node = node[part]
        action = draw(st.sampled_from(["replace", "replace", "add", "remove"]))
        if action == "replace":
            node[last] = draw(BAD_VALUES)
        elif action == "add" and isinstance(node, dict):
            node[draw(st.sampled_from(["epsilon", "k", "bounds", "extra", "key", "l", "path"]))] = (
                draw(BAD_VALUES)
            )
        elif action == "remove" and isinstance(node, dict) and last in node:
            del node[last]
    return plan


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "people.csv").write_text("age,sex,zip,income,city,lat,lon\n", encoding="utf-8")
    return tmp_path


def _library(plan: Any, folder: Path) -> None:
    """Load and dry-run ``plan``: a VeilError is the only failure allowed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # privacy warnings are answers, not failures
        warnings.simplefilter("error", RuntimeWarning)  # numbers gone wrong are not
        try:
            loaded = load_plan(plan, base_dir=folder)
            run(loaded, dry_run=True)
        except VeilError as exc:
            assert str(exc).strip(), "an error without a message"


@settings(max_examples=150, **_SETTINGS)
@given(plan=plans())
def test_generated_plans_validate_or_say_why(plan: dict[str, Any], folder: Path) -> None:
    _library(plan, folder)


@settings(max_examples=250, **_SETTINGS)
@given(plan=broken_plans())
def test_broken_plans_end_in_a_veil_error(plan: dict[str, Any], folder: Path) -> None:
    _library(plan, folder)


def _yaml(plan: dict[str, Any]) -> str:
    # Values YAML cannot hold as text (a huge integer) are written by hand below.
    return yaml.safe_dump(plan, sort_keys=False, allow_unicode=True, width=10_000)


@st.composite
def broken_texts(draw: st.DrawFn) -> str:
    """A plan's YAML broken as text: a line said twice, deep nesting, a huge literal;
    half of them from a plan with broken values already."""
    plan = draw(plans())
    text = _yaml(plan)
    if draw(st.booleans()):
        # A value YAML cannot write (5000 digits, 5000 levels) keeps the plan as drawn;
        # the "digits" and "deep" actions write those by hand.
        with contextlib.suppress(ValueError, RecursionError):
            text = _yaml(draw(broken_plans()))
    lines = text.splitlines()
    action = draw(st.sampled_from(["duplicate", "deep", "digits", "tabs", "cut", "none"]))
    if action == "duplicate":
        i = draw(st.integers(0, len(lines) - 1))
        lines.insert(i, lines[i])
    elif action == "deep":
        depth = draw(st.sampled_from([63, 64, 65, 500, 5000]))
        lines.append("name: " + "[" * depth + "]" * depth)
    elif action == "digits":
        digits = draw(st.sampled_from([300, 309, 310, 400, 5000]))
        lines = [re.sub(r"epsilon: [0-9.e+-]+", "epsilon: " + "7" * digits, ln) for ln in lines]
        lines.append("name: " + "1" * digits)
    elif action == "tabs":
        lines = [ln.replace("  ", "\t", 1) for ln in lines]
    elif action == "cut":
        lines = lines[: draw(st.integers(0, len(lines)))]
    return "\n".join(lines) + "\n"


@settings(max_examples=80, **_SETTINGS)
@given(text=broken_texts())
def test_veil_release_dry_run_answers_in_one_line(
    text: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = folder / "plan.yaml"
    plan.write_text(text, encoding="utf-8")
    capsys.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(["release", str(plan), "--dry-run"])  # a traceback would raise here
    err = capsys.readouterr().err
    assert code in (0, 1, 2), err
    assert "Traceback" not in err
    if code == 2:
        errors = [ln for ln in err.splitlines() if ln.startswith("veil: error:")]
        assert len(errors) == 1, err
    _library_text(text, folder)


def _library_text(text: str, folder: Path) -> None:
    plan = folder / "plan.yaml"
    plan.write_text(text, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            run(plan, dry_run=True)
        except VeilError as exc:
            assert str(exc).strip()
