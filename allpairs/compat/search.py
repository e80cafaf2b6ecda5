"""SetSimilaritySearch 1.0.1's ``SearchIndex``: the same answers, order, types and attributes, queried by a kernel."""
from __future__ import annotations

import importlib
import sys
import threading
from collections import defaultdict
from itertools import repeat

import numpy as np

from allpairs.compat._engine import COSINE, check_arguments, COMPAT_CODES, cutoffs, in_set_order, postings_for_index, prefix_lengths
from allpairs.compat._kernel import probe_query
from allpairs.compat.utils import (
    _debug,
    _frequency_order_transform,
    _overlap_index_threshold_funcs,
    _overlap_threshold_funcs,
    _position_filter_funcs,
    _similarity_funcs,
)


class SearchIndex(object):
    """Set similarity search by prefix and position filtering (SetSimilaritySearch 1.0.1's ``SearchIndex``).

    Parameters
    ----------
    sets : list
        A non-empty list of iterables of hashable tokens (repeats scored as
        SetSimilaritySearch scores them).
    similarity_func_name : str
        ``"jaccard"``, ``"cosine"``, ``"containment"`` (``|query ∩ X| / |query|``)
        or ``"containment_min"``.
    similarity_threshold : float
        In [0, 1]; compared as SetSimilaritySearch compares it.

    Attributes
    ----------
    similarity_threshold, similarity_func, overlap_threshold_func, overlap_index_threshold_func,
    position_filter_func
        As in SetSimilaritySearch (the functions from :mod:`allpairs.compat.utils`).
    order : dict
        Token -> rank in the frequency order (rarest 0).
    sets : list of numpy.ndarray
        Each set's sorted ranks, built when first read.
    index : collections.defaultdict
        Rank (numpy int64) -> ``[(set, position), ...]`` of the indexed prefixes, built when first read;
        the keys a query reads without finding are added, as SetSimilaritySearch's defaultdict adds them.
    """

    def __init__(self, sets, similarity_func_name="jaccard", similarity_threshold=0.5):
        check_arguments(sets, similarity_func_name, similarity_threshold)
        self.similarity_threshold = similarity_threshold
        self.similarity_func = _similarity_funcs[similarity_func_name]
        self.overlap_threshold_func = _overlap_threshold_funcs[similarity_func_name]
        self.overlap_index_threshold_func = _overlap_index_threshold_funcs[similarity_func_name]
        self.position_filter_func = _position_filter_funcs[similarity_func_name]
        _debug("Building SearchIndex on {} sets.", len(sets))
        _debug("Start frequency transform.")
        ranked = _frequency_order_transform(sets, _ranked=True)
        self.order = ranked.order
        _debug("Finish frequency transform, {} tokens in total.", len(self.order))
        _debug("Start indexing sets.")
        self._compile(ranked, similarity_func_name)
        self._setup_scratch()
        _debug("Finished indexing sets.")

    def _compile(self, ranked, similarity_func_name: str) -> None:
        """The arrays the kernel queries: the sets as CSR of ranks, their index prefixes and postings."""
        self._measure = similarity_func_name
        self._indptr, self._tokens = ranked.indptr, ranked.tokens
        self._index_prefix = prefix_lengths(np.diff(ranked.indptr), self.overlap_index_threshold_func,
                                            self.similarity_threshold)
        self._post_ptr, self._post_set, self._post_pos = postings_for_index(ranked, self._index_prefix)

    def _setup_scratch(self) -> None:
        n = len(self._indptr) - 1
        v = len(self._post_ptr) - 1
        self._lock = threading.Lock()
        self._stamp = np.zeros(n, np.int64)
        self._stamp_value = 0
        self._cand = np.empty(n, np.int64)
        self._cand_sim = np.empty(n, np.float64)
        self._cand_keep = np.empty(n, np.bool_)
        self._where = np.empty(n, np.int64)
        if not hasattr(self, "_touched"):
            self._touched = np.zeros(v, np.bool_)
            self._touched_list = np.empty(v, np.int64)
            self._n_touched = 0
        self._rules_for = None
        self._rules = None

    def __getattr__(self, name):
        # ``sets`` and ``index`` cost memory (an array per set, a tuple per posting): built when first read.
        if name == "sets":
            value = self._sets()
        elif name == "index":
            value = self._index()
        else:
            raise AttributeError("'{}' object has no attribute '{}'".format(type(self).__name__, name))
        self.__dict__[name] = value
        return value

    def __getstate__(self):
        state = dict(self.__dict__)
        for scratch in ("_lock", "_stamp", "_cand", "_cand_sim", "_cand_keep", "_where", "_rules", "_rules_for"):
            state.pop(scratch, None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if "_indptr" not in state:  # pickled by SetSimilaritySearch itself, read after install()
            self._compile_original()
        self._setup_scratch()

    def _compile_original(self) -> None:
        """Compile the state SetSimilaritySearch 1.0.1 pickles (its ``sets`` of ranks and ``order``; its
        ``index``, kept as it is) into the arrays the kernel queries, as :meth:`__init__` makes them."""
        from allpairs.compat.utils import _Ranked

        name = next((n for n, f in _similarity_funcs.items()
                     if f is self.similarity_func or getattr(self.similarity_func, "__name__", None) == f.__name__),
                    None)
        if name is None:
            raise ValueError("Similarity function {} is not supported.".format(self.similarity_func))
        sets = self.__dict__["sets"]
        indptr = np.zeros(len(sets) + 1, np.int64)
        np.cumsum(np.fromiter(map(len, sets), np.int64, len(sets)), out=indptr[1:])
        tokens = np.concatenate([np.asarray(x, np.int64) for x in sets] + [np.zeros(0, np.int64)]).astype(np.int32)
        self._compile(_Ranked(indptr, tokens, self.order), name)

    def _sets(self) -> list:
        from allpairs.compat.utils import _Ranked

        return _Ranked(self._indptr, self._tokens, self.order).arrays()

    def _index(self) -> defaultdict:
        index = defaultdict(list)
        # Keys in the order SetSimilaritySearch first inserts them: sets in order, prefix tokens in order.
        lengths = self._index_prefix
        before = np.cumsum(lengths) - lengths
        flat = np.repeat(self._indptr[:-1] - before, lengths) + np.arange(int(lengths.sum()))
        prefix_tokens = self._tokens[flat].astype(np.int64)
        _, first = np.unique(prefix_tokens, return_index=True)
        sets, positions = self._post_set.tolist(), self._post_pos.tolist()
        ptr = self._post_ptr.tolist()
        for w in prefix_tokens[np.sort(first)]:
            index[w] = list(zip(sets[ptr[w]:ptr[w + 1]], positions[ptr[w]:ptr[w + 1]]))
        for w in self._touched_list[: self._n_touched]:
            index[w]
        return index

    def _get_prefix_index(self, s):
        t = self.overlap_index_threshold_func(len(s), self.similarity_threshold)
        prefix_size = len(s) - t + 1
        return s[:prefix_size]

    def _get_prefix(self, s):
        t = self.overlap_threshold_func(len(s), self.similarity_threshold)
        prefix_size = len(s) - t + 1
        return s[:prefix_size]

    def _query_rules(self):
        """(probe prefix length by known-token count, position cut-off, verification cut-off) for the
        threshold in force (a new one assigned to ``similarity_threshold`` applies, as there)."""
        threshold = self.similarity_threshold
        if self._rules_for is not threshold:
            self._rules = ({}, *cutoffs(self._measure, threshold))
            self._rules_for = threshold
        return self._rules

    def query(self, s):
        """Query the index for sets similar to ``s``.

        Parameters
        ----------
        s : iterable
            The query set (``len(s)`` is taken: tokens the index has never seen
            count in it and match nothing).

        Returns
        -------
        list of tuple
            ``(index, similarity)`` in SetSimilaritySearch's order (its
            candidate set's iteration order): ``index`` an int into ``sets``,
            ``similarity`` a float (``numpy.float64`` for cosine).
        """
        l1 = len(s)
        known = np.fromiter(map(self.order.get, s, repeat(-1)), np.int64)
        s1 = np.sort(known[known >= 0])
        _debug("{} original tokens and {} tokens after applying frequency order.", len(s), len(s1))
        if len(s1) and s1[-1] >= len(self._post_ptr) - 1:
            return self._query_beyond_index(s1, l1)
        prefixes, position_cut, similarity_cut = self._query_rules()
        n1 = len(s1)
        prefix = prefixes.get(n1)
        if prefix is None:
            prefix = prefixes[n1] = int(prefix_lengths(np.array([n1]), self.overlap_threshold_func,
                                                       self.similarity_threshold)[0])
        with self._lock:
            self._stamp_value += 1
            before = self._n_touched
            found, self._n_touched = probe_query(
                s1, l1, prefix, self._indptr, self._tokens, self._post_ptr, self._post_set, self._post_pos,
                COMPAT_CODES[self._measure], position_cut, similarity_cut, self._stamp, self._stamp_value,
                self._cand, self._cand_sim, self._cand_keep, self._touched, self._touched_list, before)
            keep = self._cand_keep[:found]
            kept = int(np.count_nonzero(keep))
            if kept >= 2:
                pos = in_set_order(self._cand, 0, found, self._cand_keep, self._where)
            else:
                pos = np.flatnonzero(keep)
            ids = self._cand[pos].tolist()
            sims = self._cand_sim[pos]
            touched = self._touched_list[before:self._n_touched].copy() if self._n_touched > before else None
        _debug("{} candidates found.", found)
        if touched is not None and "index" in self.__dict__:
            index = self.__dict__["index"]
            for w in touched:
                index[w]
        results = list(zip(ids, sims if COMPAT_CODES[self._measure] == COSINE else sims.tolist()))
        _debug("{} verified sets found.", len(results))
        return results

    def _query_beyond_index(self, s1, l1):
        """``query`` when ``order`` gives a rank the compiled lists do not hold (a program added tokens to
        ``order``): the same steps in Python, over ``index`` and ``sets`` as they are now."""
        threshold, index, sets = self.similarity_threshold, self.index, self.sets
        hits = [i for p1, token in enumerate(self._get_prefix(s1)) for i, p2 in index[token]
                if self.position_filter_func(l1, len(sets[i]), p1, p2, threshold)]
        candidates = set(hits)
        _debug("{} candidates found.", len(candidates))
        results = []
        for i in candidates:
            sim = self.similarity_func(s1, sets[i], l1, len(sets[i]))
            if not sim < threshold:
                results.append((i, sim))
        _debug("{} verified sets found.", len(results))
        return results


if __name__ != "allpairs.compat.search":  # loaded as SetSimilaritySearch.search (see allpairs.compat)
    sys.modules[__name__] = importlib.import_module("allpairs.compat.search")
