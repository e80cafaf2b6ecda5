"""Benchmark the exact join against SetSimilaritySearch, and check they find the same pairs.

Run from the repository root::

    python scripts/bench_exact.py              # full run: about 5 minutes, most of it the peer
    python scripts/bench_exact.py --quick      # a subsample, well under a minute
    python scripts/bench_exact.py --skip-peer  # allpairs alone

Corpora: (a) the Kosarak sample's distinct sets (34,985; REFERENCE.md
section 4), (b) ``datasets.synthetic.zipf_sets(seed=0)`` (20,000 sets of about
15 tokens from 10,000, 30% planted near-duplicates). At each threshold (0.5,
0.7, 0.9) it runs ``allpairs.join`` and SetSimilaritySearch's ``all_pairs``
(installed with pip if missing) on the same lists of tokens and compares the
two sets of index pairs; it also checks a sample of allpairs' overlaps and
sizes against Python sets. Then it times the whole command
``allpairs join --sets FILE --threshold 0.5 --count`` on the distinct Kosarak
file (wall time, start-up included).

Times: ``allpairs`` is the ``allpairs.join`` call (pairs found, in arrays),
the fastest of ``--repeat`` runs, after one untimed warm-up call that loads
the compiled kernels (the machine may be shared, and one run slowed by
others); ``collect`` is reading all pairs out of the result into arrays;
``peer`` is one run of ``all_pairs`` to exhaustion (it yields its pairs as
it finds them). The ratio is peer / allpairs.

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

from _peers import ensure_installed, exit_status, log, pair_keys, setsimilaritysearch_pairs  # noqa: E402
from datasets import kosarak, synthetic  # noqa: E402

PEER = "SetSimilaritySearch"

#: --quick: every QUICK_STRIDE-th distinct Kosarak set, and the first QUICK_ZIPF Zipf sets.
QUICK_STRIDE = 7
QUICK_ZIPF = 5000

#: Pairs whose overlap and sizes are recomputed with Python sets, per run.
CHECK_SAMPLE = 2000


@dataclass
class Row:
    data: str
    sets: int
    threshold: float
    pairs: int | None = None
    allpairs_s: float | None = None
    collect_s: float | None = None
    peer_s: float | None = None
    peer_pairs: int | None = None
    same: str = "-"


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


def keys_and_sample(columns: list[np.ndarray], n: int) -> tuple[np.ndarray, list[tuple]]:
    """Sorted pair keys, and a seeded random sample of full result rows to recheck."""
    left, right = columns[0], columns[1]
    if np.any(left >= right):
        raise AssertionError("allpairs returned a pair with left >= right")
    keys = pair_keys(left, right, n)
    if len(keys) != len(left):
        raise AssertionError(f"allpairs returned {len(left) - len(keys)} pairs twice")
    pick = random.Random(0).sample(range(len(left)), min(CHECK_SAMPLE, len(left)))
    sample = [tuple(int(col[i]) for col in columns) for i in pick]
    return keys, sample


def check_sample(sets: list[list], rows: list[tuple], t: Fraction) -> list[str]:
    """Recompute overlap and sizes of sampled pairs; complaints, if any."""
    bad = []
    for left, right, overlap, left_size, right_size in rows:
        a, b = set(sets[left]), set(sets[right])
        want = (len(a & b), len(a), len(b))
        if (overlap, left_size, right_size) != want:
            bad.append(f"pair ({left}, {right}): overlap/sizes {(overlap, left_size, right_size)}, Python sets say {want}")
        elif Fraction(want[0], len(a | b)) < t:
            bad.append(f"pair ({left}, {right}): J = {Fraction(want[0], len(a | b))} < t = {t}")
    return bad


def explain(sets: list[list], keys: np.ndarray, n: int, t: Fraction, who: str, limit: int = 5) -> list[str]:
    """Exact Jaccard of a few pairs that only one side found, to say which side is wrong."""
    lines = []
    for key in keys[:limit].tolist():
        i, j = divmod(key, n)
        a, b = set(sets[i]), set(sets[j])
        jac = Fraction(len(a & b), len(a | b)) if a | b else Fraction(0)
        verdict = "a true pair" if jac >= t else "NOT a pair"
        lines.append(f"    only {who}: ({i}, {j}) J = {jac} = {float(jac):.6f} -> {verdict}")
    return lines


def run_one(name: str, sets: list[list], t: float, args, allpairs, problems: list[str]) -> Row:
    row = Row(name, len(sets), t)
    exact_t = Fraction(str(t))
    n = len(sets)
    ours = theirs = None
    if not args.skip_allpairs:
        log(f"[{name} t={t}] allpairs.join on {n} sets, best of {args.repeat} ...")
        for _ in range(args.repeat):
            start = time.perf_counter()
            result = allpairs.join(sets, threshold=t, jobs=args.jobs)
            elapsed = time.perf_counter() - start
            row.allpairs_s = elapsed if row.allpairs_s is None else min(row.allpairs_s, elapsed)
        start = time.perf_counter()
        columns = drain(result)
        row.collect_s = time.perf_counter() - start
        ours, sample = keys_and_sample(columns, n)
        row.pairs = len(ours)
        if len(result.pairs) != len(ours):
            problems.append(f"{name} t={t}: len(res.pairs) = {len(result.pairs)} but {len(ours)} pairs iterated")
        complaints = check_sample(sets, sample, exact_t)
        if complaints:
            problems.append(f"{name} t={t}: {len(complaints)} of {len(sample)} sampled pairs wrong, e.g.\n      "
                            + "\n      ".join(complaints[:3]))
    if not args.skip_peer:
        log(f"[{name} t={t}] {PEER}.all_pairs on {n} sets ...")
        start = time.perf_counter()
        theirs = setsimilaritysearch_pairs(sets, t)
        row.peer_s = time.perf_counter() - start
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
            lines = [f"{name} t={t}: MISMATCH: allpairs {len(ours)} pairs, {PEER} {len(theirs)}; "
                     f"{len(only_ours)} only in allpairs, {len(only_theirs)} only in {PEER}"]
            lines += explain(sets, only_ours, n, exact_t, "allpairs")
            lines += explain(sets, only_theirs, n, exact_t, PEER)
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
    head = ["data", "sets", "t", "pairs", "allpairs s", "collect s", f"{PEER} s", "ratio", "same pairs"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        ratio = r.peer_s / r.allpairs_s if r.peer_s is not None and r.allpairs_s else None
        cells = [r.data, f"{r.sets:,}", f"{r.threshold:g}", "-" if r.pairs is None else f"{r.pairs:,}",
                 fmt(r.allpairs_s, ".3f"), fmt(r.collect_s, ".3f"), fmt(r.peer_s), fmt(ratio, ".0f") + ("×" if ratio else ""),
                 r.same]
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
                        help="comma-separated Jaccard thresholds (default 0.5,0.7,0.9)")
    parser.add_argument("--data", default="kosarak,zipf", help="corpora to run, comma-separated (default kosarak,zipf)")
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

    allpairs = None
    if not args.skip_allpairs:
        import allpairs

        log(f"allpairs {getattr(allpairs, '__version__', '?')} from {Path(allpairs.__file__).parent}")
        start = time.perf_counter()
        allpairs.join([["a", "b"], ["a", "b", "c"], ["c"]], threshold=0.5, jobs=args.jobs)
        log(f"warm-up join (loads or compiles the kernels): {time.perf_counter() - start:.2f} s")
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
        for t in args.thresholds:
            rows.append(run_one(name, sets, t, args, allpairs, problems))

    cli_lines = []
    if not args.skip_allpairs and not args.skip_cli:
        expected = next((r.pairs for r in rows if r.data == "kosarak" and r.threshold == 0.5 and not args.quick), None)
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
