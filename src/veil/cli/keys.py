"""``veil key ...``: make the secret keys that keyed masking, tokens and FPE read.

``veil key new PATH`` writes 32 bytes from the operating system's CSPRNG (:mod:`secrets`)
as 64 hex characters and a newline to a new file that only its owner can read or write
(mode 0600), and prints the key's id, never the key. The file is what
``--key-file`` and a plan's ``key_file`` expect (:meth:`veil.masking.SecretKey.from_file`).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Annotated

import typer

from veil.atomic import CONFIDENTIAL_FILE_MODE
from veil.cli.console import emit_json, print_text
from veil.cli.errors import CliUsageError, reporting_errors
from veil.cli.options import Json

__all__ = ["app", "new"]

app = typer.Typer(
    name="key",
    help="Make secret keys for keyed masking (hmac), tokens (vault) and FF1.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

_FILE_MODE = CONFIDENTIAL_FILE_MODE


def _write_new(path: Path, data: bytes) -> None:
    """Create ``path`` (it must not exist) with mode 0600 and write ``data`` to it."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(path, flags, _FILE_MODE)
    try:
        # The umask can only narrow the mode; set it exactly in case it was unusual.
        if hasattr(os, "fchmod"):
            os.fchmod(descriptor, _FILE_MODE)
        view = memoryview(data)
        while view:
            view = view[os.write(descriptor, view) :]
        os.fsync(descriptor)
    except BaseException:
        os.close(descriptor)
        with contextlib.suppress(OSError):
            path.unlink()
        raise
    os.close(descriptor)


def _replace(path: Path, data: bytes) -> None:
    """Write ``data`` to a new private file beside ``path``, then rename it over ``path``."""
    staged = path.with_name(f".{path.name}.{os.getpid()}.new")
    _write_new(staged, data)
    try:
        os.replace(staged, path)
    except BaseException:
        with contextlib.suppress(OSError):
            staged.unlink()
        raise


@app.command("new")
@reporting_errors
def new(
    path: Annotated[
        Path,
        typer.Argument(help="The key file to create (it must not exist, unless --force)."),
    ],
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Replace an existing file. Data masked or tokenized under the old key can "
            "then no longer be matched, re-identified or detokenized.",
        ),
    ] = False,
    json: Json = False,
) -> None:
    """Write a new random key (32 bytes, hex) to PATH, readable by its owner only.

    The key is never printed: the command prints its key id, which names it in
    manifests and in --key-id checks.
    """
    from veil.masking.keys import KEY_BYTES, SecretKey

    if path.is_dir():
        raise CliUsageError(f"PATH: {str(path)!r} is a directory; give a file name for the key")
    if (path.exists() or path.is_symlink()) and not force:
        raise CliUsageError(
            f"PATH: {str(path)!r} exists; a key is never overwritten silently (what was "
            f"masked under it could no longer be matched or detokenized): choose another "
            f"path, or pass --force to replace it"
        )
    key = SecretKey.generate(KEY_BYTES)
    data = (key.reveal().hex() + "\n").encode("ascii")
    if force and (path.exists() or path.is_symlink()):
        _replace(path, data)
    else:
        _write_new(path, data)
    # Read back through the loader every command uses: mode and content are as required.
    if SecretKey.from_file(path) != key:  # pragma: no cover - the file was just written
        raise CliUsageError(f"PATH: {str(path)!r} does not read back as the key written")
    if json:
        emit_json(
            {
                "path": str(path),
                "key_id": key.key_id,
                "bytes": KEY_BYTES,
                "encoding": "hex",
                "mode": f"{_FILE_MODE:04o}",
            }
        )
        return
    print_text(
        f"wrote a new {8 * KEY_BYTES}-bit key to {path} (hex, mode {_FILE_MODE:04o}); "
        f"key id {key.key_id}"
    )
