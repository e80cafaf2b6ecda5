"""Identical documents joined where they meet, in the token-group tasks: no grouping before the route.

The distributed exact join (:mod:`.exact`) needs each distinct set once in
the prefix-filter join, and each group of identical documents paired (at
``J = 1``) once. Grouping them first took a shuffle of every document's key
array and a pass over it (1 M Zipf sets: 141 MiB and ~2.5 s of a ~13 s
join). Instead the planning pass counts each shingle's *documents*, copies
included (:func:`with_set`), and the documents themselves are ranked and
routed. Counting copies changes only the global order, and prefix filtering
is exact in any order; what it buys is a test for identity on ranks alone. A
key held by two identical documents is in two documents, so it is ranked:
a document with a shingle of its own (``n_single > 0``) has no copy, and two
documents with none are identical exactly when their ranks are equal.

Identical documents are routed alike (the same ranks, the same prefix), so
every copy of a set reaches every token group's task that set reaches. In
each task (:func:`joined_with_copies`) the copies are grouped (equal ranks
among the rows with no shingle of their own), the first of each group (the
smallest id) joins in their stead, and each pair found is expanded to every
copy on either side: a pair of distinct sets is kept in one task only, so are
its document pairs. The pairs among a group's own copies come from one task:
that of its first token's group. That task also counts the copies merged,
which the report's distinct sets and their shingles subtract
(:class:`Merged`). Pairs are handed on in batches of at most about
:data:`PAIRS_BATCH` rows (10,000 copies of one set: ~50 M pairs, never one
array). Hot tokens' tasks split a token's sets into chunks by set id, which
would part copies: a plan with a hot token split groups the identical sets
first, as before (:func:`.join.plan`).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from .arrow import csr, key_slices, numpy
from .files import SkipCounts
from .sets import identical_sets

#: Most pairs in one Arrow batch of a task's output, about.
PAIRS_BATCH = 1 << 20


def with_set(docs, min_size: int):
    """``docs`` (ord, ..., size, keys) with ``set``: its own ``ord`` for a document of at least ``min_size`` (at
    least 1) shingles, else null; :func:`.sets.summarize` then counts every joined document as a set, and
    each shingle's documents."""
    from pyspark.sql import functions as F

    return docs.withColumn("set", F.when(F.col("size") >= max(1, min_size), F.col("ord")))


class Merged:
    """The distinct sets and their shingles, summed: the planning pass's documents (``distinct``, ``shingles``,
    copies counted) less the copies the join tasks merged, once the pairs are computed
    (:attr:`.sets.Summary.late`). ``accumulator`` is given ``{partition: (copies, their shingles)}``."""

    def __init__(self, sc, distinct: int, shingles: int):
        self.accumulator = sc.accumulator({}, SkipCounts())
        self.distinct, self.shingles = distinct, shingles

    @property
    def value(self) -> tuple[int, int]:
        merged = self.accumulator.value.values()
        return (self.distinct - sum(m[0] for m in merged), self.shingles - sum(m[1] for m in merged))


def _copies(r_ptr, ranks, n_single, set_id):
    """Each row's group of identical rows: the smallest set id among the rows of no shingle of their own and
    the same ranks (int64), its own id for the others.

    Most rows have no shingle of their own and few have a copy (1 M Zipf sets: 85 % and 3 % of a task's
    ~990 k rows), so the rows are first sorted by a cheap hash of their size and four of their ranks (first,
    second, middle, last), and only those in runs of that hash (108 k of 851 k there) go on to
    :func:`.sets.identical_sets` (all their ranks hashed and compared): 0.5 CPU s a task grouped whole."""
    rep = set_id.copy()
    cand = np.flatnonzero(n_single == 0)
    if len(cand) < 2:
        return rep
    lo, hi = r_ptr[cand], r_ptr[cand + 1]
    h = (hi - lo).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    for at, mix in ((lo, 0xC2B2AE3D27D4EB4F), (np.minimum(lo + 1, hi - 1), 0x94D049BB133111EB),
                    ((lo + hi) // 2, 0x27D4EB2F165667C5), (hi - 1, 0x165667B19E3779F9)):
        h ^= ranks[at].astype(np.uint64) * np.uint64(mix)
    by = np.argsort(h)
    h = h[by]
    same = h[1:] == h[:-1]
    in_run = np.zeros(len(h), bool)
    in_run[1:] |= same
    in_run[:-1] |= same
    cand = cand[by[in_run]]
    if len(cand) < 2:
        return rep
    m = r_ptr[cand + 1] - r_ptr[cand]
    sub_ptr = np.zeros(len(cand) + 1, np.int64)
    np.cumsum(m, out=sub_ptr[1:])
    starts = np.repeat(r_ptr[cand] - sub_ptr[:-1], m) + np.arange(int(sub_ptr[-1]), dtype=np.int64)
    # Ranks mixed (a bijection: equal ranks, equal keys), so that their xor, the grouping's hash, spreads.
    keys = ranks[starts].astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    keys ^= keys >> np.uint64(29)
    found = identical_sets(sub_ptr, keys, set_id[cand], np.ones(len(cand), bool))
    rep[cand] = np.where(found >= 0, found, set_id[cand])
    return rep


def _members(rep: np.ndarray, set_id: np.ndarray):
    """The groups of more than one copy: (their first ids ascending, start and count of each in ``ids``, ids:
    each group's ids, the first one first), every copy once however many tasks of the block hold it."""
    other = rep != set_id
    pair = np.unique(np.stack([rep[other], set_id[other]]), axis=1)
    firsts = np.unique(pair[0])
    key = np.concatenate([firsts, pair[0]])
    ids = np.concatenate([firsts, pair[1]])
    order = np.lexsort((ids != key, key))
    key, ids = key[order], ids[order]
    start = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]]))
    return firsts, start, np.diff(np.append(start, len(key))), ids


