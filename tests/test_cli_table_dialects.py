"""A user's table back in the form they gave it: a CSV split by ';' or '|' (--delimiter) read and written
back with its delimiter and quoting, a spreadsheet's header of empty names, Parquet bytes, and the flags
that said nothing where they did nothing."""
from __future__ import annotations

import csv
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from allpairs.cli import app
from allpairs.corpus import read_corpus
from allpairs.errors import UsageError

#: A European spreadsheet's export: ';' between fields, the comma the decimal mark, a quote, a line break
#: and a ';' inside fields; rows a2 and a4 repeat a1 and a3's titles.
ROWS = [["id", "title", "price", "note"],
        ["a1", "Der schnelle braune Fuchs", "3,50", 'sagt "hallo"'],
        ["a2", "Der schnelle braune Fuchs", "3,50", "zwei\nZeilen; mit Semikolon"],
        ["a3", "Eine Katze saß", "1,00", ""],
        ["a4", "eine katze saß", "2,00", "|"]]
KEPT = [ROWS[0], ROWS[1], ROWS[3]]
TABLE = ("-s", "word:1", "-t", "0.8", "--text-col", "title")


def run(*args, input=None):
    return CliRunner().invoke(app, [str(a) for a in args], input=input, prog_name="allpairs")


def written(rows, delimiter=";", lineterminator="\r\n", bom=True, **kw) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, delimiter=delimiter, lineterminator=lineterminator, **kw).writerows(rows)
    return ("\ufeff" if bom else "").encode() + buf.getvalue().encode()


@pytest.fixture
def export(tmp_path):
    f = tmp_path / "export.csv"
    f.write_bytes(written(ROWS))
    return f


def test_a_semicolon_export_is_read_with_delimiter_and_its_kept_rows_come_back_split_by_semicolons(tmp_path, export):
    out = tmp_path / "kept.csv"
    r = run("dedup", "-q", *TABLE, "--csv", "--delimiter", ";", export, "-o", out)
    assert r.exit_code == 0, r.output
    assert list(csv.reader(io.StringIO(out.read_text(encoding="utf-8-sig"), newline=""), delimiter=";")) == KEPT
    # The kept rows as the spreadsheet wrote them: byte-order mark, CRLF, quotes, an empty cell empty.
    assert out.read_bytes() == written(KEPT)


def test_a_table_with_line_feeds_and_no_mark_comes_back_so_and_the_mark_goes_only_before_a_header(tmp_path, export):
    plain = tmp_path / "plain.csv"
    plain.write_bytes(written(ROWS, lineterminator="\n", bom=False))
    r = run("dedup", "-q", *TABLE, "--csv", "-d", ";", plain, "-f", "csv")
    assert r.exit_code == 0 and r.stdout_bytes == written(KEPT, lineterminator="\n", bom=False), r.output
    # Without its header a table can be appended to another: no mark then, lines as the input's.
    r = run("dedup", "-q", *TABLE, "--csv", "-d", ";", export, "-f", "csv", "--no-header")
    assert r.exit_code == 0 and r.stdout_bytes == written(KEPT[1:], bom=False), r.output
    r = run("join", "-q", *TABLE, "--csv", "-d", ";", export, "-f", "csv")
    assert r.stdout_bytes.startswith(b"\xef\xbb\xbfleft;right;") and r.stdout_bytes.count(b"\r\n") == 3, r.output


def test_pairs_of_a_semicolon_table_are_written_as_csv_split_by_semicolons(export):
    r = run("join", "-q", *TABLE, "--csv", "-d", ";", export, "-f", "csv", "--keep-col", "price")
    assert r.exit_code == 0, r.output
    assert list(csv.reader(io.StringIO(r.stdout.lstrip("\ufeff"), newline=""), delimiter=";")) == [
        ["left", "right", "similarity", "overlap", "left_size", "right_size", "left_price", "right_price"],
        ["a1", "a2", "1.000000", "4", "4", "4", "3,50", "3,50"], ["a3", "a4", "1.000000", "3", "3", "3", "1,00", "2,00"]]


