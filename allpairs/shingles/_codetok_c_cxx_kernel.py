"""Compiled C and C++ tokenizer for ``code:N``: token keys straight from UTF-8 bytes.

It scans a document exactly as ``codetokens.tokenize(text, "c")`` does:
line splices (a backslash, optional blanks, a line end: translation phase
2 of the C and C++ standards, as clang's lexer takes them) removed, then
the regex's branches tried in the same order (:mod:`allpairs.shingles.codetokens`
documents the tokens).  Each token is hashed where it lies with XXH64
(:func:`allpairs.shingles._hash_kernel.xxh64`, through the step shared with
:mod:`allpairs.shingles._codetok_c_python_kernel`).

The kernel does not copy the text to remove splices.  A splice between
tokens with a blank (or the text's edge) on one side is a blank; a splice in
a ``//`` comment continues it and one between the ``*`` and ``/`` of ``*/``
closes the comment, as after removal.  A splice anywhere else (inside a
literal, or joining two non-blank characters, which may join two tokens
into one) declines the document, as does a byte >= 0x80 where Unicode rules
decide (the start of a token, right after an identifier or a number, in a
raw string's delimiter).  Declined documents go by the regex path.

Clean input assumed: ``buf`` is UTF-8 (uint8), document d at
``buf[doc_ptr[d]:doc_ptr[d + 1]]``, ``doc_ptr`` int64 non-decreasing.
"""
import numpy as np

from allpairs.shingles._codetok_c_python_kernel import (
    _BACKSLASH, _CR, _DECLINE, _DOLLAR, _DOT, _DQUOTE, _NL, _NONE, _SKIP, _SLASH, _SP, _SQUOTE, _STAR, _TAB,
    _TOKEN, _is_alpha, _is_digit, _take, _word_end)
from allpairs._kernels.jit import kernel

_VT, _FF = 11, 12


@kernel
def _is_blank(b):
    """``[ \\t\\n\\v\\f\\r]``."""
    return b == _SP or _TAB <= b <= _CR


@kernel
def _splice_end(buf, p, end):
    """End of the line splice ``\\\\[ \\t\\v\\f]*(?:\\r\\n|\\n|\\r)`` at ``p``, or ``p`` when none starts there."""
    if p >= end or buf[p] != _BACKSLASH:
        return p
    q = p + 1
    while q < end and (buf[q] == _SP or buf[q] == _TAB or buf[q] == _VT or buf[q] == _FF):
        q += 1
    if q < end and buf[q] == _NL:
        return q + 1
    if q < end and buf[q] == _CR:
        return q + 2 if q + 1 < end and buf[q + 1] == _NL else q + 1
    return p


@kernel
def _splices_end(buf, p, end):
    """End of the run of line splices from ``p`` (``p`` when none)."""
    while True:
        s = _splice_end(buf, p, end)
        if s == p:
            return p
        p = s


@kernel
def _has_splice(buf, p, q, end):
    """Whether a line splice starts in ``buf[p:q]``."""
    for i in range(p, q):
        if buf[i] == _BACKSLASH and _splice_end(buf, i, end) > i:
            return True
    return False


@kernel
def _line_comment_end(buf, p, end):
    """End of a ``//`` comment whose body starts at ``p``: its first line end that no splice removes."""
    while p < end:
        if buf[p] == _NL:
            return p
        s = _splice_end(buf, p, end)
        p = s if s > p else p + 1
    return p


@kernel
def _block_comment_end(buf, p, end):
    """End of a ``/*`` comment whose body starts at ``p``: after the first ``*`` and ``/`` with only splices
    between them, or ``end``."""
    while p < end:
        if buf[p] == _STAR:
            q = _splices_end(buf, p + 1, end)
            if q < end and buf[q] == _SLASH:
                return q + 1
        p += 1
    return end


