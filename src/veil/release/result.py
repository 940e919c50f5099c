"""What :func:`veil.release.run` returns: the ledger, the files written and a summary."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from veil import errors
from veil.release.errors import PlanError
from veil.release.ledger import ReleaseLedger, render_ledger
from veil.release.plan import Plan

__all__ = ["RunResult"]

# The warnings a release raises: veil's own classes (and plain UserWarning, which veil
# raises for notes); anything else is a library's message.
_RELEASE_WARNINGS = frozenset(
    name
    for name, value in vars(errors).items()
    if isinstance(value, type) and issubclass(value, Warning)
) | {"UserWarning"}


@dataclass(frozen=True)
class RunResult:
    """What a run did: the ledger, and for a real run the files written and a summary.

    Attributes
    ----------
    plan : Plan
        The plan as run (budget allocated).
    ledger : ReleaseLedger
        Planned costs per step and the totals.
    dry_run : bool
        True when nothing was read or written.
    out_dir : pathlib.Path or None
        The output folder.
    release_path, manifest_path : pathlib.Path or None
        The release file and its public manifest (None for a dry run).
    report_path : pathlib.Path or None
        The report, in the custodian folder (None for a dry run, or no report).
    custodian_dir, custodian_path : pathlib.Path or None
        The custodian folder and its confidential ``custodian.json``.
    rows_in, rows_out : int or None
        Records read and released.
    release_format : {"csv", "parquet"} or None
        The release file's format (None for a dry run).
    released : pandas.DataFrame or None
        The released table as written (index: the input rows' labels), when the run
        held it in memory; None for a dry run or a Dask run streamed into the file
        (:meth:`read_release` reads the file then).
    manifest : dict
        The public manifest written (empty for a dry run).
    custodian : dict
        The confidential custodian record written (empty for a dry run).
    warnings : list of dict
        Warnings raised during the run (category and message).
    seconds : float
        Wall time of the run.
    """

    plan: Plan
    ledger: ReleaseLedger
    dry_run: bool
    out_dir: Path | None = None
    release_path: Path | None = None
    manifest_path: Path | None = None
    report_path: Path | None = None
    rows_in: int | None = None
    rows_out: int | None = None
    manifest: dict[str, Any] = field(default_factory=dict)
    warnings: list[dict[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    release_format: str | None = None
    released: pd.DataFrame | None = field(default=None, repr=False, compare=False)
    custodian: dict[str, Any] = field(default_factory=dict, repr=False)
    custodian_dir: Path | None = None
    custodian_path: Path | None = None

    def read_release(self) -> pd.DataFrame:
        """The released table: :attr:`released`, or else the release file read back.

        Rows come in the file's (shuffled) order. Held in memory, the index gives each
        row's input label, the custodian's link back to the raw records; read from the
        file, the index is a plain range (the file carries none).

        Raises
        ------
        PlanError
            For a dry run (nothing was released).
        """
        if self.released is not None:
            return self.released
        if self.release_path is None:
            raise PlanError("dry_run: a dry run releases nothing; run the plan first")
        if self.release_format == "parquet":
            return pd.read_parquet(self.release_path)
        return pd.read_csv(self.release_path)

    @property
    def totals(self) -> dict[str, Any]:
        """Totals per notion against the budget (see :meth:`ReleaseLedger.totals`)."""
        return self.ledger.totals()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (for ``--json`` output): files, rows, totals, warnings."""
        return {
            "dry_run": self.dry_run,
            "out_dir": None if self.out_dir is None else os.fspath(self.out_dir),
            "files": {
                name: os.fspath(path)
                for name, path in (
                    ("release", self.release_path),
                    ("report", self.report_path),
                    ("manifest", self.manifest_path),
                    ("custodian", self.custodian_path),
                )
                if path is not None
            },
            "rows_in": self.rows_in,
            "rows_out": self.rows_out,
            "totals": self.totals,
            "not_protected": self.ledger.not_protected(),
            "warnings": self.warnings,
            "seconds": round(self.seconds, 3),
            "ledger": self.ledger.to_dict(),
        }

    def summary(self) -> str:
        """A few lines for a terminal: the ledger for a dry run, else what was written."""
        if self.dry_run:
            return render_ledger(self.ledger) + "\n(dry run: nothing read or written)"
        totals = self.totals
        lines = [
            f"released {self.rows_out} of {self.rows_in} records in {self.seconds:.2f} s",
            f"ldp per record: epsilon={totals['ldp']['epsilon']:.6g}, "
            f"delta={totals['ldp']['delta']:.3g}; metric: epsilon={totals['metric']['epsilon']:.6g}"
            " per metre",
        ]
        synthetic = totals.get("synthetic")
        if isinstance(synthetic, dict) and synthetic.get("epsilon"):
            lines.append(
                f"synthetic per dataset: epsilon={synthetic['epsilon']:.6g}, "
                f"delta={synthetic.get('delta') or 0:.3g}"
            )
        lines.extend(f"syntactic: {line}" for line in totals["syntactic"])
        ours = [w for w in self.warnings if w.get("category") in _RELEASE_WARNINGS]
        others = len(self.warnings) - len(ours)
        lines.append(
            f"warnings: {len(ours)}"
            + (f" (and {others} library message{'s' if others != 1 else ''})" if others else "")
        )
        lines.extend(f"wrote {p}" for p in (self.release_path, self.manifest_path) if p is not None)
        lines.extend(
            f"wrote {p} (confidential: keep it apart from the release)"
            for p in (self.custodian_path, self.report_path)
            if p is not None
        )
        return "\n".join(lines)
