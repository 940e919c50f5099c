"""``veil share``: OptimShare, Q released exactly beside DP synthetic S (one-off command).

Reads one table and a public domain (YAML: column -> categories, or bounds and bins, as
:meth:`veil.synth.TableDomain.from_dict` reads), runs :func:`veil.share.optimshare`
(PIF refinement of Q, fuzzy (ε, δ) pairs, the search) and writes the chosen candidate
with its rows shuffled (:func:`veil.frames.shuffle_rows`) and CSV cells a spreadsheet
would run as formulas escaped. It prints the chosen pair, the composed privacy cost and
every leak. Nothing is written unless the search releases a candidate, and the table is
written atomically: a killed run leaves no partial output.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from veil.cli.console import (
    captured_warnings,
    emit_json,
    print_note,
    print_table,
    print_warnings,
    progress,
    status,
)
from veil.cli.errors import CheckFailedError, CliUsageError, reporting_errors
from veil.cli.files import (
    check_outputs,
    read_table,
    require_columns,
    split_list,
    table_format,
    write_table,
)
from veil.cli.options import Encoding, Json, Seed, Sep

if TYPE_CHECKING:
    from veil.share import ShareResult

__all__ = ["share"]

Data = Annotated[
    Path, typer.Argument(help="The input table: .csv (.tsv, .csv.gz, ...) or .parquet.")
]


def _domain(path: Path) -> dict[str, Any]:
    import yaml

    try:
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise CliUsageError(f"--domain: {os.fspath(path)!r} is not valid YAML ({exc})") from None
    if not isinstance(spec, dict) or not spec:
        raise CliUsageError(
            f"--domain: {os.fspath(path)!r} must map each column to its public categories or bounds"
        )
    return {str(k): v for k, v in spec.items()}


@reporting_errors
def share(
    data: Data,
    q: Annotated[
        str,
        typer.Option("--q", help="Columns the custodian would release exactly (the global Q)."),
    ],
    s: Annotated[str, typer.Option("--s", help="Columns to replace by DP synthetic values (S).")],
    label: Annotated[
        str, typer.Option("--label", help="The class column (GaussianNB utility), in Q or S.")
    ],
    domain: Annotated[
        Path,
        typer.Option(
            "--domain",
            help="YAML file: the public domain of every column of Q and S (categories, or "
            "bounds and bins).",
        ),
    ],
    out: Annotated[
        Path,
        typer.Option("--out", help="The released table (.csv or .parquet), written atomically."),
    ],
    synthesizer: Annotated[
        str, typer.Option("--synthesizer", help="A veil.synth synthesizer: mst, aim, ...")
    ] = "mst",
    instances: Annotated[int, typer.Option("--instances", help="t: instances per pair.")] = 4,
    tn: Annotated[int, typer.Option("--tn", help="TN: number of (epsilon, delta) pairs.")] = 12,
    t_epsilon: Annotated[
        float, typer.Option("--t-epsilon", help="T_eps: the largest epsilon considered.")
    ] = 8.0,
    p_l: Annotated[float, typer.Option("--p-l", help="P_l: delta in percent of 1/n.")] = 0.01,
    e_threshold: Annotated[
        float, typer.Option("--e-threshold", help="E^T: the effectiveness a release needs.")
    ] = 0.5,
    selection: Annotated[
        str,
        typer.Option(
            "--selection",
            help="paper (argmax; costs every fit composed) or private (random stopping).",
        ),
    ] = "paper",
    min_k: Annotated[
        int, typer.Option("--min-k", help="The released Q must be min-k-anonymous.")
    ] = 2,
    seed: Seed = None,
    sep: Sep = None,
    encoding: Encoding = None,
    as_json: Json = False,
) -> None:
    """Release Q exactly beside DP synthetic S, the candidate chosen by OptimShare's search.

    S is drawn from differentially private models (the printed cost is their
    composition under the selection used); Q is released exactly and is NOT covered by
    any DP guarantee; the printed leaks are not covered either.
    """
    from veil.errors import DisclosureRiskError
    from veil.frames import shuffle_rows
    from veil.rng import resolve_rng, spawn
    from veil.share import NoCandidateError

    q_cols, s_cols = split_list(q, "--q"), split_list(s, "--s")
    if selection not in ("paper", "private"):
        raise CliUsageError(f"--selection: must be paper or private, got {selection!r}")
    table_format(out, "--out")
    check_outputs({"--out": out}, [data, domain])
    spec = _domain(domain)
    frame = read_table(data, sep=sep, encoding=encoding)
    require_columns(frame, [*q_cols, *s_cols, label], "--q, --s, --label", data.name)
    total = tn * (1 + instances) if selection == "paper" else 0
    with captured_warnings() as caught:
        search_rng, order_rng = spawn(resolve_rng(seed, stacklevel=3), 2)
        try:
            result = _run(
                frame, q_cols, s_cols, label, spec, synthesizer, instances, tn, t_epsilon,
                p_l, e_threshold, selection, min_k, search_rng, total,
            )  # fmt: skip
        except (NoCandidateError, DisclosureRiskError) as exc:
            raise CheckFailedError(str(exc)) from None
        except ImportError as exc:
            raise CliUsageError(str(exc)) from None
    print_warnings(caught)
    released = shuffle_rows(result.data, order_rng)
    escaped = write_table(released, out, sep=sep, inputs=[data, domain])
    _report(result, out, escaped, as_json)


def _run(
    frame: Any,
    q: list[str],
    s: list[str],
    label: str,
    spec: dict[str, Any],
    synthesizer: str,
    instances: int,
    tn: int,
    t_epsilon: float,
    p_l: float,
    e_threshold: float,
    selection: str,
    min_k: int,
    rng: Any,
    total: int,
) -> ShareResult:
    from veil.share import optimshare

    options: dict[str, Any] = {
        "q": q,
        "s": s,
        "label": label,
        "domain": spec,
        "synthesizer": synthesizer,
        "instances": instances,
        "tn": tn,
        "t_epsilon": t_epsilon,
        "p_l": p_l,
        "e_threshold": e_threshold,
        "selection": selection,
        "min_k": min_k,
        "rng": rng,
    }
    if total:
        with progress("OptimShare search", total) as advance:

            def report(step: str, done: int, _total: int) -> None:
                if done:
                    advance(step)

            result, _ = optimshare(frame, progress=report, **options)
            return result
    with status("OptimShare search (private selection)"):
        result, _ = optimshare(frame, **options)
    return result


def _report(result: ShareResult, out: Path, escaped: dict[str, int], as_json: bool) -> None:
    chosen = result.chosen
    if as_json:
        emit_json({"out": out, "csv_cells_escaped": escaped, **result.to_dict()})
        return
    print_table(
        f"OptimShare: released {len(result.data)} rows to {out.name}",
        ["chosen pair", "epsilon", "delta", "instance", "U_l", "P_N", "e"],
        [
            [
                int(chosen["pair"]) + 1,
                chosen["epsilon"],
                chosen["delta"],
                int(chosen["instance"]) + 1,
                chosen["u_l"],
                chosen["p_n"],
                chosen["e"],
            ]
        ],
    )
    print_table(
        None,
        ["selection", "composed epsilon", "delta", "how"],
        [[rule, c.epsilon, c.delta, c.mechanism] for rule, c in result.costs.items()],
    )
    print_note(f"veil: Q exact (not covered by DP): {', '.join(result.q)}")
    print_note(f"veil: S synthetic: {', '.join(result.s)}")
    for leak in result.leaks:
        print_note(f"veil: leak: {leak}")
    if escaped:
        print_note(f"veil: escaped {sum(escaped.values())} cell(s) a spreadsheet would run")
