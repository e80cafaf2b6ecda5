"""What the eighth adversarial probe found (session 60), one regression test (or a few) per item."""
from __future__ import annotations

import pytest

import allpairs
from allpairs import SearchIndex


# --- 1. int ids of 19 digits or more in a saved index ----------------------------------------------------

@pytest.mark.parametrize("ids", [[1234567890123456789, -9223372036854775808], [2**70, 7], [-(10**4299), 10**4299]])
def test_a_saved_index_of_large_int_ids_loads_them_back_not_as_a_damaged_file(tmp_path, ids):
    # A 19-digit id (an int64 such as a snowflake id) was saved as an int and refused on load as "damaged".
    index = SearchIndex.build(dict(zip(ids, [["a", "b"], ["a", "b", "c"]])), 0.5)
    index.save(tmp_path / "x.idx")
    loaded = SearchIndex.load(tmp_path / "x.idx")
    assert list(loaded.ids) == ids
    assert [loaded.ids[m.indexed] for m in loaded.query([["a", "b"]])] == ids


# --- 2. ids that differ as values but not as the text an index stores ------------------------------------

@pytest.mark.parametrize("ids", [[1, "1", 2], [None, "None", 3], [2.0, "2.0", 1]])
def test_an_index_refuses_ids_that_differ_only_as_python_values_not_as_the_text_it_stores(ids):
    # The index held two documents of id '1'; adding one '1' with existing="replace" then removed both.
    with pytest.raises(allpairs.UsageError, match=f"both {str(ids[1])!r} as text"):
        SearchIndex.build([["a", "b"], ["a", "b"], ["c"]], 0.5, ids=ids)
    index = SearchIndex.build({"x": ["a", "b"]}, 0.5)
    with pytest.raises(allpairs.UsageError, match=f"both {str(ids[1])!r} as text"):
        index.add({ids[0]: ["q"], ids[1]: ["q", "r"]}, existing="replace")
    assert list(index.ids) == ["x"]


def test_a_corpus_given_whole_with_an_id_twice_is_refused_by_the_index():
    corpus = allpairs.Corpus(ids=["a", "b", "a"], sets=[["x"], ["y"], ["x", "y"]], kind="tokens")
    with pytest.raises(allpairs.UsageError, match="id 'a' is given twice"):
        SearchIndex.build(corpus, 0.5)


def test_replacing_an_id_replaces_one_document_and_keeps_the_others():
    index = SearchIndex.build({1: ["a", "b"], 2: ["a", "b"], "x": ["c"]}, 0.5)
    index.add({"1": ["z"]}, existing="replace")
    assert list(index.ids) == ["2", "x", "1"]


# --- 3. to_pandas(columns=frame) with a frame that lacks rows, or holds one twice --------------------------

def test_to_pandas_refuses_a_frame_that_lacks_a_row_of_a_later_document_rather_than_fill_nan():
    pandas = pytest.importorskip("pandas")
    df = pandas.DataFrame({"title": ["a b c"] * 100, "n": range(100)})
    res = allpairs.join(df["title"], 0.5)
    # Only the first ids were looked up: rows 60 to 99 came out as NaN in 3,180 of the 4,950 pairs.
    with pytest.raises(allpairs.UsageError, match="no row 60 \\(nor 39 other ids\\)"):
        res.to_pandas(columns=df.iloc[:60])
    assert res.to_pandas(columns=df)["right_n"].notna().all()


def test_to_pandas_refuses_a_frame_whose_index_holds_an_id_twice_in_one_line():
    pandas = pytest.importorskip("pandas")
    df = pandas.DataFrame({"title": ["a b c"] * 3, "n": range(3)})
    res = allpairs.join(df["title"], 0.5)
    with pytest.raises(allpairs.UsageError, match="holds 2 twice"):
        res.to_pandas(columns=pandas.concat([df, df.iloc[[2]]]))


# --- 4. dedup of a DataFrame whose column holds token lists ----------------------------------------------

