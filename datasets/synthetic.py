"""Seeded synthetic corpora with planted near-duplicates.

Every random choice is made from one stream of uniform doubles of numpy's
``Generator(PCG64(seed))`` (``Generator.random``, which maps each 64-bit
output to one double the same way on every platform and numpy version), and
turned into integers by arithmetic done here rather than by numpy's
samplers, whose algorithms may change between numpy versions. So a seed
gives the same corpus on any machine.

Two generators:

:func:`zipf_sets`
    Sets of integer tokens for ``--sets`` (the shape of set-join benchmarks):
    token ``k`` (0-based) drawn with probability proportional to
    ``1 / (k + 1) ** skew``; set sizes uniform in ``[lo, 2 * avg_size - lo]``
    with ``lo = ceil(avg_size / 3)``; a share ``near_duplicates`` of the sets
    are copies of an earlier set with some tokens replaced, at a planted
    Jaccard similarity drawn uniformly from ``similarity`` (an exact copy when
    nothing is replaced). :func:`planted_pairs` lists them with their exact
    Jaccard.
:func:`documents`
    Texts of about ``words`` words (uniform in ``[0.75, 1.25] * words``) from
    a Zipf vocabulary of pronounceable made-up words, in sentences of
    ``SENTENCE`` words, one per line, first word capitalised; a share
    ``near_duplicates`` are copies of an earlier text with up to
    ``max_edits`` one-word edits (substitute, insert, delete). For word
    5-shingles and the MinHash+LSH benchmark.
:func:`products`
    A CSV export of product titles (sku, brand, title, price), a share of
    them relisted with other case, punctuation, a pasted line break or a word
    dropped: short texts for ``--csv``, clusters and the length rule.

Named settings of :func:`zipf_sets` are in :data:`PRESETS` (see
:func:`zipf_preset`); ``social-1m`` is the 1 M-set benchmark of
``scripts/bench_front.py``.

Command line (writes a ``--sets`` file, or one file per document)::

    python -m datasets.synthetic zipf --n 20000 -o zipf.sets
    python -m datasets.synthetic zipf --preset social-1m -o social-1m.sets
    python -m datasets.synthetic documents --n 20000 -o docs/
    python -m datasets.synthetic planted --n 20000 -o planted.tsv
    python -m datasets.synthetic products --n 50000 -o products.csv
    python -m datasets.synthetic products --n 50000 --typos 0.5 -o products-typos.csv
"""
from __future__ import annotations

import argparse
import math
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np

__all__ = [
    "PRESETS",
    "SENTENCE",
    "documents",
    "documents_planted",
    "planted_pairs",
    "products",
    "products_planted",
    "word",
    "zipf_preset",
    "zipf_sets",
]

#: Words per sentence (one line) in :func:`documents`.
SENTENCE = 12

_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"
_SYLLABLES = [c + v for c in _CONSONANTS for v in _VOWELS]  # 70 syllables


class _Uniforms:
    """The seeded stream of uniform doubles in [0, 1), handed out in order."""

    _BLOCK = 1 << 16

    def __init__(self, seed: int):
        self._rng = np.random.Generator(np.random.PCG64(seed))
        self._buf = np.empty(0)
        self._pos = 0

    def take(self, k: int) -> np.ndarray:
        """The next ``k`` doubles of the stream."""
        if self._pos + k > len(self._buf):
            rest = self._buf[self._pos:]
            self._buf = np.concatenate([rest, self._rng.random(max(self._BLOCK, k))])
            self._pos = 0
        out = self._buf[self._pos:self._pos + k]
        self._pos += k
        return out

    def one(self) -> float:
        return float(self.take(1)[0])

    def below(self, m: int) -> int:
        """An integer uniform in [0, m)."""
        return min(int(self.one() * m), m - 1)


def _zipf_cdf(vocabulary: int, skew: float) -> np.ndarray:
    """Cumulative probabilities of ranks 0 .. vocabulary-1, weight 1/(rank+1)**skew."""
    ranks = np.arange(1, vocabulary + 1, dtype=np.float64)
    weights = 1.0 / ranks if skew == 1.0 else ranks ** -float(skew)
    cdf = np.cumsum(weights)
    return cdf / cdf[-1]


