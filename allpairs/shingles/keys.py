"""Stage (2): documents to shingle keys.

A shingle is ``n`` consecutive tokens of a document: words (``word:N``),
characters (``char:N``) or program tokens (``code:N``, see
:mod:`allpairs.shingles.codetokens`).  Each shingle becomes one 64-bit key, and each
key is the same in every process, on every machine and in every version of
allpairs (Python's ``hash()`` is never used).  The keys of a corpus travel as
CSR: ``indptr`` (int64, ``n_docs + 1``) and ``keys`` (uint64), the keys of
document ``i`` being ``keys[indptr[i]:indptr[i + 1]]``, with duplicates and
in text order; the next stage deduplicates and sorts them.

Keys (key version 2, :data:`KEY_VERSION`)
-----------------------------------------
* Token key: ``token_key(s)`` is XXH64 (seed 0) of the UTF-8 bytes of ``s``
  (lone surrogates passed through), the same number as
  ``xxhash.xxh64_intdigest(s.encode())``.  A word, a ``--sets`` token, a
  program token and a single character (for ``char:N``) are all tokens.
* Shingle key of tokens with keys ``k_1 .. k_n``: ``h_0 = token_key(str(spec))``
  (the seed, e.g. ``token_key("word:3")``, so that ``word:1`` of "a" differs
  from ``char:1`` and ``code:1`` of "a", and n-grams of different n differ),
  ``h_i = mix(h_{i-1} * 0x9E3779B97F4A7C15 + k_i)``, key ``h_n``, where
  ``mix`` is the splitmix64 finaliser (:mod:`allpairs._kernels.mix`); all
  arithmetic modulo 2**64.
* A text of 1 to n - 1 words or characters (``word:N``, ``char:N``) is
  shorter than one shingle: its one shingle is its whole token sequence,
  key ``h_m`` for its m tokens (same seed), so that it pairs with its
  copies; no n-gram has that key, since a chain of m < n steps is none.  A
  program of fewer than n tokens (``code:N``: a package clause and comments)
  has no shingle: near-empty, it would pair with every other such file.

Key version 1 (allpairs 0.1.0 before the compiled front end) used 8-byte
BLAKE2b for tokens and splitmix64 of the code point for characters.

Words, characters, program tokens and ``--sets`` tokens are found and
hashed by compiled kernels over the UTF-8 bytes of a batch of documents
(:mod:`allpairs.shingles._kernel`, :mod:`allpairs.shingles._hash_kernel`, the code
tokenizers of :mod:`allpairs.shingles.codetokens`), without a Python object per
token; normalisation stays per document in Python's C-level string methods.

Normalisation (``normalize=True``, word and char only): Unicode NFKC, then
``str.casefold()``, then every run of whitespace becomes one space and the
ends are stripped.  ``normalize=False`` leaves the text alone.  Program text
(``code``) is never normalised.
"""
from __future__ import annotations

import collections
import concurrent.futures
import ctypes
import functools
import itertools
import multiprocessing
import os
import re
import signal
import sys
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from allpairs._kernels import malloc as _malloc
from allpairs._kernels.jit import resolve_jobs
from allpairs._kernels.csr import concat_rows, distinct_rows, distinct_sorted_rows
from allpairs.corpus.linefile import HashedSets, TokenSets, Utf8Texts
from allpairs.errors import UsageError
from allpairs.shingles import _kernel as _k
from allpairs.shingles import codetokens
from allpairs.shingles._codetok_c_python_kernel import token_keys_into as c_python_token_keys_into
from allpairs.shingles._codetok_kernel import go_token_keys_into
from allpairs.shingles._hash_kernel import xxh64_spans, xxh64_split
from allpairs.shingles.codetokens import language_for_path

__all__ = [
    "KEY_VERSION",
    "ShingleSpec",
    "format_sets",
    "hash_sets",
    "language_for_path",
    "normalize_text",
    "shingle_for_texts",
    "shingle_texts",
    "token_key",
    "token_keys",
]

#: The version of the key definition above; a change of any key is a new version.
KEY_VERSION = 2

#: The shingle kinds that :class:`ShingleSpec` accepts.
KINDS = ("word", "char", "code")

_WORD = re.compile(r"\w+")
_WHITESPACE = re.compile(r"\s+")
# Documents are processed in batches of at most this many documents or characters,
# which bounds the memory of the intermediate arrays and paces the progress calls.
_BATCH_DOCS = 256
_BATCH_CHARS = 1 << 22


@dataclass(frozen=True)
class ShingleSpec:
    """What a shingle is: ``kind`` ("word", "char" or "code") and size ``n >= 1``.

    ``str(spec)`` gives back the form :meth:`parse` reads, e.g. ``"word:3"``.
    """

    kind: str
    n: int

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise UsageError(
                f"unknown shingle kind {self.kind!r}; use word:N, char:N or code:N"
            )
        if isinstance(self.n, bool) or not isinstance(self.n, (int, np.integer)):
            raise UsageError(f"shingle size must be an integer, got {self.n!r}; use e.g. {self.kind}:3")
        if self.n < 1:
            raise UsageError(f"shingle size must be at least 1, got {self.n}; use e.g. {self.kind}:3")
        object.__setattr__(self, "n", int(self.n))

    @classmethod
    def parse(cls, text: str) -> ShingleSpec:
        """Read ``"word:3"``, ``"char:5"`` or ``"code:5"``.

        Raises
        ------
        UsageError
            If the kind is unknown, the size is missing, not an integer or < 1.
        """
        kind, sep, size = str(text).strip().partition(":")
        kind = kind.strip().lower()
        if kind not in KINDS:
            raise UsageError(
                f"unknown shingle kind {kind!r} in {text!r}; use word:N, char:N or code:N"
            )
        size = size.strip()
        digits = size[1:] if size[:1] in "+-" else size
        if not sep or not (digits.isascii() and digits.isdecimal()):
            raise UsageError(
                f"shingle spec {text!r} needs an integer size after the colon; use e.g. {kind}:3"
            )
        return cls(kind, int(size))

    def __str__(self) -> str:
        return f"{self.kind}:{self.n}"


def token_key(token: str) -> int:
    """Stable 64-bit key of one token.

    XXH64 with seed 0 of the UTF-8 bytes of ``token`` (lone surrogates passed
    through), as a Python int in ``[0, 2**64)``.
    """
    return int(_keys_of([token])[0])


