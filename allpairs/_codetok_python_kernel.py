"""Compiled Python tokenizer for ``code:N``: token keys straight from UTF-8 bytes.

It scans each document exactly as ``codetokens.token_pattern("python").findall``
does, comments dropped (the regex is the definition: its branches are tried
here in the same order and with the same extents; :mod:`allpairs.codetokens`
documents the tokens), and hashes each token where it lies with XXH64
(:func:`allpairs._hash_kernel.xxh64`), so that no Python string is made per
token.

Clean input assumed: ``buf`` is UTF-8 (uint8), document d at
``buf[doc_ptr[d]:doc_ptr[d + 1]]``, ``doc_ptr`` int64 non-decreasing.

A document is declined (``ok[d]`` False, no keys written) when a byte >= 0x80
stands outside a string or comment at the start of a token or right after an
identifier: there Unicode letter rules (``\\w``) decide, which this kernel
does not reproduce.  The caller tokenizes declined documents by the regex path.
"""
import numpy as np

from allpairs._codetok_c_kernel import digits_end, is_alpha, is_digit, line_end, operator_size, quoted_end, \
    sign_digits_end, word_end
from allpairs._hash_kernel import xxh64
from allpairs._numba import kernel

_SEED0 = np.uint64(0)

# Bytes.
_NL, _TAB, _CR, _SP, _FF = 10, 9, 13, 32, 12
_DQUOTE, _SQUOTE, _BACKSLASH, _HASH, _DOT = 34, 39, 92, 35, 46


@kernel
def _prefix_letter(b, u):
    """``[rRbBfFtT]``, and ``[uU]`` too when ``u``."""
    return (b == 114 or b == 82 or b == 98 or b == 66 or b == 102 or b == 70 or b == 116 or b == 84
            or (u and (b == 117 or b == 85)))


@kernel
def _string_prefix(buf, p, q):
    """Whether ``buf[p:q]`` is a string prefix ``[rRbBfFtT]{1,2}|[uU]``."""
    if q - p == 1:
        return _prefix_letter(buf[p], True)
    return q - p == 2 and _prefix_letter(buf[p], False) and _prefix_letter(buf[p + 1], False)


@kernel
def _string_end(buf, q, end):
    """End of the string whose (first) quote is at ``q``: triple-quoted if it opens with three
    quotes and is closed or runs to the end, else single-quoted."""
    quote = buf[q]
    if q + 2 < end and buf[q + 1] == quote and buf[q + 2] == quote:
        s = q + 3
        while s < end:
            b = buf[s]
            if b == _BACKSLASH:
                if s + 1 >= end:
                    break  # a last backslash escapes nothing: neither closed nor at the end
                s += 2
            elif b == quote and s + 2 < end and buf[s + 1] == quote and buf[s + 2] == quote:
                return s + 3
            else:
                s += 1
        if s >= end:
            return end
    return quoted_end(buf, q, end, quote, True)


@kernel
def _number_end(buf, p, end):
    """End of the Python number at ``p`` (a digit, or '.' before a digit)."""
    b = buf[p]
    nxt = buf[p + 1] if p + 1 < end else 0
    if b == 48 and (nxt == 120 or nxt == 88):  # 0x 0X
        q = digits_end(buf, p + 2, end, True)
    elif b == 48 and (nxt == 111 or nxt == 79 or nxt == 98 or nxt == 66):  # 0o 0O 0b 0B
        q = digits_end(buf, p + 2, end, False)
    else:
        q = digits_end(buf, p + 1, end, False)
        if b != _DOT and q < end and buf[q] == _DOT:
            q = digits_end(buf, q + 1, end, False)
        if q < end and (buf[q] == 101 or buf[q] == 69):  # e E
            q = sign_digits_end(buf, q + 1, end)
    if q < end and (buf[q] == 106 or buf[q] == 74):  # j J
        q += 1
    return q


@kernel
def python_token_keys_into(buf, doc_ptr, out, ops_bytes, ops_ptr, ops_first, ops_key):
    """Keys of the Python tokens of every document, comments dropped.

    ``out`` (uint64) has room for a token a byte (``doc_ptr[-1] -
    doc_ptr[0]``).  The operators are a table (see
    :func:`allpairs._codetok_c_kernel.operator_size`) with ``ops_key[i]``
    the key of operator ``i``.  Returns ``(indptr, ok)``: int64 offsets of
    each document's keys in ``out``, and a bool per document, False where it
    was declined (then it has no keys).
    """
    n_docs = doc_ptr.shape[0] - 1
    indptr = np.zeros(n_docs + 1, np.int64)
    ok = np.ones(n_docs, np.bool_)
    k = 0
    for d in range(n_docs):
        p = doc_ptr[d]
        end = doc_ptr[d + 1]
        k_doc = k
        while True:
            while p < end and (buf[p] == _SP or buf[p] == _TAB or buf[p] == _NL or buf[p] == _CR
                               or buf[p] == _FF):
                p += 1
            if p >= end:
                break
            b = buf[p]
            nxt = buf[p + 1] if p + 1 < end else 0
            q = -1  # the end of the token found at p, if any
            if b >= 128:
                ok[d] = False  # a Unicode letter starts an identifier, anything else nothing
                break
            if b == _HASH:
                p = line_end(buf, p + 1, end)
                continue
            if is_alpha(b):
                q = word_end(buf, p + 1, end, False)
                if q < end and buf[q] >= 128:
                    ok[d] = False
                    break
                if q < end and (buf[q] == _DQUOTE or buf[q] == _SQUOTE) and _string_prefix(buf, p, q):
                    q = _string_end(buf, q, end)
            elif is_digit(b) or (b == _DOT and is_digit(nxt)):
                q = _number_end(buf, p, end)
            elif b == _DQUOTE or b == _SQUOTE:
                q = _string_end(buf, p, end)
            if q >= 0:
                out[k] = xxh64(buf, p, q, _SEED0)
                k += 1
                p = q
                continue
            i = operator_size(buf, p, end, ops_bytes, ops_ptr, ops_first)
            if i < 0:
                p += 1  # a character that starts no token is skipped
                continue
            out[k] = ops_key[i]
            k += 1
            p += ops_ptr[i + 1] - ops_ptr[i]
        if not ok[d]:
            k = k_doc
        indptr[d + 1] = k
    return indptr, ok