def _draw(u: _Uniforms, cdf: np.ndarray, k: int) -> list[int]:
    """``k`` Zipf tokens, with repetition."""
    idx = np.searchsorted(cdf, u.take(k), side="right")
    return np.minimum(idx, len(cdf) - 1).tolist()


def _draw_distinct(u: _Uniforms, cdf: np.ndarray, k: int, exclude: set[int] = frozenset()) -> list[int]:
    """``k`` distinct Zipf tokens not in ``exclude``, in the order first drawn."""
    chosen: dict[int, None] = {}
    while len(chosen) < k:
        for token in _draw(u, cdf, 2 * (k - len(chosen)) + 4):
            if token not in chosen and token not in exclude:
                chosen[token] = None
                if len(chosen) == k:
                    break
    return list(chosen)


def _check(n: int, near_duplicates: float, similarity: tuple[float, float]) -> None:
    if n < 0:
        raise ValueError(f"n = {n} is negative")
    if not 0.0 <= near_duplicates <= 1.0:
        raise ValueError(f"near_duplicates = {near_duplicates} is not a share in [0, 1]")
    lo, hi = similarity
    if not 0.0 <= lo <= hi <= 1.0:
        raise ValueError(f"similarity = {similarity} is not a range within [0, 1]")


def _zipf(n, avg_size, vocabulary, near_duplicates, seed, skew, similarity):
    """The sets and the planted pairs (source, copy, exact Jaccard)."""
    _check(n, near_duplicates, similarity)
    if avg_size < 1:
        raise ValueError(f"avg_size = {avg_size} must be at least 1")
    lo = max(1, math.ceil(avg_size / 3))
    hi = 2 * avg_size - lo
    if hi > vocabulary // 2:
        raise ValueError(
            f"sets of up to {hi} tokens need a vocabulary of at least {2 * hi}, not {vocabulary}; "
            "raise vocabulary or lower avg_size"
        )
    u = _Uniforms(seed)
    cdf = _zipf_cdf(vocabulary, skew)
    s_lo, s_hi = similarity
    sets: list[list[int]] = []
    planted: list[tuple[int, int, Fraction]] = []
    for i in range(n):
        copy = u.one() < near_duplicates and i > 0
        if not copy:
            size = lo + u.below(hi - lo + 1)
            sets.append(sorted(_draw_distinct(u, cdf, size)))
            continue
        source = u.below(i)
        base = sets[source]
        a = len(base)
        target = s_lo + (s_hi - s_lo) * u.one()
        # Replacing r of a tokens by new ones gives J = (a - r) / (a + r).
        r = min(a, math.floor(a * (1 - target) / (1 + target) + 0.5))
        drop = set(np.argsort(u.take(a), kind="stable")[:r].tolist())
        kept = [t for k, t in enumerate(base) if k not in drop]
        new = _draw_distinct(u, cdf, r, exclude=set(base))
        sets.append(sorted(kept + new))
        planted.append((source, i, Fraction(a - r, a + r)))
    return sets, planted


def zipf_sets(
    n: int = 20000,
    avg_size: int = 15,
    vocabulary: int = 10000,
    near_duplicates: float = 0.3,
    seed: int = 0,
    skew: float = 1.0,
    similarity: tuple[float, float] = (0.4, 1.0),
) -> list[list[int]]:
    """Sets of Zipf-skewed integer tokens with planted near-duplicates.

    Parameters
    ----------
    n : int
        Number of sets.
    avg_size : int
        Mean set size; sizes are uniform in ``[ceil(avg_size/3), 2*avg_size - ceil(avg_size/3)]``.
    vocabulary : int
        Tokens are ``0 .. vocabulary-1``; token ``k`` has weight ``1/(k+1)**skew``.
    near_duplicates : float
        Chance that a set (other than the first) is a perturbed copy of an
        earlier one, chosen uniformly.
    seed : int
        Seed of ``numpy.random.PCG64``.
    skew : float
        Zipf exponent.
    similarity : (float, float)
        Range of the planted Jaccard similarities (each drawn uniformly, then
        rounded to the nearest reachable value for the source's size).

    Returns
    -------
    list of list of int
        Each set's distinct tokens in increasing order.
    """
    return _zipf(n, avg_size, vocabulary, near_duplicates, seed, skew, similarity)[0]


