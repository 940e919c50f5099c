"""Uploads streamed to an encrypted file, with size and type checks on the way.

:class:`UploadSink` receives the uploaded bytes as they arrive and writes them through
an :class:`~veil.server.custody.EncryptingWriter`: nothing is kept in memory beyond a
chunk, and no plain copy is written. It accepts a CSV (UTF-8 text) or a gzip-compressed
CSV (decompressed as it streams, each step bounded, and refused past
``max_compression_ratio`` times its compressed size: a zip bomb), and refuses anything
else from its first bytes: a zip archive, Parquet, or binary data (a NUL byte). The
size limit counts the decompressed bytes; a cell (the characters between two commas or
line ends) may not be longer than ``max_cell_chars``, counted as the text streams. A
refused upload leaves no file.
"""

from __future__ import annotations

import codecs
import contextlib
import re
import zlib
from pathlib import Path

from veil.server.custody import EncryptingWriter
from veil.server.errors import InputError

__all__ = ["UploadSink"]

_GZIP = b"\x1f\x8b"
_REFUSED = {
    b"PK\x03\x04": "a zip archive",
    b"PK\x05\x06": "a zip archive",
    b"PAR1": "a Parquet file",
    b"\x89PNG": "a PNG image",
    b"%PDF": "a PDF document",
    b"\xd0\xcf\x11\xe0": "an Office document",
}
_STEP = 1 << 16
_SEPARATOR = re.compile(r"[,\r\n]")


class UploadSink:
    """Bytes of one upload, checked and encrypted as they arrive.

    Parameters
    ----------
    path : Path
        The encrypted file to create (a random name chosen by the platform).
    data_key : bytes
        The dataset's data key.
    uid : str
        The dataset's id (authenticated with every chunk).
    max_bytes : int
        Most bytes of CSV (after decompression).
    max_ratio : int
        Most expansion of a gzip file.
    max_cell_chars : int, default 10 000
        Most characters between two separators (comma, line end). A quoted cell that
        holds commas is measured in its pieces: the limit bounds the work of the
        profile and the pages, not the exact length of every quoted cell.
    """

    def __init__(
        self,
        path: Path,
        data_key: bytes,
        uid: str,
        *,
        max_bytes: int,
        max_ratio: int,
        max_cell_chars: int = 10_000,
    ) -> None:
        self.path = path
        self._max_cell = max_cell_chars
        self._long = re.compile(rf"[^,\r\n]{{{max_cell_chars + 1},}}")
        self._run = 0
        self._writer = EncryptingWriter(path, data_key, uid)
        self._max_bytes = max_bytes
        self._max_ratio = max_ratio
        self._head = b""
        self._gzip: zlib._Decompress | None = None
        self._decided = False
        self._text = codecs.getincrementaldecoder("utf-8")()
        self.received = 0
        self.compressed = False

    @property
    def plain_bytes(self) -> int:
        """CSV bytes written so far."""
        return self._writer.plain_bytes

    def _refuse(self, message: str) -> None:
        self.abort()
        raise InputError(f"file: {message}", field="file")

    def feed(self, data: bytes) -> None:
        """The next bytes of the upload."""
        self.received += len(data)
        if not self._decided:
            self._head += data
            if len(self._head) < 4:
                return
            data, self._head = self._head, b""
            self._decide(data)
        if self._gzip is not None:
            self._inflate(data)
        else:
            self._write(data)

    def _decide(self, head: bytes) -> None:
        self._decided = True
        for magic, what in _REFUSED.items():
            if head.startswith(magic):
                self._refuse(f"is {what}; upload a CSV file (optionally gzip-compressed)")
        if head.startswith(_GZIP):
            self._gzip = zlib.decompressobj(wbits=31)
            self.compressed = True

    def _inflate(self, data: bytes) -> None:
        assert self._gzip is not None
        while data:
            try:
                out = self._gzip.decompress(data, _STEP)
            except zlib.error:
                self._refuse("is not a valid gzip file")
            self._write(out)
            if self._gzip.eof:
                if self._gzip.unused_data.strip(b"\x00"):
                    self._refuse("holds more than one gzip member; upload one CSV file")
                return
            data = self._gzip.unconsumed_tail
            ratio_base = max(self.received, 1)
            if self.plain_bytes > (1 << 20) and self.plain_bytes / ratio_base > self._max_ratio:
                self._refuse(
                    f"expands more than {self._max_ratio} times its compressed size (a zip "
                    "bomb?); upload it uncompressed or less compressible"
                )

    def _write(self, data: bytes) -> None:
        if not data:
            return
        if self.plain_bytes + len(data) > self._max_bytes:
            self._refuse(f"is larger than the limit of {self._max_bytes:,} bytes")
        if b"\x00" in data:
            self._refuse("holds binary data (a NUL byte); upload a UTF-8 CSV text file")
        try:
            text = self._text.decode(data)
        except UnicodeDecodeError:
            self._refuse("is not UTF-8 text; save the CSV as UTF-8")
        self._cells(text)
        self._writer.write(data)

    def _cells(self, text: str) -> None:
        """Refuse a cell longer than the limit (runs are carried across pieces)."""
        first = _SEPARATOR.search(text)
        head = first.start() if first is not None else len(text)
        if self._run + head > self._max_cell or self._long.search(text):
            self._refuse(
                f"holds a cell longer than {self._max_cell:,} characters "
                "(veil serve --max-cell-chars); split or shorten it"
            )
        if first is None:
            self._run += len(text)
        else:
            tail = max(text.rfind(","), text.rfind("\n"), text.rfind("\r"))
            self._run = len(text) - tail - 1

    def finish(self) -> int:
        """Close the file; returns the CSV bytes written.

        Raises
        ------
        InputError
            The upload was empty, a gzip file was cut short, or the text ends inside a
            UTF-8 character.
        """
        if not self._decided:
            data, self._head = self._head, b""
            self._decide(data)
            if self._gzip is not None:
                self._inflate(data)
            else:
                self._write(data)
        if self._gzip is not None and not self._gzip.eof:
            self._refuse("is a truncated gzip file")
        try:
            self._text.decode(b"", final=True)
        except UnicodeDecodeError:
            self._refuse("ends inside a UTF-8 character (truncated?)")
        if self.plain_bytes == 0:
            self._refuse("is empty; upload a CSV with a header line and records")
        self._writer.close()
        return self.plain_bytes

    def abort(self) -> None:
        """Stop and remove the file."""
        self._writer.abort()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
