"""Secret keys: loading, ids that reveal nothing, HKDF (RFC 5869), errors without key material."""

from __future__ import annotations

import base64
import hashlib
import pickle
from pathlib import Path

import pytest

from veil.errors import ParameterError
from veil.masking.keys import SecretKey, as_secret_key, hkdf_sha256

# A fixed key drawn once from secrets.token_hex(32): random-looking, so every check passes.
KEY = bytes.fromhex("26fe7367817be947d819d506dd64025518af663b9917ffa5667c135663417c02")


def _key_file(folder: Path, content: bytes, name: str = "veil.key", mode: int = 0o600) -> Path:
    """A key file private to its owner (as ``veil key new`` writes it) unless ``mode`` says."""
    path = folder / name
    path.write_bytes(content)
    path.chmod(mode)
    return path


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
        (KEY.hex() + "\r\n").encode(),
        b"base64:" + base64.b64encode(KEY) + b"\n",
        base64.b64encode(KEY) + b"\n",
        base64.urlsafe_b64encode(KEY).rstrip(b"="),
        KEY,
        KEY + b"\n",
    ],
    ids=[
        "hex",
        "hex-upper-newline",
        "hex-crlf",
        "base64-prefixed",
        "base64",
        "base64-urlsafe-unpadded",
        "raw",
        "raw-newline",
    ],
)
def test_from_file_reads_hex_base64_and_raw(tmp_path: Path, content: bytes) -> None:
    assert SecretKey.from_file(_key_file(tmp_path, content)) == SecretKey(KEY)


def test_from_file_forced_encodings(tmp_path: Path) -> None:
    path = _key_file(tmp_path, KEY.hex().encode())
    assert SecretKey.from_file(path, encoding="hex") == SecretKey(KEY)
    with pytest.raises(ParameterError, match="not 32 raw key bytes"):
        SecretKey.from_file(path, encoding="raw")
    path = _key_file(tmp_path, base64.b64encode(KEY))
    assert SecretKey.from_file(path, encoding="base64") == SecretKey(KEY)
    path = _key_file(tmp_path, KEY)
    assert SecretKey.from_file(path, encoding="raw") == SecretKey(KEY)


def test_missing_key_file_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.key"
    with pytest.raises(ParameterError, match=r"nowhere\.key.*does not exist"):
        SecretKey.from_file(path)


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660, 0o606])
def test_key_file_readable_by_others_is_refused_with_the_chmod(tmp_path: Path, mode: int) -> None:
    path = _key_file(tmp_path, KEY.hex().encode(), mode=mode)
    with pytest.raises(ParameterError, match=r"group or others.*chmod 600 ") as info:
        SecretKey.from_file(path)
    assert f"{mode:04o}" in str(info.value)
    assert str(path) in str(info.value)
    assert not _leaks(str(info.value))


def test_key_file_private_to_owner_is_accepted(tmp_path: Path) -> None:
    for mode in (0o600, 0o400):
        assert SecretKey.from_file(_key_file(tmp_path, KEY.hex().encode(), mode=mode)).key_id


def test_directory_is_not_a_key_file(tmp_path: Path) -> None:
    folder = tmp_path / "keys"
    folder.mkdir(mode=0o700)
    with pytest.raises(ParameterError, match=r"not a regular file|cannot be read"):
        SecretKey.from_file(folder)


def _weak_contents(tmp_path: Path) -> dict[str, bytes]:
    csv = b"name,ssn\n" + b"".join(b"person%d,%09d\n" % (i, i) for i in range(400))
    return {
        "passwd-like": b"root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/usr/sbin:/bin/sh\n",
        "password16": b"passwordpassword",
        "password32": b"passwordpasswordpasswordpassword",
        "password32-newline": b"correct horse battery staple!!!\n",
        "data-csv": csv,
        "zeros": bytes(32),
        "counting": bytes(range(32)),
        "hex-of-counting": bytes(range(32)).hex().encode(),
        "repeated-hex": ("0123456789abcdef" * 4).encode(),
        "repeated-random-half": KEY[:16] * 2,
        "hex-of-text": b"passwordpasswordpasswordpassword".hex().encode(),
        "base64-of-text": base64.b64encode(b"passwordpasswordpasswordpassword"),
        "short-hex": KEY[:16].hex().encode(),
        "long-hex": (KEY + KEY[:16]).hex().encode(),
        "empty": b"",
    }


@pytest.mark.parametrize(
    "case",
    [
        "passwd-like",
        "password16",
        "password32",
        "password32-newline",
        "data-csv",
        "zeros",
        "counting",
        "hex-of-counting",
        "repeated-hex",
        "repeated-random-half",
        "hex-of-text",
        "base64-of-text",
        "short-hex",
        "long-hex",
        "empty",
    ],
)
def test_weak_or_malformed_key_file_is_refused_pointing_at_key_new(
    tmp_path: Path, case: str
) -> None:
    content = _weak_contents(tmp_path)[case]
    path = _key_file(tmp_path, content)
    with pytest.raises(ParameterError, match="veil key new") as info:
        SecretKey.from_file(path)
    message = str(info.value)
    assert str(path) in message
    for line in content.splitlines():
        if len(line) >= 8:
            assert line.decode("latin-1") not in message


def test_large_file_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    path = _key_file(tmp_path, b"x" * 100_000)
    with pytest.raises(ParameterError, match=r"over 4096 bytes.*veil key new"):
        SecretKey.from_file(path)


def test_the_real_passwd_file_is_not_a_key() -> None:
    passwd = Path("/etc/passwd")
    if not passwd.exists():
        pytest.skip("no /etc/passwd on this system")
    with pytest.raises(ParameterError, match=r"veil key new|group or others"):
        SecretKey.from_file(passwd)


