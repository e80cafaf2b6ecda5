"""The exact join restricted to some distinct sets equals the oracle on those sets."""
import pytest
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allpairs.exact import prefix_join_rows
from allpairs.measures import Threshold
from allpairs.order import order_sets

from naive import jaccard
from strategies import corpus_and_threshold


@pytest.mark.kernel_paths("compiled", "python")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpus_and_threshold(), st.data(), st.integers(1, 3))
def test_join_of_chosen_sets_equals_brute_force_on_them(case, data, jobs):
    sets, t = case
    indptr = np.zeros(len(sets) + 1, np.int64)
    indptr[1:] = np.cumsum([len(s) for s in sets])
    o = order_sets(indptr, np.array([tok for s in sets for tok in s], np.uint64))
    chosen = data.draw(st.sets(st.integers(0, max(0, o.num_sets - 1)), max_size=o.num_sets)) if o.num_sets else set()
    rows = np.array(sorted(chosen), np.int64)
    found = prefix_join_rows(o.indptr, o.tokens, o.num_tokens, rows, Threshold.parse(t), jobs=jobs)
    distinct = [set(o.tokens[o.indptr[i]:o.indptr[i + 1]].tolist()) for i in range(o.num_sets)]
    expected = sorted((i, j, len(distinct[i] & distinct[j])) for i in sorted(chosen) for j in sorted(chosen)
                      if i < j and jaccard(distinct[i], distinct[j]) >= t)
    got = sorted(zip(found.left.tolist(), found.right.tolist(), found.overlap.tolist()))
    assert got == expected
