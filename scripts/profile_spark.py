"""Where a Spark join's time goes: its jobs, stages, seconds per stage and shuffle bytes.

Runs each input's exact join once in one SparkSession (default ``local[2]``)
and reads what it ran from the driver's status store (no UI, no event log
needed): every Spark job of the join (its job group), every stage of those
jobs with its tasks, wall seconds (submission to completion), executor
seconds and shuffle bytes written and read; and the phases the engine times
itself (``run()``'s start / plan / join); and the peak resident memory of this process's tree (the
driver's JVM, the Python workers), sampled from /proc. Inputs:

* ``tiny``: ``datasets/tiny/corpus`` through :func:`allpairs.engines.spark.run.run` (word:1, counted);
* ``go``: the Go tree (``datasets.go.find_go_src``, the shared 1.27.3 tree unpacked once), the reference
  corpus's options (``*.go`` but tests and testdata, files of at least 2048 bytes, code:5), counted;
* ``zipf:N``: N seeded Zipf sets (``scripts/bench_spark.py``'s corpus, written once as Parquet) through
  ``allpairs.spark.join(..., tokens_col=...)`` and a count of its pairs;
* ``against:ITEMS:N``: decontamination, ``bench_spark.py``'s ITEMS benchmark items against the N Zipf
  sets (``allpairs.spark.join(items, 0.8, against=..., measure="containment")``), counted.

The first input of the session pays for starting the Python workers (the
profile says so); ``--warmup`` joins a small corpus first, unreported.
Usage, from the repository root::

    .venv/bin/python scripts/profile_spark.py tiny go zipf:100000 [--master local[2]] [--stages]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))


def _ms(option) -> float | None:
    """A Scala Option[Date] as epoch milliseconds (None when undefined)."""
    return option.get().getTime() if option.isDefined() else None


def profile_group(sc, group: str) -> dict:
    """The jobs and stages Spark ran under job group ``group``, from the driver's status store."""
    store = sc._jsc.sc().statusStore()
    tracker = sc.statusTracker()
    job_ids = sorted(tracker.getJobIdsForGroup(group))
    jobs, stage_ids = [], set()
    for j in job_ids:
        data = store.job(j)
        sub, done = _ms(data.submissionTime()), _ms(data.completionTime())
        ids = [int(s) for s in tracker.getJobInfo(j).stageIds]
        stage_ids.update(ids)
        jobs.append({"job": j, "name": str(data.name()).split(" at ")[0][:40],
                     "seconds": (done - sub) / 1000 if sub and done else 0, "stages": ids, "span": (sub, done)})
    no_quantiles = sc._gateway.new_array(sc._gateway.jvm.double, 0)
    all_stages = store.stageList(None, False, False, no_quantiles, None)
    stages = []
    for k in range(all_stages.size()):
        st = all_stages.apply(k)
        if st.stageId() not in stage_ids or str(st.status()) == "SKIPPED":
            continue
        sub, done = _ms(st.submissionTime()), _ms(st.completionTime())
        tasks = store.taskList(st.stageId(), st.attemptId(), 100000)
        longest = max((tasks.apply(t).duration().get() for t in range(tasks.size())
                       if tasks.apply(t).duration().isDefined()), default=0)
        stages.append({"stage": st.stageId(), "name": str(st.name()).split(" at ")[0][:40], "tasks": st.numTasks(),
                       "longest_s": longest / 1000,
                       "seconds": (done - sub) / 1000 if sub and done else 0,
                       "executor_s": st.executorRunTime() / 1000, "jvm_cpu_s": st.executorCpuTime() / 1e9,
                       "gc_s": st.jvmGcTime() / 1000, "shuffle_write": st.shuffleWriteBytes(),
                       "shuffle_read": st.shuffleReadBytes(), "input": st.inputBytes()})
    stages.sort(key=lambda s: s["stage"])
    return {"jobs": jobs, "stages": stages}


#: With --operators: each SQL operator's time and data metrics too (the driver's SQL status store).
OPERATORS = False


def _scala_map(m) -> dict:
    """A Scala Map over py4j as a dict (keys as Python values: a Long key passed back would be an Integer)."""
    out, it = {}, m.iterator()
    while it.hasNext():
        t = it.next()
        out[t._1()] = t._2()
    return out


