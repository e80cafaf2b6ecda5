"""Prefix-filter join of distinct sets, for every measure, self or R–S: index, probe in parallel tasks, verify.

Every set's indexed prefix goes into one static inverted index; each set then probes the postings of a window
of other sets only, so probes are independent and run as tasks on threads (the kernels release the GIL). Tasks
are contiguous ranges of probe sets cut at equal estimated cost, and their results are joined in task order (on
one thread appended to one buffer, on several concatenated): the output does not depend on the number of threads.

Two plans, both from the bounds of :mod:`allpairs.measures`:

- symmetric measures (AllPairs, Bayardo et al. 2007): sets are taken in increasing size; each indexes its
  *indexing* prefix and probes, with its *probing* prefix, the earlier (not larger) sets from the first one the
  size bound allows;
- containment (asymmetric): a set may be contained in one of any size, so one side must be indexed whole. The
  smaller set of a pair holds the larger share, so each set probes, with its prefix for partners at least as
  large (``|x| - ⌈t·|x|⌉ + 1``), the later sets, indexed whole; the pair is kept when either direction reaches t
  (``containment_either``) and each direction that does is flagged.

An R–S join is the same join over both sides in one global order, with one
posting list per (token, side): a set reads only the lists of the other side
(a set whose documents lie on both sides reads both). A small side probed by
a large one reads short lists; a large side probed by a small one is probed
few times; neither side is ever joined with itself.
"""
from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterator

import numpy as np

from .._kernels import malloc as _malloc
from .._kernels.csr import block_edges
from .._kernels.jit import resolve_jobs
from ..measures import MEASURES, Measure, Threshold, get_measure
from ..verify import bitmaps_prune
from ..verify._kernel import bitmaps
from ._kernel import (build_index, build_index_by_range, counted_lists, first_match_bounds, list_counts, list_lengths,
                      list_starts, probe_cost, probe_verify)
from .large import (BLOCK_SETS, COMPACT_MAX_SETS, COMPACT_MAX_SIZE, REAP_MIN_DEAD, alpha_table,
                    bucket_shift, probe_blocked)
from .plan import join_plan

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

#: ``at`` of the kernels when a set's positions are its tokens' own.
_NO_POSITIONS = np.empty(0, np.int32)
#: ``live_len`` of the kernels then.
_NO_LENGTHS = np.empty(0, np.int64)

#: Bits of :attr:`SetPairs.directions`.
FORWARD, BACKWARD = 1, 2

#: Bits of the ``sides`` of a set in an R–S join.
LEFT_SIDE, RIGHT_SIDE = 1, 2


@dataclass(eq=False, repr=False)
class SetPairs:
    """Pairs of distinct sets that reach the threshold: ``left < right`` index distinct sets; int32 arrays.

    ``directions`` (uint8, containment only; None for symmetric measures) says
    which way each pair reaches t: bit :data:`FORWARD` when ``left`` is
    contained in ``right``, bit :data:`BACKWARD` when ``right`` is in ``left``.
    """

    left: np.ndarray
    right: np.ndarray
    overlap: np.ndarray
    candidates: int
    directions: np.ndarray | None = None


def _cut(cost: np.ndarray, n_tasks: int) -> tuple[np.ndarray, np.ndarray]:
    """Boundaries of ``n_tasks`` contiguous ranges of roughly equal total cost, and the cost before each
    boundary (int64 each; one range needs no pass over ``cost``, else it becomes its cumulative sum)."""
    if n_tasks <= 1 or len(cost) == 0:
        return np.array([0, len(cost)], np.int64), np.array([0, int(cost.sum())], np.int64)
    total = np.cumsum(cost, out=cost)  # in place: fresh pages for Kosarak's 35,000 sets were ~70 faults
    if total[-1] == 0:
        return np.array([0, len(cost)], np.int64), np.array([0, 0], np.int64)
    goals = float(total[-1]) * np.arange(1, n_tasks) / n_tasks
    inner = np.searchsorted(total, goals, side="left") + 1
    bounds = block_edges(0, inner, len(cost))
    return bounds, np.where(bounds > 0, total[bounds - 1], 0)  # not a copy of total, to index


