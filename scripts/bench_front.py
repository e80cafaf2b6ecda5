"""Benchmark the whole allpairs process against the compiled C yardstick, on the same --sets files.

Run from the repository root::

    python scripts/bench_front.py                 # every workload, 3 runs each
    python scripts/bench_front.py --repeat 1 --only kosarak-distinct kosarak-raw

The yardstick is ``../shared/tools/allpairs_ref.c`` (a single-threaded C
AllPairs/PPJoin that reads ``--sets`` files; ``--ref`` names another copy),
built here with ``cc -O2``. Each workload is one ``--sets`` file, joined at
``t = 0.5`` by the yardstick and by ``allpairs join --sets FILE -t 0.5
--count -q``, in turn, ``--repeat`` times; the table gives the median wall
time, CPU time (user + system, all threads) and peak resident memory of
each whole process (from GNU time where it is installed, else ``wait4``), their ratios (allpairs / C), and
whether the two counted the same pairs. On a loaded machine the CPU times
say more than the wall times (allpairs runs its join on every core, the
yardstick on one).

Workloads:

* ``kosarak-distinct``: the Kosarak sample's 34,985 distinct sets;
* ``kosarak-raw``: the sample as it is (49,207 lines, 33 M pairs);
* ``go-sets``: the Go 1.27.3 tree (the README's reference corpus) as code:5
  shingle sets, one file a line, written by ``allpairs sets``;
* ``zipf-1m``: ``datasets.synthetic.zipf_sets(**zipf_preset("social-1m"))``:
  1,000,000 sets of mean size 27 over 1,000,000 Zipf tokens of exponent 0.5,
  30% planted near-duplicates (the shape of the social-network benchmarks;
  the preset's docstring says where the numbers come from), generated once
  into the cache folder (a few minutes).

and runs of allpairs alone: ``go-tree`` (the Go tree from its files,
code:5, the README's command), ``tiny`` (the 10-document example,
``-s word:1``: the fixed cost of a warm run), and the C-family and Python
tokenizers on trees found wherever Python runs: ``py-stdlib`` (this
Python's standard library, ``*.py`` without ``site-packages``) and
``usr-include`` (the ``*.h`` headers under /usr/include), each joined at
code:5 (``--count``) and written by ``allpairs sets`` (``py-stdlib-sets``,
``usr-include-sets``; no pairs counted). Before timing, one untimed run
of each command loads (or compiles) the kernels. With ``--jit``, each allpairs
run is followed by the same run through numba's JIT (``ALLPAIRS_KERNELS=jit``)
and a second table compares the two.

The machine may be shared: quote medians, and ratios rather than absolute
times. Standard output carries only the table; progress goes to standard
error. Exit status: 0, or 1 when the two counted different pairs or a run failed.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # this repo's `datasets`, not the PyPI package of that name
sys.path.insert(1, str(Path(__file__).resolve().parent))

from _peers import exit_status, log  # noqa: E402
from datasets import go, kosarak, synthetic  # noqa: E402

THRESHOLD = "0.5"
REF_SOURCE = REPO_ROOT.parent / "shared" / "tools" / "allpairs_ref.c"
GO_OPTIONS = ["--include", "*.go", "--exclude", "*_test.go", "--exclude", "testdata/**", "--min-bytes", "2048",
              "-s", "code:5"]
ZIPF = synthetic.zipf_preset("social-1m")
JIT = {"ALLPAIRS_KERNELS": "jit"}
#: Program trees of the C family and Python: (path, options) of each.
TREES = {
    "py-stdlib": (Path(sysconfig.get_paths()["stdlib"]), ["--include", "*.py", "--exclude", "site-packages/**"]),
    "usr-include": (Path("/usr/include"), ["--include", "*.h"]),
}
WORKLOADS = ("kosarak-distinct", "kosarak-raw", "go-sets", "zipf-1m", "go-tree", "tiny", "py-stdlib",
             "py-stdlib-sets", "usr-include", "usr-include-sets")


@dataclass
class Run:
    wall: float
    peak: int  # bytes
    out: str
    cpu: float = 0.0  # user + system seconds, all threads


@dataclass
class Row:
    name: str
    c: list[Run] = field(default_factory=list)
    ap: list[Run] = field(default_factory=list)
    jit: list[Run] = field(default_factory=list)  # allpairs with ALLPAIRS_KERNELS=jit (--jit)


def allpairs_command() -> list[str]:
    exe = Path(sys.executable).with_name("allpairs")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "allpairs"]


#: GNU time, through which children are run where it exists (see :func:`measure`).
GNU_TIME = "/usr/bin/time" if Path("/usr/bin/time").exists() else None


def measure(cmd: list[str], env: dict[str, str] | None = None) -> Run:
    """Run ``cmd`` (with ``env`` added to the environment) to the end; its wall time, peak RSS, stdout and CPU time.

    The peak is the child's ``ru_maxrss``, which Linux carries across exec from
    the process that forked it: a child forked from this Python process would
    report this process's ~60 MiB at least. So the child is started by GNU
    time (a process of a few MiB), which reports the child's own figures.
    """
    timing = tempfile.NamedTemporaryFile(suffix=".time", delete=False)
    timing.close()
    run = [GNU_TIME, "-f", "%M %U %S", "-o", timing.name, *cmd] if GNU_TIME else cmd
    try:
        with tempfile.TemporaryFile() as out:
            t0 = time.perf_counter()
            proc = subprocess.Popen(run, stdout=out, stderr=subprocess.PIPE, env={**os.environ, **(env or {})})
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - t0
            stderr = proc.stderr.read().decode(errors="replace")
            proc.stderr.close()
            out.seek(0)
            text = out.read().decode(errors="replace")
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited {code}: {stderr.strip()[-500:]}")
        if GNU_TIME:
            peak_kib, user, system = Path(timing.name).read_text().split()[-3:]
            return Run(wall, int(peak_kib) * 1024, text, float(user) + float(system))
        return Run(wall, usage.ru_maxrss * 1024, text, usage.ru_utime + usage.ru_stime)
    finally:
        os.unlink(timing.name)


def build_ref(source: Path, folder: Path) -> Path | None:
    cc = shutil.which("cc")
    if cc is None or not source.is_file():
        log(f"no yardstick: {'cc not found' if cc is None else f'{source} not found'}")
        return None
    exe = folder / "allpairs_ref"
    subprocess.run([cc, "-O2", "-o", str(exe), str(source), "-lm"], check=True)
    return exe


def zipf_file() -> Path:
    """The 1 M-set synthetic corpus as a --sets file, generated once into the cache folder."""
    name = "zipf-" + "-".join(f"{k}{v}" for k, v in ZIPF.items()) + ".sets"
    path = go.cache_dir() / name
    if path.exists():
        return path
    log(f"generating {path} (once; a few minutes) ...")
    path.parent.mkdir(parents=True, exist_ok=True)
    sets = synthetic.zipf_sets(**ZIPF)
    tmp = path.with_suffix(".part")
    with open(tmp, "w", encoding="ascii") as f:
        for k in range(0, len(sets), 10000):
            f.write("".join(" ".join(map(str, s)) + "\n" for s in sets[k:k + 10000]))
    os.replace(tmp, path)
    return path


def sets_file(name: str, folder: Path) -> Path:
    if name == "kosarak-distinct":
        return kosarak.write_distinct(folder / "kosarak-distinct.sets")
    if name == "kosarak-raw":
        return kosarak.kosarak_path()
    if name == "go-sets":
        path = folder / "go.sets"
        cmd = allpairs_command() + ["sets", *GO_OPTIONS, str(go.shared_go_src()), "-o", str(path), "-q"]
        log("writing the Go tree's code:5 sets: " + " ".join(cmd))
        measure(cmd)
        return path
    return zipf_file()


def c_pairs(run: Run) -> int:
    return int(run.out.split()[0])


def ap_pairs(run: Run) -> int | None:
    """The pairs counted, None for a run that wrote sets."""
    return int(run.out.split()[0]) if run.out.strip() else None


def median(runs: list[Run], attr: str) -> float:
    return statistics.median(getattr(r, attr) for r in runs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="timed runs of each command (default 3)")
    ap.add_argument("--only", nargs="+", choices=WORKLOADS, default=list(WORKLOADS))
    ap.add_argument("--ref", type=Path, default=REF_SOURCE, help="the yardstick's C source")
    ap.add_argument("--jit", action="store_true",
                    help="also run allpairs with ALLPAIRS_KERNELS=jit (numba's JIT instead of the kernels built "
                         "at install) and print both side by side")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    problems: list[str] = []
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        ref = build_ref(args.ref, folder)
        for name in args.only:
            row = Row(name)
            try:
                if name == "go-tree":
                    c_cmd = None
                    ap_cmd = allpairs_command() + ["join", "-t", THRESHOLD, "--count", "-q", *GO_OPTIONS,
                                                   str(go.shared_go_src())]
                elif name.removesuffix("-sets") in TREES:
                    c_cmd = None
                    root, options = TREES[name.removesuffix("-sets")]
                    if not root.is_dir():
                        raise FileNotFoundError(f"{root} not found")
                    tail = ["sets", "-o", str(folder / f"{name}.txt")] if name.endswith("-sets") else \
                        ["join", "-t", THRESHOLD, "--count"]
                    ap_cmd = allpairs_command() + [*tail, "-q", *options, "-s", "code:5", str(root)]
                elif name == "tiny":
                    c_cmd = None
                    ap_cmd = allpairs_command() + ["join", "-t", THRESHOLD, "--count", "-q", "-s", "word:1",
                                                   str(REPO_ROOT / "datasets" / "tiny")]
                else:
                    path = sets_file(name, folder)
                    c_cmd = [str(ref), str(path), THRESHOLD] if ref else None
                    ap_cmd = allpairs_command() + ["join", "--sets", str(path), "-t", THRESHOLD, "--count", "-q"]
                log(f"{name}: " + " ".join(ap_cmd))
                measure(ap_cmd)  # loads (or compiles) the kernels
                if args.jit:
                    measure(ap_cmd, JIT)
                for _ in range(args.repeat):
                    if c_cmd:
                        row.c.append(measure(c_cmd))
                    row.ap.append(measure(ap_cmd))
                    if args.jit:
                        row.jit.append(measure(ap_cmd, JIT))
                if row.c and c_pairs(row.c[0]) != ap_pairs(row.ap[0]):
                    problems.append(f"{name}: the yardstick counted {c_pairs(row.c[0]):,} pairs, "
                                    f"allpairs {ap_pairs(row.ap[0]):,}")
            except (RuntimeError, FileNotFoundError, subprocess.CalledProcessError) as e:
                problems.append(f"{name}: {e}")
                continue
            rows.append(row)

    print(f"allpairs vs the C yardstick, t = {THRESHOLD}, whole processes, median of {args.repeat} "
          f"(machine possibly shared)")
    print()
    print(f"load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    print()
    print("| workload | pairs | C wall | C CPU | C peak | allpairs wall | allpairs CPU | allpairs peak | wall ratio "
          "| peak ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        pairs = "-" if ap_pairs(row.ap[0]) is None else f"{ap_pairs(row.ap[0]):,}"
        aw, ac, am = median(row.ap, "wall"), median(row.ap, "cpu"), median(row.ap, "peak")
        if row.c:
            cw, cc, cm = median(row.c, "wall"), median(row.c, "cpu"), median(row.c, "peak")
            c_cells = f"{cw:.2f} s | {cc:.2f} s | {cm / 2**20:,.0f} MiB"
            ratios = f"{aw / cw:.2f}× | {am / cm:.2f}×"
        else:
            c_cells, ratios = "- | - | -", "- | -"
        print(f"| {row.name} | {pairs} | {c_cells} | {aw:.2f} s | {ac:.2f} s | {am / 2**20:,.0f} MiB | {ratios} |")
    if args.jit:
        print()
        print("kernels built at install (allpairs) vs numba's JIT (ALLPAIRS_KERNELS=jit, warm cache), same runs")
        print()
        print("| workload | built wall | built peak | JIT wall | JIT peak | wall ratio (built / JIT) | peak ratio |")
        print("|---|---|---|---|---|---|---|")
        for row in rows:
            aw, am = median(row.ap, "wall"), median(row.ap, "peak")
            jw, jm = median(row.jit, "wall"), median(row.jit, "peak")
            print(f"| {row.name} | {aw:.2f} s | {am / 2**20:,.0f} MiB | {jw:.2f} s | {jm / 2**20:,.0f} MiB "
                  f"| {aw / jw:.2f}× | {am / jm:.2f}× |")
    return exit_status(problems)


if __name__ == "__main__":
    sys.exit(main())
