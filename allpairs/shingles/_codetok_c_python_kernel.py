"""Compiled C-family and Python tokenizers for ``code:N``: token keys straight from UTF-8 bytes.

Each scans a document exactly as ``codetokens.token_pattern(language).findall``
does for ``"c"`` and ``"python"``, comments dropped: the regex is the
definition, and its branches are tried here in the same order, with the same
greedy, lazy and possessive extents (:mod:`allpairs.shingles.codetokens` documents
the tokens).  Each token is hashed where it lies with XXH64
(:func:`allpairs.shingles._hash_kernel.xxh64`), so that no Python string is made per
token.  Unlike Go's (:mod:`allpairs.shingles._codetok_kernel`), these tokens need no
state from one token to the next: one loop serves both languages, with a
function per language that reads the token at a position.

Clean input assumed: ``buf`` is UTF-8 (uint8), document d at
``buf[doc_ptr[d]:doc_ptr[d + 1]]``, ``doc_ptr`` int64 non-decreasing.

A document is declined (``ok[d]`` False, no keys written) when a byte >= 0x80
stands outside a literal or comment where the regex would ask whether a
character is a Unicode letter or digit (``\\w``, ``\\d``): at the start of a
token, right after an identifier, a number or a (Rust) lifetime, or after a
lone quote (C family).  The caller tokenizes declined documents by the regex
path.
"""
import numpy as np

from allpairs.shingles._hash_kernel import xxh64
from allpairs._kernels.jit import kernel

_SEED0 = np.uint64(0)

# Bytes.
_NL, _TAB, _CR, _SP = 10, 9, 13, 32
_DQUOTE, _SQUOTE, _BACKQUOTE, _BACKSLASH = 34, 39, 96, 92
_SLASH, _STAR, _DOT, _HASH, _AT, _DOLLAR = 47, 42, 46, 35, 64, 36
_UNDERSCORE = 95

# What the token at a position is (the second value of _c_token_at and _python_token_at).
_TOKEN = 0  # a token ending at the first value
_SKIP = 1  # a comment ending at the first value
_DECLINE = 2  # a place where Unicode rules decide: the document goes to the regex path
_NONE = 3  # none of the above: an operator, or a character that starts no token


@kernel
def _is_alpha(b):
    """ASCII ``[A-Za-z_]``."""
    return (97 <= b <= 122) or (65 <= b <= 90) or b == _UNDERSCORE


@kernel
def _is_digit(b):
    """ASCII ``[0-9]``."""
    return 48 <= b <= 57


@kernel
def _is_hex(b):
    """ASCII ``[0-9a-fA-F]``."""
    return (48 <= b <= 57) or (97 <= b <= 102) or (65 <= b <= 70)


@kernel
def _utf8_size(b):
    """Bytes of the UTF-8 sequence whose first byte is ``b``."""
    if b < 0x80:
        return 1
    if b < 0xE0:
        return 2
    if b < 0xF0:
        return 3
    return 4


@kernel
def _word_end(buf, p, end, dollar):
    """End of the run of ASCII ``[A-Za-z0-9_]`` (and ``$`` when ``dollar``) from ``p``."""
    while p < end:
        b = buf[p]
        if _is_alpha(b) or _is_digit(b) or (dollar and b == _DOLLAR):
            p += 1
        else:
            break
    return p


@kernel
def _digits_end(buf, p, end, hexa):
    """End of the run of ``[0-9_]`` (``[0-9a-fA-F_]`` when ``hexa``) from ``p``."""
    while p < end:
        b = buf[p]
        if b == _UNDERSCORE or _is_digit(b) or (hexa and _is_hex(b)):
            p += 1
        else:
            break
    return p


@kernel
def _sign_digits_end(buf, p, end):
    """End of ``[+-]?[0-9_]*+`` from ``p`` (an exponent's digits)."""
    if p < end and (buf[p] == 43 or buf[p] == 45):
        p += 1
    return _digits_end(buf, p, end, False)


