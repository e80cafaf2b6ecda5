"""The user's table back as they gave it, and a tool that never goes quiet (issue 33), on the command line:
-o's extension chooses the format, dedup writes whole rows, a file read as one document is named,
every long stage reports on the one progress bar, and messages point the way that works."""
from __future__ import annotations

import csv
import io
import json

import pytest
from typer.testing import CliRunner

from allpairs.cli import app

#: A product table as users export it: sku first, the title in the middle; rows 2, 4 and 6 relist 1, 3 and 1.
PRODUCTS = [("sku", "brand", "title", "price"),
            ("A1", "Fabe", "Fabe Wireless Charger for iPhone 12, Black", "19.99"),
            ("A2", "Fabe", "fabe wireless charger for iphone 12 - black", "18.50"),
            ("B1", "Mubo", "Mubo Leather Case for Pixel 8 Navy", "24.00"),
            ("B2", "Mubo", "MUBO LEATHER CASE FOR PIXEL 8 NAVY!", "23.10"),
            ("C1", "Doba", "Doba Stainless Steel Bottle 500 ml", "12.00"),
            ("A3", "Fabe", "Fabe Wireless Charger for iPhone 12 Black", "21.00"),
            ("D1", "Rebe", "Rebe Mini Tripod, Clear", "9.99")]
KEPT = ["A1", "B1", "C1", "D1"]


def run(*args, input=None):
    return CliRunner().invoke(app, [str(a) for a in args], input=input, prog_name="allpairs")


