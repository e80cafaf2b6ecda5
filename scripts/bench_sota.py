"""Benchmark allpairs' exact join against set_sim_join (Mann, Augsten, Bouros, PVLDB 2016), the same files.

Run from the repository root::

    python scripts/bench_sota.py                        # every workload, t = 0.5 0.7 0.9, 3 runs each
    python scripts/bench_sota.py --only kosarak-distinct --thresholds 0.5 --repeat 5
    python scripts/bench_sota.py --statistics           # also candidate counts of set_sim_join
    python scripts/bench_sota.py --cache --only licences kosarak-distinct --thresholds 0.5   # cache misses, faults

set_sim_join is built once by ``../shared/tools/build_set_sim_join.sh`` into
``--ssj`` (default ``/tmp/set_sim_join``; GPL-3, a benchmark anchor only,
never part of allpairs). Each workload is one ``--sets`` file, turned once
into set_sim_join's integer format by its ``intify``. Then, for each
threshold, ``--repeat`` rounds, each running in turn:

* set_sim_join's ``allpairs``, ``ppjoin``, ``ppjoin --mpjoin`` and
  ``groupjoin`` on the integer file (``--timings``): its join step is
  ``algoPrepRecs + algoindex + algojoin``;
* allpairs' join stage, in a fresh process per run, for each ``--jobs``
  value: the file is read and ordered, then ``allpairs.join`` is timed by its
  own stage clock (``stats.seconds["join"]``: index, probe, verify, the
  pairs' count), with the candidates it verified;
* whole processes on the ``--sets`` file: set_sim_join ``--whitespace`` with
  the algorithm whose join step was fastest in the first round, and
  ``allpairs join --sets FILE -t T --count -q`` (one thread and the default).

With ``--counts`` the same join steps are also counted in instructions,
which load does not move (valgrind's callgrind, Debian's ``valgrind``): allpairs'
join stage (one thread, numba's kernels loaded before the count starts) is
wrapped in a small C function that switches callgrind's instrumentation on and
off around it (``callgrind.h`` client requests: the start-up runs
uninstrumented), every threshold in one process; each set_sim_join algorithm
runs under callgrind collecting inside its ``preparerecords``, ``doindex`` and
``dojoin`` only. Decide a kernel change on these, confirm on the medians.

With ``--cache`` (allpairs only, no timed rounds) the join stage, isolated as
``--counts`` isolates it but with the installed (compiled) kernels, runs under
callgrind's cache simulator (``--cache-sim=yes``, the simulator of
cachegrind, whose valgrind 3.19 has no client requests to isolate a stage):
instructions, data reads, level-1 data misses and last-level misses, the
last level set to a core's 1 MiB level-2 cache (:data:`CACHE_SIM`); then,
uninstrumented, the same stage's minor page faults (``getrusage``), wall and CPU
time. Simulated misses, like instructions, do not move with load.

With ``--statistics`` the stat-counting build of set_sim_join (target
``set_sim_join``, built beside the other) is run once per algorithm and
threshold for its ``candidatesVerify`` and ``indexEntriesSeen``.

allpairs' processes run with their bytecode cached (``PYTHONPYCACHEPREFIX``
in the temporary folder, whatever ``PYTHONDONTWRITEBYTECODE`` says), as an
installed package does; one untimed run per workload writes it. Every
figure is a median of the rounds; the load average is printed beside
each workload (the machine may be shared: interleaved rounds keep both sides
under the same load; compare ratios). Pair counts must agree: a difference
is reported (set_sim_join's bounds are in floating point; allpairs' are
exact integers, checked against a brute-force oracle by the test suite).

Workloads: ``licences`` (35,000 licence texts and near-copies as word:3
shingle sets, :mod:`datasets.licences`: many near-duplicate documents),
``kosarak-distinct`` (34,985 distinct Kosarak transactions),
``long-sets`` (this Python's standard library, ``*.py`` files as word:3
shingle sets written by ``allpairs sets``: ~1,800 sets of thousands of
tokens), ``go-sets`` (the Go 1.27.3 tree as code:5 sets), ``zipf-1m``
(1 M synthetic sets, :func:`datasets.synthetic.zipf_sets` preset
``social-1m``, generated once into the cache folder). Standard output
carries only the tables; progress goes to standard error.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # this repo's `datasets`, not the PyPI package of that name
sys.path.insert(1, str(Path(__file__).resolve().parent))

from _peers import exit_status, log  # noqa: E402
from bench_front import allpairs_command, measure, sets_file  # noqa: E402

#: The build script of the shared tools, beside the repository (or beside a worktree's parent folder).
BUILD = next((p for p in (REPO_ROOT.parent / "shared", REPO_ROOT.parents[1] / "shared") if p.is_dir()),
             REPO_ROOT.parent / "shared") / "tools" / "build_set_sim_join.sh"
ALGORITHMS = {"allpairs": ["allpairs"], "ppjoin": ["ppjoin"], "mpjoin": ["ppjoin", "--mpjoin"],
              "groupjoin": ["groupjoin"]}
JOIN_STEP = ("algoPrepRecs", "algoindex", "algojoin")
WORKLOADS = ("licences", "kosarak-distinct", "long-sets", "go-sets", "zipf-1m")
#: Counted by ``--counts``: set_sim_join's join step, as its ``--timings`` splits it.
SSJ_STEPS = ("*::preparerecords*", "*::doindex*", "*::dojoin*")
#: The C function that switches callgrind on around allpairs' join stage (``--counts``).
REGION_C = r"""
#include <valgrind/callgrind.h>
void counted_region(void (*stage)(void), const char *label) {
    CALLGRIND_START_INSTRUMENTATION;
    CALLGRIND_ZERO_STATS;
    stage();
    CALLGRIND_DUMP_STATS_AT(label);
    CALLGRIND_STOP_INSTRUMENTATION;
}
"""


def build_ssj(folder: Path, stat: bool) -> tuple[Path, Path, Path | None]:
    """set_sim_join (no statistics), its intify, and with ``stat`` the build that counts candidates."""
    exe = Path(subprocess.run(["bash", str(BUILD), str(folder)], check=True, capture_output=True,
                              text=True).stdout.split()[-1])
    stat_exe = None
    if stat:
        stat_exe = folder / "build" / "set_sim_join"
        if not stat_exe.exists():
            log(f"building set_sim_join with statistics in {folder / 'build'} ...")
            subprocess.run(["make", "-C", str(folder / "build"), "-j2", "set_sim_join"], check=True,
                           stdout=subprocess.DEVNULL)
    return exe, folder / "intify", stat_exe


def workload_file(name: str, folder: Path) -> Path:
    if name == "licences":
        text, path = folder / "licences.txt", folder / "licences.sets"
        measure([sys.executable, "-m", "datasets.licences", "-o", str(text)], {"PYTHONPATH": str(REPO_ROOT)})
        measure(allpairs_command() + ["sets", "--lines", str(text), "-s", "word:3", "-o", str(path), "-q"])
        return path
    if name != "long-sets":
        return sets_file(name, folder)
    path = folder / "long.sets"
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    measure(allpairs_command() + ["sets", "-q", "-s", "word:3", "--include", "*.py", "--exclude", "site-packages/**",
                                 str(stdlib), "-o", str(path)])
    return path


def ssj_figures(text: str) -> tuple[int, dict[str, float]]:
    """Pairs and the timings (ms) printed by ``set_sim_join --timings``."""
    pairs = int(re.search(r"Result pair count: (\d+)", text).group(1))
    timings = {k: float(v) for k, v in re.findall(r"^\s*(\w+)\s+([\d.]+)\s*(?:ms)?\s*$", text.split("Timings:")[-1],
                                                   re.M)}
    return pairs, timings


def ssj_statistics(text: str) -> dict[str, int]:
    return {k: int(v) for k, v in re.findall(r"^\s*(\w+)\s+(\d+)\s*$", text.split("Statistics:", 1)[-1], re.M)}


def join_stage(path: str, threshold: str, jobs: int) -> None:
    """Child process: read and order ``path``, then time allpairs' join stage; print JSON to stdout."""
    import allpairs
    from allpairs.corpus.read import read_sets
    from allpairs.pipeline import run
    corpus = read_sets(path)
    # The join stage's user and system CPU and minor page faults, beside its clock: the pipeline's stage timer
    # wrapped, in this process only. On a VM whose host takes idle memory back, faults move the system time,
    # not the user time (scripts/bench_growth.py).
    usage = dict.fromkeys(("user", "sys", "minflt"), 0)
    stage_timer = run.timed

    @contextmanager
    def timed(stats, stage):
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        with stage_timer(stats, stage):
            yield
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        if stage == "join":
            usage["user"] += r1.ru_utime - r0.ru_utime
            usage["sys"] += r1.ru_stime - r0.ru_stime
            usage["minflt"] += r1.ru_minflt - r0.ru_minflt

    run.timed = timed
    t0 = time.process_time()
    res = allpairs.join(corpus, threshold, jobs=jobs)
    s = res.stats
    print(json.dumps({"join": s.seconds["join"], "cpu": time.process_time() - t0, "candidates": s.candidates,
                      "pairs": s.pairs, "peak": s.peak_memory, **usage}))


