"""Keyed pseudonyms: determinism, key separation, normalisation, namespaces, collisions."""

from __future__ import annotations

import hmac
import logging
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from veil.errors import ColumnError, DataTypeError, ParameterError, PrivacyWarning
from veil.masking.keys import SecretKey
from veil.masking.pseudonym import (
    collision_probability,
    pseudonymize,
    pseudonymize_columns,
)

# A fixed key drawn once from secrets.token_hex(32) (a patterned key is refused as weak).
KEY_BYTES = bytes.fromhex("b3c1f09e5a2d7c4e8816ad3f95e0c27b4d6a1fe8903b57c2e4a9d06f1b8c735e")
KEY = SecretKey(KEY_BYTES)


def _expected(value: str, namespace: str = "", key: bytes = KEY_BYTES) -> str:
    return hmac.new(key, f"{namespace}|{value}".encode(), "sha256").hexdigest()


def _key_forms(key: bytes) -> list[str]:
    return [key.hex(), key.hex().upper(), repr(key), key.decode("latin-1")]


def test_pseudonym_is_hmac_sha256_of_namespace_and_value() -> None:
    out = pseudonymize(["alice", "bob"], KEY, namespace="email")
    assert out.tolist() == [_expected("alice", "email"), _expected("bob", "email")]


def test_same_key_and_value_give_the_same_pseudonym() -> None:
    values = pd.Series(["x", "y", "x", "x"])
    first = pseudonymize(values, KEY)
    again = pseudonymize(values, SecretKey(KEY_BYTES))
    assert first.equals(again)
    assert first[0] == first[2] == first[3] != first[1]


def test_different_key_gives_different_pseudonyms() -> None:
    values = ["x", "y"]
    a = pseudonymize(values, KEY)
    b = pseudonymize(values, SecretKey.generate())
    assert set(a).isdisjoint(b)


def test_raw_bytes_key_is_accepted() -> None:
    assert pseudonymize(["x"], KEY_BYTES).tolist() == pseudonymize(["x"], KEY).tolist()


def test_series_keeps_index_name_and_records_key_id_only() -> None:
    s = pd.Series(["a", "b"], index=[10, 20], name="ssn")
    out = pseudonymize(s, KEY, length=32)
    assert list(out.index) == [10, 20]
    assert out.name == "ssn"
    record = out.attrs["veil.masking"][0]
    assert record == {
        "method": "hmac-sha256",
        "key_id": KEY.key_id,
        "namespace": "",
        "normalize": None,
        "length": 32,
    }


def test_missing_values_stay_missing() -> None:
    s = pd.Series(["a", None, np.nan, "a"], dtype=object)
    out = pseudonymize(s, KEY)
    assert out.isna().tolist() == [False, True, True, False]
    arr = pseudonymize(np.array(["a", None], dtype=object), KEY)
    assert arr[1] is None
    string = pd.Series(["a", pd.NA], dtype="string")
    assert pseudonymize(string, KEY).isna().tolist() == [False, True]


def test_integral_floats_pseudonymize_like_integers() -> None:
    ints = pseudonymize(pd.Series([1234, 5678]), KEY)
    floats = pseudonymize(pd.Series([1234.0, np.nan, 5678.0]), KEY)
    assert floats[0] == ints[0]
    assert floats[2] == ints[1]
    assert pd.isna(floats[1])


@pytest.mark.parametrize(
    ("normalize", "same"),
    [
        (None, []),
        ("case", [("Ann Lee", "ann lee")]),
        ("whitespace", [(" Ann  Lee ", "Ann Lee")]),
        ("both", [(" ANN\tlee", "ann lee"), ("Ann Lee", "ann lee")]),
    ],
)
def test_normalisation(normalize: str | None, same: list[tuple[str, str]]) -> None:
    values = ["Ann Lee", "ann lee", " Ann  Lee ", " ANN\tlee"]
    out = dict(zip(values, pseudonymize(values, KEY, normalize=normalize), strict=True))  # type: ignore[arg-type]
    for a, b in same:
        assert out[a] == out[b]
    if normalize is None:
        assert len(set(out.values())) == 4
    if normalize == "case":
        assert out[" Ann  Lee "] != out["Ann Lee"]


def test_namespaces_separate_columns() -> None:
    a = pseudonymize(["x"], KEY, namespace="a")[0]
    b = pseudonymize(["x"], KEY, namespace="b")[0]
    assert a != b
    assert pseudonymize(["x"], KEY, namespace="a")[0] == a


def test_namespace_with_separator_is_refused() -> None:
    # "a|b" + "c" would read like "a" + "b|c".
    with pytest.raises(ParameterError, match="namespace"):
        pseudonymize(["x"], KEY, namespace="a|b")


def test_truncation_keeps_a_prefix() -> None:
    full = pseudonymize(["x"], KEY)[0]
    assert pseudonymize(["x"], KEY, length=20)[0] == full[:20]


@pytest.mark.parametrize("length", [0, 65, 2.5, True, "8"])
def test_bad_length_is_refused(length: object) -> None:
    with pytest.raises(ParameterError, match="length"):
        pseudonymize(["x"], KEY, length=length)  # type: ignore[arg-type]


def test_collision_probability_formula() -> None:
    for m, length in [(10_000, 8), (1_000_000, 16), (100, 4)]:
        expected = 1 - math.exp(-(m**2) / 2 ** (4 * length + 1))
        assert collision_probability(m, length) == pytest.approx(expected, rel=1e-9)
    assert collision_probability(0, 1) == 0.0
    assert collision_probability(10**9, 64) < 1e-50