def one_error_line(r, code: int) -> str:
    assert r.exit_code == code, (r.exit_code, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("allpairs: error: "), r.stderr
    assert r.stdout == ""
    return lines[0]


@pytest.fixture
def products(tmp_path):
    f = tmp_path / "products.csv"
    with open(f, "w", newline="") as out:
        csv.writer(out).writerows(PRODUCTS)
    return f


@pytest.fixture
def products_jsonl(tmp_path):
    f = tmp_path / "products.jsonl"
    f.write_text("".join(json.dumps(dict(zip(PRODUCTS[0], row))) + "\n" for row in PRODUCTS[1:]))
    return f


TABLE = ("--csv", "--text-col", "title", "--id-col", "sku")


# --- 1. -o takes its format from the extension ---------------------------------------------------------

@pytest.mark.parametrize("name, first", [
    ("pairs.csv", "left,right,similarity,overlap,left_size,right_size"),
    ("pairs.tsv", "left\tright\tsimilarity"),
    ("PAIRS.CSV", "left,right,similarity,overlap,left_size,right_size"),
    ("pairs.txt", "left\tright\tsimilarity"),  # no table extension: -f's default
])
def test_join_output_format_follows_the_extension_of_dash_o(tmp_path, products, name, first):
    r = run("join", "-t", "0.5", *TABLE, products, "-o", tmp_path / name, "-q")
    assert r.exit_code == 0, r.stderr
    assert (tmp_path / name).read_text().splitlines()[0] == first


def test_join_and_dedup_write_json_lines_into_a_jsonl_file(tmp_path, products):
    assert run("join", "-t", "0.5", *TABLE, products, "-o", tmp_path / "kept.jsonl", "-q").exit_code == 0
    first = json.loads((tmp_path / "kept.jsonl").read_text().splitlines()[0])
    assert (first["left"], first["right"]) == ("A1", "A2")
    assert run("dedup", "-t", "0.5", *TABLE, products, "-o", tmp_path / "d.jsonl", "-q").exit_code == 0
    assert [json.loads(x)["sku"] for x in (tmp_path / "d.jsonl").read_text().splitlines()] == KEPT


def test_parquet_extension_writes_parquet(tmp_path, products):
    pq = pytest.importorskip("pyarrow.parquet")
    assert run("join", "-t", "0.5", *TABLE, products, "-o", tmp_path / "p.parquet", "-q").exit_code == 0
    assert pq.read_table(tmp_path / "p.parquet").column_names[:3] == ["left", "right", "similarity"]


def test_index_query_output_format_follows_the_extension(tmp_path, products):
    ix = tmp_path / "p.apx"
    assert run("index", "build", "-t", "0.5", *TABLE, products, "-o", ix, "-q").exit_code == 0
    assert run("index", "query", ix, *TABLE, products, "-o", tmp_path / "m.csv", "-q").exit_code == 0
    assert (tmp_path / "m.csv").read_text().splitlines()[0].startswith("query,indexed,similarity,")


def test_an_extension_that_contradicts_format_is_a_usage_error(tmp_path, products):
    line = one_error_line(run("join", "-t", "0.5", *TABLE, products, "-o", tmp_path / "x.csv", "-f", "jsonl"), 2)
    assert "x.csv" in line and "--format jsonl" in line
    assert not (tmp_path / "x.csv").exists()
    line = one_error_line(run("dedup", "-t", "0.5", *TABLE, products, "-o", tmp_path / "k.tsv", "-f", "csv"), 2)
    assert "--format csv" in line


def test_format_agreeing_with_the_extension_and_stdout_stay_as_they_were(tmp_path, products):
    assert run("join", "-t", "0.5", *TABLE, products, "-o", tmp_path / "x.csv", "-f", "csv", "-q").exit_code == 0
    r = run("join", "-t", "0.5", *TABLE, products, "-o", "-", "-q")
    assert r.stdout.splitlines()[0] == "left\tright\tsimilarity"


# --- 2. dedup gives back the user's rows; --keep-all elsewhere --------------------------------------------

def test_dedup_of_a_csv_writes_the_kept_rows_with_all_their_columns_under_their_own_names(tmp_path, products):
    r = run("dedup", "-t", "0.5", *TABLE, products, "-o", tmp_path / "kept.csv")
    assert r.exit_code == 0, r.stderr
    rows = list(csv.reader(io.StringIO((tmp_path / "kept.csv").read_text())))
    assert rows == [list(PRODUCTS[0])] + [list(p) for p in PRODUCTS[1:] if p[0] in KEPT]


def test_dedup_of_a_table_to_stdout_is_the_kept_rows_in_the_tables_format(products):
    # A CSV's kept rows come back as CSV (`dedup --csv in.csv > out.csv`), TSV when asked.
    r = run("dedup", "-t", "0.5", *TABLE, products, "-q")
    assert r.exit_code == 0, r.stderr
    assert list(csv.reader(io.StringIO(r.stdout, newline=""))) == [list(PRODUCTS[0])] + [
        list(p) for p in PRODUCTS[1:] if p[0] in KEPT]
    r = run("dedup", "-t", "0.5", *TABLE, products, "-q", "-f", "tsv")
    assert r.stdout.splitlines() == ["\t".join(PRODUCTS[0])] + ["\t".join(p) for p in PRODUCTS[1:] if p[0] in KEPT]


def test_dedup_of_json_lines_keeps_every_field_of_the_kept_records(tmp_path, products_jsonl):
    r = run("dedup", "-t", "0.5", "--jsonl", "--text-col", "title", "--id-col", "sku", products_jsonl, "-q",
            "-o", tmp_path / "kept.jsonl")
    assert r.exit_code == 0, r.stderr
    got = [json.loads(x) for x in (tmp_path / "kept.jsonl").read_text().splitlines()]
    assert got == [dict(zip(PRODUCTS[0], p)) for p in PRODUCTS[1:] if p[0] in KEPT]


#: Records as users export them: integer ids, numbers, booleans, nulls, lists, a nested object, a field only
#: some records have, and a row whose title is empty (kept: nothing reaches it). Row 2 relists row 1.
TYPED = [
    {"sku": 11, "title": "Fabe Wireless Charger for iPhone 12, Black", "price": 19.99, "stock": True,
     "tags": ["usb-c", "qi"], "dims": {"w": 7.5, "h": 1.2}, "note": None},
    {"sku": 12, "title": "fabe wireless charger for iphone 12 - black", "price": 18.5, "stock": False,
     "tags": [], "dims": {"w": 7.5, "h": 1.2}, "note": "relist"},
    {"sku": 13, "title": "", "price": 3, "stock": True, "tags": None, "dims": None, "note": None},
    {"sku": 14, "title": "Mubo Leather Case for Pixel 8 Navy", "price": 24.0, "stock": True,
     "tags": ["leather"], "dims": {"w": 8.1, "h": 16.2}, "note": "é ✓", "colour": "navy"},
]
TYPED_KEPT = [11, 13, 14]


@pytest.fixture
def typed_jsonl(tmp_path):
    f = tmp_path / "typed.jsonl"
    # Spacing as a user's exporter writes it (not json.dumps's): written back byte for byte.
    f.write_text("".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in TYPED))
    return f


