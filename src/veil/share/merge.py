"""How OptimShare puts synthetic S beside the exact Q: two merges.

* ``"conditional"`` (veil's default): the synthesizer is fitted on Q ∪ S and every
  row's S is drawn from the DP model conditionally on that row's exact Q
  (:meth:`veil.synth.SynthModel.sample` with ``given``). Q is published exactly anyway,
  so conditioning on it adds nothing to what the release shows, and the synthetic S
  keeps its relation to Q as far as the model learnt it under DP. Nothing is read from
  the records beyond the model.
* ``"paper"``: the paper's way (Section 3.3, Algorithm 2). The records are first grouped
  by their tuple distribution: their class labels (``groups="label"``), or k-means
  clusters of the raw Q ∪ S records with the number of clusters chosen by the
  silhouette coefficient (``groups="kmeans"``). S is synthesized with the group as a
  column and drawn for each row conditionally on the row's group, then put beside the
  row's Q. The groups are computed from the raw records, so which synthetic S sits
  beside which exact Q depends on the data beyond the DP model: a leak, listed.

The merge only plans which frame is fitted and what each row is conditioned on; the
fit and the draws are the search's (:mod:`veil.share.search`).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from veil.errors import ParameterError
from veil.share.encoding import record_vectors
from veil.synth import CategoricalColumn, SynthModel, TableDomain

__all__ = ["MergePlan", "merged_instance", "plan_merge"]

Merge = Literal["conditional", "paper"]
Groups = Literal["label", "kmeans"]

_CLUSTER = "_optimshare_cluster"
_SILHOUETTE_SAMPLE = 2000  # records the silhouette coefficient is computed on


@dataclass(frozen=True)
class MergePlan:
    """What the synthesizer is fitted on and what each released row is drawn given.

    Attributes
    ----------
    kind : {"conditional", "paper"}
    fit_frame : pandas.DataFrame
        The frame the synthesizer is fitted on (columns of ``fit_domain``).
    fit_domain : TableDomain
        Its public domain (for the paper's k-means, with the cluster column).
    given : pandas.DataFrame
        Per record, the values its S is drawn conditionally on.
    helper : str or None
        A column of the model that is not released (the k-means cluster).
    leaks : tuple of str
        Data-dependent choices of the merge.
    readings : dict
        What was done, in words.
    """

    kind: Merge
    fit_frame: pd.DataFrame
    fit_domain: TableDomain
    given: pd.DataFrame
    helper: str | None = None
    leaks: tuple[str, ...] = ()
    readings: dict[str, str] = field(default_factory=dict)


def plan_merge(
    data: pd.DataFrame,
    domain: TableDomain,
    q: Sequence[str],
    s: Sequence[str],
    label: str,
    *,
    merge: Merge,
    groups: Groups,
    clusters: Sequence[int],
    rng: np.random.Generator,
) -> MergePlan:
    """Plan the merge of synthetic S with the exact Q (see the module notes)."""
    released = [*q, *s]
    if merge == "conditional":
        return MergePlan(
            "conditional",
            data[released],
            domain.project(released),
            data[list(q)],
            readings={
                "merge": "conditional: the model is fitted on Q ∪ S; each row's S is drawn "
                "from it given the row's exact Q (no data read beyond the DP model)"
            },
        )
    if merge != "paper":
        raise ParameterError(f"merge: must be 'conditional' or 'paper', got {merge!r}")
    if groups == "label":
        return _by_label(data, domain, q, s, label)
    if groups == "kmeans":
        return _by_clusters(data, domain, q, s, clusters, rng)
    raise ParameterError(f"groups: must be 'label' or 'kmeans', got {groups!r}")


def _by_label(
    data: pd.DataFrame, domain: TableDomain, q: Sequence[str], s: Sequence[str], label: str
) -> MergePlan:
    modelled = list(s) if label in s else [*s, label]
    leaks = [
        f"merge='paper': synthetic S is matched to each row's Q through the row's raw class "
        f"label {label!r}, read from the records"
    ]
    if label in s:
        leaks.append(f"merge='paper': the label {label!r} is released exactly (it is the group)")
    return MergePlan(
        "paper",
        data[modelled],
        domain.project(modelled),
        data[[label]],
        leaks=tuple(leaks),
        readings={
            "merge": f"paper (Algorithm 2, class labels): S ∪ {{{label!r}}} is synthesized and "
            "each row's S drawn given its raw label, then put beside its exact Q"
        },
    )


def _check_clusters(clusters: Sequence[int], n: int) -> list[int]:
    values = list(clusters)
    bad = [
        k
        for k in values
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 2 <= k < n
    ]
    if not values or bad:
        raise ParameterError(
            f"clusters: must be integers in [2, {n - 1}] (fewer than the records), got {values!r}"
        )
    return sorted({int(k) for k in values})


def _kmeans_labels(x: Any, ks: list[int], rng: np.random.Generator) -> tuple[Any, int, float]:
    try:
        from sklearn.cluster import KMeans
        from sklearn.metrics import silhouette_score
    except ImportError as exc:
        raise ImportError(
            "merge='paper' with groups='kmeans' needs scikit-learn: pip install 'veil[release]'",
            name="sklearn",
        ) from exc
    best: tuple[Any, int, float] | None = None
    for k in ks:
        seed = int(rng.integers(2**31 - 1))
        found = KMeans(n_clusters=k, n_init=3, random_state=seed).fit_predict(x)
        if np.unique(found).size < 2:
            continue
        score = float(
            silhouette_score(
                x, found, sample_size=min(len(x), _SILHOUETTE_SAMPLE), random_state=seed
            )
        )
        if best is None or score > best[2]:
            best = (found, k, score)
    if best is None:
        raise ParameterError(f"clusters: k-means found fewer than 2 clusters for every k in {ks}")
    return best


def _by_clusters(
    data: pd.DataFrame,
    domain: TableDomain,
    q: Sequence[str],
    s: Sequence[str],
    clusters: Sequence[int],
    rng: np.random.Generator,
) -> MergePlan:
    if _CLUSTER in data.columns:
        raise ParameterError(f"data: a column is named {_CLUSTER!r}, which the merge needs")
    ks = _check_clusters(clusters, len(data))
    x = record_vectors(data, domain, [*q, *s])
    labels, k, score = _kmeans_labels(x, ks, rng)
    ids = np.asarray(labels, dtype=np.int64)
    fit_frame = data[list(s)].assign(**{_CLUSTER: ids})
    columns = {c: domain.columns[c] for c in s}
    columns[_CLUSTER] = CategoricalColumn(tuple(range(k)))
    fit_domain = TableDomain(columns, leaks=domain.leaks, costs=domain.costs)
    given = pd.DataFrame({_CLUSTER: ids}, index=data.index)
    return MergePlan(
        "paper",
        fit_frame,
        fit_domain,
        given,
        helper=_CLUSTER,
        leaks=(
            f"merge='paper': k-means clusters (k = {k} of {ks}, chosen by the silhouette "
            f"coefficient {score:.4f}) computed on the raw Q ∪ S records decide which "
            "synthetic S sits beside which exact Q",
        ),
        readings={
            "merge": f"paper (Algorithm 2, k-means): k = {k} clusters of the raw Q ∪ S "
            f"(one-hot, public-bound scaling; silhouette on {min(len(data), _SILHOUETTE_SAMPLE)} "
            "records); S ∪ {cluster} synthesized, each row's S drawn given its cluster"
        },
    )


def merged_instance(
    plan: MergePlan,
    model: SynthModel,
    data: pd.DataFrame,
    q: Sequence[str],
    s: Sequence[str],
    rng: np.random.Generator,
) -> pd.DataFrame:
    """One candidate: the rows' exact Q beside S drawn from ``model`` (input order)."""
    drawn = model.sample(given=plan.given, rng=rng)
    columns = {c: data[c] for c in q}
    columns.update({c: drawn[c] for c in s})
    return pd.DataFrame(columns, index=data.index)[[*q, *s]]
