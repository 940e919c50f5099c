"""Text cells that a spreadsheet would run as formulas, escaped before a CSV is written.

A released CSV is opened in spreadsheets. A cell that starts with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return is read there as a formula (CSV injection), which can
run commands or send the sheet's contents away. OWASP's rule is applied: such a text cell
gets a leading apostrophe (``'=1+1``), which spreadsheets show as text. Only text cells
are touched (object, string and categorical columns); numbers such as ``-5`` stored as
numbers stay numbers.
"""

from __future__ import annotations

import pandas as pd

__all__ = ["FORMULA_PREFIXES", "escape_formulas"]

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
"""Leading characters that make a spreadsheet read a cell as a formula (OWASP)."""

_PATTERN = r"^[=+\-@\t\r]"


def _is_text(series: pd.Series) -> bool:
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return pd.api.types.is_object_dtype(dtype.categories.dtype) or pd.api.types.is_string_dtype(
            dtype.categories.dtype
        )
    return pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype)


def escape_formulas(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """Prefix with ``'`` every text cell that starts like a formula (OWASP's rule).

    Parameters
    ----------
    frame : pandas.DataFrame
        The table about to be written as CSV; not modified.

    Returns
    -------
    escaped : pandas.DataFrame
        A frame with the escaped cells (the same frame when nothing needed escaping;
        escaped columns become object columns).
    counts : dict of str to int
        Cells escaped per column (only columns with at least one).

    Examples
    --------
    >>> import pandas as pd
    >>> out, counts = escape_formulas(pd.DataFrame({"a": ["=1+1", "x"], "n": [-5, 2]}))
    >>> out["a"].tolist(), out["n"].tolist(), counts
    (["'=1+1", 'x'], [-5, 2], {'a': 1})
    """
    counts: dict[str, int] = {}
    replaced: dict[object, pd.Series] = {}
    for name in frame.columns:
        series = frame[name]
        if not _is_text(series):
            continue
        text = series.astype(object)
        try:
            # Non-string cells (numbers, missing) of an object column give NA: no formula.
            matched = text.str.match(_PATTERN, na=False)
        except AttributeError:  # no string cell at all
            continue
        hits = matched.astype(bool)
        n = int(hits.sum())
        if n == 0:
            continue
        escaped = text.copy()
        escaped[hits] = "'" + text[hits].astype(str)
        replaced[name] = escaped
        counts[str(name)] = n
    if not replaced:
        return frame, counts
    out = frame.copy(deep=False)
    for column, escaped_column in replaced.items():
        out[column] = escaped_column
    return out, counts
