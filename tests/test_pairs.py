"""Writing pairs: escaping ids per format, truncated similarities, expansion order."""
import pytest
import csv
import io
import json

import numpy as np

import allpairs
from allpairs.pairs import PairWriter


def write(res, fmt, texts=None, header=True):
    out = io.BytesIO()
    PairWriter(res.ids, fmt, texts=texts, header=header).write(res.pairs, out)
    return out.getvalue().decode()


def corpus_with_awkward_ids():
    ids = ["tab\there", 'quote"comma,', "new\nline", "back\\slash", "ünï"]
    sets = [["a", "b", "c"], ["a", "b", "c"], ["a", "b", "c", "d"], ["x"], ["a", "b", "c"]]
    return allpairs.join(allpairs.Corpus(ids=ids, sets=sets, kind="sets"), 0.7)


def test_tsv_escapes_tab_newline_backslash():
    lines = write(corpus_with_awkward_ids(), "tsv", header=False).splitlines()
    assert lines[0] == 'tab\\there\tquote"comma,\t1.000000'
    assert 'new\\nline' in lines[1] and all(len(line.split("\t")) == 3 for line in lines)
    assert "tab\\there\tünï\t1.000000" in lines


@pytest.mark.kernel_paths("compiled", "python")
def test_csv_and_json_round_trip_the_ids():
    res = corpus_with_awkward_ids()
    rows = list(csv.DictReader(io.StringIO(write(res, "csv"))))
    got = {(r["left"], r["right"]) for r in rows}
    objs = [json.loads(line) for line in write(res, "jsonl").splitlines()]
    assert got == {(o["left"], o["right"]) for o in objs}
    assert ("tab\there", "new\nline") in got
    assert {o["similarity"] for o in objs} == {1.0, 0.75}


@pytest.mark.kernel_paths("compiled", "python")
def test_similarity_is_truncated_not_rounded():
    # 2/3 = 0.666666...: printed 0.666666, never 0.666667.
    res = allpairs.join([["a", "b"], ["a", "b", "c"]], 0.5)
    assert write(res, "tsv") == "left\tright\tsimilarity\n0\t1\t0.666666\n"


@pytest.mark.kernel_paths("compiled", "python")
def test_pairs_expand_sorted_by_left_then_right():
    sets = [["a", "b"], ["q"], ["a", "b", "c"], ["a", "b"], ["a", "b", "c"]]
    res = allpairs.join(sets, 0.6)
    got = [(p.left, p.right) for p in res.pairs]
    assert got == sorted(got) == [(0, 2), (0, 3), (0, 4), (2, 3), (2, 4), (3, 4)]
    assert len(res.pairs) == 6 and res.pairs.num_set_pairs == 1


@pytest.mark.kernel_paths("compiled", "python")
def test_chunks_do_not_change_the_result():
    rng = np.random.default_rng(3)
    sets = [[str(v) for v in rng.integers(0, 8, rng.integers(1, 5))] for _ in range(300)]
    res = allpairs.join(sets, 0.5)
    whole = [tuple(map(int, t)) for c in res.pairs.chunks() for t in zip(c.left, c.right, c.overlap)]
    small = [tuple(map(int, t)) for c in res.pairs.chunks(max_pairs=7) for t in zip(c.left, c.right, c.overlap)]
    assert whole == small and len(whole) == len(res.pairs) > 1000


@pytest.mark.parametrize("bad", [None, 0, -1, 2.5, True, "10"])
def test_chunks_refuses_a_size_that_is_not_a_whole_number_of_pairs(bad):
    # chunks(None) was a TypeError from deep inside.
    import allpairs
    from allpairs.errors import UsageError

    res = allpairs.join(["a b c", "a b c d", "x y"], 0.5, shingle="word:1")
    with pytest.raises(UsageError, match="max_pairs must be a whole number >= 1"):
        next(res.pairs.chunks(bad))
    assert [len(c) for c in res.pairs.chunks(1)] == [1]