def test_a_bar_table_and_its_quote_character_come_back_as_they_were_read(tmp_path):
    rows = [["id", "title", "note"], ["b1", "red shirt", "it's |"], ["b2", "red shirt", "x"], ["b3", "blue", ""]]
    f = tmp_path / "bars.csv"
    f.write_bytes(written(rows, "|", "\n", bom=False, quotechar="'"))
    r = run("dedup", "-q", "-s", "word:1", "-t", "0.8", "--text-col", "title", "--csv", "-d", "|", "--quotechar", "'",
            f, "-f", "csv")
    assert r.exit_code == 0, r.output
    assert r.stdout_bytes == written([rows[0], rows[1], rows[3]], "|", "\n", bom=False, quotechar="'")


@pytest.mark.parametrize("body", ["id;title;price\na1;red shirt;3,50\n", "id;title\na1;red shirt\na2;red shirt\n"])
def test_a_semicolon_table_read_without_delimiter_is_refused_naming_the_option(tmp_path, body):
    # A comma inside a field ("3,50") made it a row of two fields under a header of one; without one, a table
    # of one column: both now name --delimiter ';', quoted as a shell needs it.
    f = tmp_path / "t.csv"
    f.write_text(body)
    r = run("join", "-q", "-s", "word:1", "-t", "0.5", "--csv", f)
    assert r.exit_code == 2 and r.stdout == "", r.output
    assert "read it with --delimiter ';'" in r.stderr, r.stderr


