"""Compiled kernels of stage (2): token streams to shingle keys.

Arrays and scalars only; documents travel as CSR (``indptr`` int64 of length
``n_docs + 1`` over a flat array).  All hashing is uint64 arithmetic that
wraps modulo 2**64.

Text arrives as UTF-8 bytes (a uint8 array; lone surrogates passed through
as their 3-byte form) with int64 byte offsets per document, and tokens are
hashed where they lie, with no Python object per token.

Keys (the definition that :mod:`allpairs.shingles.keys` documents, key version 2):

* the key of a token (a word, a character, a ``--sets`` token) is XXH64 with
  seed 0 of its UTF-8 bytes, :func:`allpairs.shingles._hash_kernel.xxh64`;
* the key of an n-gram with token keys ``k_1 .. k_n`` under a seed ``s``
  is ``h_n`` where ``h_0 = s`` and ``h_i = mix(h_{i-1} * GOLDEN + k_i)``,
  ``mix`` being the splitmix64 finaliser :func:`allpairs._kernels.mix.mix64`.
"""
import numpy as np

from allpairs.shingles._hash_kernel import xxh64
from allpairs._kernels.mix import GOLDEN
from allpairs._kernels.mix import mix64 as _mix
from allpairs._kernels.jit import kernel

_SEED0 = np.uint64(0)

# Token classes, as in allpairs.shingles.codetokens (PLAIN, SEMI_AFTER, LINE_END, DROP).
_PLAIN = 0
_SEMI_AFTER = 1
_LINE_END = 2


@kernel
def _utf8_at(buf, p):
    """Code point and length in bytes of the UTF-8 sequence at ``buf[p]`` (assumed well formed)."""
    b0 = np.int64(buf[p])
    if b0 < 0x80:
        return b0, 1
    if b0 < 0xE0:
        return ((b0 & 0x1F) << 6) | (np.int64(buf[p + 1]) & 0x3F), 2
    if b0 < 0xF0:
        return ((b0 & 0x0F) << 12) | ((np.int64(buf[p + 1]) & 0x3F) << 6) | (np.int64(buf[p + 2]) & 0x3F), 3
    return (((b0 & 0x07) << 18) | ((np.int64(buf[p + 1]) & 0x3F) << 12)
            | ((np.int64(buf[p + 2]) & 0x3F) << 6) | (np.int64(buf[p + 3]) & 0x3F)), 4


@kernel(wraps=True)
def char_keys(buf, doc_ptr, ascii_keys):
    """Key of every character of every document: XXH64 of its UTF-8 bytes.

    ``buf`` is UTF-8, document d at ``buf[doc_ptr[d]:doc_ptr[d + 1]]``;
    ``ascii_keys[c]`` is the key of ASCII character c (precomputed).
    Returns ``(indptr, keys)``: int64 characters per document as CSR offsets, uint64 keys.
    """
    n_docs = doc_ptr.shape[0] - 1
    out = np.empty(doc_ptr[n_docs] - doc_ptr[0], np.uint64)
    indptr = np.zeros(n_docs + 1, np.int64)
    k = 0
    for d in range(n_docs):
        p = doc_ptr[d]
        end = doc_ptr[d + 1]
        while p < end:
            b0 = buf[p]
            if b0 < 0x80:
                out[k] = ascii_keys[b0]
                p += 1
            else:
                cp, size = _utf8_at(buf, p)
                out[k] = xxh64(buf, p, p + size, _SEED0)
                p += size
            k += 1
        indptr[d + 1] = k
    return indptr, out[:k].copy()


@kernel(wraps=True)
def token_keys_into(buf, ptr, is_token, out, k0):
    """Key of every token (maximal run of code points c with ``is_token[c]``) of every document, into ``out``.

    ``buf`` is UTF-8, document d at ``buf[ptr[d]:ptr[d + 1]]``; ``is_token`` is a bool table over
    all code points; ``out`` (uint64) has room from ``k0`` for every token (at most
    ``(bytes + 1) // 2`` a document). Returns the int64 offsets into ``out`` of each
    document's keys (``n_docs + 1``, starting at ``k0``).
    """
    n_docs = ptr.shape[0] - 1
    indptr = np.empty(n_docs + 1, np.int64)
    indptr[0] = k0
    k = k0
    for d in range(n_docs):
        p = ptr[d]
        end = ptr[d + 1]
        start = -1  # start of the token being read, -1 between tokens
        while p < end:
            cp, size = _utf8_at(buf, p)
            if is_token[cp]:
                if start < 0:
                    start = p
            elif start >= 0:
                out[k] = xxh64(buf, start, p, _SEED0)
                k += 1
                start = -1
            p += size
        if start >= 0:
            out[k] = xxh64(buf, start, end, _SEED0)
            k += 1
        indptr[d + 1] = k
    return indptr


