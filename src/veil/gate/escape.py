"""Text that a spreadsheet would run as a formula, escaped before a CSV leaves veil.

A released CSV is opened in spreadsheets. A cell that starts with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return is read there as a formula (CSV injection), which can
run commands or send the sheet's contents away; a column *name* is a cell of the first
row and runs the same way. OWASP's rule is applied to both: such text gets a leading
apostrophe (``'=1+1``), which spreadsheets show as text.

Only text is touched (object, string and categorical columns, and the names): numbers
such as ``-5`` stored as numbers stay numbers, and text that is only a signed number
(``"-5"``, ``"+1.5e3"`` of a column read as text) is a number to a spreadsheet, never a
formula, so it is left as it is too.
"""

from __future__ import annotations

from collections.abc import Hashable

import pandas as pd

__all__ = ["FORMULA_PREFIXES", "HEADER", "escape_formulas", "escape_text"]

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
"""Leading characters that make a spreadsheet read a cell as a formula (OWASP)."""

HEADER = "(header)"
"""Key of the escaped column names in the counts :func:`escape_formulas` returns."""

_PATTERN = r"^[=+\-@\t\r]"
_SIGNED_NUMBER = r"^[+-](?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$"


def escape_text(text: str) -> str:
    """``text`` with a leading apostrophe if a spreadsheet would run it as a formula.

    Examples
    --------
    >>> escape_text("=HYPERLINK(1)"), escape_text("-5"), escape_text("age")
    ("'=HYPERLINK(1)", '-5', 'age')
    """
    series = pd.Series([text], dtype=object)
    hit = series.str.match(_PATTERN, na=False) & ~series.str.match(_SIGNED_NUMBER, na=False)
    return "'" + text if bool(hit.iloc[0]) else text


def _is_text(series: pd.Series) -> bool:
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return pd.api.types.is_object_dtype(dtype.categories.dtype) or pd.api.types.is_string_dtype(
            dtype.categories.dtype
        )
    return pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype)


def _escaped_column(series: pd.Series) -> tuple[pd.Series, int] | None:
    """The column with its formula cells escaped and their count, or None if none is."""
    text = series.astype(object)
    try:
        # Non-string cells (numbers, missing) of an object column give NA: no formula.
        formula = text.str.match(_PATTERN, na=False).astype(bool)
    except AttributeError:  # no string cell at all
        return None
    if not formula.any():
        return None
    hits = formula & ~text.str.match(_SIGNED_NUMBER, na=False).astype(bool)
    n = int(hits.sum())
    if n == 0:
        return None
    escaped = text.copy()
    escaped[hits] = "'" + text[hits].astype(str)
    return escaped, n


def escape_formulas(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """Prefix with ``'`` every text cell and column name that starts like a formula.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table about to be written as CSV; not modified.

    Returns
    -------
    escaped : pandas.DataFrame
        ``frame`` itself when nothing needed escaping, else a frame with the escaped
        cells (escaped columns become object columns) and names.
    counts : dict of str to int
        Cells escaped per column (only columns with at least one), and under
        :data:`HEADER` the number of column names escaped.

    Examples
    --------
    >>> import pandas as pd
    >>> out, counts = escape_formulas(pd.DataFrame({"a": ["=1+1", "x"], "n": [-5, 2]}))
    >>> out["a"].tolist(), out["n"].tolist(), counts
    (["'=1+1", 'x'], [-5, 2], {'a': 1})
    >>> out, counts = escape_formulas(pd.DataFrame({"=cmd()": [1]}))
    >>> list(out.columns), counts
    (["'=cmd()"], {'(header)': 1})
    """
    counts: dict[str, int] = {}
    replaced: dict[Hashable, pd.Series] = {}
    for name in frame.columns:
        series = frame[name]
        if not _is_text(series):
            continue
        found = _escaped_column(series)
        if found is not None:
            replaced[name], counts[str(name)] = found
    names = [escape_text(c) if isinstance(c, str) else c for c in frame.columns]
    renamed = sum(a != b for a, b in zip(names, frame.columns, strict=True))
    if renamed:
        counts[HEADER] = renamed
    if not replaced and not renamed:
        return frame, counts
    out = frame.copy(deep=False)
    for column, escaped_column in replaced.items():
        out[column] = escaped_column
    if renamed:
        out.columns = pd.Index(names)
    return out, counts
