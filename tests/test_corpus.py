"""Reading corpora: file choice by glob, skipped files with reasons, errors that say where."""
import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allpairs.corpus import tree as corpus
from allpairs.corpus import matches, read_corpus, read_directory, read_jsonl, read_lines, read_sets
from allpairs.corpus.tables import read_table
from allpairs.errors import InputError, UsageError


@pytest.mark.parametrize("path, patterns, expected", [
    ("a/b.go", ["*.go"], True),
    ("b.go", ["*.go"], True),
    ("a/b_test.go", ["*_test.go"], True),
    ("a/testdata/x.go", ["testdata/**"], True),
    ("testdata/x.go", ["testdata/**"], True),
    ("a/testdatax/x.go", ["testdata/**"], False),
    ("vendor/x.go", ["/vendor/**"], True),
    ("cmd/vendor/x.go", ["/vendor/**"], False),
    ("a/b/c.py", ["a/**/*.py"], True),
    ("a/c.py", ["a/**/*.py"], True),
    ("a/b.txt", ["*.go", "*.txt"], True),
    ("a/b.gox", ["*.go"], False),
    ("a/b.c", ["*.[ch]"], True),
])
def test_globs_match_like_gitignore_tails(path, patterns, expected):
    assert matches(path, patterns) is expected


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.txt").write_text("hello world")
    (tmp_path / "a" / "two.go").write_text("package main\n")
    (tmp_path / "bin.dat").write_bytes(b"\x00\x01\x02binary")
    (tmp_path / "latin.txt").write_bytes("caf\xe9".encode("latin-1"))
    (tmp_path / "b.txt").write_text("x")
    (tmp_path / "link.txt").symlink_to(tmp_path / "b.txt")
    return tmp_path


def test_directory_ids_are_sorted_relative_paths_and_skips_say_why(tree):
    c = read_directory(tree)
    assert c.ids == ["a/one.txt", "a/two.go", "b.txt"]
    assert c.languages == [None, "go", None]
    why = dict(c.skipped)
    assert why["bin.dat"] == "binary"
    assert why["latin.txt"].startswith("not UTF-8")
    assert "link.txt" not in c.ids


def test_include_exclude_and_min_bytes(tree):
    assert read_directory(tree, include=["*.go"]).ids == ["a/two.go"]
    assert read_directory(tree, exclude=["a/**"]).ids == ["b.txt"]
    c = read_directory(tree, min_bytes=5)
    assert c.ids == ["a/one.txt", "a/two.go"]
    assert c.dropped == 2 and "b.txt" not in dict(c.skipped)  # b.txt and latin.txt (4 bytes)


def test_unreadable_file_is_skipped(tree, monkeypatch):
    # chmod 0 does not stop root (CI runs as root), so fail the read itself.
    real = corpus._read_bytes

    def read_bytes(path):
        if Path(path).name == "one.txt":
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(corpus, "_read_bytes", read_bytes)
    assert dict(read_directory(tree).skipped)["a/one.txt"] == "unreadable (Permission denied)"


def test_missing_path_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="no such file"):
        read_directory(tmp_path / "nope")
    with pytest.raises(UsageError, match="no such file"):
        read_lines(tmp_path / "nope.txt")


def test_a_directory_given_to_a_line_reader_is_a_usage_error(tree):
    with pytest.raises(UsageError, match="is a directory"):
        read_sets(tree)


def test_lines_and_sets(tmp_path):
    f = tmp_path / "p.txt"
    f.write_bytes(b"abc\r\nabd\n\nx y  y\n")
    c = read_lines(f)
    assert c.ids == ["1", "2", "3", "4"] and c.texts == ["abc", "abd", "", "x y  y"] and c.shown == c.texts
    s = read_sets(f)
    assert s.sets == [["abc"], ["abd"], [], ["x", "y", "y"]]


def test_line_number_ids_are_a_list_however_they_are_reached(tmp_path):
    # Made at their first use (a --count run never makes them), they are the same list to every reader.
    import copy
    import dataclasses
    import pickle

    import allpairs

    f = tmp_path / "s.txt"
    f.write_text("a b\na b c\nx\n")
    expected = ["1", "2", "3"]
    assert len(read_sets(f)) == 3
    assert read_sets(f) == read_sets(f)
    assert pickle.loads(pickle.dumps(read_sets(f))).ids == expected
    assert copy.deepcopy(read_sets(f)).ids == expected
    assert dataclasses.replace(read_sets(f), kind="sets").ids == expected
    assert dataclasses.asdict(read_lines(f))["ids"] == expected
    corpus = read_sets(f)
    res = allpairs.join(corpus, 0.5)
    assert type(res.ids) is list and res.ids == expected and corpus.ids == expected
    assert [(res.ids[p.left], res.ids[p.right]) for p in res.pairs] == [("1", "2")]
    counted = allpairs.join(read_sets(f), 0.5, count=True)
    assert len(counted.pairs) == 1 and counted.ids == expected and counted.left_ids == expected
    corpus.ids = ["x", "y", "z"]
    assert allpairs.join(corpus, 0.5).ids == ["x", "y", "z"]