def test_collision_warning_threshold() -> None:
    # 1000 distinct values: p = 1 - exp(-1e6 / 2^(4L+1)) is 7.3e-6 at L=9 (warn) and
    # 4.5e-7 at L=10 (no warning); repeats do not count.
    values = [str(i) for i in range(1000)] * 3
    assert collision_probability(1000, 9) > 1e-6 > collision_probability(1000, 10)
    with pytest.warns(PrivacyWarning, match="length=9: 1000 distinct values"):
        pseudonymize(values, KEY, length=9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pseudonymize(values, KEY, length=10)
        pseudonymize(values, KEY)


def test_collision_warning_counts_values_after_normalisation() -> None:
    values = [f"ID{i}" for i in range(1000)] + [f"id{i}" for i in range(1000)]
    # 2000 distinct raw values (p = 1.8e-6 at L=10) but 1000 after case folding (4.5e-7).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pseudonymize(values, KEY, length=10, normalize="case")
    with pytest.warns(PrivacyWarning):
        pseudonymize(values, KEY, length=10)


def test_wrong_key_id_is_refused() -> None:
    with pytest.raises(ParameterError, match="wrong key"):
        pseudonymize(["x"], SecretKey.generate(), key_id=KEY.key_id)
    assert pseudonymize(["x"], KEY, key_id=KEY.key_id)[0] == _expected("x")


def test_missing_or_short_key_is_refused() -> None:
    with pytest.raises(ParameterError, match="no key"):
        pseudonymize(["x"], None)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="at least 16 bytes") as info:
        pseudonymize(["x"], b"tooshortkey")
    assert "tooshortkey" not in str(info.value)
    with pytest.raises(ParameterError, match="SecretKey or bytes"):
        pseudonymize(["x"], KEY_BYTES.hex())  # type: ignore[arg-type]


def test_bad_values_are_refused() -> None:
    with pytest.raises(DataTypeError):
        pseudonymize("abc", KEY)
    with pytest.raises(DataTypeError):
        pseudonymize(pd.DataFrame({"a": ["x"]}), KEY)
    with pytest.raises(DataTypeError):
        pseudonymize(np.array([["x"]]), KEY)
    with pytest.raises(ParameterError, match="normalize"):
        pseudonymize(["x"], KEY, normalize="upper")  # type: ignore[arg-type]


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "email": ["a@x.org", "b@x.org", None],
            "backup_email": ["b@x.org", "a@x.org", "c@x.org"],
            "age": [30, 40, 50],
        },
        index=[7, 8, 9],
    )


def test_columns_do_not_link_unless_asked() -> None:
    df = _frame()
    out = pseudonymize_columns(df, ["email", "backup_email"], KEY)
    assert out.loc[7, "email"] != out.loc[8, "backup_email"]
    assert out.loc[7, "email"] == _expected("a@x.org", "email")
    linked = pseudonymize_columns(df, ["email", "backup_email"], KEY, namespace="person")
    assert linked.loc[7, "email"] == linked.loc[8, "backup_email"]
    mapped = pseudonymize_columns(
        df, ["email", "backup_email"], KEY, namespace={"email": "p", "backup_email": "p"}
    )
    assert mapped.loc[7, "email"] == _expected("a@x.org", "p")


def test_frame_input_is_not_mutated_and_other_columns_kept() -> None:
    df = _frame()
    before = df.copy(deep=True)
    out = pseudonymize_columns(df, "email", KEY, length=16)
    pd.testing.assert_frame_equal(df, before)
    assert out is not df
    pd.testing.assert_series_equal(out["age"], df["age"])
    assert list(out.index) == [7, 8, 9]
    assert pd.isna(out.loc[9, "email"])
    out.loc[7, "age"] = -1
    assert df.loc[7, "age"] == 30
    assert out.attrs["veil.masking"][0]["column"] == "email"
    assert out.attrs["veil.masking"][0]["key_id"] == KEY.key_id


def test_series_input_is_not_mutated() -> None:
    s = pd.Series([" A ", "b"])
    before = s.copy()
    pseudonymize(s, KEY, normalize="both")
    pd.testing.assert_series_equal(s, before)


def test_frame_errors_write_nothing() -> None:
    df = _frame()
    before = df.copy(deep=True)
    with pytest.raises(ColumnError, match="nope"):
        pseudonymize_columns(df, ["email", "nope"], KEY)
    with pytest.raises(ParameterError):
        pseudonymize_columns(df, ["email"], b"short")
    with pytest.raises(ParameterError, match="wrong key"):
        pseudonymize_columns(df, ["email"], KEY, key_id="0" * 16)
    pd.testing.assert_frame_equal(df, before)
    assert "veil.masking" not in df.attrs


def test_key_never_appears_in_outputs_reprs_or_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    df = _frame()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = pseudonymize_columns(df, ["email", "backup_email"], KEY, length=4)
        series = pseudonymize(df["email"], KEY_BYTES, length=4)
    texts = [
        out.to_string(),
        out.to_csv(),
        out.to_json(),
        repr(out.attrs),
        repr(series),
        repr(series.attrs),
        repr(KEY),
        str(KEY),
        caplog.text,
        *(str(w.message) for w in caught),
    ]
    errors = []
    for bad in (
        lambda: pseudonymize(["x"], KEY, namespace="a|b"),
        lambda: pseudonymize(["x"], KEY, key_id="f" * 16),
    ):
        with pytest.raises(ParameterError) as info:
            bad()
        errors.append(str(info.value))
    assert caught, "the short length should have warned"
    for text in texts + errors:
        for form in _key_forms(KEY_BYTES):
            assert form not in text
