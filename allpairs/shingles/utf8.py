"""Texts as UTF-8 buffers with offsets, as the kernels read them; the character classes the kernels
look up (``\\w``, white space); the token key of strings (XXH64 of their UTF-8 bytes)."""
from __future__ import annotations

import functools
import re
import sys
from collections.abc import Sequence

import numpy as np

from allpairs.corpus.linefile import Utf8Texts
from allpairs.shingles._hash_kernel import xxh64_spans


_WORD = re.compile(r"\w+")


def utf8_of(strings: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The UTF-8 bytes of ``strings`` back to back (uint8) and their int64 offsets.

    One encode of the joined text, no Python work per string: byte offsets
    come from the character lengths (ASCII), or from the code points' UTF-8
    widths (1 to 4 bytes; a lone surrogate takes 3, as surrogatepass writes it).
    """
    return utf8_joined("".join(strings), np.fromiter(map(len, strings), dtype=np.int64, count=len(strings)))


def utf8_joined(joined: str, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`utf8_of` of strings given joined, with their lengths in characters."""
    char_ptr = offsets_of(lengths)
    if joined.isascii():
        return np.frombuffer(joined.encode("ascii"), dtype=np.uint8), char_ptr
    points = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    width = 1 + (points >= 0x80).astype(np.int64) + (points >= 0x800) + (points >= 0x10000)
    byte_at = np.zeros(len(points) + 1, dtype=np.int64)
    np.cumsum(width, out=byte_at[1:])
    return np.frombuffer(joined.encode("utf-8", "surrogatepass"), dtype=np.uint8), byte_at[char_ptr]


def offsets_of(counts: Sequence[int] | np.ndarray) -> np.ndarray:
    indptr = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    return indptr


def keys_of(tokens: Sequence[str]) -> np.ndarray:
    """:func:`token_key` of each token as uint64, without a Python int per token."""
    buf, offsets = utf8_of(tokens)
    return xxh64_spans(buf, offsets, np.uint64(0))


@functools.lru_cache(maxsize=1)
def ascii_keys() -> np.ndarray:
    """:func:`token_key` of each ASCII character, by code point."""
    return keys_of([chr(c) for c in range(128)])


#: Python's ``\\w`` for each code point, filled in as characters are first met
#: (classifying all 1.1 M code points up front costs 0.3 s a run).
_IS_WORD = np.zeros(sys.maxunicode + 1, dtype=np.bool_)


_IS_WORD[[ord(c) for c in map(chr, range(128)) if _WORD.fullmatch(c)]] = True


_WORD_KNOWN = np.zeros(sys.maxunicode + 1, dtype=np.bool_)


_WORD_KNOWN[:128] = True


#: The code points Python's ``str.isspace`` may be true of (a test checks every code point): looking only
#: at these, ~160, instead of all 0x2000-0x3000 saves ~1 M instructions of every run.
_SPACE_CANDIDATES = (*range(0x80), 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000)
#: Every code point from here on is not white space (the last candidate is U+3000).
SPACE_END = _SPACE_CANDIDATES[-1] + 1


@functools.cache
def not_space(size: int = sys.maxunicode + 1) -> np.ndarray:
    """``not chr(c).isspace()`` for each code point below ``size``: a ``--sets`` token is a run of these
    (``str.split()``). Made when first asked for, not at import: the whole table is 1.1 MB of fresh pages
    (~270 page faults, 1-3 microseconds each on a virtual machine), which a run whose kernel takes the
    table up to :data:`SPACE_END` (12 KB) never touches."""
    table = np.ones(size, dtype=np.bool_)
    table[[c for c in _SPACE_CANDIDATES if c < size and chr(c).isspace()]] = False
    return table


def word_table(docs: Sequence[str]) -> np.ndarray:
    """The ``\\w`` table, made to cover every character of ``docs``."""
    if all(doc.isascii() for doc in docs):
        return _IS_WORD
    chars = set().union(*(doc for doc in docs if not doc.isascii()))
    new = [c for c in chars if not _WORD_KNOWN[ord(c)]]
    if new:
        points = np.array([ord(c) for c in new], dtype=np.int64)
        _IS_WORD[points] = [bool(_WORD.fullmatch(c)) for c in new]
        _WORD_KNOWN[points] = True
    return _IS_WORD


def text_sizes(texts) -> list[int]:
    """Each text's size: bytes for a :class:`Utf8Texts` (not decoded for that), else characters."""
    return texts.sizes().tolist() if isinstance(texts, Utf8Texts) else list(map(len, texts))
