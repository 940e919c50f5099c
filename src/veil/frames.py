"""Returning new data frames: never mutating the caller's, and recording privacy costs."""

from __future__ import annotations

import dataclasses

import pandas as pd

from veil.mechanisms import PrivacyCost, PrivacyLedger

__all__ = ["PRIVACY_ATTR", "output_frame", "record_cost"]

PRIVACY_ATTR = "veil.privacy"


def _copy_on_write() -> bool:
    if int(pd.__version__.split(".", 1)[0]) >= 3:
        return True
    return pd.get_option("mode.copy_on_write") is True


def output_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A new frame holding ``df``'s data, for a function to write its result into.

    Under copy-on-write (pandas 3, or pandas 2 with ``mode.copy_on_write`` on) it shares
    the columns with ``df`` at no cost; otherwise it is a deep copy, as
    ``DataFrame.assign`` makes, so that editing the result in place cannot reach ``df``.
    """
    return df.copy(deep=not _copy_on_write())


def record_cost(
    out: pd.DataFrame, source: pd.DataFrame, cost: PrivacyCost, ledger: PrivacyLedger | None
) -> None:
    """Append ``cost`` to ``out.attrs["veil.privacy"]`` (after ``source``'s) and the ledger."""
    history = list(source.attrs.get(PRIVACY_ATTR, []))
    history.append(dataclasses.asdict(cost))
    out.attrs = {**source.attrs, PRIVACY_ATTR: history}
    if ledger is not None:
        ledger.record(cost)
