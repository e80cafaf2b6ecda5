"""The global order: ranks rare to frequent, sets sorted by (size, tokens), identical sets grouped."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allpairs import order
from allpairs.order import order_sets

from naive import global_order
from strategies import corpora


def csr(sets):
    indptr = np.zeros(len(sets) + 1, np.int64)
    indptr[1:] = np.cumsum([len(s) for s in sets])
    return indptr, np.array([t for s in sets for t in s], np.uint64)


@pytest.mark.kernel_paths("compiled", "python")
@settings(max_examples=200, deadline=None)
@given(corpora(max_docs=30), st.integers(1, 3))
def test_order_invariants(sets, min_size):
    o = order_sets(*csr(sets), min_size=min_size)
    distinct = [set(s) for s in sets]
    # Every rank's key, document frequency non-decreasing along ranks.
    df = [sum(int(k) in d for d in distinct) for k in o.keys.tolist()]
    assert df == sorted(df)
    # Each distinct set: strictly increasing ranks that map back to its keys.
    rows = [o.tokens[o.indptr[i]:o.indptr[i + 1]].tolist() for i in range(o.num_sets)]
    assert all(r == sorted(set(r)) for r in rows)
    assert [(len(r), r) for r in rows] == sorted((len(r), r) for r in rows)
    assert len({tuple(r) for r in rows}) == len(rows)
    for i, r in enumerate(rows):
        members = o.group_docs[o.group_indptr[i]:o.group_indptr[i + 1]].tolist()
        assert members == sorted(members) and members
        for d in members:
            assert {int(o.keys[t]) for t in r} == distinct[d]
            assert o.doc_set[d] == i and o.doc_size[d] == len(r)
    # Documents below min_size (and empty ones) belong to no set.
    for d, s in enumerate(distinct):
        assert (o.doc_set[d] >= 0) == (len(s) >= min_size)
        assert o.doc_size[d] == len(s)


@pytest.mark.kernel_paths("compiled", "python")
def test_ties_in_frequency_go_by_first_occurrence():
    o = order_sets(*csr([[30, 10], [20, 10]]))
    # 10 is in two documents, the others in one: 30 and 20 first, in input order.
    assert o.keys.tolist() == [30, 20, 10]


def as_naive(o):
    """An OrderedSets in the shape of naive.global_order."""
    return {
        "keys": o.keys.tolist(),
        "sets": [o.tokens[o.indptr[i]:o.indptr[i + 1]].tolist() for i in range(o.num_sets)],
        "members": [o.group_docs[o.group_indptr[i]:o.group_indptr[i + 1]].tolist() for i in range(o.num_sets)],
    }


@settings(max_examples=150, deadline=None)
@given(corpora(max_docs=40, max_size=30), st.integers(1, 6), st.sampled_from([1, 3, 1000]), st.sampled_from([1, 2, 3]))
def test_order_sets_agrees_with_the_oracle_however_the_keys_are_partitioned(sets, pbits, rounds, jobs):
    # Many partitions and copy rounds (one partition a round at 1000) on small corpora; with jobs > 1,
    # runs of groups numbered side by side and their ids moved up after.
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(order, "partition_bits", lambda n: pbits)
        mp.setattr(order, "_COPY_PARTS", rounds)
        mp.setattr(order, "_COPY_AT_LEAST", 0)
        o = order_sets(*csr(sets), jobs=jobs)
        one = order_sets(*csr(sets), jobs=1)
    expected = global_order(sets)
    got = as_naive(o)
    assert got == {k: expected[k] for k in got}
    assert o.doc_size.tolist() == [len(r) for r in expected["docs"]]
    assert o.tokens.tolist() == one.tokens.tolist() and o.keys.tolist() == one.keys.tolist()


def test_order_sets_agrees_with_the_oracle_on_hash_keys_with_repeats():
    # Keys spread over the whole 64 bits, repeats within documents, a few thousand partitions' worth.
    rng = np.random.default_rng(7)
    vocab = rng.integers(0, 2**64, size=3000, dtype=np.uint64)
    sets = [vocab[rng.zipf(1.3, size=rng.integers(0, 400)) % len(vocab)].tolist() for _ in range(120)]
    sets += [sets[3], sets[5][::-1], []]
    expected = global_order(sets)
    got = as_naive(order_sets(*csr(sets)))
    assert got == {k: expected[k] for k in got}


@settings(max_examples=60, deadline=None)
@given(corpora(max_docs=40, max_size=30), st.sampled_from([-1, 0, 64]))
def test_distinct_sets_gathered_by_the_kernel_past_the_large_page_bound_are_the_same(sets, bound):
    # Past GATHERED_LARGE_UNTIL bytes of tokens the distinct sets are gathered by gather_csr's own allocation,
    # below it into large pages by gather_into: the same sets either way (a bound of -1: always gather_csr).
    expected = global_order(sets)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(order, "GATHERED_LARGE_UNTIL", bound)
        got = as_naive(order_sets(*csr(sets)))
    assert got == {k: expected[k] for k in got}



@pytest.mark.kernel_paths("compiled", "python")
def test_one_table_numbering_gives_way_to_partitions_past_its_distinct_keys():
    # A small input is numbered by one hash table, which stops past SMALL_DISTINCT distinct keys: the
    # partitioned numbering then starts over, and the order is the oracle's either way.
    from allpairs.order._kernel import SMALL_DISTINCT, number_small

    rng = np.random.default_rng(11)
    vocab = rng.permutation(rng.integers(0, 2**64, size=SMALL_DISTINCT + 500, dtype=np.uint64))
    sets = [chunk.tolist() + vocab[rng.integers(0, len(vocab), size=20)].tolist()
            for chunk in np.array_split(vocab, 90)]
    indptr, keys = csr(sets)
    assert len(np.unique(keys)) > SMALL_DISTINCT
    assert number_small(indptr, keys, np.empty(len(keys), np.int32), np.empty(len(keys), np.int32)) == -1
    expected = global_order(sets)
    got = as_naive(order_sets(indptr, keys))
    assert got == {k: expected[k] for k in got}
    fewer = [s[:300] for s in sets]  # under SMALL_DISTINCT distinct keys: the one table numbers them all
    indptr, keys = csr(fewer)
    assert number_small(indptr, keys, np.empty(len(keys), np.int32), np.empty(len(keys), np.int32)) == len(np.unique(keys))
    expected = global_order(fewer)
    got = as_naive(order_sets(indptr, keys))
    assert got == {k: expected[k] for k in got}


@pytest.mark.long_running
@pytest.mark.kernel_paths("compiled", "python")
def test_ranks_are_sorted_row_by_row_past_the_one_pass_sort():
    # Up to TRANSPOSE_ENTRIES entries every row's ranks are sorted in one pass over all of them; past it,
    # row by row (insertion sort under 64, radix above): both give the oracle's sets.
    from allpairs.order._kernel import TRANSPOSE_ENTRIES

    rng = np.random.default_rng(5)
    vocab = rng.integers(0, 2**64, size=100_000, dtype=np.uint64)
    sizes = [3, 50, 63, 64, 65, 300, 2500]
    sets = [vocab[rng.integers(0, len(vocab), size=sizes[i % len(sizes)])].tolist() for i in range(1400)]
    indptr, keys = csr(sets)
    assert sum(len(set(s)) for s in sets) > TRANSPOSE_ENTRIES
    expected = global_order(sets)
    got = as_naive(order_sets(indptr, keys))
    assert got == {k: expected[k] for k in got}

# Rows of keys shaped to reach every branch of the row sort: hash keys (the
# bucket sort), small or equal keys and keys sharing their top bits (crowded
# buckets: the quicksort takes over), descending runs, rows of 0 to 300 keys.
_KEYS = {
    "hash": st.integers(0, 2**64 - 1),
    "small": st.integers(0, 40),
    "top bits shared": st.integers(0, 2**30),
    "few hashes": st.sampled_from([0, 1, 2**63, 2**64 - 1, 0x9E3779B97F4A7C15]),
}


@st.composite
def key_rows(draw):
    kind = draw(st.sampled_from(sorted(_KEYS)))
    rows = draw(st.lists(st.lists(_KEYS[kind], max_size=draw(st.sampled_from([3, 40, 300]))), max_size=8))
    if draw(st.booleans()):
        rows = [sorted(r, reverse=True) for r in rows]
    return rows


@settings(max_examples=200, deadline=None)
@given(key_rows())
def test_rows_are_sorted_and_keys_counted_as_sets_of_python_ints_say(rows):
    from allpairs._kernels.csr import distinct_sorted_rows
    from allpairs.order._kernel import count_distinct

    indptr, keys = csr(rows)
    ptr, out = distinct_sorted_rows(indptr, keys)
    assert [out[a:b].tolist() for a, b in zip(ptr[:-1], ptr[1:])] == [sorted(set(r)) for r in rows]
    every = {k for r in rows for k in r}
    for pbits in (1, 4, 9):
        assert count_distinct(keys, np.int64(pbits)) == len(every)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-1, 70_000), max_size=300), st.sampled_from([np.int32, np.int64]),
       st.sampled_from([10, 300, 65_535, 65_536, 70_000]))
def test_stable_order_is_numpy_s_stable_argsort(values, dtype, top):
    # Values within 16 bits of the floor take numpy's radix sort: the same order as its timsort.
    a = np.array([min(v, top) for v in values], dtype)
    assert order.stable_order(a, low=-1).tolist() == np.argsort(a, kind="stable").tolist()
    b = np.maximum(a, 0)
    assert order.stable_order(b).tolist() == np.argsort(b, kind="stable").tolist()


def test_large_work_arrays_are_large_pages_of_their_own_and_typed_as_numpy_s():
    import mmap
    import platform
    import sys

    from allpairs._kernels.aot import type_name
    from allpairs._kernels.malloc import LARGE_FROM, LARGE_PAGE, large_empty, ordinary_pages

    for n, dtype in [(10, np.int32), (LARGE_FROM // 4 - 1, np.int32), (LARGE_FROM // 4, np.int32),
                     (3 * LARGE_FROM // 8 + 1, np.uint64)]:
        a = large_empty(n, dtype)
        assert a.shape == (n,) and a.dtype == dtype and type_name(a) == type_name(np.empty(n, dtype))
        a[:] = 7
        assert (a == 7).all() and a.flags.writeable
        mapped = a.nbytes >= LARGE_FROM and hasattr(mmap, "MADV_HUGEPAGE")
        assert a.flags.owndata != mapped  # its own mapping, not numpy's memory from malloc
        release = tuple(int(x) for x in platform.release().split(".")[:2] if x.isdigit())
        if mapped and sys.platform == "linux" and release >= (6, 7):  # Linux aligns it on a large page
            assert a.ctypes.data % LARGE_PAGE == 0
    with ordinary_pages():  # a Spark task's body: numpy's own memory, whatever the size
        assert large_empty(LARGE_FROM, np.uint8).flags.owndata
    assert large_empty(LARGE_FROM, np.uint8).flags.owndata != hasattr(mmap, "MADV_HUGEPAGE")


def test_the_host_taking_free_memory_back_is_read_from_the_virtio_balloon_s_features(tmp_path):
    from allpairs._kernels.malloc import host_reclaims_free_memory

    def devices(*found):
        root = tmp_path / str(len(list(tmp_path.iterdir())))
        for i, (device, features) in enumerate(found):
            (root / f"virtio{i}").mkdir(parents=True)
            (root / f"virtio{i}" / "device").write_text(device + "\n")
            (root / f"virtio{i}" / "features").write_text(features + "\n")
        return str(root)

    reporting = "0110010100" + "0" * 54  # bit 5: VIRTIO_BALLOON_F_REPORTING (this project's VM's balloon)
    check = host_reclaims_free_memory.__wrapped__
    assert check(devices(("0x0002", "0" * 64), ("0x0005", reporting)))
    assert not check(devices(("0x0005", "0110000100" + "0" * 54)))  # a balloon without free page reporting
    assert not check(devices(("0x0002", reporting)))  # bit 5 of another device means something else
    assert not check(devices(("0x0005", "01100")))  # features too short to have the bit
    assert not check(str(tmp_path / "absent"))  # no virtio bus: not such a VM


def test_small_page_records_only_past_their_threshold_and_where_the_host_takes_memory_back(monkeypatch):
    import mmap

    from allpairs._kernels import malloc

    monkeypatch.setattr(malloc, "SMALL_FROM", 1 << 20)
    for reclaims in (True, False):
        monkeypatch.setattr(malloc, "host_reclaims_free_memory", lambda: reclaims)
        for n, dtype in [(10, np.uint32), ((1 << 18) - 1, np.uint32), (1 << 18, np.uint32), (3 << 17, np.uint64)]:
            a = malloc.small_pages_empty(n, dtype)
            assert a.shape == (n,) and a.dtype == dtype and a.flags.writeable
            a[:] = 5
            assert (a == 5).all()
            own = reclaims and a.nbytes >= 1 << 20 and hasattr(mmap, "MADV_HUGEPAGE")
            assert a.flags.owndata != own  # a mapping of its own (small pages), else numpy's memory


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 2**31 - 1), max_size=6), min_size=1, max_size=12), st.data(),
       st.sampled_from([np.int32, np.uint64]))
def test_gathered_sets_are_the_rows_asked_for_in_their_order(sets, data, dtype):
    from allpairs.order._kernel import gather_csr, gather_into

    rows = np.array(data.draw(st.lists(st.integers(0, len(sets) - 1), max_size=15)), np.int64)
    indptr = np.zeros(len(sets) + 1, np.int64)
    indptr[1:] = np.cumsum([len(s) for s in sets])
    tokens = np.array([t for s in sets for t in s], dtype)
    want = [sets[r] for r in rows.tolist()]
    ptr, out = gather_csr(indptr, tokens, rows)
    assert [out[ptr[k]:ptr[k + 1]].tolist() for k in range(len(rows))] == want and out.dtype == dtype
    room = data.draw(st.integers(0, 5))
    into_ptr, into = np.full(len(rows) + 1, -1, np.int64), np.full(len(out) + room, 7, dtype)
    gather_into(indptr, tokens, rows, into_ptr, into)
    assert into_ptr.tolist() == ptr.tolist() and into[:len(out)].tolist() == out.tolist()
    assert (into[len(out):] == 7).all()  # nothing written past the sets' tokens