def test_dedup_of_json_lines_writes_the_kept_records_back_byte_for_byte(tmp_path, typed_jsonl):
    r = run("dedup", "-t", "0.5", "--jsonl", "--text-col", "title", "--id-col", "sku", typed_jsonl,
            "-o", tmp_path / "kept.jsonl")
    assert r.exit_code == 0, r.stderr
    lines = typed_jsonl.read_text().splitlines()
    assert (tmp_path / "kept.jsonl").read_text().splitlines() == [lines[0], lines[2], lines[3]]
    assert "1 document with no" in r.stderr and "kept as it is" in r.stderr and "warning: skipped" not in r.stderr


def test_dedup_of_json_lines_to_parquet_keeps_types_and_every_field(tmp_path, typed_jsonl):
    pq = pytest.importorskip("pyarrow.parquet")
    r = run("dedup", "-t", "0.5", "--jsonl", "--text-col", "title", "--id-col", "sku", typed_jsonl, "-q",
            "-o", tmp_path / "kept.parquet")
    assert r.exit_code == 0, r.stderr
    got = pq.read_table(tmp_path / "kept.parquet")
    want = [t for t in TYPED if t["sku"] in TYPED_KEPT]
    assert got.column_names == ["sku", "title", "price", "stock", "tags", "dims", "note", "colour"]
    assert got.to_pylist() == [{**{k: None for k in got.column_names}, **t} for t in want]
    # The CSV of the same records keeps the field only the last one has, empty before it.
    r = run("dedup", "-t", "0.5", "--jsonl", "--text-col", "title", "--id-col", "sku", typed_jsonl, "-q",
            "--format", "csv")
    rows = list(csv.reader(io.StringIO(r.stdout)))
    assert rows[0][-1] == "colour" and [row[-1] for row in rows[1:]] == ["", "", "navy"]


def test_dedup_of_parquet_writes_the_kept_rows_with_their_schema(tmp_path, typed_jsonl):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    source = pa.Table.from_pylist([{k: t.get(k) for k in TYPED[-1]} for t in TYPED]) \
        .append_column("day", pa.array([20000, 20001, 20002, 20003], pa.int32()).cast(pa.date32()))
    pq.write_table(source, tmp_path / "typed.parquet")
    r = run("dedup", "-t", "0.5", "--parquet", "--text-col", "title", "--id-col", "sku", tmp_path / "typed.parquet",
            "-q", "-o", tmp_path / "kept.parquet")
    assert r.exit_code == 0, r.stderr
    got = pq.read_table(tmp_path / "kept.parquet")
    assert got.schema == pq.read_schema(tmp_path / "typed.parquet")  # int64 ids, doubles, lists, structs, dates
    assert got.to_pylist() == [row for row in source.to_pylist() if row["sku"] in TYPED_KEPT]
    # To JSON Lines: an object a row, numbers as numbers, lists as arrays, nulls as null, dates as ISO 8601.
    r = run("dedup", "-t", "0.5", "--parquet", "--text-col", "title", "--id-col", "sku", tmp_path / "typed.parquet",
            "-q", "--format", "jsonl")
    got = [json.loads(x) for x in r.stdout.splitlines()]
    assert [g["sku"] for g in got] == TYPED_KEPT and got[0]["price"] == 19.99 and got[0]["tags"] == ["usb-c", "qi"]
    assert got[1]["tags"] is None and got[1]["day"] == "2024-10-06" and got[0]["dims"] == {"w": 7.5, "h": 1.2}


