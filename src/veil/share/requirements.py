"""OptimShare's privacy requirements from PIF: which attributes may stay exact, and how much.

The OptimShare paper (Section 3.2) starts from a global set ``Q`` of attributes that a
custodian would like to release exactly and the rest ``S`` that will be replaced by DP
synthetic data. It then:

1. computes ``QPIF_i``, the PIF_A of every ``Q_i`` on the Q-only table (cohorts: records
   equal on the other Q attributes), and ``QSPIF_i``, its PIF_A on the Q ∪ S table
   (cohorts: records equal on every other attribute);
2. moves ``Q_i`` to ``S`` when ``QSPIF_i - QPIF_i >= alpha * QPIF_i``: its distribution
   changes too much once S is known;
3. takes ``PIF_thresh`` = the largest ``QSPIF_i`` over the refined Q (Eq. 7, capped at 1),
   the input of the fuzzy (epsilon, delta) choice (:mod:`veil.share.fuzzy`).

Readings veil makes where the paper is silent, each stated in the result's ``steps``:

* step 2 is one pass: every ``Q_i`` is judged against the same QPIF and QSPIF (the
  paper's wording); moving attributes does not change any QSPIF, since Q ∪ S is the same
  table however it is split;
* ``QPIF_i = 0`` (for example a Q of one attribute, whose cohort is the whole table)
  makes the rule move ``Q_i`` whenever ``QSPIF_i >= 0``, that is always, whatever
  alpha: the rule degenerates. It is applied literally, the step says so, and
  :func:`refinement_notes` gives each moved attribute's figures and the alpha above
  which it would stay;
* the refinement can be turned off (``refine=False``, the default of a plan and of
  ``veil share``): Q is kept as given, PIF_thresh is the largest QSPIF over it, and the
  guard checks it; the table still shows what the rule would have moved;
* with no Q attribute left, ``PIF_thresh`` is undefined (``None``): the release is
  fully synthetic;
* direct identifiers are found by uniqueness first (a column whose value alone singles
  out most records). One in S is left out of the assessment (an identifier is never
  released or synthesized, and it would make every cohort a single record); one in Q
  stays and is caught by the guard below.

An absolute guard the paper lacks: PIF_A is an average, and an average hides the unique
record. The released Q (the refined Q, exactly as published) must be k-anonymous with
``k >= min_k`` (no record alone on its Q values, by default) and, when ``max_csf`` is
given, no Q cell may have a CSF above it on the Q-only table. A failed guard refuses
(:class:`~veil.errors.DisclosureRiskError`, default) or warns
(:class:`~veil.errors.PrivacyWarning`).

No privacy guarantee comes from this step: it measures the raw data for the custodian,
every figure depends on the records, and the exact Q attributes are not covered by the
DP guarantee of the synthetic S.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from veil.classes import class_ids, value_codes
from veil.errors import (
    ColumnError,
    DataTypeError,
    DisclosureRiskError,
    ParameterError,
    PrivacyWarning,
)
from veil.risk.pif import BinSpec, PifAssessment, assess_pif

__all__ = [
    "QGuard",
    "ShareRequirements",
    "derive_requirements",
    "detect_identifiers",
    "refinement_notes",
]


def detect_identifiers(
    df: pd.DataFrame,
    columns: Sequence[Hashable] | None = None,
    *,
    threshold: float = 0.9,
) -> pd.DataFrame:
    """Columns that identify people on their own: most records hold a value nobody shares.

    No privacy guarantee: a measurement of the raw data.

    Parameters
    ----------
    df : pandas.DataFrame
        The table (not modified). A missing value is a value of its own.
    columns : sequence of column names, optional
        The columns checked (default: all).
    threshold : float, default 0.9
        In ``(0, 1]``: a column is an identifier when at least this share of the
        records is unique on it alone.

    Returns
    -------
    pandas.DataFrame
        One row per column: ``distinct`` values, ``unique_records`` (records whose value
        no other record holds), ``uniqueness`` (their share) and ``identifier`` (bool).

    Examples
    --------
    >>> df = pd.DataFrame({"id": [1, 2, 3, 4], "sex": ["F", "M", "F", "M"]})
    >>> detect_identifiers(df)["identifier"].tolist()
    [True, False]
    """
    cols = _check_columns(df, list(df.columns) if columns is None else columns, "columns")
    if isinstance(threshold, bool) or not (
        isinstance(threshold, int | float) and 0.0 < float(threshold) <= 1.0
    ):
        raise ParameterError(f"threshold must be a number in (0, 1]; got {threshold!r}")
    rows = []
    for column in cols:
        codes, size = value_codes(df[column])
        counts = np.bincount(codes, minlength=size)
        unique = int((counts[codes] == 1).sum())
        share = unique / len(df)
        rows.append((size, unique, share, share >= float(threshold)))
    return pd.DataFrame(
        rows,
        index=pd.Index(cols, dtype=object),
        columns=["distinct", "unique_records", "uniqueness", "identifier"],
    )


@dataclass(frozen=True)
class QGuard:
    """The absolute check of the exactly released Q.

    Attributes
    ----------
    columns : tuple
        The released Q (refined).
    k : int
        The smallest number of records sharing one combination of Q values (the table is
        k-anonymous on Q); 0 when Q is empty.
    unique_records : int
        Records alone on their Q values.
    worst_csf : float
        The largest CSF of a Q cell on the Q-only table.
    min_k : int
        The smallest ``k`` allowed.
    max_csf : float or None
        The largest ``worst_csf`` allowed (None: reported, not checked).
    passed : bool
        Both checks hold.
    action : {"refuse", "warn"}
        What a failed check does.
    reasons : tuple of str
        Why the guard failed (empty when it passed).
    """

    columns: tuple[Hashable, ...]
    k: int
    unique_records: int
    worst_csf: float
    min_k: int
    max_csf: float | None
    passed: bool
    action: Literal["refuse", "warn"]
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class ShareRequirements:
    """Every step and reading of the Q refinement, the PIF threshold and the guard.

    Attributes
    ----------
    q, s : tuple
        The attributes as given (the global Q, and S).
    alpha : float
        The sensitivity coefficient of the refinement rule.
    identifiers : pandas.DataFrame
        :func:`detect_identifiers` over Q ∪ S (empty without detection).
    left_out : tuple
        Identifiers in S, left out of the assessment (never to be released).
    table : pandas.DataFrame
        Per given Q attribute: ``qpif``, ``qspif``, ``delta`` (= qspif - qpif),
        ``bound`` (= alpha * qpif) and ``moved`` (delta >= bound).
    refined_q, refined_s : tuple
        The attributes released exactly, and those to synthesize (S, the moved Q, never
        the left-out identifiers).
    moved : tuple
        Q attributes moved to S.
    pif_thresh : float or None
        The largest QSPIF over the refined Q, capped at 1 (paper Eq. 7); None when no Q
        attribute is left.
    max_qs_pif : float
        The largest PIF_A of any attribute of the Q ∪ S table (the paper's Eq. 12 reads
        PIF_thresh that way; veil reports it beside ``pif_thresh``).
    refined_qpif : pandas.Series
        PIF_A of the refined Q on its own Q-only table (paper Fig. 8).
    guard : QGuard
        The absolute check of the released Q.
    q_assessment, qs_assessment : PifAssessment
        The assessments of the Q-only and Q ∪ S tables.
    refined_assessment : PifAssessment or None
        The assessment of the refined Q-only table (None when Q is empty).
    steps : tuple of str
        What was done and read, in order, in words.
    refine : bool
        Whether the rule was applied (False: Q kept as given, ``moved`` empty; the
        table's ``moved`` says what the rule would have moved).
    """

    q: tuple[Hashable, ...]
    s: tuple[Hashable, ...]
    alpha: float
    identifiers: pd.DataFrame
    left_out: tuple[Hashable, ...]
    table: pd.DataFrame
    refined_q: tuple[Hashable, ...]
    refined_s: tuple[Hashable, ...]
    moved: tuple[Hashable, ...]
    pif_thresh: float | None
    max_qs_pif: float
    refined_qpif: pd.Series
    guard: QGuard
    q_assessment: PifAssessment
    qs_assessment: PifAssessment
    refined_assessment: PifAssessment | None
    steps: tuple[str, ...]
    refine: bool = True

    def to_dict(self) -> dict[str, Any]:
        """The readings as plain data (for JSON, a manifest's custodian record, a report)."""
        return {
            "q": [str(c) for c in self.q],
            "s": [str(c) for c in self.s],
            "alpha": self.alpha,
            "refine": self.refine,
            "identifiers": [str(c) for c in self.identifiers.index[self.identifiers.identifier]]
            if len(self.identifiers)
            else [],
            "left_out": [str(c) for c in self.left_out],
            "refinement": [
                {"attribute": str(a), **{k: _plain(v) for k, v in row.items()}}
                for a, row in self.table.to_dict("index").items()
            ],
            "refined_q": [str(c) for c in self.refined_q],
            "refined_s": [str(c) for c in self.refined_s],
            "moved": [str(c) for c in self.moved],
            "pif_thresh": self.pif_thresh,
            "max_qs_pif": self.max_qs_pif,
            "refined_qpif": {str(k): float(v) for k, v in self.refined_qpif.items()},
            "guard": {
                "columns": [str(c) for c in self.guard.columns],
                "k": self.guard.k,
                "unique_records": self.guard.unique_records,
                "worst_csf": self.guard.worst_csf,
                "min_k": self.guard.min_k,
                "max_csf": self.guard.max_csf,
                "passed": self.guard.passed,
                "action": self.guard.action,
                "reasons": list(self.guard.reasons),
            },
            "bins": [b.to_dict() for b in self.qs_assessment.bins],
            "steps": list(self.steps),
        }


def _plain(value: Any) -> Any:
    if isinstance(value, np.bool_ | bool):
        return bool(value)
    if isinstance(value, np.generic):
        return value.item()
    return value


# ----------------------------------------------------------------------------- inputs


def _check_columns(df: pd.DataFrame, columns: Sequence[Hashable], what: str) -> list[Hashable]:
    if not isinstance(df, pd.DataFrame):
        raise DataTypeError(f"df must be a pandas DataFrame; got {type(df).__name__}")
    cols: list[Hashable] = [columns] if isinstance(columns, str) else list(columns)
    if not cols:
        raise ParameterError(f"{what} must name at least one column; got none")
    if len(set(cols)) != len(cols):
        raise ParameterError(f"{what} must not repeat a column; got {cols!r}")
    absent = [c for c in cols if c not in df.columns]
    if absent:
        raise ColumnError(f"{what} names columns absent from the data: {absent!r}")
    if len(df) == 0:
        raise ParameterError("df must hold at least one record; got an empty frame")
    return cols


def _check_options(
    alpha: float,
    min_k: int,
    max_csf: float | None,
    on_violation: str,
) -> None:
    if (
        isinstance(alpha, bool)
        or not isinstance(alpha, int | float)
        or not (math.isfinite(float(alpha)) and float(alpha) > 0.0)
    ):
        raise ParameterError(f"alpha must be a finite number > 0; got {alpha!r}")
    if isinstance(min_k, bool) or not isinstance(min_k, int | np.integer) or min_k < 1:
        raise ParameterError(f"min_k must be an integer >= 1; got {min_k!r}")
    if max_csf is not None and (
        isinstance(max_csf, bool)
        or not isinstance(max_csf, int | float)
        or not 0.0 <= float(max_csf) <= 1.0
    ):
        raise ParameterError(f"max_csf must be None or a number in [0, 1]; got {max_csf!r}")
    if on_violation not in ("refuse", "warn"):
        raise ParameterError(f"on_violation must be 'refuse' or 'warn'; got {on_violation!r}")


# ------------------------------------------------------------------------------ steps


def _refinement_table(
    q: list[Hashable], q_only: PifAssessment, qs: PifAssessment, alpha: float
) -> pd.DataFrame:
    qpif = q_only.pif_a.reindex(q).to_numpy(dtype=np.float64)
    qspif = qs.pif_a.reindex(q).to_numpy(dtype=np.float64)
    delta = qspif - qpif
    bound = alpha * qpif
    return pd.DataFrame(
        {"qpif": qpif, "qspif": qspif, "delta": delta, "bound": bound, "moved": delta >= bound},
        index=pd.Index(q, dtype=object),
    )


def _guard(
    df: pd.DataFrame,
    refined_q: list[Hashable],
    refined: PifAssessment | None,
    min_k: int,
    max_csf: float | None,
    action: Literal["refuse", "warn"],
) -> QGuard:
    if not refined_q or refined is None:
        return QGuard((), 0, 0, 0.0, min_k, max_csf, True, action, ())
    ids, size = class_ids((df[c] for c in refined_q), len(df))
    counts = np.bincount(ids, minlength=size)
    k = int(counts.min())
    unique = int((counts[ids] == 1).sum())
    worst = float(refined.csf.to_numpy(dtype=np.float64).max())
    reasons = []
    if k < min_k:
        reasons.append(
            f"the released Q {list(refined_q)!r} is only {k}-anonymous (min_k = {min_k}): "
            f"{int((counts[ids] < min_k).sum())} records are in classes of fewer than "
            f"{min_k} records on their Q values ({unique} are alone)"
        )
    if max_csf is not None and worst > max_csf:
        reasons.append(f"the worst CSF of the released Q is {worst:.4g} > max_csf = {max_csf:g}")
    return QGuard(
        tuple(refined_q), k, unique, worst, min_k, max_csf, not reasons, action, tuple(reasons)
    )


def _identifier_step(
    df: pd.DataFrame,
    q: list[Hashable],
    s: list[Hashable],
    threshold: float | None,
) -> tuple[pd.DataFrame, list[Hashable], list[str]]:
    """The identifier table, the S identifiers left out, and the steps describing it."""
    if threshold is None:
        empty = pd.DataFrame(
            {"distinct": [], "unique_records": [], "uniqueness": [], "identifier": []}
        ).astype({"identifier": bool})
        return empty, [], ["identifiers: detection off (identifier_threshold=None)"]
    table = detect_identifiers(df, [*q, *s], threshold=threshold)
    found = [c for c in table.index if bool(table.at[c, "identifier"])]
    left_out = [c for c in s if c in found]
    steps = [
        f"identifiers: a column is one when >= {threshold:g} of the records are unique on "
        f"it alone; found {found!r}"
    ]
    if left_out:
        steps.append(
            f"identifiers in S {left_out!r} are left out of the assessment: an identifier is "
            "never released nor synthesized, and it would make every cohort one record"
        )
    in_q = [c for c in q if c in found]
    if in_q:
        steps.append(
            f"identifiers in Q {in_q!r} stay in the assessment; if they stay in Q the guard "
            "refuses them (every record is alone on them)"
        )
    return table, left_out, steps


def derive_requirements(
    df: pd.DataFrame,
    q: Sequence[Hashable],
    s: Sequence[Hashable],
    *,
    alpha: float = 1.0,
    refine: bool = True,
    bins: Mapping[Hashable, BinSpec] | None = None,
    default_bins: BinSpec | None = None,
    priors: Mapping[Hashable, Mapping[Any, float]] | None = None,
    identifier_threshold: float | None = 0.9,
    min_k: int = 2,
    max_csf: float | None = None,
    on_violation: Literal["refuse", "warn"] = "refuse",
    for_publication: bool = False,
) -> ShareRequirements:
    """Refine the exact attributes Q by PIF, derive PIF_thresh and check the released Q.

    No privacy guarantee: a measurement of the raw data for its custodian (see the
    module docstring for every step and reading).

    Parameters
    ----------
    df : pandas.DataFrame
        The table (not modified).
    q : sequence of column names
        The global Q: attributes the custodian would release exactly.
    s : sequence of column names
        The attributes to be synthesized; disjoint from ``q``.
    alpha : float, default 1
        The sensitivity coefficient (> 0): ``Q_i`` moves to S when
        ``QSPIF_i - QPIF_i >= alpha * QPIF_i``.
    refine : bool, default True
        Apply the rule (the paper's step 2). False keeps Q as given: nothing moves,
        PIF_thresh is the largest QSPIF over Q and the guard checks Q; the table still
        says what the rule would move.
    bins, default_bins, priors
        How columns become categories and their priors, as in
        :func:`veil.risk.assess_pif`; the same for the Q-only and the Q ∪ S tables.
    identifier_threshold : float or None, default 0.9
        Share of records unique on a column that makes it a direct identifier
        (:func:`detect_identifiers`); None turns detection off.
    min_k : int, default 2
        The released Q must be ``min_k``-anonymous (2: no record alone on its Q values).
    max_csf : float, optional
        The largest CSF allowed for a cell of the released Q (default: not checked).
    on_violation : {"refuse", "warn"}, default "refuse"
        A failed guard raises :class:`~veil.errors.DisclosureRiskError` (carrying the
        result as ``details``) or warns with :class:`~veil.errors.PrivacyWarning`.
    for_publication : bool, default False
        The figures are meant to be published (quantile bins then warn, see
        :func:`veil.risk.assess_pif`).

    Returns
    -------
    ShareRequirements

    Raises
    ------
    ParameterError, ColumnError
        Q or S empty, overlapping or naming absent columns; a bad alpha, min_k, max_csf
        or on_violation; bad bins or priors.
    DisclosureRiskError
        The released Q fails the guard and ``on_violation="refuse"``.

    References
    ----------
    Arachchige, Ranbaduge, Kashyap et al., "OptimShare: a unified framework for privacy
    preserving data sharing", Section 3.2 and Eq. 7.
    """
    q_cols = _check_columns(df, q, "q")
    s_cols = _check_columns(df, s, "s")
    both = [c for c in q_cols if c in s_cols]
    if both:
        raise ParameterError(f"q and s must not overlap; both name {both!r}")
    _check_options(alpha, min_k, max_csf, on_violation)
    if not isinstance(refine, bool):
        raise ParameterError(f"refine must be True or False; got {refine!r}")
    for what, given in (("bins", bins), ("priors", priors)):
        outside = [c for c in (given or {}) if c not in q_cols and c not in s_cols]
        if outside:
            raise ColumnError(f"{what} names columns in neither q nor s: {outside!r}")
    alpha = float(alpha)
    identifiers, left_out, steps = _identifier_step(df, q_cols, s_cols, identifier_threshold)
    kept_s = [c for c in s_cols if c not in left_out]
    options: dict[str, Any] = {
        "bins": bins,
        "default_bins": default_bins,
        "priors": priors,
        "for_publication": for_publication,
    }
    qs_cols = [*q_cols, *kept_s]
    q_only = assess_pif(df, q_cols, **_restricted(options, q_cols))
    qs = assess_pif(df, qs_cols, **_restricted(options, qs_cols))
    steps.append(
        f"QPIF: PIF_A (mean CSF) of each Q attribute on the Q-only table {q_cols!r}: "
        "cohorts are records equal on the other Q attributes"
    )
    steps.append(
        f"QSPIF: PIF_A of each Q attribute on the Q ∪ S table ({len(qs_cols)} attributes): "
        "cohorts are records equal on every other attribute"
    )
    table = _refinement_table(q_cols, q_only, qs, alpha)
    for attribute, row in table.to_dict("index").items():
        verdict = ("moves to S" if refine else "would move to S") if row["moved"] else "stays in Q"
        note = " (QPIF = 0: the rule moves it whatever QSPIF is)" if row["qpif"] == 0 else ""
        steps.append(
            f"{attribute!r}: QPIF {row['qpif']:.4f}, QSPIF {row['qspif']:.4f}, delta "
            f"{row['delta']:.4f} {'>=' if row['moved'] else '<'} alpha * QPIF = "
            f"{row['bound']:.4f}: {verdict}{note}"
        )
    moved = [c for c in q_cols if refine and bool(table.at[c, "moved"])]
    refined_q = [c for c in q_cols if c not in moved]
    refined_s = [*kept_s, *moved]
    steps.append(
        "refinement is one pass: every Q attribute is judged on the same QPIF and QSPIF; "
        "moving attributes changes no QSPIF (Q ∪ S is the same table)"
        if refine
        else "refinement off (refine=False): Q is kept as given"
    )
    return _finish(
        df,
        q_cols,
        s_cols,
        alpha,
        identifiers,
        left_out,
        table,
        refined_q,
        refined_s,
        moved,
        q_only,
        qs,
        options,
        steps,
        min_k,
        max_csf,
        on_violation,
        refine,
    )


def _restricted(options: Mapping[str, Any], cols: Sequence[Hashable]) -> dict[str, Any]:
    """``options`` with the per-column mappings cut to ``cols``."""
    out = dict(options)
    for key in ("bins", "priors"):
        given = options.get(key)
        out[key] = None if given is None else {c: v for c, v in given.items() if c in cols}
    return out


def _finish(
    df: pd.DataFrame,
    q_cols: list[Hashable],
    s_cols: list[Hashable],
    alpha: float,
    identifiers: pd.DataFrame,
    left_out: list[Hashable],
    table: pd.DataFrame,
    refined_q: list[Hashable],
    refined_s: list[Hashable],
    moved: list[Hashable],
    q_only: PifAssessment,
    qs: PifAssessment,
    options: Mapping[str, Any],
    steps: list[str],
    min_k: int,
    max_csf: float | None,
    on_violation: Literal["refuse", "warn"],
    refine: bool,
) -> ShareRequirements:
    """PIF_thresh, the refined Q's own assessment, the guard, and the result."""
    refined = assess_pif(df, refined_q, **_restricted(options, refined_q)) if refined_q else None
    if refined_q:
        qspif = table["qspif"].reindex(refined_q).to_numpy(dtype=np.float64)
        pif_thresh: float | None = min(float(qspif.max()), 1.0)
        steps.append(
            f"PIF_thresh = the largest QSPIF over the refined Q {refined_q!r} = "
            f"{pif_thresh:.4f} (paper Eq. 7, capped at 1)"
        )
    else:
        pif_thresh = None
        steps.append("no Q attribute is left: the release is fully synthetic, PIF_thresh is None")
    max_qs_pif = float(qs.pif_a.max())
    steps.append(
        f"for comparison, the largest PIF_A of any Q ∪ S attribute is {max_qs_pif:.4f} "
        "(the paper's Eq. 12 reading of PIF_thresh)"
    )
    guard = _guard(df, refined_q, refined, min_k, max_csf, on_violation)
    steps.append(
        f"guard on the released Q: {guard.k}-anonymous, {guard.unique_records} records alone "
        f"on their Q values, worst CSF {guard.worst_csf:.4f}: "
        + ("passed" if guard.passed else f"failed ({'; '.join(guard.reasons)})")
    )
    result = ShareRequirements(
        q=tuple(q_cols),
        s=tuple(s_cols),
        alpha=alpha,
        identifiers=identifiers,
        left_out=tuple(left_out),
        table=table,
        refined_q=tuple(refined_q),
        refined_s=tuple(refined_s),
        moved=tuple(moved),
        pif_thresh=pif_thresh,
        max_qs_pif=max_qs_pif,
        refined_qpif=(
            refined.pif_a if refined is not None else pd.Series(dtype=np.float64, name="pif_a")
        ),
        guard=guard,
        q_assessment=q_only,
        qs_assessment=qs,
        refined_assessment=refined,
        steps=tuple(steps),
        refine=refine,
    )
    if not guard.passed:
        message = "derive_requirements: " + "; ".join(guard.reasons)
        if on_violation == "refuse":
            raise DisclosureRiskError(
                message + "; generalize or drop Q attributes, move some to S, or lower min_k",
                details=result,
            )
        warnings.warn(message, PrivacyWarning, stacklevel=3)
    return result


def refinement_notes(table: pd.DataFrame, alpha: float) -> list[str]:
    """Why each Q attribute the rule moves is moved, with its figures and the way out.

    Parameters
    ----------
    table : pandas.DataFrame
        :attr:`ShareRequirements.table` (``qpif``, ``qspif``, ``delta``, ``moved``).
    alpha : float
        The sensitivity coefficient the table was judged with.

    Returns
    -------
    list of str
        One line per attribute the rule moves: its QPIF and QSPIF, and either the alpha
        above which it would stay (``delta / QPIF``) or, when QPIF = 0, that the rule
        degenerates (it moves the attribute whatever QSPIF and alpha are).
    """
    notes = []
    for attribute, row in table.to_dict("index").items():
        if not bool(row["moved"]):
            continue
        figures = f"{attribute!r}: QPIF {row['qpif']:.4f}, QSPIF {row['qspif']:.4f}"
        if row["qpif"] == 0:
            notes.append(
                f"{figures}: QPIF = 0, so QSPIF - QPIF >= alpha * QPIF holds for every "
                "alpha: the rule degenerates and moves it whatever QSPIF is"
            )
        else:
            keep = float(row["delta"]) / float(row["qpif"])
            notes.append(
                f"{figures}: QSPIF - QPIF = {row['delta']:.4f} >= alpha * QPIF = "
                f"{alpha * row['qpif']:.4f}; it stays with alpha above {keep:.4g}"
            )
    return notes
