"""Count what a prefix index keyed by token pairs for frequent tokens would read, against the single-token one.

Run from the repository root on a file of sets (issue 34's growth files, ``scripts/bench_growth.py``)::

    python scripts/count_pair_keys.py zipf1m.sets --df 64 128 256
    python scripts/count_pair_keys.py zipf10m.sets --df 64 128      # 10 M sets: ~10 min a --df, ~12 GB
    python scripts/count_pair_keys.py small.sets --df 2 4 8 --check  # and every true pair admitted (brute force)

A study, not a kernel: it decides whether the next index is worth building. Self-join, Jaccard, the file's
sets read and ranked as ``allpairs join --sets`` ranks them (tokens rare to frequent, sets by size). Counted:

* **single** (the join's index today): each set indexed under the tokens of its index prefix (|y| - α(y, y) +
  1); each probe set x looks up the tokens of its probe prefix (|x| - ⌈t|x|⌉ + 1). *Visits* are look-ups, the
  *window* the postings of sets before x in x's size window, *admitted* those that pass the positional bound
  (the entries the probe's bitmap bound reads: on the 1 M sets 60.2 M, which the counting copy of
  ``probe_blocked`` measured as 60.1 M live entries in session 58).
* **pairs**, for each ``--df D``: a token whose document frequency is at least D is *frequent* (ranks follow
  frequency, so a set's frequent tokens are a suffix of it). Rare prefix tokens are indexed and looked up as
  above. A frequent token w at position j of y's index prefix is indexed under the key (w, v) for every v at
  positions j+1 .. |y| - α(y, y) + 1 (the index prefix one longer), and x looks up (x_i, x_m) for each frequent
  x_i of its probe prefix and m up to its probe prefix one longer. A pair that overlaps in α >= 2 tokens shares
  its first two common tokens within both prefixes made one longer (the ℓ-prefix of Wang, Li, Feng, SIGMOD
  2012, ℓ = 2): if the first is rare, its single list holds the pair; if frequent, the key of the first two
  does. So the keyed index misses nothing the single one finds; what it buys is shorter lists where unrelated
  sets share one frequent token (pkwise, Wang, Qin, Lin, Zhang, Zhang, VLDB 2017, signs such tokens by k of
  them).

Standard output carries one line per scheme; the run's time goes to standard error.
"""
from __future__ import annotations

import argparse
import sys
import time
from fractions import Fraction

import numpy as np
from numba import njit

from allpairs.verify._kernel import merge

KEY = np.int64(1) << 31  # a pair key: w * KEY + v (tokens are int32)


@njit(cache=True)
def _alpha(num, den, sx, sy):
    """⌈t / (1 + t) · (|x| + |y|)⌉ for t = num / den: Jaccard's required overlap."""
    n = num * (sx + sy)
    d = num + den
    return (n + d - 1) // d


@njit(cache=True)
def _plan(indptr, num, den):
    n = indptr.shape[0] - 1
    sizes = indptr[1:] - indptr[:-1]
    probe_len = np.empty(n, np.int64)
    index_len = np.empty(n, np.int64)
    win_lo = np.empty(n, np.int64)  # the first set of size >= ⌈t|x|⌉
    first = np.full(sizes.max() + 2, n, np.int64)
    for s in range(n - 1, -1, -1):
        first[sizes[s]] = s
    for s in range(sizes.max(), -1, -1):
        first[s] = min(first[s], first[s + 1])
    for x in range(n):
        s = sizes[x]
        least = (num * s + den - 1) // den
        probe_len[x] = s - least + 1
        index_len[x] = s - _alpha(num, den, s, s) + 1
        win_lo[x] = first[least]
    return sizes, probe_len, index_len, win_lo


@njit(cache=True)
def _single_index(indptr, tokens, index_len, n_tokens):
    ptr = np.zeros(n_tokens + 1, np.int64)
    for y in range(indptr.shape[0] - 1):
        for j in range(index_len[y]):
            ptr[tokens[indptr[y] + j] + 1] += 1
    for k in range(n_tokens):
        ptr[k + 1] += ptr[k]
    fill = ptr[:-1].copy()
    post_y = np.empty(ptr[-1], np.int32)
    post_j = np.empty(ptr[-1], np.int32)
    for y in range(indptr.shape[0] - 1):
        for j in range(index_len[y]):
            w = tokens[indptr[y] + j]
            post_y[fill[w]] = y
            post_j[fill[w]] = j
            fill[w] += 1
    return ptr, post_y, post_j