def test_dedup_of_a_frame_column_of_token_lists_takes_them_as_sets_not_as_the_text_of_each_list():
    pandas = pytest.importorskip("pandas")
    # str(['b', 'a']) was shingled as text: the same set in another order was no copy, and kept.
    df = pandas.DataFrame({"tokens": [["a", "b"], ["b", "a"], None, ("b", "a", "a"), ["c"]], "n": range(5)})
    kept = allpairs.dedup(df, 0.5, text="tokens")
    assert kept.index.tolist() == [0, 2, 4]
    assert kept.index.tolist() == allpairs.dedup(df["tokens"].map(lambda v: v or []), 0.5).kept.tolist()


@pytest.mark.parametrize("column, text", [([["a"], "a b"], "tokens"), ([["a"], ["b"]], ["title", "tokens"])])
def test_dedup_refuses_token_lists_mixed_with_texts(column, text):
    pandas = pytest.importorskip("pandas")
    df = pandas.DataFrame({"tokens": column, "title": ["x", "y"]})
    with pytest.raises(allpairs.UsageError, match="token collections"):
        allpairs.dedup(df, 0.5, text=text)


# --- 5. token sets from Python with a missing value -------------------------------------------------------

@pytest.mark.parametrize("missing", [None, float("nan")])
def test_a_missing_token_set_is_an_empty_set_as_a_missing_text_is_an_empty_text(missing):
    # A None among token lists (a Series' NaN) stopped the join with "TypeError: 'NoneType' object is not iterable".
    res = allpairs.join([["a", "b"], missing, ["a", "b"]], 0.5)
    assert [tuple(p) for p in res.pairs] == [(0, 2, 2, 2, 2)]
    assert allpairs.dedup([["a"], missing, ["a"]], 0.5).kept.tolist() == [0, 1]


def test_a_document_that_is_neither_text_nor_tokens_is_a_usage_error_naming_it():
    with pytest.raises(allpairs.UsageError, match="document 1 is 5, neither a text nor a collection of tokens"):
        allpairs.join([["a"], 5, ["a"]], 0.5)


# --- 6. a lone surrogate in an id or a carried value given to an index --------------------------------------

def test_an_index_refuses_a_lone_surrogate_in_an_id_with_one_error_not_a_unicode_traceback():
    with pytest.raises(allpairs.InputError, match="lone surrogate '\\\\ud800'"):
        SearchIndex.build([["a"], ["b"]], 0.5, ids=["\ud800x", "y"])
    index = SearchIndex.build({"x": ["a"]}, 0.5)
    with pytest.raises(allpairs.InputError, match="lone surrogate"):
        index.add({"\udbff": ["z"]})
    assert list(index.ids) == ["x"] and len(index.query([["z"]])) == 0


def test_index_add_refuses_a_carried_value_it_cannot_store_before_adding_anything():
    # The ids were extended, then the column's value failed: an index of more ids than documents' sets.
    index = SearchIndex.build(allpairs.Corpus(ids=["a"], texts=["x y"], columns={"url": ["u"]}), 0.5)
    with pytest.raises(allpairs.InputError, match="lone surrogate"):
        index.add(allpairs.Corpus(ids=["b", "c"], texts=["x y", "p q"], columns={"url": ["v", "w\ud800"]}))
    assert list(index.ids) == ["a"] and list(index.columns["url"]) == ["u"]
    assert [index.ids[m.indexed] for m in index.query(["x y"])] == ["a"]
    # The untouched index can still take a batch and answer.
    index.add(allpairs.Corpus(ids=["b"], texts=["x y"], columns={"url": ["v"]}))
    assert [index.ids[m.indexed] for m in index.query(["x y"])] == ["a", "b"]


# --- 7. a Corpus made by hand whose parts disagree ------------------------------------------------------------

