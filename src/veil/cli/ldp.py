"""``veil ldp``: local differential privacy on one column (:mod:`veil.ldp`).

Checks which options the chosen mechanism takes, calls its :mod:`veil.ldp` function with
a noise stream and a ledger, and prints the privacy cost per record it recorded.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import warnings
from typing import Annotated, Any

import pandas as pd
import typer

from veil.cli.console import captured_warnings, emit_json, print_text, print_warnings
from veil.cli.errors import CliUsageError, reporting_errors
from veil.cli.files import check_encoding, read_table, require_columns, split_list, split_numbers
from veil.cli.flags import as_flags
from veil.cli.one_table import (
    Data,
    MissingPolicy,
    Output,
    Treated,
    escaped_text,
    ledger_costs,
    order_text,
    other_columns,
    parse_number,
    print_costs,
    streams,
)
from veil.cli.options import (
    Acknowledge,
    DropOther,
    Encoding,
    Json,
    KeepOrder,
    KeepOther,
    OutFile,
    OutFormat,
    RawCsv,
    Seed,
    Sep,
)
from veil.errors import PrivacyWarning

__all__ = ["LdpMechanism", "ldp"]


class LdpMechanism(str, enum.Enum):
    """Local-DP mechanisms of :mod:`veil.ldp`."""

    laplace = "laplace"
    gaussian = "gaussian"
    exponential = "exponential"
    krr = "krr"
    binary_rr = "binary-rr"


_NUMERICAL = (LdpMechanism.laplace, LdpMechanism.gaussian)


def _plan_calibration(mechanism: LdpMechanism) -> str | None:
    """The calibration a plan's step of this mechanism takes by default (None: none)."""
    from veil.release.steps.ldp import ExponentialTreatment, GaussianTreatment

    if mechanism is LdpMechanism.gaussian:
        return str(GaussianTreatment.model_fields["calibration"].default)
    if mechanism is LdpMechanism.exponential:
        return str(ExponentialTreatment.model_fields["calibration"].default)
    return None


def _domain_values(values: list[str], series: pd.Series[Any]) -> list[Any]:
    """The declared categories in the column's type (numbers for a numeric column)."""
    if pd.api.types.is_integer_dtype(series.dtype):
        return [parse_number(v, "--domain", int) for v in values]
    if pd.api.types.is_float_dtype(series.dtype):
        return [parse_number(v, "--domain", float) for v in values]
    return values


def _check_ldp_options(
    mechanism: LdpMechanism,
    bounds: str | None,
    resolution: float | None,
    domain: str | None,
    domain_from_data: bool,
    ordinal: bool,
    delta: float | None,
    calibration: str | None,
) -> tuple[float, float]:
    """Refuse options the mechanism does not take or lacks; a numerical one's bounds.

    Categorical mechanisms get ``(nan, nan)``: they have no bounds.
    """
    lo = hi = math.nan
    if mechanism in _NUMERICAL:
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
    return lo, hi


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
            help="gaussian: analytic (default, as in plans) or classic (epsilon <= 1); "
            "exponential: full (default, as in plans: spends the whole epsilon) or standard "
            "(trasgoDP's, spends epsilon/2).",
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
    keep_other: KeepOther = False,
    acknowledge: Acknowledge = None,
    drop_other: DropOther = False,
    keep_order: KeepOrder = False,
    raw_csv: RawCsv = False,
    out_format: OutFormat = None,
    seed: Seed = None,
    sep: Sep = None,
    encoding: Encoding = None,
    as_json: Json = False,
) -> None:
    """Local differential privacy on one column (the veil.ldp functions).

    Prints the privacy cost per record the mechanism recorded. The other columns need
    --drop-other or --keep-other; released rows are in a random order.
    """
    from veil import ldp as toolkit
    from veil.mechanisms import PrivacyLedger, ordinal_scores

    numerical = mechanism in _NUMERICAL
    lo, hi = _check_ldp_options(
        mechanism, bounds, resolution, domain, domain_from_data, ordinal, delta, calibration
    )
    check_encoding(encoding)
    output = Output(out, sep, out_format, raw_csv, keep_order, (data,))
    output.check()
    text = [] if numerical else [column]
    frame = read_table(data, sep=sep, text_columns=text, encoding=encoding)
    require_columns(frame, [column], "--column", data.name)
    categories = (
        None if domain is None else _domain_values(split_list(domain, "--domain"), frame[column])
    )
    treated = Treated(numeric=(column,)) if numerical else Treated(categorical=(column,))
    ledger = PrivacyLedger()
    # The defaults of a plan's steps, so a command and a plan release the same thing.
    default = _plan_calibration(mechanism)
    chosen = calibration if calibration is not None else default
    extra: dict[str, Any] = {} if chosen is None else {"calibration": chosen}
    with as_flags("calibration", "missing"), captured_warnings() as caught:
        frame = other_columns(frame, treated, keep_other, drop_other, data.name, acknowledge)
        noise, order = streams(seed)
        common: dict[str, Any] = {"missing": missing.value, "rng": noise, "ledger": ledger}
        if new_column:
            warnings.warn(
                f"--new-column: the original column {column!r} is released beside "
                f"dp_{column}, unprotected",
                PrivacyWarning,
                stacklevel=1,
            )
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
        released, written = output.publish(released, order)
    print_warnings(caught)
    costs = ledger_costs(ledger)
    if as_json:
        emit_json(
            {
                "out": out,
                "column": column,
                "mechanism": mechanism.value,
                "rows": len(released),
                "costs": costs,
                "total": dataclasses.asdict(ledger.total()),
                **written,
                "warnings": caught,
            }
        )
        return
    print_costs(costs)
    total = ledger.total()
    print_text(
        f"privacy per record: epsilon={total.epsilon:.6g}, delta={total.delta:.3g}; "
        f"wrote {len(released)} rows to {out} ({order_text(keep_order)}){escaped_text(written)}"
    )
