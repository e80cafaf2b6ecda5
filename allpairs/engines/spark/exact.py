"""Stage 4a on Spark: the prefix-filter join, one task per group of prefix tokens.

Vernica, Carey, Li, "Efficient parallel set-similarity joins using MapReduce",
SIGMOD 2010. Every distinct set goes to the task of each shared shingle of its
probing prefix (``|x| - ⌈t|x|⌉ + 1`` rarest tokens; a pair with ``J >= t``
shares its rarest common token there). Inside a task the local engine's
prefix-filter join (:func:`allpairs.exact.prefix_join`) finds its pairs, and a
pair is kept only in the task of its first shared token, so each pair comes
out once without a global distinct. Many tasks share one kernel call: each
task's tokens are renamed apart, so no pair crosses tasks.

Token groups. A set is copied whole to each task it goes to, so a set whose
prefix holds ``k`` shared tokens would cost ``k`` copies of itself: ``(1 - t) s²``
ranks for a set of ``s`` shingles, quadratic in its length (on the Go tree two
generated Unicode tables of ~50,000 shingles made 4 GB each, and the whole
tree 17 GB of copies). So, as in Vernica et al.'s grouped tokens, the tokens
are dealt round-robin by rank into ``groups`` groups (``rank mod groups``: rare
and frequent tokens spread evenly) and a set goes once to each group of its
prefix tokens: at most ``groups`` copies, whatever its length. A pair is kept
in the group of its first shared token.

A group's task joins only through its own tokens. Its sets carry all their
tokens (verification needs them), and a join over all of them would meet
every pair of sets that reach the task, whatever group its first shared token
is in: with short sets nearly every set reaches nearly every group, and each
task would redo most of the whole join. So in the task of group ``g`` the
*live* tokens are those of ``g`` (hot tokens excepted); each set's tokens are
put in the task's order, live tokens first (by rank), then its other shared
tokens (by rank), then its own ones; and a set indexes only its live tokens
that lie within its indexing prefix of the global order, and probes only
those within its probing prefix (``index_limit``, ``probe_limit`` of
:func:`allpairs.exact.prefix_join`). Why that finds each pair of ``g``
exactly: let ``w`` (live) be the first shared token of a pair with ``J >= t``.
Prefix filtering is exact in any order the sets share, and the task's order is
one. In the global order ``w`` lies within the indexing prefix of the earlier
(smaller) set and the probing prefix of the later one, so it lies within both
limits; it is also the first shared token in the task's order (a shared token
before it there would be live with a smaller rank). A match at positions
``(i, j)`` within the limits has only live tokens before it in both sets, all
within the limits, so every common token before it was matched: the count the
positional bound (Xiao et al., WWW 2008) and verification start from is
exact, the pair is never pruned wrongly and its overlap is exact. Skipping
the other groups' tokens in the global order instead would undercount the
matches before a live one, and the positional bound would drop true pairs
(``tests/test_spark.py`` has such a pair). Every pair the task returns is
thus exact. The local join's work over all groups is then about one join of
all sets, not one per group: each posting list is that of a token's own task.

A group's task keeps only its own pairs, and drops the others unverified. A
pair sharing prefix tokens of ``c`` groups is a candidate in each of them:
verified in full in each and dropped in all but one, it cost ``c`` merges
(100k Zipf sets: 205,689 candidates verified in the tasks for the local
join's 76,102, and 122,676 pairs found for 30,204 kept). The join is told
how many of a set's tokens are live (``live_len``; the others, at or above
its ``num_tokens``, are the other groups' and the hot ones, then the set's
own) and drops, before the merge, a candidate whose sets share a token not
live before their first live match in the global order
(:func:`allpairs.exact._kernel.probe_verify`: the first match found by a
merge of the two fronts when more than one was counted, then the tokens not
live merged only as far as its global positions). Each pair with ``J >= t``
then comes out of exactly one task, whose group is that of its first shared
token ``w``. If ``w`` is live in a group's task (its group's), the pair is
found there (above) and no token precedes ``w`` in both sets, so it is kept.
In any other group's task, a candidate's first live match ``w'`` comes after
``w`` in the global order (``w`` is the first shared token, and is not live
there), and ``w`` is a shared token not live that precedes it: dropped. A
pair whose ``w`` is hot is dropped by every group's task the same way, and
kept by the hot task of ``w`` (below). ``tests/test_exact.py`` checks this
rule on any global order and any dealing of tokens into groups (some tokens
in none): each pair comes out of the group of its first common token only.

The bounds at a first match read global positions. In the task's order a
live token sits nearer the front than in the global order (the other groups'
tokens before it moved behind it), so the positional bound and the stop along
a posting list, read there, would prune less than one global join. The join
is given each token's position in the global order of its set (``at`` of
:func:`allpairs.exact.prefix_join`; increasing along the live tokens) and
reads those at a pair's first match instead: for a pair the task keeps, the
first live match is at ``w``, its first shared token, and no common token
precedes ``w`` in the global order either, so its overlap is at most ``1 +
min(|x| - a - 1, |y| - b - 1)`` for ``w``'s global positions ``a``, ``b``
(Xiao et al.'s bound, PPJoin); a pair pruned by it at a first live match
that is not its first shared token is one this task drops anyway. The count
of matches and verification stay in the task's order (exact, as above).

Hot tokens. A token in the prefixes of more than ``max_group`` sets gets
tasks of its own, split by set size. Its sizes, ascending, are cut into
ranges of at most ``max_group`` sets; a single size with more sets than that
is a range of its own, divided into ``m = ⌈count / max_group⌉`` chunks by
``set id mod m``. A pair is joined in the task of its two chunks (one task per
unordered pair of chunks whose sizes can meet the size bound ``t|y| <= |x|``,
i.e. ``q·max(range 1) >= p·min(range 2)``), and a task of two different chunks
keeps only the pairs that cross them. So each pair is still found exactly once,
no hot task holds more than two chunks (``2 · max_group`` sets), and a set is
copied to as many tasks as there are chunks of sizes it can pair with. A hot
task joins its sets over all their tokens, ranked by its own frequencies
(:func:`allpairs.order.order_sets`), and keeps the pairs whose first shared
token is its own (the first shared token of each pair it finds, worked out
after the join: :func:`allpairs.engines.spark._kernel.first_shared`).

Task keys (``g``, ``c1``, ``c2``): ``g = -1 - group`` for a group of ordinary
tokens (``c1 = c2 = 0``), ``g = rank`` of a hot token with chunks ``c1 <= c2``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ...exact import prefix_join
from ...exact.plan import join_plan
from ...measures import Threshold, get_measure
from ...order import gather_csr, order_sets
from ._kernel import first_shared, group_tokens, hot_routes
from .copies import joined_with_copies
from .arrow import (PACKED_SCHEMA, complete_groups, csr, group_starts, in_small_pages, key_array, numpy, one_table,
                    packed, struct, unpacked)

#: A prefix-token group of more sets than this is split by set size.
MAX_GROUP = 10_000

#: A routed set's shared ranks travel as one binary value (:func:`.arrow.key_array`, 4 bytes a rank): the
#: JVM copies it whole where an ``array<int>`` is converted element by element, twice (into the shuffle
#: and out of it into the task joins' Arrow batches). The routed rows themselves reach the JVM packed
#: (:func:`.arrow.packed`): a value per partition of the join stage and batch of the routing.
ROUTED_SCHEMA = "g int, c1 int, c2 int, chunk int, set long, size int, n_single int, ranks binary"
ROUTED_ARROW = pa.schema([("g", pa.int32()), ("c1", pa.int32()), ("c2", pa.int32()), ("chunk", pa.int32()),
                          ("set", pa.int64()), ("size", pa.int32()), ("n_single", pa.int32()), ("ranks", pa.binary())])
SET_PAIRS_SCHEMA = "a long, b long, overlap int, size_a int, size_b int"
TASK = ("g", "c1", "c2")


@dataclass
class GroupPlan:
    """The split of one hot group: size ranges ``lo..hi`` with ``m`` chunks each, and the chunks each range meets."""

    lo: np.ndarray
    hi: np.ndarray
    m: np.ndarray
    first_chunk: np.ndarray
    meets: list[np.ndarray]
    #: Sets of each range (from the histogram): what the routing copies, ``sets[r]`` times ``len(meets[r])``.
    sets: np.ndarray

    @property
    def chunks(self) -> int:
        return int(self.m.sum())

    @property
    def tasks(self) -> int:
        """Tasks of this group: unordered pairs of chunks that meet, a chunk with itself included."""
        listed = sum(len(self.meets[r]) * int(self.m[r]) for r in range(len(self.lo)))
        return (listed + self.chunks) // 2

    @property
    def routed(self) -> int:
        """Rows the routing sends to this group's tasks: each set once per chunk its range meets."""
        return int(sum(int(self.sets[r]) * len(self.meets[r]) for r in range(len(self.lo))))


