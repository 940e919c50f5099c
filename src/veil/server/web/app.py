"""The FastAPI application: security headers, the streamed upload, every route."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from importlib import resources
from typing import Any

import anyio.to_thread
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from veil.server.accounts import must_change_password
from veil.server.config import ServerConfig
from veil.server.custody import KeyRing
from veil.server.database import POOL_SIZE, Database
from veil.server.datasets import DatasetForm, new_upload, register_upload
from veil.server.errors import Forbidden, InputError, NotFound, ServerError, Unauthorized
from veil.server.jobs import enqueue_profile
from veil.server.web.core import CSP, ONE_TIME, _identity, render_error, templates
from veil.server.web.formstream import FormStream
from veil.server.web.gate import RequestGate
from veil.server.web.routes import add_routes

__all__ = ["build_app"]

_LOG = logging.getLogger("veil.server")


def _headers(headers: MutableHeaders, path: str) -> None:
    headers.setdefault("Content-Security-Policy", CSP)
    headers["X-Content-Type-Options"] = "nosniff"
    # Same-origin requests keep their Origin (no-referrer would send "null"); no other
    # site ever learns an address of the platform's pages.
    headers["Referrer-Policy"] = "same-origin"
    headers.setdefault("X-Frame-Options", "DENY" if "/report" not in path else "SAMEORIGIN")
    headers["Cross-Origin-Opener-Policy"] = "same-origin"
    headers["Permissions-Policy"] = "camera=(), microphone=(), geolocation=()"
    if not path.startswith("/static/"):
        headers["Cache-Control"] = "no-store"


class _Guard:
    """Security headers on every response, and a page instead of a traceback.

    A plain ASGI middleware (Starlette's ``BaseHTTPMiddleware`` costs a task and a
    stream per request): it edits the response's start message as it passes.
    """

    def __init__(self, app: ASGIApp, env: Any) -> None:
        self.app, self.env = app, env

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        started = False

        async def guarded(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                _headers(MutableHeaders(scope=message), path)
            await send(message)

        try:
            await self.app(scope, receive, guarded)
        except Exception:
            _LOG.exception("unexpected error on %s", path)
            if started:
                raise
            response = render_error(
                Request(scope),
                self.env,
                ServerError("server: an unexpected error; nothing was changed", field=""),
            )
            response.status_code = 500
            await response(scope, receive, guarded)


async def _upload(request: Request) -> Response:
    """POST /datasets (and /api/datasets): the file streamed, checked and encrypted.

    The profile is queued as a job (see :mod:`veil.server.datasets`).
    """
    state = request.app.state
    api = request.url.path.startswith("/api/")
    config: ServerConfig = state.config
    db: Database = state.db
    env = state.templates

    def identify() -> None:
        with db.session() as session:
            who, _ = _identity(session, request, api)
            if who is None:
                raise Unauthorized("session: sign in first")
            if must_change_password(who):
                raise Forbidden(ONE_TIME, field="password")
            if who.role != "curator":
                raise Forbidden(f"role: a {who.role.replace('_', ' ')} may not upload datasets")

    try:
        await run_in_threadpool(identify)
        uid, key, sink = new_upload(config, state.keyring)
        started: dict[str, Any] = {}

        def on_start(name: str, fields: dict[str, str]) -> None:
            # The CSRF token (before the file) was checked by the gate.
            started["name"] = name

        stream = FormStream(request.headers.get("content-type", ""), "file", on_start, sink.feed)
        try:
            async for chunk in request.stream():
                stream.write(chunk)
            stream.finish()
            if "name" not in started:
                raise InputError("file: no file was sent; choose a CSV file", field="file")
            form = DatasetForm(
                stream.fields.get("name") or started["name"],
                stream.fields.get("retention_days"),
                stream.fields.get("delete_after_publish"),
            )
            sink.finish()
        except BaseException:
            sink.abort()
            raise

        def record() -> tuple[int, int]:
            with db.session() as session:
                fresh, _ = _identity(session, request, api)
                assert fresh is not None
                dataset = register_upload(
                    session,
                    fresh,
                    state.keyring,
                    uid,
                    key,
                    sink,
                    form,
                    started["name"],
                    config.max_columns,
                )
                job = enqueue_profile(session, fresh, dataset)
                return dataset.id, job.id

        dataset_id, job_id = await run_in_threadpool(record)
    except ServerError as exc:
        return render_error(request, env, exc)
    if api:
        return JSONResponse(
            {"id": dataset_id, "profile_job": job_id, "profile_status": "pending"},
            status_code=201,
        )
    return Response(status_code=303, headers={"Location": f"/datasets/{dataset_id}"})


@contextlib.asynccontextmanager
async def _lifespan(_app: FastAPI) -> AsyncIterator[None]:
    # As many request threads as pooled connections: a request never waits for a
    # connection to be opened, and fewer threads contend for the GIL and SQLite's lock.
    anyio.to_thread.current_default_thread_limiter().total_tokens = POOL_SIZE
    yield


def build_app(config: ServerConfig, keyring: KeyRing, db: Database) -> FastAPI:
    """The application over ``db`` (already migrated)."""
    app = FastAPI(
        title="veil platform",
        lifespan=_lifespan,
        version="1",
        docs_url=None,
        redoc_url=None,
        openapi_url="/api/openapi.json",
    )
    app.state.config = config
    app.state.keyring = keyring
    app.state.db = db
    app.state.templates = templates()
    app.mount(
        "/static",
        StaticFiles(directory=str(resources.files("veil.server").joinpath("static"))),
        name="static",
    )
    app.add_api_route("/datasets", _upload, methods=["POST"], include_in_schema=False)
    app.add_api_route("/api/datasets", _upload, methods=["POST"])
    add_routes(app)

    # The gate runs inside the guard, so that its refusals get the security headers too.
    app.add_middleware(RequestGate)
    app.add_middleware(_Guard, env=app.state.templates)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        error: ServerError
        if exc.status_code == 404:
            error = NotFound("path: no such page", field="path")
        elif exc.status_code == 405:
            error = ServerError("method: not allowed on this page", field="method")
            error.status = 405
        else:
            error = ServerError(str(exc.detail), field="")
            error.status = exc.status_code
        return render_error(request, app.state.templates, error)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> Response:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p not in ("path", "query", "body"))
        return render_error(
            request,
            app.state.templates,
            InputError(f"{where or 'request'}: {first.get('msg', 'invalid')}", field=where),
        )

    return app
