"""What the seventh adversarial probe found (session 59), one regression test (or a few) per item."""
from __future__ import annotations

import pytest
from typer.testing import CliRunner

from allpairs.cli import app


def run(*args, input=None):
    return CliRunner().invoke(app, [str(a) for a in args], input=input, prog_name="allpairs")


# --- 1. an index carrying a column named size --------------------------------------------------------------

@pytest.mark.parametrize("keep", [["--keep-col", "size"], ["--keep-all"]])
def test_an_index_carrying_a_column_that_queries_could_not_write_is_refused_when_it_is_built(tmp_path, keep):
    f = tmp_path / "shirts.csv"
    f.write_text("id,text,size\na,red shirt cotton,XL\nb,red shirt cotton blend,M\n")
    r = run("index", "build", "-q", "-t", "0.5", "-s", "word:1", "--csv", f, *keep, "-o", tmp_path / "s.idx")
    assert r.exit_code == 2 and "column named 'size'" in r.stderr and "'indexed_size'" in r.stderr, r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shirts.csv"]
    g = tmp_path / "colour.csv"
    g.write_text("id,text,colour\na,red shirt cotton,red\nb,red shirt cotton blend,red\n")
    r = run("index", "build", "-q", "-t", "0.5", "-s", "word:1", "--csv", g, "--keep-all", "-o", tmp_path / "c.idx")
    assert r.exit_code == 0, r.output
    r = run("index", "query", "-q", tmp_path / "c.idx", "--csv", g, "-f", "jsonl")
    assert r.exit_code == 0 and '"indexed_colour": "red"' in r.stdout, r.output


def test_the_library_refuses_to_build_an_index_carrying_a_column_named_size():
    from allpairs.corpus import Corpus
    from allpairs.errors import UsageError
    from allpairs.index import SearchIndex

    corpus = Corpus(ids=["a", "b"], texts=["red shirt", "red shirt blend"], columns={"size": ["XL", "M"]})
    with pytest.raises(UsageError, match="column named 'size'.*keep="):
        SearchIndex.build(corpus, 0.5, shingle="word:1")


# --- 2. the fix --min-shingles's error suggests ------------------------------------------------------------

@pytest.mark.parametrize("kind", [["--lines", "-s", "char:3"], ["--lines", "-s", "word:1"], ["--sets"]])
def test_the_fix_that_min_shingles_error_suggests_works(tmp_path, kind):
    # It suggested "--shingle char:3" whatever the shingles, the very setting that had failed among them.
    f = tmp_path / "short.txt"
    f.write_text("the fox\nthe quick brown fox\n")
    r = run("join", "-q", "-t", "0.5", *kind, f, "--min-shingles", "30")
    assert r.exit_code == 1 and "(2 read); the largest has " in r.stderr and "--shingle" not in r.stderr, r.output
    most = r.stderr.split("give --min-shingles ")[1].split()[0]
    assert r.stderr.endswith(f"give --min-shingles {most} or less to keep it\n"), r.stderr
    r = run("join", "-q", "-t", "0.5", *kind, f, "--min-shingles", most, "--count")
    assert r.exit_code == 0 and r.stdout == "0\n", r.output
    r = run("join", "-q", "-t", "0.5", *kind, f, "--min-shingles", int(most) + 1)
    assert r.exit_code == 1, r.output


def test_a_corpus_of_blank_documents_is_told_so_with_no_setting_to_change(tmp_path):
    f = tmp_path / "blank.txt"
    f.write_text("\n  \n")
    for kind in (["--lines", "-s", "word:2"], ["--sets"]):
        r = run("join", "-q", "-t", "0.5", *kind, f)
        assert r.exit_code == 1 and "(2 read): every one is empty" in r.stderr, r.output
        assert "--shingle" not in r.stderr and "--min-shingles" not in r.stderr, r.output


def test_the_library_names_min_shingles_as_a_parameter():
    import allpairs
    from allpairs.errors import EmptyCorpusError

    with pytest.raises(EmptyCorpusError, match="the largest has 2: give min_shingles=2 or less"):
        allpairs.join(["a b", "c d"], 0.5, shingle="word:1", min_shingles=4)


