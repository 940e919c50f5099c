"""The HTML of the release report: the page skeleton (inline style sheet and a
Content-Security-Policy that allows only inline styles and ``data:`` images), escaping,
and the text and table formatting every section uses.

Tables fit the page at any width: they never grow wider than the text column, and long
cells wrap (``overflow-wrap: anywhere``) instead of pushing a column off the edge. Links
to definitions elsewhere are plain anchors: following one is the reader's choice, the
page itself loads nothing.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import numpy as np

from veil.errors import VeilError

_CSS: Final[str] = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#222;
background:#fafafa;line-height:1.45}
header{background:#263238;color:#fff;padding:1.2em 2em}
header h1{margin:0 0 .2em 0;font-size:1.6em}
nav{background:#eceff1;padding:.5em 2em;position:sticky;top:0;border-bottom:1px solid #cfd8dc}
nav a{margin-right:1.1em;color:#263238;text-decoration:none;font-size:.92em}
main{padding:0 2em 3em 2em;max-width:1200px}
section{margin-top:2em}
h2{border-bottom:2px solid #cfd8dc;padding-bottom:.2em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em;background:#fff;max-width:100%}
table.full{width:100%}
th,td{border:1px solid #cfd8dc;padding:.3em .6em;text-align:left;vertical-align:top}
td{overflow-wrap:anywhere}
th{background:#eceff1;overflow-wrap:break-word}
table.fixed{table-layout:fixed}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.notice{background:#fff8e1;border-left:4px solid #ffb300;padding:.6em 1em;margin-top:1.2em}
.verdict{background:#fff;border:1px solid #cfd8dc;padding:.4em 1.2em 1em 1.2em}
.verdict h3{margin:.8em 0 .3em 0;font-size:1.05em}
.verdict ul{margin:.2em 0;padding-left:1.3em}
.flag{border-left:4px solid #c62828;background:#ffebee;padding:.4em .8em;margin:.4em 0;
list-style:none}
.ok{border-left:4px solid #2e7d32;background:#e8f5e9;padding:.4em .8em;margin:.4em 0}
ul.flags{padding-left:0}
.change{display:block;margin-top:.2em}
.error{color:#b71c1c}
.muted{color:#607d8b;font-size:.9em}
ul.defs{color:#455a64;font-size:.88em;margin:.3em 0;padding-left:1.2em}
dl.glossary dt{font-weight:600;margin-top:.6em}
dl.glossary dd{margin:0 0 0 1.2em}
.grid{display:flex;flex-wrap:wrap;gap:1em}
figure{margin:0;background:#fff;border:1px solid #cfd8dc;padding:.4em;max-width:100%}
figcaption{font-size:.88em;color:#37474f;max-width:480px}
img{max-width:100%;height:auto;display:block}
code{background:#eceff1;padding:0 .2em;overflow-wrap:anywhere}
details{margin:.6em 0}
"""


class _Raw(str):
    """Markup built by the report itself from escaped parts: table cells keep it as is."""

    __slots__ = ()


def _e(value: Any) -> str:
    return html.escape(_text(value), quote=True)


def _link(anchor: str, text: str) -> _Raw:
    """An in-page link to ``#anchor`` (a definition or a section)."""
    return _Raw(f'<a href="#{html.escape(anchor, quote=True)}">{html.escape(text)}</a>')


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (Mapping, list, tuple)):
        return json.dumps(value, default=str, ensure_ascii=False, sort_keys=False)
    return str(value)


def _fmt(value: Any) -> str:
    """A cell value as (unescaped) text."""
    if value is None:
        return "—"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isnan(v):
            return "n/a"
        if math.isinf(v):
            return "∞" if v > 0 else "-∞"
        return f"{v:.4g}"
    return _text(value)


def _pct(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    return f"{100.0 * value:.2f} %"


def _share(value: float) -> str:
    """A share in plain words: ``43 %``, ``0.4 %``, ``0 %``."""
    if not math.isfinite(value):
        return "—"
    percent = 100.0 * value
    if percent == 0 or percent >= 10:
        return f"{percent:.0f} %"
    return f"{percent:.2g} %"


def _names(values: Sequence[Any], limit: int = 12) -> str:
    """Column names or values as a short list in words: ``a, b and c``."""
    items = [_text(v) for v in values]
    if len(items) > limit:
        items = [*items[:limit], f"{len(values) - limit} more"]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _describe(value: Any) -> str:
    """A manifest value as one line of text."""
    if isinstance(value, Mapping):
        return (
            "; ".join(
                f"{k} = {_fmt(v) if not isinstance(v, (Mapping, list)) else _text(v)}"
                for k, v in value.items()
                if v is not None
            )
            or "—"
        )
    if isinstance(value, (list, tuple)):
        return "; ".join(_describe(v) for v in value) or "none"
    return _fmt(value)


def _cell(value: Any) -> str:
    if isinstance(value, _Raw):
        return f"<td>{value}</td>"
    numeric = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )
    cls = ' class="num"' if numeric else ""
    return f"<td{cls}>{html.escape(_fmt(value), quote=True)}</td>"


def _table(
    header: Sequence[Any],
    rows: Sequence[Sequence[Any]],
    *,
    full: bool = False,
    widths: Sequence[int] | None = None,
) -> str:
    """An HTML table.

    ``full`` spans the text column (for tables with long text cells); ``widths`` (percent
    per column) fixes the layout, so that no column can push another off the page.
    """
    head = "".join(f"<th>{h if isinstance(h, _Raw) else _e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in rows)
    classes = (["full"] if full or widths else []) + (["fixed"] if widths else [])
    cls = f' class="{" ".join(classes)}"' if classes else ""
    cols = (
        "<colgroup>" + "".join(f'<col style="width:{w}%">' for w in widths) + "</colgroup>"
        if widths
        else ""
    )
    return f"<table{cls}>{cols}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _p(text: str, cls: str | None = None) -> str:
    attr = f' class="{cls}"' if cls else ""
    return f"<p{attr}>{html.escape(text, quote=True)}</p>"


def _attempt(build: Callable[[], str]) -> str:
    """The section part ``build`` makes, or why it could not be computed."""
    try:
        return build()
    except (VeilError, ValueError, TypeError) as exc:
        return _p(f"Not computed: {exc}", "error")


def _page(title: str, sections: Sequence[tuple[str, str, str]]) -> str:
    nav = "".join(
        f'<a href="#{anchor}">{html.escape(heading)}</a>' for anchor, heading, _ in sections
    )
    body = "".join(
        f'<section id="{anchor}"><h2>{html.escape(heading)}</h2>{content}</section>'
        for anchor, heading, content in sections
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "img-src data:; style-src 'unsafe-inline'\">"
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>"
        f"<header><h1>{_e(title)}</h1><div>made by veil; self-contained, no network "
        "needed</div></header>"
        f"<nav>{nav}</nav><main>"
        '<div class="notice">This report is computed from the original records: it shows '
        "their distributions, risk figures and locations. Keep it as confidential as the "
        "original data; publish the release files, not this page, unless it has been "
        "reviewed.</div>"
        f"{body}</main></body></html>\n"
    )
