"""``allpairs compare`` on the command line: checks before the work, ``--missed``, ``--json``."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from allpairs.cli import app

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "datasets" / "tiny" / "corpus"
COMPARE = ["compare", "-t", "0.5", "-s", "word:1"]


def run(*args, input=None):
    return CliRunner().invoke(app, [str(a) for a in args], input=input, prog_name="allpairs")


def test_plot_without_matplotlib_is_refused_before_the_work_naming_the_extra(tmp_path):
    # A matplotlib that cannot be imported, found before the installed one.
    fake = tmp_path / "fake" / "matplotlib"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('No module named matplotlib')\n")
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(fake.parent), str(REPO)])}
    r = subprocess.run([sys.executable, "-m", "allpairs", *COMPARE, str(TINY), "--plot", str(out / "c.png")],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2, r.stderr
    assert r.stdout == "", "the comparison ran before the missing matplotlib was noticed"
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("allpairs: error: drawing needs matplotlib: pip install ")
    assert lines[0].endswith("[plot]'") or lines[0].endswith("[plot]' in the allpairs clone")
    assert list(out.iterdir()) == []


MISSES = [*COMPARE, "-q", "-k", "8", "-b", "1", "-r", "8"]  # one band of 8 rows: most pairs at 0.5 are missed


def test_missed_writes_the_pairs_the_exact_join_finds_and_the_lsh_join_does_not(tmp_path):
    out = tmp_path / "missed.tsv"
    r = run(*MISSES, TINY, "--missed", out)
    assert r.exit_code == 0, r.stderr
    exact = run("join", "-t", "0.5", "-s", "word:1", "-q", TINY).stdout.splitlines()
    lsh = run("join", "-t", "0.5", "-s", "word:1", "-q", "-m", "lsh", "-k", "8", "-b", "1", "-r", "8",
              TINY).stdout.splitlines()
    missed = out.read_text().splitlines()
    assert missed[0] == exact[0] == "left\tright\tsimilarity"
    assert missed[1:] == [line for line in exact[1:] if line not in lsh[1:]]
    assert len(missed) - 1 == 7 and re.search(r"pairs of documents with J >= 0.5 +10 +3 \(7 missed\)", r.stdout)


def test_missed_takes_the_format_from_the_suffix_and_carries_the_lines(tmp_path):
    lines = tmp_path / "l.txt"
    lines.write_text("a b c d e f\na b c d e g\nx y z\na b c d e f\n")
    args = ["compare", "--lines", "-t", "0.5", "-s", "word:1", "-q", "-k", "8", "-b", "1", "-r", "8", lines]
    r = run(*args, "--missed", tmp_path / "m.jsonl")
    assert r.exit_code == 0, r.stderr
    rows = [json.loads(line) for line in (tmp_path / "m.jsonl").read_text().splitlines()]
    assert [(d["left"], d["right"], d["overlap"], d["left_text"]) for d in rows] == [
        ("1", "2", 5, "a b c d e f"), ("2", "4", 5, "a b c d e g")]
    r = run(*args, "--missed", tmp_path / "m.csv")
    assert (tmp_path / "m.csv").read_text().splitlines()[0] == ("left,right,similarity,overlap,left_size,"
                                                                "right_size,left_text,right_text")


def test_the_json_report_counts_the_missed_document_pairs_beside_the_set_pairs():
    r = run(*MISSES, TINY, "--json")
    d = json.loads(r.stdout)
    assert d["settings"]["threshold"] == 0.5
    assert (d["lsh"]["missed_pairs"], d["lsh"]["missed_set_pairs"]) == (7, 3)
    assert (d["exact"]["pairs"], d["exact"]["set_pairs"]) == (10, 3)


def test_missed_to_stdout_or_onto_a_picture_is_a_usage_error_before_the_work(tmp_path):
    r = run(*MISSES, TINY, "--missed", "-")
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr == "allpairs: error: --missed needs a file name: standard output carries the comparison\n"
    r = run(*MISSES, TINY, "--missed", tmp_path / "p-chords.png", "--plot", tmp_path / "p.png")
    assert r.exit_code == 2 and r.stdout == "" and "is also a picture of --plot" in r.stderr
    r = run(*MISSES, TINY, "--missed", f"{tmp_path}/./p.png", "--plot", tmp_path / "p.png")
    assert r.exit_code == 2 and r.stdout == "" and "is also a picture of --plot" in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_missed_and_plot_are_written_together(tmp_path):
    r = run(*MISSES[:-1], "8", TINY, "--missed", tmp_path / "m.tsv", "--plot", tmp_path / "p.svg")
    assert r.exit_code == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.tsv", "p-chords.svg", "p.svg"]
