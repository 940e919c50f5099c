"""Local DP for categorical columns: exponential and randomized response (trasgoDP API).

Same names, positional parameters, defaults and return types as
``trasgodp.categorical``; deliberate differences:

* the domain is a public input, ``domain=[...]``; without it the domain is read from
  the data as trasgoDP does, with a :class:`~veil.errors.PrivacyLeakWarning` (a rare
  category appears in the output only when its holder is in the data);
* pandas categorical and string dtypes are accepted (a categorical stays categorical),
  and numeric-coded columns are accepted when their domain is declared;
* ``dp_exponential`` keeps trasgoDP's calibration by default, which spends only ε/2;
  the ledger records ε/2, and ``calibration="full"`` uses the whole ε;
* missing values follow ``missing=`` and randomness comes from ``rng=``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from veil.errors import DataTypeError, ParameterError
from veil.ldp._column import (
    ArrayLike,
    CategoricalColumn,
    MissingPolicy,
    categorical_input,
    categorical_output,
    check_missing,
    column_of,
    record,
    target_name,
    with_column,
)
from veil.mechanisms import (
    BinaryRandomizedResponse,
    Exponential,
    ExponentialCalibration,
    PrivacyCost,
    PrivacyLedger,
    RandomizedResponse,
)
from veil.mechanisms._validation import check_epsilon
from veil.rng import RngLike, resolve_rng

__all__ = [
    "dp_exponential",
    "dp_exponential_array",
    "dp_randomized_response_binary",
    "dp_randomized_response_binary_array",
    "dp_randomized_response_kary",
    "dp_randomized_response_kary_array",
]


def _encode(
    data: Any, *, name: str, domain: ArrayLike | None, missing: MissingPolicy, mechanism: str
) -> CategoricalColumn:
    return categorical_input(
        data, name=name, domain=domain, missing=check_missing(missing), mechanism=mechanism
    )


def _exponential(
    data: Any,
    epsilon: float,
    *,
    name: str,
    domain: ArrayLike | None,
    scores: np.ndarray | None,
    calibration: ExponentialCalibration,
    missing: MissingPolicy,
    rng: RngLike,
    array: bool,
) -> tuple[Any, PrivacyCost]:
    eps = check_epsilon(epsilon)
    if calibration not in ("standard", "full"):
        raise ParameterError(f"calibration: must be 'standard' or 'full', got {calibration!r}")
    if scores is not None and domain is None:
        raise ParameterError("scores: a score matrix needs the domain= it is indexed by")
    column = _encode(data, name=name, domain=domain, missing=missing, mechanism="Exponential")
    k = column.categories.size
    if k < 2:
        raise ParameterError(
            f"{name}: the exponential mechanism needs at least 2 categories, got {k}"
        )
    mechanism = Exponential(
        eps, None if scores is not None else k, scores=scores, calibration=calibration
    )
    if mechanism.k != k:
        raise ParameterError(
            f"scores: shape {mechanism.scores.shape} does not match the domain of {k} categories"
        )
    noisy = mechanism.randomise(column.valid_codes(), resolve_rng(rng, stacklevel=4))
    return categorical_output(noisy, column, array=array), mechanism.cost(name)


def dp_exponential(
    df: pd.DataFrame,
    column: str,
    epsilon: float,
    new_column: bool = False,
    *,
    overwrite: bool = False,
    domain: ArrayLike | None = None,
    scores: np.ndarray | None = None,
    calibration: ExponentialCalibration = "standard",
    missing: MissingPolicy = "error",
    rng: RngLike = None,
    ledger: PrivacyLedger | None = None,
) -> pd.DataFrame:
    """Apply the exponential mechanism to a categorical column: local DP per record.

    With trasgoDP's score (1 when the report equals the true value) and the default
    ``calibration="standard"``, the true value is kept with probability
    ``e^(ε/2) / (e^(ε/2) + k - 1)``: this spends ε/2 per record, which is what is
    recorded. ``calibration="full"`` spends the whole ε (then it equals k-ary
    randomized response). A ``scores`` matrix over ``domain`` (for example
    :func:`veil.mechanisms.ordinal_scores` for ordered categories) perturbs toward
    close categories; the recorded cost is the exact ε of the resulting channel.

    Parameters
    ----------
    df : pandas.DataFrame
        The data; it is not modified.
    column : str
        Categorical column (strings, pandas string or categorical dtype; numbers only
        with ``domain``).
    epsilon : float
        Privacy budget per record, > 0.
    new_column : bool, default False
        Write to ``dp_{column}`` instead of replacing ``column``. If the frame already
        has a ``dp_{column}`` column this raises, unless ``overwrite``.
    overwrite : bool, default False
        Let ``new_column=True`` replace an existing ``dp_{column}`` column.
    domain : sequence, optional
        The public categories (a list, tuple or array; a bare string is refused).
        Without them they are read from the data, with a
        :class:`~veil.errors.PrivacyLeakWarning`.
    scores : array of shape (k, k), optional
        Utility of each report for each true category (rows follow ``domain``).
    calibration : {"standard", "full"}, default "standard"
    missing : {"error", "keep"}, default "error"
    rng : None, int or numpy.random.Generator
    ledger : veil.mechanisms.PrivacyLedger, optional

    Returns
    -------
    pandas.DataFrame
    """
    series = column_of(df, column)
    target = target_name(df, column, new_column, overwrite)
    values, cost = _exponential(
        series,
        epsilon,
        name=str(column),
        domain=domain,
        scores=scores,
        calibration=calibration,
        missing=missing,
        rng=rng,
        array=False,
    )
    return with_column(df, target, values, cost, ledger)


def dp_exponential_array(
    data: Any,
    epsilon: float,
    *,
    domain: ArrayLike | None = None,
    scores: np.ndarray | None = None,
    calibration: ExponentialCalibration = "standard",
    missing: MissingPolicy = "error",
    rng: RngLike = None,
    ledger: PrivacyLedger | None = None,
) -> np.ndarray:
    """Apply the exponential mechanism to a list or array (see :func:`dp_exponential`)."""
    values, cost = _exponential(
        data,
        epsilon,
        name="data",
        domain=domain,
        scores=scores,
        calibration=calibration,
        missing=missing,
        rng=rng,
        array=True,
    )
    record(cost, ledger)
    return values  # type: ignore[no-any-return]


def _randomized_response(
    data: Any,
    epsilon: float,
    *,
    name: str,
    domain: ArrayLike | None,
    binary: bool,
    positive_label: Any,
    missing: MissingPolicy,
    rng: RngLike,
    array: bool,
) -> tuple[Any, PrivacyCost]:
    eps = check_epsilon(epsilon)
    kind = "binary randomized response" if binary else "k-ary randomized response"
    if isinstance(data, (pd.Series, np.ndarray)) and domain is None and data.dtype.kind in "biuf":
        raise DataTypeError(
            f"{name}: must be categorical for {kind}, got dtype {data.dtype}; pass domain= "
            "to randomize coded values"
        )
    column = _encode(data, name=name, domain=domain, missing=missing, mechanism=kind)
    k = column.categories.size
    if binary and k != 2:
        raise ParameterError(
            f"{name}: binary randomized response needs exactly 2 categories, got {k}"
            + ("" if domain is not None else " in the data; declare them with domain=")
        )
    if not binary and k < 3:
        raise ParameterError(
            f"{name}: k-ary randomized response needs 3 or more categories, got {k}; use "
            "binary randomized response for two"
        )
    if (
        binary
        and positive_label is not None
        and positive_label not in set(column.categories.tolist())
    ):
        raise ParameterError(
            f"positive_label: {positive_label!r} is not one of the categories "
            f"{column.categories.tolist()}"
        )
    mechanism = BinaryRandomizedResponse(eps) if k == 2 else RandomizedResponse(eps, k)
    noisy = mechanism.randomise(column.valid_codes(), resolve_rng(rng, stacklevel=4))
    return categorical_output(noisy, column, array=array), mechanism.cost(name)


def dp_randomized_response_binary(
    df: pd.DataFrame,
    column: str,
    epsilon: float,
    new_column: bool = False,
    positive_label: Any = None,
    *,
    overwrite: bool = False,
    domain: ArrayLike | None = None,
    missing: MissingPolicy = "error",
    rng: RngLike = None,
    ledger: PrivacyLedger | None = None,
) -> pd.DataFrame:
    """Apply binary randomized response to a two-valued column: ε-local-DP per record.

    Each value is kept with probability ``e^ε / (e^ε + 1)`` and replaced by the other
    category otherwise (Warner 1965).

    Parameters
    ----------
    df : pandas.DataFrame
    column : str
        Column with exactly two categories (in the data, or in ``domain``).
    epsilon : float
        Privacy budget per record, > 0.
    new_column, overwrite : bool, default False
        As in :func:`dp_exponential`.
    positive_label : optional
        The category coded 1; must be one of the two categories. The mechanism is
        symmetric, so it only labels the output of :mod:`veil.ldp.estimate`.
    domain : sequence of two categories, optional
        The public categories (else read from the data, with a warning).
    missing, rng, ledger
        As in :func:`dp_exponential`.
    """
    series = column_of(df, column)
    target = target_name(df, column, new_column, overwrite)
    values, cost = _randomized_response(
        series,
        epsilon,
        name=str(column),
        domain=domain,
        binary=True,
        positive_label=positive_label,
        missing=missing,
        rng=rng,
        array=False,
    )
    return with_column(df, target, values, cost, ledger)


def dp_randomized_response_binary_array(
    data: Any,
    epsilon: float,
    positive_label: Any = None,
    *,
    domain: ArrayLike | None = None,
    missing: MissingPolicy = "error",
    rng: RngLike = None,
    ledger: PrivacyLedger | None = None,
) -> np.ndarray:
    """Apply binary randomized response to a list or array (see the frame version)."""
    values, cost = _randomized_response(
        data,
        epsilon,
        name="data",
        domain=domain,
        binary=True,
        positive_label=positive_label,
        missing=missing,
        rng=rng,
        array=True,
    )
    record(cost, ledger)
    return values  # type: ignore[no-any-return]


def dp_randomized_response_kary(
    df: pd.DataFrame,
    column: str,
    epsilon: float,
    new_column: bool = False,
    *,
    overwrite: bool = False,
    domain: ArrayLike | None = None,
    missing: MissingPolicy = "error",
    rng: RngLike = None,
    ledger: PrivacyLedger | None = None,
) -> pd.DataFrame:
    """Apply k-ary randomized response to a categorical column: ε-local-DP per record.

    The true category is kept with probability ``e^ε / (e^ε + k - 1)``, otherwise
    replaced by one of the other ``k - 1`` categories of the domain uniformly
    (equivalently, with probability ``k / (e^ε + k - 1)`` it is redrawn uniformly from
    the whole domain, trasgoDP's formulation).

    Parameters
    ----------
    df : pandas.DataFrame
    column : str
        Column with 3 or more categories.
    epsilon : float
    new_column, overwrite : bool, default False
        As in :func:`dp_exponential`.
    domain : sequence, optional
        The public categories (else read from the data, with a warning).
    missing, rng, ledger
        As in :func:`dp_exponential`.
    """
    series = column_of(df, column)
    target = target_name(df, column, new_column, overwrite)
    values, cost = _randomized_response(
        series,
        epsilon,
        name=str(column),
        domain=domain,
        binary=False,
        positive_label=None,
        missing=missing,
        rng=rng,
        array=False,
    )
    return with_column(df, target, values, cost, ledger)


def dp_randomized_response_kary_array(
    data: Any,
    epsilon: float,
    *,
    domain: ArrayLike | None = None,
    missing: MissingPolicy = "error",
    rng: RngLike = None,
    ledger: PrivacyLedger | None = None,
) -> np.ndarray:
    """Apply k-ary randomized response to a list or array (see the frame version)."""
    values, cost = _randomized_response(
        data,
        epsilon,
        name="data",
        domain=domain,
        binary=False,
        positive_label=None,
        missing=missing,
        rng=rng,
        array=True,
    )
    record(cost, ledger)
    return values  # type: ignore[no-any-return]
