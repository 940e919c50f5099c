"""The release runner: end-to-end runs, the manifest, secrets, atomic outputs, engines."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import secrets
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import veil.ldp
from veil.errors import ReproducibleNoiseWarning
from veil.release import LedgerMismatchError, PlanError, RunResult, load_plan, run
from veil.release.engine import DaskEngine, PandasEngine
from veil.release.progress import Reporter
from veil.release.steps.base import Step

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "veil" / "release" / "examples"

MANIFEST_FIELDS = {
    "confidentiality",
    "veil_version",
    "created",
    "plan",
    "engine",
    "randomness",
    "steps",
    "totals",
    "ledger_check",
    "not_protected",
    "leaks",
    "release",
    "warnings",
    "outputs",
    "risk",
}
CUSTODIAN_FIELDS = {
    "confidentiality",
    "input",
    "randomness",
    "risk",
    "warnings",
    "timings_s",
    "execution",
    "outputs",
}


def _snapshot(folder: Path) -> dict[str, bytes]:
    """The files of ``folder`` (a staging folder counts, with no content)."""
    return {p.name: p.read_bytes() if p.is_file() else b"" for p in sorted(folder.iterdir())}


def _no_report(plan: Any) -> Any:
    loaded = load_plan(plan)
    return loaded.model_copy(update={"output": loaded.output.model_copy(update={"report": False})})


# ---------------------------------------------------------------- the Adult example


@pytest.fixture(scope="module")
def adult_release(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunResult]:
    out = tmp_path_factory.mktemp("adult")
    yield run(EXAMPLES / "adult.yaml", out)


def test_adult_example_runs_end_to_end(adult_release: RunResult) -> None:
    out = adult_release.out_dir
    assert out is not None
    assert sorted(p.name for p in out.iterdir()) == ["adult_release.csv", "manifest.json"]
    # The confidential files go to a folder beside the release folder, never inside it.
    assert adult_release.custodian_dir == out.resolve().parent / f"{out.name}.custodian"
    assert sorted(p.name for p in adult_release.custodian_dir.iterdir()) == [
        "custodian.json",
        "report.html",
    ]
    released = pd.read_csv(out / "adult_release.csv")
    assert adult_release.rows_in == 32561
    assert len(released) == adult_release.rows_out
    # At most 2% of the records are suppressed by the anonymization.
    assert 0.98 * 32561 <= len(released) <= 32561
    for dropped in ("fnlwgt", "education-num", "relationship", "capital-gain", "capital-loss"):
        assert dropped not in released.columns
    assert released["age"].between(16, 100).all()
    # Every quasi-identifier released exactly is in the anonymization: 5-anonymous together.
    sizes = released.groupby(["education", "marital-status", "race", "native-country"]).size()
    assert sizes.min() >= 5
    report = adult_release.custodian_dir / "report.html"
    assert "<html" in report.read_text(encoding="utf-8").lower()


def _section(page: str, heading: str) -> str:
    """The text of one report section (tags stripped)."""
    start = page.index(f"<h2>{heading}</h2>")
    end = page.index("</section>", start)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page[start:end]))


def test_adult_report_pairs_the_kept_records_with_their_originals(
    adult_release: RunResult,
) -> None:
    # Records were suppressed, yet the released rows keep their original labels, so the
    # measures that pair released with original records are computed.
    assert adult_release.rows_out is not None and adult_release.rows_in is not None
    assert adult_release.rows_out < adult_release.rows_in
    assert adult_release.report_path is not None
    page = adult_release.report_path.read_text(encoding="utf-8")
    correlation = _section(page, "Correlation loss")
    ml = _section(page, "Machine-learning utility")
    for text in (correlation, ml):
        assert "not computed" not in text.lower()
        assert "cannot be matched" not in text
    assert re.search(r"correlation loss \(%\) \d+(\.\d+)?", correlation)
    assert re.search(r"accuracy (0\.\d+) (0\.\d+)", ml)
    # The plan's evaluation.metrics leaves out the maps.
    assert "<h2>Locations</h2>" not in page
    # The released file itself is written without the index.
    released = pd.read_csv(adult_release.out_dir / "adult_release.csv")  # type: ignore[operator]
    assert "Unnamed: 0" not in released.columns


def test_adult_example_is_fast_without_the_report(tmp_path: Path) -> None:
    plan = _no_report(EXAMPLES / "adult.yaml")
    # The attack phase is timed by benchmarks/bench_attacks.py, not here.
    plan = plan.model_copy(
        update={"evaluation": plan.evaluation.model_copy(update={"attacks": []})}
    )
    start = time.perf_counter()
    result = run(plan, tmp_path)
    assert time.perf_counter() - start < 5.0
    assert result.report_path is None
    assert not (tmp_path / "report.html").exists()
    assert result.custodian_dir is not None
    assert not (result.custodian_dir / "report.html").exists()


def test_manifest_holds_what_the_release_did(adult_release: RunResult) -> None:
    assert adult_release.manifest_path is not None
    manifest = json.loads(adult_release.manifest_path.read_text(encoding="utf-8"))
    assert manifest == json.loads(json.dumps(adult_release.manifest, default=str))
    assert set(manifest) >= MANIFEST_FIELDS
    assert manifest["confidentiality"].startswith("public")
    assert manifest["plan"]["name"] == "adult-demo"
    assert manifest["format"] == "veil public manifest 2"
    # The plan's public fields and their hash; the plan file (its comments, its folder)
    # is the custodian's.
    assert "plan_file" not in manifest
    canonical = json.dumps(manifest["plan"], sort_keys=True, separators=(",", ":"))
    assert manifest["plan_sha256"] == hashlib.sha256(canonical.encode()).hexdigest()
    assert "input" not in manifest["plan"] or set(manifest["plan"]["input"]) <= {
        "dataset", "format"
    }  # fmt: skip
    assert manifest["engine"] == "pandas"
    assert manifest["randomness"] == {"generator": "secure (AES-CTR keyed from OS entropy)"}
    age = manifest["steps"]["age"]
    assert age["step"] == "laplace"
    assert age["role"] == "quasi_identifier"
    assert age["parameters"]["bounds"] == [16.0, 100.0]
    assert age["cost"]["epsilon"] == pytest.approx(2.0)
    # Every guarantee states its notion, unit and neighbouring relation.
    by_scope = {g["scope"]: g for g in manifest["guarantees"]}
    assert by_scope["age"]["notion"] == "ldp" and by_scope["age"]["unit"] == "record"
    assert "one record" in by_scope["age"]["neighbouring"]
    assert by_scope["table"]["notion"] == "syntactic"
    assert by_scope["table"]["neighbouring"].startswith("none")
    assert manifest["totals"]["ldp"]["epsilon"] == pytest.approx(6.0)
    assert manifest["totals"]["ldp"]["delta"] == pytest.approx(1e-6)
    assert manifest["not_protected"]["columns_kept_as_is"] == ["salary-class"]
    assert manifest["not_protected"]["missingness_released_as_is"] == ["workclass", "occupation"]
    # The records suppressed are counted on the raw table: with the released rows they
    # give its size, so they stay with the custodian.
    assert "suppressed" not in manifest["anonymization"]
    suppressed = adult_release.custodian["anonymization"]["suppressed"]
    assert suppressed == 32561 - adult_release.rows_out
    assert set(manifest["anonymization"]["levels"]) == {
        "education", "marital-status", "race", "native-country"
    }  # fmt: skip
    assert "metrics" not in manifest["anonymization"]
    # Risk after release is a function of the release alone; risk before is not public.
    assert set(manifest["risk"]) == {"after", "computed_on", "not_class_keys"}
    assert manifest["risk"]["after"]["n_records"] == adult_release.rows_out
    # An attacker matches the QIs released exact or generalized; noised ones are no keys.
    noised = manifest["risk"]["not_class_keys"]
    assert set(noised) == {"age", "workclass", "sex"}
    assert manifest["risk"]["after"]["quasi_identifiers"] == [
        "education", "marital-status", "race", "native-country",
    ]  # fmt: skip
    release = manifest["outputs"]["release"]
    data = (adult_release.out_dir / release["file"]).read_bytes()  # type: ignore[operator]
    assert release["sha256"] == hashlib.sha256(data).hexdigest()
    assert manifest["outputs"]["report"].startswith("confidential")
    assert manifest["release"]["row_order"].startswith("shuffled with the CSPRNG")
    # Which warnings fired depends on the raw records: their text and counts are the
    # custodian's.
    assert manifest["warnings"].startswith("in the custodian record")
    assert "RuntimeWarning" not in {w["category"] for w in adult_release.custodian["warnings"]}


def test_custodian_record_holds_what_stays_with_the_custodian(adult_release: RunResult) -> None:
    assert adult_release.custodian_path is not None
    record = json.loads(adult_release.custodian_path.read_text(encoding="utf-8"))
    assert record == json.loads(json.dumps(adult_release.custodian, default=str))
    assert set(record) >= CUSTODIAN_FIELDS
    assert record["confidentiality"].startswith("CONFIDENTIAL")
    assert record["input"]["rows"] == 32561
    assert len(record["input"]["sha256"]) == 64
    assert record["plan_file"]["path"] == str(EXAMPLES / "adult.yaml")
    assert "age: laplace" in record["timings_s"]
    assert "anonymization" in record["timings_s"]
    assert record["execution"]["engine"] == "pandas"
    assert all(note.startswith("in memory") for note in record["execution"]["steps"].values())
    assert record["risk"]["before"]["n_records"] == 32561
    assert set(record["anonymization"]["metrics"]) >= {"loss"}
    report = record["outputs"]["report"]
    page = (adult_release.custodian_dir / "report.html").read_bytes()  # type: ignore[operator]
    assert report["sha256"] == hashlib.sha256(page).hexdigest()
    manifest = adult_release.manifest_path.read_bytes()  # type: ignore[union-attr]
    assert record["outputs"]["manifest"]["sha256"] == hashlib.sha256(manifest).hexdigest()
    assert isinstance(record["warnings"], list)
    assert not any(w["category"] == "RuntimeWarning" for w in record["warnings"])


def test_summary_for_a_terminal(adult_release: RunResult) -> None:
    text = adult_release.summary()
    assert f"released {adult_release.rows_out} of 32561 records" in text
    assert "ldp per record: epsilon=6" in text
    assert "k_anonymity(k=5)" in text


def test_dry_run_reads_and_writes_nothing(tmp_path: Path) -> None:
    plan = {
        "input": {"path": str(tmp_path / "absent.csv")},
        "columns": {
            "age": {
                "role": "quasi_identifier",
                "treatment": {"method": "laplace", "epsilon": 1, "bounds": [0, 100]},
            }
        },
        "budget": {"ldp": {"epsilon": 1}},
    }
    out = tmp_path / "out"
    result = run(plan, out, dry_run=True)
    assert result.dry_run
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    text = result.summary()
    assert "ldp, per record: epsilon=1" in text
    assert "dry run: nothing read or written" in text
    assert run(EXAMPLES / "adult.yaml", dry_run=True).ledger.total("ldp").epsilon == (
        pytest.approx(6.0)
    )


# ------------------------------------------------------------- a keyed CSV release


def _people(n: int = 300) -> pd.DataFrame:
    gen = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "name": [f"person-{i}" for i in range(n)],
            "ssn": [f"{v:09d}" for v in gen.integers(0, 10**9, n)],
            "email": [f"user{i}@example.org" for i in range(n)],
            "phone": [f"+34 600 {i:06d}" for i in range(n)],
            "age": gen.integers(18, 90, n),
            "city": gen.choice(["Oviedo", "Gijon", "Aviles", "Leon"], n),
            "income": gen.choice(["low", "mid", "high"], n),
        }
    )


@pytest.fixture
def keyed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    folder = tmp_path / "project"
    (folder / "keys").mkdir(parents=True)
    (folder / "vault").mkdir()
    _people().to_csv(folder / "people.csv", index=False)
    (folder / "city.csv").write_text(
        "Oviedo,Asturias,*\nGijon,Asturias,*\nAviles,Asturias,*\nLeon,Castilla,*\n",
        encoding="utf-8",
    )
    keys = {name: secrets.token_bytes(32) for name in ("hmac", "ff1", "vault")}
    for name in ("hmac", "vault"):
        key_path = folder / "keys" / f"{name}.key"
        key_path.write_text(keys[name].hex(), encoding="utf-8")
        key_path.chmod(0o600)
    monkeypatch.setenv("VEIL_TEST_FF1_KEY", keys["ff1"].hex())
    plan_text = textwrap.dedent(
        """\
        name: people
        input: {path: people.csv}
        columns:
          name: {role: identifier, treatment: {method: hmac, key_file: keys/hmac.key, length: 16}}
          ssn: {role: identifier, treatment: {method: ff1, key_env: VEIL_TEST_FF1_KEY,
                                             alphabet: "0123456789"}}
          email: {role: identifier, treatment: {method: token, vault: vault/tokens.db,
                                               key_file: keys/vault.key}}
          phone: {role: identifier, treatment: redact}
          age:
            role: quasi_identifier
            treatment: {method: laplace, epsilon: 1.0, bounds: [16, 100]}
          city:
            role: quasi_identifier
            treatment: {method: generalize, hierarchy: city.csv, level: 1}
          income:
            role: sensitive
            treatment: {method: randomized_response, epsilon: 0.5, domain: [low, mid, high]}
        budget: {ldp: {epsilon: 1.5}}
        evaluation: {target: income}
        """
    )
    (folder / "plan.yaml").write_text(plan_text, encoding="utf-8")
    return {"folder": folder, "plan": folder / "plan.yaml", "keys": keys}


def test_no_key_material_in_any_output(keyed: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "release"
    result = run(keyed["plan"], out)
    released = pd.read_csv(out / "release.csv", dtype=str)
    people = _people()
    assert not released["name"].isin(people["name"]).any()
    assert released["name"].str.len().eq(16).all()
    assert released["ssn"].str.fullmatch(r"\d{9}").all()
    assert released["ssn"].isin(people["ssn"]).mean() < 0.01
    assert not released["email"].str.contains("@").any()
    assert (released["phone"] == "[REDACTED]").all()
    assert set(released["city"]) <= {"Asturias", "Castilla"}
    assert result.custodian_dir is not None
    assert (result.custodian_dir / "report.html").exists()
    for key in keyed["keys"].values():
        forms = [
            key,
            key.hex().encode(),
            key.hex().upper().encode(),
            base64.b64encode(key),
            base64.urlsafe_b64encode(key),
        ]
        for path in [*out.iterdir(), *result.custodian_dir.iterdir()]:
            content = path.read_bytes()
            for form in forms:
                assert form not in content, f"{path.name} holds key material"
    manifest = result.manifest
    for column in ("name", "ssn", "email"):
        assert len(manifest["steps"][column]["key_id"]) == 16
    assert manifest["steps"]["age"]["cost"]["mechanism"] == "laplace (discrete, grid step 1)"
    # The key's id is public; where the key is kept (file, variable) is not.
    assert "key_env" not in manifest["steps"]["ssn"]["parameters"]
    assert "VEIL_TEST_FF1_KEY" not in json.dumps(manifest)
    assert "seed" not in json.dumps(manifest["randomness"])


def test_input_is_never_mutated(keyed: dict[str, Any], tmp_path: Path) -> None:
    source = keyed["folder"] / "people.csv"
    before = source.read_bytes()
    result = run(_no_report(keyed["plan"]), tmp_path / "out")
    assert source.read_bytes() == before
    assert result.custodian["input"]["sha256"] == hashlib.sha256(before).hexdigest()
    assert result.custodian["input"]["rows"] == 300

    plan = _no_report(keyed["plan"])
    engine = PandasEngine()
    data = engine.read(plan.input)
    copy = data.table.copy(deep=True)
    steps = [
        Step(
            "age",
            "age",
            "row",
            lambda df, g: veil.ldp.dp_clip_laplace(df, "age", 1.0, 16, 100, rng=g),
        ),
        Step(
            "income",
            "income",
            "row",
            lambda df, g: veil.ldp.dp_randomized_response_kary(
                df, "income", 1.0, domain=["low", "mid", "high"], rng=g
            ),
        ),
    ]
    streams = [np.random.default_rng(1), np.random.default_rng(2)]
    rows = engine.rows(data, steps, streams, Reporter())
    gathered = engine.gather(rows, Reporter())
    pd.testing.assert_frame_equal(data.table, copy)
    assert not gathered.frame["age"].equals(copy["age"])
    assert [e["scope"] for e in gathered.privacy] == ["age", "income"]


def test_seeded_runs_are_reproducible_and_say_so(keyed: dict[str, Any], tmp_path: Path) -> None:
    plan = _no_report(keyed["plan"])
    first = run(plan, tmp_path / "a", rng=7)
    second = run(plan, tmp_path / "b", rng=7)
    assert (tmp_path / "a" / "release.csv").read_bytes() == (
        tmp_path / "b" / "release.csv"
    ).read_bytes()
    assert first.custodian["randomness"]["seed"] == 7
    assert ReproducibleNoiseWarning.__name__ in {w["category"] for w in first.warnings}
    assert second.custodian["randomness"]["seed"] == 7
    # The seed regenerates the noise: it never goes into the public manifest.
    assert "seed" not in first.manifest["randomness"]
    assert "7" not in json.dumps(first.manifest["randomness"])
    third = run(plan, tmp_path / "c")
    assert "seed" not in third.manifest["randomness"]
    assert (tmp_path / "c" / "release.csv").read_bytes() != (
        tmp_path / "a" / "release.csv"
    ).read_bytes()


def test_columns_the_plan_does_not_list(keyed: dict[str, Any], tmp_path: Path) -> None:
    frame = _people()
    frame["notes"] = "free text"
    frame.to_csv(keyed["folder"] / "people.csv", index=False)
    with pytest.raises(PlanError, match=r"does not list: \['notes'\]; .* unlisted: drop"):
        run(_no_report(keyed["plan"]), tmp_path / "a")
    assert not (tmp_path / "a").exists()
    plan = _no_report(keyed["plan"]).model_copy(update={"unlisted": "drop"})
    result = run(plan, tmp_path / "b")
    assert "notes" not in pd.read_csv(tmp_path / "b" / "release.csv").columns
    assert result.manifest["not_protected"]["unlisted_columns_dropped"] == ["notes"]


def test_plan_columns_absent_from_the_input(keyed: dict[str, Any], tmp_path: Path) -> None:
    _people().drop(columns=["age"]).to_csv(keyed["folder"] / "people.csv", index=False)
    with pytest.raises(PlanError, match=r"columns: 'age' not in the input"):
        run(_no_report(keyed["plan"]), tmp_path / "out")


def test_parquet_in_and_out(keyed: dict[str, Any], tmp_path: Path) -> None:
    _people().to_parquet(keyed["folder"] / "people.parquet", index=False)
    plan = _no_report(keyed["plan"])
    plan = plan.model_copy(
        update={
            "input": plan.input.model_copy(update={"path": keyed["folder"] / "people.parquet"}),
            "output": plan.output.model_copy(update={"format": "parquet"}),
        }
    )
    result = run(plan, tmp_path)
    released = pd.read_parquet(tmp_path / "release.parquet")
    assert len(released) == 300 == result.rows_out
    assert result.manifest["outputs"]["release"]["format"] == "parquet"


# ------------------------------------------------------------------ atomic outputs


def test_a_failing_step_leaves_the_previous_outputs(
    keyed: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    run(keyed["plan"], out)
    before = _snapshot(out)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("injected failure in the middle of the run")

    monkeypatch.setattr(veil.ldp, "dp_randomized_response_kary", broken)
    with pytest.raises(RuntimeError, match="injected failure"):
        run(keyed["plan"], out)
    assert _snapshot(out) == before


def test_a_failing_write_leaves_the_previous_outputs(
    keyed: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    run(_no_report(keyed["plan"]), out)
    before = _snapshot(out)

    def half_written(self: pd.DataFrame, handle: Any, *args: Any, **kwargs: Any) -> None:
        handle.write("name,ssn\npartial")  # the release file, opened by the writer
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_csv", half_written)
    with pytest.raises(OSError, match="disk full"):
        run(_no_report(keyed["plan"]), out)
    assert _snapshot(out) == before  # no temporary file left behind either


def test_a_killed_run_leaves_the_previous_outputs(keyed: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(_no_report(keyed["plan"]), out)
    before = _snapshot(out)
    marker = tmp_path / "writing"
    script = tmp_path / "slow_release.py"
    script.write_text(
        textwrap.dedent(
            """\
            import sys, time
            from pathlib import Path
            import pandas as pd
            from veil.release import load_plan, run

            def stalled(self, handle, *args, **kwargs):
                handle.write("name,ssn\\npartial")
                handle.flush()
                Path(sys.argv[3]).touch()
                time.sleep(120)

            pd.DataFrame.to_csv = stalled
            plan = load_plan(sys.argv[1])
            output = plan.output.model_copy(update={"report": False})
            plan = plan.model_copy(update={"output": output})
            run(plan, sys.argv[2])
            """
        ),
        encoding="utf-8",
    )
    process = subprocess.Popen(
        [sys.executable, str(script), str(keyed["plan"]), str(out), str(marker)],
        env={**os.environ},
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert process.poll() is None, "the release process ended before writing"
            assert time.monotonic() < deadline, "the release process never started writing"
            time.sleep(0.05)
        process.kill()
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
    after = _snapshot(out)
    # The killed run's staging folder remains (hidden); the release and the manifest are
    # the previous ones, byte for byte.
    leftovers = {name for name in after if name not in before}
    assert leftovers
    assert all(name.startswith(".veil-staging-") for name in leftovers)
    assert {name: after[name] for name in before} == before
    # The next run removes the dead run's staging folder, and leaves none of its own.
    run(_no_report(keyed["plan"]), out)
    assert not any(p.name.startswith(".") for p in out.iterdir())


def test_recorded_costs_must_match_the_plan(
    keyed: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    laplace = veil.ldp.dp_clip_laplace

    def cheaper(df: pd.DataFrame, column: str, epsilon: float, *args: Any, **kwargs: Any) -> Any:
        return laplace(df, column, epsilon / 2, *args, **kwargs)

    monkeypatch.setattr(veil.ldp, "dp_clip_laplace", cheaper)
    out = tmp_path / "out"
    with pytest.raises(
        LedgerMismatchError, match=r"age: planned epsilon=1 but the step recorded 0.5"
    ):
        run(_no_report(keyed["plan"]), out)
    assert not out.exists()


# ----------------------------------------------------------------------- locations


def test_location_example(tmp_path: Path) -> None:
    result = run(EXAMPLES / "location.yaml", tmp_path, rng=3)
    released = pd.read_csv(tmp_path / "taxi_release.csv")
    from veil.datasets import load_nyc_taxi

    taxi = load_nyc_taxi()
    # The 16 trips with a pickup or drop-off at (0, 0) lie outside the projection's
    # region: left out, as the plan says.
    outside = (taxi["pickup_latitude"] == 0) | (taxi["dropoff_latitude"] == 0)
    assert len(released) == len(taxi) - outside.sum() == len(taxi) - 16
    # The file is shuffled; the result's index gives each released row's input row.
    assert result.released is not None
    kept = taxi.loc[result.released.index]
    assert not (kept["pickup_latitude"] == 0).any()
    moved = np.hypot(
        result.released["pickup_latitude"] - kept["pickup_latitude"],
        result.released["pickup_longitude"] - kept["pickup_longitude"],
    )
    assert (moved > 0).all()
    assert "tpep_pickup_datetime" not in released.columns
    assert result.manifest["totals"]["metric"]["epsilon"] == pytest.approx(0.01)
    assert result.manifest["totals"]["ldp"]["epsilon"] == pytest.approx(3.0)
    pickup = result.manifest["steps"]["pickup_latitude, pickup_longitude"]
    assert pickup["cost"]["unit"] == "metre"
    assert result.custodian_dir is not None
    assert (result.custodian_dir / "report.html").exists()
    assert not (tmp_path / "report.html").exists()


# ---------------------------------------------------------------------------- Dask


def test_dask_gives_the_same_distribution_as_pandas(tmp_path: Path) -> None:
    gen = np.random.default_rng(11)
    n = 20_000
    frame = pd.DataFrame(
        {
            "x": gen.integers(0, 101, n),
            "c": gen.choice(["a", "b", "c", "d"], n, p=[0.4, 0.3, 0.2, 0.1]),
        }
    )
    frame.to_csv(tmp_path / "in.csv", index=False)
    plan = load_plan(
        {
            "input": {"path": str(tmp_path / "in.csv")},
            "columns": {
                "x": {
                    "role": "sensitive",
                    "treatment": {"method": "laplace", "epsilon": 2.0, "bounds": [0, 100]},
                },
                "c": {
                    "role": "sensitive",
                    "treatment": {
                        "method": "randomized_response",
                        "epsilon": 1.0,
                        "domain": ["a", "b", "c", "d"],
                    },
                },
            },
            "budget": {"ldp": {"epsilon": 3.0}},
            "output": {"report": False},
        }
    )
    on_pandas = run(plan, tmp_path / "pandas", rng=1)
    on_dask = run(
        plan,
        tmp_path / "dask",
        rng=2,
        engine=DaskEngine("threads", npartitions=4),
    )
    assert on_dask.manifest["engine"] == "dask"
    assert on_dask.manifest["totals"] == on_pandas.manifest["totals"]
    a = pd.read_csv(tmp_path / "pandas" / "release.csv")
    b = pd.read_csv(tmp_path / "dask" / "release.csv")
    assert len(a) == len(b) == n
    # Same distribution: two-sample tests at the 0.1% level (fixed seeds).
    assert stats.ks_2samp(a["x"], b["x"]).pvalue > 1e-3
    table = pd.crosstab(np.r_[np.zeros(n), np.ones(n)], np.r_[a["c"].to_numpy(), b["c"].to_numpy()])
    assert stats.chi2_contingency(table).pvalue > 1e-3
    # Partitions draw from independent streams: their noise differs.
    noise = (b["x"] - frame["x"]).to_numpy()
    quarter = n // 4
    assert not np.array_equal(noise[:quarter], noise[quarter : 2 * quarter])
    assert abs(float(np.corrcoef(noise[:quarter], noise[quarter : 2 * quarter])[0, 1])) < 0.05


def test_progress_reports_each_phase_and_step(keyed: dict[str, Any], tmp_path: Path) -> None:
    from veil.release.progress import PHASES, Progress

    events: list[Progress] = []
    run(_no_report(keyed["plan"]), tmp_path, progress=events.append)
    # Every phase, in order, each announced once (no attack phase: the plan asks none).
    assert [e.phase for e in events if e.step is None] == [p for p in PHASES if p != "attack"]
    # The steps, in plan order, inside the protect phase.
    assert [e.step for e in events if e.step is not None] == [
        "name: hmac",
        "ssn: ff1",
        "email: token",
        "phone: redact",
        "age: laplace",
        "city: generalize",
        "income: randomized_response",
    ]
    assert {e.phase for e in events if e.step is not None} == {"protect"}
    assert [e.label for e in events][:2] == ["validate", "allocate"]


def test_progress_counts_partitions_on_dask(tmp_path: Path) -> None:
    from veil.release.progress import Progress

    plan = _generated(tmp_path)["plan"]
    events: list[Progress] = []
    run(plan, tmp_path / "dask", engine=DaskEngine("threads", npartitions=3, batch=1),
        progress=events.append)  # fmt: skip
    batches = [e for e in events if e.total is not None]
    # One event per batch of one partition, for the counting pass and the writing pass.
    assert [(e.phase, e.done, e.total) for e in batches] == [
        ("protect", 1, 3), ("protect", 2, 3), ("protect", 3, 3),
        ("write", 1, 3), ("write", 2, 3), ("write", 3, 3),
    ]  # fmt: skip
    rows = [e.rows for e in batches if e.phase == "write"]
    assert rows == sorted(rows) and rows[-1] is not None and rows[-1] > 0
    assert batches[-1].label == "write (3 of 3 partitions)"


def test_result_as_json_for_scripts(keyed: dict[str, Any], tmp_path: Path) -> None:
    result = run(_no_report(keyed["plan"]), tmp_path)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["dry_run"] is False
    assert data["files"] == {
        "release": str(tmp_path / "release.csv"),
        "manifest": str(tmp_path / "manifest.json"),
        "custodian": str(Path(f"{tmp_path}.custodian") / "custodian.json"),
    }
    assert data["rows_in"] == data["rows_out"] == 300
    assert data["totals"]["ldp"]["epsilon"] == pytest.approx(1.5)
    dry = run(keyed["plan"], dry_run=True).to_dict()
    assert dry["dry_run"] is True and dry["files"] == {} and dry["rows_in"] is None


def test_ff1_needs_text_and_names_the_column(keyed: dict[str, Any], tmp_path: Path) -> None:
    _people().to_parquet(keyed["folder"] / "people.parquet", index=False)
    people = pd.read_parquet(keyed["folder"] / "people.parquet")
    people["ssn"] = people["ssn"].astype("int64")
    people.to_parquet(keyed["folder"] / "people.parquet", index=False)
    plan = _no_report(keyed["plan"])
    plan = plan.model_copy(
        update={"input": plan.input.model_copy(update={"path": keyed["folder"] / "people.parquet"})}
    )
    with pytest.raises(ValueError, match=r"column 'ssn': FF1 encrypts text, got int64"):
        run(plan, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_dask_reads_a_partitioned_parquet_dataset(tmp_path: Path) -> None:
    import dask.dataframe as dd

    gen = np.random.default_rng(5)
    frame = pd.DataFrame({"x": gen.integers(0, 101, 3000), "y": gen.integers(0, 5, 3000)})
    dd.from_pandas(frame, npartitions=3).to_parquet(tmp_path / "data", write_index=False)
    plan = {
        "input": {"path": str(tmp_path / "data"), "format": "parquet"},
        "columns": {
            "x": {
                "role": "sensitive",
                "treatment": {"method": "laplace", "epsilon": 1.0, "bounds": [0, 100]},
            },
            "y": {"role": "insensitive", "treatment": "keep"},
        },
        "budget": {"ldp": {"epsilon": 1.0}},
        "output": {"report": False, "format": "parquet"},
    }
    result = run(plan, tmp_path / "out", engine="dask")
    released = pd.read_parquet(tmp_path / "out" / "release.parquet")
    assert len(released) == result.rows_in == 3000
    assert released["x"].between(0, 100).all()
    # The kept column is released as is, in a shuffled order.
    assert sorted(released["y"]) == sorted(frame["y"])
    assert (released["y"].to_numpy() != frame["y"].to_numpy()).any()
    # No table step and no report: the partitions are streamed into the file.
    assert "row steps and write, streamed (3 partitions)" in result.custodian["timings_s"]
    assert len(result.custodian["input"]["sha256"]) == 64
    same = run(plan, tmp_path / "again", engine="pandas")
    assert same.custodian["input"]["sha256"] == result.custodian["input"]["sha256"]


def test_dask_on_a_local_cluster_of_processes(tmp_path: Path) -> None:
    gen = np.random.default_rng(6)
    frame = pd.DataFrame({"x": gen.integers(0, 101, 4000), "c": gen.choice(["a", "b", "c"], 4000)})
    frame.to_csv(tmp_path / "in.csv", index=False)
    plan = {
        "input": {"path": str(tmp_path / "in.csv")},
        "columns": {
            "x": {
                "role": "sensitive",
                "treatment": {"method": "laplace", "epsilon": 1.0, "bounds": [0, 100]},
            },
            "c": {
                "role": "sensitive",
                "treatment": {
                    "method": "randomized_response",
                    "epsilon": 1.0,
                    "domain": ["a", "b", "c"],
                },
            },
        },
        "budget": {"ldp": {"epsilon": 2.0}},
        "output": {"report": False},
    }
    engine = DaskEngine("local", npartitions=2, workers=2)
    result = run(plan, tmp_path / "out", engine=engine)
    released = pd.read_csv(tmp_path / "out" / "release.csv")
    assert len(released) == 4000
    assert released["x"].between(0, 100).all()
    assert set(released["c"]) <= {"a", "b", "c"}
    assert result.manifest["totals"]["ldp"]["epsilon"] == pytest.approx(2.0)


def test_a_failure_while_streaming_leaves_the_previous_release(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gen = np.random.default_rng(8)
    pd.DataFrame({"x": gen.integers(0, 101, 3000)}).to_csv(tmp_path / "in.csv", index=False)
    plan = {
        "input": {"path": str(tmp_path / "in.csv")},
        "columns": {
            "x": {
                "role": "sensitive",
                "treatment": {"method": "laplace", "epsilon": 1.0, "bounds": [0, 100]},
            }
        },
        "budget": {"ldp": {"epsilon": 1.0}},
        "output": {"report": False},
    }
    out = tmp_path / "out"
    run(plan, out, engine=DaskEngine("threads", npartitions=3, batch=1))
    before = _snapshot(out)
    laplace = veil.ldp.dp_clip_laplace
    calls: list[int] = []

    def fails_on_the_second_partition(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("injected failure in partition 2")
        return laplace(*args, **kwargs)

    monkeypatch.setattr(veil.ldp, "dp_clip_laplace", fails_on_the_second_partition)
    with pytest.raises(RuntimeError, match="partition 2"):
        run(plan, out, engine=DaskEngine("threads", npartitions=3, batch=1))
    assert _snapshot(out) == before


def test_dask_suppresses_sparse_grid_cells_by_a_distributed_group_by(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = _no_report(EXAMPLES / "location.yaml")
    on_pandas = run(plan, tmp_path / "pandas", rng=4)
    _no_gathering(monkeypatch)
    result = run(plan, tmp_path / "dask", engine=DaskEngine("threads", npartitions=3), rng=4)
    released = pd.read_csv(tmp_path / "dask" / "taxi_release.csv")
    assert len(released) == result.rows_out == on_pandas.rows_out == 998 - 16
    note = result.custodian["execution"]["steps"]["dropoff_latitude, dropoff_longitude: grid"]
    assert note.startswith("distributed: cell centres per partition; a group-by of the")
    # The grid is deterministic: the same cells are suppressed as on the whole table (the
    # rows are shuffled differently, so the cells are compared as multisets).
    expected = pd.read_csv(tmp_path / "pandas" / "taxi_release.csv")
    cells = ["dropoff_latitude", "dropoff_longitude"]
    assert released[cells[0]].isna().sum() > 0
    assert released[cells].isna().sum().tolist() == expected[cells].isna().sum().tolist()
    pd.testing.assert_frame_equal(
        released[cells].sort_values(cells).reset_index(drop=True),
        expected[cells].sort_values(cells).reset_index(drop=True),
    )
    assert "class counts (3 partitions)" in result.custodian["timings_s"]
    assert result.manifest["totals"]["metric"]["epsilon"] == pytest.approx(0.01)
    assert on_pandas.manifest["totals"] == result.manifest["totals"]


@pytest.mark.parametrize(
    "mask",
    [
        {"method": "jitter", "radius_m": 100},
        {"method": "donut", "r_min_m": 50, "r_max_m": 200},
        {"method": "grid", "cell_m": 500},
        {"method": "cloak", "k": 5},
        {"method": "planar_laplace", "epsilon": 0.02, "reports": 2, "grid_m": 50},
    ],
)
def test_every_geo_mask_runs(tmp_path: Path, mask: dict[str, Any]) -> None:
    plan = {
        "input": {"dataset": "nyc_taxi", "columns": ["pickup_latitude", "pickup_longitude"]},
        "locations": [
            {
                "lat": "pickup_latitude",
                "lon": "pickup_longitude",
                "mask": mask,
                "centre": [40.758, -73.9855],
                "outside": "drop",
            }
        ],
        "budget": {"metric": {"epsilon": 0.04}},
        "output": {"report": False},
    }
    result = run(plan, tmp_path, rng=9)
    from veil.datasets import load_nyc_taxi

    taxi = load_nyc_taxi()
    assert result.released is not None
    assert result.rows_out == len(taxi) - 15  # the trips at (0, 0) lie outside
    kept = taxi.loc[result.released.index]
    changed = (result.released["pickup_latitude"] != kept["pickup_latitude"]).mean()
    assert changed > 0.9
    steps = result.manifest["steps"]["pickup_latitude, pickup_longitude"]
    assert steps["step"] == mask["method"]
    if mask["method"] == "planar_laplace":
        assert result.manifest["totals"]["metric"]["epsilon"] == pytest.approx(0.04)
    if mask["method"] == "cloak":
        assert steps["cost"]["notion"] == "syntactic"
        assert "PrivacyLeakWarning" in {w["category"] for w in result.warnings}


def test_ordinal_exponential_records_its_exact_channel_epsilon(tmp_path: Path) -> None:
    from veil.datasets import ADULT_DOMAINS

    plan = {
        "input": {"dataset": "adult", "columns": ["education", "salary-class"]},
        "columns": {
            "education": {
                "role": "quasi_identifier",
                "treatment": {
                    "method": "exponential",
                    "epsilon": 2.0,
                    "calibration": "standard",
                    "ordinal": True,
                    "domain": list(ADULT_DOMAINS["education"]),
                },
            },
            "salary-class": {"role": "sensitive", "treatment": "keep"},
        },
        "budget": {"ldp": {"epsilon": 2.0}},
        "output": {"report": False},
    }
    result = run(plan, tmp_path)
    step = result.manifest["steps"]["education"]
    planned = {s.scope: s for s in result.ledger.steps}["education"].cost
    assert planned is not None
    assert step["cost"]["epsilon"] == pytest.approx(planned.epsilon)
    assert step["cost"]["epsilon"] < 2.0
    released = pd.read_csv(tmp_path / "release.csv")
    assert set(released["education"]) <= set(ADULT_DOMAINS["education"])


def test_keys_are_checked_before_the_input_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "k.key").write_text(secrets.token_hex(32), encoding="utf-8")
    (tmp_path / "k.key").chmod(0o600)
    plan: dict[str, Any] = {
        "input": {"path": str(tmp_path / "absent.csv")},
        "columns": {
            "id": {
                "role": "identifier",
                "treatment": {
                    "method": "hmac",
                    "key_file": str(tmp_path / "k.key"),
                    "key_id": "0000000000000000",
                },
            }
        },
    }
    with pytest.raises(ValueError, match=r"key_id: expected key '0000000000000000'"):
        run(plan, tmp_path / "out")
    plan["columns"]["id"]["treatment"] = {"method": "hmac", "key_env": "VEIL_TEST_UNSET_KEY"}
    monkeypatch.delenv("VEIL_TEST_UNSET_KEY", raising=False)
    with pytest.raises(ValueError, match=r"environment variable 'VEIL_TEST_UNSET_KEY'"):
        run(plan, tmp_path / "out")
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------- reading inputs and releases


def test_read_input_reads_a_plan_input_as_a_release_does(tmp_path: Path) -> None:
    from veil.release import read_input

    (tmp_path / "in.csv").write_text("id;x\n00123; 4\n00456; 5\n")
    plan = load_plan(
        {
            "input": {"path": str(tmp_path / "in.csv"), "sep": ";", "skipinitialspace": True},
            "columns": {
                "id": {"role": "identifier", "treatment": "redact"},
                "x": {"role": "insensitive", "treatment": "keep"},
            },
        }
    )
    frame = read_input(plan)
    # A redacted (or keyed) column is read as text, as the runner reads it.
    assert frame["id"].tolist() == ["00123", "00456"]
    assert frame["x"].tolist() == [4, 5]
    assert read_input(plan.input)["id"].tolist() == [123, 456]
    absent = plan.input.model_copy(update={"path": tmp_path / "absent.csv"})
    with pytest.raises(PlanError, match=r"input.path: file .*absent.csv' does not exist"):
        read_input(absent)
    (tmp_path / "bad.parquet").write_text("not parquet")
    broken = plan.input.model_copy(update={"path": tmp_path / "bad.parquet"})
    with pytest.raises(PlanError, match=r"input.path: cannot read .*bad.parquet"):
        read_input(broken)


def test_the_result_gives_the_released_table(tmp_path: Path) -> None:
    plan = {
        "input": {"dataset": "adult", "columns": ["age", "sex"]},
        "columns": {
            "age": {"role": "quasi_identifier", "treatment": "keep"},
            "sex": {"role": "quasi_identifier", "treatment": "keep"},
        },
        "output": {"format": "parquet", "report": False},
    }
    result = run(plan, tmp_path / "pandas")
    assert result.release_format == "parquet"
    assert result.released is not None
    # The rows in the file's order; in memory the index links each to its input row
    # (for the custodian), the file itself carries no index.
    on_file = pd.read_parquet(tmp_path / "pandas" / "release.parquet")
    pd.testing.assert_frame_equal(result.read_release().reset_index(drop=True), on_file)
    assert sorted(result.released.index) == list(range(32561))
    assert list(on_file.index) == list(range(32561))
    streamed = run(plan, tmp_path / "dask", engine=DaskEngine("threads", npartitions=2))
    assert streamed.released is None  # streamed into the file, never held in memory
    assert len(streamed.read_release()) == 32561
    with pytest.raises(PlanError, match="dry_run: a dry run releases nothing"):
        run(plan, dry_run=True).read_release()


def test_get_engine_reaches_the_dask_scheduler_option() -> None:
    from veil.release.engine import get_engine

    engine = get_engine("dask", scheduler="tcp://10.0.0.1:8786")
    assert isinstance(engine, DaskEngine) and engine.scheduler == "tcp://10.0.0.1:8786"
    assert isinstance(get_engine("dask", scheduler="synchronous"), DaskEngine)
    with pytest.raises(PlanError, match="scheduler: only with engine 'dask', got engine 'pandas'"):
        get_engine("pandas", scheduler="threads")
    with pytest.raises(PlanError, match=r"scheduler: must be one of threads, .* got 'nowhere'"):
        get_engine("dask", scheduler="nowhere")


# ------------------------------------------- table-level steps on Dask, distributed


def _no_gathering(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make a Dask run fail if it gathers the partitions into one frame."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the partitions were gathered into memory")

    monkeypatch.setattr(DaskEngine, "gather", refuse)
    monkeypatch.setattr(DaskEngine, "original", refuse)


def _classes(frame: pd.DataFrame, columns: list[str]) -> pd.Series:
    """The multiset of the records' values of ``columns`` (missing as text)."""
    return frame[columns].astype(str).value_counts().sort_index()


