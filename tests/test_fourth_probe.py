"""What the fourth adversarial probe found (issue 35), one regression test (or a few) per item:
a saved overlap index, TSV quoting, JSON Lines ids, two id columns, an output that is an input,
an empty --against side, CSV formulas, lone surrogates, Parquet types, index add's columns."""
from __future__ import annotations

import datetime
import json
import os
import re
from fractions import Fraction
from pathlib import Path

import pytest
from typer.testing import CliRunner

from allpairs.cli import app
from allpairs.errors import InputError, UsageError


def run(*args, input=None):
    return CliRunner().invoke(app, [str(a) for a in args], input=input, prog_name="allpairs")


def rows(text: str, sep: str = "\t") -> list[list[str]]:
    return [line.split(sep) for line in text.splitlines()]


# --- 1. overlap thresholds ----------------------------------------------------------------------

def test_a_saved_overlap_index_can_be_queried_added_to_and_loaded(tmp_path):
    from allpairs.index import SearchIndex

    sets = tmp_path / "ov.sets"
    sets.write_text("a b c\na b c d\nb c d e\nx y\n")
    idx = tmp_path / "ov.idx"
    r = run("index", "build", "--measure", "overlap", "-t", "2", "--sets", sets, "-o", idx)
    assert r.exit_code == 0, r.stderr
    r = run("index", "query", idx, "--sets", "-", "--no-header", input="a b c\n")
    assert r.exit_code == 0, r.stderr
    assert rows(r.stdout) == [["1", "1", "3"], ["1", "2", "3"], ["1", "3", "2"]]
    r = run("index", "add", idx, "--sets", "-", input="c d\n")
    assert r.exit_code == 0, r.stderr
    assert SearchIndex.load(idx).num_docs == 5


@pytest.mark.parametrize("value", [Fraction(2), "2/1", "2.0", 2.0, "+2", "4/2"])
def test_an_overlap_threshold_equal_to_a_whole_number_is_accepted(value):
    from allpairs.measures import Threshold, parse_threshold

    assert parse_threshold(value, "overlap") == Threshold(2, 1)


@pytest.mark.parametrize("value", [Fraction(5, 2), "5/2", "2.5", 2.5, "0", "-1"])
def test_an_overlap_threshold_that_is_not_a_whole_number_is_still_refused(value):
    from allpairs.measures import parse_threshold

    with pytest.raises(UsageError):
        parse_threshold(value, "overlap")


def test_the_cli_takes_an_overlap_threshold_written_as_a_fraction_or_a_decimal(tmp_path):
    sets = tmp_path / "ov.sets"
    sets.write_text("a b c\na b c d\nx y\n")
    for t in ("2", "2/1", "2.0"):
        r = run("join", "--measure", "overlap", "-t", t, "--sets", sets, "--no-header")
        assert r.exit_code == 0, (t, r.stderr)
        assert rows(r.stdout) == [["1", "2", "3"]]


# --- 2. TSV fields are literal --------------------------------------------------------------------

QUOTED_TSV = 'id\ttext\n1\t"12 inch remix of song\n2\tcable 6"\n3\tremix of song\n4\tcable remix\n'


def test_tsv_fields_are_read_literally_so_an_inch_mark_does_not_merge_rows(tmp_path):
    from allpairs.corpus import read_corpus

    f = tmp_path / "q.tsv"
    f.write_text(QUOTED_TSV)
    corpus = read_corpus(f, "tsv")
    assert list(corpus.ids) == ["1", "2", "3", "4"]
    assert corpus.texts[0] == '"12 inch remix of song' and corpus.texts[1] == 'cable 6"'
    r = run("join", "-t", "0.1", "--tsv", f, "--no-header", "-s", "word:1")
    assert r.exit_code == 0, r.stderr
    assert "4 documents" in r.stderr


def test_quoted_tsv_is_read_with_quotechar_as_csvkit_and_sqlite_utils_name_it(tmp_path):
    from allpairs.corpus import read_corpus

    f = tmp_path / "q.tsv"
    f.write_text('id\ttext\n1\t"a\tb"\n2\t"c ""d"""\n')
    corpus = read_corpus(f, "tsv", quotechar='"')
    assert list(corpus.ids) == ["1", "2"] and corpus.texts == ["a\tb", 'c "d"']
    literal = tmp_path / "lit.tsv"
    literal.write_text('id\ttext\n1\t"a b"\n')
    assert read_corpus(literal, "tsv").texts == ['"a b"']
    r = run("join", "-t", "0.5", "--tsv", f, "--quotechar", '"', "-q")
    assert r.exit_code == 0, r.stderr
    assert "--quotechar" in run("join", "--help").stdout


