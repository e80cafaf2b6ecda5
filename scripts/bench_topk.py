"""Benchmark exact top-k pairs and k-nearest neighbours against the threshold join and peers, side by side.

Run from the repository root::

    python scripts/bench_topk.py                      # everything that is found (several minutes)
    python scripts/bench_topk.py --skip-social        # without the 1 M-set k-NN run
    python scripts/bench_topk.py --puffinn DIR        # a puffinn checkout for the C++ peer

Top-k (``--k``, default 1000, Jaccard) on (a) the Kosarak sample's distinct
sets (34,985) and (b) the Go tree's sets (``code:5``, the README's Go
command). For each: ``allpairs.join(sets, top=K)`` and the threshold join at
the K-th similarity it found (``allpairs.join(sets, t_K)``), both the fastest
of ``--repeat`` calls after one warm-up, with the join stage alone beside
(``stats.seconds["join"]``); then the peers on the same distinct sets:

The peers read every joined document's set (duplicates repeated), so that
they answer the same question over document pairs:

- Xiao et al.'s event-driven top-k (ICDE 2009) in C++, the ``topk`` function
  of ``join-experiments/XiaoEtAl.cpp`` in the puffinn repository, compiled
  here with ``g++ -O3`` beside a small driver of ours that reads the sets
  (first line the universe size, then one set a line, rank 0 the rarest) in
  place of puffinn's HDF5 protocol; its time is that of ``topk`` alone;
- a brute-force sparse product: the sets as a scipy CSR 0/1 matrix, overlaps
  by ``X[rows] @ X.T`` a block of rows at a time, Jaccard from the sizes,
  the K best kept.

Each result's K-th similarity is checked against allpairs' (the C++ peer
compares floats, so it is shown, not asserted).

k-NN: ``allpairs join --sets F --neighbors 10 -t 0.5 -o /dev/null`` beside
``allpairs join --sets F -t 0.5 --count`` on the 1 M synthetic sets
(``datasets.synthetic`` preset ``social-1m``, written to a temporary file
unless ``--social FILE`` is given), each a separate process: wall time and the
peak memory its summary reports.

Standard output carries only the tables; progress goes to standard error.
Give the machine's load (``uptime``) beside the figures.
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
from fractions import Fraction
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import allpairs  # noqa: E402
from allpairs.pipeline import Stats, as_corpus, shingle_corpus  # noqa: E402
from allpairs.measures import Threshold  # noqa: E402

#: The driver compiled with the peer's ``topk``: reads sets, times ``topk`` alone, prints seconds, count, K-th.
DRIVER = r"""
int main(int argc, char **argv) {
  std::ifstream file(argv[1]);
  size_t k = std::stoull(argv[2]);
  std::string line;
  std::getline(file, line);
  size_t universe = std::stoull(line);
  std::vector<std::vector<uint32_t>> sets;
  while (std::getline(file, line)) {
    std::istringstream in(line);
    std::vector<uint32_t> set;
    uint32_t token;
    while (in >> token) set.push_back(token);
    if (!set.empty()) sets.push_back(set);
  }
  auto start = std::chrono::steady_clock::now();
  std::vector<Pair> best = topk(sets, universe, k);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  float kth = 1.0f;
  for (const Pair &p : best) kth = std::min(kth, p.similarity);
  std::printf("%.6f %zu %.9g\n", seconds, best.size(), (double)kth);
  return 0;
}
"""


def log(*args) -> None:
    print(*args, file=sys.stderr, flush=True)


def best_of(repeat: int, fn):
    """(fastest wall seconds, fastest join stage, the result of the last call), after one untimed warm-up."""
    fn()
    best, join, res = float("inf"), float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = fn()
        best = min(best, time.perf_counter() - t0)
        join = min(join, res.stats.seconds["join"])
    return best, join, res


def kth_similarity(res) -> Fraction:
    p = res.pairs[len(res.pairs) - 1]
    return Fraction(p.overlap, p.left_size + p.right_size - p.overlap)


def build_peer(puffinn: Path, work: Path) -> Path | None:
    """Compile the peer's ``topk`` with our driver; None (and why, on stderr) when it cannot be."""
    source = puffinn / "join-experiments" / "XiaoEtAl.cpp"
    if not source.exists():
        log(f"C++ peer: {source} not found; skipped")
        return None
    if shutil.which("g++") is None:
        log("C++ peer: no g++; skipped")
        return None
    text = source.read_text()
    # Keep the paper's algorithm (structs, jaccard, topk); leave out puffinn's HDF5 reader and protocol.
    body = text[: text.index("puffinn::Dataset<puffinn::SetFormat> read_sets")]
    body = body.replace('#include "protocol.hpp"', "").replace('#include "puffinn.hpp"', "")
    cpp = work / "xiao_topk.cpp"
    cpp.write_text("#include <cstdio>\n#include <cstdint>\n" + body + DRIVER)
    exe = work / "xiao_topk"
    t0 = time.perf_counter()
    r = subprocess.run(["g++", "-O3", "-std=c++17", "-o", str(exe), str(cpp)], capture_output=True, text=True)
    if r.returncode:
        log(f"C++ peer: g++ failed; skipped\n{r.stderr[-2000:]}")
        return None
    log(f"C++ peer: built in {time.perf_counter() - t0:.1f}s")
    return exe


