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