@kernel
def _pp_number_end(buf, p, end):
    """End of the preprocessing number at ``p`` (a digit, or '.' before one): ``[0-9A-Za-z_.]``, a sign after
    ``e E p P``, a ``'`` before ``[0-9A-Za-z_]`` (C++14 and C23 digit separators)."""
    q = p + 1
    while q < end:
        b = buf[q]
        if _is_alpha(b) or _is_digit(b) or b == _DOT:
            q += 1
        elif (b == 43 or b == 45) and (buf[q - 1] == 101 or buf[q - 1] == 69 or buf[q - 1] == 112
                                       or buf[q - 1] == 80):  # + - after e E p P
            q += 1
        elif b == _SQUOTE and q + 1 < end and (_is_alpha(buf[q + 1]) or _is_digit(buf[q + 1])):
            q += 1
        else:
            break
    return q


@kernel
def _is_string_prefix(buf, p, q):
    """Whether ``buf[p:q]`` is ``u8``, ``L``, ``u`` or ``U``."""
    if q - p == 1:
        b = buf[p]
        return b == 76 or b == 117 or b == 85
    return q - p == 2 and buf[p] == 117 and buf[p + 1] == 56


@kernel
def _raw_string_end(buf, p, q, end):
    """End of the raw string ``(u8|L|u|U)?R"d(...)d"`` whose letters ``buf[p:q]`` precede the quote at ``q``;
    -1 when there is none (not those letters, a bad delimiter, no closing ``)d"``), -2 for a byte >= 0x80 in
    the delimiter (its length in characters decides)."""
    if buf[q] != _DQUOTE or buf[q - 1] != 82 or not (q - p == 1 or _is_string_prefix(buf, p, q - 1)):
        return -1
    d = q + 1
    while d < end and d - q - 1 < 17:
        b = buf[d]
        if b >= 128:
            return -2
        if b == 40 or b == 41 or b == _BACKSLASH or b == _SP or _TAB <= b <= _CR:  # ( ) \ blanks
            break
        d += 1
    if d >= end or buf[d] != 40 or d - q - 1 > 16:
        return -1
    size = d - q - 1  # the delimiter is buf[q + 1:d]
    s = d + 1
    while s + size + 1 < end:
        if buf[s] == 41 and buf[s + size + 1] == _DQUOTE:  # ) and the quote after the delimiter
            k = 0
            while k < size and buf[s + 1 + k] == buf[q + 1 + k]:
                k += 1
            if k == size:
                return s + size + 2
        s += 1
    return -1


@kernel
def _closed_end(buf, p, end):
    """``(end, closed)`` of the literal whose quote is at ``p``: as :func:`_quoted_end`, and whether it ended at
    its closing quote."""
    quote = buf[p]
    q = p + 1
    while q < end:
        b = buf[q]
        if b == quote:
            return q + 1, True
        if b == _NL:
            return q, False
        if b == _BACKSLASH:
            if q + 1 >= end:
                return q, False
            q += 2
        else:
            q += 1
    return q, False


@kernel
def _is_standard_suffix(buf, p, q):
    """Whether ``buf[p:q]`` is a suffix of the standard library's string literals:
    ``s h i d y min ms us ns il if sv``."""
    size = q - p
    if size == 1:
        b = buf[p]
        return b == 115 or b == 104 or b == 105 or b == 100 or b == 121  # s h i d y
    if size == 2:
        a, b = buf[p], buf[p + 1]
        return ((b == 115 and (a == 109 or a == 117 or a == 110))  # ms us ns
                or (a == 105 and (b == 108 or b == 102))  # il if
                or (a == 115 and b == 118))  # sv
    return size == 3 and buf[p] == 109 and buf[p + 1] == 105 and buf[p + 2] == 110  # min


