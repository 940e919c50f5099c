"""Each guard of the release gate, through every entry point that writes the same output.

Issue 18: a protection existed on one path and was missing on the next. Here each guard
is one parametrized test over the paths that write what it guards: a plan run through
the library (:func:`veil.release.run`, on pandas and on Dask), ``veil release``, and
each one-table command (``ldp``, ``mask``, ``geo``, ``anonymize``, ``report``,
``sweep``). The platform's worker runs plans through :func:`veil.release.run`; its own
paths are tested in ``tests/server/test_gate_paths.py``.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from veil.errors import DomainError
from veil.gate import CarrierError, GateError, PublicManifest
from veil.geo import planar_laplace, projection_at
from veil.release import load_plan, run
from veil.release.engine import DaskEngine

from .conftest import CENTRE, Veil

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "veil" / "release" / "examples"
SECRET = "S3cretPassw0rd"
COPIES = ("X", "Y", "Location", "trip_id")


def _location_plan(source: Path, **changes: Any) -> dict[str, Any]:
    """The shipped location example on ``source``, with the copies kept as insensitive."""
    plan = yaml.safe_load((EXAMPLES / "location.yaml").read_text(encoding="utf-8"))
    plan["input"] = {"path": str(source)}
    plan["columns"].update({c: {"role": "insensitive", "treatment": "keep"} for c in COPIES})
    plan["output"]["report"] = False
    plan.update(changes)
    return plan


def _files(*folders: Path) -> Iterator[Path]:
    for folder in folders:
        if folder.exists():
            yield from (p for p in folder.rglob("*") if p.is_file())


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# ------------------------------------------------------------------ 1. credentials

# A relative SQLite URL names a file in the working folder: each test writes its own.
_VAULTS = [
    "sqlite:///{folder}/vault.db?password=" + SECRET,
    "sqlite:///{folder}/vault.db?sslpassword=" + SECRET + "&mode=rwc",
]


def _token_plan(folder: Path, people: Path, key_file: Path, vault: str) -> Path:
    plan = {
        "input": {"path": people.name},
        "columns": {
            "name": {
                "role": "identifier",
                "treatment": {"method": "token", "vault": vault, "key_file": key_file.name},
            },
            "age": {"role": "quasi_identifier", "treatment": {"method": "laplace",
                                                              "epsilon": 1, "bounds": [0, 100]}},
            "town": {"role": "quasi_identifier", "treatment": "keep"},
            "note": {"role": "sensitive", "treatment": "keep"},
        },
        "budget": {"ldp": {"epsilon": 1}},
    }  # fmt: skip
    path = folder / "plan.yaml"
    path.write_text(yaml.safe_dump(plan), encoding="utf-8")
    return path


@pytest.mark.parametrize("vault", _VAULTS)
@pytest.mark.parametrize("entry", ["library", "veil release", "veil release --dry-run"])
def test_a_vault_password_reaches_no_output_error_or_log(
    veil: Veil, tmp_path: Path, people: Path, key_file: Path, vault: str, entry: str
) -> None:
    plan = _token_plan(tmp_path, people, key_file, vault.format(folder=tmp_path))
    out = tmp_path / "rel"
    printed = ""
    if entry == "library":
        result = run(plan, out, rng=1)
        printed = json.dumps(result.to_dict(), default=str) + json.dumps(result.warnings)
    else:
        dry = ["--dry-run"] if entry.endswith("--dry-run") else ["--out", out]
        outcome = veil("release", plan, *dry, "--json")
        assert outcome.code == 0, outcome.err
        printed = outcome.out + outcome.err
    assert SECRET not in printed
    written = list(_files(out, tmp_path / "rel.custodian"))
    assert bool(written) == (entry != "veil release --dry-run")
    for path in written:
        assert SECRET.encode() not in path.read_bytes(), path.name
    if written:
        manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        PublicManifest.model_validate(manifest)
        assert manifest["steps"]["name"]["parameters"]["vault"].startswith("sqlite")
        assert "k.key" not in json.dumps(manifest)  # where the key is kept is not public


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql+psycopg://veil:{SECRET}@127.0.0.1:9/vault",
        f"postgresql+psycopg://127.0.0.1:9/vault?user=veil&password={SECRET}",
        f"postgresql+psycopg://127.0.0.1:9/vault?sslpassword={SECRET}&sslmode=require",
    ],
)
def test_a_database_that_cannot_be_reached_is_named_without_its_credentials(
    veil: Veil, tmp_path: Path, people: Path, key_file: Path, url: str
) -> None:
    # Port 9 (discard) refuses: the vault's error names the database, never the secret.
    plan = _token_plan(tmp_path, people, key_file, url)
    outcome = veil("release", plan, "--out", tmp_path / "rel")
    assert outcome.code == 2
    assert "vault" in outcome.err and SECRET not in outcome.err + outcome.out
    assert not (tmp_path / "rel").exists()


# --------------------------------------------------------------------- 2. carriers


def _refused_names(text: str) -> set[str]:
    return {c for c in COPIES if f"{c} (" in text}


@pytest.mark.parametrize("entry", ["library", "library on dask", "veil release"])
def test_a_plan_refuses_columns_that_copy_the_masked_point(
    veil: Veil, taxi_with_copies: Path, tmp_path: Path, entry: str
) -> None:
    plan = _location_plan(taxi_with_copies)
    out = tmp_path / "rel"
    if entry == "veil release":
        path = tmp_path / "plan.yaml"
        path.write_text(yaml.safe_dump(plan), encoding="utf-8")
        outcome = veil("release", path, "--out", out)
        assert outcome.code == 2
        message = outcome.err
    else:
        engine = DaskEngine("threads", npartitions=3) if entry.endswith("dask") else None
        with pytest.raises(CarrierError) as refused:
            run(plan, out, rng=1, engine=engine)
        message = str(refused.value)
    assert _refused_names(message) == set(COPIES)
    assert "acknowledge" in message
    assert not out.exists() and not (tmp_path / "rel.custodian").exists()


def test_acknowledged_copies_are_released_and_listed_as_leaks(
    taxi_with_copies: Path, tmp_path: Path
) -> None:
    plan = _location_plan(taxi_with_copies, acknowledge=list(COPIES))
    result = run(plan, tmp_path / "rel", rng=1)
    released = pd.read_csv(tmp_path / "rel" / "taxi_release.csv")
    assert set(COPIES) <= set(released.columns)
    manifest = result.manifest
    assert manifest["not_protected"]["carriers_acknowledged"] == list(COPIES)
    leaks = [leak for leak in manifest["leaks"] if leak.startswith("acknowledge:")]
    assert len(leaks) == 4 and any("masked location" in leak for leak in leaks)
    # The public leak names the column and why; the evidence (computed on the raw
    # records) is the custodian's.
    assert "rank correlation" not in json.dumps(manifest)
    assert any("rank correlation" in c for c in result.custodian["carriers"])


def test_acknowledge_names_only_columns_released_as_they_are(
    taxi_with_copies: Path, tmp_path: Path
) -> None:
    plan = _location_plan(taxi_with_copies, acknowledge=["fare_amount"])
    with pytest.raises(ValueError, match=r"acknowledge: 'fare_amount' is not a column released"):
        run(plan, tmp_path / "rel", rng=1)


_ONE_TABLE: dict[str, list[str]] = {
    "geo": ["--lat", "pickup_latitude", "--lon", "pickup_longitude", "--mask", "planar-laplace",
            "--epsilon", "0.01", "--centre", f"{CENTRE[0]},{CENTRE[1]}"],
    "ldp": ["--column", "fare_amount", "--mechanism", "laplace", "--epsilon", "1",
            "--bounds", "0,200"],
    "mask": ["--column", "tpep_pickup_datetime", "--method", "redact"],
    "anonymize": ["--hierarchy", "passenger_count=PASSENGERS", "--k", "2"],
}  # fmt: skip


@pytest.mark.parametrize("command", sorted(_ONE_TABLE))
def test_every_one_table_command_refuses_copied_carriers_unless_acknowledged(
    veil: Veil, taxi_with_copies: Path, tmp_path: Path, command: str
) -> None:
    hierarchy = tmp_path / "passengers.csv"
    hierarchy.write_text("\n".join(f"{i},*" for i in range(10)) + "\n", encoding="utf-8")
    args = [a.replace("PASSENGERS", str(hierarchy)) for a in _ONE_TABLE[command]]
    out = tmp_path / "out.csv"
    refused = veil(command, taxi_with_copies, *args, "--keep-other", "--out", out)
    assert refused.code == 2, refused.err
    assert "trip_id (identifier" in refused.err and "--acknowledge" in refused.err
    if command == "geo":
        assert _refused_names(refused.err) == set(COPIES)
    assert not out.exists()
    # Noising the fare and keeping the total (fare + tip + fees) beside it gives the fare
    # away as well: the gate names it too.
    named = ",".join((*COPIES, *(["total_amount"] if command == "ldp" else [])))
    done = veil(command, taxi_with_copies, *args, "--keep-other", "--acknowledge", named,
                "--out", out, "--json")  # fmt: skip
    assert done.code == 0, done.err
    warned = " ".join(w["message"] for w in json.loads(done.out)["warnings"])
    assert "--acknowledge" in warned and "trip_id (identifier" in warned
    assert set(COPIES) <= set(pd.read_csv(out).columns)


# ------------------------------------------------------------ 3. records dropped


def _typo(plan: dict[str, Any]) -> dict[str, Any]:
    for location in plan["locations"]:
        location["centre"] = [CENTRE[0], -CENTRE[1]]  # the sign of the longitude lost
    return plan


@pytest.mark.parametrize("entry", ["library", "library on dask", "veil release", "veil geo",
                                   "veil.geo"])  # fmt: skip
def test_a_centre_typo_that_would_empty_the_release_is_refused(
    veil: Veil, nyc_taxi: pd.DataFrame, tmp_path: Path, entry: str
) -> None:
    source = tmp_path / "taxi.csv"
    nyc_taxi.to_csv(source, index=False)
    plan = _typo(_location_plan(source))
    for column in COPIES:
        del plan["columns"][column]
    out = tmp_path / "rel"
    wrong = f"({CENTRE[0]}, {-CENTRE[1]})"
    if entry == "veil.geo":
        with pytest.raises(DomainError) as refused:
            typo = projection_at(CENTRE[0], -CENTRE[1])
            planar_laplace(nyc_taxi, "pickup_latitude", "pickup_longitude", 0.01,
                           projection=typo, outside="drop")  # fmt: skip
        message = str(refused.value)
    elif entry.startswith("library"):
        engine = DaskEngine("threads", npartitions=2) if entry.endswith("dask") else None
        with pytest.raises(DomainError) as refused:
            run(plan, out, rng=1, engine=engine)
        message = str(refused.value)
    else:
        if entry == "veil geo":
            outcome = veil("geo", source, "--lat", "pickup_latitude", "--lon",
                           "pickup_longitude", "--mask", "planar-laplace", "--epsilon", "0.01",
                           "--centre", f"{CENTRE[0]},{-CENTRE[1]}", "--outside", "drop",
                           "--drop-other", "--out", tmp_path / "geo.csv")  # fmt: skip
        else:
            path = tmp_path / "plan.yaml"
            path.write_text(yaml.safe_dump(plan), encoding="utf-8")
            outcome = veil("release", path, "--out", out)
        assert outcome.code == 2
        message = outcome.err
    assert wrong in message and "max_outside" in message
    assert "lie outside" in message and "would be dropped" in message
    assert not out.exists() and not (tmp_path / "geo.csv").exists()


def test_max_outside_sets_the_share_a_drop_may_lose(nyc_taxi: pd.DataFrame) -> None:
    # The sample's 15 trips at (0, 0) are 1.5 %: within the default; a limit under it
    # refuses them, a limit of 1 lets a typo empty the output knowingly.
    taxi = projection_at(*CENTRE)
    kept = planar_laplace(nyc_taxi, "pickup_latitude", "pickup_longitude", 0.01,
                          projection=taxi, outside="drop", rng=1)  # fmt: skip
    assert len(kept) == len(nyc_taxi) - int((nyc_taxi["pickup_latitude"] == 0).sum())
    with pytest.raises(DomainError, match=r"more than max_outside 0\.01"):
        planar_laplace(nyc_taxi, "pickup_latitude", "pickup_longitude", 0.01,
                       projection=taxi, outside="drop", max_outside=0.01, rng=1)  # fmt: skip
    emptied = planar_laplace(nyc_taxi, "pickup_latitude", "pickup_longitude", 0.01,
                             projection=projection_at(CENTRE[0], -CENTRE[1]), outside="drop",
                             max_outside=1.0, rng=1)  # fmt: skip
    assert len(emptied) == 0


# -------------------------------------------------------------- 4. raw counts


@pytest.mark.parametrize("publish", [False, True])
def test_counts_of_the_raw_records_are_public_only_when_the_plan_opts_in(
    tmp_path: Path, publish: bool
) -> None:
    plan = yaml.safe_load((EXAMPLES / "location.yaml").read_text(encoding="utf-8"))
    plan["output"] = {**plan["output"], "report": False, "publish_counts": publish}
    result = run(plan, tmp_path / "rel", rng=1)
    manifest = result.manifest
    text = json.dumps(manifest)
    dropped = [m for m in result.custodian["masking"] if "dropped" in m]
    assert sum(m["dropped"] for m in dropped) == 998 - result.rows_out
    assert ('"dropped"' in text) == publish
    counted = [leak for leak in manifest["leaks"] if "publish_counts" in leak]
    assert bool(counted) == publish


def test_every_example_manifest_validates_against_its_allow_list(tmp_path: Path) -> None:
    for example in sorted(EXAMPLES.glob("*.yaml")):
        loaded = load_plan(example)
        plan = loaded.model_copy(
            update={"output": loaded.output.model_copy(update={"report": False})}
        )
        result = run(plan, tmp_path / example.stem, rng=1)
        written = json.loads((tmp_path / example.stem / "manifest.json").read_text("utf-8"))
        PublicManifest.model_validate(written)
        assert written == json.loads(json.dumps(result.manifest))
        assert "suppressed" not in json.dumps(written)


def test_a_manifest_with_a_field_outside_the_allow_list_is_refused() -> None:
    from veil.gate import validated

    with pytest.raises(GateError, match="allow-list"):
        validated({"format": "veil public manifest 2", "input": {"sha256": "00"}})


# ------------------------------------------------------------------- 5. modes


@pytest.fixture
def open_umask() -> Iterator[None]:
    """A umask of 0: a confidential file is 0600 whatever the process allows."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def test_plan_outputs_confidential_0600_in_0700_and_public_per_umask(
    tmp_path: Path, open_umask: None
) -> None:
    plan = yaml.safe_load((EXAMPLES / "location.yaml").read_text(encoding="utf-8"))
    result = run(plan, tmp_path / "rel", rng=1)
    assert result.custodian_dir is not None
    assert _mode(result.custodian_dir) == 0o700
    for path in result.custodian_dir.iterdir():
        assert _mode(path) == 0o600, path.name
    for path in (tmp_path / "rel").iterdir():
        assert _mode(path) == 0o666, path.name  # public: what open gives under umask 0


