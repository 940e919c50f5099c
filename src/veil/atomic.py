"""Atomic file output: a crash never leaves a half-written file behind.

The content is written to a temporary file in the target's folder, then renamed onto
the target (``os.replace`` is atomic on one file system).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["write_atomic", "write_text_atomic"]


def write_atomic(path: str | os.PathLike[str], write: Callable[[str], object]) -> None:
    """Write a file through ``write(temporary_path)`` and move it onto ``path``.

    An existing target keeps its permissions; a new one gets ``0o644`` (what a plain
    ``open`` gives under the usual umask), not the ``0o600`` of temporary files. On any
    error the temporary file is removed and the target is left as it was.
    """
    target = os.path.abspath(os.fspath(path))
    try:
        mode = os.stat(target).st_mode & 0o777
    except FileNotFoundError:
        mode = 0o644
    descriptor, tmp_name = tempfile.mkstemp(
        dir=os.path.dirname(target),
        prefix=f".{os.path.basename(target)}.",
        suffix=Path(target).suffix,
    )
    os.close(descriptor)
    try:
        write(tmp_name)
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    write_atomic(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
