"""Memory bounded whatever the size of the answer (issue 30): counting, spilling, clusters, the API's stop.

Every bounded path is compared with the in-memory result it stands for: the
same count, the same bytes in every format, the same clusters, the same top
pairs; the budgets here are the smallest the library takes, so that a few
dozen pairs already make several blocks and runs.
"""
from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import allpairs
from allpairs.errors import AllPairsError
from allpairs.exact import prefix
from allpairs.output import spill
from allpairs.pairs import PairWriter
from allpairs.pairs.clusters import find_clusters
from allpairs.pairs.rows import write_pairs_table
from allpairs.pairs.streamed import CountedPairs, SpilledPairs

from strategies import corpora

REPO = Path(__file__).resolve().parents[1]

#: The smallest budget: blocks of MIN_MEMORY // SET_PAIR_BYTES = 1,365 pairs of distinct sets.
TINY = spill.MIN_MEMORY


@pytest.fixture
def tiny_blocks(monkeypatch):
    """Blocks of 3 pairs of distinct sets, tasks of a set or two, runs merged 3 records of each at a time and
    into one past 3: many of each."""
    monkeypatch.setattr(spill, "SET_PAIR_BYTES", TINY // 3)
    monkeypatch.setattr(spill, "MIN_READ", 3)
    monkeypatch.setattr(spill, "FAN_IN", 3)
    monkeypatch.setattr(prefix, "MIN_TASK_COST", 1)
    monkeypatch.setattr(prefix, "PARALLEL_MIN_COST", 0)


def _written(res, fmt: str) -> bytes:
    out = io.BytesIO()
    if fmt == "parquet":
        write_pairs_table(res.pairs, res.ids, out, res.measure, columns=res.columns)
    else:
        PairWriter(res.ids, fmt, columns=res.columns, measure=res.measure,
                   estimated=res.pairs.estimated).write(res.pairs, out)
    return out.getvalue()


MEASURES = ["jaccard", "cosine", "dice", "containment", "overlap"]


@st.composite
def joins(draw):
    sets = draw(corpora(max_docs=30, max_size=6))
    measure = draw(st.sampled_from(MEASURES))
    t = draw(st.sampled_from([1, 2]) if measure == "overlap" else st.sampled_from(["1/5", "1/3", "1/2", "2/3"]))
    against = draw(st.booleans()) and measure != "overlap" and len(sets) >= 2
    return sets, measure, t, against


def _join(case, **kw):
    sets, measure, t, against = case
    if against:
        half = len(sets) // 2
        return allpairs.join(sets[:half], t, measure=measure, against=sets[half:], **kw)
    return allpairs.join(sets, t, measure=measure, **kw)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(joins(), st.sampled_from([1, 2]))
def test_spilled_pairs_are_the_in_memory_pairs_in_every_format(tiny_blocks, tmp_path, case, jobs):
    try:
        want = _join(case, jobs=1)
    except allpairs.EmptyCorpusError:
        return
    got = _join(case, jobs=jobs, memory=TINY, spill=tmp_path)
    assert len(got.pairs) == len(want.pairs)
    if want.stats.set_pairs > 6:  # more than two blocks: the pairs went to disk
        assert isinstance(got.pairs, SpilledPairs) and got.pairs.runs.bytes > 0
    for fmt in ("tsv", "csv", "jsonl", "parquet"):
        assert _written(got, fmt) == _written(want, fmt), fmt
    assert list(got.pairs) == list(want.pairs)
    if isinstance(got.pairs, SpilledPairs):
        got.pairs.close()
    assert os.listdir(tmp_path) == []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(joins())
def test_a_count_keeps_no_pairs_and_is_the_number_of_pairs(tiny_blocks, case):
    try:
        want = _join(case)
    except allpairs.EmptyCorpusError:
        return
    got = _join(case, count=True, memory=TINY)
    assert isinstance(got.pairs, CountedPairs)
    assert (len(got.pairs), got.pairs.num_set_pairs) == (len(want.pairs), want.pairs.num_set_pairs)
    assert got.stats.pairs == want.stats.pairs


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(corpora(max_docs=30, max_size=6), st.sampled_from(["1/5", "1/3", "1/2"]))
def test_clusters_from_pairs_streamed_past_are_the_clusters_of_all_the_pairs(tiny_blocks, sets, t):
    try:
        want = allpairs.join(sets, t, clusters=True)
    except allpairs.EmptyCorpusError:
        return
    got = allpairs.join(sets, t, clusters=True, count=True, memory=TINY)
    assert [list(c) for c in got.clusters] == [list(c) for c in want.clusters]
    assert [list(c) for c in find_clusters(want.pairs)] == [list(c) for c in want.clusters]


def test_the_api_stops_in_one_line_before_the_pairs_exceed_its_memory():
    docs = [f"title number {i} of the catalogue" for i in range(200)]  # 19,900 pairs
    with pytest.raises(AllPairsError) as e:
        allpairs.join(docs, 0.5, shingle="word:1", memory=TINY)
    message = str(e.value)
    assert "\n" not in message
    assert "reached" in message and "count=True" in message and "chunks()" in message and "-o" in message


def test_pairs_read_in_chunks_from_a_spill_are_never_all_held(tmp_path):
    docs = [f"title number {i} of the catalogue" for i in range(200)]
    res = allpairs.join(docs, 0.5, shingle="word:1", memory=TINY, spill=tmp_path)
    assert isinstance(res.pairs, SpilledPairs) and len(res.pairs) == 19_900
    sizes = [len(c) for c in res.pairs.chunks(1000)]
    assert sum(sizes) == 19_900 and max(sizes) < 2000
    res.pairs.close()
    assert os.listdir(tmp_path) == []


def test_progress_reports_the_pairs_found_so_far_during_the_join():
    seen = []
    docs = [f"title number {i} of the catalogue" for i in range(300)]
    allpairs.join(docs, 0.5, shingle="word:1", count=True,
                  progress=lambda stage, done, total, detail="": seen.append((stage, detail)))
    joined = [detail for stage, detail in seen if stage == "join"]
    assert joined and joined[-1] == "44,850 pairs of distinct sets"
    # A callback of three parameters still works.
    allpairs.join(docs, 0.5, shingle="word:1", count=True, progress=lambda stage, done, total: None)


def test_top_pairs_kept_a_block_at_a_time_are_the_top_pairs(tiny_blocks):
    docs = [f"c u{i}" for i in range(120)] + ["c u1", "c u7"]
    want = allpairs.join(docs, top=10, shingle="word:1", memory=1 << 30)
    got = allpairs.join(docs, top=10, shingle="word:1", memory=TINY)
    assert list(got.pairs) == list(want.pairs)


def _cli(tmp_path, *args, env=None):
    return subprocess.run([sys.executable, "-m", "allpairs", *args], cwd=REPO, capture_output=True,
                          env=dict(os.environ, **(env or {})), timeout=600)


@pytest.fixture(scope="module")
def titles(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("titles") / "titles.txt"
    path.write_text("".join(f"title number {i} of the catalogue\n" for i in range(1, 401)))
    return path


def test_a_join_written_past_its_memory_is_the_same_file_and_leaves_no_spill(tmp_path, titles):
    out = tmp_path / "pairs.tsv"
    base = ["join", "-q", "-t", "0.5", "-s", "word:1", "--lines", str(titles)]
    assert _cli(tmp_path, *base, "-o", str(tmp_path / "whole.tsv")).returncode == 0
    run = _cli(tmp_path, *base, "--memory", "64K", "-o", str(out))
    assert run.returncode == 0, run.stderr
    assert out.read_bytes() == (tmp_path / "whole.tsv").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pairs.tsv", "whole.tsv"]
    piped = _cli(tmp_path, *base, "--memory", "64K", env={"TMPDIR": str(tmp_path)})
    assert piped.stdout == out.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pairs.tsv", "whole.tsv"]


def test_a_memory_size_that_is_no_size_is_a_usage_error(tmp_path, titles):
    run = _cli(tmp_path, "join", "-t", "0.5", "--lines", str(titles), "--memory", "lots")
    assert run.returncode == 2
    assert run.stderr.decode().count("\n") == 1 and "--memory" in run.stderr.decode()


@pytest.mark.parametrize("method", ["exact", "lsh"])
def test_a_full_disk_while_spilling_is_one_line_exit_1_and_leaves_nothing(tmp_path, titles, method):
    # The spill's writes fail as on a full disk (ENOSPC) from the second on.
    code = ("import errno, os, sys; from allpairs.output import spill; calls = []\n"
            "def full(fd, data):\n"
            "    calls.append(1)\n"
            "    if len(calls) > 1: raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))\n"
            "    return os.write(fd, data)\n"
            "spill._write = full\n"
            "from allpairs.__main__ import main; sys.argv = ['allpairs'] + sys.argv[1:]; main()\n")
    out = tmp_path / "pairs.tsv"
    run = subprocess.run([sys.executable, "-c", code, "join", "-t", "0.5", "-s", "word:1", "--lines", str(titles),
                          "--method", method, "--memory", "64K", "-o", str(out)], cwd=REPO, capture_output=True,
                         timeout=600)
    lines = run.stderr.decode().splitlines()
    assert run.returncode == 1, lines
    assert len(lines) == 1 and lines[0].startswith(f"allpairs: error: no space left in {tmp_path} for the spilled pairs")
    assert "needed" in lines[0]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("method", ["exact", "lsh"])
def test_a_signal_while_spilling_leaves_no_temporary_file(tmp_path, method):
    corpus = tmp_path / "in" / "titles.txt"
    corpus.parent.mkdir()
    corpus.write_text("".join(f"title number {i} of the catalogue\n" for i in range(1, 3001)))
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "allpairs", "join", "-q", "-t", "0.5", "-s", "word:1", "--lines",
                             str(corpus), "--method", method, "--memory", "64K", "-o", str(out_dir / "pairs.tsv")],
                            cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # Wait for the first run to appear, then interrupt.
    for _ in range(6000):
        spills = [p for p in out_dir.iterdir() if p.name.startswith(".allpairs-spill.")]
        if spills and any(spills[0].iterdir()) or proc.poll() is not None:
            break
        time.sleep(0.01)
    assert proc.poll() is None, "the join ended before it spilled"
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    assert list(out_dir.iterdir()) == []


def test_top_pairs_hold_no_more_than_k_and_a_block_between_blocks(tiny_blocks, monkeypatch):
    # Two-token lines "c uI": every pair ties at 1/3, the shape that once held all 200 M pairs of 20,000 lines.
    from allpairs.exact import topk

    held = []
    best_of = topk._best_of
    monkeypatch.setattr(topk, "_best_of", lambda found, *a: held.append(len(best_of(found, *a).left)) or
                        best_of(found, *a))
    docs = [f"c u{i}" for i in range(200)]
    res = allpairs.join(docs, top=10, shingle="word:1", memory=TINY)
    assert [(p.left, p.right) for p in res.pairs] == [(0, i) for i in range(1, 11)]
    assert len(held) > 100 and max(held) <= 2 * 10


def test_neighbour_lists_keep_k_plus_one_entries_a_set_between_blocks(tiny_blocks, monkeypatch):
    from allpairs.exact import topk

    kept = []
    best = topk._best_entries
    monkeypatch.setattr(topk, "_best_entries", lambda *a: kept.append(np.bincount(best(*a)[0]).max()) or best(*a))
    docs = [f"c u{i}" for i in range(120)]
    want = allpairs.join(docs, neighbors=3, shingle="word:1", memory=1 << 30)
    got = allpairs.join(docs, neighbors=3, shingle="word:1", memory=TINY)
    assert list(got.pairs) == list(want.pairs)
    assert max(kept) <= 3 + 1


def test_a_small_input_whose_ranked_joins_go_low_runs_them_compiled(monkeypatch):
    # 2,000 two-token lines are a small input, but the last join of --top 10 pairs every two of them (2 M
    # pairs): judged at t = 1/2, where they pair none, its kernels ran as plain Python (minutes, not seconds).
    # The choice under test is auto mode's, whatever ALLPAIRS_KERNELS says for the run.
    from allpairs._kernels.jit import kernel_mode, use_kernels
    from allpairs.exact import topk

    modes = []
    blocks = topk.prefix_join_blocks

    def spy(*a, **kw):
        modes.append(kernel_mode())
        return blocks(*a, **kw)

    monkeypatch.setattr(topk, "prefix_join_blocks", spy)
    with use_kernels("auto"):
        allpairs.join([f"c u{i}" for i in range(400)], top=3, shingle="word:1")
    assert modes and set(modes) == {"compiled"}, modes


def test_kib_fields_of_proc_files(tmp_path):
    """The /proc fields the budget and the peak read: the first line's, a later one's, a missing one's, and
    one whose name is the tail of another's (``Available`` is not ``MemAvailable``)."""
    from allpairs.pipeline.stats import _kib_field

    f = tmp_path / "meminfo"
    f.write_bytes(b"MemTotal:       24683664 kB\nMemFree:  100 kB\nMemAvailable:   24115760 kB\n")
    assert _kib_field(str(f), "MemTotal") == 24683664 * 1024
    assert _kib_field(str(f), "MemAvailable") == 24115760 * 1024
    assert _kib_field(str(f), "Available") is None
    assert _kib_field(str(f), "SwapTotal") is None
    assert _kib_field(str(tmp_path / "missing"), "MemTotal") is None