def at_threshold(path: str, threshold: str) -> None:
    """Child process: how many of allpairs' pairs of ``path`` are at exactly J = ``threshold`` (integer
    arithmetic on each pair's overlap and sizes); printed to stdout. set_sim_join compares doubles, so a pair at
    exactly the threshold (J = 9/10 at t = 0.9) can fall below it there: a lower count of exactly this many
    pairs is that, not a missed or invented pair."""
    from fractions import Fraction

    import pyarrow.compute as pc

    import allpairs
    from allpairs.corpus.read import read_sets

    t = Fraction(threshold)
    table = allpairs.join(read_sets(path), threshold, jobs=1).pairs.to_arrow()
    overlap = pc.cast(table["overlap"], "int64")
    union = pc.subtract(pc.add(pc.cast(table["left_size"], "int64"), pc.cast(table["right_size"], "int64")), overlap)
    exact = pc.equal(pc.multiply(overlap, t.denominator), pc.multiply(union, t.numerator))
    print(pc.sum(pc.cast(exact, "int64")).as_py() or 0)


def count_stage(region: str, path: str, thresholds: list[str]) -> None:
    """Child process under callgrind: allpairs' join stage at each threshold, counted between the client
    requests of ``region`` (a shared object built from :data:`REGION_C`); its figures as JSON lines."""
    import ctypes

    from allpairs.corpus.read import read_sets
    from allpairs.exact import prefix_join
    from allpairs.measures import MEASURES, Threshold
    from allpairs.pipeline.exact_path import exact_pairs
    from allpairs.pipeline.front import shingle_corpus
    from allpairs.pipeline.stats import Stats
    from allpairs.verify._kernel import bitmaps

    counted_region = ctypes.CDLL(region).counted_region
    sets, _ = shingle_corpus(read_sets(path), None, normalize=True, min_shingles=1, stats=Stats(), progress=None,
                             ranked=True, jobs=1)
    for t in thresholds:
        th = Threshold.parse(t)
        k = min(100, sets.num_sets)  # every kernel of the path loaded (from numba's cache) before the count
        prefix_join(sets.indptr[:k + 1], sets.tokens[:sets.indptr[k]], sets.num_tokens, th, jobs=1)
        bitmaps(sets.indptr[:k + 1], sets.tokens[:sets.indptr[k]])  # a small join may leave the signatures out
        load_probe_variants()  # a small join uses one of the probe's two (a large one may use the other)
        # The whole stage once, uncounted: a kernel only this input reaches (duplicate sets expanded, a buffer
        # grown) would otherwise load inside the first threshold's count (0.8 G instructions on the licences).
        exact_pairs(sets, th, MEASURES["jaccard"], jobs=1)
        got = {}

        @ctypes.CFUNCTYPE(None)
        def stage():
            pairs, candidates = exact_pairs(sets, th, MEASURES["jaccard"], jobs=1)
            got.update(pairs=len(pairs), candidates=candidates)

        counted_region(stage, f"t={t}".encode())
        print(json.dumps({"t": t, **got}), flush=True)


