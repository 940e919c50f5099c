"""Columns released as they are that undo a treatment: refused unless acknowledged.

Masking a pickup point protects nothing when its exact coordinates are also released
in ``X``/``Y`` or in a ``"(lat, lon)"`` text column; noising an age protects nothing
beside an exact birth year; pseudonymizing a name protects nothing beside a trip id that
the operator's own files link back to the person. The gate looks at every column a
release copies unchanged, with :func:`veil.risk.find_carriers`, and refuses the
release when one of them carries a treated value or, by itself, singles out most
records (:class:`~veil.gate.errors.CarrierError`), whatever the path: a plan, a
one-table command, the library or the platform.

A custodian who knows better (the ``X``/``Y`` columns are a public grid reference) names
the column in the plan's ``acknowledge`` list (``--acknowledge`` on the command line):
the release goes ahead, and the column is listed as not protected and as a leak.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from veil.gate.errors import CarrierError
from veil.risk import Carrier, find_carriers

__all__ = ["Declared", "acknowledged_unknown", "check_carriers", "released_carriers"]

# Reasons that concern the value a column holds about the person whatever its role;
# "identifier" concerns a column an attacker could match on, not a sensitive value.
_ANY_ROLE = ("coordinates", "coordinate-text", "same-numbers", "same-categories", "address")


@dataclass(frozen=True)
class Declared:
    """What a release treats, and what it copies unchanged.

    Attributes
    ----------
    locations : tuple of (lat, lon)
        Masked location pairs.
    numeric, categorical, identifiers : tuple of str
        Columns noised or generalized (numbers, categories) and direct identifiers
        masked.
    kept : mapping of str to str
        Columns released exactly as read, each with its role (``"insensitive"``,
        ``"quasi_identifier"``, ``"sensitive"``; ``"unknown"`` for a one-table
        command's other columns).
    acknowledged : tuple of str
        Columns the custodian released knowingly (``acknowledge``).
    """

    locations: tuple[tuple[str, str], ...] = ()
    numeric: tuple[str, ...] = ()
    categorical: tuple[str, ...] = ()
    identifiers: tuple[str, ...] = ()
    kept: Mapping[str, str] = field(default_factory=dict)
    acknowledged: tuple[str, ...] = ()

    @property
    def treated(self) -> list[str]:
        """Every treated column, once."""
        columns = [c for pair in self.locations for c in pair]
        return list(dict.fromkeys([*columns, *self.numeric, *self.categorical, *self.identifiers]))


def _applies(carrier: Carrier, role: str) -> bool:
    if carrier.reason in _ANY_ROLE:
        return True
    # An identifier or personal data in text singles out the record whatever it holds,
    # unless the column is the sensitive value itself, which an attacker does not know.
    return role != "sensitive" or carrier.reason == "pii-text"


def _natural(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with text columns that hold only numbers read as numbers.

    A command that reads every column as text (to release them byte for byte) must not
    make a coordinate look like a code or a phone number: the checks see each column as
    what it holds.
    """
    converted: dict[str, pd.Series] = {}
    for column in frame.columns:
        series = frame[column]
        if not (pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series)):
            continue
        present = series.dropna()
        numbers = pd.to_numeric(present.astype(object), errors="coerce")
        if len(present) and bool(numbers.notna().all()):
            converted[str(column)] = pd.to_numeric(series.astype(object), errors="coerce")
    return frame.assign(**converted) if converted else frame


def _found(sample: pd.DataFrame, declared: Declared, kept: list[str]) -> list[Carrier]:
    """The carriers among ``kept``, per location pair and for the other treatments."""
    columns = [*declared.treated, *kept]
    frame = _natural(sample[[c for c in dict.fromkeys(columns) if c in sample.columns]])
    found: dict[Hashable, Carrier] = {}
    pairs: list[tuple[str, str] | None] = list(declared.locations) or [None]
    for i, pair in enumerate(pairs):
        treated = any((pair, declared.numeric, declared.categorical, declared.identifiers))
        first = i == 0
        if not treated and not first:
            continue
        for carrier in find_carriers(
            frame,
            location=pair,
            numeric=declared.numeric if first else (),
            categorical=declared.categorical if first else (),
            identifiers=declared.identifiers if first else (),
            among=kept,
        ):
            found.setdefault(carrier.column, carrier)
    return [found[c] for c in kept if c in found]


def released_carriers(sample: pd.DataFrame, declared: Declared) -> list[Carrier]:
    """The columns released as they are that carry a treated value or single out records.

    What :func:`check_carriers` refuses unless acknowledged (acknowledged ones included),
    without refusing: a plan's draft uses it to drop them before the custodian runs it.
    """
    kept = [c for c in declared.kept if c in sample.columns]
    if not kept:
        return []
    found = _found(sample, declared, kept)
    return [c for c in found if _applies(c, declared.kept[str(c.column)])]


def check_carriers(sample: pd.DataFrame, declared: Declared, *, field_name: str) -> list[Carrier]:
    """Refuse columns released as they are that carry a treated value or single out records.

    Parameters
    ----------
    sample : pandas.DataFrame
        The input before treatment (or an evenly spread sample of its rows); not
        modified.
    declared : Declared
        What the release treats and copies.
    field_name : str
        Where the custodian acknowledges a column (``"acknowledge"`` in a plan,
        ``"--acknowledge"`` on the command line), for the message.

    Returns
    -------
    list of veil.risk.Carrier
        The acknowledged carriers (the manifest lists them as leaks); empty when none
        was found.

    Raises
    ------
    CarrierError
        A carrier the custodian did not acknowledge (the message names each, why, and
        the two ways out: treat or drop it, or acknowledge it by name).
    """
    carriers = released_carriers(sample, declared)
    refused = [c for c in carriers if str(c.column) not in declared.acknowledged]
    if refused:
        names = ", ".join(repr(str(c.column)) for c in refused)
        raise CarrierError(
            f"{names}: released as {'it is' if len(refused) == 1 else 'they are'} but "
            f"{'carries' if len(refused) == 1 else 'carry'} what the release protects or "
            f"single{'s' if len(refused) == 1 else ''} out records: "
            + "; ".join(c.describe() for c in refused)
            + f"; drop or treat {'it' if len(refused) == 1 else 'them'}, or name "
            f"{'it' if len(refused) == 1 else 'them'} in {field_name} to release "
            "knowingly (listed as not protected and as a leak)"
        )
    return carriers


def acknowledged_unknown(declared: Declared, columns: Sequence[str], field_name: str) -> None:
    """Refuse an acknowledged name that is not a column the release copies as it is."""
    stray = [c for c in declared.acknowledged if c not in declared.kept or c not in columns]
    if stray:
        raise CarrierError(
            f"{field_name}: {', '.join(repr(c) for c in stray)} not among the columns "
            f"released as they are ({', '.join(repr(c) for c in declared.kept) or 'none'})"
        )