def test_quotechar_goes_with_csv_and_tsv_only(tmp_path):
    f = tmp_path / "a.txt"
    f.write_text("a b\n")
    r = run("join", "-t", "0.5", "--lines", f, "--quotechar", '"')
    assert r.exit_code == 2 and "--quotechar" in r.stderr


# --- 3. JSON Lines: ids on some records only -------------------------------------------------------

@pytest.mark.parametrize("order", ["first-without", "first-with"])
def test_json_lines_that_mix_records_with_and_without_an_id_are_refused_naming_a_line_of_each(tmp_path, order):
    f = tmp_path / "m.jsonl"
    records = [{"text": "a b"}, {"id": "x", "text": "a b c"}, {"id": "y", "text": "a b"}]
    if order == "first-with":
        records = [records[1], records[2], records[0]]
    f.write_text("".join(json.dumps(r) + "\n" for r in records))
    r = run("join", "-t", "0.1", "--jsonl", f)
    assert r.exit_code == 1, r.stdout
    message = r.stderr.strip()
    assert "\n" not in message and "Traceback" not in message
    later = 2 if order == "first-without" else 3  # the first record of the other kind
    assert f"{f}:{later}:" in message and "(line 1)" in message and "'id'" in message


# --- 4. two id columns ----------------------------------------------------------------------------

def test_a_csv_with_two_id_columns_is_refused_without_id_col_as_with_it(tmp_path):
    f = tmp_path / "two.csv"
    f.write_text("id,text,id\n1,a b,2\n3,a b,4\n")
    for extra in ([], ["--id-col", "id"]):
        r = run("join", "-t", "0.1", "--csv", f, *extra)
        assert r.exit_code == 1, extra
        assert "column 'id' appears 2 times in the header (columns 1, 3)" in r.stderr, r.stderr


