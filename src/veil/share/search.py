"""The OptimShare search: DP synthetic S beside exact Q, the candidate chosen by effectiveness.

For each (ε, δ) pair (from :func:`veil.share.budget_pairs` or given), the search fits the
synthesizer **once** and draws the ``t`` instances from that one model: drawing is
post-processing and costs nothing more, while refitting ``t`` times would compose ``t``
fits. The paper (Algorithm 1, line 11) is silent on this; veil fits once. Each instance
is merged with the exact Q (:mod:`veil.share.merge`), kept within the public bounds, and
scored on the original records:

* ``U_l``, the GaussianNB utility loss (:mod:`veil.share.utility`);
* ``L``, the fraction of records linkable to their own row within their similarity
  group, and ``P_N = min(1, ε L / T_ε)`` (:mod:`veil.share.linkage`);
* ``E_l = C U_l + (1 - C) P_N`` and ``e = 1 - E_l`` (:mod:`veil.share.selection`).

Two selection rules (``selection=``):

* ``"paper"``: the candidate of highest ``e`` among those with ``e >= E^T``. This is not
  a private selection: the argmax reads the raw records through U_l and P_N, so which
  candidate is released is not covered by any stated bound. The cost the result states
  (:func:`~veil.share.compose_fits`) is what publishing every fitted model would cost;
  the choice among them is a listed leak.
* ``"private"``: Papernot-Steinke random stopping. ``K`` runs, ``K`` geometric with mean
  ``1 / stop_probability`` (drawn from :mod:`veil.rng` before any data is read); each
  run fits a fresh model at a pair drawn uniformly, draws ``t`` instances and scores
  each with noisy counts (discrete Gaussian noise of ``score_noise`` records on the
  correct-prediction count and on the linkable count); the best noisy ``e`` is
  released if it reaches ``E^T``. ``U_o`` is a public ``reference_accuracy`` (default
  1) since the original's accuracy is not private. Its cost
  (:func:`~veil.share.random_stopping_epsilon`) is stated for the neighbour relation
  "one record's S changed, its released Q the same", each fit's ρ multiplied by 4
  (zCDP group privacy for a change of one record, which is a removal and an addition).

  Why each count has sensitivity 1 under that relation: given the fitted model and
  the generator, the candidate is fixed (its Q is the records' exact Q, the same on
  both tables, and its S is drawn from the model given that Q); the folds are a
  permutation of the record indices (:func:`~veil.share.record_folds`), the same on
  both tables. The correct-prediction count is then a sum over records of a 0/1 term
  in which only the changed record's own term reads its values
  (:mod:`veil.share.utility`); the linkable count likewise, since the similarity groups
  are the records' Q and a record's term compares its own original S with the fixed
  candidate rows of its group (:mod:`veil.share.linkage`). The model's dependence on
  the records is what the fits' ρ pays for. A change of Q is outside the relation: Q
  is published exactly, so nothing can be stated for it.

If no candidate reaches ``E^T``, nothing is released: :class:`~veil.share.NoCandidateError`
names ``E^T`` and the best ``e`` found.

Guarantee, in one sentence: under the private selection, the synthetic S of the released
table costs what the result states; under the paper's argmax, the result states what
the fitted models cost and the choice among them is a leak no bound covers; the exact Q
is not covered by any DP guarantee, the leaks the result lists are not covered either,
and the paper's Theorem 3.2 is not claimed.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np
import pandas as pd

from veil.errors import ColumnError, DataTypeError, ParameterError
from veil.mechanisms import PrivacyCost, sample_discrete_gaussian
from veil.mechanisms._validation import check_delta, check_epsilon
from veil.rng import RngLike, resolve_rng, spawn
from veil.share.fuzzy import BudgetPairs
from veil.share.linkage import normalized_leak
from veil.share.merge import Groups, Merge, MergePlan, merged_instance, plan_merge
from veil.share.result import Selection, ShareResult
from veil.share.scores import CandidateScorer, Scores
from veil.share.selection import (
    NoCandidateError,
    compose_fits,
    effectiveness,
    geometric_runs,
    random_stopping_epsilon,
)
from veil.share.utility import utility_loss
from veil.synth import (
    NumericColumn,
    Synthesizer,
    SynthModel,
    TableDomain,
    make_synthesizer,
    rho_from_epsilon,
)

__all__ = [
    "DEFAULT_SYNTHESIZER_SETTINGS",
    "Cancellable",
    "ShareResult",
    "optimshare_search",
]

DEFAULT_SYNTHESIZER_SETTINGS: dict[str, dict[str, Any]] = {"mst": {"compress": False}}
"""Settings used when a synthesizer is named without settings.

