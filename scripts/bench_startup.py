"""Where the plain Python kernels stop paying: whole ``allpairs join`` runs, kernels as Python vs compiled.

Run from the repository root::

    python scripts/bench_startup.py               # every workload, 3 runs each
    python scripts/bench_startup.py --repeat 5 --only kosarak
    python scripts/bench_startup.py --only kosarak --measure cosine -t 536870913/1000000000 \
        --command dedup --modes python compiled jit

A warm run with compiled kernels pays a fixed cost before any work: importing
numba and its registries, then loading each kernel from numba's cache. The
plain Python kernels pay nothing up front but run hundreds of times slower.
This runs the same ``allpairs join`` on growing inputs with
``ALLPAIRS_KERNELS=python`` and ``ALLPAIRS_KERNELS=compiled`` and prints, for
each, the input's size in bytes (what ``auto`` decides by), the median wall time
of each mode, which wins, and whether both printed the same bytes (they must).
The break-even size is where the winner changes: set
:data:`allpairs._kernels.jit.PLAIN_BELOW` below it.

Workloads (each a series of sizes):

* ``kosarak``: the first N distinct transactions of the shared Kosarak sample, ``--sets``, t = 0.5;
* ``passwords``: the first N lines of the shared password list, ``--lines`` (char:3), t = 0.7;
* ``words``: N copies of the tiny corpus's texts (each copy's words suffixed with its number),
  one file each, ``-s word:1``, t = 0.5;
* ``tiny``: the tiny corpus, ``-s word:1`` (the fixed cost).

``--measure`` and ``-t`` replace every workload's measure and threshold,
``--command dedup`` runs ``allpairs dedup`` (the index's probe loop) instead of
``join``, and ``--modes`` picks the ways compared: ``jit`` is numba's JIT with
its warm cache, never the ahead-of-time module (what ``compiled`` runs where
the install built it). The ``faster`` column compares the first two modes.

The machine may be shared: quote medians. Standard output carries only the
table; progress goes to standard error. Exit status: 0, or 1 when the two
modes printed different output or a run failed.
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
sys.path.insert(0, str(REPO_ROOT))  # this repo's `datasets`, not the PyPI package of that name
sys.path.insert(1, str(Path(__file__).resolve().parent))

from _peers import exit_status, log  # noqa: E402
from datasets import kosarak, passwords  # noqa: E402

WORKLOADS = ("kosarak", "passwords", "words", "tiny")
SIZES = {"kosarak": (100, 300, 1000, 3000), "passwords": (300, 1000, 3546), "words": (2, 8, 32)}
TINY = REPO_ROOT / "datasets" / "tiny" / "corpus"


def allpairs_command() -> list[str]:
    exe = Path(sys.executable).with_name("allpairs")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "allpairs"]


def run(cmd: list[str], mode: str) -> tuple[float, bytes]:
    """Wall time and stdout of ``cmd`` with ``ALLPAIRS_KERNELS=mode``."""
    env = dict(os.environ, ALLPAIRS_KERNELS=mode)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} (ALLPAIRS_KERNELS={mode}) exited {proc.returncode}: "
                           f"{proc.stderr.decode(errors='replace').strip()[-300:]}")
    return wall, proc.stdout


def inputs(name: str, folder: Path, threshold: str | None = None) -> list[tuple[str, list[str], int]]:
    """(label, join arguments, input bytes) for each size of workload ``name``."""
    out = []
    if name == "tiny":
        size = sum(p.stat().st_size for p in TINY.iterdir() if p.is_file())
        return [("tiny", ["-t", threshold or "0.5", "-s", "word:1", str(TINY.parent)], size)]
    for n in SIZES[name]:
        if name == "kosarak":
            seen, lines = set(), []
            with open(kosarak.kosarak_path(), encoding="ascii") as f:
                for line in f:
                    key = frozenset(line.split())
                    if key and key not in seen:
                        seen.add(key)
                        lines.append(line)
                        if len(lines) == n:
                            break
            path = folder / f"kosarak-{n}.sets"
            path.write_text("".join(lines), encoding="ascii")
            args = ["--sets", str(path), "-t", threshold or "0.5"]
        elif name == "passwords":
            path = folder / f"passwords-{n}.txt"
            path.write_text("".join(p + "\n" for p in passwords.john_passwords()[:n]), encoding="utf-8")
            args = ["--lines", str(path), "-t", threshold or "0.7"]
        else:
            path = folder / f"words-{n}"
            path.mkdir()
            for k in range(n):
                for doc in sorted(TINY.glob("*.txt")):
                    words = doc.read_text(encoding="utf-8").split()
                    (path / f"{k}-{doc.name}").write_text(" ".join(f"{w}{k}" for w in words), encoding="utf-8")
            args = ["-t", threshold or "0.5", "-s", "word:1", str(path)]
        size = path.stat().st_size if path.is_file() else sum(p.stat().st_size for p in path.iterdir())
        out.append((f"{name}-{n}", args, size))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="timed runs of each command in each mode (default 3)")
    ap.add_argument("--only", nargs="+", choices=WORKLOADS, default=list(WORKLOADS))
    ap.add_argument("--modes", nargs="+", choices=("python", "compiled", "jit"), default=["python", "compiled"],
                    help="kernel paths to time (default: python compiled); the first two are compared")
    ap.add_argument("--measure", help="join every workload on this measure (default: each one's jaccard)")
    ap.add_argument("-t", "--threshold", help="join every workload at this threshold (default: each one's)")
    ap.add_argument("--command", choices=("join", "dedup"), default="join")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    if len(args.modes) < 2:
        ap.error("--modes needs two kernel paths or more")
    problems: list[str] = []
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only:
            try:
                cases = inputs(name, Path(tmp), args.threshold)
            except FileNotFoundError as e:
                problems.append(f"{name}: {e}")
                continue
            for label, join_args, size in cases:
                cmd = allpairs_command() + [args.command, *join_args, "-q"]
                if args.measure:
                    cmd += ["--measure", args.measure]
                log(f"{label} ({size:,} bytes): {' '.join(cmd)}")
                try:
                    for mode in args.modes:
                        if mode != "python":
                            run(cmd, mode)  # loads (or compiles) the kernels
                    times: dict[str, list[float]] = {mode: [] for mode in args.modes}
                    outputs = {}
                    for _ in range(args.repeat):
                        for mode in times:
                            wall, outputs[mode] = run(cmd, mode)
                            times[mode].append(wall)
                except RuntimeError as e:
                    problems.append(f"{label}: {e}")
                    continue
                same = len(set(outputs.values())) == 1
                if not same:
                    problems.append(f"{label}: the modes printed different output")
                medians = [statistics.median(times[mode]) for mode in args.modes]
                rows.append((label, size, outputs[args.modes[0]].count(b"\n"), medians, same))

    what = f"allpairs {args.command}" + (f" --measure {args.measure}" if args.measure else "") + (
        f" -t {args.threshold}" if args.threshold else "")
    print(f"{what}, kernels {' vs '.join(args.modes)} (warm cache), whole processes, median of {args.repeat} "
          "(machine possibly shared)")
    print()
    first, second = args.modes[:2]
    print(f"| input | bytes | lines | {' | '.join(args.modes)} | faster | same output |")
    print("|---|---|---|" + "---|" * len(args.modes) + "---|---|")
    for label, size, lines, medians, same in rows:
        a, b = medians[:2]
        faster = first if a < b else second
        cells = " | ".join(f"{m:.2f} s" for m in medians)
        print(f"| {label} | {size:,} | {lines:,} | {cells} | {faster} ({max(a, b) / min(a, b):.1f}×) "
              f"| {'yes' if same else 'NO'} |")
    return exit_status(problems)


if __name__ == "__main__":
    sys.exit(main())
