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


def cosine_squared(a: set, b: set) -> Fraction:
    """(|a ∩ b| / √(|a||b|))², so that cosine >= t is decided as cosine_squared >= t² in Fractions."""
    return Fraction(len(a & b) ** 2, len(a) * len(b)) if a and b else Fraction(0)


def dice(a: set, b: set) -> Fraction:
    """2|a ∩ b| / (|a| + |b|)."""
    return Fraction(2 * len(a & b), len(a) + len(b)) if a or b else Fraction(0)


def containment(a: set, b: set) -> Fraction:
    """|a ∩ b| / |a|: the share of a found in b."""
    return Fraction(len(a & b), len(a)) if a else Fraction(0)


def containment_min(a: set, b: set) -> Fraction:
    """|a ∩ b| / max(|a|, |b|), as SetSimilaritySearch 1.0 defines it."""
    return Fraction(len(a & b), max(len(a), len(b))) if a or b else Fraction(0)


def overlap(a: set, b: set) -> int:
    """|a ∩ b|."""
    return len(a & b)


def _threshold(t) -> Fraction:
    return Fraction(repr(t)) if isinstance(t, float) else Fraction(t)


def meets(measure: str, a: set, b: set, threshold) -> bool:
    """True when a and b (both non-empty) reach the threshold under the measure."""
    t = _threshold(threshold)
    if not a or not b:
        return False
    if measure == "cosine":
        return cosine_squared(a, b) >= t * t
    return {"jaccard": jaccard, "dice": dice, "containment": containment, "containment_min": containment_min,
            "overlap": overlap}[measure](a, b) >= t


def all_pairs(sets, threshold, measure: str = "jaccard") -> list[tuple[int, int, int, int, int]]:
    """Every (i, j, overlap, |s_i|, |s_j|) with s_i, s_j reaching the threshold, sorted.

    i < j for the symmetric measures; for containment every ordered pair
    i != j with s_i's share in s_j at least t (i contained, j container).
    ``threshold`` is anything :class:`fractions.Fraction` accepts (a float goes
    through its decimal repr, so 0.7 means 7/10).
    """
    sets = [set(s) for s in sets]
    out = []
    for i in range(len(sets)):
        for j in range(len(sets)):
            if i == j or (i > j and measure != "containment"):
                continue
            a, b = sets[i], sets[j]
            if meets(measure, a, b, threshold):
                out.append((i, j, len(a & b), len(a), len(b)))
    return out


def rs_pairs(left, right, threshold, measure: str = "jaccard") -> list[tuple[int, int, int, int, int]]:
    """Every (i, j, overlap, |left_i|, |right_j|) of an R–S join, sorted (containment: left_i in right_j)."""
    left = [set(s) for s in left]
    right = [set(s) for s in right]
    return [(i, j, len(a & b), len(a), len(b)) for i, a in enumerate(left) for j, b in enumerate(right)
            if meets(measure, a, b, threshold)]


def clusters(n: int, pairs) -> list[list[int]]:
    """Connected components with two or more of the n documents, from (i, j, ...) pairs.

    Largest first, ties by smallest member; members ascending.
    """
    parent = list(range(n))

    def find(v):
        while parent[v] != v:
            v = parent[v]
        return v

    for i, j, *_ in pairs:
        parent[find(i)] = find(j)
    groups: dict[int, list[int]] = {}
    for v in range(n):
        groups.setdefault(find(v), []).append(v)
    return sorted((g for g in groups.values() if len(g) >= 2), key=lambda g: (-len(g), g[0]))


def char_shingles(text: str, n: int) -> set[str]:
    """Character n-grams after the documented normalisation (NFKC, casefold, whitespace runs to one space);
    a text of 1 to n - 1 characters is one shingle, itself."""
    import re
    import unicodedata

    text = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).casefold()).strip()
    if 0 < len(text) < n:
        return {text}
    return {text[i:i + n] for i in range(len(text) - n + 1)}


def dedup(sets, threshold, measure: str = "jaccard") -> list[tuple[int, int | None]]:
    """Online near-duplicate removal: (document, kept document it duplicates, or None if kept) for each
    set in order. A document is kept unless a kept one reaches the threshold with it (the document on the
    left: containment asks how much of it a kept one holds); it is charged to the most similar kept
    document, the earliest among equals. An empty set is kept (nothing reaches a threshold with it) and
    reaches no later document."""
    value = {"jaccard": jaccard, "cosine": cosine_squared, "dice": dice, "containment": containment,
             "containment_min": containment_min, "overlap": overlap}[measure]
    sets = [set(s) for s in sets]
    kept: list[int] = []
    out = []
    for d, s in enumerate(sets):
        if not s:
            out.append((d, None))
            continue
        best = None
        for k in kept:
            if meets(measure, s, sets[k], threshold) and (best is None or value(s, sets[k]) > best[0]):
                best = (value(s, sets[k]), k)
        out.append((d, None if best is None else best[1]))
        if best is None:
            kept.append(d)
    return out


def global_order(sets) -> dict:
    """The order stage by definition: keys ranked by document frequency, ties by first occurrence
    (document, then position); each document's distinct ranks ascending; distinct non-empty sets by
    (size, ranks), each with its documents."""
    first: dict = {}
    df: dict = {}
    for d, s in enumerate(sets):
        for pos, key in enumerate(s):
            first.setdefault(key, (d, pos))
        for key in set(s):
            df[key] = df.get(key, 0) + 1
    keys = sorted(first, key=lambda key: (df[key], first[key]))
    rank = {key: r for r, key in enumerate(keys)}
    docs = [sorted({rank[key] for key in s}) for s in sets]
    distinct = sorted({tuple(r) for r in docs if r}, key=lambda r: (len(r), r))
    members = {r: [d for d, row in enumerate(docs) if tuple(row) == r] for r in distinct}
    return {"keys": keys, "docs": docs, "sets": [list(r) for r in distinct], "members": [members[r] for r in distinct]}


def _ranked_value(measure: str, a: set, b: set) -> Fraction:
    """A value ordered as the measure is (cosine squared), for the ranked oracles."""
    return {"jaccard": jaccard, "cosine": cosine_squared, "dice": dice}[measure](a, b)


def top_pairs(sets, k: int, measure: str = "jaccard", floor=None) -> list[tuple[int, int, int, int, int]]:
    """The k pairs i < j of largest similarity (sharing a token, at or above ``floor`` when given) as
    (i, j, overlap, |s_i|, |s_j|), best first, ties by (i, j)."""
    sets = [set(s) for s in sets]
    scored = []
    for i, j in combinations(range(len(sets)), 2):
        a, b = sets[i], sets[j]
        if a & b and (floor is None or meets(measure, a, b, floor)):
            scored.append((-_ranked_value(measure, a, b), i, j, len(a & b), len(a), len(b)))
    return [row[1:] for row in sorted(scored)[:k]]


def neighbors(sets, k: int, measure: str = "jaccard", floor=None) -> list[tuple[int, int, int, int, int]]:
    """For each document i in order, its k best partners j != i (sharing a token, at or above ``floor``),
    as (i, j, overlap, |s_i|, |s_j|), best first, ties by j."""
    sets = [set(s) for s in sets]
    out = []
    for i, a in enumerate(sets):
        scored = sorted((-_ranked_value(measure, a, b), j, len(a & b), len(a), len(b)) for j, b in enumerate(sets)
                        if j != i and a & b and (floor is None or meets(measure, a, b, floor)))
        out += [(i, *row[1:]) for row in scored[:k]]
    return out
