"""Compiled kernels of :mod:`allpairs.compat`: SetSimilaritySearch 1.0.1's prefix and position filters, step for step.

The algorithm is All-Pairs-Binary with a position filter (Bayardo, Ma,
Srikant, "Scaling up all pairs similarity search", WWW 2007; positions as in
Xiao, Wang, Lin, Yu, WWW 2008) as SetSimilaritySearch 1.0.1 writes it: its
prefix lengths (given here as arrays, computed in Python by its own
arithmetic), its position test ``min(l1 - p1, l2 - p2) / max(l1, l2) >= t``
(cosine: ``/ sqrt(max)``, containment: ``/ l1``) and its verification,
``numpy.intersect1d(s1, s2, assume_unique=True)``, whose length is
``len(s1) + len(s2) - |distinct(s1 ∪ s2)|`` when a list repeats a token.
The kernels report each probe's candidates in the order of their first
appearance in its candidate list; :mod:`allpairs.compat._engine` puts them in
the iteration order of the Python ``set`` that SetSimilaritySearch builds.

A threshold ``t`` arrives as two float64 cut-offs: the least value ``q`` of
the type SetSimilaritySearch compares (Python float or numpy.float64) for
which its comparison with ``t`` passes; so ``q >= cut`` here decides as its
comparison does, whatever the type of ``t``.

Measures: 0 jaccard, 1 cosine, 2 containment, 3 containment_min.
"""
import math

import numpy as np

from .._kernels.jit import kernel


@kernel
def build_postings(indptr, tokens, sets_in_order, prefix_len, num_tokens):
    """Inverted lists of each set's first ``prefix_len`` tokens, sets entering in ``sets_in_order``.

    Clean input assumed: tokens within [0, num_tokens), each row sorted,
    ``prefix_len[s]`` within [0, |s|]. Returns ``post_ptr`` (int64,
    num_tokens + 1) and per posting the set and the token's position in it
    (int32): a list holds its postings in the order the sets entered, a
    repeated token once per occurrence, as SetSimilaritySearch appends them.
    """
    counts = np.zeros(num_tokens + 1, np.int64)
    for k in range(sets_in_order.shape[0]):
        s = sets_in_order[k]
        a = indptr[s]
        for j in range(prefix_len[s]):
            counts[tokens[a + j] + 1] += 1
    post_ptr = np.cumsum(counts)
    fill = post_ptr[:-1].copy()
    post_set = np.empty(post_ptr[-1], np.int32)
    post_pos = np.empty(post_ptr[-1], np.int32)
    for k in range(sets_in_order.shape[0]):
        s = sets_in_order[k]
        a = indptr[s]
        for j in range(prefix_len[s]):
            w = tokens[a + j]
            post_set[fill[w]] = s
            post_pos[fill[w]] = j
            fill[w] += 1
    return post_ptr, post_set, post_pos


@kernel
def position_passes(measure, l1, l2, p1, p2, cut):
    """SetSimilaritySearch's position filter at a match of ``s1[p1]`` and ``s2[p2]`` (lengths l1, l2 > 0)."""
    num = float(min(l1 - p1, l2 - p2))
    if measure == 1:
        q = num / math.sqrt(float(max(l1, l2)))
    elif measure == 2:
        q = num / float(l1)
    else:
        q = num / float(max(l1, l2))
    return q >= cut


@kernel
def similarity(measure, i, l1, l2):
    """SetSimilaritySearch's similarity from its overlap count ``i`` and lengths ``l1``, ``l2`` (float64)."""
    if measure == 0:
        return float(i) / float(l1 + l2 - i)
    if measure == 1:
        return float(i) / math.sqrt(float(l1 * l2))
    if measure == 2:
        return float(i) / float(l1)
    return float(i) / float(max(l1, l2))


@kernel
def intersect_count(a_tokens, a0, a1, b_tokens, b0, b1):
    """``len(numpy.intersect1d(a, b, assume_unique=True))`` of two sorted rows that may repeat tokens.

    Clean input assumed: both rows sorted ascending. Equals
    ``len(a) + len(b) - |distinct(a ∪ b)|``: adjacent equal pairs of the
    sorted concatenation.
    """
    distinct = 0
    i = a0
    j = b0
    while i < a1 or j < b1:
        if j >= b1 or (i < a1 and a_tokens[i] < b_tokens[j]):
            v = a_tokens[i]
        else:
            v = b_tokens[j]
        while i < a1 and a_tokens[i] == v:
            i += 1
        while j < b1 and b_tokens[j] == v:
            j += 1
        distinct += 1
    return (a1 - a0) + (b1 - b0) - distinct


