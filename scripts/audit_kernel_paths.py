"""Run every kernel family on all three kernel paths over extreme inputs, and compare.

Every kernel is written once and runs three ways (``allpairs._kernels.jit``): the
function built ahead of time (``compiled``), numba's JIT (``jit``) and the
plain Python function on numpy scalars (``python``). Their integer arithmetic
differs unless the kernel says which type it means (numba computes on 64 bits,
numpy keeps an int32's width and wraps at 2**31), so this script runs each
family on the same extreme inputs in the three ways and compares the answers,
and where there is one, with an exact oracle in Python integers and fractions:

- the per-pair arithmetic (α and accept of every measure, the 128-bit
  product comparison, the truncated cosine, the dedup's ranking of matches):
  thresholds 1e-9, 0.999999999, 536870913/10**9, 1, set sizes from 1 to
  2**31 - 1, passed as Python ints, int64 and int32 scalars;
- whole joins (every measure, self and R–S), index queries, dedup, compat,
  writing pairs with their similarity, MinHash signatures, LSH candidates and
  shingle keys, on random small corpora at those thresholds;
- the Spark engine's rank lookup, on extreme keys and ranks.

Usage: ``python scripts/audit_kernel_paths.py [--corpora N] [--seed S] [--timeout S]``.
Prints one line per family (cases compared, disagreements, the first few
disagreements in full) and exits 1 on any disagreement; the plain path giving
no answer within ``--timeout`` seconds on a case disagrees. The first jit run compiles every kernel it meets (minutes; then
numba's cache).
"""
from __future__ import annotations

import argparse
import io
import random
import signal
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import naive  # noqa: E402  (the tests' oracle)

from allpairs.measures import _kernel as mk  # noqa: E402
from allpairs._kernels.jit import use_kernels  # noqa: E402
from allpairs.measures import MEASURES, Threshold  # noqa: E402

PATHS = ("compiled", "jit", "python")
BILLION = 10**9
MAX_SET_SIZE = 2**31 - 1
THRESHOLDS = [Fraction(1, BILLION), Fraction(BILLION - 1, BILLION), Fraction(536870913, BILLION),
              Fraction(700000001, BILLION), Fraction(1), Fraction(7, 10), Fraction(1, 999999937)]
SIZES = [1, 2, 3, 11, 12, 46340, 46341, 65535, 65536, 2**30, 2**31 - 2, MAX_SET_SIZE]
WIDTHS = (int, np.int64, np.int32)


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


class Audit:
    """Counts per family: cases compared and those where the paths (or the oracle) disagree."""

    def __init__(self, timeout: int) -> None:
        self.rows: dict[str, list[int]] = {}
        self.examples: dict[str, list[str]] = {}
        self.timeout = timeout
        signal.signal(signal.SIGALRM, _alarm)

    def check(self, family: str, case, run, oracle=None) -> None:
        answers = {}
        for path in PATHS:
            with use_kernels(path):
                if path == "python":  # a plain-path loop that runs away is an answer too (numba's compiling is not)
                    signal.alarm(self.timeout)
                try:
                    answers[path] = run()
                except _Timeout:
                    answers[path] = f"no answer in {self.timeout} s"
                except Exception as e:  # an error is an answer to compare, not a stop
                    answers[path] = f"{type(e).__name__}: {e}"
                finally:
                    signal.alarm(0)
        row = self.rows.setdefault(family, [0, 0])
        row[0] += 1
        distinct = {repr(v) for v in answers.values()}
        if oracle is not None:
            distinct.add(repr(oracle))
        if len(distinct) > 1:
            row[1] += 1
            shown = self.examples.setdefault(family, [])
            if len(shown) < 3:
                shown.append(f"{case}: {answers}" + ("" if oracle is None else f", oracle {oracle!r}"))

    def report(self) -> int:
        bad = 0
        for family, (cases, wrong) in self.rows.items():
            print(f"{family:<28} {cases:>7,} cases  {wrong:>5,} disagree")
            for line in self.examples.get(family, []):
                print(f"    {line[:400]}")
            bad += wrong
        return 1 if bad else 0


def _int(v):
    return int(v) if isinstance(v, (int, np.integer)) else v