#: The postings carry their sets' signatures (the probe's variant that bounds a set before touching its state)
#: from this many sets on: the probe's state, 16 bytes a set, then outgrows a core's 1 MiB level-2 cache, and
#: a set touched is a likely miss. Below it a touch is cheap and the test at each posting can cost more than it
#: saves: on the licences (27,441 sets, near-copies: 99 % of the sets met pass the bound) +5.7 % instructions
#: at t = 0.5 and 0.7; on distinct Kosarak (34,985) it saved 6 %.
POSTED_BITS_MIN_SETS = 1 << 16
#: From this many sets, a self-join whose postings carry their signatures (sets of at most
#: :data:`allpairs.exact.large.COMPACT_MAX_SIZE` tokens, candidates merged) is probed in blocks of sets
#: (:func:`allpairs.exact.large.probe_blocked`): the same pairs, its index then larger than the caches (1 M
#: Zipf sets: probe 1.66 -> 1.2 s; 10 M: 31.0 -> 19.7 s, the probe alone, t = 0.5).
BLOCKED_MIN_SETS = 1 << 18

#: The probe verifies a candidate by looking y's tokens up in a bit set of x's (``marks``, a thread's: one bit
#: a token of the order) where there are at most this many tokens (256 KiB, in a core's level-2 cache) and the
#: sets are long (:data:`MARKS_MIN_MEAN_SIZE`), else by a merge. The merge's steps each wait for the one before
#: (which side moves is the comparison's result); the look-ups do not: the licences' join step at t = 0.5
#: took 0.41 s by merge, 0.25 s by look-up.
MARKS_MAX_TOKENS = 1 << 21
#: Tokens a set on average from which the look-up pays: a look-up costs a call and a loop's set-up a candidate,
#: which a short merge does not (distinct Kosarak, 10.7 tokens a set: 60 -> 68 ms CPU at t = 0.5; the 1 M Zipf
#: sets, 20: +1.0 % instructions; the licences, 95: -39 %; the Go sets, 2,090: as fast or faster).
MARKS_MIN_MEAN_SIZE = 32

#: Postings from which an index is written by range (:func:`build_index_by_range`: 64 MiB with records), and a range's.
BY_RANGE_MIN_POSTINGS, BY_RANGE_POSTINGS = 1 << 22, 1 << 16
#: ``post_size`` of the probe when the sizes are in its ``post_bits`` records.
_NO_SIZES = np.empty(0, np.int32)
#: ``records`` of :func:`build_index` when the sizes are in ``post_size`` (no signatures in the postings).
_NO_RECORDS = np.empty((0, 3), np.uint32)


#: Tasks per thread at most: the probe costs are skewed, so many tasks balance the threads' loads.
TASKS_PER_THREAD = 64
#: Probe cost (posting entries) a task is given at least: a kernel call costs ~0.1-0.2 ms to dispatch
#: (argument types looked up), about as much as probing 20,000 entries.
MIN_TASK_COST = 200_000
#: Probe cost (posting entries) below which a join runs on the caller's thread whatever ``jobs`` says: a
#: pool's start (its imports, threads, scratch and the parts' concatenation) cost more than it shared out
#: below it (distinct Kosarak at t = 0.7, 1.7 M entries: +8 ms of a 128 ms process with two threads).
PARALLEL_MIN_COST = 2_000_000


#: A task's pairs are copied out of the kernel's buffer from this many on, when the join is bounded and the
#: buffer was made for at least twice as many (its room estimated too high); smaller tasks' room is at most a
#: few MiB in all.
COPY_FROM = 1 << 16

