"""``allpairs index build|add|query`` and ``allpairs dedup`` on the command line: answers, exit codes, bad input."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import naive
from allpairs.cli import app

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "datasets" / "tiny" / "corpus"


def run(*args, input=None):
    return CliRunner().invoke(app, [str(a) for a in args], input=input, prog_name="allpairs")


@pytest.fixture
def sets_file(tmp_path):
    rows = ["a b c d", "a b c", "x y z", "a b c d", "", "x y w", "p q"]
    f = tmp_path / "corpus.sets"
    f.write_text("\n".join(rows) + "\n")
    return f, [r.split() for r in rows]


@pytest.fixture
def built(tmp_path, sets_file):
    f, rows = sets_file
    idx = tmp_path / "corpus.idx"
    r = run("index", "build", "--sets", "-t", "0.5", f, "-o", idx)
    assert r.exit_code == 0, r.stderr
    assert "6 indexed" in r.stderr and "wrote" in r.stderr and r.stdout == ""
    return idx, rows


def lines(text):
    """The rows of a TSV table, its header row left out."""
    return [line.split("\t") for line in text.splitlines()[1:]]


def test_every_index_command_has_help():
    for args in (["index"], ["index", "build"], ["index", "add"], ["index", "query"], ["dedup"]):
        r = run(*args, "--help")
        assert r.exit_code == 0 and "Usage" in r.stdout, args


def test_query_prints_every_match_as_the_oracle_finds_it(built):
    idx, rows = built
    queries = ["a b c", "x y z q", "nothing here"]
    r = run("index", "query", idx, "--sets", "-t", "0.6", "-", input="\n".join(queries) + "\n")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.splitlines()[0] == "query\tindexed\tsimilarity"
    expected = naive.rs_pairs([q.split() for q in queries], rows, 0.6)
    assert [(int(q) - 1, int(d) - 1) for q, d, _ in lines(r.stdout)] == [(q, d) for q, d, *_ in expected]
    assert lines(r.stdout)[0] == ["1", "1", "0.750000"]
    assert "3 queries against 6 documents at jaccard >= 0.6: 4 matches" in r.stderr


def test_query_formats_and_count(built):
    idx, _ = built
    q = "a b c\n"
    c = run("index", "query", idx, "--sets", "-", "-f", "csv", input=q)
    assert c.stdout.splitlines()[0] == "query,indexed,similarity,overlap,query_size,indexed_size"
    assert c.stdout.splitlines()[1] == "1,1,0.750000,3,3,4"
    j = run("index", "query", idx, "--sets", "-", "-f", "jsonl", "-q", input=q)
    assert json.loads(j.stdout.splitlines()[0]) == {"query": "1", "indexed": "1", "similarity": 0.75, "overlap": 3,
                                                    "query_size": 3, "indexed_size": 4}
    n = run("index", "query", idx, "--sets", "-", "--count", "-q", input=q)
    assert n.stdout == "3\n" and n.stderr == ""


def test_a_count_of_many_matches_of_one_set_is_the_number_of_lines_the_query_prints(tmp_path):
    """300 identical documents queried by themselves: 90,000 matches of one distinct set, counted as its documents
    (the count holds no match: 3,000 of them took 464 MiB before, 44 MiB now), with and without --top."""
    same = tmp_path / "same.sets"
    same.write_text("a b c\n" * 300)
    idx = tmp_path / "same.idx"
    assert run("index", "build", "-t", "0.5", "--sets", same, "-o", idx, "-q").exit_code == 0
    for top in ((), ("--top", "7")):
        printed = run("index", "query", idx, "--sets", same, "-q", *top)
        counted = run("index", "query", idx, "--sets", same, "--count", *top)
        assert counted.stdout == f"{len(printed.stdout.splitlines()) - 1}\n"
        assert counted.stdout == ("90000\n" if not top else "2100\n")
        assert f"300 queries against 300 documents at jaccard >= 0.5: {int(counted.stdout):,} matches" in counted.stderr


def test_added_documents_are_found_and_the_file_is_replaced(built, tmp_path):
    idx, _ = built
    more = tmp_path / "more.sets"
    more.write_text("p q r\nbrand new tokens\n")
    r = run("index", "add", idx, "--sets", more)
    assert r.exit_code == 0, r.stderr
    assert "added 2 of 2 documents" in r.stderr
    q = run("index", "query", idx, "--sets", "-", "-q", input="p q r\nbrand new\n")
    # Indexed documents in index order: line 7 of the corpus, then the added lines 1 and 2 of more.sets,
    # numbered on after the index's last line (7): 8 and 9.
    assert lines(q.stdout) == [["1", "7", "0.666666"], ["1", "8", "1.000000"], ["2", "9", "0.666666"]]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.idx", "corpus.sets", "more.sets"]


def test_text_index_round_trip_on_the_tiny_corpus(tmp_path):
    idx = tmp_path / "tiny.idx"
    assert run("index", "build", "-t", "0.5", "-s", "word:1", TINY, "-o", idx, "-q").exit_code == 0
    r = run("index", "query", idx, TINY, "-t", "0.7", "-q")
    assert r.exit_code == 0, r.stderr
    pairs = {(a, b) for a, b, _ in lines(r.stdout)}
    joined = run("join", "-t", "0.7", "-s", "word:1", "-q", TINY)
    for a, b, _ in lines(joined.stdout):
        assert (a, b) in pairs and (b, a) in pairs


@pytest.mark.parametrize("args, code, message", [
    (["index", "query", "{idx}", "--sets", "-", "-t", "0.4"], 2, "below the index's 0.5"),
    (["index", "query", "{idx}", "-", "--lines"], 2, "give sets (--sets), not texts"),
    (["index", "query", "{idx}", "--sets", "-", "-s", "word:2"], 2, "not word:2"),
    (["index", "query", "{idx}", "--sets", "-", "-t", "1.5"], 2, "outside (0, 1]"),
    (["index", "query", "{dir}/none.idx", "--sets", "-"], 2, "does not exist"),  # a missing path, as for inputs
    (["index", "query", "{dir}/corpus.sets", "--sets", "-"], 1, "is not an allpairs index file"),
    (["index", "build", "--sets", "-t", "0.5", "{dir}/corpus.sets", "-o", "{dir}/new.idx", "--measure", "hamming"], 2,
     "'hamming' is not one of"),
    (["index", "build", "--sets", "-t", "0.5", "{dir}/corpus.sets", "-o", "{dir}/new.idx", "--measure", "overlap"],
     2, "not a whole number"),
    # -m is --method, and only in join: one meaning per option.
    (["index", "build", "--sets", "-t", "0.5", "{dir}/corpus.sets", "-o", "{dir}/new.idx", "-m", "cosine"], 2,
     "no such option: -m"),
    (["index", "build", "--sets", "-t", "0.5", "{dir}/corpus.sets"], 2, "--output"),
    (["dedup", "--sets", "-t", "2", "{dir}/corpus.sets"], 2, "outside (0, 1]"),
    (["dedup", "--sets", "-t", "0.5", "--measure", "nope", "{dir}/corpus.sets"], 2, "'nope' is not one of"),
])
def test_bad_input_is_one_line_and_the_right_exit_code(built, args, code, message):
    idx, _ = built
    r = run(*[a.format(idx=idx, dir=idx.parent) for a in args], input="a b\n")
    assert r.exit_code == code, (r.stdout, r.stderr)
    assert message in r.stderr and "Traceback" not in r.stderr
    lines = r.stderr.splitlines()  # one line; a usage error may add a "Try ... --help" hint
    assert lines[0].startswith("allpairs: error: ") and len(lines) == 1
    assert r.stdout == "" and not (idx.parent / "new.idx").exists()


def test_damaged_index_is_refused_with_exit_1(built):
    idx, _ = built
    data = bytearray(idx.read_bytes())
    idx.write_bytes(bytes(data[:-1]))
    r = run("index", "query", idx, "--sets", "-", input="a b\n")
    assert r.exit_code == 1 and "truncated" in r.stderr
    data[-1] ^= 1
    idx.write_bytes(bytes(data))
    r = run("index", "add", idx, "--sets", "-", input="a b\n")
    assert r.exit_code == 1 and "checksum" in r.stderr
    assert idx.read_bytes() == bytes(data)  # a refused add leaves the file as it was


def test_dedup_keeps_the_first_of_each_group(sets_file):
    f, rows = sets_file
    r = run("dedup", "--sets", "-t", "0.7", f)
    assert r.exit_code == 0, r.stderr
    expected = naive.dedup(rows, 0.7)
    assert r.stdout.split() == ["id"] + [str(d + 1) for d, k in expected if k is None]
    # Line 5 is empty: kept (nothing reaches it), and said so, not skipped.
    assert "5" in r.stdout.split() and "warning: skipped" not in r.stderr
    assert "5 kept, 2 removed at jaccard >= 0.7" in r.stderr and "1 document with no token kept as it is" in r.stderr
    removed = run("dedup", "--sets", "-t", "0.7", "--removed", "-q", f)
    assert lines(removed.stdout) == [["2", "1", "0.750000"], ["4", "1", "1.000000"]]
    assert run("dedup", "--sets", "-t", "0.7", "--count", "-q", f).stdout == "5\n"
    out = f.parent / "kept.txt"
    assert run("dedup", "--sets", "-t", "0.7", "-q", "-o", out, f).stdout == ""
    assert out.read_text() == r.stdout


def test_sets_dedup_and_index_read_several_paths_and_hidden_files_as_join_does(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    (a / "one.txt").write_text("the quick brown fox jumps over the lazy dog\n")
    (b / "two.txt").write_text("the quick brown fox jumps over the lazy dog\n")
    (b / ".three.txt").write_text("the quick brown fox jumps over the lazy cat\n")
    expect = run("join", "-t", "0.5", "-s", "word:1", a, b, "-q")
    assert expect.exit_code == 0 and lines(expect.stdout) == [["one.txt", "two.txt", "1.000000"]]

    r = run("sets", "-s", "word:1", a, b, "-q")
    assert r.exit_code == 0 and len(r.stdout.splitlines()) == 2
    assert len(run("sets", "-s", "word:1", "--hidden", a, b, "-q").stdout.splitlines()) == 3

    r = run("dedup", "-t", "0.5", "-s", "word:1", a, b, "-q")
    assert r.exit_code == 0 and r.stdout.splitlines() == ["id", "one.txt"]
    r = run("dedup", "-t", "0.5", "-s", "word:1", "--hidden", "--count", a, b, "-q")
    assert r.exit_code == 0 and r.stdout == "1\n"

    idx = tmp_path / "ab.idx"
    assert run("index", "build", "-t", "0.5", "-s", "word:1", "-o", idx, a, b, "-q").exit_code == 0
    r = run("index", "add", idx, "--hidden", "--skip-existing", b)  # two.txt is indexed already: only .three.txt
    assert r.exit_code == 0 and "skipped 1 document (in the index already: 1)" in r.stderr
    assert "added 1 of 2 documents; the index holds 3" in r.stderr
    r = run("index", "query", idx, a, b, "-q")
    assert r.exit_code == 0, r.stderr
    assert {tuple(row[:2]) for row in lines(r.stdout)} >= {("one.txt", "two.txt"), ("two.txt", "one.txt")}


@pytest.mark.parametrize("args, flag", [
    (("sets", "--id-field", "x"), "--id-col"),
    (("dedup", "-t", "0.5", "--count", "--format", "csv"), "--format"),
    (("dedup", "-t", "0.5", "--no-header", "--format", "jsonl"), "--no-header"),
    (("index", "query", "x.idx", "--headerless"), "--headerless"),
    (("index", "build", "-t", "0.5", "-o", "x.idx", "--encoding", "latin-1"), "--encoding"),
])
def test_options_that_would_do_nothing_are_refused_by_every_command(args, flag, tmp_path):
    r = run(*args, TINY)
    assert r.exit_code == 2
    assert r.stderr.startswith(f"allpairs: error: {flag}") and "does nothing" in r.stderr
    assert not (Path.cwd() / "x.idx").exists()


# --- issue 17, item 8: index add and ids the index holds ----------------------

def test_adding_the_indexed_corpus_again_is_refused_in_one_line_and_leaves_the_index(tmp_path):
    # The README's order (build tiny.idx, then add the same corpus) used to index every id twice.
    idx = tmp_path / "tiny.idx"
    assert run("index", "build", "-t", "0.5", "-s", "word:1", TINY, "-o", idx, "-q").exit_code == 0
    before = idx.read_bytes()
    r = run("index", "add", idx, TINY)
    assert r.exit_code == 1 and r.stdout == ""
    error = [line for line in r.stderr.splitlines() if "error" in line]
    assert error == ["allpairs: error: 6 documents of the 7 added have ids the index holds already (the first: "
                     "'cat.txt'); replace the old documents (--replace) or keep them and skip "
                     "the new (--skip-existing); if they are other files, read them from the "
                     f"directory above to give them ids of their own ({TINY.parent} --include 'corpus/**')"]
    assert idx.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["tiny.idx"]


def test_skip_existing_says_how_many_were_skipped_and_replace_answers_as_a_fresh_build(tmp_path):
    idx, fresh = tmp_path / "tiny.idx", tmp_path / "fresh.idx"
    assert run("index", "build", "-t", "0.5", "-s", "word:1", TINY, "-o", idx, "-q").exit_code == 0
    r = run("index", "add", idx, TINY, "--skip-existing")
    assert r.exit_code == 0, r.stderr
    assert "skipped 8 documents (in the index already: 6, binary: 1, no shingle: 1)" in r.stderr
    assert "added 0 of 8 documents; the index holds 6" in r.stderr
    new = tmp_path / "new"
    new.mkdir()
    (new / "cat.txt").write_text("the quick brown fox jumps over the lazy dog\n")  # cat.txt, replaced
    (new / "owl.txt").write_text("an owl\n")
    r = run("index", "add", idx, new, "--replace")
    assert r.exit_code == 0, r.stderr
    assert "replaced 1 document of the same id" in r.stderr and "added 2 of 2 documents; the index holds 7" in r.stderr
    # A fresh build of the final documents: the old ones but cat.txt, then the new ones.
    final = tmp_path / "final"
    shutil.copytree(TINY, final)
    (final / "cat.txt").unlink()
    assert run("index", "build", "-t", "0.5", "-s", "word:1", final, new, "-o", fresh, "-q").exit_code == 0
    grown, built = (run("index", "query", i, TINY, new, "-q") for i in (idx, fresh))
    assert grown.exit_code == 0 and grown.stdout == built.stdout
    found = {q for q, d, _ in lines(grown.stdout) if d == "cat.txt"}  # the new cat.txt's text, not the old one's
    assert found and all(q.endswith("new/cat.txt") or q.startswith("fox") for q in found)
    r = run("index", "add", idx, new, "--replace", "--skip-existing")
    assert r.exit_code == 2 and "exclude each other" in r.stderr


@pytest.fixture
def colliding_roots(tmp_path, monkeypatch):
    """Three roots whose one file each has the same text: a gives b/x.txt, b and c both give x.txt."""
    for f in ("a/b/x.txt", "b/x.txt", "c/x.txt"):
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("the quick brown fox jumps over the lazy dog\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_every_command_names_documents_of_roots_whose_paths_collide_as_join_does(colliding_roots):
    ids = ["a/b/x.txt", "b/x.txt", "c/x.txt"]  # b's x.txt prefixed would be a's b/x.txt: a's is prefixed too
    r = run("join", "-t", "0.5", "-s", "word:1", "a", "b", "c", "-q")
    assert r.exit_code == 0 and [row[:2] for row in lines(r.stdout)] == [ids[:2], [ids[0], ids[2]], ids[1:]]
    assert run("sets", "-s", "word:1", "--ids", "ids.txt", "a", "b", "c", "-q").exit_code == 0
    assert (colliding_roots / "ids.txt").read_text().splitlines() == ids
    r = run("dedup", "-t", "0.5", "-s", "word:1", "a", "b", "c", "-q")
    assert r.exit_code == 0 and r.stdout.splitlines() == ["id", ids[0]]
    assert run("index", "build", "-t", "0.5", "-s", "word:1", "-o", "abc.idx", "a", "b", "c", "-q").exit_code == 0
    r = run("index", "query", "abc.idx", "c/x.txt", "-q")
    assert r.exit_code == 0 and [row[1] for row in lines(r.stdout)] == ids


def test_adding_a_root_whose_paths_are_ids_of_the_index_is_refused_unless_the_ids_differ(colliding_roots):
    assert run("index", "build", "-t", "0.5", "-s", "word:1", "-o", "b.idx", "b", "-q").exit_code == 0
    before = (colliding_roots / "b.idx").read_bytes()
    r = run("index", "add", "b.idx", "c")  # c's x.txt is another file of b's id x.txt
    assert r.exit_code == 1 and "1 document of the 1 added has an id the index holds already (the first: " \
        "'x.txt')" in r.stderr
    assert r.stderr.rstrip().endswith("read them from the directory above to give them ids of their own "
                                      "(. --include 'c/**')")
    assert (colliding_roots / "b.idx").read_bytes() == before
    assert run("index", "add", "b.idx", "a", "-q").exit_code == 0  # b/x.txt: an id of its own
    assert run("index", "add", "b.idx", ".", "--include", "c/**", "-q").exit_code == 0  # as the error says
    r = run("index", "query", "b.idx", "c/x.txt", "-q")
    assert r.exit_code == 0 and [row[1] for row in lines(r.stdout)] == ["x.txt", "b/x.txt", "c/x.txt"]


def test_line_ids_continue_across_added_files(tmp_path):
    idx = tmp_path / "l.idx"
    f = tmp_path / "l.txt"
    f.write_text("a b\nc d\n")
    assert run("index", "build", "--lines", "-t", "0.5", "-s", "word:1", f, "-o", idx, "-q").exit_code == 0
    for _ in range(2):
        assert run("index", "add", idx, "--lines", f, "-q").exit_code == 0
    r = run("index", "query", idx, "--lines", f, "-q")
    assert [row[:2] for row in lines(r.stdout)] == [["1", "1"], ["1", "3"], ["1", "5"], ["2", "2"], ["2", "4"],
                                                    ["2", "6"]]


def test_adding_to_a_read_only_index_says_to_make_it_writable(tmp_path):
    idx = tmp_path / "tiny.idx"
    assert run("index", "build", "-t", "0.5", "-s", "word:1", TINY, "-o", idx, "-q").exit_code == 0
    idx.chmod(0o444)
    r = run("index", "add", idx, "--lines", "-", input="an owl\n")
    assert r.exit_code == 1
    assert r.stderr == f"allpairs: error: index {idx} is read-only (mode 0444); make it writable to update it " \
                       f"(chmod u+w {idx})\n"