def test_dedup_of_parquet_to_json_lines_writes_nan_and_infinities_as_null(tmp_path):
    # json.dumps writes NaN and Infinity, which no JSON reader takes (json.loads does: strict parsers do not).
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    pq.write_table(pa.table({"id": [1, 2, 3], "title": ["red apple", "blue car", "green tea"],
                             "score": [float("nan"), float("inf"), 1.5],
                             "xs": [[float("-inf"), 2.0], [], None]}), tmp_path / "t.parquet")
    r = run("dedup", "-t", "0.5", "--parquet", "--text-col", "title", "--id-col", "id", tmp_path / "t.parquet",
            "-q", "--format", "jsonl")
    assert r.exit_code == 0, r.stderr
    strict = lambda text: json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in {text}"))  # noqa: E731
    assert [strict(x) for x in r.stdout.splitlines()] == [
        {"id": 1, "title": "red apple", "score": None, "xs": [None, 2.0]},
        {"id": 2, "title": "blue car", "score": None, "xs": []},
        {"id": 3, "title": "green tea", "score": 1.5, "xs": None}]


def test_dedup_with_keep_col_stays_compact_and_removed_is_unchanged(products):
    r = run("dedup", "-t", "0.5", *TABLE, products, "--keep-col", "price", "-q")
    assert r.stdout.splitlines()[:2] == ["id\tprice", "A1\t19.99"]
    r = run("dedup", "-t", "0.5", *TABLE, products, "--removed", "-q")
    assert r.stdout.splitlines()[0] == "removed\tkept\tsimilarity"


def test_join_keep_all_carries_every_column_beside_each_id(products):
    r = run("join", "-t", "0.5", *TABLE, products, "--keep-all", "-q", "-f", "csv")
    assert r.exit_code == 0, r.stderr
    head = r.stdout.splitlines()[0].split(",")
    assert head == ["left", "right", "similarity", "overlap", "left_size", "right_size", "left_brand",
                    "right_brand", "left_title", "right_title", "left_price", "right_price"]
    compact = run("join", "-t", "0.5", *TABLE, products, "-q")
    assert compact.stdout.splitlines()[0] == "left\tright\tsimilarity"


def test_clusters_and_index_query_take_keep_all(tmp_path, products):
    r = run("join", "-t", "0.5", *TABLE, products, "--clusters", "--keep-all", "-q")
    assert r.stdout.splitlines()[0] == "id\tcluster\tcluster_size\tbrand\ttitle\tprice"
    ix = tmp_path / "p.apx"
    assert run("index", "build", "-t", "0.5", *TABLE, products, "-o", ix, "-q").exit_code == 0
    r = run("index", "query", ix, *TABLE, products, "--keep-all", "-q")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.splitlines()[0].split("\t")[3:] == ["query_brand", "query_title", "query_price"]


def test_keep_all_and_keep_col_together_is_a_usage_error(products):
    assert "--keep-col" in one_error_line(run("join", "-t", "0.5", *TABLE, products, "--keep-all",
                                              "--keep-col", "price"), 2)


# --- 3. one file read as one document --------------------------------------------------------------------

def test_a_file_of_lines_read_as_one_document_is_named_with_lines_suggested(tmp_path):
    f = tmp_path / "passwords.txt"
    f.write_text("".join(f"pass{k}word\n" for k in range(50)))
    line = one_error_line(run("join", "-t", "0.5", f), 2)
    assert "passwords.txt" in line and "one document" in line and "--lines" in line
    assert "50 lines" in line


def test_a_json_lines_file_named_alone_suggests_jsonl(products_jsonl):
    line = one_error_line(run("join", "-t", "0.5", products_jsonl), 2)
    assert "--jsonl" in line


def test_a_csv_looking_file_with_another_ending_suggests_csv(tmp_path, products):
    f = tmp_path / "export.dat"
    f.write_text(products.read_text())
    assert "--csv" in one_error_line(run("dedup", "-t", "0.5", f), 2)


