"""Benchmark ``allpairs index add`` beside ``index build`` of the same documents, on real corpora.

Run from the repository root::

    python scripts/bench_index_add.py            # the Go tree (code:5, paths as ids) and Kosarak (--sets)
    python scripts/bench_index_add.py --old      # leave out --replace and --skip-existing (an allpairs without them)

For each corpus, in fresh processes, each timed end to end with its peak
memory (VmHWM, from the command's own summary):

- ``build all``: ``index build`` of every document;
- ``build half`` then ``add half``: the index of the first half, then the
  second half added to it (new ids: what a growing index does);
- ``add again --skip-existing`` and ``add again --replace``: the second half
  added once more, every id in the index already (each on a fresh copy; the
  Go tree only: line ids never clash, a second file's lines follow the first's).

Corpora: the Go 1.27.3 tree (``datasets.go.find_go_src()``; ``src/cmd/**`` built, the
rest added, ids relative to ``src``; ``code:5`` shingles) and the Kosarak sample
(``datasets.kosarak.kosarak_path()``; lines split in two halves, ``--sets``,
line ids). Ratios are against ``build all``. The machine is usually shared:
compare ratios, not absolute times. Standard output carries only the table.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # this repo's `datasets`, not the PyPI package of that name

from datasets import go, kosarak  # noqa: E402


def run(*args: str) -> tuple[float, float]:
    """Seconds and peak MiB of one ``allpairs`` command in a fresh process."""
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "allpairs", *args], capture_output=True, text=True,
                       cwd=REPO_ROOT)  # the allpairs of this checkout
    seconds = time.perf_counter() - t0
    if r.returncode:
        sys.exit(f"allpairs {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
    peak = re.search(r"peak memory ([\d,.]+) MiB", r.stderr)
    return seconds, float(peak.group(1).replace(",", "")) if peak else float("nan")


def bench(name: str, opts: list[str], first: list[str], second: list[str], every: list[str], tmp: Path,
          old: bool) -> list[tuple]:
    idx = tmp / f"{name}.idx"
    rows = [("build all", *run("index", "build", *opts, "-t", "0.5", *every, "-o", str(idx)))]
    rows.append(("build half", *run("index", "build", *opts, "-t", "0.5", *first, "-o", str(idx))))
    inputs = [o for o in opts if not o.startswith(("-s", "code:"))]
    rows.append(("add half", *run("index", "add", str(idx), *inputs, *second)))
    if not old and "--sets" not in opts:  # line ids never clash: a second file's lines follow the first's
        for flag in ("--skip-existing", "--replace"):
            copy = tmp / f"{name}-copy.idx"
            shutil.copyfile(idx, copy)
            rows.append((f"add again {flag}", *run("index", "add", str(copy), *inputs, *second, flag)))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", action="store_true", help="no --replace or --skip-existing runs")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        src = str(go.find_go_src())
        corpora = [("go", ["-s", "code:5"], [src, "--include", "cmd/**"], [src, "--exclude", "cmd/**"], [src])]
        lines = Path(kosarak.kosarak_path()).read_text().splitlines(keepends=True)
        half = len(lines) // 2
        (tmp / "a.sets").write_text("".join(lines[:half]))
        (tmp / "b.sets").write_text("".join(lines[half:]))
        corpora.append(("kosarak", ["--sets"], [str(tmp / "a.sets")], [str(tmp / "b.sets")],
                        [str(Path(kosarak.kosarak_path()))]))
        print(f"{'corpus':8} {'run':26} {'seconds':>8} {'peak MiB':>9} {'time/build':>10} {'mem/build':>9}")
        for name, opts, first, second, every in corpora:
            rows = bench(name, opts, first, second, every, tmp, args.old)
            base_t, base_m = rows[0][1], rows[0][2]
            for what, t, m in rows:
                print(f"{name:8} {what:26} {t:8.2f} {m:9.0f} {t / base_t:10.2f} {m / base_m:9.2f}", flush=True)
    print(f"load: {os.getloadavg()[0]:.2f} (1 min)")


if __name__ == "__main__":
    main()
