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

from veil.cli.errors import ExitCode, reporting_errors

__all__ = ["app", "serve", "ui"]

app = typer.Typer(
    name="server", help="The veil platform's maintenance commands.", no_args_is_help=True
)

_LEGACY_KEY = "server.key"


def _config(data: Path, database_url: str | None, **extra: Any) -> Any:
    from veil.server import ServerConfig

    return ServerConfig(data.expanduser(), database_url=database_url, **extra)


def default_key_file(data: Path) -> Path:
    """Where ``veil serve`` keeps the key of the platform in ``data`` when none is given.

    Outside the data folder, so that one copy of that folder (a backup, say) never holds
    the key and the encrypted data together: ``$XDG_CONFIG_HOME/veil/keys/<id>.key``
    (``~/.config`` when the variable is unset), named by a digest of the folder's path.
    """
    import hashlib

    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    name = hashlib.sha256(os.fsencode(data.expanduser().resolve())).hexdigest()[:16]
    return base / "veil" / "keys" / f"{name}.key"


def _inside(path: Path, folder: Path) -> bool:
    return path.expanduser().resolve().is_relative_to(folder.expanduser().resolve())


def _key_file(data: Path, key_env: str, key_file: Path | None = None) -> Path | None:
    """The key file to use when ``key_env`` is unset (made on first start), with a warning
    at every start when it lies in the data folder."""
    if os.environ.get(key_env):
        return None
    legacy = data / _LEGACY_KEY
    path = key_file or (legacy if legacy.exists() else default_key_file(data))
    if not path.exists():
        from veil.atomic import private_folder
        from veil.masking import SecretKey

        # A new folder is 0700; one the user chose is left as it is (the key is 0600).
        private_folder(path.parent, tighten=False)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IRUSR | stat.S_IWUSR)
        with os.fdopen(fd, "w") as handle:
            handle.write(SecretKey.generate().reveal().hex() + "\n")
        typer.echo(
            f"made a server key in {path} (it encrypts every dataset): keep a copy apart from "
            f"the data, or set {key_env} instead",
            err=True,
        )
    if _inside(path, data):
        typer.echo(
            f"warning: the server key {path} is inside the data folder {data}: one copy of "
            "the folder (a backup) holds the key and the encrypted data together, and "
            f"whoever has it reads every dataset; move the key out (--key-file PATH) or set "
            f"{key_env}",
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
    from veil.server.supervisor import Supervisor

    platform = open_platform(config)
    if on_ready is not None:
        on_ready(platform)
    web = create_app(platform)
    if on_ready is not None:
        on_ready(platform, web)
    context = multiprocessing.get_context("spawn")
    # The job workers are supervised: one that dies has its jobs reclaimed at once and
    # is started again (veil.server.supervisor).
    supervisor = Supervisor(config, platform.db, workers, _worker, (config,), context)
    listener = _listen(host, port)
    # The other web processes share the socket bound here; each opens the platform (the
    # schema is already migrated) and none recovers jobs: this process did.
    processes = [
        context.Process(target=_web, args=(config, listener), daemon=True)
        for _ in range(web_processes - 1)
    ]
    supervisor.start()
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
        supervisor.stop()
        for process in processes:
            process.terminate()
            process.join(timeout=10)
        listener.close()


@reporting_errors
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
    key_file: Annotated[
        Path | None,
        typer.Option(
            help="Server key file when the variable is unset (default: outside --data, "
            "in ~/.config/veil/keys)."
        ),
    ] = None,
    trusted_proxy: Annotated[
        list[str] | None,
        typer.Option(help="Address or network of a reverse proxy whose X-Forwarded-* to trust."),
    ] = None,
    allowed_origin: Annotated[
        list[str] | None,
        typer.Option(help="Another origin (https://host) the pages are served from."),
    ] = None,
    max_columns: Annotated[
        int, typer.Option(min=1, help="Most columns an uploaded CSV may have.")
    ] = 1000,
    max_cell_chars: Annotated[
        int, typer.Option(min=1, help="Most characters of one cell of an upload.")
    ] = 10_000,
    profile_seconds: Annotated[
        int, typer.Option(min=1, help="Time limit of an upload's profile job.")
    ] = 300,
) -> None:
    """Run the platform: the web server and its workers (an admin is made on first start)."""
    from veil.server import ensure_user

    data = data.expanduser()
    config = _config(
        data,
        database_url,
        key_env=key_env,
        key_file=_key_file(data, key_env, key_file),
        dask_scheduler=dask_scheduler,
        secure_cookies=not insecure_cookies,
        trusted_proxies=tuple(trusted_proxy or ()),
        allowed_origins=tuple(allowed_origin or ()),
        max_columns=max_columns,
        max_cell_chars=max_cell_chars,
        profile_seconds=profile_seconds,
    )

    def ready(platform: Any, web: Any = None) -> None:
        if web is not None:
            return
        password = ensure_user(platform, "admin", "admin")
        if password is not None:
            typer.echo(
                f"first start: made the account 'admin' with the one-time password {password}"
            )
            typer.echo("it signs in once, and that session must set a new password")

    typer.echo(f"veil platform on http://{host}:{port} (data in {data})")
    _start(config, host, port, workers, ready, web_processes)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@reporting_errors
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
    key_env: Annotated[str, typer.Option(help="Environment variable of the server key.")] = (
        "VEIL_SERVER_KEY"
    ),
    key_file: Annotated[
        Path | None, typer.Option(help="Server key file when the variable is unset.")
    ] = None,
    checkpoints: Annotated[
        Path | None,
        typer.Option(help="The audit checkpoint file (default: DATA/audit-checkpoints.log)."),
    ] = None,
) -> None:
    """Check the audit log's keyed chain and signed checkpoints; exit 1 when tampered with."""
    from veil.server.audit import verify_audit as verify
    from veil.server.custody import KeyRing, load_server_key
    from veil.server.database import Database

    data = data.expanduser()
    if key_file is None and not os.environ.get(key_env):
        legacy = data / _LEGACY_KEY
        key_file = legacy if legacy.exists() else default_key_file(data)
    config = _config(data, database_url, key_env=key_env, key_file=key_file)
    keyring = KeyRing(load_server_key(config.key_env, config.key_file))
    db = Database(config.url, audit_key=keyring.audit_key)
    try:
        with db.session() as session:
            report = verify(session, checkpoints=checkpoints or config.checkpoints)
    finally:
        db.dispose()
    if report.ok:
        typer.echo(
            f"audit log intact: {report.entries} entries, {report.checkpoints} signed "
            f"checkpoints, head {report.head}"
        )
        return
    typer.echo(f"audit log TAMPERED: {len(report.problems)} problem(s)", err=True)
    for line in report.problems:
        typer.echo(f"  {line}", err=True)
    raise typer.Exit(int(ExitCode.CHECK_FAILED))
