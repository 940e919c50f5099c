"""Token vault: round trips, determinism, encryption at rest, keys, concurrency, errors.

Every behaviour runs on a SQLite file and on a real PostgreSQL server (started by the
``postgres_server`` fixture in ``conftest.py``).
"""

from __future__ import annotations

import json
import logging
import pickle
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import sqlalchemy as sa

from veil.errors import ParameterError, VeilError
from veil.masking.keys import SecretKey
from veil.masking.vault import TOKEN_PREFIX, Vault, VaultError

# Fixed keys drawn once from secrets.token_hex(32): patterned keys are refused as weak.
KEY_BYTES = bytes.fromhex("5c0e9a7f13d84b62e1f7a03c9d5b4e8826f1c07a94e3b5d218c6af097e3d51b4")
KEY = SecretKey(KEY_BYTES)
OTHER_KEY = SecretKey(
    bytes.fromhex("e47b2a91c05f3d68b9a4170ec2d856f39b1e4c0a7d25f8e613c9b047a5e2d89f")
)
THIRD_KEY = SecretKey(
    bytes.fromhex("1a9d4f7e30c2b8655e07da13f4c96b2e8d71a0f53c4be9260f8d37c1a5b4e92d")
)
SECRETS = ["alice@example.com", "bob.smith@example.org", "555-0199-secret"]
TOKEN = re.compile(rf"\A{TOKEN_PREFIX}[0-9a-f]{{32}}\Z")


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty vault location on each backend."""
    if request.param == "sqlite":
        return str(tmp_path / "vault.db")
    server: str = request.getfixturevalue("postgres_server")
    engine = sa.create_engine(server)
    with engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE IF EXISTS veil_tokens, veil_vault_meta"))
    engine.dispose()
    return server


def _sa_url(url: str) -> str:
    return url if "://" in url else f"sqlite:///{url}"


def _rows(url: str, table: str = "veil_tokens") -> list[tuple[Any, ...]]:
    engine = sa.create_engine(_sa_url(url))
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(sa.text(f"SELECT * FROM {table}"))]
    finally:
        engine.dispose()


def _execute(url: str, sql: str, **params: Any) -> None:
    engine = sa.create_engine(_sa_url(url))
    try:
        with engine.begin() as conn:
            conn.execute(sa.text(sql), params)
    finally:
        engine.dispose()


def _key_forms(key: SecretKey) -> list[str]:
    """The key and its derived subkeys as they could leak: hex (both cases) and raw."""
    forms = []
    material = [key.reveal()] + [
        key.derive(f"vault-{purpose}-v{n}").reveal()
        for purpose in ("encryption", "index", "check")
        for n in (1, 2)
    ]
    for raw in material:
        forms += [raw.hex(), raw.hex().upper(), repr(raw), raw.decode("latin-1")]
    return forms


# ---------------------------------------------------------------------- behaviour


def test_round_trip_keeps_index_name_and_order(url: str) -> None:
    values = pd.Series(["b", "a", "c", "a"], index=[10, 11, 12, 13], name="email")
    with Vault(url, KEY) as vault:
        tokens = vault.tokenize(values, "email")
        assert isinstance(tokens, pd.Series)
        assert tokens.index.tolist() == [10, 11, 12, 13] and tokens.name == "email"
        back = vault.detokenize(tokens, "email")
    pd.testing.assert_series_equal(back, values.astype(object))
    assert isinstance(Vault(url, KEY).tokenize(["x"], "n"), np.ndarray)


def test_same_value_gets_same_token_across_calls_and_reopens(url: str) -> None:
    with Vault(url, KEY) as vault:
        first = vault.tokenize(["x", "y", "x"], "ns")
        again = vault.tokenize(["y", "x", "z"], "ns")
    with Vault(url, KEY) as reopened:
        later = reopened.tokenize(["x", "y"], "ns")
    assert first[0] == first[2] == again[1] == later[0]
    assert first[1] == again[0] == later[1]
    assert len({first[0], first[1], again[2]}) == 3
    assert len(_rows(url)) == 3


def test_large_batches_of_varied_values_round_trip(url: str) -> None:
    """Thousands of values (PostgreSQL stages them by binary COPY) of every width."""
    values = [f"{'ü' * (i % 7)}value-{i}" for i in range(2500)] + ["", "x" * 5000, "日本語"]
    with Vault(url, KEY) as vault:
        tokens = vault.tokenize(values, "ns")
        again = vault.tokenize(values[::-1], "ns")
        back = vault.detokenize(tokens, "ns")
    assert back.tolist() == values
    assert again.tolist() == tokens.tolist()[::-1]
    assert len(set(tokens)) == len(values) == len(_rows(url))


@pytest.mark.parametrize("known", [10, 1500])
def test_values_stored_by_another_writer_meanwhile_keep_their_tokens(
    url: str, known: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer whose look-up missed rows stored since (by another process) still
    returns the stored tokens and stores only the values that are new."""
    old = [f"old-{i}" for i in range(known)]
    new = [f"new-{i}" for i in range(1200)]
    with Vault(url, KEY) as vault:
        stored = vault.tokenize(old, "ns")
        real = Vault._tokens_for
        calls: list[int] = []

        def stale_first_look_up(self: Vault, conn: Any, namespace: str, indexes: Any) -> Any:
            calls.append(len(indexes))
            return {} if len(calls) == 1 else real(self, conn, namespace, indexes)

        monkeypatch.setattr(Vault, "_tokens_for", stale_first_look_up)
        tokens = vault.tokenize(old + new, "ns")
        monkeypatch.undo()
        assert calls[0] == known + len(new)  # the look-up that saw none of them
        assert tokens[:known].tolist() == stored.tolist()
        assert vault.detokenize(tokens, "ns").tolist() == old + new
    assert len(set(tokens)) == len(_rows(url)) == known + len(new)


