"""Commands over one toolkit each: ``risk``, ``anonymize``, ``ldp``, ``mask`` and ``geo``.

Each command reads one table (CSV or Parquet, see :mod:`veil.cli.files`), calls the
public functions of one package (:mod:`veil.risk`, :mod:`veil.anonymity`,
:mod:`veil.ldp`, :mod:`veil.masking`, :mod:`veil.geo`) and, except ``risk``, writes the
released table atomically. It prints what was done and what it cost in privacy, as a
table or, with ``--json``, as JSON. No privacy decision is made here.
"""

from __future__ import annotations

import dataclasses
import enum
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import pandas as pd
import typer

from veil.cli.console import (
    captured_warnings,
    emit_json,
    print_table,
    print_text,
    print_warnings,
    status,
)
from veil.cli.errors import CheckFailedError, CliUsageError, reporting_errors
from veil.cli.files import (
    read_table,
    require_columns,
    split_list,
    split_numbers,
    write_table,
)
from veil.cli.options import Json, OutFile, Seed, Sep

if TYPE_CHECKING:
    from veil.masking import SecretKey

__all__ = [
    "GeoMask",
    "LdpMechanism",
    "MaskMethod",
    "anonymize",
    "geo",
    "ldp",
    "mask",
    "risk",
]

Data = Annotated[
    Path, typer.Argument(help="The input table: .csv (.tsv, .csv.gz, ...) or .parquet.")
]


def _costs(ledger: Any) -> list[dict[str, Any]]:
    return [dataclasses.asdict(entry) for entry in ledger.entries]


def _print_costs(costs: list[dict[str, Any]]) -> None:
    print_table(
        "Privacy cost",
        ["scope", "mechanism", "notion", "epsilon", "delta", "unit"],
        [
            [c["scope"], c["mechanism"], c["notion"], c["epsilon"], c["delta"], c["unit"]]
            for c in costs
        ],
    )


# ----------------------------------------------------------------------------- risk


@reporting_errors
def risk(
    data: Data,
    qi: Annotated[
        str,
        typer.Option("--qi", help="Quasi-identifiers, comma-separated (e.g. age,sex,zip)."),
    ],
    sampling_fraction: Annotated[
        float | None,
        typer.Option(
            "--sampling-fraction",
            help="n / N in (0, 1] when the table is a sample of a known population: adds "
            "the journalist risk and the population-uniqueness estimate.",
        ),
    ] = None,
    threshold: Annotated[
        float,
        typer.Option(
            "--threshold", help="Prosecutor risk threshold in (0, 1] for 'records at risk'."
        ),
    ] = 0.2,
    fail_above: Annotated[
        float | None,
        typer.Option(
            "--fail-above",
            help="Exit with code 1 when the highest prosecutor risk exceeds this value.",
        ),
    ] = None,
    sep: Sep = None,
    as_json: Json = False,
) -> None:
    """Re-identification risk of a table from its quasi-identifiers (nothing is written).

    Prosecutor, journalist and marketer risk, sample uniques and, with
    --sampling-fraction, the estimated share of population uniques (veil.risk.summary).
    """
    from veil.risk import summary

    columns = split_list(qi, "--qi")
    frame = read_table(data, sep=sep)
    require_columns(frame, columns, "--qi", data.name)
    result = summary(frame, columns, threshold=threshold, sampling_fraction=sampling_fraction)
    measures = result.to_dict()
    failed = fail_above is not None and result.prosecutor_highest > fail_above
    if as_json:
        emit_json(
            {
                "file": data,
                "quasi_identifiers": columns,
                **measures,
                "fail_above": fail_above,
                "passed": not failed,
            }
        )
    else:
        print_table(
            f"Re-identification risk of {data.name} on {', '.join(columns)}",
            ["measure", "value"],
            [[name, value] for name, value in measures.items()],
        )
    if failed:
        raise CheckFailedError(
            f"--fail-above: the highest prosecutor risk {result.prosecutor_highest:.6g} "
            f"exceeds {fail_above:g}"
        )


# ------------------------------------------------------------------------- anonymize


def _named_pairs(
    items: list[str], parameter: str, separator: str, form: str
) -> list[tuple[str, str]]:
    pairs = []
    for item in items:
        name, found, value = item.partition(separator)
        if not found or not name.strip() or not value.strip():
            raise CliUsageError(f"{parameter}: expected {form}, got {item!r}")
        pairs.append((name.strip(), value.strip()))
    return pairs


