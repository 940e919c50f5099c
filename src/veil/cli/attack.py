"""``veil attack``: what an attacker can still do with a release, measured.

With a plan only, the plan runs in memory on a random part of the records (a shadow
release, never written) and :mod:`veil.attacks` attacks it with the rest as the
held-out control (:func:`veil.release.attack.attack_release`). With a release file too,
that release is attacked as it is (:func:`veil.release.attack.attack_published`): it
was made from every record, so the attacks that need a control or each row's record
are skipped, with the reason. The results are measured on the raw records: printed for
the custodian, or written with ``--out`` as a confidential JSON file (``0o600``, never
in a release folder).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from veil.cli.console import captured_warnings, emit_json, print_table, print_text, print_warnings
from veil.cli.errors import CliUsageError, errors_about, reporting_errors
from veil.cli.files import read_table, split_list
from veil.cli.options import Json, Seed, Sep

__all__ = ["attack"]


def _levels(release: Path) -> dict[str, int]:
    """The anonymization's levels from the manifest beside ``release``, if there is one."""
    manifest = release.parent / "manifest.json"
    if not manifest.is_file():
        return {}
    with errors_about(os.fspath(manifest)):
        recorded = json.loads(manifest.read_text(encoding="utf-8"))
    section = recorded.get("anonymization") if isinstance(recorded, dict) else None
    levels = section.get("levels") if isinstance(section, dict) else None
    return {str(k): int(v) for k, v in levels.items()} if isinstance(levels, dict) else {}


def _rows(battery: dict[str, Any]) -> list[list[Any]]:
    def ci(pair: list[float]) -> str:
        return f"[{pair[0]:.3f}, {pair[1]:.3f}]"

    return [
        [
            r["attack"],
            r["variant"],
            f"{r['success_rate']:.3f}",
            f"{r['baseline']:.3f} ({r['baseline_kind']})",
            f"{r['advantage']:.3f} {ci(r['advantage_ci'])}",
            "yes" if r["finding"] else "no",
            ", ".join(r["columns"]) or "-",
        ]
        for r in battery["results"]
    ]


@reporting_errors
def attack(
    raw: Annotated[Path, typer.Argument(help="The raw records the release is made from.")],
    release: Annotated[
        Path | None,
        typer.Argument(
            help="A published release to attack as it is (default: a shadow release of "
            "the plan, made in memory from part of RAW, the rest held out)."
        ),
    ] = None,
    plan: Annotated[
        Path | None, typer.Option("--plan", help="The release plan (required).")
    ] = None,
    attacks: Annotated[
        str | None,
        typer.Option(
            "--attacks",
            help="Comma-separated: singling_out, linkability, inference, location, "
            "membership, intersection (default: the plan's, else every applicable one).",
        ),
    ] = None,
    other: Annotated[
        Path | None,
        typer.Option("--other", help="Another release of the same records (intersection)."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write the results as a confidential .json file (0600)."),
    ] = None,
    seed: Seed = None,
    sep: Sep = None,
    as_json: Json = False,
) -> None:
    """Attack a release: singling out, linkability, inference, location, membership."""
    from veil.atomic import write_text_atomic
    from veil.attacks import ATTACKS
    from veil.gate import check_confidential_place
    from veil.release import load_plan
    from veil.release.allocate import allocate
    from veil.release.attack import attack_published, attack_release

    if plan is None:
        raise CliUsageError("--plan: required: the release plan the release is made with")
    names = None if attacks is None else split_list(attacks, "--attacks")
    unknown = [a for a in names or [] if a not in ATTACKS]
    if unknown:
        raise CliUsageError(
            f"--attacks: unknown {', '.join(map(repr, unknown))}; allowed: {', '.join(ATTACKS)}"
        )
    if out is not None:
        if out.suffix.lower() != ".json":
            raise CliUsageError(f"--out: must end in .json, got {os.fspath(out)!r}")
        check_confidential_place(out, "--out")
    with errors_about(os.fspath(plan)):
        allocated = allocate(load_plan(plan))
    records = read_table(raw, sep=sep, parameter="RAW")
    with captured_warnings() as caught:
        if release is None:
            if other is not None:
                raise CliUsageError("--other: needs RELEASE (two published releases, joined)")
            result = attack_release(allocated, records, attacks=names, rng=seed)
        else:
            released = read_table(release, sep=sep, parameter="RELEASE")
            second = None if other is None else read_table(other, sep=sep, parameter="--other")
            result = attack_published(
                allocated, records, released, levels=_levels(release), other=second,
                attacks=names, rng=seed,
            )  # fmt: skip
    battery = result.to_dict()
    if out is not None:
        write_text_atomic(out, json.dumps(battery, indent=2) + "\n", confidential=True)
    print_warnings(caught)
    if as_json:
        emit_json(battery)
        return
    print_table(
        "Attacks (measured on the raw records: confidential)",
        ["attack", "variant", "success", "baseline", "advantage [95 % CI]", "finding", "columns"],
        _rows(battery),
    )
    for r in result.findings():
        print_text(f"finding: {r.attack} ({r.variant}): {r.suggestion}")
    for name, why in battery["skipped"].items():
        print_text(f"skipped {name}: {why}")
