"""What a step kind declares, and the step the runner runs.

A *step kind* (one module of :mod:`veil.release.steps` per treatment family) knows three
things about its treatments:

* its plan spec (the pydantic model of the treatment, in the same module);
* its planned cost, computed from the spec alone before any data is read
  (:meth:`ColumnKind.planned`, a :class:`LedgerStep` for the ledger);
* how it runs (:meth:`ColumnKind.build`, a :class:`Step`).

A :class:`Step` says what it needs of the table:

* ``"row"``: each record on its own (masking, local-DP noise, a geo mask in a public
  projection): ``apply(frame, generator)`` runs per partition;
* ``"counts"``: its rows part runs per partition, and it needs class counts of the whole
  table by some keys (:class:`Counted`: k-anonymity, grid cells with a minimum count):
  an engine gets them with a group-by (distributed on Dask), and the step turns the
  summed counts into a per-partition finisher;
* ``"table"``: the whole table in memory (quadtree cloaking, a projection chosen from the
  data): ``apply`` runs once on the gathered table.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar

import numpy as np
import pandas as pd

from veil.frames import output_frame
from veil.gate import project
from veil.mechanisms import PrivacyCost

__all__ = [
    "RECORDS",
    "ColumnKind",
    "Counted",
    "Finished",
    "LedgerStep",
    "Need",
    "Step",
    "public_parameters",
    "record_counts",
    "replaced",
]

Need = Literal["row", "counts", "table"]
Apply = Callable[[pd.DataFrame, np.random.Generator], pd.DataFrame]
Finisher = Callable[[pd.DataFrame], pd.DataFrame]

RECORDS = "__veil_records__"
"""Name of the record-count column of class counts (a group-by's sizes)."""


def record_counts(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Records per combination of values of ``columns`` (missing is a value)."""
    sizes = frame.groupby(columns, dropna=False, observed=True, sort=False).size()
    return sizes.rename(RECORDS).reset_index()


def replaced(df: pd.DataFrame, column: str, values: Any) -> pd.DataFrame:
    """A new frame: ``df`` with ``column`` set to ``values`` (``df`` is not modified)."""
    out = output_frame(df)
    out[column] = values
    return out


def public_parameters(spec: Any) -> dict[str, Any]:
    """A spec's parameters as the ledger shows them: its public fields only.

    The release gate's allow-list (:func:`veil.gate.project`) chooses them: never a key
    file, a key variable or a vault's URL; unset fields left out.
    """
    return project(spec)


@dataclass(frozen=True)
class LedgerStep:
    """One step of a plan and what it spends.

    Attributes
    ----------
    scope : str
        The column, ``"lat, lon"`` for a location pair, or ``"table"``.
    step : str
        The treatment, mask or ``"anonymization"``.
    parameters : dict
        The step's public parameters as planned (never a key).
    cost : PrivacyCost or None
        What the mechanism reports it spends; None for steps that make no privacy
        claim (masking, generalization, keeping a column).
    guarantee : str
        One sentence on what the step protects.
    """

    scope: str
    step: str
    parameters: dict[str, Any]
    cost: PrivacyCost | None
    guarantee: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "scope": self.scope,
            "step": self.step,
            "parameters": self.parameters,
            "cost": None if self.cost is None else dataclasses.asdict(self.cost),
            "guarantee": self.guarantee,
        }


@dataclass(frozen=True)
class Finished:
    """What a counted step makes of the whole table's counts.

    ``finish`` runs on each partition after the row steps; ``detail`` says, for the
    custodian record, what the counts showed; ``facts`` are the step's facts for the
    records (the anonymization's levels and metrics, say), or None.
    """

    finish: Finisher
    detail: str
    facts: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Counted:
    """The class counts a step needs: records per combination of ``keys``.

    ``present_only`` counts only the records where every key is present (the cells of
    the located points). ``after_drop``: the finisher runs after the plan's dropped
    columns are removed (the anonymization releases the kept columns).
    ``from_counts(counts, rows)`` gets the counts summed over the table (a
    :data:`RECORDS` column beside the keys) and the number of records.
    """

    keys: tuple[str, ...]
    from_counts: Callable[[pd.DataFrame, int], Finished]
    present_only: bool = False
    after_drop: bool = False


@dataclass(frozen=True)
class Step:
    """One protection step as the runner runs it.

    Attributes
    ----------
    label : str
        ``"age: laplace"``, ``"lat, lon: cloak"``, ``"anonymization"``.
    scope : str
        Where its cost is recorded (the column, ``"lat, lon"`` or ``"table"``).
    need : {"row", "counts", "table"}
        What it needs of the table (see the module docstring).
    apply : callable or None
        ``apply(frame, generator) -> frame``: per partition for ``row`` and
        ``counts`` steps, on the whole table for ``table`` steps; None for a counted
        step with no rows part (the anonymization).
    columns : tuple of str
        The columns it reads and writes (a counting pass skips the row steps that
        touch none of the counted columns).
    counted : Counted or None
        For ``counts`` steps.
    """

    label: str
    scope: str
    need: Need
    apply: Apply | None
    columns: tuple[str, ...] = ()
    counted: Counted | None = field(default=None)


S = TypeVar("S", contravariant=True)


class ColumnKind(Protocol, Generic[S]):
    """A family of column treatments: its planned cost and how it runs."""

    def planned(self, name: str, spec: S) -> LedgerStep:
        """The ledger entry of treating column ``name`` with ``spec`` (no data read)."""
        ...

    def build(self, name: str, spec: S) -> Step | None:
        """The step (keys loaded, hierarchies read), or None if nothing runs."""
        ...
