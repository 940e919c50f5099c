"""The files of one run, written as a set: staged, then renamed, the commit point last.

Every file a run writes (a release, its manifest, a map, a custodian record, a report)
is first written into a hidden staging folder inside its target folder (same file
system, so the renames are atomic), then :meth:`OutputSet.commit`:

1. removes the old commit-point file (a release's ``manifest.json``), if any: from here
   on, a reader finds no committed release;
2. moves the other files into place, confidential ones first;
3. moves the new commit-point file into place.

A crash before step 1 leaves the previous outputs untouched; a crash between steps 1 and
3 leaves a folder without a manifest, which a reader reports as not committed.

What the set guarantees on every path that uses it:

* **Modes.** Staging folders are ``0o700``; a confidential file is ``0o600`` in a
  ``0o700`` folder; a public file gets the umask's mode, or keeps an existing target's.
* **No leftovers.** A run removes its own staging folders on any error or cancellation;
  at its start it removes those left by runs whose process is no longer alive
  (:func:`veil.atomic.sweep_stale`). Folders the set created and that hold nothing
  committed are removed again: a refused or failed run writes nothing.
* **Placement.** A confidential file is never written into a public folder of the same
  set, nor into a folder (or below a folder) that holds a public veil manifest
  (:func:`check_confidential_place`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from pathlib import Path

from veil.atomic import (
    CONFIDENTIAL_DIR_MODE,
    STAGING_PREFIX,
    private_folder,
    sweep_stale,
    target_mode,
)
from veil.gate.errors import PlacementError

__all__ = ["MANIFEST", "OutputSet", "check_confidential_place", "inside"]

MANIFEST = "manifest.json"
"""The public manifest of a release folder: the commit point of a release."""


def inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or below it (links resolved)."""
    a, b = Path(path).resolve(), Path(folder).resolve()
    return a == b or b in a.parents


def _public_manifest(folder: Path) -> bool:
    candidate = folder / MANIFEST
    if not candidate.is_file():
        return False
    try:
        with open(candidate, encoding="utf-8") as handle:
            head = handle.read(4096)
    except (OSError, UnicodeDecodeError):
        return False
    return '"confidentiality"' in head and "public" in head


def check_confidential_place(target: Path, field: str) -> None:
    """Refuse a confidential file in a release folder, or below one.

    A folder holding a public veil manifest travels with its release: a report or a
    custodian record put there, or in a folder inside it, is published with it.

    Parameters
    ----------
    target : pathlib.Path
        The confidential file.
    field : str
        The option or plan field that named it, for the message.

    Raises
    ------
    PlacementError
        The target's folder, or one of its parents, holds a public ``manifest.json``.
    """
    folder = Path(target).resolve().parent
    for candidate in (folder, *folder.parents):
        if _public_manifest(candidate):
            raise PlacementError(
                f"{field}: {os.fspath(target)!r} is in the release folder "
                f"{os.fspath(candidate)!r} (it holds a public {MANIFEST}); confidential "
                "files must never travel with a release: write it to another folder"
            )


def _missing_parents(folder: Path) -> list[Path]:
    missing: list[Path] = []
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            break
        missing.append(candidate)
    return missing


