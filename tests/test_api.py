"""The Python API as a new user meets it: ids of one's choosing, indexing the pairs, plain data out."""
import json
import random
import sys
from collections import abc
from fractions import Fraction

import pytest

import allpairs
from allpairs.pairs import Pair, Pairs

from naive import all_pairs


def test_a_dict_gives_its_keys_as_ids_and_its_values_as_texts():
    res = allpairs.join({"doc-a": "the quick brown fox", "doc-b": "the quick brown fox jumps", "doc-c": "lorem"},
                        0.5, shingle="word:1")
    assert res.ids == ["doc-a", "doc-b", "doc-c"]
    [p] = res.pairs
    assert (res.ids[p.left], res.ids[p.right], p.similarity) == ("doc-a", "doc-b", Fraction(4, 5))
    sets = allpairs.join({"x": ["a", "b"], "y": ["a", "b", "c"]}, 0.5)
    assert sets.ids == ["x", "y"] and len(sets.pairs) == 1


def test_ids_name_the_documents_of_a_list():
    res = allpairs.join([["a", "b"], ["a", "b"], ["z"]], 0.5, ids=["first", "second", "third"])
    assert [(res.ids[p.left], res.ids[p.right]) for p in res.pairs] == [("first", "second")]
    with pytest.raises(allpairs.UsageError, match="2 ids for 3 documents"):
        allpairs.join([["a"], ["b"], ["c"]], 0.5, ids=["x", "y"])
    with pytest.raises(allpairs.UsageError, match="id 'x' is given twice"):
        allpairs.join([["a"], ["b"]], 0.5, ids=["x", "x"])
    with pytest.raises(allpairs.UsageError, match="dict names its documents"):
        allpairs.join({"a": "x"}, 0.5, ids=["b"])


def test_without_ids_a_list_is_named_by_positions_the_same_kind_as_pair_indices():
    res = allpairs.join([["a", "b", "c"], ["a", "b", "c", "d"], ["x"]], threshold=0.7)
    assert res.ids == [0, 1, 2]
    p = res.pairs[0]
    assert isinstance(p.left, int) and res.ids[p.left] == p.left


@pytest.mark.kernel_paths("compiled", "python")
def test_pairs_index_and_slice_like_the_list_they_stand_for(monkeypatch):
    monkeypatch.setattr(Pairs, "CHUNK", 7)  # many chunks, so indexing has to find the right one
    rng = random.Random(3)
    sets = [[str(rng.randint(0, 6)) for _ in range(rng.randint(1, 4))] for _ in range(40)]
    res = allpairs.join(sets, 0.4)
    every = list(res.pairs)
    assert len(every) == len(res.pairs) > 50
    assert [res.pairs[i] for i in range(len(every))] == every
    assert [res.pairs[-i] for i in range(1, 6)] == every[-1:-6:-1]
    for s in (slice(None), slice(3, 30, 4), slice(-5, None), slice(None, None, -3), slice(10, 2)):
        assert res.pairs[s] == every[s]
    with pytest.raises(IndexError):
        res.pairs[len(every)]
    with pytest.raises(TypeError):
        res.pairs["0"]
    assert [tuple(p) for p in every] == all_pairs(sets, 0.4)


@pytest.mark.kernel_paths("compiled", "python")
def test_a_pair_gives_a_fraction_and_plain_data_for_json():
    res = allpairs.join({"a": ["x", "y", "z"], "b": ["x", "y", "z", "w"]}, 0.7)
    p = res.pairs[0]
    assert p.similarity == Fraction(3, 4) and isinstance(p.similarity, Fraction)
    assert json.loads(json.dumps(p.to_dict(res.ids))) == {
        "left": "a", "right": "b", "similarity": 0.75, "overlap": 3, "left_size": 3, "right_size": 4}
    assert p.to_dict()["left"] == 0


def test_the_pairs_as_a_table_need_pandas_or_pyarrow_and_say_so(monkeypatch):
    res = allpairs.join({"a": ["x", "y"], "b": ["x", "y"]}, 0.5)
    monkeypatch.setitem(sys.modules, "pandas", None)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(allpairs.UsageError, match=r"to_pandas needs pandas: pip install 'allpairs-join\[pandas\]'"):
        res.to_pandas()
    with pytest.raises(ImportError, match=r"to_arrow needs pyarrow: pip install 'allpairs-join\[parquet\]'"):
        res.to_arrow()


def test_to_pandas_names_documents_by_id():
    pytest.importorskip("pandas", reason="pandas is not installed here")
    res = allpairs.join({"a": ["x", "y", "z"], "b": ["x", "y", "z", "w"], "c": ["x", "y", "z"]}, 0.7)
    df = res.to_pandas()
    assert list(df.columns) == ["left", "right", "similarity", "overlap", "left_size", "right_size"]
    assert df.values.tolist() == [["a", "b", 0.75, 3, 3, 4], ["a", "c", 1.0, 3, 3, 3], ["b", "c", 0.75, 3, 4, 3]]


