"""Bad plan input through every entry point: one line, nothing echoed that should not be.

Each reproduction of issue 18 (items 7, 8, 9 and 12) runs through ``load_plan`` on the
file, ``load_plan`` on the parsed mapping where one exists, ``run(dry_run=True)``,
``veil release --dry-run`` and ``veil release --out``: every path ends in one
:class:`~veil.errors.VeilError` line (exit code 2 on the command line), with no
traceback and nothing written.
"""

from __future__ import annotations

import base64
import http.server
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from veil.cli import main
from veil.errors import ParameterError, VeilError
from veil.masking import SecretKey
from veil.release import PlanError, load_plan, run
from veil.release.engine import DaskEngine, check_scheduler
from veil.release.plan_yaml import read_plan_text

_COLUMNS = """\
columns:
  age: {role: quasi_identifier, treatment: {method: laplace, bounds: [16, 100]}}
  sex: {role: quasi_identifier, treatment: keep}
  income: {role: sensitive, treatment: keep}
"""
_BASE = "input: {path: people.csv}\n" + _COLUMNS + "budget: {ldp: {epsilon: 1.0}}\n"
_HEX_KEY = secrets.token_hex(32)
_B64_KEY = base64.b64encode(secrets.token_bytes(32)).decode()
_B64_KEY16 = base64.b64encode(secrets.token_bytes(16)).decode()


def _with_column(line: str) -> str:
    """The base plan with one more column line under ``columns:``."""
    head, rest = _BASE.split("budget:", 1)
    return head + line + "\nbudget:" + rest


def _hmac(key_file: str) -> str:
    return _with_column(
        f"  name: {{role: identifier, treatment: {{method: hmac, key_file: '{key_file}'}}}}"
    )


def _anonymized(models: str, qi: str = "sex: '*'") -> str:
    return _BASE + f"anonymization:\n  quasi_identifiers: {{{qi}}}\n  models: {models}\n"


def _nested(depth: int) -> str:
    return _BASE + "name: " + "[" * depth + "]" * depth + "\n"


@dataclass(frozen=True)
class Case:
    """A plan's YAML, what its one-line error must say, and what it must never say."""

    yaml: str
    says: tuple[str, ...]
    never: tuple[str, ...] = ()


