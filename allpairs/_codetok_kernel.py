"""Compiled Go tokenizer for ``code:N``: token keys straight from UTF-8 bytes.

It scans each document exactly as ``codetokens.token_pattern("go").findall``
followed by ``_shingle_kernel.code_stream`` does (the regex path is the
definition; :mod:`allpairs.codetokens` documents the tokens), and hashes
each token where it lies with XXH64 (:func:`allpairs._hash_kernel.xxh64`),
so that no Python string is made per token.

Clean input assumed: ``buf`` is UTF-8 (uint8), document d at
``buf[doc_ptr[d]:doc_ptr[d + 1]]``, ``doc_ptr`` int64 non-decreasing.

A document is declined (``ok[d]`` False, no keys written) when a byte >= 0x80
stands outside a string, rune, raw string or comment: there Unicode letter
rules decide what an identifier is, which this kernel does not reproduce.
The caller tokenizes declined documents by the regex path.
"""
import numpy as np

from allpairs._hash_kernel import xxh64
from allpairs._numba import kernel

_SEED0 = np.uint64(0)

# Bytes.
_NL, _TAB, _CR, _SP = 10, 9, 13, 32
_DQUOTE, _SQUOTE, _BACKQUOTE, _BACKSLASH = 34, 39, 96, 92
_SLASH, _STAR, _DOT = 47, 42, 46

@kernel
def _is_letter(b):
    return (97 <= b <= 122) or (65 <= b <= 90) or b == 95


@kernel
def _is_digit(b):
    return 48 <= b <= 57


@kernel
def _is_hex(b):
    return (48 <= b <= 57) or (97 <= b <= 102) or (65 <= b <= 70) or b == 95


@kernel
def _digits_end(buf, p, end, hexa):
    """End of the run of ``[0-9_]`` (or ``[0-9a-fA-F_]`` when ``hexa``) from ``p``."""
    while p < end:
        b = buf[p]
        if (hexa and _is_hex(b)) or (not hexa and (_is_digit(b) or b == 95)):
            p += 1
        else:
            break
    return p


@kernel
def _number_end(buf, p, end):
    """End of the number literal at ``p`` (a digit, or '.' before a digit): the regex's number branch."""
    b = buf[p]
    if b == _DOT:
        q = _digits_end(buf, p + 2, end, False)
    else:
        hexa = False
        if b == 48 and p + 1 < end and (buf[p + 1] == 120 or buf[p + 1] == 88):  # 0x 0X
            hexa = True
            q = _digits_end(buf, p + 2, end, True)
        elif b == 48 and p + 1 < end and (buf[p + 1] == 111 or buf[p + 1] == 79 or buf[p + 1] == 98 or buf[p + 1] == 66):  # 0o 0O 0b 0B
            q = _digits_end(buf, p + 2, end, False)
        else:
            q = _digits_end(buf, p + 1, end, False)
        if q < end and buf[q] == _DOT:
            q = _digits_end(buf, q + 1, end, hexa)
    if q < end and (buf[q] == 101 or buf[q] == 69 or buf[q] == 112 or buf[q] == 80):  # e E p P
        q += 1
        if q < end and (buf[q] == 43 or buf[q] == 45):
            q += 1
        q = _digits_end(buf, q, end, False)
    if q < end and buf[q] == 105:  # i
        q += 1
    return q


@kernel
def _quoted_end(buf, p, end, quote):
    """End of the string or rune opening at ``p``: at its quote, or before a newline or the end."""
    q = p + 1
    while q < end:
        b = buf[q]
        if b == quote:
            return q + 1
        if b == _NL:
            return q
        q += 1
        if b == _BACKSLASH and q < end and buf[q] != _NL:
            q += 1  # the escaped character (its continuation bytes follow as content)
    return q


@kernel
def _is_plain_keyword(buf, p, q, kw_bytes, kw_ptr):
    """Whether ``buf[p:q]`` is a keyword after which no semicolon is inserted."""
    size = q - p
    for w in range(kw_ptr.shape[0] - 1):
        a = kw_ptr[w]
        if kw_ptr[w + 1] - a != size:
            continue
        same = True
        for k in range(size):
            if buf[p + k] != kw_bytes[a + k]:
                same = False
                break
        if same:
            return True
    return False


@kernel
def _raw_key(buf, p, q):
    """XXH64 of the raw string ``buf[p:q]`` with its carriage returns removed (Go drops them)."""
    has_cr = False
    for k in range(p, q):
        if buf[k] == _CR:
            has_cr = True
            break
    if not has_cr:
        return xxh64(buf, p, q, _SEED0)
    tmp = np.empty(q - p, np.uint8)
    m = 0
    for k in range(p, q):
        if buf[k] != _CR:
            tmp[m] = buf[k]
            m += 1
    return xxh64(tmp, 0, m, _SEED0)