def test_undecodable_line_names_the_line(tmp_path):
    f = tmp_path / "p.txt"
    f.write_bytes(b"ok\nstill ok\ncaf\xe9\n")
    with pytest.raises(InputError, match=r"p.txt:3: not valid utf-8"):
        read_lines(f)
    assert read_lines(f, encoding="latin-1").texts[2] == "café"


def test_nul_in_line_input_is_an_error(tmp_path):
    f = tmp_path / "s.dat"
    f.write_bytes(b"1 2\n3\x004\n")
    with pytest.raises(InputError, match=r"s.dat:2: NUL byte"):
        read_sets(f)


@pytest.mark.parametrize("line, message", [
    ('{"id": 1, "text": "a"', r"x.jsonl:2: not valid JSON"),
    ('[1, 2]', r"x.jsonl:2: expected a JSON object"),
    ('{"text": "a"}', r"x.jsonl:2: no 'id' field"),
    ('{"id": 2}', r"x.jsonl:2: no 'text' field"),
    ('{"id": 2, "text": 5}', r"x.jsonl:2: field 'text' must be a string"),
    ('{"id": "a", "text": "b"}', r"x.jsonl:2: id 'a' already used on line 1"),
    ('{"id": "", "text": "b"}', r"x.jsonl:2: the id is empty; every record needs one"),
])
def test_malformed_json_lines_say_where(tmp_path, line, message):
    f = tmp_path / "x.jsonl"
    f.write_text('{"id": "a", "text": "first"}\n' + line + "\n")
    with pytest.raises(InputError, match=message):
        read_jsonl(f)


def test_jsonl_fields_can_be_renamed(tmp_path):
    f = tmp_path / "x.jsonl"
    f.write_text('{"url": "u1", "body": "first"}\n\n{"url": "u2", "body": "second"}\n')
    c = read_jsonl(f, id_field="url", text_field="body")
    assert c.ids == ["u1", "u2"] and c.texts == ["first", "second"]


def test_directory_options_do_not_apply_to_line_input(tmp_path):
    f = tmp_path / "p.txt"
    f.write_text("a\n")
    with pytest.raises(UsageError, match="include="):
        read_corpus(f, "lines", include=["*.go"])
    with pytest.raises(UsageError, match="stdin"):
        read_corpus("-", "directory")
    with pytest.raises(UsageError, match="hidden="):
        read_corpus(f, "lines", hidden=True)
    with pytest.raises(UsageError, match="reads one file; got 2 paths"):
        read_corpus([f, f], "sets")


# --- several paths, hidden files, ignore files, filters that say what they left out

def test_a_single_file_is_a_corpus_of_one_with_the_path_as_given(tree, monkeypatch):
    monkeypatch.chdir(tree)
    c = read_directory("a/one.txt")
    assert c.ids == ["a/one.txt"] and c.texts == ["hello world"]


def test_several_directories_and_files_are_one_corpus_in_the_order_given(tmp_path, monkeypatch):
    for d, names in {"json": ["a.txt", "b.txt"], "email": ["c.txt"], "src": ["x.py", "y.py"]}.items():
        (tmp_path / d).mkdir()
        for n in names:
            (tmp_path / d / n).write_text(f"{d} {n}")
    monkeypatch.chdir(tmp_path)
    c = read_corpus(["json/", "email", "src/y.py", "src/x.py"])
    assert c.ids == ["a.txt", "b.txt", "c.txt", "src/y.py", "src/x.py"]
    assert c.texts[2] == "email c.txt"


def test_ids_two_paths_would_share_are_prefixed_by_their_path(tmp_path, monkeypatch):
    for d in ("json", "email"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "a.txt").write_text(d)
        (tmp_path / d / f"{d}-only.txt").write_text(d)
    monkeypatch.chdir(tmp_path)
    c = read_directory(["json/", "email/"])
    assert c.ids == ["json/a.txt", "json-only.txt", "email/a.txt", "email-only.txt"]
    assert read_directory(["json/", "email/"]).ids == c.ids  # deterministic