@kernel
def _quoted_end(buf, p, end, quote, newline_ends):
    """End of ``Q(?:[^Q\\\\\\n]|\\\\[\\s\\S])*+Q?`` with the quote at ``p``.

    The literal ends after its closing quote, before a newline (when
    ``newline_ends``), at the end of the text, or before a backslash that is
    the text's last character (it escapes nothing, so it is no content).
    """
    q = p + 1
    while q < end:
        b = buf[q]
        if b == quote:
            return q + 1
        if b == _NL and newline_ends:
            return q
        if b == _BACKSLASH:
            if q + 1 >= end:
                return q
            q += 2  # the escaped character's continuation bytes follow as content
        else:
            q += 1
    return q


@kernel
def _line_end(buf, p, end):
    """Position of the first newline from ``p``, or ``end``."""
    while p < end and buf[p] != _NL:
        p += 1
    return p


@kernel
def _find(buf, p, end, a, b, run):
    """Start of the first ``a`` followed by ``run`` bytes ``b`` at or after ``p``, or -1."""
    while p + run < end:
        if buf[p] == a:
            k = 1
            while k <= run and buf[p + k] == b:
                k += 1
            if k > run:
                return p
        p += 1
    return -1


@kernel
def _operator_size(buf, p, end, ops_bytes, ops_ptr, ops_first):
    """Index of the longest operator at ``p`` (-1 for none).

    The operators that start with byte ``c`` are ``ops_first[c] ..
    ops_first[c + 1] - 1``, longest first, operator ``i`` spelled
    ``ops_bytes[ops_ptr[i]:ops_ptr[i + 1]]``.
    """
    c = np.int64(buf[p])
    if c >= 128:
        return -1
    for i in range(ops_first[c], ops_first[c + 1]):
        a = ops_ptr[i]
        size = ops_ptr[i + 1] - a
        if p + size > end:
            continue
        k = 1
        while k < size and buf[p + k] == ops_bytes[a + k]:
            k += 1
        if k == size:
            return i
    return -1


@kernel
def _escape_then_quote(buf, e, end):
    """End of ``(?:ESCAPE)'`` with the escape's body at ``e`` (after the backslash), or -1.

    ``ESCAPE`` is the regex's ``[0-7]{1,3} | x[0-9a-fA-F]+ | u\\{[0-9a-fA-F]*\\}
    | u[0-9a-fA-F]{4} | U[0-9a-fA-F]{8} | [^\\n]``, tried in that order; each
    alternative can be followed by the quote at one length at most.
    """
    if e >= end:
        return -1
    b = buf[e]
    m = 0
    while m < 3 and e + m < end and 48 <= buf[e + m] <= 55:
        m += 1
    if m > 0 and e + m < end and buf[e + m] == _SQUOTE:
        return e + m + 1
    if b == 120:  # x
        q = e + 1
        while q < end and _is_hex(buf[q]):
            q += 1
        if q > e + 1 and q < end and buf[q] == _SQUOTE:
            return q + 1
    if b == 117 and e + 1 < end and buf[e + 1] == 123:  # u{
        q = e + 2
        while q < end and _is_hex(buf[q]):
            q += 1
        if q + 1 < end and buf[q] == 125 and buf[q + 1] == _SQUOTE:
            return q + 2
    if b == 117 or b == 85:  # u and 4 hex digits, U and 8
        size = 4 if b == 117 else 8
        q = e + 1
        while q < end and q <= e + size and _is_hex(buf[q]):
            q += 1
        if q == e + 1 + size and q < end and buf[q] == _SQUOTE:
            return q + 1
    if b != _NL:
        q = e + _utf8_size(b)
        if q < end and buf[q] == _SQUOTE:
            return q + 1
    return -1