# --- 3. index add of another kind of input ----------------------------------------------------------------

def test_sets_added_to_an_index_of_texts_are_refused_as_sets_not_for_a_text_column(tmp_path):
    lines = tmp_path / "t.txt"
    lines.write_text("the quick brown fox\nthe quick brown fox jumps\n")
    idx = tmp_path / "t.idx"
    assert run("index", "build", "-q", "-t", "0.5", "-s", "word:1", "--lines", lines, "-o", idx).exit_code == 0
    before = idx.read_bytes()
    sets = tmp_path / "q.sets"
    sets.write_text("the quick brown fox\n")
    r = run("index", "add", "-q", idx, "--sets", sets)
    # It said the index carries 'text' and to read the sets with --keep-col text, which --sets refuses.
    assert r.exit_code == 2 and "the index holds word:1 shingles of texts; give texts" in r.stderr, r.output
    assert "--keep-col" not in r.stderr and idx.read_bytes() == before
    corpus = tmp_path / "d"
    corpus.mkdir()
    (corpus / "a.txt").write_text("the quick fox\n")
    r = run("index", "add", "-q", idx, corpus)  # files carry no line text: not --keep-col, which they refuse
    assert r.exit_code == 2 and "add them as records (a table or JSON Lines) with that column" in r.stderr, r.output
    assert idx.read_bytes() == before
    table = tmp_path / "z.csv"
    table.write_text("id,text\nz,the quick brown fox\n")
    r = run("index", "add", "-q", idx, "--csv", table)
    assert r.exit_code == 0, r.output
    r = run("index", "query", "-q", idx, "--lines", lines, "-f", "jsonl")
    assert '"indexed": "z", "similarity": 1.0' in r.stdout and '"indexed_text": "the quick brown fox"' in r.stdout



# --- 4. a blank line of a table of one column ----------------------------------------------------------------

@pytest.mark.parametrize("kind", ["csv", "tsv"])
def test_dedup_of_a_one_column_table_keeps_its_blank_rows(tmp_path, kind):
    # A blank line of a one-column table is a row with an empty title; it was dropped, and dedup, which keeps
    # every row with no shingle, wrote the table back a row short.
    f = tmp_path / f"titles.{kind}"
    f.write_text("title\nred shirt\n\nred shirt\nblue jeans\n")
    r = run("dedup", "-t", "0.5", "-s", "word:1", f"--{kind}", f, "--text-col", "title")
    blank = '""' if kind == "csv" else ""  # CSV: the empty row quoted, as a blank line would be no row
    assert r.exit_code == 0 and r.stdout == f"title\nred shirt\n{blank}\nblue jeans\n", r.output
    assert "4 documents, 0 skipped; word:1 shingles; 3 kept, 1 removed" in r.stderr, r.stderr
    r = run("join", "-q", "-t", "0.5", "-s", "word:1", f"--{kind}", f, "--text-col", "title")
    assert r.stdout.splitlines()[1:] == ["1\t3\t1.000000"], r.output