MST without its domain compression: the compressed sizes depend on each fit's noise, so
every pair would compile mbi's estimator anew (JAX compiles once per model structure,
10-30 s each on two cores); with the public domain's sizes the structure only changes
when the private tree does, and the pairs reuse the compiled estimator. The price is
that rare codes are not merged before the tree is chosen.
"""

Rescale = Literal["public", "data"]
Progress = Callable[[str, int, int], None]

_TABLE_COLUMNS = (
    "pair",
    "epsilon",
    "delta",
    "instance",
    "utility",
    "u_o",
    "u_p",
    "u_l",
    "linkable",
    "p_n",
    "e_l",
    "e",
    "qualifies",
    "chosen",
    "noisy",
    "fit_seconds",
    "sample_seconds",
    "score_seconds",
)


class Cancellable(Protocol):
    """What a cancellation token offers: ``check(where)`` raises to stop the run."""

    def check(self, where: str) -> None: ...


@dataclass(frozen=True)
class _Settings:
    """Checked inputs of a search."""

    q: tuple[str, ...]
    s: tuple[str, ...]
    label: str
    domain: TableDomain
    pairs: tuple[tuple[float, float], ...]
    synthesizer: Synthesizer
    instances: int
    t_epsilon: float
    c: float
    e_threshold: float
    folds: int
    merge: Merge
    groups: Groups
    clusters: tuple[int, ...]
    rescale: Rescale
    selection: Selection
    stop_probability: float
    score_noise: float
    reference_accuracy: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "synthesizer": self.synthesizer.name or type(self.synthesizer).__name__,
            "synthesizer_settings": dict(vars(self.synthesizer)),
            "pairs": [list(p) for p in self.pairs],
            "instances": self.instances,
            "t_epsilon": self.t_epsilon,
            "c": self.c,
            "e_threshold": self.e_threshold,
            "folds": self.folds,
            "merge": self.merge,
            "groups": self.groups if self.merge == "paper" else None,
            "clusters": list(self.clusters) if self.merge == "paper" else None,
            "rescale": self.rescale,
            "selection": self.selection,
            "stop_probability": self.stop_probability,
            "score_noise": self.score_noise,
            "reference_accuracy": self.reference_accuracy,
            "application": "classification, GaussianNB",
        }


def _names(values: Sequence[str] | str, what: str) -> tuple[str, ...]:
    names = (values,) if isinstance(values, str) else tuple(values)
    if not names:
        raise ParameterError(f"{what}: needs at least one column")
    if len(set(names)) != len(names):
        raise ParameterError(f"{what}: names a column twice ({list(names)!r})")
    return tuple(str(c) for c in names)


def _check_unit(value: Any, name: str, *, open_low: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(f"{name}: must be a real number in [0, 1], got {value!r}")
    x = float(value)
    if not (0.0 < x <= 1.0 if open_low else 0.0 <= x <= 1.0):
        bound = "(0, 1]" if open_low else "[0, 1]"
        raise ParameterError(f"{name}: must be in {bound}, got {value!r}")
    return x


def _check_positive(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(f"{name}: must be a finite real number > 0, got {value!r}")
    if not (math.isfinite(float(value)) and float(value) > 0):
        raise ParameterError(f"{name}: must be a finite real number > 0, got {value!r}")
    return float(value)


def _check_count(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ParameterError(f"{name}: must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_pairs(pairs: Any) -> tuple[tuple[float, float], ...]:
    raw = pairs.pairs if isinstance(pairs, BudgetPairs) else pairs
    if isinstance(raw, (str, bytes)) or not isinstance(raw, Sequence) or len(raw) == 0:
        raise ParameterError(
            f"pairs: must be a non-empty sequence of (epsilon, delta), got {raw!r}"
        )
    out = []
    for i, pair in enumerate(raw):
        if isinstance(pair, (str, bytes)) or not isinstance(pair, Sequence) or len(pair) != 2:
            raise ParameterError(f"pairs[{i}]: must be (epsilon, delta), got {pair!r}")
        out.append(
            (check_epsilon(pair[0], f"pairs[{i}].epsilon"), _check_delta(pair[1], f"pairs[{i}]"))
        )
    return tuple(out)


def _check_delta(value: Any, where: str) -> float:
    try:
        return check_delta(value)
    except ParameterError as exc:
        raise ParameterError(f"{where}.{exc}") from None


def _synthesizer(name: str | Synthesizer, settings: Mapping[str, Any] | None) -> Synthesizer:
    if isinstance(name, Synthesizer):
        if settings:
            raise ParameterError(
                "synthesizer_settings: give settings with a synthesizer name, not with an "
                f"instance of {type(name).__name__}"
            )
        return name
    if not isinstance(name, str):
        raise ParameterError(
            f"synthesizer: must be a name (veil.synth.SYNTHESIZERS) or a Synthesizer, got {name!r}"
        )
    chosen = DEFAULT_SYNTHESIZER_SETTINGS.get(name, {}) if settings is None else settings
    return make_synthesizer(name, **dict(chosen))


def _check_columns(
    data: Any, q: tuple[str, ...], s: tuple[str, ...], label: Any, domain: TableDomain
) -> str:
    if not isinstance(data, pd.DataFrame):
        raise DataTypeError(f"data: must be a pandas DataFrame, got {type(data).__name__}")
    if len(data) < 2:
        raise ParameterError(f"data: needs at least 2 records, got {len(data)}")
    both = [c for c in q if c in s]
    if both:
        raise ParameterError(f"q and s must not overlap; both name {both!r}")
    absent = [c for c in (*q, *s) if c not in data.columns]
    if absent:
        raise ColumnError(f"q, s: {absent!r} are not columns of data")
    if not isinstance(label, str) or label == "":
        raise ParameterError(f"label: must be the name of a column of q or s, got {label!r}")
    if label not in data.columns:
        raise ColumnError(f"label: {label!r} is not a column of data")
    if label not in q and label not in s:
        raise ColumnError(f"label: {label!r} must be one of the released columns q or s")
    domain.check_names([*q, *s], "domain")
    return label


def _settings(
    data: Any,
    q: Sequence[str] | str,
    s: Sequence[str] | str,
    label: Any,
    domain: TableDomain | Mapping[str, Any],
    pairs: Any,
    options: Mapping[str, Any],
) -> _Settings:
    q_names, s_names = _names(q, "q"), _names(s, "s")
    table = domain if isinstance(domain, TableDomain) else TableDomain.from_dict(domain)
    label = _check_columns(data, q_names, s_names, label, table)
    checked = _check_pairs(pairs)
    t_eps = options["t_epsilon"]
    if t_eps is None:
        t_eps = pairs.t_epsilon if isinstance(pairs, BudgetPairs) else 8.0
    for key, allowed in (
        ("merge", ("conditional", "paper")),
        ("groups", ("label", "kmeans")),
        ("rescale", ("public", "data")),
        ("selection", ("paper", "private")),
    ):
        if options[key] not in allowed:
            raise ParameterError(f"{key}: must be one of {list(allowed)}, got {options[key]!r}")
    if options["selection"] == "private" and (
        options["merge"] != "conditional" or options["rescale"] != "public"
    ):
        raise ParameterError(
            "selection: 'private' needs merge='conditional' and rescale='public' (the "
            "paper's merge and raw rescaling read the records beyond the DP models, so "
            "no private selection can be stated for them)"
        )
    gamma = options["stop_probability"]
    gamma = (
        1.0 / len(checked)
        if gamma is None
        else _check_unit(gamma, "stop_probability", open_low=True)
    )
    reference = options["reference_accuracy"]
    return _Settings(
        q=q_names,
        s=s_names,
        label=label,
        domain=table,
        pairs=checked,
        synthesizer=_synthesizer(options["synthesizer"], options["synthesizer_settings"]),
        instances=_check_count(options["instances"], "instances", 1),
        t_epsilon=_check_positive(t_eps, "t_epsilon"),
        c=_check_unit(options["c"], "c"),
        e_threshold=_check_unit(options["e_threshold"], "e_threshold"),
        folds=_check_count(options["folds"], "folds", 2),
        merge=options["merge"],
        groups=options["groups"],
        clusters=tuple(options["clusters"]),
        rescale=options["rescale"],
        selection=options["selection"],
        stop_probability=gamma,
        score_noise=_check_positive(options["score_noise"], "score_noise"),
        reference_accuracy=1.0
        if reference is None
        else _check_unit(reference, "reference_accuracy", open_low=True),
    )


@dataclass
class _Context:
    """What every candidate is scored against (built once per search)."""

    settings: _Settings
    data: pd.DataFrame
    plan: MergePlan
    scorer: CandidateScorer
    raw_bounds: dict[str, tuple[float, float]]
    progress: Progress | None
    cancel: Cancellable | None
    done: int = 0
    total: int = 0

    def step(self, label: str) -> None:
        if self.cancel is not None:
            self.cancel.check(f"optimshare search: {label}")
        if self.progress is not None:
            self.progress(label, self.done, self.total)
        self.done += 1


def _check_label(data: pd.DataFrame, domain: TableDomain, label: str) -> None:
    codes = domain.encode(data, [label])[label]
    if np.unique(codes).size < 2:
        raise ParameterError(
            f"label: {label!r} takes a single value in the data; a classification utility "
            "needs at least two classes"
        )


def _context(
    st: _Settings,
    data: pd.DataFrame,
    rng: np.random.Generator,
    progress: Progress | None,
    cancel: Cancellable | None,
) -> _Context:
    released = [*st.q, *st.s]
    st.domain.encode(data, released)  # every value within its public domain, or an error
    _check_label(data, st.domain, st.label)
    if st.folds > len(data):
        raise ParameterError(f"folds: must be at most the {len(data)} records, got {st.folds}")
    fold_rng, merge_rng = spawn(rng, 2)
    scorer = CandidateScorer.build(
        data, st.domain, q=st.q, s=st.s, label=st.label, folds=st.folds, rng=fold_rng
    )
    if scorer.reference.correct == 0 and st.selection == "paper":
        raise ParameterError(
            "label: GaussianNB classifies no original record correctly (U_o = 0), so the "
            "utility loss cannot be normalized"
        )
    plan = plan_merge(
        data,
        st.domain,
        st.q,
        st.s,
        st.label,
        merge=st.merge,
        groups=st.groups,
        clusters=st.clusters,
        rng=merge_rng,
    )
    raw_bounds: dict[str, tuple[float, float]] = {}
    if st.rescale == "data":
        for c in st.s:
            if isinstance(st.domain.columns[c], NumericColumn):
                values = data[c].to_numpy(dtype=np.float64, na_value=np.nan)
                raw_bounds[c] = (float(np.nanmin(values)), float(np.nanmax(values)))
    return _Context(
        st,
        data,
        plan,
        scorer,
        raw_bounds,
        progress,
        cancel,
    )


def _rescaled(ctx: _Context, candidate: pd.DataFrame) -> pd.DataFrame:
    """Numeric S within the public bounds, or the paper's min-max onto the raw ones."""
    out = candidate.copy(deep=False)
    for c in ctx.settings.s:
        col = ctx.settings.domain.columns[c]
        if not isinstance(col, NumericColumn):
            continue
        values = out[c].to_numpy(dtype=np.float64, na_value=np.nan)
        if c in ctx.raw_bounds:
            lo, hi = ctx.raw_bounds[c]
            s_lo, s_hi = np.nanmin(values), np.nanmax(values)
            span = s_hi - s_lo
            values = lo + (values - s_lo) * ((hi - lo) / span) if span > 0 else values * 0 + lo
            if col.integer:
                values = np.round(values)
        values = np.clip(values, col.lower, col.upper)
        kept = out[c].dtype if col.integer and not np.isnan(values).any() else np.float64
        out[c] = values.astype(kept)
    return out


