"""The release gate's matrix, continued: the paths ``test_entry_points.py`` left out.

* ``veil share`` (and a plan's ``share`` step): formula headers, the mode of its public
  output, a kill while it writes, and Q columns that give an S column away;
* formula headers through ``veil anonymize`` and a plan run on Dask;
* the drop limit's opt-out: a plan's ``locations[].max_outside`` and ``veil geo
  --max-outside`` lift the refusal the same input gets without them;
* a release through a PostgreSQL vault whose URL holds a password: no file, printed line
  or log record holds the password;
* projected coordinates (UTM metres, State Plane feet) of the masked point, kept beside
  it: refused on every path unless acknowledged.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from veil.errors import DomainError
from veil.gate import HEADER, CarrierError, PublicManifest
from veil.release import run
from veil.release.engine import DaskEngine

from ..cli.test_share import DOMAIN
from ..cli.test_share import table as table  # the shared fixture
from ..masking.conftest import postgres_server  # noqa: F401 (the shared fixture)
from ..release.test_share_step import _plan as _share_plan
from ..release.test_share_step import _table as _share_table
from ..server.conftest import _postgres_database
from .conftest import CENTRE, Veil
from .test_entry_points import (
    _FORMULA,
    _KILLER,
    _ONE_TABLE,
    COPIES,
    EXAMPLES,
    SECRET,
    _files,
    _location_plan,
    _mode,
    _token_plan,
)


@contextmanager
def _umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def _header(path: Path) -> str:
    return path.read_text(encoding="utf-8").splitlines()[0]


def _assert_escaped(header: str, name: str) -> None:
    """``name`` is in the CSV header with its apostrophe, and no name runs as a formula."""
    assert "'" + name.replace('"', '""') in header
    assert not any(cell.lstrip('"').startswith("=") for cell in header.split(","))


# ------------------------------------------------------------------ 1. veil share

# --q and --s split on commas: a formula name without one.
_SHARE_FORMULA = '=HYPERLINK("http://evil.example")'


def _share_files(folder: Path, frame: pd.DataFrame, renamed: dict[str, str]) -> tuple[Path, Path]:
    data, domain = folder / "people.csv", folder / "domain.yaml"
    frame.rename(columns=renamed).to_csv(data, index=False)
    spec = {renamed.get(k, k): v for k, v in DOMAIN.items()}
    domain.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return data, domain


def _share(data: Path, domain: Path, out: Path, q: str = "sex,region", *extra: object) -> list[str]:
    return [str(a) for a in (
        "share", data, "--q", q, "--s", "age,income,y", "--label", "y", "--domain", domain,
        "--out", out, "--synthesizer", "independent", "--tn", "3", "--instances", "2",
        "--seed", "5", *extra,
    )]  # fmt: skip


def test_veil_share_escapes_a_formula_in_a_column_name(
    veil: Veil, table: pd.DataFrame, tmp_path: Path
) -> None:
    data, domain = _share_files(tmp_path, table, {"region": _SHARE_FORMULA})
    out = tmp_path / "out.csv"
    shown = veil(*_share(data, domain, out, f"sex,{_SHARE_FORMULA}", "--json"))
    assert shown.code == 0, shown.err
    assert json.loads(shown.out)["csv_cells_escaped"][HEADER] == 1
    _assert_escaped(_header(out), _SHARE_FORMULA)
    # Read back, the name keeps its apostrophe: the escape is in the file itself.
    assert set(pd.read_csv(out).columns) == {"sex", "'" + _SHARE_FORMULA, "age", "income", "y"}


@pytest.mark.parametrize(
    ("umask", "mode"),
    [(0o000, 0o666), (0o027, 0o640), (0o077, 0o600)],
    ids=["umask 000", "umask 027", "umask 077"],
)
def test_veil_share_writes_a_public_file_that_follows_the_umask(
    veil: Veil, table: pd.DataFrame, tmp_path: Path, umask: int, mode: int
) -> None:
    # The released table is public: it is written as the umask allows, and nothing else
    # (no staging folder, no temporary file) is left beside it.
    data, domain = _share_files(tmp_path, table, {})
    folder = tmp_path / "release"
    folder.mkdir()
    with _umask(umask):
        shown = veil(*_share(data, domain, folder / "out.csv"))
    assert shown.code == 0, shown.err
    assert [p.name for p in folder.iterdir()] == ["out.csv"]
    assert _mode(folder / "out.csv") == mode


def test_a_killed_veil_share_leaves_nothing_readable_and_the_next_run_cleans_up(
    veil: Veil, table: pd.DataFrame, tmp_path: Path
) -> None:
    data, domain = _share_files(tmp_path, table, {})
    folder = tmp_path / "out"
    folder.mkdir()
    argv = _share(data, domain, folder / "o.csv")
    killed = subprocess.run([sys.executable, "-c", _KILLER, *argv], capture_output=True)
    assert killed.returncode == -9, killed.stderr  # killed in the middle of its write
    left = list(folder.iterdir())
    assert left and all(p.name.startswith(".veil-staging-") for p in left)
    assert all(_mode(p) == 0o700 for p in left)  # the partial output is the owner's alone
    done = veil(*argv)
    assert done.code == 0, done.err
    assert [p.name for p in folder.iterdir()] == ["o.csv"]


# y_copy repeats the synthesized label y; row_id numbers the records.
_SHARE_CARRIERS = {"y_copy": "same-categories", "row_id": "identifier"}


@pytest.mark.parametrize("column", sorted(_SHARE_CARRIERS))
def test_veil_share_refuses_a_q_column_that_gives_s_away_unless_acknowledged(
    veil: Veil, table: pd.DataFrame, tmp_path: Path, column: str
) -> None:
    # Q is released as it is: a Q column that is a copy of the synthesized y, or a
    # record number, undoes the synthesis as an X/Y copy undoes a location mask.
    frame = table.assign(y_copy=table["y"], row_id=range(len(table)))
    data, domain = _share_files(tmp_path, frame, {})
    spec = yaml.safe_load(domain.read_text(encoding="utf-8"))
    spec.update({"y_copy": ["hi", "lo"], "row_id": {"bounds": [0, len(table)], "bins": 10}})
    domain.write_text(yaml.safe_dump(spec), encoding="utf-8")
    out = tmp_path / "out.csv"
    refused = veil(*_share(data, domain, out, f"sex,region,{column}"))
    assert refused.code == 2
    assert f"{column} ({_SHARE_CARRIERS[column]}" in refused.err
    assert "--acknowledge" in refused.err
    assert not out.exists()
    done = veil(*_share(data, domain, out, f"sex,region,{column}", "--acknowledge", column))
    if column == "row_id":
        # Acknowledged, a record number still fails OptimShare's own check on Q.
        assert done.code == 1 and "only 1-anonymous (min_k = 2)" in done.err
        assert not out.exists()
        return
    assert done.code == 0, done.err
    assert "--acknowledge" in done.err and "y_copy (same-categories" in done.err
    # Released as it is: each record's (sex, y) is in the file, where y is meant to be
    # synthetic.
    released = pd.read_csv(out)
    assert sorted(zip(released["sex"], released["y_copy"], strict=True)) == sorted(
        zip(frame["sex"], frame["y"], strict=True)
    )


def test_a_share_plan_refuses_a_q_column_that_gives_s_away_unless_acknowledged(
    tmp_path: Path,
) -> None:
    plan = _share_plan(tmp_path)
    frame = _share_table()
    frame["y_copy"] = frame["y"]
    frame.to_csv(tmp_path / "people.csv", index=False)
    plan["columns"]["y_copy"] = {"role": "quasi_identifier", "treatment": "keep"}
    plan["share"]["quasi_identifiers"].append("y_copy")
    plan["share"]["domain"] = {**plan["share"]["domain"], "y_copy": ["hi", "lo"]}
    with pytest.raises(CarrierError, match=r"y_copy \(same-categories") as refused:
        run(plan, tmp_path / "rel", rng=1)
    assert "acknowledge" in str(refused.value)
    assert not (tmp_path / "rel").exists()
    plan["acknowledge"] = ["y_copy"]
    result = run(plan, tmp_path / "rel", rng=1)
    released = result.read_release()
    assert (released["y_copy"].to_numpy() == frame.loc[released.index, "y"].to_numpy()).all()
    assert result.manifest["not_protected"]["carriers_acknowledged"] == ["y_copy"]
    assert any(leak.startswith("acknowledge: y_copy") for leak in result.manifest["leaks"])


# ------------------------------------------------------------ 2. formula headers


@pytest.mark.parametrize("entry", ["veil anonymize", "library on dask"])
def test_a_formula_in_a_column_name_is_escaped_on_anonymize_and_dask(
    veil: Veil, nyc_taxi: pd.DataFrame, tmp_path: Path, entry: str
) -> None:
    taxi = nyc_taxi[nyc_taxi["pickup_latitude"] != 0]
    source = tmp_path / "taxi.csv"
    if entry == "veil anonymize":
        taxi.rename(columns={"tip_amount": _FORMULA}).to_csv(source, index=False)
        hierarchy = tmp_path / "passengers.csv"
        hierarchy.write_text("\n".join(f"{i},*" for i in range(10)) + "\n", encoding="utf-8")
        args = [a.replace("PASSENGERS", str(hierarchy)) for a in _ONE_TABLE["anonymize"]]
        out = tmp_path / "o.csv"
        outcome = veil("anonymize", source, *args, "--keep-other", "--out", out, "--json")
        assert outcome.code == 0, outcome.err
        assert json.loads(outcome.out)["csv_cells_escaped"][HEADER] == 1
    else:
        taxi.rename(columns={"passenger_count": _FORMULA}).to_csv(source, index=False)
        plan = yaml.safe_load((EXAMPLES / "location.yaml").read_text(encoding="utf-8"))
        plan["input"] = {"path": str(source)}
        plan["columns"][_FORMULA] = plan["columns"].pop("passenger_count")
        plan["output"] = {"report": False}
        run(plan, tmp_path / "rel", rng=1, engine=DaskEngine("threads", npartitions=3))
        out = tmp_path / "rel" / "release.csv"
    _assert_escaped(_header(out), _FORMULA)


# ------------------------------------------------------- 3. the drop limit's opt-out


def _location_plan_without(source: Path, absent: Any, **changes: Any) -> dict[str, Any]:
    """:func:`_location_plan` for a table that lacks the copies in ``absent``."""
    plan = _location_plan(source, **changes)
    for column in absent:
        del plan["columns"][column]
    return plan


@pytest.fixture
def third_outside(nyc_taxi: pd.DataFrame, tmp_path: Path) -> tuple[Path, int, int]:
    """The taxi sample with every third pickup at (0, 0): the file, its rows, the outside.

    A third of the records outside the projection is more than the default limit
    (0.2) on the whole table and in each of three Dask partitions.
    """
    taxi = nyc_taxi[(nyc_taxi["pickup_latitude"] != 0) & (nyc_taxi["dropoff_latitude"] != 0)]
    taxi = taxi.reset_index(drop=True)
    outside = taxi.index % 3 == 0
    taxi.loc[outside, ["pickup_latitude", "pickup_longitude"]] = 0.0
    path = tmp_path / "taxi.csv"
    taxi.to_csv(path, index=False)
    return path, len(taxi), int(outside.sum())


@pytest.mark.parametrize("entry", ["library", "library on dask", "veil release", "veil geo"])
def test_max_outside_lifts_the_refusal_the_same_input_gets_without_it(
    veil: Veil, third_outside: tuple[Path, int, int], tmp_path: Path, entry: str
) -> None:
    source, rows, outside = third_outside
    counted = f"{outside} of {rows} records"
    for limit in (None, 0.5):
        out = tmp_path / f"rel-{limit}"
        if entry == "veil geo":
            out = tmp_path / f"geo-{limit}.csv"
            given = [] if limit is None else ["--max-outside", str(limit)]
            outcome = veil("geo", source, "--lat", "pickup_latitude", "--lon",
                           "pickup_longitude", "--mask", "planar-laplace", "--epsilon", "0.01",
                           "--centre", f"{CENTRE[0]},{CENTRE[1]}", "--outside", "drop",
                           *given, "--drop-other", "--seed", "1", "--out", out)  # fmt: skip
            if limit is None:
                assert outcome.code == 2 and counted in outcome.err
                assert "max_outside 0.2" in outcome.err and not out.exists()
            else:
                assert outcome.code == 0, outcome.err
                assert len(pd.read_csv(out)) == rows - outside
            continue
        plan = _location_plan_without(source, COPIES)
        if limit is not None:
            plan["locations"][0]["max_outside"] = limit
        engine = DaskEngine("threads", npartitions=3) if entry.endswith("dask") else None
        if entry == "veil release":
            path = tmp_path / f"plan-{limit}.yaml"
            path.write_text(yaml.safe_dump(plan), encoding="utf-8")
            outcome = veil("release", path, "--out", out)
            message, code = outcome.err, outcome.code
        else:
            try:
                run(plan, out, rng=1, engine=engine)
                message, code = "", 0
            except DomainError as refused:
                message, code = str(refused), 2
        if limit is None:
            assert code == 2 and "max_outside 0.2" in message
            assert f"({CENTRE[0]}, {CENTRE[1]})" in message
            assert "would be dropped" in message and not out.exists()
            if not entry.endswith("dask"):  # Dask counts per partition
                assert counted in message
            continue
        assert code == 0, message
        assert len(pd.read_csv(out / "taxi_release.csv")) == rows - outside
        manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        assert manifest["plan"]["locations"][0]["max_outside"] == limit  # the opt-out is public
        assert _dropped(out) == outside


def _dropped(out: Path) -> int:
    """The records the pickup's mask dropped, as the custodian file records them."""
    custodian = json.loads(Path(f"{out}.custodian", "custodian.json").read_text("utf-8"))
    return sum(
        m.get("dropped", 0) for m in custodian["masking"] if "pickup_latitude" in m["columns"]
    )


