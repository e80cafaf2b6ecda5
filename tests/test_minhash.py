"""MinHash signatures: golden values, the Python-int oracle, jobs, empty sets, estimates."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import naive_lsh
from allpairs.errors import UsageError
from allpairs.lsh import (empty_rows, empty_signatures, estimate, estimate_pairs, permutation_params,
                          signature_dtype, signatures)

U64 = st.integers(0, 2**64 - 1)


def csr(sets):
    indptr = np.zeros(len(sets) + 1, np.int64)
    indptr[1:] = np.cumsum([len(s) for s in sets])
    keys = np.array([k for s in sets for k in s], dtype=np.uint64)
    return indptr, keys


@st.composite
def corpora(draw, max_sets=12):
    """Small corpora with empty sets, singletons, duplicate sets and a few shared keys."""
    pool = draw(st.lists(U64, min_size=1, max_size=30, unique=True))
    sets = draw(st.lists(st.lists(st.sampled_from(pool), max_size=12, unique=True), max_size=max_sets))
    if sets and draw(st.booleans()):
        sets.append(list(reversed(draw(st.sampled_from(sets)))))  # a duplicate, keys in another order
    return sets


# Golden values: the hash family is part of what the output means; a change here is a breaking change.
GOLDEN_SETS = [[1, 2, 3], [], [2**64 - 1], [0, 42]]
GOLDEN_SEED_1 = [
    [1576246925, 1969817291, 3249286225, 1639560329],
    [4294967295, 4294967295, 4294967295, 4294967295],
    [2260027161, 2465906723, 1308595196, 1487771741],
    [1779363386, 1908508304, 1109258038, 2246556431],
]
GOLDEN_SEED_MAX = [
    [1059302342, 1234413669, 959890495, 1515387539],
    [4294967295, 4294967295, 4294967295, 4294967295],
    [1382128377, 1435571853, 1135838477, 4281054331],
    [2914952844, 812998342, 3536458333, 1079878712],
]
GOLDEN_SEED_1_BITS_16 = [
    [40589, 1739, 11345, 46217],
    [65535, 65535, 65535, 65535],
    [18201, 49187, 37884, 39005],
    [60986, 34448, 61238, 47887],
]


@pytest.mark.kernel_paths("compiled", "python", "jit")
def test_golden_signature_values_are_pinned():
    indptr, keys = csr(GOLDEN_SETS)
    assert signatures(indptr, keys, 4, seed=1).tolist() == GOLDEN_SEED_1
    assert signatures(indptr, keys, 4, seed=2**64 - 1).tolist() == GOLDEN_SEED_MAX
    assert signatures(indptr, keys, 4, seed=1, bits=16).tolist() == GOLDEN_SEED_1_BITS_16


def test_family_parameters_are_the_reference_splitmix64_stream():
    # First outputs of Vigna's splitmix64.c seeded with 0, taken in pairs (a_k, b_k).
    a, b = permutation_params(2, seed=0)
    assert a.tolist() == [0xE220A8397B1DCDAF, 0x06C45D188009454F]
    assert b.tolist() == [0x6E789E6AA1B965F4, 0xF88BB8A8724C81EC]


def test_more_permutations_extend_fewer():
    indptr, keys = csr([[5, 6, 7], [8]])
    assert (signatures(indptr, keys, 10, seed=9)[:, :4] == signatures(indptr, keys, 4, seed=9)).all()


@pytest.mark.kernel_paths("compiled", "python")
@settings(max_examples=60, deadline=None)
@given(corpora(), st.integers(1, 9), U64, st.sampled_from([None, 1, 3, 8, 12, 16, 17, 32]))
def test_signatures_equal_the_python_int_oracle(sets, num_perm, seed, bits):
    indptr, keys = csr(sets)
    sig = signatures(indptr, keys, num_perm, seed=seed, bits=bits, jobs=2)
    sentinel = int(np.iinfo(sig.dtype).max)
    expected = [naive_lsh.signature(s, num_perm, seed, bits, sentinel) for s in sets]
    assert sig.shape == (len(sets), num_perm)
    assert sig.dtype == signature_dtype(bits)
    assert sig.tolist() == expected


@settings(max_examples=30, deadline=None)
@given(corpora(max_sets=30), st.integers(2, 5))
def test_signatures_do_not_depend_on_jobs(sets, jobs):
    indptr, keys = csr(sets)
    assert (signatures(indptr, keys, 7, jobs=1) == signatures(indptr, keys, 7, jobs=jobs)).all()


def test_many_rows_split_over_threads_equal_one_thread():
    rng = np.random.default_rng(11)
    sizes = rng.integers(0, 50, 3000)
    indptr = np.concatenate(([0], np.cumsum(sizes)))
    keys = rng.integers(0, 2**64, indptr[-1], dtype=np.uint64)
    assert (signatures(indptr, keys, 16, jobs=1) == signatures(indptr, keys, 16, jobs=4)).all()


def test_a_repeated_key_changes_nothing_and_order_does_not_matter():
    indptr, keys = csr([[3, 1, 2], [1, 2, 3, 3, 1]])
    sig = signatures(indptr, keys, 8)
    assert (sig[0] == sig[1]).all()


def test_signed_keys_count_by_their_bit_pattern():
    indptr = np.array([0, 2])
    signed = np.array([-1, 5], dtype=np.int64)
    assert (signatures(indptr, signed, 6) == signatures(indptr, signed.view(np.uint64), 6)).all()


def test_empty_sets_are_sentinel_rows_and_reported():
    indptr, keys = csr([[], [7], [], [7, 8]])
    sig = signatures(indptr, keys, 5)
    assert empty_rows(indptr).tolist() == [True, False, True, False]
    assert empty_signatures(sig).tolist() == [True, False, True, False]
    assert (sig[0] == 0xFFFFFFFF).all()
    # With fewer bits than the dtype holds, no real value reaches the sentinel.
    small = signatures(indptr, keys, 5, bits=4)
    assert small.dtype == np.uint8 and (small[[1, 3]] <= 15).all()
    assert empty_signatures(small).tolist() == [True, False, True, False]


def test_no_sets_give_an_empty_matrix():
    assert signatures(np.array([0]), np.array([], np.uint64), 3).shape == (0, 3)


@pytest.mark.parametrize("kwargs, words", [
    (dict(num_perm=0), ["num_perm", "at least 1", "0"]),
    (dict(num_perm=-3), ["num_perm", "-3"]),
    (dict(num_perm=4, bits=0), ["bits", "1 and 32", "0"]),
    (dict(num_perm=4, bits=33), ["bits", "33"]),
    (dict(num_perm=4, jobs=-2), ["jobs", "-2"]),
    (dict(num_perm=4, seed=-1), ["seed", "-1"]),
    (dict(num_perm=2.5), ["num_perm", "2.5"]),
    (dict(num_perm=100_000_000), ["num_perm 100,000,000", "limit of 4,096", "num_perm=4096 or less"]),
    (dict(num_perm=4, jobs=100_000), ["jobs 100,000", "limit of 256"]),
])
def test_bad_parameters_raise_usage_errors_with_the_numbers(kwargs, words):
    indptr, keys = csr([[1, 2]])
    with pytest.raises(UsageError) as info:
        signatures(indptr, keys, **kwargs)
    for word in words:
        assert word in str(info.value)


def test_malformed_csr_is_a_value_error():
    with pytest.raises(ValueError, match="indptr"):
        signatures(np.array([0, 3]), np.array([1, 2], np.uint64), 4)


def test_estimate_of_identical_disjoint_and_empty_sets():
    indptr, keys = csr([[1, 2, 3], [3, 2, 1], list(range(100, 160)), [], []])
    sig = signatures(indptr, keys, 32)
    assert estimate(sig[0], sig[1]) == 1.0
    assert estimate(sig[0], sig[2]) == 0.0
    assert estimate(sig[3], sig[4]) == 0.0  # J of an empty set with anything, itself included, is 0
    assert estimate(sig[0], sig[3]) == 0.0


def test_b_bit_estimate_is_corrected_for_chance_agreement():
    a = np.array([0, 1, 0, 1], np.uint8)
    b = np.array([0, 1, 1, 0], np.uint8)
    # Half the 1-bit values agree, as chance alone would: the corrected estimate is 0.
    assert estimate(a, b) == 0.5
    assert estimate(a, b, bits=1) == 0.0
    assert estimate(a, a, bits=1) == 1.0


def test_estimate_pairs_equals_estimate_per_pair():
    rng = np.random.default_rng(3)
    sets = [rng.choice(40, rng.integers(0, 20), replace=False) for _ in range(30)]
    indptr, keys = csr(sets)
    for bits in (None, 3):
        sig = signatures(indptr, keys, 24, bits=bits)
        left, right = rng.integers(0, 30, 200), rng.integers(0, 30, 200)
        got = estimate_pairs(sig, left, right, bits=bits, empty=empty_rows(indptr))
        assert got.dtype == np.float64
        assert got.tolist() == [estimate(sig[i], sig[j], bits=bits) for i, j in zip(left, right)]


def planted_pairs(similarity_tenths, pairs, union, rng):
    """Pairs of sets of random distinct keys with Jaccard exactly ``similarity_tenths / 10``."""
    common = similarity_tenths * union // 10
    only_a = (union - common) // 2
    sets = []
    for _ in range(pairs):
        k = rng.integers(0, 2**64, union, dtype=np.uint64)
        assert np.unique(k).size == union
        sets += [k[: only_a + common], k[only_a:]]  # |A ∩ B| = common, |A ∪ B| = union
    return sets


# Seeded statistical check of the family's min-wise behaviour: mean estimate per planted similarity.
ESTIMATE_SEED, ESTIMATE_PAIRS, ESTIMATE_K, ESTIMATE_Z = 20260601, 200, 64, 4.0


@pytest.mark.parametrize("bits", [None, 2, 16])
def test_estimates_are_unbiased_on_planted_similarities(bits):
    rng = np.random.default_rng(ESTIMATE_SEED)
    for tenths in (3, 5, 7, 9):
        indptr, keys = csr(planted_pairs(tenths, ESTIMATE_PAIRS, 100, rng))
        sig = signatures(indptr, keys, ESTIMATE_K, seed=ESTIMATE_SEED, bits=bits)
        est = estimate_pairs(sig, np.arange(0, 2 * ESTIMATE_PAIRS, 2), np.arange(1, 2 * ESTIMATE_PAIRS, 2), bits=bits)
        s = tenths / 10
        # One value agrees with probability C + (1 - C) s, C = 2**-bits; the correction divides by 1 - C.
        c = 0.0 if bits is None else 2.0 ** -bits
        q = c + (1 - c) * s
        se = np.sqrt(q * (1 - q) / (ESTIMATE_PAIRS * ESTIMATE_K)) / (1 - c)
        assert abs(est.mean() - s) <= ESTIMATE_Z * se, (
            f"bits={bits}: mean estimate {est.mean():.4f} at J={s} is more than {ESTIMATE_Z} standard errors "
            f"({se:.4f}) away ({ESTIMATE_PAIRS} pairs, K={ESTIMATE_K}, seed {ESTIMATE_SEED})")


def test_sequential_keys_are_spread_like_random_ones():
    # Keys 0, 1, 2, ... (no entropy of their own) still give unbiased estimates thanks to the key mix.
    pairs, K = 300, 64
    sets = []
    for p in range(pairs):
        base = 1000 * p
        sets += [list(range(base, base + 75)), list(range(base + 25, base + 100))]  # J = 50/100
    indptr, keys = csr(sets)
    est = estimate_pairs(signatures(indptr, keys, K), np.arange(0, 2 * pairs, 2), np.arange(1, 2 * pairs, 2))
    se = np.sqrt(0.25 / (pairs * K))
    assert abs(est.mean() - 0.5) <= 4 * se, f"mean {est.mean():.4f} vs 0.5 ± 4 × {se:.4f}"
