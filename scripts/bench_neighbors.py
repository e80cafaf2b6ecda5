"""k-NN lists without a floor: how far the descending joins widen their gap each step, side by side.

Run from the repository root::

    python scripts/bench_neighbors.py                       # 50,000 product titles, K = 3, widen 2 vs 5/4
    python scripts/bench_neighbors.py --corpus lines:/path/to/passwords.txt --widen 2,5/4,3/2

Each factor runs :func:`allpairs.exact.topk.neighbor_lists` on the same ordered
sets (``allpairs.join(..., neighbors=K)`` without a threshold, as ``join
--neighbors K`` does), interleaved, ``--repeat`` times; it prints each run's
seconds, candidates and thresholds, checks that every factor gives the same
lists byte for byte, and the ratio of the medians against the first factor.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from fractions import Fraction

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from allpairs.corpus import Corpus  # noqa: E402
from allpairs.exact import topk  # noqa: E402
from allpairs.pipeline.stats import Stats  # noqa: E402
from allpairs.pipeline.front import shingle_corpus  # noqa: E402
from datasets import synthetic  # noqa: E402


def texts_of(spec: str) -> list[str]:
    if spec == "products":
        return [row[2] for row in synthetic.products(50000)]
    kind, _, path = spec.partition(":")
    with open(path, encoding="utf-8", errors="replace") as f:
        if kind == "lines":
            return f.read().splitlines()
        if kind == "jsonl":
            import json

            return [json.loads(line)["text"] for line in f if line.strip()]
    raise SystemExit(f"unknown corpus {spec!r}: products, lines:FILE or jsonl:FILE")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="products")
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--widen", default="2,5/4")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args(argv)
    texts = texts_of(args.corpus)
    sets, label = shingle_corpus(Corpus(ids=list(range(len(texts))), texts=texts, kind="texts"), None,
                                 normalize=True, min_shingles=1, stats=Stats(), progress=None)
    factors = [Fraction(f) for f in args.widen.split(",")]
    print(f"# {args.corpus}: {len(texts):,} texts, {label} shingles, {sets.num_sets:,} distinct sets, "
          f"K = {args.k}; load {os.getloadavg()[0]:.1f}")
    seconds: dict[Fraction, list[float]] = {f: [] for f in factors}
    reference = None
    for _ in range(args.repeat):
        for f in factors:
            topk.NEIGHBOR_WIDEN = f
            t0 = time.perf_counter()
            lists = topk.neighbor_lists(sets.indptr, sets.tokens, sets.num_tokens, sets.group_indptr,
                                        sets.group_docs, args.k)
            seconds[f].append(time.perf_counter() - t0)
            got = (lists.ptr.tobytes(), lists.doc.tobytes(), lists.overlap.tobytes())
            reference = reference or got
            assert got == reference, f"widening by {f} gave other lists"
            ts = ", ".join(str(t) for t in lists.thresholds)
            print(f"widen {f}: {seconds[f][-1]:.2f} s, {lists.candidates:,} candidates, {lists.set_pairs:,} set "
                  f"pairs; t = {ts}; load {os.getloadavg()[0]:.1f}", flush=True)
    base = statistics.median(seconds[factors[0]])
    for f in factors:
        m = statistics.median(seconds[f])
        print(f"widen {f}: median {m:.2f} s, {base / m:.2f}x against widen {factors[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