@kernel
def _literal(buf, p, q, end, closed, string):
    """``(end, what)`` of the literal ``buf[p:q]`` with its user-defined suffix if ``closed`` (an identifier
    from ``_``, or after a ``string`` a standard suffix as a whole identifier); _DECLINE when a splice lies in
    it or a byte >= 0x80 follows it."""
    if _has_splice(buf, p, q, end):
        return q, _DECLINE
    if not closed or q >= end:
        return q, _TOKEN
    b = buf[q]
    if b >= 128:
        return q, _DECLINE
    if b == 95 or (string and _is_alpha(b)):  # _
        r = _word_end(buf, q + 1, end, False)
        if r < end and buf[r] >= 128:
            return r, _DECLINE
        if b == 95 or _is_standard_suffix(buf, q, r):
            return r, _TOKEN
    return q, _TOKEN


@kernel
def _token_at(buf, p, end):
    """The C or C++ token at ``p`` (not blank, no splice) other than an operator: ``(end, what)``, ``what``
    one of _TOKEN, _SKIP, _DECLINE, _NONE (then the end is meaningless)."""
    b = buf[p]
    nxt = buf[p + 1] if p + 1 < end else 0
    if b >= 128:
        return p, _DECLINE  # a Unicode letter starts an identifier, anything else nothing
    if b == _SLASH and nxt == _SLASH:
        return _line_comment_end(buf, p + 2, end), _SKIP
    if b == _SLASH and nxt == _STAR:
        return _block_comment_end(buf, p + 2, end), _SKIP
    if _is_alpha(b) or b == _DOLLAR:
        q = _word_end(buf, p + 1, end, True)
        if q < end and buf[q] >= 128:
            return q, _DECLINE
        if q < end and (buf[q] == _DQUOTE or buf[q] == _SQUOTE):
            r = _raw_string_end(buf, p, q, end)
            if r == -2:
                return q, _DECLINE
            if r >= 0:
                return _literal(buf, p, r, end, True, True)
            if _is_string_prefix(buf, p, q):
                r, closed = _closed_end(buf, q, end)
                return _literal(buf, p, r, end, closed, buf[q] == _DQUOTE)
        return q, _TOKEN
    if _is_digit(b) or (b == _DOT and _is_digit(nxt)):
        q = _pp_number_end(buf, p, end)
        if q < end and buf[q] >= 128:
            return q, _DECLINE
        return q, _TOKEN
    if b == _DQUOTE or b == _SQUOTE:
        r, closed = _closed_end(buf, p, end)
        return _literal(buf, p, r, end, closed, b == _DQUOTE)
    return p, _NONE


@kernel(wraps=True)
def token_keys_into(buf, doc_ptr, out, ops_bytes, ops_ptr, ops_first, ops_key):
    """Keys of the C and C++ tokens of every document, splices removed and comments dropped.

    ``out`` (uint64) has room for a token a byte (``doc_ptr[-1] -
    doc_ptr[0]``); the operators are a table as for
    :func:`allpairs.shingles._codetok_c_python_kernel.token_keys_into`.
    Returns ``(indptr, ok)``: int64 offsets of each document's keys in
    ``out``, and a bool per document, False where it was declined (then it
    has no keys).
    """
    n_docs = doc_ptr.shape[0] - 1
    indptr = np.zeros(n_docs + 1, np.int64)
    ok = np.ones(n_docs, np.bool_)
    k = 0
    for d in range(n_docs):
        start = doc_ptr[d]
        p = start
        end = doc_ptr[d + 1]
        while True:
            while p < end and _is_blank(buf[p]):
                p += 1
            if p >= end:
                break
            s = _splices_end(buf, p, end)
            if s > p:
                # A blank, unless it joins two non-blank characters (which may make one token of two).
                if p > start and not _is_blank(buf[p - 1]) and s < end and not _is_blank(buf[s]):
                    ok[d] = False
                    k = indptr[d]
                    break
                p = s
                continue
            q, what = _token_at(buf, p, end)
            if what == _DECLINE:
                ok[d] = False
                k = indptr[d]
                break
            p, k = _take(buf, p, q, what, end, out, k, ops_bytes, ops_ptr, ops_first, ops_key)
        indptr[d + 1] = k
    return indptr, ok
