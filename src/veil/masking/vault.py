"""Tokenization with a persistent vault: random tokens, values encrypted at rest.

A token is ``"tok_"`` followed by 32 hex characters, 128 random bits from the operating
system's CSPRNG (:mod:`secrets`). It carries no information about the value: without
the vault *and* the master key nobody can map a token back. The vault (a SQL database
reached through SQLAlchemy Core: a SQLite file by default, PostgreSQL by URL) stores
each value once per namespace:

* encrypted with AES-256-GCM under a random 96-bit nonce, with the associated data
  ``utf8(namespace) + b"|" + utf8(token)``, so a ciphertext copied to another row (or
  another namespace) fails authentication instead of decrypting to the wrong value;
* with a blind index ``HMAC-SHA256(index key, utf8(namespace) + b"|" + utf8(value))``
  under a unique constraint, so the same value always gets the same token and two
  processes tokenizing the same new value at the same time agree on one token
  (insert-or-ignore, then re-select the winning row).

The encryption, index and key-check keys are derived from a master key kept outside
the database with HKDF-SHA256 (:meth:`SecretKey.derive`, purposes
``"vault-encryption-v{n}"``, ``"vault-index-v{n}"`` and ``"vault-check-v{n}"`` for key
version *n*). The database holds only an HMAC key check per version, so opening a vault
with the wrong master key fails before anything is written. :meth:`Vault.rotate`
re-encrypts every row under a new master key and the next key version.

Tokens are pseudonymous data under the GDPR (Article 4(5)): whoever holds the vault and
the key can re-identify them. Neither the key nor any stored value appears in a
``repr``, a log line or an error message.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import re
import secrets
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import chain
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
import pandas as pd
import sqlalchemy as sa
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine

from veil.atomic import CONFIDENTIAL_FILE_MODE
from veil.errors import DataTypeError, ParameterError, VeilError
from veil.masking._copy import copy_payload
from veil.masking.keys import SecretKey, as_secret_key

__all__ = ["TOKEN_PREFIX", "Vault", "VaultError"]

TOKEN_PREFIX = "tok_"
"""Prefix of every token; the rest is 32 hex characters (128 random bits)."""

_TOKEN_BYTES = 16
_TOKEN_SHAPE = re.compile(rf"\A{TOKEN_PREFIX}[0-9a-f]{{{2 * _TOKEN_BYTES}}}\Z")
_NONCE_BYTES = 12
_CHUNK = 5_000
"""Rows per ``IN (...)`` look-up: under SQLite's 32 766 and psycopg's 65 535 parameters."""
_INSERT_ATTEMPTS = 3
_KEY_CHECK_LABEL = b"veil.masking.vault.key-check.v1"
_SUPPORTED = ("sqlite", "postgresql")


class _Bytes(sa.LargeBinary):
    """Binary column whose values go to the driver as they are.

    Both sqlite3 and psycopg take ``bytes``; skipping SQLAlchemy's per-value wrapping
    saves a Python call per value and column on bulk inserts.
    """

    cache_ok = True

    def bind_processor(self, dialect: sa.Dialect) -> None:
        return None


_metadata = sa.MetaData()

_tokens = sa.Table(
    "veil_tokens",
    _metadata,
    # The primary key is the token's own unique index: detokenization looks rows up by it.
    sa.Column("token", sa.String(64), primary_key=True),
    sa.Column("namespace", sa.Text, nullable=False),
    sa.Column("blind_index", _Bytes(32), nullable=False),
    sa.Column("ciphertext", _Bytes, nullable=False),
    sa.Column("nonce", _Bytes(_NONCE_BYTES), nullable=False),
    sa.Column("key_version", sa.Integer, nullable=False),
    sa.Column(
        "created_at",
        sa.DateTime(timezone=True),
        nullable=False,
        server_default=sa.func.current_timestamp(),
    ),
    sa.UniqueConstraint("namespace", "blind_index", name="uq_veil_tokens_namespace_blind_index"),
)

_meta = sa.Table(
    "veil_vault_meta",
    _metadata,
    sa.Column("key_version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("key_check", _Bytes(32), nullable=False),
    sa.Column("key_id", sa.String(16), nullable=False),
    sa.Column(
        "created_at",
        sa.DateTime(timezone=True),
        nullable=False,
        server_default=sa.func.current_timestamp(),
    ),
)


# PostgreSQL: up to _PG_ARRAY_KEYS keys a look-up binds them as one array parameter;
# more are staged by a binary COPY into a temporary table (the driver spends several
# microseconds per array element, COPY a fraction of one per row).
_PG_ARRAY_KEYS = 1_000
_PG_TOKENS_BY_INDEX = (
    f"SELECT blind_index, token FROM {_tokens.name} "
    "WHERE namespace = %(namespace)s AND blind_index {match}"
)
_PG_ROWS_BY_TOKEN = (
    f"SELECT token, namespace, nonce, ciphertext, key_version FROM {_tokens.name} "
    "WHERE token {match}"
)
_PG_COPY_TOKENS = (
    f"COPY {_tokens.name} (token, namespace, blind_index, nonce, key_version, ciphertext) "
    "FROM STDIN (FORMAT BINARY)"
)
_UNIQUE_VIOLATION = "23505"
_PG_STAGE_NEW = (
    "CREATE TEMPORARY TABLE veil_new_tokens (token text NOT NULL, blind_index bytea NOT NULL, "
    "nonce bytea NOT NULL, ciphertext bytea NOT NULL) ON COMMIT DROP"
)
# Inserted in blind-index order, one order for every writer, so that concurrent
# transactions take their row locks in the same order and cannot deadlock.
_PG_INSERT = (
    f"INSERT INTO {_tokens.name} "
    "(token, namespace, blind_index, ciphertext, nonce, key_version) "
    "SELECT token, %(namespace)s, blind_index, ciphertext, nonce, %(version)s "
    "FROM veil_new_tokens ORDER BY blind_index ON CONFLICT DO NOTHING "
    "RETURNING blind_index, token"
)


class VaultError(VeilError, RuntimeError):
    """The vault database cannot be reached, or a stored row fails authentication.

    Messages name the database (password hidden) and, for a row, its token; never a key
    or a stored value.
    """


class _Keys:
    """The subkeys of one key version, derived from the master key."""

    __slots__ = ("aead", "check", "index", "version")

    def __init__(self, master: SecretKey, version: int) -> None:
        self.version = version
        self.aead = AESGCM(master.derive(f"vault-encryption-v{version}").reveal())
        self.index = master.derive(f"vault-index-v{version}")
        check = master.derive(f"vault-check-v{version}").new_hmac("sha256")
        check.update(_KEY_CHECK_LABEL)
        self.check = check.digest()

    def blind_indexes(self, texts: Sequence[str], namespace: str) -> list[bytes]:
        base = self.index.new_hmac("sha256")
        base.update(namespace.encode("utf-8") + b"|")
        out: list[bytes] = []
        append = out.append
        for text in texts:
            h = base.copy()
            h.update(text.encode("utf-8"))
            append(h.digest())
        return out

    def encrypt(
        self, texts: Sequence[str], tokens: Sequence[str], namespace: str
    ) -> tuple[list[bytes], list[bytes]]:
        """Ciphertexts (with their 16-byte tags) and the fresh random nonces."""
        pool = os.urandom(_NONCE_BYTES * len(texts))
        nonces = [pool[i : i + _NONCE_BYTES] for i in range(0, len(pool), _NONCE_BYTES)]
        prefix = namespace.encode("utf-8") + b"|"
        encrypt = self.aead.encrypt
        ciphertexts = [
            encrypt(nonce, text.encode("utf-8"), prefix + token.encode("ascii"))
            for nonce, text, token in zip(nonces, texts, tokens, strict=True)
        ]
        return ciphertexts, nonces

    def decrypt(self, token: str, namespace: str, nonce: bytes, ciphertext: bytes) -> str:
        try:
            plain = self.aead.decrypt(
                nonce, ciphertext, namespace.encode("utf-8") + b"|" + token.encode("ascii")
            )
        except InvalidTag:
            raise VaultError(
                f"vault row for token {token!r} in namespace {namespace!r} fails "
                f"authentication: its ciphertext was altered or moved from another row"
            ) from None
        return plain.decode("utf-8")


def _new_tokens(n: int) -> list[str]:
    pool = secrets.token_bytes(_TOKEN_BYTES * n).hex()
    width = 2 * _TOKEN_BYTES
    return [TOKEN_PREFIX + pool[i : i + width] for i in range(0, len(pool), width)]


def _as_text(value: Any) -> str:
    """The text a value is stored as; integral floats read as integers.

    A column of integer ids with a missing value is read by pandas as float64, and
    ``1234.0`` must tokenize like ``1234`` (as :func:`veil.masking.pseudonymize` does).
    """
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        raise DataTypeError("values: bytes values are not supported; decode them to str first")
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _as_1d(values: Any, name: str) -> pd.Series | np.ndarray:
    if isinstance(values, pd.DataFrame):
        raise DataTypeError(f"{name}: got a DataFrame; pass one column (a Series) at a time")
    if isinstance(values, pd.Series):
        return values
    if isinstance(values, (str, bytes)):
        raise DataTypeError(f"{name}: must be a sequence of values, got a single string")
    array = values if isinstance(values, np.ndarray) else np.asarray(values, dtype=object)
    if array.ndim != 1:
        raise DataTypeError(f"{name}: must be one-dimensional, got shape {array.shape}")
    return array


def _check_namespace(namespace: Any) -> str:
    if not isinstance(namespace, str) or "|" in namespace:
        raise ParameterError(
            f"namespace: must be a string without '|' (the separator), got {namespace!r}"
        )
    return namespace


def _chunks(items: Sequence[Any]) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


def _driver_cursor(conn: Connection) -> Any:
    """A psycopg cursor in ``conn``'s transaction, for COPY and array parameters."""
    return conn.connection.driver_connection.cursor()  # type: ignore[union-attr]


