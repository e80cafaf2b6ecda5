"""The XXH64 kernel against the independent xxhash package: every length class, several seeds."""
from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from allpairs.shingles._hash_kernel import xxh64_spans


@pytest.mark.kernel_paths("compiled", "python")
@pytest.mark.parametrize("seed", [0, 1, 0x9E3779B185EBCA87, 2**64 - 1])
def test_xxh64_spans_agree_with_the_xxhash_package(seed):
    rng = random.Random(seed)
    # 0-80 bytes covers the tail paths (8-, 4- and 1-byte steps) and one or two 32-byte stripes.
    data = [bytes(rng.randrange(256) for _ in range(n)) for n in [*range(81), 255, 1000]]
    offsets = np.zeros(len(data) + 1, np.int64)
    np.cumsum([len(d) for d in data], out=offsets[1:])
    buf = np.frombuffer(b"".join(data), dtype=np.uint8)
    got = xxh64_spans(buf, offsets, np.uint64(seed)).tolist()
    assert got == [xxhash.xxh64_intdigest(d, seed) for d in data]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.text(alphabet=st.sampled_from(["a", "b", "\x00", "é", "\ud800", "😀", " "]), max_size=4),
                         max_size=5), max_size=5))
def test_sets_of_strings_hash_to_xxh64_of_each_tokens_utf8_whatever_the_tokens_hold(sets):
    from allpairs.shingles import hash_sets

    indptr, keys = hash_sets(sets)
    assert indptr.tolist() == [0] + list(itertools.accumulate(len(s) for s in sets))
    assert keys.tolist() == [xxhash.xxh64_intdigest(t.encode("utf-8", "surrogatepass")) for s in sets for t in s]


@pytest.mark.kernel_paths("compiled", "python")
@pytest.mark.parametrize("seed", [0, 2**64 - 1])
def test_xxh64_decimal_is_xxh64_of_the_integers_str(seed):
    from allpairs.shingles._hash_kernel import xxh64_decimal

    rng = np.random.default_rng(seed % 1000)
    edges = [0, 1, 9, 10, 99, 2**63 - 1] + [10**k + d for k in range(19) for d in (-1, 0)]
    signed = np.concatenate([np.array(edges + [-v for v in edges] + [-2**63], np.int64),
                             rng.integers(-2**63, 2**63 - 1, 500, dtype=np.int64)])
    got = xxh64_decimal(signed.view(np.uint64), True, np.uint64(seed)).tolist()
    assert got == [xxhash.xxh64_intdigest(str(int(v)).encode(), seed) for v in signed]
    unsigned = np.concatenate([np.array(edges + [2**63, 10**19, 2**64 - 1], np.uint64),
                               rng.integers(0, 2**64 - 1, 500, dtype=np.uint64)])
    got = xxh64_decimal(unsigned, False, np.uint64(seed)).tolist()
    assert got == [xxhash.xxh64_intdigest(str(int(v)).encode(), seed) for v in unsigned]
