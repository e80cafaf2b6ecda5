"""Slow, obviously correct oracles that every fast path is compared with.

Python sets and :class:`fractions.Fraction` only; nothing here shares code with
the package beyond the meaning of its inputs.
"""
from __future__ import annotations

from fractions import Fraction
from itertools import combinations


def jaccard(a: set, b: set) -> Fraction:
    """|a ∩ b| / |a ∪ b|; 0 for two empty sets (they are never a pair)."""
    union = len(a | b)
    return Fraction(len(a & b), union) if union else Fraction(0)


def all_pairs(sets, threshold) -> list[tuple[int, int, int, int, int]]:
    """Every (i, j, overlap, |s_i|, |s_j|) with i < j and J(s_i, s_j) >= threshold, sorted.

    ``threshold`` is anything :class:`fractions.Fraction` accepts (a float goes
    through its decimal repr, so 0.7 means 7/10).
    """
    t = Fraction(repr(threshold)) if isinstance(threshold, float) else Fraction(threshold)
    sets = [set(s) for s in sets]
    out = []
    for i, j in combinations(range(len(sets)), 2):
        a, b = sets[i], sets[j]
        if a and b and jaccard(a, b) >= t:
            out.append((i, j, len(a & b), len(a), len(b)))
    return out


def char_shingles(text: str, n: int) -> set[str]:
    """Character n-grams after the documented normalisation (NFKC, casefold, whitespace runs to one space)."""
    import re
    import unicodedata

    text = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).casefold()).strip()
    return {text[i:i + n] for i in range(len(text) - n + 1)}


def search(indexed, queries, threshold) -> list[tuple[int, int, int, int, int]]:
    """Every (query, indexed, overlap, |query|, |indexed|) with J >= threshold, sorted; empty sets match nothing."""
    t = Fraction(repr(threshold)) if isinstance(threshold, float) else Fraction(threshold)
    indexed = [set(s) for s in indexed]
    out = []
    for k, q in enumerate(set(s) for s in queries):
        for d, s in enumerate(indexed):
            if q and s and jaccard(q, s) >= t:
                out.append((k, d, len(q & s), len(q), len(s)))
    return out


def dedup(sets, threshold) -> list[tuple[int, int | None]]:
    """Online near-duplicate removal: (document, kept document it duplicates or None if kept) for each
    non-empty set in order; a document is kept unless a kept one reaches J >= threshold with it, and is
    charged to the most similar kept document, the earliest among equals."""
    t = Fraction(repr(threshold)) if isinstance(threshold, float) else Fraction(threshold)
    sets = [set(s) for s in sets]
    kept: list[int] = []
    out = []
    for d, s in enumerate(sets):
        if not s:
            continue
        best = None
        for k in kept:
            j = jaccard(s, sets[k])
            if j >= t and (best is None or j > best[0]):
                best = (j, k)
        out.append((d, None if best is None else best[1]))
        if best is None:
            kept.append(d)
    return out
