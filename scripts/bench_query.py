"""Benchmark the saved search index: build, load, query latency beside SetSimilaritySearch and datasketch; dedup.

Run from the repository root::

    python scripts/bench_query.py                 # 1,000,000 sets: about 15 minutes on a quiet 2-core machine
    python scripts/bench_query.py --quick         # 100,000 sets, peers on 20,000
    python scripts/bench_query.py --skip-peers    # allpairs alone

Corpus: ``datasets.synthetic.zipf_sets(n, avg_size=15, vocabulary=V, seed)``
(sizes 5..25, 30% planted near-duplicates, Zipf-skewed tokens; V = 1,000,000
by default, ``--vocabulary`` changes it). Queries: ``--queries`` sets drawn
from the corpus with a seeded ``random.Random`` (each finds at least itself).

- allpairs: ``SearchIndex.build`` over the whole corpus at the threshold
  (tokens hashed, ranked and indexed), ``save`` to a file, ``load`` (median of
  5; memory-mapped, SHA-256 checked), then each query timed alone through the
  public ``index.query([tokens])`` (hashing and ranking included), and all of
  them in one batch call.
- Peers on the first ``--peer-n`` sets (pure Python peers would take an hour on
  the full corpus), queries drawn from those: SetSimilaritySearch 1.0.1's
  ``SearchIndex`` (build, ``query``), allpairs.compat's drop-in of it (same
  answers, checked), datasketch 2.0's ``MinHashLSH`` (num_perm 128, the same
  threshold; build includes the MinHash of every set; the latency is
  ``lsh.query`` alone, the query's MinHash not counted, in the peer's favour;
  its recall against the exact answer is printed), and allpairs again on that
  subset.
- dedup: ``allpairs.index.dedup`` of the whole corpus at ``--dedup-threshold``
  in a fresh process: documents per second end to end (hashing and ordering
  included) and for the compiled loop alone, and the process's peak memory.

Latencies are per query in milliseconds: median, 90th and 99th percentile.
The machine is usually shared: compare ratios, not absolute times, and expect
the tail (p99) to carry the scheduler's pauses. Standard output carries only
the table; progress goes to standard error. Exit status 1 if a check failed.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # this repo's `datasets`, not the PyPI package of that name
sys.path.insert(1, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from _peers import ensure_installed, exit_status, log  # noqa: E402
from datasets import synthetic  # noqa: E402


def corpus(args) -> list[list[str]]:
    log(f"[corpus] zipf_sets(n={args.n:,}, avg_size=15, vocabulary={args.vocabulary:,}, seed={args.seed}) ...")
    t0 = time.perf_counter()
    sets = synthetic.zipf_sets(n=args.n, avg_size=15, vocabulary=args.vocabulary, seed=args.seed)
    log(f"[corpus] {time.perf_counter() - t0:.1f} s")
    return [[str(x) for x in s] for s in sets]


def sample(n: int, k: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    return [rng.randrange(n) for _ in range(k)]


def latencies(call, queries) -> np.ndarray:
    """Milliseconds of each call, garbage collection off while timing."""
    call(queries[0])
    out = np.empty(len(queries))
    gc.disable()
    try:
        for k, q in enumerate(queries):
            t0 = time.perf_counter()
            call(q)
            out[k] = time.perf_counter() - t0
    finally:
        gc.enable()
    return out * 1e3


def pct(ms: np.ndarray) -> dict:
    return {"median_ms": float(np.median(ms)), "p90_ms": float(np.percentile(ms, 90)),
            "p99_ms": float(np.percentile(ms, 99))}


def bench_allpairs(sets, queries_at, t, tmp: Path, label: str, problems: list) -> dict:
    from allpairs.index import SearchIndex

    n = len(sets)
    log(f"[allpairs {label}] build over {n:,} sets at t = {t} ...")
    t0 = time.perf_counter()
    index = SearchIndex.build(sets, t)
    build = time.perf_counter() - t0
    path = tmp / f"{label}.idx"
    t0 = time.perf_counter()
    size = index.save(path)
    save = time.perf_counter() - t0
    loads = []
    for _ in range(5):
        t0 = time.perf_counter()
        loaded = SearchIndex.load(path)
        loads.append(time.perf_counter() - t0)
    del index
    queries = [sets[i] for i in queries_at]
    log(f"[allpairs {label}] {len(queries):,} queries one at a time ...")
    ms = latencies(lambda q: loaded.query([q]), queries)
    t0 = time.perf_counter()
    batch = loaded.query(queries)
    batch_s = time.perf_counter() - t0
    found = {(q, int(loaded.ids[d])) for q, d in zip(batch.query.tolist(), batch.indexed.tolist())}
    missing = sum((k, i) not in found for k, i in enumerate(queries_at))
    if missing:
        problems.append(f"allpairs {label}: {missing} queries did not find themselves")
    return {"who": f"allpairs ({label})", "n": n, "build_s": build, "save_s": save, "bytes": size,
            "load_s": float(np.median(loads)), **pct(ms), "batch_s": batch_s, "matches": len(batch),
            "answers": {k: sorted(int(loaded.ids[d]) for d in batch.indexed[batch.query == k].tolist())
                        for k in range(len(queries))}}


def bench_sss(sets, queries_at, t, module, label) -> dict:
    log(f"[{label}] build over {len(sets):,} sets ...")
    t0 = time.perf_counter()
    index = module.SearchIndex(sets, similarity_func_name="jaccard", similarity_threshold=t)
    build = time.perf_counter() - t0
    queries = [sets[i] for i in queries_at]
    log(f"[{label}] {len(queries):,} queries ...")
    ms = latencies(index.query, queries)
    answers = {k: sorted(int(i) for i, _ in index.query(q)) for k, q in enumerate(queries)}
    return {"who": label, "n": len(sets), "build_s": build, **pct(ms), "answers": answers,
            "matches": sum(map(len, answers.values()))}


def bench_datasketch(sets, queries_at, t, exact: dict) -> dict:
    datasketch = ensure_installed("datasketch", "datasketch")
    log(f"[datasketch] MinHash (num_perm 128) and MinHashLSH(threshold={t}) over {len(sets):,} sets ...")
    t0 = time.perf_counter()
    hashes = datasketch.MinHash.bulk([[s.encode() for s in x] for x in sets], num_perm=128)
    lsh = datasketch.MinHashLSH(threshold=t, num_perm=128)
    with lsh.insertion_session() as session:
        for k, m in enumerate(hashes):
            session.insert(k, m)
    build = time.perf_counter() - t0
    queries = [hashes[i] for i in queries_at]
    log(f"[datasketch] {len(queries):,} queries ...")
    ms = latencies(lsh.query, queries)
    answers = {k: sorted(lsh.query(q)) for k, q in enumerate(queries)}
    true = sum(len(set(answers[k]) & set(v)) for k, v in exact.items())
    total = sum(len(v) for v in exact.values())
    return {"who": "datasketch MinHashLSH", "n": len(sets), "build_s": build, **pct(ms),
            "matches": sum(map(len, answers.values())), "recall": true / total if total else 1.0}


def dedup_child(args) -> int:
    """Runs in a fresh process so that its peak memory is its own."""
    from allpairs.index import dedup
    from allpairs.pipeline import peak_memory

    dedup([["a", "b"], ["a", "b", "c"]], args.dedup_threshold)  # load (or compile) the kernels first
    sets = corpus(args)
    before = peak_memory()
    t0 = time.perf_counter()
    res = dedup(sets, args.dedup_threshold)
    total = time.perf_counter() - t0
    print(json.dumps({"n": len(sets), "kept": len(res.kept), "seconds": total, "loop_s": res.stats.seconds["dedup"],
                      "stages": res.stats.seconds, "peak_bytes": res.stats.peak_memory,
                      "corpus_peak_bytes": before}))
    return 0


def bench_dedup(args) -> dict:
    cmd = [sys.executable, __file__, "--dedup-child", "--n", str(args.n), "--vocabulary", str(args.vocabulary),
           "--seed", str(args.seed), "--dedup-threshold", str(args.dedup_threshold)]
    log(f"[dedup] allpairs.index.dedup of {args.n:,} sets at t = {args.dedup_threshold} in a fresh process ...")
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout)


def fmt(x, spec=".3f"):
    return "-" if x is None else format(x, spec)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="corpus size (default 1,000,000)")
    parser.add_argument("--vocabulary", type=int, default=1_000_000, help="distinct tokens (default 1,000,000)")
    parser.add_argument("--queries", type=int, default=10_000, help="queries sampled from the corpus")
    parser.add_argument("--threshold", type=float, default=0.5, help="Jaccard threshold of index and queries")
    parser.add_argument("--peer-n", type=int, default=100_000, help="corpus size for the pure-Python peers")
    parser.add_argument("--dedup-threshold", type=float, default=0.8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="100,000 sets, peers on 20,000, 2,000 queries")
    parser.add_argument("--skip-peers", action="store_true")
    parser.add_argument("--skip-dedup", action="store_true")
    parser.add_argument("--dedup-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.peer_n, args.queries = 100_000, 20_000, 2_000
    if args.dedup_child:
        return dedup_child(args)
    problems: list[str] = []
    rows = []
    sets = corpus(args)
    t = args.threshold
    with tempfile.TemporaryDirectory(prefix="allpairs-bench-query-") as tmp:
        rows.append(bench_allpairs(sets, sample(len(sets), args.queries, args.seed), t, Path(tmp), "full", problems))
        if not args.skip_peers:
            peer_sets = sets[: args.peer_n]
            at = sample(len(peer_sets), args.queries, args.seed + 1)
            ours = bench_allpairs(peer_sets, at, t, Path(tmp), "peer corpus", problems)
            rows.append(ours)
            from allpairs import compat

            sss = ensure_installed("SetSimilaritySearch", "SetSimilaritySearch")
            for module, label in ((compat, "allpairs.compat.SearchIndex"), (sss, "SetSimilaritySearch.SearchIndex")):
                row = bench_sss(peer_sets, at, t, module, label)
                if row["answers"] != ours["answers"]:
                    problems.append(f"{label}: answers differ from allpairs' on the peer corpus")
                rows.append(row)
            rows.append(bench_datasketch(peer_sets, at, t, ours["answers"]))
    dd = None if args.skip_dedup else bench_dedup(args)

    print(f"## Queries: {args.queries:,} sampled from zipf_sets(vocabulary={args.vocabulary:,}, seed={args.seed}), "
          f"Jaccard t = {t}\n")
    print("| index | sets | build s | load s | file MiB | median ms | p90 ms | p99 ms | batch s | matches | recall |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        mib = r["bytes"] / 2**20 if "bytes" in r else None
        print(f"| {r['who']} | {r['n']:,} | {r['build_s']:.1f} | {fmt(r.get('load_s'))} | {fmt(mib, '.0f')} | "
              f"{r['median_ms']:.3f} | {r['p90_ms']:.3f} | {r['p99_ms']:.3f} | {fmt(r.get('batch_s'), '.2f')} | "
              f"{r['matches']:,} | {fmt(r.get('recall'))} |")
    by = {r["who"]: r for r in rows}
    if "SetSimilaritySearch.SearchIndex" in by:
        ours = by["allpairs (peer corpus)"]
        for peer in ("SetSimilaritySearch.SearchIndex", "datasketch MinHashLSH"):
            p = by[peer]
            print(f"\n{peer} / allpairs on the peer corpus: median latency {p['median_ms'] / ours['median_ms']:.0f}×, "
                  f"p99 {p['p99_ms'] / ours['p99_ms']:.0f}×, build {p['build_s'] / ours['build_s']:.1f}×", end="")
        print()
    if dd:
        print(f"\n## dedup at t = {args.dedup_threshold} of {dd['n']:,} sets: {dd['kept']:,} kept; "
              f"{dd['n'] / dd['seconds']:,.0f} documents/s end to end ({dd['seconds']:.1f} s: "
              + ", ".join(f"{k} {v:.1f} s" for k, v in dd["stages"].items())
              + f"), {dd['n'] / dd['loop_s']:,.0f} documents/s for the compiled loop; "
              f"peak memory {dd['peak_bytes'] / 2**20:,.0f} MiB (the corpus as Python lists: "
              f"{dd['corpus_peak_bytes'] / 2**20:,.0f} MiB)")
    return exit_status(problems)


if __name__ == "__main__":
    sys.exit(main())