def test_a_comma_table_read_with_another_delimiter_is_refused_saying_to_drop_it(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("id,title\na1,red shirt\na2,red shirt\n")
    r = run("join", "-q", "-s", "word:1", "-t", "0.5", "--csv", "-d", "|", f)
    assert r.exit_code == 2 and "read it without --delimiter (a CSV is split at commas)" in r.stderr, r.output


@pytest.mark.parametrize("args, message", [
    (["--tsv", "-d", ";"], "--delimiter does nothing with --tsv, split at tabs"),
    (["--jsonl", "-d", ";"], "--delimiter does nothing without --csv"),
    (["--csv", "-d", ";;"], "--delimiter ';;' is not one character that can split a row"),
    (["--csv", "-d", "a"], "--delimiter 'a' is not one character that can split a row"),
    (["--csv", "-d", ";", "--quotechar", ";"], "--quotechar ';' is not one character that can quote a field"),
    (["--csv", "-d", ";", "--engine", "spark", "-o", "x"], "--csv, --delimiter not available with --engine spark")])
def test_a_delimiter_that_cannot_apply_is_a_usage_error(export, args, message):
    r = run("join", "-q", *TABLE, *args, export)
    assert r.exit_code == 2 and r.stdout == "" and message in r.stderr, r.output


def test_dedup_and_against_on_spark_refuse_delimiter_before_starting(export):
    r = run("dedup", "-q", *TABLE, "--csv", "-d", ";", "--engine", "spark", export, "-o", "x")
    assert r.exit_code == 2 and "--delimiter not available with --engine spark" in r.stderr, r.output
    r = run("join", "-q", *TABLE, "--csv", "-d", ";", "--engine", "spark", "--master", "local[1]", export,
            "--against", export)
    assert r.exit_code == 2 and "--delimiter" in r.stderr and "not available with --against --engine spark" in r.stderr


def test_the_library_reads_a_delimiter_and_names_the_parameter_where_it_does_not_apply(export):
    corpus = read_corpus(export, "csv", delimiter=";", text_field="title", keep_all=True)
    assert corpus.ids == ["a1", "a2", "a3", "a4"] and corpus.columns["note"][1] == ROWS[2][3]
    with pytest.raises(UsageError, match=r"delimiter= goes with kind='csv'; a TSV is split at tabs"):
        read_corpus(export, "tsv", delimiter=";")
    with pytest.raises(UsageError, match=r"read it with delimiter=';'"):
        read_corpus(export, "csv")


def test_an_empty_cell_is_written_empty_but_the_empty_row_of_a_one_column_table_stays_quoted(tmp_path):
    f = tmp_path / "titles.csv"
    f.write_text('title\nred shirt\n""\nred shirt\n')
    r = run("dedup", "-q", "-s", "word:1", "-t", "0.8", "--csv", f, "-f", "csv")
    assert r.exit_code == 0 and r.stdout == 'title\nred shirt\n""\n', r.output  # a blank line would be no row


# --- a spreadsheet's header of empty names ------------------------------------------------------------------

#: Excel's export of a sheet with two unnamed columns beside the named ones: "id,text,," heads it.
UNNAMED = 'id,text,,\nr1,red shirt cotton,x,\nr2,red shirt cotton,,y\nr3,blue jeans,"a, b",2\n'


def test_a_header_with_unnamed_columns_comes_back_byte_for_byte_from_dedup(tmp_path):
    f = tmp_path / "sheet.csv"
    f.write_text(UNNAMED)
    r = run("dedup", "-q", "-s", "word:1", "-t", "0.8", "--csv", f, "-f", "csv")
    assert r.exit_code == 0, r.output
    assert r.stdout == "".join(UNNAMED.splitlines(keepends=True)[i] for i in (0, 1, 3))
    r = run("dedup", "-q", "-s", "word:1", "-t", "0.8", "--csv", f, "-f", "tsv")
    assert r.stdout == "id\ttext\t\t\nr1\tred shirt cotton\tx\t\nr3\tblue jeans\ta, b\t2\n", r.output
    assert run("dedup", "-q", "-s", "word:1", "-t", "0.8", "--csv", f).stdout == \
        "".join(UNNAMED.splitlines(keepends=True)[i] for i in (0, 1, 3))  # the table's own format by default


def test_unnamed_columns_are_named_by_number_where_a_name_must_be_unique(tmp_path):
    # JSON Lines keys, Parquet columns, and left_/right_ columns of pairs: by column number, as without a header.
    f = tmp_path / "sheet.csv"
    f.write_text(UNNAMED)
    r = run("dedup", "-q", "-s", "word:1", "-t", "0.8", "--csv", f, "-f", "jsonl")
    assert r.stdout.splitlines()[0] == '{"id": "r1", "text": "red shirt cotton", "3": "x", "4": ""}', r.output
    r = run("join", "-q", "-s", "word:1", "-t", "0.8", "--csv", f, "--keep-all", "-f", "csv")
    assert r.stdout.splitlines() == [
        "left,right,similarity,overlap,left_size,right_size,left_text,right_text,left_3,right_3,left_4,right_4",
        "r1,r2,1.000000,3,3,3,red shirt cotton,red shirt cotton,x,,,y"], r.output


def test_an_unnamed_column_whose_number_another_column_is_named_is_refused(tmp_path):
    f = tmp_path / "sheet.csv"
    f.write_text("id,text,,,3\nr1,red shirt,,,\n")
    r = run("dedup", "-q", "-s", "word:1", "-t", "0.8", "--csv", f)
    assert r.exit_code == 1 and "column 3 has no name, and is carried as '3', as column 5 is named" in r.stderr


def test_parquet_columns_without_names_are_refused_when_carried(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    f = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_arrays([pa.array(["a", "b"]), pa.array(["x y", "x y"]), pa.array([1, 2]),
                                         pa.array([3, 4])], names=["id", "text", "", ""]), f)
    r = run("dedup", "-q", "-s", "word:1", "-t", "0.8", "--parquet", f)
    assert r.exit_code == 1 and "columns 3, 4 have no name" in r.stderr, r.output


# --- Parquet bytes --------------------------------------------------------------------------------------------

@pytest.fixture
def blobs(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    f = tmp_path / "blobs.parquet"
    pq.write_table(pa.table({"id": ["a", "b", "c"], "text": ["red shirt", "red shirt", "blue jeans"],
                             "blob": pa.array([b"\x00\xff", b"ab", None], pa.binary()),
                             "sha": pa.array([b"\xfb\xef", b"12", b"34"], pa.binary(2))}), f)
    return f


def test_dedup_of_parquet_keeps_its_bytes_in_parquet_and_writes_them_as_base64_in_text(tmp_path, blobs):
    import pyarrow.parquet as pq

    out = tmp_path / "kept.parquet"
    r = run("dedup", "-q", "-s", "word:1", "-t", "0.8", "--parquet", blobs, "-o", out)
    assert r.exit_code == 0, r.output
    kept = pq.read_table(out)
    assert kept.schema == pq.read_schema(blobs)
    assert kept.column("blob").to_pylist() == [b"\x00\xff", None] and kept.column("sha").to_pylist() == [b"\xfb\xef",
                                                                                                        b"34"]
    r = run("dedup", "-q", "-s", "word:1", "-t", "0.8", "--parquet", blobs, "-f", "jsonl")
    assert r.stdout.splitlines() == ['{"id": "a", "text": "red shirt", "blob": "AP8=", "sha": "++8="}',
                                     '{"id": "c", "text": "blue jeans", "blob": null, "sha": "MzQ="}'], r.output
    r = run("dedup", "-q", "-s", "word:1", "-t", "0.8", "--parquet", blobs, "--keep-col", "blob", "--keep-col", "sha",
            "-f", "csv")  # a cell starting with + gets its ' in CSV, as every cell does (--verbatim-cells)
    assert r.stdout.splitlines() == ["id,blob,sha", "a,AP8=,'++8=", "c,,MzQ="], r.output


def test_pairs_carry_parquet_bytes_typed_in_parquet_and_as_base64_in_json_lines(tmp_path, blobs):
    import pyarrow.parquet as pq

    r = run("join", "-q", "-s", "word:1", "-t", "0.8", "--parquet", blobs, "--keep-col", "blob", "-f", "jsonl")
    assert '"left_blob": "AP8=", "right_blob": "YWI="' in r.stdout, r.output
    out = tmp_path / "pairs.parquet"
    r = run("join", "-q", "-s", "word:1", "-t", "0.8", "--parquet", blobs, "--keep-all", "-o", out)
    assert r.exit_code == 0, r.output
    pairs = pq.read_table(out)
    assert str(pairs.schema.field("left_blob").type) == "binary" and pairs.column("right_sha").to_pylist() == [b"12"]


# --- flags that did nothing where they were given -------------------------------------------------------------

@pytest.mark.parametrize("args", [[], ["-f", "jsonl"], ["-o", "{tmp}/pairs.tsv"]])
def test_verbatim_cells_without_csv_output_is_refused_naming_the_format(tmp_path, args):
    f = tmp_path / "s.sets"
    f.write_text("=a b\n=a b\n")
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    for command in (["join", "-t", "0.5"], ["dedup", "-t", "0.5"]):
        r = run(*command, "-q", "--sets", f, "--verbatim-cells", *args)
        assert r.exit_code == 2 and r.stdout == "", r.output
        assert "--verbatim-cells does nothing with --format " in r.stderr, r.stderr
    r = run("compare", "-q", "-t", "0.5", "--sets", f, "--verbatim-cells")
    assert r.exit_code == 2 and "--verbatim-cells does nothing without --missed FILE.csv" in r.stderr, r.output
    r = run("join", "-q", "-t", "0.5", "--sets", f, "--verbatim-cells", "--engine", "spark", "-o", tmp_path / "x")
    assert r.exit_code == 2 and "--verbatim-cells not available with --engine spark" in r.stderr, r.output


def test_verbatim_cells_with_csv_output_writes_formula_starts_as_they_are(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("id,text\n=a,red shirt\n=b,red shirt\n")
    r = run("join", "-q", "-t", "0.5", "-s", "word:1", "--csv", f, "-f", "csv", "--verbatim-cells")
    assert r.exit_code == 0 and r.stdout.splitlines()[1].startswith("=a,=b,"), r.output


def test_no_normalize_with_pre_tokenised_sets_is_refused_naming_both_flags(tmp_path):
    import allpairs

    f = tmp_path / "s.sets"
    f.write_text("A b\na b\n")
    for command in ("join", "dedup"):
        r = run(command, "-q", "-t", "0.5", "--sets", f, "--no-normalize")
        assert r.exit_code == 2 and r.stdout == "", r.output
        assert "pre-tokenised sets (--sets, --tokens-col) are joined on their tokens as they are: --no-normalize " \
               "changes nothing; drop it" in r.stderr, r.stderr
    with pytest.raises(UsageError, match="normalize=False changes nothing"):
        allpairs.join([["A", "b"], ["a", "b"]], 0.5, normalize=False)


# --- a lone CR in literal TSV ----------------------------------------------------------------------------------

def test_a_lone_cr_in_a_literal_tsv_field_is_part_of_it_and_comes_back_as_it_was(tmp_path):
    # The csv module ended the row at the CR: one title became two documents, "red" and "shirt".
    f = tmp_path / "titles.tsv"
    f.write_bytes(b"title\nred\rshirt\nblue jeans\r\n")
    r = run("join", "-s", "word:1", "-t", "0.1", "--tsv", f, "--count")
    assert r.exit_code == 0 and r.stdout == "0\n" and "2 documents" in r.stderr, r.output
    f.write_bytes(b"id\ttitle\na\tred\rshirt\nb\tred\rshirt\r\nc\tblue\n")
    r = run("dedup", "-q", "-s", "word:1", "-t", "0.9", "--tsv", f, "--text-col", "title")
    assert r.exit_code == 0 and r.stdout_bytes == b"id\ttitle\na\tred\rshirt\nc\tblue\n", r.output


def test_a_literal_tsv_whose_lines_end_with_a_lone_cr_is_refused_as_a_line_file_is(tmp_path):
    f = tmp_path / "mac.tsv"
    f.write_bytes(b"id\ttitle\ra\tred shirt\rb\tred shirt\r")
    r = run("join", "-q", "-s", "word:1", "-t", "0.5", "--tsv", f, "--text-col", "title")
    assert r.exit_code == 1 and "end with a carriage return alone" in r.stderr, r.output
    r = run("join", "-q", "-s", "word:1", "-t", "0.5", "--tsv", f, "--text-col", "title", "--quotechar", '"')
    assert r.exit_code == 0 and r.stdout.splitlines()[1] == "a\tb\t1.000000", r.output  # quoted TSV: as CSV


# --- any table, any delimiter, back as it was ----------------------------------------------------------------

cells = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=10)


@settings(max_examples=80, deadline=None)
@given(rows=st.lists(st.tuples(cells.filter(bool), cells, cells), min_size=1, max_size=6, unique_by=lambda row: row[0]),
       delimiter=st.sampled_from([";", "|", "\t", ":"]), quotechar=st.sampled_from(['"', "'"]))
def test_a_table_in_any_dialect_reads_back_every_cell_and_is_written_back_with_the_same_cells(
        tmp_path_factory, rows, delimiter, quotechar):
    from allpairs.index.output import write_records
    from allpairs.output.escape import csv_dialect, verbatim_cells

    table = [["id", "text", "note"], *map(list, rows)]
    f = tmp_path_factory.mktemp("t") / "t.csv"
    f.write_bytes(written(table, delimiter, bom=False, quotechar=quotechar))
    corpus = read_corpus(f, "csv", delimiter=delimiter, quotechar=quotechar, keep_all=True)
    assert corpus.ids == [r[0] for r in rows] and corpus.texts == [r[1] for r in rows]
    out = io.BytesIO()
    with csv_dialect(delimiter, quotechar), verbatim_cells():
        write_records(out, corpus.header, corpus.id_column, corpus.ids, list(range(len(rows))), corpus.columns, "csv")
    back = csv.reader(io.StringIO(out.getvalue().decode(), newline=""), delimiter=delimiter, quotechar=quotechar)
    assert list(back) == table


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab ;|,'\"\r\n\t=+-@é\x00")), max_size=8),
       st.sampled_from([",", ";", "|", "\t", " "]), st.sampled_from(['"', "'"]), st.booleans())
def test_a_csv_cell_is_quoted_as_pythons_csv_writer_quotes_it(value, delimiter, quotechar, verbatim):
    # The writer was run for every cell (2.4 µs each, most of a large CSV's time); a cell it would not quote
    # now skips it: the bytes must be the writer's, in every dialect.
    from allpairs.output.escape import FORMULA_STARTS, _plain_number, csv_dialect, csv_field, verbatim_cells

    if delimiter == quotechar:
        return
    with csv_dialect(delimiter, quotechar), verbatim_cells(verbatim):
        got = csv_field(value)
    guarded = value
    if value.startswith(FORMULA_STARTS) and not verbatim and not _plain_number().fullmatch(value):
        guarded = "'" + value
    buf = io.StringIO()
    csv.writer(buf, delimiter=delimiter, quotechar=quotechar, lineterminator="\r\n").writerow([guarded])
    assert got == ("" if not value else buf.getvalue()[:-2])


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from(["\x7f", "\x85", "\u2028", "\udce9"]),
               max_size=12))