@kernel
def _char_end(buf, p, end):
    """End of the character literal ``'(?:[^'\\\\\\n]|ESCAPE)'`` opening at ``p``, or -1."""
    s = p + 1
    if s >= end:
        return -1
    b = buf[s]
    if b == _SQUOTE or b == _NL:
        return -1
    if b == _BACKSLASH:
        return _escape_then_quote(buf, s + 1, end)
    q = s + _utf8_size(b)
    if q < end and buf[q] == _SQUOTE:
        return q + 1
    return -1


@kernel
def _is(buf, p, q, a, b, c):
    """Whether ``buf[p:q]`` spells the 1 to 3 bytes ``a b c`` (0 stands for no byte)."""
    size = 1 if b == 0 else (2 if c == 0 else 3)
    if q - p != size:
        return False
    return buf[p] == a and (size < 2 or buf[p + 1] == b) and (size < 3 or buf[p + 2] == c)


@kernel
def _c_string_prefix(buf, p, q):
    """Whether ``buf[p:q]`` is one of the C-family string prefixes ``u8 L u U b``."""
    if q - p == 1:
        b = buf[p]
        return b == 76 or b == 117 or b == 85 or b == 98
    return _is(buf, p, q, 117, 56, 0)


@kernel
def _prefixed_literal_end(buf, p, q, end):
    """End of the literal whose letters ``buf[p:q]`` precede a quote or ``#`` at ``q``, or -1.

    The regex's literal branches in order: Rust raw strings ``b?r#{k}"..."#{k}``
    for k = 3, 2, 1 and ``b?r"..."``; C++ raw strings ``(u8|L|u|U)?R"(...)"``;
    strings and characters with a prefix ``u8 L u U b``.
    """
    b = buf[q]
    rust = _is(buf, p, q, 114, 0, 0) or _is(buf, p, q, 98, 114, 0)  # r br
    if rust:
        for k in range(3, 0, -1):
            s = q
            while s < q + k and s < end and buf[s] == _HASH:
                s += 1
            if s == q + k and s < end and buf[s] == _DQUOTE:
                c = _find(buf, s + 1, end, _DQUOTE, _HASH, k)
                if c >= 0:
                    return c + 1 + k
        if b == _DQUOTE:
            c = _find(buf, q + 1, end, _DQUOTE, 0, 0)
            if c >= 0:
                return c + 1
    if b == _DQUOTE and q + 1 < end and buf[q + 1] == 40 and buf[q - 1] == 82:  # R"(
        if q - p == 1 or (_c_string_prefix(buf, p, q - 1) and buf[p] != 98):  # no b before R
            c = _find(buf, q + 2, end, 41, _DQUOTE, 1)  # )"
            if c >= 0:
                return c + 2
    if _c_string_prefix(buf, p, q):
        if b == _DQUOTE:
            return _quoted_end(buf, q, end, _DQUOTE, True)
        if b == _SQUOTE:
            return _char_end(buf, q, end)
    return -1


@kernel
def _c_number_end(buf, p, end):
    """End of the C-family number at ``p`` (a digit, or '.' before a digit), before its ``\\w`` suffix."""
    if buf[p] == 48 and p + 1 < end and (buf[p + 1] == 120 or buf[p + 1] == 88):  # 0x 0X
        q = p + 2
        while q < end and (buf[q] == _UNDERSCORE or _is_hex(buf[q])
                           or (buf[q] == _SQUOTE and q + 1 < end and _is_hex(buf[q + 1]))):
            q += 1
        if q < end and buf[q] == _DOT:
            q = _digits_end(buf, q + 1, end, True)
        if q < end and (buf[q] == 112 or buf[q] == 80):  # p P
            q = _sign_digits_end(buf, q + 1, end)
        return q
    if buf[p] == _DOT:
        q = _digits_end(buf, p + 1, end, False)
    else:
        q = p + 1
        while q < end and (buf[q] == _UNDERSCORE or _is_digit(buf[q])
                           or (buf[q] == _SQUOTE and q + 1 < end and _is_digit(buf[q + 1]))):
            q += 1
        if q < end and buf[q] == _DOT and not (q + 1 < end and buf[q + 1] == _DOT):
            q = _digits_end(buf, q + 1, end, False)
    if q < end and (buf[q] == 101 or buf[q] == 69):  # e E
        q = _sign_digits_end(buf, q + 1, end)
    return q


