"""Run every headline benchmark once and write one table: allpairs' figure, the peer's, the ratio, the load.

Run from the repository root::

    python scripts/bench_all.py --markdown docs/benchmarks.md     # every row (about 10-20 minutes)
    python scripts/bench_all.py --only tiny kosarak-c             # some rows, table on stdout

It measures nothing itself: each row runs one of the benchmark scripts
(``bench_front.py``, ``bench_exact.py``, ``bench_lsh.py``, ``bench_compat.py``)
with the options shown in the row's command, reads the Markdown table that
script prints and takes one figure from it, so that each row can be
reproduced alone. Ratios are the peer's time over allpairs' (above 1:
allpairs is faster). The load average (1 minute) is read before and after
each row. ``--markdown FILE`` writes the whole page atomically, keeping the
sections below its table (``## `` headings) as they are (a temporary
file beside it, renamed); without it the table goes to stdout. Progress and
the scripts' own output go to stderr.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

REPO_ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Bench:
    name: str
    what: str
    script: str
    options: list[str]
    #: From the script's tables: (allpairs' figure, peer, peer's figure, ratio), as text.
    read: Callable[[list[dict[str, str]]], tuple[str, str, str, str]]

    def command(self) -> str:
        return " ".join(["python", f"scripts/{self.script}", *self.options])


def tables(text: str) -> list[dict[str, str]]:
    """Every row of every Markdown table in ``text``, as {header: cell}."""
    rows, header = [], None
    for line in text.splitlines():
        line = line.strip()
        if not (line.startswith("|") and line.endswith("|")):
            header = None
            continue
        cells = [c.strip() for c in line[1:-1].split("|")]
        if header is None:
            header = cells
        elif not all(re.fullmatch(r":?-+:?", c) for c in cells):
            rows.append(dict(zip(header, cells)))
    return rows


def seconds(cell: str) -> float:
    return float(re.search(r"[\d.]+", cell.replace(",", "")).group())


def row(rows: list[dict[str, str]], **where: str) -> dict[str, str]:
    for r in rows:
        if all(r.get(k) == v for k, v in where.items()):
            return r
    raise LookupError(f"no table row with {where}")


def ratio(peer: float, ours: float) -> str:
    return f"{peer / ours:.2f}×"


def front(workload: str, peer: bool) -> Callable:
    def read(rows):
        r = row(rows, workload=workload)
        ours = f"{r['allpairs wall']} wall, {r['allpairs CPU']} CPU, {r['allpairs peak']} ({r['pairs']} pairs)"
        if not peer:
            return ours, "-", "-", "-"
        return (ours, "C yardstick (cc -O2)", f"{r['C wall']} wall, {r['C CPU']} CPU, {r['C peak']}",
                ratio(seconds(r["C wall"]), seconds(r["allpairs wall"])))
    return read


def exact(threshold: str) -> Callable:
    def read(rows):
        r = row(rows, data="kosarak", measure="jaccard", t=threshold)
        peer = r["SetSimilaritySearch CPU s"]
        return (f"{r['allpairs s']} s wall, {r['allpairs CPU s']} s CPU ({r['pairs']} pairs)",
                "SetSimilaritySearch 1.0.1", f"{peer} s CPU", f"{r['ratio']} ({r['CPU ratio']} by CPU)")
    return read


def lsh(peer: str) -> Callable:
    def read(rows):
        r = next(r for r in rows if r.get("measure") == "end to end, both from texts"
                 and r.get("peer row", "").startswith(peer))
        name = {"datasketch": "datasketch 2.0", "rensa": "rensa (faster of its two APIs)"}[peer]
        return r["allpairs"], name, r["peer"], r["ratio (> 1: allpairs faster)"].replace("x", "×")
    return read


def compat(rows):
    r = rows[0]
    return (f"{float(r['CPU s compat']):.2f} s CPU ({r['results']} pairs)", "SetSimilaritySearch 1.0.1",
            f"{r['CPU s SSS']} s CPU", r["CPU ratio"])


BENCHES = [
    Bench("tiny", "the 10-document example, whole command (start-up)", "bench_front.py",
          ["--repeat", "1", "--only", "tiny"], front("tiny", peer=False)),
    Bench("kosarak-c", "Kosarak's 34,985 distinct sets, t = 0.5, whole process", "bench_front.py",
          ["--repeat", "1", "--only", "kosarak-distinct"], front("kosarak-distinct", peer=True)),
    Bench("kosarak-raw-c", "Kosarak sample as it is (49,207 sets, 33 M pairs), t = 0.5, whole process",
          "bench_front.py", ["--repeat", "1", "--only", "kosarak-raw"], front("kosarak-raw", peer=True)),
    Bench("go-sets-c", "Go 1.27.3 tree as code:5 sets (3,104 lines), t = 0.5, whole process", "bench_front.py",
          ["--repeat", "1", "--only", "go-sets"], front("go-sets", peer=True)),
    Bench("go-tree", "Go 1.27.3 tree from its files, code:5, t = 0.5, whole command", "bench_front.py",
          ["--repeat", "1", "--only", "go-tree"], front("go-tree", peer=False)),
    Bench("kosarak-sss", "Kosarak distinct sets, Jaccard t = 0.5, the join call (same pairs checked)",
          "bench_exact.py", ["--data", "kosarak", "--measures", "jaccard", "--thresholds", "0.5", "--repeat", "1",
                             "--skip-cli", "--peer-timeout", "900"], exact("0.5")),
    Bench("lsh-rensa", "LSH, 20,000 texts of ~200 words, word:5, K = 128, t = 0.5, end to end from the texts",
          "bench_lsh.py", ["--repeat", "1", "--skip", "allpairs-bands,allpairs-strings,datasketch"], lsh("rensa")),
    Bench("lsh-datasketch", "LSH as above, beside datasketch's MinHashLSH", "bench_lsh.py",
          ["--repeat", "1", "--skip", "allpairs-bands,allpairs-strings,rensa,rensa-bulk"], lsh("datasketch")),
    Bench("compat", "allpairs.compat.all_pairs vs SetSimilaritySearch.all_pairs, Kosarak distinct, Jaccard 0.7",
          "bench_compat.py", ["--runs", "jaccard:0.7", "--queries", "0"], compat),
]


def machine() -> str:
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {model}, {platform.system()} {platform.machine()}, Python {platform.python_version()}"


def run(bench: Bench) -> list[str]:
    """One row's cells, after running its script."""
    print(f"bench_all: {bench.name}: {bench.command()}", file=sys.stderr, flush=True)
    before = os.getloadavg()[0]
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / bench.script), *bench.options],
                          cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True)
    after = os.getloadavg()[0]
    sys.stderr.write(proc.stdout)
    try:
        ours, peer, theirs, shown_ratio = bench.read(tables(proc.stdout))
    except (LookupError, StopIteration, ValueError, AttributeError) as exc:
        ours, peer, theirs, shown_ratio = f"failed (exit {proc.returncode}: {exc})", "-", "-", "-"
    if proc.returncode:
        ours += f" (the script exited {proc.returncode}: see its output)"
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return [bench.what, f"`{bench.command()}`", ours, peer, theirs, shown_ratio, when,
            f"{before:.1f} → {after:.1f}"]


