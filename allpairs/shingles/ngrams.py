"""n-gram keys of token keys into buffers reused from batch to batch, and the counts and keys of the
documents done so far."""
from __future__ import annotations

import numpy as np

from allpairs.shingles import _kernel as _k
from allpairs.shingles.utf8 import offsets_of


class Scratch:
    """Work arrays that the batches of one call reuse (no fresh pages for each): token keys, n-gram
    keys, and the table of :func:`allpairs.shingles._kernel.ngram_keys_into` with its next document mark.

    They are made in the calling thread (:meth:`prepare`): memory freed by a
    worker thread's allocator tends to stay with the process.
    """

    #: A table of more slots than this (16 bytes each), made for a very long text, is not kept.
    KEEP_SLOTS = 1 << 18

    def __init__(self) -> None:
        self.keys = np.zeros(0, np.uint64)
        self.ngrams = np.zeros(0, np.uint64)
        self.slots = np.zeros(0, np.uint64)
        self.marks = 0

    def prepare(self, sizes: np.ndarray, n: int, distinct: bool) -> np.int64:
        """Room for texts of ``sizes`` bytes (UTF-8), at most a token a byte and one more a text;
        returns the first document mark of the table."""
        room = int(sizes.sum()) + len(sizes)
        if len(self.keys) < room:
            self.keys = np.empty(room, np.uint64)
        if len(self.ngrams) < room:  # no more n-grams than tokens
            self.ngrams = np.empty(room, np.uint64)
        return self.table(int(sizes.max(initial=0)) + 2 - n, len(sizes), distinct)

    def table(self, longest: int, n_docs: int, distinct: bool) -> np.int64:
        """A table for ``n_docs`` texts of at most ``longest`` n-grams; returns their first document mark."""
        if distinct:
            size = 16
            while size < 2 * longest:
                size *= 2
            if len(self.slots) < 2 * size:
                self.slots = np.zeros(2 * size, np.uint64)
        first = self.marks
        self.marks += n_docs
        return np.int64(first)

    def trim(self) -> None:
        """Drop a table made for a very long text: every slot of it was likely touched, and the
        next texts need a fraction of it."""
        if len(self.slots) > 2 * self.KEEP_SLOTS:
            self.slots = np.zeros(0, np.uint64)

    def ngram_keys_into(self, indptr, keys, n, seed, distinct, out, k0, first_mark, whole=False):
        """:func:`allpairs.shingles._kernel.ngram_keys_into` with this table, marks from ``first_mark``."""
        return _k.ngram_keys_into(indptr, keys, np.int64(n), seed, distinct, whole, out, np.int64(k0), self.slots,
                                  first_mark)


def ngram_keys(indptr, keys, n, seed, distinct, whole) -> tuple[np.ndarray, np.ndarray]:
    """:func:`allpairs.shingles._kernel.ngram_keys_into` a new array: ``(counts, keys)``; ``whole``: a text
    shorter than one shingle gets one, its whole token sequence (word and char; see :func:`shingle_texts`)."""
    tokens = np.diff(indptr)
    total = int(np.maximum(tokens - n + 1, 0).sum()) + (int(((tokens > 0) & (tokens < n)).sum()) if whole else 0)
    out = np.empty(total, np.uint64)
    scratch = Scratch()
    first_mark = scratch.table(int(tokens.max(initial=0)) - n + 1, len(indptr) - 1, distinct)
    counts = scratch.ngram_keys_into(indptr, keys, n, seed, distinct, out, 0, first_mark, whole)
    return counts, out[: int(counts.sum())]


class KeyBuffer:
    """The shingle counts and keys of the documents done so far; the keys in one array that kernels write into.

    It starts with room for ``capacity`` keys (untouched pages cost no
    memory) and grows when a batch needs more.
    """

    def __init__(self, capacity: int) -> None:
        try:
            self.keys = np.empty(max(capacity, 1), np.uint64)
        except MemoryError:  # more room than the system lends at once: start small and grow
            self.keys = np.empty(1 << 20, np.uint64)
        self.size = 0
        self.counts: list[np.ndarray] = [np.zeros(0, np.int64)]

    def room(self, m: int) -> np.ndarray:
        """The key array, with room for ``m`` keys from :attr:`size` on."""
        if self.size + m > len(self.keys):
            grown = np.empty(max(self.size + m, 2 * len(self.keys)), np.uint64)
            grown[: self.size] = self.keys[: self.size]
            self.keys = grown
        return self.keys

    def add(self, counts: np.ndarray, keys: np.ndarray | None = None) -> None:
        """Documents done: their counts (int64), and their keys, copied in, unless written in place already."""
        total = int(counts.sum())
        if keys is not None:
            self.room(total)[self.size:self.size + total] = keys
        self.size += total
        self.counts.append(counts)

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        """Counts (int64, a document each) and keys (uint64)."""
        return np.concatenate(self.counts), self.keys[: self.size]


def interleave(n_docs: int, parts) -> tuple[np.ndarray, np.ndarray]:
    """Shingle counts and keys of ``n_docs`` documents put together from ``parts``.

    Each part is ``(members, (counts, keys))``: the documents it holds (input
    positions, ascending) and their counts and keys in that order.
    """
    counts = np.zeros(n_docs, dtype=np.int64)
    rows: list[np.ndarray | None] = [None] * n_docs
    for members, (part_counts, part_keys) in parts:
        offsets = offsets_of(part_counts)
        for j, i in enumerate(members):
            counts[i] = part_counts[j]
            rows[i] = part_keys[offsets[j] : offsets[j + 1]]
    return counts, np.concatenate(rows) if n_docs else np.zeros(0, dtype=np.uint64)
