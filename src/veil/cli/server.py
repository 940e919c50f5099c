"""``veil serve``, ``veil ui`` and ``veil server verify-audit``: the web platform."""

from __future__ import annotations

import multiprocessing
import os
import signal
import socket
import stat
import threading
import webbrowser
from pathlib import Path
from typing import Annotated, Any

import typer

from veil.cli.errors import ExitCode

__all__ = ["app", "serve", "ui"]

app = typer.Typer(
    name="server", help="The veil platform's maintenance commands.", no_args_is_help=True
)

_KEY_FILE = "server.key"


def _config(data: Path, database_url: str | None, **extra: Any) -> Any:
    from veil.server import ServerConfig

    return ServerConfig(data.expanduser(), database_url=database_url, **extra)


def _key_file(data: Path, key_env: str) -> Path | None:
    """The key file to use when ``key_env`` is unset: ``DATA/server.key``, made on first start."""
    if os.environ.get(key_env):
        return None
    path = data / _KEY_FILE
    if not path.exists():
        from veil.masking import SecretKey

        data.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IRUSR | stat.S_IWUSR)
        with os.fdopen(fd, "w") as handle:
            handle.write(SecretKey.generate().reveal().hex() + "\n")
        typer.echo(
            f"made a server key in {path} (it encrypts every dataset): keep a copy apart from "
            f"the data, or set {key_env} instead",
            err=True,
        )
    return path


def _worker(config: Any) -> None:
    from veil.server import open_platform, run_worker

    platform = open_platform(config)
    run_worker(config, platform.keyring)


def _web(config: Any, listener: socket.socket) -> None:
    """One more web process, answering on the socket its parent bound."""
    import uvicorn

    from veil.server import create_app, open_platform

    web = create_app(open_platform(config), recover_jobs=False)
    settings = uvicorn.Config(web, log_level="warning", server_header=False, proxy_headers=False)
    uvicorn.Server(settings).run(sockets=[listener])


def _exit_on_signal(signum: int, _frame: Any) -> None:
    raise SystemExit(128 + signum)


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(2048)
    return listener


def _start(
    config: Any,
    host: str,
    port: int,
    workers: int,
    on_ready: Any = None,
    web_processes: int = 1,
) -> None:
    import uvicorn

    from veil.server import create_app, open_platform

    platform = open_platform(config)
    if on_ready is not None:
        on_ready(platform)
    web = create_app(platform)
    if on_ready is not None:
        on_ready(platform, web)
    context = multiprocessing.get_context("spawn")
    processes = [
        context.Process(target=_worker, args=(config,), daemon=True) for _ in range(workers)
    ]
    listener = _listen(host, port)
    # The other web processes share the socket bound here; each opens the platform (the
    # schema is already migrated) and none recovers jobs: this process did.
    processes += [
        context.Process(target=_web, args=(config, listener), daemon=True)
        for _ in range(web_processes - 1)
    ]
    for process in processes:
        process.start()
    # uvicorn re-raises the signal that stopped it once it has shut down; with the
    # default SIGTERM action this process would die there and leave its workers running
    # (and holding jobs). As an exception, the signal runs the clean-up below.
    previous = signal.signal(signal.SIGTERM, _exit_on_signal)
    try:
        settings = uvicorn.Config(
            web, log_level="warning", server_header=False, proxy_headers=False
        )
        uvicorn.Server(settings).run(sockets=[listener])
    finally:
        signal.signal(signal.SIGTERM, previous)
        for process in processes:
            process.terminate()
            process.join(timeout=10)
        listener.close()


def serve(
    data: Annotated[Path, typer.Option("--data", help="Folder of the platform's files.")],
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    database_url: Annotated[
        str | None, typer.Option(help="SQLAlchemy URL (default: SQLite in --data).")
    ] = None,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes running jobs.")] = 1,
    web_processes: Annotated[
        int,
        typer.Option(min=1, max=64, help="Web processes answering requests on the one socket."),
    ] = 1,
    key_env: Annotated[str, typer.Option(help="Environment variable of the server key.")] = (
        "VEIL_SERVER_KEY"
    ),
    dask_scheduler: Annotated[
        str | None, typer.Option(help="Run releases on this Dask scheduler (tcp://host:port).")
    ] = None,
    insecure_cookies: Annotated[
        bool, typer.Option(help="Send cookies over plain HTTP to other hosts (testing only).")
    ] = False,
) -> None:
    """Run the platform: the web server and its workers (an admin is made on first start)."""
    from veil.server import ensure_user

    data = data.expanduser()
    config = _config(
        data,
        database_url,
        key_env=key_env,
        key_file=_key_file(data, key_env),
        dask_scheduler=dask_scheduler,
        secure_cookies=not insecure_cookies,
    )

    def ready(platform: Any, web: Any = None) -> None:
        if web is not None:
            return
        password = ensure_user(platform, "admin", "admin")
        if password is not None:
            typer.echo(
                f"first start: made the account 'admin' with the one-time password {password}"
            )
            typer.echo("sign in and change it at once (Account page)")

    typer.echo(f"veil platform on http://{host}:{port} (data in {data})")
    _start(config, host, port, workers, ready, web_processes)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def ui(
    data: Annotated[Path, typer.Option("--data", help="Folder of the files.")] = Path("~/.veil-ui"),
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0: any free port).")] = 0,
    no_browser: Annotated[
        bool, typer.Option("--no-browser", help="Do not open a browser.")
    ] = False,
) -> None:
    """The stand-alone platform: one local user, on 127.0.0.1, in your browser."""
    from veil.server import ensure_user
    from veil.server.security import new_token

    data = data.expanduser()
    config = _config(data, None, key_file=_key_file(data, "VEIL_SERVER_KEY"), standalone=True)
    port = port or _free_port()
    token = new_token()
    url = f"http://127.0.0.1:{port}/standalone?token={token}"

    def ready(platform: Any, web: Any = None) -> None:
        if web is None:
            ensure_user(platform, "local", "curator")
            return
        web.state.standalone_token = token
        web.state.standalone_user = "local"
        typer.echo(f"veil stand-alone on {url} (the link signs you in once)")
        if not no_browser:
            threading.Timer(1.0, webbrowser.open, args=(url,)).start()

    _start(config, "127.0.0.1", port, 1, ready)


@app.command("verify-audit")
def verify_audit(
    data: Annotated[Path, typer.Option("--data", help="Folder of the platform's files.")],
    database_url: Annotated[str | None, typer.Option(help="SQLAlchemy URL.")] = None,
) -> None:
    """Check the audit log's hash chain; exit 1 when it was tampered with."""
    from veil.server.audit import verify_audit as verify
    from veil.server.database import Database

    config = _config(data, database_url)
    db = Database(config.url)
    try:
        with db.session() as session:
            report = verify(session)
    finally:
        db.dispose()
    if report.ok:
        typer.echo(f"audit log intact: {report.entries} entries, head {report.head}")
        return
    typer.echo(f"audit log TAMPERED: {len(report.problems)} problem(s)", err=True)
    for line in report.problems:
        typer.echo(f"  {line}", err=True)
    raise typer.Exit(int(ExitCode.CHECK_FAILED))
