"""The path around the noise: what a release publishes must not undo its protection.

Attack tests against the public manifest (a hash attack), the row order (linkage by
position) and the files a release writes (formula injection, a set written with the
manifest last), and the plan's reach (paths outside its folder, secrets in errors).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats

from veil.errors import PrivacyLeakWarning
from veil.gate import PlacementError
from veil.release import PlanError, load_plan, run
from veil.release.engine import DaskEngine
from veil.release.outputs import verify_release

# ------------------------------------------------------------------- the hash attack


def _warned(caught: list[dict[str, str]], text: str) -> bool:
    """Whether the run recorded a PrivacyLeakWarning whose message holds ``text``."""
    return any(
        w["category"] == PrivacyLeakWarning.__name__ and text in w["message"] for w in caught
    )


_AGES = list(range(30, 52))  # 22 ages
_SALARIES = [f"{10 * k}k" for k in range(2, 13)]  # 11 salary bands: 22 * 2 * 11 = 484


def _people(n: int = 2000) -> pd.DataFrame:
    gen = np.random.default_rng(11)
    return pd.DataFrame(
        {
            "age": gen.choice(_AGES, n),
            "sex": gen.choice(["F", "M"], n),
            "salary": gen.choice(_SALARIES, n),
        }
    )


def _csv_bytes(frame: pd.DataFrame) -> bytes:
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False)
    return buffer.getvalue().encode("utf-8")


def _noisy_plan(path: Path) -> dict[str, Any]:
    return {
        "input": {"path": str(path)},
        "columns": {
            "age": {
                "role": "quasi_identifier",
                "treatment": {"method": "laplace", "epsilon": 1.0, "bounds": [30, 51]},
            },
            "sex": {
                "role": "quasi_identifier",
                "treatment": {
                    "method": "randomized_response",
                    "epsilon": 1.0,
                    "domain": ["F", "M"],
                },
            },
            "salary": {"role": "sensitive", "treatment": "keep"},
        },
        "budget": {"ldp": {"epsilon": 2.0}},
        "evaluation": {"metrics": ["risk", "distributions"]},
    }


def test_hash_attack_on_the_public_manifest_finds_nothing(tmp_path: Path) -> None:
    people = _people()
    source = tmp_path / "people.csv"
    source.write_bytes(_csv_bytes(people))
    result = run(_noisy_plan(source), tmp_path / "release", rng=5)
    # The adversary knows every record but record 1234 and the file's layout; they try
    # the 484 possible (age, sex, salary) values of that record against every hash the
    # release publishes.
    public_text = (tmp_path / "release" / "manifest.json").read_text(encoding="utf-8")
    assert result.custodian_path is not None
    custodian_text = result.custodian_path.read_text(encoding="utf-8")
    matches_public, matches_custodian = [], []
    for age in _AGES:
        for sex in ("F", "M"):
            for salary in _SALARIES:
                guess = people.copy()
                guess.loc[1234, ["age", "sex", "salary"]] = [age, sex, salary]
                digest = hashlib.sha256(_csv_bytes(guess)).hexdigest()
                if digest in public_text:
                    matches_public.append((age, sex, salary))
                if digest in custodian_text:
                    matches_custodian.append((age, sex, salary))
    assert matches_public == []
    # The same attack on the custodian record singles out the true values: that record
    # is confidential, and it is not in the release folder.
    truth = tuple(people.loc[1234, ["age", "sex", "salary"]])
    assert matches_custodian == [(int(truth[0]), truth[1], truth[2])]
    assert result.custodian_dir is not None
    assert result.custodian_dir.resolve() not in (tmp_path / "release").resolve().parents
    assert not (tmp_path / "release" / "custodian.json").exists()


def test_the_public_manifest_holds_nothing_computed_from_the_raw_table(tmp_path: Path) -> None:
    people = _people()
    source = tmp_path / "private-folder" / "people.csv"
    source.parent.mkdir()
    source.write_bytes(_csv_bytes(people))
    result = run(_noisy_plan(source), tmp_path / "release", rng=5)
    manifest = result.manifest
    text = json.dumps(manifest)
    assert "private-folder" not in text  # file names only, not the custodian's folders
    # Where the custodian keeps the input is not public, not even its file name.
    assert manifest["plan"]["input"] == {}
    assert "people.csv" not in text
    assert "input" not in manifest and "timings_s" not in manifest
    assert "execution" not in manifest
    # Both QIs are noised, so no attacker matches them exactly: the public risk names
    # them (plan facts) and holds no count of the raw table.
    assert set(manifest["risk"]) == {"after", "computed_on", "not_class_keys"}
    assert manifest["risk"]["not_class_keys"] == ["age", "sex"]
    assert manifest["risk"]["after"] == {}
    raw = result.custodian["risk"]["before"]
    assert result.custodian["input"]["sha256"] == hashlib.sha256(_csv_bytes(people)).hexdigest()
    assert raw["n_records"] == 2000
    # Seeded runs keep the seed with the custodian: it regenerates the noise.
    assert "seed" not in manifest["randomness"]
    assert result.custodian["randomness"]["seed"] == 5


# -------------------------------------------------------------------- row order


def _registry(n: int = 1000, positives: int = 100) -> pd.DataFrame:
    """A registry with the positive cases first, as the stroke registry is sorted."""
    gen = np.random.default_rng(3)
    return pd.DataFrame(
        {
            "age": gen.integers(20, 90, n),
            "stroke": np.r_[np.ones(positives, dtype=int), np.zeros(n - positives, dtype=int)],
        }
    )


def _registry_plan(path: Path, keep_order: bool) -> dict[str, Any]:
    return {
        "input": {"path": str(path)},
        "columns": {
            "age": {
                "role": "quasi_identifier",
                # Little noise: the position alone must be what links a row to a person.
                "treatment": {"method": "laplace", "epsilon": 50.0, "bounds": [20, 89]},
            },
            "stroke": {
                "role": "sensitive",
                "treatment": {"method": "randomized_response", "epsilon": 1.0, "domain": [0, 1]},
            },
        },
        "budget": {"ldp": {"epsilon": 51.0}},
        "output": {"report": False, "keep_order": keep_order},
    }


@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_position_linkage_fails_on_a_shuffled_release(tmp_path: Path, engine: str) -> None:
    registry = _registry()
    source = tmp_path / "registry.csv"
    registry.to_csv(source, index=False)
    truth = registry["stroke"].to_numpy()

    def attack(out: Path) -> float:
        # The adversary knows the file lists positives first: position i is a case iff
        # i < 100. They flag the first 100 released rows as the cases.
        released = pd.read_csv(out / "release.csv")
        guess = np.arange(len(released)) < 100
        return float(np.mean(guess[:100] == (truth[: len(released)] == 1)[:100]))

    ordered = run(_registry_plan(source, True), tmp_path / "ordered", rng=1, engine=engine)
    assert _warned(ordered.warnings, "keep_order")
    assert any("keep_order" in leak for leak in ordered.manifest["leaks"])
    shuffled = run(_registry_plan(source, False), tmp_path / "shuffled", rng=1, engine=engine)
    assert ordered.released is None or list(ordered.released.index) == list(range(1000))
    # Which released rows are the cases: by position in the ordered file, certainly; in
    # the shuffled one, about 10 % of the first 100 rows (chance).
    ordered_rows = pd.read_csv(tmp_path / "ordered" / "release.csv")
    shuffled_rows = pd.read_csv(tmp_path / "shuffled" / "release.csv")
    assert len(ordered_rows) == len(shuffled_rows) == 1000
    ordered_ages = ordered_rows["age"].to_numpy()[:100]
    shuffled_ages = shuffled_rows["age"].to_numpy()[:100]
    # Under keep_order the first rows are the cases: their noisy ages track the cases'
    # true ages far better than the shuffled rows do.
    case_ages = registry["age"].to_numpy()[:100]
    err_ordered = float(np.mean(np.abs(ordered_ages - case_ages)))
    err_shuffled = float(np.mean(np.abs(shuffled_ages - case_ages)))
    assert err_ordered < 2.0 < 10.0 < err_shuffled
    assert attack(tmp_path / "ordered") == 1.0
    assert shuffled.manifest["release"]["row_order"].startswith("shuffled")


def test_dask_mixes_records_across_partitions(tmp_path: Path) -> None:
    # Within-partition shuffles would keep the input's first partition (all the cases
    # of a positives-first file) together in one block of the release file.
    registry = _registry().assign(row=np.arange(1000))
    source = tmp_path / "registry.csv"
    registry.to_csv(source, index=False)
    plan = _registry_plan(source, False)
    plan["columns"]["row"] = {"role": "insensitive", "treatment": "keep"}  # a tracer
    # A unique row number singles out records: the gate refuses it unless acknowledged.
    plan["acknowledge"] = ["row"]
    engine = DaskEngine("threads", npartitions=4)
    result = run(plan, tmp_path / "out", rng=2, engine=engine)
    released = pd.read_csv(tmp_path / "out" / "release.csv")
    assert sorted(released["row"]) == list(range(1000))
    # Where the first partition's 250 records landed: spread over the whole file.
    positions = np.flatnonzero(released["row"].to_numpy() < 250)
    per_quarter = np.bincount(positions // 250, minlength=4)
    assert per_quarter.min() > 30, per_quarter  # ~62 each; all 250 in one quarter before
    assert stats.kstest(positions / 1000, "uniform").pvalue > 1e-3
    assert result.manifest["release"]["row_order"].startswith(
        "shuffled with the CSPRNG across every partition"
    )
    # Nothing of the shuffle's spilled buckets is left behind.
    assert not any(p.name.startswith(".") for p in (tmp_path / "out").iterdir())


def test_the_dask_shuffle_is_a_uniform_permutation(tmp_path: Path) -> None:
    # 6 records in 3 partitions: over 150 seeded runs every record takes every
    # position equally often (chi-square on the 6 x 6 table of positions).
    frame = pd.DataFrame({"row": np.arange(6)})
    frame.to_csv(tmp_path / "six.csv", index=False)
    plan = {
        "input": {"path": str(tmp_path / "six.csv")},
        "columns": {"row": {"role": "insensitive", "treatment": "keep"}},
        "output": {"report": False},
    }
    table = np.zeros((6, 6), dtype=int)
    together = 0
    for seed in range(150):
        run(plan, tmp_path / "out", rng=seed, engine=DaskEngine("synchronous", npartitions=3))
        order = pd.read_csv(tmp_path / "out" / "release.csv")["row"].to_numpy()
        table[order, np.arange(6)] += 1
        where = np.argsort(order)
        # Records 0 and 1 share the first input partition: a per-partition shuffle
        # keeps them in the same aligned pair of positions every time (1.0); a uniform
        # permutation does so with probability 6/30 = 0.2.
        together += int(where[0] // 2 == where[1] // 2)
    assert stats.chisquare(table.ravel()).pvalue > 1e-4
    assert stats.binomtest(together, 150, 0.2).pvalue > 1e-4


# ------------------------------------------------------------- formula injection


def _notes_plan(path: Path, raw_csv: bool) -> dict[str, Any]:
    return {
        "input": {"path": str(path)},
        "columns": {
            "note": {"role": "insensitive", "treatment": "keep"},
            "n": {"role": "insensitive", "treatment": "keep"},
        },
        "output": {"report": False, "raw_csv": raw_csv, "keep_order": True},
    }


def test_formula_cells_are_escaped_in_the_released_csv(tmp_path: Path) -> None:
    source = tmp_path / "notes.csv"
    pd.DataFrame(
        {"note": ['=HYPERLINK("http://x")', "+1", "-2+3", "@SUM(A1)", "fine"], "n": [-1] * 5}
    ).to_csv(source, index=False)
    result = run(_notes_plan(source, False), tmp_path / "out")
    text = (tmp_path / "out" / "release.csv").read_text(encoding="utf-8")
    released = pd.read_csv(io.StringIO(text), dtype=str)
    assert released["note"].tolist() == [
        '\'=HYPERLINK("http://x")',
        "+1",  # a plain signed number is a number to a spreadsheet, never a formula
        "'-2+3",
        "'@SUM(A1)",
        "fine",
    ]
    assert released["n"].tolist() == ["-1"] * 5  # numbers stay numbers
    assert result.manifest["release"]["cells_escaped"] == {"note": 3}
    raw = run(_notes_plan(source, True), tmp_path / "raw")
    assert pd.read_csv(tmp_path / "raw" / "release.csv")["note"].iloc[0].startswith("=")
    assert "not escaped" in raw.manifest["release"]["csv_formulas"]


# ------------------------------------------------------------- outputs as a set


def _small_plan(tmp_path: Path) -> dict[str, Any]:
    source = tmp_path / "small.csv"
    pd.DataFrame({"age": np.arange(20, 80)}).to_csv(source, index=False)
    return {
        "input": {"path": str(source)},
        "columns": {
            "age": {
                "role": "quasi_identifier",
                "treatment": {"method": "laplace", "epsilon": 1.0, "bounds": [20, 80]},
            }
        },
        "budget": {"ldp": {"epsilon": 1.0}},
        "output": {"report": False},
    }


def test_a_crash_before_the_manifest_leaves_no_committed_release(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = _small_plan(tmp_path)
    out = tmp_path / "out"
    run(plan, out, rng=1)
    assert verify_release(out)["outputs"]["release"]["file"] == "release.csv"
    import veil.release.outputs as outputs

    real_replace = os.replace

    def crash_on_manifest(src: Any, dst: Any) -> None:
        if os.fspath(dst).endswith("manifest.json"):
            raise OSError("simulated crash at the commit point")
        real_replace(src, dst)

    monkeypatch.setattr(outputs.os, "replace", crash_on_manifest)
    with pytest.raises(OSError, match="simulated crash"):
        run(plan, out, rng=2)
    monkeypatch.undo()
    # The new release file is in place but the old manifest is gone: a reader never
    # takes the new file for the old release.
    with pytest.raises(PlanError, match=r"no manifest\.json"):
        verify_release(out)
    assert not any(p.name.startswith(".veil-staging-") for p in out.iterdir())
    run(plan, out, rng=3)
    verify_release(out)


def test_a_swapped_release_file_fails_verification(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(_small_plan(tmp_path), out, rng=1)
    (out / "release.csv").write_text("age\n1\n", encoding="utf-8")
    with pytest.raises(PlanError, match="differs from the one the manifest records"):
        verify_release(out)


def test_a_killed_runs_staging_folder_is_removed_by_the_next_run(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    # A staging folder of a process that no longer exists (a run killed mid-write).
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], check=True,
                          capture_output=True, text=True)  # fmt: skip
    stale = out / f".veil-staging-{int(dead.stdout)}-abcdef"
    stale.mkdir()
    (stale / "release.csv").write_text("partial", encoding="utf-8")
    run(_small_plan(tmp_path), out, rng=1)
    assert not stale.exists()
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "release.csv"]


def test_outputs_may_not_overwrite_what_the_plan_reads(tmp_path: Path) -> None:
    plan = _small_plan(tmp_path)
    plan["output"]["file"] = "small.csv"  # the input's own name, in the input's folder
    before = (tmp_path / "small.csv").read_bytes()
    with pytest.raises(PlanError, match="would overwrite"):
        run(plan, tmp_path, rng=1)
    assert (tmp_path / "small.csv").read_bytes() == before


def test_the_custodian_folder_may_not_be_inside_the_release_folder(tmp_path: Path) -> None:
    plan = _small_plan(tmp_path)
    plan["output"]["custodian_dir"] = str(tmp_path / "out" / "private")
    with pytest.raises(PlacementError, match=r"output\.custodian_dir: .* inside it"):
        run(plan, tmp_path / "out", rng=1)
    assert not (tmp_path / "out").exists()  # refused before anything was written


# --------------------------------------------------------------- the plan's reach


def _write_plan(folder: Path, plan: dict[str, Any]) -> Path:
    path = folder / "plan.yaml"
    path.write_text(yaml.safe_dump(plan), encoding="utf-8")
    return path


def test_plan_paths_outside_the_plans_folder_are_refused(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    secret = tmp_path / "shadow.csv"
    secret.write_text("root:x:0:0\n", encoding="utf-8")
    plan = {
        "input": {"path": "../shadow.csv"},
        "columns": {"root:x:0:0": {"role": "insensitive", "treatment": "keep"}},
    }
    path = _write_plan(project, plan)
    with pytest.raises(PlanError) as caught:
        load_plan(path)
    assert "input.path" in str(caught.value) and "outside the plan's folder" in str(caught.value)
    assert load_plan(path, allow_outside=True).input.path == project / "../shadow.csv"
    hierarchy = {
        "input": {"path": "data.csv"},
        "columns": {
            "zip": {
                "role": "quasi_identifier",
                "treatment": {"method": "generalize", "hierarchy": "/etc/passwd", "level": 1},
            }
        },
    }
    with pytest.raises(PlanError) as caught:
        load_plan(_write_plan(project, hierarchy))
    assert "root:" not in str(caught.value)
    assert "columns.zip.treatment.hierarchy" in str(caught.value)


def test_a_misspelled_key_field_is_not_echoed(tmp_path: Path) -> None:
    key = "d1b2" + "7f" * 30
    plan = {
        "input": {"path": "people.csv"},
        "columns": {
            "name": {
                "role": "identifier",
                "treatment": {"method": "hmac", "hmac_key": key, "key_env": "VK"},
            }
        },
    }
    with pytest.raises(PlanError) as caught:
        load_plan(_write_plan(tmp_path, plan))
    assert "hmac_key" in str(caught.value)
    assert key not in str(caught.value) and key[:8] not in str(caught.value)


def test_target_allocation_on_the_private_input_needs_an_explicit_opt_in(tmp_path: Path) -> None:
    plan = _small_plan(tmp_path)
    plan["columns"]["age"]["treatment"].pop("epsilon")
    plan["budget"].update({"allocation": "target", "target": {"value": 0.9}})
    with pytest.raises(PlanError, match="allow_data_dependent_allocation"):
        load_plan(plan)
    plan["budget"]["allow_data_dependent_allocation"] = True
    result = run(plan, tmp_path / "out", rng=1)
    assert _warned(result.warnings, "private input")
    assert any("chosen from utility measured" in leak for leak in result.manifest["leaks"])
    # The measurements on private data stay with the custodian.
    assert set(result.manifest["allocation"]) == {"method", "metric", "target", "sample", "epsilon"}
    assert "tvd" in result.custodian["allocation"]["columns"]["age"]


def test_a_location_needs_a_public_projection(tmp_path: Path) -> None:
    source = tmp_path / "points.csv"
    pd.DataFrame({"lat": [40.75, 40.76], "lon": [-73.98, -73.99]}).to_csv(source, index=False)
    plan: dict[str, Any] = {
        "input": {"path": str(source)},
        "locations": [
            {"lat": "lat", "lon": "lon", "mask": {"method": "planar_laplace", "epsilon": 0.01}}
        ],
        "budget": {"metric": {"epsilon": 0.01}},
        "output": {"report": False},
    }
    with pytest.raises(PlanError, match="a public projection is required"):
        load_plan(plan)
    plan["locations"][0]["projection"] = "data"
    result = run(plan, tmp_path / "out", rng=1)
    assert _warned(result.warnings, "")
    assert any("chosen from the data" in leak for leak in result.manifest["leaks"])


# ------------------------------------------------ what the manifest says and reads


def test_steps_without_a_formal_guarantee_are_listed_as_such(tmp_path: Path) -> None:
    gen = np.random.default_rng(8)
    n = 400
    frame = pd.DataFrame(
        {
            "zip": gen.choice(["4301", "4302", "4401"], n),
            "la": 40.4 + gen.normal(0, 0.01, n),
            "lo": -3.7 + gen.normal(0, 0.01, n),
            "la2": 40.4 + gen.normal(0, 0.01, n),
            "lo2": -3.7 + gen.normal(0, 0.01, n),
        }
    )
    frame.to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "zip.csv").write_text("4301,430*,*\n4302,430*,*\n4401,440*,*\n")
    centre = [40.4, -3.7]
    plan = {
        "input": {"path": str(tmp_path / "in.csv")},
        "columns": {
            "zip": {
                "role": "quasi_identifier",
                "treatment": {"method": "generalize", "hierarchy": str(tmp_path / "zip.csv"),
                              "level": 1},
            }
        },
        "locations": [
            {"lat": "la", "lon": "lo", "centre": centre, "mask": {"method": "grid", "cell_m": 200}},
            {"lat": "la2", "lon": "lo2", "centre": centre,
             "mask": {"method": "jitter", "radius_m": 100}},
        ],
        "output": {"report": False},
    }  # fmt: skip
    result = run(plan, tmp_path / "out", rng=3)
    listed = result.manifest["not_protected"]["masked_without_formal_guarantee"]
    assert listed == ["zip: generalize", "la, lo: grid", "la2, lo2: jitter"]
    for step in ("zip", "la, lo", "la2, lo2"):
        assert result.manifest["steps"][step]["cost"] is None
        assert "no formal guarantee" in result.manifest["steps"][step]["guarantee"]


def test_a_plan_cannot_write_parquet_into_a_csv_name(tmp_path: Path) -> None:
    plan = _registry_plan(tmp_path / "registry.csv", False)
    plan["output"] = {"format": "parquet", "file": "x.csv"}
    with pytest.raises(PlanError, match=r"output: .*'x.csv' does not match format 'parquet'"):
        run(plan, tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_blank_lines_of_a_one_column_input_are_records(tmp_path: Path, engine: str) -> None:
    (tmp_path / "one.csv").write_text("code\nA\n\nB\n\n\nC\n", encoding="utf-8")
    plan = {
        "input": {"path": str(tmp_path / "one.csv")},
        "columns": {"code": {"role": "insensitive", "treatment": "keep"}},
        "output": {"report": False, "keep_order": True},
    }
    result = run(plan, tmp_path / engine, engine=engine)
    assert result.rows_in == result.rows_out == 6
    released = pd.read_csv(tmp_path / engine / "release.csv", skip_blank_lines=False)
    assert released["code"].isna().sum() == 3