def test_integral_floats_tokenize_like_integers(url: str) -> None:
    with Vault(url, KEY) as vault:
        as_float = vault.tokenize(pd.Series([1234.0, np.nan]), "id")
        as_int = vault.tokenize([1234], "id")
        assert as_float[0] == as_int[0]
        assert vault.detokenize(as_int, "id").tolist() == ["1234"]


def test_namespaces_separate_tokens(url: str) -> None:
    with Vault(url, KEY) as vault:
        a = vault.tokenize(["alice"], "first_name")
        b = vault.tokenize(["alice"], "last_name")
        assert a[0] != b[0]
        with pytest.raises(ParameterError, match=r"1 of 1 distinct tokens .* 'last_name'"):
            vault.detokenize(a, "last_name")
        with pytest.raises(ParameterError, match="namespace"):
            vault.tokenize(["alice"], "a|b")


def test_missing_values_stay_missing(url: str) -> None:
    values = pd.Series(["a", None, np.nan, pd.NA, "a"], dtype=object)
    with Vault(url, KEY) as vault:
        tokens = vault.tokenize(values, "ns")
        assert tokens[1] is None and np.isnan(tokens[2]) and tokens[3] is pd.NA
        assert tokens[0] == tokens[4]
        back = vault.detokenize(tokens, "ns")
    assert back[0] == back[4] == "a" and back[1] is None and back[3] is pd.NA
    assert len(_rows(url)) == 1


def test_tokens_carry_128_random_bits(url: str) -> None:
    with Vault(url, KEY) as vault:
        tokens = vault.tokenize([f"v{i}" for i in range(2000)], "ns")
    assert all(TOKEN.match(t) for t in tokens)
    assert len(set(tokens)) == 2000
    # Uniform hex digits: each of the 16 appears about 1/16 of the time.
    digits = np.frombuffer("".join(t[len(TOKEN_PREFIX) :] for t in tokens).encode(), np.uint8)
    counts = np.unique(digits, return_counts=True)[1]
    assert len(counts) == 16 and counts.min() > 0.8 * digits.size / 16  # tolerance 20 %


def test_unknown_tokens_are_counted(url: str) -> None:
    with (
        Vault(url, KEY) as vault,
        pytest.raises(ParameterError, match=r"2 of 3 distinct tokens are not in the vault"),
    ):
        known = vault.tokenize(["a"], "ns")[0]
        vault.detokenize([known, "tok_nope", "tok_nope2"], "ns")


# ---------------------------------------------------------------------- at rest


def test_values_are_encrypted_at_rest(url: str) -> None:
    with Vault(url, KEY) as vault:
        vault.tokenize(SECRETS, "email")
    rows = _rows(url)
    assert len(rows) == len(SECRETS)
    dump = repr(rows) + repr([bytes(c).hex() for row in rows for c in row if isinstance(c, bytes)])
    if "://" not in url:
        dump += Path(url).read_bytes().decode("latin-1")
    for secret in SECRETS:
        assert secret not in dump
        assert secret.encode().hex() not in dump
    for form in _key_forms(KEY):
        assert form not in dump


def test_ciphertext_moved_to_another_row_fails_authentication(url: str) -> None:
    with Vault(url, KEY) as vault:
        tokens = vault.tokenize(["first-secret", "second-secret"], "ns")
        # Give the first row the second row's ciphertext and nonce.
        _execute(
            url,
            "UPDATE veil_tokens SET ciphertext = (SELECT ciphertext FROM veil_tokens WHERE "
            "token = :b), nonce = (SELECT nonce FROM veil_tokens WHERE token = :b) "
            "WHERE token = :a",
            a=tokens[0],
            b=tokens[1],
        )
        with pytest.raises(VaultError, match="fails authentication") as info:
            vault.detokenize(tokens[:1], "ns")
    assert "secret" not in str(info.value)
    assert tokens[0] in str(info.value)


