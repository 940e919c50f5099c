"""The interface every DP synthesizer of veil follows.

A :class:`Synthesizer` holds its settings; :meth:`Synthesizer.fit` reads a table under a
public :class:`~veil.synth.TableDomain` and an (ε, δ) budget and returns a
:class:`SynthModel`. The model is the only thing that touched the records: sampling from
it is post-processing and spends nothing more, however many rows or instances are drawn.

Conditional sampling: ``model.sample(n, given=q)`` keeps the columns of ``q`` exactly
(row by row) and draws every other column from the model conditionally on each row's
values, as OptimShare releases its mandated columns Q next to synthetic S. The given
columns are not protected by the model's guarantee: they are copied. A model that
cannot condition raises :class:`~veil.errors.ParameterError` naming ``given``.
"""

from __future__ import annotations

import numbers
import warnings
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from veil.errors import DataTypeError, ParameterError, PrivacyWarning
from veil.mechanisms import PrivacyCost
from veil.mechanisms._validation import check_delta, check_epsilon
from veil.rng import RngLike
from veil.synth.domain import IntArray, TableDomain

__all__ = [
    "FitInput",
    "SynthModel",
    "Synthesizer",
    "assemble",
    "check_fit_input",
    "check_sample_input",
    "with_domain_costs",
]


class SynthModel(ABC):
    """A fitted synthesizer: what it spent, on which domain, and how to sample from it."""

    @property
    @abstractmethod
    def cost(self) -> PrivacyCost:
        """The (ε, δ) actually spent by the fit (notion ``dp-synthetic``, per dataset)."""

    @property
    @abstractmethod
    def domain(self) -> TableDomain:
        """The public domain the model was fitted on (and samples in)."""

    @property
    def leaks(self) -> tuple[str, ...]:
        """Data-dependent choices not covered by :attr:`cost` (for the manifest)."""
        return self.domain.leaks

    @abstractmethod
    def sample(
        self,
        n: int | None = None,
        *,
        given: pd.DataFrame | None = None,
        rng: RngLike = None,
    ) -> pd.DataFrame:
        """Draw synthetic records (post-processing: no further privacy cost).

        Parameters
        ----------
        n : int, optional
            Number of rows. Defaults to ``len(given)``, or else to the model's noisy
            estimate of the number of records.
        given : DataFrame, optional
            ``n`` rows of exact values for some domain columns; the other columns are
            drawn conditionally on each row. The output keeps ``given``'s index.
        rng : None, int or numpy.random.Generator
            Randomness, see :mod:`veil.rng`.
        """

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """Plain-Python summary for a manifest: method, settings, cost, readings, leaks."""


class Synthesizer(ABC):
    """Settings of one synthesis method; :meth:`fit` spends the budget once."""

    name: str = ""

    def for_given(self, columns: Sequence[str]) -> Synthesizer:
        """These settings for a model that will be sampled given ``columns``.

        Most methods condition at sampling time on whatever is given, so this returns
        ``self``. A method whose networks must be built on the given columns (the
        DP-WGAN) returns a copy conditioned on them when none were chosen.
        """
        del columns
        return self

    @abstractmethod
    def fit(
        self,
        data: pd.DataFrame,
        domain: TableDomain | Mapping[str, Any],
        epsilon: float,
        delta: float,
        *,
        rng: RngLike = None,
    ) -> SynthModel:
        """Fit a model that is (ε, δ)-DP with respect to the records of ``data``.

        Parameters
        ----------
        data : DataFrame
            The records; only the domain's columns are read, nothing is modified.
        domain : TableDomain or plan-like mapping
            Public categories, bounds and bins of the columns to model.
        epsilon : float
            Budget ε of the whole fit, > 0 (central DP, per dataset, for adding or
            removing one record).
        delta : float
            Failure probability δ in (0, 1); keep it well below ``1 / len(data)``.
        rng : None, int or numpy.random.Generator
            Randomness, see :mod:`veil.rng`.
        """


@dataclass(frozen=True)
class FitInput:
    """Checked inputs of a fit: the domain, the codes of every column, ε and δ."""

    domain: TableDomain
    codes: dict[str, IntArray]
    n: int
    epsilon: float
    delta: float


def check_fit_input(data: Any, domain: Any, epsilon: Any, delta: Any) -> FitInput:
    """Validate the arguments of :meth:`Synthesizer.fit` and encode the data."""
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta)
    if not isinstance(data, pd.DataFrame):
        raise DataTypeError(f"data: must be a pandas DataFrame, got {type(data).__name__}")
    table = TableDomain.from_dict(domain)
    if len(data) == 0:
        raise ParameterError("data: has no rows")
    codes = table.encode(data)
    if dlt >= 1.0 / len(data):
        warnings.warn(
            f"delta: {dlt:g} is not below 1 / n = {1.0 / len(data):g}: an (epsilon, delta) "
            "guarantee this loose allows a mechanism that publishes a record in the clear",
            PrivacyWarning,
            stacklevel=3,
        )
    return FitInput(table, codes, len(data), eps, dlt)


def check_sample_input(
    domain: TableDomain, n: Any, given: Any, default_n: float
) -> tuple[int, dict[str, IntArray], pd.Index]:
    """Validate ``n`` and ``given``; return n, the given codes and the output index."""
    if given is not None:
        if not isinstance(given, pd.DataFrame):
            raise DataTypeError(
                f"given: must be a pandas DataFrame or None, got {type(given).__name__}"
            )
        domain.check_names([str(c) for c in given.columns], "given")
        if n is None:
            n = len(given)
    if n is None:
        n = max(1, round(default_n))
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ParameterError(f"n: must be an integer >= 1, got {n!r}")
    if given is None:
        return int(n), {}, pd.RangeIndex(int(n))
    if len(given) != n:
        raise ParameterError(f"n: {n} does not match the {len(given)} rows of given")
    if len(given.columns) != len(set(given.columns)):
        raise ParameterError("given: column names must be unique")
    codes = domain.encode(given, [str(c) for c in given.columns])
    return int(n), codes, given.index


def with_domain_costs(cost: PrivacyCost, domain: TableDomain) -> PrivacyCost:
    """A fit's cost composed (sequentially) with what estimating its domain spent."""
    for spent in domain.costs:
        cost = cost + spent
    return cost


def assemble(
    domain: TableDomain,
    codes: Mapping[str, IntArray],
    given: pd.DataFrame | None,
    index: pd.Index,
    rng: np.random.Generator,
) -> pd.DataFrame:
    """The output frame: sampled codes decoded, given columns copied, domain order."""
    sampled = {c: codes[c] for c in domain.names if given is None or c not in given.columns}
    values = domain.decode(sampled, rng)
    columns: dict[str, Any] = {}
    for name in domain.names:
        if given is not None and name in given.columns:
            columns[name] = given[name].to_numpy(copy=True)
        else:
            columns[name] = values[name]
    out = pd.DataFrame(columns, index=index.copy())
    if given is not None:
        for name in given.columns:
            out[name] = out[name].astype(given[name].dtype)
    return out