def load_probe_variants() -> None:
    """Both variants of the join's probe (signatures in the postings or not) compiled or loaded by numba,
    each called once on no probe sets, so that neither is loaded inside a counted region. Its arguments are
    given by name (the probe's own parameters), so that a checkout whose probe takes other ones is counted too."""
    import inspect

    import numpy as np

    from allpairs.exact._kernel import probe_verify

    i32, i64 = np.empty(0, np.int32), np.empty(0, np.int64)
    given = dict(indptr=np.zeros(1, np.int64), tokens=i32, list_ptr=np.zeros(1, np.int64), post_set=i32, post_pos=i32,
                 post_xmax=i32, post_size=i32, bits=np.empty(0, np.uint64), at=i32, live_len=i64, probe_len=i64,
                 win_lo=i64, win_hi=i64, stop_ptr=np.zeros(1, np.int64), stop_of=i64, by_position=True, set_class=i32,
                 compat=np.ones((1, 1), np.bool_), n_classes=1, code=0,
                 p=1, q=2, lo=0, hi=0, state=np.zeros((0, 4), np.int32), touched=i32, front=np.zeros(1, np.int32), marks=np.empty(0, np.uint64), alpha_of=i32, alpha_at=i64,
                 out_x=np.empty(1, np.int32), out_y=np.empty(1, np.int32), out_a=np.empty(1, np.int32), n_out=0,
                 post=i64)
    names = list(inspect.signature(probe_verify.py_func).parameters)
    # A probe that reads ``post`` takes its signatures as records of size and halves (uint32, 3 a posting).
    posted = np.empty((0, 3), np.uint32) if "post" in names else np.empty(0, np.uint64)
    for post_bits in (posted, None):
        probe_verify(*[{**given, "post_bits": post_bits}[k] for k in names])