def _row(
    ctx: _Context, pair: int, instance: int, score: Scores, noisy: bool, times: tuple[float, ...]
) -> dict[str, Any]:
    st = ctx.settings
    n = len(ctx.data)
    eps, delta = st.pairs[pair]
    u_o = st.reference_accuracy if noisy else ctx.scorer.reference.accuracy
    u_p = min(max(score.correct / n, 0.0), 1.0)
    link = min(max(score.linkable / n, 0.0), 1.0)
    u_l = utility_loss(u_o, u_p)
    p_n = normalized_leak(eps, link, st.t_epsilon)
    e_l, e = effectiveness(u_l, p_n, st.c)
    return {
        "pair": pair,
        "epsilon": eps,
        "delta": delta,
        "instance": instance,
        "utility": 1.0 - u_l,
        "u_o": u_o,
        "u_p": u_p,
        "u_l": u_l,
        "linkable": link,
        "p_n": p_n,
        "e_l": e_l,
        "e": e,
        "qualifies": e >= st.e_threshold,
        "chosen": False,
        "noisy": noisy,
        "fit_seconds": times[0],
        "sample_seconds": times[1],
        "score_seconds": times[2],
    }


@dataclass
class _Best:
    row: dict[str, Any] | None = None
    frame: pd.DataFrame | None = None
    model: SynthModel | None = None
    index: int = -1


