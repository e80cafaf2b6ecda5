"""Compiled Go tokenizer for ``code:N``: token keys straight from UTF-8 bytes.

It scans each document exactly as ``codetokens.token_pattern("go").findall``
followed by ``shingles._kernel.code_stream`` does (the regex path is the
definition; :mod:`allpairs.shingles.codetokens` documents the tokens), and hashes
each token where it lies with XXH64 (:func:`allpairs.shingles._hash_kernel.xxh64`),
so that no Python string is made per token.

Clean input assumed: ``buf`` is UTF-8 (uint8), document d at
``buf[doc_ptr[d]:doc_ptr[d + 1]]``, ``doc_ptr`` int64 non-decreasing.

A document is declined (``ok[d]`` False, no keys written) when a byte >= 0x80
stands outside a string, rune, raw string or comment: there Unicode letter
rules decide what an identifier is, which this kernel does not reproduce.
The caller tokenizes declined documents by the regex path.
"""
import numpy as np

from allpairs.shingles._hash_kernel import xxh64
from allpairs._kernels.jit import kernel

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
def _plain_keyword(buf, p, q, h, kw_slot_key, kw_slot, kw_bytes, kw_ptr, kw_plain):
    """Whether ``buf[p:q]`` (key ``h``) is a keyword after which no semicolon is inserted.

    The keywords' keys sit in a small open-addressing table (``kw_slot_key``,
    and ``kw_slot`` the keyword there, -1 for none); a key found there is
    checked byte by byte, so that an identifier of the same key is no keyword.
    """
    mask = kw_slot.shape[0] - 1
    s = np.int64(h & np.uint64(mask))
    while kw_slot[s] >= 0:
        if kw_slot_key[s] == h:
            w = kw_slot[s]
            a = kw_ptr[w]
            if kw_ptr[w + 1] - a != q - p:
                return False
            for k in range(q - p):
                if buf[p + k] != kw_bytes[a + k]:
                    return False
            return kw_plain[w]
        s = (s + 1) & mask
    return False


@kernel(wraps=True)
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
def go_token_keys(buf, doc_ptr, semi_key, kw_slot_key, kw_slot, kw_bytes, kw_ptr, kw_plain,
                  op_size, op_key, semi_op):
    """:func:`go_token_keys_into` a new array: ``(indptr, keys, ok)``."""
    n_docs = doc_ptr.shape[0] - 1
    out = np.empty(doc_ptr[n_docs] - doc_ptr[0] + n_docs, np.uint64)
    indptr, ok = go_token_keys_into(buf, doc_ptr, out, semi_key, kw_slot_key, kw_slot, kw_bytes, kw_ptr,
                                    kw_plain, op_size, op_key, semi_op)
    return indptr, out[: indptr[n_docs]].copy(), ok


@kernel(wraps=True)
def go_token_keys_into(buf, doc_ptr, out, semi_key, kw_slot_key, kw_slot, kw_bytes, kw_ptr, kw_plain,
                       op_size, op_key, semi_op):
    """Keys of the Go tokens of every document, automatic semicolons included, comments dropped.

    ``out`` (uint64) has room for a token a byte and a semicolon a document
    (``doc_ptr[-1] - doc_ptr[0] + n_docs``).  ``semi_key`` is the key of
    ``";"``.  Keywords: ``kw_bytes``/``kw_ptr`` spell them (CSR of uint8),
    ``kw_plain`` tells those after which a line end inserts nothing,
    ``kw_slot_key``/``kw_slot`` find them by key (see :func:`_plain_keyword`).
    Operators, by their first two bytes ``b0, b1`` (``b1`` 0 at the end or
    past ASCII), at ``i = b0 * 128 + b1``: ``op_size[i]`` is the length of
    the longest operator starting so (0 none; 3 for ``b0 b1 =`` or ``...``
    when the third byte is there, else ``b0 b1`` or, for ``..``, ``.``),
    ``op_key[i]`` its key, with the key of the 3-byte one at ``b0 * 128 + 127``
    and of the 1-byte one at ``b0 * 128``; ``semi_op[i]`` whether a line end
    after it inserts ``;``.  Returns ``(indptr, ok)``: int64 offsets of each
    document's keys in ``out``, and a bool per document, False where it was
    declined (then it has no keys).
    """
    n_docs = doc_ptr.shape[0] - 1
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
            if _is_letter(b):
                q = p + 1
                while q < end and (_is_letter(buf[q]) or _is_digit(buf[q])):
                    q += 1
                if q < end and buf[q] >= 128:
                    ok[d] = False
                    break
                h = xxh64(buf, p, q, _SEED0)
                out[k] = h
                k += 1
                pending = not _plain_keyword(buf, p, q, h, kw_slot_key, kw_slot, kw_bytes, kw_ptr, kw_plain)
                p = q
            elif b == _NL:
                p += 1
                if pending:
                    out[k] = semi_key
                    k += 1
                    pending = False
            elif b == _SLASH and nxt == _SLASH:  # line comment, up to the newline
                p += 2
                while p < end and buf[p] != _NL:
                    p += 1
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
                i = np.int64(b) * 128 + (np.int64(nxt) if nxt < 128 else 0)
                size = op_size[i]
                if size == 3:  # b0 b1 "=" or "...", else the 2-byte operator
                    if p + 2 < end and buf[p + 2] == (_DOT if b == _DOT else 61):
                        out[k] = op_key[np.int64(b) * 128 + 127]
                        k += 1
                        pending = False
                        p += 3
                        continue
                    size = 1 if b == _DOT else 2  # ".." is two dots
                if size == 0:
                    p += 1  # a character that starts no token is skipped
                    continue
                if size == 1:
                    i = np.int64(b) * 128
                out[k] = op_key[i]
                k += 1
                pending = semi_op[i]
                p += size
        if not ok[d]:
            k = k_doc
        elif pending:  # the end of the file is a line end too
            out[k] = semi_key
            k += 1
        indptr[d + 1] = k
    return indptr, ok
