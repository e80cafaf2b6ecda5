"""Reading corpora: file choice by glob, skipped files with reasons, errors that say where."""
from pathlib import Path

import pytest

from allpairs.corpus import matches, read_corpus, read_directory, read_jsonl, read_lines, read_sets
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
    real = Path.read_bytes

    def read_bytes(self):
        if self.name == "one.txt":
            raise PermissionError(13, "Permission denied")
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    assert dict(read_directory(tree).skipped)["a/one.txt"] == "unreadable (Permission denied)"


def test_missing_path_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="no such file"):
        read_directory(tmp_path / "nope")
    with pytest.raises(UsageError, match="no such file"):
        read_lines(tmp_path / "nope.txt")


def test_file_given_as_directory_and_vice_versa_are_usage_errors(tree):
    with pytest.raises(UsageError, match="--lines"):
        read_directory(tree / "b.txt")
    with pytest.raises(UsageError, match="is a directory"):
        read_sets(tree)


def test_lines_and_sets(tmp_path):
    f = tmp_path / "p.txt"
    f.write_bytes(b"abc\r\nabd\n\nx y  y\n")
    c = read_lines(f)
    assert c.ids == ["1", "2", "3", "4"] and c.texts == ["abc", "abd", "", "x y  y"] and c.shown == c.texts
    s = read_sets(f)
    assert s.sets == [["abc"], ["abd"], [], ["x", "y", "y"]]


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
    with pytest.raises(UsageError, match="--include"):
        read_corpus(f, "lines", include=["*.go"])
    with pytest.raises(UsageError, match="stdin"):
        read_corpus("-", "directory")