def test_a_parquet_file_with_two_id_columns_is_refused_naming_the_column(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    f = tmp_path / "two.parquet"
    table = pa.Table.from_arrays([pa.array(["1", "2"]), pa.array(["a b", "a b"]), pa.array(["3", "4"])],
                                 names=["id", "text", "id"])
    pq.write_table(table, f)
    for extra in ([], ["--id-col", "id"]):
        r = run("join", "-t", "0.1", "--parquet", f, *extra)
        assert r.exit_code == 1, extra
        assert "column 'id' appears 2 times" in r.stderr and "FieldRef" not in r.stderr, r.stderr


# --- 5. an output that is an input ----------------------------------------------------------------

@pytest.fixture
def lines_file(tmp_path):
    f = tmp_path / "keep.txt"
    f.write_text("a b c\na b c\nx y z\n")
    return f


def _same_file_cases(tmp_path, f):
    idx = tmp_path / "docs.idx"
    assert run("index", "build", "-t", "0.5", "--lines", f, "-o", idx).exit_code == 0
    other = tmp_path / "other.txt"
    other.write_text("a b c\n")
    return idx, {
        "join": (["join", "-t", "0.5", "--lines", f], f),
        "join --against": (["join", "-t", "0.5", "--lines", other, "--against", f], f),
        "dedup": (["dedup", "-t", "0.5", "--lines", f], f),
        "sets": (["sets", "--lines", f], f),
        "index build": (["index", "build", "-t", "0.5", "--lines", f], f),
        "index query (the index)": (["index", "query", idx, "--lines", f], idx),
        "index query (the queries)": (["index", "query", idx, "--lines", f], f),
        "compare --missed": (["compare", "-t", "0.5", "--lines", f, "--missed"], f),
    }


@pytest.mark.parametrize("how", ["same name", "hard link", "symbolic link"])
def test_an_output_that_is_an_input_is_refused_before_any_work(tmp_path, lines_file, how):
    idx, cases = _same_file_cases(tmp_path, lines_file)
    for name, (args, target) in cases.items():
        before = {p: p.read_bytes() for p in (lines_file, idx)}
        out = tmp_path / f"alias-{len(name)}"
        if how == "same name":
            out = target
        elif how == "hard link":
            os.link(target, out)
        else:
            os.symlink(target, out)
        flag = [] if args[-1] == "--missed" else ["-o"]
        r = run(*args, *flag, out)
        assert r.exit_code == 2, (name, how, r.stderr)
        assert "is also an input" in r.stderr and len(r.stderr.strip().splitlines()) == 1, (name, r.stderr)
        assert {p: p.read_bytes() for p in (lines_file, idx)} == before, name
        if how != "same name":
            out.unlink()


@pytest.mark.parametrize("command", [["join", "-t", "0.5"], ["dedup", "-t", "0.5"], ["index", "build", "-t", "0.5"],
                                     ["sets"]])
def test_an_output_that_is_a_document_of_an_input_directory_is_refused(tmp_path, command):
    """A directory's files are the documents: -o naming one of them (by its path, or through a link to a
    folder inside) would replace a document; a new file there is written (nothing is lost), and so is a
    file there that is not read (--exclude leaves it out)."""
    corpus = tmp_path / "corpus"
    (corpus / "sub").mkdir(parents=True)
    docs = {corpus / "a.txt": "the quick brown fox", corpus / "sub" / "b.txt": "the quick brown fox jumps"}
    for path, text in docs.items():
        path.write_text(text)
    (tmp_path / "link").symlink_to(corpus / "sub")
    for out in (corpus / "a.txt", tmp_path / "link" / "b.txt"):
        r = run(*command, corpus, "-o", out)
        assert r.exit_code == 2, (command, out, r.stderr)
        assert "is a document of the input" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert {p: p.read_text() for p in docs} == docs
    r = run(*command, corpus, "-q", "-o", corpus / "new.out")
    assert r.exit_code == 0 and (corpus / "new.out").exists(), r.stderr
    r = run(*command, corpus, "-q", "--exclude", "new.out", "-o", corpus / "new.out")
    assert r.exit_code == 0, r.stderr


def test_index_add_refuses_to_read_the_index_it_adds_to(tmp_path, lines_file):
    idx = tmp_path / "docs.idx"
    assert run("index", "build", "-t", "0.5", "--lines", lines_file, "-o", idx).exit_code == 0
    before = idx.read_bytes()
    r = run("index", "add", idx, "--lines", idx)
    assert r.exit_code == 2 and "is also an input" in r.stderr, r.stderr
    assert idx.read_bytes() == before


def test_a_distinct_output_file_is_still_written(tmp_path, lines_file):
    out = tmp_path / "pairs.tsv"
    r = run("join", "-t", "0.5", "--lines", lines_file, "-o", out)
    assert r.exit_code == 0, r.stderr
    assert out.read_text().splitlines()[1:] == ["1\t2\t1.000000\ta b c\ta b c"]


# --- 6. --against: stdin twice, an empty side ------------------------------------------------------

def test_stdin_on_both_sides_of_against_is_refused():
    r = run("join", "-t", "0.5", "--sets", "-", "--against", "-", input="x y\nx y\n")
    assert r.exit_code == 2, r.stdout
    assert "stdin" in r.stderr and r.stdout == ""


@pytest.mark.parametrize("empty_side", ["left", "right"])
def test_an_empty_side_of_against_is_the_empty_corpus_error(tmp_path, empty_side):
    empty = tmp_path / "empty.sets"
    empty.write_text("")
    one = tmp_path / "one.sets"
    one.write_text("a b\n")
    left, right = (empty, one) if empty_side == "left" else (one, empty)
    r = run("join", "-t", "0.5", "--sets", left, "--against", right)
    assert r.exit_code == 1, r.stdout
    assert "empty" in r.stderr and r.stdout == ""


# --- 7. CSV formula injection ---------------------------------------------------------------------

HOSTILE = ["=1+1", "+x", "-2+3", "@SUM(A1)", "\tx", "\rx"]


@pytest.fixture
def hostile_csv(tmp_path):
    f = tmp_path / "inj.csv"
    import csv

    with open(f, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "text", "note"])
        for k, cell in enumerate(HOSTILE):
            w.writerow([cell, "a b c", cell + "!"])
    return f