@kernel
def _op_size(buf, p, end, ops3, ops2, ops1):
    """Length of the longest Go operator at ``p`` (0 if none)."""
    if p + 2 < end:
        for r in range(ops3.shape[0]):
            if buf[p] == ops3[r, 0] and buf[p + 1] == ops3[r, 1] and buf[p + 2] == ops3[r, 2]:
                return 3
    if p + 1 < end:
        for r in range(ops2.shape[0]):
            if buf[p] == ops2[r, 0] and buf[p + 1] == ops2[r, 1]:
                return 2
    b = buf[p]
    if b < 128 and ops1[b]:
        return 1
    return 0


@kernel
def go_token_keys(buf, doc_ptr, semi_key, kw_bytes, kw_ptr, ops3, ops2, ops1, semi1):
    """Keys of the Go tokens of every document, automatic semicolons included, comments dropped.

    ``semi_key`` is the key of ``";"``; ``kw_bytes``/``kw_ptr`` spell the
    keywords after which a line end inserts nothing (CSR of uint8), ``ops3``
    and ``ops2`` (uint8, one operator a row) are the 3- and 2-character
    operators, ``ops1`` and ``semi1`` (bool by ASCII byte) the 1-character
    ones and those of them after which a line end inserts ``;``.  Returns
    ``(indptr, keys, ok)``: int64 CSR offsets, uint64 token keys, and a bool
    per document, False where it was declined (then it has no keys here).
    """
    n_docs = doc_ptr.shape[0] - 1
    out = np.empty(doc_ptr[n_docs] - doc_ptr[0] + n_docs, np.uint64)
    indptr = np.zeros(n_docs + 1, np.int64)
    ok = np.ones(n_docs, np.bool_)
    k = 0
    for d in range(n_docs):
        p = doc_ptr[d]
        end = doc_ptr[d + 1]
        k_doc = k
        pending = False  # the last token lets a line end insert a semicolon
        while True:
            while p < end and (buf[p] == _SP or buf[p] == _TAB or buf[p] == _CR):
                p += 1
            if p >= end:
                break
            b = buf[p]
            nxt = buf[p + 1] if p + 1 < end else 0
            if b >= 128:
                ok[d] = False
                break
            if b == _SLASH and nxt == _SLASH:  # line comment, up to the newline
                p += 2
                while p < end and buf[p] != _NL:
                    p += 1
                continue
            if _is_letter(b):
                q = p + 1
                while q < end and (_is_letter(buf[q]) or _is_digit(buf[q])):
                    q += 1
                if q < end and buf[q] >= 128:
                    ok[d] = False
                    break
                out[k] = xxh64(buf, p, q, _SEED0)
                k += 1
                pending = not _is_plain_keyword(buf, p, q, kw_bytes, kw_ptr)
                p = q
            elif b == _NL:
                p += 1
                if pending:
                    out[k] = semi_key
                    k += 1
                    pending = False
            elif _is_digit(b) or (b == _DOT and _is_digit(nxt)):
                q = _number_end(buf, p, end)
                out[k] = xxh64(buf, p, q, _SEED0)
                k += 1
                pending = True
                p = q
            elif b == _SLASH and nxt == _STAR:  # block comment; a line end if it spans lines
                q = p + 2
                spans = False
                while q < end and not (buf[q] == _STAR and q + 1 < end and buf[q + 1] == _SLASH):
                    if buf[q] == _NL:
                        spans = True
                    q += 1
                p = min(q + 2, end)
                if spans and pending:
                    out[k] = semi_key
                    k += 1
                    pending = False
            elif b == _BACKQUOTE:
                q = p + 1
                while q < end and buf[q] != _BACKQUOTE:
                    q += 1
                q = min(q + 1, end)
                out[k] = _raw_key(buf, p, q)
                k += 1
                pending = True
                p = q
            elif b == _DQUOTE or b == _SQUOTE:
                q = _quoted_end(buf, p, end, b)
                out[k] = xxh64(buf, p, q, _SEED0)
                k += 1
                pending = True
                p = q
            else:
                size = _op_size(buf, p, end, ops3, ops2, ops1)
                if size == 0:
                    p += 1  # a character that starts no token is skipped
                    continue
                out[k] = xxh64(buf, p, p + size, _SEED0)
                k += 1
                if size == 2:
                    pending = (b == 43 and nxt == 43) or (b == 45 and nxt == 45)  # ++ --
                else:
                    pending = size == 1 and semi1[b]
                p += size
        if not ok[d]:
            k = k_doc
        elif pending:  # the end of the file is a line end too
            out[k] = semi_key
            k += 1
        indptr[d + 1] = k
    return indptr, out[:k].copy(), ok
