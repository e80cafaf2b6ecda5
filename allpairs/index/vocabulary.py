"""The index's global token order: shingle key -> rank, and documents turned into sorted ranks.

A build ranks its keys 0 .. v0 - 1, rare first. A key learnt by a later add
gets a rank below every existing one (-1, -2, ...; rarer than all, like an
unseen query token), stored at slot ``v0 - 1 - rank`` of ``slot_keys``, so
that the prefix filter stays as selective as after a build.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _kernel as _k
from .arrays import Column


@dataclass
class Ranked:
    """Documents as sorted ranks: CSR (indptr int64, tokens int32), unseen tokens per document (int32)."""

    indptr: np.ndarray
    tokens: np.ndarray
    unseen: np.ndarray

    def __post_init__(self) -> None:
        self.sizes = np.diff(self.indptr) + self.unseen  # a query's unseen tokens count in its size


class Vocabulary:
    """Key -> rank: the build's keys sorted for a binary search (``lookup_keys``/``lookup_ranks``), the
    keys learnt since (``extra_keys``/``extra_ranks``, sorted), and the key of each slot (``slot_keys``)."""

    def __init__(self, slot_keys: np.ndarray, lookup_keys: np.ndarray, lookup_ranks: np.ndarray, v0: int):
        self.v0 = v0
        self.slot_keys = Column(slot_keys, np.uint64)
        self.lookup_keys = np.asarray(lookup_keys, np.uint64)
        self.lookup_ranks = np.asarray(lookup_ranks, np.int32)
        self.extra_keys = np.zeros(0, np.uint64)
        self.extra_ranks = np.zeros(0, np.int32)

    @classmethod
    def of(cls, keys: np.ndarray) -> "Vocabulary":
        """The order that ranks ``keys`` by position."""
        keys = np.asarray(keys, np.uint64)
        by_key = np.argsort(keys, kind="stable")
        return cls(keys, keys[by_key], by_key.astype(np.int32), len(keys))

    def __len__(self) -> int:
        return len(self.slot_keys)

    @property
    def learnt(self) -> bool:
        """Whether keys were learnt since the last :meth:`fold`."""
        return bool(len(self.extra_keys))

    def rank(self, indptr: np.ndarray, keys: np.ndarray) -> Ranked:
        """Documents' keys (CSR) as sorted ranks; a key never seen counts in ``unseen``."""
        ptr, tokens, unseen = _k.to_ranks(indptr, keys, self.lookup_keys, self.lookup_ranks,
                                          self.extra_keys, self.extra_ranks)
        return Ranked(ptr, tokens, unseen)

    def fold(self) -> None:
        """Merge the learnt keys into the lookup arrays (as saved)."""
        if len(self.extra_keys):
            keys = np.concatenate([self.lookup_keys, self.extra_keys])
            ranks = np.concatenate([self.lookup_ranks, self.extra_ranks])
            order = np.argsort(keys, kind="stable")
            self.lookup_keys, self.lookup_ranks = keys[order], ranks[order]
            self.extra_keys = np.zeros(0, np.uint64)
            self.extra_ranks = np.zeros(0, np.int32)

    def learn(self, keys: np.ndarray) -> np.ndarray:
        """The index's rank of each key (int32), giving every key not yet ranked a new rank below all others.

        ``keys`` are distinct, rarest first (a batch's :attr:`~allpairs.order.OrderedSets.keys`); new keys keep
        that order below the index's ranks: the rarest gets the lowest rank, so it comes first in its sets
        and the prefix filter stays as selective as after a build.
        """
        ranks = np.full(len(keys), -(2**31), np.int64)
        for table, table_ranks in ((self.lookup_keys, self.lookup_ranks), (self.extra_keys, self.extra_ranks)):
            if len(table):
                at = np.minimum(np.searchsorted(table, keys), len(table) - 1)
                hit = np.flatnonzero(table[at] == keys)
                ranks[hit] = table_ranks[at[hit]]
        new = np.flatnonzero(ranks == -(2**31))
        if len(new):
            start = len(self) - self.v0  # tokens added so far: ranks -1 .. -start
            if start + len(new) > 2**31 - 1:
                raise OverflowError("more than 2**31 distinct shingles")
            ranks[new] = -(start + len(new) - np.arange(len(new)))
            self.slot_keys.extend(keys[new[::-1]])  # slot of rank r < 0: v0 - 1 - r
            keys_all = np.concatenate([self.extra_keys, keys[new]])
            ranks_all = np.concatenate([self.extra_ranks, ranks[new].astype(np.int32)])
            order = np.argsort(keys_all, kind="stable")
            self.extra_keys, self.extra_ranks = keys_all[order], ranks_all[order]
        return ranks.astype(np.int32)
