"""``veil key new``: a fresh 32-byte key in a private file; the key id printed, never the key."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from veil.masking import SecretKey

from .conftest import Veil


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_key_new_writes_a_private_hex_key_and_prints_only_its_id(
    veil: Veil, tmp_path: Path
) -> None:
    path = tmp_path / "veil.key"
    result = veil("key", "new", path)
    assert result.code == 0, result.err
    text = path.read_text()
    assert len(text) == 65 and text.endswith("\n")
    material = bytes.fromhex(text.strip())
    assert len(material) == 32
    if os.name == "posix":
        assert _mode(path) == 0o600
    key = SecretKey.from_file(path)
    assert key.key_id in result.out
    for form in (text.strip(), text.strip().upper(), material.hex()[:16]):
        assert form not in result.out + result.err


def test_key_new_json(veil: Veil, tmp_path: Path) -> None:
    path = tmp_path / "k.hex"
    result = veil("key", "new", path, "--json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["key_id"] == SecretKey.from_file(path).key_id
    assert data["bytes"] == 32 and data["encoding"] == "hex" and data["mode"] == "0600"
    assert path.read_text().strip() not in result.out


def test_key_new_makes_a_different_key_each_time(veil: Veil, tmp_path: Path) -> None:
    paths = [tmp_path / f"{i}.key" for i in range(5)]
    for path in paths:
        assert veil("key", "new", path).code == 0
    assert len({p.read_text() for p in paths}) == 5


def test_key_new_refuses_to_overwrite(veil: Veil, tmp_path: Path) -> None:
    path = tmp_path / "veil.key"
    assert veil("key", "new", path).code == 0
    before = path.read_text()
    result = veil("key", "new", path)
    assert result.code == 2
    assert "exists" in result.err and "--force" in result.err
    assert path.read_text() == before
    assert before.strip() not in result.err


def test_key_new_force_replaces_with_a_private_file(veil: Veil, tmp_path: Path) -> None:
    path = tmp_path / "veil.key"
    path.write_text("not a key\n")
    path.chmod(0o644)
    result = veil("key", "new", path, "--force")
    assert result.code == 0, result.err
    assert SecretKey.from_file(path).key_id in result.out
    if os.name == "posix":
        assert _mode(path) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["veil.key"]


def test_key_new_is_private_whatever_the_umask(veil: Veil, tmp_path: Path) -> None:
    previous = os.umask(0)
    try:
        assert veil("key", "new", tmp_path / "veil.key").code == 0
    finally:
        os.umask(previous)
    if os.name == "posix":
        assert _mode(tmp_path / "veil.key") == 0o600


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_key_new_does_not_follow_a_symlink(veil: Veil, tmp_path: Path) -> None:
    target = tmp_path / "target"
    link = tmp_path / "link.key"
    link.symlink_to(target)
    result = veil("key", "new", link)
    assert result.code == 2
    assert not target.exists()


def test_key_new_errors(veil: Veil, tmp_path: Path) -> None:
    result = veil("key", "new", tmp_path)
    assert result.code == 2 and "directory" in result.err
    result = veil("key", "new", tmp_path / "missing" / "veil.key")
    assert result.code == 2 and result.err.startswith("veil: error:")


def test_key_new_file_is_accepted_by_mask(veil: Veil, tmp_path: Path) -> None:
    path = tmp_path / "veil.key"
    assert veil("key", "new", path).code == 0
    data = tmp_path / "people.csv"
    data.write_text("email\nann@example.com\nbob@example.com\n")
    out = tmp_path / "out.csv"
    key_id = SecretKey.from_file(path).key_id
    result = veil(
        "mask", data, "--column", "email", "--method", "hmac", "--key-file", path,
        "--key-id", key_id, "--out", out,
    )  # fmt: skip
    assert result.code == 0, result.err
    assert "ann@example.com" not in out.read_text()


def test_key_is_listed_in_help(veil: Veil) -> None:
    result = veil("--help")
    assert "key" in result.out
    assert "new" in veil("key", "--help").out
