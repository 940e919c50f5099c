"""Output helpers: strict JSON, warnings on standard error, progress only on a terminal."""

from __future__ import annotations

import io
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from veil.cli.console import captured_warnings, emit_json, jsonable, progress, status
from veil.cli.errors import one_line
from veil.errors import PrivacyLeakWarning


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_json_is_strict(capsys: pytest.CaptureFixture[str]) -> None:
    emit_json({"path": Path("a/b"), "nan": math.nan, "n": np.int64(3), "x": [np.float64(0.5)]})
    assert json.loads(capsys.readouterr().out) == {"path": "a/b", "nan": None, "n": 3, "x": [0.5]}
    assert jsonable((1, math.inf)) == [1, None]


def test_warnings_are_collected_once_each() -> None:
    with captured_warnings() as caught:
        for _ in range(3):
            warnings.warn("domain read from the data", PrivacyLeakWarning, stacklevel=1)
    assert caught == [{"category": "PrivacyLeakWarning", "message": "domain read from the data"}]


def test_progress_draws_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    pipe = io.StringIO()
    monkeypatch.setattr("sys.stderr", pipe)
    with progress("demo", 2) as advance, status("working"):
        advance("one")
        advance("two")
    assert pipe.getvalue() == ""

    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    with progress("demo", 2) as advance:
        advance("one")
        advance("two")
    assert "demo" in terminal.getvalue()


def test_multi_line_messages_become_one_line() -> None:
    text = "invalid release plan (2 errors):\n  input: Field required\n  budget: bad"
    assert one_line(text) == "invalid release plan (2 errors): input: Field required; budget: bad"


def test_release_progress_shows_phase_step_and_partitions_on_a_terminal_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from veil.cli.console import release_progress
    from veil.release.progress import Progress

    monkeypatch.setattr("sys.stderr", io.StringIO())
    with release_progress("releasing") as on_event:
        assert on_event is None
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    with release_progress("releasing") as on_event:
        assert on_event is not None
        on_event(Progress("protect", "age: laplace"))
        on_event(Progress("write", None, 2, 5, 12_000))
    shown = terminal.getvalue()
    assert "releasing: write" in shown
    assert "2/5 partitions, 12,000 records" in shown


def test_user_text_is_never_markup_or_emoji(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from veil.cli.console import print_note, print_table, print_text, print_warnings

    print_table("of [/x] :smile:", ["[bold]c", ":x:"], [["[/y]", ":thumbs_up:"]])
    print_text("[/z] :smile:")
    print_note("[red]note :smile:")
    print_warnings([{"category": "PrivacyWarning", "message": "[/w] :smile:"}])
    captured = capsys.readouterr()
    for text in ("of [/x] :smile:", "[bold]c", ":x:", "[/y]", ":thumbs_up:", "[/z] :smile:"):
        assert text in captured.out
    assert "[red]note :smile:" in captured.err and "[/w] :smile:" in captured.err

    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    with progress("[/a]", 1) as advance, status("[/b] :smile:"):
        advance("[/c]")
    from veil.cli.console import release_progress
    from veil.release.progress import Progress

    with release_progress("[/d]") as on_event:
        assert on_event is not None
        on_event(Progress("protect", "[/e]"))
    assert "[/a]" in terminal.getvalue()
