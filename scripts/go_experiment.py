"""The reference experiment (REFERENCE.md section 1): MinHash + LSH against the exact join on the Go tree.

Run from the repository root::

    python scripts/go_experiment.py                 # whole tree, 3104 files, seed 1
    python scripts/go_experiment.py --seeds 5       # seeds 1..5: mean ± sd beside the S-curve's prediction
    python scripts/go_experiment.py --six           # the six directories, 139 files
    python scripts/go_experiment.py --plot plots/   # also the two pictures of 12 × 4 (plot extra needed)

Corpus: the files of :func:`datasets.go.go_reference_files` in the tree
:func:`datasets.go.find_go_src` finds (the shared Go 1.27.3 tree first),
shingled once as ``code:5`` (Go tokens, comments dropped). Threshold 0.5 and
K = 48 MinHash values unless told otherwise. Each banding (12 × 4, 16 × 3,
48 × 1 and the recall-first automatic choice) runs the LSH stages of
``allpairs.join`` on the same shingle sets, once per seed, and is set against
the exact join.

What the columns mean:

- candidates: document pairs that share a bucket in at least one band, as
  the article counts them (files with identical shingle sets always collide;
  files without a shingle never do); ``share`` is of all pairs of the files
  read. ``checks`` are the distinct-set pairs verified, which is the work.
- expected: ``sum of P(s)`` over every pair of files, ``P(s) = 1 - (1 - s^r)^b``
  at the pair's true Jaccard similarity. Every pair's similarity is computed
  exactly, by counting shared shingles through an inverted index (cheap here:
  about 55 M increments for the whole tree), so this is the exact expectation,
  not an estimate.
- found: pairs with J >= t among the candidates (verification is exact, so
  these are true pairs); recall is found / exact; expected recall is the mean
  of P(s) over the exact pairs.
- ±: with several seeds, the sample standard deviation over seeds; beside the
  expectation, the standard deviation pairs would show if they became
  candidates independently of one another. Pairs among near-copies of one file
  do not (when A~B and B~C collide, A~C tends to), so the scatter across seeds
  can be wider than that.
- LSH s: signatures + banding; verify s: exact verification of the checks.

Standard output carries the tables; progress goes to standard error. Exit
status 0; 1 if the brute-force similarity count disagrees with the exact
join (a bug), 2 on bad options.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from fractions import Fraction
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # this repo's `datasets`, not the PyPI package of that name

import numba  # noqa: E402
import numpy as np  # noqa: E402

import allpairs  # noqa: E402
from allpairs._kernels.jit import resolve_jobs  # noqa: E402
from allpairs.exact import prefix_join  # noqa: E402
from allpairs.pipeline import Stats, lsh_pairs, lsh_settings, shingle_corpus  # noqa: E402
from allpairs.lsh import knee, probability  # noqa: E402
from allpairs.measures import Threshold  # noqa: E402
from allpairs.pairs import Pairs  # noqa: E402
from allpairs.report import recall_by_bin  # noqa: E402
from datasets import go  # noqa: E402

#: Pairs with J >= 0.5 in the shared Go 1.27.3 tree (REFERENCE.md section 1).
REFERENCE_EXACT = {"tree": 1590, "six": 59}

#: The article's bandings, for K = 48.
BANDINGS = ((12, 4), (16, 3), (48, 1))

#: Largest number of distinct sets for which the all-pairs overlap matrix (int32, m × m) is built.
MAX_MATRIX_SETS = 20_000


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@numba.njit(nogil=True, cache=False)
def _all_overlaps(indptr, tokens, num_tokens):
    """Shared tokens of every pair of sets (upper triangle of an m × m int32 matrix).

    Sets are CSR with tokens strictly increasing within each set; one pass over
    the inverted index adds 1 to every pair of sets on each posting list.
    """
    m = indptr.shape[0] - 1
    start = np.zeros(num_tokens + 1, np.int64)
    for k in range(tokens.shape[0]):
        start[tokens[k] + 1] += 1
    for v in range(num_tokens):
        start[v + 1] += start[v]
    fill = start[:-1].copy()
    posting = np.empty(tokens.shape[0], np.int32)
    for s in range(m):
        for k in range(indptr[s], indptr[s + 1]):
            v = tokens[k]
            posting[fill[v]] = s
            fill[v] += 1
    overlap = np.zeros((m, m), np.int32)
    for v in range(num_tokens):
        for i in range(start[v], start[v + 1]):
            a = posting[i]
            for j in range(i + 1, start[v + 1]):
                overlap[a, posting[j]] += 1
    return overlap


class AllPairs:
    """True Jaccard similarity of every pair of distinct sets, and the documents each pair stands for."""

    def __init__(self, sets, t: Threshold):
        m = sets.num_sets
        overlap = _all_overlaps(sets.indptr, sets.tokens, sets.num_tokens)
        # Sets are ordered by size, then tokens: set i < j in the matrix's upper triangle.
        left, right = np.triu_indices(m, 1)
        ov = overlap[left, right].astype(np.int64)
        del overlap
        size = np.diff(sets.indptr)
        union = size[left] + size[right] - ov
        group = np.diff(sets.group_indptr).astype(np.int64)
        self.similarity = ov / union
        self.weight = group[left] * group[right]  # document pairs behind each set pair
        self.identical = int((group * (group - 1) // 2).sum())  # pairs of documents with one set: J = 1
        self.at_least_t = ov * t.q >= t.p * union  # J >= p/q, in integers
        self.exact_pairs = int(self.weight[self.at_least_t].sum()) + self.identical

    def expected(self, bands: int, rows: int) -> tuple[float, float, float, float]:
        """(candidates, their sd, recall, its sd) predicted by the S-curve for independent pairs."""
        p = probability(self.similarity, bands, rows)
        w = self.weight
        cand = float((p * w).sum()) + self.identical
        cand_sd = math.sqrt(float((p * (1 - p) * w * w).sum()))
        hit = self.at_least_t
        n = self.exact_pairs
        recall = (float((p[hit] * w[hit]).sum()) + self.identical) / n if n else math.nan
        recall_sd = math.sqrt(float((p[hit] * (1 - p[hit]) * w[hit] ** 2).sum())) / n if n else math.nan
        return cand, cand_sd, recall, recall_sd


def mean_sd(values: list[float]) -> tuple[float, float]:
    a = np.asarray(values, dtype=np.float64)
    return float(a.mean()), float(a.std(ddof=1)) if len(a) > 1 else math.nan


def fmt_count(mean: float, sd: float) -> str:
    return f"{mean:,.0f}" if math.isnan(sd) else f"{mean:,.0f} ± {sd:,.0f}"


def fmt_pct(mean: float, sd: float) -> str:
    if math.isnan(mean):
        return "n/a"
    return f"{100 * mean:.1f}%" if math.isnan(sd) else f"{100 * mean:.1f} ± {100 * sd:.1f}%"


def parse_banding(text: str) -> tuple[int, int]:
    try:
        b, r = text.lower().replace("×", "x").split("x")
        return int(b), int(r)
    except ValueError:
        raise argparse.ArgumentTypeError(f"banding {text!r} is not BxR, e.g. 12x4") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python scripts/go_experiment.py",
        description="MinHash + LSH against the exact join on the Go source tree (REFERENCE.md section 1).",
    )
    parser.add_argument("--six", action="store_true", help="only the six directories of the article (139 files)")
    parser.add_argument("--threshold", "-t", default="0.5", help="Jaccard threshold (default %(default)s)")
    parser.add_argument("--num-perm", type=int, default=48, help="K, MinHash values per file (default %(default)s)")
    parser.add_argument("--banding", type=parse_banding, action="append", metavar="BxR",
                        help="bands x rows to run, repeatable (default 12x4, 16x3, 48x1, and the automatic choice)")
    parser.add_argument("--recall", type=float, default=0.99,
                        help="target P(t) of the automatic choice (default %(default)s)")
    parser.add_argument("--seeds", type=int, default=1, help="run seeds 1..N and show mean ± sd (default 1)")
    parser.add_argument("--plot", type=Path, metavar="DIR",
                        help="write the S-curve and chord pictures of 12 × 4 (first seed) into DIR")
    parser.add_argument("--plot-format", choices=("png", "svg"), default="png", help="(default %(default)s)")
    parser.add_argument("--jobs", type=int, default=0, help="threads, 0 = every core (default)")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error(f"--seeds {args.seeds}: give 1 or more")
    if args.plot is not None and not args.plot.is_dir():
        parser.error(f"--plot {args.plot}: not a directory")
    try:
        t = Threshold.parse(args.threshold)
        runs = [lsh_settings(t, num_perm=args.num_perm, bands=b, rows=r, recall=args.recall, seed=1, bits=None,
                             max_bucket=None) for b, r in (args.banding or BANDINGS)]
        if not args.banding:
            auto = lsh_settings(t, num_perm=args.num_perm, bands=None, rows=None, recall=args.recall, seed=1,
                                bits=None, max_bucket=None)
            if all((auto.bands, auto.rows) != (i.bands, i.rows) for i in runs):
                runs.append(auto)
    except allpairs.UsageError as e:
        parser.error(str(e))
    try:
        jobs = resolve_jobs(args.jobs)
    except allpairs.UsageError as e:
        parser.error(str(e))
    seeds = list(range(1, args.seeds + 1))

    # 1. The corpus and its shingle sets, once.
    src = go.find_go_src()
    files = go.go_reference_files(src, go.SIX_DIRS if args.six else None)
    t0 = time.perf_counter()
    ids = [p.relative_to(src).as_posix() for p in files]
    texts = [p.read_text(encoding="utf-8") for p in files]
    corpus = allpairs.Corpus(ids=ids, texts=texts, languages=["go"] * len(ids), kind="directory")
    corpus.seconds = time.perf_counter() - t0
    log(f"shingling {len(files):,} files of {src} as code:5 ...")
    stats = Stats()
    sets, label = shingle_corpus(corpus, "code:5", normalize=True, min_shingles=1, stats=stats, progress=None)
    n_files = len(files)
    all_pairs = n_files * (n_files - 1) // 2
    no_shingle = sum(1 for _, why in stats.skipped if why == "no shingle")

    # 2. The exact join, and every pair's true similarity to check it and to predict LSH.
    t0 = time.perf_counter()
    found = prefix_join(sets.indptr, sets.tokens, sets.num_tokens, t, jobs=jobs)
    exact = Pairs(sets, found.left, found.right, found.overlap)
    exact_seconds = time.perf_counter() - t0
    truth = None
    if sets.num_sets <= MAX_MATRIX_SETS:
        log(f"similarity of all {sets.num_sets * (sets.num_sets - 1) // 2:,} pairs of distinct sets ...")
        t0 = time.perf_counter()
        truth = AllPairs(sets, t)
        log(f"  {time.perf_counter() - t0:.1f}s")
        if truth.exact_pairs != len(exact):
            log(f"error: brute force finds {truth.exact_pairs:,} pairs with J >= {t}, the exact join {len(exact):,}")
            return 1

    # 3. The LSH stages per banding and seed, on the same sets (after one untimed run that loads the
    # compiled kernels, so that the first banding's time is not the loading).
    lsh_pairs(sets, t, runs[0], verify="exact", jobs=jobs, stats=Stats())
    results = []
    for base in runs:
        per_seed = []
        for seed in seeds:
            # Every bucket expanded (max_expand=None): the candidates counted are the banding's own, as in the article.
            info = lsh_settings(t, num_perm=args.num_perm, bands=base.bands, rows=base.rows, recall=args.recall,
                                seed=seed, bits=None, max_bucket=None, max_expand=None)
            info.auto = base.auto
            st = Stats()
            approx, cand = lsh_pairs(sets, t, info, verify="exact", jobs=jobs, stats=st)
            group = np.diff(sets.group_indptr).astype(np.int64)
            identical = int((group * (group - 1) // 2).sum())
            doc_candidates = int((group[cand.left] * group[cand.right]).sum()) + identical
            per_seed.append({
                "candidates": doc_candidates, "checks": len(cand), "found": len(approx),
                "recall": len(approx) / len(exact) if len(exact) else math.nan,
                "lsh_s": st.seconds.get("signatures", 0.0) + st.seconds.get("bands", 0.0),
                "verify_s": st.seconds.get("verify", 0.0),
                "bins": recall_by_bin(sets, exact, approx, t, info),
            })
            log(f"  {info.bands:>2} × {info.rows} seed {seed}: {doc_candidates:,} candidates, "
                f"{len(approx):,} of {len(exact):,} found")
        results.append((base, per_seed))

    # 4. The table.
    where = "six directories" if args.six else "whole tree"
    ref = REFERENCE_EXACT["six" if args.six else "tree"]
    if t.fraction != Fraction(1, 2):
        ref_note = "REFERENCE.md gives counts for t = 0.5 only"
    elif len(exact) == ref:
        ref_note = "as in REFERENCE.md"
    else:
        ref_note = f"REFERENCE.md has {ref:,} for the shared Go 1.27.3 tree"
    print(f"Go {where}: {src}")
    print(f"{n_files:,} files ({no_shingle} without any shingle), {all_pairs:,} pairs; code:5 shingles "
          f"({stats.shingles:,}, {stats.distinct_shingles:,} distinct), shingling "
          f"{sum(stats.seconds.values()):.1f}s")
    print(f"exact join at t = {t}: {len(exact):,} pairs with J >= {t} ({ref_note}), "
          f"{found.candidates:,} candidates, {exact_seconds:.2f}s")
    print(f"LSH with K = {args.num_perm}, seeds {seeds[0]}..{seeds[-1]}" if len(seeds) > 1
          else f"LSH with K = {args.num_perm}, seed 1")
    print()
    head = ("banding", "knee", f"P({t})", "candidates", "share", "expected", "checks",
            f"found (J >= {t})", "recall", "expected recall", "LSH s", "verify s")
    rows = []
    for info, per_seed in results:
        name = f"{info.bands} × {info.rows}" + (" (auto)" if info.auto else "")
        cand = mean_sd([r["candidates"] for r in per_seed])
        checks = mean_sd([r["checks"] for r in per_seed])
        got = mean_sd([r["found"] for r in per_seed])
        rec = mean_sd([r["recall"] for r in per_seed])
        if truth is not None:
            e_cand, e_cand_sd, e_rec, e_rec_sd = truth.expected(info.bands, info.rows)
            expected_cand = f"{e_cand:,.0f} ± {e_cand_sd:,.0f}" if len(seeds) > 1 else f"{e_cand:,.0f}"
            expected_rec = fmt_pct(e_rec, e_rec_sd if len(seeds) > 1 else math.nan)
        else:  # too many sets for the matrix: the recall prediction still comes from the exact pairs
            expected_cand = "skipped"
            bins = [b for b in per_seed[0]["bins"] if b.exact]
            expected_rec = fmt_pct(sum(b.predicted * b.exact for b in bins) / sum(b.exact for b in bins)
                                   if bins else math.nan, math.nan)
        rows.append((name, f"{knee(info.bands, info.rows):.3f}", f"{probability(float(t.fraction), info.bands, info.rows):.3f}",
                     fmt_count(*cand), f"{100 * cand[0] / all_pairs:.3g}%", expected_cand, fmt_count(*checks),
                     fmt_count(*got), fmt_pct(*rec), expected_rec,
                     f"{np.mean([r['lsh_s'] for r in per_seed]):.3f}",
                     f"{np.mean([r['verify_s'] for r in per_seed]):.3f}"))
    rows.append(("exact", "", "", f"{found.candidates:,}", f"{100 * found.candidates / all_pairs:.3g}%", "", "",
                 f"{len(exact):,}", "100%", "", "", f"{exact_seconds:.3f} (join)"))
    widths = [max(len(str(r[k])) for r in [head, *rows]) for k in range(len(head))]
    for k, r in enumerate([head, *rows]):
        print("  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
        if k == 0:
            print("  ".join("-" * w for w in widths))
    print()
    print("recall per similarity band (mean over seeds) / the S-curve's mean P(s) over the band's pairs")
    bins0 = results[0][1][0]["bins"]
    head = ["banding"] + [f"[{b.lo:.1f}, {b.hi:.1f}{']' if b.hi == 1 else ')'}" for b in bins0]
    table = [head, ["pairs"] + [f"{b.exact:,}" for b in bins0]]
    for info, per_seed in results:
        cells = [f"{info.bands} × {info.rows}"]
        for k, b in enumerate(per_seed[0]["bins"]):
            obs = np.mean([r["bins"][k].recall for r in per_seed]) if b.exact else math.nan
            cells.append("n/a" if math.isnan(obs) else f"{obs:.3f} / {b.predicted:.3f}")
        table.append(cells)
    widths = [max(len(r[k]) for r in table) for k in range(len(head))]
    for r in table:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
    print()
    print("candidates: document pairs sharing a bucket (identical files included); checks: distinct-set pairs"
          " verified;")
    print("expected: sum (candidates) or mean over the exact pairs (recall) of P(s) = 1 - (1 - s^r)^b at every"
          " pair's true J" + ("; its ± is the sd if pairs collided independently" if len(seeds) > 1 else ""))
    if len(seeds) > 1:
        print(f"± beside a measured mean: sd over the {len(seeds)} seeds (the mean itself is uncertain by "
              f"sd / {math.sqrt(len(seeds)):.2g})")

    # 5. The pictures of 12 × 4, through the library's own compare and plot functions.
    if args.plot is not None:
        from allpairs.report.plot import plot_comparison
        from allpairs.report import compare

        log("compare and plot 12 × 4 ...")
        c = compare(corpus, t, shingle="code:5", num_perm=args.num_perm, bands=12, rows=4, seed=seeds[0],
                    max_bucket=None, max_expand=None, jobs=jobs)
        same = [r for info, per_seed in results if (info.bands, info.rows) == (12, 4) for r in per_seed[:1]]
        if same and (same[0]["checks"], same[0]["found"]) != (c.lsh_candidates, c.lsh_pairs):
            log(f"error: compare found {c.lsh_candidates:,} candidates and {c.lsh_pairs:,} pairs, "
                f"the run above {same[0]['checks']:,} and {same[0]['found']:,}")
            return 1
        name = f"go-{'six' if args.six else 'tree'}-12x4-seed{seeds[0]}.{args.plot_format}"
        for path in plot_comparison(c, args.plot / name):
            log(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