def fault_stage(path: str, thresholds: list[str]) -> None:
    """Child process: allpairs' join stage at each threshold, isolated as :func:`count_stage` isolates it, with
    its wall time, its thread's CPU time (less moved than wall time by a loaded machine, where a process waits
    for a core) and the minor page faults it took (``getrusage``); its figures as JSON lines."""
    import resource

    from allpairs.corpus.read import read_sets
    from allpairs.exact import prefix_join
    from allpairs.measures import MEASURES, Threshold
    from allpairs.pipeline.exact_path import exact_pairs
    from allpairs.pipeline.front import shingle_corpus
    from allpairs.pipeline.stats import Stats
    from allpairs.verify._kernel import bitmaps

    sets, _ = shingle_corpus(read_sets(path), None, normalize=True, min_shingles=1, stats=Stats(), progress=None,
                             ranked=True, jobs=1)
    for t in thresholds:
        th = Threshold.parse(t)
        k = min(100, sets.num_sets)
        prefix_join(sets.indptr[:k + 1], sets.tokens[:sets.indptr[k]], sets.num_tokens, th, jobs=1)
        bitmaps(sets.indptr[:k + 1], sets.tokens[:sets.indptr[k]])
        before = resource.getrusage(resource.RUSAGE_SELF)
        t0, c0 = time.perf_counter(), time.thread_time()
        pairs, candidates = exact_pairs(sets, th, MEASURES["jaccard"], jobs=1)
        wall, cpu = time.perf_counter() - t0, time.thread_time() - c0
        after = resource.getrusage(resource.RUSAGE_SELF)
        print(json.dumps({"t": t, "pairs": len(pairs), "candidates": candidates, "wall": wall, "cpu": cpu,
                          "minflt": after.ru_minflt - before.ru_minflt, "majflt": after.ru_majflt - before.ru_majflt}),
              flush=True)


def callgrind_events(prefix: Path) -> dict[str, dict[str, int]]:
    """Every event of each callgrind dump ``prefix*`` (``Ir``; with ``--cache-sim=yes`` also ``D1mr``, ``DLmr``
    ...) by its trigger (a client request's label, or the end)."""
    out = {}
    for dump in sorted(prefix.parent.glob(prefix.name + "*")):
        text = dump.read_text(errors="replace")
        trigger = re.search(r"^desc: Trigger: (?:Client Request: )?(.*)$", text, re.M)
        events = re.search(r"^events: (.*)$", text, re.M)
        summary = re.search(r"^summary: ([\d ]+)$", text, re.M)
        if trigger and events and summary:
            out[trigger.group(1).strip()] = dict(zip(events.group(1).split(), map(int, summary.group(1).split())))
        dump.unlink()
    return out


def callgrind_dumps(prefix: Path) -> dict[str, int]:
    """Instructions of each callgrind dump ``prefix*`` by its trigger (a client request's label, or the end)."""
    return {k: v["Ir"] for k, v in callgrind_events(prefix).items()}