def _csv_cells(text: str) -> list[str]:
    import csv
    import io

    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def _assert_no_formula(cells):
    assert cells, "no cells"
    plain = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")  # numbers, not formulas
    bad = [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r") and not plain.fullmatch(c)]
    assert not bad, bad


def test_csv_cells_that_would_start_a_formula_get_a_quote_before_them_in_every_csv_output(tmp_path, hostile_csv):
    idx = tmp_path / "h.idx"
    assert run("index", "build", "-t", "0.5", "--csv", hostile_csv, "--keep-col", "note", "-o", idx).exit_code == 0
    missed = tmp_path / "missed.csv"
    outputs = {
        "join": run("join", "-t", "0.5", "--csv", hostile_csv, "--keep-col", "note", "-f", "csv", "-q"),
        "clusters": run("join", "-t", "0.5", "--csv", hostile_csv, "--clusters", "-f", "csv", "-q"),
        "dedup": run("dedup", "-t", "0.5", "--csv", hostile_csv, "--keep-col", "note", "-f", "csv", "-q"),
        "index query": run("index", "query", idx, "--csv", hostile_csv, "-f", "csv", "-q"),
    }
    for name, r in outputs.items():
        assert r.exit_code == 0, (name, r.stderr)
        cells = _csv_cells(r.stdout)
        _assert_no_formula(cells)
        assert "'=1+1" in cells and (name in ("clusters", "dedup") or "'@SUM(A1)!" in cells), (name, cells)
    r = run("compare", "-t", "0.5", "--csv", hostile_csv, "--missed", missed, "--bands", "1", "--rows", "64", "-q")
    assert r.exit_code == 0, r.stderr
    _assert_no_formula(_csv_cells(missed.read_text()))


def test_verbatim_cells_keeps_csv_cells_as_they_are(hostile_csv):
    r = run("join", "-t", "0.5", "--csv", hostile_csv, "--keep-col", "note", "-f", "csv", "-q", "--verbatim-cells")
    assert r.exit_code == 0, r.stderr
    cells = _csv_cells(r.stdout)
    assert "=1+1" in cells and "@SUM(A1)!" in cells and "'=1+1" not in cells


def test_tsv_and_json_lines_cells_are_not_prefixed(hostile_csv):
    r = run("join", "-t", "0.5", "--csv", hostile_csv, "-f", "jsonl", "-q")
    lefts = {json.loads(line)["left"] for line in r.stdout.splitlines()}
    assert "=1+1" in lefts


# --- 8. lone surrogates -----------------------------------------------------------------------------

@pytest.mark.parametrize("field", ["id", "text", "note"])
@pytest.mark.parametrize("fmt", ["tsv", "csv", "jsonl"])
def test_a_lone_surrogate_in_json_lines_is_refused_naming_the_line(tmp_path, field, fmt):
    f = tmp_path / "sur.jsonl"
    good = {"id": "a", "text": "a b", "note": "n"}
    bad = dict(good, id="b")
    f.write_text(json.dumps(good) + "\n" + json.dumps(bad).replace(f'"{bad[field]}"', '"\\ud800"', 1) + "\n")
    r = run("join", "-t", "0.5", "--jsonl", f, "--keep-col", "note", "-f", fmt)
    assert r.exit_code == 1, r.stdout
    assert f"{f}:2" in r.stderr and "surrogate" in r.stderr and f"'{field}'" in r.stderr, r.stderr
    assert r.stdout == ""


def test_an_escaped_backslash_u_id_stays_six_characters_and_distinct_in_every_format(tmp_path):
    pytest.importorskip("pyarrow")
    f = tmp_path / "ids.jsonl"
    f.write_text('{"id": "\\\\ud800", "text": "a b"}\n{"id": "ud800", "text": "a b"}\n')
    expected = {"tsv": "\\\\ud800", "csv": "\\ud800", "jsonl": "\\ud800"}
    for fmt, shown in expected.items():
        r = run("join", "-t", "0.5", "--jsonl", f, "-f", fmt, "-q")
        assert r.exit_code == 0, r.stderr
        out = r.stdout
        if fmt == "jsonl":
            assert json.loads(out.splitlines()[0])["left"] == shown
        else:
            assert shown in out.splitlines()[1], (fmt, out)
    import pyarrow.parquet as pq

    out = tmp_path / "p.parquet"
    assert run("join", "-t", "0.5", "--jsonl", f, "-f", "parquet", "-o", out, "-q").exit_code == 0
    assert pq.read_table(out).column("left").to_pylist() == ["\\ud800"]


# --- 9. Parquet types -------------------------------------------------------------------------------

def _parquet(tmp_path, **columns):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    f = tmp_path / "t.parquet"
    pq.write_table(pa.table(columns), f)
    return f


@pytest.mark.parametrize("ids", [[b"a", b"b"], [True, False], [1.0, 2.0]])
def test_parquet_ids_that_are_neither_strings_nor_integers_are_refused_with_a_cast_hint(tmp_path, ids):
    f = _parquet(tmp_path, id=ids, text=["a b", "a b"])
    r = run("join", "-t", "0.5", "--parquet", f)
    assert r.exit_code == 1, r.stdout
    assert "ids are strings or integers" in r.stderr and "cast" in r.stderr and r.stdout == "", r.stderr


def test_json_lines_ids_follow_the_same_rule_as_parquet_ids(tmp_path):
    f = tmp_path / "b.jsonl"
    f.write_text('{"id": 1.0, "text": "a b"}\n')
    r = run("join", "-t", "0.5", "--jsonl", f)
    assert r.exit_code == 1 and "ids are strings or integers" in r.stderr, r.stderr


def test_parquet_integer_ids_and_carried_cells_of_other_types_are_rendered_without_stray_quotes(tmp_path):
    pa = pytest.importorskip("pyarrow")
    when = datetime.datetime(2024, 5, 1, 12, 30)
    f = _parquet(tmp_path, id=pa.array([7, 8], pa.int64()), text=["a b", "a b"], flag=[True, False],
                 score=[1.0, 2.5], at=[when, when], day=[datetime.date(2024, 5, 1)] * 2)
    r = run("join", "-t", "0.5", "--parquet", f, "--keep-col", "flag", "--keep-col", "score", "--keep-col", "at",
            "--keep-col", "day", "--no-header", "-q")
    assert r.exit_code == 0, r.stderr
    assert rows(r.stdout) == [["7", "8", "1.000000", "true", "false", "1.0", "2.5", "2024-05-01T12:30:00",
                               "2024-05-01T12:30:00", "2024-05-01", "2024-05-01"]]


def test_json_lines_carried_values_follow_the_same_rendering(tmp_path):
    f = tmp_path / "k.jsonl"
    f.write_text('{"id": 1, "text": "a b", "k": true}\n{"id": 2, "text": "a b", "k": 2.5}\n')
    r = run("join", "-t", "0.5", "--jsonl", f, "--keep-col", "k", "--no-header", "-q")
    assert rows(r.stdout) == [["1", "2", "1.000000", "true", "2.5"]]


def test_a_dictionary_encoded_parquet_text_column_is_read_as_strings(tmp_path):
    pa = pytest.importorskip("pyarrow")
    text = pa.array(["a b", "a b", "c d"]).dictionary_encode()
    f = _parquet(tmp_path, id=["1", "2", "3"], text=text, cat=pa.array(["u", "v", "u"]).dictionary_encode())
    r = run("join", "-t", "0.5", "--parquet", f, "--keep-col", "cat", "--no-header", "-q")
    assert r.exit_code == 0, r.stderr
    assert rows(r.stdout) == [["1", "2", "1.000000", "u", "v"]]


# --- 10. index add's carried columns ---------------------------------------------------------------

@pytest.fixture
def kept_index(tmp_path):
    f = tmp_path / "a.csv"
    f.write_text("id,text,z\n1,a b c,one\n2,x y,two\n")
    idx = tmp_path / "a.idx"
    r = run("index", "build", "-t", "0.5", "--csv", f, "--keep-col", "z", "-o", idx)
    assert r.exit_code == 0, r.stderr
    return idx


def test_index_add_refuses_a_kept_column_the_index_does_not_carry(tmp_path, kept_index):
    f = tmp_path / "b.csv"
    f.write_text("id,text,z,w\n3,a b c,three,W\n")
    before = kept_index.read_bytes()
    r = run("index", "add", kept_index, "--csv", f, "--keep-col", "w")
    assert r.exit_code == 2, r.stderr
    assert "'w'" in r.stderr and "'z'" in r.stderr, r.stderr
    assert kept_index.read_bytes() == before


def test_index_add_carries_the_index_columns_from_the_added_table_by_default(tmp_path, kept_index):
    f = tmp_path / "b.csv"
    f.write_text("id,text,z\n3,a b c,three\n")
    r = run("index", "add", kept_index, "--csv", f)
    assert r.exit_code == 0, r.stderr
    r = run("index", "query", kept_index, "--lines", "-", "-f", "csv", input="a b c\n")
    assert r.exit_code == 0, r.stderr
    table = [row.split(",") for row in r.stdout.splitlines()]
    z = table[0].index("indexed_z")
    assert {row[1]: row[z] for row in table[1:]} == {"1": "one", "3": "three"}


def test_index_add_of_a_table_without_the_index_columns_is_refused_naming_them(tmp_path, kept_index):
    f = tmp_path / "b.csv"
    f.write_text("id,text\n3,a b c\n")
    r = run("index", "add", kept_index, "--csv", f)
    assert r.exit_code == 2, r.stderr  # a column named but not there: a usage error, as for --text-col
    assert "'z'" in r.stderr, r.stderr


# --- 11. a token in every set: queries and dedup pass over its postings, exactly -------------------

def _sets_sharing_a_token():
    """Sets that mostly share token 0 (a frequent token in every indexing prefix) and a few others, of a few
    sizes: the shape where a probe passes over whole runs of postings by binary search."""
    from hypothesis import strategies as st

    small = st.frozensets(st.integers(1, 12), max_size=5)
    return st.lists(st.tuples(st.booleans(), small).map(lambda c: sorted(c[1] | ({0} if c[0] else set()))),
                    min_size=1, max_size=30)


def test_queries_and_dedup_of_sets_sharing_a_frequent_token_match_the_oracle():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    import naive
    from allpairs.index import SearchIndex, dedup
    from allpairs.measures import JOIN_MEASURES

    thresholds = st.sampled_from([Fraction(1, 10), Fraction(1, 3), Fraction(2, 5), Fraction(1, 2), Fraction(2, 3),
                                  Fraction(1)])

    @settings(max_examples=150, deadline=None)
    @given(_sets_sharing_a_token(), _sets_sharing_a_token(), thresholds, st.sampled_from(JOIN_MEASURES))
    def check(indexed, queries, t, measure):
        t = t.numerator % 3 + 1 if measure == "overlap" else t
        if not any(indexed):
            return
        index = SearchIndex.build(indexed, t, measure=measure)
        found = sorted((q, int(index.ids[d]), o, qs, ds) for q, d, o, qs, ds in index.query(queries, t))
        assert found == naive.rs_pairs(queries, indexed, t, measure)
        res = dedup(indexed, t, measure=measure)
        expected = naive.dedup(indexed, t, measure)
        kept = [d for d, of in expected if of is None]
        assert res.kept.tolist() == kept
        assert list(zip(res.removed.tolist(), res.duplicate_of.tolist())) == [(d, of) for d, of in expected
                                                                             if of is not None]

    check()


def test_the_two_token_shape_is_answered_exactly_at_t_one_half():
    from allpairs.index import SearchIndex, dedup

    sets = [["c", f"u{i}"] for i in range(2000)] + [["c", "u7"]]
    index = SearchIndex.build(sets, "0.5")
    m = index.query([["c", "u7"], ["c", "zz"]], "0.5")
    assert sorted((q, int(index.ids[d])) for q, d, *_ in m) == [(0, 7), (0, 2000)]
    res = dedup(sets, "0.5")
    assert len(res.kept) == 2000 and res.removed.tolist() == [2000] and res.duplicate_of.tolist() == [7]


def test_postings_of_a_size_run_by_position_so_a_probe_passes_over_the_deep_ones_at_once():
    # Before, a list ran by (size, set): the frequent token's postings (position 1 of every two-token set)
    # were read one by one by every probe; by (size, position, set) they are one run, passed by a search.
    import numpy as np

    from allpairs.index import SearchIndex

    # x is at position 1 of {a, x} (a is rarer) and 0 of {x, c}, and {a, x} comes first among the sets of 2.
    sets = [["c", f"u{i}"] for i in range(50)] + [["a", "x"], ["x", "c"]]
    index = SearchIndex.build(sets, "0.5")
    post, list_ptr = np.asarray(index.postings.post), index.postings.list_ptr
    for w in range(len(list_ptr) - 1):
        rows = post[list_ptr[w]:list_ptr[w + 1]]
        keys = [(int(size), int(j), int(s)) for s, j, size in rows.tolist()]
        assert keys == sorted(keys), w
    positions = {int(j) for j in post[:, 1]}
    assert positions == {0, 1}