def document_sets(sets) -> tuple[np.ndarray, np.ndarray, int]:
    """Every joined document's set (duplicates repeated), as CSR (indptr, ranks) and the universe size: the
    peers answer the question allpairs does, over document pairs."""
    rows = sets.doc_set[sets.doc_set >= 0].astype(np.int64)
    sizes = np.diff(sets.indptr)[rows]
    indptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    within = np.arange(indptr[-1]) - np.repeat(indptr[:-1], sizes)
    return indptr, sets.tokens[np.repeat(sets.indptr[:-1][rows], sizes) + within], sets.num_tokens


def peer_input(docs, path: Path) -> None:
    """The sets in the peer's format: the universe size, then each set's ranks (0 the rarest)."""
    indptr, tokens, universe = docs
    with open(path, "w") as f:
        f.write(f"{universe}\n")
        for i in range(len(indptr) - 1):
            f.write(" ".join(map(str, tokens[indptr[i]:indptr[i + 1]].tolist())) + "\n")


def run_peer(exe: Path, path: Path, k: int, timeout: float):
    """(seconds of topk, pairs, K-th similarity), or None when it did not finish within ``timeout`` seconds."""
    try:
        r = subprocess.run([str(exe), str(path), str(k)], capture_output=True, text=True, check=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    seconds, found, kth = r.stdout.split()
    return float(seconds), int(found), float(kth)


def sparse_topk(docs, k: int, block: int = 1000):
    """The K best Jaccard pairs of sets by brute force: 0/1 CSR matrix products, a block of rows at a time;
    returns the K-th similarity as a Fraction."""
    from scipy.sparse import csr_matrix

    indptr, tokens, universe = docs
    m = len(indptr) - 1
    sizes = np.diff(indptr)
    x = csr_matrix((np.ones(len(tokens), np.int32), tokens, indptr), shape=(m, universe))
    xt = x.T.tocsr()
    kept_o = np.zeros(0, np.int64)
    kept_a = np.zeros(0, np.int64)
    kept_b = np.zeros(0, np.int64)
    floor = 0.0
    for lo in range(0, m, block):
        prod = (x[lo:lo + block] @ xt).tocoo()
        i, j, o = prod.row.astype(np.int64) + lo, prod.col.astype(np.int64), prod.data.astype(np.int64)
        keep = j > i
        i, j, o = i[keep], j[keep], o[keep]
        sim = o / (sizes[i] + sizes[j] - o)
        keep = sim >= floor
        kept_o = np.concatenate([kept_o, o[keep]])
        kept_a = np.concatenate([kept_a, sizes[i[keep]]])
        kept_b = np.concatenate([kept_b, sizes[j[keep]]])
        if len(kept_o) > 4 * k:
            s = kept_o / (kept_a + kept_b - kept_o)
            floor = np.partition(s, len(s) - k)[len(s) - k]
            keep = s >= floor
            kept_o, kept_a, kept_b = kept_o[keep], kept_a[keep], kept_b[keep]
    values = sorted((Fraction(int(o), int(a + b - o)) for o, a, b in zip(kept_o, kept_a, kept_b)), reverse=True)
    return values[k - 1]


def kosarak_corpus():
    from datasets.kosarak import kosarak_sets

    return kosarak_sets(distinct=True), None


def go_corpus():
    from datasets.go import find_go_src

    src = find_go_src()
    corpus = allpairs.read_directory(src, include=["*.go"], exclude=["*_test.go", "testdata/**"], min_bytes=2048)
    return corpus, "code:5"


def topk_rows(name: str, data, shingle, k: int, repeat: int, peer: Path | None, work: Path,
              timeout: float) -> list[str]:
    log(f"{name}: top {k} ...")
    t_top, j_top, top = best_of(repeat, lambda: allpairs.join(data, top=k, shingle=shingle))
    kth = kth_similarity(top)
    t_thr, j_thr, thr = best_of(repeat, lambda: allpairs.join(data, Threshold(kth.numerator, kth.denominator),
                                                               shingle=shingle))
    ranked = sorted(thr.pairs, key=lambda p: (-Fraction(p.overlap, p.left_size + p.right_size - p.overlap),
                                              p.left, p.right))[:k]
    assert list(top.pairs) == ranked, f"{name}: top {k} differs from the ranked threshold join"
    notes = "; ".join(n for n in top.stats.notes if n.startswith("top"))
    rows = [f"| {name} | allpairs --top {k} | {t_top:.2f} | {j_top:.2f} | {float(kth):.6f} | "
            f"{t_top / t_thr:.2f}× the threshold join's wall, {j_top / j_thr:.2f}× its join stage ({notes}) |",
            f"| {name} | allpairs -t {float(kth):.6f} (the K-th) | {t_thr:.2f} | {j_thr:.2f} | | "
            f"{len(thr.pairs):,} pairs |"]
    sets, _ = shingle_corpus(as_corpus(data), shingle, normalize=True, min_shingles=1,
                             stats=Stats(), progress=None)
    docs = document_sets(sets)
    if peer is not None:
        path = work / f"{name.split()[0].lower()}.sets"
        peer_input(docs, path)
        log(f"{name}: C++ Xiao et al. ...")
        got = run_peer(peer, path, k, timeout)
        if got is None:
            rows.append(f"| {name} | C++ Xiao et al. (puffinn) topk | | > {timeout:.0f} | | "
                        f"> {timeout / j_top:.0f}× allpairs' join stage (stopped) |")
        else:
            seconds, found, peer_kth = got
            rows.append(f"| {name} | C++ Xiao et al. (puffinn) topk | | {seconds:.2f} | {peer_kth:.6f} | "
                        f"{seconds / j_top:.2f}× allpairs' join stage; {found:,} pairs (float similarities) |")
    log(f"{name}: sparse product ...")
    t0 = time.perf_counter()
    sp_kth = sparse_topk(docs, k)
    t_sp = time.perf_counter() - t0
    same = "same K-th" if sp_kth == kth else f"K-th {sp_kth} differs!"
    rows.append(f"| {name} | scipy sparse product (brute force) | | {t_sp:.2f} | {float(sp_kth):.6f} | "
                f"{t_sp / j_top:.1f}× allpairs' join stage; {same} |")
    return rows


def cli_run(args: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    r = subprocess.run([str(Path(sys.executable).parent / "allpairs"), *args], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode:
        raise RuntimeError(r.stderr)
    peak = re.search(r"peak memory ([\d,]+ MiB)", r.stderr)
    return wall, peak.group(1) if peak else "?"


def social_rows(path: Path) -> list[str]:
    rows = []
    for label, args in (("join -t 0.5 --count", ["--count"]),
                        ("join --neighbors 10 -t 0.5 -o /dev/null", ["--neighbors", "10", "-o", "/dev/null"])):
        log(f"social-1m: {label} ...")
        wall, peak = cli_run(["join", "--sets", str(path), "-t", "0.5", *args])
        rows.append(f"| social-1m (1 M sets) | allpairs {label} | {wall:.1f} | {peak} |")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--k", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--puffinn", type=Path, default=Path(os.environ.get("PUFFINN", "")) if os.environ.get("PUFFINN")
                    else None, help="a puffinn checkout (the C++ peer); default $PUFFINN")
    ap.add_argument("--peer-timeout", type=float, default=300, help="stop each peer run after this many seconds")
    ap.add_argument("--skip-go", action="store_true")
    ap.add_argument("--skip-social", action="store_true")
    ap.add_argument("--social", type=Path, help="the social-1m sets file (made in a temporary folder if absent)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        peer = build_peer(args.puffinn, work) if args.puffinn else None
        if peer is None and not args.puffinn:
            log("C++ peer: no --puffinn DIR given; skipped")
        print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
        print("| data | run | wall s | join stage s | K-th similarity | notes |")
        print("|---|---|---|---|---|---|")
        corpora = [("Kosarak distinct", kosarak_corpus)] + ([] if args.skip_go else [("Go tree", go_corpus)])
        for name, make in corpora:
            try:
                data, shingle = make()
            except FileNotFoundError as e:
                log(f"{name}: not found ({e}); skipped")
                continue
            for row in topk_rows(name, data, shingle, args.k, args.repeat, peer, work, args.peer_timeout):
                print(row, flush=True)
        if not args.skip_social:
            path = args.social
            if path is None or not path.exists():
                path = path or work / "social-1m.sets"
                log(f"writing {path} ...")
                subprocess.run([sys.executable, "-m", "datasets.synthetic", "zipf", "--preset", "social-1m", "-o",
                                str(path)], check=True, cwd=REPO)
            print()
            print("| data | run | wall s | peak memory |")
            print("|---|---|---|---|")
            for row in social_rows(path):
                print(row, flush=True)
        print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
