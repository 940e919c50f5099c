"""Secrets removed from every text that leaves veil: errors, logs, records.

A database URL may carry credentials in its user part (``postgresql://u:pw@host/db``,
or ``u:pw@host`` quoted without its scheme), in its query (``?password=...``,
``?sslpassword=...``), in a libpq keyword string (``host=h password=...``) or in
libpq's environment (``PGPASSWORD=...``).
:func:`redact` removes all of them from a text, whatever the form; :func:`redact_url`
reduces one URL to what may be shown: its scheme, host, port, path and the query
parameters known to hold no secret (:data:`SAFE_QUERY`), the others' values replaced by
``***``. Long runs of hexadecimal digits (key material, 40 digits and more) are replaced
as well.

The release gate applies :func:`redact` to every error message the command line prints,
to every error a platform job records, and checks the public manifest with it
(:func:`is_clean`).
"""

from __future__ import annotations

import re
import urllib.parse
from typing import Final

__all__ = ["MASK", "SAFE_QUERY", "is_clean", "redact", "redact_url"]

MASK: Final[str] = "***"
"""What a removed secret is replaced with."""

SAFE_QUERY: Final[frozenset[str]] = frozenset(
    {
        "sslmode",
        "connect_timeout",
        "application_name",
        "target_session_attrs",
        "mode",
        "cache",
        "uri",
        "check_same_thread",
        "timeout",
        "charset",
        "driver",
        "options",
    }
)
"""Query parameters of a database URL whose values hold no secret."""

_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s'\"<>`]+")
# libpq keyword/value strings and ``name=value`` pairs whose name says secret, also with
# a prefix: libpq's environment (``PGPASSWORD``, ``PGSSLPASSWORD``) and ``DB_PASSWORD``.
_NAMES = (
    r"(?:\w*_|pg)?(?:(?:ssl)?pass(?:word|wd)?|pwd|secret|token|api[_-]?key|access[_-]?key"
    r"|private[_-]?key)"
)
_SECRET_NAME = re.compile(rf"(?i){_NAMES}")
_SECRET_PAIR = re.compile(rf"(?i)\b({_NAMES})(\s*=\s*)('[^']*'|\"[^\"]*\"|[^\s&;,'\"]+)")
# ``user:password@host`` outside a URL (a library quoting an address without its scheme).
_USERINFO = re.compile(r"(?<![\w/.:@-])[^\s'\"<>`@/:]+:[^\s'\"<>`@/]+@(?=[\w\[])")
_HEX_KEY = re.compile(r"(?<![0-9a-fA-F])[0-9a-fA-F]{40,}(?![0-9a-fA-F])")


def redact_url(url: str) -> str:
    """``url`` without its user part and with every unsafe query value masked.

    Parameters
    ----------
    url : str
        A URL (``postgresql+psycopg://u:pw@host:5432/db?sslpassword=x``).

    Returns
    -------
    str
        ``postgresql+psycopg://host:5432/db?sslpassword=***``.

    Examples
    --------
    >>> redact_url("sqlite:///vault.db?password=S3cret&mode=ro")
    'sqlite:///vault.db?password=***&mode=ro'
    >>> redact_url("postgresql://alice:pw@db.example:5432/veil")
    'postgresql://db.example:5432/veil'
    """
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return MASK
    netloc = parts.netloc.rsplit("@", 1)[-1]
    pairs = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    query = "&".join(
        f"{name}={value if name.lower() in SAFE_QUERY else MASK}" for name, value in pairs
    )
    if parts.query and not pairs:
        query = MASK
    out = (
        f"{parts.scheme}://{netloc}{parts.path}" if "://" in url else f"{parts.scheme}:{parts.path}"
    )
    return out + (f"?{query}" if query else "") + (f"#{MASK}" if parts.fragment else "")


def redact(text: str, *, key_material: bool = True) -> str:
    """``text`` with every credential removed (URLs, ``password=`` pairs, key material).

    ``key_material=False`` leaves runs of hexadecimal digits alone (a record that lists
    SHA-256 digests of files).

    Examples
    --------
    >>> redact("cannot open postgresql://u:pw@h/db?password=x (refused)")
    'cannot open postgresql://h/db?password=*** (refused)'
    >>> redact("host=db password=hunter2 dbname=v")
    'host=db password=*** dbname=v'
    >>> redact("invalid address 'u:pw@h:8786'")
    "invalid address 'h:8786'"
    """
    out = _URL.sub(lambda m: redact_url(m.group(0)), str(text))
    out = _USERINFO.sub("", out)
    out = _SECRET_PAIR.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", out)
    return _HEX_KEY.sub("[key material]", out) if key_material else out


def is_clean(text: str) -> bool:
    """Whether ``text`` holds no credential: no URL with a user part or a secret-named
    query parameter, and no ``password=``-like pair.

    Key-length hexadecimal runs are not counted here: a public manifest lists SHA-256
    digests of its files.
    """
    for found in _URL.finditer(text):
        try:
            parts = urllib.parse.urlsplit(found.group(0))
        except ValueError:
            return False
        names = [n for n, _ in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)]
        if "@" in parts.netloc or any(_SECRET_NAME.fullmatch(n) for n in names):
            return False
    return not _SECRET_PAIR.search(text)