def test_dask_anonymizes_the_adult_example_by_a_distributed_group_by(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = _no_report(EXAMPLES / "adult.yaml")
    on_pandas = run(plan, tmp_path / "pandas", rng=3)
    _no_gathering(monkeypatch)
    on_dask = run(plan, tmp_path / "dask", rng=3, engine=DaskEngine("threads", npartitions=5))
    a, b = on_pandas.custodian["anonymization"], on_dask.custodian["anonymization"]
    assert a["levels"] == b["levels"]
    assert a["suppressed"] == b["suppressed"] > 0
    assert a["metrics"] == pytest.approx(b["metrics"])
    assert on_dask.rows_out == on_pandas.rows_out == 32561 - a["suppressed"]
    qis = ["education", "marital-status", "race", "salary-class"]
    released = pd.read_csv(tmp_path / "dask" / "adult_release.csv")
    pd.testing.assert_series_equal(
        _classes(pd.read_csv(tmp_path / "pandas" / "adult_release.csv"), qis),
        _classes(released, qis),
    )
    assert released.groupby(qis[:3]).size().min() >= 5
    execution = on_dask.custodian["execution"]
    assert execution["steps"]["anonymization"].startswith("distributed: a group-by")
    assert execution["steps"]["age: laplace"] == "per partition"
    assert on_pandas.custodian["execution"]["steps"]["anonymization"].startswith(
        "in memory: a group-by of the"
    )


def _generated(tmp_path: Path) -> dict[str, Any]:
    """A table with missing quasi-identifier values, its hierarchies, and a plan."""
    gen = np.random.default_rng(21)
    n = 6000
    zips = gen.choice(["4301", "4302", "4303", "4401", "4402", "4501"], n)
    bands = gen.choice(["20-29", "30-39", "40-49", "50-59"], n).astype(object)
    bands[gen.random(n) < 0.01] = None
    frame = pd.DataFrame(
        {
            "zip": zips,
            "band": bands,
            "diagnosis": gen.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1]),
            "x": gen.integers(0, 101, n),
            "home": gen.choice(["4301", "4302", "4401", "4501"], n),
        }
    )
    frame.to_csv(tmp_path / "people.csv", index=False)
    (tmp_path / "zip.csv").write_text(
        "".join(
            f"{z},{z[:3]}*,{z[:2]}**,*\n" for z in ["4301", "4302", "4303", "4401", "4402", "4501"]
        )
    )
    (tmp_path / "band.csv").write_text(
        "20-29,20-39,*\n30-39,20-39,*\n40-49,40-59,*\n50-59,40-59,*\nnan,nan,*\n"
    )
    plan = {
        "input": {"path": str(tmp_path / "people.csv")},
        "columns": {
            "zip": {"role": "quasi_identifier", "treatment": "keep"},
            "band": {"role": "quasi_identifier", "treatment": "keep"},
            "diagnosis": {"role": "sensitive", "treatment": "keep"},
            "x": {
                "role": "insensitive",
                "treatment": {"method": "laplace", "epsilon": 1.0, "bounds": [0, 100]},
            },
            "home": {
                "role": "insensitive",
                "treatment": {
                    "method": "generalize",
                    "hierarchy": str(tmp_path / "zip.csv"),
                    "level": 1,
                },
            },
        },
        "anonymization": {
            "quasi_identifiers": {
                "zip": str(tmp_path / "zip.csv"),
                "band": str(tmp_path / "band.csv"),
            },
            "models": [
                {"k_anonymity": 40},
                {"distinct_l_diversity": {"attribute": "diagnosis", "l": 3}},
            ],
            "max_suppression": 0.05,
        },
        "budget": {"ldp": {"epsilon": 1.0}},
        "output": {"report": False},
    }
    return {"frame": frame, "plan": plan}