CASES: dict[str, Case] = {
    # Item 7: key material given as a key file's path is refused without being echoed.
    "key_file hex": Case(
        _hmac(_HEX_KEY),
        ("columns.name.treatment.key_file:", "looks like key material", "not shown"),
        (_HEX_KEY, _HEX_KEY[:16]),
    ),
    "key_file base64 of 32 bytes": Case(
        _hmac(_B64_KEY),
        ("columns.name.treatment.key_file:", "not shown"),
        (_B64_KEY, _B64_KEY[:16]),
    ),
    "key_file base64 of 16 bytes": Case(
        _hmac(_B64_KEY16),
        ("columns.name.treatment.key_file:", "not shown"),
        (_B64_KEY16, _B64_KEY16[:12]),
    ),
    # A key pasted in place of key_env's variable name: refused at load, so by a dry run
    # too (it was refused only when the run read the environment), never echoed.
    "key_env hex": Case(
        _hmac(_HEX_KEY).replace("key_file:", "key_env:"),
        ("columns.name.treatment.key_env:", "looks like key material", "not shown"),
        (_HEX_KEY, _HEX_KEY[:16]),
    ),
    "key_env base64 of 32 bytes": Case(
        _hmac(_B64_KEY).replace("key_file:", "key_env:"),
        ("columns.name.treatment.key_env:", "not shown"),
        (_B64_KEY, _B64_KEY[:16]),
    ),
    "key_env not a variable name": Case(
        _hmac("my key!").replace("key_file:", "key_env:"),
        ("columns.name.treatment.key_env: is not an environment variable name",),
        ("my key!",),
    ),
    "a key pasted as a field's name": Case(
        _BASE.replace("bounds: [16, 100]", f"bounds: [16, 100], {_HEX_KEY}: 1"),
        ("columns.age.treatment.(a name that looks like key material, not shown)",),
        (_HEX_KEY[:16],),
    ),
    # Item 8: a bool is not a number, a string is neither a number nor a bool.
    "k_anonymity true": Case(
        _anonymized("[{k_anonymity: true}]"),
        ("anonymization.models.0.k_anonymity.k: must be an integer, not true or false",),
    ),
    "k as text": Case(
        _anonymized("[{k_anonymity: '5'}]"),
        ("anonymization.models.0.k_anonymity.k: must be an integer, not text (got '5')",),
    ),
    "epsilon true": Case(
        _BASE.replace("epsilon: 1.0", "epsilon: true"),
        ("budget.ldp.epsilon: must be a number, not true or false (got true)",),
    ),
    "epsilon as text": Case(
        _BASE.replace("bounds: [16, 100]", "bounds: [16, 100], epsilon: '1'"),
        ("columns.age.treatment.epsilon: must be a number, not text (got '1')",),
    ),
    "allow_data_dependent_allocation as text": Case(
        _BASE.replace(
            "budget: {ldp: {epsilon: 1.0}}",
            "budget: {ldp: {epsilon: 1.0}, allow_data_dependent_allocation: 'yes'}",
        ),
        ("budget.allow_data_dependent_allocation: must be true or false, not text (got 'yes')",),
    ),
    "distinct l of 1": Case(
        _anonymized("[{distinct_l_diversity: {attribute: income, l: 1}}]"),
        ("anonymization.models.0.distinct_l_diversity.l:", "greater than or equal to 2"),
    ),
    "duplicate column": Case(
        _with_column("  age: {role: sensitive, treatment: drop}"),
        ("line 6: duplicate key 'age' (first at line 3)",),
    ),
    "duplicate key in a section": Case(
        _BASE.replace("budget: {ldp: {epsilon: 1.0}}", "budget: {ldp: {epsilon: 1.0}}\nbudget: {}"),
        ("line 7: duplicate key 'budget' (first at line 6)",),
    ),
    # Item 9: each ends in one line, in bounded time.
    "bounds wider than a float": Case(
        _BASE.replace("bounds: [16, 100]", "bounds: [-1e308, 1e308]"),
        ("columns.age.treatment:", "wider than the largest float"),
    ),
    "nested 5000 deep": Case(_nested(5000), ("line 7: nested more than 64 levels deep",)),
    "a 5000-digit integer": Case(
        _BASE.replace("epsilon: 1.0", "epsilon: " + "9" * 5000),
        ("line 6: an integer of 5000 digits",),
        ("9" * 400,),
    ),
    "aliases naming a billion values": Case(
        _BASE
        + "a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n"
        + "".join(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9)),
        ("holds more than 1,000,000 values",),
    ),
    "an alias cycle": Case(_BASE + "name: &loop [*loop]\n", ("a value contains itself",)),
    # Item 12: messages that say what is wrong.
    "version 2": Case("version: 2\n" + _BASE, ("version: must be 1 (got 2)",)),
    "version true": Case("version: true\n" + _BASE, ("version: must be 1, not true or false",)),
    "unknown anonymization model": Case(
        _anonymized("[{k_anon: 5}]"),
        ("anonymization.models.0: missing the model; allowed: k_anonymity, distinct_l_diversity",),
        ("planar_laplace",),
    ),
    "empty hierarchy path": Case(
        _anonymized("[{k_anonymity: 2}]", qi="sex: ''"),
        ("anonymization.quasi_identifiers.sex.path: must be a path, not empty",),
        ("cannot read",),
    ),
    "a 400-digit number": Case(
        _BASE.replace("epsilon: 1.0", "epsilon: " + "9" * 400),
        ("line 6: an integer of 400 digits",),
        ("9" * 100,),
    ),
    "a 10000-character name": Case(
        _BASE + "output: {file: " + "x" * 10_000 + "}\n",
        ("output.file: must end in .csv or .parquet",),
        ("x" * 100,),
    ),
}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder with the plans' input, people.csv."""
    frame = pd.DataFrame(
        {"age": [30, 40, 50, 60], "sex": ["F", "M", "F", "M"], "income": [1, 2, 3, 4]}
    )
    frame.to_csv(tmp_path / "people.csv", index=False)
    return tmp_path


def _veil(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str]:
    capsys.readouterr()
    code = main([str(a) for a in args])  # a traceback would raise here
    return code, capsys.readouterr().err


def _check_line(text: str, case: Case) -> None:
    for part in case.says:
        assert part in text, text
    for part in case.never:
        assert part not in text, text
    assert "Traceback" not in text