def split_group(sizes, counts, max_group: int, t: Threshold) -> GroupPlan:
    """Cut a hot group's size histogram (``sizes`` ascending, ``counts``) into chunks of at most ``max_group`` sets."""
    ranges: list[tuple[int, int, int]] = []
    held_sets: list[int] = []
    lo = hi = None
    held = 0
    for s, n in zip(map(int, sizes), map(int, counts)):
        if lo is not None and (n > max_group or held + n > max_group):
            ranges.append((lo, hi, 1))
            held_sets.append(held)
            lo, held = None, 0
        if n > max_group:
            ranges.append((s, s, math.ceil(n / max_group)))
            held_sets.append(n)
            continue
        lo = s if lo is None else lo
        hi, held = s, held + n
    if lo is not None:
        ranges.append((lo, hi, 1))
        held_sets.append(held)
    lo_a = np.array([r[0] for r in ranges], np.int64)
    hi_a = np.array([r[1] for r in ranges], np.int64)
    m_a = np.array([r[2] for r in ranges], np.int64)
    first = np.concatenate([[0], np.cumsum(m_a)[:-1]]).astype(np.int64)
    meets = []
    for r in range(len(ranges)):
        # Ranges r1 <= r2 meet when a set of r1 can reach t times a set of r2: q·hi(r1) >= p·lo(r2).
        near = [r2 for r2 in range(len(ranges))
                if t.q * hi_a[min(r, r2)] >= t.p * lo_a[max(r, r2)]]
        meets.append(np.concatenate([np.arange(first[r2], first[r2] + m_a[r2]) for r2 in near]).astype(np.int64))
    return GroupPlan(lo_a, hi_a, m_a, first, meets, np.array(held_sets, np.int64))


