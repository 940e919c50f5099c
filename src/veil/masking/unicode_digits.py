"""Digits written in any script, read as ASCII digits before masks and recognizers look.

A card or phone number typed with full-width digits (``４１１１``, common in East Asian
input methods), Arabic-Indic digits (``٤١١١``) or other Unicode decimal digits is the
same number: a pattern that looks only for ``[0-9]`` would leave it in clear. The text is
first put in Unicode normalization form NFKC (full-width and compatibility forms become
their plain equivalents: ``４`` -> ``4``, ``①`` -> ``1``), then every remaining
character of category Nd (decimal digit) becomes the ASCII digit of the same value.
"""

from __future__ import annotations

import re
import unicodedata

import pandas as pd

__all__ = ["ascii_digits"]


# Any decimal digit that is not an ASCII one (Python's ``\d`` matches category Nd).
_OTHER_DIGIT = re.compile(r"(?![0-9])\d")
_NON_ASCII = r"[^\x00-\x7f]"


def _to_ascii(match: re.Match[str]) -> str:
    return chr(0x30 + unicodedata.decimal(match.group(0)))


def ascii_digits(strings: pd.Series) -> pd.Series:
    """``strings`` (a string Series) in NFKC with every decimal digit made ASCII.

    ASCII-only values come back unchanged; missing values stay missing.

    Examples
    --------
    >>> ascii_digits(pd.Series(["４１１１ １１１１", "٤١", "12", None], dtype="string")).tolist()
    ['4111 1111', '41', '12', <NA>]
    """
    # Series.str.isascii is pandas 3 only; a search for a non-ASCII character is in both.
    non_ascii = strings.str.contains(_NON_ASCII, regex=True, na=False).astype(bool)
    if not non_ascii.any():
        return strings
    changed = (
        strings[non_ascii].str.normalize("NFKC").str.replace(_OTHER_DIGIT, _to_ascii, regex=True)
    )
    out = strings.copy()
    out[non_ascii] = changed
    return out
