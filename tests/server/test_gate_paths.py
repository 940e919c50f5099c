"""Issue 18 through the platform: each guard of the release gate on the worker's path.

The platform's worker runs stored plans through :func:`veil.release.run`, so the gate's
guards hold there as they do for ``veil release`` (tests/gate/test_entry_points.py is
the library's and the command line's side of the same matrix). Here each is checked as
a curator and a data user meet it:

* a plan keeping columns that copy a masked location (X/Y copies of the pickup, its
  "(lat, lon)" text, a trip id) is refused in the job with the gate's message, and
  nothing is published; with ``acknowledge`` it is published and the stored public
  manifest lists them as leaks;
* the stored public manifest validates against the allow-list model
  (:class:`veil.gate.PublicManifest`) and holds no raw counts (``suppressed``,
  ``dropped``);
* a column whose name starts with ``=`` is downloaded with its header escaped, from a
  CSV release and from a Parquet release converted to CSV;
* no credential reaches a job's error, the audit log or the server log (a keyed token
  treatment with a vault password is refused when the plan is saved; a scheduler
  address with a password in the server's configuration fails the job without it).

Every test runs on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from sqlalchemy import select

from veil.datasets import load_adult, load_nyc_taxi
from veil.gate import CarrierError, PublicManifest, is_clean
from veil.release import example_plan, run
from veil.server.models import AuditEntry, BudgetEntry, Job, Release

from .conftest import (
    PLAN,
    Site,
    _postgres_database,
    _site,
    assign_reviewer,
    taxi_plan,
    upload_profiled,
)

COPIES = ("X", "Y", "Location", "trip_id")
FORMULA = '=HYPERLINK("http://evil.example","x")'
SECRET = "S3cretPassw0rd"


def _csv(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_csv(buffer, index=False)
    return buffer.getvalue()


def _taxi_with_copies() -> bytes:
    """The taxi sample with the pickup copied as X/Y and "(lat, lon)" text, and a trip id
    (as tests/gate/conftest.py builds it for the command line)."""
    taxi = load_nyc_taxi()
    taxi = taxi[(taxi["pickup_latitude"] != 0) & (taxi["dropoff_latitude"] != 0)].copy()
    taxi["X"] = taxi["pickup_longitude"]
    taxi["Y"] = taxi["pickup_latitude"]
    taxi["Location"] = (
        "(" + taxi["pickup_latitude"].astype(str) + ", " + taxi["pickup_longitude"].astype(str)
        + ")"
    )  # fmt: skip
    taxi["trip_id"] = np.arange(len(taxi))
    return _csv(taxi)


def _copies_plan(**changes: Any) -> str:
    plan = yaml.safe_load(taxi_plan())
    plan["columns"].update({c: {"role": "insensitive", "treatment": "keep"} for c in COPIES})
    plan.update(changes)
    return yaml.safe_dump(plan, sort_keys=False)


def _run(site: Site, data: bytes, text: str, name: str = "d") -> tuple[Any, dict[str, Any]]:
    """Carol uploads ``data``, saves ``text`` as its plan and runs it: her client and the job."""
    carol = site.login("carol")
    dataset = upload_profiled(site, carol, data, name=name)
    assign_reviewer(site, dataset)
    made = carol.post(f"/api/datasets/{dataset}/plans", json={"name": name, "text": text})
    assert made.status_code == 201, made.text
    queued = carol.post(f"/api/plans/{made.json()['plan']}/versions/1/jobs", json={"kind": "run"})
    assert queued.status_code == 201, queued.text
    site.work()
    return carol, carol.get(f"/api/jobs/{queued.json()['id']}").json()


def _publish(site: Site, carol: Any, release: int) -> None:
    assert carol.post(f"/api/releases/{release}/request-approval").status_code == 200
    assert site.login("cedric").post(f"/api/releases/{release}/approve").status_code == 200
    assert carol.post(f"/api/releases/{release}/publish").status_code == 200


def _audit(site: Site) -> str:
    with site.platform.db.session() as session:
        return "\n".join(e.detail for e in session.scalars(select(AuditEntry)))


def _nothing_published(site: Site) -> None:
    with site.platform.db.session() as session:
        assert session.scalars(select(Release)).all() == []
        assert session.scalars(select(BudgetEntry)).all() == []
        uids = session.scalars(select(Job.uid).where(Job.kind == "run")).all()
    for uid in uids:
        folder = site.platform.config.data_dir / "releases" / uid
        assert not [p for p in folder.rglob("*") if p.is_file()], uid


# --------------------------------------------------------------- carriers of a mask


def _library_refusal(data: bytes, text: str, folder: Path) -> str:
    """What :func:`veil.release.run` says of the same plan on the same records."""
    (folder / "input.csv").write_bytes(data)
    plan = {**yaml.safe_load(text), "input": {"path": str(folder / "input.csv")}}
    with pytest.raises(CarrierError) as refused:
        run(plan, folder / "out", rng=1)
    return str(refused.value)


def test_columns_copying_the_masked_pickup_are_refused_in_the_job(
    site: Site, tmp_path: Path
) -> None:
    data, text = _taxi_with_copies(), _copies_plan()
    _, job = _run(site, data, text)
    assert job["job"]["status"] == "failed" and job["release"] is None
    error = job["job"]["error"]
    assert error == _library_refusal(data, text, tmp_path)  # the gate's own message
    assert "X (coordinates: rank correlation" in error and "Location (coordinate-text" in error
    assert "trip_id (identifier" in error and "name them in acknowledge" in error
    _nothing_published(site)


def test_acknowledged_copies_are_published_and_listed_as_leaks(site: Site) -> None:
    carol, job = _run(site, _taxi_with_copies(), _copies_plan(acknowledge=list(COPIES)))
    assert job["job"]["status"] == "done", job["job"]["error"]
    _publish(site, carol, job["release"])
    dana = site.login("dana")
    manifest = dana.get(f"/api/catalogue/{job['release']}/manifest.json").json()
    assert manifest["not_protected"]["carriers_acknowledged"] == list(COPIES)
    leaks = [leak for leak in manifest["leaks"] if leak.startswith("acknowledge:")]
    assert len(leaks) == len(COPIES) and any("masked location" in leak for leak in leaks)
    # The evidence behind each carrier is computed on the raw records: not public.
    assert "rank correlation" not in json.dumps(manifest)
    page = dana.get(f"/catalogue/{job['release']}").text
    assert "Columns that carry other columns, acknowledged by the plan" in page
    released = pd.read_csv(io.BytesIO(dana.get(f"/catalogue/{job['release']}/download").content))
    assert set(COPIES) <= set(released.columns)


# ---------------------------------------------------------- the stored manifest


def _adult_plan() -> str:
    """The shipped Adult example (k-anonymity with suppression, local DP) on the platform."""
    plan = yaml.safe_load(example_plan("adult").read_text(encoding="utf-8"))
    del plan["input"]
    plan["evaluation"] = {"metrics": ["distributions"]}
    plan["output"]["report"] = False
    return yaml.safe_dump(plan, sort_keys=False)


@pytest.mark.parametrize("example", ["location", "adult"])
def test_the_stored_manifest_is_the_allow_list_with_no_raw_counts(site: Site, example: str) -> None:
    data, text = (
        (_csv(load_nyc_taxi()), taxi_plan())
        if example == "location"
        else (_csv(load_adult().head(3000)), _adult_plan())
    )
    carol, job = _run(site, data, text, name=example)
    assert job["job"]["status"] == "done", job["job"]["error"]
    with site.platform.db.session() as session:
        stored = session.get(Release, job["release"]).manifest  # type: ignore[union-attr]
    PublicManifest.model_validate(stored)
    text_of = json.dumps(stored)
    assert '"suppressed"' not in text_of and '"dropped"' not in text_of
    assert is_clean(text_of)
    # The records the run dropped or suppressed are counted, on the custodian's side.
    uid = _job_uid(site, job["job"]["id"])
    custodian = site.platform.config.data_dir / "releases" / uid / "release.custodian"
    record = json.loads((custodian / "custodian.json").read_text(encoding="utf-8"))
    if example == "location":
        assert sum(m.get("dropped", 0) for m in record["masking"]) > 0
    else:
        assert "suppressed" in json.dumps(record)
    # What a data user downloads is what is stored.
    _publish(site, carol, job["release"])
    downloaded = site.login("dana").get(f"/api/catalogue/{job['release']}/manifest.json")
    assert downloaded.json() == json.loads(json.dumps(stored))


def _job_uid(site: Site, job_id: int) -> str:
    with site.platform.db.session() as session:
        job = session.get(Job, job_id)
        assert job is not None
        return job.uid


# -------------------------------------------------------------- formula headers


@pytest.mark.parametrize("output", ["csv", "parquet"])
def test_a_formula_column_name_is_downloaded_escaped(site: Site, output: str) -> None:
    adult = load_adult().head(2000).rename(columns={"salary-class": FORMULA})
    adult[FORMULA] = adult[FORMULA].astype(object)
    adult.loc[:9, FORMULA] = "=1+1"  # and cells that start like a formula
    plan = yaml.safe_load(PLAN)
    plan["columns"][FORMULA] = plan["columns"].pop("salary-class")
    plan["output"] = {"format": output, "file": f"release.{output}", "report": False}
    carol, job = _run(site, _csv(adult), yaml.safe_dump(plan, sort_keys=False))
    assert job["job"]["status"] == "done", job["job"]["error"]
    _publish(site, carol, job["release"])
    dana = site.login("dana")
    query = "?format=csv" if output == "parquet" else ""
    download = dana.get(f"/catalogue/{job['release']}/download{query}")
    assert download.status_code == 200
    assert download.headers["content-type"].startswith("text/csv")
    header = download.text.splitlines()[0]
    assert "'" + FORMULA.replace('"', '""') in header, header
    assert not any(cell.lstrip('"').startswith("=") for cell in header.split(","))
    rows = download.text.splitlines()[1:]
    assert len(rows) == 2000
    assert sum(row.endswith(",'=1+1") for row in rows) == 10
    assert not any(cell.startswith("=") for row in rows for cell in row.split(","))


# ------------------------------------------------------------------- credentials


def test_a_token_plan_with_a_vault_password_is_refused_without_echoing_it(
    site: Site,
) -> None:
    carol = site.login("carol")
    dataset = upload_profiled(site, carol, _csv(load_adult().head(300)))
    for vault in (
        f"sqlite:///vault.db?password={SECRET}",
        f"postgresql+psycopg://127.0.0.1:9/vault?user=veil&password={SECRET}",
        f"postgresql+psycopg://veil:{SECRET}@127.0.0.1:9/vault?sslpassword={SECRET}",
    ):
        plan = yaml.safe_load(PLAN)
        plan["columns"]["sex"] = {
            "role": "identifier",
            "treatment": {"method": "token", "vault": vault, "key_file": "k.key"},
        }
        text = yaml.safe_dump(plan)
        for path in (f"/api/datasets/{dataset}/plans/preview", f"/api/datasets/{dataset}/plans"):
            response = carol.post(path, json={"name": "p", "text": text})
            assert response.status_code == 422, response.text
            refused = response.json()
            assert "token" in refused["error"]["message"]
            # The form gets its author's text back to edit; no message repeats the secret.
            assert SECRET not in json.dumps([refused["error"], refused.get("errors")])
        assert carol.get(f"/api/datasets/{dataset}").json()["plans"] == []
    assert SECRET not in _audit(site)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
@pytest.mark.parametrize(
    "address",
    [f"tcp://veil:{SECRET}@127.0.0.1:9", f"tcp://127.0.0.1:9?password={SECRET}",
     f"tls://veil:{SECRET}@127.0.0.1:9"],
    ids=["user part", "query", "tls user part"],
)  # fmt: skip
def test_a_job_error_never_holds_the_schedulers_password(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    backend: str,
    address: str,
) -> None:
    # The server's configured Dask scheduler holds a password; port 9 refuses.
    url = None
    if backend == "postgresql":
        url = _postgres_database(request.getfixturevalue("postgres_server"))
    site = _site(tmp_path, url, dask_scheduler=address)
    request.addfinalizer(site.platform.db.dispose)
    with caplog.at_level(logging.INFO, logger="veil"):
        carol, job = _run(site, _csv(load_adult().head(300)), PLAN)
    view = job["job"]
    assert view["status"] == "failed" and view["error"], view
    assert SECRET not in view["error"] and "veil:" not in view["error"], view["error"]
    assert SECRET not in _audit(site)
    assert SECRET not in caplog.text
    assert SECRET not in carol.get(f"/jobs/{view['id']}").text
    _nothing_published(site)


@pytest.mark.parametrize(
    "url",
    [f"postgresql+psycopg://veil:{SECRET}@127.0.0.1:9/veil",
     f"postgresql+psycopg://127.0.0.1:9/veil?user=veil&password={SECRET}&sslpassword={SECRET}"],
    ids=["user part", "query"],
)  # fmt: skip
def test_veil_serve_names_a_database_it_cannot_open_without_its_password(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    url: str,
) -> None:
    from veil.cli import main
    from veil.masking import SecretKey

    monkeypatch.setenv("VEIL_SERVER_KEY", SecretKey.generate().reveal().hex())
    code = main(["serve", "--data", str(tmp_path / "data"), "--database-url", url])
    printed = capsys.readouterr()
    assert code == 2
    error = printed.err.strip().splitlines()
    assert len(error) == 1 and error[0].startswith("veil: error: database_url: cannot open")
    assert "127.0.0.1:9/veil" in error[0] and "refused" in error[0]
    assert SECRET not in printed.out + printed.err + caplog.text
