"""The platform reads a plan's text as ``veil release`` reads a plan file.

Issue 18, defects 8 and 9: PyYAML's ``safe_load`` keeps the last of two equal keys,
recurses into a stack overflow on deep nesting, and reads ``1e-6`` as text. The platform
reads plan text with :func:`veil.release.plan_yaml.read_plan_text`, so a plan typed
into the platform is refused (or accepted) exactly as the same file is by the command
line: the refusal is the library's message, naming the line, and nothing is stored.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from veil.release import PlanError
from veil.release.plan_yaml import MAX_DEPTH, read_plan_text

from .conftest import PLAN, Site, adult_csv, upload_profiled

_DUPLICATE = PLAN.replace(
    "  salary-class:", "  age: {role: insensitive, treatment: keep}\n  salary-class:"
)
_DEEP = PLAN + "output: " + "[" * 5000 + "]" * 5000 + "\n"
_HUGE = PLAN.replace("epsilon: 2.0", "epsilon: " + "9" * 400)


def _library_message(text: str) -> str:
    with pytest.raises(PlanError) as refused:
        read_plan_text(text)
    return str(refused.value)


@pytest.fixture
def dataset(sqlite_site: Site) -> int:
    return upload_profiled(sqlite_site, sqlite_site.login("carol"), adult_csv(300))


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (_DUPLICATE, "duplicate key 'age' (first at line 3)"),
        (_DEEP, f"nested more than {MAX_DEPTH} levels deep"),
        (_HUGE, "an integer of 400 digits"),
        (PLAN + "\x00", "unacceptable character #x0000"),
    ],
    ids=["duplicate key", "nested 5000 deep", "400-digit number", "NUL character"],
)
def test_a_plan_text_the_command_line_refuses_is_refused_alike_and_nothing_stored(
    sqlite_site: Site, dataset: int, text: str, said: str
) -> None:
    carol = sqlite_site.login("carol")
    started = time.monotonic()
    refused = carol.post(f"/api/datasets/{dataset}/plans", json={"name": "p", "text": text})
    assert time.monotonic() - started < 10
    assert refused.status_code == 422, refused.text
    error: dict[str, Any] = refused.json()["error"]
    assert error["field"] == "plan"
    assert said in error["message"]
    assert error["message"] == _library_message(text)
    assert "\n" not in error["message"]  # one line
    assert "9" * 40 not in refused.text  # a huge number is not echoed
    assert carol.get(f"/api/datasets/{dataset}").json()["plans"] == []
    # The preview (nothing stored either way) reads the text the same way.
    preview = carol.post(f"/api/datasets/{dataset}/plans/preview", json={"text": text})
    assert preview.status_code == 422 and said in preview.json()["error"]["message"]


def test_an_exponent_without_a_dot_is_a_number_as_in_veil_release(
    sqlite_site: Site, dataset: int
) -> None:
    # YAML 1.1 (safe_load) reads 1e-6 as the text '1e-6', which a number field refuses.
    text = PLAN.replace("ldp: {epsilon: 2.0}", "ldp: {epsilon: 2e0, delta: 1e-6}")
    assert read_plan_text(text)["budget"]["ldp"] == {"epsilon": 2.0, "delta": 1e-6}
    carol = sqlite_site.login("carol")
    made = carol.post(f"/api/datasets/{dataset}/plans", json={"name": "p", "text": text})
    assert made.status_code == 201, made.text
    latest = carol.get(f"/api/plans/{made.json()['plan']}").json()["latest"]
    assert latest["text"] == text
    # The run reads the stored text with the same reader.
    job = carol.post(f"/api/plans/{made.json()['plan']}/versions/1/jobs", json={"kind": "run"})
    assert job.status_code == 201, job.text
    assert sqlite_site.work() == ["done"]