def _batch(a, b, overlap, size_a, size_b) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.array(a, pa.int64()), pa.array(b, pa.int64()), pa.array(overlap, pa.int32()),
         pa.array(size_a, pa.int32()), pa.array(size_b, pa.int32())],
        names=["a", "b", "overlap", "size_a", "size_b"])


def _expanded(found: pa.RecordBatch, groups, limit: int):
    """``found``'s pairs of first copies as the pairs of every copy on either side, in batches of at most
    ``limit`` pairs: pairs of few copies together, one of more copies (two sets of 10,000 copies each: 10^8)
    in slices of its own."""
    firsts, start, count, ids = groups
    a, b = numpy(found.column("a"), np.int64), numpy(found.column("b"), np.int64)

    def side(x):
        at = np.searchsorted(firsts, x).clip(max=max(0, len(firsts) - 1))
        has = (firsts[at] == x) if len(firsts) else np.zeros(len(x), bool)
        return has, np.where(has, start[at], 0), np.where(has, count[at], 1)

    ha, sa, na = side(a)
    hb, sb, nb = side(b)
    n = na * nb
    cols = [numpy(found.column(c), np.int32) for c in ("overlap", "size_a", "size_b")]

    def rows(p, within):
        i, j = within // nb[p], within % nb[p]
        return _batch(np.where(ha[p], ids[sa[p] + i], a[p]), np.where(hb[p], ids[sb[p] + j], b[p]),
                      *(c[p] for c in cols))

    big = n > limit
    for q in np.flatnonzero(big).tolist():
        for lo in range(0, int(n[q]), limit):
            within = np.arange(lo, min(int(n[q]), lo + limit), dtype=np.int64)
            yield rows(np.full(len(within), q, np.int64), within)
    small = np.flatnonzero(~big)
    for lo, hi in key_slices(np.concatenate([[0], np.cumsum(n[small])]), limit):
        k = n[small[lo:hi]]
        p = np.repeat(small[lo:hi], k)
        yield rows(p, np.arange(int(k.sum()), dtype=np.int64) - np.repeat(np.cumsum(k) - k, k))


def _within(ids: np.ndarray, start: np.ndarray, count: np.ndarray, size: np.ndarray, limit: int):
    """Every pair of each group's copies (``ids[start:start + count]``, of ``size`` shingles), in batches of
    about ``limit`` pairs: groups of at most ``limit`` copies squared together, a larger one by rows."""
    square = count * count
    big = square > limit
    for k in np.flatnonzero(big).tolist():
        c, s = int(count[k]), int(start[k])
        rows = max(1, limit // c)
        for lo in range(0, c - 1, rows):
            i = np.repeat(np.arange(lo, min(c - 1, lo + rows), dtype=np.int64), c)
            j = np.tile(np.arange(c, dtype=np.int64), len(i) // c)
            keep = j > i
            n = np.full(int(keep.sum()), size[k], np.int32)
            yield _batch(ids[s + i[keep]], ids[s + j[keep]], n, n, n)
    small = np.flatnonzero(~big)
    for lo, hi in key_slices(np.concatenate([[0], np.cumsum(square[small])]), limit):
        k = small[lo:hi]
        p = np.repeat(k, square[k])
        within = np.arange(len(p), dtype=np.int64) - np.repeat(np.cumsum(square[k]) - square[k], square[k])
        i, j = within // count[p], within % count[p]
        keep = j > i
        p, i, j = p[keep], i[keep], j[keep]
        n = size[p].astype(np.int32)
        yield _batch(ids[start[p] + i], ids[start[p] + j], n, n, n)


def joined_with_copies(blocks, join, groups: int, merged, limit: int = PAIRS_BATCH):
    """The pairs (a, b, overlap, size_a, size_b) of a partition's ``blocks`` of complete token groups' tasks
    (routed rows, ``g`` = -1 - group), identical documents grouped in each block first; ``join(table)``
    joins rows of distinct sets (:func:`.exact._join_block`). The accumulator ``merged`` (:class:`Merged`)
    is given the partition's copies merged and their shingles once all are yielded."""
    counts = np.zeros(2, np.int64)
    for table in blocks:
        for out in _block_pairs(table, join, groups, limit):
            if isinstance(out, tuple):
                counts += out
            else:
                yield out
    from pyspark import TaskContext

    merged.add({TaskContext.get().partitionId(): tuple(counts.tolist())})


def _block_pairs(table: pa.Table, join, groups: int, limit: int):
    """:func:`joined_with_copies` of one block: its pairs' batches, then ``(copies merged, their shingles)``."""
    r_ptr, ranks = csr(table.column("ranks"), np.int32)
    n_single = numpy(table.column("n_single"), np.int64)
    set_id = numpy(table.column("set"), np.int64)
    rep = _copies(r_ptr, ranks, n_single, set_id)
    first = rep == set_id
    if first.all():
        yield join(table)
        yield (0, 0)
        return
    found = join(table.filter(pa.array(first)))
    members = _members(rep, set_id)
    yield from _expanded(found, members, limit)
    # Each group's pairs among its copies, from the task of its first token's group only.
    g = numpy(table.column("g"), np.int64)
    size = numpy(table.column("size"), np.int64)
    firsts, start, count, ids = members
    row = np.flatnonzero(first & np.isin(set_id, firsts))
    row = row[g[row] == -1 - ranks[r_ptr[row]].astype(np.int64) % groups]
    k = np.searchsorted(firsts, set_id[row])
    yield from _within(ids, start[k], count[k], size[row], limit)
    yield (int((count[k] - 1).sum()), int(((count[k] - 1) * size[row]).sum()))
