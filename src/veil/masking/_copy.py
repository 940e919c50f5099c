"""PostgreSQL's binary ``COPY`` format, for the token vault's bulk writes and look-ups.

Binding one parameter per value (or one array parameter of many values) costs the
driver several microseconds per value; ``COPY ... FROM STDIN (FORMAT BINARY)`` takes
all the rows as one byte string, built here with one :meth:`bytes.join` per row.

Format (PostgreSQL documentation, ``COPY``, "Binary Format"): an 11-byte signature, a
32-bit flags field and a 32-bit header-extension length (both 0); per row a 16-bit
field count, then per field its 32-bit length and its bytes (integers big-endian); a
16-bit -1 as trailer.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from itertools import repeat

__all__ = ["copy_payload"]

_HEADER = b"PGCOPY\n\xff\r\n\x00" + bytes(8)
_TRAILER = b"\xff\xff"
_LENGTH = struct.Struct(">i").pack


def copy_payload(columns: Sequence[Sequence[bytes]]) -> bytes:
    """The binary ``COPY`` stream of rows given column by column.

    Parameters
    ----------
    columns : sequence of sequences of bytes
        One sequence per column, all of the same length; each value is the field's
        binary representation (for ``bytea`` the bytes themselves, for ``text`` the
        text in the client's encoding, for ``integer`` 4 big-endian bytes). No NULLs.

    Returns
    -------
    bytes
        Header, rows and trailer, ready for ``Copy.write``.
    """
    n = len(columns[0]) if columns else 0
    if any(len(column) != n for column in columns):
        raise ValueError("copy_payload: every column must hold the same number of values")
    pieces: list[Iterable[bytes]] = [repeat(struct.pack(">h", len(columns)))]
    for column in columns:
        widths = set(map(len, column))
        if len(widths) == 1:
            pieces.append(repeat(_LENGTH(widths.pop())))
        else:
            pieces.append([_LENGTH(len(value)) for value in column])
        pieces.append(column)
    rows = map(b"".join, zip(*pieces, strict=False))  # the repeats are endless
    return b"".join((_HEADER, *rows, _TRAILER))
