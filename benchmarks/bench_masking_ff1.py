"""Time veil's FF1 against libffx used directly, in the same process on the same inputs.

    python benchmarks/bench_masking_ff1.py                 # 100,000 16-digit strings
    python benchmarks/bench_masking_ff1.py --rows 1e6 --repeats 1

veil wraps libffx, so the ratio is the cost of veil's validation and batching layer.
Each figure is the best wall time of ``--repeats`` runs (``time.perf_counter``).
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from veil.masking.ff1 import FF1

KEY = bytes.fromhex("2b7e151628aed2a6abf7158809cf4f3c")
TWEAK = b"col:card_number"
DIGITS = "0123456789"


def best_of(repeats: int, fn: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=100_000, help="strings (default 1e5)")
    parser.add_argument("--length", type=int, default=16, help="digits per string")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs; best is kept")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rows = int(args.rows)
    rnd = random.Random(args.seed)
    values = ["".join(rnd.choices(DIGITS, k=args.length)) for _ in range(rows)]

    veil_ff1 = FF1(KEY, DIGITS)
    encrypted: list[str] = veil_ff1.encrypt_many(values, TWEAK)
    assert veil_ff1.decrypt_many(encrypted, TWEAK) == values

    results: dict[str, float] = {
        "veil FF1.encrypt_many": best_of(
            args.repeats, lambda: veil_ff1.encrypt_many(values, TWEAK)
        ),
        "veil FF1.encrypt (loop)": best_of(
            args.repeats, lambda: [veil_ff1.encrypt(v, TWEAK) for v in values]
        ),
        "veil FF1.decrypt_many": best_of(
            args.repeats, lambda: veil_ff1.decrypt_many(encrypted, TWEAK)
        ),
    }

    try:
        import ffx  # type: ignore[import-untyped]
    except ImportError:
        ffx = None
    if ffx is not None:
        peer = ffx.FF1(KEY, alphabet=DIGITS)
        assert [peer.encrypt(v, tweak=TWEAK) for v in values[:100]] == encrypted[:100]
        results["libffx FF1.encrypt (loop)"] = best_of(
            args.repeats, lambda: [peer.encrypt(v, tweak=TWEAK) for v in values]
        )

    print(f"FF1, {rows:,} strings of {args.length} digits, AES-128, best of {args.repeats}")
    width = max(map(len, results))
    for name, seconds in results.items():
        print(f"  {name:<{width}}  {seconds:7.3f} s  {rows / seconds:12,.0f} strings/s")
    peer_time = results.get("libffx FF1.encrypt (loop)")
    if peer_time is not None:
        ratio = results["veil FF1.encrypt_many"] / peer_time
        print(f"  ratio veil encrypt_many / libffx: {ratio:.2f}")
    else:
        print("  libffx not importable: no comparison")


if __name__ == "__main__":
    main()