def _pg_select_by(
    conn: Connection,
    query: str,
    keys: Sequence[str] | Sequence[bytes],
    key_type: str,
    params: dict[str, Any],
) -> Iterable[tuple[Any, ...]]:
    """The rows of ``query`` whose key column is one of ``keys`` (PostgreSQL).

    ``query`` has a ``{match}`` slot after the key column: ``= ANY(array)`` for a few
    keys, else ``IN`` a temporary table filled by binary COPY.
    """
    cursor = _driver_cursor(conn)
    if len(keys) <= _PG_ARRAY_KEYS:
        match = f"= ANY(%(keys)s::{key_type}[])"
        found = cursor.execute(query.format(match=match), {**params, "keys": list(keys)})
        return found.fetchall()  # type: ignore[no-any-return]
    cursor.execute(f"CREATE TEMPORARY TABLE veil_keys (key {key_type} NOT NULL) ON COMMIT DROP")
    encoding = cursor.connection.info.encoding
    encoded = [k.encode(encoding) if isinstance(k, str) else k for k in keys]
    with cursor.copy("COPY veil_keys FROM STDIN (FORMAT BINARY)") as copy:
        copy.write(copy_payload([encoded]))
    rows = cursor.execute(query.format(match="IN (SELECT key FROM veil_keys)"), params).fetchall()
    cursor.execute("DROP TABLE veil_keys")
    return rows  # type: ignore[no-any-return]


