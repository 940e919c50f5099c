"""Benchmark of veil's keyed pseudonyms and dictionary attack against naive baselines.

Both sides run in the same process on the same inputs:

* pseudonyms: :func:`veil.masking.pseudonymize` (HMAC-SHA256, keyed state computed
  once, distinct values hashed once) against the naive list comprehension
  ``[hmac.new(key, v.encode(), "sha256").hexdigest() for v in values]``, on ``--rows``
  values drawn from ``--distinct`` distinct 9-digit strings; the outputs are checked
  equal (the baseline hashes ``"|" + value``, veil's message with the empty namespace);
* dictionary attack: :func:`veil.masking.hash_reversal` on ``--pins`` unkeyed SHA-256
  PINs (truncated to 16 hex, as in the seed) against the seed's dict-comprehension
  attack, both over the 10^4 PIN space.

    python benchmarks/bench_masking.py                 # 10M values, 1M distinct
    python benchmarks/bench_masking.py --rows 1e6 --distinct 1e5
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from veil.masking.audit import digits, hash_reversal
from veil.masking.keys import SecretKey
from veil.masking.pseudonym import pseudonymize


def _best(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=10e6)
    parser.add_argument("--distinct", type=float, default=1e6)
    parser.add_argument("--pins", type=float, default=1e4)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    rows, distinct, n_pins = int(args.rows), int(args.distinct), int(args.pins)

    rng = np.random.default_rng(20240601)
    pool = np.char.zfill(rng.choice(10**9, size=distinct, replace=False).astype("U9"), 9).astype(
        object
    )
    values = pd.Series(pool[rng.integers(0, distinct, rows)], dtype=object)
    key = SecretKey.generate()
    raw = key.reveal()

    table: list[tuple[str, str, float, float]] = []

    veil_s, veil_out = _best(lambda: pseudonymize(values, key), args.repeats)
    listed = values.tolist()

    def naive() -> list[str]:
        return [hmac.new(raw, ("|" + v).encode(), "sha256").hexdigest() for v in listed]

    naive_s, naive_out = _best(naive, args.repeats)
    assert veil_out.tolist() == naive_out, "veil and the baseline disagree"
    table.append(
        (
            f"HMAC pseudonyms, {rows:,} values ({distinct:,} distinct)",
            "naive hmac.new",
            naive_s,
            veil_s,
        )
    )

    unique_s, _ = _best(lambda: pseudonymize(pd.Series(pool, dtype=object), key), args.repeats)
    pool_list = pool.tolist()
    naive_unique_s, _ = _best(
        lambda: [hmac.new(raw, ("|" + v).encode(), "sha256").hexdigest() for v in pool_list],
        args.repeats,
    )
    table.append(
        (
            f"HMAC pseudonyms, {distinct:,} all-distinct values",
            "naive hmac.new",
            naive_unique_s,
            unique_s,
        )
    )

    pins = pd.Series([f"{p:04d}" for p in rng.integers(0, 10_000, n_pins)])
    hashed = pins.map(lambda p: hashlib.sha256(p.encode()).hexdigest()[:16])
    veil_attack_s, report = _best(lambda: hash_reversal(hashed, digits(4)), args.repeats)

    def seed_attack() -> pd.Series:
        rainbow = {
            hashlib.sha256(f"{p:04d}".encode()).hexdigest()[:16]: f"{p:04d}" for p in range(10_000)
        }
        return hashed.map(rainbow)

    seed_s, seed_recovered = _best(seed_attack, args.repeats)
    assert report.recovered_fraction == 1.0
    assert (seed_recovered == pins).all()
    table.append(
        (
            f"dictionary attack, {n_pins:,} SHA-256 PINs (veil tries md5/sha1/sha256)",
            "seed dict attack (sha256 only)",
            seed_s,
            veil_attack_s,
        )
    )
    keyed = pseudonymize(pins, key, length=16)
    keyed_report = hash_reversal(keyed, digits(4))

    width = max(len(r[0]) for r in table)
    print(f"{'task':<{width}}  {'peer':<32} {'peer s':>9} {'veil s':>9} {'peer/veil':>10}")
    for task, peer, peer_s, veil_s_ in table:
        print(f"{task:<{width}}  {peer:<32} {peer_s:9.3f} {veil_s_:9.3f} {peer_s / veil_s_:10.2f}")
    print()
    print("unkeyed SHA-256 PINs:", report.summary())
    print("HMAC pseudonyms of the same PINs:", keyed_report.summary())


if __name__ == "__main__":
    main()
