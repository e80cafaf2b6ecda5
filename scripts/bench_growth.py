"""How allpairs' join stage grows from a small file of sets to a large one (issue 34's growth target).

Run from the repository root, on the issue's two files (sizes 7-33, vocabulary = n, 30 % near-copies)::

    python -m datasets.synthetic zipf --n 1000000 --avg-size 20 --vocabulary 1000000 \\
        --near-duplicates 0.3 --skew 1.0 > zipf1m.sets          # and --n 10000000 ... > zipf10m.sets
    python scripts/bench_growth.py zipf1m.sets zipf10m.sets --repeat 3
    python scripts/bench_growth.py zipf1m.sets zipf10m.sets --pause 20      # every run on memory left idle
    python scripts/bench_growth.py zipf1m.sets zipf10m.sets --ssj /tmp/set_sim_join   # set_sim_join beside

Each round runs the join stage of ``scripts/bench_sota.py --join-stage`` (a
fresh process: the file read and ordered, then ``allpairs.join`` timed by its
own stage clock) on the small file, then on the large one, so both sizes see
the same load. Besides the stage's wall time it reports the stage's
user and system CPU and minor page faults (``getrusage``).

Why both: on a VM whose host takes back memory the guest left free (the
virtio balloon's free page reporting; docs/benchmarks.md, "Growth to 10 M
sets"), a page fault on such memory costs 5-10 ms per 2 MiB instead of ~0.1
ms. That moves the system time of a run, and so its wall time, by whether
its memory had sat idle: the 1 M stage falls in a fast mode or a slow one
with the same faults. The user CPU is the join's own work and does not move
with it. ``--pause S`` sleeps before each run so that every run starts on
memory left idle (the slow mode, as a fresh process on an idle machine meets
it); without it, runs fall in either mode.

With ``--ssj`` set_sim_join's GroupJoin (Bouros et al. 2012, as built by
``../shared/tools/build_set_sim_join.sh``: a benchmark anchor only) runs once
on each file after the rounds: its join step (``algoPrepRecs + algoindex +
algojoin``) and its growth beside allpairs'. At 10 M sets it takes minutes.
Standard output carries only the table; progress goes to standard error.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(1, str(Path(__file__).resolve().parent))

from _peers import log  # noqa: E402
from bench_front import measure  # noqa: E402
from bench_sota import JOIN_STEP, build_ssj, ssj_figures  # noqa: E402

#: What each run reports, as printed: the stage's clock, then its user and system CPU and minor page faults.
FIELDS = (("join", "stage s"), ("user", "user s"), ("sys", "system s"), ("minflt", "minor faults"))


def stage_run(path: Path, threshold: str, jobs: int, env: dict[str, str]) -> dict:
    run = measure([sys.executable, str(Path(__file__).with_name("bench_sota.py")), "--join-stage", str(path),
                   threshold, str(jobs)], env)
    got = json.loads(run.out)
    got["process_peak"] = run.peak
    return got


def ssj_step(ssj: Path, path: Path, threshold: str, folder: Path) -> tuple[float, int]:
    """set_sim_join GroupJoin's join step (seconds) and pairs on ``path``."""
    exe, intify, _ = build_ssj(ssj, False)
    raw = folder / (path.name + ".raw")
    if not raw.exists():
        subprocess.run([str(intify), str(path), str(raw)], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    out = measure([str(exe), "--algorithm", "groupjoin", "--threshold", threshold, "--input", str(raw),
                   "--timings"]).out
    pairs, timings = ssj_figures(out)
    return sum(timings.get(k, 0.0) for k in JOIN_STEP) / 1000, pairs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("small", type=Path, help="the small --sets file (e.g. 1 M sets)")
    ap.add_argument("large", type=Path, help="the large --sets file (e.g. 10 M sets)")
    ap.add_argument("--threshold", "-t", default="0.5")
    ap.add_argument("--repeat", type=int, default=3, help="rounds, each the small file then the large (default 3)")
    ap.add_argument("--jobs", type=int, default=1, help="threads of the join stage (default 1)")
    ap.add_argument("--pause", type=float, default=0.0,
                    help="seconds slept before each run (e.g. 20: every run on memory the host took back)")
    ap.add_argument("--ssj", type=Path, default=None, help="also set_sim_join's GroupJoin, built in this folder")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    if args.pause < 0:
        ap.error("--pause must be at least 0")
    for path in (args.small, args.large):
        if not path.is_file():
            ap.error(f"no such file: {path}")
    runs: dict[Path, list[dict]] = {args.small: [], args.large: []}
    loads = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = {"PYTHONPYCACHEPREFIX": str(folder / "pycache"), "PYTHONDONTWRITEBYTECODE": ""}
        stage_run(args.small, args.threshold, args.jobs, env)  # bytecode written, the file cached
        for r in range(args.repeat):
            for path in (args.small, args.large):
                time.sleep(args.pause)
                loads.append(os.getloadavg()[0])
                runs[path].append(stage_run(path, args.threshold, args.jobs, env))
                got = runs[path][-1]
                log(f"round {r + 1}/{args.repeat} {path.name}: stage {got['join']:.3f} s, user {got['user']:.2f} s, "
                    f"system {got['sys']:.2f} s, {got['minflt']:,} minor faults, load {loads[-1]:.1f}")
        ssj = {p: ssj_step(args.ssj, p, args.threshold, folder) for p in runs} if args.ssj else {}
    for path, got in runs.items():
        counts = {(g["pairs"], g["candidates"]) for g in got}
        if len(counts) != 1:
            log(f"error: {path}: the runs disagree on pairs and candidates: {sorted(counts)}")
            return 1
    small, large = runs[args.small], runs[args.large]
    med = {p: {k: statistics.median(g[k] for g in got) for k, _ in FIELDS} for p, got in runs.items()}
    print(f"join stage, t = {args.threshold}, --jobs {args.jobs}, medians of {args.repeat} interleaved rounds, "
          f"pause {args.pause:g} s before each run (load {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores)")
    print()
    head = " | ".join(label for _, label in FIELDS)
    print(f"| sets file | pairs | candidates | {head} | stage s, each run | peak MiB |"
          + (" set_sim_join GroupJoin step s |" if ssj else ""))
    print("|---" * (5 + len(FIELDS) + bool(ssj)) + "|")
    for path, got in runs.items():
        m = med[path]
        cells = " | ".join(f"{m[k]:,.0f}" if k == "minflt" else f"{m[k]:.3f}" for k, _ in FIELDS)
        each = ", ".join(f"{g['join']:.2f}" for g in got)
        peak = statistics.median(g["process_peak"] for g in got) / 2**20
        extra = f" {ssj[path][0]:.2f} |" if ssj else ""
        print(f"| {path.name} | {got[0]['pairs']:,} | {got[0]['candidates']:,} | {cells} | {each} | {peak:,.0f} |"
              + extra)
    cells = " | ".join(f"{med[args.large][k] / med[args.small][k]:.1f}×" if med[args.small][k] else "–"
                       for k, _ in FIELDS)
    extra = f" {ssj[args.large][0] / ssj[args.small][0]:.1f}× |" if ssj else ""
    print(f"| growth | {large[0]['pairs'] / max(1, small[0]['pairs']):.1f}× "
          f"| {large[0]['candidates'] / max(1, small[0]['candidates']):.1f}× | {cells} | | |" + extra)
    for path, (seconds, pairs) in ssj.items():
        if pairs != runs[path][0]["pairs"]:
            log(f"note: {path.name}: set_sim_join found {pairs:,} pairs, allpairs {runs[path][0]['pairs']:,} "
                "(set_sim_join compares doubles: pairs at exactly the threshold can fall below it there)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
