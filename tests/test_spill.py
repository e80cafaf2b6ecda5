"""Sorted runs of pairs on disk and their k-way merge (allpairs/output/spill.py)."""
from __future__ import annotations

import errno
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allpairs.errors import OutputError, UsageError
from allpairs.output import spill
from allpairs.output.spill import PairRuns, parse_memory
from allpairs.pairs.result import PairChunk


def _chunk(keys: list[int]) -> PairChunk:
    k = np.array(sorted(keys), np.int64)
    left, right = (k >> 32).astype(np.int32), (k & 0xFFFFFFFF).astype(np.int32)
    return PairChunk(left, right, (left + right).astype(np.int32) % 97, left, right)


@st.composite
def runs_of_pairs(draw):
    """Distinct document pairs dealt into runs at random, each run sorted; a chunk size for each run."""
    n_docs = draw(st.integers(1, 60))
    pairs = draw(st.sets(st.tuples(st.integers(0, n_docs - 1), st.integers(0, n_docs - 1)), max_size=400))
    keys = [(a << 32) | b for a, b in pairs]
    n_runs = draw(st.integers(1, 8))
    deal = [draw(st.integers(0, n_runs - 1)) for _ in keys]
    return n_docs, [[k for k, r in zip(keys, deal) if r == i] for i in range(n_runs)], draw(st.integers(1, 50))


@settings(max_examples=60, deadline=None)
@given(runs_of_pairs(), st.integers(1, 300))
def test_merged_runs_are_every_pair_once_in_order(tmp_path_factory, case, max_pairs):
    n_docs, runs, chunk = case
    where = tmp_path_factory.mktemp("spill") / "out.tsv"
    # A budget this small reads a few records of each run at a time (many rounds of the fence), and
    # more than three runs are merged into one as they come.
    saved = spill.MIN_READ, spill.FAN_IN
    spill.MIN_READ, spill.FAN_IN = 3, 3
    try:
        store = PairRuns(where.parent, memory=64)
        for keys in runs:
            ordered = sorted(keys)
            store.add(_chunk(ordered[i:i + chunk]) for i in range(0, max(len(ordered), 1), chunk))
        assert len(store.runs) <= 3
        merged = list(store.merge(max_pairs=max_pairs))
    finally:
        spill.MIN_READ, spill.FAN_IN = saved
    got = [(int(a), int(b), int(o)) for left, right, overlap in merged for a, b, o in zip(left, right, overlap)]
    want = sorted(((k >> 32), k & 0xFFFFFFFF) for keys in runs for k in keys)
    assert got == [(a, b, (a + b) % 97) for a, b in want]
    assert all(len(left) <= max_pairs for left, _, _ in merged)
    directory = store.directory
    store.close()
    assert directory is None or not os.path.exists(directory)
    assert os.listdir(where.parent) == []


def test_the_spill_directory_is_beside_the_output_and_gone_after_close(tmp_path):
    store = PairRuns(tmp_path)
    store.add([_chunk([1, 2, 3])])
    assert os.path.dirname(store.directory) == str(tmp_path)
    assert os.path.basename(store.directory).startswith(".allpairs-spill.")
    store.close()
    assert os.listdir(tmp_path) == []


def test_a_full_disk_while_spilling_is_one_line_naming_the_directory_and_leaves_nothing(tmp_path, monkeypatch):
    written = []

    def full(fd, data):
        if written:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written.append(len(data))
        return len(data)

    monkeypatch.setattr(spill, "_write", full)
    store = PairRuns(tmp_path, needed=lambda so_far: 10 * so_far)
    store.add([_chunk([1, 2, 3])])
    with pytest.raises(OutputError) as e:
        store.add([_chunk([4, 5])])
    message = str(e.value)
    assert "\n" not in message
    assert f"no space left in {tmp_path} for the spilled pairs: about 600 bytes needed (36 bytes written)" in message
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("text, value", [("512M", 512 << 20), ("1G", 1 << 30), ("1.5GiB", 3 << 29),
                                         ("800k", 800 << 10), ("65536", 65536), (1 << 20, 1 << 20),
                                         (None, spill.DEFAULT_MEMORY)])
def test_memory_sizes_are_read_in_powers_of_1024(text, value):
    assert parse_memory(text) == value


@pytest.mark.parametrize("text", ["lots", "-1G", "12 parsecs", "1k", True])
def test_a_memory_size_that_is_no_size_or_too_small_is_refused_in_one_line(text):
    with pytest.raises(UsageError) as e:
        parse_memory(text)
    assert "\n" not in str(e.value)
