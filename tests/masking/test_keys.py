"""Secret keys: loading, ids that reveal nothing, HKDF (RFC 5869), errors without key material."""

from __future__ import annotations

import base64
import hashlib
import pickle
from pathlib import Path

import pytest

from veil.errors import ParameterError
from veil.masking.keys import SecretKey, as_secret_key, hkdf_sha256

KEY = bytes.fromhex("8f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0")


def _leaks(text: str, key: bytes = KEY) -> bool:
    return any(
        form in text
        for form in (
            key.hex(),
            key.hex().upper(),
            base64.b64encode(key).decode(),
            repr(key),
            str(key),
            key.decode("latin-1"),
        )
    )


# RFC 5869, appendix A, test cases 1-3 (HKDF with SHA-256).
RFC5869 = [
    (
        "0b" * 22,
        "000102030405060708090a0b0c",
        "f0f1f2f3f4f5f6f7f8f9",
        42,
        "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865",
    ),
    (
        bytes(range(0x50)).hex(),
        bytes(range(0x60, 0xB0)).hex(),
        bytes(range(0xB0, 0x100)).hex(),
        82,
        "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c"
        "59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71"
        "cc30c58179ec3e87c14c01d5c1f3434f1d87",
    ),
    (
        "0b" * 22,
        "",
        "",
        42,
        "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8",
    ),
]


@pytest.mark.parametrize(("ikm", "salt", "info", "length", "okm"), RFC5869)
def test_hkdf_matches_rfc5869_vectors(
    ikm: str, salt: str, info: str, length: int, okm: str
) -> None:
    out = hkdf_sha256(
        bytes.fromhex(ikm), salt=bytes.fromhex(salt), info=bytes.fromhex(info), length=length
    )
    assert out.hex() == okm


@pytest.mark.parametrize("length", [0, 255 * 32 + 1, 1.5, True])
def test_hkdf_rejects_bad_length(length: object) -> None:
    with pytest.raises(ParameterError, match="length"):
        hkdf_sha256(b"x" * 16, length=length)  # type: ignore[arg-type]


def test_key_id_is_a_domain_separated_fingerprint_not_a_plain_hash() -> None:
    key = SecretKey(KEY)
    assert len(key.key_id) == 16
    assert int(key.key_id, 16) >= 0
    assert key.key_id not in hashlib.sha256(KEY).hexdigest()
    assert key.key_id == SecretKey(KEY).key_id
    assert key.key_id != SecretKey(bytes(32)).key_id


def test_repr_and_str_show_only_the_id() -> None:
    key = SecretKey(KEY)
    for text in (repr(key), str(key), f"{key}", str([key]), str({"k": key})):
        assert key.key_id in text
        assert not _leaks(text)


def test_equality_compares_keys() -> None:
    assert SecretKey(KEY) == SecretKey(KEY)
    assert SecretKey(KEY) != SecretKey(bytes(32))
    assert SecretKey(KEY) != KEY
    assert len({SecretKey(KEY), SecretKey(KEY)}) == 1


def test_pickles_for_worker_processes() -> None:
    key = SecretKey(KEY)
    assert pickle.loads(pickle.dumps(key)) == key


@pytest.mark.parametrize("material", [b"", b"short", bytes(15)])
def test_short_key_is_refused_without_showing_it(material: bytes) -> None:
    with pytest.raises(ParameterError, match="at least 16 bytes") as info:
        SecretKey(material)
    assert material.hex() not in str(info.value) or not material


def test_str_key_is_refused() -> None:
    with pytest.raises(ParameterError, match="must be bytes"):
        SecretKey(KEY.hex())  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="SecretKey or bytes") as info:
        as_secret_key(KEY.hex())  # type: ignore[arg-type]
    assert not _leaks(str(info.value))
    with pytest.raises(ParameterError, match="no key given"):
        as_secret_key(None)  # type: ignore[arg-type]


def test_generate_gives_distinct_keys_of_the_asked_length() -> None:
    a, b = SecretKey.generate(), SecretKey.generate(48)
    assert len(a) == 32
    assert len(b) == 48
    assert a != b
    with pytest.raises(ParameterError, match="n_bytes"):
        SecretKey.generate(8)