def operator_metrics(job_ids) -> list[tuple[int, str, str, str]]:
    """(execution, operator, metric, value) of the SQL executions that ran any of ``job_ids``: the metrics
    that name a time, a size of data or rows, where they are not zero."""
    from pyspark.sql import SparkSession

    store = SparkSession.getActiveSession()._jsparkSession.sharedState().statusStore()
    execs = store.executionsList()
    wanted = set(job_ids)
    rows = []
    for i in range(execs.size()):
        e = execs.apply(i)
        if not wanted & set(_scala_map(e.jobs())):
            continue
        values = _scala_map(store.executionMetrics(e.executionId()))
        nodes = store.planGraph(e.executionId()).allNodes()
        for k in range(nodes.size()):
            node = nodes.apply(k)
            metrics = node.metrics()
            for m in range(metrics.size()):
                metric = metrics.apply(m)
                value = values.get(metric.accumulatorId())
                name = str(metric.name())
                if value is None or not any(w in name for w in ("time", "data", "rows", "size")):
                    continue
                if str(value).split("\n")[0].strip() in ("0", "0 ms", "0.0 B", "0.0 ms"):
                    continue
                rows.append((int(e.executionId()), str(node.name()), name, " ".join(str(value).split())))
    return rows


def covered(spans) -> float:
    """Seconds covered by the union of (start, end) millisecond intervals."""
    total, end = 0, None
    for a, b in sorted(s for s in spans if s[0] and s[1]):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total / 1000


