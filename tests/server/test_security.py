"""Sessions, CSRF, lock-out, tokens, headers, escaping, uploads and the audit chain."""

from __future__ import annotations

import gzip
import re
import warnings
from pathlib import Path

import pytest
from sqlalchemy import text

from veil.cli import main
from veil.server import verify

from .conftest import PASSWORDS, Site, _site, adult_csv, release_flow, upload


def _datasets_dir(site: Site) -> list[Path]:
    folder = site.platform.config.data_dir / "datasets"
    return list(folder.iterdir()) if folder.exists() else []


def test_a_form_post_without_its_csrf_token_is_refused_and_writes_nothing(
    sqlite_site: Site,
) -> None:
    carol = sqlite_site.login("carol")
    del carol.headers["X-CSRF-Token"]
    before = verify(sqlite_site.platform).entries
    refused = carol.post("/api/account/tokens", json={"name": "script"})
    assert refused.status_code == 403 and refused.json()["error"]["field"] == "csrf_token"
    wrong = carol.post("/api/account/tokens", json={"name": "x", "csrf_token": "forged"})
    assert wrong.status_code == 403
    assert upload(carol, adult_csv(50)).status_code == 403
    assert _datasets_dir(sqlite_site) == []
    assert verify(sqlite_site.platform).entries == before


def test_api_tokens_are_scoped_hashed_and_revocable(sqlite_site: Site) -> None:
    dana = sqlite_site.login("dana")
    page = dana.post("/api/account/tokens", json={"name": "script"})
    token = page.json()["new_token"]
    script = sqlite_site.client()
    script.headers["Authorization"] = f"Bearer {token}"
    assert script.get("/api/catalogue").status_code == 200
    assert script.get("/api/datasets").status_code == 403  # a data user's scope
    assert script.post("/api/account/tokens", json={"name": "more"}).status_code == 403
    with sqlite_site.platform.db.session() as session:
        stored = session.execute(text("SELECT token_hash FROM api_tokens")).scalars().all()
    assert token not in stored
    dana.post(f"/api/account/tokens/{page.json()['tokens'][0]['id']}/revoke")
    assert script.get("/api/catalogue").status_code == 401


def test_session_fixation_a_session_id_set_before_login_is_never_used(sqlite_site: Site) -> None:
    client = sqlite_site.client()
    client.cookies.set("veil_session", "attacker-chosen-id", domain="testserver.local")
    form = client.get("/login")
    pre = re.search(r'name="csrf_token" value="([^"]+)"', form.text).group(1)
    response = client.post(
        "/login",
        data={"username": "carol", "password": PASSWORDS["carol"], "csrf_token": pre},
        follow_redirects=False,
    )
    assert response.status_code == 303
    issued = response.cookies.get("veil_session")
    assert issued and issued != "attacker-chosen-id"
    cookie = response.headers["set-cookie"]
    assert "HttpOnly" in cookie and "Secure" in cookie and "SameSite=strict" in cookie
    attacker = sqlite_site.client()
    attacker.cookies.set("veil_session", "attacker-chosen-id")
    assert attacker.get("/api/me").status_code == 401


def test_login_form_needs_its_csrf_token(sqlite_site: Site) -> None:
    client = sqlite_site.client()
    response = client.post("/login", data={"username": "carol", "password": PASSWORDS["carol"]})
    assert response.status_code == 403 and "csrf_token" in response.text


def test_failed_logins_back_off_until_an_admin_unlocks(tmp_path: Path) -> None:
    site = _site(tmp_path, None, max_lockout_failures=3)
    client = site.client()
    # Three failures start the backoff (1 s), each further one doubles it (32 s after 8).
    for _ in range(8):
        bad = client.post("/api/login", json={"username": "carol", "password": "wrong-password!"})
        assert bad.status_code == 422 and bad.json()["error"]["field"] == "password"
    locked = client.post("/api/login", json={"username": "carol", "password": PASSWORDS["carol"]})
    assert locked.status_code == 422 and locked.json() == bad.json()
    admin = site.login("admin")
    users = admin.get("/api/admin/users").json()["users"]
    carol = next(u for u in users if u["username"] == "carol")
    assert carol["locked"]
    assert (
        admin.post(f"/api/admin/users/{carol['id']}", json={"action": "unlock"}).status_code == 200
    )
    assert site.login("carol").get("/api/me").status_code == 200