def test_a_prefixed_id_that_another_path_also_gives_is_prefixed_too(tmp_path, monkeypatch):
    # a gives b/x.txt, b and c both give x.txt. Prefixing b's x.txt to b/x.txt used to take a's id,
    # so a's file kept "b/x.txt" (the path of b's file) and b's own file became "b/x.txt#2".
    for f in ("a/b/x.txt", "b/x.txt", "c/x.txt"):
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text(f)
    monkeypatch.chdir(tmp_path)
    c = read_directory(["a", "b", "c"])
    assert c.ids == ["a/b/x.txt", "b/x.txt", "c/x.txt"]
    assert [c.texts[k] for k in range(3)] == c.ids  # each id is the path of its own file


_NAMES = ("x.txt", "a/x.txt", "b/x.txt", "c/x.txt", "y/x.txt", "c/b/x.txt")


@settings(max_examples=80, deadline=None)
@given(files=st.sets(st.tuples(st.sampled_from("abc"), st.sampled_from(_NAMES)), min_size=2, max_size=10),
       roots=st.permutations("abc"), by_name=st.sampled_from(((), ("a/x.txt",), ("c/b/x.txt",))))
def test_ids_of_several_paths_are_unique_and_a_prefixed_id_is_its_file(tmp_path_factory, files, roots, by_name):
    """Small trees whose files' relative paths collide across roots (and with prefixed ids): every
    document has its own id, which is its path below its root or its path as reached from the
    working directory; no '#n' is needed."""
    top = tmp_path_factory.mktemp("roots")
    for root, name in files:
        (top / root / name).parent.mkdir(parents=True, exist_ok=True)
        (top / root / name).write_text(f"{root}/{name}")
    roots = [r for r in (*roots, *by_name) if (top / r).exists()]
    cwd = os.getcwd()
    os.chdir(top)
    try:
        c = read_directory(roots)
    finally:
        os.chdir(cwd)
    assert len(set(c.ids)) == len(c.ids)
    assert not any("#" in i for i in c.ids)
    for k, i in enumerate(c.ids):
        text = c.texts[k]  # each file holds its path from top
        assert i == text or text.endswith("/" + i), (i, text)


def test_named_from_above_gives_the_parent_and_an_include_only_where_they_read_the_same_files(tmp_path):
    for d in ("b", ".hidden", "b*"):
        (tmp_path / d).mkdir()
    (tmp_path / "f.txt").write_text("x")
    assert corpus.named_from_above(tmp_path / "b") == f"{tmp_path} --include 'b/**'"
    assert corpus.named_from_above(f"{tmp_path}/b/") == f"{tmp_path} --include 'b/**'"
    assert corpus.named_from_above(tmp_path / "missing") is None
    assert [corpus.named_from_above(tmp_path / n) for n in (".hidden", "b*", "f.txt")] == [None, None, None]


def test_a_file_reached_through_two_paths_is_read_once(tmp_path, monkeypatch):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1")
    monkeypatch.chdir(tmp_path)
    c = read_directory(["src", "src/a.py"])
    assert c.ids == ["a.py"] and c.left_out == {"named twice": 1}


@pytest.fixture
def repo(tmp_path):
    """A project with a .git folder, a virtualenv, caches and nested ignore files."""
    for rel, text in {
        ".git/HEAD": "ref: refs/heads/main", ".git/config": "[core]",
        ".venv/lib/site.py": "import os", ".hidden.txt": "secret",
        ".gitignore": "build/\n*.log\n!keep.log\n", "build/out.txt": "built",
        "run.log": "log", "keep.log": "kept", "src/main.py": "print(1)",
        "src/.ignore": "generated_*.py\n", "src/generated_x.py": "gen", "src/sub/generated_y.py": "gen",
        "docs/.gitignore": "/draft.md\n", "docs/draft.md": "draft", "docs/sub/draft.md": "not the top one",
    }.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def test_hidden_files_and_ignored_paths_are_left_out_by_default(repo):
    c = read_directory(repo)
    assert c.ids == ["docs/sub/draft.md", "keep.log", "src/main.py"]
    assert c.left_out == {"hidden folder": 2, "hidden file": 4, "ignored folder": 1, "ignored file": 4}
    assert c.left_out_note() == ("left out 2 folders and 4 files hidden; --hidden reads them; "
                                 "1 folder and 4 files ignored (.gitignore, .ignore, .git); --no-ignore reads them")


def test_hidden_and_no_ignore_turn_each_rule_off(repo):
    assert read_directory(repo, hidden=True).ids == [
        ".gitignore", ".hidden.txt", ".venv/lib/site.py", "docs/.gitignore", "docs/sub/draft.md", "keep.log",
        "src/.ignore", "src/main.py"]
    every = read_directory(repo, hidden=True, ignore=False).ids
    assert ".git/HEAD" in every and "build/out.txt" in every and len(every) == 15
    assert len(read_directory(repo, ignore=False).ids) == 8


