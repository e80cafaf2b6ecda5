"""The fixed cost of a run: imports and instructions of ``allpairs join -q -t 0.5 --sets FILE`` on 10 sets.

Run from the repository root::

    python scripts/bench_imports.py                          # this checkout, 11 runs
    python scripts/bench_imports.py --against ../old-checkout --callgrind

Each run is a whole process (``python -X importtime -m allpairs join ...``) on a file of 10 four-token
sets with no pair. Printed: the median over the runs of the sum of every module's own import time (the
whole import cost; the machine's load moves it, so the runs of the two checkouts are interleaved), the
number of modules imported, the median wall time, and with ``--callgrind`` the instructions of one whole
process under valgrind (what load does not move). ``--against DIR`` runs another checkout of allpairs
(put first on ``PYTHONPATH``, its compiled kernels copied in beside its sources) with this interpreter,
and lists the modules that only it imports, with their median own time.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def one_run(env: dict, sets: Path, importtime: bool = True) -> tuple[float, dict[str, int]]:
    """Wall seconds and {module: own import µs} of one run."""
    cmd = [sys.executable, *(["-X", "importtime"] if importtime else []), "-m", "allpairs", "join", "-q", "-t",
           "0.5", "--sets", str(sets)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=sets.parent)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr[-500:]}")
    own = {}
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "self [us]" not in line:
            us, _, name = line[len("import time:"):].split("|")
            own[name.strip()] = int(us)
    return wall, own


def instructions(env: dict, sets: Path) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out", sys.executable,
                               "-m", "allpairs", "join", "-q", "-t", "0.5", "--sets", str(sets)],
                              env=env, capture_output=True, text=True, cwd=sets.parent)
    return int(re.search(r"Collected : (\d+)", proc.stderr).group(1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--against", type=Path, help="another checkout of allpairs to run interleaved")
    ap.add_argument("--callgrind", action="store_true", help="count one run's instructions under valgrind")
    args = ap.parse_args(argv)
    sides = {"this": dict(os.environ)}
    if args.against:
        sides["against"] = dict(os.environ, PYTHONPATH=str(args.against.resolve()))
    with tempfile.TemporaryDirectory() as tmp:
        sets = Path(tmp) / "ten.sets"
        sets.write_text("".join(f"w{i} x{i} y{i} z{i}\n" for i in range(10)))
        for env in sides.values():
            one_run(env, sets)  # compiles the .pyc files
        totals = {s: [] for s in sides}
        walls = {s: [] for s in sides}
        own: dict[str, dict[str, list[int]]] = {s: {} for s in sides}
        for _ in range(args.runs):
            for side, env in sides.items():
                wall, mods = one_run(env, sets, importtime=False)
                walls[side].append(wall)
                _, mods = one_run(env, sets)
                totals[side].append(sum(mods.values()))
                for m, us in mods.items():
                    own[side].setdefault(m, []).append(us)
        counts = {side: instructions(env, sets) for side, env in sides.items()} if args.callgrind else {}
    load = os.getloadavg()[0]
    print(f"allpairs join -q -t 0.5 --sets (10 sets), median of {args.runs} interleaved runs, load {load:.1f}")
    for side in sides:
        line = (f"{side}: imports {statistics.median(totals[side]) / 1000:.0f} ms (-X importtime, sum of own times), "
                f"{len(own[side])} modules, wall {statistics.median(walls[side]):.2f} s")
        if side in counts:
            line += f", {counts[side] / 1e9:.3f} G instructions (callgrind)"
        print(line)
    if args.against:
        gone = sorted(set(own["against"]) - set(own["this"]), key=lambda m: -statistics.median(own["against"][m]))
        print(f"imported only by {args.against}: {len(gone)} modules, own time "
              f"{sum(statistics.median(own['against'][m]) for m in gone) / 1000:.0f} ms")
        for m in gone:
            print(f"  {m} {statistics.median(own['against'][m]) / 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