@pytest.mark.parametrize("suppression", ["remove", "mark"])
def test_dask_anonymization_equals_pandas_on_a_generated_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suppression: str
) -> None:
    case = _generated(tmp_path)
    plan = case["plan"]
    plan["anonymization"]["suppression"] = suppression
    on_pandas = run(plan, tmp_path / "pandas", rng=5)
    _no_gathering(monkeypatch)
    on_dask = run(
        plan, tmp_path / "dask", rng=6, engine=DaskEngine("threads", npartitions=7, batch=3)
    )
    a, b = on_pandas.custodian["anonymization"], on_dask.custodian["anonymization"]
    assert a["levels"] == b["levels"]
    assert a["suppressed"] == b["suppressed"] > 0
    assert a["metrics"] == pytest.approx(b["metrics"])
    columns = ["zip", "band", "diagnosis"]
    left = pd.read_csv(tmp_path / "pandas" / "release.csv")
    right = pd.read_csv(tmp_path / "dask" / "release.csv")
    pd.testing.assert_series_equal(_classes(left, columns), _classes(right, columns))
    if suppression == "remove":
        assert len(right) == 6000 - b["suppressed"]
    else:
        assert len(right) == 6000
        assert int((right["zip"] == "*").sum()) == b["suppressed"]
    # Row order and the records' other columns are kept: the noise is the only change.
    kept = right["zip"] != "*"
    assert right["x"].between(0, 100).all() and kept.sum() == 6000 - b["suppressed"]


