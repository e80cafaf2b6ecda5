"""hypothesis strategies for small corpora that exercise the join's edge cases."""
from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st

# Token frequencies skewed like text: low ids are drawn far more often.
_token = st.one_of(
    st.integers(0, 3),
    st.integers(0, 12),
    st.integers(0, 60),
)


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


@st.composite
def corpus_and_threshold(draw, **kw):
    sets = draw(corpora(**kw))
    hits = exact_hits(sets)
    choices = [st.sampled_from([Fraction(1, 2), Fraction(7, 10), Fraction(9, 10), Fraction(1), Fraction(1, 3),
                                Fraction(28, 100), Fraction(1, 10)])]
    if hits:
        choices.append(st.sampled_from(hits))
    t = draw(st.one_of(*choices))
    return sets, t
