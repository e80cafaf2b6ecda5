"""Carried columns keep the input's types (allpairs/output/carried.py): JSON Lines and Parquet outputs of
join --keep-all / --keep-col, clusters, R-S joins and dedup write each JSON Lines field's JSON value and
each Parquet column with its Arrow type; TSV and CSV stay text, as they were."""
from __future__ import annotations

import datetime
import json

import pytest
from typer.testing import CliRunner

from allpairs.cli import app
from allpairs.output.carried import JSON, NULL, STRING, Carried, concat

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

#: Two pairs of near-duplicate titles (0-1, 2-3) with every JSON type, a null, an absent field (only the
#: last record has "colour") and non-ASCII text.
RECORDS = [
    {"id": 0, "title": "red apple pie recipe", "price": 3.5, "qty": 2, "ok": True, "tags": ["a", "b"],
     "dims": {"w": 1.5, "h": 2}, "note": "é ✓"},
    {"id": 1, "title": "red apple pie recipes", "price": 4.0, "qty": 7, "ok": False, "tags": ["c"],
     "dims": {"w": 1.0, "h": 3}, "note": None},
    {"id": 2, "title": "blue car for sale", "price": None, "qty": 0, "ok": True, "tags": [],
     "dims": None, "note": ""},
    {"id": 3, "title": "blue car for sale now", "price": 10.25, "qty": -1, "ok": None, "tags": ["x"],
     "dims": {"w": 0.5, "h": 1}, "note": "日本", "colour": "navy"},
]
FIELDS = ["title", "price", "qty", "ok", "tags", "dims", "note", "colour"]
JOIN = ("-t", "0.5", "--text-col", "title", "--id-col", "id", "-q")


def run(*args):
    r = CliRunner().invoke(app, [str(a) for a in args], prog_name="allpairs")
    assert r.exit_code == 0, r.output
    return r


def value(i: int, name: str):
    return RECORDS[i].get(name)


@pytest.fixture
def records(tmp_path):
    f = tmp_path / "t.jsonl"
    f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in RECORDS), encoding="utf-8")
    return f


#: The Parquet input: the records' columns with their Arrow types, and a date32 and an int32 column.
DAYS = [datetime.date(2024, 5, 1), None, datetime.date(1999, 12, 31), datetime.date(2030, 1, 2)]


@pytest.fixture
def table(tmp_path):
    t = pa.Table.from_pylist([{k: r.get(k) for k in ["id", *FIELDS]} for r in RECORDS])
    t = t.append_column("day", pa.array(DAYS, pa.date32()))
    t = t.append_column("small", pa.array([1, 2, None, 4], pa.int32()))
    f = tmp_path / "t.parquet"
    pq.write_table(t, f)
    return f, t


def jsonl_rows(r) -> list[dict]:
    return [json.loads(line) for line in r.stdout.splitlines()]


def test_json_lines_to_json_lines_carries_each_fields_json_value(records):
    got = jsonl_rows(run("join", "--jsonl", records, *JOIN, "--keep-all", "-f", "jsonl"))
    assert [(g["left"], g["right"]) for g in got] == [("0", "1"), ("2", "3")]  # JSON Lines ids are text
    for g in got:
        for name in FIELDS:
            assert g[f"left_{name}"] == value(int(g["left"]), name), name
            assert g[f"right_{name}"] == value(int(g["right"]), name), name
    assert got[1]["left_price"] is None and got[1]["left_note"] == ""  # null and empty text told apart
    assert got[1]["left_colour"] is None  # a field a record lacks is null


def test_json_lines_to_parquet_types_each_field_as_arrow_infers_it(records, tmp_path):
    run("join", "--jsonl", records, *JOIN, "--keep-all", "-o", tmp_path / "p.parquet")
    got = pq.read_table(tmp_path / "p.parquet")
    types = {f.name: f.type for f in got.schema}
    assert types["left_price"] == pa.float64() and types["left_qty"] == pa.int64()
    assert types["left_ok"] == pa.bool_() and types["left_tags"] == pa.list_(pa.string())
    assert pa.types.is_struct(types["left_dims"]) and types["left"] == pa.string()
    for row in got.to_pylist():
        for name in FIELDS:
            assert row[f"right_{name}"] == value(int(row["right"]), name), name