def test_dask_report_is_built_from_a_sample_of_the_partitions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import veil.release.evaluate as evaluate

    monkeypatch.setattr(evaluate, "REPORT_ROWS", 8000)
    plan = EXAMPLES / "adult.yaml"
    on_pandas = run(_no_report(plan), tmp_path / "pandas", rng=7)
    _no_gathering(monkeypatch)
    on_dask = run(plan, tmp_path / "dask", rng=7, engine=DaskEngine("threads", npartitions=8))
    note = on_dask.custodian["execution"]["report"]
    # 8 000 of 32 561 records: 2 of the 8 partitions, the first and the last.
    assert note.startswith("a deterministic sample: 2 of 8 partitions, evenly spaced")
    assert on_dask.report_path is not None
    assert on_dask.report_path.parent == on_dask.custodian_dir
    page = on_dask.report_path.read_text(encoding="utf-8")
    assert f"Release report ({note})" in page
    assert re.search(r"accuracy (0\.\d+) (0\.\d+)", _section(page, "Machine-learning utility"))
    assert "not computed" not in _section(page, "Correlation loss").lower()
    # The manifest's risk covers every record, from class counts.
    risk = on_dask.custodian["risk"]
    assert risk["computed_on"] == "every record (distributed group-by)"
    assert risk["before"]["n_records"] == 32561
    assert risk["after"]["n_records"] == on_dask.rows_out
    assert on_pandas.custodian["risk"] is None  # no report, no risk measure
    with_report = run(plan, tmp_path / "pandas-report", rng=7)
    assert with_report.custodian["risk"]["before"] == risk["before"]


