"""Count the instructions of the saved index's probe (index query and dedup) and of the join's, by callgrind.

Run from the repository root (valgrind's callgrind, Debian's ``valgrind``; a C compiler)::

    python scripts/count_index_probe.py                    # every workload below
    python scripts/count_index_probe.py --only kosarak     # one of them
    ALLPAIRS_TREE=/path/to/other/tree python scripts/count_index_probe.py --out other.json   # another tree's kernels

The workloads, made in ``--folder`` first (``allpairs sets``): the Kosarak
sample (``../shared/datasets/kosarak-sample.dat``, short sets, median 4
items), the Go 1.27.3 tree as ``code:5`` sets (long: median about 1,000
shingles; unpacked to ``/tmp/go/src`` if absent), the shared password list as
``char:2`` sets (short), and 20,000 two-token sets ``c u<i>`` (every set
shares ``c``; no pair reaches 0.5). For each: ``SearchIndex.build`` at the
lowest threshold, then every k-th set (``WORKLOADS``) queried against it
(``SearchIndex._query_ranked``, the compiled probe of :func:`allpairs.index._kernel.query`
with its Python around it: queries hashed and ranked before the count), and
``allpairs.index.dedup``'s compiled loop over every set
(``dedup._dedup_in_blocks``: the postings built before the count). Each step is counted alone between callgrind client requests
(``--instr-atstart=no``), one thread, with numba's JIT (a fresh cache, filled
by a run without valgrind first) so that two trees compare on the same code
generation. Instruction counts do not move with the machine's load; match and
pair counts must agree between trees (printed beside them).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = next((p for p in (REPO_ROOT.parent / "shared", REPO_ROOT.parents[1] / "shared") if p.is_dir()),
              REPO_ROOT.parent / "shared") / "datasets"
GO_SRC = Path("/tmp/go/src")

#: name -> (index threshold, query thresholds, dedup thresholds, every how many sets is a query)
WORKLOADS = {
    "kosarak": ("0.5", ["0.5", "0.9"], ["0.5", "0.8"], 4),
    "go": ("0.5", ["0.5", "0.9"], ["0.5", "0.8"], 10),
    "passwords": ("0.5", ["0.5", "0.8"], ["0.5", "0.8"], 1),
    "two-token": ("0.5", ["0.5"], ["0.5"], 4),
}

def log(*args) -> None:
    print(*args, file=sys.stderr, flush=True)


def allpairs_cli() -> list[str]:
    return [sys.executable, "-m", "allpairs"]


def sets_file(name: str, folder: Path) -> Path:
    path = folder / f"{name}.sets"
    if path.exists():
        return path
    if name == "kosarak":
        path.write_bytes((SHARED / "kosarak-sample.dat").read_bytes())
    elif name == "two-token":
        path.write_text("".join(f"c u{i}\n" for i in range(10000, 30000)))
    elif name == "passwords":
        subprocess.run(allpairs_cli() + ["sets", "-q", "-s", "char:2", "--lines", str(SHARED / "passwords-john.txt"),
                                         "-o", str(path)], check=True)
    else:
        if not (GO_SRC / "bytes").is_dir():
            GO_SRC.mkdir(parents=True, exist_ok=True)
            subprocess.run(["tar", "-xJf", str(SHARED / "go1.27.3-src-nontest.tar.xz"), "-C", str(GO_SRC)], check=True)
        subprocess.run(allpairs_cli() + ["sets", "-q", "-s", "code:5", "--include", "*.go", "--exclude", "*_test.go",
                                         "--exclude", "testdata/**", "--min-bytes", "2048", str(GO_SRC),
                                         "-o", str(path)], check=True)
    return path


def pick(ranked, rows):
    """The ranked queries ``rows`` only."""
    import numpy as np

    from allpairs.index.arrays import spans
    from allpairs.index.vocabulary import Ranked

    starts = ranked.indptr[rows]
    lengths = ranked.indptr[rows + 1] - starts
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    return Ranked(indptr, ranked.tokens[spans(starts, lengths)], ranked.unseen[rows])


def steps(name: str, path: Path):
    """(label, function returning what it found) of each counted step of one workload, and a warm-up that
    runs every kernel once on a few sets (numba loads each from its cache then, outside the count)."""
    import importlib

    import numpy as np

    from allpairs.corpus.read import read_sets
    from allpairs.index._kernel import build_postings
    from allpairs.index.rule import Rule
    from allpairs.index.search import SearchIndex
    from allpairs.pipeline.front import shingle_corpus
    from allpairs.pipeline.stats import Stats

    dedup_module = importlib.import_module("allpairs.index.dedup")
    t_index, t_query, t_dedup, every = WORKLOADS[name]
    corpus = read_sets(str(path))
    index = SearchIndex.build(corpus, t_index)
    ranked = index.vocab.rank(*index._keys(corpus, None, None))
    ranked = pick(ranked, np.arange(0, len(ranked.unseen), every))
    sets, _ = shingle_corpus(corpus, None, normalize=True, min_shingles=1, stats=Stats(), progress=None)
    sizes = np.diff(sets.indptr)

    def query(rule, ranked=ranked):
        return len(index._query_ranked(ranked, rule)[0])

    def dedup(rule, postings, sets=sets, sizes=sizes):
        return len(dedup_module._dedup_in_blocks(sets, rule, sizes, postings, None)[1])

    todo, warm = [], []
    few = pick(ranked, np.arange(min(50, len(ranked.unseen))))
    for t in t_query:
        rule = index._rule_at(t)
        todo.append((f"{name} query t={t} ({len(ranked.unseen):,} queries)", lambda rule=rule: query(rule)))
        warm.append(lambda rule=rule: query(rule, few))
    for t in t_dedup:
        rule = Rule.parse("jaccard", t)
        postings = build_postings(sets.indptr, sets.tokens, rule.index_prefix(sizes), sets.num_tokens,
                                  sets.num_tokens)
        todo.append((f"{name} dedup t={t}", lambda rule=rule, postings=postings: dedup(rule, postings)))
    head = path.with_suffix(".head")
    head.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:50]))
    small, _ = shingle_corpus(read_sets(str(head)), None, normalize=True, min_shingles=1, stats=Stats(),
                              progress=None)
    small_sizes = np.diff(small.indptr)
    rule = Rule.parse("jaccard", t_dedup[0])
    warm.append(lambda: dedup(rule, build_postings(small.indptr, small.tokens, rule.index_prefix(small_sizes),
                                                   small.num_tokens, small.num_tokens), small, small_sizes))
    return todo, lambda: [fn() for fn in warm]


def child(region: str | None, names: list[str], folder: Path, bitmap: str) -> None:
    """Each step of each workload, counted between client requests when ``region`` is given; JSON lines."""
    import ctypes

    if bitmap != "rule":  # the bitmap filter everywhere, or nowhere, instead of where the median set is short
        import allpairs.verify as verify
        verify.BITMAP_MEDIAN_MAX = 2**62 if bitmap == "on" else -1

    counted = ctypes.CDLL(region).counted_region if region else None
    for name in names:
        todo, warm = steps(name, folder / f"{name}.sets")
        warm()  # every kernel compiled (first run) or loaded from numba's cache (under valgrind), uncounted
        if counted is None:
            continue
        for label, fn in todo:
            got = {}

            @ctypes.CFUNCTYPE(None)
            def stage(fn=fn, got=got):
                got["n"] = fn()

            counted(stage, label.encode())
            print(json.dumps({"step": label, "found": got["n"]}), flush=True)


def use_tree() -> None:
    """With ``ALLPAIRS_TREE`` set, import allpairs from that source tree, not the editable install."""
    tree = os.environ.get("ALLPAIRS_TREE")
    if tree:
        sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__.lower()
                            and "editable" not in getattr(f, "__name__", "").lower()]
        sys.path.insert(0, tree)


def main() -> int:
    use_tree()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", action="append", choices=sorted(WORKLOADS), help="a workload (repeatable)")
    ap.add_argument("--folder", default="/tmp/allpairs-count-index", help="workload files and the dumps")
    ap.add_argument("--out", help="also write the counts as JSON here")
    ap.add_argument("--bitmap", choices=("rule", "on", "off"), default="rule",
                    help="the bitmap filter where verify.bitmaps_prune says (default), everywhere, or nowhere "
                         "(trees that have verify.BITMAP_MEDIAN_MAX)")
    ap.add_argument("--child", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args()
    folder = Path(args.folder)
    names = args.only or list(WORKLOADS)
    if args.child is not None:
        child(args.child[0] or None, names, folder, args.bitmap)
        return 0
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        sets_file(name, folder)
    import allpairs
    log(f"allpairs from {Path(allpairs.__file__).parent}")
    # bench_sota's client requests and dump reader (imported after allpairs: it puts this tree first on the path)
    sys.path.insert(1, str(Path(__file__).resolve().parent))
    from bench_sota import REGION_C, callgrind_dumps as dumps

    region = folder / "counted_region.so"
    if not region.exists():
        (folder / "counted_region.c").write_text(REGION_C)
        subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(region), str(folder / "counted_region.c")],
                       check=True)
    cache = folder / f"numba-cache-{os.getpid()}"
    env = {**os.environ, "ALLPAIRS_KERNELS": "jit", "NUMBA_CACHE_DIR": str(cache)}
    base = [sys.executable, __file__, "--folder", str(folder), "--bitmap", args.bitmap] + [f"--only={n}" for n in names]
    subprocess.run(base + ["--child", ""], env=env, check=True)  # numba compiles into its cache, uncounted
    prefix = folder / f"run-{os.getpid()}.callgrind"
    run = subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={prefix}"]
                         + base + ["--child", str(region)], env=env, check=True, capture_output=True, text=True)
    counts = dumps(prefix)
    rows = []
    print(f"| step | instructions | found |\n|---|---:|---:|")
    for line in run.stdout.splitlines():
        got = json.loads(line)
        rows.append({**got, "Ir": counts[got["step"]]})
        print(f"| {got['step']} | {counts[got['step']]:,} | {got['found']:,} |")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