def test_short_key_file_is_refused_without_showing_the_key(tmp_path: Path) -> None:
    short = bytes.fromhex("a1b2c3d4e5f60718")
    path = _key_file(tmp_path, short.hex().encode())
    with pytest.raises(ParameterError, match="is not a key") as info:
        SecretKey.from_file(path)
    assert short.hex() not in str(info.value)


def test_bad_hex_file_error_shows_no_content(tmp_path: Path) -> None:
    path = _key_file(tmp_path, (KEY.hex() + "zz").encode())
    with pytest.raises(ParameterError, match="not a hex key") as info:
        SecretKey.from_file(path, encoding="hex")
    assert not _leaks(str(info.value))
    path = _key_file(tmp_path, ("base64:" + KEY.hex() + "!!").encode())
    with pytest.raises(ParameterError, match="not the base64 of 32 bytes") as info:
        SecretKey.from_file(path)
    assert not _leaks(str(info.value))


def test_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VEIL_TEST_KEY", KEY.hex())
    assert SecretKey.from_env("VEIL_TEST_KEY") == SecretKey(KEY)
    monkeypatch.setenv("VEIL_TEST_KEY", KEY.hex() + "\n")
    assert SecretKey.from_env("VEIL_TEST_KEY") == SecretKey(KEY)
    monkeypatch.setenv("VEIL_TEST_KEY", "base64:" + base64.b64encode(KEY).decode())
    assert SecretKey.from_env("VEIL_TEST_KEY") == SecretKey(KEY)
    monkeypatch.setenv("VEIL_TEST_KEY", base64.b64encode(KEY).decode())
    assert SecretKey.from_env("VEIL_TEST_KEY") == SecretKey(KEY)


def test_missing_env_var_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VEIL_TEST_KEY", raising=False)
    with pytest.raises(ParameterError, match=r"'VEIL_TEST_KEY' is not set.*veil key new"):
        SecretKey.from_env("VEIL_TEST_KEY")
    monkeypatch.setenv("VEIL_TEST_KEY", "")
    with pytest.raises(ParameterError, match="'VEIL_TEST_KEY' is not set"):
        SecretKey.from_env("VEIL_TEST_KEY")


def test_passphrase_in_env_is_refused_without_echo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VEIL_TEST_KEY", "correct horse battery staple")
    with pytest.raises(ParameterError, match=r"is not a key.*veil key new") as info:
        SecretKey.from_env("VEIL_TEST_KEY")
    assert "horse" not in str(info.value)
    monkeypatch.setenv("VEIL_TEST_KEY", "abcd" * 4)
    with pytest.raises(ParameterError, match="is not a key") as info:
        SecretKey.from_env("VEIL_TEST_KEY")
    assert "abcd" not in str(info.value)


@pytest.mark.parametrize(
    "value",
    [
        bytes(32).hex(),
        bytes(range(32)).hex(),
        ("0123456789abcdef" * 4),
        b"passwordpasswordpasswordpassword".hex(),
        base64.b64encode(b"passwordpasswordpasswordpassword").decode(),
    ],
    ids=["zeros", "counting", "repeated", "hex-of-text", "base64-of-text"],
)
def test_weak_key_in_env_is_refused(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("VEIL_TEST_KEY", value)
    with pytest.raises(ParameterError, match=r"'VEIL_TEST_KEY'.*veil key new") as info:
        SecretKey.from_env("VEIL_TEST_KEY")
    assert value not in str(info.value)


@pytest.mark.parametrize(
    "given",
    [
        KEY.hex(),
        KEY.hex().upper(),
        "base64:" + base64.b64encode(KEY).decode(),
        base64.b64encode(KEY).decode(),
        base64.urlsafe_b64encode(KEY).decode().rstrip("="),
        KEY.hex()[:24],
    ],
    ids=["hex", "hex-upper", "base64-prefixed", "base64", "base64-urlsafe", "hex-prefix"],
)
def test_key_passed_instead_of_a_variable_name_is_not_echoed(
    monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    monkeypatch.delenv(given, raising=False) if "=" not in given else None
    with pytest.raises(
        ParameterError, match="looks like key material; pass the variable's NAME"
    ) as info:
        SecretKey.from_env(given)
    for text in (str(info.value), repr(info.value)):
        assert given not in text
        assert given[:12] not in text
        assert not _leaks(text)


def test_invalid_variable_name_is_not_echoed() -> None:
    given = "a secret; with spaces"
    with pytest.raises(ParameterError, match="not an environment variable name") as info:
        SecretKey.from_env(given)
    assert "secret" not in str(info.value)
    with pytest.raises(ParameterError, match="key_env"):
        SecretKey.from_env("")


@pytest.mark.parametrize(
    "weak", [b"passwordpassword", bytes(32), bytes(range(32)), b"\x01\x02" * 16]
)
def test_weak_bytes_are_refused_where_a_key_is_used(weak: bytes) -> None:
    with pytest.raises(ParameterError, match="veil key new"):
        as_secret_key(weak)


def test_strong_bytes_pass_as_a_key() -> None:
    assert as_secret_key(KEY) == SecretKey(KEY)
    assert as_secret_key(KEY[:16]).key_id


def test_generated_keys_pass_every_check(tmp_path: Path) -> None:
    for i in range(50):
        key = SecretKey.generate()
        path = _key_file(tmp_path, key.reveal().hex().encode(), name=f"k{i}.key")
        assert SecretKey.from_file(path) == key


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
