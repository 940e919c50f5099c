"""``veil share``: OptimShare, Q released exactly beside DP synthetic S (one-off command).

Reads one table and a public domain (YAML: column -> categories, or bounds and bins, as
:meth:`veil.synth.TableDomain.from_dict` reads), runs :func:`veil.share.optimshare`
(the PIF requirements, with the paper's refinement of Q only under ``--refine``; fuzzy
(ε, δ) pairs; the search, by default with the private selection) and writes the chosen
candidate
with its rows shuffled (:func:`veil.frames.shuffle_rows`) and CSV cells a
spreadsheet would run as formulas escaped. Q is released as it is, so it passes the
release gate's carrier check first (:func:`veil.cli.one_table.other_columns`): a Q
column that gives an S column away, or singles out records, is refused unless
``--acknowledge`` names it. Its defaults are a plan's ``share:`` section's
(``refine: false``, ``alpha: 1``, ``selection: private``, ``min_k: 2``, 4 instances,
``E^T`` 0.5). It prints the chosen pair, the composed privacy cost and
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
from veil.cli.one_table import Treated, other_columns
from veil.cli.options import Encoding, Json, Seed, Sep

if TYPE_CHECKING:
    from veil.share import ShareRequirements, ShareResult

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
            help="private (random stopping over noisy scores) or paper (the argmax: reads "
            "the raw records, no bound covers its choice).",
        ),
    ] = "private",
    refine: Annotated[
        bool,
        typer.Option(
            "--refine/--no-refine",
            help="Apply the paper's PIF refinement (moves Q attributes to S), or keep Q as given.",
        ),
    ] = False,
    alpha: Annotated[
        float,
        typer.Option(
            "--alpha",
            help="The refinement's coefficient: Q_i moves when QSPIF - QPIF >= alpha * QPIF.",
        ),
    ] = 1.0,
    min_k: Annotated[
        int, typer.Option("--min-k", help="The released Q must be min-k-anonymous.")
    ] = 2,
    acknowledge: Annotated[
        str | None,
        typer.Option(
            "--acknowledge",
            help="COL,COL: columns of Q that give an S column away or single out records, "
            "released knowingly (a warning lists each as a leak).",
        ),
    ] = None,
    seed: Seed = None,
    sep: Sep = None,
    encoding: Encoding = None,
    as_json: Json = False,
) -> None:
    """Release Q exactly beside DP synthetic S, the candidate chosen by OptimShare's search.

    S is drawn from differentially private models: under the private selection (the
    default) the printed cost covers the released table; under the paper's argmax it
    covers the fitted models, and the argmax's choice, made on the raw records, is a
    leak no bound covers. Q is released exactly and is NOT covered by any DP
    guarantee; the printed leaks are not covered either.
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
    options: dict[str, Any] = {
        "q": q_cols,
        "s": s_cols,
        "label": label,
        "domain": spec,
        "synthesizer": synthesizer,
        "instances": instances,
        "tn": tn,
        "t_epsilon": t_epsilon,
        "p_l": p_l,
        "e_threshold": e_threshold,
        "selection": selection,
        "refine": refine,
        "alpha": alpha,
        "min_k": min_k,
    }
    with captured_warnings() as caught:
        synthesized = tuple(c for c in dict.fromkeys([*s_cols, label]) if c not in q_cols)
        frame = other_columns(
            frame,
            Treated(numeric=synthesized, categorical=synthesized, exact=tuple(q_cols)),
            keep_other=False,
            drop_other=True,
            name=data.name,
            acknowledge=acknowledge,
        )
        search_rng, order_rng = spawn(resolve_rng(seed, stacklevel=3), 2)
        try:
            result, requirements = _run(frame, options, search_rng, total)
        except (NoCandidateError, DisclosureRiskError) as exc:
            raise CheckFailedError(str(exc)) from None
        except ImportError as exc:
            raise CliUsageError(str(exc)) from None
    print_warnings(caught)
    released = shuffle_rows(result.data, order_rng)
    escaped = write_table(released, out, sep=sep, inputs=[data, domain])
    _report(result, requirements, out, escaped, as_json)


def _run(
    frame: Any, options: dict[str, Any], rng: Any, total: int
) -> tuple[ShareResult, ShareRequirements]:
    from veil.share import optimshare

    if total:
        with progress("OptimShare search", total) as advance:

            def report(step: str, done: int, _total: int) -> None:
                if done:
                    advance(step)

            return optimshare(frame, progress=report, rng=rng, **options)
    with status(f"OptimShare search ({options['selection']} selection)"):
        return optimshare(frame, rng=rng, **options)


def _report(
    result: ShareResult,
    requirements: ShareRequirements,
    out: Path,
    escaped: dict[str, int],
    as_json: bool,
) -> None:
    from veil.share import refinement_notes

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
    would = [str(c) for c in requirements.table.index[requirements.table["moved"]]]
    if requirements.refine:
        for note in refinement_notes(requirements.table, requirements.alpha):
            print_note(f"veil: refinement moved {note}")
    elif would:
        print_note(
            f"veil: Q kept as given (--no-refine); the paper's refinement would move {would} "
            "to S (see --refine)"
        )
    print_note(f"veil: Q exact (not covered by DP): {', '.join(result.q)}")
    print_note(f"veil: S synthetic: {', '.join(result.s)}")
    for leak in result.leaks:
        print_note(f"veil: leak: {leak}")
    if escaped:
        print_note(f"veil: escaped {sum(escaped.values())} cell(s) a spreadsheet would run")
