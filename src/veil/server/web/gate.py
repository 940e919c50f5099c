"""The one gate every state-changing request passes: its origin, then its CSRF token.

Every request whose method is not GET, HEAD or OPTIONS, on every route (pages, the
JSON API, the streamed upload, ``/login`` and ``/api/login``), is checked here before
any handler runs, as Django's CSRF middleware guards every view:

1. **Origin.** ``Sec-Fetch-Site``, when the browser sends it, must be ``same-origin``
   (or ``none``: the person typed the address); without it, ``Origin`` must be this
   site's own origin (:func:`veil.server.web.proxy.own_origin`) or one of
   :attr:`~veil.server.config.ServerConfig.allowed_origins`; with neither, a
   ``Referer`` must point at this site. A request a page on another origin sends
   (a form that signs the victim in as the attacker, say) is refused, whatever it
   carries.
2. **Token.** A request made with a session cookie must carry that session's CSRF
   token (the ``X-CSRF-Token`` header, or the ``csrf_token`` field of a form or JSON
   body; in a multipart upload it must come before the file, so no byte of a forged
   upload is read). The login form carries the token its page set in a pre-session
   cookie; ``/api/login`` is guarded by the origin check alone (a script has no page).

An API call authenticated by ``Authorization: Bearer`` is exempt from both: a browser
never adds that header to a request another site makes, and the call's identity then
comes from the token, never from a cookie. A refusal is a 403 naming ``origin`` or
``csrf_token``; nothing is written.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from veil.server.accounts import session_identity
from veil.server.config import ServerConfig
from veil.server.database import Database
from veil.server.errors import Forbidden, InputError, ServerError
from veil.server.security import same
from veil.server.web.core import COOKIE, PRE_COOKIE, render_error
from veil.server.web.formstream import FormStream
from veil.server.web.proxy import own_origin, same_origin

__all__ = ["MAX_FORM_BYTES", "RequestGate", "check_origin"]

MAX_FORM_BYTES = 2 << 20
"""Largest body of a form or JSON request (a plan's text is at most 200,000 characters)."""

_SAFE = frozenset({"GET", "HEAD", "OPTIONS"})


class _Enough(Exception):
    """The multipart reader reached the file: the fields before it are known."""


def check_origin(request: Request, config: ServerConfig) -> None:
    """Refuse a state-changing request sent by a page of another origin.

    ``Sec-Fetch-Site`` decides when the browser sends it (no page can set it): only
    ``same-origin`` and ``none`` pass. Without it, ``Origin`` decides (``null``, which a
    sandboxed frame sends, is another origin); without either, a ``Referer`` must be
    this site's. A client that sends none of the three is no browser: its cookie (if
    any) still needs the CSRF token.
    """
    site = request.headers.get("sec-fetch-site")
    if site is not None:
        if site not in ("same-origin", "none"):
            raise Forbidden(
                f"origin: a request from another site (Sec-Fetch-Site: {site[:40]}) may not "
                "change anything here; use the platform's own pages",
                field="origin",
            )
        return
    own = own_origin(request, config.trusted_proxies)
    allowed = (own, *config.allowed_origins)
    origin = request.headers.get("origin")
    if origin is not None:
        if not any(same_origin(origin, a) for a in allowed):
            raise Forbidden(
                f"origin: {origin[:100]!r} is not this site ({own}); requests from other "
                "origins may not change anything here",
                field="origin",
            )
        return
    referer = request.headers.get("referer")
    if referer and not any(same_origin(referer, a) for a in allowed):
        raise Forbidden(
            f"origin: the request came from a page of another site ({referer[:100]!r})",
            field="origin",
        )


def _bearer(request: Request) -> bool:
    header = request.headers.get("authorization", "")
    return request.url.path.startswith("/api/") and header.lower().startswith("bearer ")


async def _body(receive: Receive) -> tuple[bytes, list[Message]]:
    """The whole (small) body, and the messages to replay to the application."""
    messages: list[Message] = []
    size, parts = 0, []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_FORM_BYTES:
            raise InputError(
                f"body: larger than {MAX_FORM_BYTES:,} bytes (a form or JSON request)",
                field="body",
            )
        parts.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(parts), messages


def _field_token(kind: str, body: bytes) -> str | None:
    if kind.startswith("application/json"):
        try:
            data = json.loads(body or b"null")
        except ValueError:
            return None
        token = data.get("csrf_token") if isinstance(data, dict) else None
        return token if isinstance(token, str) else None
    if kind.startswith("application/x-www-form-urlencoded"):
        for key, value in parse_qsl(body.decode("latin-1"), keep_blank_values=True):
            if key == "csrf_token":
                return value.encode("latin-1").decode("utf-8", "replace")
    return None


async def _multipart_token(kind: str, receive: Receive) -> tuple[str | None, list[Message]]:
    """The ``csrf_token`` field sent before the file (or the end), and what was read."""
    messages: list[Message] = []
    fields: dict[str, str] = {}

    def at_file(_name: str, seen: dict[str, str]) -> None:
        fields.update(seen)
        raise _Enough

    stream = FormStream(kind, "file", at_file, lambda _data: None)
    try:
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            stream.write(message.get("body", b""))
            if not message.get("more_body", False):
                stream.finish()
                fields.update(stream.fields)
                break
    except _Enough:
        pass
    return fields.get("csrf_token"), messages


def _replay(messages: list[Message], receive: Receive) -> Receive:
    pending = list(messages)

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed


class RequestGate:
    """ASGI middleware: the origin and CSRF checks of every state-changing request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in _SAFE:
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        state = scope["app"].state
        try:
            if not _bearer(request):
                check_origin(request, state.config)
                receive = await self._check_token(request, receive, state.db)
        except ServerError as exc:
            await render_error(request, state.templates, exc)(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _check_token(self, request: Request, receive: Receive, db: Database) -> Receive:
        path = request.url.path
        if path == "/api/login":
            return receive
        if path == "/login":
            expected = request.cookies.get(PRE_COOKIE)
            message = "csrf_token: the login form expired or was not sent by this site; reload it"
        else:
            expected = await run_in_threadpool(_session_token, db, request.cookies.get(COOKIE))
            message = "csrf_token: missing or wrong; reload the page and submit the form again"
            if expected is None:
                # No session: the route refuses the request itself (401), changing nothing.
                return receive
        token = request.headers.get("x-csrf-token")
        messages: list[Message] = []
        if token is None:
            kind = request.headers.get("content-type", "")
            if kind.startswith("multipart/"):
                token, messages = await _multipart_token(kind, receive)
            else:
                body, messages = await _body(receive)
                token = _field_token(kind, body)
        if not same(token, expected):
            raise Forbidden(message, field="csrf_token")
        return _replay(messages, receive)


def _session_token(db: Database, cookie: str | None) -> Any:
    with db.session() as session:
        who = session_identity(session, cookie)
        return None if who is None else who.csrf