def test_dask_says_which_table_steps_it_gathers(tmp_path: Path) -> None:
    plan = {
        "input": {"dataset": "nyc_taxi", "columns": ["pickup_latitude", "pickup_longitude"]},
        "locations": [
            {
                "lat": "pickup_latitude",
                "lon": "pickup_longitude",
                "mask": {"method": "cloak", "k": 5},
                "centre": [40.758, -73.9855],
                "outside": "drop",
            }
        ],
        "output": {"report": False},
    }
    result = run(plan, tmp_path, engine=DaskEngine("threads", npartitions=2))
    note = result.custodian["execution"]["steps"]["pickup_latitude, pickup_longitude: cloak"]
    assert note.startswith("gathered in memory")


def test_dask_anonymization_on_worker_processes(tmp_path: Path) -> None:
    # Steps and hierarchies travel to the workers by pickling.
    plan = _generated(tmp_path)["plan"]
    on_pandas = run(plan, tmp_path / "pandas", rng=5)
    engine = DaskEngine("local", npartitions=3, workers=2)
    on_dask = run(plan, tmp_path / "dask", rng=6, engine=engine)
    a, b = on_pandas.custodian["anonymization"], on_dask.custodian["anonymization"]
    assert (a["levels"], a["suppressed"]) == (b["levels"], b["suppressed"])
    released = pd.read_csv(tmp_path / "dask" / "release.csv", dtype={"home": str})
    assert set(released["home"]) <= {"430*", "440*", "450*"}
    columns = ["zip", "band", "diagnosis"]
    expected = pd.read_csv(tmp_path / "pandas" / "release.csv")
    pd.testing.assert_series_equal(_classes(expected, columns), _classes(released, columns))