@pytest.mark.parametrize("name", list(CASES))
def test_bad_plan_input_ends_in_one_line_on_every_path(
    name: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = CASES[name]
    plan = folder / "plan.yaml"
    plan.write_text(case.yaml, encoding="utf-8")
    started = time.monotonic()
    with pytest.raises(VeilError) as loaded:
        run(load_plan(plan), dry_run=True)
    _check_line(str(loaded.value), case)
    with pytest.raises(VeilError) as ran:
        run(plan, dry_run=True)
    _check_line(str(ran.value), case)
    for args in (("--dry-run",), ("--out", folder / "out")):
        code, err = _veil(capsys, "release", plan, *args)
        assert code == 2, err
        assert len(err.strip().splitlines()) == 1 and err.startswith("veil: error: "), err
        _check_line(err, case)
    assert not (folder / "out").exists() and not (folder / "out.custodian").exists()
    assert time.monotonic() - started < 60


@pytest.mark.parametrize(
    "name",
    [
        n
        for n in CASES
        if not n.startswith(("duplicate", "nested", "a 5000", "a 400", "aliases", "an alias"))
    ],
)
def test_the_parsed_plan_fails_alike(name: str, folder: Path) -> None:
    # A calling program's mapping meets the same checks as the file.
    case = CASES[name]
    data = read_plan_text(case.yaml)
    with pytest.raises(VeilError) as info:
        run(load_plan(data, base_dir=folder), dry_run=True)
    _check_line(str(info.value), case)


def _deep(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("value", "says", "never"),
    [
        (10**400, "an integer of 401 digits", "9" * 40),
        (-(10**5000), "a negative integer of about 5,000 digits", "0" * 40),
        (_deep(5000), "nested more than 64 levels deep", ""),
        ("x" * 10_000, "columns.age.treatment.epsilon: must be a number, not text", "x" * 100),
    ],
    ids=["400 digits", "5000 digits", "5000 deep", "10000 characters"],
)
def test_a_mapping_from_a_program_is_bounded_and_cut(value: Any, says: str, never: str) -> None:
    data = read_plan_text(_BASE)
    data["columns"]["age"]["treatment"]["epsilon"] = value
    with pytest.raises(PlanError) as info:
        load_plan(data)
    assert says in str(info.value)
    assert not never or never not in str(info.value)


def test_a_cycle_in_a_mapping_is_refused() -> None:
    data = read_plan_text(_BASE)
    loop: list[Any] = []
    loop.append(loop)
    data["name"] = loop
    with pytest.raises(PlanError, match="contains itself"):
        load_plan(data)


def test_yaml_forms_are_still_taken(folder: Path) -> None:
    # Lists for tuples, text for paths, integers for floats, 1e-6 as a number.
    text = _BASE.replace("epsilon: 1.0", "epsilon: 1, delta: 1e-6").replace(
        "bounds: [16, 100]", "bounds: [16, 1.0e2]"
    )
    plan = load_plan(read_plan_text(text), base_dir=folder)
    assert plan.columns["age"].treatment.bounds == (16.0, 100.0)  # type: ignore[union-attr]
    assert plan.input.path == folder / "people.csv"
    assert plan.budget.ldp is not None and plan.budget.ldp.delta == 1e-6
    quoted = text.replace("delta: 1e-6", "delta: '1e-6'")
    with pytest.raises(PlanError, match=r"budget.ldp.delta: must be a number, not text"):
        load_plan(read_plan_text(quoted))


def test_numpy_numbers_from_a_program_are_numbers() -> None:
    import numpy as np

    data = read_plan_text(_anonymized("[{k_anonymity: 2}]"))
    data["anonymization"]["models"] = [{"k_anonymity": np.int64(3)}]
    data["columns"]["age"]["treatment"]["bounds"] = [np.float64(16), np.int32(100)]
    plan = load_plan(data)
    assert plan.anonymization is not None and plan.anonymization.models[0].k == 3  # type: ignore[union-attr]
    assert plan.columns["age"].treatment.bounds == (16.0, 100.0)  # type: ignore[union-attr]
    data["anonymization"]["models"] = [{"k_anonymity": np.True_}]
    with pytest.raises(PlanError, match="must be an integer, not true or false"):
        load_plan(data)


def test_a_huge_budget_is_no_column_s_mistake(folder: Path) -> None:
    # budget.ldp.epsilon: 1e308 shared by weights once overflowed to inf and blamed a column.
    text = _BASE.replace(
        "budget: {ldp: {epsilon: 1.0}}", "budget: {ldp: {epsilon: 1.0e308}, allocation: weights}"
    )
    text = text.replace(
        "sex: {role: quasi_identifier, treatment: keep}",
        "sex: {role: quasi_identifier, treatment: {method: randomized_response, domain: [F, M]}}",
    ).replace("bounds: [16, 100]", "bounds: [16, 100], weight: 2")
    plan = folder / "plan.yaml"
    plan.write_text(text)
    result = run(plan, dry_run=True)
    spent = {s.scope: s.cost.epsilon for s in result.ledger.steps if s.cost is not None}
    assert spent["age"] == pytest.approx(1e308 / 3 * 2) and spent["sex"] == pytest.approx(1e308 / 3)


@pytest.mark.parametrize(
    "path",
    ["keys/hmac.key", "hmac.key", "k", "c0ffee.key", "./deadbeefdeadbeefdeadbeefdeadbeef.key"],
)
def test_a_key_file_path_is_still_a_path(path: str) -> None:
    plan = load_plan(read_plan_text(_hmac(path)))
    assert plan.columns["name"].treatment.key_file is not None  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "given", [_HEX_KEY, _B64_KEY, "base64:" + _B64_KEY, _B64_KEY16, "a\nb", ""]
)
def test_the_library_refuses_key_material_as_a_key_file_without_echo(given: str) -> None:
    with pytest.raises(ParameterError) as info:
        SecretKey.from_file(given)
    assert "not shown" in str(info.value)
    if len(given) > 4:
        assert given[:8] not in str(info.value)


