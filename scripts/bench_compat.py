"""SetSimilaritySearch 1.0.1 and allpairs.compat side by side on Kosarak: the same calls, the same answers, timed.

Run from the repository root::

    python scripts/bench_compat.py                        # every run below; the peer's take long
    python scripts/bench_compat.py --runs jaccard:0.7 --queries 2000
    python scripts/bench_compat.py --peer-timeout 300     # stop each peer run after 300 s

Corpus: the Kosarak sample's distinct sets (34,985; REFERENCE.md section 4),
as lists of string tokens. Calls, each in a fresh process per library:

- ``all_pairs(sets, func, t)`` for every ``--runs`` entry (default jaccard
  at 0.5 and 0.7, cosine at 0.9, containment_min at 0.7), consumed to the end;
- ``SearchIndex(sets, "jaccard", --query-threshold)`` and ``--queries``
  (10,000) ``query`` calls with sets drawn from the corpus (seeded).

Figures per call: CPU seconds of the call (process time, build and
consumption included), the wall time to the first pair (``all_pairs``; the
generator created and its first pair drawn) or to build the index
(``SearchIndex``), the peak resident memory of the process above what it held
before the call (corpus and imports), and a checksum of the whole output
(indices and similarity values in order, and their types): the two libraries must
agree on it, or the script exits 1. Consuming a pair costs both sides the same
Python loop (``hash`` of a tuple per result). A peer run still going after
``--peer-timeout`` seconds (wall) is stopped and shown as "> N", N the CPU
seconds it had used; its ratio is then a lower bound.

Standard output carries only the table; progress goes to standard error.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

RUNS = ("jaccard:0.5", "jaccard:0.7", "cosine:0.9", "containment_min:0.7")
WHO = {"sss": "SetSimilaritySearch", "compat": "allpairs.compat"}


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def rss_peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def child(args) -> dict:
    """One call in this process; a JSON line of figures on stdout."""
    from datasets import kosarak

    sets = kosarak.kosarak_sets(distinct=True)
    if args.who == "sss":
        import SetSimilaritySearch as lib
    else:
        from allpairs import compat as lib
    base = rss_peak_mib()
    # An order-sensitive checksum: hash() of a tuple of ints and floats (never salted: no str in it).
    acc, count, types = 0, 0, None
    if args.call == "all_pairs":
        c0, w0 = time.process_time(), time.perf_counter()
        pairs = lib.all_pairs(sets, similarity_func_name=args.func, similarity_threshold=args.threshold)
        first = None
        for x, y, s in pairs:
            if first is None:
                first = time.perf_counter() - w0
                types = [type(v).__name__ for v in (x, y, s)]
            acc = hash((acc, x, y, s))
            count += 1
        cpu = time.process_time() - c0
    else:
        picks = random.Random(args.seed).choices(range(len(sets)), k=args.queries)
        c0, w0 = time.process_time(), time.perf_counter()
        index = lib.SearchIndex(sets, similarity_func_name=args.func, similarity_threshold=args.threshold)
        first = time.perf_counter() - w0
        for q in picks:
            for i, s in index.query(sets[q]):
                acc = hash((acc, i, s))
                count += 1
                types = types or [type(v).__name__ for v in (i, s)]
        cpu = time.process_time() - c0
    return {"cpu": cpu, "first": first, "peak_mib": rss_peak_mib() - base, "count": count, "checksum": acc,
            "types": types}


def run_child(who: str, call: str, func: str, threshold: float, args, timeout: float | None) -> dict | None:
    cmd = [sys.executable, __file__, "--child", who, call, func, repr(threshold), "--queries", str(args.queries),
           "--seed", str(args.seed)]
    log(f"[{WHO[who]}] {call} {func} {threshold} ...")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              env=dict(os.environ, PYTHONHASHSEED="0"))
    except subprocess.TimeoutExpired:  # killed and waited for: its CPU time is in RUSAGE_CHILDREN
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        log(f"  stopped after {timeout:.0f} s (wall), {cpu:.0f} s CPU")
        return {"stopped": True, "cpu": cpu}
    if done.returncode != 0:
        raise SystemExit(f"{WHO[who]} {call} {func} {threshold} failed:\n{done.stderr}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    log(f"  {out['count']:,} results, {out['cpu']:.2f} s CPU")
    return out


def same(out: dict) -> tuple:
    return out["count"], out["checksum"], out["types"]


def fmt(value, spec=".2f") -> str:
    return "-" if value is None else format(value, spec)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", default=",".join(RUNS), help="all_pairs calls, FUNC:THRESHOLD separated by commas")
    ap.add_argument("--queries", type=int, default=10_000, help="query calls (0: none)")
    ap.add_argument("--query-func", default="jaccard")
    ap.add_argument("--query-threshold", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--peer-timeout", type=float, default=1800.0, help="seconds (wall) before a peer run is stopped")
    ap.add_argument("--child", nargs=4, metavar=("WHO", "CALL", "FUNC", "THRESHOLD"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        args.who, args.call, args.func, threshold = args.child
        args.threshold = float(threshold)
        print(json.dumps(child(args)))
        return 0
    calls = [("all_pairs", f, float(t)) for f, t in (r.split(":") for r in args.runs.split(",") if r)]
    if args.queries:
        calls.append(("query", args.query_func, args.query_threshold))
    rows, problems = [], []
    for call, func, t in calls:
        ours = run_child("compat", call, func, t, args, None)
        theirs = run_child("sss", call, func, t, args, args.peer_timeout)
        if theirs.get("stopped"):
            theirs = None, theirs["cpu"]
        else:
            theirs = theirs, None
        if theirs[0] is not None and same(theirs[0]) != same(ours):
            problems.append(f"{call} {func} {t}: the outputs differ")
        rows.append((call, func, t, ours, theirs))
    load = os.getloadavg()
    print(f"## SetSimilaritySearch 1.0.1 vs allpairs.compat on Kosarak's 34,985 distinct sets "
          f"(load average {load[0]:.1f} / {load[1]:.1f} on {os.cpu_count()} cores)\n")
    print("| call | results | CPU s SSS | CPU s compat | CPU ratio | first pair / build s SSS | compat | "
          "peak MiB SSS | compat | same output |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for call, func, t, ours, (theirs, stopped_cpu) in rows:
        what = f"all_pairs {func} {t}" if call == "all_pairs" else f"{args.queries:,} × query ({func} {t})"
        th = theirs or {}
        if theirs is None:  # stopped: what it had used is a lower bound
            peer_cpu, ratio_text = f"> {stopped_cpu:.0f}", f"> {stopped_cpu / ours['cpu']:.0f}×"
        else:
            peer_cpu, ratio_text = f"{th['cpu']:.2f}", f"{th['cpu'] / ours['cpu']:.0f}×"
        print(f"| {what} | {ours['count']:,} | {peer_cpu} | {ours['cpu']:.2f} | "
              f"{ratio_text} | {fmt(th.get('first'), '.3f')} | {ours['first']:.3f} | "
              f"{fmt(th.get('peak_mib'), '.0f')} | {ours['peak_mib']:.0f} | "
              f"{'-' if not theirs else 'yes' if same(theirs) == same(ours) else 'NO'} |")
    for p in problems:
        log(f"problem: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
