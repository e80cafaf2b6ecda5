"""allpairs on Spark beside MLlib's MinHashLSH, on seeded Zipf corpora with planted near-duplicates.

For each corpus size (default 10k, 30k, 100k sets of ~20 Zipf tokens from a
vocabulary as large as the corpus, at least 10,000, 30% planted near-duplicates;
:func:`datasets.synthetic.zipf_sets`, every parameter given explicitly so that
a change of its defaults cannot change these corpora), on one Spark session
(default local[2]):

* allpairs exact on Spark (``allpairs.spark``, method exact);
* allpairs LSH on Spark (K = 64, banding chosen for P(t) >= 0.99 as the local
  engine chooses it: 32 bands x 2 rows at t = 0.5; --max-bucket 1000; buckets
  of more than --max-expand sets, the Spark engine's default 4, joined exactly);
* MLlib ``MinHashLSH(numHashTables=H).approxSimilarityJoin`` at distance
  < 1 - t (+1e-9, so that J = t counts), H = allpairs' band count by default:
  as many buckets per set as allpairs LSH has (--mllib-tables 32 4 1 runs
  each of those counts, fewer tables being cheaper and less complete). An MLlib hash
  table is one MinHash value (MLlib ORs its tables and has no AND of several
  rows), so its candidates are the pairs sharing any one of H MinHash values.

LSH and MLlib each get a time limit per size (--lsh-timeout, --mllib-timeout):
past it their Spark jobs are cancelled and the row says "stopped after N s".
Each row gets: wall time, shuffle bytes written (Spark's own task metrics, read
from the driver's status store, no REST server needed), the longest task's time
and the bytes it read (input + shuffle), candidates, pairs found, recall
against the exact pairs (for MLlib, also the pairs it returned that the exact
join does not have: none expected, its distance is exact), and per size the
ratios of LSH's and MLlib's wall time to the exact join's. An unreported
warm-up join on --warmup sets (default 2000) runs first, so that the first
size does not pay for starting the session's Python workers. MLlib's candidates
(pairs sharing a bucket, summed over its tables) and largest bucket are
counted from its hashes by a separate, untimed aggregation. The corpora are
written once as Parquet under --cache (reused by later runs). Usage (from the
repository root)::

    .venv/bin/python scripts/bench_spark.py [--sizes 10000 30000 100000] [--master local[2]]

With ``--vs-local`` it measures instead the Spark engine against the local
engine, side by side in one run: the tiny corpus and (``--go``) the Go tree
end to end through the command line (each its own process, the JVM's start
included), then each size's exact join on Spark (``allpairs.spark.join`` of
the cached Parquet, counted) beside the local engine's (``allpairs.join`` of
the same sets read from a ``--sets`` file written once beside the Parquet,
counted) in this process, after an unreported warm-up join of --warmup sets
on each: the wall times (``--repeat N``: N rounds, the engines interleaved,
medians with their range, and Spark's first round apart from its later ones:
a command line's run is always a first one), each engine's peak memory (this process; the JVM
and its Python workers), the Spark jobs, stages and tasks each join ran, its
shuffle bytes and longest task; no set is a Python list here, so 10 M sets
fit beside the JVM. LSH and MLlib are not run then::

    .venv/bin/python scripts/bench_spark.py --vs-local --go --sizes 100000 1000000 --repeat 3

With ``--commands`` it measures dedup, clusters and decontamination on Spark
beside the local engine, side by side in one run: per size, the Spark join
(counted: the baseline of the issue's 1.5x target), ``dedup`` (kept rows
counted), ``clusters`` (rows counted) and an R–S containment join of
--items "benchmark items" (pieces of documents and fresh sets, t = 0.8) against
the corpus, each beside its local twin, with wall time, jobs, tasks, shuffle
bytes and the components' rounds::

    .venv/bin/python scripts/bench_spark.py --commands --sizes 100000 --items 10000

``--only-decontamination`` runs the last of them alone (``--sizes 1000000 --items 100000``: the issue's
100k items against 1M documents).

Figures from a shared machine are noisy: quote medians of several runs.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import numpy as np  # noqa: E402

from allpairs.engines.spark.lsh import MAX_EXPAND_SHUFFLED  # noqa: E402
from datasets.synthetic import zipf_sets  # noqa: E402


def stage_metrics(sc, after: int) -> dict:
    """Shuffle bytes written, and the longest task (ms) and its input + shuffle-read bytes, over stages > after."""
    store = sc._jsc.sc().statusStore()
    stages = _stages(sc)
    shuffle, longest, longest_in, last = 0, 0, 0, after
    for k in range(stages.size()):
        st = stages.apply(k)
        sid = st.stageId()
        if sid <= after:
            continue
        last = max(last, sid)
        shuffle += st.shuffleWriteBytes()
        tasks = store.taskList(sid, st.attemptId(), 100000)
        for t in range(tasks.size()):
            task = tasks.apply(t)
            dur = task.duration().get() if task.duration().isDefined() else 0
            if dur > longest and task.taskMetrics().isDefined():
                m = task.taskMetrics().get()
                sr = m.shuffleReadMetrics()
                longest = dur
                longest_in = m.inputMetrics().bytesRead() + sr.localBytesRead() + sr.remoteBytesRead()
    return {"shuffle_bytes": int(shuffle), "longest_task_s": longest / 1000, "longest_task_in": int(longest_in),
            "last_stage": last}


def _stages(sc):
    """Every stage's data (a Scala Seq) from the driver's status store."""
    no_quantiles = sc._gateway.new_array(sc._gateway.jvm.double, 0)
    return sc._jsc.sc().statusStore().stageList(None, False, False, no_quantiles, None)


def last_stage(sc) -> int:
    stages = _stages(sc)
    return max([stages.apply(k).stageId() for k in range(stages.size())], default=-1)


def measured(sc, fn):
    before = last_stage(sc)
    t0 = time.perf_counter()
    out = fn()
    wall = time.perf_counter() - t0
    m = stage_metrics(sc, before)
    m["wall_s"] = wall
    return out, m


def mib(n):
    return f"{n / 2**20:,.0f} MiB"


#: The corpus of each size: every parameter of zipf_sets given, so that a change of its
#: defaults cannot change what this benchmark measures.
CORPUS = dict(avg_size=20, near_duplicates=0.3, skew=1.0, similarity=(0.4, 1.0))


def corpus(n: int, seed: int, cache: Path) -> Path:
    """The Parquet file (id long, toks array<long>) of the corpus of ``n`` sets, written once."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = cache / f"zipf-n{n}-s{seed}-a20-v{max(10_000, n)}-d0.3.parquet"
    if path.exists():
        return path
    t0 = time.perf_counter()
    sets = zipf_sets(n=n, vocabulary=max(10_000, n), seed=seed, **CORPUS)
    cache.mkdir(parents=True, exist_ok=True)
    part = path.with_suffix(".part")
    pq.write_table(pa.table({"id": pa.array(np.arange(n, dtype=np.int64)),
                             "toks": pa.array(sets, pa.list_(pa.int64()))}), part, row_group_size=50000)
    part.rename(path)
    print(f"  corpus of {n:,} sets written in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    return path


def limited(sc, group: str, seconds: float | None, fn) -> tuple[object, str | None]:
    """``(fn(), None)``; ``(None, "stopped after N s")`` when it ran past ``seconds`` and its Spark jobs
    were cancelled; ``(None, "failed: ...")`` when Spark gave up on it."""
    result: dict = {}

    def body():
        sc.setJobGroup(group, group, interruptOnCancel=True)
        try:
            result["value"] = fn()
        except Exception as e:  # cancelled by the timer, or a failure reported below
            result["error"] = e

    th = threading.Thread(target=body)
    th.start()
    th.join(seconds)
    if th.is_alive():
        # Cancelling stops the group's running jobs only: a job ``fn`` starts after it is cancelled too.
        while th.is_alive():
            sc.cancelJobGroup(group)
            th.join(1.0)
        return None, f"stopped after {seconds:.0f}s"
    if "error" in result:
        e = result["error"]
        first = str(e).strip().splitlines()
        text = next((line for line in first if "Exception:" in line), first[0] if first else type(e).__name__)
        return None, "failed: " + text.split("Exception:")[-1].strip()[:160]
    return result["value"], None


def run_size(spark, n: int, t: float, args, info) -> list[dict]:
    from pyspark.sql import functions as F

    from allpairs.engines.spark import plan

    sc = spark.sparkContext
    path = corpus(n, args.seed, Path(args.cache))
    df = spark.read.parquet(str(path)).repartition(args.partitions)
    rows = []

    def pairs_of(planned):
        # The ids are strings: compared as numbers (as MLlib's are), not as text ("10" < "9").
        left, right = F.col("left").cast("long"), F.col("right").cast("long")
        return planned.pairs.select(F.least(left, right).alias("a"), F.greatest(left, right).alias("b"))

    # Exact.
    state = {}

    def exact():
        state["exact"] = plan(df, t, id_col="id", tokens_col="toks", order_col="id")
        found = pairs_of(state["exact"]).persist()
        return found, found.count()

    (exact_pairs, n_exact), m = measured(sc, exact)
    planned = state["exact"]
    planned.unpersist()
    rows.append({"n": n, "what": "allpairs exact", "pairs": n_exact, "recall": 1.0, **m,
                 "note": planned.describe().split("plan: ", 1)[1]})
    print(f"  exact: {n_exact:,} pairs in {m['wall_s']:.1f}s", file=sys.stderr)

    # allpairs LSH, within its time limit.
    def lsh():
        state["lsh"] = plan(df, t, id_col="id", tokens_col="toks", order_col="id", method="lsh",
                            num_perm=args.num_perm, max_bucket=args.max_bucket, max_expand=args.max_expand,
                            seed=args.seed + 1)
        state["lsh"].buckets.persist()
        found = pairs_of(state["lsh"]).persist()
        try:
            return found.count(), found.join(exact_pairs, ["a", "b"]).count()
        finally:
            found.unpersist()

    what = f"allpairs LSH {info.bands}x{info.rows}"
    (res, stopped), m = measured(sc, lambda: limited(sc, f"lsh-{n}", args.lsh_timeout, lsh))
    if stopped:
        rows.append({"n": n, "what": what, "pairs": None, "recall": None, **m, "note": stopped})
    else:
        rows.append({"n": n, "what": what, "pairs": res[0], "recall": res[1] / n_exact if n_exact else 1.0, **m,
                     "note": lsh_note(state["lsh"], args.max_expand)})
    if "lsh" in state:
        state["lsh"].buckets.unpersist()
        state.pop("lsh").unpersist()
    print(f"  lsh: {rows[-1]['pairs']} pairs in {m['wall_s']:.1f}s", file=sys.stderr)

    # MLlib MinHashLSH: by default as many hash tables as allpairs has bands; each within its time limit.
    from pyspark.ml.feature import MinHashLSH
    from pyspark.ml.functions import vector_to_array
    from pyspark.ml.linalg import SparseVector, VectorUDT

    dim = max(10000, n) + 1

    @F.udf(VectorUDT())
    def vec(toks):
        idx = sorted(set(int(x) for x in toks))
        return SparseVector(dim, idx, [1.0] * len(idx))

    vectors = df.where(F.size("toks") > 0).select("id", vec("toks").alias("v"))
    for tables in args.mllib_tables or [info.bands]:
        model = MinHashLSH(inputCol="v", outputCol="h", numHashTables=tables, seed=args.seed).fit(vectors)
        what = f"MLlib MinHashLSH {tables} tables"
        (res, stopped), m = measured(sc, lambda: limited(sc, f"mllib-{n}-{tables}", args.mllib_timeout,
                                                         lambda: mllib(spark, model, vectors, t, exact_pairs)))
        # Its candidates, from its hashes (untimed): pairs sharing a bucket, summed over the tables.
        buckets = model.transform(vectors).select(F.posexplode("h").alias("table", "hv")) \
            .groupBy("table", vector_to_array("hv")[0].alias("value")).count()
        cand = buckets.agg(F.sum(F.col("count") * (F.col("count") - 1) / 2).alias("pairs"),
                           F.max("count").alias("largest")).collect()[0]
        note = f"{int(cand['pairs']):,} candidates over its tables, largest bucket {cand['largest']:,} sets"
        if stopped:
            rows.append({"n": n, "what": what, "pairs": None, "recall": None, **m, "note": f"{stopped}; {note}"})
        else:
            extra = res[0] - res[1]
            rows.append({"n": n, "what": what, "pairs": res[0], "recall": res[1] / n_exact if n_exact else 1.0, **m,
                         "note": f"{note}; {extra:,} pairs not in the exact answer"})
        print(f"  mllib {tables}: {rows[-1]['pairs']} pairs in {m['wall_s']:.1f}s", file=sys.stderr)
    exact_pairs.unpersist()
    return rows


def mllib(spark, model, vectors, t: float, exact_pairs) -> tuple[int, int]:
    """MLlib's pairs at distance < 1 - t (+1e-9, so that J = t counts), and how many are exact pairs."""
    from pyspark.sql import functions as F

    # MLlib's join chooses a broadcast that does not fit a 6 GB driver at 100k sets (it fails
    # "Not enough memory to build and broadcast the table"): let it sort-merge instead.
    for key in ("spark.sql.autoBroadcastJoinThreshold", "spark.sql.adaptive.autoBroadcastJoinThreshold"):
        spark.conf.set(key, "-1")
    joined = model.approxSimilarityJoin(vectors, vectors, 1 - t + 1e-9, distCol="d") \
        .select(F.col("datasetA.id").alias("a"), F.col("datasetB.id").alias("b")).where("a < b")
    found = joined.persist()
    try:
        return found.count(), found.join(exact_pairs, ["a", "b"]).count()
    finally:
        found.unpersist()
        for key in ("spark.sql.autoBroadcastJoinThreshold", "spark.sql.adaptive.autoBroadcastJoinThreshold"):
            spark.conf.unset(key)


def lsh_note(planned, max_expand: int) -> str:
    """Candidates of the expanded buckets, and the buckets joined exactly instead, of a computed LSH plan."""
    from pyspark.sql import functions as F

    from allpairs.engines.spark.lsh import MARKED

    n_cand = planned.candidates.count()
    marked = planned.buckets.where(F.col("a") == MARKED).agg(
        F.countDistinct("band", "first").alias("k"), F.countDistinct("b").alias("sets"),
        F.max("n").alias("largest"), F.sum(F.col("n") - 1).alias("pairs")).collect()[0]
    note = f"{n_cand:,} candidates verified"
    if marked["k"]:
        note += (f"; {marked['k']:,} buckets of more than {max_expand} sets (largest {marked['largest']:,}) joined "
                 f"exactly ({marked['sets']:,} sets, {marked['pairs'] // 2:,} candidates not expanded)")
    return note


def ratios(rows: list[dict]) -> str:
    """Each row's wall time over the exact join's, of one size's rows ("> x" when it was stopped)."""
    exact = rows[0]["wall_s"]
    return ", ".join(f"{r['what']} {'> ' if r['pairs'] is None else ''}{r['wall_s'] / exact:.1f}x" for r in rows[1:])


def cli_side_by_side(name: str, args: list[str], master: str, fallback: bool = False, repeat: int = 1) -> None:
    """One corpus through the command line, local engine then Spark engine (the JVM's start included), ``repeat``
    times interleaved (medians reported, and every run's wall time and load); ``fallback``: also
    ``--engine spark`` with no --master, which joins a small input locally."""
    import statistics
    import subprocess

    walls, runs = {}, {"local": [], "spark": []}
    for k in range(repeat):
        for engine in ("local", "spark") + (("no --master",) if fallback and k == 0 else ()):
            extra = {"local": [], "spark": ["--engine", "spark", "--master", master],
                     "no --master": ["--engine", "spark"]}[engine]
            t0 = time.perf_counter()
            r = subprocess.run([sys.executable, "-m", "allpairs", "join", *extra, *args, "--count"],
                               capture_output=True, text=True, cwd=ROOT)
            walls[engine] = time.perf_counter() - t0
            if r.returncode != 0:
                raise SystemExit(f"{name} on {engine}: {r.stderr.strip()[-500:]}")
            walls[engine + " pairs"] = int(r.stdout)
            walls[engine + " times"] = next((line for line in r.stderr.splitlines() if "time " in line), "")
            walls[engine + " plan"] = next((line.split("plan: ", 1)[1] for line in r.stderr.splitlines()
                                            if line.startswith("allpairs: plan: ")), "")
            if engine in runs:
                runs[engine].append((walls[engine], os.getloadavg()[0]))
    for engine, done in runs.items():
        walls[engine] = statistics.median(w for w, _ in done)
    same = "same count" if walls["local pairs"] == walls["spark pairs"] else "COUNTS DIFFER"
    print(f"{name:<22} local {walls['local']:7.1f}s  spark {walls['spark']:7.1f}s  ratio "
          f"{walls['spark'] / walls['local']:6.1f}x  {walls['spark pairs']:,} pairs ({same}); load average "
          f"{os.getloadavg()[0]:.1f}; spark {walls['spark times'].split('time ')[-1]}", flush=True)
    if walls["spark plan"]:
        print(f"{'':<22} spark's plan: {walls['spark plan']}", flush=True)
    if repeat > 1:
        print(f"{'':<22} medians of {repeat} interleaved runs; " + "; ".join(
            f"{engine} " + ", ".join(f"{w:.1f}s (load {load:.1f})" for w, load in done) for engine, done in runs.items()),
            flush=True)
    if fallback:
        print(f"{'':<22} --engine spark with no --master: {walls['no --master']:.1f}s, "
              f"{walls['no --master pairs']:,} pairs ({walls['no --master times'].split('time ')[-1]})", flush=True)


def sets_file(n: int, seed: int, cache: Path) -> Path:
    """The corpus of ``n`` sets as a ``--sets`` file beside its Parquet (a set a line, its tokens in decimal),
    written once a row group at a time: the local engine reads it as ``allpairs join --sets`` does, so that no
    set is ever a Python list in this process (10 M sets would take GiBs beside the JVM)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    source = corpus(n, seed, cache)
    path = source.with_suffix(".sets")
    if path.exists():
        return path
    part = path.with_name(path.name + ".part")
    table = pq.ParquetFile(source)
    with open(part, "wb") as out:
        for k in range(table.metadata.num_row_groups):
            toks = table.read_row_group(k, columns=["toks"]).column("toks").combine_chunks()
            lines = pc.binary_join(pc.cast(toks, pa.list_(pa.string())), " ").fill_null("")
            out.write(("\n".join(lines.to_pylist()) + "\n").encode())
    part.rename(path)
    return path


def local_count(path: Path, threshold: float) -> int:
    """The local engine's pairs of a ``--sets`` file, counted: read and joined as ``allpairs join --sets F
    --count`` does, in this process."""
    import allpairs
    from allpairs.shingles import hash_set_pieces

    return len(allpairs.join(allpairs.read_sets(path, hash_pieces=hash_set_pieces), threshold, count=True).pairs)


def spark_count(spark, path: Path, threshold: float, group: str, options: dict | None = None) -> dict:
    """The Spark engine's pairs of a cached Parquet corpus, counted, as job group ``group`` (``options``: of
    ``allpairs.spark.join``): the pairs, wall seconds, and the jobs, stages, tasks, shuffle bytes and longest
    task it ran."""
    import importlib

    import allpairs.spark

    join_module = importlib.import_module("allpairs.engines.spark.join")  # the module (the package names a function so)

    sc = spark.sparkContext
    sc.setJobGroup(group, group)
    before = last_stage(sc)
    planned, plan = [], join_module.plan  # which plan join() chose, kept as it returns
    join_module.plan = lambda *a, **k: planned.append(plan(*a, **k)) or planned[-1]
    t0 = time.perf_counter()
    try:
        pairs = allpairs.spark.join(spark.read.parquet(str(path)), threshold, id_col="id", tokens_col="toks",
                                    order_col="id", **(options or {}))
        got = pairs.count()
        wall = time.perf_counter() - t0
    finally:
        join_module.plan = plan
        sc.setLocalProperty("spark.jobGroup.id", None)
    pairs.unpersist()
    tracker = sc.statusTracker()
    jobs = tracker.getJobIdsForGroup(group)
    stages = [tracker.getStageInfo(sid) for j in jobs for sid in tracker.getJobInfo(j).stageIds]
    ran = [st for st in stages if st is not None and st.numCompletedTasks]
    return {"pairs": got, "wall_s": wall, "jobs": len(jobs), "stages": len(ran), "plan": planned[-1].describe(),
            "tasks": sum(st.numCompletedTasks for st in ran), **stage_metrics(sc, before)}


def spread(values) -> str:
    """The median of ``values`` and, for several, their range: "11.30 s (10.20-13.90)"."""
    import statistics

    med = f"{statistics.median(values):.2f} s"
    return med if len(values) == 1 else f"{med} ({min(values):.2f}-{max(values):.2f})"


def sets_side_by_side(spark, n: int, args, memory) -> None:
    """The exact join of one Zipf corpus on Spark beside the local engine, both reading it from its file (the
    Parquet; its ``--sets`` twin), ``args.repeat`` rounds with the engines interleaved: the medians and their
    range, each engine's peak memory (this process for the local engine; the JVM and its Python workers for
    Spark), and Spark's jobs, stages, tasks, shuffle bytes and longest task (of its median round)."""
    import statistics

    source, path = corpus(n, args.seed, Path(args.cache)), sets_file(n, args.seed, Path(args.cache))
    local, runs, local_mem, spark_mem = [], [], 0, 0
    for k in range(args.repeat):
        memory.reset()
        t0 = time.perf_counter()
        want = local_count(path, args.threshold)
        local.append(time.perf_counter() - t0)
        memory.line()  # a last sample
        local_mem = max(local_mem, memory.own)
        memory.reset()
        runs.append(spark_count(spark, source, args.threshold, f"bench-{n}-{k}", options(args)))
        memory.line()
        spark_mem = max(spark_mem, memory.spark)
        got = runs[-1]["pairs"]
        print(f"  round {k + 1}: local {local[-1]:.1f} s, spark {runs[-1]['wall_s']:.1f} s, "
              f"{got:,} pairs{'' if got == want else f' (COUNTS DIFFER: local {want:,})'}; load average "
              f"{os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
    walls = [r["wall_s"] for r in runs]
    m = sorted(runs, key=lambda r: r["wall_s"])[(len(runs) - 1) // 2]  # the median round (the lower of two)
    same = "same count" if all(r["pairs"] == want for r in runs) else f"COUNTS DIFFER (local {want:,})"
    ratio = statistics.median(walls) / statistics.median(local)
    # A command line's run is always a session's first: the first round (its JVM compiling the code paths of
    # data this large, its workers growing to it) apart from the later ones. (The command line starts its JVM
    # for a local input under 256 MiB, these 1 M sets too, with the quick compiler alone: run.session_conf;
    # this session keeps the JVM's defaults.)
    first_ratio = walls[0] / statistics.median(local)
    first = "" if args.repeat == 1 else (f"; spark's first round {walls[0]:.2f} s ({first_ratio:.1f}x), "
                                         f"its later ones {spread(walls[1:])}")
    print(f"{n:>9,} Zipf sets      local {spread(local)}  spark {spread(walls)}  ratio {ratio:.1f}x "
          f"{'' if args.repeat == 1 else f'(medians of {args.repeat} interleaved rounds{first}) '}"
          f"{m['pairs']:,} pairs ({same}); peak memory local {local_mem / 2**30:.1f} GiB (this process), "
          f"spark {spark_mem / 2**30:.1f} GiB (the JVM and its Python workers); spark: {m['jobs']} jobs, "
          f"{m['stages']} stages, {m['tasks']} tasks, {mib(m['shuffle_bytes'])} shuffled, longest task "
          f"{m['longest_task_s']:.1f}s; load average {os.getloadavg()[0]:.1f}", flush=True)
    print(f"{'':<22} spark's {m['plan']}", flush=True)


def spark_measured(spark, name: str, fn):
    """``fn()`` on Spark as one job group: (its result, wall s, jobs, tasks, shuffle bytes written)."""
    sc = spark.sparkContext
    sc.setJobGroup(name, name)
    before = last_stage(sc)
    t0 = time.perf_counter()
    out = fn()
    wall = time.perf_counter() - t0
    sc.setLocalProperty("spark.jobGroup.id", None)
    tracker = sc.statusTracker()
    jobs = tracker.getJobIdsForGroup(name)
    tasks = sum(getattr(tracker.getStageInfo(sid), "numCompletedTasks", 0) for j in jobs
                for sid in tracker.getJobInfo(j).stageIds)
    return out, wall, len(jobs), tasks, stage_metrics(sc, before)["shuffle_bytes"]


def benchmark_items(toks, n_items: int, seed: int):
    """``n_items`` sets: half pieces of corpus sets (80% of a set's tokens, so contained at 0.8), half
    fresh Zipf sets (contained nowhere, mostly)."""
    rng = np.random.default_rng(seed)
    items = []
    for k in range(n_items):
        if k % 2 == 0:
            s = toks[int(rng.integers(len(toks)))]
            keep = max(1, (4 * len(s)) // 5)
            items.append(sorted(rng.choice(s, keep, replace=False).tolist()) if len(s) else [])
        else:
            items.append(rng.integers(0, 10**6, 12).tolist())
    return items


def decontamination(spark, df, toks, n: int, args, local, show) -> None:
    """The R–S containment join of ``args.items`` benchmark items against the corpus, beside the local engine."""
    import allpairs
    from allpairs.engines.spark.against import plan_against

    items = benchmark_items(toks, args.items, args.seed)
    idf = spark.createDataFrame([(k, s) for k, s in enumerate(items)], "id long, toks array<long>")
    res, local_s = local(lambda: len(allpairs.join(items, 0.8, against=toks, measure="containment").pairs))

    def decontaminate():
        pairs, right_tokens, _ = plan_against(idf, df, 0.8, measure="containment", id_col="id", text_col=None,
                                              tokens_col="toks", spec=None)
        k = pairs.count()
        right_tokens.unpersist()
        return k

    got, *m = spark_measured(spark, f"against-{n}", decontaminate)
    show(f"decontam {args.items // 1000}k", local_s, *m, "same" if got == res else f"DIFFER ({got:,} vs {res:,})",
         f"; {got:,} (item, document) pairs at containment >= 0.8")


def commands_side_by_side(spark, n: int, args) -> None:
    """dedup, clusters and decontamination of one Zipf corpus on Spark beside the local engine."""
    import pyarrow.parquet as pq

    import allpairs
    import allpairs.spark
    from allpairs.engines.spark.clusters import plan_clusters
    from allpairs.engines.spark.dedup import plan_dedup
    from allpairs.index import dedup as local_dedup

    t = args.threshold
    path = corpus(n, args.seed, Path(args.cache))
    toks = pq.read_table(path, columns=["toks"]).column("toks").to_pylist()
    df = spark.read.parquet(str(path))
    rows = []

    def local(fn):
        t0 = time.perf_counter()
        out = fn()
        return out, time.perf_counter() - t0

    def show(what, local_s, spark_s, jobs, tasks, shuffle, same, note=""):
        print(f"{n:>9,} {what:<16} local {local_s:7.1f}s  spark {spark_s:7.1f}s  ratio {spark_s / local_s:6.1f}x  "
              f"{jobs} jobs, {tasks} tasks, {mib(shuffle)} shuffled; {same}{note}; load {os.getloadavg()[0]:.1f}",
              flush=True)
        rows.append((what, spark_s))

    def join():
        pairs = allpairs.spark.join(df, t, id_col="id", tokens_col="toks", order_col="id")
        k = pairs.count()
        pairs.unpersist()
        return k

    if args.only_decontamination:
        decontamination(spark, df, toks, n, args, local, show)
        return
    res, local_s = local(lambda: len(allpairs.join(toks, t).pairs))
    got, *m = spark_measured(spark, f"join-{n}", join)
    show("join", local_s, *m, "same" if got == res else f"DIFFER ({got:,} vs {res:,})", f"; {got:,} pairs")
    res, local_s = local(lambda: len(local_dedup(toks, t).kept))
    planned, *m = spark_measured(spark, f"dedup-{n}", lambda: (lambda d: (d, d.rows.count()))(
        plan_dedup(df, t, id_col="id", tokens_col="toks", order_col="id")))
    d, kept = planned
    show("dedup", local_s, *m, "same" if kept == res else f"DIFFER ({kept:,} vs {res:,})",
         f"; {kept:,} kept; {d.decided.components:,} components, {d.decided.rounds} rounds, largest "
         f"{d.decided.largest:,} pairs")
    res, local_s = local(lambda: len(allpairs.join(toks, t, clusters=True).clusters.docs))
    planned, *m = spark_measured(spark, f"clusters-{n}", lambda: (lambda c: (c, c.rows.count()))(
        plan_clusters(df, t, id_col="id", tokens_col="toks", order_col="id")))
    c, clustered = planned
    show("clusters", local_s, *m, "same" if clustered == res else f"DIFFER ({clustered:,} vs {res:,})",
         f"; {c.describe()}")
    if args.items:
        decontamination(spark, df, toks, n, args, local, show)
    base = rows[0][1]
    print("  Spark's wall time over its own join's: " + ", ".join(f"{w} {s / base:.2f}x" for w, s in rows[1:]),
          flush=True)


def vs_local(args) -> None:
    print(f"allpairs: Spark engine ({args.master}) beside the local engine, exact, t = {args.threshold}; load "
          f"average {os.getloadavg()[0]:.1f} at start", flush=True)
    cli_side_by_side("tiny corpus (word:1)", ["-t", str(args.threshold), "-s", "word:1", "datasets/tiny/corpus"],
                     args.master, fallback=True, repeat=args.repeat)
    if args.go:
        from datasets.go import find_go_src

        cli_side_by_side("Go tree (code:5)", ["-t", str(args.threshold), "--include", "*.go", "--exclude", "*_test.go",
                                              "--exclude", "testdata/**", "--min-bytes", "2048", str(find_go_src())],
                         args.master, repeat=args.repeat)
    if not args.sizes:
        return
    from allpairs.engines.spark import get_session

    from profile_spark import PeakMemory

    memory = PeakMemory()
    spark = get_session(args.master, conf={"spark.driver.memory": "6g"})
    spark.sparkContext.setLogLevel("ERROR")
    if args.warmup:  # unreported: each engine's first join (its kernels, Spark's Python workers) paid here
        warm = corpus(args.warmup, args.seed + 1, Path(args.cache))
        local_count(sets_file(args.warmup, args.seed + 1, Path(args.cache)), args.threshold)
        spark_count(spark, warm, args.threshold, "bench-warm-up")
        print(f"{'':<22} (after an unreported warm-up join of {args.warmup:,} sets on each engine)", flush=True)
    for n in args.sizes:
        sets_side_by_side(spark, n, args, memory)
    spark.stop()


def options(args) -> dict:
    """``--option NAME=INT`` as keywords of ``allpairs.spark.join``."""
    return {k: int(v) for k, v in (o.split("=", 1) for o in args.option)}


def positive(text: str) -> int:
    """An argparse type: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 1")
    return value


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[10_000, 30_000, 100_000])
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("-t", "--threshold", type=float, default=0.5)
    ap.add_argument("--num-perm", type=int, default=64)
    ap.add_argument("--max-bucket", type=int, default=1000)
    ap.add_argument("--max-expand", type=int, default=MAX_EXPAND_SHUFFLED,
                    help="allpairs LSH joins buckets of more sets exactly instead of expanding them")
    ap.add_argument("--mllib-tables", type=int, nargs="+", default=None,
                    help="MLlib's hash tables, one run each (default: as many as allpairs' bands)")
    ap.add_argument("--partitions", type=int, default=8, help="input and shuffle partitions")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--warmup", type=int, default=2000, help="sets of an unreported first join (0: none)")
    ap.add_argument("--lsh-timeout", type=float, default=600.0, help="seconds per size for allpairs LSH")
    ap.add_argument("--mllib-timeout", type=float, default=600.0, help="seconds per size for MLlib")
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "allpairs-bench-spark"),
                    help="where the corpora are written once")
    ap.add_argument("--vs-local", action="store_true", help="the Spark engine beside the local engine (see above)")
    ap.add_argument("--go", action="store_true", help="with --vs-local: the Go tree end to end too")
    ap.add_argument("--repeat", type=positive, default=1,
                    help="with --vs-local: rounds of each engine on the tiny corpus, the Go tree and each size, "
                         "interleaved (medians reported, with their range)")
    ap.add_argument("--option", action="append", default=[], metavar="NAME=INT",
                    help="with --vs-local: an option of allpairs.spark.join for the sizes, e.g. "
                         "broadcast_limit=16000000 (10 M sets share more shingles than the default 4 M)")
    ap.add_argument("--commands", action="store_true",
                    help="dedup, clusters and decontamination beside the local engine (see above)")
    ap.add_argument("--items", type=int, default=100_000, help="with --commands: benchmark items (0: none)")
    ap.add_argument("--only-decontamination", action="store_true",
                    help="with --commands: the decontamination run alone")
    args = ap.parse_args()
    if args.vs_local:
        return vs_local(args)
    if args.commands:
        from allpairs.engines.spark import get_session

        spark = get_session(args.master, conf={"spark.driver.memory": "6g"})
        spark.sparkContext.setLogLevel("ERROR")
        print(f"allpairs: dedup, clusters, decontamination on Spark ({args.master}) beside the local engine, "
              f"t = {args.threshold}; load average {os.getloadavg()[0]:.1f} at start", flush=True)
        if args.warmup:  # unreported: the session's Python workers start here, not in the first row
            import allpairs.spark

            warm = allpairs.spark.join(spark.read.parquet(str(corpus(args.warmup, args.seed + 1, Path(args.cache)))),
                                       args.threshold, tokens_col="toks", order_col="id")
            warm.count()
            warm.unpersist()
        for n in args.sizes:
            commands_side_by_side(spark, n, args)
        return spark.stop()

    from allpairs.engines.spark import get_session

    spark = get_session(args.master, conf={"spark.sql.shuffle.partitions": str(args.partitions),
                                           "spark.driver.memory": "6g"})
    spark.sparkContext.setLogLevel("ERROR")
    print(f"Spark {spark.version} on {spark.sparkContext.master}; t = {args.threshold}; {args.partitions} "
          f"partitions; machine shared (load average {os.getloadavg()[0]:.1f} at start)", flush=True)
    from allpairs.pipeline import lsh_settings
    from allpairs.measures import Threshold

    info = lsh_settings(Threshold.parse(args.threshold), num_perm=args.num_perm, bands=None, rows=None, recall=0.99,
                        seed=args.seed + 1, bits=None, max_bucket=args.max_bucket, max_expand=args.max_expand)
    print(f"allpairs LSH: K = {info.num_perm}, {info.bands} bands x {info.rows} rows (the local engine's choice for "
          f"P(t) >= 0.99), seed {info.seed}, max_bucket {args.max_bucket}, max_expand {args.max_expand}; MLlib: "
          f"MinHashLSH(numHashTables={' / '.join(map(str, args.mllib_tables or [info.bands]))}, seed={args.seed})"
          f".approxSimilarityJoin at "
          f"distance < 1 - t + 1e-9; LSH {args.lsh_timeout:.0f} s and MLlib {args.mllib_timeout:.0f} s per size",
          flush=True)
    header = (f"{'sets':>9} {'what':<28} {'wall s':>8} {'shuffle':>10} {'longest task':>13} {'its input':>10} "
              f"{'pairs':>10} {'recall':>7}  note")
    print(header, flush=True)
    if args.warmup:
        # The first join of a session starts the Python workers and loads the kernels in them (~30 s):
        # paid here, unreported, rather than by whichever join is measured first.
        from allpairs.engines.spark import plan

        warm = spark.read.parquet(str(corpus(args.warmup, args.seed, Path(args.cache))))
        for method in ("exact", "lsh"):
            plan(warm, args.threshold, id_col="id", tokens_col="toks", order_col="id", method=method,
                 num_perm=args.num_perm).pairs.count()
        print(f"  (warm-up on {args.warmup:,} sets done, not reported)", flush=True)
    for n in args.sizes:
        rows = run_size(spark, n, args.threshold, args, info)
        for r in rows:
            pairs = "-" if r["pairs"] is None else f"{r['pairs']:,}"
            recall = "-" if r["recall"] is None else f"{r['recall']:.4f}"
            print(f"{r['n']:>9,} {r['what']:<28} {r['wall_s']:>8.1f} {mib(r['shuffle_bytes']):>10} "
                  f"{r['longest_task_s']:>12.1f}s {mib(r['longest_task_in']):>10} {pairs:>10} {recall:>7}  "
                  f"{r.get('note', '')}", flush=True)
        print(f"  wall time over the exact join's: {ratios(rows)}; load average {os.getloadavg()[0]:.1f}", flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