def _fit(ctx: _Context, pair: int, rng: np.random.Generator) -> tuple[SynthModel, float]:
    eps, delta = ctx.settings.pairs[pair]
    started = time.perf_counter()
    synthesizer = ctx.settings.synthesizer.for_given(list(ctx.plan.given.columns))
    model = synthesizer.fit(ctx.plan.fit_frame, ctx.plan.fit_domain, eps, delta, rng=rng)
    return model, time.perf_counter() - started


def _instances(
    ctx: _Context,
    pair: int,
    model: SynthModel,
    fit_seconds: float,
    rng: np.random.Generator,
    rows: list[dict[str, Any]],
    best: _Best,
    noise: np.random.Generator | None,
) -> None:
    """Draw, merge, score and keep the best of the pair's ``t`` instances."""
    st = ctx.settings
    for instance, stream in enumerate(spawn(rng, st.instances)):
        ctx.step(f"pair {pair + 1}/{len(st.pairs)}, instance {instance + 1}/{st.instances}")
        started = time.perf_counter()
        candidate = _rescaled(ctx, merged_instance(ctx.plan, model, ctx.data, st.q, st.s, stream))
        sampled = time.perf_counter()
        score = ctx.scorer.score(candidate)
        if noise is not None:
            shifts = sample_discrete_gaussian(st.score_noise, 2, noise)
            score = Scores(score.correct + int(shifts[0]), score.linkable + int(shifts[1]))
        row = _row(
            ctx,
            pair,
            instance,
            score,
            noise is not None,
            (fit_seconds, sampled - started, time.perf_counter() - sampled),
        )
        rows.append(row)
        if row["qualifies"] and (best.row is None or row["e"] > best.row["e"]):
            best.row, best.frame, best.model, best.index = row, candidate, model, len(rows) - 1