@njit(cache=True)
def _lower(a, lo, hi, v):
    while lo < hi:
        m = (lo + hi) >> 1
        if a[m] < v:
            lo = m + 1
        else:
            hi = m
    return lo


@njit(cache=True)
def _count_single(indptr, tokens, sizes, probe_len, win_lo, ptr, post_y, post_j, num, den, rare_below, collect):
    """(visits, window, admitted) of every token and of the tokens below ``rare_below``; with ``collect``, also
    the pairs x * n + y that those below it admit."""
    n = indptr.shape[0] - 1
    c = np.zeros(6, np.int64)
    out = [np.int64(0) for _ in range(0)]
    for x in range(n):
        sx = sizes[x]
        for i in range(probe_len[x]):
            w = tokens[indptr[x] + i]
            a = _lower(post_y, ptr[w], ptr[w + 1], win_lo[x])
            b = _lower(post_y, a, ptr[w + 1], x)
            admitted = 0
            for e in range(a, b):
                sy = sizes[post_y[e]]
                if 1 + min(sx - i - 1, sy - post_j[e] - 1) >= _alpha(num, den, sx, sy):
                    admitted += 1
                    if collect and w < rare_below:
                        out.append(x * n + post_y[e])
            c[0] += 1
            c[1] += b - a
            c[2] += admitted
            if w < rare_below:
                c[3] += 1
                c[4] += b - a
                c[5] += admitted
    return c, np.array(out, np.int64)


@njit(cache=True)
def _pair_postings(indptr, tokens, index_len, frequent_from, keys, post_y, post_j, post_k):
    """The keyed postings (written where ``keys`` is not empty); their number."""
    e = 0
    for y in range(indptr.shape[0] - 1):
        s = indptr[y]
        end = min(index_len[y] + 1, indptr[y + 1] - s)
        for j in range(index_len[y]):
            w = tokens[s + j]
            if w < frequent_from:
                continue
            for k in range(j + 1, end):
                if keys.shape[0]:
                    keys[e] = w * KEY + tokens[s + k]
                    post_y[e] = y
                    post_j[e] = j
                    post_k[e] = k
                e += 1
    return e


@njit(cache=True)
def _count_pairs(indptr, tokens, sizes, probe_len, win_lo, keys, key_ptr, post_y, post_j, post_k, num, den,
                 frequent_from, collect):
    """(look-ups, window, admitted) of the keyed lists: both positional bounds (one match, then two); with
    ``collect``, also the admitted pairs x * n + y."""
    n = indptr.shape[0] - 1
    c = np.zeros(3, np.int64)
    out = [np.int64(0) for _ in range(0)]
    for x in range(n):
        s = indptr[x]
        sx = sizes[x]
        end = min(probe_len[x] + 1, sx)
        for i in range(probe_len[x]):
            w = tokens[s + i]
            if w < frequent_from:
                continue
            for m in range(i + 1, end):
                key = w * KEY + tokens[s + m]
                u = _lower(keys, 0, keys.shape[0], key)
                c[0] += 1
                if u == keys.shape[0] or keys[u] != key:
                    continue
                a = _lower(post_y, key_ptr[u], key_ptr[u + 1], win_lo[x])
                b = _lower(post_y, a, key_ptr[u + 1], x)
                c[1] += b - a
                for e in range(a, b):
                    sy = sizes[post_y[e]]
                    alpha = _alpha(num, den, sx, sy)
                    if (1 + min(sx - i - 1, sy - post_j[e] - 1) >= alpha
                            and 2 + min(sx - m - 1, sy - post_k[e] - 1) >= alpha):
                        c[2] += 1
                        if collect:
                            out.append(x * n + post_y[e])
    return c, np.array(out, np.int64)


