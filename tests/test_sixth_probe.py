"""What the sixth adversarial probe found (session 58), one regression test (or a few) per item."""
from __future__ import annotations

import os
import random
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from allpairs.cli import app


def run(*args, input=None):
    return CliRunner().invoke(app, [str(a) for a in args], input=input, prog_name="allpairs")


# --- 1. a spill directory left by a killed run (SIGKILL, the OOM killer) -----------------------------------

def _stale_spill(directory, name=".allpairs-spill.k1ll3d_x.part", age=3600):
    """What a run killed while it spilled leaves: its directory of runs, nobody holding it."""
    stale = directory / name
    stale.mkdir()
    (stale / "run000000").write_bytes(b"\0" * 120)
    then = time.time() - age
    os.utime(stale, (then, then))
    return stale


def test_a_spill_directory_left_by_a_killed_run_is_removed_by_the_next_run_that_spills_there(tmp_path):
    from allpairs.output.spill import PairRuns

    from test_spill import _chunk

    stale = _stale_spill(tmp_path)
    young = _stale_spill(tmp_path, ".allpairs-spill.y0ung___.part", age=0)  # just made: perhaps not locked yet
    live = PairRuns(tmp_path)
    live.add([_chunk([1, 2, 3])])  # a run still spilling holds its directory
    then = time.time() - 3600
    os.utime(live.directory, (then, then))
    other = tmp_path / ".allpairs-spill.notmine.part"  # not a name mkdtemp makes: not ours
    other.mkdir()
    mine = PairRuns(tmp_path)
    mine.add([_chunk([4, 5])])
    assert not stale.exists()
    assert young.exists() and os.path.isdir(live.directory) and other.exists()
    assert len(list(mine.merge())) == 1 and len(list(live.merge())) == 1
    for store in (live, mine):
        store.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == [other.name, young.name]


@pytest.mark.parametrize("memory", ["64k", "256M"])  # the rerun spills too, or (more memory) it does not
def test_a_join_writing_beside_what_a_killed_join_spilled_removes_it(tmp_path, memory):
    rng = random.Random(1)
    lines = tmp_path / "t.txt"
    lines.write_text("".join(" ".join(f"w{rng.randrange(30)}" for _ in range(4)) + "\n" for _ in range(400)))
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    stale = _stale_spill(out_dir)
    r = run("join", "-t", "0.2", "-s", "word:1", "--lines", lines, "--memory", memory, "-o", out_dir / "p.tsv")
    assert r.exit_code == 0 and ("went past the memory budget" in r.stderr) == (memory == "64k"), r.output
    assert not stale.exists() and [p.name for p in out_dir.iterdir()] == ["p.tsv"]


def test_a_killed_spilling_join_leaves_its_directory_for_the_next_one_to_remove(tmp_path):
    killed = """
import os, signal, sys
from allpairs.output.spill import PairRuns
sys.path.insert(0, sys.argv[2])
from test_spill import _chunk
runs = PairRuns(sys.argv[1])
runs.add([_chunk([1, 2, 3])])
os.kill(os.getpid(), signal.SIGKILL)
"""
    r = subprocess.run([sys.executable, "-c", killed, str(tmp_path), os.path.dirname(__file__)], timeout=120)
    assert r.returncode == -9
    (left,) = tmp_path.iterdir()
    then = time.time() - 3600
    os.utime(left, (then, then))
    from allpairs.output.files import remove_stale_spills

    assert remove_stale_spills(tmp_path) == [str(left)] and not left.exists()


# --- 2. an R–S side whose every document lacks a shingle ---------------------------------------------------

@pytest.mark.parametrize("empty_side", ["left", "right"])
@pytest.mark.parametrize("kind", ["sets", "lines"])
def test_a_side_of_against_with_no_shingle_is_the_empty_corpus_error_not_an_empty_answer(tmp_path, empty_side,
                                                                                      kind):
    blank = tmp_path / "blank.txt"
    blank.write_text("\n  \n")  # documents, but not one shingle: the answer would be empty whatever the other side
    one = tmp_path / "one.txt"
    one.write_text("a b c\n")
    left, right = (blank, one) if empty_side == "left" else (one, blank)
    shingle = [] if kind == "sets" else ["-s", "word:1"]
    r = run("join", "-t", "0.5", f"--{kind}", left, "--against", right, *shingle)
    assert r.exit_code == 1 and r.stdout == "", r.output
    side = "against: " if empty_side == "right" else ""
    assert f"allpairs: error: {side}no " in r.stderr and "(2 read)" in r.stderr, r.stderr


