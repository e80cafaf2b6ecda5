"""``index query`` written a block of queries at a time: the bytes of the whole answer in every format and
with every option, blocks within their budget, and no partial output on an error.

The whole answer (:meth:`SearchIndex.query`, written by :meth:`Matches.write` as one table) is the oracle;
the budgets here make blocks of one to a few matches, so that a few dozen matches make many blocks.
"""
from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from allpairs import Corpus, EmptyCorpusError, UsageError
from allpairs.cli import app
from allpairs.index import SearchIndex, blocks as index_blocks, matches as index_matches
from allpairs.index.matches import write_matches
from allpairs.measures import JOIN_MEASURES
from allpairs.output import tables
from allpairs.output.spill import MIN_MEMORY
from strategies import corpus_and_threshold

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

REPO = Path(__file__).resolve().parents[1]
FORMATS = ("tsv", "csv", "jsonl", "parquet")
FIELDS = ("query", "indexed", "overlap", "query_size", "indexed_size")


def whole(matches, fmt: str, header: bool = True) -> bytes:
    out = io.BytesIO()
    matches.write(out, fmt, header=header)
    return out.getvalue()


def streamed(blocks, fmt: str, header: bool = True) -> bytes:
    out = io.BytesIO()
    write_matches(out, blocks, fmt, header=header)
    return out.getvalue()


@settings(max_examples=60, deadline=None)
@given(corpus_and_threshold(), st.integers(0, 30), st.sampled_from([None, 1, 2, 5]), st.sampled_from([1, 2, 3, 7]),
       st.sampled_from([1, 2, 5]), st.sampled_from([1, 2]), st.integers(0, 4), st.booleans(),
       st.sampled_from(JOIN_MEASURES))
def test_matches_written_a_block_at_a_time_are_the_bytes_of_the_whole_answer(case, cut, top, rows, write_rows, jobs,
                                                                              copies, header, measure):
    """Blocks of ``rows`` matches (whole queries), written ``write_rows`` at a time, answered on ``jobs``
    threads of 2 queries each: the same matches in the same order, and the same bytes in every format, as the
    answer held whole; with ``top``, and with documents added to sets indexed before them."""
    sets, t = case
    t = t.numerator % 4 + 1 if measure == "overlap" else t
    indexed, queries = sets[:cut], [list(s) for s in sets[cut:]] + [list(s) + [1000] for s in sets[:3]]
    try:
        index = SearchIndex.build(indexed, t, measure=measure)
    except EmptyCorpusError:
        return
    if copies:  # documents identical to indexed sets, waiting to be merged into their sets
        index.add(Corpus(ids=[f"c{k}" for k in range(copies)], sets=[[str(x) for x in indexed[k % len(indexed)]]
                                                                    for k in range(copies)], kind="sets"))
    if top is not None and measure not in ("jaccard", "cosine", "dice"):
        top = None
    want = index.query(queries, t, top=top)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(index_blocks, "MATCH_BYTES", MIN_MEMORY // rows)
        mp.setattr(index_blocks, "PARALLEL_QUERIES", 2)
        mp.setattr(index_matches, "WRITE_ROWS", write_rows)
        blocks = list(index.query_blocks(queries, t, top=top, jobs=jobs, memory=MIN_MEMORY))
        assert index.count(queries, t, top=top, jobs=jobs, memory=MIN_MEMORY) == len(want)
        for fmt in FORMATS:
            assert streamed(iter(blocks), fmt, header) == whole(want, fmt, header), fmt
    assert blocks, "no block: the writer would write no header"
    for f in FIELDS:
        assert np.concatenate([getattr(b, f) for b in blocks]).tolist() == getattr(want, f).tolist(), f
    for b in blocks:  # within the budget, or one query alone over it (its matches listed whole)
        assert len(b) <= rows or len(set(b.query.tolist())) == 1, b.query.tolist()
    if len(want) > rows and len(set(want.query.tolist())) > 1:
        assert len(blocks) > 1


def test_a_query_matching_more_than_a_block_holds_is_a_block_of_its_own(monkeypatch):
    # 40 identical documents, one set: each query stands for 40 matches, past the 16 a block holds.
    monkeypatch.setattr(index_blocks, "MATCH_BYTES", MIN_MEMORY // 16)
    index = SearchIndex.build([["a", "b", "c"]] * 40 + [["a", "b", "x"]], 0.5)
    queries = [["a", "b", "c"], ["a", "b"], ["q"], ["a", "b", "c"]]
    blocks = list(index.query_blocks(queries, memory=MIN_MEMORY))
    assert [sorted(set(b.query.tolist())) for b in blocks] == [[0], [1], [3]]
    assert [len(b) for b in blocks] == [41, 41, 41]


def test_a_query_without_matches_is_one_empty_block_and_the_header():
    index = SearchIndex.build([["a", "b"]], 0.5)
    blocks = list(index.query_blocks([["x"], ["y"]], memory=MIN_MEMORY))
    assert [len(b) for b in blocks] == [0]
    for fmt in FORMATS:
        assert streamed(iter(blocks), fmt) == whole(index.query([["x"], ["y"]]), fmt), fmt
    assert list(SearchIndex.build([["a", "b"]], 0.5).query_blocks([])) and \
        streamed(index.query_blocks([]), "tsv") == b"query\tindexed\tsimilarity\n"


def test_a_memory_that_is_no_size_is_refused_before_the_queries_are_read():
    index = SearchIndex.build([["a", "b"]], 0.5)
    with pytest.raises(UsageError, match="lots"):
        index.query_blocks(iter_never(), memory="lots")


def iter_never():
    raise AssertionError("the queries were read before the memory was checked")
    yield  # pragma: no cover


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=1, max_size=8), st.integers(1, 6))
def test_parquet_written_from_slices_is_the_file_of_the_whole_table(sizes, group):
    """Slices of any sizes, regrouped into row groups of ``group`` rows: the bytes pyarrow writes for the
    whole table in row groups of that size (pyarrow's own ``row_group_size``)."""
    n = sum(sizes)
    ids = [f"d{i % 4}" for i in range(n)]
    cols = [tables.Column("id", ids), tables.Column("similarity", [f"0.{i:06d}" for i in range(n)], "number"),
            tables.Column("overlap", list(range(n)), "int")]
    cuts = np.cumsum([0, *sizes]).tolist()
    slices = [[tables.Column(c.name, c.values[a:b], c.kind) for c in cols] for a, b in zip(cuts, cuts[1:])]
    out = io.BytesIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tables, "ROW_GROUP", group)
        assert tables.write_parquet_slices(out, iter(slices)) == n
    want = pa.BufferOutputStream()
    pq.write_table(pa.table({"id": pa.array(ids, pa.string()),
                             "similarity": pa.array([float(f"0.{i:06d}") for i in range(n)], pa.float64()),
                             "overlap": pa.array(np.arange(n, dtype=np.int64))}), want,
                   row_group_size=group)
    assert out.getvalue() == want.getvalue().to_pybytes()