def _number(text: str, parameter: str, kind: type[int] | type[float]) -> Any:
    try:
        return kind(text)
    except ValueError:
        raise CliUsageError(
            f"{parameter}: {text!r} is not {'an integer' if kind is int else 'a number'}"
        ) from None


def _models(k: int | None, l_specs: list[str], t_specs: list[str]) -> list[Any]:
    from veil.anonymity import DistinctLDiversity, KAnonymity, TCloseness

    models: list[Any] = []
    if k is not None:
        models.append(KAnonymity(k))
    for attribute, value in _named_pairs(l_specs, "--l", ":", "ATTRIBUTE:L"):
        models.append(DistinctLDiversity(attribute, _number(value, "--l", int)))
    for attribute, value in _named_pairs(t_specs, "--t", ":", "ATTRIBUTE:T[:DISTANCE]"):
        t, _, distance = value.partition(":")
        models.append(TCloseness(attribute, _number(t, "--t", float), distance or "equal"))
    if not models:
        raise CliUsageError("--k, --l, --t: give at least one privacy model (e.g. --k 5)")
    return models


@reporting_errors
def anonymize(
    data: Data,
    hierarchy: Annotated[
        list[str],
        typer.Option(
            "--hierarchy",
            metavar="COLUMN=FILE",
            help="COLUMN=FILE.csv: a quasi-identifier and its generalization hierarchy "
            "(anjana's ',' or ARX's ';' format); repeat for each quasi-identifier.",
        ),
    ],
    out: OutFile,
    k: Annotated[
        int | None, typer.Option("--k", help="k-anonymity: every class holds >= k records.")
    ] = None,
    l_diversity: Annotated[
        list[str] | None,
        typer.Option(
            "--l",
            metavar="ATTRIBUTE:L",
            help="ATTRIBUTE:L, distinct l-diversity of a sensitive column; repeatable.",
        ),
    ] = None,
    t_closeness: Annotated[
        list[str] | None,
        typer.Option(
            "--t",
            metavar="ATTRIBUTE:T[:DISTANCE]",
            help="ATTRIBUTE:T[:DISTANCE], t-closeness of a sensitive column, DISTANCE "
            "'equal' (default) or 'ordered'; repeatable.",
        ),
    ] = None,
    max_suppression: Annotated[
        float,
        typer.Option(
            "--max-suppression", help="Largest share of records that may be suppressed, [0, 1]."
        ),
    ] = 0.0,
    metric: Annotated[
        str,
        typer.Option(
            "--metric",
            help="Objective: loss, discernibility, aecs, precision or entropy.",
        ),
    ] = "loss",
    time_limit: Annotated[
        float | None,
        typer.Option(
            "--time-limit",
            help="Seconds after which the best transformation found so far is returned "
            "(not proven optimal; a warning says so).",
        ),
    ] = None,
    mark: Annotated[
        bool,
        typer.Option(
            "--mark-suppressed",
            help="Keep suppressed records with every quasi-identifier '*' instead of "
            "removing them.",
        ),
    ] = False,
    sep: Sep = None,
    as_json: Json = False,
) -> None:
    """Optimal generalization of the quasi-identifiers with record suppression.

    Searches the lattice of hierarchy levels for the transformation with the best
    metric satisfying every model (veil.anonymity.anonymize) and writes the released
    table. Exit code 1 when no transformation satisfies the models.
    """
    from veil.anonymity import Hierarchy
    from veil.anonymity import anonymize as run_search

    pairs = _named_pairs(hierarchy, "--hierarchy", "=", "COLUMN=FILE.csv")
    models = _models(k, l_diversity or [], t_closeness or [])
    hierarchies: dict[str, Hierarchy] = {}
    for column, path in pairs:
        if not Path(path).is_file():
            raise CliUsageError(f"--hierarchy: file {path!r} (for {column!r}) does not exist")
        hierarchies[column] = Hierarchy.from_csv(path)
    # Generalization maps the values as written in the hierarchy files: read them as text.
    frame = read_table(data, sep=sep, text_columns=list(hierarchies))
    require_columns(frame, list(hierarchies), "--hierarchy", data.name)
    sensitive = sorted({a for m in models if (a := getattr(m, "attribute", None)) is not None})
    with captured_warnings() as caught, status("searching the generalization lattice"):
        result = run_search(
            frame,
            hierarchies,
            models,
            max_suppression=max_suppression,
            metric=metric,
            sensitive=sensitive or None,
            suppression="mark" if mark else "remove",
            time_limit=time_limit,
        )
    write_table(result.data, out, sep=sep, inputs=[data])
    print_warnings(caught)
    payload = {
        "out": out,
        "rows_in": len(frame),
        "rows_out": len(result.data),
        "suppressed": result.suppressed,
        "levels": result.levels,
        "optimal": result.optimal,
        "metrics": result.metrics,
        "models": [repr(m) for m in models],
        "warnings": caught,
    }
    if as_json:
        emit_json(payload)
        return
    found = "optimal" if result.optimal else "best found, not proven optimal"
    print_table(
        f"Generalization levels ({found})",
        ["quasi-identifier", "level"],
        [[c, level] for c, level in result.levels.items()],
    )
    print_table("Quality", ["metric", "value"], [[m, v] for m, v in result.metrics.items()])
    print_text(
        f"models: {', '.join(repr(m) for m in models)}\n"
        f"suppressed {result.suppressed} of {len(frame)} records; wrote {out}"
    )


