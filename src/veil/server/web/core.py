"""What every route shares: who is calling, CSRF, transactions, rendering, headers.

Each handler is registered twice, as a page (``/datasets/3``, HTML rendered from an
autoescaped Jinja2 template) and as the JSON API (``/api/datasets/3``), and returns a
:class:`Page` or a :class:`Done`: the same data either way, so pages and API cannot
disagree. The wrapper

* authenticates: a session cookie for pages and the API, or an API token
  (``Authorization: Bearer``) for the API only;
* (the origin and CSRF token of every POST are checked before, by the one gate,
  :mod:`veil.server.web.gate`);
* runs the handler in one database transaction: a refused request (any
  :class:`~veil.server.errors.ServerError`) is rolled back, so nothing is written;
* renders a refusal as a message naming the field, with its HTTP status, never a
  traceback.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape
from sqlalchemy import func, select
from sqlalchemy.orm import Session as DbSession
from starlette.concurrency import run_in_threadpool

from veil.server.accounts import (
    Identity,
    authenticate_token,
    must_change_password,
    session_identity,
)
from veil.server.clock import aware
from veil.server.config import ServerConfig
from veil.server.custody import KeyRing
from veil.server.database import Database
from veil.server.errors import Forbidden, InputError, ServerError, Unauthorized
from veil.server.models import MAX_ID, Dataset

__all__ = ["COOKIE", "CSP", "Ctx", "Done", "Page", "register", "render_error"]

ONE_TIME = (
    "password: this session signed in with a one-time password; set a new password first "
    "(the Account page, or POST /api/account/password)"
)
COOKIE = "veil_session"
PRE_COOKIE = "veil_pre"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
_LOG = logging.getLogger("veil.server")
# Fields the JSON API takes as lists (the form sends them comma-separated).
_LIST_FIELDS = frozenset({"allowed_methods"})
_TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


def templates() -> Environment:
    """The template environment: every value is HTML-escaped unless marked safe."""
    env = Environment(
        loader=FileSystemLoader(str(_TEMPLATES)),
        autoescape=select_autoescape(default=True, default_for_string=True),
    )
    env.filters["tojson_pretty"] = lambda v: json.dumps(v, indent=2, default=str)
    env.filters["when"] = when
    env.filters["iso"] = lambda v: v.isoformat() if hasattr(v, "isoformat") else str(v or "")
    return env


def when(value: Any) -> str:
    """A moment as people read it: ``2026-12-02 14:03 UTC`` (from a datetime or ISO text)."""
    if value is None or value == "":
        return ""
    moment = value
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return value
    if not isinstance(moment, datetime):
        return str(value)
    return aware(moment).astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


@dataclass
class Ctx:
    """What a handler gets: the request's transaction, caller, fields and the platform."""

    db: DbSession
    who: Identity | None
    fields: dict[str, Any]
    config: ServerConfig
    keyring: KeyRing
    api: bool
    request: Request

    @property
    def user(self) -> Identity:
        """The caller (the wrapper has checked there is one)."""
        assert self.who is not None
        return self.who


@dataclass
class Page:
    """A page: its template and the data (the API returns the data as JSON)."""

    template: str
    data: dict[str, Any]
    status: int = 200


@dataclass
class Done:
    """A change made: pages go to ``url``, the API returns ``data``."""

    url: str
    data: dict[str, Any] = field(default_factory=dict)
    status: int = 200
    cookies: dict[str, str | None] = field(default_factory=dict)


Handler = Callable[..., Page | Done | Response]


def int_field(ctx: Ctx, name: str) -> int:
    """The whole-number field ``name`` (a refusal naming it when it is not one, or out of
    the range of a database id)."""
    raw = ctx.fields.get(name)
    text = str(raw).strip()
    if not text.isdigit() or len(text) > 10 or not 1 <= int(text) <= MAX_ID:
        raise InputError(
            f"{name}: must be a whole number from 1 to {MAX_ID:,}, got {str(raw)[:40]!r}",
            field=name,
        )
    return int(text)


def _check_ids(params: dict[str, Any]) -> None:
    """Refuse a path id beyond what the tables hold (a 4xx naming it, never a 500)."""
    for name, value in params.items():
        if isinstance(value, int) and not 0 <= value <= MAX_ID:
            raise InputError(
                f"{name}: must be a whole number from 1 to {MAX_ID:,}, got {value}", field=name
            )


def _identity(db: DbSession, request: Request, api: bool) -> tuple[Identity | None, bool]:
    """The caller, and whether a session cookie (which needs CSRF) authenticated them."""
    header = request.headers.get("authorization", "")
    if api and header.lower().startswith("bearer "):
        who = authenticate_token(db, header[7:].strip())
        if who is None:
            raise Unauthorized("authorization: the API token is unknown or revoked")
        return who, False
    return session_identity(db, request.cookies.get(COOKIE)), True


def custody_banner(db: DbSession, who: Identity | None) -> dict[str, Any]:
    """What the custody line of every page says for this caller."""
    if who is None or who.role != "curator":
        return {"raw_access": False}
    rows = db.execute(
        select(Dataset.custody, func.count())
        .where(Dataset.owner_id == who.user.id)
        .group_by(Dataset.custody)
    ).all()
    counts = {str(custody): int(n) for custody, n in rows}
    return {
        "raw_access": True,
        "encrypted": counts.get("encrypted", 0),
        "deleted": counts.get("deleted", 0),
    }


def render_page(
    request: Request, env: Environment, page: Page, ctx: Ctx | None, extra: dict[str, Any]
) -> HTMLResponse:
    """The page's HTML."""
    who = None if ctx is None else ctx.who
    data = {
        **page.data,
        "who": who,
        "csrf": None if who is None else who.csrf,
        "custody": {} if ctx is None else custody_banner(ctx.db, who),
        "request_is_fragment": request.headers.get("hx-request") == "true",
        **extra,
    }
    html = env.get_template(page.template).render(**data)
    return HTMLResponse(html, status_code=page.status)


