"""``veil mask`` end to end on small files."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from .conftest import Veil


@pytest.fixture
def people(tmp_path: Path) -> Path:
    path = tmp_path / "people.csv"
    path.write_text(
        "name,email,ssn\n"
        "Ann Lee,ann@example.com,000123456\n"
        "Bob Roe,bob@example.org,987654321\n"
        "Ann Lee,ann@example.com,000123456\n"
    )
    return path


def test_mask_hmac_never_prints_the_key(
    veil: Veil, people: Path, key_hex: tuple[Path, str], tmp_path: Path
) -> None:
    key_file, key = key_hex
    out = tmp_path / "masked.csv"
    result = veil(
        "mask", people, "--column", "email", "--column", "name", "--method", "hmac",
        "--key-file", key_file, "--length", "16", "--out", out, "--json", "--keep-other",
        "--acknowledge", "ssn",
    )  # fmt: skip
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert len(data["key_id"]) == 16
    masked = pd.read_csv(out, dtype=str).sort_values("ssn", kind="stable")
    assert masked["email"].str.len().eq(16).all()
    ann, bob = masked[masked["ssn"] == "000123456"], masked[masked["ssn"] == "987654321"]
    assert ann["email"].nunique() == 1 and ann["email"].iloc[0] != bob["email"].iloc[0]
    assert "ann@example.com" not in out.read_text()
    # Columns passed through are written back exactly as read.
    assert list(masked["ssn"]) == ["000123456", "000123456", "987654321"]
    for text in (result.out, result.err, out.read_text()):
        assert key not in text and key.upper() not in text


def test_mask_ff1_from_an_environment_variable(
    veil: Veil,
    people: Path,
    key_hex: tuple[Path, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, key = key_hex
    monkeypatch.setenv("VEIL_TEST_KEY", key)
    out = tmp_path / "ff1.csv"
    result = veil(
        "mask", people, "--column", "ssn", "--method", "ff1", "--key-env", "VEIL_TEST_KEY",
        "--out", out, "--keep-other", "--acknowledge", "email",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert key not in result.out + result.err
    masked = pd.read_csv(out, dtype=str)
    assert masked["ssn"].str.fullmatch(r"\d{9}").all()
    ann = masked.loc[masked["name"] == "Ann Lee", "ssn"]
    assert ann.nunique() == 1 and ann.iloc[0] != "000123456"


def test_mask_unkeyed_methods(veil: Veil, people: Path, tmp_path: Path) -> None:
    out = tmp_path / "m.csv"
    args = ["--out", out, "--drop-other", "--keep-order"]
    assert veil("mask", people, "--column", "email", "--method", "mask-email", *args).code == 0
    assert pd.read_csv(out)["email"].tolist()[:2] == ["a***@example.com", "b***@example.org"]
    assert veil("mask", people, "--column", "name", "--method", "redact", *args).code == 0
    assert set(pd.read_csv(out)["name"]) == {"[REDACTED]"}
    assert list(pd.read_csv(out).columns) == ["name"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--method", "hmac"], "--method hmac needs exactly one of them"),
        (["--method", "hmac", "--key-env", "VEIL_UNSET_VARIABLE"], "named by --key-env"),
        (["--method", "hmac", "--key-file", "missing.key"], "'missing.key' does not exist"),
        (["--method", "hmac", "--key-file", "KEY", "--key-id", "0000"], "key_id: expected"),
        (["--method", "redact", "--key-file", "KEY"], "not for --method redact"),
        (["--method", "ff1", "--key-file", "KEY"], "outside the alphabet"),
    ],
)
def test_mask_key_errors_never_show_the_key(
    veil: Veil,
    people: Path,
    key_hex: tuple[Path, str],
    tmp_path: Path,
    args: list[str],
    message: str,
) -> None:
    key_file, key = key_hex
    args = [str(key_file) if a == "KEY" else a for a in args]
    result = veil(
        "mask", people, "--column", "email", *args, "--drop-other", "--out", tmp_path / "x.csv"
    )
    assert result.code == 2
    assert message in result.err
    assert key not in result.out + result.err
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.parametrize("weak", ["passwd", "passwordpassword", "the-data", "zeros"])
def test_mask_refuses_a_weak_key_file_and_points_at_key_new(
    veil: Veil, people: Path, tmp_path: Path, weak: str
) -> None:
    # Issue 14 A9: /etc/passwd, a file holding "passwordpassword" and the data CSV
    # itself used to be taken as HMAC keys. Each is refused, nothing is written, and no
    # line of the file is printed.
    if weak == "passwd":
        key_file = Path("/etc/passwd")
        if not key_file.is_file():
            pytest.skip("no /etc/passwd on this system")
    else:
        key_file = tmp_path / "weak.key"
        key_file.write_bytes(
            {
                "passwordpassword": b"passwordpassword",
                "the-data": people.read_bytes(),
                "zeros": bytes(32),
            }[weak]
        )
        key_file.chmod(0o600)  # private, so that the content check is what refuses it
    out = tmp_path / "x.csv"
    result = veil("mask", people, "--column", "email", "--method", "hmac", "--key-file",
                  key_file, "--drop-other", "--out", out)  # fmt: skip
    assert result.code == 2
    assert result.err.startswith("veil: error: --key-file: ")
    assert "veil key new" in result.err or "group or others" in result.err
    assert not out.exists()
    for line in key_file.read_bytes().splitlines():
        if len(line) >= 8:
            assert line.decode("latin-1") not in result.out + result.err