# ------------------------------------------------------------------------------- ldp


class LdpMechanism(str, enum.Enum):
    """Local-DP mechanisms of :mod:`veil.ldp`."""

    laplace = "laplace"
    gaussian = "gaussian"
    exponential = "exponential"
    krr = "krr"
    binary_rr = "binary-rr"


class MissingPolicy(str, enum.Enum):
    """What happens to missing values."""

    error = "error"
    keep = "keep"


_NUMERICAL = (LdpMechanism.laplace, LdpMechanism.gaussian)


def _domain_values(values: list[str], series: pd.Series[Any]) -> list[Any]:
    """The declared categories in the column's type (numbers for a numeric column)."""
    if pd.api.types.is_integer_dtype(series.dtype):
        return [_number(v, "--domain", int) for v in values]
    if pd.api.types.is_float_dtype(series.dtype):
        return [_number(v, "--domain", float) for v in values]
    return values


@reporting_errors
def ldp(
    data: Data,
    column: Annotated[str, typer.Option("--column", help="The column to privatize.")],
    mechanism: Annotated[
        LdpMechanism,
        typer.Option(
            "--mechanism",
            help="laplace or gaussian (numbers, need --bounds); exponential, krr (k-ary "
            "randomized response) or binary-rr (categories, need --domain).",
        ),
    ],
    epsilon: Annotated[float, typer.Option("--epsilon", help="Privacy budget per record, > 0.")],
    out: OutFile,
    bounds: Annotated[
        str | None,
        typer.Option("--bounds", help="LOW,HIGH: public bounds of a numerical column."),
    ] = None,
    domain: Annotated[
        str | None,
        typer.Option("--domain", help="A,B,C: the public categories of a categorical column."),
    ] = None,
    domain_from_data: Annotated[
        bool,
        typer.Option(
            "--domain-from-data",
            help="Read the categories from the data instead of --domain; leaks which "
            "categories occur (a PrivacyLeakWarning says so).",
        ),
    ] = False,
    delta: Annotated[
        float | None, typer.Option("--delta", help="delta of the Gaussian mechanism, (0, 1).")
    ] = None,
    calibration: Annotated[
        str | None,
        typer.Option(
            "--calibration",
            help="gaussian: classic (default, epsilon <= 1) or analytic; exponential: "
            "standard (trasgoDP's, spends epsilon/2; default) or full.",
        ),
    ] = None,
    ordinal: Annotated[
        bool,
        typer.Option(
            "--ordinal",
            help="exponential: score reports by their distance in the --domain order.",
        ),
    ] = False,
    resolution: Annotated[
        float | None,
        typer.Option("--resolution", help="laplace/gaussian: the public grid of float noise."),
    ] = None,
    missing: Annotated[
        MissingPolicy,
        typer.Option("--missing", help="Missing values: error (default) or keep as missing."),
    ] = MissingPolicy.error,
    new_column: Annotated[
        bool,
        typer.Option(
            "--new-column", help="Add dp_COLUMN next to the original instead of replacing it."
        ),
    ] = False,
    seed: Seed = None,
    sep: Sep = None,
    as_json: Json = False,
) -> None:
    """Local differential privacy on one column (the veil.ldp functions).

    Prints the privacy cost per record the mechanism recorded.
    """
    from veil import ldp as toolkit
    from veil.mechanisms import PrivacyLedger, ordinal_scores

    numerical = mechanism in _NUMERICAL
    if numerical:
        if bounds is None:
            raise CliUsageError(f"--bounds: required by --mechanism {mechanism.value}")
        if domain is not None or domain_from_data or ordinal:
            raise CliUsageError(
                f"--domain, --domain-from-data, --ordinal: not for --mechanism {mechanism.value}"
            )
        lo, hi = split_numbers(bounds, "--bounds", count=2)
    else:
        if bounds is not None or resolution is not None:
            raise CliUsageError(f"--bounds, --resolution: not for --mechanism {mechanism.value}")
        if (domain is None) == (not domain_from_data):
            raise CliUsageError(
                f"--domain: --mechanism {mechanism.value} needs the public categories "
                "(--domain A,B,C), or --domain-from-data to read them from the data"
            )
    if ordinal and (mechanism is not LdpMechanism.exponential or domain is None):
        raise CliUsageError("--ordinal: for --mechanism exponential with --domain (in order)")
    if mechanism is LdpMechanism.gaussian and delta is None:
        raise CliUsageError("--delta: required by --mechanism gaussian")
    if delta is not None and mechanism is not LdpMechanism.gaussian:
        raise CliUsageError(f"--delta: not for --mechanism {mechanism.value}")
    if calibration is not None and mechanism not in (
        LdpMechanism.gaussian,
        LdpMechanism.exponential,
    ):
        raise CliUsageError(f"--calibration: not for --mechanism {mechanism.value}")

    text = [] if numerical else [column]
    frame = read_table(data, sep=sep, text_columns=text)
    require_columns(frame, [column], "--column", data.name)
    categories = (
        None if domain is None else _domain_values(split_list(domain, "--domain"), frame[column])
    )
    ledger = PrivacyLedger()
    common: dict[str, Any] = {"missing": missing.value, "rng": seed, "ledger": ledger}
    extra: dict[str, Any] = {} if calibration is None else {"calibration": calibration}
    with captured_warnings() as caught:
        if mechanism is LdpMechanism.laplace:
            released = toolkit.dp_clip_laplace(
                frame, column, epsilon, lo, hi, new_column, resolution=resolution, **common
            )
        elif mechanism is LdpMechanism.gaussian:
            assert delta is not None
            released = toolkit.dp_clip_gaussian(
                frame,
                column,
                epsilon,
                lo,
                hi,
                delta,
                new_column,
                resolution=resolution,
                **extra,
                **common,
            )
        elif mechanism is LdpMechanism.exponential:
            scores = ordinal_scores(len(categories)) if ordinal and categories else None
            released = toolkit.dp_exponential(
                frame,
                column,
                epsilon,
                new_column,
                domain=categories,
                scores=scores,
                **extra,
                **common,
            )
        elif mechanism is LdpMechanism.krr:
            released = toolkit.dp_randomized_response_kary(
                frame, column, epsilon, new_column, domain=categories, **common
            )
        else:
            released = toolkit.dp_randomized_response_binary(
                frame, column, epsilon, new_column, domain=categories, **common
            )
    # Parquet would carry attrs (the recorded costs) into the file's metadata.
    released.attrs = {}
    write_table(released, out, sep=sep, inputs=[data])
    print_warnings(caught)
    costs = _costs(ledger)
    if as_json:
        emit_json(
            {
                "out": out,
                "column": column,
                "mechanism": mechanism.value,
                "rows": len(released),
                "costs": costs,
                "total": dataclasses.asdict(ledger.total()),
                "warnings": caught,
            }
        )
        return
    _print_costs(costs)
    total = ledger.total()
    print_text(
        f"privacy per record: epsilon={total.epsilon:.6g}, delta={total.delta:.3g}; "
        f"wrote {len(released)} rows to {out}"
    )


