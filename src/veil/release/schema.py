"""What every section of a release plan is built from: the base model and its field types.

The plan (:mod:`veil.release.plan`) assembles the sections; each step kind
(:mod:`veil.release.steps`) declares the spec of its own treatment with these pieces, so
a spec, its planned cost and how it runs live in one module.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationInfo

__all__ = [
    "ALLOW_OUTSIDE",
    "CONTAIN",
    "PATH_CONTEXT",
    "Missing",
    "Role",
    "Scalar",
    "SpecModel",
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


class SpecModel(BaseModel):
    """A section of a plan: unknown fields are refused, and a section never changes."""

    model_config = ConfigDict(extra="forbid", frozen=True)


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