class OutputSet:
    """The files of one run, staged in hidden folders until :meth:`commit`.

    Use it as a context manager; on exit, whatever was not committed is removed.

    Parameters
    ----------
    public : sequence of pathlib.Path
        Folders of public outputs (created if needed).
    confidential : sequence of pathlib.Path
        Folders of confidential outputs (created ``0o700`` if needed, tightened to it
        otherwise). None may be a public folder or inside one.
    commit_point : str, optional
        The file name moved into place last (``manifest.json`` for a release).
    """

    def __init__(
        self,
        public: tuple[Path, ...] = (),
        confidential: tuple[Path, ...] = (),
        *,
        commit_point: str | None = MANIFEST,
        field: str = "output",
    ) -> None:
        for secret in confidential:
            for folder in public:
                if inside(secret, folder):
                    raise PlacementError(
                        f"{field}: {os.fspath(secret)!r} is the release folder or inside "
                        "it; confidential files must never travel with the release"
                    )
        self._public = tuple(Path(p) for p in public)
        self._confidential = tuple(Path(p) for p in confidential)
        self._commit_point = commit_point
        self._token = f"{STAGING_PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
        self._staging: dict[Path, Path] = {}
        self._staged: dict[Path, tuple[Path, bool]] = {}
        self._created: list[Path] = []
        self._committed = False
        self._open = False

    def __enter__(self) -> OutputSet:
        self._open = True
        for folder in self._public:
            self._folder(folder, confidential=False)
        for folder in self._confidential:
            self._folder(folder, confidential=True)
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()

    def _folder(self, folder: Path, *, confidential: bool) -> Path:
        """The staging folder inside ``folder`` (created, with ``folder``, on first use)."""
        folder = Path(folder)
        if folder in self._staging:
            return self._staging[folder]
        self._created.extend(_missing_parents(folder))
        if confidential:
            private_folder(folder)
        else:
            folder.mkdir(parents=True, exist_ok=True)
        sweep_stale(folder)
        staging = folder / self._token
        staging.mkdir(mode=CONFIDENTIAL_DIR_MODE)
        self._staging[folder] = staging
        return staging

    def stage(self, target: str | os.PathLike[str], *, confidential: bool = False) -> Path:
        """The staging path of ``target`` (a file in a public or confidential folder).

        Parameters
        ----------
        target : path
            The file's final path.
        confidential : bool, default False
            The file is confidential: ``0o600`` in a ``0o700`` folder, never in or
            below a release folder.
        """
        if not self._open:
            raise RuntimeError("OutputSet: stage() outside its `with` block")
        path = Path(target)
        if confidential:
            for folder in self._public:
                if inside(path, folder):
                    raise PlacementError(
                        f"output: {os.fspath(path)!r} is in the release folder "
                        f"{os.fspath(folder)!r}; confidential files must never travel with it"
                    )
            check_confidential_place(path, "output")
        staging = self._folder(path.parent, confidential=confidential)
        staged = staging / path.name
        self._staged[path] = (staged, confidential)
        return staged

    def scratch(self, name: str) -> Path:
        """A private scratch folder, never committed (removed with the staging folders)."""
        folders = [*self._public, *self._confidential]
        if not self._open or not folders:
            raise RuntimeError("OutputSet: scratch() outside its `with` block")
        folder = self._folder(folders[0], confidential=folders[0] in self._confidential)
        scratch = folder / f".{name}"
        scratch.mkdir(exist_ok=True, mode=CONFIDENTIAL_DIR_MODE)
        return scratch

    def commit(self) -> None:
        """Move the staged files into place: confidential first, the commit point last."""
        point = [t for t in self._staged if t.name == self._commit_point]
        for target in point:
            with contextlib.suppress(FileNotFoundError):
                target.unlink()
        ordered = sorted(
            self._staged.items(),
            key=lambda item: (item[0].name == self._commit_point, not item[1][1]),
        )
        for target, (staged, confidential) in ordered:
            os.chmod(staged, target_mode(target, confidential=confidential))
            os.replace(staged, target)
        self._staged = {}
        self._committed = True
        self.discard()

    def discard(self) -> None:
        """Remove the staging folders (what was not committed is lost).

        Before a commit, the folders this set created are removed too (deepest first),
        as long as nothing else was put in them meanwhile.
        """
        for staging in self._staging.values():
            shutil.rmtree(staging, ignore_errors=True)
        self._staging = {}
        self._open = False
        if not self._committed:
            for folder in sorted(self._created, key=lambda f: len(f.parts), reverse=True):
                with contextlib.suppress(OSError):
                    folder.rmdir()  # only if empty
        self._created = []
