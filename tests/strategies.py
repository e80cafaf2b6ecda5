"""hypothesis strategies for small corpora that exercise the join's edge cases."""
from __future__ import annotations

from fractions import Fraction
from math import isqrt

from hypothesis import strategies as st

# Token frequencies skewed like text: low ids are drawn far more often.
_token = st.one_of(
    st.integers(0, 3),
    st.integers(0, 12),
    st.integers(0, 60),
)

#: The largest denominator a threshold may have (allpairs.measures.MAX_DENOMINATOR).
BILLION = 10**9

#: Round thresholds, as users type them.
ROUND_THRESHOLDS = [Fraction(1, 2), Fraction(7, 10), Fraction(9, 10), Fraction(1), Fraction(1, 3),
                    Fraction(28, 100), Fraction(1, 10)]

#: Thresholds of large numerators and denominators, each a form the parser accepts: the smallest
#: (1e-9), the largest below 1 (0.999999999), one just above 2**29 / 10**9 (products of two of them
#: with a set size leave 64 bits), one just off a round value on either side, and a prime denominator.
LARGE_DENOMINATORS = [Fraction(1, BILLION), Fraction(BILLION - 1, BILLION), Fraction(536870913, BILLION),
                      Fraction(700000001, BILLION), Fraction(699999999, BILLION), Fraction(500000001, BILLION),
                      Fraction(1, 999999937), Fraction(999999936, 999999937)]

#: Any p/q with q up to 10**9, weighted towards large q.
large_denominator_fractions = st.integers(10**6, BILLION).flatmap(
    lambda q: st.integers(1, q).map(lambda p: Fraction(p, q)))

#: Thresholds with large denominators: the fixed extremes above, or any p/q with q up to 10**9.
large_denominator_thresholds = st.one_of(st.sampled_from(LARGE_DENOMINATORS), large_denominator_fractions)


@st.composite
def corpora(draw, max_docs: int = 24, max_size: int = 14):
    """Lists of token sets with empty sets, singletons, exact duplicates and near-duplicates."""
    n = draw(st.integers(0, max_docs))
    sets: list[list[int]] = []
    for _ in range(n):
        kind = draw(st.sampled_from(["fresh", "fresh", "fresh", "copy", "edit", "empty", "single"]))
        if kind == "copy" and sets:
            s = list(draw(st.sampled_from(sets)))
        elif kind == "edit" and sets:
            s = set(draw(st.sampled_from(sets)))
            s -= set(draw(st.lists(_token, max_size=2)))
            s |= set(draw(st.lists(_token, max_size=2)))
            s = list(s)
        elif kind == "empty":
            s = []
        elif kind == "single":
            s = [draw(_token)]
        else:
            s = draw(st.lists(_token, max_size=max_size))
        sets.append(s)
    return sets


def exact_hits(sets) -> list[Fraction]:
    """Similarities that occur in the corpus: thresholds hit exactly by some pair."""
    out = set()
    ss = [set(s) for s in sets]
    for i in range(len(ss)):
        for j in range(i + 1, len(ss)):
            u = len(ss[i] | ss[j])
            if u:
                out.add(Fraction(len(ss[i] & ss[j]), u))
    return sorted(f for f in out if f > 0)


def near_hits(sets) -> list[Fraction]:
    """Thresholds within 10**-9 of a value that some pair reaches, under any measure, each with a
    denominator of 10**9 (so the parser takes it): ⌊v·10**9⌋ and ⌈v·10**9⌉ over 10**9, and one step
    beyond each. A bound off by one anywhere shows up as a pair found or lost at these thresholds;
    for cosine, whose values are irrational, they are the closest thresholds there are."""
    ss = [set(s) for s in sets if s]
    values = set()
    for i in range(len(ss)):
        for j in range(i + 1, len(ss)):
            a, b = ss[i], ss[j]
            o = len(a & b)
            if not o:
                continue
            x, y = len(a), len(b)
            values.update((Fraction(o, x + y - o), Fraction(2 * o, x + y), Fraction(o, x), Fraction(o, y)))
            r = isqrt(o * o * BILLION * BILLION // (x * y))  # ⌊cos · 10**9⌋
            values.update((Fraction(r, BILLION), Fraction(r + 1, BILLION)))
    out = set()
    for v in values:
        low = v.numerator * BILLION // v.denominator
        for n in (low - 1, low, low + 1, low + 2):
            if 0 < n <= BILLION:
                out.add(Fraction(n, BILLION))
    return sorted(out)


@st.composite
def corpus_and_threshold(draw, **kw):
    """A corpus and a threshold: a round one, one its pairs hit exactly, one of large denominator, or one
    within 10**-9 of a value its pairs reach (see :func:`near_hits`)."""
    sets = draw(corpora(**kw))
    choices = [st.sampled_from(ROUND_THRESHOLDS), large_denominator_thresholds]
    hits = exact_hits(sets)
    if hits:
        choices.append(st.sampled_from(hits))
    near = near_hits(sets)
    if near:
        choices.append(st.sampled_from(near))
    t = draw(st.one_of(*choices))
    return sets, t