@kernel
def probe_all_pairs(indptr, tokens, perm, prefix_len, post_ptr, post_set, post_pos, filled, stamp,
                    measure, position_cut, similarity_cut, step, budget, cand, cand_sim, cand_keep, probe_end):
    """SetSimilaritySearch's ``all_pairs`` loop from probe ``step`` on, until ``budget`` candidates are out.

    Clean input assumed: rows sorted; ``perm`` the order of
    ``numpy.argsort(lengths)``; postings built from ``perm`` by
    :func:`build_postings` with ``prefix_len``; ``filled[w]`` the postings of
    token ``w`` inserted so far; ``stamp`` zero or below ``step + 1`` for
    every set; ``cand`` room for ``budget + len(perm)`` candidates. Probe ``k``
    (set ``perm[k]``) reads the postings of its prefix tokens inserted by the
    probes before it, keeps a set when the position filter passes for one of
    its postings (first appearance order), verifies each (its similarity and
    whether it is kept), then inserts its own prefix. ``probe_end[k - step]``
    is the end of probe ``k``'s candidates. Returns the next probe to run.
    """
    n = perm.shape[0]
    out = 0
    k = step
    while k < n and out < budget:
        x1 = perm[k]
        a = indptr[x1]
        l1 = indptr[x1 + 1] - a
        pl = prefix_len[x1]
        begin = out
        for p1 in range(pl):
            w = tokens[a + p1]
            e0 = post_ptr[w]
            for e in range(e0, e0 + filled[w]):
                x2 = post_set[e]
                if stamp[x2] == k + 1:
                    continue
                b = indptr[x2]
                if position_passes(measure, l1, indptr[x2 + 1] - b, p1, post_pos[e], position_cut):
                    stamp[x2] = k + 1
                    cand[out] = x2
                    out += 1
        for c in range(begin, out):
            x2 = cand[c]
            b = indptr[x2]
            l2 = indptr[x2 + 1] - b
            sim = similarity(measure, intersect_count(tokens, a, a + l1, tokens, b, b + l2), l1, l2)
            cand_sim[c] = sim
            cand_keep[c] = sim >= similarity_cut
        for p1 in range(pl):
            filled[tokens[a + p1]] += 1
        probe_end[k - step] = out
        k += 1
    return k


@kernel
def probe_query(query, query_len, prefix, indptr, tokens, post_ptr, post_set, post_pos, measure,
                position_cut, similarity_cut, stamp, stamp_value, cand, cand_sim, cand_keep,
                touched, touched_list, n_touched):
    """SetSimilaritySearch's ``SearchIndex.query`` of one set, its candidates in first appearance order.

    Clean input assumed: ``query`` the sorted ranks of the query's known
    tokens, ``query_len`` the query's own length (unknown tokens and repeats
    counted), ``prefix`` within [0, len(query)]; ``stamp`` below
    ``stamp_value`` for every set; ``cand`` room for every set. A token of
    the prefix without postings is noted once in ``touched``/``touched_list``
    (SetSimilaritySearch's ``index`` is a defaultdict: reading it adds the
    key). Returns (candidates, notes in ``touched_list``).
    """
    out = 0
    qn = query.shape[0]
    for p1 in range(prefix):
        w = query[p1]
        e0 = post_ptr[w]
        e1 = post_ptr[w + 1]
        if e0 == e1 and not touched[w]:
            touched[w] = True
            touched_list[n_touched] = w
            n_touched += 1
        for e in range(e0, e1):
            x2 = post_set[e]
            if stamp[x2] == stamp_value:
                continue
            if position_passes(measure, query_len, indptr[x2 + 1] - indptr[x2], p1, post_pos[e], position_cut):
                stamp[x2] = stamp_value
                cand[out] = x2
                out += 1
    for c in range(out):
        x2 = cand[c]
        b = indptr[x2]
        l2 = indptr[x2 + 1] - b
        sim = similarity(measure, intersect_count(query, 0, qn, tokens, b, b + l2), query_len, l2)
        cand_sim[c] = sim
        cand_keep[c] = sim >= similarity_cut
    return out, n_touched
