"""The Spark exact join's token-group task joins, run outside Spark in one process, beside one local join.

Takes ``scripts/bench_spark.py``'s Zipf corpus of N sets (its Parquet, written
once), ranks its distinct sets as the Spark engine does (shingles of one set
only are each set's own, first; the shared ones by their number of distinct
sets), routes each set to its token groups' tasks and hands them, sorted by
task as Spark sorts them, in Arrow batches of 10,000 rows, to the tasks' join
(:func:`allpairs.engines.spark.exact._join_batches`; hot tokens split as
``plan_hot_groups`` splits them). Beside it: one local ``prefix_join`` of the
same distinct sets in the same global order. Both on one thread; the pairs
must agree. Reports wall seconds of each (and of the ``prefix_join`` calls
inside the tasks), the candidates each verified (merged), the pairs the
tasks' joins returned (verified) and kept, or with ``--count`` their
instructions by callgrind
(``--instr-atstart=no``, numba's JIT from a fresh cache filled by a run
without valgrind first, as ``scripts/count_index_probe.py`` counts; a join
of 2,000 sets first, uncounted, loads every kernel)::

    python scripts/profile_group_joins.py 1000000            # times, 8 groups (local[2]'s default)
    python scripts/profile_group_joins.py 200000 --count     # instructions
    ALLPAIRS_TREE=/path/to/other/tree python scripts/profile_group_joins.py 200000 --count   # another tree's
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import numpy as np  # noqa: E402

#: Sets of the corpus joined before the count, uncounted.
WARM_SETS = 2000

#: Arrow batch rows Spark hands a ``mapInArrow`` task (``spark.sql.execution.arrow.maxRecordsPerBatch``).
SPARK_BATCH_ROWS = 10_000


def ranked_sets(n: int, seed: int, cache: Path):
    """The distinct sets in the global order: (OrderedSets, ranked Arrow batch as the Spark engine ranks them)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from allpairs.order import order_sets
    from bench_spark import corpus

    col = pq.read_table(corpus(n, seed, cache), columns=["toks"]).column("toks").combine_chunks()
    docs = order_sets(col.offsets.to_numpy().astype(np.int64), col.values.to_numpy().astype(np.uint64))
    # Ranked again over the distinct sets: a shingle of one set only ranks below every shared one.
    sets = order_sets(docs.indptr, docs.tokens.astype(np.uint64))
    df = np.bincount(sets.tokens, minlength=len(sets.keys))
    n_own = int((df == 1).sum())
    if (df[:n_own] != 1).any():
        raise RuntimeError("the order does not rank shingles of one set first")
    size = np.diff(sets.indptr)
    shared = sets.tokens >= n_own
    n_single = size - np.add.reduceat(shared.astype(np.int64), sets.indptr[:-1])
    ranks = pa.ListArray.from_arrays(pa.array(np.concatenate([[0], np.cumsum(size - n_single)]).astype(np.int32)),
                                     pa.array(sets.tokens[shared] - n_own, pa.int32()))
    batch = pa.RecordBatch.from_arrays([pa.array(np.arange(len(size), dtype=np.int64)), pa.array(size, pa.int32()),
                                        pa.array(n_single, pa.int32()), ranks],
                                       names=["set", "size", "n_single", "ranks"])
    return sets, batch


def routed_batches(batch, t, groups: int, max_group: int):
    """The routed rows sorted by task in Spark's batches, and the hot tokens' ranks."""
    import pyarrow as pa

    from allpairs.engines.spark.exact import TASK, _route_batches, _routes, split_group

    row, g = _routes(batch, t.p, t.q)
    size = batch.column("size").to_numpy().astype(np.int64)
    plans = {}
    tok, n = np.unique(g, return_counts=True)
    for gv in tok[n > max_group].tolist():
        sizes, counts = np.unique(size[row[g == gv]], return_counts=True)
        plans[gv] = split_group(sizes, counts, max_group, t)
    routed = pa.Table.from_batches(list(_route_batches([batch], t.p, t.q, plans, groups)))
    routed = routed.sort_by([(k, "ascending") for k in TASK])
    return routed.to_batches(max_chunksize=SPARK_BATCH_ROWS), np.array(sorted(plans), np.int64)