def test_csv_given_json_lines_says_it_looks_like_json_lines(products_jsonl):
    line = one_error_line(run("join", "-t", "0.5", "--csv", products_jsonl), 2)
    assert "JSON Lines" in line and "--jsonl" in line and "header" not in line


def test_a_directory_of_one_file_and_an_index_of_one_document_are_not_refused(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "a.txt").write_text("one two three")
    assert run("join", "-t", "0.5", d, "-q").exit_code == 0
    assert run("index", "build", "-t", "0.5", d / "a.txt", "-o", tmp_path / "a.apx", "-q").exit_code == 0


# --- 4. progress on every long stage ---------------------------------------------------------------------

@pytest.fixture
def stages(monkeypatch):
    """The stages the CLI's progress bar was told of (as if stderr were a terminal and a second had gone)."""
    from allpairs.cli import _app

    seen: list[str] = []
    monkeypatch.setattr(_app.Messages, "is_terminal", property(lambda self: True))
    monkeypatch.setattr(_app.Bar, "__call__", lambda self, stage, done, total, detail="": seen.append(stage)
                        if self.enabled else None)
    return seen


def test_dedup_reports_its_dedup_stage_on_the_progress_bar(products, stages):
    assert run("dedup", "-t", "0.5", *TABLE, products).exit_code == 0
    assert "shingle" in stages and "dedup" in stages


def test_neighbors_clusters_and_index_build_and_query_report_progress(tmp_path, products, stages):
    assert run("join", *TABLE, products, "--neighbors", "2").exit_code == 0
    assert "neighbors" in stages
    stages.clear()
    assert run("join", "-t", "0.5", *TABLE, products, "--clusters").exit_code == 0
    assert "clusters" in stages
    stages.clear()
    ix = tmp_path / "p.apx"
    assert run("index", "build", "-t", "0.5", *TABLE, products, "-o", ix).exit_code == 0
    assert "index" in stages
    stages.clear()
    assert run("index", "query", ix, *TABLE, products).exit_code == 0
    assert "query" in stages


def test_quiet_reports_no_progress(products, stages):
    assert run("dedup", "-t", "0.5", *TABLE, products, "-q").exit_code == 0
    assert stages == []


def test_neighbors_summary_says_what_it_output_and_what_the_joins_found(products):
    r = run("join", *TABLE, products, "--neighbors", "2")
    assert r.exit_code == 0, r.stderr
    line = next(x for x in r.stderr.splitlines() if "nearest" in x)
    assert "between distinct sets" not in r.stderr
    assert "2 nearest neighbours of each document" in line


# --- 6. messages that send users the right way -----------------------------------------------------------

def test_typer_usage_errors_are_one_line(products):
    one_error_line(run("join", "-t", "0.5", "--no-such-option", products), 2)
    one_error_line(run("dedup", "--bogus", products), 2)


def test_the_missing_threshold_message_is_the_same_for_join_and_dedup(products):
    j = one_error_line(run("join", *TABLE, products), 2)
    d = one_error_line(run("dedup", *TABLE, products), 2)
    assert j.startswith("allpairs: error: missing option '--threshold' (-t T)")
    assert d == "allpairs: error: missing option '--threshold' (-t T)"


def test_a_wrong_text_col_is_a_usage_error(products):
    line = one_error_line(run("join", "-t", "0.5", "--csv", "--text-col", "nope", products), 2)
    assert "'nope'" in line and "sku, brand, title, price" in line


def test_csv_given_a_directory_says_to_drop_csv(tmp_path):
    line = one_error_line(run("join", "-t", "0.5", "--csv", tmp_path), 2)
    assert "drop --csv" in line and "--lines" not in line


def test_missing_extra_messages_say_what_works_for_a_clone(monkeypatch, tmp_path, products):
    import sys

    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    line = one_error_line(run("join", "-t", "0.5", *TABLE, products, "-o", tmp_path / "p.parquet"), 2)
    assert "allpairs-join[" not in line and "[parquet]" in line and "pip install" in line