@pytest.mark.parametrize("command", ["report", "sweep"])
def test_confidential_command_outputs_are_0600(
    veil: Veil, tmp_path: Path, people: Path, open_umask: None, command: str
) -> None:
    if command == "sweep":
        plan = _token_plan(tmp_path, people, tmp_path / "k.key", "v.db")
        outcome = veil("sweep", plan, "--column", "age", "--epsilons", "0.5,1", "--runs", "2",
                       "--metric", "tvd", "--private-input", "--seed", "1",
                       "--out", tmp_path / "sweep")  # fmt: skip
        assert outcome.code == 0, outcome.err
        written = list((tmp_path / "sweep").iterdir())
    else:
        plan = _token_plan(tmp_path, people, tmp_path / "k.key", "v.db")
        data = yaml.safe_load(plan.read_text(encoding="utf-8"))
        data["columns"]["name"] = {"role": "identifier", "treatment": "drop"}
        plan.write_text(yaml.safe_dump(data), encoding="utf-8")
        assert veil("release", plan, "--out", tmp_path / "rel").code == 0
        report = tmp_path / "elsewhere" / "report.html"
        report.parent.mkdir()
        outcome = veil("report", people, tmp_path / "rel" / "release.csv", "--manifest",
                       tmp_path / "rel" / "manifest.json", "--custodian",
                       tmp_path / "rel.custodian" / "custodian.json", "--out", report)  # fmt: skip
        assert outcome.code == 0, outcome.err
        written = [report]
    assert written and all(_mode(p) == 0o600 for p in written), [oct(_mode(p)) for p in written]