def test_ciphertext_moved_to_another_namespace_fails_authentication(url: str) -> None:
    with Vault(url, KEY) as vault:
        token = vault.tokenize(["moved"], "a")[0]
        _execute(url, "UPDATE veil_tokens SET namespace = 'b' WHERE token = :t", t=token)
        with pytest.raises(VaultError, match="fails authentication"):
            vault.detokenize([token], "b")


# ---------------------------------------------------------------------- keys


def test_wrong_master_key_is_refused_and_nothing_is_written(url: str) -> None:
    with Vault(url, KEY) as vault:
        vault.tokenize(["a", "b"], "ns")
    before = (_rows(url), _rows(url, "veil_vault_meta"))
    file_before = Path(url).read_bytes() if "://" not in url else b""
    with pytest.raises(ParameterError, match="does not open this vault") as info:
        Vault(url, OTHER_KEY)
    message = str(info.value)
    assert KEY.key_id in message and OTHER_KEY.key_id in message
    assert (_rows(url), _rows(url, "veil_vault_meta")) == before
    if "://" not in url:
        assert Path(url).read_bytes() == file_before


@pytest.mark.parametrize(
    ("key", "match"),
    [(None, "no key given"), (b"short", "at least 16 bytes"), ("a passphrase", "SecretKey")],
)
def test_bad_key_is_refused_before_the_database_is_touched(
    tmp_path: Path, key: Any, match: str
) -> None:
    path = tmp_path / "vault.db"
    with pytest.raises(ParameterError, match=match):
        Vault(path, key)
    assert not path.exists()


def test_key_never_appears_in_outputs_reprs_logs_or_errors(
    url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="sqlalchemy")
    texts: list[str] = []
    with Vault(url, KEY) as vault:
        texts += [repr(vault), str(vault)]
        tokens = vault.tokenize(SECRETS, "email")
        texts += [repr(tokens), repr(vault.detokenize(tokens, "email").tolist()[:0])]
        for bad in (
            lambda: vault.detokenize(["tok_missing"], "email"),
            lambda: vault.tokenize(["x"], "a|b"),
            lambda: Vault(url, OTHER_KEY),
            lambda: pickle.dumps(vault),
        ):
            with pytest.raises((VeilError, TypeError)) as info:
                bad()
            texts.append(f"{info.value!r} {info.value}")
    texts += [r.getMessage() for r in caplog.records]
    assert any("veil_tokens" in r.getMessage() for r in caplog.records), "SQL was not logged"
    dump = "\n".join(texts)
    for form in _key_forms(KEY):
        assert form not in dump
    for secret in SECRETS:
        assert secret not in dump


# ---------------------------------------------------------------------- rotation


def test_rotation_keeps_tokens_and_retires_the_old_key(url: str) -> None:
    with Vault(url, KEY) as vault, Vault(url, KEY) as stale:
        tokens = vault.tokenize(SECRETS, "email")
        old_rows = {r[0]: r for r in _rows(url)}
        vault.rotate(OTHER_KEY)
        assert vault.key_version == 2 and vault.key_id == OTHER_KEY.key_id
        assert vault.detokenize(tokens, "email").tolist() == SECRETS
        assert vault.tokenize(SECRETS[:1], "email")[0] == tokens[0]
        with pytest.raises(VaultError, match="rotated to key version 2"):
            stale.detokenize(tokens, "email")
        with pytest.raises(ParameterError, match="is the current key"):
            vault.rotate(OTHER_KEY)
    for row in _rows(url):
        assert row[3] != old_rows[row[0]][3]  # ciphertext re-encrypted
    with pytest.raises(ParameterError, match="does not open this vault"):
        Vault(url, KEY)
    with Vault(url, OTHER_KEY) as reopened:
        assert reopened.detokenize(tokens, "email").tolist() == SECRETS


# ---------------------------------------------------------------------- concurrency