def test_the_spark_message_names_every_missing_module(products):
    # In a fresh process, so that no earlier test's import of pyarrow or pyspark is still in sys.modules.
    import subprocess
    import sys

    code = ("import sys; sys.modules['pyspark'] = None; sys.modules['pyarrow'] = None; "
            "sys.argv = ['allpairs', 'join', '-t', '0.5', '--engine', 'spark', '--master', 'local[1]', "
            f"'--lines', {str(products)!r}]; from allpairs.__main__ import main; main()")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stderr  # a missing extra, as parquet's or plot's
    assert "pyspark" in r.stderr and "pyarrow" in r.stderr and "are missing" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_a_missing_spark_extra_is_the_missing_extra_error_every_optional_package_raises():
    import subprocess
    import sys

    code = ("import sys; sys.modules['pyspark'] = None\n"
            "from allpairs.errors import MissingExtraError\n"
            "try:\n    import allpairs.spark\n"  # the engine checks its extra as it is imported
            "except MissingExtraError as e:\n"
            "    from allpairs.engines.spark.session import SparkSetupError\n"
            "    print(isinstance(e, SparkSetupError), e.exit_code)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.stdout.split() == ["True", "2"], r.stderr


# --- 7. index add: documents that would sit among the index's as strangers --------------------------------

def test_index_add_lines_into_an_index_of_table_rows_with_columns_is_refused(tmp_path, products):
    ix = tmp_path / "p.apx"
    assert run("index", "build", "-t", "0.5", *TABLE, products, "--keep-col", "brand", "-o", ix, "-q").exit_code == 0
    more = tmp_path / "more.txt"
    more.write_text("Fabe Wireless Charger for iPhone 15\n")
    before = ix.read_bytes()
    line = one_error_line(run("index", "add", ix, "--lines", more), 2)
    assert "the index carries 'brand' beside each id and these documents do not" in line
    assert ix.read_bytes() == before


def test_index_add_lines_into_an_index_of_named_ids_says_they_were_numbered(tmp_path, products):
    ix = tmp_path / "p.apx"
    assert run("index", "build", "-t", "0.5", *TABLE, products, "-o", ix, "-q").exit_code == 0
    more = tmp_path / "more.txt"
    more.write_text("Fabe Wireless Charger for iPhone 15\nDoba Bottle\n")
    r = run("index", "add", ix, "--lines", more)
    assert r.exit_code == 0, r.stderr
    assert "the index's ids are not line numbers (the first is 'A1')" in r.stderr
    assert "the line numbers 1 to 2 as ids" in r.stderr
    assert run("index", "add", ix, "--lines", more, "-q", "--skip-existing").stderr == ""
    # An index of lines continues its numbers without a note.
    lx = tmp_path / "l.apx"
    assert run("index", "build", "-t", "0.5", "--lines", more, "-o", lx, "-q").exit_code == 0
    r = run("index", "add", lx, "--lines", more)
    assert r.exit_code == 0 and "not line numbers" not in r.stderr, r.stderr


def test_index_add_without_a_column_the_index_carries_is_refused(tmp_path, products):
    ix = tmp_path / "p.apx"
    assert run("index", "build", "-t", "0.5", *TABLE, products, "--keep-col", "brand", "-o", ix, "-q").exit_code == 0
    more = tmp_path / "more.csv"
    more.write_text("sku,title\nZ9,Zebu Lamp\n")
    line = one_error_line(run("index", "add", ix, "--csv", "--text-col", "title", "--id-col", "sku", more), 2)
    assert "'brand'" in line and "--keep-col" in line
    ok = tmp_path / "ok.csv"
    ok.write_text("sku,brand,title\nZ9,Zebu,Zebu Lamp\n")
    assert run("index", "add", ix, "--csv", "--text-col", "title", "--id-col", "sku", "--keep-col", "brand",
               ok, "-q").exit_code == 0


def test_sets_refuses_columns_it_cannot_write(products):
    for flag in (["--keep-all"], ["--keep-col", "brand"]):
        line = one_error_line(run("sets", *TABLE, products, *flag), 2)
        assert f"{flag[0]} does nothing in a sets file" in line