@pytest.mark.parametrize("kw, message", [
    ({"ids": ["a", "b", "c"], "texts": ["x y", "x y"]}, "3 ids but 2 texts"),  # 'c' was left out, silently
    ({"ids": ["a", "b"], "texts": ["x y", "x y", "x y"]}, "2 ids but 3 texts"),  # an IndexError
    ({"ids": ["a", "b"], "texts": ["x y", "x y"], "columns": {"url": ["u"]}}, "2 ids but 1 values of column 'url'"),
    ({"ids": ["a", "b"], "texts": ["x y", "x y"], "sets": [["q"], ["r"]]}, "holds both"),  # the texts were ignored
    ({"ids": ["a", "b"]}, "holds neither"),  # a TypeError
])
@pytest.mark.parametrize("call", [
    lambda c: allpairs.join(c, 0.5, shingle="word:1"),
    lambda c: allpairs.dedup(c, 0.5, shingle="word:1"),
    lambda c: SearchIndex.build(c, 0.5, shingle="word:1"),
    lambda c: allpairs.join(["x y"], 0.5, against=c, shingle="word:1"),
])
def test_a_corpus_whose_ids_texts_or_columns_disagree_in_number_is_refused(kw, message, call):
    with pytest.raises(allpairs.UsageError, match=message):
        call(allpairs.Corpus(**kw))


# --- 8. to_arrow of ids no one Arrow type holds ---------------------------------------------------------------

@pytest.mark.parametrize("ids, left, right", [
    ([1, "a", 2], ["1", "1", "a"], ["a", "2", "2"]),  # ArrowInvalid: Could not convert 'a' ... to int64
    ([2**70, 1, 2], [str(2**70), str(2**70), "1"], ["1", "2", "2"]),  # OverflowError
    (["a", "b", "\ud800"], ["a", "a", "b"], ["b", "\\ud800", "\\ud800"]),  # UnicodeEncodeError
    ([1, 2, 3], [1, 1, 2], [2, 3, 3]),
])
def test_to_arrow_writes_ids_that_no_one_arrow_type_holds_as_text_on_both_sides_alike(ids, left, right):
    pytest.importorskip("pyarrow")
    table = allpairs.join([["x", "y"]] * 3, 0.5, ids=ids).to_arrow()
    assert table.column("left").to_pylist() == left and table.column("right").to_pylist() == right
    assert table.schema.field("left").type == table.schema.field("right").type


# --- 9. one name or pattern given as a str to the readers -----------------------------------------------------

def test_read_directory_takes_one_include_or_exclude_pattern_as_a_str_not_as_its_letters(tmp_path):
    for name in ("a.csv", "b.txt", "c.md"):
        (tmp_path / name).write_text("some text\n")
    # include="*.csv" was read as the patterns "*", ".", "c", "s", "v": every file.
    assert allpairs.read_directory(tmp_path, include="*.csv").ids == ["a.csv"]
    assert allpairs.read_directory(tmp_path, exclude="*.csv").ids == ["b.txt", "c.md"]
    assert allpairs.read_corpus(tmp_path, include="*.md").ids == ["c.md"]


def test_the_record_readers_take_one_kept_column_as_a_str(tmp_path):
    (tmp_path / "t.csv").write_text("id,text,note\na,x y,n1\n")
    (tmp_path / "t.jsonl").write_text('{"id": "a", "text": "x y", "note": "n1"}\n')
    # keep="note" asked for the columns "n", "o", "t", "e".
    assert list(allpairs.read_table(tmp_path / "t.csv", keep="note").columns) == ["note"]
    assert list(allpairs.read_jsonl(tmp_path / "t.jsonl", keep="note").columns) == ["note"]


# --- 10. pairs[i] of counted pairs ------------------------------------------------------------------------------

@pytest.mark.parametrize("key", [0, -1, slice(0, 1)])
def test_reading_a_counted_pair_by_index_is_refused_as_iterating_them_is(key):
    # AttributeError: 'CountedPairs' object has no attribute '_index'
    res = allpairs.join([["a", "b"], ["a", "b"]], 0.5, count=True)
    with pytest.raises(allpairs.UsageError, match="counted, not kept"):
        res.pairs[key]


