"""Tables in, rows out: short texts, CSV/TSV/Parquet and JSON Lines input, the columns every command
prints, the long cluster form, headers, and one meaning per option (issue 17)."""
from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from allpairs.cli import app

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "datasets" / "tiny" / "corpus"

#: The issue's example: titles shorter than five words, two pairs of duplicates by case and punctuation.
TITLES = [(1, "iPhone 12 case"), (2, "iPhone 12 Case"), (3, "Samsung Galaxy S21 charger"),
          (4, "USB-C cable, 2m"), (5, "USB C Cable 2m")]


def run(*args, input=None):
    return CliRunner().invoke(app, [str(a) for a in args], input=input, prog_name="allpairs")


@pytest.fixture
def titles_jsonl(tmp_path):
    f = tmp_path / "short.jsonl"
    f.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in TITLES))
    return f


# --- 1. short texts ------------------------------------------------------------------------------

def test_titles_shorter_than_the_shingle_still_pair_with_their_duplicates(titles_jsonl):
    r = run("join", "-t", "0.8", "--jsonl", titles_jsonl, "-s", "word:5", "--no-header")
    assert r.exit_code == 0, r.stderr
    # "iPhone 12 case" has 3 words: its one word:5 shingle is the whole sequence, as its copy's; the
    # words of "USB-C cable, 2m" are those of "USB C Cable 2m" (punctuation separates words).
    assert r.stdout.splitlines() == ["1\t2\t1.000000", "4\t5\t1.000000"]
    assert "no shingle" not in r.stderr


def test_the_default_shingle_is_chosen_from_the_lengths_and_the_summary_says_so(titles_jsonl):
    r = run("join", "-t", "0.8", "--jsonl", titles_jsonl, "--no-header")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.splitlines() == ["1\t2\t1.000000", "4\t5\t1.000000"]
    assert "word:1 shingles, chosen from the texts' lengths: the median text has 4 words" in r.stderr


def test_many_single_shingle_documents_get_a_hint_naming_a_shorter_shingle_with_the_figure(titles_jsonl):
    r = run("join", "-t", "0.8", "--jsonl", titles_jsonl, "-s", "word:5")
    assert "5 of 5 documents (100%) are a single word:5 shingle (5 words or fewer)" in r.stderr
    assert "--shingle word:1 suits texts this short" in r.stderr
    quiet = run("join", "-t", "0.8", "--jsonl", titles_jsonl, "-s", "word:1")
    assert "suits texts this short" not in quiet.stderr


def test_passwords_keep_char3_and_an_empty_line_stays_skipped(tmp_path):
    f = tmp_path / "pw.txt"
    f.write_text("password1\n\npassword12\nab\nab\n")
    r = run("join", "--lines", "-t", "0.8", f, "--no-header")
    assert r.exit_code == 0, r.stderr
    # "ab" is shorter than one char:3 shingle: its whole sequence pairs it with its copy.
    assert r.stdout.splitlines() == ["1\t3\t0.875000\tpassword1\tpassword12", "4\t5\t1.000000\tab\tab"]
    assert "char:3 shingles, chosen from the texts' lengths" in r.stderr
    assert "skipped 1 document (no shingle: 1): line 2 (no shingle)" in r.stderr


# --- 2. CSV and TSV ------------------------------------------------------------------------------

#: A realistic export: quoting, an embedded line break, duplicates differing by case and punctuation.
PRODUCTS = '''sku,brand,title,price
A1,Apple,"Apple iPhone 12 Case, Black",9.99
A2,apple,"apple iphone 12 case - black",9.49
B1,Acme,"Mug ""World's Best Boss""
11 oz",5.00
B2,ACME,"Mug ""world's best boss"" 11 oz",5.50
C1,Anker,USB-C cable 2m,3.00
'''


@pytest.fixture
def products(tmp_path):
    f = tmp_path / "products.csv"
    f.write_text(PRODUCTS)
    return f


