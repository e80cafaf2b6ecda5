"""The indexed sets (sorted ranks, CSR) and the documents behind each (CSR); an added set identical to an
indexed one is found by a hash of its ranks, confirmed token by token."""
from __future__ import annotations

import numpy as np

from .._kernels.mix import GOLDEN, mix64
from ..verify import bitmaps_prune
from ..verify._kernel import bitmaps
from .arrays import Column, spans

#: Documents added to older sets, and hashes of sets added, are kept aside until they reach this share
#: of what is merged (and at least MIN_DELTA).
DELTA_SHARE = 4
MIN_DELTA = 1 << 14


def set_hashes(indptr: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each set of a CSR (uint64): equal sets, equal hashes (the other way round is
    checked token by token). The sum of the sets' mixed tokens, mixed with the size."""
    with np.errstate(over="ignore"):
        mixed = mix64.py_func(tokens.astype(np.int64).view(np.uint64) + GOLDEN)
        total = np.zeros(len(tokens) + 1, np.uint64)
        np.cumsum(mixed, out=total[1:])
        return mix64.py_func((total[indptr[1:]] - total[indptr[:-1]]) ^ np.diff(indptr).astype(np.uint64))


def same_sets(ptr_a: np.ndarray, tok_a: np.ndarray, rows_a: np.ndarray, ptr_b: np.ndarray, tok_b: np.ndarray,
              rows_b: np.ndarray) -> np.ndarray:
    """Whether set ``rows_a[k]`` of CSR a holds the same tokens as set ``rows_b[k]`` of CSR b, each k (bool)."""
    size = ptr_a[rows_a + 1] - ptr_a[rows_a]
    same = size == ptr_b[rows_b + 1] - ptr_b[rows_b]
    k = np.flatnonzero(same)
    if len(k):
        differ = tok_a[spans(ptr_a[rows_a[k]], size[k])] != tok_b[spans(ptr_b[rows_b[k]], size[k])]
        ends = np.cumsum(size[k])
        wrong = np.zeros(len(differ) + 1, np.int64)
        np.cumsum(differ, out=wrong[1:])
        same[k] = wrong[ends] == wrong[ends - size[k]]
    return same


class SetStore:
    """Sets as sorted int32 ranks (``indptr``, ``tokens``) and each set's documents, ascending
    (``set_doc_ptr``, ``set_docs``); documents added to a set indexed before them wait in
    ``joined_set``/``joined_doc`` until :meth:`merge_members`."""

    def __init__(self, indptr: np.ndarray, tokens: np.ndarray, set_doc_ptr: np.ndarray, set_docs: np.ndarray):
        self.indptr = Column(indptr, np.int64)
        self.tokens = Column(tokens, np.int32)
        self.set_doc_ptr = Column(set_doc_ptr, np.int64)
        self.set_docs = Column(set_docs, np.int32)
        self.joined_set = Column(np.zeros(0, np.int32), np.int32)
        self.joined_doc = Column(np.zeros(0, np.int32), np.int32)
        self._forget()
        # The probe's per-set figures, made for the tokens column named (replaced when sets are dropped).
        self._made_for: Column | None = None
        self._made_n = 0
        self._bits = np.zeros(0, np.uint64)
        self._largest = 0

    def probe_figures(self) -> tuple[np.ndarray, int]:
        """Each set's bitmap signature (uint64) for the probe's bitmap filter, or an empty array where the
        filter does not pay for these sets (:func:`allpairs.verify.bitmaps_prune`, the join's rule), and the
        largest set's size; made once, extended as sets are appended."""
        m = len(self)
        indptr = self.indptr.array
        if self._made_for is not self.tokens:
            self._made_for, self._made_n = self.tokens, m
            sizes = np.diff(indptr)
            self._largest = int(sizes.max()) if m else 0
            self._bits = bitmaps(indptr, self.tokens.array) if bitmaps_prune(sizes) else np.zeros(0, np.uint64)
        elif self._made_n < m:  # sets appended since
            ptr = indptr[self._made_n:]
            self._largest = max(self._largest, int(np.diff(ptr).max()))
            if len(self._bits):
                self._bits = np.concatenate([self._bits, bitmaps(ptr - ptr[0], self.tokens.array[ptr[0]:ptr[-1]])])
            self._made_n = m
        return self._bits, self._largest

    def _forget(self) -> None:
        # Hashes of the sets (set_hashes): sorted, for the first `_hashed` sets; a dict for later ones.
        self._hash_keys: np.ndarray | None = None
        self._hash_sets = np.zeros(0, np.int32)
        self._hashed = 0
        self._recent: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self.indptr) - 1

    def sizes(self, s: np.ndarray) -> np.ndarray:
        """The size of each set ``s`` (int64)."""
        indptr = self.indptr.array
        return indptr[s + 1] - indptr[s]

    def documents_per_set(self) -> np.ndarray:
        """How many documents each set stands for (int64), those waiting to be merged in included."""
        per_set = np.diff(self.set_doc_ptr.array)
        if len(self.joined_set):
            per_set = per_set + np.bincount(self.joined_set.array, minlength=len(per_set))
        return per_set.astype(np.int64, copy=False)

    def documents(self, q: np.ndarray, s: np.ndarray, o: np.ndarray) -> tuple[np.ndarray, ...]:
        """(query, set, overlap) matches expanded to their sets' documents: (q, s, o, doc), sorted by (q, doc)."""
        ptr = self.set_doc_ptr.array
        starts = ptr[s]
        counts = ptr[s + 1] - starts
        extra = None
        if len(self.joined_set) and len(s):  # documents added to sets indexed before them
            by_set = np.argsort(self.joined_set.array, kind="stable")
            joined = self.joined_set.array[by_set]
            first = np.searchsorted(joined, s, "left")
            more = np.searchsorted(joined, s, "right") - first
            rep = np.repeat(np.arange(len(s)), more)
            extra = q[rep], s[rep], o[rep], self.joined_doc.array[by_set[spans(first, more)]]
        if int(counts.sum()) == len(s):  # one document per set, the usual case
            docs = self.set_docs.array[starts]
        else:
            rep = np.repeat(np.arange(len(s)), counts)
            docs = self.set_docs.array[spans(starts, counts)]
            q, s, o = q[rep], s[rep], o[rep]
        if extra is not None:
            q, s, o, docs = (np.concatenate(pair) for pair in zip((q, s, o, docs), extra))
        if len(q) > 1:
            order = np.lexsort((docs, q))
            q, s, o, docs = q[order], s[order], o[order], docs[order]
        return q, s, o, docs

    def join(self, sets: np.ndarray, docs: np.ndarray, num_docs: int) -> None:
        """Add documents ``docs`` to the indexed sets ``sets`` (one each)."""
        self.joined_set.extend(sets)
        self.joined_doc.extend(docs)
        if len(self.joined_set) >= max(MIN_DELTA, num_docs // DELTA_SHARE):
            self.merge_members(num_docs)

    def append(self, ptr: np.ndarray, tok: np.ndarray, gptr: np.ndarray, docs: np.ndarray,
               hashes: np.ndarray) -> int:
        """Append new sets (CSR in the index's ranks) and their documents (CSR); return the first new set."""
        first_set = len(self)
        self.tokens.extend(tok)
        self.indptr.extend(self.indptr.array[-1] + ptr[1:])
        self.set_docs.extend(docs)
        self.set_doc_ptr.extend(self.set_doc_ptr.array[-1] + gptr[1:])
        self._remember(hashes, first_set)
        return first_set

    def find(self, ptr: np.ndarray, tok: np.ndarray, hashes: np.ndarray) -> np.ndarray:
        """The indexed set identical to each set of a CSR, or -1 (int32); ``hashes``: their :func:`set_hashes`."""
        if self._hash_keys is None:  # first add: hash the sets indexed so far
            self._hash_keys = np.zeros(0, np.uint64)
            self._remember(set_hashes(self.indptr.array, self.tokens.array), 0)
        found = np.full(len(hashes), -1, np.int32)
        if len(self._hash_keys):
            at = np.minimum(np.searchsorted(self._hash_keys, hashes), len(self._hash_keys) - 1)
            hit = np.flatnonzero(self._hash_keys[at] == hashes)
            found[hit] = self._hash_sets[at[hit]]
        miss = np.flatnonzero(found < 0)
        if self._recent and 8 * len(miss) < len(self._recent):  # a few sets: look each up
            for k in miss.tolist():
                found[k] = self._recent.get(int(hashes[k]), -1)
        elif self._recent and len(miss):  # many: sort the recent hashes once
            keys = np.fromiter(self._recent, np.uint64, len(self._recent))
            sets = np.fromiter(self._recent.values(), np.int32, len(self._recent))
            order = np.argsort(keys)
            keys, sets = keys[order], sets[order]
            at = np.minimum(np.searchsorted(keys, hashes[miss]), len(keys) - 1)
            hit = keys[at] == hashes[miss]
            found[miss[hit]] = sets[at[hit]]
        k = np.flatnonzero(found >= 0)
        if len(k):  # a hash is not proof: a set that differs (a collision) stays a set of its own
            same = same_sets(ptr, tok, k, self.indptr.array, self.tokens.array, found[k].astype(np.int64))
            found[k[~same]] = -1
        return found

    def _remember(self, hashes: np.ndarray, first_set: int) -> None:
        """Note the hashes of the sets ``first_set``, ``first_set + 1``, ... just appended."""
        if len(self._recent) + len(hashes) < max(MIN_DELTA, self._hashed // DELTA_SHARE):
            self._recent.update(zip(hashes.tolist(), range(first_set, first_set + len(hashes))))
            return
        keys = np.concatenate([self._hash_keys, np.fromiter(self._recent, np.uint64, len(self._recent)), hashes])
        sets = np.concatenate([self._hash_sets, np.fromiter(self._recent.values(), np.int32, len(self._recent)),
                               np.arange(first_set, first_set + len(hashes), dtype=np.int32)])
        order = np.argsort(keys, kind="stable")
        self._hash_keys, self._hash_sets = keys[order], sets[order]
        self._hashed = len(keys)
        self._recent = {}

    def merge_members(self, n: int) -> None:
        """Merge the documents added to older sets into set_doc_ptr/set_docs (each set's documents ascending)."""
        if not len(self.joined_set):
            return
        m = len(self)
        doc_set = np.empty(n, np.int32)
        doc_set[self.set_docs.array] = np.repeat(np.arange(m, dtype=np.int32), np.diff(self.set_doc_ptr.array))
        doc_set[self.joined_doc.array] = self.joined_set.array
        ptr = np.zeros(m + 1, np.int64)
        np.cumsum(np.bincount(doc_set, minlength=m), out=ptr[1:])
        self.set_doc_ptr = Column(ptr, np.int64)
        self.set_docs = Column(np.argsort(doc_set, kind="stable").astype(np.int32), np.int32)
        self.joined_set = Column(np.zeros(0, np.int32), np.int32)
        self.joined_doc = Column(np.zeros(0, np.int32), np.int32)

    # ---- files -------------------------------------------------------------

    def drop(self, alive: np.ndarray, num_docs: int) -> bool:
        """Keep only the documents where ``alive`` (bool, one per document), renumbered in order; a set
        left with no document is removed. Return whether any set was (its postings must be rebuilt)."""
        self.merge_members(num_docs)
        new_position = np.cumsum(alive) - 1
        m = len(self)
        ptr, members = self.set_doc_ptr.array, self.set_docs.array
        set_of = np.repeat(np.arange(m), np.diff(ptr))
        stay = alive[members]
        counts = np.bincount(set_of[stay], minlength=m)
        members = new_position[members[stay]].astype(np.int32)
        live = counts > 0
        removed = not live.all()
        if removed:
            rows = np.flatnonzero(live)
            indptr = self.indptr.array
            lengths = indptr[rows + 1] - indptr[rows]
            tokens = self.tokens.array[spans(indptr[rows], lengths)]
            self.indptr = Column(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64), np.int64)
            self.tokens = Column(tokens, np.int32)
            counts = counts[rows]
            self._forget()
        ptr = np.zeros(len(counts) + 1, np.int64)
        np.cumsum(counts, out=ptr[1:])
        self.set_doc_ptr = Column(ptr, np.int64)
        self.set_docs = Column(members, np.int32)
        return removed