# ------------------------------------------------------------------------------ mask


class MaskMethod(str, enum.Enum):
    """Masking treatments of :mod:`veil.masking`."""

    redact = "redact"
    hmac = "hmac"
    ff1 = "ff1"
    mask_email = "mask-email"
    mask_partial = "mask-partial"
    mask_phone = "mask-phone"
    mask_card = "mask-card"


_KEYED = (MaskMethod.hmac, MaskMethod.ff1)


def _load_key(key_file: Path | None, key_env: str | None, key_id: str | None) -> SecretKey:
    from veil.masking import SecretKey

    key = (
        SecretKey.from_file(key_file) if key_file is not None else SecretKey.from_env(str(key_env))
    )
    if key_id is not None:
        key.require_id(key_id)
    return key


@reporting_errors
def mask(
    data: Data,
    column: Annotated[
        list[str],
        typer.Option("--column", metavar="COLUMN", help="A column to mask; repeatable."),
    ],
    method: Annotated[
        MaskMethod,
        typer.Option(
            "--method",
            help="redact, hmac (keyed pseudonyms), ff1 (format-preserving encryption), "
            "mask-email, mask-partial, mask-phone or mask-card.",
        ),
    ],
    out: OutFile,
    key_file: Annotated[
        Path | None,
        typer.Option(
            "--key-file", help="hmac/ff1: a file holding the key (hex, base64:..., or raw)."
        ),
    ] = None,
    key_env: Annotated[
        str | None,
        typer.Option("--key-env", help="hmac/ff1: an environment variable holding the key."),
    ] = None,
    key_id: Annotated[
        str | None,
        typer.Option(
            "--key-id",
            help="Refuse to run unless the key has this id (guards against the wrong key).",
        ),
    ] = None,
    namespace: Annotated[
        str | None,
        typer.Option("--namespace", help="hmac: namespace of the pseudonyms (default: column)."),
    ] = None,
    length: Annotated[
        int | None, typer.Option("--length", help="hmac: hex characters kept, 1 to 64.")
    ] = None,
    normalize: Annotated[
        str | None,
        typer.Option("--normalize", help="hmac: case, whitespace or both before hashing."),
    ] = None,
    alphabet: Annotated[
        str,
        typer.Option("--alphabet", help="ff1: the symbols of the values (a string)."),
    ] = "0123456789",
    missing: Annotated[
        MissingPolicy,
        typer.Option("--missing", help="ff1: missing values raise (error) or stay (keep)."),
    ] = MissingPolicy.error,
    replacement: Annotated[
        str, typer.Option("--replacement", help="redact: the replacement text.")
    ] = "[REDACTED]",
    keep_last: Annotated[
        int,
        typer.Option("--keep-last", help="mask-partial/mask-phone: characters left visible."),
    ] = 4,
    sep: Sep = None,
    as_json: Json = False,
) -> None:
    """Mask direct identifiers (veil.masking); keys come from a file or a variable.

    Keyed methods (hmac, ff1) need exactly one of --key-file or --key-env; the key is
    never printed or written, only its id.
    """
    from veil import masking

    if method in _KEYED:
        if (key_file is None) == (key_env is None):
            raise CliUsageError(
                f"--key-file, --key-env: --method {method.value} needs exactly one of them"
            )
    elif key_file is not None or key_env is not None or key_id is not None:
        raise CliUsageError(f"--key-file, --key-env, --key-id: not for --method {method.value}")
    key = _load_key(key_file, key_env, key_id) if method in _KEYED else None
    # Text throughout: the columns passed through are written back as they were read.
    frame = read_table(data, sep=sep, all_text=True)
    require_columns(frame, column, "--column", data.name)
    with captured_warnings() as caught:
        if key is not None and method is MaskMethod.hmac:
            released = masking.pseudonymize_columns(
                frame,
                column,
                key,
                normalize=normalize,  # type: ignore[arg-type]  # checked by veil.masking
                length=length,
                namespace=namespace,
            )
        else:
            released = frame.copy()
            cipher = masking.FF1(key, alphabet) if key is not None else None
            for name in column:
                values = frame[name]
                if cipher is not None:
                    released[name] = cipher.encrypt_many(
                        values, tweak=name.encode("utf-8"), missing=missing.value
                    )
                elif method is MaskMethod.redact:
                    released[name] = masking.redact(values, replacement)
                elif method is MaskMethod.mask_email:
                    released[name] = masking.mask_email(values)
                elif method is MaskMethod.mask_partial:
                    released[name] = masking.mask_partial(values, keep_last)
                elif method is MaskMethod.mask_phone:
                    released[name] = masking.mask_phone(values, keep_last)
                else:
                    released[name] = masking.mask_card(values)
    # Parquet would carry attrs (the recorded costs) into the file's metadata.
    released.attrs = {}
    write_table(released, out, sep=sep, inputs=[data])
    print_warnings(caught)
    payload = {
        "out": out,
        "columns": column,
        "method": method.value,
        "key_id": None if key is None else key.key_id,
        "rows": len(released),
        "warnings": caught,
    }
    if as_json:
        emit_json(payload)
        return
    keyed = f" with key {key.key_id}" if key is not None else ""
    print_text(
        f"masked {', '.join(column)} ({method.value}{keyed}) in {len(released)} rows; wrote {out}"
    )


