"""Queries answered a block at a time: the blocks' sizes, their threads, and matches listed within a budget.

A batch of queries is answered in consecutive blocks of queries, in order, so
that the matches of a block all go before those of the next: written one block
after the other they are the whole answer's rows in its order (by query, then
indexed document, or each query's best first), with nothing to sort or spill.
With a memory budget a block is as many queries as the matches of sets so far
say fit, and its matches of sets are listed as documents (each set stands for
its identical documents) a run of whole queries at a time, so that neither the
matches of sets nor their documents pass the budget, but for one query whose
matches alone do: they are listed whole (at most one per indexed document).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Callable, Iterator

import numpy as np

from ..corpus import Corpus
from ..output.spill import parse_memory
from ..pipeline.stats import available_memory
from .matches import Matches
from .rule import Rule
from .vocabulary import Ranked

if TYPE_CHECKING:
    from .search import SearchIndex

#: Batches of at least this many queries are split over threads.
PARALLEL_QUERIES = 2048

#: Queries a block answers at most (per thread), each block told to the progress callback.
QUERY_BLOCK = 4096

#: With a memory budget, the first block's queries: a few, until their matches say how many more fit.
FIRST_BLOCK = 64

#: Bytes a match costs while its block is listed as documents and written (the matches of sets, their
#: listing and sort, the columns of :class:`Matches`); the writer's Python values are a constant beside it.
MATCH_BYTES = 128


def block_rows(memory: int | str | None) -> int:
    """The matches a block may hold within ``memory`` (:func:`~allpairs.output.spill.parse_memory`; None:
    half the memory available now)."""
    return max(1, (available_memory() // 2 if memory is None else parse_memory(memory)) // MATCH_BYTES)


def threads_for(n: int, jobs: int) -> int:
    """Threads for a batch of ``n`` queries: one below :data:`PARALLEL_QUERIES`, else up to ``jobs``."""
    return 1 if n < PARALLEL_QUERIES or jobs <= 1 else min(jobs, n // (PARALLEL_QUERIES // 2))


def query_blocks(index: SearchIndex, ranked: Ranked, rule: Rule, *, jobs: int = 1, limit: np.ndarray | None = None,
                 progress: Callable[[str, int, int], None] | None = None, step: int | None = None,
                 rows: int | None = None) -> Iterator[tuple[int, int, np.ndarray, np.ndarray, np.ndarray]]:
    """(a, b, query, set, overlap): the matches of sets of the queries ``a .. b - 1``, block after block in
    query order (one empty block when there is no query), each block told to ``progress``; with threads, a block each at once, every thread on its
    own scratch rows. Blocks of ``step`` queries (default :data:`QUERY_BLOCK`); with ``rows``, fewer where
    the matches of sets so far say a block's would pass ``rows`` (the first :data:`FIRST_BLOCK`, each next
    at most eight times the last). ``limit[k]``: query ``k`` answers only sets below it."""
    n = len(ranked.unseen)
    if limit is None:
        limit = np.full(n, index.num_sets, np.int32)
    tasks = threads_for(n, jobs)
    # The sets' signatures and each thread's scratch (its own: threads of the caller may query the index at
    # once), made here, before any thread reads them.
    bits, scratches = index._scratch.take(tasks, index.sets)
    size = max(step or QUERY_BLOCK, 1) if rows is None else min(FIRST_BLOCK, step or QUERY_BLOCK)
    pool = ThreadPoolExecutor(max_workers=tasks) if tasks > 1 else None
    a = found = 0
    clean = False  # the scratch goes back after the last block, or when the caller stops between blocks
    try:
        while True:
            cuts = [a]  # a block for each thread, worker w on scratches[w]
            while len(cuts) <= tasks and cuts[-1] < n:
                cuts.append(min(cuts[-1] + size, n))
            spans = list(zip(cuts, cuts[1:])) or [(a, a)]  # no query: one empty block, of the kernel's types
            parts = list((pool.map if pool is not None else map)(
                lambda w: index._query_part(ranked, rule, limit, *spans[w], bits, scratches[w]), range(len(spans))))
            for (lo, hi), (q, s, o) in zip(spans, parts):
                found += len(q)
                if progress is not None:
                    progress("query", hi, n)
                yield lo, hi, q, s, o
            del parts
            a = cuts[-1]
            if a >= n:
                break
            if rows is not None:  # as many queries as the matches of sets so far say fit, per thread
                size = max(1, min(step or QUERY_BLOCK, 8 * size, rows // tasks * a // max(found, 1)))
        clean = True
    except GeneratorExit:  # closed at a yield: every block's probe had ended
        clean = True
        raise
    finally:
        if pool is not None:
            pool.shutdown()
        if clean:
            index._scratch.give(scratches)


def match_blocks(index: SearchIndex, ranked: Ranked, rule: Rule, corpus: Corpus, *, top: int | None, jobs: int,
                 progress, rows: int) -> Iterator[Matches]:
    """The matches of :meth:`SearchIndex.query_blocks`: each block's matches of sets listed as documents a run
    of whole queries standing for ``rows`` documents at most at a time (one query at least); at least one
    block, empty when nothing matches."""
    ids = list(corpus.ids)
    # As text, as the index holds its own documents' columns (see SearchIndex.query).
    columns = {name: list(values) for name, values in corpus.columns.items()}
    per_set = index.sets.documents_per_set()
    empty = True
    for _, _, q, s, o in query_blocks(index, ranked, rule, jobs=jobs, progress=progress, rows=rows):
        for i, j in whole_queries(q, per_set[s], rows):
            matches = index._matches(ranked, q[i:j], s[i:j], o[i:j], ids, rule)
            matches.query_columns = columns
            yield matches if top is None else matches.best(top)
            empty = False
    if empty:
        nothing = np.zeros(0, np.int32)
        matches = index._matches(ranked, nothing, nothing, nothing, ids, rule)
        matches.query_columns = columns
        yield matches


def whole_queries(q: np.ndarray, docs: np.ndarray, rows: int) -> Iterator[tuple[int, int]]:
    """Cuts ``(i, j)`` of matches sorted by query ``q`` (``docs``: the documents each stands for) into runs of
    whole queries standing for ``rows`` documents at most, or one query when it alone stands for more."""
    if not len(q):
        return
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
    bounds = np.r_[starts, len(q)]
    before = np.r_[0, np.cumsum(docs)][bounds]  # documents before each query's first match
    k = 0
    while k < len(starts):
        nxt = max(k + 1, int(np.searchsorted(before, before[k] + rows, "right")) - 1)
        yield int(bounds[k]), int(bounds[nxt])
        k = nxt
