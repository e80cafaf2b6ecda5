"""The user's table back as they gave it, in Python (issue 33): allpairs.dedup of a DataFrame gives its kept
rows, pairs come with the columns and texts asked for, a cluster column joins back in one call, and
results that surprise say why."""
from __future__ import annotations

import pytest

import allpairs
from allpairs.errors import AllPairsError

pandas = pytest.importorskip("pandas")

TITLES = ["Fabe Wireless Charger for iPhone 12, Black", "fabe wireless charger for iphone 12 - black",
          "Mubo Leather Case for Pixel 8 Navy", "MUBO LEATHER CASE FOR PIXEL 8 NAVY!",
          "Doba Stainless Steel Bottle 500 ml", "Fabe Wireless Charger for iPhone 12 Black", "Rebe Mini Tripod, Clear"]


@pytest.fixture
def df():
    return pandas.DataFrame({"brand": ["Fabe", "Fabe", "Mubo", "Mubo", "Doba", "Fabe", "Rebe"], "title": TITLES,
                             "price": [19.99, 18.5, 24.0, 23.1, 12.0, 21.0, 9.99]},
                            index=pandas.Index(["A1", "A2", "B1", "B2", "C1", "A3", "D1"], name="sku"))


# --- 2. the table back ----------------------------------------------------------------------------------

def test_dedup_is_a_top_level_name_beside_join():
    assert "dedup" in dir(allpairs) and callable(allpairs.dedup)


def test_dedup_of_a_dataframe_returns_its_kept_rows_with_every_column_in_input_order(df):
    kept = allpairs.dedup(df, 0.5, text="title")
    pandas.testing.assert_frame_equal(kept, df.loc[["A1", "B1", "C1", "D1"]])


def test_dedup_of_a_dataframe_joins_several_text_columns_and_defaults_to_a_text_column(df):
    kept = allpairs.dedup(df, 0.9, text=["brand", "title"])
    assert list(kept.index) == ["A1", "B1", "C1", "D1"]
    with pytest.raises(AllPairsError, match="text="):
        allpairs.dedup(df, 0.5)  # no column named text, and more than one column


def test_missing_titles_of_a_dataframe_are_empty_documents_not_the_word_none(df):
    """A None, NaN or NA title has no shingle: kept, and no copy of another missing title, nor of a row whose
    title is the text "None" or "nan" (it was, read through ``astype(str)``)."""
    import numpy as np

    frame = pandas.DataFrame({"title": ["Fabe Wireless Charger", None, None, np.nan, "None", "nan", pandas.NA],
                              "brand": ["Fabe", None, "Mubo", "Doba", None, "Rebe", None]})
    pandas.testing.assert_frame_equal(allpairs.dedup(frame, 0.5, text="title"), frame)
    pandas.testing.assert_frame_equal(allpairs.dedup(frame, 0.5, text=["title", "brand"]), frame)


def test_missing_texts_in_a_list_or_series_are_empty_documents():
    """None, NaN and NA among texts are documents with no shingle (as Spark reads a null text); a list
    mixing texts with token sets is still refused."""
    import numpy as np

    for data in (["a b c", None, "a b c", "None"], pandas.Series(["a b c", np.nan, "a b c", "nan"]),
                 pandas.Series(["a b c", pandas.NA, "a b c", "None"], dtype="string")):
        res = allpairs.join(data, 0.5, shingle="word:1")
        assert [(p.left, p.right) for p in res.pairs] == [(0, 2)] and res.stats.skipped == [(1, "no shingle")]
        assert allpairs.dedup(data, 0.5, shingle="word:1").kept.tolist() == [0, 1, 3]
    with pytest.raises(AllPairsError, match="mixed input"):
        allpairs.join(["a b c", ["a", "b"]], 0.5)


def test_dedup_of_a_list_still_returns_the_dedup_result():
    res = allpairs.dedup(TITLES, 0.5)
    assert res.kept.tolist() == [0, 2, 4, 6]


def test_to_pandas_puts_the_columns_asked_for_and_both_texts_beside_each_pair(df):
    res = allpairs.join(df["title"], 0.5)
    t = res.to_pandas(texts=True)
    assert list(t.columns)[-2:] == ["left_text", "right_text"]
    first = t.iloc[0]
    assert (first.left, first.right, first.left_text, first.right_text) == ("A1", "A2", TITLES[0], TITLES[1])
    c = res.to_pandas(columns=df[["brand", "price"]])
    assert list(c.columns)[-4:] == ["left_brand", "right_brand", "left_price", "right_price"]
    assert c.iloc[0].left_price == 19.99 and c.iloc[0].right_price == 18.5


def test_a_cluster_column_joins_back_to_the_input_in_one_call(df):
    res = allpairs.join(df["title"], 0.5, clusters=True)
    out = df.join(res.clusters.to_series())
    assert out["cluster"].tolist()[:4] == [1, 1, 2, 2] and out.loc["A3", "cluster"] == 1
    assert pandas.isna(out.loc["C1", "cluster"])
    numbered = df.join(res.clusters.to_series(singletons=True))
    assert numbered["cluster"].tolist() == [1, 1, 2, 2, 3, 1, 4]


# --- 7. results that surprise say why ------------------------------------------------------------------------

def test_clusters_without_clusters_true_raise_a_message_naming_the_option():
    res = allpairs.join(TITLES, 0.5)
    with pytest.raises(AllPairsError, match="clusters=True"):
        len(res.clusters)
    with pytest.raises(AllPairsError, match="clusters=True"):
        res.clusters.to_pandas()


def test_dir_of_the_package_lists_only_its_public_names():
    names = set(dir(allpairs))
    assert not names & {"sys", "importlib", "ModuleType", "TYPE_CHECKING", "annotations", "_EXPORTS", "_Package"}
    assert {"join", "dedup", "compare", "Corpus", "SearchIndex", "__version__"} <= names


def test_every_public_name_the_package_lists_can_be_imported_from_it():
    for name in allpairs.__all__:
        assert getattr(allpairs, name) is not None, name
    from allpairs import SearchIndex
    from allpairs.index import SearchIndex as IndexSearchIndex

    assert SearchIndex is IndexSearchIndex


def test_index_query_numbers_are_documented_as_zero_based():
    from allpairs.index import SearchIndex

    assert "0-based" in SearchIndex.query.__doc__


def test_the_default_word_1_for_titles_names_char_3_for_copies_with_typos():
    note = next(n for n in allpairs.join(TITLES, 0.5).stats.notes if "chosen from the texts' lengths" in n)
    assert note.startswith("word:1 shingles") and "char:3 finds more" in note
    long = ["one two three four five six seven eight nine ten " * 6] * 2
    assert not any("char:3 finds more" in n for n in allpairs.join(long, 0.5).stats.notes)