# ---- the command line -----------------------------------------------------------------------------------

def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args], prog_name="allpairs")


@pytest.fixture
def records(tmp_path):
    """JSON Lines with integer ids (typed in JSON Lines and Parquet) and a carried field of every JSON type."""
    rows = []
    for i in range(30):
        title = "red apple pie" if i % 3 else "blue car sale"
        rows.append({"id": i, "title": f"{title} {'now' if i % 4 else ''}".strip(),
                     "v": [1.5, None, "é\tx", [i], {"k": i}, True][i % 6]})
    f = tmp_path / "r.jsonl"
    f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    idx = tmp_path / "r.idx"
    r = run("index", "build", "--jsonl", f, "-t", "0.3", "--text-col", "title", "--keep-col", "v", "-s", "word:1",
            "-o", idx, "-q")
    assert r.exit_code == 0, r.output
    return f, idx


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("extra", [[], ["--top", "3"], ["-t", "0.6", "--no-header"]])
def test_the_command_line_writes_the_same_file_within_a_tiny_memory(records, tmp_path, monkeypatch, fmt, extra):
    f, idx = records
    if fmt in ("jsonl", "parquet") and "--no-header" in extra:
        extra = extra[:2]
    query = ["index", "query", idx, "--jsonl", f, "--text-col", "title", "--keep-col", "v", "-q", "-f", fmt, *extra]
    r = run(*query, "--memory", "1T", "-o", tmp_path / "whole")
    assert r.exit_code == 0, r.output
    expected = (tmp_path / "whole").read_bytes()
    assert expected.count(b"\n") > 50 or fmt == "parquet"
    monkeypatch.setattr(index_blocks, "MATCH_BYTES", MIN_MEMORY // 5)
    monkeypatch.setattr(index_matches, "WRITE_ROWS", 4)
    blocks = []
    monkeypatch.setattr(index_matches, "write_table", lambda *a, **k: blocks.append(1) or tables.write_table(*a, **k))
    r = run(*query, "--memory", "64K", "-o", tmp_path / "bounded")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "bounded").read_bytes() == expected
    assert fmt == "parquet" or len(blocks) > 20
    if fmt != "parquet":
        assert run(*query, "--memory", "64K").stdout_bytes == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bounded", "r.idx", "r.jsonl", "whole"]


def test_the_count_takes_the_memory_and_a_bad_one_is_a_usage_error(records):
    f, idx = records
    query = ["index", "query", idx, "--jsonl", f, "--text-col", "title", "-q"]
    lines = run(*query).stdout.count("\n") - 1
    assert run(*query, "--count", "--memory", "64K").stdout == f"{lines}\n"
    r = run(*query, "--memory", "lots")
    assert r.exit_code == 2 and "--memory" in r.stderr


def test_a_write_that_fails_half_way_through_the_blocks_keeps_the_old_file(tmp_path):
    # A file-size limit stands in for a full disk: 300 identical lines, 90,000 matches, about 1.6 MB of TSV
    # written 512 matches a block; the limit stops it after a hundred blocks or so.
    import resource

    f = tmp_path / "same.sets"
    f.write_text("a b c\n" * 300)
    idx = tmp_path / "same.idx"
    assert run("index", "build", "--sets", f, "-t", "0.5", "-o", idx, "-q").exit_code == 0
    out = tmp_path / "out" / "matches.tsv"
    out.parent.mkdir()
    out.write_text("old\n")
    limit = 1 << 18
    r = subprocess.run([sys.executable, "-m", "allpairs", "index", "query", str(idx), "--sets", str(f), "-q",
                        "--memory", "64K", "-o", str(out)], capture_output=True, timeout=300, cwd=REPO,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)))
    lines = r.stderr.decode().splitlines()
    assert r.returncode == 1, lines
    assert lines == [f"allpairs: error: cannot write {out}: File too large"]
    assert out.read_text() == "old\n" and [p.name for p in out.parent.iterdir()] == ["matches.tsv"]
