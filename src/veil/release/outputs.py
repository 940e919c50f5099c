"""Where a release plan writes, and how a reader checks what it reads.

The files of a run are written as one set through the release gate
(:class:`veil.gate.OutputSet`: staged, then renamed, the manifest last; confidential
files ``0o600`` in ``0o700`` folders; nothing left behind by a failed or killed run).
This module holds what is particular to plans: the custodian folder a plan's
confidential files go to (:func:`custodian_folder`), the files a plan reads, which no
output may replace (:func:`check_outputs_apart_from_inputs`), and the check a reader
makes of a committed release (:func:`verify_release`): the public manifest lists the
SHA-256 of the release file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from veil.gate import MANIFEST
from veil.release.errors import PlanError
from veil.release.plan import Plan
from veil.release.writer import sha256_file

__all__ = [
    "MANIFEST",
    "check_outputs_apart_from_inputs",
    "custodian_folder",
    "plan_inputs",
    "verify_release",
]


def custodian_folder(plan: Plan, out: Path) -> Path:
    """The custodian folder: ``output.custodian_dir``, else ``<out>.custodian`` beside it."""
    if plan.output.custodian_dir is not None:
        return Path(plan.output.custodian_dir)
    resolved = out.resolve()
    return resolved.parent / f"{resolved.name}.custodian"


def plan_inputs(plan: Plan) -> list[Path]:
    """Every file the plan reads (input, hierarchies, keys, vault, target sample)."""
    paths: list[Path] = []
    if plan.input.path is not None:
        paths.append(Path(plan.input.path))
    for spec in plan.columns.values():
        treatment = spec.treatment
        hierarchy = getattr(treatment, "hierarchy", None)
        if hierarchy is not None and hierarchy.path is not None:
            paths.append(Path(hierarchy.path))
        key_file = getattr(treatment, "key_file", None)
        if key_file is not None:
            paths.append(Path(key_file))
        vault = getattr(treatment, "vault", None)
        if isinstance(vault, str) and "://" not in vault:
            paths.append(Path(vault))
    if plan.anonymization is not None:
        paths.extend(Path(h.path) for h in plan.anonymization.quasi_identifiers.values() if h.path)
    if plan.budget.target is not None and plan.budget.target.sample is not None:
        paths.append(Path(plan.budget.target.sample))
    return paths


def check_outputs_apart_from_inputs(plan: Plan, out: Path, custodian: Path) -> None:
    """No output may overwrite a file the plan reads (nothing is written otherwise)."""
    targets = {
        (out / plan.output.filename).resolve(): "the release file",
        (out / "manifest.json").resolve(): "the manifest",
        (custodian / "custodian.json").resolve(): "the custodian record",
        (custodian / "report.html").resolve(): "the report",
    }
    for source in plan_inputs(plan):
        resolved = source.resolve()
        if resolved in targets:
            raise PlanError(
                f"output: {targets[resolved]} would overwrite {os.fspath(source)!r}, which "
                "the plan reads; write the release to another folder"
            )
        if source.is_dir() and (out.resolve() == resolved or resolved in out.resolve().parents):
            raise PlanError(
                f"output: the release folder is inside the input folder {os.fspath(source)!r}"
            )


def verify_release(release_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """Check that a release folder holds a committed, intact release.

    Reads the public manifest and compares the SHA-256 of each file it lists with the
    file on disk.

    Parameters
    ----------
    release_dir : path
        The release folder.

    Returns
    -------
    dict
        The manifest, when every listed file is present with its recorded hash.

    Raises
    ------
    PlanError
        No manifest (no release committed, or a run was cut short before its commit
        point), or a listed file missing or different from what the manifest recorded.
    """
    folder = Path(release_dir)
    path = folder / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PlanError(
            f"release: {os.fspath(folder)!r} has no {MANIFEST}: no release was committed "
            "there (or a run was cut short before its commit point)"
        ) from None
    except json.JSONDecodeError as exc:
        raise PlanError(f"release: {os.fspath(path)!r} is not valid JSON ({exc.msg})") from None
    for label, entry in dict(manifest.get("outputs", {})).items():
        if not isinstance(entry, dict) or "file" not in entry or "sha256" not in entry:
            continue
        target = folder / str(entry["file"])
        if not target.is_file():
            raise PlanError(f"release: the {label} file {target.name!r} is missing")
        if sha256_file(target) != entry["sha256"]:
            raise PlanError(
                f"release: the {label} file {target.name!r} differs from the one the "
                "manifest records (another run's file, or a modified one)"
            )
    return dict(manifest)
