"""Peak memory and time of joins whose answer is large, this tree beside an earlier one, side by side.

Run from the repository root::

    git worktree add --detach /tmp/before 569edbc         # the tree to compare with
    python scripts/bench_memory.py --before /tmp/before   # every case (tens of minutes)
    python scripts/bench_memory.py --before /tmp/before --case lines12k --case top

The cases (issue 30 and issue 35 item 11):

- ``count50k``: 50,000 catalogue titles sharing five words (``title number N
  of the catalogue``), ``join -t 0.5 -s word:1 --lines F --count``: 1.25 G pairs;
- ``lines12k``, ``sets12k``: 12,000 of them (72 M pairs) written with ``-o``,
  read as ``--lines`` and as ``--sets``; the outputs' SHA-256 compared;
- ``clusters12k``: the same 12,000 with ``--clusters -o``;
- ``lsh12k``, ``lshclusters12k``: the same 12,000 joined by ``--method lsh``
  (every pair in LSH buckets joined exactly) with ``-o``, and with ``--clusters -o``;
- ``top`` and ``neighbors``: ``--top 10`` and ``--neighbors 5`` on N two-token
  lines ``c uI`` at three sizes (``--sizes``, default 5,000, 10,000, 20,000);
- ``query3k``, ``query10k``: N identical lines ``a b c`` indexed (``index build
  -t 0.5 --sets``, by each tree, not measured) and queried by themselves with
  ``index query -o``: N² matches of one distinct set (9 M and 100 M).

``--in-memory`` runs each case on this tree a second time with a budget that
never spills (``--memory 1T``): the answer held in memory, whose output the
bounded run's must equal byte for byte (``count50k``, whose pairs do not fit,
is checked against its arithmetic, 50,000 × 49,999 / 2, instead).

Each run is a separate process (``python -m allpairs`` with the tree as its
working directory, so that its ``allpairs`` is the one imported), under
``/usr/bin/time -v`` for the peak resident memory and the wall time, and under
an address-space limit (``--limit``, default 8 GiB) so that a run that would
take the machine's memory stops with "out of memory" instead. Standard output
carries the table: each case's wall time and peak for both trees and the
ratios (of CPU time, which a loaded machine moves less than wall time). Give the machine's load (``uptime``, printed) beside the figures.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import re
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PYTHON = sys.executable


def titles(n: int) -> str:
    return "".join(f"title number {i} of the catalogue\n" for i in range(1, n + 1))


def two_tokens(n: int) -> str:
    return "".join(f"c u{i}\n" for i in range(n))


def same_lines(n: int) -> str:
    return "a b c\n" * n


#: What a case whose arguments name {INDEX} runs first, with the same tree, unmeasured: the index it queries.
INDEX_BUILD = ["index", "build", "-q", "-t", "0.5", "--sets", "{IN}", "-o", "{INDEX}"]


def cases(sizes: list[int]) -> dict[str, tuple[str, str, list[str], bool]]:
    """name -> (input name, its text, arguments with {IN}, {OUT} and {INDEX}, whether the output is compared)."""
    out = {
        "count50k": ("titles50k.txt", titles(50_000),
                     ["join", "-q", "-t", "0.5", "-s", "word:1", "--lines", "{IN}", "--count"], True),
        "lines12k": ("titles12k.txt", titles(12_000),
                     ["join", "-q", "-t", "0.5", "-s", "word:1", "--lines", "{IN}", "-o", "{OUT}"], True),
        "sets12k": ("titles12k.txt", titles(12_000), ["join", "-q", "-t", "0.5", "--sets", "{IN}", "-o", "{OUT}"],
                    True),
        "clusters12k": ("titles12k.txt", titles(12_000),
                        ["join", "-q", "-t", "0.5", "-s", "word:1", "--lines", "{IN}", "--clusters", "-o", "{OUT}"],
                        True),
        "lsh12k": ("titles12k.txt", titles(12_000),
                   ["join", "-q", "-t", "0.5", "-s", "word:1", "--method", "lsh", "--lines", "{IN}", "-o", "{OUT}"],
                   True),
        "lshclusters12k": ("titles12k.txt", titles(12_000),
                           ["join", "-q", "-t", "0.5", "-s", "word:1", "--method", "lsh", "--lines", "{IN}",
                            "--clusters", "-o", "{OUT}"], True),
    }
    for n in (3_000, 10_000):
        out[f"query{n // 1000}k"] = (f"same{n}.txt", same_lines(n),
                                     ["index", "query", "-q", "{INDEX}", "--sets", "{IN}", "-o", "{OUT}"], True)
    for n in sizes:
        out[f"top{n // 1000}k"] = (f"two{n}.txt", two_tokens(n),
                                   ["join", "-q", "--top", "10", "-s", "word:1", "--lines", "{IN}", "-o", "{OUT}"], True)
        out[f"neighbors{n // 1000}k"] = (f"two{n}.txt", two_tokens(n),
                                         ["join", "-q", "--neighbors", "5", "-s", "word:1", "--lines", "{IN}", "-o",
                                          "{OUT}"], True)
    return out


def run(tree: Path, args: list[str], limit: int) -> tuple[float | None, float, int | None, str]:
    """Wall seconds, CPU seconds, peak RSS bytes and standard output of one run (wall None and the last line
    of stderr when it failed)."""
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    proc = subprocess.run(["/usr/bin/time", "-v", PYTHON, "-m", "allpairs", *args], cwd=tree, capture_output=True,
                          text=True, preexec_fn=cap)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", proc.stderr)
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    cpu = sum(float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", proc.stderr))
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip() and not ln.startswith("\t")
             and not ln.startswith("Command")]
    if proc.returncode != 0:
        return None, cpu, int(peak.group(1)) * 1024 if peak else None, (lines[-1] if lines else
                                                                         f"exit {proc.returncode}")
    h, m, s = wall.groups()
    return int(h or 0) * 3600 + int(m) * 60 + float(s), cpu, int(peak.group(1)) * 1024, proc.stdout.strip()


def digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 22):
            h.update(block)
    return h.hexdigest()[:16]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", type=Path, help="the earlier tree (a git worktree); omitted: this tree alone")
    ap.add_argument("--case", action="append", help="run only these cases (a prefix: 'top' runs every size)")
    ap.add_argument("--sizes", default="5000,10000,20000", help="sizes of the top and neighbors cases")
    ap.add_argument("--limit", default="8G", help="address-space limit of each run (K, M, G)")
    ap.add_argument("--skip-before", action="append", default=[],
                    help="cases not run on the earlier tree (its figure is quoted from elsewhere)")
    ap.add_argument("--work", type=Path, help="where inputs and outputs go (default a temporary directory)")
    ap.add_argument("--in-memory", action="store_true",
                    help="also run each case on this tree with --memory 1T (nothing spilled): the same output?")
    a = ap.parse_args()
    limit = int(float(a.limit[:-1]) * {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[a.limit[-1].upper()])
    work = a.work or Path(tempfile.mkdtemp(prefix="bench_memory."))
    work.mkdir(parents=True, exist_ok=True)
    every = cases([int(s) for s in a.sizes.split(",")])
    chosen = [n for n in every if not a.case or any(n.startswith(c) for c in a.case)]
    trees = ([("after", REPO)] + ([("before", a.before.resolve())] if a.before else [])
             + ([("in memory", REPO)] if a.in_memory else []))
    other = "in memory" if a.in_memory else "before"
    print(f"# load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}; "
          f"limit {a.limit} of address space a run", flush=True)
    print(f"| case | {other}: wall (CPU), peak | after: wall (CPU), peak | CPU ratio | peak ratio | same output |")
    print("|---|---|---|---|---|---|", flush=True)
    for name in chosen:
        infile, text, args, compare = every[name]
        src = work / infile
        if not src.exists():
            src.write_text(text)
        got = {}
        for label, tree in trees:
            if label == "before" and name in a.skip_before:
                continue
            if label == "in memory" and name == "count50k":  # 1.25 G pairs do not fit: their arithmetic
                got[label] = (None, 0.0, None, "arithmetic", str(50_000 * 49_999 // 2))
                continue
            out = work / f"{name}.{label.replace(' ', '-')}.out"
            index = work / f"{name}.{label.replace(' ', '-')}.idx"
            if "{INDEX}" in args:  # the index this tree writes, built before the run that is measured
                subprocess.run([PYTHON, "-m", "allpairs", *(x.replace("{IN}", str(src)).replace("{INDEX}", str(index))
                                                            for x in INDEX_BUILD)], cwd=tree, check=True)
            argv = [x.replace("{IN}", str(src)).replace("{OUT}", str(out)).replace("{INDEX}", str(index))
                    for x in args]
            argv += ["--memory", "1T"] if label == "in memory" else []
            print(f"{name} {label} ...", file=sys.stderr, flush=True)
            wall, cpu, peak, said = run(tree, argv, limit)
            result = said if "--count" in args else (digest(out) if out.exists() and wall is not None else None)
            got[label] = (wall, cpu, peak, said, result)
            for made in (out, index):
                if made.exists():
                    made.unlink()

        def cell(label):
            if label not in got:
                return "not run"
            wall, cpu, peak, said, _ = got[label]
            if said == "arithmetic":
                return "(its arithmetic)"
            mib = f"{peak / 2**20:,.0f} MiB" if peak else "?"
            return f"{wall:.1f} s ({cpu:.1f} s CPU), {mib}" if wall is not None else \
                f"failed after {cpu:.1f} s CPU ({said}), {mib}"

        ratio_t = ratio_m = same = "–"
        if other in got and got[other][0] and got["after"][0]:
            ratio_t = f"{got['after'][1] / got[other][1]:.2f}"
            ratio_m = f"{got['after'][2] / got[other][2]:.2f}"
        if other in got and got["after"][0] and got[other][4] is not None:
            same = "yes" if got[other][4] == got["after"][4] else "NO"
        sha = f" ({got['after'][4]})" if got["after"][0] and "--count" not in args else ""
        print(f"| {name} | {cell(other)} | {cell('after')} | {ratio_t} | {ratio_m} | {same}{sha} |", flush=True)


if __name__ == "__main__":
    main()
