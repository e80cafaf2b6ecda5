"""The LSH path's sets of raw keys (no rank order) against the ranked sets of the exact path."""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allpairs._kernels.csr import distinct_sorted_rows
from allpairs.pipeline import LSHInfo, Stats, lsh_pairs
from allpairs.lsh.keysets import KeyedSets, keyed_sets
from allpairs.measures import Threshold
from allpairs.order import order_sets
from strategies import corpora, corpus_and_threshold


def csr(sets):
    indptr = np.zeros(len(sets) + 1, np.int64)
    indptr[1:] = np.cumsum([len(s) for s in sets])
    # Keys far apart and out of order, so that key order and rank order differ.
    keys = np.array([(t * 0x9E3779B97F4A7C15) % 2**64 for s in sets for t in s], np.uint64)
    return indptr, keys


def groups(sets):
    """Each distinct set as (its keys, its documents)."""
    keys_of = sets.set_keys()
    return sorted((tuple(sorted(keys_of[1][keys_of[0][k]:keys_of[0][k + 1]].tolist())),
                   tuple(sets.group_docs[sets.group_indptr[k]:sets.group_indptr[k + 1]].tolist()))
                  for k in range(sets.num_sets))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpora(), st.integers(1, 3), st.sampled_from([1, 2, 3]))
def test_keyed_sets_group_the_documents_as_the_ranked_sets_do(sets, min_size, jobs):
    # jobs > 1: rows sorted in blocks on threads, distinct keys counted beside the grouping.
    indptr, keys = csr(sets)
    ranked, keyed = order_sets(indptr, keys, min_size=min_size), keyed_sets(indptr, keys, min_size=min_size, jobs=jobs)
    assert isinstance(keyed, KeyedSets)
    assert groups(keyed) == groups(ranked)
    assert keyed.doc_size.tolist() == ranked.doc_size.tolist()
    assert (keyed.doc_set >= 0).tolist() == (ranked.doc_set >= 0).tolist()
    assert keyed.num_tokens == ranked.num_tokens and keyed.total_shingles == ranked.total_shingles
    # Rows already sorted, repeats dropped (as hash_sets(..., sorted_rows=True) gives them): the same sets.
    presorted = keyed_sets(*distinct_sorted_rows(indptr, keys), min_size=min_size, jobs=jobs)
    assert groups(presorted) == groups(keyed) and presorted.num_tokens == keyed.num_tokens
    assert presorted.doc_set.tolist() == keyed.doc_set.tolist()
    sizes = np.diff(keyed.indptr)
    assert (np.diff(sizes) >= 0).all()
    assert all((np.diff(keyed.tokens[a:b].astype(np.float64)) > 0).all()
               for a, b in zip(keyed.indptr[:-1], keyed.indptr[1:]))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpus_and_threshold(), st.sampled_from([None, 1, 2]))
def test_lsh_pairs_are_the_same_from_keyed_and_ranked_sets(case, max_expand):
    # max_expand 1 or 2 joins the buckets exactly: keyed sets are ranked among themselves for that.
    sets, t = case
    if not sets:
        return
    indptr, keys = csr(sets)
    t = Threshold(t.numerator, t.denominator)
    found = []
    for make in (order_sets, keyed_sets):
        info = LSHInfo(num_perm=8, bands=4, rows=2, seed=3, bits=None, auto=False, recall=0.99, max_bucket=None,
                       max_expand=max_expand)
        pairs, _ = lsh_pairs(make(indptr, keys), t, info, verify="exact", jobs=2, stats=Stats())
        found.append([tuple(p) for p in pairs])
    assert found[0] == found[1]