def planted_pairs(
    n: int = 20000,
    avg_size: int = 15,
    vocabulary: int = 10000,
    near_duplicates: float = 0.3,
    seed: int = 0,
    skew: float = 1.0,
    similarity: tuple[float, float] = (0.4, 1.0),
) -> list[tuple[int, int, Fraction]]:
    """The pairs that :func:`zipf_sets` with the same arguments planted.

    Returns
    -------
    list of (source, copy, jaccard)
        ``source < copy`` are positions in the corpus; ``jaccard`` is exact.
        A copy of a copy is listed against its own source only; other pairs
        (and so the pairs a join finds) may be similar too.
    """
    return _zipf(n, avg_size, vocabulary, near_duplicates, seed, skew, similarity)[1]


#: Named arguments of :func:`zipf_sets` (and :func:`planted_pairs`); see :func:`zipf_preset`.
PRESETS: dict[str, dict] = {
    # The shape of the social-network set-join benchmarks; why these numbers: zipf_preset's docstring.
    "social-1m": dict(n=1_000_000, avg_size=27, vocabulary=1_000_000, near_duplicates=0.3, seed=0, skew=0.5),
}


def zipf_preset(name: str, **changes) -> dict:
    """The arguments of :func:`zipf_sets` named ``name`` in :data:`PRESETS`, with ``changes`` applied.

    ``social-1m``: 1,000,000 sets of mean size 27 over 1,000,000 tokens with
    Zipf exponent 0.5, 30% planted near-duplicates, seed 0 (27.0 M tokens,
    the most frequent one in 13,593 sets). It has the shape of the social
    networks that set-join benchmarks use, a set being a member's contacts or
    groups and a token another member or a group:

    * size: the Pokec network's friend lists, the benchmark that
      SetSimilaritySearch's README times at 10 min 49 s, are 1,432,693 sets
      of mean size 27.31 (README of go-set-similarity-search, the Go port by
      the same author, which runs the same benchmark; LiveJournal there:
      4,308,452 sets of mean 16.01);
    * universe: a token per member, and Pokec has more than 1.6 M members
      for its 1.43 M sets (the description of SNAP's soc-Pokec); the benchmark collection
      ekzhu/set-similarity-search-benchmarks lists universes of 0.5 to 8
      tokens per set for the social data (Flickr 1,680,490 sets over 810,660
      tokens, Orkut 1,853,285 sets over 15,293,693). One token per set here;
    * skew: a token's frequency is a member's in-degree, and degrees in
      social networks follow a power law ``P(d) ~ d**-gamma`` with gamma
      between 2 and 3 (3 for preferential attachment, Barabási and Albert
      1999). Frequencies by rank then fall as ``rank**(-1 / (gamma - 1))``,
      a Zipf exponent of 0.5 for gamma = 3. With exponent 1 over 100,000
      tokens (this function's defaults scaled up) the most frequent token
      is in 9 of 10 sets, which no social network has and which makes every
      prefix filter quadratic.

    Raises KeyError for an unknown name.
    """
    return {**PRESETS[name], **changes}


def word(k: int) -> str:
    """The ``k``-th made-up word (0-based): distinct for every k, short for small k."""
    out = []
    k += 1  # bijective base-70 numeration: every k gets its own syllable string
    while k > 0:
        k -= 1
        k, digit = divmod(k, len(_SYLLABLES))
        out.append(_SYLLABLES[digit])
    return "".join(out)


def _render(ids: list[int], vocab: list[str]) -> str:
    """Sentences of SENTENCE words, one per line, capitalised and ending with a full stop."""
    lines = []
    for start in range(0, len(ids), SENTENCE):
        words = [vocab[k] for k in ids[start:start + SENTENCE]]
        words[0] = words[0].capitalize()
        lines.append(" ".join(words) + ".\n")
    return "".join(lines)


