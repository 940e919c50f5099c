"""The release plan: a declarative description of one release, validated with pydantic.

A plan says where the data comes from (``input``), what happens to each column
(``columns``: a role and a treatment), how location pairs are masked (``locations``),
whether the table is anonymized as a whole (``anonymization``), what the release may
spend (``budget``), how it is evaluated (``evaluation``) and what is written
(``output``). :func:`load_plan` reads it from YAML (or a mapping) and raises
:class:`~veil.release.errors.PlanError` naming the field path of every mistake, for
example ``columns.age.treatment.epsilon``, with the allowed values.

Secrets never appear in a plan: keyed treatments name a ``key_file`` or a ``key_env``
(environment variable), and an inline ``key`` is refused. Relative paths (input,
hierarchies, key files, vault files) are resolved against the plan file's folder.

A small plan::

    input: {path: people.csv, sep: ";", skipinitialspace: true}
    columns:
      name:   {role: identifier, treatment: {method: hmac, key_file: keys/hmac.key}}
      age:    {role: quasi_identifier, treatment: {method: laplace, bounds: [16, 100]}}
      sex:    {role: quasi_identifier, treatment: {method: randomized_response,
                                                    domain: [Female, Male]}}
      zip:    {role: quasi_identifier, treatment: keep}
      income: {role: sensitive, treatment: keep}
    locations:
      - {lat: home_lat, lon: home_lon, mask: {method: planar_laplace, epsilon: 0.01},
         centre: [43.36, -5.85]}
    anonymization:
      quasi_identifiers: {zip: hierarchies/zip.csv}
      models: [{k_anonymity: 5}, {distinct_l_diversity: {attribute: income, l: 2}}]
      max_suppression: 0.02
    budget:
      ldp: {epsilon: 2.0}          # per record, over the noised columns
      metric: {epsilon: 0.01}      # per metre, over the location masks
      allocation: equal            # age and sex share the 2.0
    evaluation: {target: income}
    output: {format: parquet}
    engine: {name: dask, scheduler: "tcp://scheduler:8786"}   # default: pandas

Shorthands: a treatment may be a bare method name (``keep``, ``drop``, ``redact``) or
``{laplace: {...}}``; a model ``{k_anonymity: 5}``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from veil.formats import format_of
from veil.release.errors import PlanError
from veil.release.plan_errors import clip, clip_words, describe
from veil.release.plan_yaml import check_plan_data, read_plan_text
from veil.release.schema import (
    ALLOW_OUTSIDE,
    CONTAIN,
    PATH_CONTEXT,
    Missing,
    Role,
    Scalar,
    SpecModel,
    resolve_path,
    tagged,
)
from veil.release.steps import TREATMENTS, Treatment
from veil.release.steps.anonymize import (
    MODELS,
    AnonymizationSpec,
    DistinctLDiversitySpec,
    EntropyLDiversitySpec,
    HierarchySpec,
    KAnonymitySpec,
    ModelSpec,
    RecursiveCLDiversitySpec,
    TClosenessSpec,
)
from veil.release.steps.generalize import GeneralizeTreatment
from veil.release.steps.ldp import (
    LDP_METHODS,
    ExponentialTreatment,
    GaussianTreatment,
    LaplaceTreatment,
    LdpTreatment,
    RandomizedResponseTreatment,
)
from veil.release.steps.location import (
    MASKS,
    CloakMask,
    DonutMask,
    GridMask,
    JitterMask,
    LocationSpec,
    Mask,
    PlanarLaplaceMask,
)
from veil.release.steps.masking import Ff1Treatment, HmacTreatment, RedactTreatment, TokenTreatment
from veil.release.steps.passthrough import DropTreatment, KeepTreatment
from veil.release.steps.share import FuzzyPairs, ShareSpec

# The specs of the treatments, masks and models live with their step kinds
# (veil.release.steps); they are re-exported here, where the plan is assembled.
__all__ = [
    "LDP_METHODS",
    "AnonymizationSpec",
    "Budget",
    "CloakMask",
    "ColumnSpec",
    "DistinctLDiversitySpec",
    "DonutMask",
    "DropTreatment",
    "EngineSpec",
    "EntropyLDiversitySpec",
    "EvaluationSpec",
    "ExponentialTreatment",
    "Ff1Treatment",
    "FuzzyPairs",
    "GaussianTreatment",
    "GeneralizeTreatment",
    "GridMask",
    "HierarchySpec",
    "HmacTreatment",
    "InputSpec",
    "JitterMask",
    "KAnonymitySpec",
    "KeepTreatment",
    "LaplaceTreatment",
    "LdpTreatment",
    "LocationSpec",
    "Mask",
    "Missing",
    "ModelSpec",
    "OutputSpec",
    "Plan",
    "PlanError",
    "PlanarLaplaceMask",
    "RandomizedResponseTreatment",
    "RecursiveCLDiversitySpec",
    "RedactTreatment",
    "Role",
    "Scalar",
    "ShareSpec",
    "SyntheticBudget",
    "TClosenessSpec",
    "TargetSpec",
    "TokenTreatment",
    "Treatment",
    "load_plan",
    "plan_schema",
]

_Model = SpecModel
_resolve = resolve_path
_TREATMENTS = TREATMENTS
_MASKS = MASKS
_MODELS = MODELS
_IDENTIFIER_TREATMENTS = ("drop", "redact", "hmac", "token", "ff1")


# --------------------------------------------------------------------------- input


class InputSpec(_Model):
    """Where the records come from: a CSV or Parquet file, or a bundled dataset.

    Parameters
    ----------
    path : path, optional
        CSV (``.csv``, ``.csv.gz``, ...) or Parquet (``.parquet``, ``.pq``) file, or a
        folder of Parquet files (a partitioned dataset; set ``format: parquet``).
    dataset : {"adult", "nyc_taxi"}, optional
        A dataset bundled with veil instead of a file.
    format : {"csv", "parquet"}, optional
        Default: from the file name.
    sep, skipinitialspace, na_values, encoding
        CSV read options, passed to :func:`pandas.read_csv`.
    columns : list of str, optional
        Read only these columns.
    text_columns : list of str, optional
        CSV columns read as text, not numbers (so ``"00123"`` keeps its zeros). The
        runner adds every column whose treatment is ``hmac``, ``token``, ``ff1`` or
        ``redact``.
    """

    path: Path | None = None
    dataset: Literal["adult", "nyc_taxi"] | None = None
    format: Literal["csv", "parquet"] | None = None
    sep: str = ","
    skipinitialspace: bool = False
    na_values: list[str] | None = None
    encoding: str = "utf-8"
    columns: list[str] | None = None
    text_columns: list[str] = []  # noqa: RUF012 (pydantic copies field defaults)

    _resolve_path = field_validator("path")(_resolve)

    @model_validator(mode="after")
    def _one_source(self) -> InputSpec:
        if (self.path is None) == (self.dataset is None):
            raise ValueError("give exactly one of 'path' (a CSV or Parquet file) or 'dataset'")
        if self.path is not None and self.format is None and self.file_format() is None:
            raise ValueError(
                f"cannot tell the format of {self.path.name!r}; set format: csv or parquet"
            )
        return self

    def file_format(self) -> Literal["csv", "parquet"] | None:
        """The declared format, or the one the file name implies (None if unknown)."""
        if self.format is not None:
            return self.format
        if self.dataset is not None:
            return "csv"
        return format_of(self.path.name) if self.path is not None else None


# ----------------------------------------------------------------------- treatments


class ColumnSpec(_Model):
    """One column: its role and its treatment.

    ``treatment`` is a method name (``keep``, ``drop``, ``redact``) or a mapping with a
    ``method`` key (or a single key naming the method) and the method's parameters.
    """

    role: Role
    treatment: Treatment

    @field_validator("treatment", mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        return tagged(value, "method", _TREATMENTS)


# ------------------------------------------------------------- budget, evaluation


class LdpBudget(_Model):
    """Local-DP budget per record (sequential composition over the columns)."""

    epsilon: Annotated[float, Field(gt=0, allow_inf_nan=False)]
    delta: Annotated[float, Field(ge=0, lt=1)] = 0.0


class MetricBudget(_Model):
    """Geo-indistinguishability budget: epsilon per metre, summed over location masks."""

    epsilon: Annotated[float, Field(gt=0, allow_inf_nan=False)]


class TargetSpec(_Model):
    """Utility target for ``allocation: target``: the least epsilon reaching it, per column.

    Parameters
    ----------
    metric : {"tvd", "correlation_loss"}, default "tvd"
        ``tvd``: total variation distance between the column before and after noise
        (:func:`veil.metrics.divergence_distributions`), in [0, 1]. ``correlation_loss``:
        percentage of the correlations among ``features`` lost when the column alone is
        noised (:func:`veil.metrics.correlation_loss`).
    value : float
        Largest acceptable mean of the metric.
    sample_size : int, default 5000
        Records drawn (without replacement) to estimate the metric.
    runs : int, default 5
        Noise draws averaged per epsilon tried.
    sample : path, optional
        A public (or synthetic) table to estimate on, read like the input. Without it
        the plan is refused, unless ``budget.allow_data_dependent_allocation: true``:
        then the input itself is sampled, which makes the chosen epsilons depend on the
        private records, outside the ledger (a :class:`~veil.errors.PrivacyLeakWarning`
        says so and the manifest lists it under ``leaks``).
    features : list of str, optional
        Columns of the correlation loss (default: every noised column and the
        evaluation target).
    """

    metric: Literal["tvd", "correlation_loss"] = "tvd"
    value: Annotated[float, Field(gt=0)]
    sample_size: Annotated[int, Field(ge=100)] = 5000
    runs: Annotated[int, Field(ge=1, le=100)] = 5
    sample: Path | None = None
    features: list[str] | None = None

    _resolve_sample = field_validator("sample")(_resolve)


class SyntheticBudget(_Model):
    """Central DP budget of the synthetic part of a release (per dataset, OptimShare)."""

    epsilon: Annotated[float, Field(gt=0, allow_inf_nan=False)]
    delta: Annotated[float, Field(ge=0, lt=1)] = 0.0


class Budget(_Model):
    """The total privacy a release may spend, per notion.

    ``allocation``: ``explicit`` (every randomized step states its epsilon),
    ``equal`` (steps without an epsilon share what the explicit ones leave, equally),
    ``weights`` (shared in proportion to each step's ``weight``) or ``target`` (each
    local-DP column without an epsilon gets the least epsilon whose noise keeps a
    utility metric within ``target``, estimated on a sample; see :class:`TargetSpec`).
    """

    ldp: LdpBudget | None = None
    metric: MetricBudget | None = None
    synthetic: SyntheticBudget | None = None
    allocation: Literal["explicit", "equal", "weights", "target"] = "explicit"
    target: TargetSpec | None = None
    allow_data_dependent_allocation: bool = False


AttackName = Literal[
    "singling_out", "linkability", "inference", "location", "membership", "intersection"
]


class EvaluationSpec(_Model):
    """What the report measures: ``target`` is the label for ML utility.

    ``attacks`` names the attacks run on the release before it is published
    (:mod:`veil.attacks`): the plan is run again, in memory, on a random part of the
    records (``attack_fraction``, at most ``attack_sample`` records), and that shadow
    release is attacked with the rest of the records as the held-out control; it is never
    written. ``attack_seed`` makes the split and the attacks reproducible (default: the
    secure generator). The results are measured on the raw records: they go to the
    custodian record and the report, never to the public manifest.
    """

    target: str | None = None
    metrics: list[
        Literal["risk", "distributions", "divergence", "correlation", "ml_utility", "maps"]
    ] = [  # noqa: RUF012 (pydantic copies field defaults)
        "risk",
        "distributions",
        "divergence",
        "correlation",
        "ml_utility",
        "maps",
    ]
    attacks: list[AttackName] = []  # noqa: RUF012 (pydantic copies field defaults)
    attack_sample: Annotated[int, Field(ge=100)] = 10_000
    attack_fraction: Annotated[float, Field(gt=0, lt=1)] = 0.8
    attack_seed: int | None = None


class OutputSpec(_Model):
    """Files written: the release (``file``, in ``format``), the manifest and the report.

    The release folder gets the release file and the public ``manifest.json``. The
    custodian folder (``custodian_dir``, relative to the plan; by default
    ``<release folder>.custodian`` beside the release folder, never inside it) gets the
    confidential ``custodian.json`` and ``report.html``. Released records are shuffled
    with the CSPRNG unless ``keep_order`` (a warned leak); CSV text cells that a
    spreadsheet would run as formulas are escaped unless ``raw_csv``. Counts computed
    from the raw records (records suppressed by the anonymization, records dropped as
    outside a location's projection) stay in the custodian record unless
    ``publish_counts``: with the released row count they give the input's size, so the
    manifest then lists them as a leak.
    """

    format: Literal["csv", "parquet"] = "csv"
    file: str | None = None
    report: bool = True
    custodian_dir: Path | None = None
    keep_order: bool = False
    raw_csv: bool = False
    publish_counts: bool = False

    _resolve_custodian = field_validator("custodian_dir")(_resolve)

    @field_validator("file")
    @classmethod
    def _plain_name(cls, value: str | None) -> str | None:
        if value is not None and (
            not value
            or Path(value).name != value
            or value.startswith(".")
            or value in ("manifest.json", "report.html", "custodian.json")
        ):
            raise ValueError(
                "must be a plain file name (no folders, not hidden) other than "
                "manifest.json, custodian.json and report.html"
            )
        if value is not None and Path(value).suffix.lower() not in (".csv", ".parquet"):
            raise ValueError("must end in .csv or .parquet")
        return value

    @model_validator(mode="after")
    def _suffix_matches_format(self) -> OutputSpec:
        if self.file is not None and Path(self.file).suffix.lower() != f".{self.format}":
            raise ValueError(
                f"file {self.file!r} does not match format {self.format!r}; name the file "
                f"*.{self.format} or set format to match"
            )
        return self

    @property
    def filename(self) -> str:
        """The release's file name."""
        return self.file or f"release.{self.format}"


class EngineSpec(_Model):
    """Where the records are processed (:mod:`veil.release.engine`).

    ``pandas`` (the default: in memory), ``dask`` (threads, or ``scheduler``: one of
    threads, synchronous, processes, local, or a running scheduler's address such as
    ``tcp://host:8786``) or ``dask-local`` (a local cluster of processes). The command
    line's ``--engine`` and ``--scheduler`` override it.
    """

    name: Literal["pandas", "dask", "dask-local"] = "pandas"
    scheduler: str | None = None

    @model_validator(mode="after")
    def _scheduler_with_dask(self) -> EngineSpec:
        if self.scheduler is not None and self.name != "dask":
            raise ValueError(
                f"scheduler is only for name 'dask', got name {self.name!r} with scheduler "
                f"{self.scheduler!r}"
            )
        return self


# ----------------------------------------------------------------------------- plan


class Plan(_Model):
    """A whole release plan (see the module docstring).

    ``acknowledge`` names columns released as they are (treatment ``keep``) that the
    release gate would refuse because they carry a treated value (a copy of a masked
    location, an exact birth year beside a noised age) or single out records by
    themselves (a trip id): named here, they are released, and the manifest lists them
    as not protected and as leaks (:mod:`veil.gate.carriers`).
    """

    version: Literal[1] = 1
    name: str | None = None
    input: InputSpec
    columns: dict[str, ColumnSpec] = {}  # noqa: RUF012 (pydantic copies field defaults)
    unlisted: Literal["error", "drop"] = "error"
    locations: list[LocationSpec] = []  # noqa: RUF012 (pydantic copies field defaults)
    anonymization: AnonymizationSpec | None = None
    share: ShareSpec | None = None
    budget: Budget = Budget()
    evaluation: EvaluationSpec = EvaluationSpec()
    output: OutputSpec = OutputSpec()
    engine: EngineSpec = EngineSpec()
    acknowledge: list[str] = []  # noqa: RUF012 (pydantic copies field defaults)

    @field_validator("version", mode="before")
    @classmethod
    def _version_not_bool(cls, value: Any) -> Any:
        # true == 1 in Python: a Literal[1] would take it.
        if isinstance(value, bool):
            raise ValueError(f"must be 1, not true or false (got {str(value).lower()})")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Plan:
        errors: list[str] = []
        for name in self.acknowledge:
            spec = self.columns.get(name)
            if spec is None or spec.treatment.method != "keep":
                errors.append(
                    f"acknowledge: {name!r} is not a column released as it is (treatment "
                    "keep); name only columns the release copies unchanged"
                )
        explicit = self.budget.allocation == "explicit"
        # With explicit allocation, one noised column (or one planar Laplace mask)
        # without an epsilon receives what its notion's budget leaves.
        open_ldp = [
            n
            for n, s in self.columns.items()
            if isinstance(s.treatment, LdpTreatment) and s.treatment.epsilon is None
        ]
        lone_ldp = len(open_ldp) == 1 and self.budget.ldp is not None
        for name, spec in self.columns.items():
            t = spec.treatment
            if spec.role == "identifier" and t.method not in _IDENTIFIER_TREATMENTS:
                errors.append(
                    f"columns.{name}.treatment: an identifier cannot be released with "
                    f"{t.method!r}; allowed: {', '.join(_IDENTIFIER_TREATMENTS)}"
                )
            if explicit and name in open_ldp and not lone_ldp:
                errors.append(
                    f"columns.{name}.treatment.epsilon: required with budget.allocation "
                    f"'explicit' when {len(open_ldp)} noised columns lack one "
                    f"({', '.join(open_ldp)}) or no budget.ldp is declared; or set "
                    "budget.allocation to equal or weights to share budget.ldp.epsilon"
                )
        open_geo = [
            i
            for i, loc in enumerate(self.locations)
            if isinstance(loc.mask, PlanarLaplaceMask) and loc.mask.epsilon is None
        ]
        lone_geo = len(open_geo) == 1 and self.budget.metric is not None
        location_columns: dict[str, int] = {}
        for i, loc in enumerate(self.locations):
            for col in (loc.lat, loc.lon):
                if col in self.columns:
                    errors.append(
                        f"locations.{i}: column {col!r} is also in columns; a location "
                        "column is treated by its mask only"
                    )
                if col in location_columns:
                    errors.append(
                        f"locations.{i}: column {col!r} is already in "
                        f"locations.{location_columns[col]}"
                    )
                location_columns[col] = i
            if explicit and i in open_geo and not lone_geo:
                errors.append(
                    f"locations.{i}.mask.epsilon: required with budget.allocation 'explicit' "
                    f"when {len(open_geo)} planar Laplace masks lack one or no "
                    "budget.metric is declared; or set budget.allocation to equal or weights"
                )
        if self.anonymization is not None:
            errors.extend(self._check_anonymization(self.anonymization))
        if self.share is not None:
            errors.extend(self._check_share(self.share))
        if self.budget.allocation == "target" and self.budget.target is None:
            errors.append("budget.target: required with budget.allocation 'target'")
        if (
            self.budget.allocation == "target"
            and self.budget.target is not None
            and self.budget.target.sample is None
            and not self.budget.allow_data_dependent_allocation
        ):
            errors.append(
                "budget.target.sample: required with budget.allocation 'target' (a public "
                "or synthetic table to measure utility on); measuring it on the private "
                "input makes the epsilons depend on the records, outside the ledger: set "
                "budget.allow_data_dependent_allocation: true to accept that as a listed leak"
            )
        target = self.evaluation.target
        if target is not None and target not in self.columns:
            errors.append(f"evaluation.target: {target!r} is not in columns")
        elif target is not None and self.columns[target].treatment.method == "drop":
            errors.append(f"evaluation.target: {target!r} is dropped from the release")
        if self.input.columns is not None:
            read = set(self.input.columns)
            for name in [*self.columns, *location_columns]:
                if name not in read:
                    errors.append(f"columns.{name}: not among input.columns {self.input.columns}")
        if errors:
            raise ValueError("\n".join(errors))
        return self

    def _check_anonymization(self, spec: AnonymizationSpec) -> list[str]:
        errors = []
        for qi in spec.quasi_identifiers:
            column = self.columns.get(qi)
            if column is None:
                errors.append(f"anonymization.quasi_identifiers.{qi}: not in columns")
            elif column.treatment.method != "keep":
                errors.append(
                    f"anonymization.quasi_identifiers.{qi}: its column treatment must be "
                    f"'keep' (the anonymization generalizes it), got {column.treatment.method!r}"
                )
        for i, model in enumerate(spec.models):
            attribute = getattr(model, "attribute", None)
            if attribute is None:
                continue
            column = self.columns.get(attribute)
            if column is None or column.treatment.method == "drop":
                errors.append(
                    f"anonymization.models.{i}.{model.model}.attribute: {attribute!r} must be a "
                    "released column"
                )
            elif attribute in spec.quasi_identifiers:
                errors.append(
                    f"anonymization.models.{i}.{model.model}.attribute: {attribute!r} is a "
                    "quasi-identifier; it must be a sensitive column"
                )
        return errors

    def _check_share(self, spec: ShareSpec) -> list[str]:
        errors = []
        shared = [*spec.quasi_identifiers, *spec.synthesized]
        for column in shared:
            found = self.columns.get(column)
            if found is None:
                errors.append(f"share: {column!r} is not in columns")
            elif found.treatment.method != "keep":
                errors.append(
                    f"columns.{column}.treatment: a share column's treatment must be 'keep' "
                    f"(the share step releases it), got {found.treatment.method!r}"
                )
        others = [
            n for n, c in self.columns.items() if n not in shared and c.treatment.method != "drop"
        ]
        if others:
            errors.append(
                f"share: columns {others} are neither exact (quasi_identifiers) nor synthesized; "
                "add them to one, or drop them"
            )
        if self.locations or self.anonymization is not None:
            errors.append("share: a share plan has no locations and no anonymization section")
        return errors

    # ------------------------------------------------------------------ views

    def columns_with(self, *roles: str) -> list[str]:
        """Released columns (not dropped) whose role is one of ``roles``."""
        return [
            name
            for name, spec in self.columns.items()
            if spec.role in roles and spec.treatment.method != "drop"
        ]


# --------------------------------------------------------------------------- loading


def _where(loc: tuple[int | str, ...]) -> str:
    """Dotted field path, without the union tags pydantic inserts (``treatment.laplace``)."""
    parts: list[str] = []
    for i, part in enumerate(loc):
        text = str(part)
        previous = str(loc[i - 1]) if i else ""
        if previous in ("treatment", "mask") and text in (*_TREATMENTS, *_MASKS):
            continue
        if text.startswith(("function-", "tagged-union[")):
            continue
        parts.append(clip(text))
    return ".".join(parts) or "plan"


def _message(error: Any) -> str:
    where = _where(tuple(error.get("loc", ())))
    text = str(error.get("msg", "invalid")).removeprefix("Value error, ")
    if text.startswith(
        ("columns.", "locations.", "anonymization.", "budget.", "evaluation.", "acknowledge:")
    ):
        # Cross-field errors of the plan name their own paths, one per line.
        return text.replace("\n", "\n  ")
    if error.get("type") == "union_tag_not_found":
        tag = str(error.get("ctx", {}).get("discriminator", "")).strip("'")
        names = {"treatment": _TREATMENTS, "mask": _MASKS}.get(where.rsplit(".", 1)[-1], _MODELS)
        return f"{where}: missing the {tag or 'method'}; allowed: {', '.join(names)}"
    return describe(error, where, Plan)


def plan_schema() -> dict[str, Any]:
    """The JSON Schema of a release plan (draft 2020-12), as ``veil release --schema`` prints.

    Every section, field, default and allowed value of :class:`Plan`, with the
    descriptions of the sections, and the shorthands :func:`load_plan` accepts (a bare
    method name, ``{laplace: {...}}``, ``{k_anonymity: 5}``, a hierarchy as a path).
    Editors use it to complete and check plan files.
    """
    schema = Plan.model_json_schema(mode="validation")
    defs = schema["$defs"]

    def tagged_forms(original: dict[str, Any]) -> dict[str, Any]:
        # A bare name ("keep") and {name: {parameters}} besides {method: name, ...}.
        mapping: dict[str, str] = original["discriminator"]["mapping"]
        keyed = [
            {
                "type": "object",
                "properties": {tag: {"anyOf": [{"$ref": ref}, {"type": "null"}]}},
                "required": [tag],
                "additionalProperties": False,
            }
            for tag, ref in mapping.items()
        ]
        return {"anyOf": [original, {"type": "string", "enum": list(mapping)}, *keyed]}

    columns = defs["ColumnSpec"]["properties"]
    columns["treatment"] = tagged_forms(columns["treatment"])
    locations = defs["LocationSpec"]["properties"]
    locations["mask"] = tagged_forms(locations["mask"])
    models = defs["AnonymizationSpec"]["properties"]["models"]
    models["items"] = tagged_forms(models["items"])
    # {k_anonymity: 5}: k alone.
    models["items"]["anyOf"].append(
        {
            "type": "object",
            "properties": {"k_anonymity": {"type": "integer", "minimum": 1}},
            "required": ["k_anonymity"],
            "additionalProperties": False,
        }
    )
    hierarchy = defs["HierarchySpec"]
    mask = hierarchy["properties"]["mask"]
    hierarchy["properties"]["mask"] = {"anyOf": [{"type": "integer", "minimum": 0}, mask]}
    defs["HierarchySpec"] = {"anyOf": [{"type": "string"}, hierarchy]}
    generalize = defs["GeneralizeTreatment"]["properties"]
    generalize["sep"] = {
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "description": "The separator of a hierarchy file given as a path beside it.",
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **schema,
        "title": "veil release plan",
    }


def load_plan(
    source: str | os.PathLike[str] | Mapping[str, Any] | Plan,
    *,
    base_dir: str | os.PathLike[str] | None = None,
    allow_outside: bool = False,
) -> Plan:
    """Read and validate a release plan.

    Parameters
    ----------
    source : path, mapping or Plan
        A YAML file, an already parsed mapping, or a plan (returned as is).
    base_dir : path, optional
        Folder that relative paths in the plan are taken from; default the plan
        file's folder (the current folder for a mapping).
    allow_outside : bool, default False
        Let a plan read from a file (or given ``base_dir``) name paths outside that
        folder. By default such paths are refused, so that a plan from someone else
        cannot read arbitrary files. A mapping without ``base_dir`` comes from the
        calling program and is not confined.

    Returns
    -------
    Plan

    Raises
    ------
    PlanError
        The file is missing or not YAML, or the plan is invalid: one line per mistake,
        each naming its field path (``columns.age.treatment.epsilon``), the value and
        what is allowed.
    """
    if isinstance(source, Plan):
        return source
    contain = base_dir is not None or not isinstance(source, Mapping)
    if isinstance(source, Mapping):
        data: Any = dict(source)
        base = Path(base_dir) if base_dir is not None else Path.cwd()
    else:
        path = Path(source)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise PlanError(f"plan: file {os.fspath(path)!r} does not exist") from None
        except OSError as exc:
            raise PlanError(f"plan: cannot read {os.fspath(path)!r} ({exc.strerror})") from None
        data = read_plan_text(text, repr(os.fspath(path)))
        base = Path(base_dir) if base_dir is not None else path.resolve().parent
    check_plan_data(data)
    if not isinstance(data, Mapping):
        raise PlanError(f"plan: must be a mapping of sections, got {type(data).__name__}")
    try:
        return Plan.model_validate(
            data,
            context={PATH_CONTEXT: base, CONTAIN: contain, ALLOW_OUTSIDE: allow_outside},
        )
    except ValidationError as exc:
        lines = [clip_words(_message(e)) for e in exc.errors(include_url=False)]
        count = sum(len(line.splitlines()) for line in lines)
        raise PlanError(
            f"invalid release plan ({count} error{'s' if count > 1 else ''}):\n  "
            + "\n  ".join(lines)
        ) from None