@njit(cache=True)
def _true_pairs(indptr, tokens, sizes, num, den):
    """Every pair x > y with |x ∩ y| >= α, by merge over all pairs (the oracle of ``--check``): x * n + y."""
    n = indptr.shape[0] - 1
    out = []
    for x in range(n):
        for y in range(x):
            alpha = _alpha(num, den, sizes[x], sizes[y])
            if merge(tokens, indptr[x], indptr[x + 1], tokens, indptr[y], indptr[y + 1], 0, alpha) >= alpha:
                out.append(x * n + y)
    return np.array(out, np.int64)


def ordered_sets(path: str):
    """The file's distinct sets as the join stage gets them (CSR, tokens ranked rare to frequent)."""
    from allpairs.corpus.read import read_sets
    from allpairs.pipeline.front import shingle_corpus
    from allpairs.pipeline.stats import Stats

    sets, _ = shingle_corpus(read_sets(path), None, normalize=True, min_shingles=1, stats=Stats(), progress=None)
    return sets.indptr.astype(np.int64), sets.tokens, sets.num_tokens


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", help="a file of sets (one per line, whitespace-separated tokens)")
    ap.add_argument("--threshold", default="0.5", help="Jaccard threshold (default 0.5)")
    ap.add_argument("--check", action="store_true",
                    help="also check that the keyed scheme admits every pair a brute-force join finds (small files)")
    ap.add_argument("--df", nargs="+", type=int, default=[64, 128, 256],
                    help="document frequencies from which a token is frequent (one count each)")
    args = ap.parse_args(argv)
    t = Fraction(args.threshold)
    num, den = t.numerator, t.denominator
    t0 = time.time()
    indptr, tokens, n_tokens = ordered_sets(args.path)
    sizes, probe_len, index_len, win_lo = _plan(indptr, num, den)
    if (_alpha(num, den, sizes[0], sizes[0]) < 2) or np.any(np.diff(sizes) < 0):
        sys.exit("needs sets in size order whose smallest pairs need an overlap of 2 or more")
    ptr, post_y, post_j = _single_index(indptr, tokens, index_len, n_tokens)
    c, _ = _count_single(indptr, tokens, sizes, probe_len, win_lo, ptr, post_y, post_j, num, den, n_tokens, False)
    print(f"{args.path} t={t}: {len(sizes):,} sets; single: index {len(post_y):,}, visits {c[0]:,}, "
          f"window {c[1]:,}, admitted {c[2]:,}", flush=True)
    # Ranks follow the documents' frequency; the distinct sets' nearly so (copies): the running maximum.
    df = np.maximum.accumulate(np.bincount(tokens, minlength=n_tokens))
    for d in args.df:
        frequent_from = int(np.searchsorted(df, d))
        r, rare = _count_single(indptr, tokens, sizes, probe_len, win_lo, ptr, post_y, post_j, num, den, frequent_from,
                                 args.check)
        empty = np.empty(0, np.int64)
        n = _pair_postings(indptr, tokens, index_len, frequent_from, empty, empty, empty, empty)
        keys, py, pj, pk = np.empty(n, np.int64), np.empty(n, np.int32), np.empty(n, np.int8), np.empty(n, np.int8)
        _pair_postings(indptr, tokens, index_len, frequent_from, keys, py, pj, pk)
        o = np.argsort(keys, kind="stable")  # by key, each key's postings in set order
        keys, py, pj, pk = keys[o], py[o], pj[o], pk[o]
        del o
        keys, starts = np.unique(keys, return_index=True)
        key_ptr = np.append(starts, n).astype(np.int64)
        p, keyed = _count_pairs(indptr, tokens, sizes, probe_len, win_lo, keys, key_ptr, py, pj, pk, num, den,
                                frequent_from, args.check)
        if args.check:
            truth = _true_pairs(indptr, tokens, sizes, num, den)
            missed = np.setdiff1d(truth, np.concatenate((rare, keyed)))
            print(f"  check, df >= {d}: {len(truth):,} pairs by brute force, {len(missed):,} not admitted")
            if len(missed):
                sys.exit(1)
        print(f"  pairs, df >= {d}: index {int(ptr[frequent_from]):,} single + {n:,} keyed ({len(keys):,} keys); "
              f"visits {r[3]:,} + {p[0]:,} look-ups; window {r[4]:,} + {p[1]:,}; "
              f"admitted {r[5]:,} + {p[2]:,} = {r[5] + p[2]:,}", flush=True)
    print(f"{time.time() - t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
