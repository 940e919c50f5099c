"""Redaction and partial masks: format kept, missing values kept, input not mutated."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.errors import DataTypeError, ParameterError
from veil.masking.redact import mask_card, mask_email, mask_partial, mask_phone, redact


def test_redact_replaces_every_present_value() -> None:
    s = pd.Series(["Ann", None, "Bo"], index=[3, 4, 5], name="name", dtype=object)
    out = redact(s)
    assert out.tolist()[0] == "[REDACTED]"
    assert pd.isna(out[4])
    assert out[5] == "[REDACTED]"
    assert list(out.index) == [3, 4, 5]
    assert out.name == "name"
    assert redact(["a"], replacement="X").tolist() == ["X"]
    with pytest.raises(ParameterError, match="replacement"):
        redact(["a"], replacement=None)  # type: ignore[arg-type]


def test_mask_partial_keeps_last_characters_and_length() -> None:
    out = mask_partial(["4111111111111111", "12345", "1234", "", None], keep_last=4)
    assert out.tolist() == ["************1111", "*2345", "****", "", None]
    assert mask_partial(["abcdef"], keep_last=0, mask_char="#").tolist() == ["######"]
    assert mask_partial(["abcdef"], keep_last=2, mask_char="x").tolist() == ["xxxxef"]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"keep_last": -1}, "keep_last"),
        ({"mask_char": "**"}, "mask_char"),
        ({"keep_last": 1.5}, "keep_last"),
    ],
)
def test_mask_partial_bad_parameters(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        mask_partial(["abc"], **kwargs)  # type: ignore[arg-type]


def test_string_dtype_is_kept_and_missing_stays_missing() -> None:
    for dtype in ("string", "str"):
        s = pd.Series(["abcdef", None], dtype=dtype)
        out = mask_partial(s, keep_last=2)
        assert out.dtype == s.dtype
        assert out[0] == "****ef"
        assert pd.isna(out[1])


def test_numbers_are_masked_as_their_text() -> None:
    out = mask_partial(pd.Series([4111111111111111, 5500000000000004]), keep_last=4)
    assert out.tolist() == ["************1111", "************0004"]


def test_mask_email() -> None:
    values = ["jane.doe@example.com", "x@y.org", "no-at-sign", "two@@ats", None]
    assert mask_email(values).tolist() == [
        "j***@example.com",
        "x***@y.org",
        "**********",
        "********",
        None,
    ]


def test_mask_phone_keeps_format() -> None:
    values = ["+1 (555) 123-4567", "555.123.4567", "0612345678", "911", None]
    assert mask_phone(values).tolist() == [
        "+* (***) ***-4567",
        "***.***.4567",
        "******5678",
        "***",
        None,
    ]
    assert mask_phone(["555-1234"], keep_last=2).tolist() == ["***-**34"]


def test_mask_card_keeps_grouping_and_last_four() -> None:
    values = [
        "4111 1111 1111 1111",
        "4111-1111-1111-1111",
        "4111111111111111",
        "paid with 378282246310005 today",
        "order 123456",  # too short to be a card
        "12345678901234567890",  # 20 digits: not a card run
        None,
    ]
    assert mask_card(values).tolist() == [
        "**** **** **** 1111",
        "****-****-****-1111",
        "************1111",
        "paid with ***********0005 today",
        "order 123456",
        "12345678901234567890",
        None,
    ]


def test_mask_card_luhn_option() -> None:
    values = ["4111111111111111", "4111111111111112"]  # valid, invalid
    assert mask_card(values).tolist() == ["************1111", "************1112"]
    assert mask_card(values, require_luhn=True).tolist() == [
        "************1111",
        "4111111111111112",
    ]


def test_inputs_are_not_mutated() -> None:
    s = pd.Series(["jane@example.com", "4111 1111 1111 1111", None], dtype=object)
    before = s.copy()
    arr = np.array(["555-123-4567", None], dtype=object)
    arr_before = arr.copy()
    for fn in (redact, mask_partial, mask_email, mask_phone, mask_card):
        out = fn(s)
        assert out is not s
        pd.testing.assert_series_equal(s, before)
        fn(arr)
        assert (arr == arr_before).all()


def test_array_input_gives_array_output() -> None:
    out = mask_phone(np.array(["555-123-4567", None], dtype=object))
    assert isinstance(out, np.ndarray)
    assert out.tolist() == ["***-***-4567", None]


def test_bad_values_are_refused() -> None:
    with pytest.raises(DataTypeError):
        redact("abc")
    with pytest.raises(DataTypeError):
        mask_partial(pd.DataFrame({"a": ["x"]}))
    with pytest.raises(DataTypeError):
        mask_email(np.array([["a@b.c"]]))


# Full-width (U+FF10..U+FF19) and Arabic-Indic (U+0660..U+0669) digits.
FULL_WIDTH_CARD = "４１１１ １１１１ １１１１ １１１１"
ARABIC_INDIC_CARD = "٤١١١-١١١١-١١١١-١١١١"


@pytest.mark.parametrize("card", [FULL_WIDTH_CARD, ARABIC_INDIC_CARD, "４１１１1111１１１１1111"])
def test_mask_card_reads_digits_of_any_script(card: str) -> None:
    out = mask_card([card, f"paid with {card} today"]).tolist()
    assert out[0].endswith("1111") and out[0].count("*") == 12
    assert out[1].startswith("paid with ") and out[1].count("*") == 12
    for text in out:
        assert not any(ch.isdigit() and not ch.isascii() for ch in text)
    assert mask_card([card], require_luhn=True).tolist()[0].count("*") == 12


def test_mask_phone_reads_digits_of_any_script() -> None:
    out = mask_phone(["＋１ (５５５) １２３-４５６７", "+1 (٥٥٥) ١٢٣-٤٥٦٧"]).tolist()
    assert out == ["+* (***) ***-4567", "+* (***) ***-4567"]


def test_only_non_ascii_values_are_normalized() -> None:
    values = pd.Series(["card 4111 1111 1111 1111", "ﬁle 12", "a\u00a0b 12", None], dtype=object)
    out = mask_card(values)
    assert out.tolist() == ["card **** **** **** 1111", "file 12", "a b 12", None]