def _utf8(strings: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The UTF-8 bytes of ``strings`` back to back (uint8) and their int64 offsets.

    One encode of the joined text, no Python work per string: byte offsets
    come from the character lengths (ASCII), or from the code points' UTF-8
    widths (1 to 4 bytes; a lone surrogate takes 3, as surrogatepass writes it).
    """
    return _utf8_joined("".join(strings), np.fromiter(map(len, strings), dtype=np.int64, count=len(strings)))


def _utf8_joined(joined: str, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_utf8` of strings given joined, with their lengths in characters."""
    char_ptr = _indptr(lengths)
    if joined.isascii():
        return np.frombuffer(joined.encode("ascii"), dtype=np.uint8), char_ptr
    points = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    width = 1 + (points >= 0x80).astype(np.int64) + (points >= 0x800) + (points >= 0x10000)
    byte_at = np.zeros(len(points) + 1, dtype=np.int64)
    np.cumsum(width, out=byte_at[1:])
    return np.frombuffer(joined.encode("utf-8", "surrogatepass"), dtype=np.uint8), byte_at[char_ptr]


def _keys_of(tokens: Sequence[str]) -> np.ndarray:
    """:func:`token_key` of each token as uint64, without a Python int per token."""
    buf, offsets = _utf8(tokens)
    return xxh64_spans(buf, offsets, np.uint64(0))


@functools.lru_cache(maxsize=1)
def _ascii_keys() -> np.ndarray:
    """:func:`token_key` of each ASCII character, by code point."""
    return _keys_of([chr(c) for c in range(128)])


#: Python's ``\\w`` for each code point, filled in as characters are first met
#: (classifying all 1.1 M code points up front costs 0.3 s a run).
_IS_WORD = np.zeros(sys.maxunicode + 1, dtype=np.bool_)
_IS_WORD[[ord(c) for c in map(chr, range(128)) if _WORD.fullmatch(c)]] = True
_WORD_KNOWN = np.zeros(sys.maxunicode + 1, dtype=np.bool_)
_WORD_KNOWN[:128] = True


#: ``not chr(c).isspace()`` for each code point: a ``--sets`` token is a run of these (``str.split()``).
_NOT_SPACE = np.ones(sys.maxunicode + 1, dtype=np.bool_)
_NOT_SPACE[[c for c in (*range(0x80), 0x85, 0xA0, 0x1680, *range(0x2000, 0x3001)) if chr(c).isspace()]] = False


def _word_table(docs: Sequence[str]) -> np.ndarray:
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


class _Vocabulary:
    """Token string -> dense int32 id, each distinct token hashed once."""

    def __init__(self) -> None:
        self.index: defaultdict[str, int] = defaultdict()
        # A missing token gets the next id, so that map() does the lookup in C.
        self.index.default_factory = self.index.__len__
        self.strings: list[str] = []

    def ids(self, tokens: Iterable[str]) -> np.ndarray:
        return np.fromiter(map(self.index.__getitem__, tokens), dtype=np.int32)

    def new_strings(self) -> list[str]:
        """The tokens added since the last call, in id order."""
        start = len(self.strings)
        if len(self.index) > start:
            self.strings.extend(itertools.islice(self.index, start, None))
            return self.strings[start:]
        return []


def token_keys(tokens: Iterable[str]) -> np.ndarray:
    """:func:`token_key` of each token, as a uint64 array (each distinct token hashed once)."""
    vocab = _Vocabulary()
    ids = vocab.ids(tokens)
    return _keys_of(vocab.new_strings())[ids]


def normalize_text(text: str) -> str:
    """NFKC, then ``str.casefold()``, then whitespace runs to one space, stripped."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _WHITESPACE.sub(" ", folded).strip()


#: The length rule of :func:`shingle_for_texts`: below ``SHORT_WORDS`` words the median text is a word
#: or two (a password, a name, a code), below ``LONG_WORDS`` a title or a sentence, else a paragraph or a page.
SHORT_WORDS, LONG_WORDS = 3, 50
#: Texts whose words :func:`shingle_for_texts` counts, evenly spaced through the corpus.
LENGTH_SAMPLE = 1000


@dataclass(frozen=True)
class ShingleChoice:
    """The shingle :func:`shingle_for_texts` chose, and what it saw: the median text's words, of ``sampled``."""

    spec: ShingleSpec
    median_words: int
    sampled: int

    def describe(self) -> str:
        """One line for the summary: what was chosen, from what, and the rule."""
        of = f"the median of {self.sampled:,} sampled texts" if self.sampled >= LENGTH_SAMPLE else "the median text"
        words = f"{self.median_words:,} word{'' if self.median_words == 1 else 's'}"
        if self.median_words >= LONG_WORDS:
            words = f"{LONG_WORDS} words or more"
        return (f"{self.spec} shingles, chosen from the texts' lengths: {of} has {words} (char:3 below "
                f"{SHORT_WORDS} words, word:1 below {LONG_WORDS}, word:5 from {LONG_WORDS}; --shingle chooses)")


#: Characters of a text in which :func:`shingle_for_texts` counts words (LONG_WORDS fit in far fewer).
LENGTH_PREFIX = 512


def _prefix(texts: Sequence[str], i: int) -> str:
    """The first LENGTH_PREFIX characters of text ``i`` (of a file held as UTF-8, its first bytes,
    without decoding the rest)."""
    if isinstance(texts, Utf8Texts):
        a = int(texts.offsets[i])
        head = texts.buffer[a:min(int(texts.offsets[i + 1]), a + 4 * LENGTH_PREFIX)].tobytes()
        return head.decode("utf-8", "ignore")[:LENGTH_PREFIX]  # "ignore": a character cut at the end
    return texts[i][:LENGTH_PREFIX]


def shingle_for_texts(texts: Sequence[str]) -> ShingleChoice:
    """The default shingle of texts of free length, chosen from the median text's number of words.

    One rule cannot serve both titles and web pages: five-word shingles of a
    title of five words leave it one shingle, which pairs only with its
    copies, while single words of a page pair it with any page of the same
    vocabulary. So: ``char:3`` when the median text has fewer than
    :data:`SHORT_WORDS` words (passwords, names, codes: a typo changes a few
    of its trigrams), ``word:1`` below :data:`LONG_WORDS` (titles, sentences:
    robust to case, punctuation and word order), else ``word:5`` (paragraphs
    and pages, Broder's w-shingling). Words are runs of ``\\w`` characters,
    counted (up to :data:`LONG_WORDS`, all the rule needs, in a text's first
    :data:`LENGTH_PREFIX` characters) in up to :data:`LENGTH_SAMPLE` texts
    evenly spaced through the corpus (the same ones on every run); the median
    is the middle one of them (the upper of the two middle ones for an even
    count).
    """
    n = len(texts)
    picks = range(n) if n <= LENGTH_SAMPLE else np.linspace(0, n - 1, LENGTH_SAMPLE).astype(np.int64).tolist()
    # The words of each text's first LENGTH_PREFIX characters, by the word kernel: LONG_WORDS of them
    # is all the rule needs, and a long text is not read through.
    sample = [_prefix(texts, i) for i in picks]
    buf, doc_ptr = _utf8(sample)
    indptr, _ = _k.token_keys(buf, doc_ptr, _word_table(sample))
    counts = np.sort(np.minimum(np.diff(indptr), LONG_WORDS))
    median = int(counts[len(counts) // 2]) if len(counts) else 0
    spec = ShingleSpec("char", 3) if median < SHORT_WORDS else ShingleSpec("word", 1) if median < LONG_WORDS \
        else ShingleSpec("word", 5)
    return ShingleChoice(spec, median, len(counts))


def _seed(spec: ShingleSpec) -> np.uint64:
    return np.uint64(token_key(str(spec)))


def _indptr(counts: Sequence[int] | np.ndarray) -> np.ndarray:
    indptr = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    return indptr


def _batches(sizes: Sequence[int]) -> Iterable[range]:
    """Consecutive ranges of documents, each at most _BATCH_DOCS docs or about _BATCH_CHARS chars (or bytes)."""
    start, chars = 0, 0
    for i, size in enumerate(sizes):
        chars += size
        if i + 1 - start >= _BATCH_DOCS or chars >= _BATCH_CHARS:
            yield range(start, i + 1)
            start, chars = i + 1, 0
    if start < len(sizes):
        yield range(start, len(sizes))


def _as_text(doc: str | bytes) -> str:
    """A document as a string (:func:`_compiled_shingles` takes UTF-8 bytes too)."""
    return doc if isinstance(doc, str) else doc.decode("utf-8", "surrogatepass")


class _CodeTokens:
    """The vocabulary of one language with the class and key of each token."""

    def __init__(self, language: str) -> None:
        self.language = language
        self.vocab = _Vocabulary()
        self.vocab.index[";"]  # id 0: the spelling of Go's automatic semicolon
        self.classes = np.zeros(0, dtype=np.int8)
        self.keys = np.zeros(0, dtype=np.uint64)

    def shingles(self, docs: list[str | bytes], n: int, seed: np.uint64,
                 distinct: bool = False) -> tuple[np.ndarray, np.ndarray]:
        return _compiled_shingles(docs, self.language, n, seed, self._regex_shingles, distinct)

    def _regex_shingles(self, docs: list[str | bytes], n: int, seed: np.uint64,
                        distinct: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """The regex path: ``findall``, vocabulary ids, :func:`_k.code_stream`."""
        # Built on first use: Go's pattern costs ~1 s (a scan of all of Unicode), and
        # documents reach it only when the compiled tokenizer hands one back.
        findall = codetokens.token_pattern(self.language).findall
        counts = [0] * len(docs)
        parts = []
        for i, doc in enumerate(docs):
            ids = self.vocab.ids(findall(_as_text(doc)))
            counts[i] = len(ids)
            parts.append(ids)
        self._grow()
        ids = np.concatenate(parts) if parts else np.zeros(0, np.int32)
        indptr, stream = _k.code_stream(
            _indptr(counts), ids, self.classes, np.int32(0), self.language == "go"
        )
        return _ngram_keys(indptr, self.keys[stream], n, seed, distinct, False)

    def _grow(self) -> None:
        """Classify and hash the tokens that are new since the last batch."""
        new = self.vocab.new_strings()
        if not new:
            return
        lang = self.language
        classes = codetokens.token_classes(new, lang)
        # Comments and line ends are never hashed: their key is never read.
        line_end = codetokens.LINE_END
        kept = [c < line_end for c in classes]
        keys = np.zeros(len(new), dtype=np.uint64)
        keys[np.array(kept, dtype=bool)] = _keys_of(
            [codetokens.token_spelling(t, lang) for t, keep in zip(new, kept) if keep]
        )
        self.classes = np.concatenate([self.classes, np.array(classes, dtype=np.int8)])
        self.keys = np.concatenate([self.keys, keys])


@functools.lru_cache(maxsize=1)
def _go_tables() -> tuple:
    """The tables of :func:`allpairs.shingles._codetok_kernel.go_token_keys`, from :mod:`allpairs.shingles.codetokens`."""
    keywords = sorted(codetokens._GO_KEYWORDS)
    kw_keys = _keys_of(keywords)
    kw_bytes = np.frombuffer("".join(keywords).encode(), dtype=np.uint8).copy()
    kw_ptr = _indptr([len(w) for w in keywords])
    kw_plain = np.array([w not in codetokens._GO_SEMI_KEYWORDS for w in keywords], dtype=np.bool_)
    kw_slot = np.full(64, -1, dtype=np.int64)
    kw_slot_key = np.zeros(64, dtype=np.uint64)
    for w, key in enumerate(kw_keys.tolist()):
        s = key & 63
        while kw_slot[s] >= 0:
            s = (s + 1) & 63
        kw_slot[s], kw_slot_key[s] = w, key
    # Operators by their first two bytes (see go_token_keys).
    ops = codetokens._GO_OPERATORS
    op_keys = dict(zip(ops, _keys_of(ops).tolist()))
    op_size = np.zeros(128 * 128, dtype=np.int64)
    op_key = np.zeros(128 * 128, dtype=np.uint64)
    semi_op = np.zeros(128 * 128, dtype=np.bool_)
    for op in sorted(ops, key=len):  # longer ones overwrite
        first = ord(op[0]) * 128
        if len(op) == 1:
            op_size[first:first + 128] = 1
            op_key[first] = op_keys[op]
            semi_op[first] = op in codetokens._GO_SEMI_OPERATORS
        elif len(op) == 2:
            i = first + ord(op[1])
            op_size[i], op_key[i] = 2, op_keys[op]
            semi_op[i] = op in codetokens._GO_SEMI_OPERATORS
        else:
            assert op[2] == ("." if op[0] == "." else "=") and op_key[first + 127] == 0
            op_size[first + ord(op[1])] = 3
            op_key[first + 127] = op_keys[op]
    return (np.uint64(token_key(";")), kw_slot_key, kw_slot, kw_bytes, kw_ptr, kw_plain,
            op_size, op_key, semi_op)


@functools.lru_cache(maxsize=None)
def _operator_tables(language: str) -> tuple:
    """The operator table of :func:`allpairs.shingles._codetok_c_python_kernel._operator_size` for ``language``
    ("c" or "python"), with each operator's key."""
    ops = sorted(codetokens._C_OPERATORS if language == "c" else codetokens._PY_OPERATORS,
                 key=lambda op: (op[0], -len(op)))
    ops_bytes = np.frombuffer("".join(ops).encode("ascii"), dtype=np.uint8).copy()
    ops_first = np.searchsorted(np.array([ord(op[0]) for op in ops]), np.arange(129)).astype(np.int64)
    return ops_bytes, _indptr([len(op) for op in ops]), ops_first, _keys_of(ops)


def _tokenizer(language: str) -> tuple:
    """The compiled tokenizer of ``language`` ("go", "c" or "python") and the arguments after its first three."""
    if language == "go":
        return go_token_keys_into, _go_tables()
    return c_python_token_keys_into, (language == "python", *_operator_tables(language))


def _compiled_shingles(docs, language, n, seed, regex_shingles, distinct=False) -> tuple[np.ndarray, np.ndarray]:
    """code:N shingles of documents (str, or their UTF-8 bytes) by the compiled tokenizer of ``language``.

    The documents it declines (a byte >= 0x80 outside literals and comments
    where Unicode letter rules decide, see :mod:`allpairs.shingles._codetok_kernel`
    and :mod:`allpairs.shingles._codetok_c_python_kernel`)
    go through ``regex_shingles``; both give the same keys for any text, the
    kernel only faster.
    """
    # One encode per document: files are few and long, and their byte offsets
    # come free (_utf8 would widen every code point to find them).
    encoded = [doc if isinstance(doc, bytes) else doc.encode("utf-8", "surrogatepass") for doc in docs]
    texts = Utf8Texts.of(encoded)
    del encoded
    out = _KeyBuffer(len(texts.buffer) + len(texts))
    batch = range(len(texts))
    scratch = _Scratch()
    first_mark = scratch.prepare(texts.sizes(), n, distinct)
    found = _code_keys(texts, batch, language, n, seed, distinct, scratch, first_mark)
    _code_commit(texts, batch, found, n, seed, distinct, out, regex_shingles)
    return out.result()


class _Scratch:
    """Work arrays that the batches of one call reuse (no fresh pages for each): token keys, n-gram
    keys, and the table of :func:`allpairs.shingles._kernel.ngram_keys_into` with its next document mark.

    They are made in the calling thread (:meth:`prepare`): memory freed by a
    worker thread's allocator tends to stay with the process.
    """

    #: A table of more slots than this (16 bytes each), made for a very long text, is not kept.
    KEEP_SLOTS = 1 << 18

    def __init__(self) -> None:
        self.keys = np.zeros(0, np.uint64)
        self.ngrams = np.zeros(0, np.uint64)
        self.slots = np.zeros(0, np.uint64)
        self.marks = 0

    def prepare(self, sizes: np.ndarray, n: int, distinct: bool) -> np.int64:
        """Room for texts of ``sizes`` bytes (UTF-8), at most a token a byte and one more a text;
        returns the first document mark of the table."""
        room = int(sizes.sum()) + len(sizes)
        if len(self.keys) < room:
            self.keys = np.empty(room, np.uint64)
        if len(self.ngrams) < room:  # no more n-grams than tokens
            self.ngrams = np.empty(room, np.uint64)
        return self.table(int(sizes.max(initial=0)) + 2 - n, len(sizes), distinct)

    def table(self, longest: int, n_docs: int, distinct: bool) -> np.int64:
        """A table for ``n_docs`` texts of at most ``longest`` n-grams; returns their first document mark."""
        if distinct:
            size = 16
            while size < 2 * longest:
                size *= 2
            if len(self.slots) < 2 * size:
                self.slots = np.zeros(2 * size, np.uint64)
        first = self.marks
        self.marks += n_docs
        return np.int64(first)

    def trim(self) -> None:
        """Drop a table made for a very long text: every slot of it was likely touched, and the
        next texts need a fraction of it."""
        if len(self.slots) > 2 * self.KEEP_SLOTS:
            self.slots = np.zeros(0, np.uint64)

    def ngram_keys_into(self, indptr, keys, n, seed, distinct, out, k0, first_mark, whole=False):
        """:func:`allpairs.shingles._kernel.ngram_keys_into` with this table, marks from ``first_mark``."""
        return _k.ngram_keys_into(indptr, keys, np.int64(n), seed, distinct, whole, out, np.int64(k0), self.slots,
                                  first_mark)


def _ngram_keys(indptr, keys, n, seed, distinct, whole) -> tuple[np.ndarray, np.ndarray]:
    """:func:`allpairs.shingles._kernel.ngram_keys_into` a new array: ``(counts, keys)``; ``whole``: a text
    shorter than one shingle gets one, its whole token sequence (word and char; see :func:`shingle_texts`)."""
    tokens = np.diff(indptr)
    total = int(np.maximum(tokens - n + 1, 0).sum()) + (int(((tokens > 0) & (tokens < n)).sum()) if whole else 0)
    out = np.empty(total, np.uint64)
    scratch = _Scratch()
    first_mark = scratch.table(int(tokens.max(initial=0)) - n + 1, len(indptr) - 1, distinct)
    counts = scratch.ngram_keys_into(indptr, keys, n, seed, distinct, out, 0, first_mark, whole)
    return counts, out[: int(counts.sum())]


def _code_keys(texts: Utf8Texts, batch: range, language, n, seed, distinct, scratch: _Scratch, first_mark):
    """The compiled part of :func:`_compiled_shingles` for texts ``batch``, in ``scratch`` made ready by
    :meth:`_Scratch.prepare` (kernels only: it may run in a thread of its own). Returns the counts,
    the keys (a view of ``scratch``) and whether each text was taken (False: declined, no keys)."""
    buf, doc_ptr = texts.span(batch.start, batch.stop)
    with np.errstate(over="ignore"):  # NUMBA_DISABLE_JIT: uint64 arithmetic wraps by design
        tokenizer, tables = _tokenizer(language)
        indptr, ok = tokenizer(buf, doc_ptr, scratch.keys, *tables)
        counts = scratch.ngram_keys_into(indptr, scratch.keys, n, seed, distinct, scratch.ngrams, 0, first_mark)
    return counts, scratch.ngrams[: int(counts.sum())], ok


def _code_commit(texts: Utf8Texts, batch: range, found, n, seed, distinct, out: _KeyBuffer, regex_shingles) -> None:
    """Add :func:`_code_keys`'s result for texts ``batch`` to ``out``, with the declined texts
    shingled by ``regex_shingles`` in their place."""
    counts, keys, ok = found
    if ok.all():
        out.add(counts, keys)
        return
    declined = np.flatnonzero(~ok)
    compiled = np.flatnonzero(ok)
    regex = regex_shingles([texts[batch.start + i] for i in declined], n, seed, distinct)
    # Declined documents have no keys above: drop their zero counts and interleave.
    out.add(*_interleave(len(batch), [(compiled, (counts[compiled], keys)), (declined, regex)]))


class _KeyBuffer:
    """The shingle counts and keys of the documents done so far; the keys in one array that kernels write into.

    It starts with room for ``capacity`` keys (untouched pages cost no
    memory) and grows when a batch needs more.
    """

    def __init__(self, capacity: int) -> None:
        try:
            self.keys = np.empty(max(capacity, 1), np.uint64)
        except MemoryError:  # more room than the system lends at once: start small and grow
            self.keys = np.empty(1 << 20, np.uint64)
        self.size = 0
        self.counts: list[np.ndarray] = [np.zeros(0, np.int64)]

    def room(self, m: int) -> np.ndarray:
        """The key array, with room for ``m`` keys from :attr:`size` on."""
        if self.size + m > len(self.keys):
            grown = np.empty(max(self.size + m, 2 * len(self.keys)), np.uint64)
            grown[: self.size] = self.keys[: self.size]
            self.keys = grown
        return self.keys

    def add(self, counts: np.ndarray, keys: np.ndarray | None = None) -> None:
        """Documents done: their counts (int64), and their keys, copied in, unless written in place already."""
        total = int(counts.sum())
        if keys is not None:
            self.room(total)[self.size:self.size + total] = keys
        self.size += total
        self.counts.append(counts)

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        """Counts (int64, a document each) and keys (uint64)."""
        return np.concatenate(self.counts), self.keys[: self.size]


def _interleave(n_docs: int, parts) -> tuple[np.ndarray, np.ndarray]:
    """Shingle counts and keys of ``n_docs`` documents put together from ``parts``.

    Each part is ``(members, (counts, keys))``: the documents it holds (input
    positions, ascending) and their counts and keys in that order.
    """
    counts = np.zeros(n_docs, dtype=np.int64)
    rows: list[np.ndarray | None] = [None] * n_docs
    for members, (part_counts, part_keys) in parts:
        offsets = _indptr(part_counts)
        for j, i in enumerate(members):
            counts[i] = part_counts[j]
            rows[i] = part_keys[offsets[j] : offsets[j + 1]]
    return counts, np.concatenate(rows) if n_docs else np.zeros(0, dtype=np.uint64)


def _check_languages(languages, n_docs: int) -> list[str | None]:
    if languages is None:
        return [None] * n_docs
    languages = list(languages)
    if len(languages) != n_docs:
        raise UsageError(
            f"languages has {len(languages)} entries for {n_docs} texts; give one per text (None for C-like)"
        )
    for lang in set(languages):
        if lang is not None and lang not in codetokens.LANGUAGES:
            raise UsageError(
                f"unknown program language {lang!r}; use one of "
                f"{', '.join(codetokens.LANGUAGES)} or None (C-like)"
            )
    return languages


def shingle_texts(
    texts: Sequence[str],
    spec: ShingleSpec | str,
    *,
    normalize: bool = True,
    languages: Sequence[str | None] | None = None,
    progress: Callable[[int], None] | None = None,
    workers: int | None = None,
    distinct: bool = False,
    jobs: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Shingle keys of each text.

    Parameters
    ----------
    texts : sequence of str, length n_docs
        The documents.
    spec : ShingleSpec or str
        ``word:N`` (n-grams of words, a word being a run of Unicode word
        characters ``\\w+``), ``char:N`` (n-grams of characters, i.e. code
        points) or ``code:N`` (n-grams of program tokens, see
        :mod:`allpairs.shingles.codetokens`).
    normalize : bool, default True
        For word and char: NFKC, casefold, whitespace runs collapsed to one
        space and stripped before tokenizing (see :func:`normalize_text`).
        Ignored for code.
    languages : sequence of {"go", "c", "python", None}, length n_docs, optional
        For code: the tokenizer of each text (:func:`language_for_path` gives
        it from a file name); None or absent means the C-family tokenizer.
    progress : callable(int), optional
        Called now and then with the number of texts done since the last
        call; the calls add up to n_docs.
    workers : int, optional
        Processes to shingle with.  By default, for word and char shingles,
        a pool of one process per available CPU is used on Linux when the
        texts hold at least ``PARALLEL_MIN_CHARS`` characters, else the work
        is done in this process; code shingles are made in this process
        unless ``workers`` says otherwise (the compiled tokenizers beat a
        pool).  The result does not depend on it: each text's keys are a
        function of that text alone.  A pool pays off only when CPUs are idle;
        ``workers=1`` stays in this process.
    distinct : bool, default False
        Leave out a key already met in the same text (its first occurrence
        stays): each text's set of keys in order of first occurrence, which
        is all :func:`allpairs.order.order_sets` needs, in less memory.
    jobs : int, optional
        Threads for the compiled code tokenizers over files held as UTF-8 (as
        :func:`allpairs.corpus.read_directory` holds them); default every
        core, 1 for none. The result does not depend on it.

    Returns
    -------
    indptr : ndarray of int64, shape (n_docs + 1,)
    keys : ndarray of uint64, shape (indptr[-1],)
        The shingle keys of text i are ``keys[indptr[i]:indptr[i + 1]]``, in
        text order, duplicates kept (unless ``distinct``).  A text of 1 to n - 1 words or
        characters has one shingle, its whole sequence; a program of fewer than n tokens none; an
        empty text none.  Keys are defined in the module docstring.

    Raises
    ------
    UsageError
        For an unknown spec or language, ``languages`` of the wrong length, or
        ``workers`` < 1.
    """
    if not isinstance(spec, ShingleSpec):
        spec = ShingleSpec.parse(spec)
    texts = texts if isinstance(texts, Sequence) else list(texts)
    langs = _check_languages(languages, len(texts)) if spec.kind == "code" else None
    pool_size = _pool_size(workers, texts, spec, jobs)
    if pool_size > 1:
        counts, keys = _shingle_in_pool(texts, langs, spec, normalize, progress, pool_size, distinct)
    else:
        counts, keys = _shingle_serial(texts, langs, spec, normalize, progress, distinct, resolve_jobs(jobs))
        _malloc.release()  # the batches' work arrays
    return _indptr(counts), keys


#: Below this many characters of text, shingle_texts does not start worker
#: processes by default (starting them costs about a tenth of a second).
PARALLEL_MIN_CHARS = 1 << 23


def _pool_size(workers: int | None, texts: Sequence[str], spec: ShingleSpec, jobs: int | None = None) -> int:
    """Worker processes for :func:`shingle_texts`: ``workers`` when given, else none for small or code input,
    else one per core up to 8, and never more than ``jobs`` (``-j``) allows."""
    if workers is not None:
        if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
            raise UsageError(f"workers must be an integer >= 1, got {workers!r}; use 1 for no pool")
        return min(int(workers), max(len(texts), 1))
    # By default only where fork is the safe, cheap way to start workers, and
    # never from inside a worker of some other pool.
    if not sys.platform.startswith("linux") or multiprocessing.current_process().daemon:
        return 1
    if spec.kind == "code":
        # The compiled tokenizer is faster alone than a pool is with its start-up
        # and the keys sent back (Go tree: 2.55 s in this process, 3.25 s with two).
        return 1
    cpus = len(os.sched_getaffinity(0))
    if jobs is not None:
        cpus = min(cpus, resolve_jobs(jobs))
    if cpus < 2 or sum(_sizes(texts)) < PARALLEL_MIN_CHARS:
        return 1
    return min(cpus, 8)


def _chunks(sizes: Sequence[int], size: int) -> list[range]:
    """Consecutive ranges of texts of about ``size`` characters each."""
    chunks, start, chars = [], 0, 0
    for i, n in enumerate(sizes):
        chars += n
        if chars >= size:
            chunks.append(range(start, i + 1))
            start, chars = i + 1, 0
    if start < len(sizes):
        chunks.append(range(start, len(sizes)))
    return chunks


#: Corpora being shingled in a pool, by call: forked workers inherit them, so
#: that only index ranges, not the texts, travel to the workers.
_FORKED_INPUTS: dict[int, tuple[Sequence[str], list | None]] = {}


def _shingle_inherited(call: int, chunk: range, spec: ShingleSpec, normalize: bool, distinct: bool):
    """Worker side of the fork pool: shingle ``chunk`` of the inherited corpus ``call``."""
    texts, langs = _FORKED_INPUTS[call]
    return _shingle_serial(
        _part(texts, chunk), None if langs is None else [langs[i] for i in chunk], spec, normalize,
        distinct=distinct,
    )


def _part(texts, chunk: range):
    """The texts ``chunk`` of ``texts``, kept as UTF-8 bytes if they are held so."""
    if isinstance(texts, Utf8Texts):
        return Utf8Texts(*texts.span(chunk.start, chunk.stop))
    return [texts[i] for i in chunk]


def _sizes(texts) -> list[int]:
    """Each text's size: bytes for a :class:`Utf8Texts` (not decoded for that), else characters."""
    return texts.sizes().tolist() if isinstance(texts, Utf8Texts) else list(map(len, texts))


def _shingle_in_pool(texts, langs, spec, normalize, progress, pool_size, distinct):
    """shingle_texts over chunks of texts in worker processes, results in input order."""
    sizes = _sizes(texts)
    # About four chunks per worker balance skewed file sizes without much overhead.
    chunks = _chunks(sizes, max(sum(sizes) // (4 * pool_size), 1))
    fork = sys.platform.startswith("linux")
    context = multiprocessing.get_context("fork" if fork else None)
    call = id(texts)
    counts_parts, keys_parts = [], []
    try:
        if fork:
            _FORKED_INPUTS[call] = (texts, langs)
            jobs = [(_shingle_inherited, call, chunk, spec, normalize, distinct) for chunk in chunks]
        else:
            jobs = [
                (_shingle_serial, _part(texts, chunk),
                 None if langs is None else [langs[i] for i in chunk], spec, normalize, None, distinct)
                for chunk in chunks
            ]
        with _worker_pool(pool_size, context) as pool:
            futures = [pool.submit(*job) for job in jobs]
            for chunk, future in zip(chunks, futures):
                counts, keys = future.result()
                counts_parts.append(counts)
                keys_parts.append(keys)
                if progress is not None:
                    progress(len(chunk))
    finally:
        _FORKED_INPUTS.pop(call, None)
    return np.concatenate(counts_parts), np.concatenate(keys_parts)


def _worker_pool(size: int, context=None) -> concurrent.futures.ProcessPoolExecutor:
    """A process pool whose workers end when this process ends, however it ends."""
    if context is None:
        context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else None)
    return concurrent.futures.ProcessPoolExecutor(
        size, mp_context=context, initializer=_die_with_parent, initargs=(os.getpid(),)
    )


_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """Worker start: ask Linux for SIGKILL when the parent dies (prctl PR_SET_PDEATHSIG).

    Without it a worker whose parent was killed (SIGTERM, SIGKILL) is
    reparented and waits forever on its task pipe, holding the caller's
    stdout and stderr open.  Elsewhere the pool's own shutdown is all there is.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    # The parent may have died before prctl took effect.
    if os.getppid() != parent:
        os._exit(1)


def _shingle_serial(texts, langs, spec, normalize, progress=None, distinct=False, jobs=1):
    """Shingle counts (int64, one per text) and keys of ``texts``, in this process.

    Batches of program files of one language held as UTF-8 go to the compiled tokenizer in
    ``jobs`` threads (the kernels release the GIL); every batch's keys are
    added in input order, so the result does not depend on ``jobs``.
    """
    code_vocabs: dict[str | None, _CodeTokens] = {}
    sizes = _sizes(texts)
    # Room for every shingle: each is a token's, and each token takes a character of
    # its text, as Go's semicolons take a line end or the end of the text.
    out = _KeyBuffer(sum(sizes) + len(sizes))
    code_bytes = spec.kind == "code" and isinstance(texts, Utf8Texts)
    n, seed = spec.n, _seed(spec)

    def vocab(language: str) -> _CodeTokens:
        return code_vocabs.setdefault(language, _CodeTokens(language))

    # At most jobs batches in flight, each with scratch arrays of its own.
    scratches = [_Scratch() for _ in range(jobs)]
    pending: collections.deque = collections.deque()

    def commit_oldest() -> None:
        batch, language, scratch, found = pending.popleft()
        if isinstance(found, concurrent.futures.Future):
            found = found.result()
        _code_commit(texts, batch, found, n, seed, distinct, out, vocab(language)._regex_shingles)
        scratch.trim()
        scratches.append(scratch)
        if progress is not None:
            progress(len(batch))

    pool = concurrent.futures.ThreadPoolExecutor(jobs) if jobs > 1 and code_bytes else None
    # uint64 arithmetic wraps by design; errstate only matters when
    # NUMBA_DISABLE_JIT=1 runs the kernels on numpy scalars, which warn.
    try:
        with np.errstate(over="ignore"):
            for batch in _batches(sizes):
                batch_langs = None if langs is None else [langs[i] for i in batch]
                languages = {"c" if lang is None else lang for lang in batch_langs} if code_bytes else ()
                if len(languages) == 1:
                    # Files of one language as read: the compiled tokenizer reads them in place.
                    language = languages.pop()
                    if not scratches:
                        commit_oldest()
                    scratch = scratches.pop()
                    first_mark = scratch.prepare(texts.sizes()[batch.start:batch.stop], n, distinct)
                    job = (texts, batch, language, n, seed, distinct, scratch, first_mark)
                    # The first batch runs here: it loads the kernels, whose memory then belongs
                    # to this thread's allocator rather than a worker's.
                    threaded = pool is not None and batch.start > 0
                    found = pool.submit(_code_keys, *job) if threaded else _code_keys(*job)
                    pending.append((batch, language, scratch, found))
                    if not threaded:
                        commit_oldest()
                    continue
                while pending:
                    commit_oldest()
                out.add(*_shingle_batch([texts[i] for i in batch], batch_langs, spec, normalize, code_vocabs,
                                        distinct))
                if progress is not None:
                    progress(len(batch))
            while pending:
                commit_oldest()
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    return out.result()


def _shingle_batch(docs, langs, spec, normalize, code_vocabs, distinct):
    """Shingle counts and keys of one batch of documents (str; for code, str or UTF-8 bytes)."""
    seed, n = _seed(spec), spec.n
    if spec.kind == "word" and normalize:
        # Whitespace is never part of a word (\w+), so collapsing it changes no
        # word shingle: skip that step (a third of the time on 20k documents).
        docs = [unicodedata.normalize("NFKC", doc).casefold() for doc in docs]
    elif spec.kind == "char" and normalize:
        docs = [normalize_text(doc) for doc in docs]
    if spec.kind == "code":
        return _code_batch(docs, langs, code_vocabs, n, seed, distinct)
    # The batch's UTF-8 bytes in one buffer; kernels find and hash the tokens.
    buf, doc_ptr = _utf8(docs)
    if spec.kind == "char":
        indptr, keys = _k.char_keys(buf, doc_ptr, _ascii_keys())
    else:
        indptr, keys = _k.token_keys(buf, doc_ptr, _word_table(docs))
    return _ngram_keys(indptr, keys, n, seed, distinct, True)


def _code_batch(docs, langs, vocabs, n, seed, distinct) -> tuple[np.ndarray, np.ndarray]:
    """code:N shingles of one batch, each document with its own language's tokenizer."""
    groups: dict[str | None, list[int]] = {}
    for i, lang in enumerate(langs):
        groups.setdefault("c" if lang is None else lang, []).append(i)
    results = {}
    for lang, members in groups.items():
        if lang not in vocabs:
            vocabs[lang] = _CodeTokens(lang)
        results[lang] = vocabs[lang].shingles([docs[i] for i in members], n, seed, distinct)
    if len(groups) == 1:
        return results[next(iter(groups))]
    # Several languages in the batch: put the documents back in input order.
    return _interleave(len(docs), [(members, results[lang]) for lang, members in groups.items()])


def hash_sets(sets: Sequence[Iterable[str | int]], *, jobs: int | None = None,
              sorted_rows: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Keys of pre-tokenised sets (the ``--sets`` input, e.g. Kosarak).

    The key of a token is ``token_key(str(token))``, so the integer 5 and the
    string "5" have the same key.

    Parameters
    ----------
    sets : sequence of iterables of str or int, or TokenSets
        The sets; a :class:`~allpairs.corpus.linefile.TokenSets` (what
        :func:`allpairs.read_sets` gives) is split and hashed by a compiled
        kernel straight from its UTF-8 buffer.
    jobs : int, optional
        With more than one (default: every core), string tokens are hashed on
        a second thread while the next block of them is joined and encoded.
        The keys do not depend on it.
    sorted_rows : bool, default False
        Each set's keys in increasing order with repeats dropped (what the LSH
        path keeps), instead of in input order; string tokens are then sorted
        on the hashing thread, block by block, while their keys are in cache.

    Returns
    -------
    indptr : ndarray of int64, shape (n_sets + 1,)
    keys : ndarray of uint64
        Keys of set i at ``keys[indptr[i]:indptr[i + 1]]``, in input order,
        duplicates kept (or as ``sorted_rows`` says).
    """
    if isinstance(sets, HashedSets):
        indptr, keys = sets.indptr, sets.keys
    elif isinstance(sets, TokenSets):
        indptr, keys = _k.token_keys(sets.lines.buffer(), sets.lines.starts, _NOT_SPACE)
    else:
        sets = [s if isinstance(s, (list, tuple)) else list(s) for s in sets]
        indptr = _indptr(np.fromiter(map(len, sets), dtype=np.int64, count=len(sets)))
        try:
            found = _split_keys(sets, indptr, resolve_jobs(jobs), sorted_rows)
        except TypeError:  # a token that is not a string
            found = None
        if found is not None:
            return found
        # A token that is not a string, or one holding U+0000 (the separator): hash by lengths.
        keys = _keys_of(list(map(str, itertools.chain.from_iterable(sets))))
    return distinct_rows(indptr, keys, resolve_jobs(jobs)) if sorted_rows else (indptr, keys)


#: Tokens joined and hashed per block by :func:`_split_keys`.
_SPLIT_TOKENS = 1 << 18


def _split_keys(sets: list, indptr: np.ndarray, jobs: int,
                sorted_rows: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`hash_sets` of string tokens, or None if a token holds U+0000.

    Blocks of whole sets are joined with NUL (UTF-8 has no other zero byte),
    encoded, and split and hashed by one kernel call each (then, with
    ``sorted_rows``, each set's keys sorted). Joining and encoding hold the GIL
    and the kernels do not, so with ``jobs > 1`` one block is hashed while the
    next is joined; at most two blocks' bytes are alive.
    """
    out = np.empty(int(indptr[-1]), np.uint64)
    cuts = np.unique(np.concatenate(([0], np.searchsorted(indptr, np.arange(0, indptr[-1], _SPLIT_TOKENS), "right") - 1,
                                     [len(sets)])))

    def block(buf: np.ndarray, a: int, b: int):
        k0, k1 = int(indptr[a]), int(indptr[b])
        if not xxh64_split(buf, np.uint8(0), out[k0:k1], np.uint64(0)):
            return None
        return distinct_sorted_rows(indptr[a:b + 1] - k0, out[k0:k1]) if sorted_rows else True

    pool = concurrent.futures.ThreadPoolExecutor(1) if jobs > 1 and len(cuts) > 2 else None
    pending: collections.deque = collections.deque()
    done: list = []
    try:
        for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
            if indptr[a] == indptr[b]:  # sets without a token
                done.append((np.zeros(b - a + 1, np.int64), out[:0]) if sorted_rows else True)
                continue
            text = "\0".join(itertools.chain.from_iterable(sets[a:b])).encode("utf-8", "surrogatepass")
            call = functools.partial(block, np.frombuffer(text, dtype=np.uint8), a, b)
            del text
            if pool is None:
                done.append(call())
            else:
                pending.append(pool.submit(call))
                if len(pending) == 2:
                    done.append(pending.popleft().result())
            if done and done[-1] is None:
                return None
        done += [f.result() for f in pending]
        if any(d is None for d in done):
            return None
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return concat_rows(done) if sorted_rows else (indptr, out)


def hash_set_pieces(pieces: Iterable[tuple[bytes, np.ndarray]],
                    size_hint: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`hash_sets` of ``--sets`` text given as pieces of whole lines (see
    :func:`allpairs.corpus.linefile.read_pieces`), each hashed as it comes: only the keys are kept.

    With ``size_hint`` (at least the text's size in bytes, e.g. a regular
    file's size) the keys are written straight into one array with room for
    the most tokens that many bytes can hold; memory is taken only as keys
    are written, and no piece is copied.
    """
    counts: list[np.ndarray] = [np.zeros(0, np.int64)]
    if size_hint is not None:
        out = np.empty((size_hint + 1) // 2, np.uint64)
        k = 0
        for buf, starts in pieces:
            if (int(starts[-1]) + 1) // 2 > len(out) - k:  # more text than the hint said
                return _hash_pieces_apart(itertools.chain([(buf, starts)], pieces), counts, out[:k])
            indptr = _k.token_keys_into(np.frombuffer(buf, dtype=np.uint8), starts, _NOT_SPACE, out, np.int64(k))
            counts.append(np.diff(indptr))
            k = int(indptr[-1])
        return _indptr(np.concatenate(counts)), out[:k]
    return _hash_pieces_apart(pieces, counts, np.zeros(0, np.uint64))


def _hash_pieces_apart(pieces, counts, first_keys):
    """hash_set_pieces without a size hint: each piece's keys apart, then concatenated."""
    parts = [first_keys]
    for buf, starts in pieces:
        indptr, keys = _k.token_keys(np.frombuffer(buf, dtype=np.uint8), starts, _NOT_SPACE)
        counts.append(np.diff(indptr))
        parts.append(keys)
    return _indptr(np.concatenate(counts)), np.concatenate(parts)


#: Keys rendered per call of the hex kernel in :func:`format_sets` (bounds its buffers).
_FORMAT_KEYS = 1 << 20


def format_sets(indptr: np.ndarray, keys: np.ndarray) -> Iterable[bytes]:
    """Shingle sets as lines of the ``--sets`` format, in pieces of about a megabyte of keys.

    Line ``i`` holds the distinct keys of document ``i`` in ascending order,
    each as 16 lowercase hexadecimal digits, separated by one space; a
    document without a shingle gives an empty line.  Joining the file with
    ``--sets`` gives the same pairs as joining the documents: equal keys give
    equal tokens and distinct keys distinct ones.

    Parameters
    ----------
    indptr : ndarray of int64, shape (n_docs + 1,)
    keys : ndarray of uint64
        As :func:`shingle_texts` and :func:`hash_sets` return them.
    """
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    keys = np.ascontiguousarray(keys, dtype=np.uint64)
    n_docs = len(indptr) - 1
    start = 0
    while start < n_docs:
        # The next documents up to about _FORMAT_KEYS keys (at least one document).
        stop = int(np.searchsorted(indptr, indptr[start] + _FORMAT_KEYS, side="right")) - 1
        stop = min(max(stop, start + 1), n_docs)
        yield _k.hex_lines(indptr[start:stop + 1], keys).tobytes()
        start = stop
