"""No error raised in veil.masking quotes a secret: key, tweak, FF1 plaintext or stored value.

Each error path is triggered with sentinel secrets, and every form in which a sentinel
could leak (hex either case, base64, raw text, repr) is looked for in ``str`` and
``repr`` of the error and of its cause chain.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path

import pytest

from veil.errors import VeilError
from veil.masking import FF1, pseudonymize
from veil.masking.keys import SecretKey, as_secret_key
from veil.masking.vault import Vault

# Sentinel key: random-looking so that every strength check passes; found if it leaks.
SENTINEL_KEY = bytes.fromhex("9e4c17b2a85f03d6e1b74c29f05a8d3b76e2c14f9a0d58b3e7c21f64a9b0d357")
SENTINEL_TEXT = "4929387415526093"  # an FF1 plaintext / vault value / card number
SENTINEL_TWEAK = b"tweak-sentinel-7f3a9c" * 8


def _forms(secret: bytes | str) -> list[str]:
    raw = secret.encode() if isinstance(secret, str) else secret
    forms = [raw.hex(), raw.hex().upper(), base64.b64encode(raw).decode(), repr(raw)]
    forms.append(raw.decode("latin-1"))
    return [f for f in forms if len(f) >= 8]


def _texts(error: BaseException) -> str:
    parts = []
    current: BaseException | None = error
    while current is not None:
        parts += [str(current), repr(current)]
        current = current.__cause__ or current.__context__
    return "\n".join(parts)


def _assert_clean(error: BaseException, *secrets: bytes | str) -> None:
    text = _texts(error)
    for secret in secrets:
        for form in _forms(secret):
            assert form not in text, f"{type(error).__name__} quotes a secret: {text}"


def _private(path: Path, content: bytes, mode: int = 0o600) -> Path:
    path.write_bytes(content)
    path.chmod(mode)
    return path


def _key_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Callable[[], object]]:
    key = SecretKey(SENTINEL_KEY)
    half = SENTINEL_KEY[:16] * 2
    monkeypatch.setenv("VEIL_SENTINEL_SHORT", SENTINEL_KEY[:20].hex())
    monkeypatch.setenv("VEIL_SENTINEL_WEAK", half.hex())
    return [
        lambda: SecretKey.from_file(
            _private(tmp_path / "open.key", SENTINEL_KEY.hex().encode(), 0o644)
        ),
        lambda: SecretKey.from_file(
            _private(tmp_path / "short.key", SENTINEL_KEY[:20].hex().encode())
        ),
        lambda: SecretKey.from_file(
            _private(tmp_path / "long.key", (SENTINEL_KEY * 2).hex().encode())
        ),
        lambda: SecretKey.from_file(_private(tmp_path / "weak.key", half.hex().encode())),
        lambda: SecretKey.from_file(
            _private(tmp_path / "bad.key", SENTINEL_KEY.hex().encode() + b"zz"), encoding="hex"
        ),
        lambda: SecretKey.from_file(
            _private(tmp_path / "b64.key", b"base64:" + SENTINEL_KEY.hex().encode())
        ),
        lambda: SecretKey.from_file(
            _private(tmp_path / "raw.key", SENTINEL_KEY + b"x"), encoding="raw"
        ),
        lambda: SecretKey.from_env(SENTINEL_KEY.hex()),
        lambda: SecretKey.from_env(base64.b64encode(SENTINEL_KEY).decode()),
        lambda: SecretKey.from_env("base64:" + base64.b64encode(SENTINEL_KEY).decode()),
        lambda: SecretKey.from_env("VEIL_SENTINEL_SHORT"),
        lambda: SecretKey.from_env("VEIL_SENTINEL_WEAK"),
        lambda: SecretKey(SENTINEL_KEY[:8]),
        lambda: SecretKey(SENTINEL_KEY.hex()),  # type: ignore[arg-type]
        lambda: as_secret_key(SENTINEL_KEY.hex()),  # type: ignore[arg-type]
        lambda: as_secret_key(half),
        lambda: SecretKey.generate().require_id(key.key_id),
        lambda: key.derive(""),
    ]


def test_key_errors_quote_no_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for trigger in _key_errors(tmp_path, monkeypatch):
        with pytest.raises(VeilError) as info:
            trigger()
        _assert_clean(info.value, SENTINEL_KEY, SENTINEL_KEY[:20], SENTINEL_KEY[:16])


def test_ff1_errors_quote_no_key_plaintext_or_tweak() -> None:
    fpe = FF1(SENTINEL_KEY, "0123456789")
    triggers: list[Callable[[], object]] = [
        lambda: fpe.encrypt(SENTINEL_TEXT + "x"),
        lambda: fpe.encrypt("x" + SENTINEL_TEXT),
        lambda: fpe.decrypt(SENTINEL_TEXT + "#"),
        lambda: fpe.encrypt(SENTINEL_TEXT, tweak=SENTINEL_TWEAK * 40),
        lambda: fpe.encrypt_many([SENTINEL_TEXT, SENTINEL_TEXT + "a"]),
        lambda: fpe.encrypt_many([SENTINEL_TEXT, None]),
        lambda: FF1(SENTINEL_KEY[:20], "0123456789"),
        lambda: FF1(SENTINEL_KEY, "0123456789" + "0"),
        lambda: fpe.encrypt(SENTINEL_TEXT[:2]),
    ]
    for trigger in triggers:
        with pytest.raises((VeilError, TypeError)) as info:
            trigger()
        _assert_clean(info.value, SENTINEL_KEY, SENTINEL_KEY[:20], SENTINEL_TEXT, SENTINEL_TWEAK)
        assert SENTINEL_TEXT[:6] not in _texts(info.value)


def test_pseudonym_errors_quote_no_key_or_value() -> None:
    key = SecretKey(SENTINEL_KEY)
    for trigger in (
        lambda: pseudonymize([SENTINEL_TEXT], key, key_id="0" * 16),
        lambda: pseudonymize([SENTINEL_TEXT], key, length=0),
        lambda: pseudonymize([SENTINEL_TEXT.encode()], key),
    ):
        with pytest.raises(VeilError) as info:
            trigger()
        _assert_clean(info.value, SENTINEL_KEY, SENTINEL_TEXT)


def test_vault_errors_quote_no_key_value_or_plaintext(tmp_path: Path) -> None:
    key = SecretKey(SENTINEL_KEY)
    path = tmp_path / "vault.db"
    with Vault(path, key) as vault:
        tokens = vault.tokenize([SENTINEL_TEXT], "card")
        triggers: list[Callable[[], object]] = [
            # A column of plain values passed where tokens belong must not be echoed.
            lambda: vault.detokenize([SENTINEL_TEXT, tokens[0]], "card"),
            lambda: vault.detokenize(tokens, "other"),
            lambda: vault.tokenize([SENTINEL_TEXT.encode()], "card"),
            lambda: vault.rotate(key),
            lambda: Vault(path, SecretKey.generate()),
        ]
        for trigger in triggers:
            with pytest.raises(VeilError) as info:
                trigger()
            _assert_clean(info.value, SENTINEL_KEY, SENTINEL_TEXT)
        assert SENTINEL_TEXT not in repr(vault) + str(vault)


def test_unknown_tokens_show_only_a_prefix_of_well_formed_tokens(tmp_path: Path) -> None:
    with Vault(tmp_path / "vault.db", SecretKey(SENTINEL_KEY)) as vault:
        token = vault.tokenize(["x"], "a")[0]
        with pytest.raises(VeilError, match="not tokens at all") as info:
            vault.detokenize([token, SENTINEL_TEXT], "b")
    message = str(info.value)
    assert token[:12] in message and token not in message
    assert SENTINEL_TEXT not in message and SENTINEL_TEXT[:6] not in message
    assert "2 of 2 distinct tokens" in message
