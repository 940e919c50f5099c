"""The audit chain is keyed and checkpointed: a rewrite or a truncation is detected.

The attacks the red team made on the unkeyed chain: recompute every hash after editing
rows (with SHA-256, or with HMAC under a key of the attacker's own), and cut the tail off
and set the head back to the last remaining entry. Both pass a chain of plain hashes;
both must fail ``verify`` and ``veil server verify-audit`` now. A chain written before
keying is re-keyed at the next start.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

import pytest
from sqlalchemy import select, text

from veil.cli import main
from veil.server import create_app, open_platform, verify
from veil.server.models import AuditEntry, AuditHead

from .conftest import Site, release_flow

_FIELDS = ("seq", "at", "actor", "role", "action", "object_type", "object_id", "detail")


def _rehash(site: Site, digest: Any) -> None:
    """Recompute every row's hash and the head with ``digest(prev, body)``."""
    with site.platform.db.session() as session:
        prev = "0" * 64
        for entry in session.scalars(select(AuditEntry).order_by(AuditEntry.seq)):
            values = {name: getattr(entry, name) for name in _FIELDS}
            body = json.dumps(values, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
            entry.prev_hash = prev
            entry.hash = prev = digest(prev, body)
        head = session.get(AuditHead, 1)
        assert head is not None
        head.hash = prev


def _cli(site: Site, monkeypatch: pytest.MonkeyPatch) -> int:
    assert site.key is not None
    monkeypatch.setenv("VEIL_SERVER_KEY", site.key.reveal().hex())
    args = ["server", "verify-audit", "--data", str(site.platform.config.data_dir)]
    if site.platform.config.database_url:
        args += ["--database-url", site.platform.config.database_url]
    return int(main(args))


def test_edited_rows_with_every_hash_recomputed_are_detected(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    release_flow(site, publish=True)
    assert verify(site.platform).ok and _cli(site, monkeypatch) == 0
    with site.platform.db.session() as session:
        session.execute(text("UPDATE audit_log SET actor = 'mallory' WHERE seq = 3"))
    _rehash(site, lambda prev, body: hashlib.sha256(f"{prev}\n{body}".encode()).hexdigest())
    report = verify(site.platform)
    assert not report.ok and "keyed hash" in report.problems[0]
    assert _cli(site, monkeypatch) == 1
    # An attacker's own key does no better.
    forged = b"k" * 32
    _rehash(
        site,
        lambda prev, body: hmac.new(
            forged, b"entry\n" + f"{prev}\n{body}".encode(), hashlib.sha256
        ).hexdigest(),
    )
    assert not verify(site.platform).ok and _cli(site, monkeypatch) == 1


def test_a_cut_tail_with_the_head_set_back_is_detected_by_the_checkpoints(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    release_flow(site, publish=True)
    report = verify(site.platform)
    assert report.ok and report.checkpoints > 0
    with site.platform.db.session() as session:
        last = session.execute(text("SELECT max(seq) FROM audit_log")).scalar_one()
        keep = last - 5
        kept = session.get(AuditEntry, keep)
        assert kept is not None
        session.execute(text("DELETE FROM audit_log WHERE seq > :k"), {"k": keep})
        session.execute(
            text("UPDATE audit_head SET seq = :k, hash = :h WHERE id = 1"),
            {"k": keep, "h": kept.hash},
        )
    report = verify(site.platform)
    assert not report.ok
    assert any(f"checkpoint of entry {last}" in p and "missing" in p for p in report.problems)
    assert _cli(site, monkeypatch) == 1
    admin = site.login("admin").get("/admin/audit")
    assert "The audit chain is broken" in admin.text


def test_a_forged_checkpoint_is_detected(site: Site) -> None:
    release_flow(site, publish=False)
    path = site.platform.config.checkpoints
    line = path.read_text().splitlines()[-1].split()
    line[3] = "0" * 64
    with open(path, "a") as handle:
        handle.write(" ".join(line) + "\n")
    assert any("forged" in p for p in verify(site.platform).problems)


def test_a_chain_written_before_keying_is_re_keyed_at_the_next_start(site: Site) -> None:
    release_flow(site, publish=False)
    _rehash(site, lambda prev, body: hashlib.sha256(f"{prev}\n{body}".encode()).hexdigest())
    with site.platform.db.session() as session:
        session.execute(text("UPDATE audit_head SET scheme = 'sha256' WHERE id = 1"))
    site.platform.config.checkpoints.unlink()
    assert not verify(site.platform).ok  # not keyed yet
    reopened = open_platform(site.platform.config, key=site.key)
    create_app(reopened)
    report = verify(reopened)
    assert report.ok, report.problems
    log = site.login("admin").get("/api/admin/audit").json()["log"]
    rekeyed = [e for e in log if e["action"] == "audit.rekey"]
    assert len(rekeyed) == 1 and '"previous_problems": []' in rekeyed[0]["detail"]
    reopened.db.dispose()


def test_a_workers_events_are_checkpointed_too(sqlite_site: Site) -> None:
    from veil.server.worker import run_worker

    from .conftest import adult_csv, upload

    carol = sqlite_site.login("carol")
    assert upload(carol, adult_csv(100)).status_code == 201
    platform = sqlite_site.platform
    assert run_worker(platform.config, platform.keyring, max_jobs=1) == 1
    last = platform.config.checkpoints.read_text().splitlines()[-1].split()
    with platform.db.session() as session:
        head = session.get(AuditHead, 1)
        assert head is not None and (int(last[0]), last[1]) == (head.seq, head.hash)
