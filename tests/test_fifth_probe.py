"""What the fifth adversarial probe found (session 57), one regression test (or a few) per item."""
from __future__ import annotations

import os

import pytest
from typer.testing import CliRunner

from allpairs.cli import app
from allpairs.errors import UsageError


def run(*args, input=None):
    return CliRunner().invoke(app, [str(a) for a in args], input=input, prog_name="allpairs")


# --- 1. a shingle size beyond int64 -----------------------------------------------------------------

@pytest.mark.parametrize("spec", ["char:99999999999999999999", "word:9223372036854775808", "code:2147483648"])
def test_a_shingle_size_too_large_for_the_kernels_is_a_usage_error_not_a_traceback(tmp_path, spec):
    f = tmp_path / "l.txt"
    f.write_text("hello world\nhello world\n")
    r = run("join", "-t", "0.5", "-s", spec, "--lines", f)
    assert r.exit_code == 2, (r.exit_code, r.output)
    assert "shingle size" in r.stderr and "2**31 - 1" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_the_largest_shingle_size_is_still_one_shingle_a_text():
    from allpairs.shingles.keys import ShingleSpec

    assert ShingleSpec.parse("char:2147483647").n == 2**31 - 1
    with pytest.raises(UsageError):
        ShingleSpec("word", 2**31)


# --- 2. -o names a format by its ending: JSON, and compressed files --------------------------------------

@pytest.fixture
def two_sets(tmp_path):
    f = tmp_path / "in.sets"
    f.write_text("a b c\na b c\n")
    return f


@pytest.mark.parametrize("name", ["pairs.json", "pairs.ndjson"])
def test_a_json_file_name_gets_json_lines_not_tsv(tmp_path, two_sets, name):
    import json

    out = tmp_path / name
    r = run("join", "-t", "0.5", "--sets", two_sets, "-q", "-o", out)
    assert r.exit_code == 0, r.stderr
    assert json.loads(out.read_text().splitlines()[0])["left"] == "1"
    r = run("join", "-t", "0.5", "--sets", two_sets, "-q", "-o", out, "-f", "tsv")
    assert r.exit_code == 2 and "JSONL" in r.stderr, r.stderr


@pytest.mark.parametrize("command", [["join", "-t", "0.5"], ["join", "--top", "1"], ["dedup", "-t", "0.5"],
                                     ["sets"], ["compare", "-t", "0.5"]])
@pytest.mark.parametrize("name", ["pairs.tsv.gz", "pairs.jsonl.zst", "pairs.BZ2"])
def test_a_compressed_file_name_is_refused_before_any_work_since_the_file_would_be_plain_text(
        tmp_path, two_sets, command, name):
    out = tmp_path / name
    flag = "--missed" if command[0] == "compare" else "-o"
    r = run(*command, "--sets", two_sets, "-q", flag, out)
    assert r.exit_code == 2, (r.exit_code, r.output)
    assert "allpairs writes none" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["in.sets"]


def test_the_fast_path_of_a_plain_join_refuses_a_compressed_name_too(tmp_path, two_sets):
    import subprocess
    import sys

    out = tmp_path / "p.tsv.gz"
    r = subprocess.run([sys.executable, "-m", "allpairs", "join", "-t", "0.5", "--sets", str(two_sets), "-o",
                        str(out)], capture_output=True, text=True)
    assert r.returncode == 2 and "gzip" in r.stderr and not out.exists(), r.stderr


def test_compare_missed_refuses_a_parquet_name_it_would_have_filled_with_tsv(tmp_path, two_sets):
    out = tmp_path / "missed.parquet"
    r = run("compare", "-t", "0.5", "--sets", two_sets, "-q", "--missed", out)
    assert r.exit_code == 2 and "not Parquet" in r.stderr, r.stderr
    assert not out.exists()


# --- 3. a compressed input is named as such, not sent to --encoding latin-1 ---------------------------------

@pytest.mark.parametrize("tool,kind", [("gzip", "sets"), ("bz2", "csv"), ("lzma", "jsonl")])
def test_a_compressed_input_file_is_named_so_with_a_hint_to_decompress_it(tmp_path, tool, kind):
    import importlib

    text = {"sets": "a b c\na b c\n", "csv": "id,text\n1,a b\n2,a b\n", "jsonl": '{"text": "a b"}\n'}[kind]
    f = tmp_path / f"in.{kind}.z"
    f.write_bytes(importlib.import_module(tool).compress(text.encode()))
    for extra in ([], ["--encoding", "latin-1"]):
        r = run("join", "-t", "0.5", f"--{kind}", f, *extra)
        assert r.exit_code == 1, r.output
        assert "-compressed, not " in r.stderr and " text; decompress it first" in r.stderr and "--encoding" not in r.stderr, r.stderr


