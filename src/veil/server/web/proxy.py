"""Who is on the other end: the client's address and the site's origin, proxies considered.

``X-Forwarded-For``, ``X-Forwarded-Proto`` and ``X-Forwarded-Host`` are read only when
the connection comes from a proxy named in :attr:`ServerConfig.trusted_proxies
<veil.server.config.ServerConfig.trusted_proxies>` (addresses or networks); from any
other peer they are ignored, so that a client cannot choose the address it is
throttled by, nor the origin its requests are compared with. The web server's own
proxy handling is switched off (``veil serve`` starts uvicorn with
``proxy_headers=False``): this module is the one place that reads those headers.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from functools import lru_cache

from starlette.requests import HTTPConnection

__all__ = ["client_address", "own_origin", "same_origin"]

_DEFAULT_PORTS = {"http": "80", "https": "443"}


@lru_cache(maxsize=64)
def _networks(
    proxies: tuple[str, ...],
) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(p, strict=False) for p in proxies)


def _trusted(address: str, proxies: tuple[str, ...]) -> bool:
    if not proxies:
        return False
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in net for net in _networks(proxies))


def _peer(connection: HTTPConnection) -> str:
    return connection.client.host if connection.client else "unknown"


def client_address(connection: HTTPConnection, proxies: Iterable[str]) -> str:
    """The client's address: the peer's, or the forwarded one if the peer is a trusted proxy.

    ``X-Forwarded-For`` is read from the right (each proxy appends the address it saw),
    skipping trusted proxies; the first address that is not one is the client.
    """
    trusted = tuple(proxies)
    peer = _peer(connection)
    if not _trusted(peer, trusted):
        return peer
    hops = [h.strip() for h in connection.headers.get("x-forwarded-for", "").split(",")]
    for hop in reversed([h for h in hops if h]):
        if not _trusted(hop, trusted):
            return hop[:64]
    return peer


def _forwarded(connection: HTTPConnection, name: str, proxies: tuple[str, ...]) -> str | None:
    if not _trusted(_peer(connection), proxies):
        return None
    value = connection.headers.get(name)
    return value.split(",")[0].strip() if value else None


def _normal(scheme: str, host: str) -> str:
    scheme, host = scheme.lower(), host.lower()
    name, sep, port = host.rpartition(":")
    if sep and "]" not in port and _DEFAULT_PORTS.get(scheme) == port:
        host = name
    return f"{scheme}://{host}"


def own_origin(connection: HTTPConnection, proxies: Iterable[str]) -> str:
    """This site's origin as the client addressed it (``scheme://host[:port]``)."""
    trusted = tuple(proxies)
    scheme = _forwarded(connection, "x-forwarded-proto", trusted) or connection.url.scheme
    host = (
        _forwarded(connection, "x-forwarded-host", trusted)
        or connection.headers.get("host")
        or connection.url.netloc
    )
    return _normal(scheme, host)


def same_origin(url: str, origin: str) -> bool:
    """Whether ``url`` (an Origin or Referer value) is on ``origin``."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return False
    return _normal(scheme, rest.split("/", 1)[0]) == origin