def test_blank_lines_of_a_wider_table_are_still_no_rows(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("\nid,text\na,red shirt\n\nb,red shirt\n\n")
    r = run("dedup", "-q", "-t", "0.5", "-s", "word:1", "--csv", f, "--removed")
    assert r.exit_code == 0 and r.stdout.splitlines() == ["removed\tkept\tsimilarity", "b\ta\t1.000000"], r.output


# --- 5. a file whose lines end with a carriage return alone ----------------------------------------------------

@pytest.mark.parametrize("kind", ["lines", "sets", "jsonl"])
def test_a_file_with_classic_mac_line_ends_is_refused_not_read_as_one_line(tmp_path, kind):
    # Read as one line, three documents were one: no pair, exit 0. A table (the csv module) ends lines there.
    f = tmp_path / "mac.txt"
    body = {"jsonl": '{"text": "red shirt"}\r{"text": "red shirt"}\r'}.get(kind, "red shirt\rred shirt\rblue\r")
    f.write_bytes(body.encode())
    shingle = [] if kind == "sets" else ["-s", "word:1"]
    r = run("join", "-q", "-t", "0.5", *shingle, f"--{kind}", f, "--count")
    assert r.exit_code == 1 and r.stdout == "", r.output
    assert "mac.txt: its lines end with a carriage return alone" in r.stderr, r.stderr
    r = run("join", "-q", "-t", "0.5", *shingle, f"--{kind}", "-", "--count", input=body.replace("\r", "\r\n"))
    assert r.exit_code == 0 and r.stdout == "1\n", r.output
    g = tmp_path / "one.txt"
    g.write_bytes(body.split("\r")[0].encode() + b"\r")  # one line, a CR at its end: read as ever
    r = run("join", "-q", "-t", "0.5", *shingle, f"--{kind}", g, "--count")
    assert r.exit_code == 0 and r.stdout == "0\n", r.output


def test_a_csv_with_classic_mac_line_ends_is_still_read_row_by_row(tmp_path):
    f = tmp_path / "mac.csv"
    f.write_bytes(b"id,text\ra,red shirt\rb,red shirt\r")
    r = run("join", "-q", "-t", "0.5", "-s", "word:1", "--csv", f)
    assert r.exit_code == 0 and r.stdout.splitlines()[1:] == ["a\tb\t1.000000"], r.output


# --- 6. -o /dev/stdout when the shell redirected standard output to a file ---------------------------------------

@pytest.mark.parametrize("output", ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"])
@pytest.mark.parametrize("kind", ["sets", "lines"])  # the fast path of a plain join, and the typer command
def test_output_to_dev_stdout_goes_where_the_shell_writes_not_over_it(tmp_path, output, kind):
    # Reopened (O_APPEND), the file was written at its end as it was then; the shell, writing at its own offset
    # afterwards, wrote over the pairs: "before", "after 0", then the rest of a header, a row.
    import shlex
    import subprocess
    import sys

    f = tmp_path / "s.sets"
    f.write_text("a b c\nb c d e\n")
    log = tmp_path / "log.txt"
    command = " ".join(map(shlex.quote, [sys.executable, "-m", "allpairs", "join", "-q", "-t", "0.1", f"--{kind}",
                                         str(f), "-o", output]))
    r = subprocess.run(["sh", "-c", f"{{ echo before; {command}; echo after $?; }} > {shlex.quote(str(log))}"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    lines = log.read_text().splitlines()
    assert lines[0] == "before" and lines[-1] == "after 0" and lines[1].startswith("left\tright\tsimilarity"), lines
    assert lines[2].startswith("1\t2\t0.400000") and len(lines) == 4, lines


# --- 7. symbolic links below a directory ---------------------------------------------------------------------

def test_links_left_out_of_a_directory_are_counted_and_named_not_dropped_without_a_word(tmp_path):
    # A tree of links (git-annex, DVC, a Hugging Face snapshot) read as nothing: "0 files found", or a corpus
    # short of its linked files with nothing said. Links stay unfollowed (as ripgrep); now they are counted.
    import os

    store = tmp_path / "store"
    store.mkdir()
    for name in ("x.txt", "y.txt"):
        (store / name).write_text("the quick brown fox\n")
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("x.txt", "y.txt"):
        (tree / name).symlink_to(store / name)
    r = run("join", "-t", "0.5", "-s", "word:1", tree)
    assert r.exit_code == 1, r.output
    assert "(0 files found; left out 2 symbolic links below a directory, not followed; name the files to read " \
           "them)" in r.stderr, r.stderr
    (tree / "z.txt").write_text("the quick brown fox\n")
    os.mkfifo(tree / "pipe")
    r = run("join", "-t", "0.5", "-s", "word:1", tree)
    assert r.exit_code == 0 and "left out 2 symbolic links below a directory" in r.stderr, r.output
    assert "1 FIFO, socket or device" in r.stderr, r.stderr
    r = run("join", "-q", "-t", "0.5", "-s", "word:1", tree / "x.txt", tree / "y.txt")  # named: read
    assert r.stdout.splitlines()[1:] == [f"{tree / 'x.txt'}\t{tree / 'y.txt'}\t1.000000"], r.output


# --- 8. documents an index leaves out by its min_shingles ------------------------------------------------------

def test_index_build_and_add_say_how_many_documents_their_min_shingles_left_out(tmp_path):
    # "3 documents, 0 skipped, 2 indexed" and "added 1 of 3 documents" left one document unaccounted for; an
    # add does not take --min-shingles (the index holds it), so the user had no way to know why.
    f = tmp_path / "m.sets"
    f.write_text("a b c d\na b c e\na b\n")
    idx = tmp_path / "m.idx"
    r = run("index", "build", "-t", "0.5", "--sets", f, "--min-shingles", "3", "-o", idx)
    assert r.exit_code == 0 and "3 documents, 0 skipped, 2 indexed (1 more dropped: fewer than 3 shingles, the " \
                                "index's --min-shingles)" in r.stderr, r.output
    g = tmp_path / "more.sets"
    g.write_text("x y\n\nx y z\n")
    r = run("index", "add", idx, "--sets", g)
    assert r.exit_code == 0 and "added 1 of 3 documents (1 more dropped: fewer than 3 shingles" in r.stderr, r.output


# --- 9. the fix a full disk while spilling suggests -----------------------------------------------------------

@pytest.mark.parametrize("beside_output", [True, False])
def test_a_full_disk_while_spilling_suggests_tmpdir_only_where_tmpdir_decides(tmp_path, monkeypatch, beside_output):
    # Beside an output (-o), the spill ignores TMPDIR: "point TMPDIR elsewhere" changed nothing.
    import errno
    import os

    from allpairs.errors import OutputError
    from allpairs.output import spill

    from test_spill import _chunk

    def full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(spill, "_write", full)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    store = spill.PairRuns(tmp_path if beside_output else None)
    with pytest.raises(OutputError) as e:
        store.add([_chunk([1, 2, 3])])
    message = str(e.value)
    assert ("point TMPDIR elsewhere" in message) != beside_output, message
    assert ("write the output elsewhere" in message) == beside_output, message


# --- 10. a Parquet decimal column written as text and JSON ------------------------------------------------------

def test_a_parquet_decimal_is_a_number_in_json_lines_and_its_digits_in_tsv_and_csv(tmp_path):
    # json_default gave str(decimal), which json.dumps quoted: "1.10" (a JSON string) in JSON Lines, the five
    # characters "1.10" with their quotes in every TSV and CSV cell.
    pa = pytest.importorskip("pyarrow")
    import decimal

    import pyarrow.parquet as pq

    f = tmp_path / "prices.parquet"
    pq.write_table(pa.table({"id": ["a", "b", "c"], "text": ["red shirt", "red shirt", "blue jeans"],
                             "price": pa.array([decimal.Decimal("1.10"), decimal.Decimal("-2.5E+3"), None],
                                               pa.decimal128(10, 2)),
                             "tiers": pa.array([[decimal.Decimal("0.50")], [], None], pa.list_(pa.decimal128(4, 2)))}),
                   f)
    r = run("dedup", "-q", "-t", "0.9", "-s", "word:1", "--parquet", f, "-f", "jsonl")
    assert r.stdout.splitlines() == ['{"id": "a", "text": "red shirt", "price": 1.10, "tiers": [0.50]}',
                                     '{"id": "c", "text": "blue jeans", "price": null, "tiers": null}'], r.output
    r = run("dedup", "-q", "-t", "0.9", "-s", "word:1", "--parquet", f, "-f", "csv")
    assert r.stdout.splitlines() == ["id,text,price,tiers", "a,red shirt,1.10,[0.50]", "c,blue jeans,,"], r.output
    r = run("join", "-q", "-t", "0.9", "-s", "word:1", "--parquet", f, "--keep-col", "price", "-f", "jsonl")
    assert '"left_price": 1.10, "right_price": -2500.00' in r.stdout, r.output
    r = run("join", "-q", "-t", "0.9", "-s", "word:1", "--parquet", f, "--keep-col", "price")
    assert r.stdout.splitlines()[1:] == ["a\tb\t1.000000\t1.10\t-2500.00"], r.output


# --- 11. a table split by another delimiter than its format's -------------------------------------------------

@pytest.mark.parametrize("kind, body, code, fix", [
    ("csv", "id;text\na;red shirt cotton\n\nb;red shirt cotton\nc;blue jeans\n", 2, "read it with --delimiter ';'"),
    ("csv", "id\ttext\na\tred shirt cotton\nb\tred shirt cotton\n", 2, "read it with --tsv"),
    ("tsv", "id,text\na,red shirt cotton\nb,red shirt cotton\n", 2, "read it with --csv")])
def test_a_table_split_by_another_delimiter_is_refused_not_read_as_one_column(tmp_path, kind, body, code, fix):
    # Read as one column: every line one text with its id in it, ids row numbers: pair (1, 2) at 0.6, not
    # (a, b) at 1.0, with exit 0 and, under -q, nothing said.
    f = tmp_path / f"t.{kind}"
    f.write_text(body)
    r = run("join", "-q", "-t", "0.5", "-s", "word:1", f"--{kind}", f)
    assert r.exit_code == code and r.stdout == "" and "would be read as one column" in r.stderr, r.output
    assert fix in r.stderr, r.stderr


def test_a_one_column_table_whose_rows_hold_commas_unevenly_is_still_read(tmp_path):
    f = tmp_path / "titles.tsv"
    f.write_text("title, or name\nred, shirt, cotton\nblue jeans\n")
    r = run("join", "-q", "-t", "0.1", "-s", "word:1", "--tsv", f, "--count")
    assert r.exit_code == 0 and r.stdout == "0\n", r.output


# --- 12. a JSON Lines record with a field twice ----------------------------------------------------------------

@pytest.mark.parametrize("record", ['{"id": "a", "text": "red shirt", "id": "b"}',
                                    '{"id": "a", "text": "red shirt", "text": "blue jeans"}',
                                    '{"id": "a", "text": "red shirt", "url": "u1", "url": "u2"}'])
def test_a_json_lines_record_with_a_field_twice_is_refused_not_read_as_its_last(tmp_path, record):
    # json.loads keeps the last of two fields of one name: an id, a text or a carried value was dropped silently.
    f = tmp_path / "r.jsonl"
    f.write_text(record + '\n{"id": "c", "text": "red shirt \\"id\\": \\"text\\"", "url": "u3"}\n')
    twice = record.split('", "')[-1].split('"')[0] if "url" not in record else "url"
    r = run("join", "-q", "-t", "0.5", "-s", "word:1", "--jsonl", f, "--keep-all")
    assert r.exit_code == 1 and r.stdout == "", r.output
    assert f"r.jsonl:1: field {twice!r} appears twice in the record" in r.stderr, r.stderr
    f.write_text(record.replace(f'"{twice}": "', '"other": "', 1) + "\n"  # a field's name in a value: fine
                 + '{"id": "c", "text": "red shirt \\"id\\": \\"text\\"", "url": "u3"}\n')
    r = run("join", "-q", "-t", "0.1", "-s", "word:1", "--jsonl", f, "--count")
    assert r.exit_code == 0 and r.stdout in ("0\n", "1\n"), r.output


def test_output_to_dev_stdin_does_not_write_into_the_file_on_standard_input(tmp_path):
    # Reopened for writing through /proc, the file the shell opened for reading got the pairs appended.
    import subprocess
    import sys

    f = tmp_path / "s.sets"
    f.write_text("a b c\nb c d e\n")
    victim = tmp_path / "notes.txt"
    victim.write_text("keep me\n")
    with open(victim) as stdin:
        r = subprocess.run([sys.executable, "-m", "allpairs", "join", "-q", "-t", "0.1", "--sets", str(f), "-o",
                            "/dev/stdin"], stdin=stdin, capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "cannot write /dev/stdin" in r.stderr, r.stderr
    assert victim.read_text() == "keep me\n"
