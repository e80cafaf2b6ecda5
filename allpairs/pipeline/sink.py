"""Where a join's pairs of distinct sets go, a block at a time: counted, held, or spilled past the budget.

Both paths hand their pairs over in blocks (the exact path from
:func:`allpairs.exact.prefix.prefix_join_blocks`; the LSH path its verified
candidates, then the blocks of the exact join of its large buckets), each pair
of distinct sets in exactly one block, in any order: a run is sorted by
expanding its own block (:meth:`Pairs.chunks`), the runs are merged, and held
blocks are concatenated into one :class:`Pairs`, whose expansion does not
depend on the order of its set pairs. So the result is the same whatever the
blocks and the budget.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from ..errors import AllPairsError
from ..exact.prefix import SetPairs
from ..output import spill as spill_module
from ..output.spill import PairRuns, size_text
from ..order import OrderedSets
from ..pairs import Pairs
from ..pairs.streamed import CountedPairs, SpilledPairs
from .stats import Progress

if TYPE_CHECKING:  # an annotation only: a join asked for clusters imports the module
    from ..pairs.clusters import SetUnion


#: Pairs of distinct sets counted at a time (``count=True``): blocks this large cost nothing to hand over.
COUNT_BLOCK = 1 << 20


class PairSink:
    """Takes blocks of pairs of distinct sets (:meth:`add`) and gives the result (:meth:`finish`).

    ``count``: each block is counted (identical documents by arithmetic) and
    dropped. Else blocks are held while they fit ``block_pairs``; past it they
    are spilled to sorted runs in a directory beside ``spill`` (True: in
    ``TMPDIR``) or, with ``spill`` None, the join stops with one line.
    ``union`` takes every block as it passes (clusters). ``group_ok``: whether
    the documents of one distinct set pair up (counted once, in the first
    run). ``estimate``: MinHash estimates come with each block instead of
    verified overlaps (:class:`EstimateCode` says how they are spilled).
    ``symmetric``: False for containment (blocks carry directions).
    ``progress(stage, done, total, detail)`` is told the pairs so far at each
    :meth:`tick`.
    """

    def __init__(self, sets: OrderedSets, *, budget: int, block_pairs: int, group_ok: np.ndarray,
                 count: bool = False, spill=None, union: SetUnion | None = None, n_left: int | None = None,
                 progress: Progress | None = None, stage: str = "join", estimate: EstimateCode | None = None,
                 symmetric: bool = True):
        self.sets, self.budget, self.block_pairs = sets, budget, block_pairs
        self.group_ok, self.none_ok = group_ok, np.zeros(sets.num_sets, np.bool_)
        self.count, self.spill, self.union, self.n_left = count, spill, union, n_left
        self.progress, self.stage, self.estimate, self.symmetric = progress, stage, estimate, symmetric
        self.held: list[tuple[SetPairs, np.ndarray | None]] = []
        self.n_held = self.set_pairs = self.candidates = self.total = 0
        self.runs: PairRuns | None = None
        self.done = [0, 1]  # work done and in all, for the progress line and a full disk's estimate

    def pairs_of(self, found: SetPairs, estimate: np.ndarray | None, identical: bool) -> Pairs:
        return Pairs(self.sets, found.left, found.right, found.overlap, estimate, directions=found.directions,
                     n_left=self.n_left, group_ok=self.group_ok if identical else self.none_ok)

    def detail(self) -> str:
        text = f"{self.set_pairs:,} pairs of distinct sets"
        return text + (f", {size_text(self.runs.bytes)} spilled" if self.runs is not None else "")

    def tick(self, done: int, total: int) -> None:
        """The work done so far (the probe's cost, the buckets joined): the progress line and the estimate
        of the bytes a full spill needs."""
        self.done[:] = done, max(total, 1)
        if self.progress is not None:
            self.progress(self.stage, done, total, self.detail())

    def add(self, block: SetPairs, estimate: np.ndarray | None = None) -> None:
        """One block of pairs of distinct sets (``estimate``: their MinHash estimates, float64)."""
        self.candidates += block.candidates
        self.set_pairs += len(block.left)
        if self.union is not None:
            self.union.add(block.left, block.right)
        if self.count:
            self.total += len(self.pairs_of(block, None, False))
            return
        self.held.append((block, estimate))
        self.n_held += len(block.left)
        if self.n_held > self.block_pairs:
            if self.spill is None:
                raise AllPairsError(
                    f"the join reached {self.set_pairs:,} pairs of distinct sets, more than "
                    f"memory={size_text(self.budget)} holds ({spill_module.SET_PAIR_BYTES} bytes each); raise the "
                    "threshold, count them (count=True), read them from disk a chunk at a time (spill=True, then "
                    "res.pairs.chunks()), or write them with the command line's -o")
            if self.runs is None:
                done = self.done
                self.runs = PairRuns(None if self.spill is True else self.spill, memory=self.budget,
                                     needed=lambda so_far: int(so_far * done[1] / max(done[0], 1)))
            self._spill_held()

    def _take_held(self) -> tuple[SetPairs, np.ndarray | None]:
        blocks = [b for b, _ in self.held]
        est = None if self.held[0][1] is None else np.concatenate([e for _, e in self.held])
        self.held, self.n_held = [], 0
        return concatenate_set_pairs(blocks), est

    def _spill_held(self) -> None:
        if not self.held:
            return
        found, est = self._take_held()
        first = not self.runs.runs
        if self.estimate is not None:  # the estimates travel as their agreement counts, coded below zero
            found = SetPairs(found.left, found.right, self.estimate.encode(found.left, found.right),
                             found.candidates, found.directions)
        self.runs.add(self.pairs_of(found, est, first).chunks())

    def finish(self) -> Pairs:
        """The pairs: :class:`CountedPairs`, in-memory :class:`Pairs` or :class:`SpilledPairs`."""
        if self.progress is not None:  # the last block's pairs
            self.progress(self.stage, self.done[0], self.done[1], self.detail())
        empty = SetPairs(*(np.zeros(0, np.int32),) * 3, 0, None if self.symmetric else np.zeros(0, np.uint8))
        if self.count:
            self.total += len(self.pairs_of(empty, None, True))
            return CountedPairs(self.sets, self.total, self.set_pairs, self.n_left)
        if self.runs is None:
            if not self.held:
                return self.pairs_of(empty, None if self.estimate is None else np.zeros(0), True)
            found, est = self._take_held()
            return self.pairs_of(found, est, True)
        self._spill_held()
        return SpilledPairs(self.sets, self.runs, len(self.runs), self.set_pairs, self.budget, self.n_left,
                            estimates=None if self.estimate is None else self.estimate.table)


class EstimateCode:
    """How pairs kept on a MinHash estimate are spilled: a run holds a pair's agreement count ``a`` as the
    overlap ``-1 - a`` (identical documents keep their size, >= 0), read back through ``table[a]``, the
    very float :func:`allpairs.lsh.estimate_pairs` gives for ``a`` agreements."""

    def __init__(self, agreements: Callable[[np.ndarray, np.ndarray], np.ndarray], table: np.ndarray):
        self.agreements = agreements
        self.table = table

    def encode(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        return (-1 - self.agreements(left, right)).astype(np.int32)


def concatenate_set_pairs(blocks: list[SetPairs]) -> SetPairs:
    """Consecutive blocks of pairs as one (``blocks`` is emptied); one block is taken as it is."""
    if len(blocks) == 1:
        return blocks.pop()
    cols = [np.concatenate([getattr(b, f) for b in blocks]) for f in ("left", "right", "overlap")]
    directions = None if blocks[0].directions is None else np.concatenate([b.directions for b in blocks])
    candidates = sum(b.candidates for b in blocks)
    blocks.clear()
    return SetPairs(*cols, candidates, directions)
