"""Seeded releases stay byte for byte what they were: the runner's refactorings change no output.

Each case is a plan (the shipped examples, the plans of ``benchmarks/bench_release.py`` on
a small generated table, and a plan with every keyed and geo step), run with a fixed seed
on pandas and on Dask. The release file's SHA-256, its size, its columns and its first
lines were recorded by the runner as it was before the pipeline redesign, in
``tests/release/data/identity.json``; a run must reproduce them exactly.

The fixtures are written again only on purpose, when a change of output is intended and
explained in its commit: ``VEIL_WRITE_IDENTITY=1 pytest tests/release/test_release_identity.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from veil.release import load_plan, run
from veil.release.engine import DaskEngine

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "veil" / "release" / "examples"
FIXTURES = Path(__file__).resolve().parent / "data" / "identity.json"
SEED = 20261201
PANDAS_MAJOR = pd.__version__.split(".", 1)[0]

# The generated table of benchmarks/bench_release.py, small.
CENTRE = (40.4168, -3.7038)
REGIONS = [f"R{i:02d}" for i in range(1, 51)]
# Fixed test keys (hex of 32 bytes): keyed outputs are reproducible only with a fixed key.
HMAC_KEY = hashlib.sha256(b"veil identity test: hmac").hexdigest()
FF1_KEY = hashlib.sha256(b"veil identity test: ff1").hexdigest()


def _people(rows: int = 3000) -> pd.DataFrame:
    gen = np.random.Generator(np.random.PCG64(7))
    region = np.asarray(REGIONS, dtype=object)[gen.integers(0, len(REGIONS), rows)]
    return pd.DataFrame(
        {
            "name": [f"person {i}" for i in range(rows)],
            "ssn": [f"{n:09d}" for n in gen.integers(0, 10**9, rows)],
            "phone": [f"+34 6{n:08d}" for n in gen.integers(0, 10**8, rows)],
            "age": gen.integers(16, 101, rows),
            "region": region,
            "sex": np.asarray(["Female", "Male"], dtype=object)[gen.integers(0, 2, rows)],
            "income": np.round(gen.lognormal(np.log(30_000.0), 0.8, rows), 2),
            "lat": CENTRE[0] + gen.normal(0.0, 0.05, rows),
            "lon": CENTRE[1] + gen.normal(0.0, 0.05, rows),
            "lat2": CENTRE[0] + gen.normal(0.0, 0.05, rows),
            "lon2": CENTRE[1] + gen.normal(0.0, 0.05, rows),
        }
    )


def _age_bands(folder: Path) -> str:
    lines = []
    for age in range(16, 101):
        bands = [f"{age // w * w}-{age // w * w + w - 1}" for w in (5, 10, 20)]
        lines.append(",".join([str(age), *bands, "*"]))
    (folder / "age.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return "age.csv"


def _regions(folder: Path) -> str:
    lines = [f"{r},M{(i % 10):02d},*" for i, r in enumerate(REGIONS)]
    (folder / "region.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return "region.csv"


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _bench_rows(folder: Path) -> Path:
    """benchmarks/bench_release.py's ``rows`` plan."""
    return _write(
        folder,
        "rows.yaml",
        f"""\
        input: {{path: people.csv, columns: [age, region, sex, income, lat, lon]}}
        columns:
          age: {{role: quasi_identifier, treatment: {{method: laplace, bounds: [16, 100]}}}}
          sex: {{role: quasi_identifier,
                treatment: {{method: randomized_response, domain: [Female, Male]}}}}
          region: {{role: quasi_identifier,
                   treatment: {{method: randomized_response, domain: {REGIONS}}}}}
          income: {{role: sensitive, treatment: {{method: laplace, bounds: [0, 200000]}}}}
        locations:
          - {{lat: lat, lon: lon, centre: [{CENTRE[0]}, {CENTRE[1]}],
             mask: {{method: planar_laplace, epsilon: 0.01}}}}
        budget: {{ldp: {{epsilon: 4.0}}, metric: {{epsilon: 0.01}}, allocation: equal}}
        output: {{report: false}}
        """,
    )


def _bench_kanon(folder: Path) -> Path:
    """benchmarks/bench_release.py's ``kanon`` plan."""
    return _write(
        folder,
        "kanon.yaml",
        f"""\
        input: {{path: people.csv, columns: [age, region, sex, income, lat, lon]}}
        columns:
          age: {{role: quasi_identifier, treatment: keep}}
          sex: {{role: quasi_identifier, treatment: keep}}
          region: {{role: quasi_identifier, treatment: keep}}
          income: {{role: sensitive,
                   treatment: {{method: laplace, epsilon: 1.0, bounds: [0, 200000]}}}}
        locations:
          - {{lat: lat, lon: lon, centre: [{CENTRE[0]}, {CENTRE[1]}],
             mask: {{method: planar_laplace, epsilon: 0.01}}}}
        anonymization:
          quasi_identifiers:
            age: {{path: {_age_bands(folder)}}}
            region: {{path: {_regions(folder)}}}
            sex: {{path: sex.csv}}
          models: [{{model: k_anonymity, k: 10}}]
          max_suppression: 0.0
        budget: {{ldp: {{epsilon: 1.0}}, metric: {{epsilon: 0.01}}}}
        output: {{report: false}}
        """,
    )


