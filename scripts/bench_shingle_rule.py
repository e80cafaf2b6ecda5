"""Which shingle finds relisted product titles: recall and precision of each kind against planted duplicates.

Run from the repository root::

    python scripts/bench_shingle_rule.py                 # 50,000 titles, 50% of the copies with a typo
    python scripts/bench_shingle_rule.py --n 5000 --typos 0 --thresholds 0.6

Corpus: ``datasets.synthetic.products(n, typos=...)``: titles of 3 to 12 words
(median 7), 20% of them an earlier title relisted with other case,
punctuation or a word dropped, and a share ``typos`` of those copies with one
typing slip as well. The truth: two rows are duplicates when they list the
same product (one planted the other, or both were planted from one row).

For each shingle and threshold, ``allpairs.join(titles, t, shingle=...)``
(exact, Jaccard, the default normalisation): recall is the share of the
duplicate pairs found, precision the share of the pairs found that are
duplicates (titles the generator happened to make twice count against it), F1
their harmonic mean.
This is the measurement behind the default-shingle rule
(:data:`allpairs.shingles` ``SHORT_WORDS`` / ``LONG_WORDS``); the table is in
docs/benchmarks.md.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import allpairs  # noqa: E402
from datasets import synthetic  # noqa: E402


def duplicate_pairs(n: int, planted: list[tuple[int, int]]) -> set[tuple[int, int]]:
    """Every pair of rows that list the same product: the planted (source, copy) edges closed transitively."""
    root = list(range(n))
    for source, copy in planted:  # a copy's source is always an earlier row: its root is final
        root[copy] = root[source]
    groups: dict[int, list[int]] = {}
    for i, r in enumerate(root):
        groups.setdefault(r, []).append(i)
    return {(a, b) for g in groups.values() if len(g) > 1 for k, a in enumerate(g) for b in g[k + 1:]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=50000)
    ap.add_argument("--typos", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shingles", default="word:1,word:2,char:2,char:3,char:4,char:5")
    ap.add_argument("--thresholds", default="0.5,0.6,0.7,0.8")
    args = ap.parse_args(argv)
    rows = synthetic.products(args.n, seed=args.seed, typos=args.typos)
    planted = synthetic.products_planted(args.n, seed=args.seed, typos=args.typos)
    titles = [r[2] for r in rows]
    truth = duplicate_pairs(len(titles), planted)
    print(f"# {len(titles):,} titles, {len(planted):,} relisted ({args.typos:.0%} of them with a typo), "
          f"{len(truth):,} duplicate pairs; load {os.getloadavg()[0]:.1f}")
    print("| shingle | t | recall | precision | F1 | pairs | seconds |")
    print("|---|---|---|---|---|---|---|")
    for t in args.thresholds.split(","):
        for spec in args.shingles.split(","):
            t0 = time.perf_counter()
            res = allpairs.join(titles, t, shingle=spec)
            seconds = time.perf_counter() - t0
            found = {(p[0], p[1]) for p in res.pairs}
            hit = len(found & truth)
            recall, precision = hit / len(truth), (hit / len(found) if found else 1.0)
            f1 = 2 * recall * precision / (recall + precision) if hit else 0.0
            print(f"| {spec} | {t} | {recall:.3f} | {precision:.3f} | {f1:.3f} | {len(found):,} | {seconds:.1f} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