@kernel
def _prefix_letter(b, u):
    """``[rRbBfFtT]``, and ``[uU]`` too when ``u``."""
    return (b == 114 or b == 82 or b == 98 or b == 66 or b == 102 or b == 70 or b == 116 or b == 84
            or (u and (b == 117 or b == 85)))


@kernel
def _py_string_prefix(buf, p, q):
    """Whether ``buf[p:q]`` is a string prefix ``[rRbBfFtT]{1,2}|[uU]``."""
    if q - p == 1:
        return _prefix_letter(buf[p], True)
    return q - p == 2 and _prefix_letter(buf[p], False) and _prefix_letter(buf[p + 1], False)


@kernel
def _py_string_end(buf, q, end):
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
    return _quoted_end(buf, q, end, quote, True)


@kernel
def _py_number_end(buf, p, end):
    """End of the Python number at ``p`` (a digit, or '.' before a digit)."""
    b = buf[p]
    nxt = buf[p + 1] if p + 1 < end else 0
    if b == 48 and (nxt == 120 or nxt == 88):  # 0x 0X
        q = _digits_end(buf, p + 2, end, True)
    elif b == 48 and (nxt == 111 or nxt == 79 or nxt == 98 or nxt == 66):  # 0o 0O 0b 0B
        q = _digits_end(buf, p + 2, end, False)
    else:
        q = _digits_end(buf, p + 1, end, False)
        if b != _DOT and q < end and buf[q] == _DOT:
            q = _digits_end(buf, q + 1, end, False)
        if q < end and (buf[q] == 101 or buf[q] == 69):  # e E
            q = _sign_digits_end(buf, q + 1, end)
    if q < end and (buf[q] == 106 or buf[q] == 74):  # j J
        q += 1
    return q


@kernel
def _c_token_at(buf, p, end):
    """The C-family token at ``p`` (not blank) other than an operator: ``(end, what)``, ``what`` one of
    _TOKEN, _SKIP, _DECLINE, _NONE (then the end is meaningless)."""
    b = buf[p]
    nxt = buf[p + 1] if p + 1 < end else 0
    if b >= 128:
        return p, _DECLINE  # a Unicode letter starts an identifier, anything else nothing
    if b == _SLASH and nxt == _SLASH:
        return _line_end(buf, p + 2, end), _SKIP
    if b == _SLASH and nxt == _STAR:
        c = _find(buf, p + 2, end, _STAR, _SLASH, 1)
        return (end if c < 0 else c + 2), _SKIP
    if _is_alpha(b) or b == _DOLLAR:
        q = _word_end(buf, p + 1, end, True)
        if q < end and buf[q] >= 128:
            return q, _DECLINE
        if q < end and (buf[q] == _DQUOTE or buf[q] == _SQUOTE or buf[q] == _HASH):
            r = _prefixed_literal_end(buf, p, q, end)
            if r >= 0:
                return r, _TOKEN
        return q, _TOKEN
    if _is_digit(b) or (b == _DOT and _is_digit(nxt)):
        q = _word_end(buf, _c_number_end(buf, p, end), end, False)  # the \w*+ suffix
        if q < end and buf[q] >= 128:
            return q, _DECLINE
        return q, _TOKEN
    if b == _DQUOTE:
        return _quoted_end(buf, p, end, _DQUOTE, True), _TOKEN
    if b == _SQUOTE:
        q = _char_end(buf, p, end)
        if q >= 0:
            return q, _TOKEN
        if nxt >= 128:
            return p, _DECLINE  # a lifetime if a Unicode letter follows
        if _is_alpha(nxt):  # a Rust lifetime or label, unless a quote follows
            q = _word_end(buf, p + 2, end, False)
            if q < end and buf[q] >= 128:
                return q, _DECLINE
            if not (q < end and buf[q] == _SQUOTE):
                return q, _TOKEN
        return p, _NONE
    if b == _AT and nxt == _DQUOTE:  # a C# verbatim string, "" for a quote
        s = p + 2
        while s < end:
            if buf[s] == _DQUOTE:
                if s + 1 < end and buf[s + 1] == _DQUOTE:
                    s += 2
                    continue
                return s + 1, _TOKEN
            s += 1
        return p, _NONE
    if b == _BACKQUOTE:
        return _quoted_end(buf, p, end, _BACKQUOTE, False), _TOKEN
    return p, _NONE