def page(cells: list[list[str]], started: str) -> str:
    head = ["what", "command", "allpairs", "peer", "peer's figure", "ratio (peer / allpairs)", "measured",
            "load (1 min)"]
    lines = [
        "# Benchmarks",
        "",
        "One current figure per benchmark, measured in one run by `python scripts/bench_all.py --markdown "
        "docs/benchmarks.md` (which rewrites this file; history lives in git). Each row's command reproduces it "
        "alone; the scripts' docstrings say what they time and check (every peer comparison checks that both "
        "sides found the same pairs).",
        "",
        f"Machine: {machine()}; run started {started}. The machine is shared, so times vary by ±30 % and more "
        "at high load (the load column is the 1-minute load average before → after the row); ratios vary less. "
        "A ratio above 1 means allpairs is faster.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        *("| " + " | ".join(c.replace("|", "\\|") for c in row_cells) + " |" for row_cells in cells),
        "",
        "Not in this run (long, or needing a Spark session): the saved index and dedup "
        "(`python scripts/bench_query.py`), every measure (`python scripts/bench_exact.py --data kosarak`), "
        "1 M Zipf sets against the C yardstick (`python scripts/bench_front.py --only zipf-1m`), large LSH "
        "buckets (`python scripts/bench_lsh_buckets.py`), dedup and index queries on two-token sets "
        "(`python scripts/bench_two_token.py`), answers larger than memory "
        "(`python scripts/bench_memory.py`, below), and Spark against MLlib "
        "(`python scripts/bench_spark.py`, figures in [spark.md](spark.md)).",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--markdown", type=Path, metavar="FILE", help="write the page to FILE (atomically)")
    ap.add_argument("--only", nargs="+", choices=[b.name for b in BENCHES], help="rows to run (default: all)")
    args = ap.parse_args(argv)
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    cells = [run(b) for b in BENCHES if not args.only or b.name in args.only]
    text = page(cells, started)
    if args.markdown is None:
        sys.stdout.write(text)
        return 0
    # The page's own sections (## headings: measurements of quality, each with its command) stay as they are.
    old = args.markdown.read_text(encoding="utf-8") if args.markdown.exists() else ""
    kept = old[old.index("\n## ") + 1:] if "\n## " in old else ""
    text = text + ("\n" + kept if kept else "")
    tmp = args.markdown.with_name(args.markdown.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, args.markdown)
    print(f"bench_all: wrote {args.markdown}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