@pytest.mark.parametrize(
    "content",
    [
        KEY.hex().encode(),
        (KEY.hex().upper() + "\n").encode(),
        b"base64:" + base64.b64encode(KEY) + b"\n",
        KEY,
    ],
    ids=["hex", "hex-upper-newline", "base64", "raw"],
)
def test_from_file_reads_hex_base64_and_raw(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "veil.key"
    path.write_bytes(content)
    assert SecretKey.from_file(path) == SecretKey(KEY)


def test_from_file_forced_encodings(tmp_path: Path) -> None:
    path = tmp_path / "veil.key"
    path.write_bytes(KEY.hex().encode())
    assert SecretKey.from_file(path, encoding="raw") == SecretKey(KEY.hex().encode())
    assert SecretKey.from_file(path, encoding="hex") == SecretKey(KEY)
    path.write_bytes(base64.b64encode(KEY))
    assert SecretKey.from_file(path, encoding="base64") == SecretKey(KEY)


def test_missing_key_file_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.key"
    with pytest.raises(ParameterError, match=r"nowhere\.key.*does not exist"):
        SecretKey.from_file(path)


def test_short_key_file_is_refused_without_showing_the_key(tmp_path: Path) -> None:
    path = tmp_path / "short.key"
    short = bytes.fromhex("a1b2c3d4e5f60718")
    path.write_bytes(short.hex().encode())
    with pytest.raises(ParameterError, match="8 key bytes") as info:
        SecretKey.from_file(path)
    assert short.hex() not in str(info.value)


def test_bad_hex_file_error_shows_no_content(tmp_path: Path) -> None:
    path = tmp_path / "bad.key"
    secret_text = KEY.hex() + "zz"
    path.write_text(secret_text)
    with pytest.raises(ParameterError, match="not a hex key") as info:
        SecretKey.from_file(path, encoding="hex")
    assert KEY.hex() not in str(info.value)
    path.write_text("base64:" + KEY.hex() + "!!")
    with pytest.raises(ParameterError, match="not a valid base64") as info:
        SecretKey.from_file(path)
    assert KEY.hex() not in str(info.value)


def test_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VEIL_TEST_KEY", KEY.hex())
    assert SecretKey.from_env("VEIL_TEST_KEY") == SecretKey(KEY)
    monkeypatch.setenv("VEIL_TEST_KEY", "base64:" + base64.b64encode(KEY).decode())
    assert SecretKey.from_env("VEIL_TEST_KEY") == SecretKey(KEY)


def test_missing_env_var_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VEIL_TEST_KEY", raising=False)
    with pytest.raises(ParameterError, match="'VEIL_TEST_KEY' is not set"):
        SecretKey.from_env("VEIL_TEST_KEY")
    monkeypatch.setenv("VEIL_TEST_KEY", "")
    with pytest.raises(ParameterError, match="'VEIL_TEST_KEY' is not set"):
        SecretKey.from_env("VEIL_TEST_KEY")


def test_passphrase_in_env_is_refused_without_echo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VEIL_TEST_KEY", "correct horse battery staple")
    with pytest.raises(ParameterError, match="must hold a hex key") as info:
        SecretKey.from_env("VEIL_TEST_KEY")
    assert "horse" not in str(info.value)
    monkeypatch.setenv("VEIL_TEST_KEY", "abcd" * 4)
    with pytest.raises(ParameterError, match="8 key bytes") as info:
        SecretKey.from_env("VEIL_TEST_KEY")
    assert "abcd" not in str(info.value)


def test_derive_gives_independent_per_purpose_subkeys() -> None:
    key = SecretKey(KEY)
    a, b = key.derive("pseudonym"), key.derive("token")
    assert a == key.derive("pseudonym")
    assert len({a.key_id, b.key_id, key.key_id}) == 3
    assert len(key.derive("fpe", length=16)) == 16
    with pytest.raises(ParameterError, match="purpose"):
        key.derive("")
    with pytest.raises(ParameterError, match="length"):
        key.derive("x", length=8)


def test_require_id_catches_the_wrong_key() -> None:
    key = SecretKey(KEY)
    key.require_id(key.key_id)
    other = SecretKey(bytes(32))
    with pytest.raises(ParameterError, match="wrong key") as info:
        other.require_id(key.key_id)
    assert not _leaks(str(info.value)) and not _leaks(str(info.value), bytes(32))


def test_new_hmac_is_hmac_sha256_with_the_key() -> None:
    import hmac

    h = SecretKey(KEY).new_hmac()
    h.update(b"abc")
    assert h.hexdigest() == hmac.new(KEY, b"abc", "sha256").hexdigest()
