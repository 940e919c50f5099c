"""PII scan of 100,000 short texts: veil's scan_pii (both engines) against Presidio's own
per-text ``AnalyzerEngine.analyze`` loop, in the same process.

Presidio's out-of-the-box ``AnalyzerEngine()`` downloads ``en_core_web_lg`` and cannot
start offline, so the peer is ``AnalyzerEngine.analyze`` called once per text on the same
offline analyzer veil builds (the five pattern recognizers on a blank spaCy pipeline). The
peer runs on the first ``--peer-texts`` texts and is extrapolated linearly to all texts;
the output says so.

On the peer's texts the script also checks that veil's batched Presidio scan returns
exactly Presidio's findings (entity, span, score per text), and splits Presidio's time
between the texts veil does not analyse (no digit, "@" or ":": no recognizer can match
them) and the others, with the phone recognizer's share of those: the part of the loop
that batching cannot remove.

    python benchmarks/bench_pii.py                 # 100,000 texts, peer on 1,000
    python benchmarks/bench_pii.py --texts 20000 --peer-texts 2000
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
import pandas as pd

from veil.masking.pii import ENTITIES, _possible, _presidio_analyzer, _presidio_results, scan_pii

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


def _spans(found: list[list[Any]]) -> list[list[tuple[Any, ...]]]:
    return [sorted((r.entity_type, r.start, r.end, r.score) for r in f) for f in found]


def _breakdown(analyzer: Any, peer: list[str], peer_found: list[list[Any]], peer_s: float) -> None:
    """Same findings as the peer, and where the peer's time goes."""
    batched = _presidio_results(pd.Series(peer, dtype=object), ENTITIES, "en")
    same = _spans(batched) == _spans(peer_found)
    verdict = "identical" if same else "DIFFERENT"
    print(f"veil's batched Presidio findings on these {len(peer):,} texts: {verdict}")
    needed = _possible(pd.Series(peer, dtype=object), ENTITIES).any(axis=1)
    analysed = [t for t, k in zip(peer, needed, strict=True) if k]
    skipped = [t for t, k in zip(peer, needed, strict=True) if not k]
    times = {}
    for name, group in (("analysed", analysed), ("skipped", skipped)):
        t0 = time.perf_counter()
        for text in group:
            analyzer.analyze(text, language="en")
        times[name] = time.perf_counter() - t0
    phone = next(
        r
        for r in analyzer.registry.get_recognizers(language="en", all_fields=True)
        if r.supported_entities == ["PHONE_NUMBER"]
    )
    t0 = time.perf_counter()
    for text in analysed:
        phone.analyze(text=text, entities=["PHONE_NUMBER"])
    phone_s = time.perf_counter() - t0
    total = times["analysed"] + times["skipped"]
    print(
        f"Presidio's loop again, split: {len(skipped):,} texts no recognizer can match "
        f"{times['skipped']:.2f} s ({times['skipped'] / total:.0%}), {len(analysed):,} "
        f"texts veil analyses {times['analysed']:.2f} s ({times['analysed'] / total:.0%}); "
        f"on those the phone recognizer alone (phonenumbers' matcher, 8 regions) takes "
        f"{phone_s:.2f} s ({phone_s / total:.0%} of the loop). Skipping texts and "
        f"batching spaCy cannot go below the analysed texts' share: at most "
        f"{total / times['analysed']:.1f}x on this mix (first loop {peer_s:.2f} s)."
    )


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
    peer_found = [analyzer.analyze(text, language="en") for text in peer]
    peer_s = time.perf_counter() - t0
    peer_full = peer_s * args.texts / len(peer)
    print(
        f"Presidio AnalyzerEngine.analyze loop: {peer_s:.2f} s for {len(peer):,} texts "
        f"({peer_s / len(peer) * 1000:.2f} s per 1,000); extrapolated to {args.texts:,}: "
        f"{peer_full:.1f} s"
    )
    _breakdown(analyzer, peer, peer_found, peer_s)

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
