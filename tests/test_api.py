"""The Python API as a new user meets it: ids of one's choosing, indexing the pairs, plain data out."""
import json
import random
import sys
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
    with pytest.raises(allpairs.UsageError, match="to_pandas needs pandas: pip install pandas"):
        res.to_pandas()
    with pytest.raises(allpairs.UsageError, match="to_arrow needs pyarrow: pip install pyarrow"):
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