def test_a_parquet_file_read_as_lines_points_to_parquet(tmp_path):
    f = tmp_path / "t.parquet"
    f.write_bytes(b"PAR1\x15\x04\x15\x10\x00\x00PAR1")
    r = run("join", "-t", "0.5", "--lines", f)
    assert r.exit_code == 1 and "is a Parquet file" in r.stderr and "--parquet" in r.stderr, r.stderr


def test_text_that_starts_like_a_magic_number_is_still_read_as_text(tmp_path):
    f = tmp_path / "bz.sets"
    f.write_text("BZh9 PK a\nBZh9 PK a\n")
    r = run("join", "-t", "1", "--sets", f, "-q", "--count")
    assert r.exit_code == 0 and r.stdout.strip() == "1", r.output


# --- 4. a CSV row that repeats the header (tables joined by cat) ---------------------------------------

@pytest.mark.parametrize("command", [["join", "-t", "0.5"], ["dedup", "-t", "0.5"]])
def test_a_row_that_repeats_the_header_is_named_on_stderr(tmp_path, command):
    f = tmp_path / "cat.csv"
    f.write_text("id,text\n1,a b c\n2,a b c\nid,text\n3,a b c\nid,text\n")
    r = run(*command, "-s", "word:1", "--csv", f)
    assert r.exit_code == 1 and "already used" in r.stderr  # ids: the second repeat is the second id 'id'
    f.write_text("id,text\n1,a b c\n2,a b c\nid,text\n3,a b c\n")
    r = run(*command, "-s", "word:1", "--csv", f)
    assert r.exit_code == 0, r.stderr
    assert f"{f}:4: the row repeats the header" in r.stderr, r.stderr
    r = run(*command, "-s", "word:1", "--csv", f, "-q")
    assert r.exit_code == 0 and r.stderr == ""