#: The first task's output room, in pairs per posting entry of its cost (no task has been measured yet).
FIRST_ROOM = 1 / 16
#: The output room of a later task over its expected pairs (its cost times the pairs per posting entry of the
#: last task finished): consecutive tasks, cut at equal cost, find similar numbers of pairs.
ROOM_MARGIN = 1.5
#: Output room of a task at least (pairs).
MIN_ROOM = 1024


def _block_cut(cost: np.ndarray, block: int, limit: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Boundaries of contiguous ranges of at most ``block`` sets and, with ``limit``, of cost at most ``limit``
    (or of one set), each as long as both allow, and the cost before each boundary (``cost`` becomes its
    cumulative sum).

    For one thread running :func:`allpairs.exact.large.probe_blocked`, whose blocks start at a task's first set:
    tasks cut only to balance threads (:data:`TASKS_PER_THREAD`) would cut its blocks short for nothing. On the
    1 M Zipf sets (t = 0.5) 64 such tasks made blocks of a median 9,443 sets, not 65,536: the join stage under
    callgrind with a 4 MiB last level missed it 98.6 M times on reads, against 91.7 M in whole blocks.
    """
    m = len(cost)
    if m == 0:
        return np.zeros(2, np.int64), np.zeros(2, np.int64)
    total = np.cumsum(cost, out=cost)
    edges, a = [0], 0
    while a < m:
        e = min(a + block, m)
        if limit is not None:  # the sets after a whose costs sum to at most limit
            e = min(e, max(a + 1, int(np.searchsorted(total, (int(total[a - 1]) if a else 0) + limit, side="right"))))
        edges.append(e)
        a = e
    bounds = np.array(edges, np.int64)
    return bounds, np.where(bounds > 0, total[bounds - 1], 0)


def task_room(cost: int, density: float) -> int:
    """Pairs to make a task's output buffers for: its cost (posting entries) times ``density``, the pairs per
    entry expected, with :data:`ROOM_MARGIN`; never more than the cost, since a pair costs at least one entry.

    The probe's buffers otherwise start small and double as they fill: each doubling copies the pairs and
    touches fresh pages (on Kosarak at t = 0.5 the copies and faults were 1.5 M of the join's 3.6 M
    level-2 misses and most of its 9,300 page faults).
    """
    return max(1, min(cost, max(MIN_ROOM, int(ROOM_MARGIN * density * cost))))


def task_count(total_cost: int, m: int, jobs: int) -> int:
    """Tasks to cut the probes of ``m`` sets into: enough to balance ``jobs`` threads, few for a small join."""
    return max(1, min(m, TASKS_PER_THREAD * jobs, total_cost // MIN_TASK_COST))


def _classes(sides: np.ndarray | None, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Posting-list class of each set and which classes may pair (one class in a self-join)."""
    if sides is None:
        return np.zeros(m, np.int32), np.ones((1, 1), np.bool_)
    sides = np.asarray(sides)
    if len(sides) != m or ((sides < 1) | (sides > 3)).any():
        raise ValueError("sides must give each set 1 (left), 2 (right) or 3 (both)")
    bits = np.arange(1, 4)
    compat = ((bits[:, None] & LEFT_SIDE) > 0) & ((bits[None, :] & RIGHT_SIDE) > 0)
    return (sides - 1).astype(np.int32), compat | compat.T


def _columns(parts: list) -> list[np.ndarray]:
    """The tasks' pair columns (left, right, overlap: the first three of each part), each joined into one
    array. ``parts`` is emptied: each column's pieces are freed, and the heap memory they held given back,
    before the next column is joined, so that the peak is the pieces plus one column, not plus three."""
    pieces = [list(column) for column in zip(*parts)][:3] if parts else [[], [], []]
    parts.clear()
    columns = []
    for k in range(3):
        columns.append(np.concatenate(pieces[k]) if pieces[k] else np.empty(0, np.int32))
        pieces[k] = None
        _malloc.release()
    return columns


def prefix_join(indptr: np.ndarray, tokens: np.ndarray, num_tokens: int, threshold: Threshold, *,
                measure: str | Measure = "jaccard", sides: np.ndarray | None = None, jobs: int | None = None,
                progress: Callable[[int, int], None] | None = None, index_limit: np.ndarray | None = None,
                probe_limit: np.ndarray | None = None, at: np.ndarray | None = None,
                live_len: np.ndarray | None = None) -> SetPairs:
    """All pairs of distinct sets that reach the threshold under the measure, exactly.

    Parameters
    ----------
    indptr : int64 (m + 1,), tokens : int32
        Distinct non-empty sets sorted by (size, tokens), tokens strictly
        increasing ranks below ``num_tokens`` (see :func:`allpairs.order.order_sets`).
    threshold : Threshold
        ``p/q``; for overlap ``k/1``.
    measure : name or row of :data:`allpairs.measures.MEASURES`
    sides : int array (m,), optional
        For an R–S join, each set's side: 1 left, 2 right, 3 both (its
        documents lie on both sides). Only pairs of sets on different sides
        are produced. Omitted: a self-join.
    jobs : int, optional
        Threads; default all cores. The result is the same for any value.
    progress : callable(done, total), optional
        Called after each task with the probe cost done so far and in all.
    index_limit, probe_limit : int64 (m,), optional
        Index at most the first ``index_limit[s]`` tokens of each set, probe
        with at most its first ``probe_limit[s]`` (only the tokens within the
        limits need be below ``num_tokens``; the others are any int32, still
        strictly increasing). Every pair returned still reaches the threshold
        with its exact overlap, and so is every pair that reaches it and whose
        first common token lies within the limits of both sets (the probe
        limit of the set that probes, the index limit of the other): a match
        at positions (i, j) within the limits has every common token before it
        within them too, so the count that the positional bound and
        verification start from is exact. The Spark engine restricts each task
        to its own tokens this way (:mod:`allpairs.engines.spark.exact`).
    at : int32 (len(tokens),), optional
        Each token's position in another order of its set, increasing along
        the tokens within the limits: the positional bound and the stop along
        a posting list at a pair's first match read these positions. Every
        pair returned is still exact; a pair that reaches the threshold is
        still found if, besides the above, no common token precedes its first
        one in that order either (its overlap is then at most ``1 + min(|x| -
        a - 1, |y| - b - 1)`` for positions ``a``, ``b`` there). A pair is
        also dropped, unverified, when the sets share a token at or above
        ``num_tokens`` (never indexed) placed before their first common token
        below it in both their orders; ``at`` must increase along each set's
        tokens at or above ``num_tokens`` that other sets hold too (a set's
        own tokens may have any). The Spark engine's token-group tasks pass
        the global order's positions, and keep thus only the pairs whose
        first shared token is their group's (:mod:`allpairs.engines.spark.exact`).
    live_len : int64 (m,), required with ``at``
        Each set's tokens below ``num_tokens``, first in it.
    """
    measure = get_measure(measure, tuple(MEASURES))
    jobs = resolve_jobs(jobs)
    if (at is None) != (live_len is None):
        raise ValueError("prefix_join takes at and live_len together")
    blocks = list(_probe_blocks(indptr, tokens, num_tokens, threshold, measure, sides, jobs, progress, index_limit,
                                probe_limit, None, at, live_len))
    return _set_pairs(*blocks[0], np.diff(indptr), threshold, measure.symmetric)


def run_room(task_room_: int, filled: int, density: float, rest_cost: int, block_left: int | None) -> int:
    """Pairs to make one thread's output buffers for when they could not be made for the cost left
    (:func:`_buffers`) and its next task's room (``task_room_``) no longer fits: the ``filled`` pairs of the
    block so far, plus :data:`ROOM_MARGIN` times the pairs expected of the probes left (``density``, pairs
    per posting entry so far, times ``rest_cost``, the entries left), at most what the block has left to
    hold (``block_left``; None: no bound) and at least the task's room. The block's pairs are copied.
    """
    rest = int(ROOM_MARGIN * density * rest_cost)
    if block_left is not None:
        rest = min(rest, block_left)
    return filled + max(task_room_, rest)


def _enlarged(a: np.ndarray, filled: int, n: int) -> np.ndarray:
    """A new array of ``n`` holding ``a[:filled]``, the rest untouched (numpy's, not a kernel: no dispatch)."""
    b = np.empty(n, a.dtype)
    b[:filled] = a[:filled]
    return b


def _buffers(bound: int, room: int) -> list[np.ndarray]:
    """Three int32 output buffers of ``bound`` pairs, a bound on the pairs they will take (the probe's cost):
    nothing is copied as they fill, and only the pages written are touched. Where the address space is
    short (``MemoryError``), ``room`` pairs, the expected number, instead: they are enlarged as they fill."""
    try:
        return [np.empty(max(bound, 1), np.int32) for _ in range(3)]
    except MemoryError:
        return [np.empty(max(room, 1), np.int32) for _ in range(3)]


def _probe_blocks(indptr, tokens, num_tokens, threshold, measure, sides, jobs, progress, index_limit, probe_limit,
                  block_pairs, at=None, live_len=None):
    """The probe's tasks, run on threads; their pairs yielded in task order as blocks ``([left, right,
    overlap], candidates)``: a block ends once it holds ``block_pairs`` pairs or more (None: one block); at
    least one block, maybe empty.

    With ``block_pairs``, no task may find more than about ``block_pairs / (4 jobs)`` pairs (a set probing
    costs at least one posting entry for each pair it finds, so tasks are cut at that cost; one set alone
    finds fewer pairs than there are sets), and at most ``4 jobs`` tasks are run ahead of the consumer, so that
    the parts held at once stay within the block.

    One thread appends every task's pairs of a block to one set of buffers (:func:`_buffers`), so the
    block is those buffers' first pairs, not a copy; threads side by side each fill their own buffers,
    joined in task order at the end of the block.
    """
    p, q = threshold.p, threshold.q
    m = len(indptr) - 1
    sizes = np.diff(indptr)
    row, index_len, probe_len, win_lo, win_hi = join_plan(measure, threshold, sizes, lone=measure.symmetric)
    if index_limit is not None:
        index_len = np.minimum(index_len, index_limit)
    if probe_limit is not None:
        probe_len = np.minimum(probe_len, probe_limit)
    set_class, compat = _classes(sides, m)
    # Sets with neither an indexed nor a probing prefix take no part: the kernels see the range of sets from
    # the first that has one to the last (on Kosarak at t = 0.9, 8,641 of 34,985 sets), numbered from its
    # start, and the pairs are numbered back.
    active = np.flatnonzero(index_len | probe_len)  # both >= 0
    first, last = (int(active[0]), int(active[-1]) + 1) if len(active) else (0, 0)
    del active  # arrays of m that the probe does not read are let go before it: the join stage's peak is there
    if (first, last) != (0, m):
        indptr, set_class = indptr[first:last + 1], set_class[first:last]
        index_len, probe_len, sizes = index_len[first:last], probe_len[first:last], sizes[first:last]
        win_lo = np.maximum(win_lo[first:last] - first, 0)
        win_hi = np.minimum(win_hi[first:last] - first, last - first)
        live_len = None if live_len is None else live_len[first:last]
    n_sets, n_classes = last - first, compat.shape[0]
    at = _NO_POSITIONS if at is None else at
    live_len = _NO_LENGTHS if live_len is None else np.ascontiguousarray(live_len, np.int64)
    x_ptr, x_max, stop_ptr, stop_of = first_match_bounds(indptr, index_len, probe_len, at, row.code, p, q)
    if measure.symmetric and n_classes == 1 and not len(at) and n_sets >= BLOCKED_MIN_SETS:  # (why: its docstring)
        ptr, cost = counted_lists(indptr, tokens, num_tokens, index_len, probe_len)
    else:
        ptr = list_counts(indptr, tokens, num_tokens, index_len, set_class, n_classes)  # the lists' lengths
        cost = probe_cost(indptr, tokens, list_lengths(ptr), probe_len, set_class, compat, n_classes)
    list_starts(ptr)  # after probe_cost: the lengths it read made the lists' bounds, in place
    total_cost = int(cost.sum())
    # The bitmap bound prunes nothing where signatures are full, and cannot repay a pass over every token
    # where the probe reads fewer posting entries than there are tokens (the candidates are fewer still:
    # Kosarak at t = 0.9): left out there (all zero: a bound of |x| + |y|).
    prune = total_cost >= int(indptr[-1] - indptr[0]) and bitmaps_prune(sizes, ordered=measure.symmetric)
    largest = int(sizes.max()) if n_sets else 0
    del sizes
    by_marks = (num_tokens <= MARKS_MAX_TOKENS and not len(at)  # (the Spark task's orders: merged)
                and int(indptr[-1] - indptr[0]) >= MARKS_MIN_MEAN_SIZE * n_sets)
    # Whether the probe runs in blocks (:func:`probe_blocked`): signatures in the postings, one class, no `at`.
    blocked = (prune and n_sets >= max(POSTED_BITS_MIN_SETS, BLOCKED_MIN_SETS) and largest <= COMPACT_MAX_SIZE
               and n_classes == 1 and not len(at) and not by_marks)
    limit = None if block_pairs is None else max(block_pairs // (4 * jobs), MIN_TASK_COST)  # a task's cost at most
    n_tasks = task_count(total_cost, n_sets, jobs)
    if limit is not None:
        n_tasks = max(n_tasks, min(n_sets, -(-total_cost // limit)))
    # One thread runs the tasks itself: starting a pool and handing it tasks costs more than a small join
    # (and a join of one task has nothing to share out). It runs them in order: the blocked probe may then
    # take out of the index the postings no later probe can use (threads side by side could not).
    alone = jobs <= 1 or n_tasks <= 1 or total_cost < PARALLEL_MIN_COST
    if alone and blocked:  # cut where the probe's blocks end (cum[k]: the cost of the tasks before task k)
        bounds, cum = _block_cut(cost, BLOCK_SETS, limit)
    else:
        bounds, cum = _cut(cost, n_tasks)
    del cost
    bits = bitmaps(indptr, tokens) if prune else np.zeros(n_sets, np.uint64)
    # Where signatures are made for many sets, each posting carries its set's, written with it (the index built
    # after the cost): the probe bounds a set met by a posting without a random access to the set's state
    # (which, on 10 M sets, no cache holds), and its postings are 32-bit where the sets allow. Else None: the
    # probe's variant compiled without that test.
    n_post = int(ptr[-1])
    if prune and n_sets >= POSTED_BITS_MIN_SETS:
        compact = n_sets < COMPACT_MAX_SETS and largest <= COMPACT_MAX_SIZE
        post, post_size = np.empty(n_post, np.uint32 if compact else np.int64), _NO_SIZES
        post_bits = _malloc.small_pages_empty(3 * n_post, np.uint32).reshape(n_post, 3)  # (its docstring: why)
    else:
        post, post_size, post_bits = np.empty(n_post, np.int64), np.empty(n_post, np.int32), None
    if post_bits is not None and post.dtype == np.uint32 and n_post >= BY_RANGE_MIN_POSTINGS:
        build_index_by_range(indptr, tokens, index_len, set_class, n_classes, at, x_ptr, x_max, ptr, bits, post,
                             post_bits, BY_RANGE_POSTINGS)
    else:
        build_index(indptr, tokens, index_len, set_class, n_classes, at, x_ptr, x_max, ptr, bits, post, post_size,
                    _NO_RECORDS if post_bits is None else post_bits)
    list_ptr = ptr[:-1]
    del index_len, x_ptr, x_max, ptr
    alpha2, tshift = None, bucket_shift(len(list_ptr) - 1)  # α per pair of sizes where the probe runs in blocks
    if blocked:
        alpha2 = alpha_table(row.code, p, q, largest)
    probes_later = not measure.symmetric
    n_tasks = len(bounds) - 1
    alone = alone or n_tasks <= 1  # the costs cut into one task: it runs on this thread, and may reap
    reap = REAP_MIN_DEAD if alone and alpha2 is not None else 0
    local = threading.local()  # each thread's probe scratch, made once and reused by its tasks
    density = [FIRST_ROOM / ROOM_MARGIN]  # pairs per posting entry of the last task finished (any thread's)

    def probe(k, out, n_out):
        """Task ``k`` appends its pairs to the buffers ``out`` from ``n_out`` on: (buffers, end, candidates)."""
        lo, hi = int(bounds[k]), int(bounds[k + 1])
        if not hasattr(local, "state"):
            local.state = _malloc.large_empty(4 * n_sets, np.int32, _malloc.SCRATCH_FROM).reshape(n_sets, 4)
            local.state[:, 0] = 0  # column 0 zero; the others written before read
            local.touched = _malloc.large_empty(n_sets, np.int32, _malloc.SCRATCH_FROM)
            local.front = np.zeros(len(list_ptr) - 1, np.int32)  # the probe's hints; reaped, the lists' starts
            local.marks = np.zeros((num_tokens + 63) // 64 if by_marks else 0, np.uint64)  # all zero between sets
            local.alpha_of = np.empty(largest + 1, np.int32)
            local.alpha_at = np.full(largest + 1, -1, np.int64)  # stamps are probe sizes (this join's α only)
        if alpha2 is not None:
            ox, oy, oa, end, n_cand = probe_blocked(indptr, tokens, list_ptr, post, post_bits, bits, probe_len, win_lo,
                                                    win_hi, stop_ptr, stop_of, alpha2, lo, hi, BLOCK_SETS, tshift,
                                                    local.state, local.touched, local.front, reap, *out, n_out)
        else:
            ox, oy, oa, end, n_cand = probe_verify(indptr, tokens, list_ptr, post, post_size, post_bits, bits, at,
                                                   live_len, probe_len, win_lo, win_hi, stop_ptr, stop_of, set_class,
                                                   compat, n_classes, row.code, p, q, lo, hi, local.state,
                                                   local.touched, local.front, local.marks, local.alpha_of,
                                                   local.alpha_at, *out, n_out)
        task_cost = int(cum[k + 1] - cum[k])
        if task_cost:
            density[0] = (int(end) - n_out) / task_cost
        return [ox, oy, oa], int(end), int(n_cand)

    def columns(out, a, b):
        x, y, o = out[0][a:b], out[1][a:b], out[2][a:b]
        if first:
            x, y = x + np.int32(first), y + np.int32(first)
        return [x, y, o] if probes_later else [y, x, o]

    def task(k):
        """Task ``k`` alone, in buffers of its own: its part (left, right, overlap, candidates)."""
        task_cost = int(cum[k + 1] - cum[k])
        room = task_room(task_cost, density[0])
        out, end, n_cand = probe(k, [np.empty(room, np.int32) for _ in range(3)], 0)
        cols = columns(out, 0, end)
        if block_pairs is not None and COPY_FROM <= end <= room // 2:  # keep a large task's pairs, not
            cols = [c.copy() for c in cols]                             # the room it was given
        return (*cols, n_cand)

    def one_thread():
        """Every task in turn on this thread, each appending to the block's buffers."""
        out, n, cand, yielded = None, 0, 0, False
        most = int(np.diff(cum).max()) if n_tasks else 0  # the costliest task's cost
        for k in range(n_tasks):
            task_cost = int(cum[k + 1] - cum[k])
            if out is None:
                # A pair costs its probe at least one posting entry: the cost left bounds the pairs left (and
                # a block's, its bound and one task's). Buffers that large are address space only: pages are
                # touched as pairs are written.
                rest = total_cost - int(cum[k])
                out = _buffers(rest if block_pairs is None else min(rest, block_pairs + most),
                               task_room(task_cost, density[0]))
            elif len(out[0]) - n < density[0] * task_cost:  # short of the pairs expected: estimate the rest
                so_far = int(cum[k])
                cap = run_room(task_room(task_cost, density[0]), n, n / max(so_far, 1), total_cost - so_far,
                               None if block_pairs is None else block_pairs - n)
                if cap > len(out[0]):
                    out = [_enlarged(c, n, cap) for c in out]
            out, n, n_cand = probe(k, out, n)
            cand += n_cand
            if progress is not None:
                progress(int(cum[k + 1]), total_cost)
            if block_pairs is not None and n >= block_pairs:
                yield columns(out, 0, n), cand
                out, n, cand, yielded = None, 0, 0, True
        if n or not yielded:
            yield (columns(out, 0, n) if out is not None else [np.empty(0, np.int32) for _ in range(3)]), cand

    if alone:
        yield from one_thread()
        return
    from concurrent.futures import ThreadPoolExecutor  # here: a join on one thread does not load it

    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        done = pool.map(task, range(n_tasks)) if block_pairs is None else _ahead(pool, task, n_tasks, 4 * jobs)
        parts, held, yielded = [], 0, False
        for k, part in enumerate(done):
            if progress is not None:
                progress(int(cum[k + 1]), total_cost)
            parts.append(part)
            held += len(part[0])
            if block_pairs is not None and held >= block_pairs:
                cand = sum(pt[3] for pt in parts)
                yield _columns(parts), cand
                held, yielded = 0, True
        if parts or not yielded:
            cand = sum(pt[3] for pt in parts)
            yield _columns(parts), cand
    finally:
        pool.shutdown(cancel_futures=True)


def _ahead(pool: ThreadPoolExecutor, task, n: int, window: int):
    """``task(0) .. task(n - 1)`` run on ``pool``, results in order, at most ``window`` submitted ahead."""
    futures = deque()
    for k in range(n):
        futures.append(pool.submit(task, k))
        if len(futures) >= window:
            yield futures.popleft().result()
    while futures:
        yield futures.popleft().result()


def _set_pairs(columns: list, candidates: int, sizes: np.ndarray, threshold: Threshold,
               symmetric: bool) -> SetPairs:
    """A block's pair columns (left, right, overlap) as one :class:`SetPairs`."""
    left, right, overlap = columns
    directions = None
    if not symmetric:
        o = overlap.astype(np.int64) * threshold.q
        directions = (np.where(o >= threshold.p * sizes[left], FORWARD, 0)
                      | np.where(o >= threshold.p * sizes[right], BACKWARD, 0)).astype(np.uint8)
    return SetPairs(left=left, right=right, overlap=overlap, candidates=candidates, directions=directions)


def prefix_join_blocks(indptr: np.ndarray, tokens: np.ndarray, num_tokens: int, threshold: Threshold, *,
                       block_pairs: int, measure: str | Measure = "jaccard", sides: np.ndarray | None = None,
                       jobs: int | None = None, progress: Callable[[int, int], None] | None = None
                       ) -> Iterator[SetPairs]:
    """The pairs of :func:`prefix_join`, in the same order, as blocks of consecutive probe sets' pairs.

    A block ends once it holds ``block_pairs`` pairs or more; with the tasks
    cut as :func:`_probe_blocks` says, a block holds at most about 1.25 ×
    ``block_pairs`` pairs (the last task's), plus those of one set if a single
    set finds more (fewer than there are sets). The blocks concatenated are
    :func:`prefix_join`'s result; the next block is probed while the caller
    consumes this one.
    """
    measure = get_measure(measure, tuple(MEASURES))
    jobs = resolve_jobs(jobs)
    sizes = np.diff(indptr)
    for columns, candidates in _probe_blocks(indptr, tokens, num_tokens, threshold, measure, sides, jobs, progress,
                                             None, None, block_pairs):
        yield _set_pairs(columns, candidates, sizes, threshold, measure.symmetric)
