"""The search index against the brute-force oracle: queries, a growing index, save and load."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import naive
from allpairs import Corpus, EmptyCorpusError, InputError, UsageError
from allpairs.index import IndexFileError, SearchIndex, blocks, ids as index_ids, search, sets as index_sets
from allpairs.index.ids import continue_lines
from allpairs.pipeline import Stats
from allpairs.index.store import FORMAT, MAGIC
from allpairs.measures import JOIN_MEASURES
from allpairs.shingles import hash_sets
from strategies import corpus_and_threshold, corpora


def answers(index: SearchIndex, queries, threshold=None):
    """The index's matches as oracle tuples, indexed documents named by their ids (positions)."""
    m = index.query(queries, threshold)
    return sorted((q, int(index.ids[d]), o, qs, ds) for q, d, o, qs, ds in m)


def split(sets, cut):
    """Indexed sets and queries; queries get tokens the index has never seen (>= 1000) too."""
    indexed = sets[:cut]
    queries = [list(s) for s in sets[cut:]] + [list(s) + [1000 + k] for k, s in enumerate(sets[:3])] + [[1000, 1001]]
    return indexed, queries


MEASURES = st.sampled_from(JOIN_MEASURES)


def for_measure(measure, t):
    """The threshold for a measure: overlap counts tokens (1..4), the others take t as it is."""
    return t.numerator % 4 + 1 if measure == "overlap" else t


@pytest.mark.kernel_paths("compiled", "python", "jit")
@settings(max_examples=80, deadline=None)
@given(corpus_and_threshold(), st.integers(0, 30), st.sampled_from([Fraction(1, 10), Fraction(1, 2), None]), MEASURES)
def test_queries_match_the_oracle(case, cut, lower, measure):
    sets, t = case
    t = for_measure(measure, t)
    indexed, queries = split(sets, cut)
    t0 = t if lower is None else min(t, lower if measure != "overlap" else 1)
    if not any(indexed):
        with pytest.raises(EmptyCorpusError):
            SearchIndex.build(indexed, t0, measure=measure)
        return
    index = SearchIndex.build(indexed, t0, measure=measure)
    assert answers(index, queries, t) == naive.rs_pairs(queries, indexed, t, measure)


@pytest.mark.kernel_paths("compiled", "python")
@settings(max_examples=50, deadline=None)
@given(corpus_and_threshold(), st.integers(1, 8), st.lists(st.integers(1, 6), max_size=8),
       st.sampled_from([1, 10**9]), MEASURES)
def test_growing_index_matches_the_oracle(case, first, chunks, min_delta, measure):
    sets, t = case
    t = for_measure(measure, t)
    sets = [[1]] + sets  # at least one non-empty set to build from
    index_sets.MIN_DELTA, saved = min_delta, index_sets.MIN_DELTA  # merge at every add, or never
    try:
        index = SearchIndex.build(sets[:first], t, measure=measure)
        pos = first
        for size in chunks + [len(sets)]:
            part = range(pos, min(pos + size, len(sets)))
            index.add(Corpus(ids=[str(d) for d in part], sets=[[str(x) for x in sets[d]] for d in part], kind="sets"))
            pos += size
    finally:
        index_sets.MIN_DELTA = saved
    kept = [d for d, s in enumerate(sets) if s]
    assert sorted(int(index.ids[d]) for d in range(len(index))) == kept
    queries = [list(s) for s in sets] + [[1000, 0], [1000]]
    assert answers(index, queries, t) == naive.rs_pairs(queries, sets, t, measure)


def test_added_tokens_are_found_and_ranked_rarer_than_built_ones():
    index = SearchIndex.build([["a", "b"], ["a", "c"]], 0.5)
    index.add([["new", "other", "a"], ["new", "other"]])
    rank = lambda tokens: index.vocab.rank(*hash_sets([tokens])).tokens  # noqa: E731
    assert rank(["new", "other"]).max() < 0 <= rank(["a", "b"]).min()
    assert answers(index, [["new", "other"]]) == [(0, 2, 2, 2, 3), (0, 3, 2, 2, 2)]


def test_query_below_the_index_threshold_is_refused():
    index = SearchIndex.build([["a", "b"], ["a", "c"]], 0.5)
    with pytest.raises(UsageError, match="below the index's 0.5"):
        index.query([["a"]], 0.4)
    assert answers(index, [["a", "b"]], "1") == [(0, 0, 2, 2, 2)]