# Dask reads a stored index with a pandas call pandas 3.1 deprecates.
@pytest.mark.filterwarnings("ignore:The inplace keyword")
def test_dask_report_pairs_records_of_partitions_with_repeated_labels(tmp_path: Path) -> None:
    import dask
    import dask.dataframe as dd

    from veil.datasets import load_adult

    adult = load_adult()
    adult.index = np.zeros(len(adult), dtype=np.int64)  # every label repeated
    with dask.config.set({"dataframe.convert-string": False}):  # keep pandas' "str" dtype
        dd.from_pandas(adult, npartitions=3, sort=False).to_parquet(tmp_path / "data")
    plan = load_plan(EXAMPLES / "adult.yaml")
    plan = plan.model_copy(
        update={
            "input": plan.input.model_copy(
                update={"dataset": None, "path": tmp_path / "data", "format": "parquet"}
            )
        }
    )
    for engine in ("dask", "pandas"):
        result = run(plan, tmp_path / engine, rng=2, engine=engine)
        assert result.report_path is not None
        page = result.report_path.read_text(encoding="utf-8")
        ml = _section(page, "Machine-learning utility")
        assert re.search(r"accuracy (0\.\d+) (0\.\d+)", ml)
        assert result.rows_out == 32561 - result.custodian["anonymization"]["suppressed"]