def test_to_arrow_names_documents_by_id():
    pytest.importorskip("pyarrow", reason="pyarrow is not installed here")
    res = allpairs.join({"a": ["x", "y", "z"], "b": ["x", "y", "z", "w"]}, 0.7)
    assert res.to_arrow().to_pylist() == [{"left": "a", "right": "b", "similarity": 0.75, "overlap": 3,
                                           "left_size": 3, "right_size": 4}]


def test_pair_is_still_a_plain_tuple():
    assert tuple(Pair(0, 1, 3, 3, 4)) == (0, 1, 3, 3, 4)


# --- issue 17, item 11: the Python API in a notebook -------------------------

def test_repr_of_a_result_of_millions_of_pairs_is_a_short_summary_with_the_first_pairs():
    # 2,000 copies of one set and 1,000 of another: 2.5 million pairs, whose repr was the whole list.
    docs = {f"doc{k}": ["a", "b", "c", "d"] if k % 3 else ["a", "b", "c"] for k in range(3000)}
    res = allpairs.join(docs, 0.7, clusters=True)
    assert len(res) == 1999000 + 499500 + 2000 * 1000
    text = repr(res)
    assert text.splitlines() == [
        "JoinResult: 4,498,500 pairs of 3,000 documents at jaccard >= 0.7 (exact, tokens as given); 1 cluster, "
        "the largest of 3,000",
        "  left    right   similarity",
        "  'doc0'  'doc1'  0.750000",
        "  'doc0'  'doc2'  0.750000",
        "  'doc0'  'doc3'  1.000000",
        "  'doc0'  'doc4'  0.750000",
        "  'doc0'  'doc5'  0.750000",
        "  ... 4,498,495 more"]
    assert repr(res.pairs) == "<Pairs: 4,498,500 document pairs from 1 pair of distinct sets>"
    html = res._repr_html_()
    assert len(html) < 2000 and "<td>doc0</td><td>doc3</td><td>1.000000</td>" in html and "4,498,495 more" in html
    assert repr(res.clusters).splitlines()[:2] == ["Clusters: 1 cluster of 3,000 documents, the largest of 3,000",
                                                   "  cluster  size  ids"]


def test_the_summary_escapes_ids_in_html_and_quotes_them_in_text():
    res = allpairs.join({"<b>x</b>": ["a"], 7: ["a"]}, 1)
    assert "&lt;b&gt;x&lt;/b&gt;" in res._repr_html_() and "<b>x" not in res._repr_html_()
    assert "  '<b>x</b>'  7      1.000000" in repr(res).splitlines()
    assert repr(allpairs.join({"a": ["x"], "b": ["y"]}, 1)) == \
        "JoinResult: 0 pairs of 2 documents at jaccard >= 1.0 (exact, tokens as given)"


def test_index_ids_are_a_sequence_with_negative_indexes_slices_and_right_errors():
    from allpairs.index import SearchIndex

    index = SearchIndex.build({"a": ["x"], "b": ["y"], "c": ["z"]}, 0.5)
    ids = index.ids
    assert isinstance(ids, abc.Sequence) and len(ids) == 3 and list(ids) == ["a", "b", "c"]
    assert (ids[-1], ids[-2], ids[-3], ids[0]) == ("c", "b", "a", "a")  # ids[-1] was '', ids[-2] the last id
    assert ids[0:2] == ["a", "b"] and ids[::-1] == ["c", "b", "a"] and ids[5:] == []
    assert "b" in ids and ids.index("c") == 2
    for bad in (3, -4):
        with pytest.raises(IndexError, match=f"id index {bad} out of range for 3 documents"):
            ids[bad]
    with pytest.raises(TypeError, match="documents are indexed by int or slice, not str"):
        ids["a"]


def test_an_index_takes_ids_and_they_keep_their_type_through_a_save(tmp_path):
    from allpairs.index import SearchIndex

    index = SearchIndex.build([["x", "y"], ["x", "y", "z"]], 0.5, ids=[10, -3])
    assert list(index.ids) == [10, -3]
    index.add([["x"]], ids=[42])
    index.save(tmp_path / "i.idx")
    loaded = SearchIndex.load(tmp_path / "i.idx")
    assert list(loaded.ids) == [10, -3, 42] and all(type(i) is int for i in loaded.ids)
    assert [loaded.ids[m.indexed] for m in loaded.query([["x", "y"]])] == [10, -3, 42]
    assert list(SearchIndex.build([["x"], ["y"]], 0.5).ids) == [0, 1]  # a list's ids: positions, as ints
    mixed = SearchIndex.build([["x"], ["y"]], 0.5, ids=[1, "b"])
    assert list(mixed.ids) == ["1", "b"]  # not all ints: text