def test_min_shingles_that_leaves_one_side_empty_is_named_too(tmp_path):
    left = tmp_path / "l.txt"
    left.write_text("the quick brown fox jumps\n")
    right = tmp_path / "r.txt"
    right.write_text("the fox\n")
    r = run("join", "-t", "0.5", "-s", "word:1", "--lines", left, "--against", right, "--min-shingles", "3")
    assert r.exit_code == 1 and "against: no document has 3 or more word:1 shingles (1 read)" in r.stderr, r.output
    r = run("join", "-t", "0.2", "-s", "word:1", "--lines", left, "--against", right, "-q", "--no-header")
    assert r.exit_code == 0 and r.stdout.startswith("1\t1\t"), r.output


def test_the_library_refuses_an_against_side_without_a_shingle_as_it_refuses_an_empty_one():
    from allpairs import join
    from allpairs.errors import EmptyCorpusError

    with pytest.raises(EmptyCorpusError, match="against: no document"):
        join(["a b c"], 0.5, shingle="word:1", against=["", " "])
    assert len(join(["a b c"], 0.5, shingle="word:1", against=["", "a b c"]).pairs) == 1


# --- 3. stdin and stdout redirected from or to an input ------------------------------------------------------

def _allpairs(args, stdin, stdout):
    return subprocess.run([sys.executable, "-m", "allpairs", *map(str, args)], stdin=stdin, stdout=stdout,
                          stderr=subprocess.PIPE, text=True, timeout=300)


@pytest.mark.parametrize("kind", ["sets", "lines"])  # the fast path of a plain join, and the typer command
def test_an_output_file_that_is_the_file_on_stdin_is_refused(tmp_path, kind):
    f = tmp_path / "x.txt"
    f.write_text("a b c\na b c\nx y\n")
    with open(f) as stdin:
        r = _allpairs(["join", "-t", "0.5", f"--{kind}", "-", "-o", f], stdin, subprocess.PIPE)
    assert r.returncode == 2 and "x.txt is also an input (standard input)" in r.stderr, r.stderr
    assert f.read_text() == "a b c\na b c\nx y\n"


@pytest.mark.parametrize("args", [["join", "-t", "0.5", "--sets"], ["join", "-t", "0.5", "--lines"],
                                  ["join", "-t", "0.5", "--count", "--sets"], ["sets", "--lines"]])
def test_standard_output_appended_to_an_input_is_refused(tmp_path, args):
    f = tmp_path / "x.txt"
    f.write_text("a b c\na b c\nx y\n")
    with open(f, "a") as stdout:
        r = _allpairs([*args, f], subprocess.DEVNULL, stdout)
    assert r.returncode == 2 and "standard output is redirected to" in r.stderr and "an input" in r.stderr, r.stderr
    assert f.read_text() == "a b c\na b c\nx y\n"
    with open(f) as stdin, open(f, "a") as stdout:
        r = _allpairs([*args, "-"], stdin, stdout)
    assert r.returncode == 2 and "the file on standard input" in r.stderr, r.stderr
    assert f.read_text() == "a b c\na b c\nx y\n"


def test_stdin_and_stdout_from_and_to_other_files_are_still_fine(tmp_path):
    f = tmp_path / "x.txt"
    f.write_text("a b c\na b c\nx y\n")
    out = tmp_path / "out.tsv"
    with open(f) as stdin, open(out, "w") as stdout:
        r = _allpairs(["join", "-t", "0.5", "--lines", "-", "-q"], stdin, stdout)
    assert r.returncode == 0 and out.read_text().splitlines()[1:] == ["1\t2\t1.000000\ta b c\ta b c"], r.stderr


# --- 4. compare --plot's second picture -----------------------------------------------------------------------

def test_the_chord_picture_of_compare_plot_is_refused_when_it_would_replace_an_input(tmp_path):
    pytest.importorskip("matplotlib")
    f = tmp_path / "s-chords.png"  # a text file, whatever its name
    f.write_text("a b c\na b c\na b d\n")
    r = run("compare", "-q", "-t", "0.5", "--sets", f, "--plot", tmp_path / "s.png")
    assert r.exit_code == 2 and "s-chords.png is also an input" in r.stderr, r.output
    assert f.read_text() == "a b c\na b c\na b d\n" and not (tmp_path / "s.png").exists()
    corpus = tmp_path / "c"
    corpus.mkdir()
    for name in ("p-chords.svg", "q.txt"):
        (corpus / name).write_text("the quick brown fox\n")
    r = run("compare", "-q", "-t", "0.5", "-s", "word:1", corpus, "--plot", corpus / "p.svg")
    assert r.exit_code == 2 and "is a document of the input" in r.stderr, r.output
    assert (corpus / "p-chords.svg").read_text() == "the quick brown fox\n"