# ------------------------------------------------------------------------------- geo


class GeoMask(str, enum.Enum):
    """Location masks of :mod:`veil.geo`."""

    planar_laplace = "planar-laplace"
    grid = "grid"
    donut = "donut"
    jitter = "jitter"
    cloak = "cloak"


_GEO_PARAMETERS: dict[GeoMask, tuple[str, ...]] = {
    GeoMask.planar_laplace: ("--epsilon",),
    GeoMask.grid: ("--cell-m",),
    GeoMask.donut: ("--r-min-m", "--r-max-m"),
    GeoMask.jitter: ("--radius-m",),
    GeoMask.cloak: ("--k",),
}

_GUARANTEE: dict[GeoMask, str] = {
    GeoMask.planar_laplace: "geo-indistinguishability: epsilon per metre",
    GeoMask.grid: "aggregated to grid cells; no formal guarantee",
    GeoMask.donut: "random displacement outside a minimum radius; no formal guarantee",
    GeoMask.jitter: "random displacement; no formal guarantee",
    GeoMask.cloak: "every reported cell holds at least k of the table's locations",
}


@reporting_errors
def geo(
    data: Data,
    lat: Annotated[str, typer.Option("--lat", help="Latitude column (degrees, WGS 84).")],
    lon: Annotated[str, typer.Option("--lon", help="Longitude column (degrees, WGS 84).")],
    mask_name: Annotated[
        GeoMask,
        typer.Option(
            "--mask",
            help="planar-laplace (--epsilon), grid (--cell-m [--min-count]), donut "
            "(--r-min-m --r-max-m), jitter (--radius-m [--kind]) or cloak (--k).",
        ),
    ],
    out: OutFile,
    epsilon: Annotated[
        float | None, typer.Option("--epsilon", help="planar-laplace: epsilon per metre.")
    ] = None,
    cell_m: Annotated[
        float | None, typer.Option("--cell-m", help="grid: cell side in metres.")
    ] = None,
    min_count: Annotated[
        int | None,
        typer.Option("--min-count", help="grid: suppress cells holding fewer points."),
    ] = None,
    r_min_m: Annotated[
        float | None, typer.Option("--r-min-m", help="donut: smallest displacement, metres.")
    ] = None,
    r_max_m: Annotated[
        float | None, typer.Option("--r-max-m", help="donut: largest displacement, metres.")
    ] = None,
    radius_m: Annotated[
        float | None, typer.Option("--radius-m", help="jitter: radius (or sigma), metres.")
    ] = None,
    kind: Annotated[
        str, typer.Option("--kind", help="jitter: disc (default) or gaussian.")
    ] = "disc",
    k: Annotated[
        int | None, typer.Option("--k", help="cloak: locations per reported cell.")
    ] = None,
    root_m: Annotated[
        str | None,
        typer.Option(
            "--root-m",
            help="cloak: X0,Y0,SIZE, the quadtree's root square in projected metres, chosen "
            "from public knowledge (default: from the data, with a PrivacyLeakWarning).",
        ),
    ] = None,
    centre: Annotated[
        str | None,
        typer.Option(
            "--centre",
            help="LAT,LON: a public centre for the planar projection (recommended: each "
            "point's mask then depends on no other record). Default: from the data.",
        ),
    ] = None,
    missing: Annotated[
        MissingPolicy,
        typer.Option("--missing", help="Missing coordinates: error (default) or keep."),
    ] = MissingPolicy.error,
    map_file: Annotated[
        Path | None,
        typer.Option(
            "--map",
            help="Also write an interactive map (.html) of the masked points (originals "
            "are not drawn).",
        ),
    ] = None,
    seed: Seed = None,
    sep: Sep = None,
    as_json: Json = False,
) -> None:
    """Mask a latitude/longitude pair in metres (veil.geo); needs the geo extra."""
    from veil import geo as toolkit
    from veil.mechanisms import PrivacyLedger

    values = {
        "--epsilon": epsilon,
        "--cell-m": cell_m,
        "--r-min-m": r_min_m,
        "--r-max-m": r_max_m,
        "--radius-m": radius_m,
        "--k": k,
    }
    needed = _GEO_PARAMETERS[mask_name]
    absent = [name for name in needed if values[name] is None]
    if absent:
        raise CliUsageError(f"{', '.join(absent)}: required by --mask {mask_name.value}")
    stray = [name for name, v in values.items() if v is not None and name not in needed]
    if min_count is not None and mask_name is not GeoMask.grid:
        stray.append("--min-count")
    if root_m is not None and mask_name is not GeoMask.cloak:
        stray.append("--root-m")
    if stray:
        raise CliUsageError(f"{', '.join(stray)}: not for --mask {mask_name.value}")
    if map_file is not None and map_file.suffix.lower() != ".html":
        raise CliUsageError(f"--map: must end in .html, got {os.fspath(map_file)!r}")

    projection: Any = "auto"
    if centre is not None:
        centre_lat, centre_lon = split_numbers(centre, "--centre", count=2)
        projection = toolkit.projection_at(centre_lat, centre_lon)
    frame = read_table(data, sep=sep)
    require_columns(frame, [lat, lon], "--lat, --lon", data.name)
    ledger = PrivacyLedger()
    common: dict[str, Any] = {"projection": projection, "missing": missing.value}
    with captured_warnings() as caught:
        if mask_name is GeoMask.planar_laplace:
            assert epsilon is not None
            masked = toolkit.planar_laplace(
                frame, lat, lon, epsilon, rng=seed, ledger=ledger, **common
            )
        elif mask_name is GeoMask.grid:
            assert cell_m is not None
            masked = toolkit.grid(frame, lat, lon, cell_m, min_count=min_count, **common)
        elif mask_name is GeoMask.donut:
            assert r_min_m is not None and r_max_m is not None
            masked = toolkit.donut(frame, lat, lon, r_min_m, r_max_m, rng=seed, **common)
        elif mask_name is GeoMask.jitter:
            assert radius_m is not None
            masked = toolkit.jitter(
                frame,
                lat,
                lon,
                radius_m,
                kind=kind,  # type: ignore[arg-type]  # checked by veil.geo
                rng=seed,
                **common,
            )
        else:
            assert k is not None
            root = None if root_m is None else split_numbers(root_m, "--root-m", count=3)
            masked = toolkit.cloak(
                frame,
                lat,
                lon,
                k,
                bounds_m=None if root is None else (root[0], root[1], root[2]),
                **common,
            )
        # Parquet would carry attrs (the recorded costs) into the file's metadata.
        masked.attrs = {}
        write_table(masked, out, sep=sep, inputs=[data])
        if map_file is not None:
            toolkit.location_map(frame, masked, lat, lon, map_file)
    print_warnings(caught)
    costs = _costs(ledger)
    payload = {
        "out": out,
        "map": map_file,
        "mask": mask_name.value,
        "parameters": {
            name.removeprefix("--").replace("-", "_"): v
            for name, v in [
                *values.items(),
                ("--min-count", min_count),
                ("--root-m", root_m),
                ("--kind", kind if mask_name is GeoMask.jitter else None),
            ]
            if v is not None
        },
        "guarantee": _GUARANTEE[mask_name],
        "costs": costs,
        "rows": len(masked),
        "warnings": caught,
    }
    if as_json:
        emit_json(payload)
        return
    if costs:
        _print_costs(costs)
    written = f"{out}" + (f" and {map_file}" if map_file is not None else "")
    print_text(f"{mask_name.value}: {_GUARANTEE[mask_name]}; wrote {written}")
