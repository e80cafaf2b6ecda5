"""allpairs sets: shingle sets written as a --sets file join to the same pairs; the cold-compile line."""
from __future__ import annotations

from allpairs.shingles import hash_set_pieces
import io

import numba
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import allpairs
from allpairs._kernels import jit as _numba
from allpairs.cli import _say_compiled, app
from allpairs.corpus import Corpus, read_directory, read_sets
from allpairs.pipeline.sets_file import write_sets
from allpairs.shingles import format_sets, hash_sets
from conftest import REPO_ROOT

TINY = REPO_ROOT / "datasets" / "tiny" / "corpus"
SIX = ["bytes", "strings", "math/rand", "math/rand/v2", "go/types", "cmd/compile/internal/types2"]
TREE_OPTIONS = ["--exclude", "*_test.go", "--exclude", "testdata/**", "--min-bytes", "2048", "-s", "code:5"]


def cli(*args, input=None):
    return CliRunner().invoke(app, [str(a) for a in args], input=input, prog_name="allpairs")


def index_pairs(result) -> list[tuple[int, int, str]]:
    return [(p.left, p.right, str(p.similarity)) for p in result.pairs.to_list()]


words = st.lists(st.sampled_from(["a", "b", "c", "dé", "e", "f"]), max_size=8).map(" ".join)


@settings(max_examples=40, deadline=None)
@given(st.lists(words, min_size=1, max_size=8), st.sampled_from(["word:1", "word:2", "char:2"]))
def test_a_sets_file_joins_to_the_pairs_of_its_documents(tmp_path_factory, texts, spec):
    corpus = Corpus(ids=[f"d{i}" for i in range(len(texts))], texts=texts)
    out, ids = io.BytesIO(), io.BytesIO()
    stats = write_sets(corpus, out, shingle=spec, ids=ids)
    path = tmp_path_factory.mktemp("sets") / "c.sets"
    path.write_bytes(out.getvalue())
    names = ids.getvalue().decode().splitlines()
    # A line a document with a shingle; the ids file names each line's document; the others are skipped.
    with_shingle = [f"d{i}" for i, t in enumerate(texts) if t.strip()]
    assert names == with_shingle and stats.documents == len(names) and stats.bytes == len(out.getvalue())
    assert out.getvalue().count(b"\n") == len(names)
    assert [d for d, why in stats.skipped] == [d for d in corpus.ids if d not in names]
    try:
        direct = allpairs.join(corpus, "1/2", shingle=spec)
    except allpairs.errors.EmptyCorpusError:
        return
    via = allpairs.join(read_sets(path, hash_pieces=hash_set_pieces), "1/2")
    assert [(names[p.left], names[p.right], p.similarity) for p in via.pairs] == \
        [(direct.ids[p.left], direct.ids[p.right], p.similarity) for p in direct.pairs]


def test_keys_are_written_distinct_ascending_in_hex_one_line_a_document():
    indptr, keys = hash_sets([["b", "a", "b"], [], ["c"]])
    text = b"".join(format_sets(indptr, keys)).decode()
    first = sorted({f"{k:016x}" for k in keys[:3].tolist()})
    assert text == " ".join(first) + "\n\n" + f"{int(keys[3]):016x}\n"


def test_sets_command_writes_a_file_that_joins_like_the_tree(tmp_path):
    out, ids = tmp_path / "tiny.sets", tmp_path / "tiny.ids"
    r = cli("sets", "-s", "word:1", TINY, "-o", out, "--ids", ids)
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "" and "keys (word:1)" in r.stderr
    # pixel.png (binary) and empty.txt (no shingle) are skipped alike: no line, named on stderr.
    assert "skipped 2 documents (binary: 1, no shingle: 1): pixel.png (binary), empty.txt (no shingle)" in r.stderr
    names = ids.read_text().splitlines()
    assert names == ["cat.txt", "fox-copy.txt", "fox-jumped.txt", "fox-short.txt", "fox-shouted.txt", "fox.txt"]
    assert len(out.read_text().splitlines()) == len(names)
    direct = allpairs.join(read_directory(TINY), "0.5", shingle="word:1")
    via_file = cli("join", "--sets", "-t", "0.5", "--no-header", out)
    expected = [f"{direct.ids[p.left]}\t{direct.ids[p.right]}" for p in direct.pairs.to_list()]
    rows = [line.split("\t") for line in via_file.stdout.splitlines()]
    assert [f"{names[int(a) - 1]}\t{names[int(b) - 1]}" for a, b, _ in rows] == expected


def test_sets_command_refuses_a_shingle_for_sets_and_reports_bad_input(tmp_path):
    f = tmp_path / "in.sets"
    f.write_text("a b\n")
    r = cli("sets", "--sets", "-s", "word:2", f)
    assert r.exit_code == 2 and "drop --shingle" in r.stderr
    r = cli("sets", "--sets", "/dev/zero")
    assert r.exit_code == 1 and "NUL byte" in r.stderr and "Traceback" not in r.output


def test_go_tree_sets_file_gives_the_59_reference_pairs(go_reference_src, tmp_path):
    include = [arg for d in SIX for arg in ("--include", f"/{d}/*.go")]
    out = tmp_path / "six.sets"
    assert cli("sets", *include, *TREE_OPTIONS, go_reference_src, "-o", out).exit_code == 0
    r = cli("join", "--sets", "-t", "0.5", "-q", "--no-header", out)
    assert r.exit_code == 0 and len(r.stdout.splitlines()) == 59


def test_compiling_a_kernel_is_counted_and_loading_none_is_silent(capsys, monkeypatch):
    clock, watching = _numba.compile_clock()
    with watching:
        numba.njit(lambda x: x + 1)(41)  # a new function: compiled, not in any cache
    assert clock.kernels == 1 and clock.seconds > 0
    monkeypatch.setattr("sys.argv", ["allpairs", "join", "-t", "0.5", "x"])
    _say_compiled(clock)
    line = capsys.readouterr().err
    assert line.startswith("allpairs: compiled 1 kernel once in ") and line.count("\n") == 1
    monkeypatch.setattr("sys.argv", ["allpairs", "join", "-q", "-t", "0.5", "x"])
    _say_compiled(clock)
    assert capsys.readouterr().err == ""
    _say_compiled(_numba.CompileClock())
    assert capsys.readouterr().err == ""
