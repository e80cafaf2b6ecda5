"""Benchmark dedup and index queries on two-token sets beside the join of the same sets (issue 35, item 11).

Run from the repository root::

    python scripts/bench_two_token.py                    # 10,000, 20,000 and 50,000 sets
    python scripts/bench_two_token.py --sizes 10000      # one size

Corpus: ``n`` lines ``c u<i>`` (``--sets``): every set shares the frequent
token ``c`` and has one token of its own, so no two sets reach Jaccard 0.5
(each pair is 1/3) and the answer is empty. At t <= 0.5 a set's probing
prefix is both its tokens, so a probe that reads ``c``'s posting list reads
every set; the join never indexes ``c`` (its indexing prefix, for partners
no smaller, is one token).

Each command runs as its own process, timed from start to exit (start-up
included), with its peak resident memory from ``wait4``:

- ``join -t 0.5 --sets F --count`` (the yardstick);
- ``dedup -t 0.5 --sets F -o /dev/null``;
- ``index build -t 0.5 --sets F -o F.idx`` (not compared; printed for scale);
- ``index query F.idx --sets F -o /dev/null``.

A run of every command on 1,000 sets comes first, untimed, so that kernels
compiled on first use (a tree without the ahead-of-time build) are cached
before any timing. Each row prints wall time, peak RSS and the ratio to the join of the same
size (the target: within 5x). ``--repeat R`` takes the median of R runs,
interleaved command by command. Standard output carries only the table.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def run(argv: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (bytes) of one ``python -m allpairs`` process; exits on failure."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "allpairs", *argv, "-q"], cwd=REPO_ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"allpairs {' '.join(argv)} exited {code}: {err.decode(errors='replace').strip()}")
    return wall, usage.ru_maxrss * 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=lambda s: [int(v) for v in s.split(",")], default=[10_000, 20_000, 50_000])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--threshold", default="0.5")
    args = ap.parse_args()
    t = args.threshold
    print(f"| sets | command | wall (s) | peak RSS (MiB) | ratio to join | load (1 min) |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in [1000, *args.sizes]:  # the first, untimed: kernels compiled and cached before any timing
            sets = Path(tmp, f"two-{n}.sets")
            sets.write_text("".join(f"c u{i}\n" for i in range(n)))
            idx = Path(tmp, f"two-{n}.idx")
            commands = {
                "join": ["join", "-t", t, "--sets", str(sets), "--count"],
                "dedup": ["dedup", "-t", t, "--sets", str(sets), "-o", os.devnull],
                "index build": ["index", "build", "-t", t, "--sets", str(sets), "-o", str(idx)],
                "index query": ["index", "query", str(idx), "--sets", str(sets), "-o", os.devnull],
            }
            runs: dict[str, list[tuple[float, int]]] = {name: [] for name in commands}
            load = os.getloadavg()[0]
            for _ in range(args.repeat):
                for name, argv in commands.items():  # in order: the query needs the build's file
                    runs[name].append(run(argv))
            load_after = os.getloadavg()[0]
            if n == 1000:
                continue
            join_wall = statistics.median(w for w, _ in runs["join"])
            for name in commands:
                wall = statistics.median(w for w, _ in runs[name])
                rss = max(r for _, r in runs[name])
                ratio = "1" if name == "join" else f"{wall / join_wall:.1f}x"
                print(f"| {n:,} | {name} | {wall:.2f} | {rss / 2**20:.0f} | {ratio} | "
                      f"{load:.1f} -> {load_after:.1f} |", flush=True)


if __name__ == "__main__":
    main()
