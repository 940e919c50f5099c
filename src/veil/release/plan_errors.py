"""Plan mistakes, one line each: the field path, the value, what is allowed, a suggestion.

:func:`describe` turns one pydantic error of a plan into a line such as::

    columns.ssn.treatment.method: unknown value 'pseudonymize'; allowed: drop, keep, ...;
    did you mean 'hmac'?

Suggestions come from a table of words custodians use for veil's methods (pseudonymize
is ``hmac``, noise is ``laplace``, a geo Laplace is ``planar_laplace``) and from the
closest allowed spelling. A value that may be a secret is never echoed: fields named
like one (``key``, ``password``, ...), unknown fields, and any value that looks like key
material.
"""

from __future__ import annotations

import difflib
import re
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from veil.masking.keys import looks_like_key_material

__all__ = ["describe", "suggest"]

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


def _members(annotation: Any) -> list[Any]:
    """The types an annotation admits (Annotated, Optional and unions unwrapped)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _members(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [m for a in typing.get_args(annotation) for m in _members(a)]
    return [annotation]


def _tag(model: type[BaseModel]) -> str | None:
    for name in ("method", "model"):
        field = model.model_fields.get(name)
        if field is not None and isinstance(field.default, str):
            return field.default
    return None


def _step(current: Any, part: str | int) -> Any:
    """The type found at ``part`` of a value of type ``current`` (None if unknown)."""
    for member in _members(current):
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
        for m in _members(current)
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
    found = [m for m in _members(current) if isinstance(m, type) and issubclass(m, BaseModel)]
    return list(found[0].model_fields) if len(found) == 1 else []


def _quoted(text: str) -> list[str]:
    return re.findall(r"'([^']*)'", text)


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
    shown = kind not in ("missing", "extra_forbidden") and not _secret(field, value)
    if kind == "extra_forbidden":
        loc = [p for p in error.get("loc", ()) if isinstance(p, (str, int))]
        allowed = _fields_at(root, loc)
        value = field  # the suggestion is for the field's name
        text = "unknown field" + (f"; allowed: {', '.join(allowed)}" if allowed else "")
    elif kind == "union_tag_invalid":
        ctx = error.get("ctx", {})
        value = ctx.get("tag")
        allowed = _quoted(str(ctx.get("expected_tags", "")))
        echo = "" if _secret("", value) else f" {value!r}"
        text = f"unknown value{echo}; allowed: {', '.join(allowed)}"
        shown = False  # already in the text, or a secret
    elif kind == "literal_error":
        allowed = _quoted(str(error.get("ctx", {}).get("expected", "")))
        text = f"must be one of {', '.join(allowed)}"
    if shown and not isinstance(value, (Mapping, list)):
        text += f" (got {value!r})"
    guess = None if _secret("", value) else suggest(value, allowed)
    return f"{where}: {text}" + (f"; did you mean {guess!r}?" if guess else "")