def test_a_json_field_of_several_types_is_text_in_parquet_and_typed_in_json_lines(tmp_path):
    f = tmp_path / "mixed.jsonl"
    f.write_text('{"id": "a", "title": "one two three", "v": 5}\n{"id": "b", "title": "one two three four", "v": "5"}\n'
                 '{"id": "c", "title": "x y z", "v": [1]}\n{"id": "d", "title": "x y z w", "v": null}\n')
    run("join", "--jsonl", f, *JOIN, "--keep-col", "v", "-o", tmp_path / "p.parquet")
    got = pq.read_table(tmp_path / "p.parquet")
    assert got.schema.field("left_v").type == pa.string()
    assert got.column("left_v").to_pylist() == ["5", "[1]"] and got.column("right_v").to_pylist() == ["5", None]
    lines = jsonl_rows(run("join", "--jsonl", f, *JOIN, "--keep-col", "v", "-f", "jsonl"))
    assert [(g["left_v"], g["right_v"]) for g in lines] == [(5, "5"), ([1], None)]


def test_parquet_to_parquet_keeps_each_columns_arrow_type(table, tmp_path):
    f, source = table
    for keep in (["--keep-all"], ["--keep-col", "day", "--keep-col", "small", "--keep-col", "dims"]):
        run("join", "--parquet", f, *JOIN, *keep, "-o", tmp_path / "p.parquet")
        got = pq.read_table(tmp_path / "p.parquet")
        carried = [n for n in got.column_names if n.startswith("left_") and n != "left_size"]
        assert carried and all(got.schema.field(n).type == source.schema.field(n[5:]).type for n in carried)
        rows = source.to_pylist()
        for row in got.to_pylist():
            for n in carried:
                assert row[n] == rows[int(row["left"])][n[5:]], n
                assert row["right_" + n[5:]] == rows[int(row["right"])][n[5:]], n


def test_parquet_to_json_lines_writes_typed_values_and_dates_as_iso_8601(table):
    f, _ = table
    got = jsonl_rows(run("join", "--parquet", f, *JOIN, "--keep-all", "-f", "jsonl"))
    assert got[0]["left_day"] == "2024-05-01" and got[0]["right_day"] is None and got[1]["left_small"] is None
    assert got[0]["left_dims"] == {"w": 1.5, "h": 2.0} and got[0]["right_tags"] == ["c"]
    assert got[1]["right_note"] == "日本" and got[1]["right_ok"] is None and got[1]["left_qty"] == 0


def test_clusters_carry_types_in_json_lines_and_parquet(records, table, tmp_path):
    got = jsonl_rows(run("join", "--jsonl", records, *JOIN, "--clusters", "--keep-col", "price",
                         "--keep-col", "tags", "-f", "jsonl"))
    assert [(g["id"], g["price"], g["tags"]) for g in got] == [(str(i), value(i, "price"), value(i, "tags"))
                                                             for i in range(4)]
    f, source = table
    run("join", "--parquet", f, *JOIN, "--clusters", "--keep-all", "-o", tmp_path / "c.parquet")
    got = pq.read_table(tmp_path / "c.parquet")
    assert got.schema.field("day").type == pa.date32() and got.schema.field("small").type == pa.int32()
    assert got.column("tags").to_pylist() == source.column("tags").to_pylist()
    assert got.schema.field("id").type == pa.int64() and got.column("id").to_pylist() == [0, 1, 2, 3]


def test_an_r_s_join_carries_both_sides_typed(records, table, tmp_path):
    got = jsonl_rows(run("join", "--jsonl", records, "--against", records, *JOIN, "--keep-col", "qty", "-f", "jsonl"))
    assert got and all(g["left_qty"] == value(int(g["left"]), "qty") for g in got)
    other = tmp_path / "other.jsonl"  # without "tags": null on that side, typed on the other
    other.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "tags"}) + "\n" for r in RECORDS[:2]))
    got = jsonl_rows(run("join", "--jsonl", records, "--against", other, *JOIN, "--keep-all", "-f", "jsonl"))
    assert got and all(g["right_tags"] is None and g["left_tags"] == value(int(g["left"]), "tags") for g in got)
    f, source = table
    run("join", "--parquet", f, "--against", f, *JOIN, "--keep-col", "day", "-o", tmp_path / "rs.parquet")
    got = pq.read_table(tmp_path / "rs.parquet")
    assert got.schema.field("right_day").type == pa.date32()
    assert all(r["right_day"] == DAYS[int(r["right"])] for r in got.to_pylist())


def test_dedup_keep_col_writes_typed_values(records):
    got = jsonl_rows(run("dedup", "--jsonl", records, *JOIN, "--keep-col", "price", "--keep-col", "ok",
                         "-f", "jsonl"))
    assert got == [{"id": "0", "price": 3.5, "ok": True}, {"id": "2", "price": None, "ok": True}]