def jvm_cpu(spark) -> float | None:
    """CPU seconds (user + system) the driver's JVM has used so far, from /proc (None where it cannot be read):
    a figure that load moves far less than wall time, for comparing JVM options."""
    proc = getattr(spark.sparkContext._gateway, "proc", None)
    try:
        with open(f"/proc/{proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (AttributeError, OSError, ValueError, IndexError):
        return None


def tree_cpu(spark) -> float | None:
    """CPU seconds (user + system) of the driver's JVM and every process under it (the Python workers'
    daemon and its workers, those ended included), from /proc: with the JVM's own figure, the cost of a
    run on a machine whose load makes wall times swing (None where /proc cannot be read)."""
    proc = getattr(spark.sparkContext._gateway, "proc", None)
    if proc is None:
        return None
    tick = os.sysconf("SC_CLK_TCK")
    stats = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        stats[int(pid)] = (int(fields[1]), sum(int(x) for x in fields[11:15]))  # ppid; utime stime cutime cstime
    if proc.pid not in stats:
        return None
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0, [proc.pid]
    while todo:
        pid = todo.pop()
        total += stats[pid][1]
        todo.extend(children.get(pid, []))
    return total / tick


class PeakMemory:
    """The peak resident memory of this process and every process under it (the driver's JVM, the Python
    workers' daemon and its workers), sampled from /proc every ``interval`` seconds by a thread: the whole
    tree's peak, the largest single JVM and Python process seen, and apart this process alone (``own``: a
    local join run in it) and the tree under it (``spark``: the JVM and its workers) (``reset`` starts a new
    input)."""

    def __init__(self, interval: float = 0.25):
        import threading

        self.interval, self.page = interval, os.sysconf("SC_PAGE_SIZE")
        self.reset()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def reset(self) -> None:
        self.tree = self.jvm = self.python = self.own = self.spark = 0

    def _sample(self) -> None:
        parent, rss, comm = {}, {}, {}
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/stat") as f:
                    head, tail = f.read().rsplit(")", 1)
            except OSError:
                continue
            fields = tail.split()
            parent[int(pid)], rss[int(pid)] = int(fields[1]), int(fields[21]) * self.page
            comm[int(pid)] = head.split("(", 1)[1]
        children: dict[int, list[int]] = {}
        for pid, ppid in parent.items():
            children.setdefault(ppid, []).append(pid)
        total, todo = 0, [os.getpid()]
        while todo:
            pid = todo.pop()
            total += rss.get(pid, 0)
            if pid != os.getpid():
                if comm.get(pid) == "java":
                    self.jvm = max(self.jvm, rss.get(pid, 0))
                elif comm.get(pid, "").startswith("python"):
                    self.python = max(self.python, rss.get(pid, 0))
            todo.extend(children.get(pid, []))
        self.tree = max(self.tree, total)
        self.own = max(self.own, rss.get(os.getpid(), 0))
        self.spark = max(self.spark, total - rss.get(os.getpid(), 0))

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def line(self) -> str:
        self._sample()
        return (f"peak memory of the process tree {self.tree / 2**30:.1f} GiB (the JVM {self.jvm / 2**30:.1f} GiB, "
                f"the largest Python worker {self.python / 2**30:.1f} GiB; sampled every {self.interval} s)")


#: The sampler of the run's memory (main() starts it).
MEMORY: PeakMemory | None = None


def mib(n: int) -> str:
    return f"{n / 2**20:,.1f} MiB"


def report(name: str, wall: float, phases: dict, prof: dict, result, show_stages: bool, cpu=None,
           all_cpu=None) -> None:
    stages = prof["stages"]
    print(f"\n## {name}: {wall:.1f} s wall, {len(prof['jobs'])} jobs, {len(stages)} stages, "
          f"{sum(s['tasks'] for s in stages)} tasks, {mib(sum(s['shuffle_write'] for s in stages))} shuffled, "
          f"{sum(s['executor_s'] for s in stages):.1f} executor s, longest task "
          f"{max((s['longest_s'] for s in stages), default=0):.1f} s; result {result:,}; load average "
          f"{os.getloadavg()[0]:.1f}", flush=True)
    if MEMORY is not None:
        print(MEMORY.line())
        MEMORY.reset()
    if phases:
        print("phases: " + ", ".join(f"{k} {v:.1f} s" for k, v in phases.items()))
    if cpu is not None:
        print(f"JVM CPU {cpu:.1f} s" + ("" if all_cpu is None else
                                        f"; the JVM and its Python workers together {all_cpu:.1f} CPU s"))
    in_jobs = covered([j["span"] for j in prof["jobs"]])
    print(f"seconds with a Spark job running {in_jobs:.1f} (jobs overlap: AQE runs map stages side by side), "
          f"with none (driver, py4j, planning) {wall - in_jobs:.1f}")
    print("| job | seconds | stages | what |")
    print("|---:|---:|---|---|")
    for j in prof["jobs"]:
        print(f"| {j['job']} | {j['seconds']:.2f} | {','.join(map(str, j['stages']))} | {j['name']} |")
    if OPERATORS:
        print("| execution | operator | metric | value (total (min, med, max)) |")
        print("|---:|---|---|---|")
        for row in operator_metrics([j["job"] for j in prof["jobs"]]):
            print("| " + " | ".join(map(str, row)) + " |")
    if show_stages:
        print("| stage | tasks | seconds | executor s | JVM CPU s | GC s | longest task | shuffle written | "
              "shuffle read | what |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        for s in stages:
            print(f"| {s['stage']} | {s['tasks']} | {s['seconds']:.2f} | {s['executor_s']:.2f} | {s['jvm_cpu_s']:.2f} | "
                  f"{s['gc_s']:.2f} | {s['longest_s']:.2f} | {mib(s['shuffle_write'])} | {mib(s['shuffle_read'])} | "
                  f"{s['name']} |")
    sys.stdout.flush()


_runs = iter(range(1 << 30))


def grouped(sc, group: str, fn):
    """``fn()`` with every Spark job it starts in job group ``group`` (made unique by a number): (its result,
    wall seconds, the group)."""
    group = f"{group}#{next(_runs)}"
    sc.setJobGroup(group, group)
    t0 = time.perf_counter()
    try:
        out = fn()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    return out, time.perf_counter() - t0, group


def run_cli_input(spark, name: str, path: str, threshold: float, extra: dict, show_stages: bool) -> None:
    from allpairs.engines.spark.run import run

    cpu0, all0 = jvm_cpu(spark), tree_cpu(spark)
    res, wall, group = grouped(spark.sparkContext, name, lambda: run(path, threshold, count=True, **extra))
    cpu1, all1 = jvm_cpu(spark), tree_cpu(spark)
    report(name, wall, res.seconds, profile_group(spark.sparkContext, group), res.pairs, show_stages,
           None if cpu0 is None or cpu1 is None else cpu1 - cpu0, None if all0 is None or all1 is None else all1 - all0)


def run_zipf(spark, n: int, args) -> None:
    import allpairs.spark
    from bench_spark import corpus

    path = corpus(n, args.seed, Path(args.cache))
    name = f"zipf:{n}"

    def join():
        options = {k: int(v) for k, v in (o.split("=", 1) for o in args.option)}
        pairs = allpairs.spark.join(spark.read.parquet(str(path)), args.threshold, id_col="id", tokens_col="toks",
                                    order_col="id", **options)
        t0 = time.perf_counter()
        got = pairs.count()
        phases["join"] = time.perf_counter() - t0
        pairs.unpersist()
        return got

    phases = {}
    cpu0, all0 = jvm_cpu(spark), tree_cpu(spark)
    got, wall, group = grouped(spark.sparkContext, name, join)
    cpu1, all1 = jvm_cpu(spark), tree_cpu(spark)
    phases = {"plan": wall - phases["join"], **phases}
    report(name, wall, phases, profile_group(spark.sparkContext, group), got, args.stages,
           None if cpu0 is None or cpu1 is None else cpu1 - cpu0, None if all0 is None or all1 is None else all1 - all0)


def run_against(spark, n_items: int, n: int, args) -> None:
    import pyarrow.parquet as pq

    import allpairs.spark
    from bench_spark import benchmark_items, corpus

    path = corpus(n, args.seed, Path(args.cache))
    toks = pq.read_table(path, columns=["toks"]).column("toks").to_pylist()
    items = benchmark_items(toks, n_items, args.seed)
    del toks
    idf = spark.createDataFrame([(k, s) for k, s in enumerate(items)], "id long, toks array<long>")
    name = f"against:{n_items}:{n}"

    def join():
        pairs = allpairs.spark.join(idf, 0.8, id_col="id", tokens_col="toks", against=spark.read.parquet(str(path)),
                                    measure="containment")
        t0 = time.perf_counter()
        got = pairs.select("left", "right", "overlap").toArrow()
        phases["join"] = time.perf_counter() - t0
        pairs.unpersist()
        return got

    if args.items_broadcast is not None:
        from allpairs.engines.spark import against

        against.ITEMS_BROADCAST = args.items_broadcast
    phases = {}
    got, wall, group = grouped(spark.sparkContext, name, join)
    phases = {"plan": wall - phases["join"], **phases}
    report(name, wall, phases, profile_group(spark.sparkContext, group), got.num_rows, args.stages)
    if args.local:
        t0 = time.perf_counter()
        res = allpairs.join(items, 0.8, against=pq.read_table(path, columns=["toks"]).column("toks").to_pylist(),
                            measure="containment")
        local_s = time.perf_counter() - t0
        want = sorted((int(p[0]), int(p[1]), int(p[2])) for p in res.pairs)
        mine = sorted(zip(*(got.column(c).to_pylist() for c in ("left", "right", "overlap"))))
        print(f"local engine: {local_s:.1f} s, {len(want):,} pairs; Spark's pairs (item, document, overlap) "
              f"{'the same' if mine == want else 'DIFFER'}; load average {os.getloadavg()[0]:.1f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inputs", nargs="+", help="tiny, go, zipf:N, against:ITEMS:N")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("-t", "--threshold", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--stages", action="store_true", help="a row per stage too")
    ap.add_argument("--operators", action="store_true",
                    help="a row per SQL operator's time and data metric too (sort time, Python's time, rows)")
    ap.add_argument("--items-broadcast", type=int, default=None,
                    help="against: broadcast the items up to this many shingles (0: the shuffled plan)")
    ap.add_argument("--local", action="store_true", help="against: the local engine's pairs and time beside")
    ap.add_argument("--warmup", type=int, default=0, help="Zipf sets of an unreported first join (0: none)")
    ap.add_argument("--option", action="append", default=[], metavar="NAME=INT",
                    help="zipf: an option of allpairs.spark.join, e.g. token_groups=2 or max_group=20000")
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                    help="a Spark setting of the session (repeatable), e.g. to compare JVM options")
    ap.add_argument("--cache", default=os.path.join(__import__("tempfile").gettempdir(), "allpairs-bench-spark"))
    args = ap.parse_args()
    global OPERATORS, MEMORY
    OPERATORS = args.operators
    MEMORY = PeakMemory()
    from allpairs.engines.spark import get_session

    print(f"allpairs Spark profile on {args.master}, t = {args.threshold}; load average {os.getloadavg()[0]:.1f}"
          + "".join(f"; {c}" for c in args.conf), flush=True)
    t0 = time.perf_counter()
    conf = {"spark.driver.memory": "6g", **dict(c.split("=", 1) for c in args.conf)}
    spark = get_session(args.master, conf=conf, quiet=True)
    spark.sparkContext.setLogLevel("ERROR")
    cpu = jvm_cpu(spark)
    print(f"session started in {time.perf_counter() - t0:.1f} s"
          + ("" if cpu is None else f" (JVM CPU {cpu:.1f} s)"), flush=True)
    if args.warmup:
        run_zipf(spark, args.warmup, args)
    MEMORY.reset()
    for what in args.inputs:
        if what == "tiny":
            run_cli_input(spark, "tiny", str(ROOT / "datasets" / "tiny" / "corpus"), args.threshold,
                          {"shingle": "word:1"}, args.stages)
        elif what == "go":
            from datasets.go import find_go_src

            run_cli_input(spark, "go", str(find_go_src()), args.threshold,
                          {"include": ("*.go",), "exclude": ("*_test.go", "testdata/**"), "min_bytes": 2048,
                           "shingle": "code:5"}, args.stages)
        elif what.startswith("zipf:"):
            run_zipf(spark, int(what.split(":")[1]), args)
        elif what.startswith("against:"):
            run_against(spark, int(what.split(":")[1]), int(what.split(":")[2]), args)
        else:
            raise SystemExit(f"unknown input {what!r}: tiny, go, zipf:N or against:ITEMS:N")
    spark.stop()


if __name__ == "__main__":
    main()