def rows_of(text: str, sep: str = "\t") -> list[list[str]]:
    return [line.split(sep) for line in text.splitlines()]


def test_csv_rows_are_documents_with_quoting_embedded_newlines_and_named_columns(products):
    r = run("join", "-t", "0.8", "--csv", products, "--text-col", "title", "--id-col", "sku", "--keep-col", "price")
    assert r.exit_code == 0, r.stderr
    assert rows_of(r.stdout) == [["left", "right", "similarity", "left_price", "right_price"],
                                 ["A1", "A2", "1.000000", "9.99", "9.49"], ["B1", "B2", "1.000000", "5.00", "5.50"]]
    assert "5 documents, 0 skipped, 5 joined; word:1 shingles" in r.stderr


def test_several_text_columns_are_joined_and_tsv_and_stdin_read_alike(products, tmp_path):
    table = list(csv.reader(io.StringIO(PRODUCTS, newline="")))
    tsv = tmp_path / "products.tsv"
    with open(tsv, "w", newline="") as f:
        csv.writer(f, dialect="excel-tab").writerows(table)
    args = ["-t", "0.8", "--text-col", "brand", "--text-col", "title", "--id-col", "sku", "-q"]
    a = run("join", "--csv", products, *args)
    b = run("join", "--tsv", tsv, "--quotechar", '"', *args)  # the csv module quotes TSV as it quotes CSV
    c = run("join", "--csv", "-", *args, input=PRODUCTS)
    assert a.exit_code == b.exit_code == c.exit_code == 0, (a.stderr, b.stderr, c.stderr)
    assert a.stdout == b.stdout == c.stdout
    assert [row[:2] for row in rows_of(a.stdout)[1:]] == [["A1", "A2"], ["B1", "B2"]]


@pytest.mark.parametrize("flag", ["--no-input-header", "--headerless"])  # the old name still works, unshown
def test_a_headerless_table_names_columns_by_number_and_ids_are_row_numbers(tmp_path, flag):
    f = tmp_path / "t.csv"
    f.write_text("x,the quick brown fox\ny,The Quick Brown Fox!\nz,a lazy dog\n")
    r = run("join", "-t", "0.9", "--csv", f, flag, "--text-col", "2", "-q")
    assert r.exit_code == 0, r.stderr
    assert rows_of(r.stdout)[1:] == [["1", "2", "1.000000"]]
    named = run("join", "-t", "0.9", "--csv", f, flag, "--text-col", "2", "--id-col", "1", "-q")
    assert rows_of(named.stdout)[1:] == [["x", "y", "1.000000"]]
    assert run("join", "-t", "0.9", "--lines", f, flag).stderr.count(f"{flag} does nothing without --csv") == 1
    assert "--no-input-header" in run("join", "--help").stdout and "--headerless" not in run("join", "--help").stdout


def test_without_an_id_column_ids_are_row_numbers_and_the_summary_says_so(products):
    r = run("join", "-t", "0.8", "--csv", products, "--text-col", "title")
    assert [row[:2] for row in rows_of(r.stdout)[1:]] == [["1", "2"], ["3", "4"]]
    assert "ids are row numbers: " in r.stderr and "has no 'id' column (--id-col names one)" in r.stderr


@pytest.mark.parametrize("text, args, message, code", [
    (PRODUCTS, ["--text-col", "name"], "products.csv: no column 'name' (its header has sku, brand, title, price); "
                                       "name one with --text-col", 2),  # an option naming what is not there
    ("id,text\nx,\"a\nb\"\nx,c\n", [], "products.csv:4: id 'x' already used on line 2", 1),
    ("id,text\n1,fine\n2,\"unclosed\n", [], "products.csv:3: not valid CSV (unexpected end of data)", 1),
    ("id,text\n1,fine\n2,\"a\"b\n", [], "products.csv:3: not valid CSV", 1),
    ("id,text\n1,fine\n2,one,two\n", [], "products.csv:3: 3 fields, the header has 2", 1),
])
def test_bad_tables_are_one_line_naming_the_place(tmp_path, text, args, message, code):
    f = tmp_path / "products.csv"
    f.write_text(text)
    r = run("join", "-t", "0.5", "--csv", f, *args)
    assert r.exit_code == code, r.stderr
    assert r.stderr.count("\n") == 1 and message in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_a_lone_csv_path_read_as_one_document_suggests_csv(products):
    r = run("join", "-t", "0.8", products)
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "products.csv was read as one document" in r.stderr
    assert "it looks like CSV: --csv reads each row as one" in r.stderr