# ------------------------------------------------------------ a scheduler that is not Dask


@pytest.fixture
def not_dask() -> Iterator[Callable[[str], str]]:
    """Start a peer that is no Dask scheduler; returns its ``tcp://`` address."""
    stops: list[Callable[[], None]] = []

    def start(kind: str) -> str:
        if kind == "http":
            server = http.server.ThreadingHTTPServer(
                ("127.0.0.1", 0), http.server.BaseHTTPRequestHandler
            )
            threading.Thread(target=server.serve_forever, daemon=True).start()
            stops.append(server.shutdown)
            stops.append(server.server_close)
            return f"tcp://127.0.0.1:{server.server_address[1]}"
        listener = socket.create_server(("127.0.0.1", 0))
        listener.settimeout(0.2)
        done = threading.Event()

        def banner() -> None:
            # An SSH server speaks first: Dask's client read its banner as a frame length.
            while not done.is_set():
                try:
                    conn, _ = listener.accept()
                except TimeoutError:
                    continue
                with conn:
                    conn.sendall(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n")
                    time.sleep(0.5)

        thread = threading.Thread(target=banner, daemon=True)
        thread.start()
        stops.append(done.set)
        stops.append(listener.close)
        return f"tcp://127.0.0.1:{listener.getsockname()[1]}"

    yield start
    for stop in stops:
        stop()


@pytest.mark.parametrize(
    ("kind", "says"), [("ssh", "is not a Dask scheduler"), ("http", "did not answer")]
)
def test_a_peer_that_is_not_dask_is_refused_in_bounded_time(
    kind: str,
    says: str,
    not_dask: Callable[[str], str],
    folder: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    address = not_dask(kind)
    started = time.monotonic()
    with pytest.raises(PlanError, match=says):
        check_scheduler(address, timeout=2)
    assert time.monotonic() - started < 5
    plan = folder / "plan.yaml"
    plan.write_text(_BASE)
    with pytest.raises(PlanError, match=says):
        run(plan, folder / "out", engine=DaskEngine(address, connect_timeout=2))
    assert not (folder / "out").exists()
    # The plan's engine section and the command line take the same way (10 s at most).
    plan.write_text(_BASE + f"engine: {{name: dask, scheduler: '{address}'}}\n")
    started = time.monotonic()
    code, err = _veil(capsys, "release", plan, "--out", folder / "out")
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err
    code, err = _veil(
        capsys, "release", folder / "plan.yaml", "--out", folder / "out", "--engine", "dask",
        "--scheduler", address,
    )  # fmt: skip
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err
    assert time.monotonic() - started < 40
    assert not (folder / "out").exists()


def test_a_dask_scheduler_passes_the_check() -> None:
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=1, processes=False, protocol="tcp", threads_per_worker=1, dashboard_address=None
    ) as cluster:
        check_scheduler(cluster.scheduler_address, timeout=5)