def per_pair(audit: Audit) -> None:
    """α, accept, the 128-bit comparison, the truncated cosine and the dedup ranking on extreme scalars."""
    from allpairs.index._kernel import more_similar

    for name, m in MEASURES.items():
        for t in THRESHOLDS if not m.integer_threshold else [Fraction(1), Fraction(7), Fraction(2**31 - 1)]:
            th = Threshold(t.numerator, t.denominator)
            for x in SIZES:
                for y in SIZES[::3] + [x]:
                    alpha = m.required_overlap(th, x, y)
                    for w in WIDTHS:
                        args = (m.code, w(th.p), w(th.q), w(x), w(y)) if w is not np.int32 or th.p < 2**31 else None
                        if args is None:
                            continue
                        audit.check("alpha", (name, t, x, y, w.__name__),
                                    lambda: _int(mk.required_overlap(*args)), alpha)
    big = [0, 1, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**32 + 1, 2**61 + 3, 2**62, 2**63 - 1]
    rng = random.Random(7)
    for _ in range(400):
        a, b, c, d = (rng.choice(big) if rng.random() < 0.6 else rng.randrange(2**63) for _ in range(4))
        audit.check("products_ge", (a, b, c, d), lambda: bool(mk.products_ge(a, b, c, d)), a * b >= c * d)
        a, b, c, d = (v % 2**31 for v in (a, b, c, d))  # as the kernels read them from int32 arrays
        audit.check("products_ge int32", (a, b, c, d),
                    lambda: bool(mk.products_ge(*map(np.int32, (a, b, c, d)))), a * b >= c * d)
    cos = MEASURES["cosine"]
    for x in SIZES:
        for y in SIZES[::2]:
            for o in {0, 1, min(x, y) // 2, min(x, y)}:
                for scale in (1, 10**6, 10**9):
                    for dt in (np.int32, np.int64):
                        audit.check("cosine_truncated", (o, x, y, scale, dt.__name__),
                                    lambda: mk.cosine_truncated(np.array([o], dt), np.array([x], dt),
                                                                np.array([y], dt), scale).tolist(),
                                    [cos.truncated(o, x, y, len(str(scale)) - 1)])
    for name in ("jaccard", "cosine", "dice", "containment", "containment_min", "overlap"):
        code = MEASURES[name].code
        for _ in range(60):
            sx, s1, s2 = (rng.choice(SIZES) for _ in range(3))
            o1, o2 = rng.randint(0, min(sx, s1)), rng.randint(0, min(sx, s2))
            want = _more_similar_oracle(name, sx, o1, s1, o2, s2)
            audit.check("more_similar", (name, sx, o1, s1, o2, s2),
                        lambda: int(more_similar(code, np.int32(sx), np.int32(o1), np.int32(s1), np.int32(o2),
                                                 np.int32(s2))), want)


def _more_similar_oracle(name, sx, o1, s1, o2, s2) -> int:
    def value(o, sy):
        if name == "jaccard":
            return Fraction(o, sx + sy - o)
        if name == "cosine":
            return Fraction(o * o, sx * sy)
        if name == "dice":
            return Fraction(2 * o, sx + sy)
        if name == "containment_min":
            return Fraction(o, max(sx, sy))
        return Fraction(o)
    a, b = value(o1, s1), value(o2, s2)
    return (a > b) - (a < b)


def _corpus(rng: random.Random, n: int, max_size: int) -> list[list[int]]:
    """Sets over a skewed vocabulary, with copies, empty sets and singletons."""
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.15 and out:
            s = list(rng.choice(out))
        elif r < 0.2:
            s = []
        elif r < 0.3:
            s = [int(rng.paretovariate(1.2)) % 80]
        else:
            s = list({int(rng.paretovariate(0.9)) % 200 for _ in range(rng.randint(1, max_size))})
        out.append(s)
    return out


def _threshold_for(measure: str, t: Fraction):
    return t.numerator % 4 + 1 if measure == "overlap" else t


def whole_runs(audit: Audit, corpora: int, seed: int) -> None:
    """Joins, R–S joins, index queries, dedup, compat, written similarities, MinHash, LSH and shingle keys."""
    import allpairs
    from allpairs import compat
    from allpairs.index import SearchIndex, dedup
    from allpairs.measures import JOIN_MEASURES

    rng = random.Random(seed)
    for k in range(corpora):
        sets = _corpus(rng, rng.randint(2, 40), rng.choice([6, 14, 60, 300]))
        other = _corpus(rng, rng.randint(1, 20), 14)
        if not any(sets):
            continue
        t0 = rng.choice(THRESHOLDS + naive_near(sets))
        for measure in JOIN_MEASURES:
            t = _threshold_for(measure, t0)
            audit.check("join", (k, measure, t), lambda: [tuple(p) for p in allpairs.join(sets, t, measure=measure).pairs],
                        naive.all_pairs(sets, t, measure))
            audit.check("join, posted signatures", (k, measure, t),
                        lambda: _posted(lambda: [tuple(p) for p in allpairs.join(sets, t, measure=measure).pairs]),
                        naive.all_pairs(sets, t, measure))
            audit.check("join, probed in blocks", (k, measure, t),
                        lambda: _blocked(lambda: [tuple(p) for p in allpairs.join(sets, t, measure=measure).pairs]),
                        naive.all_pairs(sets, t, measure))
            for marks in (False, True):
                audit.check(f"join, candidates {'looked up' if marks else 'merged'}", (k, measure, t),
                            lambda: _verified(marks, lambda: [tuple(p) for p in
                                                              allpairs.join(sets, t, measure=measure).pairs]),
                            naive.all_pairs(sets, t, measure))
            audit.check("join R-S", (k, measure, t),
                        lambda: [tuple(p) for p in allpairs.join(sets, t, measure=measure, against=other).pairs],
                        naive.rs_pairs(sets, other, t, measure))
            audit.check("index query", (k, measure, t), lambda: _answers(SearchIndex.build(sets, t, measure=measure), other),
                        naive.rs_pairs(other, sets, t, measure))
            audit.check("dedup", (k, measure, t),
                        lambda: dedup(sets, t, measure=measure).duplicate_of.tolist(),
                        [kk for _, kk in naive.dedup(sets, t, measure) if kk is not None])
            audit.check("written similarity", (k, measure, t), lambda: _written(allpairs.join(sets, t, measure=measure)))
        ft = float(t0)
        for func in ("jaccard", "cosine", "containment_min"):
            audit.check("compat all_pairs", (k, func, ft),
                        lambda: sorted(compat.all_pairs([s or [0] for s in sets], similarity_func_name=func,
                                                        similarity_threshold=ft)))
        audit.check("compat query", (k, ft),
                    lambda: [compat.SearchIndex([s or [0] for s in sets], similarity_func_name="containment",
                                                similarity_threshold=ft).query(q) for q in other])
        audit.check("lsh join", (k,), lambda: [tuple(p) for p in allpairs.join(sets, 0.5, method="lsh", bands=8, rows=2,
                                                                                 num_perm=16).pairs])
        texts = [" ".join(f"w{v}" for v in s) for s in sets]
        audit.check("shingle keys", (k,), lambda: _keys(texts))


def _verified(marks: bool, run):
    """``run()`` with the probe verifying its candidates by looking them up in a bit set of the probe set's
    (``marks``) however short the sets, else by merge however few the tokens."""
    import allpairs.exact.prefix as prefix

    saved = prefix.MARKS_MAX_TOKENS, prefix.MARKS_MIN_MEAN_SIZE
    prefix.MARKS_MAX_TOKENS, prefix.MARKS_MIN_MEAN_SIZE = (1 << 21, 0) if marks else (-1, 0)
    try:
        return run()
    finally:
        prefix.MARKS_MAX_TOKENS, prefix.MARKS_MIN_MEAN_SIZE = saved


def _posted(run):
    """``run()`` with the postings carrying their sets' signatures however few the sets (the probe's other
    variant, made only for large joins)."""
    import allpairs.exact.prefix as prefix

    saved, prefix.POSTED_BITS_MIN_SETS = prefix.POSTED_BITS_MIN_SETS, 0
    try:
        return run()
    finally:
        prefix.POSTED_BITS_MIN_SETS = saved


def _blocked(run):
    """``run()`` with self-joins probed in blocks of sets (:func:`allpairs.exact.large.probe_blocked`) however few
    the sets: the signatures in the postings, candidates merged."""
    import allpairs.exact.prefix as prefix

    saved = prefix.BLOCKED_MIN_SETS, prefix.POSTED_BITS_MIN_SETS, prefix.MARKS_MAX_TOKENS
    prefix.BLOCKED_MIN_SETS, prefix.POSTED_BITS_MIN_SETS, prefix.MARKS_MAX_TOKENS = 0, 0, -1
    try:
        return run()
    finally:
        prefix.BLOCKED_MIN_SETS, prefix.POSTED_BITS_MIN_SETS, prefix.MARKS_MAX_TOKENS = saved


def naive_near(sets) -> list[Fraction]:
    from strategies import near_hits
    near = near_hits(sets)
    return near[:: max(1, len(near) // 6)]


def _answers(index, queries):
    """An index's matches as the oracle's tuples (indexed documents by their ids: positions in the list)."""
    return sorted((q, int(index.ids[d]), o, a, b) for q, d, o, a, b in index.query(queries))


def _written(res) -> bytes:
    """The pairs as ``join`` prints them in CSV: ids, similarity truncated to 6 places, overlap, sizes."""
    from allpairs.pairs import PairWriter

    out = io.BytesIO()
    PairWriter([str(i) for i in res.ids], "csv", measure=res.measure).write(res.pairs, out)
    return out.getvalue()


def _keys(texts):
    from allpairs.shingles import shingle_texts
    indptr, keys = shingle_texts(texts, "word:2")
    return indptr.tolist(), keys.tolist()


def spark_rank_lookups(audit: Audit) -> None:
    """The Spark engine's rank lookup (its radix sort of the found ranks) on extreme keys and ranks: keys 0
    and 2**64 - 1, ranks up to 2**31 - 1 (three counting passes), one-bit buckets, rows found whole, in
    part, not at all, against a dict."""
    try:
        from allpairs.engines.spark._kernel import lookup_ranks
    except ImportError:  # no spark extra
        return
    rng = random.Random(11)
    edge_keys = [0, 1, 2**63 - 1, 2**63, 2**64 - 2, 2**64 - 1]
    for case in range(120):
        n_table = rng.choice([0, 1, 2, 7, 64, 300])
        table = sorted(set(edge_keys[:rng.randrange(len(edge_keys) + 1)] +
                           [rng.randrange(2**64) for _ in range(n_table)]))
        top = rng.choice([1, 2**11, 2**22, 2**31 - 1])
        ranks = rng.sample(range(top), min(len(table), top)) if top < 2**22 else \
            list({rng.randrange(top) for _ in range(len(table))} | {top - 1})[:len(table)]
        table = table[:len(ranks)]
        bits = rng.choice([1, 3, 9])
        keys = np.array(table, np.uint64)
        shift = np.uint64(64 - bits)
        offsets = np.zeros((1 << bits) + 1, np.int64)
        np.cumsum(np.bincount((keys >> shift).astype(np.int64), minlength=1 << bits), out=offsets[1:])
        pool = table + [rng.randrange(2**64) for _ in range(20)] + edge_keys
        rows = [rng.sample(pool, min(len(pool), rng.choice([0, 1, 2, 5, 40]))) for _ in range(rng.randrange(8))]
        rows = [list(dict.fromkeys(r)) for r in rows]
        indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int64)
        flat = np.array([k for r in rows for k in r], np.uint64)
        rank_of = dict(zip(table, ranks))
        want = [sorted(rank_of[k] for k in r if k in rank_of) for r in rows]
        table_ranks = np.array(ranks, np.int32)

        def run():
            ptr, got = lookup_ranks(indptr, flat, keys, offsets, shift, table_ranks)
            return [got[a:b].tolist() for a, b in zip(ptr[:-1], ptr[1:])]

        audit.check("spark lookup_ranks", (case, len(table), top, bits), run, want)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", type=int, default=60, help="random corpora for the whole runs (default 60)")
    ap.add_argument("--seed", type=int, default=23)
    ap.add_argument("--timeout", type=int, default=20, help="seconds the plain path may take on one case (default 20)")
    args = ap.parse_args()
    audit = Audit(args.timeout)
    start = time.perf_counter()
    per_pair(audit)
    whole_runs(audit, args.corpora, args.seed)
    spark_rank_lookups(audit)
    status = audit.report()
    print(f"{time.perf_counter() - start:.0f} s; paths: {', '.join(PATHS)}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