texts = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12)
ids = texts.filter(bool)  # an empty id is refused: a table's empty cell is its null


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(ids, texts), max_size=6, unique_by=lambda row: row[0]), st.sampled_from(["csv", "tsv"]))
def test_a_table_written_by_the_csv_module_reads_back_every_id_and_text(tmp_path_factory, rows, kind):
    from allpairs.corpus import read_table

    f = tmp_path_factory.mktemp("t") / f"t.{kind}"
    with open(f, "w", newline="", encoding="utf-8") as out:
        csv.writer(out, dialect="excel" if kind == "csv" else "excel-tab").writerows([("id", "text"), *rows])
    # The csv module quotes TSV fields as it quotes CSV: quoted TSV, read with quotechar (TSV is literal by default).
    corpus = read_table(f, kind, quotechar='"' if kind == "tsv" else None)
    assert corpus.ids == [i for i, _ in rows] and corpus.texts == [t for _, t in rows]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(ids, texts), max_size=6, unique_by=lambda row: row[0]))
def test_a_literal_tsv_reads_back_every_field_as_it_is_quotes_included(tmp_path_factory, rows):
    from allpairs.corpus import read_table

    rows = [tuple(v.replace("\t", " ").replace("\r", " ").replace("\n", " ").replace("\x00", " ") for v in row)
            for row in rows]
    rows = [row for k, row in enumerate(rows) if row[0] not in {r[0] for r in rows[:k]}]
    f = tmp_path_factory.mktemp("t") / "t.tsv"
    f.write_bytes("".join(f"{a}\t{b}\n" for a, b in [("id", "text"), *rows]).encode())
    corpus = read_table(f, "tsv")
    assert corpus.ids == [i for i, _ in rows] and corpus.texts == [t for _, t in rows]


# --- 3. JSON Lines without ids -------------------------------------------------------------------

def test_jsonl_without_ids_falls_back_to_line_numbers_and_says_so(tmp_path):
    f = tmp_path / "d.jsonl"
    f.write_text('{"title": "iPhone 12 case"}\n\n{"title": "iPhone 12 Case"}\n')
    r = run("join", "-t", "0.8", "--jsonl", f, "--text-col", "title")
    assert r.exit_code == 0, r.stderr
    assert rows_of(r.stdout)[1:] == [["1", "3", "1.000000"]]
    assert "ids are line numbers: the records have no 'id' field (--id-col names one)" in r.stderr


def test_a_missing_jsonl_field_lists_the_fields_the_record_has(tmp_path):
    f = tmp_path / "d.jsonl"
    f.write_text('{"sku": 1, "title": "a b"}\n')
    r = run("join", "-t", "0.8", "--jsonl", f)
    assert r.exit_code == 1
    assert "d.jsonl:1: no 'text' field (the record has sku, title); name the field with --text-col" in r.stderr
    r = run("join", "-t", "0.8", "--jsonl", f, "--text-col", "title", "--id-col", "id")
    assert "d.jsonl:1: no 'id' field (the record has sku, title); name the field with --id-col" in r.stderr


# --- 4. Parquet ----------------------------------------------------------------------------------

def write_parquet(path, columns: dict) -> None:
    pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed (the parquet extra)")
    import pyarrow.parquet as pq

    pq.write_table(pa.table(columns), path)


