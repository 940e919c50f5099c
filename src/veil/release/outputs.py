"""Writing a release's files as one set: staged, then renamed, the manifest last.

A release is several files in two folders: the release file and the public manifest in
the release folder; the custodian record and the report in the custodian folder. Readers
must never see a new release beside an old manifest. Every file is first written into a
hidden staging folder inside its target folder (same file system, so the renames are
atomic), then :meth:`OutputSet.commit`:

1. removes the old manifest, if any (from here on, a reader finds no committed release);
2. moves the custodian files, then the release file, into place;
3. moves the new manifest into place: the commit point.

A crash before step 1 leaves the previous release untouched; a crash between steps 1
and 3 leaves a folder without a manifest, which :func:`verify_release` reports as not
committed; after step 3 the set is complete. The manifest lists the SHA-256 of the
release file, so a reader can check what it reads (:func:`verify_release`).

Staging folders are named ``.veil-staging-<pid>-<token>``. A run removes its own on any
error or cancellation, and at its start removes those left by runs whose process is no
longer alive (a killed run). A folder that the run created and that holds nothing
committed is removed again: a refused or failed run writes nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
from pathlib import Path
from typing import Any

from veil.release.errors import PlanError
from veil.release.plan import Plan
from veil.release.writer import sha256_file

__all__ = [
    "MANIFEST",
    "OutputSet",
    "check_outputs_apart_from_inputs",
    "custodian_folder",
    "plan_inputs",
    "verify_release",
]

MANIFEST = "manifest.json"
_PREFIX = ".veil-staging-"


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_staging(folder: Path) -> list[Path]:
    """Remove staging folders in ``folder`` left by runs that are no longer alive."""
    removed: list[Path] = []
    if not folder.is_dir():
        return removed
    for entry in folder.iterdir():
        if not entry.name.startswith(_PREFIX) or not entry.is_dir():
            continue
        pid_text = entry.name[len(_PREFIX) :].split("-", 1)[0]
        if pid_text.isdigit() and not _alive(int(pid_text)):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


class OutputSet:
    """The files of one run, staged in hidden folders until :meth:`commit`.

    Parameters
    ----------
    release_dir : path
        The release folder (created if needed): release file and public manifest.
    custodian_dir : path
        The custodian folder (created if needed): custodian record and report. Must
        not be the release folder or inside it.
    """

    def __init__(self, release_dir: Path, custodian_dir: Path) -> None:
        release_dir, custodian_dir = Path(release_dir), Path(custodian_dir)
        if _inside(custodian_dir, release_dir):
            raise PlanError(
                f"output.custodian_dir: {os.fspath(custodian_dir)!r} is the release folder "
                "or inside it; the custodian record must never travel with the release"
            )
        self.release_dir = release_dir
        self.custodian_dir = custodian_dir
        self._token = f"{_PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
        self._staged: dict[Path, Path] = {}
        self._folders: list[Path] = []
        self._created: list[Path] = []
        self._committed = False

    def __enter__(self) -> OutputSet:
        for folder in (self.release_dir, self.custodian_dir):
            self._created.extend(_missing_parents(folder))
            folder.mkdir(parents=True, exist_ok=True)
            remove_stale_staging(folder)
            staging = folder / self._token
            staging.mkdir()
            self._folders.append(staging)
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()

    def discard(self) -> None:
        """Remove the staging folders (what was not committed is lost).

        Before a commit, the folders this set created are removed too (deepest first),
        as long as nothing else was put in them meanwhile.
        """
        for staging in self._folders:
            shutil.rmtree(staging, ignore_errors=True)
        self._folders = []
        if not self._committed:
            for folder in sorted(self._created, key=lambda f: len(f.parts), reverse=True):
                with contextlib.suppress(OSError):
                    folder.rmdir()  # only if empty
        self._created = []

    def stage(self, name: str, *, custodian: bool = False) -> Path:
        """The staging path for file ``name`` of the release or the custodian folder."""
        if not self._folders:
            raise RuntimeError("OutputSet: stage() outside its `with` block")
        folder = self.custodian_dir if custodian else self.release_dir
        staging = self._folders[1] if custodian else self._folders[0]
        path = staging / name
        self._staged[folder / name] = path
        return path

    def scratch(self, name: str) -> Path:
        """A scratch folder inside the release's staging folder (never committed).

        For intermediate files of the run (a shuffle's spilled buckets): they are
        removed with the staging folder, whatever happens.
        """
        if not self._folders:
            raise RuntimeError("OutputSet: scratch() outside its `with` block")
        folder = self._folders[0] / f".{name}"
        folder.mkdir(exist_ok=True)
        return folder

    def commit(self) -> None:
        """Move the staged files into place, the manifest (if staged) last."""
        manifest = self.release_dir / MANIFEST
        ordered = sorted(self._staged.items(), key=lambda item: item[0] == manifest)
        if manifest in self._staged:
            with contextlib.suppress(FileNotFoundError):
                manifest.unlink()
        for target, staged in ordered:
            try:
                mode = os.stat(target).st_mode & 0o777
            except FileNotFoundError:
                mode = 0o644
            os.chmod(staged, mode)
            os.replace(staged, target)
        self._staged = {}
        self._committed = True
        self.discard()


def _missing_parents(folder: Path) -> list[Path]:
    """``folder`` and those of its parents that do not exist yet."""
    missing: list[Path] = []
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            break
        missing.append(candidate)
    return missing


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


def _inside(path: Path, folder: Path) -> bool:
    a, b = path.resolve(), folder.resolve()
    return a == b or b in a.parents


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