def test_tsv_and_csv_carry_text_as_before(records):
    tsv = run("join", "--jsonl", records, *JOIN, "--keep-col", "price", "--keep-col", "tags", "--keep-col", "ok")
    assert tsv.stdout.splitlines()[2] == '2\t3\t0.800000\t\t10.25\t[]\t["x"]\ttrue\t'
    csv = run("join", "--jsonl", records, *JOIN, "--keep-col", "price", "-f", "csv")
    assert csv.stdout.splitlines()[1] == "0,1,0.600000,3,4,4,3.5,4.0"


def test_index_query_carries_both_sides_as_text_alike(records, tmp_path):
    ix = tmp_path / "t.idx"
    run("index", "build", "--jsonl", records, "-t", "0.5", "--text-col", "title", "--keep-col", "price", "-o", ix, "-q")
    got = jsonl_rows(run("index", "query", ix, "--jsonl", records, "--text-col", "title", "--keep-col", "price",
                         "-q", "-f", "jsonl"))
    assert (got[0]["query_price"], got[0]["indexed_price"]) == ("3.5", "3.5")


def test_parquet_row_groups_of_pairs_share_the_type_inferred_over_every_document(tmp_path, monkeypatch):
    import allpairs.pairs.rows as rows

    monkeypatch.setattr(rows, "ROW_GROUP", 1)  # a row group a pair: the first pair's values are all ints
    f = tmp_path / "m.jsonl"
    f.write_text('{"id": "a", "title": "one two three", "v": 1}\n{"id": "b", "title": "one two three four", "v": 2}\n'
                 '{"id": "c", "title": "x y z", "v": 2.5}\n{"id": "d", "title": "x y z w", "v": null}\n')
    run("join", "--jsonl", f, *JOIN, "--keep-col", "v", "-o", tmp_path / "p.parquet")
    assert pq.ParquetFile(tmp_path / "p.parquet").metadata.num_row_groups == 2
    got = pq.read_table(tmp_path / "p.parquet")
    assert got.schema.field("left_v").type == pa.float64()
    assert got.column("left_v").to_pylist() == [1.0, 2.5] and got.column("right_v").to_pylist() == [2.0, None]


def test_json_texts_escape_line_separators_and_write_nan_and_infinities_as_null():
    c = Carried()
    for v in ["a\u2028b", ["x\u2029"], None, 1.5, float("nan"), datetime.date(2020, 1, 2), [1.0, float("-inf")],
              {"NaN": "Infinity"}]:
        c.append_value(v if isinstance(v, str) else json.dumps(v) if isinstance(v, (list, dict)) else str(v), v)
    assert list(c.kinds) == [STRING, JSON, NULL, JSON, NULL, STRING, JSON, JSON]
    assert c.json_texts() == ['"a\\u2028b"', '["x\\u2029"]', "null", "1.5", "null", '"2020-01-02"', "[1.0, null]",
                              '{"NaN": "Infinity"}']


def test_concat_keeps_types_and_pads_a_side_without_the_column():
    a = Carried(["1"], bytes([JSON]))
    joined = concat([(a, 1), (None, 2)])
    assert isinstance(joined, Carried) and list(joined) == ["1", "", ""] and joined.values() == [1, None, None]
    assert concat([(["x"], 1), (a, 1)]) == ["x", "1"]  # a text column on one side: text on both


def test_to_pandas_gives_carried_columns_typed(records, table):
    pytest.importorskip("pandas")
    import allpairs
    from allpairs.corpus.records import read_jsonl
    from allpairs.corpus.tables import read_table

    res = allpairs.join(read_jsonl(records, text_field="title", keep=["tags", "price"]), 0.5)
    frame = res.to_pandas(columns=["tags", "price"])
    assert frame["left_tags"].tolist() == [["a", "b"], []] and frame["right_price"].tolist()[0] == 4.0
    res = allpairs.join(read_table(table[0], "parquet", text_cols=["title"], keep=["day"]), 0.5)
    assert res.to_pandas(columns=True)["left_day"].tolist() == [DAYS[0], DAYS[2]]


def test_a_carried_column_of_texts_alone_is_strings_and_kinds_must_match_the_texts():
    assert Carried(["a", ""]).json_texts() == ['"a"', '""']
    with pytest.raises(ValueError, match="1 kinds for 2 texts"):
        Carried(["a", "b"], bytes([JSON]))


