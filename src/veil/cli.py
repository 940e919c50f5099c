"""The ``veil`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from veil import __version__
from veil.errors import VeilError

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="veil", description=__doc__)
    parser.add_argument("--version", action="version", version=f"veil {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser(
        "demo", help="privatize the bundled Adult table with every mechanism and map locations"
    )
    demo.add_argument("--out", default="veil-demo", help="output folder (default: veil-demo)")
    demo.add_argument(
        "--epsilon",
        type=float,
        default=1.0,
        help="privacy budget per record and column (default: 1.0)",
    )
    demo.add_argument(
        "--seed",
        type=int,
        default=None,
        help="reproducible (not private) noise, for demonstrations only",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "demo":
            from veil.demo import run_demo

            run_demo(args.out, epsilon=args.epsilon, rng=args.seed)
    except VeilError as exc:
        print(f"veil: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
