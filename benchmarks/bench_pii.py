"""PII scan of 100,000 short texts: veil's scan_pii (both engines) against Presidio's own
per-text ``AnalyzerEngine.analyze`` loop, in the same process.

Presidio's out-of-the-box ``AnalyzerEngine()`` downloads ``en_core_web_lg`` and cannot
start offline, so the peer is ``AnalyzerEngine.analyze`` called once per text on the same
offline analyzer veil builds (the five pattern recognizers on a blank spaCy pipeline). The
peer runs on the first ``--peer-texts`` texts and is extrapolated linearly to all texts;
the output says so.

    python benchmarks/bench_pii.py                 # 100,000 texts, peer on 1,000
    python benchmarks/bench_pii.py --texts 20000 --peer-texts 2000
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from veil.masking.pii import _presidio_analyzer, scan_pii

_PII = [
    "mail {u}@example.com",
    "call +1 415-555-{n:04d}",
    "card 4111 1111 1111 1111",
    "iban GB82 WEST 1234 5698 7654 32",
    "from 10.0.{a}.{b}",
]
_WORDS = [
    "order",
    "shipped",
    "late",
    "please",
    "refund",
    "customer",
    "asked",
    "about",
    "the",
    "invoice",
    "again",
]


def make_texts(n: int, share_pii: float, seed: int) -> pd.Series:
    """``n`` short texts (5-10 words); ``share_pii`` of them carry one PII item."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(5, 11, size=n)
    words = rng.choice(_WORDS, size=(n, 10))
    base = [" ".join(row[:k]) for row, k in zip(words, lengths, strict=True)]
    kinds = rng.integers(0, len(_PII), size=n)
    has = rng.random(n) < share_pii
    nums = rng.integers(0, 10_000, size=n)
    texts = [
        f"{b} {_PII[k].format(u=f'user{m}', n=m, a=m % 256, b=m // 256 % 256)}" if h else b
        for b, k, h, m in zip(base, kinds, has, nums, strict=True)
    ]
    return pd.Series(texts, dtype=object)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=100_000)
    parser.add_argument("--peer-texts", type=int, default=1_000)
    parser.add_argument("--share-pii", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=12345)
    args = parser.parse_args()

    texts = make_texts(args.texts, args.share_pii, args.seed)
    df = pd.DataFrame({"note": texts})
    n_distinct = texts.nunique()
    print(f"{args.texts:,} texts, {n_distinct:,} distinct, {args.share_pii:.0%} with PII")

    t0 = time.perf_counter()
    analyzer = _presidio_analyzer("en")
    print(f"offline Presidio analyzer built in {time.perf_counter() - t0:.2f} s (once)")

    peer = texts.iloc[: args.peer_texts].tolist()
    t0 = time.perf_counter()
    for text in peer:
        analyzer.analyze(text, language="en")
    peer_s = time.perf_counter() - t0
    peer_full = peer_s * args.texts / len(peer)
    print(
        f"Presidio AnalyzerEngine.analyze loop: {peer_s:.2f} s for {len(peer):,} texts "
        f"({peer_s / len(peer) * 1000:.2f} s per 1,000); extrapolated to {args.texts:,}: "
        f"{peer_full:.1f} s"
    )

    rows = []
    for engine in ("presidio", "patterns"):
        t0 = time.perf_counter()
        report = scan_pii(df, engine=engine)  # type: ignore[arg-type]
        elapsed = time.perf_counter() - t0
        rows.append((engine, elapsed, report))
        print(
            f"veil scan_pii(engine={engine!r}): {elapsed:.2f} s for {args.texts:,} texts "
            f"({elapsed / args.texts * 1000:.3f} s per 1,000); "
            f"{peer_full / elapsed:.1f}x faster than the extrapolated peer"
        )
    for engine, _, report in rows:
        print(f"\n{engine}:\n{report.to_frame().to_string()}")


if __name__ == "__main__":
    main()