def _keyed(folder: Path) -> Path:
    """Keyed pseudonyms, FF1, redaction, generalization, noise and two geo masks."""
    key = folder / "hmac.key"
    key.write_text(HMAC_KEY, encoding="utf-8")
    key.chmod(0o600)
    return _write(
        folder,
        "keyed.yaml",
        f"""\
        input: {{path: people.csv}}
        columns:
          name: {{role: identifier, treatment: {{method: hmac, key_file: hmac.key, length: 16}}}}
          ssn: {{role: identifier, treatment: {{method: ff1, key_env: VEIL_IDENTITY_FF1,
                                               alphabet: "0123456789"}}}}
          phone: {{role: identifier, treatment: redact}}
          age: {{role: quasi_identifier,
                treatment: {{method: gaussian, epsilon: 1.0, delta: 1.0e-6, bounds: [16, 100],
                             calibration: analytic}}}}
          region: {{role: quasi_identifier,
                   treatment: {{method: generalize, hierarchy: {_regions(folder)}, level: 1}}}}
          sex: {{role: quasi_identifier,
                treatment: {{method: exponential, epsilon: 0.5, domain: [Female, Male]}}}}
          income: {{role: sensitive, treatment: drop}}
        locations:
          - {{lat: lat, lon: lon, centre: [{CENTRE[0]}, {CENTRE[1]}],
             mask: {{method: donut, r_min_m: 50, r_max_m: 300}}}}
          - {{lat: lat2, lon: lon2, centre: [{CENTRE[0]}, {CENTRE[1]}],
             mask: {{method: cloak, k: 5}}}}
        budget: {{ldp: {{epsilon: 1.5, delta: 1.0e-6}}}}
        output: {{report: false}}
        """,
    )


def _example(name: str) -> Callable[[Path], Any]:
    def plan(_folder: Path) -> Any:
        loaded = load_plan(EXAMPLES / f"{name}.yaml")
        output = loaded.output.model_copy(update={"report": False})
        return loaded.model_copy(update={"output": output})

    return plan


CASES: dict[str, Callable[[Path], Any]] = {
    "example-adult": _example("adult"),
    "example-location": _example("location"),
    "bench-rows": _bench_rows,
    "bench-kanon": _bench_kanon,
    "keyed": _keyed,
}
ENGINES = {
    "pandas": lambda: "pandas",
    "dask": lambda: DaskEngine("threads", npartitions=3),
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("identity")
    _people().to_csv(folder / "people.csv", index=False)
    (folder / "sex.csv").write_text("Female,*\nMale,*\n", encoding="utf-8")
    return folder


def _fingerprint(path: Path) -> dict[str, Any]:
    data = path.read_bytes()
    lines = data.decode("utf-8").splitlines()
    return {
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
        "lines": len(lines),
        "head": lines[:4],
    }


def _stored() -> dict[str, Any]:
    if not FIXTURES.exists():
        return {}
    stored: dict[str, Any] = json.loads(FIXTURES.read_text(encoding="utf-8"))
    return stored


@pytest.mark.filterwarnings("ignore::veil.errors.ReproducibleNoiseWarning")
@pytest.mark.filterwarnings("ignore::veil.errors.PrivacyLeakWarning")
@pytest.mark.parametrize("engine", sorted(ENGINES))
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_seeded_release_is_what_it_was(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str, engine: str
) -> None:
    monkeypatch.setenv("VEIL_IDENTITY_FF1", FF1_KEY)
    plan = CASES[case](project)
    out = tmp_path / "out"
    result = run(plan, out, rng=SEED, engine=ENGINES[engine]())
    assert result.release_path is not None
    found = _fingerprint(result.release_path)
    key = f"pandas{PANDAS_MAJOR}/{case}/{engine}"
    stored = _stored()
    if os.environ.get("VEIL_WRITE_IDENTITY") == "1":
        stored[key] = found
        FIXTURES.parent.mkdir(parents=True, exist_ok=True)
        FIXTURES.write_text(json.dumps(stored, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    assert key in stored, f"no fixture for {key}: see this module's docstring"
    assert found == stored[key]