def test_on_dask_the_custodian_counts_the_records_every_partition_dropped(
    third_outside: tuple[Path, int, int], tmp_path: Path
) -> None:
    source, _, outside = third_outside
    plan = _location_plan_without(source, COPIES)
    plan["locations"][0]["max_outside"] = 0.5
    run(plan, tmp_path / "rel", rng=1, engine=DaskEngine("threads", npartitions=3))
    assert _dropped(tmp_path / "rel") == outside


# ------------------------------------------------------ 4. a PostgreSQL vault


def _with_password(server: str, form: str) -> str:
    """A fresh database on the test server, its URL holding ``SECRET`` in ``form``.

    The server trusts its socket's users, so the password is sent and ignored: the
    release runs, and where the password goes is what is tested.
    """
    from sqlalchemy.engine import make_url

    url = make_url(_postgres_database(server))
    held = url.set(password=SECRET) if form == "user:pw@" else url.update_query_dict({form: SECRET})
    return held.render_as_string(hide_password=False)


@pytest.mark.parametrize("form", ["user:pw@", "password", "sslpassword"])
@pytest.mark.parametrize("entry", ["library", "veil release"])
def test_a_postgresql_vault_password_reaches_no_file_printed_line_or_log(
    veil: Veil,
    tmp_path: Path,
    people: Path,
    key_file: Path,
    postgres_server: str,  # noqa: F811 (the shared fixture)
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
    form: str,
    entry: str,
) -> None:
    import psycopg
    from sqlalchemy.engine import make_url

    vault = _with_password(postgres_server, form)
    assert SECRET in vault
    plan = _token_plan(tmp_path, people, key_file, vault)
    out = tmp_path / "rel"
    caplog.set_level(logging.DEBUG)
    if entry == "library":
        result = run(plan, out, rng=1)
        captured = capsys.readouterr()
        printed = captured.out + captured.err + json.dumps(result.to_dict(), default=str)
    else:
        outcome = veil("release", plan, "--out", out, "--json")
        assert outcome.code == 0, outcome.err
        printed = outcome.out + outcome.err
    # The tokens are in the PostgreSQL vault, one a person.
    url = make_url(vault)
    with psycopg.connect(host=url.query["host"], port=int(str(url.query["port"])),
                         user=url.username, dbname=url.database) as conn:  # fmt: skip
        stored = conn.execute("SELECT count(*) FROM veil_tokens").fetchone()
    assert stored is not None and stored[0] == len(pd.read_csv(people))
    written = {p.name: p for p in _files(out, tmp_path / "rel.custodian")}
    assert {"manifest.json", "custodian.json", "report.html"} <= set(written)
    for path in written.values():
        assert SECRET.encode() not in path.read_bytes(), path.name
    logged = "\n".join(f"{r.getMessage()} {r.args!r}" for r in caplog.records)
    assert SECRET not in printed + logged + caplog.text
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    PublicManifest.model_validate(manifest)
    assert manifest["steps"]["name"]["parameters"]["vault"] == "postgresql database"