def count_workload(name: str, path: Path, raw: Path, exe: Path, thresholds: list[str], folder: Path,
                   env: dict[str, str]) -> dict[str, dict[str, tuple]]:
    """Instructions (pairs, candidates where known) of allpairs' join stage and each set_sim_join join step, per threshold."""
    region = folder / "counted_region.so"
    if not region.exists():
        source = folder / "counted_region.c"
        source.write_text(REGION_C)
        subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(region), str(source)], check=True)
    counts: dict[str, dict[str, tuple]] = {t: {} for t in thresholds}
    prefix = folder / f"{name}.callgrind"
    # numba's own cache, fresh: it keys a kernel by its own module's file only, so a kernel that inlines one
    # of another module (the probe and verify's merge) would be loaded as it was before that module changed.
    env = {**env, "ALLPAIRS_KERNELS": "jit", "NUMBA_CACHE_DIR": str(folder / "numba-cache")}
    # Once without valgrind first: numba compiles the kernels into its cache (under valgrind: many minutes).
    measure([sys.executable, __file__, "--join-stage", str(path), thresholds[-1], "1"], env)
    run = measure(["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={prefix}",
                   sys.executable, __file__, "--count-stage", str(region), str(path), *thresholds], env)
    dumps = callgrind_dumps(prefix)
    for line in run.out.splitlines():
        got = json.loads(line)
        counts[got["t"]]["allpairs join --jobs 1"] = (dumps[f"t={got['t']}"], got["pairs"], got["candidates"])
    for t in thresholds:
        for algo, flags in ALGORITHMS.items():
            run = measure(["valgrind", "--tool=callgrind", f"--callgrind-out-file={prefix}",
                           *(f"--toggle-collect={f}" for f in SSJ_STEPS),
                           str(exe), "--algorithm", *flags, "--threshold", t, "--input", str(raw)])
            counts[t][f"ssj {algo}"] = (sum(callgrind_dumps(prefix).values()), ssj_figures(run.out)[0], None)
        log(f"{name} t={t} counted: load {os.getloadavg()[0]:.1f}")
    return counts


def count_table(name: str, t: str, counts: dict[str, tuple], candidates: dict[str, int | None]) -> None:
    """The instruction counts of one workload and threshold; set_sim_join's candidates from ``--statistics``."""
    best = min(v[0] for k, v in counts.items() if k.startswith("ssj"))
    print(f"#### {name}, t = {t}: instructions of the join step (callgrind)")
    print()
    print("| run | instructions (M) | ratio to ssj's best | pairs | candidates | per candidate |")
    print("|---|---|---|---|---|---|")
    for label, (ir, pairs, cand) in counts.items():
        cand = candidates.get(label) if cand is None else cand
        per = f"{ir / cand:,.0f}" if cand else "-"
        print(f"| {label} | {ir / 1e6:,.1f} | {ir / best:.2f}× | {pairs:,} | {'-' if cand is None else f'{cand:,}'} "
              f"| {per} |")
    print()


#: The caches that ``--cache`` simulates: this machine's (AMD EPYC, ``lscpu``) level-1 data cache per core, and
#: its level-2 cache per core as the last level (valgrind simulates two levels; the 32 MiB level 3, shared by
#: every process on the machine, would hide what no longer fits in a core's own caches).
CACHE_SIM = ("--cache-sim=yes", "--D1=49152,12,64", "--LL=1048576,16,64")


