"""Micro-benchmark of the LSH kernels: MinHash signatures and banding on a seeded corpus.

    python scripts/bench_lsh_kernels.py [--docs 20000] [--num-perm 128] [--repeat 5]

Corpus: ``--docs`` sets of 150..250 random uint64 keys (about 200), of which one
in ten is a near-copy of an earlier set (up to 30% of its keys replaced), so
that banding has real buckets to expand. Prints signatures/s with one and two
threads and rows/s for the 42 × 3 banding (t = 0.5, K = 128 by the recall-first
rule). Installs nothing: if ``rensa`` and ``datasketch`` are importable they
are timed on the same sets beside it (their string APIs get the keys as
decimal strings, made before the clock starts), and the ratios printed.
Times are the best of ``--repeat`` runs, to keep out other loads of the machine.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from allpairs.lsh import candidates, choose_params, signatures


def corpus(docs: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR of ``docs`` sets of about 200 distinct random keys, a tenth of them near-copies."""
    rng = np.random.default_rng(seed)
    sets = []
    for i in range(docs):
        if i > 10 and rng.random() < 0.1:
            src = sets[rng.integers(0, i)].copy()
            swap = rng.random(src.size) < rng.uniform(0, 0.3)
            src[swap] = rng.integers(0, 2**64, int(swap.sum()), dtype=np.uint64)
            sets.append(src)
        else:
            sets.append(rng.integers(0, 2**64, int(rng.integers(150, 251)), dtype=np.uint64))
    indptr = np.concatenate(([0], np.cumsum([s.size for s in sets]))).astype(np.int64)
    return indptr, np.concatenate(sets)


def best_time(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=20_000)
    ap.add_argument("--num-perm", type=int, default=128)
    ap.add_argument("--threshold", type=float, default=0.5)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=20260601)
    args = ap.parse_args()

    indptr, keys = corpus(args.docs, args.seed)
    n, K = args.docs, args.num_perm
    bands, rows = choose_params(args.threshold, K)
    print(f"corpus: {n} sets, {keys.size / n:.0f} keys per set on average, K = {K}, "
          f"banding {bands} × {rows} (t = {args.threshold}); best of {args.repeat}")
    signatures(indptr[:3], keys[: indptr[2]], K)  # compile (or load the cached kernels) off the clock
    candidates(signatures(indptr[:51], keys[: indptr[50]], K), bands, rows)

    rates = {}
    for jobs in (1, 2):
        t = best_time(lambda: signatures(indptr, keys, K, jobs=jobs), args.repeat)
        rates[f"allpairs jobs={jobs}"] = n / t
        print(f"  allpairs signatures, jobs={jobs}: {n / t:12,.0f} signatures/s")
    sig = signatures(indptr, keys, K)
    for jobs in (1, 2):
        t = best_time(lambda: candidates(sig, bands, rows, jobs=jobs), args.repeat)
        c = candidates(sig, bands, rows, jobs=jobs)
        print(f"  allpairs banding {bands} × {rows}, jobs={jobs}: {n / t:12,.0f} rows/s "
              f"({len(c)} candidates, {c.band_pairs} before merging bands, {len(c) / t:,.0f} candidates/s)")

    peers(indptr, keys, sig, K, args, rates)


def peers(indptr, keys, sig, K, args, rates) -> None:
    """rensa and datasketch on the same sets, if they are installed."""
    n = indptr.shape[0] - 1
    strings = None
    ours = max(rates.values())
    try:
        import rensa
    except ImportError:
        print("  rensa: not installed (pip install rensa)")
    else:
        strings = [[str(k) for k in keys[indptr[i]:indptr[i + 1]].tolist()] for i in range(n)]

        def per_doc():
            for s in strings:
                m = rensa.RMinHash(num_perm=K, seed=1)
                m.update(s)
                m.digest()

        t = best_time(per_doc, max(1, args.repeat // 2))
        print(f"  rensa RMinHash per document (strings): {n / t:12,.0f} signatures/s "
              f"-> allpairs best is {ours / (n / t):.1f}×")
        if hasattr(rensa.RMinHash, "digest_matrix_from_flat_token_hashes"):
            offsets = indptr.astype(np.uint64)
            t = best_time(lambda: rensa.RMinHash.digest_matrix_from_flat_token_hashes(keys, offsets, K, 1),
                          args.repeat)
            print(f"  rensa flat pre-hashed batch:         {n / t:12,.0f} signatures/s "
                  f"-> allpairs jobs=1 {rates['allpairs jobs=1'] / (n / t):.2f}×, "
                  f"jobs=2 {rates['allpairs jobs=2'] / (n / t):.2f}×")
        # rensa's LSH wants K divisible by the band count: compare at 32 × 4 on both sides.
        hashes = [rensa.RMinHash(num_perm=K, seed=1) for _ in range(n)]
        for m, s in zip(hashes, strings):
            m.update(s)

        def rensa_lsh():
            lsh = rensa.RMinHashLSH(args.threshold, K, 32)
            lsh.insert_many(hashes)
            return lsh.query_all(hashes)

        t_r = best_time(rensa_lsh, args.repeat)
        t_a = best_time(lambda: candidates(sig, 32, 4), args.repeat)
        print(f"  banding 32 × 4: allpairs {n / t_a:,.0f} rows/s, rensa RMinHashLSH insert+query "
              f"{n / t_r:,.0f} rows/s -> {t_r / t_a:.1f}×")
    try:
        import datasketch
    except ImportError:
        print("  datasketch: not installed (pip install datasketch)")
        return
    sub = min(n, 1000)
    data = [[str(k).encode() for k in keys[indptr[i]:indptr[i + 1]].tolist()] for i in range(sub)]

    def ds():
        return datasketch.MinHash.bulk(data, num_perm=K, seed=1)

    t = best_time(ds, 1)
    print(f"  datasketch MinHash.bulk on {sub} sets: {sub / t:12,.0f} signatures/s "
          f"-> allpairs best is {ours / (sub / t):.0f}×")


if __name__ == "__main__":
    main()
