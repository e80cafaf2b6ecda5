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

import itertools
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from allpairs.corpus.linefile import Utf8Texts
from allpairs.errors import UsageError
from allpairs.shingles import _kernel as _k
from allpairs.shingles.utf8 import keys_of, utf8_of, word_table

__all__ = ["KEY_VERSION", "KINDS", "LENGTH_PREFIX", "LENGTH_SAMPLE", "ShingleChoice", "ShingleSpec", "TokenIds",
           "normalize_text", "seed_of", "shingle_for_texts", "token_key", "token_keys"]


#: The version of the key definition above; a change of any key is a new version.
KEY_VERSION = 2


#: Pre-tokenised sets with ``normalize=False``: their tokens are never normalised, so it would change nothing.
SETS_NOT_NORMALIZED = ("pre-tokenised sets ({{kind=sets}}, {{tokens_col}}) are joined on their tokens as they are: "
                       "{{normalize=False}} changes nothing; drop it")

#: The shingle kinds that :class:`ShingleSpec` accepts.
KINDS = ("word", "char", "code")

#: The largest shingle size (a text shorter than one shingle is one shingle, so a larger size would change
#: nothing below 2**31 tokens a text; the kernels' int64 counts overflowed at 2**63).
MAX_SHINGLE_SIZE = 2**31 - 1


_WHITESPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class ShingleSpec:
    """What a shingle is: ``kind`` ("word", "char" or "code") and size ``1 <= n <= 2**31 - 1``.

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
        if self.n > MAX_SHINGLE_SIZE:
            # The kernels count tokens in int64 (n - 1 is subtracted from each count): a larger n overflowed there.
            raise UsageError(f"shingle size {self.n} is above 2**31 - 1; use e.g. {self.kind}:3")
        object.__setattr__(self, "n", int(self.n))

    @classmethod
    def parse(cls, text: str) -> ShingleSpec:
        """Read ``"word:3"``, ``"char:5"`` or ``"code:5"``.

        Raises
        ------
        UsageError
            If the kind is unknown, the size is missing, not an integer, < 1 or > 2**31 - 1.
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
    return int(keys_of([token])[0])


def seed_of(spec: ShingleSpec) -> np.uint64:
    return np.uint64(token_key(str(spec)))


class TokenIds:
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
    vocab = TokenIds()
    ids = vocab.ids(tokens)
    return keys_of(vocab.new_strings())[ids]


def normalize_text(text: str) -> str:
    """NFKC, then ``str.casefold()``, then whitespace runs to one space, stripped."""
    import unicodedata  # here: sets and un-normalised shingles never load its tables

    folded = unicodedata.normalize("NFKC", text).casefold()
    return _WHITESPACE.sub(" ", folded).strip()


#: The length rule of :func:`shingle_for_texts`: below ``SHORT_WORDS`` words the median text is a word
#: or two (a password, a name, a code), below ``LONG_WORDS`` a title or a sentence, else a paragraph or a page.
#: Measured for titles (scripts/bench_shingle_rule.py, docs/benchmarks.md): on 50,000 product titles with
#: relisted copies, half of them with a typo, word:1 is the more precise from t = 0.5 to 0.8 with an F1 as
#: good or better (at 0.6: recall 0.83, precision 0.18 against char:3's 0.86 and 0.11); char:3 finds more
#: of the copies with typos, which the summary says when it chooses word:1.
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
        typos = ("; for copies with typos char:3 finds more, at lower precision" if str(self.spec) == "word:1"
                 else "")
        return (f"{self.spec} shingles, chosen from the texts' lengths: {of} has {words} (char:3 below "
                f"{SHORT_WORDS} words, word:1 below {LONG_WORDS}, word:5 from {LONG_WORDS}; --shingle chooses"
                f"{typos})")


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
    buf, doc_ptr = utf8_of(sample)
    indptr, _ = _k.token_keys(buf, doc_ptr, word_table(sample))
    counts = np.sort(np.minimum(np.diff(indptr), LONG_WORDS))
    median = int(counts[len(counts) // 2]) if len(counts) else 0
    spec = ShingleSpec("char", 3) if median < SHORT_WORDS else ShingleSpec("word", 1) if median < LONG_WORDS \
        else ShingleSpec("word", 5)
    return ShingleChoice(spec, median, len(counts))
