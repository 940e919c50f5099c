"""Redaction and partial masking, with format-aware masks for e-mail, phone and card numbers.

These are display masks: one-way, not keyed, and they keep part of the value on
purpose (the last digits of a card, the domain of an e-mail), which is what a call-centre
screen needs and what an analyst must not mistake for anonymisation. The kept part
narrows the candidates for a value; it does not hide it among all values.

Every function takes a pandas Series (returning a Series with the same index and name)
or a sequence / NumPy array (returning a NumPy object array); missing values stay
missing. The work runs on pandas string methods over the whole column.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from veil.errors import DataTypeError, ParameterError
from veil.masking.unicode_digits import ascii_digits

__all__ = ["mask_card", "mask_email", "mask_partial", "mask_phone", "redact"]

_EMAIL = r"^[^@\s]+@[^@\s]+$"
# 13 to 19 digits, optionally grouped by single spaces or hyphens, not inside a longer
# digit run.
_CARD = re.compile(r"(?<![0-9])[0-9](?:[ -]?[0-9]){12,18}(?![0-9])")


def _as_strings(values: Any) -> tuple[pd.Series, Any]:
    """``values`` as a nullable string Series, and what to rebuild the output from."""
    if isinstance(values, pd.DataFrame):
        raise DataTypeError("values: got a DataFrame; pass one column (a Series) at a time")
    if isinstance(values, pd.Series):
        original: Any = values
    elif isinstance(values, (str, bytes)):
        raise DataTypeError("values: must be a sequence of values, got a single string")
    else:
        original = np.asarray(values, dtype=object)
        if original.ndim != 1:
            raise DataTypeError(f"values: must be one-dimensional, got shape {original.shape}")
    series = pd.Series(original, copy=False)
    return series.astype("string"), original


def _output(masked: pd.Series, original: Any) -> Any:
    """Masked strings shaped like the input: missing values keep their own marker."""
    if isinstance(original, pd.Series):
        if isinstance(original.dtype, pd.StringDtype):
            result = masked.astype(original.dtype)
        else:
            result = masked.astype(object).where(masked.notna(), original)
        result.index = original.index
        result.name = original.name
        return result
    out = masked.astype(object).to_numpy(copy=True)
    missing = masked.isna().to_numpy()
    out[missing] = original[missing]
    return out


def _check_mask_char(mask_char: Any) -> str:
    if not isinstance(mask_char, str) or len(mask_char) != 1:
        raise ParameterError(f"mask_char: must be a single character, got {mask_char!r}")
    return mask_char


def _check_keep(keep_last: Any) -> int:
    if isinstance(keep_last, bool) or not isinstance(keep_last, (int, np.integer)) or keep_last < 0:
        raise ParameterError(f"keep_last: must be an integer >= 0, got {keep_last!r}")
    return int(keep_last)


def _repeat(mask_char: str, counts: pd.Series) -> pd.Series:
    filler = pd.Series(mask_char, index=counts.index, dtype="string")
    return filler.str.repeat(counts.fillna(0).astype("int64").tolist())


def redact(values: Any, replacement: str = "[REDACTED]") -> Any:
    """Replace every non-missing value with ``replacement``.

    Examples
    --------
    >>> redact(["Ann", None]).tolist()
    ['[REDACTED]', None]
    """
    if not isinstance(replacement, str):
        raise ParameterError(f"replacement: must be a string, got {type(replacement).__name__}")
    strings, original = _as_strings(values)
    return _output(strings.mask(strings.notna(), replacement), original)


def mask_partial(values: Any, keep_last: int = 4, mask_char: str = "*") -> Any:
    """Mask all but the last ``keep_last`` characters, keeping the length.

    A value of ``keep_last`` characters or fewer is masked entirely: showing its "last
    n" would show all of it.

    Examples
    --------
    >>> mask_partial(["4111111111111111", "123", None]).tolist()
    ['************1111', '***', None]
    """
    keep = _check_keep(keep_last)
    char = _check_mask_char(mask_char)
    strings, original = _as_strings(values)
    lengths = strings.str.len()
    shown = (lengths > keep).fillna(False)
    tail = strings.str.slice(start=-keep) if keep else pd.Series("", index=strings.index)
    tail = tail.where(shown, "")
    n_masked = lengths.where(~shown, lengths - keep)
    masked = _repeat(char, n_masked) + tail
    return _output(masked.where(strings.notna()), original)


def mask_email(values: Any, mask_char: str = "*") -> Any:
    """Keep the first character of the local part and the domain: ``j***@example.com``.

    The masked local part is always three ``mask_char`` long, so its length is not
    shown. A value that is not an e-mail address (no single ``@`` with text on both
    sides) is masked entirely, keeping its length.

    Examples
    --------
    >>> mask_email(["jane.doe@example.com", "not an address"]).tolist()
    ['j***@example.com', '**************']
    """
    char = _check_mask_char(mask_char)
    strings, original = _as_strings(values)
    is_email = strings.str.match(_EMAIL).fillna(False).astype(bool)
    masked = strings.str.replace(r"^([^@])[^@]*@", lambda m: f"{m.group(1)}{char * 3}@", regex=True)
    whole = _repeat(char, strings.str.len())
    return _output(masked.where(is_email, whole).where(strings.notna()), original)


def mask_phone(values: Any, keep_last: int = 4, mask_char: str = "*") -> Any:
    """Mask every digit but the last ``keep_last``, keeping separators and layout.

    ``"+1 (555) 123-4567"`` becomes ``"+* (***) ***-4567"``. A number with
    ``keep_last`` digits or fewer has all its digits masked. Digits of any script count
    (full-width ``５５５``, Arabic-Indic ...): a value holding such digits is returned in
    NFKC with ASCII digits (:func:`veil.masking.unicode_digits.ascii_digits`).

    Examples
    --------
    >>> mask_phone(["+1 (555) 123-4567", "555 0100"]).tolist()
    ['+* (***) ***-4567', '*** 0100']
    """
    keep = _check_keep(keep_last)
    char = _check_mask_char(mask_char)
    strings, original = _as_strings(values)
    strings = ascii_digits(strings)
    # A digit followed by at least `keep` more digits is not among the last `keep`.
    followed = rf"\d(?=(?:\D*\d){{{keep}}})" if keep else r"\d"
    masked = strings.str.replace(followed, char, regex=True)
    few = (strings.str.count(r"\d") <= keep).fillna(False).astype(bool)
    masked = masked.where(~few, strings.str.replace(r"\d", char, regex=True))
    return _output(masked, original)


def _luhn_valid(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def mask_card(
    values: Any, keep_last: int = 4, mask_char: str = "*", *, require_luhn: bool = False
) -> Any:
    """Mask card numbers, keeping the last ``keep_last`` digits and the grouping.

    Every run of 13 to 19 digits (optionally grouped by single spaces or hyphens) is a
    card number, wherever it appears in the text, so ``"card 4111 1111 1111 1111"``
    becomes ``"card **** **** **** 1111"``. By default no Luhn check is made: masking a
    number that is not a card costs little, leaving a mistyped card visible costs more.
    ``require_luhn=True`` masks only Luhn-valid runs. Text outside the runs is kept.
    Digits of any script count: ``"４１１１ １１１１ １１１１ １１１１"`` (full-width) is a
    card too, and a value holding such digits is returned in NFKC with ASCII digits
    (:func:`veil.masking.unicode_digits.ascii_digits`).

    Examples
    --------
    >>> mask_card(["4111-1111-1111-1111", "order 12"]).tolist()
    ['****-****-****-1111', 'order 12']
    """
    keep = _check_keep(keep_last)
    char = _check_mask_char(mask_char)
    strings, original = _as_strings(values)
    strings = ascii_digits(strings)

    def _mask(match: re.Match[str]) -> str:
        run = match.group(0)
        digits = re.sub(r"[^0-9]", "", run)
        if require_luhn and not _luhn_valid(digits):
            return run
        to_mask = len(digits) - keep
        out: list[str] = []
        for ch in run:
            if "0" <= ch <= "9" and to_mask > 0:
                out.append(char)
                to_mask -= 1
            else:
                out.append(ch)
        return "".join(out)

    masked = strings.str.replace(_CARD, _mask, regex=True)
    return _output(masked, original)