def _search_paper(
    ctx: _Context, rng: np.random.Generator
) -> tuple[list[dict[str, Any]], _Best, list[SynthModel]]:
    st = ctx.settings
    ctx.total = len(st.pairs) * (1 + st.instances)
    rows: list[dict[str, Any]] = []
    best = _Best()
    models: list[SynthModel] = []
    for pair, stream in enumerate(spawn(rng, len(st.pairs))):
        fit_rng, sample_rng = spawn(stream, 2)
        ctx.step(f"fit pair {pair + 1}/{len(st.pairs)} (epsilon {st.pairs[pair][0]:.4g})")
        model, seconds = _fit(ctx, pair, fit_rng)
        models.append(model)
        _instances(ctx, pair, model, seconds, sample_rng, rows, best, None)
    return rows, best, models


def _search_private(
    ctx: _Context, rng: np.random.Generator
) -> tuple[list[dict[str, Any]], _Best, list[SynthModel], int]:
    st = ctx.settings
    runs_rng, pick_rng, noise_rng, work_rng = spawn(rng, 4)
    runs = geometric_runs(st.stop_probability, runs_rng)
    ctx.total = runs * (1 + st.instances)
    rows: list[dict[str, Any]] = []
    best = _Best()
    models: list[SynthModel] = []
    for run, stream in enumerate(spawn(work_rng, runs)):
        pair = int(pick_rng.integers(len(st.pairs)))
        fit_rng, sample_rng = spawn(stream, 2)
        ctx.step(f"run {run + 1}/{runs}: fit pair {pair + 1} (epsilon {st.pairs[pair][0]:.4g})")
        model, seconds = _fit(ctx, pair, fit_rng)
        if not _zcdp([model]):
            raise ParameterError(
                "selection: 'private' needs a synthesizer that accounts in zCDP (reports its "
                f"rho); {st.synthesizer.name or type(st.synthesizer).__name__!r} does not"
            )
        models.append(model)
        _instances(ctx, pair, model, seconds, sample_rng, rows, best, noise_rng)
    return rows, best, models, runs