def test_too_many_failures_from_one_client_are_rate_limited(tmp_path: Path) -> None:
    site = _site(tmp_path, None, max_attempts_per_client=4)
    client = site.client()
    for i in range(4):
        client.post("/api/login", json={"username": f"nobody{i}", "password": "x" * 12})
    limited = client.post("/api/login", json={"username": "carol", "password": PASSWORDS["carol"]})
    assert limited.status_code == 429


def test_pages_send_a_strict_csp_and_hold_no_inline_script(sqlite_site: Site) -> None:
    carol = sqlite_site.login("carol")
    for path in ("/", "/datasets", "/datasets/new", "/account", "/catalogue", "/login"):
        response = carol.get(path)
        assert response.status_code == 200
        csp = response.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp
        assert response.headers["x-frame-options"] == "DENY"
        for tag in re.findall(r"<script[^>]*>", response.text):
            assert "src=" in tag, f"inline script on {path}: {tag}"


XSS = "<script>alert(1)</script>"


def test_names_columns_and_categories_are_escaped(sqlite_site: Site) -> None:
    carol = sqlite_site.login("carol")
    data = f'age,"{XSS}",city\n30,"{XSS}",x\n40,b,"<img src=x onerror=alert(2)>"\n'.encode()
    dataset = upload(carol, data, name=f"name {XSS}").json()["id"]
    pending = carol.get(f"/datasets/{dataset}")
    assert XSS not in pending.text and "&lt;script&gt;" in pending.text
    assert sqlite_site.work() == ["done"]
    page = carol.get(f"/datasets/{dataset}")
    assert page.status_code == 200
    assert XSS not in page.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    form = carol.get(f"/datasets/{dataset}/plans/new")
    assert XSS not in form.text and "<img src=x" not in form.text
    home = carol.get("/")
    assert XSS not in home.text


@pytest.mark.parametrize(
    "filename",
    ["../../../etc/cron.d/evil", "/etc/passwd", "..\\..\\win.ini", "a/../../b.csv", "\x00.csv"],
)
def test_upload_names_are_never_paths(sqlite_site: Site, filename: str) -> None:
    carol = sqlite_site.login("carol")
    response = upload(carol, b"a,b\n1,2\n3,4\n", name="t", filename=filename)
    assert response.status_code == 201
    stored = _datasets_dir(sqlite_site)
    assert len(stored) == 1 and re.fullmatch(r"[0-9a-f]{32}\.veil", stored[0].name)
    assert not Path("/etc/cron.d/evil").exists()


def _bomb() -> bytes:
    return gzip.compress(b"a,b\n" + b"1,2\n" * (4 << 20), compresslevel=9)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "file: is empty"),
        (b"a,a\n1,2\n", "repeats the column names"),
        (b"PK\x03\x04rest-of-a-zip", "a zip archive"),
        (b"PAR1....", "a Parquet file"),
        (b"a,b\n1,\x002\n", "binary data"),
        ("a,b\nJosé,1\n".encode("latin-1"), "UTF-8"),
        (_bomb(), "zip bomb"),
        (gzip.compress(b"a,b\n1,2\n")[:-6], "truncated gzip"),
    ],
)
def test_bad_uploads_are_refused_naming_the_file_and_leave_nothing(
    sqlite_site: Site, data: bytes, message: str
) -> None:
    carol = sqlite_site.login("carol")
    before = verify(sqlite_site.platform).entries
    response = upload(carol, data)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["field"] == "file" and message in error["message"]
    assert _datasets_dir(sqlite_site) == []
    assert verify(sqlite_site.platform).entries == before


