"""The ``veil`` entry point: help for every command, version, exit codes of bad usage."""

from __future__ import annotations

import subprocess
import sys

import pytest

from veil import __version__

from .conftest import Veil

COMMANDS = ["risk", "anonymize", "ldp", "mask", "geo", "release", "sweep", "report", "demo"]


def test_help_lists_every_command_and_documents_the_exit_codes(veil: Veil) -> None:
    result = veil("--help")
    assert result.code == 0
    for command in COMMANDS:
        assert command in result.out
    text = " ".join(result.out.split())
    assert "Exit codes: 0 done; 1 a veil check failed" in text
    assert "2 bad usage, bad input file or bad plan" in text


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(veil: Veil, command: str) -> None:
    result = veil(command, "--help")
    assert result.code == 0
    assert f"Usage: veil {command}" in result.out
    assert "--help" in result.out
    assert result.err == ""


def test_version(veil: Veil) -> None:
    result = veil("--version")
    assert (result.code, result.out.strip()) == (0, f"veil {__version__}")


def test_unknown_command_and_missing_option_are_usage_errors(veil: Veil) -> None:
    assert veil("nope").code == 2
    result = veil("ldp", "data.csv")
    assert result.code == 2
    assert "--column" in result.err


def test_console_script_module_runs_without_a_traceback() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "veil", "risk", "missing.csv", "--qi", "age"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == "veil: error: DATA: 'missing.csv' does not exist"
    assert "Traceback" not in done.stderr


def test_a_missing_extra_is_named(veil: Veil, monkeypatch: pytest.MonkeyPatch) -> None:
    import veil.cli.geo as geo_command

    def absent(*args: object, **kwargs: object) -> None:
        raise ModuleNotFoundError("No module named 'pyproj'", name="pyproj")

    monkeypatch.setattr(geo_command, "read_table", absent)
    result = veil("geo", "t.csv", "--lat", "a", "--lon", "b", "--mask", "cloak", "--k", "2",
                  "--centre", "41.88,-87.63", "--out", "o.csv")  # fmt: skip
    assert result.code == 2
    assert result.err.strip().splitlines()[-1] == (
        "veil: error: this command needs the module 'pyproj': pip install 'veil[geo]'"
    )
