"""What every section of a release plan is built from: the base model and its field types.

The plan (:mod:`veil.release.plan`) assembles the sections; each step kind
(:mod:`veil.release.steps`) declares the spec of its own treatment with these pieces, so
a spec, its planned cost and how it runs live in one module.

Types are strict in every section, because :class:`SpecModel` says so once: a bool is not
a number (``k: true`` is not 1), a string is neither a number nor a bool (``epsilon:
'1'``, ``allow_data_dependent_allocation: 'yes'`` are refused), a float is not an
integer. What a plan read from YAML cannot hold is still taken in its YAML form: a list
for a tuple (``bounds: [0, 100]``), a string for a path, an integer for a float, and a
NumPy scalar from a calling program as the Python number it holds.
"""

from __future__ import annotations

import os
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationInfo, model_validator

__all__ = [
    "ALLOW_OUTSIDE",
    "CONTAIN",
    "PATH_CONTEXT",
    "Missing",
    "Role",
    "Scalar",
    "SpecModel",
    "members",
    "resolve_path",
    "tagged",
]

Role = Literal["identifier", "quasi_identifier", "sensitive", "insensitive"]
Missing = Literal["error", "keep"]
Scalar = str | int | float | bool

# Keys of the validation context load_plan passes: the plan's folder, whether paths must
# stay inside it, and the caller's permission to leave it.
PATH_CONTEXT = "base_dir"
CONTAIN = "contain"
ALLOW_OUTSIDE = "allow_outside"


def members(annotation: Any) -> list[Any]:
    """The types an annotation admits (Annotated, Optional and unions unwrapped)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return members(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [m for a in typing.get_args(annotation) for m in members(a)]
    return [annotation]


def _shaped(annotation: Any, value: Any) -> Any:
    """``value`` in the container shape ``annotation`` asks for; its scalars untouched.

    A list becomes the tuple a tuple field holds, a string (or path-like) the path a path
    field holds, recursively through lists, tuples and dicts; a NumPy scalar becomes its
    Python value. Nothing else changes, so strict validation still refuses a bool, a
    string or a float given where the field wants a number, a bool or an integer.
    """
    if isinstance(value, np.generic):
        return value.item()
    kinds = members(annotation)
    origins = {typing.get_origin(k) or k: k for k in kinds}
    if isinstance(value, (str, os.PathLike)) and Path in origins and str not in origins:
        # An empty path would read as the plan's own folder: left as text, it is refused.
        return Path(value) if os.fspath(value).strip() else value
    if isinstance(value, list) and tuple in origins:
        args = typing.get_args(origins[tuple])
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_shaped(args[0], v) for v in value)
        if len(args) == len(value):
            return tuple(_shaped(a, v) for a, v in zip(args, value, strict=True))
        return tuple(value)
    if isinstance(value, list) and list in origins:
        (item,) = typing.get_args(origins[list]) or (Any,)
        return [_shaped(item, v) for v in value]
    if isinstance(value, Mapping) and dict in origins:
        args = typing.get_args(origins[dict])
        item = args[1] if len(args) == 2 else Any
        return {k: _shaped(item, v) for k, v in value.items()}
    return value


class SpecModel(BaseModel):
    """A section of a plan: unknown fields are refused, a section never changes, and its
    types are strict (see the module docstring): nothing is coerced but a YAML list into
    a tuple and a string into a path."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _yaml_shapes(cls, data: Any) -> Any:
        # The base's before-validator runs after those of the sections, on their result.
        if not isinstance(data, Mapping):
            return data
        fields = cls.model_fields
        return {
            k: _shaped(fields[k].annotation, v) if isinstance(k, str) and k in fields else v
            for k, v in data.items()
        }


def resolve_path(value: Path | None, info: ValidationInfo) -> Path | None:
    """A relative path taken from the plan file's folder (the context's ``base_dir``).

    When the context asks for containment (a plan read from a file, or given a
    ``base_dir``), the path must stay inside that folder once resolved (``..`` and
    symbolic links followed), unless ``allow_outside``: a plan can then not read
    ``/etc/shadow`` into a manifest or an error.
    """
    if value is None:
        return None
    context = info.context or {}
    path = Path(os.path.expanduser(os.fspath(value)))
    base = context.get(PATH_CONTEXT)
    if not path.is_absolute() and base is not None:
        path = Path(base) / path
    if context.get(CONTAIN) and base is not None and not context.get(ALLOW_OUTSIDE):
        root = Path(base).resolve()
        resolved = path.resolve()
        if resolved != root and root not in resolved.parents:
            raise ValueError(
                "the path is outside the plan's folder; keep the plan's files in its "
                "folder, or allow paths outside it (--allow-outside, or "
                "load_plan(allow_outside=True))"
            )
    return path


def tagged(data: Any, tag: str, allowed: tuple[str, ...]) -> Any:
    """``"keep"`` -> ``{tag: "keep"}``; ``{"laplace": {...}}`` -> ``{tag: "laplace", ...}``."""
    if isinstance(data, str):
        return {tag: data}
    if isinstance(data, Mapping) and tag not in data and len(data) == 1:
        ((name, params),) = data.items()
        if name in allowed:
            if params is None:
                return {tag: name}
            if isinstance(params, Mapping):
                return {tag: name, **params}
    return data
