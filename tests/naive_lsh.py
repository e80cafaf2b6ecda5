"""Slow, obviously correct oracles for the LSH path: Python ints and dicts only.

Written from the definitions in the docstring of :mod:`allpairs.lsh.minhash`
and :func:`allpairs.lsh.bands.candidates`; they share no code with the package.
"""
from __future__ import annotations

from itertools import combinations

M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def mix64(z: int) -> int:
    """splitmix64 finaliser on a Python int, reduced mod 2**64 after every step."""
    z &= M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def family(num_perm: int, seed: int) -> list[tuple[int, int]]:
    """(a_k, b_k) for k < num_perm: the splitmix64 stream from ``seed``, taken in pairs."""
    state = seed
    stream = []
    for _ in range(2 * num_perm):
        state = (state + GOLDEN) & M64
        stream.append(mix64(state))
    return list(zip(stream[0::2], stream[1::2]))


def signature(keys, num_perm: int, seed: int = 1, bits: int | None = None, sentinel: int = 0xFFFFFFFF) -> list[int]:
    """MinHash of one set of uint64 keys: min over keys of ``(a*y + b mod 2**64) >> 32``, ``y = mix64(key) >> 32``."""
    keys = [int(k) & M64 for k in keys]
    if not keys:
        return [sentinel] * num_perm
    ys = [mix64(k) >> 32 for k in keys]
    mask = (1 << bits) - 1 if bits else 0xFFFFFFFF
    return [min(((a * y + b) & M64) >> 32 for y in ys) & mask for a, b in family(num_perm, seed)]


def candidates(sig_rows, bands: int, rows: int, max_bucket: int | None = None, empty=None,
               max_expand: int | None = None):
    """Banding with a dict per band: returns (pairs, oversized, skipped, largest, joined, joined_pairs).

    ``pairs``: sorted list of (i, j), i < j, sharing a bucket of at most
    ``max_bucket`` and at most ``max_expand`` rows in some band; ``oversized``:
    sorted (band, size) of buckets above ``max_bucket``; ``skipped``: the pairs
    those would have given (summed over bands); ``largest``: the largest bucket
    per band; ``joined``: sorted (band, size) of buckets above ``max_expand``
    and at most ``max_bucket``; ``joined_pairs``: sorted (i, j) sharing such a
    bucket in some band. Rows flagged in ``empty`` are left out.
    """
    sig_rows = [tuple(int(v) for v in row) for row in sig_rows]
    empty = [False] * len(sig_rows) if empty is None else [bool(e) for e in empty]
    pairs, oversized, skipped, largest, joined, joined_pairs = set(), [], 0, [], [], set()
    for band in range(bands):
        buckets: dict[tuple, list[int]] = {}
        for i, row in enumerate(sig_rows):
            if not empty[i]:
                buckets.setdefault(row[band * rows:(band + 1) * rows], []).append(i)
        largest.append(max((len(v) for v in buckets.values()), default=0))
        for members in buckets.values():
            if max_bucket is not None and len(members) > max_bucket:
                oversized.append((band, len(members)))
                skipped += len(members) * (len(members) - 1) // 2
            elif max_expand is not None and len(members) > max_expand:
                joined.append((band, len(members)))
                joined_pairs.update(combinations(members, 2))
            else:
                pairs.update(combinations(members, 2))
    return sorted(pairs), sorted(oversized), skipped, largest, sorted(joined), sorted(joined_pairs)