@kernel
def _python_token_at(buf, p, end):
    """The Python token at ``p`` (not blank) other than an operator: ``(end, what)`` as :func:`_c_token_at`."""
    b = buf[p]
    if b >= 128:
        return p, _DECLINE  # a Unicode letter starts an identifier, anything else nothing
    if b == _HASH:
        return _line_end(buf, p + 1, end), _SKIP
    if _is_alpha(b):
        q = _word_end(buf, p + 1, end, False)
        if q < end and buf[q] >= 128:
            return q, _DECLINE
        if q < end and (buf[q] == _DQUOTE or buf[q] == _SQUOTE) and _py_string_prefix(buf, p, q):
            return _py_string_end(buf, q, end), _TOKEN
        return q, _TOKEN
    if _is_digit(b) or (b == _DOT and p + 1 < end and _is_digit(buf[p + 1])):
        return _py_number_end(buf, p, end), _TOKEN
    if b == _DQUOTE or b == _SQUOTE:
        return _py_string_end(buf, p, end), _TOKEN
    return p, _NONE


@kernel(wraps=True)
def token_keys_into(buf, doc_ptr, out, python, ops_bytes, ops_ptr, ops_first, ops_key):
    """Keys of the C-family tokens (Python's when ``python``) of every document, comments dropped.

    ``out`` (uint64) has room for a token a byte (``doc_ptr[-1] -
    doc_ptr[0]``).  The language's operators are a table (see
    :func:`_operator_size`) with ``ops_key[i]`` the key of operator ``i``.
    Returns ``(indptr, ok)``: int64 offsets of each document's keys in
    ``out``, and a bool per document, False where it was declined (then it
    has no keys).
    """
    n_docs = doc_ptr.shape[0] - 1
    indptr = np.zeros(n_docs + 1, np.int64)
    ok = np.ones(n_docs, np.bool_)
    k = 0
    for d in range(n_docs):
        p = doc_ptr[d]
        end = doc_ptr[d + 1]
        while True:
            # Blanks: [ \t\n\v\f\r] (Python's regex leaves out \v, which starts no token either).
            while p < end and (buf[p] == _SP or _TAB <= buf[p] <= _CR):
                p += 1
            if p >= end:
                break
            q, what = _python_token_at(buf, p, end) if python else _c_token_at(buf, p, end)
            if what == _TOKEN:
                out[k] = xxh64(buf, p, q, _SEED0)
                k += 1
                p = q
            elif what == _SKIP:
                p = q
            elif what == _DECLINE:
                ok[d] = False
                k = indptr[d]
                break
            else:
                i = _operator_size(buf, p, end, ops_bytes, ops_ptr, ops_first)
                if i < 0:
                    p += 1  # a character that starts no token is skipped
                else:
                    out[k] = ops_key[i]
                    k += 1
                    p += ops_ptr[i + 1] - ops_ptr[i]
        indptr[d + 1] = k
    return indptr, ok
