"""Files veil writes: atomically, with the mode their confidentiality asks for.

Every file veil writes goes through here, so that one rule holds on every path:

* **Atomic.** The content is written to a temporary file in the target's folder, then
  renamed onto the target (``os.replace`` is atomic on one file system). A failure
  leaves the target as it was.
* **Modes.** A *public* file (a release, a manifest, a map, a figure) gets the mode a
  plain ``open`` gives under the process's umask (``0o666 & ~umask``); an existing
  target keeps its own. A *confidential* file (a custodian record, a report that
  compares the release with the raw records, a vault, a key, a database) is ``0o600``
  in a folder of ``0o700``, whatever the umask and whatever mode it had before.
* **No leftovers.** Temporary files and staging folders are named
  ``.veil-tmp-<pid>-...`` and ``.veil-staging-<pid>-...``: they are created ``0o600``
  and ``0o700`` (never readable by others, even when a run is killed with the whole
  output inside), and every later write into the same folder removes those whose process
  is no longer alive (:func:`sweep_stale`).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = [
    "CONFIDENTIAL_DIR_MODE",
    "CONFIDENTIAL_FILE_MODE",
    "STAGING_PREFIX",
    "TEMP_PREFIX",
    "private_folder",
    "public_mode",
    "sweep_stale",
    "target_mode",
    "temporary_file",
    "write_atomic",
    "write_text_atomic",
]

CONFIDENTIAL_FILE_MODE = 0o600
"""Mode of a confidential file: its owner alone reads and writes it."""

CONFIDENTIAL_DIR_MODE = 0o700
"""Mode of a folder of confidential files (and of every staging folder)."""

TEMP_PREFIX = ".veil-tmp-"
"""Name prefix of a temporary file, followed by the writing process's id."""

STAGING_PREFIX = ".veil-staging-"
"""Name prefix of a staging folder, followed by the writing process's id."""

_LEFTOVER = re.compile(rf"^(?:{re.escape(TEMP_PREFIX)}|{re.escape(STAGING_PREFIX)})(\d+)-")


def _umask() -> int:
    """The process's umask, read without changing it where the system allows."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    # No /proc: set and restore (not thread safe, hence the fallback only).
    current = os.umask(0o077)
    os.umask(current)
    return current


def public_mode() -> int:
    """The mode of a new public file: what ``open`` gives under the umask."""
    return 0o666 & ~_umask()


def target_mode(path: str | os.PathLike[str], *, confidential: bool) -> int:
    """The mode a file written onto ``path`` gets.

    ``0o600`` when confidential; otherwise the existing target's mode, or the umask's
    for a new one.
    """
    if confidential:
        return CONFIDENTIAL_FILE_MODE
    try:
        return os.stat(path).st_mode & 0o777
    except FileNotFoundError:
        return public_mode()


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


def sweep_stale(folder: str | os.PathLike[str]) -> list[Path]:
    """Remove the temporary files and staging folders left in ``folder`` by dead runs.

    Only entries named by this module (``.veil-tmp-<pid>-``, ``.veil-staging-<pid>-``)
    whose process is no longer alive are removed; a live run's are left alone.

    Returns
    -------
    list of pathlib.Path
        What was removed.
    """
    removed: list[Path] = []
    base = Path(folder)
    try:
        entries = list(base.iterdir())
    except OSError:
        return removed
    for entry in entries:
        found = _LEFTOVER.match(entry.name)
        if found is None or _alive(int(found.group(1))):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                entry.unlink()
        removed.append(entry)
    return removed


def private_folder(path: str | os.PathLike[str], *, tighten: bool = True) -> Path:
    """Create ``path`` (and missing parents) as a ``0o700`` folder.

    With ``tighten`` (a folder of confidential files only, such as a release's custodian
    folder or the platform's data folder), an existing folder readable by the group or
    others is set to ``0o700`` too; without it an existing folder is left as it is (its
    confidential files are ``0o600`` themselves). A folder another account owns is left
    as it is either way: only its owner may change its mode.
    """
    folder = Path(path)
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True, mode=CONFIDENTIAL_DIR_MODE)
    info = folder.stat()
    if (
        (created or tighten)
        and info.st_mode & 0o777 != CONFIDENTIAL_DIR_MODE
        and info.st_uid == os.geteuid()
    ):
        os.chmod(folder, CONFIDENTIAL_DIR_MODE)
    return folder


def temporary_file(folder: str | os.PathLike[str], name: str) -> str:
    """A new, empty ``0o600`` file in ``folder`` for the content of ``name``.

    Its name starts with ``.veil-tmp-<pid>-`` and ends like ``name`` (so a writer that
    picks the format from the suffix picks the right one); stale ones of dead runs are
    swept first.
    """
    sweep_stale(folder)
    descriptor, tmp_name = tempfile.mkstemp(
        dir=os.fspath(folder),
        prefix=f"{TEMP_PREFIX}{os.getpid()}-",
        suffix=f"-{name}",
    )
    os.close(descriptor)
    return tmp_name


def write_atomic(
    path: str | os.PathLike[str],
    write: Callable[[str], object],
    *,
    confidential: bool = False,
) -> None:
    """Write a file through ``write(temporary_path)`` and move it onto ``path``.

    Parameters
    ----------
    path : path
        The target; its folder must exist.
    write : callable
        Writes the content into the temporary path it is given (which ends like
        ``path``).
    confidential : bool, default False
        The file is ``0o600`` (a folder created for it, ``0o700``). Otherwise an
        existing target keeps its mode and a new one gets the umask's
        (:func:`public_mode`).

    On any error the temporary file is removed and the target is left as it was.
    """
    target = os.path.abspath(os.fspath(path))
    folder = os.path.dirname(target)
    if confidential:
        private_folder(folder, tighten=False)
    mode = target_mode(target, confidential=confidential)
    tmp_name = temporary_file(folder, os.path.basename(target))
    try:
        write(tmp_name)
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


def write_text_atomic(
    path: str | os.PathLike[str], text: str, *, confidential: bool = False
) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (see :func:`write_atomic`)."""
    write_atomic(
        path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"), confidential=confidential
    )