def test_a_table_without_a_repeated_header_has_no_such_note(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("text\nid\ntext x\n")
    r = run("join", "-t", "0.5", "-s", "word:1", "--csv", f)
    assert r.exit_code == 0 and "repeats the header" not in r.stderr, r.stderr


# --- 5. file names that are not UTF-8 stay distinct ids in Parquet ----------------------------------------

@pytest.fixture
def undecodable_names(tmp_path):
    """Two files whose names are not UTF-8 (a\\xff.txt, a\\xfe.txt), with the same text."""
    corpus = tmp_path / "c"
    corpus.mkdir()
    try:
        for raw in (b"a\xff.txt", b"a\xfe.txt"):
            with open(os.path.join(os.fsencode(corpus), raw), "w") as f:
                f.write("the cat sat\n")
    except OSError:
        pytest.skip("this file system refuses names that are not UTF-8")
    return corpus


def test_file_names_with_different_undecodable_bytes_stay_distinct_in_parquet(tmp_path, undecodable_names):
    corpus = undecodable_names
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "p.parquet"
    r = run("join", "-t", "0.5", "-s", "word:1", corpus, "-o", out, "-q")
    assert r.exit_code == 0, r.stderr
    assert pq.read_table(out).to_pylist()[0] == {"left": "a\\xfe.txt", "right": "a\\xff.txt", "similarity": 1.0,
                                                      "overlap": 3, "left_size": 3, "right_size": 3}
    out = tmp_path / "c.parquet"
    r = run("join", "-t", "0.5", "-s", "word:1", corpus, "--clusters", "-o", out, "-q")
    assert r.exit_code == 0, r.stderr
    assert len(set(pq.read_table(out).column("id").to_pylist())) == 2


@pytest.mark.parametrize("args", [[], ["--clusters"]])
def test_file_names_that_are_not_utf8_are_xnn_text_in_json_lines_and_read_back(tmp_path, undecodable_names, args):
    import json

    corpus = undecodable_names
    out = tmp_path / "p.jsonl"
    r = run("join", "-t", "0.5", "-s", "word:1", corpus, *args, "-o", out, "-q")
    assert r.exit_code == 0, r.stderr
    text = out.read_text("utf-8")  # strict UTF-8, and no \\udcXX escape of half a character
    assert "\\udc" not in text, text
    records = [json.loads(line) for line in text.splitlines()]
    ids = [r["id"] for r in records] if args else [records[0]["left"], records[0]["right"]]
    assert ids == ["a\\xfe.txt", "a\\xff.txt"], records
    # allpairs reads its own output back: the ids are texts it takes (before, a lone surrogate was refused).
    again = run("join", "-t", "0.5", "-s", "char:1", "--jsonl", out, "--text-col", "id" if args else "right", "-q")
    assert again.exit_code == 0 and again.stderr == "", again.stderr


def test_json_lines_writes_a_lone_surrogate_as_text_as_tsv_does():
    from allpairs.output.escape import json_field, utf8

    assert json_field("a\ud800b") == '"a\\\\ud800b"'
    assert utf8("a\ud800b") == b"a\\ud800b"
    assert json_field("caf\udce9") == '"caf\\\\xe9"' and json_field("café") == '"café"'


# --- 6. JSON Lines messages name JSON's types, not Python's -------------------------------------------------

@pytest.mark.parametrize("record,got", [('{"id": "a", "text": null}', "got null"), ('{"id": "a", "text": 5}', "got a number"),
                                        ('{"id": "a", "text": ["x"]}', "got an array"), ("[1, 2]", "got an array"),
                                        ('{"id": "a", "text": true}', "got a boolean"), ('"x"', "got a string")])
def test_a_json_lines_type_error_names_the_json_type(tmp_path, record, got):
    f = tmp_path / "r.jsonl"
    f.write_text(record + "\n")
    r = run("join", "-t", "0.5", "--jsonl", f)
    assert r.exit_code == 1 and r.stderr.rstrip().endswith(got), r.stderr
    assert "NoneType" not in r.stderr and "list" not in r.stderr


@pytest.mark.parametrize("codec,named", [("utf-16", "utf-16"), ("utf-16-le", "utf-16-le"), ("utf-16-be", "utf-16-be"),
                                         ("utf-32", "utf-32")])
def test_a_utf16_or_utf32_input_is_named_with_the_encoding_that_reads_it(tmp_path, codec, named):
    f = tmp_path / "u.csv"
    f.write_bytes("id,text\na,x y z\nb,x y z\n".encode(codec))
    r = run("join", "-t", "0.5", "--csv", f)
    assert r.exit_code == 1 and f"read it with --encoding {named}" in r.stderr, r.stderr
    r = run("join", "-t", "0.5", "--csv", f, "--encoding", named, "-q", "--no-header")
    assert r.exit_code == 0 and r.stdout == "a\tb\t1.000000\n", r.output


# --- 7. the cluster picture of one large cluster ------------------------------------------------------------

def test_the_cluster_picture_of_one_large_cluster_keeps_its_layout_and_stderr_quiet(tmp_path):
    pytest.importorskip("matplotlib")
    import random
    import warnings

    rng = random.Random(1)
    sets = tmp_path / "one.sets"
    sets.write_text("".join(" ".join(str(rng.randrange(30)) for _ in range(6)) + "\n" for _ in range(3000)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib's "constrained_layout not applied ... collapsed to zero"
        r = run("compare", "-t", "0.5", "--sets", sets, "-b", "4", "-r", "4", "-q", "--plot", tmp_path / "s.png")
    assert r.exit_code == 0, (r.output, r.exception)
    assert r.stderr == "" and (tmp_path / "s-chords.png").stat().st_size > 0


# --- 8. sets --ids through a link to the --output file ------------------------------------------------------

def test_sets_refuses_ids_that_reach_the_output_file_through_a_symbolic_link(tmp_path, two_sets):
    out = tmp_path / "s.sets"
    out.write_text("")
    link = tmp_path / "ids.txt"
    link.symlink_to(out)
    r = run("sets", "--sets", two_sets, "-q", "-o", out, "--ids", link)
    assert r.exit_code == 2 and "is the --output file too" in r.stderr, r.output
    assert out.read_text() == "" and link.is_symlink()


# --- 9. a missing index is a missing path: exit 2, as a missing input file -----------------------------------

@pytest.mark.parametrize("command", [["index", "query"], ["index", "add"]])
def test_a_missing_index_exits_2_as_a_missing_input_does(tmp_path, two_sets, command):
    r = run(*command, tmp_path / "none.idx", "--sets", two_sets)
    assert r.exit_code == 2 and "does not exist" in r.stderr, r.output
    assert run("join", "-t", "0.5", "--sets", tmp_path / "none.sets").exit_code == 2


# --- 10. --keep-all of a table with a column name twice --------------------------------------------------

@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_keep_all_refuses_a_column_name_twice_as_keep_col_does(tmp_path, fmt):
    if fmt == "csv":
        f = tmp_path / "dk.csv"
        f.write_text("id,text,k,k\n1,a b,c,d\n2,a b,x,y\n")
    else:
        pa = pytest.importorskip("pyarrow")
        import pyarrow.parquet as pq

        f = tmp_path / "dk.parquet"
        pq.write_table(pa.Table.from_arrays([pa.array(["1", "2"]), pa.array(["a b", "a b"]), pa.array(["c", "x"]),
                                             pa.array(["d", "y"])], names=["id", "text", "k", "k"]), f)
    for how in (["--keep-all"], ["--keep-col", "k"]):
        r = run("join", "-t", "0.5", f"--{fmt}", f, "-q", *how)
        assert r.exit_code == 1 and "column 'k' appears 2 times in the header (columns 3, 4)" in r.stderr, (how, r.output)


# --- 11. dedup of a table without a header writes its rows without one ------------------------------------

@pytest.mark.parametrize("fmt,sep", [("tsv", "\t"), ("csv", ",")])
def test_dedup_of_a_headerless_table_writes_no_header_so_a_second_run_reads_no_invented_row(tmp_path, fmt, sep):
    f = tmp_path / f"nh.{fmt}"
    f.write_text(sep.join(["x", "a b", "k"]) + "\n" + sep.join(["y", "a b", "m"]) + "\n"
                 + sep.join(["z", "c d", "n"]) + "\n")
    args = ["-t", "0.5", "--no-input-header", "--text-col", "2", "-q", "-f", fmt]
    r = run("dedup", f"--{fmt}", f, *args)
    assert r.exit_code == 0 and r.stdout.splitlines() == [sep.join(["x", "a b", "k"]), sep.join(["z", "c d", "n"])], r.output
    again = tmp_path / f"again.{fmt}"
    again.write_text(r.stdout)
    assert run("dedup", f"--{fmt}", again, *args).stdout == r.stdout
    r = run("dedup", f"--{fmt}", f, "-t", "0.5", "-q", "-f", fmt, "--text-col", "a b")  # with a header, as ever
    assert r.exit_code == 0 and r.stdout.splitlines()[0] == sep.join(["x", "a b", "k"]), r.output


# --- 12. --parquet - with stdin closed -----------------------------------------------------------------

@pytest.mark.parametrize("command", [["join", "-t", "0.5"], ["dedup", "-t", "0.5"]])
def test_parquet_from_a_closed_stdin_is_one_error_line_not_a_traceback(command):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "allpairs", *command, "--parquet", "-"], capture_output=True, text=True,
                       preexec_fn=lambda: os.close(0))
    assert r.returncode == 1 and r.stderr == "allpairs: error: stdin is closed; give a file name instead of '-'\n", \
        r.stderr[-300:]


@pytest.mark.parametrize("command", [["index", "query"], ["index", "add"]])
def test_an_index_named_dash_says_it_is_read_from_a_file_not_stdin(two_sets, command):
    r = run(*command, "-", "--sets", two_sets)
    assert r.exit_code == 2 and "not '-' (stdin)" in r.stderr and "does not exist" not in r.stderr, r.output


# --- CSV output: plain numbers are not formulas -----------------------------------------------------


def test_csv_output_writes_ids_and_cells_that_are_plain_numbers_as_they_are(tmp_path):
    # The formula guard put a ' before -2: an id or carried number came back as '-2 (a formula such as -2+3
    # still gets it).
    f = tmp_path / "nums.csv"
    f.write_text("id,text,note\n-2,a b c,+1.5\n-3e-4,a b c,-2+3\n.5,x y z,=1\n")
    r = run("join", "-t", "0.5", "--csv", str(f), "--keep-col", "note", "-f", "csv", "-q")
    assert r.exit_code == 0, r.stderr
    import csv
    import io

    rows = list(csv.reader(io.StringIO(r.stdout)))
    cells = {c for row in rows[1:] for c in row}
    assert {"-2", "-3e-4", "+1.5", "'-2+3"} <= cells, rows
    assert "'-2" not in cells and "'+1.5" not in cells
