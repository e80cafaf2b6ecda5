"""The reference experiment (REFERENCE.md §1) on the Go 1.27.3 tree: code:5 shingles, exact join.

The corpus: every *.go under src/, vendor included, no *_test.go, nothing under
testdata/, at least 2048 bytes — which the command line expresses with
--include/--exclude/--min-bytes, as a user would.
"""
from fractions import Fraction

import pytest
from typer.testing import CliRunner

import allpairs
from allpairs.cli import app

SIX = ["bytes", "strings", "math/rand", "math/rand/v2", "go/types", "cmd/compile/internal/types2"]
TREE_OPTIONS = ["--exclude", "*_test.go", "--exclude", "testdata/**", "--min-bytes", "2048", "-s", "code:5"]


def cli(*args):
    r = CliRunner().invoke(app, [str(a) for a in args], prog_name="allpairs")
    assert r.exit_code == 0, r.stderr
    return r


def test_six_directories_have_59_pairs_at_half(go_reference_src):
    include = [arg for d in SIX for arg in ("--include", f"/{d}/*.go")]
    r = cli("join", "-t", "0.5", "--no-header", *include, *TREE_OPTIONS, go_reference_src)
    assert "139 documents" in r.stderr
    assert len(r.stdout.splitlines()) == 59
    assert "bytes/reader.go\tstrings/reader.go\t0.687407" in r.stdout.splitlines()


def test_gofmt_and_go_format_internal_share_580_of_584(go_reference_src):
    files = ["cmd/gofmt/internal.go", "go/format/internal.go", "bytes/reader.go", "strings/reader.go"]
    texts = [(go_reference_src / f).read_text() for f in files]
    corpus = allpairs.Corpus(ids=files, texts=texts, languages=["go"] * 4, kind="directory")
    pairs = allpairs.join(corpus, 0.5, shingle="code:5").pairs.to_list()
    assert [(p.left, p.right) for p in pairs] == [(0, 1), (2, 3)]
    gofmt, reader = pairs
    assert (gofmt.overlap, gofmt.left_size + gofmt.right_size - gofmt.overlap) == (580, 584)
    assert (reader.left_size, reader.right_size, reader.overlap) == (580, 559, 464)
    assert reader.similarity == Fraction(464, 675)


def test_whole_tree_pair_counts(go_reference_src):
    r = cli("join", "-t", "0.5", "--no-header", "--include", "*.go", *TREE_OPTIONS, go_reference_src)
    assert "3,104 documents, 38 skipped" in r.stderr and "no shingle: 38" in r.stderr
    assert len(r.stdout.splitlines()) == 1590
    sims = [Fraction(line.split("\t")[2]) for line in r.stdout.splitlines()]
    assert sum(s >= Fraction(7, 10) for s in sims) == 975
    assert sum(s >= Fraction(9, 10) for s in sims) == 455
    assert sum(s == 1 for s in sims) == 126
