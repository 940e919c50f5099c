"""Upload limits, the profile's time limit, leases, private files and one-way imports.

* An upload with more columns than ``max_columns`` or a cell longer than
  ``max_cell_chars`` is refused naming the file, and leaves nothing.
* A profile past ``profile_seconds`` stops, and its dataset says why; one whose worker
  does not stop is failed by the supervisor's check (:func:`veil.server.jobs.overdue`).
* A job whose lease ran out is reclaimed, and its stale worker commits nothing.
* ``veil.db`` is 0600 in a 0700 folder; ``veil serve`` keeps the key outside the data
  folder, and warns at every start when it is inside.
* ``datasets``, ``jobs`` and ``releases`` import one another one way only.
"""

from __future__ import annotations

import ast
import os
import stat
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from veil.server.accounts import now
from veil.server.jobs import claim, overdue, reclaim
from veil.server.models import BudgetEntry, Job, Release
from veil.server.worker import LOST, execute

from .conftest import PLAN, Site, _site, adult_csv, upload, upload_profiled


def _wide(columns: int, rows: int = 3) -> bytes:
    header = ",".join(f"c{i}" for i in range(columns))
    body = "\n".join(",".join(str((r + i) % 7) for i in range(columns)) for r in range(rows))
    return (header + "\n" + body + "\n").encode()


def test_too_many_columns_or_too_long_a_cell_is_refused_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    site = _site(tmp_path, None, max_columns=50, max_cell_chars=100)
    carol = site.login("carol")
    wide = upload(carol, _wide(51))
    assert wide.status_code == 422
    assert wide.json()["error"]["field"] == "file" and "the limit is 50" in wide.text
    long_cell = upload(carol, b"a,b\n1," + b"x" * 101 + b"\n")
    assert long_cell.status_code == 422 and "longer than 100 characters" in long_cell.text
    # Split across the pieces the upload arrives in, a long cell is still seen.
    split = upload(carol, b"a,b\n1," + b"y" * 70_000 + b"\n")
    assert split.status_code == 422 and "longer than 100" in split.text
    assert not any((site.platform.config.data_dir / "datasets").glob("*.veil"))
    assert upload(carol, _wide(50)).status_code == 201


def test_a_profile_past_its_time_limit_stops_and_says_why(tmp_path: Path) -> None:
    site = _site(tmp_path, None, profile_seconds=1)
    carol = site.login("carol")
    # Wide and long enough that reading it takes longer than the limit.
    response = upload(carol, _wide(1000, rows=4000))
    assert response.status_code == 201
    started = time.monotonic()
    assert site.work() == ["failed"]
    assert time.monotonic() - started < 60
    job = carol.get(f"/api/jobs/{response.json()['profile_job']}").json()["job"]
    assert "time limit of 1 s" in job["error"]
    dataset = carol.get(f"/api/datasets/{response.json()['id']}").json()["dataset"]
    assert dataset["profile_status"] == "failed" and dataset["custody"] == "encrypted"
    assert "The profile stopped" in carol.get(f"/datasets/{response.json()['id']}").text


def test_a_space_aligned_upload_is_refused_as_the_command_line_refuses_it(
    tmp_path: Path,
) -> None:
    site = _site(tmp_path, None)
    carol = site.login("carol")
    aligned = (
        "   5   7     35  1.400 .400 .657     2.33     14     23      6 1\n"
        "   6   7     42  1.167 .429 .881     3.60     18     37      5 1\n"
    )
    response = upload(carol, aligned.encode())
    assert response.status_code == 201
    assert site.work() == ["failed"]
    dataset = carol.get(f"/api/datasets/{response.json()['id']}").json()["dataset"]
    assert dataset["profile_status"] == "failed"
    job = carol.get(f"/api/jobs/{response.json()['profile_job']}").json()["job"]
    assert "11 fields aligned with spaces" in job["error"]


def test_a_table_too_wide_for_the_risk_scan_keeps_its_profile_and_says_why(
    tmp_path: Path,
) -> None:
    site = _site(tmp_path, None)
    carol = site.login("carol")
    response = upload(carol, _wide(1000, rows=20))
    assert site.work() == ["done"]
    dataset = carol.get(f"/api/datasets/{response.json()['id']}").json()["dataset"]
    assert dataset["profile_status"] == "done" and dataset["custody"] == "encrypted"
    assert dataset["profile"]["rows"] == 20
    assert dataset["risk"]["error"].startswith("risk summary: not made")
    page = carol.get(f"/datasets/{response.json()['id']}")
    assert page.status_code == 200 and 'id="risk-error"' in page.text
    assert carol.get(f"/datasets/{response.json()['id']}/plans/new").status_code == 200


def test_a_risk_scan_cut_by_the_time_limit_keeps_the_profile_and_says_what_it_measured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 60 columns of few values: 60 suggested quasi-identifiers, 36,050 combinations of
    # up to three. Each combination made to take 1 ms, the scan needs 36 s: the limit
    # stops it, whatever the machine's speed, long after the table was read.
    import veil.risk.reidentification as scan

    counted = scan.class_sizes

    def slow(*args: Any, **kwargs: Any) -> Any:
        time.sleep(0.001)
        return counted(*args, **kwargs)

    monkeypatch.setattr(scan, "class_sizes", slow)
    site = _site(tmp_path, None, profile_seconds=3)
    carol = site.login("carol")
    response = upload(carol, _wide(60, rows=1000))
    assert site.work() == ["done"]
    dataset = carol.get(f"/api/datasets/{response.json()['id']}").json()["dataset"]
    assert dataset["profile_status"] == "done" and dataset["profile"]["rows"] == 1000
    scanned = dataset["risk"]["scanned"]
    assert scanned["complete"] is False
    assert 0 < scanned["scanned"] < scanned["total"] == 60 + 1770 + 34_220
    assert dataset["risk"]["combinations"]
    page = carol.get(f"/datasets/{response.json()['id']}").text
    assert 'id="scan-cut"' in page and f"after {scanned['scanned']} of 36050" in page


