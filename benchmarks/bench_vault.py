"""Benchmark of the token vault (:class:`veil.masking.vault.Vault`) against its targets.

Three figures, each on a fresh vault in a temporary SQLite file or on each ``--url``
(repeatable; ``sqlite`` names the temporary SQLite file), one backend after the other
in the same run:

* tokenize ``--rows`` new distinct values (prototype 2.6 s, target <= 3 s for 100,000);
* detokenize those ``--rows`` tokens (target <= 1 s);
* re-tokenize ``--known`` values already in the vault (look-up only, nothing written).

Each figure is printed beside its target with the ratio (< 1 is within the target).

    python benchmarks/bench_vault.py
    python benchmarks/bench_vault.py --url sqlite \
        --url 'postgresql+psycopg://postgres@/db?host=SOCKET_DIR&port=5432'
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import sqlalchemy as sa

from veil.masking.keys import SecretKey
from veil.masking.vault import Vault

_TARGETS = {"tokenize new": 3.0, "detokenize": 1.0}
_PROTOTYPE = {"tokenize new": 2.6}


def _fresh(url: str) -> None:
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE IF EXISTS veil_tokens"))
        conn.execute(sa.text("DROP TABLE IF EXISTS veil_vault_meta"))
    engine.dispose()


def run(url: str, rows: int, known: int) -> dict[str, float]:
    """Seconds for each of the three operations on a vault at ``url`` (emptied first)."""
    _fresh(url)
    key = SecretKey.generate()
    values = [f"person-{i:09d}@example.com" for i in range(rows)]
    figures: dict[str, float] = {}
    with Vault(url, key) as vault:
        start = time.perf_counter()
        tokens = vault.tokenize(values, "email")
        figures["tokenize new"] = time.perf_counter() - start
        start = time.perf_counter()
        back = vault.detokenize(tokens, "email")
        figures["detokenize"] = time.perf_counter() - start
        start = time.perf_counter()
        again = vault.tokenize(values[:known], "email")
        figures[f"re-tokenize {known:,} known"] = time.perf_counter() - start
    if list(back) != values or list(again) != list(tokens[:known]):
        raise SystemExit("round trip failed")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000, help="new values to tokenize")
    parser.add_argument("--known", type=int, default=1_000, help="known values to re-tokenize")
    parser.add_argument(
        "--url",
        action="append",
        help="database URL, repeatable; 'sqlite' is a temporary SQLite file (the default)",
    )
    args = parser.parse_args()
    for url in args.url or ["sqlite"]:
        with tempfile.TemporaryDirectory() as tmp:
            if url == "sqlite":
                url = f"sqlite:///{Path(tmp) / 'vault.db'}"
            backend = sa.make_url(url).get_backend_name()
            figures = run(url, args.rows, args.known)
        print(f"vault on {backend}, {args.rows:,} values")
        print(f"{'operation':<28}{'veil (s)':>10}{'prototype':>11}{'target':>9}{'ratio':>8}")
        for name, seconds in figures.items():
            target = _TARGETS.get(name)
            proto = _PROTOTYPE.get(name)
            print(
                f"{name:<28}{seconds:>10.3f}"
                f"{(f'{proto:.1f}' if proto else '-'):>11}"
                f"{(f'{target:.1f}' if target else '-'):>9}"
                f"{(f'{seconds / target:.2f}' if target else '-'):>8}"
            )


if __name__ == "__main__":
    main()