# ------------------------------------------------ 5. projected coordinates


_PROJECTED = {"UTM 18N metres": "EPSG:32618", "NY State Plane feet": "EPSG:2263"}


@pytest.fixture(params=sorted(_PROJECTED))
def taxi_projected(request: pytest.FixtureRequest, nyc_taxi: pd.DataFrame, tmp_path: Path) -> Path:
    """The taxi sample with ``X``/``Y``: the pickup point in a projected CRS."""
    from pyproj import Transformer

    taxi = nyc_taxi[(nyc_taxi["pickup_latitude"] != 0) & (nyc_taxi["dropoff_latitude"] != 0)]
    to = Transformer.from_crs("EPSG:4326", _PROJECTED[request.param], always_xy=True)
    x, y = to.transform(taxi["pickup_longitude"].to_numpy(), taxi["pickup_latitude"].to_numpy())
    path = tmp_path / "taxi.csv"
    taxi.assign(X=x.round(2), Y=y.round(2)).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("entry", ["library", "veil release", "veil geo"])
def test_projected_copies_of_the_masked_point_are_refused_unless_acknowledged(
    veil: Veil, taxi_projected: Path, tmp_path: Path, entry: str
) -> None:
    out = tmp_path / "rel"
    for acknowledge in ([], ["X", "Y"]):
        if entry == "veil geo":
            # The pickup time is one more carrier the command names: acknowledged here.
            known = ",".join([*acknowledge, "tpep_pickup_datetime"])
            out = tmp_path / "geo.csv"
            outcome = veil("geo", taxi_projected, *_ONE_TABLE["geo"], "--keep-other",
                           "--acknowledge", known, "--out", out)  # fmt: skip
            message, code = outcome.err, outcome.code
            released_file = out
        else:
            plan = _location_plan_without(
                taxi_projected, ("Location", "trip_id"), acknowledge=acknowledge
            )
            released_file = out / "taxi_release.csv"
            if entry == "veil release":
                path = tmp_path / "plan.yaml"
                path.write_text(yaml.safe_dump(plan), encoding="utf-8")
                outcome = veil("release", path, "--out", out)
                message, code = outcome.err, outcome.code
            else:
                try:
                    run(plan, out, rng=1)
                    message, code = "", 0
                except CarrierError as refused:
                    message, code = str(refused), 2
        if not acknowledge:
            assert code == 2
            assert "X (coordinates" in message and "Y (coordinates" in message
            assert "acknowledge" in message and not released_file.exists()
            continue
        assert code == 0, message
        released = pd.read_csv(released_file)
        source = pd.read_csv(taxi_projected)
        # Released as they are, so the exact pickups are in them: the reason to refuse.
        assert set(zip(released["X"], released["Y"], strict=True)) <= set(
            zip(source["X"], source["Y"], strict=True)
        )
        if entry != "veil geo":
            manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
            assert manifest["not_protected"]["carriers_acknowledged"] == ["X", "Y"]
            leaks = [leak for leak in manifest["leaks"] if leak.startswith("acknowledge:")]
            assert len(leaks) == 2 and all("masked location" in leak for leak in leaks)
        else:
            assert "X (coordinates" in message and "--acknowledge" in message