_WORKER = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from veil.masking.keys import SecretKey
    from veil.masking.vault import Vault

    url, key_hex, go = json.loads(sys.stdin.readline())
    values = [f"person-{i}@example.com" for i in range(3000)]
    vault = Vault(url, SecretKey(bytes.fromhex(key_hex)))
    while not Path(go).exists():
        time.sleep(0.001)
    print(json.dumps(list(vault.tokenize(values, "email"))))
    """
)


def test_two_processes_tokenizing_the_same_new_values_agree(url: str, tmp_path: Path) -> None:
    Vault(url, KEY).close()  # create the schema, as a deployment would
    go = tmp_path / "go"
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for worker in workers:
        assert worker.stdin is not None
        # The key goes through a pipe, never a command line.
        worker.stdin.write(json.dumps([url, KEY_BYTES.hex(), str(go)]) + "\n")
        worker.stdin.flush()
    time.sleep(1.0)  # let both import and open the vault
    go.touch()
    outputs = [worker.communicate(timeout=60) for worker in workers]
    for worker, (_, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, err
    first, second = (json.loads(out) for out, _ in outputs)
    assert first == second
    assert len(set(first)) == 3000
    assert len(_rows(url)) == 3000


_RACER = textwrap.dedent(
    """
    import json, os, sys, time
    from pathlib import Path
    from veil.masking.keys import SecretKey
    from veil.masking.vault import Vault, VaultError

    url, key_hex, go, stop = json.loads(sys.stdin.readline())
    vault = Vault(url, SecretKey(bytes.fromhex(key_hex)))
    print("ready", flush=True)
    while not Path(go).exists():
        time.sleep(0.001)
    pairs, error, batch = {}, None, 0
    try:
        while not Path(stop).exists() and batch < 5000:
            values = [f"{os.getpid()}-{batch}-{i}" for i in range(20)]
            pairs.update(zip(vault.tokenize(values, "race"), values))
            batch += 1
    except VaultError as exc:
        error = str(exc)
    print(json.dumps({"pairs": pairs, "error": error}))
    """
)


@pytest.mark.parametrize("attempt", range(2))
def test_rotation_while_other_processes_tokenize_strands_no_row(
    url: str, tmp_path: Path, attempt: int
) -> None:
    """Tokenizers racing a rotation either commit before it (and are re-encrypted) or are
    refused after it; no row is left under the old key, and later rotations succeed."""
    Vault(url, KEY).close()
    go, stop = tmp_path / f"go{attempt}", tmp_path / f"stop{attempt}"
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _RACER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    for worker in workers:
        assert worker.stdin is not None and worker.stdout is not None
        worker.stdin.write(json.dumps([url, KEY_BYTES.hex(), str(go), str(stop)]) + "\n")
        worker.stdin.flush()
    for worker in workers:
        assert worker.stdout is not None
        assert worker.stdout.readline().strip() == "ready", worker.stderr
    with Vault(url, KEY) as rotator:
        go.touch()
        time.sleep(0.4)  # let every worker commit batches, and be mid-batch
        rotator.rotate(OTHER_KEY)
    time.sleep(0.2)
    stop.touch()
    outputs = [worker.communicate(timeout=120) for worker in workers]
    pairs: dict[str, str] = {}
    for worker, (out, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, err
        result = json.loads(out.strip().splitlines()[-1])
        assert result["error"] is None or "rotated" in result["error"], result["error"]
        pairs.update(result["pairs"])
    assert len(pairs) > 20
    stranded = [r for r in _rows(url) if r[5] != 2]
    assert stranded == [], f"{len(stranded)} rows left under the old key version"
    with Vault(url, OTHER_KEY) as vault:
        tokens = list(pairs)
        assert vault.detokenize(tokens, "race").tolist() == [pairs[t] for t in tokens]
        every = [r[0] for r in _rows(url)]
        assert len(vault.detokenize(every, "race")) == len(every)
        vault.rotate(THIRD_KEY)
    with Vault(url, THIRD_KEY) as vault:
        assert vault.detokenize(tokens, "race").tolist() == [pairs[t] for t in tokens]


# ---------------------------------------------------------------------- bad input


def test_unreachable_sqlite_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "no" / "such" / "dir" / "vault.db"
    with pytest.raises(VaultError, match="cannot open the vault database"):
        Vault(path, KEY)
    assert not (tmp_path / "no").exists()


def test_unreachable_postgresql_server_is_a_clear_error(tmp_path: Path) -> None:
    url = f"postgresql+psycopg://veil:hunter2@/db?host={tmp_path}&port=5999"
    with pytest.raises(VaultError, match="cannot open the vault database") as info:
        Vault(url, KEY)
    assert "hunter2" not in str(info.value)


def test_unsupported_or_malformed_urls_are_refused() -> None:
    with pytest.raises(ParameterError, match="not supported"):
        Vault("mysql://user@host/db", KEY)
    with pytest.raises(ParameterError, match="url"):
        Vault("", KEY)
    with pytest.raises(ParameterError, match="url"):
        Vault(42, KEY)  # type: ignore[arg-type]


def test_bad_values_are_refused(url: str) -> None:
    with Vault(url, KEY) as vault:
        with pytest.raises(VeilError, match="single string"):
            vault.tokenize("alice", "ns")
        with pytest.raises(VeilError, match="bytes"):
            vault.tokenize([b"alice"], "ns")
        with pytest.raises(VeilError, match="DataFrame"):
            vault.tokenize(pd.DataFrame({"a": ["x"]}), "ns")
    assert _rows(url) == []