def test_a_profile_whose_worker_does_not_stop_is_failed_by_the_supervisors_check(
    sqlite_site: Site,
) -> None:
    platform = sqlite_site.platform
    carol = sqlite_site.login("carol")
    response = upload(carol, adult_csv(50))
    assert claim(platform.db, "stuck-host:1:ab") is not None
    with platform.db.session() as session:
        job = session.get(Job, response.json()["profile_job"])
        assert job is not None
        job.started_at = now() - timedelta(seconds=platform.config.profile_seconds + 60)
    assert overdue(platform.db, platform.config) == ["stuck-host:1:ab"]
    view = carol.get(f"/api/jobs/{response.json()['profile_job']}").json()["job"]
    assert view["status"] == "failed" and "time limit" in view["error"]


def test_a_job_whose_lease_ran_out_is_reclaimed_and_its_stale_worker_commits_nothing(
    sqlite_site: Site,
) -> None:
    site = sqlite_site
    platform = site.platform
    carol = site.login("carol")
    dataset = upload_profiled(site, carol, adult_csv(300))
    plan = carol.post(f"/api/datasets/{dataset}/plans", json={"name": "p", "text": PLAN}).json()
    job = carol.post(f"/api/plans/{plan['plan']}/versions/1/jobs", json={"kind": "run"}).json()
    claimed = claim(platform.db, "elsewhere:99999999:00", lease_seconds=0.05)
    assert claimed == job["id"]
    time.sleep(0.2)
    assert reclaim(platform.db, platform.config) == [job["id"]]
    view = carol.get(f"/api/jobs/{job['id']}").json()["job"]
    assert view["status"] == "interrupted"
    with platform.db.session() as session:
        assert session.scalars(select(BudgetEntry)).all() == []
    # The stalled worker wakes up and runs the job it no longer holds: nothing is kept.
    assert execute(platform.db, platform.config, platform.keyring, claimed) == LOST
    with platform.db.session() as session:
        assert session.scalars(select(Release)).all() == []
        assert session.get(Job, claimed).status == "interrupted"  # type: ignore[union-attr]
    assert not any((platform.config.data_dir / "releases").rglob("*.csv"))


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_database_is_private_and_the_key_lives_outside_the_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    os.chmod(data, 0o755)
    site = _site(tmp_path, None)
    assert _mode(data) == 0o700
    for name in ("veil.db", "veil.db-wal", "veil.db-shm"):
        if (data / name).exists():
            assert _mode(data / name) == 0o600, name
    assert _mode(site.platform.config.checkpoints) == 0o600
    for folder in ("datasets", "releases", "plan-files"):
        if (data / folder).exists():
            assert _mode(data / folder) == 0o700, folder
    from veil.cli.server import _key_file, default_key_file

    monkeypatch.delenv("VEIL_SERVER_KEY", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    fresh = tmp_path / "fresh"
    key = _key_file(fresh, "VEIL_SERVER_KEY")
    assert key == default_key_file(fresh) and key is not None and key.exists()
    assert not key.resolve().is_relative_to(fresh.resolve()) and _mode(key) == 0o600
    assert "warning" not in capsys.readouterr().err
    # A key left in the data folder (the old default) is used, with a warning every start.
    legacy = tmp_path / "old"
    legacy.mkdir()
    (legacy / "server.key").write_text(os.urandom(32).hex() + "\n")
    os.chmod(legacy / "server.key", 0o600)
    for _ in range(2):
        assert _key_file(legacy, "VEIL_SERVER_KEY") == legacy / "server.key"
        assert "inside the data folder" in capsys.readouterr().err


def _imports(module: str) -> set[str]:
    import veil.server

    source = Path(veil.server.__file__).parent / f"{module}.py"
    tree = ast.parse(source.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_datasets_jobs_and_releases_import_one_way() -> None:
    datasets, releases, jobs = _imports("datasets"), _imports("releases"), _imports("jobs")
    assert not {"veil.server.jobs", "veil.server.releases"} & datasets
    assert "veil.server.jobs" not in releases and "veil.server.datasets" in releases
    assert {"veil.server.releases", "veil.server.datasets"} <= jobs


def test_no_database_password_in_reprs_or_connection_errors(tmp_path: Path) -> None:
    from veil.masking import SecretKey
    from veil.server import ServerConfig, open_platform
    from veil.server.database import Database

    url = "postgresql+psycopg://veil:s3cret-pass@127.0.0.1:9/veil"
    config = ServerConfig(tmp_path / "data", database_url=url)
    assert "s3cret" not in repr(config) and "s3cret" not in repr(Database(url))
    with pytest.raises(Exception) as caught:
        open_platform(config, key=SecretKey.generate())
    assert "s3cret" not in str(caught.value) and "s3cret" not in repr(caught.value)