def _private_cost(
    st: _Settings, models: Sequence[SynthModel]
) -> tuple[PrivacyCost, dict[str, Any]]:
    """The random-stopping bound for these pairs and settings (module notes)."""
    delta = max(d for _, d in st.pairs)
    rho_fit = max(rho_from_epsilon(e, d) for e, d in st.pairs)
    for model in models:
        spent = model.describe()["accounting"]["rho_spent"]
        if spent > rho_fit * (1 + 1e-9):
            raise ParameterError(
                f"synthesizer: spent rho = {spent:.6g}, above the largest pair's zCDP budget "
                f"{rho_fit:.6g}; the private selection's bound does not apply"
            )
    rho_run = 4.0 * rho_fit + st.instances / (st.score_noise * st.score_noise)
    eps = random_stopping_epsilon(rho_run, st.stop_probability, delta)
    extra = [c for c in st.domain.costs]
    cost = PrivacyCost(
        eps + sum(c.epsilon for c in extra),
        min(delta + sum(c.delta for c in extra), math.nextafter(1.0, 0.0)),
        "dp-synthetic",
        "dataset",
        ", ".join(st.s),
        "Papernot-Steinke random stopping (geometric, mean "
        f"{1 / st.stop_probability:g} runs) over fits and noisy scores; neighbours: one "
        "record's S changed, Q the same",
    )
    details = {
        "rule": "Papernot and Steinke 2022, Theorem 2 (eta = 1), Mironov 2017 Prop. 3",
        "neighbours": "one record's S values changed, its released Q the same",
        "rho_fit_max": rho_fit,
        "rho_fit_replace": 4.0 * rho_fit,
        "rho_scores": st.instances / (st.score_noise * st.score_noise),
        "rho_run": rho_run,
        "stop_probability": st.stop_probability,
        "expected_runs": 1.0 / st.stop_probability,
        "epsilon": cost.epsilon,
        "delta": cost.delta,
    }
    return cost, details


def _readings(st: _Settings, ctx: _Context) -> dict[str, str]:
    readings = {
        "fits": "one fit per (epsilon, delta) pair; its t instances are draws from that one "
        "model (post-processing: no further cost). The paper is silent on this; refitting "
        "t times would compose t fits",
        "rescale": "numeric S kept within the public bounds of the domain (veil's "
        "synthesizers draw inside them already)"
        if st.rescale == "public"
        else "the paper's min-max rescaling of each numeric S column onto the raw minimum "
        "and maximum (a leak)",
        "utility": f"U_o: GaussianNB cross-validated on the original ({st.folds} folds: a "
        "random permutation from veil.rng dealt round-robin, independent of every record "
        "value; pooled accuracy); U_p: GaussianNB trained on the candidate's "
        "rows of the training folds, tested on the held-out original folds; "
        "U_l = clip((U_o - U_p) / U_o, 0, 1); features one-hot / public-bound scaled",
        "linkage": "similarity groups: records with identical released Q; a record is "
        "linkable when its own perturbed S is the most cosine-similar to its original S in "
        "its group (ties count as linkable; a record alone in its group is linkable); "
        f"L is a fraction; P_N = min(1, epsilon * L / T_eps), T_eps = {st.t_epsilon:g}",
        "effectiveness": f"E_l = C U_l + (1 - C) P_N with C = {st.c:g}; e = 1 - E_l; "
        f"candidates with e >= E^T = {st.e_threshold:g} qualify",
        **ctx.plan.readings,
    }
    if st.selection == "paper":
        readings["selection"] = (
            "the paper's argmax of e over every qualifying candidate: not private (it reads "
            "the raw records), so no stated bound covers the choice; the stated cost is the "
            "composition of every fit, what publishing every fitted model would cost"
        )
    else:
        readings["selection"] = (
            "private: Papernot-Steinke random stopping; the number of runs is geometric "
            f"(mean {1 / st.stop_probability:g}); each run fits at a uniformly drawn pair; "
            f"scores from counts with discrete Gaussian noise (sigma {st.score_noise:g} "
            f"records); U_o is the public reference accuracy {st.reference_accuracy:g}"
        )
    return readings


def _leaks(st: _Settings, ctx: _Context, model: SynthModel) -> tuple[str, ...]:
    leaks = [*model.leaks, *ctx.plan.leaks]
    for c, (lo, hi) in ctx.raw_bounds.items():
        leaks.append(f"rescale='data': {c}: raw bounds [{lo:g}, {hi:g}] read from the records")
    if st.selection == "paper":
        leaks.append(
            "selection='paper': the argmax chose the released candidate by U_l and P_N "
            "measured on the raw records; no stated bound covers that choice (the composed "
            "cost covers the fitted models, not a choice among them made on the records)"
        )
    return tuple(dict.fromkeys(leaks))