def render_error(request: Request, env: Environment, exc: ServerError) -> Response:
    """A refusal: JSON for the API, a page naming the field otherwise."""
    body = {"error": {"field": exc.field, "message": exc.message, "status": exc.status}}
    if request.url.path.startswith("/api/"):
        return JSONResponse(body, status_code=exc.status)
    if isinstance(exc, Unauthorized):
        return RedirectResponse("/login", status_code=303)
    html = env.get_template("error.html").render(
        error=body["error"], who=None, csrf=None, custody={}
    )
    return HTMLResponse(html, status_code=exc.status)


async def _fields(request: Request) -> dict[str, Any]:
    if request.method in ("GET", "HEAD"):
        return dict(request.query_params)
    kind = request.headers.get("content-type", "")
    if kind.startswith("application/json"):
        try:
            data = await request.json()
        except ValueError:
            raise ServerError("body: not valid JSON", field="body") from None
        if not isinstance(data, dict):
            raise ServerError("body: must be a JSON object", field="body")
        for key, value in data.items():
            if isinstance(value, (list, dict)) and key not in _LIST_FIELDS:
                kind = "list" if isinstance(value, list) else "object"
                raise InputError(
                    f"{key}: must be one value (text, number or true/false), got a JSON {kind}",
                    field=str(key),
                )
        return {**dict(request.query_params), **data}
    if kind.startswith(("application/x-www-form-urlencoded", "multipart/")):
        form = await request.form(max_files=0, max_fields=500)
        return {**dict(request.query_params), **{k: v for k, v in form.items()}}
    return dict(request.query_params)


def register(
    app: FastAPI,
    method: str,
    path: str,
    handler: Handler,
    *,
    public: bool = False,
    api: bool = True,
    pages: bool = True,
    one_time: bool = False,
) -> None:
    """Add ``handler`` at ``path`` (page) and ``/api`` + ``path`` (JSON).

    A session opened with a one-time password reaches only routes marked ``one_time``
    (its account page, the password change, signing out); a page elsewhere sends it to
    the account page, anything else is refused.
    """

    def endpoint(is_api: bool) -> Callable[[Request], Awaitable[Response]]:
        async def serve(request: Request) -> Response:
            state = request.app.state
            env: Environment = state.templates
            try:
                fields = await _fields(request)
            except ServerError as exc:
                return render_error(request, env, exc)

            def work() -> Response:
                _check_ids(request.path_params)
                db: Database = state.db
                with db.session() as session:
                    who, _ = _identity(session, request, is_api)
                    if who is None and not public:
                        raise Unauthorized("session: sign in first")
                    if must_change_password(who) and not one_time:
                        if not is_api and request.method == "GET":
                            return RedirectResponse("/account?must_change=1", status_code=303)
                        raise Forbidden(ONE_TIME, field="password")
                    ctx = Ctx(session, who, fields, state.config, state.keyring, is_api, request)
                    result = handler(ctx, **request.path_params)
                    return _respond(request, env, ctx, result)

            try:
                return await run_in_threadpool(work)
            except ServerError as exc:
                return render_error(request, env, exc)

        return serve

    if pages:
        app.add_api_route(path, endpoint(False), methods=[method], include_in_schema=False)
    if api:
        app.add_api_route(
            "/api" + path,
            endpoint(True),
            methods=[method],
            name=f"api:{method}:{path}",
            openapi_extra=_openapi(method, path),
        )


_PARAM = re.compile(r"\{(\w+)(?::(\w+))?\}")


def _openapi(method: str, path: str) -> dict[str, Any]:
    """The operation's path parameters and (for POST) its JSON object body, for the schema.

    The handlers read their fields themselves (and name the field of any bad value),
    so the body is documented as an object of form fields.
    """
    parameters = [
        {
            "name": name,
            "in": "path",
            "required": True,
            "schema": {"type": "integer", "minimum": 1, "maximum": MAX_ID}
            if kind == "int"
            else {"type": "string"},
        }
        for name, kind in _PARAM.findall(path)
    ]
    extra: dict[str, Any] = {"parameters": parameters} if parameters else {}
    if method == "POST":
        extra["requestBody"] = {
            "required": False,
            "content": {
                "application/json": {"schema": {"type": "object", "additionalProperties": True}}
            },
        }
    return extra


def _respond(
    request: Request, env: Environment, ctx: Ctx, result: Page | Done | Response
) -> Response:
    if isinstance(result, Response):
        return result
    if isinstance(result, Page):
        if ctx.api:
            return JSONResponse(_jsonable(result.data), status_code=result.status)
        return render_page(request, env, result, ctx, {})
    response: Response
    if ctx.api:
        response = JSONResponse(_jsonable(result.data), status_code=result.status)
    else:
        response = RedirectResponse(result.url, status_code=303)
    secure = ctx.config.secure_cookies
    for name, value in result.cookies.items():
        if value is None:
            response.delete_cookie(name, path="/", secure=secure, httponly=True, samesite="strict")
        else:
            response.set_cookie(
                name,
                value,
                path="/",
                secure=secure,
                httponly=True,
                samesite="strict",
                max_age=ctx.config.session_minutes * 60,
            )
    return response


def _jsonable(data: dict[str, Any]) -> Any:
    return json.loads(
        json.dumps({k: v for k, v in data.items() if not k.startswith("_")}, default=_plain)
    )


def _plain(value: Any) -> Any:
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, Identity):
        return {"username": value.name, "role": value.role}
    return str(value)
