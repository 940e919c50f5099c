"""The README's tour must run as written."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_tour_code_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README has no python examples"
    namespace: dict[str, object] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the tour declares domains and bounds: no warning
        exec(compile("\n".join(blocks), str(README), "exec"), namespace)
    assert "ledger" in namespace


def test_ci_runs_the_readme_test_command() -> None:
    ci = (README.parent / ".ci" / "run").read_text()
    assert "<!-- test-command -->" in ci
    assert "<!-- test-command -->" in README.read_text()


def _block_after(marker: str) -> list[str]:
    text = README.read_text()
    assert marker in text
    block = re.search(re.escape(marker) + r"\n```sh\n(.*?)```", text, flags=re.S)
    assert block is not None, f"no sh block after {marker}"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_main_command_is_one_line_that_installs_what_the_demo_needs() -> None:
    lines = _block_after("<!-- main-command -->")
    assert len(lines) == 1
    command = lines[0]
    assert ".venv/bin/veil demo --out veil-demo" in command
    # The demo's maps and report need the geo extra, its ML utility the release extra.
    extras = re.search(r"-e '\.\[([a-z,]+)\]'", command)
    assert extras is not None
    assert {"geo", "release"} <= set(extras.group(1).split(","))