def cache_workload(name: str, path: Path, thresholds: list[str], folder: Path, env: dict[str, str]) -> None:
    """Simulated cache misses of allpairs' join stage (callgrind ``--cache-sim=yes``, the stage isolated as
    ``--counts`` isolates it, compiled kernels) and its minor page faults and wall time, uninstrumented."""
    region = folder / "counted_region.so"
    if not region.exists():
        source = folder / "counted_region.c"
        source.write_text(REGION_C)
        subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(region), str(source)], check=True)
    prefix = folder / f"{name}.cache"
    run = measure(["valgrind", "--tool=callgrind", "--instr-atstart=no", *CACHE_SIM, f"--callgrind-out-file={prefix}",
                   sys.executable, __file__, "--count-stage", str(region), str(path), *thresholds], env)
    events = callgrind_events(prefix)
    faults = [json.loads(line) for line in
              measure([sys.executable, __file__, "--fault-stage", str(path), *thresholds], env).out.splitlines()]
    print(f"#### {name}: the join stage's simulated cache misses (callgrind {' '.join(CACHE_SIM)}), "
          f"its minor page faults and wall time (load {os.getloadavg()[0]:.1f})")
    print()
    print("| t | pairs | instructions (M) | data reads (M) | D1 misses (M) | LL misses (M) | D1 misses / 1k instr "
          "| minor faults | wall s | CPU s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for line, f in zip(run.out.splitlines(), faults):
        got = json.loads(line)
        e = events[f"t={got['t']}"]
        d1 = e["D1mr"] + e["D1mw"]
        ll = e["DLmr"] + e["DLmw"]
        print(f"| {got['t']} | {got['pairs']:,} | {e['Ir'] / 1e6:,.1f} | {e['Dr'] / 1e6:,.1f} | {d1 / 1e6:,.2f} "
              f"| {ll / 1e6:,.2f} | {1000 * d1 / e['Ir']:.2f} | {f['minflt']:,} | {f['wall']:.3f} | {f['cpu']:.3f} |")
    print()


@dataclass
class Cell:
    """Runs of one command on one workload at one threshold."""
    wall: list[float] = field(default_factory=list)  # seconds: a join step or stage, or a whole process
    peak: list[int] = field(default_factory=list)
    pairs: int | None = None
    candidates: int | None = None

    def add(self, seconds: float, peak: int = 0) -> None:
        self.wall.append(seconds)
        self.peak.append(peak)

    @property
    def median(self) -> float:
        return statistics.median(self.wall) if self.wall else float("nan")


def run_workload(name: str, path: Path, raw: Path, exes, t: str, args, env: dict[str, str],
                 problems: list[str]) -> tuple[dict, str]:
    exe, _, stat_exe = exes
    cells: dict[str, Cell] = {}
    best = None
    measure([sys.executable, __file__, "--join-stage", str(path), t, "1"], env)  # bytecode written, files cached
    for r in range(args.repeat):
        for algo, flags in ALGORITHMS.items():
            run = measure([str(exe), "--algorithm", *flags, "--threshold", t, "--input", str(raw), "--timings"])
            pairs, timings = ssj_figures(run.out)
            cell = cells.setdefault(f"ssj {algo}", Cell())
            cell.add(sum(timings.get(k, 0.0) for k in JOIN_STEP) / 1000, run.peak)
            cell.pairs = pairs
        for jobs in args.jobs:
            run = measure([sys.executable, __file__, "--join-stage", str(path), t, str(jobs)], env)
            got = json.loads(run.out)
            cell = cells.setdefault(f"allpairs join --jobs {jobs}", Cell())
            cell.add(got["join"], run.peak)
            cell.pairs, cell.candidates = got["pairs"], got["candidates"]
        if best is None:
            best = min(ALGORITHMS, key=lambda a: cells[f"ssj {a}"].median)
        run = measure([str(exe), "--whitespace", "--algorithm", *ALGORITHMS[best], "--threshold", t, "--input",
                       str(path)])
        cell = cells.setdefault(f"ssj {best} --whitespace, process", Cell())
        cell.add(run.wall, run.peak)
        cell.pairs = ssj_figures(run.out)[0]
        for jobs in (1, None):
            cmd = allpairs_command() + ["join", "--sets", str(path), "-t", t, "--count", "-q"]
            run = measure(cmd + (["--jobs", str(jobs)] if jobs else []), env)
            cell = cells.setdefault(f"allpairs --sets, process, --jobs {jobs or 'default'}", Cell())
            cell.add(run.wall, run.peak)
            cell.pairs = int(run.out.split()[0])
        log(f"{name} t={t} round {r + 1}/{args.repeat}: load {os.getloadavg()[0]:.1f}")
    if stat_exe is not None:
        for algo, flags in ALGORITHMS.items():
            out = measure([str(stat_exe), "--algorithm", *flags, "--threshold", t, "--input", str(raw),
                           "--statistics"]).out
            cells[f"ssj {algo}"].candidates = ssj_statistics(out).get("candidatesVerify")
    exact = cells[f"allpairs join --jobs {args.jobs[0]}"].pairs
    at_t = None
    for label, cell in cells.items():
        if cell.pairs == exact:
            continue
        if label.startswith("ssj") and cell.pairs < exact:
            if at_t is None:
                at_t = int(measure([sys.executable, __file__, "--at-threshold", str(path), t], env).out)
            if exact - cell.pairs == at_t:
                log(f"note: {name} t={t}: {label} found {cell.pairs:,} pairs, allpairs {exact:,}: the {at_t:,} "
                    f"at exactly J = {t}, which set_sim_join's double comparison drops")
                continue
        problems.append(f"{name} t={t}: {label} found {cell.pairs:,} pairs, allpairs (exact) {exact:,}")
    return cells, best


def table(name: str, t: str, cells: dict[str, Cell], best: str, load: tuple[float, ...]) -> None:
    anchor = min(cells[f"ssj {a}"].median for a in ALGORITHMS)
    whole = cells[f"ssj {best} --whitespace, process"].median
    print(f"### {name}, t = {t} (load {', '.join(f'{x:.1f}' for x in load)} on {os.cpu_count()} cores)")
    print()
    print("| run | median s | ratio to ssj's best | pairs | candidates | peak MiB |")
    print("|---|---|---|---|---|---|")
    for label, cell in cells.items():
        ref = whole if "process" in label else anchor
        cand = "-" if cell.candidates is None else f"{cell.candidates:,}"
        print(f"| {label} | {cell.median:.3f} | {cell.median / ref:.2f}× | {cell.pairs:,} | {cand} "
              f"| {statistics.median(cell.peak) / 2**20:,.0f} |")
    print()


def main(argv: list[str] | None = None) -> int:
    if argv is None and len(sys.argv) == 5 and sys.argv[1] == "--join-stage":
        join_stage(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return 0
    if argv is None and len(sys.argv) == 4 and sys.argv[1] == "--at-threshold":
        at_threshold(sys.argv[2], sys.argv[3])
        return 0
    if argv is None and len(sys.argv) >= 5 and sys.argv[1] == "--count-stage":
        count_stage(sys.argv[2], sys.argv[3], sys.argv[4:])
        return 0
    if argv is None and len(sys.argv) >= 4 and sys.argv[1] == "--fault-stage":
        fault_stage(sys.argv[2], sys.argv[3:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="rounds of every command (default 3)")
    ap.add_argument("--only", nargs="+", choices=WORKLOADS, default=list(WORKLOADS))
    ap.add_argument("--thresholds", nargs="+", default=["0.5", "0.7", "0.9"])
    ap.add_argument("--jobs", nargs="+", type=int, default=[1, 2], help="threads of allpairs' join stage runs")
    ap.add_argument("--ssj", type=Path, default=Path("/tmp/set_sim_join"), help="set_sim_join's build folder")
    ap.add_argument("--statistics", action="store_true", help="also count set_sim_join's candidates")
    ap.add_argument("--counts", action="store_true",
                    help="also count the join steps' instructions under valgrind's callgrind (slow: minutes)")
    ap.add_argument("--counts-only", action="store_true", help="only the counts, no timed rounds")
    ap.add_argument("--cache", action="store_true",
                    help="only allpairs' join stage: simulated cache misses (callgrind), page faults, wall time")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    problems: list[str] = []
    exes = build_ssj(args.ssj, args.statistics)
    print(f"allpairs' join stage and whole process against set_sim_join, medians of {args.repeat} rounds")
    print("(ratios: join stages to set_sim_join's best join step; processes to its best --whitespace run)")
    print()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        # allpairs runs as installed: its modules' bytecode cached (here, outside the checkout).
        env = {"PYTHONPYCACHEPREFIX": str(folder / "pycache"), "PYTHONDONTWRITEBYTECODE": ""}
        for name in args.only:
            path = workload_file(name, folder)
            if args.cache:
                cache_workload(name, path, args.thresholds, folder, env)
                continue
            raw = folder / f"{name}.raw"
            subprocess.run([str(exes[1]), str(path), str(raw)], check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            cells_of = {}
            if not args.counts_only:
                for t in args.thresholds:
                    cells, best = run_workload(name, path, raw, exes, t, args, env, problems)
                    table(name, t, cells, best, os.getloadavg())
                    cells_of[t] = cells
                    sys.stdout.flush()
            if args.counts or args.counts_only:
                counts = count_workload(name, path, raw, exes[0], args.thresholds, folder, env)
                for t in args.thresholds:
                    candidates = {k: c.candidates for k, c in cells_of.get(t, {}).items()}
                    exact = counts[t]["allpairs join --jobs 1"][1]
                    problems += [f"{name} t={t}: {k} counted {v[1]:,} pairs, allpairs (exact) {exact:,}"
                                 for k, v in counts[t].items() if v[1] != exact]
                    count_table(name, t, counts[t], candidates)
                    sys.stdout.flush()
    return exit_status(problems)


if __name__ == "__main__":
    sys.exit(main())