# --- 11. the similarity of a pair kept on its MinHash estimate -------------------------------------------------

def test_a_pair_kept_on_its_estimate_gives_no_similarity_rather_than_a_negative_one():
    sets = [["a", "b", "c", "d"], ["a", "b", "c", "e"], ["a", "b", "c", "d"], ["x", "y"]]
    res = allpairs.join(sets, 0.5, method="lsh", verify="estimate", num_perm=16, bands=16, rows=1)
    estimated = [p for p in res.pairs if p.overlap < 0]
    assert estimated, res.pairs.to_list()
    p = estimated[0]
    # p.similarity was Fraction(-1, 9), res.similarity(p) too, p.to_dict() a similarity of -0.11.
    for read in (lambda: p.similarity, lambda: res.similarity(p), lambda: p.to_dict(), lambda: p.to_dict(
            measure="jaccard")):
        with pytest.raises(allpairs.UsageError, match="kept on its MinHash estimate"):
            read()
    identical = next(p for p in res.pairs if (p.left, p.right) == (0, 2))
    assert identical.similarity == 1 and res.similarity(identical) == 1


# --- 12. Pair.to_dict of an R–S join --------------------------------------------------------------------------

def test_to_dict_names_the_right_document_of_an_rs_join_from_its_own_side():
    res = allpairs.join({"L0": ["a", "b"], "L1": ["x"]}, 0.5, against={"R0": ["x"], "R1": ["a", "b"]})
    # to_dict(res.ids), as its docstring said, named the right document from the left side: L0 with L1.
    assert [(d["left"], d["right"]) for d in (p.to_dict(res.left_ids, right_ids=res.right_ids) for p in res.pairs)] \
        == [("L0", "R1"), ("L1", "R0")] == list(zip(res.to_pandas()["left"], res.to_pandas()["right"]))
    with pytest.raises(allpairs.UsageError, match="right_ids= names the right side"):
        res.pairs[0].to_dict(right_ids=res.right_ids)


# --- 13. PairWriter given pairs it would misprint ---------------------------------------------------------------

def test_pair_writer_refuses_estimated_pairs_it_would_print_as_garbage_similarities():
    import io
    res = allpairs.join([["a", "b", "c"], ["a", "b", "d"]], 0.3, method="lsh", verify="estimate")
    # The similarity of overlap -1 came out as "0\t1\t/.857142".
    with pytest.raises(allpairs.UsageError, match="estimated=True"):
        allpairs.PairWriter(res.ids).write(res.pairs, io.BytesIO())
    out = io.BytesIO()
    allpairs.PairWriter(res.ids, estimated=True).write(res.pairs, out)
    assert out.getvalue().decode().splitlines()[1].startswith("0\t1\t~0.")


def test_pair_writer_refuses_pairs_of_another_measure_than_its_own():
    import io
    res = allpairs.join([["a", "b", "c"], ["a", "b", "d"]], 0.3, measure="cosine")
    # Written under the default measure, jaccard: 0.500000 labelled the similarity of a cosine join (2/3).
    with pytest.raises(allpairs.UsageError, match="joined at cosine, not jaccard; write them with measure='cosine'"):
        allpairs.PairWriter(res.ids).write(res.pairs, io.BytesIO())
    out = io.BytesIO()
    allpairs.PairWriter(res.ids, measure="cosine").write(res.pairs, out)
    assert out.getvalue() == b"left\tright\tsimilarity\n0\t1\t0.666666\n"


@pytest.mark.parametrize("ids, columns", [(["only"], None), ([], None), (list("abcdefg"), None),
                                          (list("abcde"), {"c": [1]})])
def test_pair_writer_refuses_ids_or_columns_that_are_not_one_a_document(ids, columns):
    import io
    res = allpairs.join([["a", "b"]] * 5, 0.5)
    # Too few ids: the kernel read past them, writing bytes of memory into the output, or crashed.
    with pytest.raises(allpairs.UsageError, match="5 documents|for 5 ids"):
        allpairs.PairWriter(ids, columns=columns).write(res.pairs, io.BytesIO())