def test_ignore_files_above_the_directory_count_up_to_the_repository_top(repo):
    assert read_directory(repo / "src").ids == ["main.py"]
    assert read_directory(repo / "docs").ids == ["sub/draft.md"]
    (repo / ".gitignore").write_text("*.md\n")
    assert read_directory(repo / "docs").ids == []


@pytest.mark.parametrize("pattern, message", [
    ("[", "never closed"),
    ("[]", "never closed"),
    ("*.[ch", "never closed"),
    ("[z-a]", "range z-a is reversed"),
    ("[[:alfa:]]", "unknown character class"),
])
def test_a_malformed_glob_is_a_usage_error(tree, pattern, message):
    with pytest.raises(UsageError, match=re.escape(f"glob {pattern!r}: ") + ".*" + message):
        read_directory(tree, include=[pattern])
    with pytest.raises(UsageError, match=message):
        read_directory(tree, exclude=[pattern])


@pytest.mark.parametrize("path, pattern, expected", [
    ("a1.txt", "a[[:digit:]].txt", True),
    ("ab.txt", "a[[:digit:]].txt", False),
    ("X.txt", "[[:upper:]].txt", True),
    ("[x", "[[]x", True),
    ("]", "[]]", True),
    ("a/b", "a[!x]b", False),
    ("a-b", "a[!x]b", True),
    ("a-b", "a[x-]b", True),
])
def test_posix_classes_and_brackets_in_globs(path, pattern, expected):
    assert matches(path, [pattern]) is expected


def test_the_empty_corpus_message_counts_files_and_what_each_filter_left_out(repo):
    from allpairs.pipeline import join
    from allpairs.errors import EmptyCorpusError

    with pytest.raises(EmptyCorpusError) as e:
        join(read_directory(repo, include=["*.rs"]), 0.5)
    msg = str(e.value)
    assert "3 files found" in msg and "3 left out by --include" in msg and "4 files hidden" in msg, msg
    with pytest.raises(EmptyCorpusError, match="1 smaller than --min-bytes; .*skipped 1 binary"):
        join(read_directory(repo / "src", min_bytes=10**8, include=["*.py", "*.bin"]).__class__(
            ids=[], texts=[], kind="directory", found=1, dropped=1, skipped=[("x.bin", "binary")]), 0.5)


def test_a_directory_named_is_read_even_where_a_parent_ignore_file_ignores_it(repo):
    (repo / "build" / "x.log").write_text("log")
    assert read_directory(repo / "build").ids == ["out.txt"]  # build/ is ignored above it; *.log still applies
    assert read_directory(repo).left_out["ignored folder"] == 1


@pytest.mark.parametrize("name", ["a.sets", "./a.sets", "d//a.sets", "d/./a.sets", "d/", "d/a.sets/", "", ".",
                                  "/abs/a.sets", "//x", "missing", "a.sets/child", "d/../a.sets", "nul\0name"])
def test_a_file_name_is_read_as_pathlib_reads_it_without_pathlib(tmp_path, monkeypatch, name):
    from allpairs.corpus.linefile import _as_pathlib_reads, _mode

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.sets").write_text("a b\n")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.sets").write_text("a b\n")
    p = Path(name)
    assert os.fspath(_as_pathlib_reads(name)) == str(p)
    assert (_mode(_as_pathlib_reads(name)) is not None, _mode(_as_pathlib_reads(name)) is not None and
            os.path.isdir(_as_pathlib_reads(name))) == (p.exists(), p.is_dir())


@pytest.mark.parametrize("kind, body, where", [
    ("csv", "id,text\na,red shirt\n,red shirt\n", "t.csv:3"),
    ("tsv", "id\ttext\na\tred shirt\n\tred shirt\n", "t.tsv:3"),
])
def test_an_empty_id_in_a_table_is_refused_not_written_as_a_blank_name(tmp_path, kind, body, where):
    """A table's empty cell is its null: the pair it made would name no row (it printed 'a', '' and 1.0)."""
    f = tmp_path / f"t.{kind}"
    f.write_text(body)
    with pytest.raises(InputError, match=f"{where}: the id is empty; every record needs one"):
        read_table(f, kind)


def test_an_empty_id_in_a_parquet_table_is_refused_as_a_null_one_is(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": ["a", ""], "text": ["red shirt", "red shirt"]}), tmp_path / "e.parquet")
    with pytest.raises(InputError, match=r"e.parquet: row 2: the id is empty"):
        read_table(tmp_path / "e.parquet", "parquet")