def test_a_vault_file_is_0600(
    tmp_path: Path, people: Path, key_file: Path, open_umask: None
) -> None:
    run(_token_plan(tmp_path, people, key_file, "vault.db"), tmp_path / "rel", rng=1)
    assert _mode(tmp_path / "vault.db") == 0o600


def test_veil_report_refuses_to_write_into_a_release_folder(
    veil: Veil, tmp_path: Path, people: Path
) -> None:
    plan = {
        "input": {"path": str(people)},
        "columns": {"age": {"role": "quasi_identifier", "treatment": {
            "method": "laplace", "epsilon": 1, "bounds": [0, 100]}}},
        "unlisted": "drop",
        "budget": {"ldp": {"epsilon": 1}},
    }  # fmt: skip
    run(plan, tmp_path / "rel", rng=1)
    for target in (tmp_path / "rel" / "report.html", tmp_path / "rel" / "sub" / "r.html"):
        target.parent.mkdir(exist_ok=True)
        outcome = veil("report", people, tmp_path / "rel" / "release.csv", "--manifest",
                       tmp_path / "rel" / "manifest.json", "--out", target)  # fmt: skip
        assert outcome.code == 2
        assert "release folder" in outcome.err and "manifest.json" in outcome.err
        assert not target.exists()


# ------------------------------------------------------------ 6. temporary files