def test_threshold_is_read_exactly_so_a_pair_at_seven_tenths_is_found():
    index = SearchIndex.build([list("abcdefg"), list("abcdefghij")], 0.7)
    assert answers(index, [list("abcdefghij")], 0.7) == [(0, 0, 7, 10, 7), (0, 1, 10, 10, 10)]


def test_query_shingle_settings_must_match_the_index():
    texts = ["the quick brown fox jumps", "the quick brown fox sleeps"]
    index = SearchIndex.build(texts, 0.5, shingle="word:2")
    assert len(index.query(texts)) == 4  # J = 3/5 between the two
    with pytest.raises(UsageError, match="holds word:2 shingles, not word:3"):
        index.query(texts, shingle="word:3")
    with pytest.raises(UsageError, match="normalisation"):
        index.query(texts, normalize=False)
    with pytest.raises(UsageError, match="not pre-tokenised sets"):
        index.query([["a"]])
    with pytest.raises(UsageError, match="give sets"):
        SearchIndex.build([["a"]], 0.5).query(["some text"])


@settings(max_examples=20, deadline=None)
@given(corpora(max_docs=16))
def test_save_and_load_round_trip(tmp_path_factory, sets):
    sets = [[0, 1]] + [s for s in sets if s]  # ids of added documents are their positions
    index = SearchIndex.build(sets[: len(sets) // 2 + 1], 0.3)
    index.add(sets[len(sets) // 2 + 1:])
    path = tmp_path_factory.mktemp("idx") / "corpus.idx"
    index.save(path)
    loaded = SearchIndex.load(path)
    queries = [list(s) for s in sets] + [[7, 1000]]
    assert answers(loaded, queries) == answers(index, queries) == naive.rs_pairs(queries, sets, Fraction(3, 10))
    assert [loaded.ids[d] for d in range(len(loaded))] == [index.ids[d] for d in range(len(index))]
    loaded.add([[0, 1, 2000]])  # a loaded (memory-mapped) index still grows
    assert answers(loaded, [[0, 1, 2000]], 1) == [(0, len(loaded) - 1, 3, 3, 3)]  # its id is its position


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "corpus.idx"
    SearchIndex.build([["a", "b", "c"], ["a", "b"], ["x"]], 0.5).save(path)
    return path


def test_truncated_file_is_refused(saved):
    data = saved.read_bytes()
    saved.write_bytes(data[:-10])
    with pytest.raises(IndexFileError, match="truncated"):
        SearchIndex.load(saved)


def test_altered_file_is_refused(saved):
    data = bytearray(saved.read_bytes())
    data[-3] ^= 0x40
    saved.write_bytes(bytes(data))
    with pytest.raises(IndexFileError, match="checksum"):
        SearchIndex.load(saved)


def test_file_of_another_format_version_is_refused(saved):
    data = bytearray(saved.read_bytes())
    data[16:20] = (FORMAT + 1).to_bytes(4, "little")
    saved.write_bytes(bytes(data))
    with pytest.raises(IndexFileError, match=f"format version {FORMAT + 1}, this allpairs reads version {FORMAT}"):
        SearchIndex.load(saved)


def test_other_files_are_refused(tmp_path):
    other = tmp_path / "notes.txt"
    other.write_text("x" * 100)
    with pytest.raises(IndexFileError, match="not an allpairs index"):
        SearchIndex.load(other)
    with pytest.raises(IndexFileError, match="not an allpairs index"):
        SearchIndex.load(tmp_path / "notes.txt") if other.write_bytes(MAGIC[:5]) else None


def test_saving_never_leaves_a_partial_file(saved, monkeypatch):
    before = saved.read_bytes()
    index = SearchIndex.build([["q", "r"]], 0.5)

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr("allpairs.index.store.os.fsync", boom)
    with pytest.raises(KeyboardInterrupt):
        index.save(saved)
    assert saved.read_bytes() == before
    assert [p.name for p in saved.parent.iterdir()] == [saved.name]


def test_scratch_arrays_are_left_clean_for_the_next_query():
    sets = [[k, k + 1, k + 2] for k in range(50)]
    index = SearchIndex.build(sets, 0.2)
    first = answers(index, sets)
    assert answers(index, sets) == first
    assert not np.any(index._scratch.free[0][0][0])  # (scratch rows, α cache) given back: its count row


def test_index_of_other_shingle_keys_is_refused(saved, monkeypatch):
    monkeypatch.setattr(search, "KEY_VERSION", search.KEY_VERSION + 1)
    with pytest.raises(IndexFileError, match="shingle keys of version"):
        SearchIndex.load(saved)


def test_adding_documents_identical_to_indexed_sets_adds_no_set():
    index = SearchIndex.build([["a", "b"], ["c", "d", "e"], ["a", "b"]], 0.5)
    assert index.num_sets == 2
    index.add([["b", "a"], ["x", "y"], ["y", "x"], ["c", "d", "e"]])  # two known sets, one new one twice
    assert (index.num_docs, index.num_sets) == (7, 3)
    assert answers(index, [["a", "b"], ["x", "y"]], 1) == [(0, 0, 2, 2, 2), (0, 2, 2, 2, 2), (0, 3, 2, 2, 2),
                                                            (1, 4, 2, 2, 2), (1, 5, 2, 2, 2)]


def test_adding_sets_takes_at_most_twice_the_memory_of_building_them():
    # The add used to hold one Python tuple per posting in a SortedList (3.6 times the build's
    # Python allocations here) and kept identical sets apart; tracemalloc counts what Python and numpy
    # allocate, the same on every run.
    import tracemalloc

    from allpairs._kernels.jit import use_kernels

    rng = np.random.default_rng(1)
    docs = [[str(int(x)) for x in rng.zipf(1.3, size=rng.integers(5, 25))] for _ in range(15000)]
    docs += docs[:5000]
    with use_kernels("compiled"):
        SearchIndex.build(docs[:100], 0.5)  # kernels loaded before measuring
        peaks = []
        for grow in (False, True):
            tracemalloc.start()
            if grow:
                index = SearchIndex.build(docs[:5], 0.5)
                index.add(docs)
            else:
                built = SearchIndex.build(docs, 0.5)
            peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
    assert index.num_sets == built.num_sets and len(index.postings.post) == len(built.postings.post)
    assert peaks[1] <= 2 * peaks[0], f"add {peaks[1] / 2**20:.1f} MiB, build {peaks[0] / 2**20:.1f} MiB"


# --- issue 23: exact on every kernel path and every threshold -----------------

@pytest.mark.kernel_paths("compiled", "python", "jit")
def test_a_containment_query_at_999999999_over_10_9_returns_no_match_below_it():
    # The plain-Python kernels multiplied p by an int32 size in int32 and wrapped: 2/3 passed as >= t.
    sets = [[0, 1, 2, 3, 5, 7], [0, 3, 4, 5, 6]]
    index = SearchIndex.build(sets, "999999999/1000000000", measure="containment")
    assert answers(index, [[6, 7, 3], [0, 3, 4, 5, 6]]) == [(1, 1, 5, 5, 5)]


EXTREMES = ["1e-9", "1/1000000000", "0.000000001", "0.999999999", "536870913/1000000000", "1"]


@pytest.mark.kernel_paths("compiled", "python")
@pytest.mark.parametrize("threshold", EXTREMES)
@pytest.mark.parametrize("measure", [m for m in JOIN_MEASURES if m != "overlap"])
def test_every_measure_answers_queries_of_any_size_at_the_extreme_thresholds(measure, threshold):
    # A cosine index at 1e-9 raised OverflowError for a query of 12 tokens: its size bound
    # ⌊x/t²⌋ = 12·10**18 left int64. Every bound now stays within the largest set size.
    sets = [["t23"], ["t5", "t9", "t8", "t14", "t1"], ["t23", "t9"], [f"t{i}" for i in range(3000)]]
    queries = [[f"t{i}" for i in range(n)] for n in (1, 11, 12, 100, 5000)] + [["t23", "t9"], ["u1", "t23"]]
    index = SearchIndex.build(sets, threshold, measure=measure)
    t = Fraction(threshold)
    assert answers(index, queries) == naive.rs_pairs(queries, sets, t, measure)


@pytest.mark.parametrize("k", [1, 2, 3000, 2**31 - 1])
def test_overlap_answers_queries_of_any_size_at_the_extreme_counts(k):
    sets = [["t23"], ["t5", "t9", "t8", "t14", "t1"], [f"t{i}" for i in range(3000)]]
    queries = [[f"t{i}" for i in range(n)] for n in (1, 12, 5000)]
    assert answers(SearchIndex.build(sets, k, measure="overlap"), queries) == naive.rs_pairs(queries, sets, k, "overlap")


# --- issue 17, item 8: ids the index holds already ---------------------------

def matches_by_id(index: SearchIndex, queries, threshold=None):
    """The index's answers with indexed documents named by id, in the index's order."""
    return [(m.query, index.ids[m.indexed], m.overlap, m.query_size, m.indexed_size)
            for m in index.query(queries, threshold)]


def test_adding_an_id_the_index_holds_is_refused_and_adds_nothing():
    index = SearchIndex.build({"a": ["x", "y"], "b": ["p", "q"]}, 0.5)
    with pytest.raises(InputError, match=r"1 document of the 2 added has an id the index holds already "
                                         r"\(the first: 'b'\)"):
        index.add({"c": ["x", "z"], "b": ["p"]})
    assert list(index.ids) == ["a", "b"] and index.num_sets == 2
    with pytest.raises(InputError, match="holds the id 2 already"):  # a list's ids are positions: 2 is taken
        SearchIndex.build([["x"], ["y"]], 0.5, ids=[2, 5]).add([["z"]])


@settings(max_examples=60, deadline=None)
@given(corpus_and_threshold(max_docs=14), st.integers(1, 14), st.lists(st.integers(0, 20), max_size=8),
       st.sampled_from(["replace", "skip"]), st.sampled_from([1, 10**9]))
def test_replacing_or_skipping_ids_answers_as_a_fresh_build_of_the_final_documents(case, cut, batch_ids, existing,
                                                                                     min_delta):
    sets, t = case
    sets = [[1]] + sets  # at least one non-empty set to build from
    old = {f"d{k}": s for k, s in enumerate(sets[:cut]) if s}
    batch = {f"d{k}": sets[(k + cut) % len(sets)] for k in dict.fromkeys(batch_ids)}  # some ids taken, some new
    index_sets.MIN_DELTA, saved = min_delta, index_sets.MIN_DELTA
    try:
        index = SearchIndex.build(old, t)
        stats = Stats()
        index.add(batch, existing=existing, stats=stats)
    finally:
        index_sets.MIN_DELTA = saved
    if existing == "replace":  # the old document goes, the new one comes after every old one
        final = {**{i: s for i, s in old.items() if i not in batch}, **{i: s for i, s in batch.items() if s}}
    else:
        final = {**old, **{i: s for i, s in batch.items() if i not in old and s}}
        assert [i for i, why in stats.skipped if why == "in the index already"] == [i for i in batch if i in old]
    assert list(index.ids) == list(final)
    queries = [list(s) for s in sets] + [[1000, 0]]
    if not any(final.values()):  # every document replaced by an empty one: nothing to build afresh, nothing matches
        assert matches_by_id(index, queries) == []
        return
    fresh = SearchIndex.build(final, t)
    assert matches_by_id(index, queries) == matches_by_id(fresh, queries)
    names = list(final)
    assert sorted((q, names.index(i), o, a, b) for q, i, o, a, b in matches_by_id(index, queries)) == \
        naive.rs_pairs(queries, list(final.values()), t)


def test_a_replaced_index_saves_and_loads_and_answers_the_same(tmp_path):
    index = SearchIndex.build({"a": ["x", "y"], "b": ["x", "y"], "c": ["p", "q", "r"]}, 0.5)
    index.add({"c": ["x", "y", "z"], "a": []}, existing="replace")  # c moves to the end; a has no shingle: gone
    assert list(index.ids) == ["b", "c"] and index.num_sets == 2  # the sets of a and of the old c are gone
    index.save(tmp_path / "i.idx")
    loaded = SearchIndex.load(tmp_path / "i.idx")
    assert matches_by_id(loaded, [["x", "y"]]) == matches_by_id(index, [["x", "y"]]) == [(0, "b", 2, 2, 2),
                                                                                         (0, "c", 2, 2, 3)]


def test_line_ids_continue_after_the_index_s_largest_line_id():
    index = SearchIndex.build(Corpus(ids=["1", "2", "x7", "9"], sets=[["a"], ["b"], ["c"], ["d"]], kind="sets"), 0.5)
    lines = Corpus(ids=["1", "3"], sets=[["e"], ["f"]], kind="lines", skipped=[("2", "binary"), ("²", "odd")])
    moved = continue_lines(lines, index)
    assert moved.ids == ["10", "12"] and moved.skipped == [("11", "binary"), ("²", "odd")]  # digits are ASCII
    named = Corpus(ids=["1"], sets=[["e"]], kind="directory")
    assert continue_lines(named, index) is named  # file names are not line numbers
    assert continue_lines(lines, SearchIndex.build({"f.txt": ["a"]}, 0.5)) is lines  # no line id to follow
    ids = index_ids.Ids.of(["007", "10", "12x", "", "9", "123456789012345678901"])
    assert ids.last_number() == 10  # leading zeros, letters, empty and over-long ids are not line numbers


def test_ids_that_share_their_ends_but_differ_within_are_different_ids():
    # Ids are looked up by a key of their length and end bytes, then compared whole.
    name = "src/{}/internal/path/to/file.go".format
    index = SearchIndex.build({name("x" * 30): ["a"], name("y" * 30): ["b"]}, 0.5)
    index.add({name("z" * 30): ["c"]})  # the same key as both, another id
    assert list(index.ids) == [name("x" * 30), name("y" * 30), name("z" * 30)]
    with pytest.raises(InputError, match="the first: 'src/yyy"):
        index.add({name("w" * 30): ["d"], name("y" * 30): ["e"]})
    assert index_ids.text_keys(np.array([0, 0, 1]), np.array([0], np.uint8)).tolist()[0] != \
        index_ids.text_keys(np.array([0, 1]), np.array([0], np.uint8)).tolist()[0]  # "" is not "\0"


def test_an_id_given_twice_in_a_batch_is_found_both_times_and_the_first_named_is_the_batch_s_first():
    index = SearchIndex.build({"a": ["x"], "b": ["y"]}, 0.5)
    twice = Corpus(ids=["c", "b", "a", "a"], sets=[["p"], ["q"], ["r"], ["s"]], kind="jsonl")
    with pytest.raises(InputError, match=r"3 documents of the 4 added have ids .* \(the first: 'b'\)"):
        index.add(twice)
    stats = Stats()
    assert index.add(twice, existing="skip", stats=stats).tolist() == [2, -1, -1, -1]
    assert list(index.ids) == ["a", "b", "c"] and len(stats.skipped) == 3


@pytest.mark.kernel_paths("compiled", "python")
@settings(max_examples=60, deadline=None)
@given(corpus_and_threshold(), st.integers(0, 30), st.sampled_from([None, 1, 2, 5]), st.sampled_from([1, 2, 4096]),
       st.integers(0, 4), MEASURES)
def test_a_count_of_matches_is_the_number_a_query_returns_and_holds_no_document(case, cut, top, block, copies,
                                                                                 measure):
    """The count is answered a block of queries at a time and counts each set's documents without listing them:
    the same number as ``len(query(...))``, with ``top``, with documents added to sets indexed before them."""
    sets, t = case
    t = for_measure(measure, t)
    indexed, queries = split(sets, cut)
    indexed = [[1]] + indexed
    index = SearchIndex.build(indexed, t, measure=measure)
    if copies:  # documents identical to indexed sets, waiting to be merged into their sets
        index.add(Corpus(ids=[f"c{k}" for k in range(copies)], sets=[[str(x) for x in indexed[k % len(indexed)]]
                                                                    for k in range(copies)], kind="sets"))
    if top is not None and measure not in ("jaccard", "cosine", "dice"):
        top = None
    expected = len(index.query(queries, t, top=top))
    saved = blocks.QUERY_BLOCK, index_sets.SetStore.documents
    blocks.QUERY_BLOCK = block
    index_sets.SetStore.documents = lambda *a: pytest.fail("a count listed documents")
    try:
        assert index.count(queries, t, top=top) == expected
    finally:
        blocks.QUERY_BLOCK, index_sets.SetStore.documents = saved
