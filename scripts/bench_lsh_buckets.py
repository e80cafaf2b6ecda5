"""LSH against the exact join where buckets are huge: whole CLI runs, time and peak memory side by side.

    python scripts/bench_lsh_buckets.py [--runs 3] [--threshold 0.5]

Inputs (issue 10, item 7): 12,000 two-token sets ``a 10000`` .. ``a 21999``
(made here; every set shares ``a``, so about one set in eight lands in the same
bucket of each band), and the shared Kosarak sample when present (tiny
click-stream sets). Each is joined with ``allpairs join --sets -t T --count
-q`` by ``--method exact`` and ``--method lsh``, ``--runs`` times each in a
child process; the median wall time, CPU time (user + system) and peak
resident memory of the child (``wait4``'s rusage, what ``/usr/bin/time -v``
reports) are printed with the ratios lsh / exact. Before large buckets were
joined instead of expanded, LSH took 73 s and 3.6 GB on the first input and
100 s and 5.25 GB on the second (exact: about 1 s).
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from datasets.kosarak import kosarak_path  # noqa: E402


def allpairs_command() -> list[str]:
    """The console script beside this interpreter, else ``python -m allpairs``."""
    script = Path(sys.executable).with_name("allpairs")
    return [str(script)] if script.exists() else [sys.executable, "-m", "allpairs"]


def measure(argv: list[str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and peak RSS (bytes) of one child run."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {err.strip()}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threshold", default="0.5")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        two = Path(tmp) / "two-token.txt"
        two.write_text("".join(f"a {i}\n" for i in range(10_000, 22_000)))
        inputs = {"12,000 two-token sets": two}
        try:
            inputs["Kosarak sample"] = kosarak_path()
        except FileNotFoundError as e:
            print(f"skipped the Kosarak sample: {e}")
        cmd = allpairs_command()
        print(f"machine: {os.cpu_count()} cores (shared with other jobs: compare ratios, not seconds); "
              f"t = {args.threshold}, median of {args.runs} runs")
        for name, path in inputs.items():
            row = {}
            for method in ("exact", "lsh"):
                runs = [measure(cmd + ["join", "--sets", str(path), "-t", args.threshold, "-m", method,
                                       "--count", "-q"]) for _ in range(args.runs)]
                row[method] = [statistics.median(r[k] for r in runs) for k in range(3)]
            (ew, ec, em), (lw, lc, lm) = row["exact"], row["lsh"]
            print(f"{name}: exact {ew:.2f} s wall, {ec:.2f} s CPU, {em / 2**20:.0f} MiB; "
                  f"lsh {lw:.2f} s wall, {lc:.2f} s CPU, {lm / 2**20:.0f} MiB; "
                  f"lsh / exact: wall {lw / ew:.2f}x, CPU {lc / ec:.2f}x, memory {lm / em:.2f}x")


if __name__ == "__main__":
    main()
