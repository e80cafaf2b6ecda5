"""Compiled kernels of stage (2): token streams to shingle keys.

Arrays and scalars only; documents travel as CSR (``indptr`` int64 of length
``n_docs + 1`` over a flat array).  All hashing is uint64 arithmetic that
wraps modulo 2**64.

Mixing (the definition that :mod:`allpairs.shingles` documents):

* ``mix(z)`` is the finaliser of splitmix64, :func:`allpairs._mix.mix64`;

* the key of a character is ``mix(code_point + GOLDEN)``, i.e. the first
  output of splitmix64 seeded with the code point;
* the key of an n-gram with token keys ``k_1 .. k_n`` under a seed ``s``
  is ``h_n`` where ``h_0 = s`` and ``h_i = mix(h_{i-1} * GOLDEN + k_i)``.
"""
import numpy as np

from allpairs._mix import GOLDEN
from allpairs._mix import mix64 as _mix
from allpairs._numba import kernel

# Token classes, as in allpairs.codetokens (PLAIN, SEMI_AFTER, LINE_END, DROP).
_PLAIN = 0
_SEMI_AFTER = 1
_LINE_END = 2


@kernel
def char_keys(code_points):
    """Key of each character: ``mix(code_point + GOLDEN)``; uint32 in, uint64 out."""
    out = np.empty(code_points.shape[0], np.uint64)
    for i in range(code_points.shape[0]):
        out[i] = _mix(np.uint64(code_points[i]) + GOLDEN)
    return out


@kernel
def ngram_keys(indptr, keys, n, seed):
    """Keys of the n-grams of every document; a document shorter than n has none.

    ``keys`` (uint64) holds the token keys of all documents back to back,
    document d at ``keys[indptr[d]:indptr[d + 1]]``; ``n >= 1``.  Returns
    ``(counts, out)``: int64 shingles per document and the uint64 shingle
    keys in document order, n-grams in text order within a document.
    """
    n_docs = indptr.shape[0] - 1
    counts = np.zeros(n_docs, np.int64)
    total = 0
    for d in range(n_docs):
        m = indptr[d + 1] - indptr[d] - n + 1
        if m > 0:
            counts[d] = m
            total += m
    out = np.empty(total, np.uint64)
    k = 0
    for d in range(n_docs):
        start = indptr[d]
        for i in range(counts[d]):
            # h_0 = seed; h_j = mix(h_{j-1} * GOLDEN + key_j) over the n tokens.
            h = seed
            for j in range(n):
                h = _mix(h * GOLDEN + keys[start + i + j])
            out[k] = h
            k += 1
    return counts, out


@kernel
def code_stream(indptr, ids, classes, semicolon, insert_semicolons):
    """Drop comments and, for Go, insert automatic semicolons; int32 ids in and out.

    ``ids`` are vocabulary ids of what the tokenizer regex matched, document d
    at ``ids[indptr[d]:indptr[d + 1]]``; ``classes[id]`` is the token class
    (PLAIN, SEMI_AFTER, LINE_END or DROP); ``semicolon`` is the id of ``";"``.
    Returns ``(out_indptr, out_ids)`` of the tokens proper.
    """
    n_docs = indptr.shape[0] - 1
    out = np.empty(ids.shape[0] + n_docs, np.int32)
    out_indptr = np.zeros(n_docs + 1, np.int64)
    k = 0
    for d in range(n_docs):
        # pending: the last token lets a line end insert a semicolon (Go spec).
        pending = False
        for p in range(indptr[d], indptr[d + 1]):
            t = ids[p]
            c = classes[t]
            if c == _PLAIN:
                out[k] = t
                k += 1
                pending = False
            elif c == _SEMI_AFTER:
                out[k] = t
                k += 1
                pending = insert_semicolons
            elif c == _LINE_END:
                if pending:
                    out[k] = semicolon
                    k += 1
                    pending = False
            # DROP: a comment, no effect
        # The end of the file is a line end too.
        if pending:
            out[k] = semicolon
            k += 1
        out_indptr[d + 1] = k
    return out_indptr, out[:k].copy()