#: The most decimal digits an integer token may have to be keyed by its value (10**18 < 2**63).
INT_DIGITS = 18
_ZERO_CHAR = np.uint64(48)
_TEN = np.uint64(10)


@kernel(wraps=True)
def join_token_keys_into(buf, ptr, is_token, out, k0):
    """:func:`token_keys_into` with keys private to one exact join: a token that is a whole number as
    ``str()`` writes it (ASCII digits, no leading zero, at most :data:`INT_DIGITS`) is keyed by
    ``mix64(value + GOLDEN)``, any other token by its XXH64 key, as ever.

    One function of the token, so equal tokens get equal keys and distinct tokens distinct keys (up to a
    64-bit collision, as between any two XXH64 keys), which is all an exact join asks of them; the digits
    are read once, without XXH64's call and rounds (~95 instructions a token of Kosarak's). The keys are
    not the shingle keys (key version 2): nothing that shows or keeps keys may take them.

    ``is_token`` may stop short of the last code point: every code point past its end is a token's.
    """
    n_docs = ptr.shape[0] - 1
    indptr = np.empty(n_docs + 1, np.int64)
    indptr[0] = k0
    k = k0
    for d in range(n_docs):
        k = _join_keys_of_document(buf, ptr[d], ptr[d + 1], is_token, out, k)
        indptr[d + 1] = k
    return indptr


@kernel(wraps=True)
def _join_keys_of_document(buf, p, end, is_token, out, k):
    """:func:`join_token_keys_into` of the document at ``buf[p:end]``, its keys from ``out[k]``; the next
    ``k``. Bytes are read at unsigned indexes (no test for a negative index at each)."""
    n_table = is_token.shape[0]
    while p < end:
        c = buf[np.uint64(p)]
        if c < 0x80:  # ASCII, the usual case: no decoding
            if c < n_table and not is_token[c]:
                p += 1
                continue
        else:
            cp, size = _utf8_at(buf, p)
            if cp < n_table and not is_token[cp]:
                p += size
                continue
        start = p
        v = np.uint64(0)
        while p < end:  # the leading digits
            digit = np.uint64(buf[np.uint64(p)]) - _ZERO_CHAR  # wraps past 9 for a byte below '0'
            if digit >= _TEN:
                break
            v = v * _TEN + digit
            p += 1
        digits = p - start
        whole = digits > 0
        while p < end:  # the rest of the token, if any
            cp, size = _utf8_at(buf, p)
            if cp < n_table and not is_token[cp]:
                break
            whole = False
            p += size
        if whole and digits <= INT_DIGITS and (digits == 1 or buf[np.uint64(start)] != _ZERO_CHAR):
            out[np.uint64(k)] = _mix(v + GOLDEN)
        else:
            out[np.uint64(k)] = xxh64(buf, start, p, _SEED0)
        k += 1
    return k