def test_a_json_cell_is_the_text_json_dumps_gives(value):
    # A JSON encoder was made for every cell (json.dumps): its string encoder is called directly now.
    import json
    import re

    from allpairs.output.escape import json_field, printable

    try:
        value.encode("utf-8")
        text = value
    except UnicodeEncodeError:
        text = printable(value)
    want = re.sub("[\x7f-\x9f\u2028\u2029]", lambda m: f"\\u{ord(m.group()):04x}", json.dumps(text, ensure_ascii=False))
    assert json_field(value) == want


def test_a_text_column_escapes_each_distinct_text_once_and_keeps_equal_numbers_apart():
    # Texts are escaped once each (ids repeat down a table); 1, True and 1.0, one dict key, stay three cells.
    from allpairs.output.tables import Column, write_table

    out = io.BytesIO()
    write_table(out, "csv", [Column("v", [1, True, 1.0, "1", "a,b", "a,b", None])])
    assert out.getvalue().decode().splitlines() == ["v", "1", "True", "1.0", "1", '"a,b"', '"a,b"', "None"]


@pytest.mark.parametrize("header, fix", [("id;title;price", "--delimiter ';'"), ("id|title", "--delimiter '|'"),
                                         ("id\ttitle", "--tsv")])
def test_a_column_named_in_a_header_split_by_another_delimiter_says_which_reads_it(tmp_path, header, fix):
    # --text-col title of a ';' export read as CSV said "no column 'title' (its header has id;title;price);
    # name one with --text-col": the column was there, the delimiter was not given.
    path = tmp_path / "export.csv"
    path.write_text(header + "\n" + header.replace("id", "1").replace("title", "red apples") + "\n")
    r = CliRunner().invoke(app, ["join", "-t", "0.5", "--text-col", "title", "--csv", str(path)], prog_name="allpairs")
    assert r.exit_code == 2 and "the column named is not in its header" in r.stderr and f"read it with {fix}" in r.stderr, r.stderr


