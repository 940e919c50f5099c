"""A streaming multipart/form-data reader: fields in memory, the file straight to a sink.

Starlette's own form parser spools an uploaded file to a temporary file in the clear;
this reader hands each piece of the file to the caller as it arrives (to be checked
and encrypted) and keeps only the small text fields, each at most 64 KiB.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from python_multipart.multipart import MultipartParser, parse_options_header

from veil.server.errors import InputError

__all__ = ["FormStream"]

_MAX_FIELD = 1 << 16
_MAX_FIELDS = 32


class FormStream:
    """Feed it the request body; text fields land in :attr:`fields`.

    Parameters
    ----------
    content_type : str
        The request's Content-Type (must be multipart/form-data with a boundary).
    file_field : str
        The name of the file field.
    on_file_start : callable
        Called with the field's file name and the fields seen so far, before the first
        byte of the file; may raise to refuse the upload (a missing CSRF token).
    on_file_data : callable
        Called with each piece of the file.
    """

    def __init__(
        self,
        content_type: str,
        file_field: str,
        on_file_start: Callable[[str, dict[str, str]], None],
        on_file_data: Callable[[bytes], None],
    ) -> None:
        kind, options = parse_options_header(content_type or "")
        boundary = options.get(b"boundary")
        if kind != b"multipart/form-data" or not boundary:
            raise InputError("file: the form must be sent as multipart/form-data", field="file")
        self.fields: dict[str, str] = {}
        self.file_name: str | None = None
        self._file_field = file_field
        self._start, self._data = on_file_start, on_file_data
        self._header_field = b""
        self._header_value = b""
        self._headers: dict[bytes, bytes] = {}
        self._name: str | None = None
        self._is_file = False
        self._value = bytearray()
        callbacks: Any = {
            "on_part_begin": self._part_begin,
            "on_part_data": self._part_data,
            "on_part_end": self._part_end,
            "on_header_field": self._hfield,
            "on_header_value": self._hvalue,
            "on_header_end": self._hend,
            "on_headers_finished": self._headers_done,
        }
        self._parser = MultipartParser(boundary, callbacks)

    def write(self, chunk: bytes) -> None:
        """The next bytes of the request body."""
        self._parser.write(chunk)

    def finish(self) -> None:
        """The body is complete."""
        self._parser.finalize()

    def _part_begin(self) -> None:
        self._headers, self._name, self._is_file = {}, None, False
        self._value = bytearray()

    def _hfield(self, data: bytes, start: int, end: int) -> None:
        self._header_field += data[start:end]

    def _hvalue(self, data: bytes, start: int, end: int) -> None:
        self._header_value += data[start:end]

    def _hend(self) -> None:
        self._headers[self._header_field.lower()] = self._header_value
        self._header_field = self._header_value = b""

    def _headers_done(self) -> None:
        _, options = parse_options_header(self._headers.get(b"content-disposition", b""))
        self._name = options.get(b"name", b"").decode("utf-8", "replace")
        filename = options.get(b"filename")
        if self._name == self._file_field:
            if self.file_name is not None:
                raise InputError("file: send one file per upload", field="file")
            self._is_file = True
            self.file_name = (filename or b"").decode("utf-8", "replace")
            self._start(self.file_name, dict(self.fields))
        elif len(self.fields) >= _MAX_FIELDS:
            raise InputError("form: too many fields", field="form")

    def _part_data(self, data: bytes, start: int, end: int) -> None:
        if self._is_file:
            self._data(bytes(data[start:end]))
            return
        self._value += data[start:end]
        if len(self._value) > _MAX_FIELD:
            raise InputError(
                f"{self._name}: longer than {_MAX_FIELD} bytes", field=self._name or "form"
            )

    def _part_end(self) -> None:
        if not self._is_file and self._name:
            self.fields[self._name] = self._value.decode("utf-8", "replace")