@kernel
def token_keys(buf, ptr, is_token):
    """:func:`token_keys_into` a new array: ``(indptr, keys)`` as CSR (int64 offsets from 0, uint64 keys)."""
    n_docs = ptr.shape[0] - 1
    out = np.empty((ptr[n_docs] - ptr[0] + n_docs) // 2 + n_docs + 1, np.uint64)
    indptr = token_keys_into(buf, ptr, is_token, out, 0)
    return indptr, out[: indptr[n_docs]].copy()


@kernel
def _keep(h, table, mask, mark):
    """False if ``h`` is in ``table`` under ``mark`` already, else put it there and True (see ngram_keys_into)."""
    s = np.int64(h & np.uint64(mask))  # mix64's low bits are as uniform as any
    while table[2 * s + 1] == mark:
        if table[2 * s] == h:
            return False
        s = (s + 1) & mask
    table[2 * s] = h
    table[2 * s + 1] = mark
    return True


@kernel
def _emit(h, out, k, distinct, table, mask, mark):
    """Write n-gram key ``h`` at ``out[k]`` unless ``distinct`` and met already; returns the next ``k``."""
    if distinct and not _keep(h, table, mask, mark):
        return k
    out[k] = h
    return k + 1


@kernel(wraps=True)
def ngram_keys_into(indptr, keys, n, seed, distinct, whole, out, k0, table, d0):
    """Keys of the n-grams of every document, written to ``out`` from ``k0``; with ``whole``, a document of
    1 to n - 1 tokens gets one key, the chain over all its tokens (the same recurrence, stopped early), else none.

    Clean input: ``n >= 1``, ``table`` sized as below. The w-shingling of Broder (1997), and of
    Leskovec, Rajaraman, Ullman, *Mining of Massive Datasets*, ch. 3.2.
    ``keys`` (uint64) holds the token keys of all documents back to back,
    document d at ``keys[indptr[d]:indptr[d + 1]]``; ``out`` (uint64) has room
    for every n-gram and one key per short document.  Returns the int64 number of keys
    written per document, in document order, n-grams in text order within a
    document.  With ``distinct``, a key already met in the same document is
    left out, found by an open-addressing table (uint64, twice as long as
    its slots, a power of two at least twice the most n-grams of a document
    and at least 16): a key and its document's mark side by side, the mark
    of document d being ``d0 + d + 1``, so that calls with disjoint ranges
    of marks (``d0`` >= 0) share a table that is never cleared.
    """
    n_docs = indptr.shape[0] - 1
    counts = np.zeros(n_docs, np.int64)
    slots = table.shape[0] // 2
    k = k0
    for d in range(n_docs):
        start = indptr[d]
        m = indptr[d + 1] - start - n + 1
        # The smallest power of two at least 2 m: at most half full.
        mask = slots
        while mask > 16 and mask >= 4 * m:
            mask >>= 1
        mask -= 1
        mark = np.uint64(d0 + d + 1)
        k_doc = k
        i = 0
        # h_0 = seed; h_j = mix(h_{j-1} * GOLDEN + key_j) over the n tokens; four
        # n-grams at a time, whose chains of multiplications overlap in the CPU.
        while i + 4 <= m:
            h0 = seed
            h1 = seed
            h2 = seed
            h3 = seed
            p = start + i
            for j in range(n):
                h0 = _mix(h0 * GOLDEN + keys[p + j])
                h1 = _mix(h1 * GOLDEN + keys[p + 1 + j])
                h2 = _mix(h2 * GOLDEN + keys[p + 2 + j])
                h3 = _mix(h3 * GOLDEN + keys[p + 3 + j])
            k = _emit(h0, out, k, distinct, table, mask, mark)
            k = _emit(h1, out, k, distinct, table, mask, mark)
            k = _emit(h2, out, k, distinct, table, mask, mark)
            k = _emit(h3, out, k, distinct, table, mask, mark)
            i += 4
        while i < m:
            h = seed
            for j in range(n):
                h = _mix(h * GOLDEN + keys[start + i + j])
            k = _emit(h, out, k, distinct, table, mask, mark)
            i += 1
        if whole and m <= 0 and indptr[d + 1] > start:
            # Shorter than one shingle: the whole token sequence is its one shingle, so that it
            # still pairs with its copies (a chain of fewer than n steps is no n-gram's key).
            h = seed
            for p in range(start, indptr[d + 1]):
                h = _mix(h * GOLDEN + keys[p])
            out[k] = h
            k += 1
        counts[d] = k - k_doc
    return counts


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


@kernel
def hex_lines(indptr, keys):
    """Each document's distinct keys, ascending, as 16 lowercase hex digits, space-separated, one line each.

    ``keys`` (uint64) in CSR by ``indptr`` (int64); returns the ASCII bytes (uint8) of all lines.
    """
    n_docs = indptr.shape[0] - 1
    base = indptr[0]
    work = keys[base:indptr[n_docs]].copy()
    size = 0
    for d in range(n_docs):
        a = indptr[d] - base
        b = indptr[d + 1] - base
        work[a:b] = np.sort(work[a:b])
        for t in range(a, b):
            if t == a or work[t] != work[t - 1]:
                size += 17  # 16 digits and a space (the last one a line end)
        if b == a:
            size += 1  # an empty line
    out = np.empty(size, np.uint8)
    p = 0
    for d in range(n_docs):
        a = indptr[d] - base
        b = indptr[d + 1] - base
        first = True
        for t in range(a, b):
            if t > a and work[t] == work[t - 1]:
                continue
            if not first:
                out[p] = 32
                p += 1
            first = False
            v = work[t]
            for k in range(15, -1, -1):
                digit = np.int64(v & np.uint64(15))
                out[p + k] = 48 + digit if digit < 10 else 87 + digit
                v = v >> np.uint64(4)
            p += 16
        out[p] = 10
        p += 1
    return out