def _aligned(
    values: pd.Series | np.ndarray, codes: np.ndarray, mapped: list[Any]
) -> pd.Series | np.ndarray:
    """``mapped[code]`` per position, each missing value keeping its own marker."""
    table = np.empty(len(mapped) + 1, dtype=object)
    table[: len(mapped)] = mapped
    table[-1] = None
    out = table[np.where(codes < 0, len(mapped), codes)]
    missing = codes < 0
    if missing.any():
        array = values.to_numpy() if isinstance(values, pd.Series) else values
        out[missing] = np.asarray(array, dtype=object)[missing]
    if isinstance(values, pd.Series):
        return pd.Series(out, index=values.index, name=values.name, dtype=object)
    return out


def _engine_url(url: Any) -> sa.URL:
    if isinstance(url, sa.URL):
        return url
    if isinstance(url, os.PathLike) or (isinstance(url, str) and "://" not in url):
        if isinstance(url, str) and not url:
            raise ParameterError("url: must be a database URL or a SQLite file path, got ''")
        return sa.URL.create("sqlite", database=str(Path(url)))
    if isinstance(url, str):
        try:
            return sa.make_url(url)
        except sa.exc.ArgumentError:
            raise ParameterError(
                "url: is not a database URL (dialect+driver://user@host/db) or a file path"
            ) from None
    raise ParameterError(
        f"url: must be a database URL string, a sqlalchemy URL or a path, got {type(url).__name__}"
    )