def test_top_neighbors_and_lsh_pairs_carry_types_too(records, tmp_path):
    got = jsonl_rows(run("join", "--jsonl", records, "--text-col", "title", "--id-col", "id", "-q", "--top", "1",
                         "--keep-col", "price", "-f", "jsonl"))
    assert [(g["left_price"], g["right_price"]) for g in got] == [(None, 10.25)]
    run("join", "--jsonl", records, "--text-col", "title", "--id-col", "id", "-q", "--neighbors", "1",
        "--keep-col", "tags", "-o", tmp_path / "n.parquet")
    got = pq.read_table(tmp_path / "n.parquet")
    assert got.column("left_tags").to_pylist() == [value(int(i), "tags") for i in got.column("left").to_pylist()]
    got = jsonl_rows(run("join", "--jsonl", records, *JOIN, "--method", "lsh", "--keep-col", "ok", "-f", "jsonl"))
    assert got and all(g["right_ok"] == value(int(g["right"]), "ok") for g in got)


def test_a_parquet_inputs_integer_ids_stay_integers_in_json_lines_and_parquet(tmp_path):
    # As the Spark engine writes them: a Parquet table's integer ids come back integers (Parquet: the id column's
    # own type), in pairs, clusters, dedup and R–S joins; TSV and CSV are text, JSON Lines ids text (the Spark
    # engine reads them as strings).
    f = tmp_path / "t.parquet"
    pq.write_table(pa.table({"id": pa.array([7, 8, 9], pa.int32()), "title": ["a b c d", "a b c e", "x y"]}), f)
    run("join", "--parquet", f, *JOIN, "-o", tmp_path / "p.parquet")
    got = pq.read_table(tmp_path / "p.parquet")
    assert got.schema.field("left").type == pa.int32() and got.column("right").to_pylist() == [8]
    assert run("join", "--parquet", f, *JOIN).stdout.splitlines()[1].split("\t")[:2] == ["7", "8"]
    assert [(g["left"], g["right"]) for g in jsonl_rows(run("join", "--parquet", f, *JOIN, "-f", "jsonl"))] == [(7, 8)]
    assert [g["id"] for g in jsonl_rows(run("join", "--parquet", f, *JOIN, "--clusters", "-f", "jsonl"))] == [7, 8]
    assert jsonl_rows(run("dedup", "--parquet", f, *JOIN, "--removed", "-f", "jsonl"))[0]["removed"] == 8
    both = jsonl_rows(run("join", "--parquet", f, "--against", f, *JOIN, "-f", "jsonl"))
    assert (7, 7) in [(g["left"], g["right"]) for g in both]
    run("join", "--parquet", f, "--against", f, *JOIN, "-o", tmp_path / "rs.parquet")
    assert pq.read_table(tmp_path / "rs.parquet").schema.field("right").type == pa.int32()
    strings = tmp_path / "s.parquet"
    pq.write_table(pa.table({"id": ["x", "y"], "title": ["a b c d", "a b c e"]}), strings)
    one = jsonl_rows(run("join", "--parquet", f, "--against", strings, *JOIN, "-f", "jsonl"))
    assert [(g["left"], g["right"]) for g in one] == [("7", "x"), ("7", "y"), ("8", "x"), ("8", "y")]


def test_every_parquet_pair_table_holds_the_float_nearest_the_exact_similarity(tmp_path):
    # join wrote float(7/11) to Parquet, dedup --removed and index query the 6 decimals' float (0.636363): a
    # reader filtering ``similarity >= 7/11`` lost the pair in two of the three. Text formats stay truncated.
    from fractions import Fraction

    lines = tmp_path / "l.txt"
    lines.write_text("a b c d e f g h i\na b c d e f g j k\n")
    flags = ("-t", "0.5", "-s", "word:1", "-q", "--lines", lines)
    run("join", *flags, "-o", tmp_path / "j.parquet")
    run("dedup", *flags, "--removed", "-o", tmp_path / "d.parquet")
    run("index", "build", "-t", "0.5", "-s", "word:1", "-q", "--lines", lines, "-o", tmp_path / "ix")
    run("index", "query", tmp_path / "ix", "-q", "--lines", lines, "-o", tmp_path / "q.parquet")
    want = float(Fraction(7, 11))
    assert pq.read_table(tmp_path / "j.parquet").column("similarity").to_pylist() == [want]
    assert pq.read_table(tmp_path / "d.parquet").column("similarity").to_pylist() == [want]
    assert want in pq.read_table(tmp_path / "q.parquet").column("similarity").to_pylist()
    assert jsonl_rows(run("dedup", *flags, "--removed", "-f", "jsonl"))[0]["similarity"] == 0.636363
