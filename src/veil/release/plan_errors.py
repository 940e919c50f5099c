"""Plan mistakes, one line each: the field path, the value, what is allowed, a suggestion.

:func:`describe` turns one pydantic error of a plan into a line such as::

    columns.ssn.treatment.method: unknown value 'pseudonymize'; allowed: drop, keep, ...;
    did you mean 'hmac'?

Suggestions come from a table of words custodians use for veil's methods (pseudonymize
is ``hmac``, noise is ``laplace``, a geo Laplace is ``planar_laplace``) and from the
closest allowed spelling. A value that may be a secret is never echoed: fields named
like one (``key``, ``password``, ...), unknown fields, and any value that looks like key
material. A long value is never echoed in full (:func:`shown`): a 400-digit number or a
pasted paragraph is cut, and its size said.
"""

from __future__ import annotations

import difflib
import math
import re
import sys
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from veil.masking.keys import looks_like_key_material
from veil.release.schema import members

__all__ = ["clip", "clip_words", "describe", "shown", "suggest"]

# Field names whose values may be secrets: never echoed in an error.
_SECRET_WORDS = ("key", "secret", "password", "passwd", "token", "salt", "credential")
# What custodians call veil's methods, by the method they mean. A word is suggested only
# where its target is allowed (``laplace`` for a mask means ``planar_laplace``).
_SYNONYMS: Mapping[str, tuple[str, ...]] = {
    "hmac": ("pseudonymize", "pseudonymise", "pseudonym", "pseudonymization", "hash", "sha256"),
    "token": ("tokenize", "tokenise", "tokenization", "vault", "tokens"),
    "ff1": ("fpe", "encrypt", "format_preserving", "format_preserving_encryption"),
    "redact": ("mask", "blank", "remove_value", "scrub"),
    "drop": ("delete", "remove", "exclude", "omit"),
    "keep": ("none", "raw", "as_is", "pass", "passthrough"),
    "generalize": ("generalise", "generalization", "hierarchy", "recode", "bin", "coarsen"),
    "laplace": ("noise", "dp", "ldp", "laplacian", "add_noise"),
    "gaussian": ("gauss", "normal"),
    "randomized_response": ("rr", "randomised_response", "random_response", "flip"),
    "exponential": ("exp", "exponential_mechanism"),
    "planar_laplace": ("laplace", "geo_indistinguishability", "geoind", "geo_laplace", "noise"),
    "grid": ("aggregate", "snap", "round", "cells"),
    "jitter": ("displace", "perturb", "random_displacement"),
    "donut": ("annulus", "donut_mask"),
    "cloak": ("quadtree", "k_anonymity", "cloaking", "spatial_cloaking"),
    "k_anonymity": ("k", "kanonymity", "k_anon", "kanon"),
    "distinct_l_diversity": ("l_diversity", "ldiversity", "l"),
    "t_closeness": ("tcloseness", "t"),
    "quasi_identifier": ("qi", "quasi", "quasi_identifiers", "quasiidentifier"),
    "identifier": ("id", "direct_identifier", "direct"),
    "sensitive": ("sa", "sensitive_attribute", "confidential"),
    "insensitive": ("other", "non_sensitive", "public"),
}
_WORD = {alias: target for target, aliases in _SYNONYMS.items() for alias in aliases}
_LOG2 = math.log10(2)
# The longest text of a value (or of a field name) a message quotes in full.
_LONGEST = 60
# What a strict type error says, by pydantic's error type, and what each kind of value is.
_EXPECTED = {
    "float_type": "a number",
    "int_type": "an integer",
    "bool_type": "true or false",
    "string_type": "text",
    "tuple_type": "a list",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
}
_GIVEN = {bool: "true or false", str: "text", list: "a list", dict: "a mapping"}


