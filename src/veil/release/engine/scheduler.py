"""Which Dask schedulers a plan may name, and a bounded check that an address is one."""

from __future__ import annotations

import socket
import struct
import time

from veil.release.errors import PlanError

LOCAL_SCHEDULERS = ("threads", "synchronous", "processes", "local")
# The largest first message taken for a scheduler's handshake (Dask's is about 200 bytes).
_MAX_HANDSHAKE = 1 << 16


def _read_exactly(sock: socket.socket, n: int, deadline: float) -> bytes:
    chunks: list[bytes] = []
    while n > 0:
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        chunk = sock.recv(min(n, 1 << 16))
        if not chunk:
            raise ConnectionError("the peer closed the connection")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def check_scheduler(address: str, timeout: float = 10.0) -> None:
    """Refuse, within ``timeout`` seconds, a ``tcp://`` address that is not a Dask scheduler.

    A Dask scheduler sends its handshake as soon as a connection opens: a length, then
    that many bytes of frames holding a small mapping. A peer that sends nothing (an
    HTTP server waits for a request: Dask's client would wait forever) or announces a
    huge message (an SSH banner read as a length: Dask's client would try to allocate
    exabytes) is refused before Dask's client sees it. Other schemes (``tls://``, ...)
    are left to the client's own timeout.

    Raises
    ------
    PlanError
        Naming the address and what the peer did.
    """
    from distributed.comm.addressing import parse_address, parse_host_port
    from distributed.protocol.core import loads
    from distributed.protocol.utils import unpack_frames

    scheme, location = parse_address(address)
    if scheme != "tcp":
        return
    where = f"scheduler {address!r}"
    deadline = time.monotonic() + timeout
    try:
        host, port = parse_host_port(location)
        with socket.create_connection((host, port), timeout=timeout) as sock:
            (length,) = struct.unpack("<Q", _read_exactly(sock, 8, deadline))
            if length > _MAX_HANDSHAKE:
                raise PlanError(
                    f"{where}: is not a Dask scheduler (its first message does not follow "
                    "Dask's protocol); give the address of a running Dask scheduler"
                )
            frames = unpack_frames(_read_exactly(sock, length, deadline))
            message = loads(frames)  # type: ignore[no-untyped-call]
    except PlanError:
        raise
    except TimeoutError:
        raise PlanError(
            f"{where}: did not answer as a Dask scheduler within {timeout:g} s (a Dask "
            "scheduler speaks first; an HTTP server, for one, waits); give the address of a "
            "running Dask scheduler"
        ) from None
    except (OSError, ValueError) as exc:
        raise PlanError(f"{where}: cannot connect ({exc})") from None
    except Exception:  # whatever the peer sent, it was not Dask's handshake
        message = None
    if not isinstance(message, dict) or "compression" not in message:
        raise PlanError(
            f"{where}: is not a Dask scheduler (its first message is not Dask's handshake); "
            "give the address of a running Dask scheduler"
        )