def test_matches_and_clusters_become_tables_and_say_which_extra_they_need(monkeypatch):
    from allpairs.index import SearchIndex

    index = SearchIndex.build({"a": ["x", "y"], "b": ["x", "y", "z"], "c": ["p"]}, 0.5)
    matches = index.query({"q": ["x", "y"]})
    df = matches.to_pandas()
    assert df.to_dict("list") == {"query": ["q", "q"], "indexed": ["a", "b"], "similarity": [1.0, 2 / 3],
                                  "overlap": [2, 2], "query_size": [2, 2], "indexed_size": [2, 3]}
    assert repr(matches).splitlines() == ["Matches: 2 matches of 1 query against 3 documents at jaccard >= 0.5",
                                          "  query  indexed  similarity", "  'q'    'a'      1.000000",
                                          "  'q'    'b'      0.666666"]
    res = allpairs.join({"a": ["x", "y"], "b": ["x", "y", "z"], "c": ["p"], "d": ["p"]}, 0.5, clusters=True)
    assert res.clusters.to_pandas().to_dict("list") == {"id": ["a", "b", "c", "d"], "cluster": [1, 1, 2, 2],
                                                        "cluster_size": [2, 2, 2, 2]}
    monkeypatch.setitem(sys.modules, "pandas", None)
    for table in (matches, res.clusters):
        with pytest.raises(ImportError, match=r"to_pandas needs pandas: pip install 'allpairs-join\[pandas\]'"):
            table.to_pandas()


def test_clusters_are_indexable_and_iterable_with_ids():
    res = allpairs.join({"a": ["x", "y"], "b": ["x", "y", "z"], "e": ["x", "y"], "c": ["p"], "d": ["p"]}, 0.5,
                        clusters=True)
    c = res.clusters
    assert list(c) == [["a", "b", "e"], ["c", "d"]] and c[0] == ["a", "b", "e"] and c[-1] == ["c", "d"]
    assert c[0:5] == list(c) and c.members(1).tolist() == [3, 4]
    with pytest.raises(IndexError, match="cluster index 2 out of range for 2 clusters"):
        c[2]


def test_an_r_s_join_names_both_sides():
    left, right = ["the quick brown fox", "lorem ipsum"], ["quick brown fox", "nothing"]
    res = allpairs.join(left, 0.5, shingle="word:1", ids=["L1", "L2"], against=right, against_ids=["R1", "R2"])
    [p] = res.pairs
    assert (res.left_ids[p.left], res.right_ids[p.right]) == ("L1", "R1")
    assert res.to_pandas()[["left", "right"]].values.tolist() == [["L1", "R1"]]
    by_dict = allpairs.join(dict(zip(["L1", "L2"], left)), 0.5, shingle="word:1", against={"R1": right[0]})
    assert by_dict.to_pandas()[["left", "right"]].values.tolist() == [["L1", "R1"]]
    assert "  'L1'  'R1'   0.750000" in repr(by_dict).splitlines()
    with pytest.raises(allpairs.UsageError, match="against_ids= names the documents of against="):
        allpairs.join(left, 0.5, against_ids=["x"])


def test_a_pandas_series_is_named_by_its_index():
    import pandas

    s = pandas.Series(["the quick brown fox", "the quick brown fox", "lorem"], index=[101, 205, 307])
    res = allpairs.join(s, 0.5, shingle="word:1", against=pandas.Series({"r": "quick brown fox"}))
    assert res.left_ids == [101, 205, 307] and res.right_ids == ["r"]
    assert [(res.left_ids[p.left], res.right_ids[p.right]) for p in res.pairs] == [(101, "r"), (205, "r")]
    with pytest.raises(allpairs.UsageError, match="a pandas Series names its documents by its index"):
        allpairs.join(s, 0.5, ids=[1, 2, 3])
    with pytest.raises(allpairs.UsageError, match="the Series' index holds 'x' twice"):
        allpairs.join(pandas.Series(["a", "b"], index=["x", "x"]), 0.5)


def test_the_summary_of_pairs_kept_on_their_estimate_shows_the_estimate_as_the_writer_does():
    docs = [" ".join(f"w{i}" for i in range(k, k + 30)) for k in range(0, 40, 2)]
    res = allpairs.join(docs, 0.8, method="lsh", verify="estimate", shingle="word:1")
    first = next(res.pairs.chunks())
    shown = [line.split()[2] for line in repr(res).splitlines()[2:7]]
    assert shown == [f"~{int(e * 10**6) // 10**6}.{int(e * 10**6) % 10**6:06d}" for e in first.estimate[:5]]


def test_a_dedup_result_sums_itself_up_too():
    from allpairs.index import dedup

    res = dedup({f"d{k}": "a b c d" if k % 2 else "x y z" for k in range(10_000)}, 0.8, shingle="word:1")
    assert repr(res).splitlines() == [
        "DedupResult: kept 2 and removed 9,998 of 10,000 documents at jaccard >= 0.8 (word:1 shingles)",
        "  removed  duplicate of  similarity", "  'd2'     'd0'          1.000000", "  'd3'     'd1'          1.000000",
        "  'd4'     'd0'          1.000000", "  'd5'     'd1'          1.000000", "  'd6'     'd0'          1.000000",
        "  ... 9,993 more"]
    assert "<td>d2</td><td>d0</td>" in res._repr_html_()
