"""Progress events and cancellation of a running release."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from veil.release import run
from veil.release.engine import DaskEngine
from veil.release.progress import Cancelled, CancelToken, Progress


def _plan(tmp_path: Path, rows: int = 3000) -> dict[str, Any]:
    gen = np.random.default_rng(3)
    frame = pd.DataFrame(
        {
            "x": gen.integers(0, 101, rows),
            "c": gen.choice(["a", "b", "c"], rows),
            "zip": gen.choice(["4301", "4302", "4401"], rows),
        }
    )
    frame.to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "zip.csv").write_text("4301,430*,*\n4302,430*,*\n4401,440*,*\n")
    return {
        "input": {"path": str(tmp_path / "in.csv")},
        "columns": {
            "x": {
                "role": "sensitive",
                "treatment": {"method": "laplace", "epsilon": 1.0, "bounds": [0, 100]},
            },
            "c": {
                "role": "sensitive",
                "treatment": {"method": "randomized_response", "epsilon": 1.0,
                              "domain": ["a", "b", "c"]},
            },
            "zip": {"role": "quasi_identifier", "treatment": "keep"},
        },
        "anonymization": {
            "quasi_identifiers": {"zip": str(tmp_path / "zip.csv")},
            "models": [{"k_anonymity": 5}],
        },
        "budget": {"ldp": {"epsilon": 2.0}},
    }  # fmt: skip


def _cancel_at(token: CancelToken, when: Any) -> Any:
    def progress(event: Progress) -> None:
        if when(event):
            token.cancel()

    return progress


def _tree(folder: Path) -> dict[str, bytes]:
    if not folder.exists():
        return {}
    return {
        str(p.relative_to(folder)): p.read_bytes() if p.is_file() else b""
        for p in sorted(folder.rglob("*"))
    }


@pytest.mark.parametrize(
    ("engine", "when"),
    [
        ("pandas", lambda e: e.step == "x: laplace"),
        ("pandas", lambda e: e.phase == "evaluate"),
        ("pandas", lambda e: e.phase == "manifest"),
        ("dask", lambda e: e.phase == "write" and e.done == 1),
        ("dask", lambda e: e.phase == "protect" and e.done == 2),
    ],
)
def test_a_cancelled_run_leaves_the_previous_outputs_and_no_staged_files(
    tmp_path: Path, engine: str, when: Any
) -> None:
    plan = _plan(tmp_path)
    out = tmp_path / "out"
    custodian = tmp_path / "out.custodian"

    def chosen() -> Any:
        return DaskEngine("threads", npartitions=3, batch=1) if engine == "dask" else "pandas"

    run(plan, out, engine=chosen(), rng=1)
    before, before_custodian = _tree(out), _tree(custodian)
    token = CancelToken()
    with pytest.raises(Cancelled, match="cancel: the run was cancelled"):
        run(plan, out, engine=chosen(), progress=_cancel_at(token, when), cancel=token)
    assert _tree(out) == before
    assert _tree(custodian) == before_custodian
    # A cancelled first run creates no folder at all.
    fresh = tmp_path / "fresh"
    token = CancelToken()
    with pytest.raises(Cancelled):
        run(plan, fresh, engine=chosen(), progress=_cancel_at(token, when), cancel=token)
    assert not fresh.exists()
    assert not (tmp_path / "fresh.custodian").exists()


def test_a_token_set_from_another_thread_stops_the_run(tmp_path: Path) -> None:
    plan = _plan(tmp_path, rows=6000)
    token = CancelToken()
    started = threading.Event()
    seen: list[Progress] = []

    def progress(event: Progress) -> None:
        seen.append(event)
        if event.phase == "protect":
            started.set()
            threading.Event().wait(0.05)  # let the other thread act

    def cancel_soon() -> None:
        started.wait(30)
        token.cancel()

    helper = threading.Thread(target=cancel_soon)
    helper.start()
    engine = DaskEngine("threads", npartitions=4, batch=1)
    with pytest.raises(Cancelled):
        run(plan, tmp_path / "out", engine=engine, progress=progress, cancel=token)
    helper.join(30)
    assert not (tmp_path / "out").exists()
    assert "manifest" not in {e.phase for e in seen}


def test_a_dry_run_reports_the_phases_up_to_the_ledger(tmp_path: Path) -> None:
    events: list[Progress] = []
    run(_plan(tmp_path), dry_run=True, progress=events.append)
    assert [e.phase for e in events] == ["validate", "allocate", "ledger"]


def test_a_cancelled_token_refuses_the_run_before_it_reads(tmp_path: Path) -> None:
    token = CancelToken()
    token.cancel()
    plan = _plan(tmp_path)
    plan["input"]["path"] = str(tmp_path / "missing.csv")  # a read would raise another error
    with pytest.raises(Cancelled, match="before validate"):
        run(plan, tmp_path / "out", cancel=token)