_KILLER = """
import os, signal, sys
import pandas as pd
real = pd.DataFrame.to_csv
def killed(self, path, *args, **kwargs):
    real(self.head(5), path, *args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)
pd.DataFrame.to_csv = killed
from veil.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("command", sorted(_ONE_TABLE))
def test_a_killed_command_leaves_nothing_readable_and_the_next_run_cleans_up(
    veil: Veil, taxi_with_copies: Path, tmp_path: Path, command: str
) -> None:
    import subprocess
    import sys

    hierarchy = tmp_path / "passengers.csv"
    hierarchy.write_text("\n".join(f"{i},*" for i in range(10)) + "\n", encoding="utf-8")
    args = [a.replace("PASSENGERS", str(hierarchy)) for a in _ONE_TABLE[command]]
    folder = tmp_path / "out"
    folder.mkdir()
    argv = [command, str(taxi_with_copies), *args, "--drop-other", "--out", str(folder / "o.csv")]
    killed = subprocess.run([sys.executable, "-c", _KILLER, *argv], capture_output=True)
    assert killed.returncode == -9
    left = list(folder.iterdir())
    assert left and all(p.name.startswith(".veil-staging-") for p in left)
    assert all(_mode(p) == 0o700 for p in left)  # the partial output is the owner's alone
    assert not (folder / "o.csv").exists()
    assert veil(*argv).code == 0
    assert [p.name for p in folder.iterdir()] == ["o.csv"]


# ----------------------------------------------------------- 7. formula headers

_FORMULA = '=HYPERLINK("http://evil.example","x")'


# What each command's kept columns carry in the taxi sample, acknowledged to keep them.
_CARRIED = {
    "ldp": "tpep_pickup_datetime,total_amount",
    "geo": "tpep_pickup_datetime",
}


@pytest.mark.parametrize("entry", ["library", "veil ldp", "veil mask", "veil geo"])
def test_a_formula_in_a_column_name_is_escaped(
    veil: Veil, nyc_taxi: pd.DataFrame, tmp_path: Path, entry: str
) -> None:
    taxi = nyc_taxi[nyc_taxi["pickup_latitude"] != 0].rename(columns={"passenger_count": _FORMULA})
    source = tmp_path / "taxi.csv"
    taxi.to_csv(source, index=False)
    out = tmp_path / "o.csv"
    command = entry.split()[-1]
    rest = ["--keep-other", "--acknowledge", _CARRIED.get(command, ""), "--out", out]
    if entry == "library":
        plan = yaml.safe_load((EXAMPLES / "location.yaml").read_text(encoding="utf-8"))
        plan["input"] = {"path": str(source)}
        plan["columns"][_FORMULA] = plan["columns"].pop("passenger_count")
        plan["output"] = {"report": False}
        run(plan, tmp_path / "rel", rng=1)
        out = tmp_path / "rel" / "release.csv"
    else:
        outcome = veil(command, source, *_ONE_TABLE[command], *rest)
        assert outcome.code == 0, outcome.err
    header = out.read_text(encoding="utf-8").splitlines()[0]
    assert "'" + _FORMULA.replace('"', '""') in header
    assert not any(cell.startswith("=") for cell in header.split(","))


def test_veil_init_drafts_the_copies_as_dropped_so_its_plan_releases(
    veil: Veil, taxi_with_copies: Path, tmp_path: Path
) -> None:
    # Issue 18, defect 2: veil init drafted X/Y as kept columns, which the gate refuses.
    plan = tmp_path / "taxi.plan.yaml"
    drafted = veil("init", taxi_with_copies, "--out", plan)
    assert drafted.code == 0, drafted.err
    columns = yaml.safe_load(plan.read_text(encoding="utf-8"))["columns"]
    for name in ("X", "Y"):
        assert columns[name]["treatment"] == "drop"
    text = plan.read_text(encoding="utf-8")
    assert "coordinate of the masked location" in text and "acknowledge" in text
    released = veil("release", plan, "--out", tmp_path / "rel")
    assert released.code == 0, released.err
    assert not set(COPIES) & set(pd.read_csv(tmp_path / "rel" / "release.csv").columns)


def test_every_guarantee_states_its_notion_unit_and_neighbouring_relation(
    tmp_path: Path,
) -> None:
    # Issue 18, item 13: a budget without its neighbouring relation says too little.
    expected = {
        ("ldp", "record"): "any two values of one record",
        ("metric", "metre"): "any two locations",
        ("syntactic", "record"): "none: a property of the released table",
    }
    seen = set()
    for example in sorted(EXAMPLES.glob("*.yaml")):
        loaded = load_plan(example)
        plan = loaded.model_copy(
            update={"output": loaded.output.model_copy(update={"report": False})}
        )
        for guarantee in run(plan, tmp_path / example.stem, rng=1).manifest["guarantees"]:
            key = (guarantee["notion"], guarantee["unit"])
            assert guarantee["neighbouring"].startswith(expected[key]), guarantee
            seen.add(key)
    assert seen == set(expected)
