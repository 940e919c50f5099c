"""Fixtures of the command-line tests: small input files and an in-process runner."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from veil.cli import main
from veil.datasets import load_adult, load_nyc_taxi


@dataclass(frozen=True)
class Result:
    """What one ``veil`` invocation returned and printed."""

    code: int
    out: str
    err: str


Veil = Callable[..., Result]


@pytest.fixture
def veil(capsys: pytest.CaptureFixture[str]) -> Veil:
    """Run ``veil ARGS...`` in-process; returns the exit code and the captured output."""

    def invoke(*args: object) -> Result:
        capsys.readouterr()
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return invoke


@pytest.fixture(scope="session")
def adult_frame() -> pd.DataFrame:
    """The first 600 records of bundled Adult."""
    return load_adult().head(600).reset_index(drop=True)


@pytest.fixture
def adult_csv(tmp_path: Path, adult_frame: pd.DataFrame) -> Path:
    """The 600 Adult records as CSV."""
    path = tmp_path / "adult.csv"
    adult_frame.to_csv(path, index=False)
    return path


@pytest.fixture
def taxi_csv(tmp_path: Path) -> Path:
    """The NYC taxi sample as CSV, without its (0, 0) coordinates."""
    taxi = load_nyc_taxi()
    taxi = taxi[(taxi["pickup_latitude"] != 0) & (taxi["dropoff_latitude"] != 0)]
    path = tmp_path / "taxi.csv"
    taxi.to_csv(path, index=False)
    return path


@pytest.fixture
def key_hex(tmp_path: Path) -> tuple[Path, str]:
    """A key file holding a fresh hex key, and the key text."""
    text = secrets.token_hex(32)
    path = tmp_path / "key.hex"
    path.write_text(text + "\n")
    path.chmod(0o600)
    return path, text
