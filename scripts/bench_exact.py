"""Benchmark the exact join against SetSimilaritySearch, every measure, and check they find the same pairs.

Run from the repository root::

    python scripts/bench_exact.py --measures jaccard   # Jaccard alone: about 5 minutes, most of it the peer
    python scripts/bench_exact.py --data kosarak       # every measure on Kosarak (the peer's runs take long)
    python scripts/bench_exact.py --quick              # a subsample, a few minutes
    python scripts/bench_exact.py --skip-peer          # allpairs alone

Corpora: (a) the Kosarak sample's distinct sets (34,985; REFERENCE.md
section 4), (b) ``datasets.synthetic.zipf_sets(seed=0)`` (20,000 sets of about
15 tokens from 10,000, 30% planted near-duplicates). For each measure
(``--measures``: jaccard, cosine, dice, containment, overlap) at each
threshold (0.5, 0.7, 0.9; for overlap the counts of ``--overlap-k``) it runs
``allpairs.join(..., measure=...)`` and, for the measures SetSimilaritySearch
has (jaccard and cosine with its ``all_pairs``; containment, which
``all_pairs`` refuses as asymmetric, by querying a ``SearchIndex`` of all sets
with each set), the peer (installed with pip if missing) on the same lists of
tokens, and compares the two sets of index pairs (containment: ordered pairs,
contained first); it also checks a sample of allpairs' overlaps, sizes and
similarities against Python sets and Fractions. The peer runs in a forked
process stopped after ``--peer-timeout`` seconds: a run that did not finish
shows its time as "> N" and the ratio as a lower bound. Then it times the whole command
``allpairs join --sets FILE --threshold 0.5 --count`` on the distinct Kosarak
file (wall time, start-up included).

Times: ``allpairs`` is the ``allpairs.join`` call (pairs found, in arrays),
the fastest of ``--repeat`` runs (wall time; ``allpairs CPU`` the least CPU
time of this process over them, every thread counted), after one untimed warm-up call that loads
the compiled kernels (the machine may be shared, and one run slowed by
others); ``collect`` is reading all pairs out of the result into arrays;
``peer`` is the CPU time of one run of the peer to exhaustion (single-threaded,
so its wall time on a quiet machine; on a shared one, wall time would count
the others' load), stopped after ``--peer-timeout`` seconds of wall time. The
ratio is peer / allpairs (wall); the CPU ratio divides CPU times, which a
shared machine disturbs far less.

Standard output carries only the table; progress goes to standard error.
Exit status: 0 when every comparison agreed, 1 on any mismatch (or failure),
2 on bad options.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # this repo's `datasets`, not the PyPI package of that name
sys.path.insert(1, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from _peers import (SETSIMILARITYSEARCH_MEASURES, directed_keys, ensure_installed, exit_status, log,  # noqa: E402
                    pair_keys, run_with_timeout, setsimilaritysearch_pairs)
from datasets import kosarak, synthetic  # noqa: E402

PEER = "SetSimilaritySearch"

#: --quick: every QUICK_STRIDE-th distinct Kosarak set, and the first QUICK_ZIPF Zipf sets.
QUICK_STRIDE = 7
QUICK_ZIPF = 5000

#: Pairs whose overlap and sizes are recomputed with Python sets, per run.
CHECK_SAMPLE = 2000


MEASURES = ("jaccard", "cosine", "dice", "containment", "overlap")


@dataclass
class Row:
    data: str
    measure: str
    sets: int
    threshold: float
    pairs: int | None = None
    allpairs_s: float | None = None
    allpairs_cpu: float | None = None
    collect_s: float | None = None
    peer_s: float | None = None
    peer_pairs: int | None = None
    same: str = "-"
    peer_timeout: float | None = None


def load(quick: bool, which: list[str]) -> dict[str, list[list]]:
    corpora = {}
    if "kosarak" in which:
        try:
            sets = kosarak.kosarak_sets(distinct=True)
        except FileNotFoundError as exc:
            log(f"skipping Kosarak: {exc}")
        else:
            corpora["kosarak"] = sets[::QUICK_STRIDE] if quick else sets
    if "zipf" in which:
        corpora["zipf"] = synthetic.zipf_sets(n=QUICK_ZIPF if quick else 20000, seed=0)
    return corpora


def drain(result) -> list[np.ndarray]:
    """All pairs of a join result as five arrays: left, right, overlap, left_size, right_size."""
    pairs = result.pairs
    if hasattr(pairs, "chunks"):  # the array fast path of allpairs.pairs.Pairs
        parts = [(c.left, c.right, c.overlap, c.left_size, c.right_size) for c in pairs.chunks()]
    else:  # the documented API: an iterable of (left, right, overlap, left_size, right_size)
        rows = list(pairs)
        parts = [tuple(zip(*rows))] if rows else []
    if not parts:
        return [np.empty(0, np.int64) for _ in range(5)]
    return [np.concatenate([np.asarray(p[k], dtype=np.int64) for p in parts]) for k in range(5)]


def keys_and_sample(columns: list[np.ndarray], n: int, directed: bool) -> tuple[np.ndarray, list[tuple]]:
    """Sorted pair keys, and a seeded random sample of full result rows to recheck."""
    left, right = columns[0], columns[1]
    if directed:
        if np.any(left == right):
            raise AssertionError("allpairs returned a document paired with itself")
        keys = directed_keys(left, right, n)
    else:
        if np.any(left >= right):
            raise AssertionError("allpairs returned a pair with left >= right")
        keys = pair_keys(left, right, n)
    if len(keys) != len(left):
        raise AssertionError(f"allpairs returned {len(left) - len(keys)} pairs twice")
    pick = random.Random(0).sample(range(len(left)), min(CHECK_SAMPLE, len(left)))
    sample = [tuple(int(col[i]) for col in columns) for i in pick]
    return keys, sample


def meets(measure: str, o: int, x: int, y: int, t: Fraction) -> tuple[bool, str]:
    """Whether sets of sizes x, y sharing o tokens reach t (decided in Fractions), and the value shown."""
    if measure == "cosine":  # o / sqrt(xy) >= t  iff  o^2 / (xy) >= t^2
        return Fraction(o * o, x * y) >= t * t, f"cos = {o}/sqrt({x * y}) = {o / (x * y) ** 0.5:.6f}"
    value = {"jaccard": lambda: Fraction(o, x + y - o), "dice": lambda: Fraction(2 * o, x + y),
             "containment": lambda: Fraction(o, x), "overlap": lambda: Fraction(o)}[measure]()
    return value >= t, f"{measure} = {value} = {float(value):.6f}"


def check_sample(sets: list[list], rows: list[tuple], t: Fraction, measure: str) -> list[str]:
    """Recompute overlap and sizes of sampled pairs; complaints, if any."""
    bad = []
    for left, right, overlap, left_size, right_size in rows:
        a, b = set(sets[left]), set(sets[right])
        want = (len(a & b), len(a), len(b))
        ok, shown = meets(measure, *want, t)
        if (overlap, left_size, right_size) != want:
            bad.append(f"pair ({left}, {right}): overlap/sizes {(overlap, left_size, right_size)}, Python sets say {want}")
        elif not ok:
            bad.append(f"pair ({left}, {right}): {shown} < t = {t}")
    return bad


def explain(sets: list[list], keys: np.ndarray, n: int, t: Fraction, who: str, measure: str,
            limit: int = 5) -> list[str]:
    """The exact similarity of a few pairs that only one side found, to say which side is wrong."""
    lines = []
    for key in keys[:limit].tolist():
        i, j = divmod(key, n)
        a, b = set(sets[i]), set(sets[j])
        ok, shown = meets(measure, len(a & b), len(a), len(b), t) if a and b else (False, "an empty set")
        verdict = "a true pair" if ok else "NOT a pair"
        lines.append(f"    only {who}: ({i}, {j}) {shown} -> {verdict}")
    return lines


def run_one(name: str, sets: list[list], measure: str, t: float, args, allpairs, problems: list[str]) -> Row:
    row = Row(name, measure, len(sets), t)
    exact_t = Fraction(str(t))
    n = len(sets)
    directed = measure == "containment"
    label = f"{name} {measure} t={t:g}"
    ours = theirs = None
    if not args.skip_allpairs:
        log(f"[{label}] allpairs.join on {n} sets, best of {args.repeat} ...")
        threshold = int(t) if measure == "overlap" else t
        for _ in range(args.repeat):
            start, cpu = time.perf_counter(), time.process_time()
            result = allpairs.join(sets, threshold=threshold, measure=measure, jobs=args.jobs)
            elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
            row.allpairs_s = elapsed if row.allpairs_s is None else min(row.allpairs_s, elapsed)
            row.allpairs_cpu = cpu if row.allpairs_cpu is None else min(row.allpairs_cpu, cpu)
        start = time.perf_counter()
        columns = drain(result)
        row.collect_s = time.perf_counter() - start
        ours, sample = keys_and_sample(columns, n, directed)
        row.pairs = len(ours)
        if len(result.pairs) != len(ours):
            problems.append(f"{label}: len(res.pairs) = {len(result.pairs)} but {len(ours)} pairs iterated")
        complaints = check_sample(sets, sample, exact_t, measure)
        if complaints:
            problems.append(f"{label}: {len(complaints)} of {len(sample)} sampled pairs wrong, e.g.\n      "
                            + "\n      ".join(complaints[:3]))
        del result, columns
    if not args.skip_peer and measure in SETSIMILARITYSEARCH_MEASURES:
        log(f"[{label}] {PEER} on {n} sets (stopped after {args.peer_timeout:g} s) ...")
        theirs, row.peer_s, status = run_with_timeout(setsimilaritysearch_pairs, (sets, t, measure),
                                                      args.peer_timeout)
        if status == "timeout":  # peer_s: the CPU time it had used when stopped, a lower bound
            row.peer_timeout = args.peer_timeout
            log(f"[{label}] {PEER} did not finish within {args.peer_timeout:g} s")
        elif status != "ok":
            problems.append(f"{label}: {PEER} {status}")
        else:
            row.peer_pairs = len(theirs)
            if row.pairs is None:
                row.pairs = len(theirs)
    if ours is not None and theirs is not None:
        if np.array_equal(ours, theirs):
            row.same = "yes"
        else:
            row.same = "NO"
            only_ours = np.setdiff1d(ours, theirs, assume_unique=True)
            only_theirs = np.setdiff1d(theirs, ours, assume_unique=True)
            lines = [f"{label}: MISMATCH: allpairs {len(ours)} pairs, {PEER} {len(theirs)}; "
                     f"{len(only_ours)} only in allpairs, {len(only_theirs)} only in {PEER}"]
            lines += explain(sets, only_ours, n, exact_t, "allpairs", measure)
            lines += explain(sets, only_theirs, n, exact_t, PEER, measure)
            problems.append("\n".join(lines))
            log("\n".join(lines))
    return row


def allpairs_command() -> list[str]:
    """The installed ``allpairs`` command of this Python, else ``python -m allpairs``."""
    beside = Path(sys.executable).parent / "allpairs"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("allpairs")
    return [found] if found else [sys.executable, "-m", "allpairs"]


def time_cli(repeats: int, jobs: int | None, expected: int | None, problems: list[str]) -> list[str]:
    """Wall time of the whole ``allpairs join --sets FILE --threshold 0.5 --count`` run."""
    try:
        kosarak.kosarak_path()
    except FileNotFoundError as exc:
        return [f"CLI timing skipped: {exc}"]
    lines = []
    with tempfile.TemporaryDirectory(prefix="allpairs-bench-") as tmp:
        path = kosarak.write_distinct(Path(tmp) / "kosarak-distinct.sets")
        cmd = allpairs_command() + ["join", "--sets", str(path), "--threshold", "0.5", "--count"]
        if jobs is not None:
            cmd += ["--jobs", str(jobs)]
        shown = " ".join(["allpairs"] + cmd[len(allpairs_command()):]).replace(str(path), "kosarak-distinct.sets")
        for k in range(repeats):
            log(f"[cli] {shown} (run {k + 1} of {repeats}) ...")
            start = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True)
            wall = time.perf_counter() - start
            if proc.returncode != 0:
                problems.append(f"CLI exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
                lines.append(f"`{shown}`: exit status {proc.returncode}")
                break
            out = proc.stdout.strip()
            lines.append(f"`{shown}`: run {k + 1}: {wall:.2f} s wall, printed {out}")
            if expected is not None and out != str(expected):
                problems.append(f"CLI printed {out!r}, allpairs.join found {expected} pairs")
    return lines


def fmt(x: float | None, spec: str = ".2f") -> str:
    return "-" if x is None else format(x, spec)


def table(rows: list[Row]) -> str:
    head = ["data", "measure", "sets", "t", "pairs", "allpairs s", "allpairs CPU s", "collect s", f"{PEER} CPU s",
            "ratio", "CPU ratio", "same pairs"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        ratio = r.peer_s / r.allpairs_s if r.peer_s is not None and r.allpairs_s and r.peer_timeout is None else None
        cpu_ratio = r.peer_s / r.allpairs_cpu if r.peer_s is not None and r.allpairs_cpu else None
        peer, shown_ratio = fmt(r.peer_s), fmt(ratio, ".0f") + ("×" if ratio else "")
        shown_cpu_ratio = fmt(cpu_ratio, ".0f") + ("×" if cpu_ratio else "")
        if r.peer_timeout is not None:  # did not finish: its times and the ratios are lower bounds
            peer = f"> {r.peer_timeout:g} wall" + (f", > {r.peer_s:.0f} CPU" if r.peer_s is not None else "")
            shown_ratio = f"> {r.peer_timeout / r.allpairs_s:.0f}×" if r.allpairs_s else "-"
            shown_cpu_ratio = "> " + shown_cpu_ratio if cpu_ratio else "-"
        elif r.measure not in SETSIMILARITYSEARCH_MEASURES:
            peer = "n/a"
        t = f"k = {r.threshold:g}" if r.measure == "overlap" else f"{r.threshold:g}"
        cells = [r.data, r.measure, f"{r.sets:,}", t, "-" if r.pairs is None else f"{r.pairs:,}",
                 fmt(r.allpairs_s, ".3f"), fmt(r.allpairs_cpu, ".3f"), fmt(r.collect_s, ".3f"), peer, shown_ratio,
                 shown_cpu_ratio, r.same]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def parse_thresholds(text: str) -> list[float]:
    values = [float(v) for v in text.replace(",", " ").split()]
    for v in values:
        if not 0 < v <= 1:
            raise argparse.ArgumentTypeError(f"threshold {v} is outside (0, 1]")
    if not values:
        raise argparse.ArgumentTypeError("no threshold given")
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python scripts/bench_exact.py",
        description="allpairs beside SetSimilaritySearch on Kosarak (distinct) and Zipf(seed=0): same pairs? how fast?",
    )
    parser.add_argument("--quick", action="store_true",
                        help=f"subsample: every {QUICK_STRIDE}th distinct Kosarak set, the first {QUICK_ZIPF} Zipf sets")
    parser.add_argument("--thresholds", type=parse_thresholds, default=[0.5, 0.7, 0.9],
                        help="comma-separated thresholds of every measure but overlap (default 0.5,0.7,0.9)")
    parser.add_argument("--data", default="kosarak,zipf", help="corpora to run, comma-separated (default kosarak,zipf)")
    parser.add_argument("--measures", default=",".join(MEASURES),
                        help=f"measures to run, comma-separated (default {','.join(MEASURES)})")
    parser.add_argument("--overlap-k", default="5,10,20",
                        help="overlap thresholds (whole numbers of common tokens), comma-separated (default 5,10,20)")
    parser.add_argument("--peer-timeout", type=float, default=1800,
                        help=f"stop a {PEER} run after this many seconds and report a lower bound (default 1800)")
    parser.add_argument("--jobs", type=int, default=None, help="allpairs threads (default: all cores)")
    parser.add_argument("--skip-peer", action="store_true", help=f"do not run (or install) {PEER}")
    parser.add_argument("--skip-allpairs", action="store_true", help="do not run allpairs (the peer alone)")
    parser.add_argument("--skip-cli", action="store_true", help="do not time the allpairs command")
    parser.add_argument("--repeat", type=int, default=3,
                        help="allpairs runs per cell, the fastest reported (default 3; the peer runs once)")
    parser.add_argument("--cli-repeats", type=int, default=2, help="runs of the timed command (default 2)")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.cli_repeats < 0:
        parser.error("--repeat must be at least 1 and --cli-repeats at least 0")
    which = [w.strip() for w in args.data.split(",") if w.strip()]
    unknown = set(which) - {"kosarak", "zipf"}
    if unknown:
        parser.error(f"unknown corpus {sorted(unknown)}; choose from kosarak, zipf")
    measures = [m.strip() for m in args.measures.split(",") if m.strip()]
    if set(measures) - set(MEASURES) or not measures:
        parser.error(f"unknown measure in {args.measures!r}; choose from {', '.join(MEASURES)}")
    try:
        overlap_k = [int(k) for k in args.overlap_k.split(",") if k.strip()]
    except ValueError:
        parser.error(f"--overlap-k {args.overlap_k!r}: give whole numbers, e.g. 5,10,20")
    if any(k < 1 for k in overlap_k):
        parser.error("--overlap-k: every count must be at least 1")

    allpairs = None
    if not args.skip_allpairs:
        import allpairs

        log(f"allpairs {getattr(allpairs, '__version__', '?')} from {Path(allpairs.__file__).parent}")
        start = time.perf_counter()
        for m in measures:
            drain(allpairs.join([["a", "b"], ["a", "b", "c"], ["c"]], threshold=1 if m == "overlap" else 0.5,
                                measure=m, jobs=args.jobs))
        log(f"warm-up joins (load or compile the kernels): {time.perf_counter() - start:.2f} s")
    if not args.skip_peer:
        try:
            ensure_installed(PEER, PEER)
        except (subprocess.CalledProcessError, ImportError) as exc:
            log(f"cannot install {PEER} ({exc}); run with --skip-peer to benchmark allpairs alone")
            return 1

    corpora = load(args.quick, which)
    problems: list[str] = []
    rows = []
    for name, sets in corpora.items():
        for measure in measures:
            for t in (overlap_k if measure == "overlap" else args.thresholds):
                rows.append(run_one(name, sets, measure, t, args, allpairs, problems))

    cli_lines = []
    if not args.skip_allpairs and not args.skip_cli:
        expected = next((r.pairs for r in rows if r.data == "kosarak" and r.measure == "jaccard" and r.threshold == 0.5
                         and not args.quick), None)
        cli_lines = time_cli(args.cli_repeats, args.jobs, expected, problems)

    print(f"cores: {os.cpu_count()}, python {sys.version.split()[0]}, quick: {args.quick}")
    print()
    print(table(rows))
    if cli_lines:
        print()
        print("\n".join(cli_lines))
    return exit_status(problems)


if __name__ == "__main__":
    sys.exit(main())
