"""Results whose pairs are not held in memory: counted as they were found, or spilled to disk in sorted runs.

Both stand where :class:`~allpairs.pairs.result.Pairs` stands in a
:class:`~allpairs.join.JoinResult`, with the same length, the same counts
and, for spilled pairs, the same pairs in the same order, read back by
merging the runs (:class:`allpairs.output.spill.PairRuns`), a chunk at a time.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np

from .._plural import count
from ..errors import UsageError
from ..order import OrderedSets
from .result import Pair, PairChunk, Pairs, _pairs_of


class CountedPairs(Pairs):
    """The number of document pairs a join found, counted block by block as they were verified; no pair is kept.

    ``len()`` and :attr:`num_set_pairs` are the counts; reading a pair is refused.
    """

    def __init__(self, sets: OrderedSets, count: int, set_pairs: int, n_left: int | None = None):
        self.sets = sets
        self.n_left = n_left
        self.set_estimate = None
        self._count = count
        self._set_pairs = set_pairs

    @property
    def num_set_pairs(self) -> int:
        return self._set_pairs

    def chunks(self, max_pairs: int = 1 << 20) -> Iterator[PairChunk]:
        raise self._not_kept()

    def _pair(self, i: int) -> Pair:
        raise self._not_kept()

    @staticmethod
    def _not_kept() -> UsageError:
        return UsageError("the pairs were counted, not kept (count=True); join without count=True to read them")

    def head(self, k: int = 0) -> list[Pair]:
        return []

    def __repr__(self) -> str:
        return f"<CountedPairs: {count(len(self), 'document pair')} from {count(self._set_pairs, 'pair')} of distinct sets>"


class SpilledPairs(CountedPairs):
    """Document pairs held on disk in sorted runs and merged back in order as they are read.

    ``runs`` is an :class:`allpairs.output.spill.PairRuns`; ``memory`` the
    bytes the merge may buffer. ``estimates``: pairs kept on a MinHash estimate
    were spilled with overlap ``-1 - a`` for ``a`` agreeing positions, and read
    back as overlap -1 with the estimate ``estimates[a]`` (identical documents:
    their size, and 1.0), as the in-memory pairs give them. :meth:`chunks` (and iteration, ``pairs[i]``,
    tables) read the runs again each time; :meth:`close` removes them (also
    done at exit and when the result is collected).
    """

    head = Pairs.head

    def __init__(self, sets: OrderedSets, runs, count: int, set_pairs: int, memory: int,
                 n_left: int | None = None, estimates: np.ndarray | None = None):
        super().__init__(sets, count, set_pairs, n_left)
        self.runs = runs
        self.memory = memory
        self.estimates = estimates

    @property
    def estimated(self) -> bool:
        return self.estimates is not None

    @property
    def spilled_bytes(self) -> int:
        """Bytes the runs take on disk."""
        return self.runs.bytes

    def chunks(self, max_pairs: int = 1 << 20) -> Iterator[PairChunk]:
        """The pairs in order, about ``max_pairs`` at a time (a document's partners may be split across two)."""
        if self.runs.directory is None and self._count:
            raise UsageError("the spilled pairs were removed (close()); join again to read them")
        size = self.sets.doc_size
        for left, right, overlap in self.runs.merge(self.memory, max_pairs):
            est = None
            if self.estimates is not None:
                coded = overlap < 0
                est = np.ones(len(left))
                est[coded] = self.estimates[-1 - overlap[coded]]
                overlap[coded] = -1
            yield PairChunk(left, right, overlap, size[left], size[right], est)

    def _pair(self, i: int) -> Pair:
        start = 0
        for c in self.chunks():
            if i < start + len(c):
                return next(_pairs_of(c, i - start, i - start + 1, self.n_left or 0))
            start += len(c)
        raise IndexError(f"pair index {i} out of range")

    def close(self) -> None:
        """Remove the runs from disk."""
        self.runs.close()

    def __enter__(self) -> SpilledPairs:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"<SpilledPairs: {count(len(self), 'document pair')} from {count(self._set_pairs, 'pair')} of "
                f"distinct sets, {count(len(self.runs.runs), 'run')} on disk>")