def test_dask_parquet_release_skips_partitions_left_empty(tmp_path: Path) -> None:
    # Sorted input: the first partition's classes are all rare, hence all suppressed.
    case = _generated(tmp_path)
    frame = case["frame"]
    rare = pd.DataFrame({"zip": ["9999"] * 250, "band": ["20-29"] * 250, "diagnosis": ["a"] * 250})
    rare["x"], rare["home"] = 50, "4301"
    pd.concat([rare, frame], ignore_index=True).to_csv(tmp_path / "people.csv", index=False)
    with open(tmp_path / "zip.csv", "a", encoding="utf-8") as handle:
        handle.write("9999,999*,99**,*\n")
    plan = case["plan"]
    plan["output"] = {"report": False, "format": "parquet"}
    plan["anonymization"]["max_suppression"] = 0.1
    on_pandas = run(plan, tmp_path / "pandas", rng=1)
    engine = DaskEngine("threads", npartitions=40, batch=4)
    on_dask = run(plan, tmp_path / "dask", rng=1, engine=engine)
    assert (
        on_dask.custodian["anonymization"]["suppressed"]
        == (on_pandas.custodian["anonymization"]["suppressed"])
    )
    released = pd.read_parquet(tmp_path / "dask" / "release.parquet")
    assert len(released) == on_pandas.rows_out
    assert on_dask.manifest["anonymization"]["levels"]["zip"] < 3
    assert "9999" not in set(released["zip"])