def group_joins(batches, t, hot, groups: int) -> set:
    from allpairs.engines.spark.exact import _join_batches

    found = set()
    for out in _join_batches(batches, t, hot, groups):
        found.update(zip(out.column("a").to_numpy().tolist(), out.column("b").to_numpy().tolist()))
    return {(min(a, b), max(a, b)) for a, b in found}


def local_join(sets, t, tally: dict | None = None) -> set:
    from allpairs.exact import prefix_join

    pairs = prefix_join(sets.indptr, sets.tokens, len(sets.keys), t, jobs=1)
    if tally is not None:
        tally["local candidates"] = pairs.candidates
    return set(zip(pairs.left.tolist(), pairs.right.tolist()))


def tallied_prefix_joins() -> dict:
    """Wrap the tasks' ``prefix_join`` so as to sum its seconds, its candidates and the pairs it returns: the
    dict it adds to."""
    import allpairs.engines.spark.exact as exact

    tally, inner = {"their prefix_join s": 0.0, "task candidates": 0, "task pairs verified": 0}, exact.prefix_join

    def wrapped(*a, **k):
        t0 = time.perf_counter()
        try:
            pairs = inner(*a, **k)
        finally:
            tally["their prefix_join s"] += time.perf_counter() - t0
        tally["task candidates"] += pairs.candidates
        tally["task pairs verified"] += len(pairs.left)
        return pairs

    exact.prefix_join = wrapped
    return tally


def run(args, counted=None) -> None:
    from allpairs.measures import Threshold

    t = Threshold.parse(args.threshold)
    sets, batch = ranked_sets(args.n, args.seed, Path(args.cache))
    batches, hot = routed_batches(batch, t, args.groups, args.max_group)
    rows = sum(b.num_rows for b in batches)
    if counted is None:
        tally = tallied_prefix_joins()
        t0 = time.perf_counter()
        got = group_joins(batches, t, hot, args.groups)
        tasks = time.perf_counter() - t0
        t0 = time.perf_counter()
        want = local_join(sets, t, tally)
        local = time.perf_counter() - t0
        tally["their prefix_join s"] = round(tally["their prefix_join s"], 2)
        print(json.dumps({"sets": len(sets.indptr) - 1, "routed rows": rows, "hot tokens": len(hot),
                          "pairs kept": len(got), **tally, "task joins s": round(tasks, 2),
                          "local prefix_join s": round(local, 2), "load": round(os.getloadavg()[0], 1)}))
    else:
        import ctypes

        # Every kernel loaded from numba's cache (and its types dispatched) before the count: a small corpus.
        small, small_batch = ranked_sets(WARM_SETS, args.seed, Path(args.cache))
        small_batches, small_hot = routed_batches(small_batch, t, args.groups, args.max_group)
        group_joins(small_batches, t, small_hot, args.groups)
        local_join(small, t)
        found = {}
        tally = tallied_prefix_joins()
        for label, fn in (("task joins", lambda: group_joins(batches, t, hot, args.groups)),
                          ("local prefix_join", lambda: local_join(sets, t, tally))):
            @ctypes.CFUNCTYPE(None)
            def stage(fn=fn, label=label):
                found[label] = fn()

            counted(stage, label.encode())
        got, want = found["task joins"], found["local prefix_join"]
        del tally["their prefix_join s"]
        print(json.dumps({"sets": len(sets.indptr) - 1, "routed rows": rows, "pairs kept": len(got), **tally}))
    if got != want:
        raise SystemExit(f"the task joins found {len(got)} pairs, the local join {len(want)}: "
                         f"{len(got - want)} extra, {len(want - got)} missing")


