"""Atomic file output: a failed write leaves the target as it was."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from veil.atomic import private_folder, write_atomic, write_text_atomic


def test_writes_the_file_with_ordinary_permissions(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    write_text_atomic(target, "hello")
    assert target.read_text() == "hello"
    assert os.stat(target).st_mode & 0o777 == 0o644
    assert list(tmp_path.iterdir()) == [target]


def test_failure_keeps_the_previous_content_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    target.write_text("old")
    os.chmod(target, 0o600)

    def broken(path: str) -> None:
        Path(path).write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        write_atomic(target, broken)
    assert target.read_text() == "old"
    assert list(tmp_path.iterdir()) == [target]
    write_text_atomic(target, "new")
    assert os.stat(target).st_mode & 0o777 == 0o600


def test_a_private_folder_is_made_or_tightened_to_0700_unless_another_account_owns_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = private_folder(tmp_path / "a" / "b")
    assert os.stat(made).st_mode & 0o777 == 0o700
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o755)
    private_folder(shared, tighten=False)  # an existing folder is left as it is
    assert os.stat(shared).st_mode & 0o777 == 0o755
    private_folder(shared)
    assert os.stat(shared).st_mode & 0o777 == 0o700
    # A folder of another account: only its owner may change its mode.
    os.chmod(shared, 0o755)
    monkeypatch.setattr("veil.atomic.os.geteuid", lambda: os.stat(shared).st_uid + 1)
    private_folder(shared)
    assert os.stat(shared).st_mode & 0o777 == 0o755