def test_dask_releases_the_noise_its_anonymization_counted(tmp_path: Path) -> None:
    # The Dask search counts classes in a first pass and writes in a second; with a
    # noised sensitive attribute both passes must draw the same noise, or released
    # classes can break the l-diversity the search checked (a bug once).
    from veil.anonymity import l_diversity

    g = np.random.default_rng(0)
    n = 4000
    frame = pd.DataFrame(
        {
            "zip": [f"{z:04d}" for z in g.integers(0, 1000, n)],
            "disease": np.where(g.random(n) < 0.5, "flu", "cold"),
        }
    )
    frame.to_parquet(tmp_path / "t.parquet")
    (tmp_path / "zip.csv").write_text("".join(f"{z:04d};*\n" for z in range(1000)))
    plan = {
        "input": {"path": str(tmp_path / "t.parquet")},
        "columns": {
            "zip": {"role": "quasi_identifier", "treatment": "keep"},
            "disease": {
                "role": "sensitive",
                "treatment": {"method": "randomized_response", "domain": ["flu", "cold"]},
            },
        },
        "anonymization": {
            "quasi_identifiers": {"zip": str(tmp_path / "zip.csv")},
            "models": [
                {"k_anonymity": 2},
                {"distinct_l_diversity": {"attribute": "disease", "l": 2}},
            ],
            "max_suppression": 0.5,
        },
        "budget": {"ldp": {"epsilon": 0.5}, "allocation": "equal"},
        "output": {"format": "parquet", "report": False},
    }
    for engine in ("pandas", "dask"):
        result = run(plan, tmp_path / engine, engine=engine, rng=7)
        released = pd.read_parquet(result.release_path)
        assert len(released) > 0.5 * n
        assert l_diversity(released, ["zip"], ["disease"]) >= 2, engine


@pytest.mark.parametrize(
    ("projection", "expected"),
    [
        ("utm", "utm"),
        ("aeqd", "aeqd"),
        ("stereographic", "stereographic"),
        (None, "stereographic"),  # the default about a public centre: NumPy, fast
    ],
)
def test_a_public_centre_honours_the_plans_projection(
    tmp_path: Path, projection: str | None, expected: str
) -> None:
    plan = load_plan(EXAMPLES / "location.yaml")
    pickup = plan.locations[0].model_copy(update={"projection": projection})
    plan = plan.model_copy(
        update={
            "locations": [pickup, *plan.locations[1:]],
            "output": plan.output.model_copy(update={"report": False}),
        }
    )
    result = run(plan, tmp_path, rng=3)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    step = manifest["steps"]["pickup_latitude, pickup_longitude"]
    assert step["cost"]["mechanism"] == f"planar laplace ({expected})"
    assert result.rows_out is not None and result.rows_out > 0


def test_the_plans_engine_section_chooses_the_engine_and_run_can_override_it(
    tmp_path: Path,
) -> None:
    plan = load_plan(EXAMPLES / "adult.yaml")
    plan = plan.model_copy(
        update={
            "output": plan.output.model_copy(update={"report": False}),
            "engine": plan.engine.model_copy(update={"name": "dask", "scheduler": "threads"}),
        }
    )
    assert run(plan, tmp_path / "plan", rng=4).custodian["execution"]["engine"] == "dask"
    manifest = json.loads((tmp_path / "plan" / "manifest.json").read_text())
    assert manifest["engine"] == "dask"
    overridden = run(plan, tmp_path / "override", rng=4, engine="pandas")
    assert overridden.custodian["execution"]["engine"] == "pandas"


def test_dask_suppresses_sparse_grid_cells_beside_a_whole_table_step(tmp_path: Path) -> None:
    # The previous runner skipped the grid's suppression on Dask when another location
    # needed the whole table (cloak): sparse cells were released.
    plan = {
        "input": {"dataset": "nyc_taxi"},
        "columns": {
            c: {"role": "insensitive", "treatment": "drop"}
            for c in ("tpep_pickup_datetime", "passenger_count", "trip_distance",
                      "fare_amount", "tip_amount", "total_amount")
        },
        "locations": [
            {"lat": "pickup_latitude", "lon": "pickup_longitude", "centre": [40.758, -73.9855],
             "outside": "drop", "mask": {"method": "cloak", "k": 5}},
            {"lat": "dropoff_latitude", "lon": "dropoff_longitude", "centre": [40.758, -73.9855],
             "outside": "drop", "mask": {"method": "grid", "cell_m": 250, "min_count": 3}},
        ],
        "output": {"report": False},
    }  # fmt: skip
    on_pandas = run(plan, tmp_path / "pandas", rng=1)
    on_dask = run(plan, tmp_path / "dask", rng=1, engine=DaskEngine("threads", npartitions=3))
    cells = ["dropoff_latitude", "dropoff_longitude"]
    for result in (on_pandas, on_dask):
        released = result.read_release()
        counts = released.dropna(subset=cells).groupby(cells).size()
        assert released[cells[0]].isna().sum() > 0
        assert counts.min() >= 3  # no released cell holds fewer than min_count points
    note = on_dask.custodian["execution"]["steps"]["dropoff_latitude, dropoff_longitude: grid"]
    assert note.startswith("gathered in memory: the table was gathered for another table step")


@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_records_held_in_memory_are_released_without_reading_a_file(
    tmp_path: Path, engine: str
) -> None:
    from veil.datasets import load_adult

    frame = load_adult().head(2000)[["age", "sex", "salary-class"]]
    before = frame.copy()
    plan = {
        # The input names the records; nothing is read from it.
        "input": {"path": str(tmp_path / "decrypted-in-memory.csv")},
        "columns": {
            "age": {"role": "quasi_identifier",
                    "treatment": {"method": "laplace", "epsilon": 1.0, "bounds": [16, 100]}},
            "sex": {"role": "quasi_identifier", "treatment": "keep"},
            "salary-class": {"role": "sensitive", "treatment": "keep"},
        },
        "budget": {"ldp": {"epsilon": 1.0}},
        "output": {"report": False},
    }  # fmt: skip
    result = run(plan, tmp_path / "out", engine=engine, records=frame, rng=3)
    pd.testing.assert_frame_equal(frame, before)
    assert result.rows_in == result.rows_out == 2000
    assert sorted(result.read_release()["sex"]) == sorted(frame["sex"])
    assert result.custodian["input"]["source"] == "records given to run (in memory)"
    again = run(plan, tmp_path / "again", engine=engine, records=frame.copy(), rng=3)
    assert again.custodian["input"]["sha256"] == result.custodian["input"]["sha256"]
    assert not (tmp_path / "decrypted-in-memory.csv").exists()


@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_a_lattice_no_search_settles_ends_at_the_time_limit_with_a_valid_release(
    tmp_path: Path, engine: str
) -> None:
    """Twenty QIs of four levels (veil init drafts such plans for wide survey tables, as
    NHANES's demographics): 10^12 nodes. The search stops at the plan's time_limit, the
    release holds its models, and a warning says the node is not proven optimal."""
    from veil.release import run
    from veil.release.engine import DaskEngine

    from .._hang import within

    gen = np.random.Generator(np.random.PCG64(5))
    qis = [f"q{i}" for i in range(20)]
    frame = pd.DataFrame({q: gen.integers(0, 8, 3000) for q in qis})
    source = tmp_path / "wide.csv"
    frame.to_csv(source, index=False)
    plan = {
        "version": 1,
        "name": "wide",
        "input": {"path": str(source)},
        "columns": {q: {"role": "quasi_identifier", "treatment": "keep"} for q in qis},
        "anonymization": {
            "quasi_identifiers": {q: {"intervals": {"widths": [2, 4, 8]}} for q in qis},
            "models": [{"k_anonymity": 5}],
            "max_suppression": 0.05,
            "time_limit": 2,
        },
        "output": {"report": False},
    }
    chosen = DaskEngine("synchronous") if engine == "dask" else None
    result = within(
        120,
        "a release past its search's time limit",
        run,
        plan,
        tmp_path / "out",
        rng=1,
        engine=chosen,
    )
    assert result.release_path is not None
    assert any(w["category"] == "SearchBudgetWarning" for w in result.warnings)
    assert "warnings: 0" not in result.summary()
    released = pd.read_csv(result.release_path, dtype=str)
    assert released.groupby(qis).size().min() >= 5  # the models hold