def count(args) -> None:
    """Run ``run`` under callgrind (after a run without it, which fills numba's cache) and print the counts."""
    from bench_sota import REGION_C, callgrind_dumps

    folder = Path(args.folder)
    folder.mkdir(parents=True, exist_ok=True)
    region = folder / "counted_region.so"
    if not region.exists():
        (folder / "counted_region.c").write_text(REGION_C)
        subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(region), str(folder / "counted_region.c")],
                       check=True)
    env = {**os.environ, "ALLPAIRS_KERNELS": "jit", "NUMBA_CACHE_DIR": str(folder / f"numba-cache-{os.getpid()}")}
    base = [sys.executable, __file__, str(args.n), "-t", args.threshold, "--groups", str(args.groups),
            "--max-group", str(args.max_group), "--seed", str(args.seed), "--cache", args.cache]
    subprocess.run(base, env=env, check=True, stdout=subprocess.DEVNULL)
    prefix = folder / f"run-{os.getpid()}.callgrind"
    out = subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={prefix}"]
                         + base + ["--child", str(region)], env=env, check=True, capture_output=True, text=True)
    functions = costliest_functions(prefix, args.functions) if args.functions else {}
    dumps = callgrind_dumps(prefix)
    print(out.stdout.strip())
    for label in ("task joins", "local prefix_join"):
        print(f"{label}: {dumps[label]:,} instructions")
        for name, ir in functions.get(label, []):
            print(f"    {ir:>15,}  {name}")


def costliest_functions(prefix: Path, top: int) -> dict[str, list[tuple[str, int]]]:
    """The ``top`` functions of each callgrind dump ``prefix*`` by their own instructions (callgrind_annotate's
    table; a numba kernel is named by its qualified name, its mangled types dropped), by the dump's label."""
    import re

    out = {}
    for dump in sorted(prefix.parent.glob(prefix.name + "*")):
        label = re.search(r"^desc: Trigger: (?:Client Request: )?(.*)$", dump.read_text(errors="replace"), re.M)
        table = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", str(dump)],
                               check=True, capture_output=True, text=True).stdout
        rows = []
        for line in table.splitlines():
            got = re.match(r"^\s*([\d,]+) \([ \d.]+%\)\s+(.*)$", line)
            if got and "PROGRAM TOTALS" not in got.group(2):
                name = got.group(2).split(":", 1)[-1].split(" [", 1)[0]
                name = kernel_name(name) if name.startswith("_ZN") else name
                rows.append((name, int(got.group(1).replace(",", ""))))
        if label:
            out[label.group(1).strip()] = rows[:top]
    return out


def kernel_name(mangled: str) -> str:
    """``allpairs.exact._kernel.probe_verify`` of numba's mangled symbol of it (the symbol itself if not one)."""
    import re

    parts, rest = [], mangled[3:]
    while rest and rest[0].isdigit():
        n = re.match(r"\d+", rest).group(0)
        part, rest = rest[len(n):len(n) + int(n)], rest[len(n) + int(n):]
        parts.append(part)
    return ".".join(parts) if parts else mangled


def main() -> None:
    from count_index_probe import use_tree

    use_tree()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("n", type=int, help="sets in the Zipf corpus")
    ap.add_argument("-t", "--threshold", default="0.5")
    ap.add_argument("--groups", type=int, default=8, help="token groups (the engine's default on local[2]: 8)")
    ap.add_argument("--max-group", type=int, default=10_000, help="sets above which a token's group is split")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache", default="/tmp/allpairs-bench-spark", help="bench_spark.py's corpus folder")
    ap.add_argument("--count", action="store_true", help="count instructions by callgrind instead of timing")
    ap.add_argument("--folder", default="/tmp/allpairs-count-groups", help="callgrind's dumps and numba's cache")
    ap.add_argument("--functions", type=int, default=0, metavar="N",
                    help="with --count, also the N costliest functions of each, by their own instructions")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.count:
        count(args)
    elif args.child:
        import ctypes

        run(args, ctypes.CDLL(args.child).counted_region)
    else:
        run(args)


if __name__ == "__main__":
    main()
