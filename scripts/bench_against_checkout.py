"""Ordinary joins, this checkout against another: whole CLI processes run alternately, medians side by side.

Run from the repository root::

    git worktree add ../before 569edbc && (cd ../before && python setup.py -q build_ext --inplace)
    python scripts/bench_against_checkout.py --against ../before                 # every row, 5 runs each
    python scripts/bench_against_checkout.py --against ../before --repeat 7 --only go-sets zipf-1m-o

Each row runs ``python -m allpairs join ... -t 0.5`` of both checkouts with this interpreter (the other
checkout first on ``PYTHONPATH``, its kernels built in place; ``ALLPAIRS_KERNELS=compiled`` on both, so a
missing build is an error, not a JIT compile), once each as a warm-up, then alternately, the order swapped
every round. Printed: a Markdown row per workload with the medians of wall time and of the child's CPU time
(user + system), their ratios (this over the other: below 1, this checkout is faster) and whether the
outputs are the same (the count, or the SHA-256 of the ``-o`` file). The corpora are the ones
``bench_front.py`` uses (Kosarak, the Go tree, the 1 M Zipf sets), made or found the same way.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "scripts"))

import bench_front  # noqa: E402
from datasets import go, kosarak  # noqa: E402

WORKLOADS = ("kosarak-distinct", "kosarak-distinct-o", "kosarak-raw", "kosarak-raw-o", "go-sets", "go-tree",
             "zipf-1m", "zipf-1m-o")


def command(name: str, folder: Path, out: Path) -> list[str]:
    """The join's arguments for a workload (``-o`` rows write ``out``)."""
    tail = ["-o", str(out)] if name.endswith("-o") else ["--count"]
    base = name.removesuffix("-o")
    if base == "go-tree":
        return ["join", "-t", bench_front.THRESHOLD, "-q", *bench_front.GO_OPTIONS, str(go.shared_go_src()), *tail]
    if base == "go-sets":
        path = folder / "go.sets"
        if not path.exists():
            subprocess.run([sys.executable, "-m", "allpairs", "sets", *bench_front.GO_OPTIONS,
                            str(go.shared_go_src()), "-o", str(path), "-q"], check=True)
    elif base == "kosarak-distinct":
        path = kosarak.write_distinct(folder / "kosarak-distinct.sets")
    elif base == "kosarak-raw":
        path = kosarak.kosarak_path()
    else:
        path = bench_front.zipf_file()
    return ["join", "--sets", str(path), "-t", bench_front.THRESHOLD, "-q", *tail]


def run(env: dict, args: list[str], cwd: Path) -> tuple[float, float, bytes]:
    """Wall seconds, the child's CPU seconds and its standard output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "allpairs", *args], env=env, capture_output=True, cwd=cwd)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} exited {proc.returncode}: {proc.stderr.decode()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--against", type=Path, required=True, help="the other checkout, its kernels built in place")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs of each side (default 5)")
    ap.add_argument("--only", nargs="+", choices=WORKLOADS, default=list(WORKLOADS))
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    if not (args.against / "allpairs" / "__init__.py").exists():
        ap.error(f"--against {args.against}: no allpairs package there")
    sides = {"other": args.against.resolve(), "this": REPO_ROOT}
    envs = {name: {**os.environ, "PYTHONPATH": str(root), "ALLPAIRS_KERNELS": "compiled"}
            for name, root in sides.items()}
    print(f"this checkout ({REPO_ROOT}) against {sides['other']}, medians of {args.repeat} alternate runs")
    print("| run (t = 0.5) | other: wall (CPU) | this: wall (CPU) | wall ratio | CPU ratio | same output | load |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name in args.only:
            times: dict[str, list[tuple[float, float]]] = {side: [] for side in sides}
            seen: dict[str, bytes] = {}
            for i in range(args.repeat + 1):
                order = list(sides) if i % 2 == 0 else list(sides)[::-1]
                for side in order:
                    out = folder / f"out-{side}.tsv"
                    wall, cpu, stdout = run(envs[side], command(name, folder, out), folder)
                    seen[side] = hashlib.sha256(out.read_bytes()).digest() if out.exists() else stdout
                    if i:  # the first round warms both up
                        times[side].append((wall, cpu))
                    out.unlink(missing_ok=True)
            wall = {side: statistics.median(w for w, _ in times[side]) for side in sides}
            cpu = {side: statistics.median(c for _, c in times[side]) for side in sides}
            print(f"| {name} | {wall['other']:.3f} s ({cpu['other']:.3f} s) | {wall['this']:.3f} s "
                  f"({cpu['this']:.3f} s) | {wall['this'] / wall['other']:.2f} | {cpu['this'] / cpu['other']:.2f} | "
                  f"{'yes' if seen['other'] == seen['this'] else 'NO'} | {os.getloadavg()[0]:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
