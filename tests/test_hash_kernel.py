"""The XXH64 kernel against the independent xxhash package: every length class, several seeds."""
from __future__ import annotations

import random

import numpy as np
import pytest
import xxhash

from allpairs._hash_kernel import xxh64_spans


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