def _routes(batch, p: int, q: int):
    """Rows of the batch and the prefix token each goes to: (row int64, g int32), row by row."""
    indptr, ranks = csr(batch.column("ranks"))
    size = numpy(batch.column("size"), np.int64)
    n_single = numpy(batch.column("n_single"), np.int64)
    # Probing prefix |x| - ⌈p|x|/q⌉ + 1; its first n_single tokens are the set's own, never shared.
    plen = size + (-p * size) // q + 1
    k = np.clip(plen - n_single, 0, None)
    row = np.repeat(np.arange(len(size), dtype=np.int64), k)
    within = np.arange(int(k.sum()), dtype=np.int64) - np.repeat(np.cumsum(k) - k, k)
    return row, ranks[indptr[row] + within].astype(np.int32)


@in_small_pages
def _histogram_batches(batches, p, q, column: str, hot_values: np.ndarray, hot_ranks: np.ndarray):
    """mapInArrow body: (g, size, n), how many routes of the batch go to each possibly hot token (one with
    more sets than max_group) from sets of each size: partial counts, summed on the driver.

    A set's hot tokens are found among its ``column`` (its keys, or its ranks) by their values
    ``hot_values`` (sorted), whose ranks are ``hot_ranks``: the set's other tokens are not ranked."""
    for batch in batches:
        indptr, values = csr(batch.column(column))
        size = numpy(batch.column("size"), np.int64)
        row, g = hot_routes(indptr, np.ascontiguousarray(values, hot_values.dtype), size,
                            size + (-p * size) // q + 1, hot_values, hot_ranks)
        pair = (g.astype(np.int64) << 32) | size[row]
        uniq, n = np.unique(pair, return_counts=True)
        yield pa.RecordBatch.from_arrays([pa.array((uniq >> 32).astype(np.int32), pa.int32()),
                                          pa.array((uniq & 0xFFFFFFFF).astype(np.int32), pa.int32()),
                                          pa.array(n.astype(np.int64), pa.int64())], names=["g", "size", "n"])


def _route_rows(batch, p: int, q: int, plans: dict[int, GroupPlan], groups: int):
    """Rows of the batch and the task each goes to, once per task: (row, g, c1, c2, chunk), row by row."""
    row, g = _routes(batch, p, q)
    hot = np.array(sorted(plans), np.int32)
    is_hot = np.isin(g, hot) if len(hot) else np.zeros(len(g), bool)
    # Ordinary tokens: once per (group of the token, row); by group, then row, so that each group's rows
    # are one run (one packed value: :func:`.arrow.packed`).
    n_rows = max(1, batch.num_rows)
    code = (g[~is_hot] % groups) * n_rows + row[~is_hot]
    if n_rows * groups <= 4 * len(code) + 65536:
        # Marked in a (group, row) table and read back in order: the distinct codes, sorted, without a sort.
        seen = np.zeros(n_rows * groups, bool)
        seen[code] = True
        code = np.flatnonzero(seen)
    else:
        code = np.unique(code)
    nr = code % n_rows
    zero = np.zeros(len(nr), np.int32)
    parts = [(nr, (-1 - code // n_rows).astype(np.int32), zero, zero, zero)]
    if is_hot.any():
        set_id = numpy(batch.column("set"), np.int64)
        size = numpy(batch.column("size"), np.int64)
        for gv in np.unique(g[is_hot]).tolist():
            plan = plans[gv]
            rows = row[g == gv]
            r = np.searchsorted(plan.lo, size[rows], side="right") - 1
            own = plan.first_chunk[r] + set_id[rows] % plan.m[r]
            for rv in np.unique(r).tolist():
                sel = r == rv
                other = plan.meets[rv]
                rr = np.repeat(rows[sel], len(other))
                mine = np.repeat(own[sel], len(other))
                theirs = np.tile(other, int(sel.sum()))
                parts.append((rr, np.full(len(rr), gv, np.int32), np.minimum(mine, theirs).astype(np.int32),
                              np.maximum(mine, theirs).astype(np.int32), mine.astype(np.int32)))
    return tuple(np.concatenate([pt[i] for pt in parts]) for i in range(5))


#: Most rank values in one Arrow batch a routing task hands to Spark (4 bytes each: 64 MiB).
ROUTE_BATCH_VALUES = 1 << 24


def _slices(lengths: np.ndarray, limit: int):
    """(start, stop) of consecutive runs of ``lengths`` summing to at most ``limit`` (or one longer item)."""
    ends = np.cumsum(lengths)
    start = 0
    while start < len(lengths):
        base = ends[start - 1] if start else 0
        stop = max(start + 1, int(np.searchsorted(ends, base + limit, side="right")))
        yield start, stop
        start = stop


def _route_batches(batches, p, q, plans: dict[int, GroupPlan], groups: int, limit: int = ROUTE_BATCH_VALUES):
    """Each set once per task it goes to (ROUTED_SCHEMA), in batches of at most ``limit`` rank values (a long
    set sent to many tasks must not become one huge Arrow array)."""
    for batch in batches:
        row, g, c1, c2, chunk = _route_rows(batch, p, q, plans, groups)
        indptr, ranks = csr(batch.column("ranks"), np.int32)
        # Each routed row's ranks copied out in one pass (Arrow's take of a list column cost 2.9 s of
        # 4.3 at 1 M sets), handed on as binary values.
        out_ptr, out = gather_csr(indptr, np.ascontiguousarray(ranks, np.int32), row)
        set_id = numpy(batch.column("set"), np.int64)[row]
        size = numpy(batch.column("size"), np.int32)[row]
        n_single = numpy(batch.column("n_single"), np.int32)[row]
        for a, b in _slices(np.diff(out_ptr), limit):
            yield pa.RecordBatch.from_arrays(
                [pa.array(g[a:b], pa.int32()), pa.array(c1[a:b], pa.int32()), pa.array(c2[a:b], pa.int32()),
                 pa.array(chunk[a:b], pa.int32()), pa.array(set_id[a:b], pa.int64()),
                 pa.array(size[a:b], pa.int32()), pa.array(n_single[a:b], pa.int32()),
                 key_array(out_ptr[a:b + 1], out)],
                schema=ROUTED_ARROW)


def partition_of(g: np.ndarray, c1: np.ndarray, c2: np.ndarray, groups: int, n_hot: int) -> np.ndarray:
    """The join stage's partition of each task (``g``, ``c1``, ``c2``): token group ``k`` (``g = -1 - k``) alone in
    partition ``k``; a hot token's task in one of the ``n_hot`` after them, by a hash of its key (int64)."""
    g = np.asarray(g, np.int64)
    part = -1 - g
    hot = g >= 0
    if hot.any():
        # A multiplicative mix of the key (xxHash64's primes), its top bits taken modulo n_hot.
        h = (g[hot].astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
             ^ np.asarray(c1, np.int64)[hot].astype(np.uint64) * np.uint64(0xC2B2AE3D27D4EB4F)
             ^ np.asarray(c2, np.int64)[hot].astype(np.uint64) * np.uint64(0x165667B19E3779F9))
        h ^= h >> np.uint64(29)
        part[hot] = groups + ((h * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(33)).astype(np.int64) % max(1, n_hot)
    return part


@in_small_pages
def _packed_route_batches(batches, p, q, plans: dict[int, GroupPlan], groups: int, n_hot: int):
    """mapInArrow body: the routed rows (:func:`_route_batches`) packed per partition of the join stage
    (:func:`partition_of`, :func:`.arrow.packed`; PACKED_SCHEMA)."""
    for batch in _route_batches(batches, p, q, plans, groups):
        if batch.num_rows:
            g, c1, c2 = (numpy(batch.column(c), np.int64) for c in TASK)
            yield packed(batch, partition_of(g, c1, c2, groups, n_hot))


def _group_sets(task, group, r_ptr, ranks, size, n_single, hot, groups: int, t: Threshold):
    """Rows of token-group tasks as the local join's input, each task restricted to its own tokens.

    A row's tokens in its task's order: first its *live* tokens (those of the
    task's group, hot tokens excepted), by rank and renamed apart per task;
    then its other shared tokens, by rank; then its own (``n_single``) ones.
    Only live tokens are indexed and probed: as far as the row's indexing and
    probing prefixes of the global order reach (the module's docstring says
    why that finds every pair of the task's group exactly).

    Returns (rows by size int64, indptr int64, tokens int32, the bound of the
    live tokens' ids, index limits int64, probe limits int64, positions in
    the global order int32, live tokens int64), all but the first in the
    join's order (sets by size).
    """
    n = len(size)
    # Live ranks are all ≡ group (mod groups): rank // groups numbers them apart within a task; the
    # other ranks follow them. Where those ids would not fit int32, the block's ranks are renumbered
    # densely first (live: task * distinct + number).
    n_tasks, n_own = int(task.max(initial=0)) + 1, int(n_single.sum())
    key, div, n_other = ranks, groups, int(ranks.max(initial=-1)) + 1
    span = (n_other - 1) // groups + 1
    if n_tasks * span + n_other + n_own >= 2**31:
        distinct, key = np.unique(ranks, return_inverse=True)
        key, div, n_other = key.astype(np.int32), 1, len(distinct)
        span = n_other
        if (n_tasks + 1) * n_other + n_own >= 2**31:
            raise OverflowError(f"a block of {n} routed sets holds more than 2**31 token ids")
    n_live = n_tasks * span
    rows = np.argsort(size, kind="stable")
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(size[rows], out=indptr[1:])
    start = np.empty(n, np.int64)
    start[rows] = indptr[:-1]
    tokens = np.empty(int(indptr[-1]), np.int32)
    at = np.empty(int(indptr[-1]), np.int32)
    _, index_len, probe_len, _, _ = join_plan(get_measure("jaccard"), t, size)
    index_limit, probe_limit, live_len = group_tokens(r_ptr, ranks, key, div, n_single, task, group, groups,
                                                      np.asarray(hot, np.int64), span, n_live, n_other, index_len,
                                                      probe_len, start, tokens, at)
    return rows, indptr, tokens, n_live, index_limit[rows], probe_limit[rows], at, live_len[rows]


def _hot_sets(task, r_ptr, ranks, size, n_single):
    """Rows of hot-token tasks as the local join's input: each set's own tokens, then its shared ranks renamed
    apart per task, ranked by the local order. Returns (rows in the join's order int64, the ordered sets)."""
    n = len(size)
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(size, out=indptr[1:])
    row_of = np.repeat(np.arange(n, dtype=np.int64), size)
    own = (np.arange(len(row_of), dtype=np.int64) - indptr[row_of]) < n_single[row_of]
    keys = np.empty(len(row_of), np.uint64)
    keys[own] = np.uint64(1 << 63) + np.arange(int(own.sum()), dtype=np.uint64)
    keys[~own] = (task[row_of[~own]].astype(np.uint64) << np.uint64(32)) | ranks.astype(np.uint64)
    sets = order_sets(indptr, keys)
    if sets.num_sets != n:
        raise RuntimeError(f"{n} routed sets collapsed to {sets.num_sets}: a set reached one task twice")
    rows = np.empty(n, np.int64)
    rows[sets.doc_set] = np.arange(n, dtype=np.int64)
    return rows, sets


def _join_block(table: pa.Table, t: Threshold, hot: np.ndarray, groups: int) -> pa.RecordBatch:
    """The pairs of the complete tasks in ``table``: one local join for its token groups' tasks, one for its
    hot tokens' tasks."""
    task = np.cumsum(group_starts(table, TASK)) - 1
    r_ptr, ranks = csr(table.column("ranks"), np.int32)
    ranks = ranks.astype(np.int32, copy=False)
    size = numpy(table.column("size"), np.int64)
    n_single = numpy(table.column("n_single"), np.int64)
    g = numpy(table.column("g"), np.int64)
    c1 = numpy(table.column("c1"), np.int32)
    c2 = numpy(table.column("c2"), np.int32)
    chunk = numpy(table.column("chunk"), np.int32)
    ra, rb, overlap = (np.zeros(0, np.int64),) * 3
    # Group tasks come first (g < 0), hot tokens' after: the rows are sorted by task.
    cut = int(np.searchsorted(g, 0))
    for lo, hi, grouped in ((0, cut, True), (cut, len(g), False)):
        if lo == hi:
            continue
        part_ptr = r_ptr[lo:hi + 1] - r_ptr[lo]
        part_ranks = ranks[r_ptr[lo]:r_ptr[hi]]
        if grouped:
            # Only the pairs whose first shared token is live in their task: the join drops the others.
            rows, indptr, tokens, n_live, index_limit, probe_limit, at, live_len = _group_sets(
                task[lo:hi], -1 - g[lo:hi], part_ptr, part_ranks, size[lo:hi], n_single[lo:hi], hot, groups, t)
            pairs = prefix_join(indptr, tokens, n_live, t, jobs=1, index_limit=index_limit,
                                probe_limit=probe_limit, at=at, live_len=live_len)
        else:
            rows, sets = _hot_sets(task[lo:hi], part_ptr, part_ranks, size[lo:hi], n_single[lo:hi])
            pairs = prefix_join(sets.indptr, sets.tokens, sets.num_tokens, t, jobs=1)
        a, b, o = lo + rows[pairs.left], lo + rows[pairs.right], pairs.overlap
        if not grouped:
            # Once per pair: in the task of its own first shared token, and there in that of its two chunks.
            keep = (first_shared(r_ptr, ranks, a, b) == g[a]) & ((c1[a] == c2[a]) | (chunk[a] != chunk[b]))
            a, b, o = a[keep], b[keep], o[keep]
        ra, rb, overlap = np.concatenate([ra, a]), np.concatenate([rb, b]), np.concatenate([overlap, o])
    set_id = numpy(table.column("set"), np.int64)
    return pa.RecordBatch.from_arrays(
        [pa.array(set_id[ra], pa.int64()), pa.array(set_id[rb], pa.int64()),
         pa.array(overlap.astype(np.int32), pa.int32()),
         pa.array(size[ra].astype(np.int32), pa.int32()), pa.array(size[rb].astype(np.int32), pa.int32())],
        names=["a", "b", "overlap", "size_a", "size_b"])


#: Routed rows handed to one local join at a time (more when one task is larger).
BLOCK_ROWS = 20_000


@in_small_pages
def _join_batches(batches, t: Threshold, hot: np.ndarray, groups: int, merged=None):
    """mapInArrow body: the pairs of a partition's routed rows, in any order (Spark does not sort them).

    A token group's partition is one task (:func:`placed`): its rows are
    joined as they came. A partition of several tasks (hot tokens' tasks, or
    groups that hash partitioning put together) is put in task order here,
    and joined in blocks of whole tasks. ``merged`` (routed documents, not
    distinct sets: :mod:`.copies`): identical ones grouped in each block, the
    accumulator given the partition's copies merged."""
    table = one_table(batches)
    if table is None:
        return
    g, c1, c2 = (numpy(table.column(c), np.int64) for c in TASK)
    dg, d1, d2 = np.diff(g), np.diff(c1), np.diff(c2)
    if not ((dg > 0) | ((dg == 0) & ((d1 > 0) | ((d1 == 0) & (d2 >= 0))))).all():
        table = table.take(np.lexsort((c2, c1, g)))  # ~1 µs a row (1 M Zipf sets, all tasks in one: 5.3 s)
    del g, c1, c2, dg, d1, d2
    blocks = complete_groups(table.to_batches(max_chunksize=BLOCK_ROWS), TASK, rows=BLOCK_ROWS)
    if merged is not None:
        yield from joined_with_copies(blocks, lambda b: _join_block(b, t, hot, groups), groups, merged)
        return
    for block in blocks:
        yield _join_block(block, t, hot, groups)


def plan_hot_groups(ranked, t: Threshold, hot: np.ndarray, max_group: int) -> dict[int, GroupPlan]:
    """Split plans of the groups of more than ``max_group`` sets (one job of one stage, only if a token could
    be hot).

    ``hot`` holds the ranks of the tokens in more than ``max_group`` sets: only
    their groups can be that large, so only their (size, count) histograms are
    brought to the driver: counted per batch and summed here (at most a row per
    hot token and size a batch), not by an aggregation, whose shuffle adaptive
    execution would run as a second job.
    """
    if len(hot) == 0:
        return {}
    hot_list = np.sort(np.asarray(hot, np.int32))
    if ranked.hot_keys is not None:
        # The rank table is broadcast: the hot tokens found among the distinct sets' keys, no set ranked.
        wanted = np.isin(ranked.hot_key_ranks, hot_list)
        frame, column = ranked.distinct, "keys"
        values, ranks = ranked.hot_keys[wanted], ranked.hot_key_ranks[wanted]
    else:
        frame, column, values, ranks = ranked.frame, "ranks", hot_list, hot_list
    part = frame.mapInArrow(lambda b: _histogram_batches(b, t.p, t.q, column, values, ranks),
                            struct("g int, size int, n long")).toArrow()
    pair = (numpy(part.column("g"), np.int64) << 32) | numpy(part.column("size"), np.int64)
    uniq, where = np.unique(pair, return_inverse=True)
    n = np.bincount(where.ravel(), weights=numpy(part.column("n"), np.int64), minlength=len(uniq)).astype(np.int64)
    g, size = uniq >> 32, uniq & 0xFFFFFFFF
    plans = {}
    for gv in np.unique(g).tolist():
        sel = g == gv
        if n[sel].sum() <= max_group:
            continue
        order = np.argsort(size[sel])
        plans[int(gv)] = split_group(size[sel][order], n[sel][order], max_group, t)
    return plans


#: Routed ranks a token group's task is planned to hold at most, about: its Python worker holds ~26 bytes a
#: rank (10 M Zipf sets at 8 groups: ~150 M ranks a task, a worker of 3.8 GiB), so ~3.3 GiB.
GROUP_TASK_RANKS = 1 << 27


def group_share(groups: int, prefix_tokens: float) -> float:
    """The expected share of the sets in one token group's task, for sets of ``prefix_tokens`` shared prefix
    tokens dealt at random into ``groups``: ``1 - (1 - 1/groups)^prefix_tokens``."""
    return -math.expm1(prefix_tokens * math.log1p(-1.0 / groups)) if groups > 1 else 1.0


def token_groups(slots: int, sets: int, shared: int, shingles: int, t: Threshold,
                 limit: int = GROUP_TASK_RANKS) -> int:
    """The default number of token groups: the fewest, a multiple of the task slots, whose tasks each hold
    about ``limit`` routed ranks or fewer.

    A set goes once to each group of its prefix's shared tokens, so every
    group more copies some sets once more (routing, shuffle, the tasks'
    reading of them: 1 M Zipf sets shuffle 678 MiB at 8 groups, 367 at 2); the
    groups' tasks are about equal (tokens dealt round-robin by rank), so a
    multiple of the ``slots`` (``defaultParallelism``) keeps every slot busy
    to the end; and a task holds its group's sets at once. From the planning
    pass's counts: ``sets`` distinct sets holding ``shared`` shared ranks and
    ``shingles`` shingles; a set's shared prefix tokens are at most its
    shared ranks and its probing prefix ``(1 - t)|x| + 1``, so their mean
    ``k`` is at most the smaller of those means, and a group's task holds
    about ``shared · group_share(groups, k)`` ranks (1 M Zipf sets: 19.3 M
    ranks a task at 2 groups, 14.9 M at 8, both within 1% of the routing's).
    """
    slots = max(1, int(slots))
    if sets <= 0 or shared <= limit:
        return slots
    k = min(shared / sets, (1 - t.p / t.q) * shingles / sets + 1)
    if k <= 0:
        return slots
    # The least real g with shared · group_share(g, k) <= limit, rounded up to a multiple of the slots.
    most = slots * (2**30 // slots)
    step = -math.expm1(math.log1p(-limit / shared) / k)
    if step <= 0 or 1.0 / step >= most:
        return most
    groups = slots * max(1, math.ceil(1.0 / step / slots))
    while groups < most and shared * group_share(groups, k) > limit:  # rounding, either way
        groups += slots
    while groups > slots and shared * group_share(groups - slots, k) <= limit:
        groups -= slots
    return groups


def routes(ranked, t: Threshold, plans: dict[int, GroupPlan], groups: int):
    """DataFrame (PACKED_SCHEMA): each set once per task (group of prefix tokens, or hot token and chunks) it goes
    to, as rows of ROUTED_SCHEMA packed per partition of the join stage (:func:`partition_of`)."""
    n_hot = hot_partitions(plans, groups)
    return ranked.mapInArrow(lambda b: _packed_route_batches(b, t.p, t.q, plans, groups, n_hot),
                             struct(PACKED_SCHEMA))


#: Routed rows of hot tokens' tasks a partition of the join stage is given, about (its Python worker holds them
#: at once): the hot tasks get as many partitions as that takes, at most one per token group.
HOT_PARTITION_ROWS = 1 << 20


def hot_partitions(plans: dict[int, GroupPlan], groups: int) -> int:
    """Partitions of the join stage for the hot tokens' tasks: their routed rows (known from the histograms) in
    shares of about ``HOT_PARTITION_ROWS``, at least one when there is any hot token, at most ``groups``."""
    if not plans:
        return 0
    rows = sum(plan.routed for plan in plans.values())
    return max(1, min(groups, -(-rows // HOT_PARTITION_ROWS)))


def placed(tasks, plans: dict[int, GroupPlan], groups: int):
    """The packed routed rows ``tasks`` (:func:`routes`) in the join stage's partitions, by their ``part``
    (:func:`partition_of`): token group ``k`` alone in partition ``k``, the hot tokens' tasks spread over the
    partitions after them by a hash of their keys.

    Hashing the task keys, as a plain ``repartition`` does, put the 8 groups
    of 10 M Zipf sets into 6 partitions: one task ran three groups, 320 s of
    the stage's 435. A group's rows come alone to its partition, so Spark need
    not sort them (every routed row, 4 GiB at 10 M) to hand them
    over task by task: a partition of several tasks is sorted by
    :func:`_join_batches` itself. Spark before 4.1 has no partitioning by a
    given id: there the same column is hashed (every pair still found once,
    the placement only less even)."""
    from pyspark.sql import functions as F

    n = groups + hot_partitions(plans, groups)
    part = F.col("part")
    if hasattr(tasks, "repartitionById"):
        return tasks.repartitionById(n, part)
    return tasks.repartition(n, part)


def set_pairs(ranked, t: Threshold, plans: dict[int, GroupPlan], groups: int, merged=None):
    """DataFrame (a, b, overlap, size_a, size_b): every pair of distinct sets with ``J >= t``, once; with
    ``merged`` (:class:`.copies.Merged`'s accumulator), every pair of the ranked documents (:mod:`.copies`)."""
    hot = np.array(sorted(plans), np.int64)
    tasks = placed(routes(ranked, t, plans, groups), plans, groups)
    return tasks.mapInArrow(lambda b: _join_batches(unpacked(b, ROUTED_ARROW), t, hot, groups, merged),
                            struct(SET_PAIRS_SCHEMA))