# --- 5. a carried column named size ----------------------------------------------------------------------------

@pytest.mark.parametrize("keep", [["--keep-col", "size"], ["--keep-all"]])
def test_a_carried_column_that_would_replace_the_set_sizes_in_parquet_is_refused_as_in_the_other_formats(
        tmp_path, keep):
    pytest.importorskip("pyarrow")
    f = tmp_path / "shirts.csv"
    f.write_text("id,text,size\na,red shirt cotton,XL\nb,red shirt cotton blend,M\n")
    for out in ("p.parquet", "p.jsonl", "p.csv"):
        r = run("join", "-q", "-t", "0.5", "-s", "word:1", "--csv", f, *keep, "-o", tmp_path / out)
        assert r.exit_code == 2 and "two columns named 'left_size'" in r.stderr, (out, r.output)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shirts.csv"]
    r = run("join", "-q", "-t", "0.5", "-s", "word:1", "--csv", f, "--keep-col", "text", "-o", tmp_path / "p.parquet")
    assert r.exit_code == 0, r.output


def test_to_pandas_refuses_a_frame_column_that_would_replace_the_set_sizes_or_the_texts():
    pandas = pytest.importorskip("pandas")
    import allpairs
    from allpairs.errors import UsageError

    df = pandas.DataFrame({"title": ["red shirt cotton", "red shirt cotton blend", "blue jeans"],
                           "size": ["XL", "M", "S"], "text": ["x", "y", "z"]}, index=["a", "b", "c"])
    res = allpairs.join(df["title"], 0.5, shingle="word:1")
    with pytest.raises(UsageError, match="two columns named 'left_size'"):
        res.to_pandas(columns=df)
    with pytest.raises(UsageError, match="two columns named 'left_text'.*texts=True"):
        res.to_pandas(columns=df[["text"]], texts=True)
    frame = res.to_pandas(columns=df[["title"]], texts=True)
    assert frame[["left_size", "right_size", "left_title", "right_text"]].values.tolist() == \
        [[3, 4, "red shirt cotton", "red shirt cotton blend"]]


# --- 6. dedup of a TSV writes its rows as they came --------------------------------------------------------------

def test_dedup_of_a_tsv_writes_backslashes_as_they_came_so_a_second_pass_changes_nothing(tmp_path):
    # TSV is read literally (a backslash is a backslash); the kept rows were written escaped (C:\new as C:\\new),
    # so each dedup pass doubled every backslash of a Windows path, a regular expression or LaTeX.
    f = tmp_path / "paths.tsv"
    f.write_text("id\ttext\tpath\\x\n1\tred shirt\tC:\\new\\table\n2\tred shirt\tD:\\x\n3\tblue jeans\tE:\\t\u2028\n")
    r = run("dedup", "-q", "-t", "0.5", "-s", "word:1", "--tsv", f)
    assert r.exit_code == 0, r.output
    lines = f.read_text().split("\n")  # not splitlines: U+2028 is a character of the cell
    assert r.stdout == "\n".join([lines[0], lines[1], lines[3]]) + "\n"
    again = tmp_path / "again.tsv"
    again.write_text(r.stdout)
    assert run("dedup", "-q", "-t", "0.5", "-s", "word:1", "--tsv", again).stdout == r.stdout


def test_dedup_to_tsv_still_escapes_cells_that_hold_a_tab_or_a_line_break(tmp_path):
    f = tmp_path / "q.tsv"
    f.write_text('id\ttext\tnote\n1\tred shirt\t"a\tb\\c"\n2\tblue jeans\t"x\ny"\n')
    r = run("dedup", "-q", "-t", "0.5", "-s", "word:1", "--tsv", f, "--quotechar", '"')
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == ["id\ttext\tnote", "1\tred shirt\ta\\tb\\\\c", "2\tblue jeans\tx\\ny"]
    c = tmp_path / "c.csv"
    c.write_text('id,text,note\n1,red shirt,"a\\b"\n')
    r = run("dedup", "-q", "-t", "0.5", "-s", "word:1", "--csv", c, "-f", "tsv")
    assert r.stdout.splitlines()[1] == "1\tred shirt\ta\\\\b"