def _guarantee(st: _Settings, cost: PrivacyCost) -> str:
    if st.selection == "paper":
        covered = (
            f"S ({', '.join(st.s)}) is drawn from differentially private models; publishing "
            f"every model the search fitted would cost epsilon = {cost.epsilon:.6g}, delta = "
            f"{cost.delta:.3g} ({cost.mechanism}; notion dp-synthetic, per dataset), but the "
            "paper's argmax chose among them on the raw records, so no stated bound covers "
            "the released table."
        )
    else:
        covered = (
            f"S ({', '.join(st.s)}) is drawn from differentially private models: releasing "
            f"this table costs epsilon = {cost.epsilon:.6g}, delta = {cost.delta:.3g} "
            f"({cost.mechanism}; notion dp-synthetic, per dataset)."
        )
    return (
        f"{covered} Q ({', '.join(st.q)}) is released exactly and is NOT covered by any DP "
        "guarantee: it shows each record's presence and Q values. The data-dependent "
        "choices listed as leaks are not covered either. The OptimShare paper's Theorem 3.2 "
        "(the framework satisfies epsilon-DP through its residual-linkage bound) is not "
        "claimed: veil states only the accounted costs of its DP models."
    )


def optimshare_search(
    data: pd.DataFrame,
    *,
    q: Sequence[str] | str,
    s: Sequence[str] | str,
    label: str,
    domain: TableDomain | Mapping[str, Any],
    pairs: BudgetPairs | Sequence[tuple[float, float]],
    synthesizer: str | Synthesizer = "mst",
    synthesizer_settings: Mapping[str, Any] | None = None,
    instances: int = 4,
    t_epsilon: float | None = None,
    c: float = 0.5,
    e_threshold: float = 0.5,
    folds: int = 5,
    merge: Merge = "conditional",
    groups: Groups = "label",
    clusters: Sequence[int] = range(2, 11),
    rescale: Rescale = "public",
    selection: Selection = "paper",
    stop_probability: float | None = None,
    score_noise: float = 10.0,
    reference_accuracy: float | None = None,
    rng: RngLike = None,
    progress: Progress | None = None,
    cancel: Cancellable | None = None,
) -> ShareResult:
    """Search OptimShare's candidates and return the one to release (see the module notes).

    Guarantee: with ``selection="private"``, the released S costs
    :attr:`ShareResult.cost` (notion ``dp-synthetic``, ε per dataset); with ``"paper"``,
    that cost covers the fitted models and the argmax's choice among them is a leak no
    bound covers. Q is exact and not covered; the listed leaks are not covered; Theorem
    3.2 is not claimed.

    Parameters
    ----------
    data : pandas.DataFrame
        The records (not modified). Only the columns of ``q`` and ``s`` are read.
    q : sequence of str
        Columns released exactly (OptimShare's refined Q); non-empty.
    s : sequence of str
        Columns replaced by DP synthetic values; non-empty, disjoint from ``q``.
    label : str
        The class column of the application (GaussianNB), one of ``q`` or ``s``.
    domain : TableDomain or plan-like mapping
        Public categories and bounds of every column of ``q`` and ``s``.
    pairs : BudgetPairs or sequence of (epsilon, delta)
        The (ε, δ) pairs; ε per dataset (central DP), δ a probability.
    synthesizer : str or Synthesizer, default "mst"
        A name of :data:`veil.synth.SYNTHESIZERS` (built with ``synthesizer_settings``,
        or :data:`DEFAULT_SYNTHESIZER_SETTINGS`), or a built synthesizer.
    instances : int, default 4
        ``t``, the instances drawn per fit.
    t_epsilon : float, optional
        ``T_ε`` of ``P_N``; default the one of ``pairs`` (a BudgetPairs), else 8.
    c : float, default 0.5
        ``C``, the weight of the utility loss in ``E_l``.
    e_threshold : float, default 0.5
        ``E^T``: a candidate qualifies when ``e >= E^T``.
    folds : int, default 5
        Cross-validation folds of the utility.
    merge : {"conditional", "paper"}, default "conditional"
        How S meets Q (:mod:`veil.share.merge`); ``"paper"`` is a listed leak.
    groups : {"label", "kmeans"}, default "label"
        The paper's merge: group by the label, or by k-means over ``clusters``.
    rescale : {"public", "data"}, default "public"
        Keep numeric S within the public bounds, or the paper's min-max onto the raw
        bounds (a listed leak).
    selection : {"paper", "private"}, default "paper"
        The paper's argmax (not private: no bound covers its choice; the stated cost is
        every fit composed) or random stopping.
    stop_probability : float, optional
        Private selection: γ, the chance of stopping after each run (default
        ``1 / len(pairs)``, so as many fits as the paper's rule on average).
    score_noise : float, default 10
        Private selection: σ (records) of the noise on each score count.
    reference_accuracy : float, optional
        Private selection: the public U_o (default 1, a perfect classifier).
    rng : None, int or numpy.random.Generator
        Randomness, see :mod:`veil.rng` (folds, fits, draws, the private selection).
    progress : callable, optional
        ``progress(label, done, total)`` before each fit and each instance.
    cancel : object with ``check(where)``, optional
        Checked before each step; whatever it raises stops the search (nothing is
        returned).

    Returns
    -------
    ShareResult

    Raises
    ------
    veil.errors.ParameterError, veil.errors.ColumnError
        Q or S empty or overlapping, a label absent, outside Q ∪ S or constant, a
        pair's ε <= 0 or δ outside (0, 1), a bad setting.
    veil.errors.DomainError, veil.errors.MissingValueError
        A value outside its public domain.
    veil.share.NoCandidateError
        No candidate reached ``E^T`` (the message names E^T and the best e).
    ImportError
        The synthesizer's or scikit-learn's extra is missing (with the pip command).
    """
    options = dict(locals())
    st = _settings(data, q, s, label, domain, pairs, options)
    gen = resolve_rng(rng)
    setup_rng, search_rng = spawn(gen, 2)
    ctx = _context(st, data, setup_rng, progress, cancel)
    runs = None
    if st.selection == "paper":
        rows, best, models = _search_paper(ctx, search_rng)
    else:
        rows, best, models, runs = _search_private(ctx, search_rng)
    if progress is not None:
        progress("scored every candidate", ctx.done, ctx.total)
    table = pd.DataFrame(rows, columns=list(_TABLE_COLUMNS))
    private, private_details = _private_cost(st, models) if _zcdp(models) else (None, None)
    costs: dict[str, PrivacyCost] = {}
    details: dict[str, Any] = {"runs": runs} if runs is not None else {}
    if st.selection == "paper":
        composed, details["composition"] = compose_fits(
            [m.cost for m in models], [m.describe() for m in models], st.domain.costs
        )
        costs["paper"] = composed
    if private is not None:
        costs["private"] = private
        details["private_selection"] = private_details
    _finish_table(table, best, st)
    if best.row is None or best.frame is None or best.model is None:
        top = table.iloc[int(np.argmax(table["e"].to_numpy()))] if len(table) else None
        found = (
            "no candidate was scored"
            if top is None
            else (
                f"the best effectiveness found was e = {top['e']:.4f} (pair {int(top['pair'])}, "
                f"epsilon {top['epsilon']:.4g}, instance {int(top['instance'])})"
            )
        )
        raise NoCandidateError(
            f"e_threshold: no candidate reached E^T = {st.e_threshold:g}; {found}; nothing "
            "is released (lower E^T, raise the pairs' epsilon, or change Q)",
            table=table,
        )
    cost = costs[st.selection]
    return ShareResult(
        data=best.frame,
        table=table,
        chosen={k: table.at[best.index, k] for k in table.columns},
        cost=cost,
        costs=costs,
        model=best.model,
        selection=st.selection,
        q=st.q,
        s=st.s,
        label=st.label,
        readings=_readings(st, ctx),
        leaks=_leaks(st, ctx, best.model),
        guarantee=_guarantee(st, cost),
        settings=st.to_dict(),
        details=details,
    )


def _zcdp(models: Sequence[SynthModel]) -> bool:
    for model in models:
        accounting = model.describe().get("accounting")
        if not (isinstance(accounting, dict) and "rho_spent" in accounting):
            return False
    return bool(models)


def _finish_table(table: pd.DataFrame, best: _Best, st: _Settings) -> None:
    if best.index >= 0:
        table.loc[best.index, "chosen"] = True
    table["qualifies"] = table["qualifies"].astype(bool)
    table["chosen"] = table["chosen"].astype(bool)
    table["noisy"] = table["noisy"].astype(bool)
