"""The platform's files are private to its account: folders 0700, files 0600.

A small primitive until the library's (the release gate's confidential-file modes) can
serve the platform too: every folder the platform makes under its data directory, and
the data directory itself, is made or brought to mode 0700, so that no other local
account can list or read what it holds (the database, encrypted datasets, releases
before publication, the audit checkpoints).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["private_dir"]


def private_dir(path: Path) -> Path:
    """Create ``path`` (and its missing parents) 0700, or tighten it to 0700 if it is ours."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    info = path.stat()
    if stat.S_IMODE(info.st_mode) != 0o700 and info.st_uid == os.geteuid():
        os.chmod(path, 0o700)
    return path
