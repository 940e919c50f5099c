"""The utility sections of the release report that need matched rows: correlation
loss (with both correlation matrices) and machine-learning utility.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable
from typing import Any, Final

import numpy as np
import pandas as pd
from pandas.api.types import is_numeric_dtype

from veil.metrics import correlation_loss

# From the submodule, as the geo tests do: pytest's importlib mode, collecting the module
# for its doctests, rebinds the package attribute ``veil.metrics.ml_utility`` to it.
from veil.metrics.ml_utility import ml_utility
from veil.release.report.context import _Context, _fresh, _systematic
from veil.release.report.glossary import _explained
from veil.release.report.kinds import _is_number
from veil.release.report.page import _attempt, _p, _table
from veil.release.report.plots import FloatArray, _figure, _img, _label

# Columns correlated in the correlation section.
_MAX_CORRELATED_COLUMNS: Final[int] = 30
# Original records the ML utility is measured on (a systematic sample beyond this), so
# that two classifier fits stay around a second.
_ML_ROWS: Final[int] = 20_000


def _correlation_columns(ctx: _Context) -> list[Hashable]:
    columns: list[Hashable] = [
        c
        for c in ctx.shared
        if c not in ctx.location_columns
        and not ctx.identifier_like(c)
        and _is_number(ctx.original[c]) == _is_number(ctx.released[c])
    ]
    return columns[:_MAX_CORRELATED_COLUMNS]


def _correlation_section(ctx: _Context) -> str:
    columns = _correlation_columns(ctx)
    if len(columns) < 2:
        return _p("Fewer than two comparable columns: no correlation to compare.")
    matched = ctx.matched()
    if matched is None:
        return _p(
            "The released rows cannot be matched to original rows (the release has no row, "
            "or fewer rows without the original's index labels): correlations are not "
            "compared.",
            "error",
        )
    before, after = matched
    # A constant column has no correlation: it would make the loss undefined.
    constant = [c for c in columns if before[c].nunique() < 2 or after[c].nunique() < 2]
    columns = [c for c in columns if c not in constant]
    note = (
        _p("Constant before or after, so left out: " + ", ".join(map(str, constant)) + ".")
        if constant
        else ""
    )
    if len(columns) < 2:
        return note + _p("Fewer than two non-constant columns: no correlation to compare.")

    def build() -> str:
        loss = correlation_loss(before, after, features=columns)
        return (
            _table(["measure", "value"], [("correlation loss (%)", loss)])
            + _p(
                "Mean absolute change of the pairwise Pearson correlations, as a percentage "
                "of their mean absolute value in the original (0 = preserved, 200 = every "
                "sign flipped). Categorical columns enter as codes of first appearance "
                "(trasgoDP's definition).",
                "muted",
            )
            + _explained(["correlation-loss"])
        )

    figure = functools.partial(_correlation_figure, before, after, columns)
    return _attempt(build) + note + _attempt(figure)


def _codes(before: pd.Series[Any], after: pd.Series[Any]) -> tuple[FloatArray, FloatArray]:
    if is_numeric_dtype(before.dtype) and is_numeric_dtype(after.dtype):
        return (
            before.to_numpy(dtype=np.float64, na_value=np.nan),
            after.to_numpy(dtype=np.float64, na_value=np.nan),
        )
    codes, _ = pd.factorize(pd.concat([before, after], ignore_index=True), sort=False)
    values = codes.astype(np.float64)
    values[codes < 0] = np.nan
    return values[: len(before)], values[len(before) :]


def _correlation_figure(before: pd.DataFrame, after: pd.DataFrame, columns: list[Hashable]) -> str:
    encoded = [_codes(before[c], after[c]) for c in columns]
    names = [f"c{i}" for i in range(len(columns))]
    matrices = [
        pd.DataFrame({n: pair[side] for n, pair in zip(names, encoded, strict=True)})
        .corr()
        .to_numpy(dtype=np.float64)
        for side in (0, 1)
    ]
    size = min(4.0 + 0.22 * len(columns), 9.0)
    fig = _figure(2 * size + 1.0, size)
    axes = fig.subplots(1, 2)
    labels = [_label(c, 18) for c in columns]
    image = None
    for ax, matrix, label in zip(axes, matrices, ("original", "released"), strict=True):
        image = ax.imshow(matrix, vmin=-1.0, vmax=1.0, cmap="RdBu_r")
        ax.set_xticks(np.arange(len(columns)), labels, rotation=90, fontsize=7)
        ax.set_yticks(np.arange(len(columns)), labels, fontsize=7)
        ax.set_title(label, fontsize=10)
    if image is not None:
        fig.colorbar(image, ax=axes, shrink=0.8, label="Pearson correlation")
    return f"<figure>{_img(fig, 'correlation matrices before and after')}</figure>"


def _ml_section(ctx: _Context, target: Hashable, generator: np.random.Generator) -> str:
    if target not in ctx.released.columns:
        return _p(
            f"The target {target!s} is not released: the release cannot train a classifier for it."
        )
    features = [c for c in ctx.shared if c != target and not ctx.identifier_like(c)]
    if not features:
        return _p("No feature is released besides the target.")

    def build() -> str:
        original, released, sampled = _ml_sample(ctx.original, ctx.released)
        result = ml_utility(original, released, target, features=features, rng=generator)
        rows: list[tuple[str, float | None, float | None, float | None]] = [
            ("accuracy", result.baseline_accuracy, result.released_accuracy, result.accuracy_gap),
            ("macro F1", result.baseline_f1_macro, result.released_f1_macro, result.f1_macro_gap),
        ]
        if result.baseline_auc is not None:
            rows.append(("ROC AUC", result.baseline_auc, result.released_auc, result.auc_gap))
        table = _table(
            ["measure", "trained on the original", "trained on the release", "gap"], rows
        )
        text = (
            f"A {result.model} classifier predicts {target!s} ({result.n_classes} classes) from "
            f"{len(result.features)} columns. Both models are tested on the same "
            f"{result.n_test:,} held-out original records; the baseline is trained on "
            f"{result.n_train_original:,} original records, the release model on the "
            f"{result.n_train_released:,} released versions of those records. The gap is "
            "baseline minus release: what the release lost for this task."
        )
        if sampled:
            text += (
                f" The measure uses a systematic sample of {len(original):,} of the "
                f"{len(ctx.original):,} original records (every k-th row)."
            )
        return _p(text) + table + _explained(["ml-utility"])

    return _attempt(build)


def _ml_sample(
    original: pd.DataFrame, released: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame, bool]:
    """At most ``_ML_ROWS`` original rows (every k-th) and their released versions."""
    removed_and_reset = (
        len(released) < len(original) and _fresh(released.index) and _fresh(original.index)
    )
    if len(original) <= _ML_ROWS or removed_and_reset:
        # Unmatchable rows are left to ml_utility, which says why.
        return original, released, False
    picks = _systematic(len(original), _ML_ROWS)
    sample = original.iloc[picks]
    if (
        original.index.is_unique
        and released.index.is_unique
        and bool(released.index.isin(original.index).all())
    ):
        return sample, released[released.index.isin(sample.index)], True
    if len(original) == len(released):
        return sample, released.iloc[picks], True
    return original, released, False
