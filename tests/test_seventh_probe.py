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
