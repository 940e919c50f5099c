"""A large upload streams: memory stays bounded, and the request does not profile.

A generated CSV of about 48 MB is sent over loopback to the served platform, in 64 KiB
pieces. While the request runs, Python's allocations (tracemalloc, which sees the web
server's thread in this process) must peak below 16 MiB: the file is never held
whole, whatever its size (measured: about 2 MiB for 42 MB). The request answers before
any profile exists (the profile is a worker's job); the profile job then reads the
file in blocks (its memory, independent of the file's size, is tested in
tests/release/test_intake.py) and the dataset shows its million rows.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np

from .conftest import PASSWORDS, _site, serving

_ROWS = 1_000_000
_PIECE = 1 << 16
_UPLOAD_PEAK = 16 << 20


def _table(path: Path) -> int:
    rng = np.random.default_rng(7)
    with open(path, "w", encoding="utf-8") as out:
        out.write("id,age,sex,city,income,note\n")
        for start in range(0, _ROWS, 100_000):
            n = min(100_000, _ROWS - start)
            ids = np.arange(start, start + n)
            ages = rng.integers(16, 90, n)
            sexes = np.where(rng.random(n) < 0.5, "F", "M")
            cities = rng.integers(0, 400, n)
            incomes = rng.integers(0, 200_000, n)
            out.writelines(
                f"{i},{a},{s},city{c},{m},some words here\n"
                for i, a, s, c, m in zip(ids, ages, sexes, cities, incomes, strict=True)
            )
    return path.stat().st_size


def _body(boundary: str, csrf: str, path: Path) -> Iterator[bytes]:
    for name, value in (("csrf_token", csrf), ("name", "large")):
        yield (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'
        ).encode()
    yield (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="large.csv"\r\n'
        "Content-Type: text/csv\r\n\r\n"
    ).encode()
    with open(path, "rb") as source:
        while piece := source.read(_PIECE):
            yield piece
    yield f"\r\n--{boundary}--\r\n".encode()


def test_a_large_upload_streams_in_bounded_memory_and_is_profiled_by_a_worker(
    tmp_path: Path,
) -> None:
    site = _site(tmp_path / "site", None)
    table = tmp_path / "large.csv"
    size = _table(table)
    assert size > 40 << 20
    try:
        with serving(site, worker=False) as url, httpx.Client(base_url=url, timeout=120) as web:
            signed = web.post(
                "/api/login", json={"username": "carol", "password": PASSWORDS["carol"]}
            )
            # The session cookie is Secure; httpx keeps such cookies for HTTPS only.
            web.headers["Cookie"] = f"veil_session={signed.cookies['veil_session']}"
            csrf = web.get("/api/me").json()["csrf_token"]
            boundary = "veil-test-boundary-8d1f"
            tracemalloc.start()
            try:
                response = web.post(
                    "/api/datasets",
                    content=_body(boundary, csrf, table),
                    headers={"content-type": f"multipart/form-data; boundary={boundary}"},
                )
                _, upload_peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
            assert response.status_code == 201, response.text
            assert response.json()["profile_status"] == "pending"
            assert upload_peak < _UPLOAD_PEAK, f"upload peak {upload_peak / 2**20:.1f} MiB"
            dataset = response.json()["id"]
            assert site.work() == ["done"]
            shown = web.get(f"/api/datasets/{dataset}").json()["dataset"]
            assert shown["profile"]["rows"] == _ROWS and shown["profile"]["sampled"]
            assert shown["size_bytes"] == size
            assert "id" in {d["column"] for d in shown["risk"]["identifiers"]}
    finally:
        site.platform.db.dispose()