def test_dedup_prints_a_tables_kept_rows_in_the_tables_own_format_unless_told(tmp_path):
    # `allpairs dedup --csv in.csv > out.csv` wrote TSV into out.csv: the kept rows of a table now come back in
    # its own format on stdout too (a CSV with its delimiter, JSON Lines records as they were); --format, -o's
    # extension, --removed (pairs) and --keep-col (the compact form) are as before.
    semi = tmp_path / "export.csv"
    semi.write_text("id;title\n1;red apples, fresh\n2;red apples, fresh\n3;pears\n")
    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_text('{"id": "a", "text": "red apples"}\n{"id": "b",  "text": "red apples"}\n{"id": "c", "text": "x"}\n')
    flags = ["dedup", "-q", "-s", "word:1", "-t", "0.8"]

    def out(*args):
        r = run(*flags, *args)
        assert r.exit_code == 0, r.stderr
        return r.stdout

    assert out("--text-col", "title", "--csv", "-d", ";", semi) == 'id;title\n1;red apples, fresh\n3;pears\n'
    assert out("--jsonl", jsonl) == '{"id": "a", "text": "red apples"}\n{"id": "c", "text": "x"}\n'
    assert out("--text-col", "title", "--csv", "-d", ";", semi, "-f", "tsv") == "id\ttitle\n1\tred apples, fresh\n3\tpears\n"
    assert out("--jsonl", jsonl, "--removed").splitlines()[0] == "removed\tkept\tsimilarity"
    assert out("--jsonl", jsonl, "--keep-col", "text").splitlines()[0] == "id\ttext"
    assert out("--text-col", "title", "--csv", "-d", ";", semi, "--no-header") == '1;red apples, fresh\n3;pears\n'