def clip(text: str, limit: int = _LONGEST) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was.

    Examples
    --------
    >>> clip("abc")
    'abc'
    >>> clip("x" * 100, 10)
    'xxxxxxxxx… (100 characters)'
    """
    if len(text) <= limit:
        return text
    # One ellipsis character: three dots would split a dotted field path.
    return f"{text[: max(limit - 1, 1)]}… ({len(text)} characters)"


def clip_words(text: str, limit: int = 2 * _LONGEST) -> str:
    """``text`` with every word (a run without spaces) over ``limit`` characters cut.

    The last guard of a plan's messages: a value a check quoted whole (a column name of
    10 000 characters, a number of 400 digits) is cut however the check wrote it.

    Examples
    --------
    >>> clip_words("columns.age: got " + "9" * 400, 20)
    'columns.age: got 9999999999999999999… (400 characters)'
    """
    return re.sub(rf"\S{{{limit + 1},}}", lambda m: clip(m.group(0), limit), text)


def _beyond_float(value: Any) -> bool:
    return (
        isinstance(value, int) and not isinstance(value, bool) and abs(value) > sys.float_info.max
    )


def shown(value: Any) -> str:
    """``repr(value)`` for a message: long values cut (:func:`clip`), huge integers sized.

    Python cannot print an integer of more than 4300 digits, and a message should not
    print one of 400: an integer of more than 40 digits is said by its length.

    Examples
    --------
    >>> shown(10**400)
    'an integer of 401 digits'
    >>> shown(0.5)
    '0.5'
    """
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**40:
        bits = value.bit_length()
        # str() of an integer of more than 4300 digits raises; its size is then estimated.
        digits = str(len(str(abs(value)))) if bits < 14_000 else f"about {int(bits * _LOG2):,}"
        return f"{'a negative' if value < 0 else 'an'} integer of {digits} digits"
    if isinstance(value, bool):
        return "true" if value else "false"  # as YAML writes them
    return clip(repr(value))


def _normal(text: str) -> str:
    return re.sub(r"[\s\-]+", "_", text.strip().lower())


def suggest(value: Any, allowed: Sequence[str]) -> str | None:
    """The allowed value a mistaken ``value`` most likely meant, or None.

    Examples
    --------
    >>> suggest("pseudonymize", ["drop", "hmac", "laplace"])
    'hmac'
    >>> suggest("laplace", ["planar_laplace", "grid", "cloak"])
    'planar_laplace'
    >>> suggest("quasi_identifer", ["identifier", "quasi_identifier", "sensitive"])
    'quasi_identifier'
    """
    if not isinstance(value, str) or not allowed:
        return None
    word = _normal(value)
    if word in allowed:
        return word
    for target in (_WORD.get(word), *(t for t, aliases in _SYNONYMS.items() if word in aliases)):
        if target is not None and target in allowed:
            return target
    close = difflib.get_close_matches(word, list(allowed), n=1, cutoff=0.6)
    return close[0] if close else None


def _tag(model: type[BaseModel]) -> str | None:
    for name in ("method", "model"):
        field = model.model_fields.get(name)
        if field is not None and isinstance(field.default, str):
            return field.default
    return None


def _step(current: Any, part: str | int) -> Any:
    """The type found at ``part`` of a value of type ``current`` (None if unknown)."""
    for member in members(current):
        origin = typing.get_origin(member)
        if isinstance(member, type) and issubclass(member, BaseModel):
            field = member.model_fields.get(str(part))
            if field is not None:
                return field.annotation
        elif origin in (list, tuple) and isinstance(part, int):
            return typing.get_args(member)[0]
        elif origin is dict:
            return typing.get_args(member)[1]
    tagged = [
        m
        for m in members(current)
        if isinstance(m, type) and issubclass(m, BaseModel) and _tag(m) == part
    ]
    return tagged[0] if tagged else None


def _fields_at(root: type[BaseModel], loc: Sequence[str | int]) -> list[str]:
    """The field names of the section at ``loc`` (where an unknown field was given)."""
    current: Any = root
    for part in loc[:-1]:
        current = _step(current, part)
        if current is None:
            return []
    found = [m for m in members(current) if isinstance(m, type) and issubclass(m, BaseModel)]
    return list(found[0].model_fields) if len(found) == 1 else []


def _quoted(text: str) -> list[str]:
    return re.findall(r"'([^']*)'", text)


def _literals(expected: str) -> list[str]:
    """The values of pydantic's ``expected`` text: ``'a', 'b' or 'c'``, or ``1``."""
    return [part.strip().strip("'") for part in re.split(r", | or ", expected) if part.strip()]


def _secret(field: str, value: Any) -> bool:
    if any(word in field.lower() for word in _SECRET_WORDS):
        return True
    return isinstance(value, str) and looks_like_key_material(value.strip())


def describe(error: Mapping[str, Any], where: str, root: type[BaseModel]) -> str:
    """One line for one pydantic error of a plan (``where`` is its dotted field path)."""
    kind = str(error.get("type", ""))
    value = error.get("input")
    field = where.rsplit(".", 1)[-1]
    text = str(error.get("msg", "invalid")).removeprefix("Value error, ")
    allowed: list[str] = []
    echo_value = kind not in ("missing", "extra_forbidden") and not _secret(field, value)
    if kind == "extra_forbidden":
        loc = [p for p in error.get("loc", ()) if isinstance(p, (str, int))]
        allowed = _fields_at(root, loc)
        value = field  # the suggestion is for the field's name
        text = "unknown field" + (f"; allowed: {', '.join(allowed)}" if allowed else "")
        if _secret("", field):  # a key pasted as a field's name
            parent = where.rsplit(".", 1)[0] + "." if "." in where else ""
            where = parent + "(a name that looks like key material, not shown)"
    elif kind == "union_tag_invalid":
        ctx = error.get("ctx", {})
        value = ctx.get("tag")
        allowed = _quoted(str(ctx.get("expected_tags", "")))
        echo = "" if _secret("", value) else f" {shown(value)}"
        text = f"unknown value{echo}; allowed: {', '.join(allowed)}"
        echo_value = False  # already in the text, or a secret
    elif kind == "literal_error":
        allowed = _literals(str(error.get("ctx", {}).get("expected", "")))
        text = f"must be {'one of ' if len(allowed) > 1 else ''}{', '.join(allowed)}"
    elif kind == "is_instance_of" and error.get("ctx", {}).get("class") == "Path":
        blank = isinstance(value, str) and not value.strip()
        text = "must be a path" + (", not empty" if blank else "")
    elif kind in _EXPECTED:
        text = f"must be {_EXPECTED[kind]}"
        given = _GIVEN.get(type(value))
        if given is not None and given != _EXPECTED[kind]:
            text += f", not {given}"
        if kind == "float_type" and _beyond_float(value):
            text += " within the range of a float (about ±1.8e308)"
    if echo_value and not isinstance(value, (Mapping, list)):
        text += f" (got {shown(value)})"
    guess = None if _secret("", value) else suggest(value, allowed)
    return f"{where}: {text}" + (f"; did you mean {guess!r}?" if guess else "")