def test_parquet_rows_join_like_the_same_table_as_csv(products, tmp_path):
    table = list(csv.reader(io.StringIO(PRODUCTS, newline="")))
    f = tmp_path / "products.parquet"
    write_parquet(f, {name: [row[k] for row in table[1:]] for k, name in enumerate(table[0])})
    args = ["-t", "0.8", "--text-col", "title", "--id-col", "sku", "--keep-col", "price", "-q"]
    p = run("join", "--parquet", f, *args)
    assert p.exit_code == 0, p.stderr
    assert p.stdout == run("join", "--csv", products, *args).stdout
    tokens = tmp_path / "tokens.parquet"
    write_parquet(tokens, {"id": [7, 8, 9], "items": [["a", "b", "c"], ["a", "b", "c", "d"], ["x"]]})
    t = run("join", "--parquet", tokens, "--tokens-col", "items", "-t", "0.7", "-q")
    assert rows_of(t.stdout)[1:] == [["7", "8", "0.750000"]]


def test_parquet_without_pyarrow_is_one_line_naming_the_extra(tmp_path, monkeypatch):
    f = tmp_path / "x.parquet"
    f.write_bytes(b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    r = run("join", "-t", "0.5", "--parquet", f)
    assert r.exit_code == 2 and r.stderr.count("\n") == 1
    assert "--parquet needs pyarrow: pip install " in r.stderr and "[parquet]'" in r.stderr


# --- 5. the same columns for the same input kind in every command ------------------------------------

PASSWORDS = "password1\npassword12\nqwerty\nPassword1\n"


def test_lines_carry_their_text_into_every_command(tmp_path):
    f = tmp_path / "pw.txt"
    f.write_text(PASSWORDS)
    pairs = run("join", "--lines", "-t", "0.6", "-q", f)
    assert rows_of(pairs.stdout)[:2] == [["left", "right", "similarity", "left_text", "right_text"],
                                          ["1", "2", "0.875000", "password1", "password12"]]
    clusters = run("join", "--lines", "-t", "0.6", "-q", "--clusters", f)
    assert rows_of(clusters.stdout) == [["id", "cluster", "cluster_size", "text"], ["1", "1", "3", "password1"],
                                        ["2", "1", "3", "password12"], ["4", "1", "3", "Password1"]]
    kept = run("dedup", "--lines", "-t", "0.6", "-q", f)
    assert rows_of(kept.stdout) == [["id", "text"], ["1", "password1"], ["3", "qwerty"]]
    removed = run("dedup", "--lines", "-t", "0.6", "-q", "--removed", f)
    assert rows_of(removed.stdout) == [["removed", "kept", "similarity", "removed_text", "kept_text"],
                                       ["2", "1", "0.875000", "password12", "password1"],
                                       ["4", "1", "1.000000", "Password1", "password1"]]
    idx = tmp_path / "pw.idx"
    assert run("index", "build", "--lines", "-t", "0.6", "-q", f, "-o", idx).exit_code == 0
    query = run("index", "query", idx, "--lines", "-q", "-", input="qwerty1\n")
    assert rows_of(query.stdout) == [["query", "indexed", "similarity", "query_text", "indexed_text"],
                                     ["1", "3", "0.800000", "qwerty1", "qwerty"]]


def test_keep_col_carries_columns_of_a_table_into_pairs_clusters_dedup_and_queries(products, tmp_path):
    args = ["--csv", products, "--text-col", "title", "--id-col", "sku", "--keep-col", "title", "-q"]
    pairs = run("join", "-t", "0.8", *args, "-f", "csv")
    table = list(csv.reader(io.StringIO(pairs.stdout, newline="")))
    assert table[0] == ["left", "right", "similarity", "overlap", "left_size", "right_size", "left_title",
                        "right_title"]
    assert table[2][-2:] == ['Mug "World\'s Best Boss"\n11 oz', 'Mug "world\'s best boss" 11 oz']
    clusters = run("join", "-t", "0.8", *args, "--clusters", "-f", "jsonl")
    assert [json.loads(line) for line in clusters.stdout.splitlines()][0] == {
        "id": "A1", "cluster": 1, "cluster_size": 2, "title": "Apple iPhone 12 Case, Black"}
    removed = run("dedup", "-t", "0.8", *args, "--removed")
    assert rows_of(removed.stdout)[1] == ["A2", "A1", "1.000000", "apple iphone 12 case - black",
                                          "Apple iPhone 12 Case, Black"]
    idx = tmp_path / "p.idx"
    assert run("index", "build", "-t", "0.8", *args, "-o", idx).exit_code == 0
    query = run("index", "query", idx, "--csv", "-", "--text-col", "title", "--keep-col", "title", "-q",
                input="title\nUSB C Cable 2m\n")
    assert rows_of(query.stdout) == [["query", "indexed", "similarity", "query_title", "indexed_title"],
                                     ["1", "C1", "1.000000", "USB C Cable 2m", "USB-C cable 2m"]]


# --- 6. a cluster id per document ----------------------------------------------------------------

def test_the_long_cluster_form_numbers_clusters_largest_first_in_every_format(tmp_path):
    f = tmp_path / "c.sets"
    f.write_text("1 2 3\n9 9\n1 2 3 4\n5 6\n1 2 3\n5 6\n0\n")
    r = run("join", "--sets", "-t", "0.7", "--clusters", "--singletons", "-j", "1", f)
    assert r.exit_code == 0, r.stderr
    assert rows_of(r.stdout) == [["id", "cluster", "cluster_size"], ["1", "1", "3"], ["3", "1", "3"], ["5", "1", "3"],
                                 ["4", "2", "2"], ["6", "2", "2"], ["2", "3", "1"], ["7", "4", "1"]]
    assert r.stdout == run("join", "--sets", "-t", "0.7", "--clusters", "--singletons", "-j", "2", f).stdout
    c = run("join", "--sets", "-t", "0.7", "--clusters", "-f", "csv", "-q", f)
    assert c.stdout.splitlines() == ["id,cluster,cluster_size", "1,1,3", "3,1,3", "5,1,3", "4,2,2", "6,2,2"]
    j = run("join", "--sets", "-t", "0.7", "--clusters", "-f", "jsonl", "-q", f)
    assert json.loads(j.stdout.splitlines()[3]) == {"id": "4", "cluster": 2, "cluster_size": 2}
    pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow is not installed (the parquet extra)")
    out = tmp_path / "c.parquet"
    p = run("join", "--sets", "-t", "0.7", "--clusters", "-f", "parquet", "-o", out, "-q", f)
    assert p.exit_code == 0, p.stderr
    assert pq.read_table(out).to_pylist()[3] == {"id": "4", "cluster": 2, "cluster_size": 2}
    no_file = run("join", "--sets", "-t", "0.7", "--clusters", "-f", "parquet", f)
    assert no_file.exit_code == 2 and "--format parquet is binary: write it to a file with -o FILE" in no_file.stderr


# --- 7. headers -----------------------------------------------------------------------------------

def test_tables_have_a_header_row_by_default_and_no_header_drops_it(tmp_path):
    f = tmp_path / "d.jsonl"
    f.write_text("".join(json.dumps({"id": i, "text": "one two three"}) + "\n" for i in ('a,"b"', "c\nd")))
    for fmt, header in (("tsv", "left\tright\tsimilarity"), ("csv", "left,right,similarity,overlap,left_size,"
                                                                    "right_size")):
        r = run("join", "--jsonl", "-t", "0.5", "-q", "-f", fmt, f)
        assert r.stdout.splitlines()[0] == header
        bare = run("join", "--jsonl", "-t", "0.5", "-q", "-f", fmt, "--no-header", f)
        assert bare.stdout == r.stdout.split("\n", 1)[1]
    # CSV is quoted by the csv module's rules: the ids read back as they were.
    c = run("join", "--jsonl", "-t", "0.5", "-q", "-f", "csv", f)
    assert list(csv.reader(io.StringIO(c.stdout, newline="")))[1][:2] == ['a,"b"', "c\nd"]
    for args in (["dedup", "-t", "0.5", "-f", "tsv"], ["join", "-t", "0.5", "--clusters"]):
        first = run(*args, "--jsonl", "-q", f).stdout.splitlines()[0].split("\t")[0]
        assert first == "id"
        assert run(*args, "--jsonl", "-q", "--no-header", f).stdout.splitlines()[0].split("\t")[0] == 'a,"b"'


# --- 9. allpairs sets ------------------------------------------------------------------------------

def test_sets_skips_a_line_without_a_shingle_as_join_does_and_ids_name_every_line(tmp_path):
    f = tmp_path / "l.txt"
    f.write_text("abcd\n\nabce\n")
    out, ids = tmp_path / "l.sets", tmp_path / "l.ids"
    r = run("sets", "--lines", f, "-o", out, "--ids", ids)
    assert r.exit_code == 0, r.stderr
    assert len(out.read_text().splitlines()) == 2 and ids.read_text() == "1\n3\n"
    assert "skipped 1 document (no shingle: 1): line 2 (no shingle)" in r.stderr
    same = run("sets", "--lines", f, "-o", out, "--ids", out)
    assert same.exit_code == 2 and "give the ids a file of their own" in same.stderr


# --- 10. one tool, one set of words ------------------------------------------------------------------

def test_commands_are_listed_in_pipeline_order():
    listed = run("--help").stdout.split("Commands:")[1].splitlines()
    names = [line.split()[0] for line in listed if line.startswith("  ") and not line.startswith("   ")]
    assert names == ["sets", "join", "compare", "index", "dedup"]


@pytest.mark.parametrize("command", [["sets"], ["join"], ["compare"], ["index", "build"], ["index", "add"],
                                     ["index", "query"], ["dedup"]])
def test_every_command_reading_documents_takes_the_same_input_options_in_the_same_panels(command):
    r = run(*command, "--help")
    assert r.exit_code == 0
    panels = [line for line in r.stdout.splitlines() if line.endswith(("options:", "Options:"))]
    assert panels[:2] == ["Options:", "Input options:"]
    for flag in ("--csv", "--tsv", "--parquet", "--text-col", "--id-col", "--keep-col", "--hidden", "--no-ignore"):
        assert flag in r.stdout, (command, flag)
    assert "PATH..." in r.stdout and "-m," not in r.stdout.replace("-m, --method", "")


def test_counts_of_one_and_of_none_read_as_english(tmp_path):
    f = tmp_path / "s.sets"
    f.write_text("a b c\na b c d\n")
    idx = tmp_path / "s.idx"
    assert run("index", "build", "--sets", "-t", "0.5", f, "-o", idx).exit_code == 0
    q = run("index", "query", idx, "--sets", "-", input="a b c\n")
    assert "1 query against 2 documents at jaccard >= 0.5: 2 matches" in q.stderr
    none = run("join", "--sets", "-t", "0.9", "--clusters", f)
    assert "0 pairs" in none.stderr and "no cluster of 2 or more documents" in none.stderr
    assert "the largest of 0" not in none.stderr


def test_spark_refuses_the_table_options_it_does_not_take_before_starting():
    for args, flag in ((["--headerless"], "--headerless does nothing without --csv or --tsv"),
                       (["--no-header", "-o", "x"], "--no-header not available with --engine spark"),
                       (["--csv", "--text-col", "t", "-o", "x"], "--csv not available with --engine spark")):
        r = run("join", "--engine", "spark", "-t", "0.5", *args, TINY)
        assert r.exit_code == 2 and flag in r.stderr, r.stderr
