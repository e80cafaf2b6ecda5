"""Progress on the one bar for every stage that can take more than a second (issue 33 item 4): the LSH
path's bucket join, an index's save, clusters written; silenced by -q."""
from __future__ import annotations

import pytest
from typer.testing import CliRunner

from allpairs.cli import app


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args], prog_name="allpairs")


@pytest.fixture
def told(monkeypatch):
    """(stage, done, total, detail) of every call of the CLI's progress bar (as if stderr were a terminal and
    a second had gone)."""
    from allpairs.cli import _app

    seen: list[tuple] = []
    monkeypatch.setattr(_app.Messages, "is_terminal", property(lambda self: True))
    monkeypatch.setattr(_app.Bar, "__call__", lambda self, stage, done, total, detail="":
                        seen.append((stage, done, total, detail)) if self.enabled else None)
    return seen


@pytest.fixture
def titles(tmp_path):
    path = tmp_path / "titles.txt"
    path.write_text("".join(f"title number {i} of the catalogue\n" for i in range(1, 301)))
    return path


def _last(told, stage):
    calls = [c for c in told if c[0] == stage]
    assert calls, f"no {stage!r} on the bar; told {sorted({c[0] for c in told})}"
    return calls[-1]


def test_an_index_build_reports_the_bytes_it_saves(tmp_path, titles, told):
    ix = tmp_path / "titles.idx"
    r = run("index", "build", "-t", "0.5", "-s", "word:1", "--lines", titles, "-o", ix)
    assert r.exit_code == 0, r.stderr
    stage, done, total, detail = _last(told, "save")
    assert done == total == ix.stat().st_size and detail.endswith(f"of {detail.split(' of ')[-1]}")
    assert [c[0] for c in told].index("index") < [c[0] for c in told].index("save")


@pytest.mark.parametrize("wide, unit", [((), "rows"), (("--wide",), "clusters")])
def test_clusters_written_report_what_they_wrote(tmp_path, titles, told, wide, unit):
    r = run("join", "-t", "0.5", "-s", "word:1", "--lines", titles, "--clusters", *wide, "-o", tmp_path / "c.tsv")
    assert r.exit_code == 0, r.stderr
    _, done, total, detail = _last(told, "write")
    assert done == total == (300 if unit == "rows" else 1) and detail == f"{done:,} {unit}"
    assert "clusters" in [c[0] for c in told]


def test_the_lsh_bucket_join_reports_the_pairs_so_far(tmp_path, titles, told):
    r = run("join", "-t", "0.5", "-s", "word:1", "--method", "lsh", "--lines", titles, "--count")
    assert r.exit_code == 0, r.stderr
    assert _last(told, "bucket join")[3] == "44,850 pairs of distinct sets"


def test_quiet_silences_every_stage(tmp_path, titles, told):
    assert run("index", "build", "-q", "-t", "0.5", "--lines", titles, "-o", tmp_path / "t.idx").exit_code == 0
    assert run("join", "-q", "-t", "0.5", "--lines", titles, "--clusters", "-o", tmp_path / "c.tsv").exit_code == 0
    assert told == []
