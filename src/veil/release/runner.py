"""Run a release plan: read, protect, check the ledger, write the release atomically.

:func:`run` is the whole path of a release. The plan is validated and its budget
allocated; the ledger is built and checked against the budget before the input is
opened (a refused plan reads nothing, and ``dry_run=True`` stops there). The one
exception is ``allocation: target`` without a public ``budget.target.sample``, which
measures utility on a sample of the input first (with a warning). The engine then
reads the input and runs the row steps (column treatments and geo masks that treat each
record on its own); table steps (anonymization, cloaking, grid suppression) follow on
the whole table. The costs the functions recorded are compared with the plan, and only
then are the outputs written, each atomically (a temporary file in the output folder,
renamed over the target), the manifest last: a failure at any point leaves the previous
release, report and manifest as they were. (A Dask run streams its partitions into the
temporary file, with k-anonymity and grid suppression done by distributed group-bys,
and compares the costs and builds the report before the rename; see
:mod:`veil.release.engine`.) A killed run may leave its hidden temporary file behind,
never a partial release.

The released records keep the index labels of the input rows (the file is written
without them), so the report pairs each released record with its original even when
records were suppressed. When the report's risk section is built, the manifest's
``risk`` holds :func:`veil.risk.summary` before and after on every record.

Every privacy decision is made by the functions this module calls
(:mod:`veil.ldp`, :mod:`veil.masking`, :mod:`veil.geo`, :mod:`veil.anonymity`); the runner
only orchestrates them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from veil import anonymity, geo, ldp, masking
from veil.errors import DataTypeError, MissingValueError, PrivacyLeakWarning
from veil.frames import PRIVACY_ATTR, output_frame, record_masking, shuffle_rows
from veil.masking import SecretKey
from veil.mechanisms import ordinal_scores
from veil.release.allocate import Privatize, allocate, needs_sample, target_allocate
from veil.release.engine import (
    DaskEngine,
    Engine,
    InputData,
    PandasEngine,
    Progress,
    RowStep,
    get_engine,
    input_spec,
)
from veil.release.errors import LedgerMismatchError, PlanError
from veil.release.ledger import ReleaseLedger, check_budget, cross_check, plan_ledger, render_ledger
from veil.release.manifest import Records, RunFacts, build_records, warning_records
from veil.release.outputs import OutputSet
from veil.release.plan import (
    AnonymizationSpec,
    CloakMask,
    DonutMask,
    ExponentialTreatment,
    Ff1Treatment,
    GaussianTreatment,
    GeneralizeTreatment,
    GridMask,
    HmacTreatment,
    JitterMask,
    LaplaceTreatment,
    LdpTreatment,
    LocationSpec,
    Plan,
    PlanarLaplaceMask,
    RandomizedResponseTreatment,
    RedactTreatment,
    TokenTreatment,
    load_plan,
)
from veil.risk import summary as risk_summary
from veil.rng import RngLike, resolve_rng, spawn
from veil.spreadsheet import escape_formulas

__all__ = ["RunResult", "custodian_folder", "run"]

_TableStep = Callable[[pd.DataFrame, np.random.Generator], pd.DataFrame]
# The risk threshold of the manifest's risk summary (the report's).
_RISK_THRESHOLD = 0.2


@dataclass(frozen=True)
class RunResult:
    """What a run did: the ledger, and for a real run the files written and a summary.

    Attributes
    ----------
    plan : Plan
        The plan as run (budget allocated).
    ledger : ReleaseLedger
        Planned costs per step and the totals.
    dry_run : bool
        True when nothing was read or written.
    out_dir : pathlib.Path or None
        The output folder.
    release_path, manifest_path : pathlib.Path or None
        The release file and its public manifest (None for a dry run).
    report_path : pathlib.Path or None
        The report, in the custodian folder (None for a dry run, or no report).
    custodian_dir, custodian_path : pathlib.Path or None
        The custodian folder and its confidential ``custodian.json``.
    rows_in, rows_out : int or None
        Records read and released.
    release_format : {"csv", "parquet"} or None
        The release file's format (None for a dry run).
    released : pandas.DataFrame or None
        The released table as written (index: the input rows' labels), when the run
        held it in memory; None for a dry run or a Dask run streamed into the file
        (:meth:`read_release` reads the file then).
    manifest : dict
        The public manifest written (empty for a dry run).
    custodian : dict
        The confidential custodian record written (empty for a dry run).
    warnings : list of dict
        Warnings raised during the run (category and message).
    seconds : float
        Wall time of the run.
    """

    plan: Plan
    ledger: ReleaseLedger
    dry_run: bool
    out_dir: Path | None = None
    release_path: Path | None = None
    manifest_path: Path | None = None
    report_path: Path | None = None
    rows_in: int | None = None
    rows_out: int | None = None
    manifest: dict[str, Any] = field(default_factory=dict)
    warnings: list[dict[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    release_format: str | None = None
    released: pd.DataFrame | None = field(default=None, repr=False, compare=False)
    custodian: dict[str, Any] = field(default_factory=dict, repr=False)
    custodian_dir: Path | None = None
    custodian_path: Path | None = None

    def read_release(self) -> pd.DataFrame:
        """The released table: :attr:`released`, or else the release file read back.

        Rows come in the file's (shuffled) order. Held in memory, the index gives each
        row's input label, the custodian's link back to the raw records; read from the
        file, the index is a plain range (the file carries none).

        Raises
        ------
        PlanError
            For a dry run (nothing was released).
        """
        if self.released is not None:
            return self.released
        if self.release_path is None:
            raise PlanError("dry_run: a dry run releases nothing; run the plan first")
        if self.release_format == "parquet":
            return pd.read_parquet(self.release_path)
        return pd.read_csv(self.release_path)

    @property
    def totals(self) -> dict[str, Any]:
        """Totals per notion against the budget (see :meth:`ReleaseLedger.totals`)."""
        return self.ledger.totals()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (for ``--json`` output): files, rows, totals, warnings."""
        return {
            "dry_run": self.dry_run,
            "out_dir": None if self.out_dir is None else os.fspath(self.out_dir),
            "files": {
                name: os.fspath(path)
                for name, path in (
                    ("release", self.release_path),
                    ("report", self.report_path),
                    ("manifest", self.manifest_path),
                    ("custodian", self.custodian_path),
                )
                if path is not None
            },
            "rows_in": self.rows_in,
            "rows_out": self.rows_out,
            "totals": self.totals,
            "not_protected": self.ledger.not_protected(),
            "warnings": self.warnings,
            "seconds": round(self.seconds, 3),
            "ledger": self.ledger.to_dict(),
        }

    def summary(self) -> str:
        """A few lines for a terminal: the ledger for a dry run, else what was written."""
        if self.dry_run:
            return render_ledger(self.ledger) + "\n(dry run: nothing read or written)"
        totals = self.totals
        lines = [
            f"released {self.rows_out} of {self.rows_in} records in {self.seconds:.2f} s",
            f"ldp per record: epsilon={totals['ldp']['epsilon']:.6g}, "
            f"delta={totals['ldp']['delta']:.3g}; metric: epsilon={totals['metric']['epsilon']:.6g}"
            " per metre",
        ]
        lines.extend(f"syntactic: {line}" for line in totals["syntactic"])
        lines.append(f"warnings: {len(self.warnings)}")
        lines.extend(f"wrote {p}" for p in (self.release_path, self.manifest_path) if p is not None)
        lines.extend(
            f"wrote {p} (confidential: keep it apart from the release)"
            for p in (self.custodian_path, self.report_path)
            if p is not None
        )
        return "\n".join(lines)


# ------------------------------------------------------------------------ keys


def _key(spec: HmacTreatment | TokenTreatment | Ff1Treatment) -> SecretKey:
    key = (
        SecretKey.from_file(spec.key_file)
        if spec.key_file is not None
        else SecretKey.from_env(str(spec.key_env))
    )
    if spec.key_id is not None:
        key.require_id(spec.key_id)
    return key


# ------------------------------------------------------------------ column steps


def _replace(df: pd.DataFrame, column: str, values: Any) -> pd.DataFrame:
    out = output_frame(df)
    out[column] = values
    return out


def _ff1_step(column: str, spec: Ff1Treatment) -> Callable[[pd.DataFrame, Any], pd.DataFrame]:
    key = _key(spec)
    key_id = key.key_id
    cipher = masking.FF1(key, spec.alphabet)
    tweak = (spec.tweak if spec.tweak is not None else column).encode("utf-8")

    def apply(df: pd.DataFrame, _: Any) -> pd.DataFrame:
        # FF1 is deterministic: encrypt each distinct value once.
        codes, uniques = pd.factorize(df[column], use_na_sentinel=True)
        series = df[column]
        # A loop over the distinct values only: FF1 encrypts text.
        if not all(isinstance(u, str) for u in uniques):
            raise DataTypeError(
                f"column {column!r}: FF1 encrypts text, got {series.dtype} values; store the "
                "column as text (CSV columns of keyed treatments are read as text)"
            )
        if spec.missing == "error" and (codes < 0).any():
            raise MissingValueError(
                f"column {column!r}: holds {int((codes < 0).sum())} missing values; set "
                f"columns.{column}.treatment.missing: keep to leave them missing"
            )
        encrypted = np.asarray(cipher.encrypt_many(list(uniques), tweak=tweak), dtype=object)
        values = np.full(codes.shape, None, dtype=object)
        values[codes >= 0] = encrypted[codes[codes >= 0]]
        out = _replace(df, column, pd.Series(values, index=series.index, dtype=object))
        entry = {"column": column, "method": "ff1", "key_id": key_id, "radix": len(spec.alphabet)}
        record_masking(out, df, [entry])
        return out

    return apply


def _allocated(name: str, epsilon: float | None) -> float:
    if epsilon is None:
        raise PlanError(f"columns.{name}.treatment.epsilon: not set (allocate the budget first)")
    return epsilon


class _Shipped:
    """A hierarchy that travels to Dask worker processes as its label table.

    :class:`~veil.anonymity.Hierarchy` is immutable and does not pickle; its label table
    rebuilds the same hierarchy (same codes) where it is unpickled.
    """

    def __init__(self, hierarchy: anonymity.Hierarchy) -> None:
        self._table = hierarchy.table
        self._hierarchy: anonymity.Hierarchy | None = hierarchy

    def __getstate__(self) -> dict[str, Any]:
        return {"table": self._table}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._table = state["table"]
        self._hierarchy = None

    def get(self) -> anonymity.Hierarchy:
        """The hierarchy (rebuilt from its table after unpickling)."""
        if self._hierarchy is None:
            self._hierarchy = anonymity.Hierarchy(self._table)
        return self._hierarchy


def _column_step(name: str, treatment: Any) -> RowStep | None:
    """The row step of a column's treatment (None for keep and drop)."""
    step = _column_transform(name, treatment)
    return None if step is None else dataclasses.replace(step, columns=(name,))


def _column_transform(name: str, treatment: Any) -> RowStep | None:
    label = f"{name}: {treatment.method}"
    if treatment.method in ("keep", "drop"):
        return None
    if isinstance(treatment, RedactTreatment):
        return RowStep(
            label, lambda df, _: _replace(df, name, masking.redact(df[name], treatment.replacement))
        )
    if isinstance(treatment, HmacTreatment):
        key = _key(treatment)
        return RowStep(
            label,
            lambda df, _: masking.pseudonymize_columns(
                df,
                [name],
                key,
                normalize=treatment.normalize,
                length=treatment.length,
                namespace=treatment.namespace,
            ),
        )
    if isinstance(treatment, TokenTreatment):
        master = _key(treatment)

        def tokenize(df: pd.DataFrame, _: Any) -> pd.DataFrame:
            namespace = treatment.namespace or name
            with masking.Vault(treatment.vault, master) as vault:
                tokens = vault.tokenize(df[name], namespace)
                entry = {
                    "column": name,
                    "method": "vault token",
                    "key_id": vault.key_id,
                    "namespace": namespace,
                }
            out = _replace(df, name, tokens)
            record_masking(out, df, [entry])
            return out

        return RowStep(label, tokenize)
    if isinstance(treatment, Ff1Treatment):
        return RowStep(label, _ff1_step(name, treatment))
    if isinstance(treatment, GeneralizeTreatment):
        hierarchy = anonymity.Hierarchy.from_csv(treatment.hierarchy, sep=treatment.sep)
        if treatment.level >= hierarchy.levels:
            raise PlanError(
                f"columns.{name}.treatment.level: {treatment.level} is beyond the hierarchy's "
                f"levels 0..{hierarchy.levels - 1}"
            )
        shipped = _Shipped(hierarchy)
        return RowStep(
            label,
            lambda df, _: _replace(df, name, shipped.get().generalize(df[name], treatment.level)),
        )
    if not isinstance(treatment, LdpTreatment):
        raise PlanError(f"columns.{name}.treatment.method: {treatment.method!r} has no step")
    eps = _allocated(name, treatment.epsilon)
    if isinstance(treatment, LaplaceTreatment):
        lo, hi = treatment.bounds
        return RowStep(
            label,
            lambda df, g: ldp.dp_clip_laplace(
                df,
                name,
                eps,
                lo,
                hi,
                resolution=treatment.resolution,
                clip_output=treatment.clip_output,
                missing=treatment.missing,
                rng=g,
            ),
        )
    if isinstance(treatment, GaussianTreatment):
        lo, hi = treatment.bounds
        return RowStep(
            label,
            lambda df, g: ldp.dp_clip_gaussian(
                df,
                name,
                eps,
                lo,
                hi,
                treatment.delta,
                calibration=treatment.calibration,
                resolution=treatment.resolution,
                clip_output=treatment.clip_output,
                missing=treatment.missing,
                rng=g,
            ),
        )
    if isinstance(treatment, ExponentialTreatment):
        scores = ordinal_scores(len(treatment.domain)) if treatment.ordinal else None
        return RowStep(
            label,
            lambda df, g: ldp.dp_exponential(
                df,
                name,
                eps,
                domain=treatment.domain,
                scores=scores,
                calibration=treatment.calibration,
                missing=treatment.missing,
                rng=g,
            ),
        )
    assert isinstance(treatment, RandomizedResponseTreatment)
    if len(treatment.domain) == 2:
        return RowStep(
            label,
            lambda df, g: ldp.dp_randomized_response_binary(
                df,
                name,
                eps,
                domain=treatment.domain,
                missing=treatment.missing,
                rng=g,
            ),
        )
    return RowStep(
        label,
        lambda df, g: ldp.dp_randomized_response_kary(
            df,
            name,
            eps,
            domain=treatment.domain,
            missing=treatment.missing,
            rng=g,
        ),
    )


# --------------------------------------------------------------- location steps


def _projection(loc: LocationSpec) -> Any:
    """The location's public projection, or ``"data"`` (the warned opt-in)."""
    if loc.centre is not None:
        # A public centre: UTM when the plan asks for it, else the azimuthal projection
        # (exact distances from the centre whatever the zone).
        method: Literal["utm", "aeqd"] = "utm" if loc.projection == "utm" else "aeqd"
        return geo.projection_at(*loc.centre, method=method)
    if loc.crs is not None:
        return geo.projection_for_crs(loc.crs)
    if loc.region is not None:
        return geo.projection_for_region(*loc.region)
    return "data"


def _location_step(loc: LocationSpec) -> tuple[str, _TableStep, bool]:
    """The mask as a step, and whether it is row-wise (independent of other records)."""
    projection = _projection(loc)
    fixed = _public_projection(loc)
    mask = loc.mask
    outside = loc.outside
    label = f"{loc.name}: {mask.method}"
    if isinstance(mask, PlanarLaplaceMask):
        eps = mask.epsilon
        assert eps is not None
        return (
            label,
            lambda df, g: geo.planar_laplace(
                df,
                loc.lat,
                loc.lon,
                eps,
                reports=mask.reports,
                grid_m=mask.grid_m,
                projection=projection,
                outside=outside,
                missing=loc.missing,
                rng=g,
            ),
            fixed,
        )
    if isinstance(mask, GridMask):
        return (
            label,
            lambda df, _: geo.grid(
                df,
                loc.lat,
                loc.lon,
                mask.cell_m,
                min_count=mask.min_count,
                projection=projection,
                outside=outside,
                missing=loc.missing,
            ),
            fixed and mask.min_count is None,
        )
    if isinstance(mask, JitterMask):
        return (
            label,
            lambda df, g: geo.jitter(
                df,
                loc.lat,
                loc.lon,
                mask.radius_m,
                kind=mask.kind,
                projection=projection,
                outside=outside,
                missing=loc.missing,
                rng=g,
            ),
            fixed,
        )
    if isinstance(mask, DonutMask):
        return (
            label,
            lambda df, g: geo.donut(
                df,
                loc.lat,
                loc.lon,
                mask.r_min_m,
                mask.r_max_m,
                projection=projection,
                outside=outside,
                missing=loc.missing,
                rng=g,
            ),
            fixed,
        )
    assert isinstance(mask, CloakMask)
    return (
        label,
        lambda df, _: geo.cloak(
            df,
            loc.lat,
            loc.lon,
            mask.k,
            bounds_m=mask.bounds_m,
            max_depth=mask.max_depth,
            min_cell_m=mask.min_cell_m,
            projection=projection,
            outside=outside,
            missing=loc.missing,
        ),
        False,
    )


# ------------------------------------------------------------------ anonymization


def _models(spec: AnonymizationSpec) -> list[anonymity.PrivacyModel]:
    out: list[anonymity.PrivacyModel] = []
    for m in spec.models:
        if m.model == "k_anonymity":
            out.append(anonymity.KAnonymity(m.k))
        elif m.model == "distinct_l_diversity":
            out.append(anonymity.DistinctLDiversity(m.attribute, m.l))
        elif m.model == "entropy_l_diversity":
            out.append(anonymity.EntropyLDiversity(m.attribute, m.l))
        elif m.model == "recursive_c_l_diversity":
            out.append(anonymity.RecursiveCLDiversity(m.attribute, m.c, m.l))
        else:
            out.append(anonymity.TCloseness(m.attribute, m.t, m.distance))
    return out


def _anonymization_args(
    spec: AnonymizationSpec,
) -> tuple[dict[str, anonymity.Hierarchy], list[anonymity.PrivacyModel], list[str]]:
    hierarchies = {
        qi: anonymity.Hierarchy.from_csv(h.path, sep=h.sep)
        for qi, h in spec.quasi_identifiers.items()
    }
    sensitive = sorted({a for m in spec.models if (a := getattr(m, "attribute", None))})
    return hierarchies, _models(spec), sensitive


def _anonymization_info(
    result: anonymity.AnonymizationResult, models: list[anonymity.PrivacyModel]
) -> dict[str, Any]:
    return {
        "levels": dict(result.levels),
        "suppressed": int(result.suppressed),
        "metrics": {k: float(v) for k, v in result.metrics.items()},
        "models": [repr(m) for m in models],
    }


def _anonymize(df: pd.DataFrame, spec: AnonymizationSpec) -> tuple[pd.DataFrame, dict[str, Any]]:
    hierarchies, models, sensitive = _anonymization_args(spec)
    result = anonymity.anonymize(
        df,
        hierarchies,
        models,
        max_suppression=spec.max_suppression,
        metric=spec.metric,
        sensitive=sensitive or None,
        suppression=spec.suppression,
    )
    # The kept records keep their labels, so the report can pair them with the originals.
    return result.data, _anonymization_info(result, models)


# Name of the record-count column of the class counts (a group-by's sizes).
_RECORDS = "__veil_records__"
# Records of the in-memory sample a Dask run builds its report from (at least one
# partition).
_REPORT_ROWS = 50_000


def _record_counts(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Records per combination of values of ``columns`` (missing is a value)."""
    sizes = frame.groupby(columns, dropna=False, observed=True, sort=False).size()
    return sizes.rename(_RECORDS).reset_index()


class _Counts:
    """Class counts summed over partitions: the reduce side of a distributed group-by."""

    def __init__(self, columns: list[str]) -> None:
        self.columns = columns
        self._parts: list[pd.DataFrame] = []

    def add(self, part: pd.DataFrame) -> None:
        self._parts.append(part)
        if len(self._parts) >= 32:
            self._parts = [self.frame()]

    def frame(self) -> pd.DataFrame:
        if not self._parts:
            return pd.DataFrame({**{c: [] for c in self.columns}, _RECORDS: []})
        both = pd.concat(self._parts, ignore_index=True)
        summed = both.groupby(self.columns, dropna=False, observed=True, sort=False)[_RECORDS]
        return summed.sum().reset_index()


def _add_counts(counters: dict[str, _Counts], found: dict[str, pd.DataFrame]) -> None:
    for name, counts in found.items():
        counters[name].add(counts)


def _kept_rows(
    codes: list[npt.NDArray[np.intp]], kept: list[npt.NDArray[np.intp]], radices: list[int]
) -> npt.NDArray[np.bool_]:
    """Whether each row's class (its group codes) is among the ``kept`` classes."""
    n = len(codes[0])
    key = np.zeros(n + len(kept[0]), dtype=np.int64)
    span = 1
    for rows, classes, radix in zip(codes, kept, radices, strict=True):
        if span * radix >= 1 << 62:
            # Re-code the key densely before it could overflow.
            dense, _ = pd.factorize(key)
            key = np.asarray(dense, dtype=np.int64)
            span = int(key.max(initial=0)) + 1
        key = key * radix + np.concatenate([rows, classes])
        span *= radix
    released: npt.NDArray[np.bool_] = np.isin(key[:n], key[n:])
    return released


def _release_classes(
    result: anonymity.AnonymizationResult,
    hierarchies: dict[str, anonymity.Hierarchy],
    suppression: str,
) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Per partition: generalize the QIs to the chosen levels, suppress the other classes.

    ``result`` comes from the class counts (suppression ``remove``): its rows are the
    released classes. A record is released when its generalized class is one of them,
    as :func:`veil.anonymity.anonymize` decides on the whole table.
    """
    qis = list(result.levels)
    groups = [hierarchies[q].codes(result.levels[q]) for q in qis]
    labels = [np.asarray(hierarchies[q].labels(result.levels[q]), dtype=object) for q in qis]
    kept: list[npt.NDArray[np.intp]] = []
    for q, names in zip(qis, labels, strict=True):
        found = pd.Index(names).get_indexer(result.data[q].astype(object))
        assert (found >= 0).all(), f"anonymization: a released class of {q!r} has no label"
        kept.append(np.asarray(found, dtype=np.intp))
    radices = [len(names) for names in labels]
    shipped = {q: _Shipped(hierarchies[q]) for q in qis}

    def release(frame: pd.DataFrame) -> pd.DataFrame:
        codes = [g[shipped[q].get().encode(frame[q])] for q, g in zip(qis, groups, strict=True)]
        released = _kept_rows(codes, kept, radices)
        out = output_frame(frame)
        for q, names, c in zip(qis, labels, codes, strict=True):
            out[q] = names[c]
        if suppression == "remove":
            return out.loc[released]
        out.loc[~released, qis] = "*"
        return out

    return release


def _counting_probe(
    counted: dict[str, list[str]], locations: set[str]
) -> Callable[[int, pd.DataFrame, pd.DataFrame], dict[str, pd.DataFrame]]:
    """Per partition: the class counts of each counted step (cells of present points)."""

    def probe(_p: int, _original: pd.DataFrame, part: pd.DataFrame) -> dict[str, pd.DataFrame]:
        return {
            name: _record_counts(part[keys].dropna() if name in locations else part, keys)
            for name, keys in counted.items()
        }

    return probe


def _suppress_cells(
    lat: str, lon: str, sparse: pd.DataFrame
) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Per partition: points at the centre of a sparse cell become missing.

    The cells are those :func:`veil.geo.grid` would suppress with ``min_count`` on the
    whole table (fewer points than ``min_count``), found by a group-by of the centres.
    """

    def pairs(frame: pd.DataFrame) -> npt.NDArray[np.complex128]:
        values = np.ascontiguousarray(frame[[lat, lon]].to_numpy(dtype=np.float64))
        key: npt.NDArray[np.complex128] = values.view(np.complex128).ravel()
        return key

    centres = pairs(sparse)

    def suppress(frame: pd.DataFrame) -> pd.DataFrame:
        hit = np.isin(pairs(frame), centres)
        if not hit.any():
            return frame
        out = output_frame(frame)
        out.loc[hit, [lat, lon]] = np.nan
        return out

    return suppress


def _finisher(
    suppress_cells: list[Callable[[pd.DataFrame], pd.DataFrame]],
    dropped: list[str],
    release_classes: Callable[[pd.DataFrame], pd.DataFrame] | None,
) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Per partition, after the row steps: sparse cells, dropped columns, then classes."""

    def finish(part: pd.DataFrame) -> pd.DataFrame:
        for suppress in suppress_cells:
            part = suppress(part)
        kept = part.drop(columns=dropped)
        if release_classes is not None:
            kept = release_classes(kept)
        kept.attrs = {}
        return kept

    return finish


def _sample_partitions(partitions: int, rows: int) -> set[int]:
    """Evenly spaced partitions holding about :data:`_REPORT_ROWS` records (at least one)."""
    wanted = math.ceil(partitions * _REPORT_ROWS / max(rows, 1))
    m = min(partitions, max(1, wanted))
    return {int(p) for p in np.linspace(0, partitions - 1, m).round()}


def _paired_sample(
    parts: dict[int, tuple[pd.DataFrame, pd.DataFrame]],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Sampled partitions, originals and releases, with labels pairing their records."""
    originals: list[pd.DataFrame] = []
    released: list[pd.DataFrame] = []
    offset = 0
    for p in sorted(parts):
        before, after = parts[p]
        positions = pd.Index(before.index).get_indexer(after.index)
        originals.append(before.set_axis(pd.RangeIndex(offset, offset + len(before))))
        released.append(after.set_axis(pd.Index(positions + offset)))
        offset += len(before)
    return pd.concat(originals), pd.concat(released)


def _risk(frame: pd.DataFrame, qis: list[str], weights: str | None = None) -> dict[str, Any]:
    if not qis or len(frame) == 0:
        return {}
    summary = risk_summary(frame, qis, threshold=_RISK_THRESHOLD, weights=weights)
    return {"quasi_identifiers": qis, **summary.to_dict()}


# --------------------------------------------------------------------------- run


def _check_columns(plan: Plan, columns: tuple[str, ...]) -> list[str]:
    """Plan columns must be in the input; returns the unlisted input columns to drop."""
    listed = [*plan.columns, *(c for loc in plan.locations for c in (loc.lat, loc.lon))]
    absent = [c for c in listed if c not in columns]
    if absent:
        raise PlanError(
            "columns: "
            + ", ".join(repr(c) for c in absent)
            + f" not in the input (its columns: {list(columns)})"
        )
    unlisted = [c for c in columns if c not in set(listed)]
    if unlisted and plan.unlisted == "error":
        raise PlanError(
            f"columns: the input has columns the plan does not list: {unlisted}; give each a "
            "role and a treatment, or set unlisted: drop"
        )
    return unlisted


def _randomness(rng: RngLike) -> dict[str, Any]:
    if rng is None:
        return {"generator": "secure (AES-CTR keyed from OS entropy)"}
    if isinstance(rng, np.random.Generator):
        return {"generator": "caller-supplied numpy Generator"}
    return {
        "generator": "seeded: reproducible, NOT private if the seed is known",
        "seed": int(rng),
    }


def _sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _write_frame(frame: pd.DataFrame, path: Path, fmt: str, escape: bool) -> dict[str, int]:
    """Write the release file; CSV text cells that start like formulas are escaped."""
    if fmt == "parquet":
        frame.to_parquet(path, index=False)
        return {}
    counts: dict[str, int] = {}
    if escape:
        frame, counts = escape_formulas(frame)
    frame.to_csv(path, index=False)
    return counts


def _release_entry(name: str, fmt: str, rows: int, columns: list[str]) -> dict[str, Any]:
    return {"file": name, "format": fmt, "rows": rows, "columns": columns}


def _release_facts(
    shuffle: bool, escape: bool, escaped: dict[str, int], fmt: str, *, dask: bool
) -> dict[str, Any]:
    """How the release file was laid out: row order and spreadsheet escaping."""
    if not shuffle:
        order = "input order (output.keep_order): rows can be linked by position"
    elif dask:
        order = (
            "shuffled with the CSPRNG within each partition, and the partitions written in "
            "a random order; records are not mixed across partitions"
        )
    else:
        order = "shuffled with the CSPRNG (a uniformly random permutation)"
    if fmt != "csv":
        formulas = "not applicable (Parquet)"
    elif escape:
        formulas = (
            "text cells starting with = + - @ tab or CR were prefixed with an apostrophe (OWASP)"
        )
    else:
        formulas = "not escaped (output.raw_csv)"
    return {"row_order": order, "csv_formulas": formulas, "cells_escaped": dict(escaped)}


def _report_manifest(records: Records) -> dict[str, Any]:
    """What the (confidential) report shows: the manifest with the custodian's facts."""
    return {**records.manifest, **records.custodian}


def custodian_folder(plan: Plan, out: Path) -> Path:
    """The custodian folder: ``output.custodian_dir``, else ``<out>.custodian`` beside it."""
    if plan.output.custodian_dir is not None:
        return Path(plan.output.custodian_dir)
    resolved = out.resolve()
    return resolved.parent / f"{resolved.name}.custodian"


def _plan_inputs(plan: Plan) -> list[Path]:
    """Every file the plan reads (input, hierarchies, keys, vault, target sample)."""
    paths: list[Path] = []
    if plan.input.path is not None:
        paths.append(Path(plan.input.path))
    for spec in plan.columns.values():
        treatment = spec.treatment
        for name in ("hierarchy", "key_file"):
            value = getattr(treatment, name, None)
            if value is not None:
                paths.append(Path(value))
        vault = getattr(treatment, "vault", None)
        if isinstance(vault, str) and "://" not in vault:
            paths.append(Path(vault))
    if plan.anonymization is not None:
        paths.extend(Path(h.path) for h in plan.anonymization.quasi_identifiers.values())
    if plan.budget.target is not None and plan.budget.target.sample is not None:
        paths.append(Path(plan.budget.target.sample))
    return paths


def _check_outputs_apart_from_inputs(plan: Plan, out: Path, custodian: Path) -> None:
    """No output may overwrite a file the plan reads (nothing is written otherwise)."""
    targets = {
        (out / plan.output.filename).resolve(): "the release file",
        (out / "manifest.json").resolve(): "the manifest",
        (custodian / "custodian.json").resolve(): "the custodian record",
        (custodian / "report.html").resolve(): "the report",
    }
    for source in _plan_inputs(plan):
        resolved = source.resolve()
        if resolved in targets:
            raise PlanError(
                f"output: {targets[resolved]} would overwrite {os.fspath(source)!r}, which "
                "the plan reads; write the release to another folder"
            )
        if source.is_dir() and (out.resolve() == resolved or resolved in out.resolve().parents):
            raise PlanError(
                f"output: the release folder is inside the input folder {os.fspath(source)!r}"
            )


def _public_projection(loc: LocationSpec) -> bool:
    """Whether the location's projection is public (a centre, region or CRS)."""
    return loc.centre is not None or loc.crs is not None or loc.region is not None


def _plan_leaks(plan: Plan) -> list[str]:
    """What the plan lets depend on the raw records, or otherwise lets through, by design."""
    leaks: list[str] = []
    for loc in plan.locations:
        if not _public_projection(loc):
            leaks.append(
                f"locations {loc.name}: the projection is chosen from the data "
                "(projection: data); its choice depends on the records"
            )
    target = plan.budget.target
    if plan.budget.allocation == "target" and target is not None and target.sample is None:
        leaks.append(
            "budget.allocation target: the epsilons were chosen from utility measured on "
            "the private input (allow_data_dependent_allocation); that choice is not "
            "covered by the ledger"
        )
    if plan.output.keep_order:
        leaks.append("output.keep_order: records keep the input's order")
    return leaks


def _report(
    original: pd.DataFrame,
    released: pd.DataFrame,
    plan: Plan,
    manifest: dict[str, Any],
    rng: np.random.Generator,
    *,
    title: str = "Release report",
) -> str:
    from veil.release.report import build_report

    present = set(released.columns)
    locations = [
        (loc.lat, loc.lon) for loc in plan.locations if loc.lat in present and loc.lon in present
    ]
    return build_report(
        original,
        released,
        manifest=manifest,
        quasi_identifiers=[c for c in plan.columns_with("quasi_identifier") if c in present],
        sensitive=[c for c in plan.columns_with("sensitive") if c in present],
        locations=locations,
        target=plan.evaluation.target,
        rng=rng,
        metrics=plan.evaluation.metrics,
        title=title,
    )


def _read_input(chosen: Engine, plan: Plan, progress: Progress | None) -> InputData:
    """Open the input, reading the columns of keyed or redacted treatments as text."""
    _say(progress, "read")
    return chosen.read(input_spec(plan))


def _privatizer(plan: Plan) -> Privatize:
    def privatize(
        column: str, epsilon: float, frame: pd.DataFrame, generator: np.random.Generator
    ) -> pd.DataFrame:
        treatment = plan.columns[column].treatment.model_copy(update={"epsilon": epsilon})
        step = _column_step(column, treatment)
        assert step is not None
        return step.fn(frame, generator)

    return privatize


def _allocate_on_sample(
    plan: Plan, chosen: Engine, rng: np.random.Generator, progress: Progress | None
) -> tuple[Plan, dict[str, Any], InputData | None]:
    """``allocation: target`` on the public sample, or else on the input itself."""
    target = plan.budget.target
    assert target is not None
    data: InputData | None = None
    if target.sample is not None:
        spec = plan.input.model_copy(
            update={"path": target.sample, "dataset": None, "format": None}
        )
        sample = PandasEngine().read(spec).table
        source = os.fspath(target.sample)
    else:
        # The plan validated this only with allow_data_dependent_allocation: true.
        data = _read_input(chosen, plan, progress)
        sample = chosen.original(data)
        source = "the input (private)"
        warnings.warn(
            "budget.allocation 'target' measured utility on the private input "
            "(allow_data_dependent_allocation): the epsilons chosen depend on the records, "
            "and that choice is not covered by the ledger. Give budget.target.sample "
            "(public or synthetic data) to avoid it",
            PrivacyLeakWarning,
            stacklevel=3,
        )
    _say(progress, "allocation (target)")
    allocated, chosen_eps = target_allocate(plan, sample, _privatizer(plan), rng)
    info = {
        "method": "target",
        "metric": target.metric,
        "target": target.value,
        "sample": source,
        "sample_kind": (
            "a public sample" if target.sample is not None else "the private input (a leak)"
        ),
        "columns": chosen_eps,
    }
    return allocated, info, data


def _check_recorded(ledger: ReleaseLedger, privacy: list[dict[str, Any]]) -> None:
    problems = cross_check(ledger, privacy)
    if problems:
        raise LedgerMismatchError(
            "the recorded privacy costs differ from the plan; nothing was written:\n  "
            + "\n  ".join(problems)
        )


class _PartitionWriter:
    """Appends partitions to one CSV or Parquet file (the schema of the first one).

    Empty partitions (every record suppressed) are skipped for Parquet until one holds
    records, whose types then make the schema; an empty file is written if none does.
    """

    def __init__(self, path: str, fmt: str, escape: bool = True) -> None:
        self.path = path
        self.fmt = fmt
        self.escape = escape
        self.escaped: dict[str, int] = {}
        self.columns: list[str] = []
        self._csv: Any = None
        self._parquet: Any = None
        self._schema: Any = None
        self._empty: pd.DataFrame | None = None

    def __enter__(self) -> _PartitionWriter:
        if self.fmt == "csv":
            self._csv = open(self.path, "w", encoding="utf-8", newline="")
        return self

    def write(self, part: pd.DataFrame) -> None:
        first = not self.columns
        if first:
            self.columns = [str(c) for c in part.columns]
        if self.fmt == "csv":
            if self.escape:
                part, counts = escape_formulas(part)
                for column, n in counts.items():
                    self.escaped[column] = self.escaped.get(column, 0) + n
            part.to_csv(self._csv, header=first, index=False)
            return
        if self._parquet is None and len(part) == 0:
            self._empty = part
            return
        self._write_parquet(part)

    def _write_parquet(self, part: pd.DataFrame) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(part, preserve_index=False, schema=self._schema)
        if self._parquet is None:
            self._schema = table.schema
            self._parquet = pq.ParquetWriter(self.path, table.schema)
        self._parquet.write_table(table)

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        if kind is None and self._parquet is None and self._empty is not None:
            self._write_parquet(self._empty)
        if self._csv is not None:
            self._csv.close()
        if self._parquet is not None:
            self._parquet.close()


def _say(progress: Progress | None, label: str) -> None:
    if progress is not None:
        progress(label)


def run(
    plan: Plan | str | os.PathLike[str] | dict[str, Any],
    out_dir: str | os.PathLike[str] | None = None,
    *,
    rng: RngLike = None,
    dry_run: bool = False,
    engine: str | Engine | None = None,
    progress: Progress | None = None,
    allow_outside: bool = False,
) -> RunResult:
    """Run a release plan: the release and its public manifest, and the custodian's files.

    The release folder ``out_dir`` receives the release file and the public
    ``manifest.json``; the custodian folder (``output.custodian_dir``, by default a
    folder named ``<out_dir>.custodian`` beside the release folder) receives the
    confidential ``custodian.json`` and ``report.html`` (see :mod:`veil.release.manifest`).
    The files are written as one set (:mod:`veil.release.outputs`), the manifest last.

    Parameters
    ----------
    plan : Plan, path or mapping
        The plan, or a YAML file / mapping for :func:`~veil.release.plan.load_plan`.
    out_dir : path
        Output folder (created if needed); not needed for a dry run.
    rng : None, int or numpy.random.Generator
        Randomness for every step (see :mod:`veil.rng`): None (default) is
        cryptographically secure; an int seed gives a reproducible, not private, run and
        is recorded in the manifest.
    dry_run : bool, default False
        Validate, allocate and check the ledger only: nothing is read or written.
    engine : {"pandas", "dask", "dask-local"} or Engine, optional
        Where the records are processed (see :mod:`veil.release.engine`); by default
        the plan's ``engine`` section (itself pandas by default).
    progress : callable, optional
        Called with a label as each phase and step starts (for a progress display).
    allow_outside : bool, default False
        Let a plan file name paths outside its folder (see
        :func:`~veil.release.plan.load_plan`).

    Returns
    -------
    RunResult

    Raises
    ------
    PlanError
        Invalid plan, columns absent from the input, or unlisted input columns with
        ``unlisted: error``.
    BudgetError
        The plan's costs exceed its budget (raised before the input is opened).
    LedgerMismatchError
        A step recorded another cost than planned (nothing written).
    veil.errors.VeilError
        Any error of a step (missing values, values outside a declared domain, ...);
        the previous outputs stay as they were.
    """
    started = time.perf_counter()
    loaded = load_plan(plan, allow_outside=allow_outside)
    plan_source = (
        None
        if isinstance(plan, (Plan, dict))
        else {"path": os.fspath(plan), "sha256": _sha256_file(os.fspath(plan))}
    )
    chosen = (
        get_engine(loaded.engine.name, scheduler=loaded.engine.scheduler)
        if engine is None
        else get_engine(engine)
    )
    target = loaded.budget.target
    samples_input = needs_sample(loaded) and target is not None and target.sample is None
    with warnings.catch_warnings(record=True) as caught, contextlib.ExitStack() as session:
        warnings.simplefilter("always")
        generator = resolve_rng(rng, stacklevel=2)
        allocation_rng, steps_rng, order_rng = spawn(generator, 3)

        data: InputData | None = None
        allocation_info: dict[str, Any] | None = None
        if samples_input:
            session.enter_context(chosen.session())
        if needs_sample(loaded):
            allocated, allocation_info, data = _allocate_on_sample(
                loaded, chosen, allocation_rng, progress
            )
        else:
            allocated = allocate(loaded)
        # The budget is checked before the input is opened (unless a target allocation
        # had to sample the input itself).
        ledger = plan_ledger(allocated)
        check_budget(ledger)
        if dry_run:
            return RunResult(
                allocated,
                ledger,
                True,
                warnings=warning_records(list(caught)),
                seconds=time.perf_counter() - started,
            )
        if out_dir is None:
            raise PlanError("out_dir: required unless dry_run=True")
        out = Path(out_dir)
        custodian_dir = custodian_folder(allocated, out)
        _check_outputs_apart_from_inputs(allocated, out, custodian_dir)
        facts = RunFacts(
            allocated,
            ledger,
            plan_source=plan_source,
            engine=chosen.name,
            randomness=_randomness(rng),
            allocation=allocation_info,
            leaks=_plan_leaks(allocated),
        )
        timings, execution = facts.timings, facts.execution
        execution.update({"engine": chosen.name, "steps": {}})

        # Steps are built (keys loaded, hierarchies read) before the data is touched.
        tick = time.perf_counter()
        row_steps = [
            s
            for name, spec in allocated.columns.items()
            if (s := _column_step(name, spec.treatment)) is not None
        ]
        table_steps: list[tuple[str, _TableStep]] = []
        # Grid masks with min_count on Dask: cell centres per partition, then the sparse
        # cells found by a group-by of the cells (label, lat, lon, min_count).
        cells: list[tuple[str, str, str, int]] = []
        for loc in allocated.locations:
            label, fn, row_wise = _location_step(loc)
            if row_wise:
                row_steps.append(RowStep(label, fn, (loc.lat, loc.lon)))
            elif (
                isinstance(chosen, DaskEngine)
                and isinstance(loc.mask, GridMask)
                and loc.mask.min_count is not None
                and _public_projection(loc)
            ):
                bare = loc.model_copy(
                    update={"mask": loc.mask.model_copy(update={"min_count": None})}
                )
                row_steps.append(RowStep(label, _location_step(bare)[1], (loc.lat, loc.lon)))
                cells.append((label, loc.lat, loc.lon, loc.mask.min_count))
            else:
                table_steps.append((label, fn))
        timings["prepare"] = time.perf_counter() - tick

        tick = time.perf_counter()
        if data is None:
            session.enter_context(chosen.session())
            data = _read_input(chosen, allocated, progress)
        timings["read"] = time.perf_counter() - tick
        dropped_unlisted = _check_columns(allocated, data.columns)
        facts.dropped_unlisted = dropped_unlisted
        facts.input_info = {
            "source": data.source,
            "sha256": data.sha256,
            "rows": data.rows,
            "columns": list(data.columns),
        }

        streams = spawn(steps_rng, len(row_steps) + len(table_steps) + 1)
        row_streams = streams[: len(row_steps)]
        dropped = [n for n, s in allocated.columns.items() if s.treatment.method == "drop"]
        dropped += dropped_unlisted
        release_name = allocated.output.filename
        fmt = allocated.output.format
        escape = fmt == "csv" and not allocated.output.raw_csv
        shuffle = not allocated.output.keep_order
        if not shuffle:
            warnings.warn(
                "output.keep_order: the released records keep the input's order, which "
                "links them to people by position (a file sorted by date, or with the "
                "positive cases first)",
                PrivacyLeakWarning,
                stacklevel=2,
            )
        report_html: str | None = None

        frame: pd.DataFrame | None = None
        dask = isinstance(chosen, DaskEngine)
        # Risk before and after, on the released quasi-identifiers (custodian record).
        risk_qis = (
            [
                c
                for c in allocated.columns_with("quasi_identifier")
                if c not in dropped and c in data.columns
            ]
            if allocated.output.report and "risk" in allocated.evaluation.metrics
            else []
        )
        if allocation_info is not None and target is not None and target.sample is None:
            execution["steps"]["allocation (target)"] = (
                "gathered in memory: the input was read whole to draw the sample the "
                "utility target is measured on"
                if dask
                else "in memory"
            )
        outputs = session.enter_context(OutputSet(out, custodian_dir))
        staged_release = outputs.stage(release_name)
        escaped: dict[str, int] = {}
        if dask and not table_steps:
            # Larger than memory: partitions go through the steps and into the file
            # batch by batch; table-level measures come from distributed group-bys.
            assert isinstance(chosen, DaskEngine)
            engine_ = chosen
            for step in row_steps:
                execution["steps"][step.label] = "per partition"
            release_classes: Callable[[pd.DataFrame], pd.DataFrame] | None = None
            spec = allocated.anonymization
            counted: dict[str, list[str]] = {label: [lat, lon] for label, lat, lon, _ in cells}
            if spec is not None:
                hierarchies, models, sensitive = _anonymization_args(spec)
                counted["anonymization"] = [*spec.quasi_identifiers, *sensitive]
            suppress_cells: list[Callable[[pd.DataFrame], pd.DataFrame]] = []
            if counted:
                # First pass: class counts of every counted step, by a distributed group-by.
                tick = time.perf_counter()
                counters = {name: _Counts(keys) for name, keys in counted.items()}
                _say(progress, "class counts")
                # Only the steps that write a counted column run in this pass, each on
                # its own stream: the counted values are those the write pass releases.
                needed = {c for keys in counted.values() for c in keys}
                useful = [
                    i
                    for i, step in enumerate(row_steps)
                    if not step.columns or needed & set(step.columns)
                ]
                scan = engine_.stream(
                    data,
                    [row_steps[i] for i in useful],
                    [row_streams[i] for i in useful],
                    None,
                    progress,
                    probe=_counting_probe(counted, {label for label, *_ in cells}),
                    collect=lambda _p, found: _add_counts(counters, found),
                )
                if len(useful) == len(row_steps):
                    _check_recorded(ledger, scan.privacy)
                timings[f"class counts ({scan.partitions} partitions)"] = time.perf_counter() - tick
                for label, lat, lon, min_count in cells:
                    cell_counts = counters[label].frame()
                    sparse = cell_counts.loc[cell_counts[_RECORDS] < min_count, [lat, lon]]
                    suppress_cells.append(_suppress_cells(lat, lon, sparse))
                    execution["steps"][label] = (
                        f"distributed: cell centres per partition; a group-by of the "
                        f"{len(cell_counts)} cells found {len(sparse)} with fewer than "
                        f"{min_count} points, whose points were suppressed"
                    )
            if spec is not None:
                tick = time.perf_counter()
                _say(progress, "anonymization")
                aggregated = counters["anonymization"].frame()
                result = anonymity.anonymize(
                    aggregated,
                    hierarchies,
                    models,
                    max_suppression=spec.max_suppression,
                    metric=spec.metric,
                    sensitive=sensitive or None,
                    suppression="remove",
                    weights=_RECORDS,
                )
                facts.anonymization = _anonymization_info(result, models)
                release_classes = _release_classes(result, hierarchies, spec.suppression)
                execution["steps"]["anonymization"] = (
                    f"distributed: a group-by of the {data.rows} records over "
                    f"{', '.join(counted['anonymization'])} gave {len(aggregated)} classes; "
                    "the search ran on them, and the partitions were generalized and filtered"
                )
                timings["anonymization"] = time.perf_counter() - tick
            finish = _finisher(suppress_cells, dropped, release_classes)
            sample = (
                _sample_partitions(engine_.partitions(data), data.rows)
                if allocated.output.report
                else set()
            )
            before, after = _Counts(risk_qis), _Counts(risk_qis)
            sampled: dict[int, tuple[pd.DataFrame, pd.DataFrame]] = {}

            def probe(p: int, original: pd.DataFrame, part: pd.DataFrame) -> Any:
                risk_counts = (
                    (_record_counts(original, risk_qis), _record_counts(part, risk_qis))
                    if risk_qis
                    else None
                )
                return risk_counts, ((original, part) if p in sample else None)

            def collect(p: int, probed: Any) -> None:
                risk_counts, pair = probed
                if risk_counts is not None:
                    before.add(risk_counts[0])
                    after.add(risk_counts[1])
                if pair is not None:
                    sampled[p] = pair

            with _PartitionWriter(os.fspath(staged_release), fmt, escape) as writer:
                streamed = engine_.stream(
                    data,
                    row_steps,
                    row_streams,
                    writer.write,
                    progress,
                    finish=finish,
                    probe=probe if (risk_qis or sample) else None,
                    collect=collect if (risk_qis or sample) else None,
                    order=order_rng if shuffle else None,
                )
            escaped = writer.escaped
            columns = list(writer.columns)
            _check_recorded(ledger, streamed.privacy)
            facts.recorded, facts.masking = list(streamed.privacy), streamed.masking
            timings.update(streamed.timings)
            rows_out = streamed.rows
            if risk_qis:
                tick = time.perf_counter()
                facts.risk = {
                    "before": _risk(before.frame(), risk_qis, _RECORDS),
                    "after": _risk(after.frame(), risk_qis, _RECORDS),
                    "computed_on": "every record (distributed group-by)",
                }
                timings["risk (class counts)"] = time.perf_counter() - tick
            facts.release = _release_facts(shuffle, escape, escaped, fmt, dask=True)
            if allocated.output.report:
                tick = time.perf_counter()
                _say(progress, "report")
                original_sample, released_sample = _paired_sample(sampled)
                note = (
                    f"a deterministic sample: {len(sampled)} of {streamed.partitions} "
                    f"partitions, evenly spaced ({len(original_sample)} of {data.rows} "
                    "records)"
                )
                execution["report"] = note
                facts.outputs["release"] = _release_entry(release_name, fmt, rows_out, columns)
                draft = build_records(facts, list(caught))
                report_html = _report(
                    original_sample,
                    released_sample,
                    allocated,
                    _report_manifest(draft),
                    streams[-1],
                    title=f"Release report ({note})",
                )
                timings["report"] = time.perf_counter() - tick
        else:
            applied = chosen.apply(data, row_steps, row_streams, progress)
            timings.update(applied.timings)
            frame = applied.frame
            privacy, masking_entries = list(applied.privacy), applied.masking
            for step in row_steps:
                execution["steps"][step.label] = "per partition" if dask else "in memory"
            table_streams = streams[len(row_steps) : len(row_steps) + len(table_steps)]
            for (label, fn), stream in zip(table_steps, table_streams, strict=True):
                _say(progress, label)
                tick = time.perf_counter()
                step_out = fn(frame, stream)
                old = len(frame.attrs.get(PRIVACY_ATTR, []))
                privacy.extend(dict(e) for e in step_out.attrs.get(PRIVACY_ATTR, [])[old:])
                frame = step_out
                timings[label] = time.perf_counter() - tick
                execution["steps"][label] = (
                    "gathered in memory: this step needs the whole table and is not distributed"
                    if dask
                    else "in memory"
                )
            frame = frame.drop(columns=dropped)
            if allocated.anonymization is not None:
                tick = time.perf_counter()
                _say(progress, "anonymization")
                frame, facts.anonymization = _anonymize(frame, allocated.anonymization)
                timings["anonymization"] = time.perf_counter() - tick
                execution["steps"]["anonymization"] = (
                    "gathered in memory: the table was gathered for another table step"
                    if dask
                    else "in memory"
                )
            frame.attrs = {}
            _check_recorded(ledger, privacy)
            facts.recorded, facts.masking = privacy, masking_entries
            if shuffle:
                frame = shuffle_rows(frame, order_rng)
            columns = [str(c) for c in frame.columns]
            rows_out = len(frame)
            original = chosen.original(data)
            if risk_qis:
                facts.risk = {
                    "before": _risk(original, risk_qis),
                    "after": _risk(frame, risk_qis),
                    "computed_on": "every record",
                }
            tick = time.perf_counter()
            _say(progress, "write")
            escaped = _write_frame(frame, staged_release, fmt, escape)
            timings["write"] = time.perf_counter() - tick
            facts.release = _release_facts(shuffle, escape, escaped, fmt, dask=dask)
            facts.outputs["release"] = _release_entry(release_name, fmt, rows_out, columns)
            if allocated.output.report:
                tick = time.perf_counter()
                draft = build_records(facts, list(caught))
                _say(progress, "report")
                report_html = _report(
                    original, frame, allocated, _report_manifest(draft), streams[-1]
                )
                timings["report"] = time.perf_counter() - tick
        facts.outputs["release"] = {
            **_release_entry(release_name, fmt, rows_out, columns),
            "sha256": _sha256_file(os.fspath(staged_release)),
        }
        report_path: Path | None = None
        if report_html is not None:
            report_path = custodian_dir / "report.html"
            outputs.stage("report.html", custodian=True).write_text(report_html, encoding="utf-8")
            facts.custodian_outputs["report"] = {
                "file": report_path.name,
                "sha256": hashlib.sha256(report_html.encode("utf-8")).hexdigest(),
            }
        facts.outputs["report"] = (
            "confidential: the report compares the release with the original records; it "
            "is in the custodian folder and does not travel with the release"
            if report_html is not None
            else None
        )
        records = build_records(facts, list(caught))
        manifest_text = json.dumps(records.manifest, indent=2, default=str) + "\n"
        records.custodian["outputs"]["manifest"] = {
            "file": "manifest.json",
            "sha256": hashlib.sha256(manifest_text.encode("utf-8")).hexdigest(),
        }
        outputs.stage("custodian.json", custodian=True).write_text(
            json.dumps(records.custodian, indent=2, default=str) + "\n", encoding="utf-8"
        )
        outputs.stage("manifest.json").write_text(manifest_text, encoding="utf-8")
        _say(progress, "commit")
        outputs.commit()
    return RunResult(
        allocated,
        ledger,
        False,
        out_dir=out,
        release_path=out / release_name,
        manifest_path=out / "manifest.json",
        report_path=report_path,
        rows_in=data.rows,
        rows_out=rows_out,
        manifest=records.manifest,
        custodian=records.custodian,
        custodian_dir=custodian_dir,
        custodian_path=custodian_dir / "custodian.json",
        warnings=warning_records(list(caught)),
        seconds=time.perf_counter() - started,
        release_format=fmt,
        released=frame,
    )
