"""schemathesis against the platform's OpenAPI schema (``/api/openapi.json``).

Every API operation is called with generated path parameters and bodies, signed in as
a curator who owns a dataset, a plan, a job and a release (so generated ids hit real
objects as well as missing ones), with valid and with invalid (negative) inputs.
Bounded so CI stays fast: five derandomized examples per operation and mode. The
strategies are driven by hand (schemathesis' pytest fixture loader does not run
under pytest 9). The properties: the schema is a valid OpenAPI
document; no call gets a 5xx; every refusal is a JSON error that names its field.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from .conftest import Site, _site, release_flow

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    site = _site(tmp_path_factory.mktemp("schema"), None)
    release_flow(site, publish=False)
    yield site
    site.platform.db.dispose()


@pytest.fixture(scope="module")
def curator(fuzzed: Site) -> TestClient:
    return fuzzed.login("carol")


_EXAMPLES = 5
# Signing out would end the session the other operations use; logins are rate limited
# and have their own tests (tests/server/test_security.py).
_SKIPPED = {"/api/logout", "/api/login"}


def _check(case: Any, curator: TestClient) -> None:
    headers = {"X-CSRF-Token": curator.headers["X-CSRF-Token"]}
    response = case.call(headers=headers, cookies=dict(curator.cookies))
    where = (case.method, case.formatted_path, response.status_code)
    assert response.status_code < 500, (where, response.text)
    if response.status_code >= 400:
        error = response.json()["error"]
        assert error["message"], where
        assert error["field"] in error["message"], where


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_no_operation_fails_or_answers_without_naming_the_field(
    fuzzed: Site, curator: TestClient, mode: GenerationMode
) -> None:
    schema = schemathesis.openapi.from_asgi("/api/openapi.json", fuzzed.app)
    called = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        if operation.path in _SKIPPED:
            continue

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(
            max_examples=_EXAMPLES,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def call(case: Any) -> None:
            _check(case, curator)

        try:
            call()
        except Unsatisfiable:
            # An operation with nothing to make invalid (no parameters, an open body).
            assert mode is GenerationMode.NEGATIVE, operation.path
            continue
        called += 1
    assert called >= (30 if mode is GenerationMode.POSITIVE else 10)


def test_the_schema_is_valid_openapi_with_every_path_parameter(
    fuzzed: Site, tmp_path: Path
) -> None:
    document = TestClient(fuzzed.app).get("/api/openapi.json").json()
    assert document["openapi"].startswith("3.")
    for path, operations in document["paths"].items():
        for operation in operations.values():
            declared = {p["name"] for p in operation.get("parameters", [])}
            named = {part[1:-1].split(":")[0] for part in path.split("/") if part.startswith("{")}
            assert named == declared, path