def _documents(n, words, near_duplicates, seed, vocabulary, skew, max_edits):
    """The texts and the planted pairs (source, copy, number of edits)."""
    _check(n, near_duplicates, (0.0, 1.0))
    if words < 1:
        raise ValueError(f"words = {words} must be at least 1")
    if max_edits is None:
        max_edits = max(1, words // 10)
    u = _Uniforms(seed)
    cdf = _zipf_cdf(vocabulary, skew)
    vocab = [word(k) for k in range(vocabulary)]
    lo, hi = math.ceil(0.75 * words), max(1, math.floor(1.25 * words))
    lo = min(max(1, lo), hi)
    bodies: list[list[int]] = []
    planted: list[tuple[int, int, int]] = []
    for i in range(n):
        if not (u.one() < near_duplicates and i > 0):
            bodies.append(_draw(u, cdf, lo + u.below(hi - lo + 1)))
            continue
        source = u.below(i)
        body = list(bodies[source])
        edits = u.below(max_edits + 1)
        for _ in range(edits):
            op, at = u.one(), u.below(len(body))
            if op < 1 / 3:
                body[at] = _draw(u, cdf, 1)[0]
            elif op < 2 / 3 or len(body) == 1:
                body.insert(at, _draw(u, cdf, 1)[0])
            else:
                del body[at]
        bodies.append(body)
        planted.append((source, i, edits))
    return [_render(body, vocab) for body in bodies], planted


def documents(
    n: int = 20000,
    words: int = 200,
    near_duplicates: float = 0.3,
    seed: int = 0,
    vocabulary: int = 20000,
    skew: float = 1.0,
    max_edits: int | None = None,
) -> list[str]:
    """Texts of about ``words`` words with planted near-duplicates.

    Parameters
    ----------
    n : int
        Number of documents.
    words : int
        Mean length in words; lengths are uniform in ``[0.75, 1.25] * words``.
    near_duplicates : float
        Chance that a document (other than the first) is an edited copy of an
        earlier one, chosen uniformly.
    seed : int
        Seed of ``numpy.random.PCG64``.
    vocabulary, skew : int, float
        The ``k``-th word :func:`word` has weight ``1/(k+1)**skew``.
    max_edits : int, optional
        A copy gets 0 .. max_edits one-word edits (default ``words // 10``);
        0 edits is an exact copy.

    Returns
    -------
    list of str
        Each text ends with a newline.
    """
    return _documents(n, words, near_duplicates, seed, vocabulary, skew, max_edits)[0]


def documents_planted(
    n: int = 20000,
    words: int = 200,
    near_duplicates: float = 0.3,
    seed: int = 0,
    vocabulary: int = 20000,
    skew: float = 1.0,
    max_edits: int | None = None,
) -> list[tuple[int, int, int]]:
    """The (source, copy, edits) that :func:`documents` with the same arguments planted."""
    return _documents(n, words, near_duplicates, seed, vocabulary, skew, max_edits)[1]


#: What :func:`products` builds titles from: kinds of product, their details, colours, brands' syllables.
_KINDS = ["Case", "Cable", "Charger", "Mug", "Lamp", "Backpack", "Headphones", "Keyboard", "Mouse", "Stand",
          "Bottle", "Notebook", "Pen", "Speaker", "Adapter", "Sleeve", "Tripod", "Watch Band", "Screen Protector",
          "Power Bank"]
_DETAILS = ["USB-C", "Wireless", "Bluetooth 5.3", "Stainless Steel", "Leather", "Silicone", "Magnetic", "Foldable",
            "Waterproof", "LED", "Ergonomic", "Mini", "Pro", "Max", "Slim", "Heavy Duty", "2-Pack", "Fast Charging",
            "Noise Cancelling", "Rechargeable"]
_FITS = ["iPhone 12", "iPhone 15 Pro", "Galaxy S21", "Pixel 8", "MacBook Air 13\"", "iPad 10.9\"", "Switch OLED",
         "Kindle Paperwhite", "Surface Pro 9", "ThinkPad X1"]
_COLOURS = ["Black", "White", "Blue", "Red", "Green", "Grey", "Rose Gold", "Navy", "Clear", "Purple"]
_SIZES = ["1m", "2m", "3 ft", "11 oz", "15 oz", "500 ml", "1 L", "20,000 mAh", "65W", "10 inch"]


def _title(u: _Uniforms, brand: str) -> str:
    """A product title of 3 to 12 words: brand, details, kind, what it fits, colour, size; now and then a
    quoted nickname or a comma, as catalogues write them."""
    parts = [brand]
    parts += [_DETAILS[u.below(len(_DETAILS))] for _ in range(u.below(3))]
    parts.append(_KINDS[u.below(len(_KINDS))])
    if u.one() < 0.5:
        parts.append("for " + _FITS[u.below(len(_FITS))])
    if u.one() < 0.15:
        parts.append(f'"{word(u.below(400)).capitalize()} {word(u.below(400)).capitalize()}"')
    tail = [_COLOURS[u.below(len(_COLOURS))]] if u.one() < 0.6 else []
    if u.one() < 0.4:
        tail.append(_SIZES[u.below(len(_SIZES))])
    title = " ".join(parts)
    return title + (", " + " ".join(tail) if tail and u.one() < 0.5 else (" " + " ".join(tail) if tail else ""))


def _restyle(u: _Uniforms, title: str) -> str:
    """The same product as another seller lists it: changed case, punctuation and spacing, a line break
    from a pasted description now and then, rarely a word dropped."""
    out = title
    r = u.one()
    if r < 0.3:
        out = out.lower()
    elif r < 0.45:
        out = out.upper()
    elif r < 0.6:
        out = out.title()
    if u.one() < 0.4:
        out = out.replace(", ", " - ") if ", " in out else out.replace(" ", ", ", 1)
    if u.one() < 0.3:
        out = out.replace("-", " ")
    if u.one() < 0.2:
        out += "!" if u.one() < 0.5 else " ."
    if u.one() < 0.05:
        words = out.split(" ")
        out = " ".join(words[:-1]) + "\n" + words[-1] if len(words) > 1 else out
    if u.one() < 0.1:
        words = out.split(" ")
        if len(words) > 3:
            del words[1 + u.below(len(words) - 1)]
            out = " ".join(words)
    return out


def _typo(u: _Uniforms, title: str) -> str:
    """One typing slip at a letter of ``title``: two neighbouring letters swapped, a letter dropped,
    doubled or replaced by another (the four edits of Damerau, 1964)."""
    letters = [k for k, ch in enumerate(title) if ch.isalpha()]
    if not letters:
        return title
    k = letters[u.below(len(letters))]
    edit = u.below(4)
    if edit == 0 and k + 1 < len(title):
        return title[:k] + title[k + 1] + title[k] + title[k + 2:]
    if edit == 1:
        return title[:k] + title[k + 1:]
    if edit == 2:
        return title[:k] + title[k] + title[k:]
    return title[:k] + "abcdefghijklmnopqrstuvwxyz"[u.below(26)] + title[k + 1:]


def _products(n, near_duplicates, seed, brands, typos=0.0):
    _check(n, near_duplicates, (0.0, 1.0))
    if not 0.0 <= typos <= 1.0:
        raise ValueError(f"typos must be in [0, 1], got {typos}")
    u = _Uniforms(seed)
    names = [word(70 + k).capitalize() for k in range(brands)]
    rows, planted = [], []
    for i in range(n):
        sku = f"SKU{i:06d}"
        if u.one() < near_duplicates and i > 0:
            source = u.below(i)
            _, brand, title, price = rows[source]
            title = _restyle(u, title)
            if typos and u.one() < typos:  # no draw at all without typos: the default corpus stays as pinned
                title = _typo(u, title)
            rows.append((sku, brand, title, f"{float(price) * (0.9 + 0.2 * u.one()):.2f}"))
            planted.append((source, i))
            continue
        brand = names[u.below(brands)]
        rows.append((sku, brand, _title(u, brand), f"{2 + 98 * u.one():.2f}"))
    return rows, planted


def products(n: int = 50000, near_duplicates: float = 0.2, seed: int = 0, brands: int = 300,
             typos: float = 0.0) -> list[tuple]:
    """A product catalogue as a CSV export holds it: rows of (sku, brand, title, price).

    Titles are 3 to 12 words (a brand of made-up syllables, up to two details,
    a kind of product, what it fits, colour, size; some with a quoted
    nickname or a comma). A share ``near_duplicates`` of the rows list an
    earlier row's product again the way another seller would: in lower,
    upper or title case, with other punctuation, a line break pasted in, or a
    word dropped, at a price within 10%; a share ``typos`` of those copies
    also carry one typing slip (two letters swapped, one dropped, doubled or
    replaced). The first row's sku is SKU000000.
    """
    return _products(n, near_duplicates, seed, brands, typos)[0]


def products_planted(n: int = 50000, near_duplicates: float = 0.2, seed: int = 0,
                     brands: int = 300, typos: float = 0.0) -> list[tuple[int, int]]:
    """The (source, copy) rows that :func:`products` with the same arguments planted (0-based)."""
    return _products(n, near_duplicates, seed, brands, typos)[1]


def _write_text(path: str, text: str) -> None:
    if path == "-":
        sys.stdout.write(text)
    else:
        Path(path).write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m datasets.synthetic",
        description="Write a seeded synthetic corpus with planted near-duplicates.",
    )
    sub = parser.add_subparsers(dest="kind", required=True)

    def common(p, n):
        p.add_argument("--n", type=int, default=n, help="number of sets or documents (default %(default)s)")
        p.add_argument("--near-duplicates", type=float, default=0.3, help="share of planted copies (default %(default)s)")
        p.add_argument("--seed", type=int, default=0, help="PCG64 seed (default %(default)s)")
        p.add_argument("--skew", type=float, default=1.0, help="Zipf exponent (default %(default)s)")

    set_parsers = {}
    for name, help_ in (("zipf", "a --sets file: one set per line, space-separated integer tokens"),
                        ("planted", "the pairs zipf planted: source<TAB>copy<TAB>jaccard, 0-based lines")):
        p = sub.add_parser(name, help=help_, description=help_)
        common(p, 20000)
        p.add_argument("--avg-size", type=int, default=15, help="mean set size (default %(default)s)")
        p.add_argument("--vocabulary", type=int, default=10000, help="distinct tokens (default %(default)s)")
        p.add_argument("--preset", choices=sorted(PRESETS),
                       help="named settings (datasets.synthetic.PRESETS); options given as well override them")
        p.add_argument("-o", "--output", default="-", help="output file, - for stdout (default)")
        set_parsers[name] = p
    p = sub.add_parser("documents", help="one text file per document", description="one text file per document")
    common(p, 20000)
    p.add_argument("--words", type=int, default=200, help="mean words per document (default %(default)s)")
    p.add_argument("--vocabulary", type=int, default=20000, help="distinct words (default %(default)s)")
    p.add_argument("--max-edits", type=int, default=None, help="most edits in a copy (default words/10)")
    p.add_argument("-o", "--output", required=True, help="directory to write doc00000.txt ... into")
    p = sub.add_parser("products", help="a CSV of product titles: sku, brand, title, price",
                       description="a CSV of product titles (sku, brand, title, price) with relisted products")
    p.add_argument("--n", type=int, default=50000, help="number of rows (default %(default)s)")
    p.add_argument("--near-duplicates", type=float, default=0.2, help="share of relisted rows (default %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="PCG64 seed (default %(default)s)")
    p.add_argument("--typos", type=float, default=0.0,
                   help="share of relisted rows with one typing slip as well (default %(default)s)")
    p.add_argument("-o", "--output", default="-", help="output file, - for stdout (default)")
    args = parser.parse_args(argv)
    if getattr(args, "preset", None):
        # Parse again with the preset as defaults: options given on the line still win.
        set_parsers[args.kind].set_defaults(**zipf_preset(args.preset))
        args = parser.parse_args(argv)

    try:
        if args.kind in ("zipf", "planted"):
            sets, planted = _zipf(args.n, args.avg_size, args.vocabulary, args.near_duplicates,
                                  args.seed, args.skew, (0.4, 1.0))
            if args.kind == "zipf":
                text = "".join(" ".join(map(str, s)) + "\n" for s in sets)
            else:
                text = "".join(f"{a}\t{b}\t{j.numerator}/{j.denominator}\n" for a, b, j in planted)
            _write_text(args.output, text)
        elif args.kind == "products":
            import csv
            import io

            buf = io.StringIO(newline="")
            csv.writer(buf).writerows([("sku", "brand", "title", "price"),
                                       *products(args.n, args.near_duplicates, args.seed, typos=args.typos)])
            _write_text(args.output, buf.getvalue())
        else:
            texts = documents(args.n, args.words, args.near_duplicates, args.seed,
                              args.vocabulary, args.skew, args.max_edits)
            out = Path(args.output)
            out.mkdir(parents=True, exist_ok=True)
            width = max(5, len(str(max(args.n - 1, 0))))
            for i, text in enumerate(texts):
                (out / f"doc{i:0{width}d}.txt").write_text(text, encoding="utf-8")
    except ValueError as exc:
        parser.error(str(exc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
