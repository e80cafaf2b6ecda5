"""The inverted index of every indexed set's indexing prefix: compiled posting lists sorted by set size
(Bayardo et al. 2007), and a sorted delta of the postings of sets added since, probed beside them."""
from __future__ import annotations

import threading

import numpy as np
from sortedcontainers import SortedList

from . import _kernel as _k
from .arrays import spans
from .rule import Rule
from . import sets as merging  # MIN_DELTA and DELTA_SHARE read at each call: tests lower them
from .vocabulary import Ranked

#: Set sizes and ids fit in 32 bits: the fields of a packed posting of the sorted delta.
_FIELD = 32
_LOW = (1 << _FIELD) - 1


def _pack(slot: int, size: int, s: int) -> int:
    """A posting of the sorted delta as one integer, ordered as (token slot, set size, set)."""
    return (slot << (2 * _FIELD)) | (size << _FIELD) | s


def scratch(m: int) -> np.ndarray:
    """The probe's scratch rows for ``m`` sets: count (zeros), last_i, last_j, touched, res_s, res_o."""
    return np.zeros((6, m), np.int32)


def alpha_cache(largest: int) -> np.ndarray:
    """The probe's α per partner size, for sets of at most ``largest`` tokens
    (:func:`allpairs.index._kernel.cached_overlap`: stamps, values, and the call number last)."""
    return np.zeros((2, largest + 2), np.int64)


#: Guards every pool of free scratch, held for a pop or an extend: a module's lock, not an index's, so that an
#: index still pickles and copies.
_POOL_LOCK = threading.Lock()


class ScratchPool:
    """An index's probe scratch rows and α caches not in use: a call takes one a thread and gives them back
    when it ends well, so that threads of a program querying one index at once never share one (sharing
    lost matches, silently); one cut short keeps them (they may be dirty)."""

    def __init__(self) -> None:
        self.free: list[tuple[np.ndarray, np.ndarray]] = []

    def take(self, k: int, sets) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
        """The probe signatures of ``sets`` (a :class:`~.sets.SetStore`) and ``k`` scratch rows and α caches
        grown to them."""
        with _POOL_LOCK:
            bits, largest = sets.probe_figures()
            taken = [self.free.pop() for _ in range(min(k, len(self.free)))]
        m = max(len(sets), 1)
        out = []
        for rows, cache in taken + [(scratch(m), alpha_cache(largest)) for _ in range(k - len(taken))]:
            if rows.shape[1] < m:
                rows = scratch(max(m, 2 * rows.shape[1]))
            if cache.shape[1] < largest + 2:
                cache = alpha_cache(max(largest, 2 * cache.shape[1]))
            out.append((rows, cache))
        return bits, out

    def give(self, taken: list[tuple[np.ndarray, np.ndarray]]) -> None:
        with _POOL_LOCK:
            self.free.extend(taken)


class Postings:
    """Compiled posting lists (``list_ptr``, ``post``: one int32 row of set, position, set size per
    posting, each list sorted by (set size, position, set)) and ``delta``, the packed postings
    (:func:`_pack`) of the sets added since they were built."""

    def __init__(self, list_ptr: np.ndarray, post: np.ndarray):
        self.list_ptr, self.post = list_ptr, post
        self.delta = SortedList()

    @classmethod
    def build(cls, indptr: np.ndarray, tokens: np.ndarray, rule: Rule, num_tokens: int, v0: int) -> "Postings":
        """The postings of every set's indexing prefix, in one pass of the compiled builder."""
        return cls(*_k.build_postings(indptr, tokens, rule.index_prefix(np.diff(indptr)), num_tokens, v0))

    def add(self, ptr: np.ndarray, tok: np.ndarray, first_set: int, rule: Rule, v0: int) -> bool:
        """Add the prefix postings of new sets ``first_set, first_set + 1, ...`` (CSR in the index's ranks)
        to the delta; False, adding nothing, when they would bring it to DELTA_SHARE of the compiled
        postings: then the caller rebuilds them, as a build does."""
        sizes = np.diff(ptr)
        plen = rule.index_prefix(sizes)
        if len(self.delta) + int(plen.sum()) >= max(merging.MIN_DELTA, len(self.post) // merging.DELTA_SHARE):
            return False
        rows = np.repeat(np.arange(len(sizes)), plen)
        t = tok[spans(ptr[:-1], plen)].astype(np.int64)
        slots = np.where(t >= 0, t, v0 - 1 - t)
        self.delta.update(map(_pack, slots.tolist(), sizes[rows].tolist(), (first_set + rows).tolist()))
        return True

    def delta_candidates(self, ranked: Ranked, rule: Rule, lo_q: int, hi_q: int,
                         v0: int) -> tuple[np.ndarray, np.ndarray]:
        """Sets of the delta that share a probing-prefix token with each query, within the size bound."""
        x_ptr = np.zeros(hi_q - lo_q + 1, np.int64)
        if not self.delta:
            return x_ptr, np.zeros(0, np.int32)
        out: list[int] = []
        sizes = ranked.sizes
        probe_lens, los, his = rule.probe(sizes[lo_q:hi_q])
        for k in range(lo_q, hi_q):
            size_x = int(sizes[k])
            if size_x:
                u = int(ranked.unseen[k])
                probe_len, lo, hi = int(probe_lens[k - lo_q]), int(los[k - lo_q]), min(int(his[k - lo_q]), _LOW)
                found = set()
                for w in ranked.tokens[ranked.indptr[k]:ranked.indptr[k] + max(probe_len - u, 0)].tolist():
                    slot = w if w >= 0 else v0 - 1 - w
                    for key in self.delta.irange(_pack(slot, lo, 0), _pack(slot, hi, _LOW)):
                        found.add(key & _LOW)
                out.extend(sorted(found))
            x_ptr[k - lo_q + 1] = len(out)
        return x_ptr, np.asarray(out, np.int32)