def test_a_file_the_profile_refuses_has_its_raw_data_deleted_and_says_why(
    sqlite_site: Site,
) -> None:
    carol = sqlite_site.login("carol")
    response = upload(carol, b"a,b\n1,2\n3,4,5\n")
    # The request reads only the header; the malformed line is found by the profile job.
    assert response.status_code == 201
    assert sqlite_site.work() == ["failed"]
    job = carol.get(f"/api/jobs/{response.json()['profile_job']}").json()["job"]
    assert job["error"].startswith("file: not a valid CSV table")
    dataset = carol.get(f"/api/datasets/{response.json()['id']}").json()["dataset"]
    assert dataset["profile_status"] == "failed" and dataset["custody"] == "deleted"
    assert "refused by its profile" in dataset["deletion_reason"]
    assert _datasets_dir(sqlite_site) == []
    page = carol.get(f"/datasets/{response.json()['id']}")
    assert "The profile refused the file: file: not a valid CSV table" in page.text
    assert carol.get(f"/datasets/{response.json()['id']}/plans/new").status_code == 409


def test_an_oversized_upload_is_refused(tmp_path: Path) -> None:
    site = _site(tmp_path, None, max_upload_bytes=10_000)
    carol = site.login("carol")
    response = upload(carol, adult_csv(1000))
    assert response.status_code == 422 and "larger than the limit" in response.text
    assert _datasets_dir(site) == []


def test_a_gzip_upload_is_accepted_and_decompressed(sqlite_site: Site) -> None:
    carol = sqlite_site.login("carol")
    response = upload(carol, gzip.compress(adult_csv(300)), filename="adult.csv.gz")
    assert response.status_code == 201
    assert sqlite_site.work() == ["done"]
    assert (
        carol.get(f"/api/datasets/{response.json()['id']}").json()["dataset"]["profile"]["rows"]
        == 300
    )


def test_a_hand_broken_audit_chain_is_detected(
    sqlite_site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    release_flow(sqlite_site, publish=True)
    assert verify(sqlite_site.platform).ok
    assert sqlite_site.key is not None
    monkeypatch.setenv("VEIL_SERVER_KEY", sqlite_site.key.reveal().hex())
    data = str(sqlite_site.platform.config.data_dir)
    assert main(["server", "verify-audit", "--data", data]) == 0
    with sqlite_site.platform.db.session() as session:
        session.execute(text("UPDATE audit_log SET actor = 'mallory' WHERE seq = 3"))
    report = verify(sqlite_site.platform)
    assert not report.ok and "audit entry 3" in report.problems[0]
    assert main(["server", "verify-audit", "--data", data]) == 1
    admin = sqlite_site.login("admin").get("/admin/audit")
    assert "The audit chain is broken" in admin.text


def test_removed_or_cut_audit_entries_are_detected(sqlite_site: Site) -> None:
    release_flow(sqlite_site, publish=False)
    with sqlite_site.platform.db.session() as session:
        session.execute(text("DELETE FROM audit_log WHERE seq = 2"))
    assert any("expected entry 2" in p for p in verify(sqlite_site.platform).problems)
    with sqlite_site.platform.db.session() as session:
        last = session.execute(text("SELECT max(seq) FROM audit_log")).scalar_one()
        session.execute(text("DELETE FROM audit_log WHERE seq >= :s"), {"s": last - 1})
    assert any("audit head" in p for p in verify(sqlite_site.platform).problems)


def test_unknown_paths_and_bad_ids_give_a_clear_message_not_a_500(sqlite_site: Site) -> None:
    carol = sqlite_site.login("carol")
    assert carol.get("/api/datasets/abc").status_code == 404
    assert carol.get("/api/datasets/999").json()["error"]["field"] == "dataset"
    bad = carol.post(
        "/api/datasets/999/plans",
        content=b"{not json",
        headers={"content-type": "application/json"},
    )
    assert bad.status_code in (400, 422) and bad.json()["error"]["field"] == "body"


def test_an_unexpected_error_is_a_page_with_headers_not_a_traceback(sqlite_site: Site) -> None:
    def boom() -> None:
        raise RuntimeError("secret detail of the failure")

    sqlite_site.app.add_api_route("/boom", boom)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient
    client = TestClient(
        sqlite_site.app, base_url="https://testserver", raise_server_exceptions=False
    )
    response = client.get("/boom")
    assert response.status_code == 500
    assert "server: an unexpected error; nothing was changed" in response.text
    assert "Traceback" not in response.text and "secret detail" not in response.text
    assert response.headers["content-security-policy"].startswith("default-src 'none'")
    assert response.headers["x-content-type-options"] == "nosniff"