class Vault:
    """A persistent token vault: random tokens, values encrypted at rest under a key.

    Parameters
    ----------
    url : str, os.PathLike or sqlalchemy.URL
        Where the vault lives: a file path (a SQLite database, created if absent) or a
        SQLAlchemy URL, ``sqlite:///path`` or ``postgresql+psycopg://user@host/db``
        (PostgreSQL needs the ``psycopg`` driver). The tables ``veil_tokens`` and
        ``veil_vault_meta`` are created on first use.
    master_key : SecretKey or bytes
        At least 16 bytes, kept outside the database (:meth:`SecretKey.from_file`,
        :meth:`SecretKey.from_env`). The first key to open a vault becomes its key; any
        other key is refused.

    Raises
    ------
    ParameterError
        No key, a key shorter than 16 bytes, a malformed URL, an unsupported database,
        or a key that is not the vault's. Nothing is written.
    VaultError
        The database cannot be reached or opened. Nothing is written.

    Notes
    -----
    Guarantee: a token is independent of its value (128 uniform random bits), so the
    tokens alone reveal only which records share a value within a namespace.

    Nonces are random (96 bits): stay below 2^32 encryptions per key version (NIST SP
    800-38D, section 8.3) by rotating before then. A rotation is atomic with respect to
    concurrent tokenization (the key-version check and the insert are one transaction
    under a lock: ``BEGIN IMMEDIATE`` on SQLite, a row lock on the key version's row on
    PostgreSQL); a :class:`Vault` opened before a rotation refuses to work after it.

    References
    ----------
    M. Dworkin, "Recommendation for Block Cipher Modes of Operation: Galois/Counter Mode
    (GCM) and GMAC", NIST SP 800-38D, 2007. H. Krawczyk and P. Eronen, RFC 5869, 2010.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> key = SecretKey(bytes(range(32)))
    >>> with tempfile.TemporaryDirectory() as tmp, Vault(pathlib.Path(tmp) / "v.db", key) as v:
    ...     tokens = v.tokenize(["alice", "bob", "alice", None], namespace="name")
    ...     (tokens[0] == tokens[2], len(tokens[0]), tokens[3])
    ...     v.detokenize(tokens, namespace="name").tolist()
    (True, 36, None)
    ['alice', 'bob', 'alice', None]
    """

    def __init__(self, url: str | os.PathLike[str] | sa.URL, master_key: SecretKey | bytes) -> None:
        self._master = as_secret_key(master_key)
        engine_url = _engine_url(url)
        backend = engine_url.get_backend_name()
        if backend not in _SUPPORTED:
            raise ParameterError(
                f"url: database {backend!r} is not supported; use a SQLite file or PostgreSQL"
            )
        # Named in errors without its password and without its query (a query can hold
        # credentials too: ?password=..., ?sslpassword=...).
        self._where = engine_url.set(query={}).render_as_string(hide_password=True)
        connect_args: dict[str, Any] = {"timeout": 60} if backend == "sqlite" else {}
        try:
            # hide_parameters keeps bound values (ciphertexts, blind indexes) out of
            # SQLAlchemy's log lines and exception messages.
            self._engine: Engine = sa.create_engine(
                engine_url, hide_parameters=True, connect_args=connect_args
            )
        except ImportError as exc:
            raise ParameterError(
                f"url: the driver for {self._where!r} is not installed ({exc.name})"
            ) from None
        self._sqlite = backend == "sqlite"
        if self._sqlite:
            # pysqlite starts a transaction only before a write, so a key-version check
            # read first would not be in it: let _connect issue BEGIN itself.
            sa.event.listen(self._engine, "connect", _driver_autocommit)
        self._insert = sqlite.insert if backend == "sqlite" else postgresql.insert
        # PostgreSQL's bulk paths use the driver's cursor, whose errors SQLAlchemy does
        # not wrap.
        self._driver_error: type[Exception] = self._engine.dialect.loaded_dbapi.Error
        self._database_errors = (sa.exc.SQLAlchemyError, self._driver_error)
        try:
            self._keys = self._open()
        except BaseException:
            self._engine.dispose()
            raise
        if self._sqlite and engine_url.database not in (None, "", ":memory:"):
            # The vault maps tokens back to values: its file is the owner's alone.
            with contextlib.suppress(OSError):
                os.chmod(str(engine_url.database), CONFIDENTIAL_FILE_MODE)

    # ------------------------------------------------------------------ set-up

    @contextmanager
    def _connect(self, *, write: bool) -> Iterator[Connection]:
        """A connection (in a transaction committed at the end if ``write``).

        Database errors become :class:`VaultError` naming only the database: a driver's
        message can quote the rows it was given, so only a connection failure's first
        line (which holds no rows) is kept.
        """
        try:
            conn = self._engine.connect()
        except sa.exc.SQLAlchemyError as exc:
            raise VaultError(
                f"url: cannot open the vault database {self._where!r} "
                f"({_first_line(getattr(exc, 'orig', None) or exc)})"
            ) from None
        try:
            with conn:
                if write:
                    with conn.begin():
                        if self._sqlite:
                            # Take the write lock now, before the key-version check, so that
                            # the check and the writes that depend on it are one atomic step.
                            conn.exec_driver_sql("BEGIN IMMEDIATE")
                        yield conn
                else:
                    if self._sqlite:
                        # One snapshot for the whole read (the driver would run each
                        # statement in its own transaction).
                        conn.exec_driver_sql("BEGIN")
                    yield conn
        except self._database_errors as exc:
            raise VaultError(
                f"vault database {self._where!r}: operation failed "
                f"({type(getattr(exc, 'orig', None) or exc).__name__})"
            ) from None

    def _open(self) -> _Keys:
        with self._connect(write=False) as conn:
            exists = sa.inspect(conn).has_table(_meta.name)
            current = self._current_meta(conn) if exists else None
        if current is None:
            keys = _Keys(self._master, 1)
            with self._connect(write=True) as conn:
                _metadata.create_all(conn, checkfirst=True)
                conn.execute(
                    self._insert(_meta).on_conflict_do_nothing(),
                    [{"key_version": 1, "key_check": keys.check, "key_id": self._master.key_id}],
                )
            with self._connect(write=False) as conn:
                current = self._current_meta(conn)
            if current is None:  # pragma: no cover - the row was just written
                raise VaultError(f"vault database {self._where!r}: key check was not stored")
        version, check, key_id = current
        keys = _Keys(self._master, version)
        if not hmac.compare_digest(keys.check, check):
            raise ParameterError(
                f"master_key: the key supplied (key id {self._master.key_id!r}) does not "
                f"open this vault, whose key version {version} has key id {key_id!r} "
                f"(wrong key file or variable, or a key from before a rotation?)"
            )
        return keys

    @staticmethod
    def _current_meta(conn: Connection) -> tuple[int, bytes, str] | None:
        row = conn.execute(
            sa.select(_meta.c.key_version, _meta.c.key_check, _meta.c.key_id)
            .order_by(_meta.c.key_version.desc())
            .limit(1)
        ).first()
        return None if row is None else (int(row[0]), bytes(row[1]), str(row[2]))

    def _require_current(self, conn: Connection, *, lock: str | None = None) -> None:
        """Raise :class:`VaultError` unless this Vault's key version is the vault's current one.

        ``lock="share"`` (writers of token rows) or ``"update"`` (rotation) first locks the
        key version's row on PostgreSQL until the transaction ends, so that a rotation
        waits for writes in flight under the old version and writers wait for a rotation
        (then see the new version and stop). On SQLite the write transaction's
        ``BEGIN IMMEDIATE`` already excludes every other writer.
        """
        if lock is not None and not self._sqlite:
            conn.execute(
                sa.select(_meta.c.key_version)
                .where(_meta.c.key_version == self._keys.version)
                .with_for_update(read=lock == "share")
            ).all()
        row = conn.execute(sa.select(sa.func.max(_meta.c.key_version))).scalar_one()
        if row != self._keys.version:
            raise VaultError(
                f"vault {self._where!r} was rotated to key version {row} after this Vault "
                f"was opened (version {self._keys.version}); open it again with the new key"
            )

    # ------------------------------------------------------------------ public

    @property
    def key_id(self) -> str:
        """The master key's id (a one-way fingerprint, safe to log)."""
        return self._master.key_id

    @property
    def key_version(self) -> int:
        """The key version new rows are encrypted under; it grows by one per rotation."""
        return self._keys.version

    def __repr__(self) -> str:
        return (
            f"Vault(url={self._where!r}, key_id={self._master.key_id!r}, "
            f"key_version={self._keys.version})"
        )

    __str__ = __repr__

    def close(self) -> None:
        """Release the database connections."""
        self._engine.dispose()

    def __enter__(self) -> Vault:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __getstate__(self) -> Any:
        raise TypeError(
            "Vault: cannot be pickled (it holds a key); open a Vault in each process instead"
        )

    def tokenize(self, values: Any, namespace: str) -> Any:
        """Tokens for ``values``: the same value in the same namespace always gets one token.

        Parameters
        ----------
        values : Series or 1-D array-like
            Values to tokenize; non-strings are stored as their text (integral floats
            as integers). Missing values (None, NaN, pd.NA) stay missing.
        namespace : str
            Separates columns: the same value in two namespaces gets unrelated tokens.
            No ``'|'``.

        Returns
        -------
        Series or numpy.ndarray
            A Series (same index and name) for a Series, else an object array, aligned
            with ``values``. New values are stored encrypted before this returns.
        """
        namespace = _check_namespace(namespace)
        values = _as_1d(values, "values")
        array = values.to_numpy() if isinstance(values, pd.Series) else values
        codes, uniques = pd.factorize(array, use_na_sentinel=True)
        texts = [_as_text(u) for u in uniques]
        # Distinct values may share a text (1 and 1.0): look each text up once.
        text_codes, distinct = pd.factorize(np.asarray(texts, dtype=object))
        distinct_texts: list[str] = list(distinct)
        keys = self._keys
        indexes = keys.blind_indexes(distinct_texts, namespace)
        with self._connect(write=False) as conn:
            self._require_current(conn)
            found = self._tokens_for(conn, namespace, indexes)
        for _ in range(_INSERT_ATTEMPTS):
            missing = [i for i, index in enumerate(indexes) if index not in found]
            if not missing:
                break
            found.update(
                self._insert_new(
                    namespace, [distinct_texts[i] for i in missing], [indexes[i] for i in missing]
                )
            )
        else:  # pragma: no cover - needs a 128-bit token collision three times over
            raise VaultError(f"vault {self._where!r}: could not store new tokens")
        tokens = [found[indexes[c]] for c in text_codes]
        return _aligned(values, codes, tokens)

    def _tokens_for(
        self, conn: Connection, namespace: str, indexes: Sequence[bytes]
    ) -> dict[bytes, str]:
        if not indexes:
            return {}
        if not self._sqlite:
            rows = _pg_select_by(
                conn, _PG_TOKENS_BY_INDEX, indexes, "bytea", {"namespace": namespace}
            )
            return {bytes(index): token for index, token in rows}
        found: dict[bytes, str] = {}
        query = sa.select(_tokens.c.blind_index, _tokens.c.token).where(
            _tokens.c.namespace == namespace
        )
        for chunk in _chunks(indexes):
            rows = conn.execute(query.where(_tokens.c.blind_index.in_(chunk)))
            found.update((bytes(index), token) for index, token in rows)
        return found

    def _insert_new(
        self, namespace: str, texts: list[str], indexes: list[bytes]
    ) -> dict[bytes, str]:
        keys = self._keys
        tokens = _new_tokens(len(texts))
        ciphertexts, nonces = keys.encrypt(texts, tokens, namespace)
        with self._connect(write=True) as conn:
            self._require_current(conn, lock="share")
            if not self._sqlite:
                return self._pg_insert(conn, namespace, tokens, indexes, ciphertexts, nonces)
            # One order for every writer, as on PostgreSQL (see _PG_INSERT).
            order = sorted(range(len(texts)), key=indexes.__getitem__)
            rows = [
                {
                    "token": tokens[i],
                    "namespace": namespace,
                    "blind_index": indexes[i],
                    "ciphertext": ciphertexts[i],
                    "nonce": nonces[i],
                    "key_version": keys.version,
                }
                for i in order
            ]
            for start in range(0, len(rows), 10 * _CHUNK):
                conn.execute(
                    self._insert(_tokens).on_conflict_do_nothing(),
                    rows[start : start + 10 * _CHUNK],
                )
            # Re-select: a concurrent writer may have stored the same value first, and
            # its token is the one every caller must get.
            return self._tokens_for(conn, namespace, indexes)

    def _pg_insert(
        self,
        conn: Connection,
        namespace: str,
        tokens: list[str],
        indexes: list[bytes],
        ciphertexts: list[bytes],
        nonces: list[bytes],
    ) -> dict[bytes, str]:
        """Store new rows by binary COPY; return the token each blind index holds.

        The rows go straight into the table under a savepoint. If another writer stored
        one of the values first (a unique violation), the savepoint is rolled back and
        the rows are staged in a temporary table and inserted with ``ON CONFLICT DO
        NOTHING``; the values skipped are looked up, so every caller gets the stored
        token. Either way the rows go in blind-index order (see ``_PG_INSERT``).
        """
        order = sorted(range(len(tokens)), key=indexes.__getitem__)
        token_bytes = [tokens[i].encode("ascii") for i in order]
        index_column = [indexes[i] for i in order]
        nonce_column = [nonces[i] for i in order]
        cipher_column = [ciphertexts[i] for i in order]
        cursor = _driver_cursor(conn)
        payload = copy_payload(
            [
                token_bytes,
                [namespace.encode(cursor.connection.info.encoding)] * len(order),
                index_column,
                nonce_column,
                [self._keys.version.to_bytes(4, "big", signed=True)] * len(order),
                cipher_column,
            ]
        )
        cursor.execute("SAVEPOINT veil_copy")
        try:
            with cursor.copy(_PG_COPY_TOKENS) as copy:
                copy.write(payload)
        except self._driver_error as exc:
            if getattr(exc, "sqlstate", None) != _UNIQUE_VIOLATION:
                raise
            cursor.execute("ROLLBACK TO SAVEPOINT veil_copy")
        else:
            cursor.execute("RELEASE SAVEPOINT veil_copy")
            return dict(zip(indexes, tokens, strict=True))
        cursor.execute(_PG_STAGE_NEW)
        with cursor.copy("COPY veil_new_tokens FROM STDIN (FORMAT BINARY)") as copy:
            copy.write(copy_payload([token_bytes, index_column, nonce_column, cipher_column]))
        params = {"namespace": namespace, "version": self._keys.version}
        found = {bytes(index): token for index, token in cursor.execute(_PG_INSERT, params)}
        cursor.execute("DROP TABLE veil_new_tokens")
        skipped = [index for index in indexes if index not in found]
        found.update(self._tokens_for(conn, namespace, skipped))
        return found

    def detokenize(self, tokens: Any, namespace: str) -> Any:
        """The values behind ``tokens``, decrypted and authenticated.

        Parameters
        ----------
        tokens : Series or 1-D array-like
            Tokens made by :meth:`tokenize` in ``namespace``; missing values stay missing.
        namespace : str
            The namespace the tokens were made in.

        Returns
        -------
        Series or numpy.ndarray
            The values as text, aligned with ``tokens``.

        Raises
        ------
        ParameterError
            Some tokens are not in the vault under ``namespace`` (the message counts them
            and shows up to three).
        VaultError
            A stored row fails authentication (altered, or moved from another row).
        """
        namespace = _check_namespace(namespace)
        tokens = _as_1d(tokens, "tokens")
        array = tokens.to_numpy() if isinstance(tokens, pd.Series) else tokens
        codes, uniques = pd.factorize(array, use_na_sentinel=True)
        wanted = [str(u) for u in uniques]
        keys = self._keys
        rows: dict[str, tuple[bytes, bytes, int]] = {}
        # Selected on the token's own index alone: a namespace condition could lead the
        # planner to scan the namespace instead. Rows of other namespaces are unknown here.
        query = sa.select(
            _tokens.c.token,
            _tokens.c.namespace,
            _tokens.c.nonce,
            _tokens.c.ciphertext,
            _tokens.c.key_version,
        )
        with self._connect(write=False) as conn:
            self._require_current(conn)
            stored: Iterable[tuple[Any, ...]]
            if self._sqlite:
                stored = chain.from_iterable(
                    conn.execute(query.where(_tokens.c.token.in_(chunk)))
                    for chunk in _chunks(wanted)
                )
            else:
                stored = _pg_select_by(conn, _PG_ROWS_BY_TOKEN, wanted, "text", {})
            for token, stored_namespace, nonce, ciphertext, version in stored:
                if stored_namespace == namespace:
                    rows[token] = (bytes(nonce), bytes(ciphertext), int(version))
        unknown = [t for t in wanted if t not in rows]
        if unknown:
            raise ParameterError(_unknown_tokens_message(unknown, len(wanted), namespace))
        decrypt = keys.decrypt
        plain: list[str] = []
        for token in wanted:
            nonce, ciphertext, version = rows[token]
            if version != keys.version:
                raise VaultError(
                    f"vault row for token {token!r} is under key version {version}, not "
                    f"the current {keys.version}: an interrupted rotation?"
                )
            plain.append(decrypt(token, namespace, nonce, ciphertext))
        return _aligned(tokens, codes, plain)

    def rotate(self, new_master_key: SecretKey | bytes) -> None:
        """Re-encrypt every row under ``new_master_key`` and the next key version.

        All rows get a new nonce, ciphertext and blind index in one transaction; tokens
        do not change. Afterwards only ``new_master_key`` opens the vault, and a Vault
        opened elsewhere before the rotation refuses to work. Other processes may be
        tokenizing meanwhile: the rotation waits for their writes in flight (which it
        then re-encrypts), and their later writes are refused, so no row is left under
        the old key.

        Raises
        ------
        ParameterError
            ``new_master_key`` is missing, too short, or the current key.
        """
        new_master = as_secret_key(new_master_key)
        if new_master == self._master:
            raise ParameterError("new_master_key: is the current key; rotate to a new key")
        old = self._keys
        new = _Keys(new_master, old.version + 1)
        with self._connect(write=True) as conn:
            self._require_current(conn, lock="update")
            conn.execute(
                _meta.insert(),
                [{"key_version": new.version, "key_check": new.check, "key_id": new_master.key_id}],
            )
            stored = conn.execute(
                sa.select(
                    _tokens.c.token,
                    _tokens.c.namespace,
                    _tokens.c.nonce,
                    _tokens.c.ciphertext,
                    _tokens.c.key_version,
                )
            ).all()
            by_namespace: dict[str, tuple[list[str], list[str]]] = {}
            for token, namespace, nonce, ciphertext, version in stored:
                if version != old.version:
                    raise VaultError(
                        f"vault row for token {token!r} is under key version {version}, "
                        f"not the current {old.version}"
                    )
                group = by_namespace.setdefault(namespace, ([], []))
                group[0].append(token)
                group[1].append(old.decrypt(token, namespace, bytes(nonce), bytes(ciphertext)))
            update = (
                sa.update(_tokens)
                .where(_tokens.c.token == sa.bindparam("b_token"))
                .values(
                    blind_index=sa.bindparam("b_index"),
                    ciphertext=sa.bindparam("b_ciphertext"),
                    nonce=sa.bindparam("b_nonce"),
                    key_version=new.version,
                )
            )
            for namespace, (tokens, texts) in by_namespace.items():
                ciphertexts, nonces = new.encrypt(texts, tokens, namespace)
                indexes = new.blind_indexes(texts, namespace)
                conn.execute(
                    update,
                    [
                        {"b_token": t, "b_index": i, "b_ciphertext": c, "b_nonce": n}
                        for t, i, c, n in zip(tokens, indexes, ciphertexts, nonces, strict=True)
                    ],
                )
        self._master = new_master
        self._keys = new


def _unknown_tokens_message(unknown: list[str], n_wanted: int, namespace: str) -> str:
    """What :meth:`Vault.detokenize` says of tokens it does not know, quoting no value.

    What was passed may not be tokens at all (a column of plain values given by
    mistake): only the first characters of up to three well-formed tokens are shown.
    """
    well_formed = [t for t in unknown if _TOKEN_SHAPE.match(t)]
    message = (
        f"tokens: {len(unknown)} of {n_wanted} distinct tokens are not in the vault under "
        f"namespace {namespace!r}"
    )
    if well_formed:
        shown = ", ".join(repr(t[: len(TOKEN_PREFIX) + 8] + "...") for t in well_formed[:3])
        message += f" (e.g. {shown}); wrong namespace or vault?"
    malformed = len(unknown) - len(well_formed)
    if malformed:
        message += (
            f"; {malformed} of them are not tokens at all ({TOKEN_PREFIX!r} and "
            f"{2 * _TOKEN_BYTES} hex digits; their values are not shown): plain values "
            f"passed instead of tokens?"
        )
    return message


def _driver_autocommit(dbapi_connection: Any, connection_record: Any) -> None:
    dbapi_connection.isolation_level = None


def _first_line(exc: BaseException | None) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__