def test_pair_writer_of_an_rs_join_takes_the_ids_of_both_sides():
    import io
    res = allpairs.join({"L0": ["a", "b"], "L1": ["x"]}, 0.5, against={"R0": ["x"], "R1": ["a", "b"]})
    with pytest.raises(allpairs.UsageError, match="2 ids for pairs of 4 documents"):
        allpairs.PairWriter(res.left_ids).write(res.pairs, io.BytesIO())
    out = io.BytesIO()
    allpairs.PairWriter(res.ids).write(res.pairs, out)
    assert out.getvalue() == b"left\tright\tsimilarity\nL0\tR1\t1.000000\nL1\tR0\t1.000000\n"


# --- 14. one index queried from several threads at once -------------------------------------------------------

def test_threads_querying_one_index_at_once_get_the_answers_each_would_get_alone():
    import random
    import threading

    rng = random.Random(9)
    index = SearchIndex.build([[rng.randrange(300) for _ in range(rng.randint(1, 12))] for _ in range(10000)], 0.3)
    batches = [[[rng.randrange(300) for _ in range(rng.randint(1, 12))] for _ in range(2000)] for _ in range(4)]
    alone = [[tuple(m) for m in index.query(b)] for b in batches]
    counts = [len(a) for a in alone]
    # The threads shared one scratch: about half of each batch's matches were lost, silently.
    wrong = []

    def ask(k: int) -> None:
        for _ in range(2):
            if [tuple(m) for m in index.query(batches[k])] != alone[k] or index.count(batches[k]) != counts[k]:
                wrong.append(k)

    threads = [threading.Thread(target=ask, args=(k,)) for k in range(len(batches))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []


# --- 15. numpy int ids of an index ------------------------------------------------------------------------------

def test_an_index_of_numpy_int_ids_reads_them_back_as_ints_as_it_does_python_ints(tmp_path):
    pandas = pytest.importorskip("pandas")
    df = pandas.DataFrame({"id": [10, 20, 30], "text": ["a b c", "a b c d", "x y"]})
    # ids=df["id"].to_numpy() came back as the strings '10', '20', '30' (in memory and saved): a merge of the
    # matches with the frame on the id found nothing, or refused object against int64.
    index = SearchIndex.build(df["text"].tolist(), 0.5, ids=df["id"].to_numpy(), shingle="word:1")
    index.save(tmp_path / "x.idx")
    for idx in (index, SearchIndex.load(tmp_path / "x.idx")):
        assert list(idx.ids) == [10, 20, 30]
        matches = idx.query(["a b c"]).to_pandas()
        assert matches.merge(df, left_on="indexed", right_on="id")["text"].tolist() == ["a b c", "a b c d"]


# --- 16. to_pandas(columns=frame) of an R–S join whose sides share ids ------------------------------------------

def test_to_pandas_of_an_rs_join_takes_a_frame_per_side_and_refuses_one_frame_for_both_when_ids_clash():
    pandas = pytest.importorskip("pandas")
    left = pandas.DataFrame({"text": ["a b c", "x y z"], "src": ["L0", "L1"]})
    right = pandas.DataFrame({"text": ["x y z", "a b c"], "src": ["R0", "R1"]})
    res = allpairs.join(left["text"], 0.5, against=right["text"])
    # Both sides are numbered 0, 1: one frame gave both sides its own rows, right_src "L1" for R1.
    for one in (left, right):
        with pytest.raises(allpairs.UsageError, match="share ids"):
            res.to_pandas(columns=one)
    out = res.to_pandas(columns=(left, right))
    assert out[["left_src", "right_src"]].values.tolist() == [["L0", "R1"], ["L1", "R0"]]
    with pytest.raises(allpairs.UsageError, match="is for an R–S join"):
        allpairs.join(left["text"], 0.5).to_pandas(columns=(left, right))
    # Sides of ids of their own: one frame holding both still serves.
    res = allpairs.join(left.set_index("src")["text"], 0.5, against=right.set_index("src")["text"])
    both = pandas.concat([left.set_index("src"), right.set_index("src")])
    assert res.to_pandas(columns=both)[["left_text", "right_text"]].values.tolist() == [["a b c"] * 2, ["x y z"] * 2]


# --- 17. a SearchIndex pickled by SetSimilaritySearch itself, loaded after compat.install() ----------------------

def test_an_index_pickled_by_set_similarity_search_loads_and_answers_after_install(tmp_path):
    import pickle
    import subprocess
    import sys

    original = pytest.importorskip("SetSimilaritySearch")
    sets = [[1, 2, 3], [1, 2, 4], [7], [], [2, 3, 5, 8], [1, 2, 3]]
    queries = [[1, 2, 3], [2, 3], [7, 9], [], [8, 5, 3]]
    answers = {}
    for func in ("jaccard", "cosine", "containment", "containment_min"):
        index = original.SearchIndex(sets, similarity_func_name=func, similarity_threshold=0.4)
        (tmp_path / f"{func}.pkl").write_bytes(pickle.dumps(index))
        answers[func] = [repr(index.query(q)) for q in queries]
    # It stopped with "AttributeError: 'SearchIndex' object has no attribute '_indptr'".
    script = f"""
import pickle, allpairs.compat
allpairs.compat.install()
for func in {list(answers)!r}:
    index = pickle.loads(open({str(tmp_path)!r} + "/" + func + ".pkl", "rb").read())
    assert type(index) is allpairs.compat.SearchIndex
    print([repr(index.query(q)) for q in {queries!r}])
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [repr(a) for a in answers.values()]


# --- 18. the against side's ids named as against_ids= -------------------------------------------------------------

@pytest.mark.parametrize("against", [{"x": ["a"]}, allpairs.Corpus(ids=["x"], sets=[["a"]], kind="tokens")])
def test_ids_given_to_an_against_side_that_names_its_own_are_refused_naming_against_ids(against):
    # The message said "ids= goes with a list of documents", a parameter the caller had not given.
    with pytest.raises(allpairs.UsageError, match="; against_ids= goes with a list of documents"):
        allpairs.join([["a"]], 0.5, against=against, against_ids=["y"])


# --- 19. Clusters.members with a negative or too large number ------------------------------------------------------

def test_clusters_members_counts_a_negative_number_from_the_end_as_clusters_c_does():
    res = allpairs.join({"a": ["x", "y"], "b": ["x", "y"], "c": ["q"], "d": ["q"], "e": ["q"]}, 0.5, clusters=True)
    clusters = res.clusters
    # members(-1) was docs[indptr[-1]:indptr[0]]: an empty array, where clusters[-1] named two documents.
    assert clusters.members(-1).tolist() == [0, 1] and clusters[-1] == ["a", "b"]
    assert clusters.members(0).tolist() == [2, 3, 4]
    with pytest.raises(IndexError, match="cluster index 2 out of range for 2 clusters"):
        clusters.members(2)


# --- 20. a DataFrame where a column was meant ----------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda df: allpairs.join(df, 0.5),
    lambda df: allpairs.join(df["text"], 0.5, against=df),
    lambda df: SearchIndex.build(df, 0.5),
    lambda df: SearchIndex.build(df["text"], 0.5).query(df),
    lambda df: allpairs.compare(df, 0.5),
])
def test_a_dataframe_given_where_documents_go_is_refused_not_joined_as_its_column_names(call):
    pandas = pytest.importorskip("pandas")
    df = pandas.DataFrame({"text": ["a b c", "a b c", "x"], "title": ["t", "u", "v"]})
    # Iterating the frame gave "text" and "title": two documents, no pair, silently.
    with pytest.raises(allpairs.UsageError, match="give one column of the table, df\\['text'\\]"):
        call(df)
    assert allpairs.dedup(df, 0.5).index.tolist() == [0, 2]
