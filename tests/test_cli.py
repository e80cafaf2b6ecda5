"""The command line: every option, every bad input, exit codes, stdout carrying only data."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from allpairs.cli import app

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "datasets" / "tiny" / "corpus"
GOLDEN = REPO / "datasets" / "tiny" / "golden-word1-t0.5.tsv"


def run(*args, input=None):
    return CliRunner().invoke(app, [str(a) for a in args], input=input, prog_name="allpairs")


def test_every_command_has_help_and_is_in_the_readme():
    readme = (REPO / "README.md").read_text()
    names = list(get_command(app).commands)
    assert names == ["sets", "join", "compare", "index", "dedup"]
    for name in names:
        r = run(name, "--help")
        assert r.exit_code == 0, r.output
        assert "Usage" in r.stdout
        assert f"allpairs {name}" in readme, f"README does not document 'allpairs {name}'"


def test_tiny_corpus_matches_golden_output():
    r = run("join", "-t", "0.5", "-s", "word:1", TINY)
    assert r.exit_code == 0, r.stderr
    assert r.stdout == GOLDEN.read_text()


def test_tiny_corpus_pair_counts_per_threshold_as_worked_out_by_hand():
    # datasets/tiny/EXPECTED.md, "Pairs per threshold".
    for t, expected in [("1.0", 3), ("0.8", 3), ("0.7", 6), ("0.5", 10), ("0.2", 14), ("0.05", 15)]:
        r = run("join", "-t", t, "-s", "word:1", "--count", "-q", TINY)
        assert r.exit_code == 0, r.stderr
        assert r.stdout == f"{expected}\n", t


def test_stdout_is_data_only_and_quiet_silences_stderr():
    r = run("join", "-t", "0.5", "-s", "word:1", TINY)
    assert all(len(line.split("\t")) == 3 for line in r.stdout.splitlines())
    assert r.stdout.splitlines()[0] == "left\tright\tsimilarity"
    assert "skipped 2 documents" in r.stderr and "pixel.png (binary)" in r.stderr
    assert "10 pairs" in r.stderr and "peak memory" in r.stderr
    q = run("join", "-t", "0.5", "-s", "word:1", "--quiet", TINY)
    assert q.stderr == "" and q.stdout == r.stdout


def test_csv_and_jsonl_carry_overlap_and_sizes():
    c = run("join", "-t", "0.7", "-s", "word:1", "-f", "csv", "-q", TINY)
    lines = c.stdout.splitlines()
    assert lines[0] == "left,right,similarity,overlap,left_size,right_size"
    assert "fox-copy.txt,fox-jumped.txt,0.777777,7,8,8" in lines
    j = run("join", "-t", "0.7", "-s", "word:1", "-f", "jsonl", "-q", TINY)
    rows = [json.loads(line) for line in j.stdout.splitlines()]
    assert len(rows) == 6
    assert rows[0] == {"left": "fox-copy.txt", "right": "fox-jumped.txt", "similarity": 0.777777,
                       "overlap": 7, "left_size": 8, "right_size": 8}


def test_include_exclude_min_bytes_min_shingles():
    r = run("join", "-t", "0.5", "-s", "word:1", "-q", "--no-header", "--include", "fox*", "--exclude", "*short*", TINY)
    assert "fox-short" not in r.stdout and r.stdout.count("\n") == 6
    r = run("join", "-t", "0.5", "-s", "word:1", "-q", "--min-bytes", "40", TINY)
    assert "fox-short" not in r.stdout
    r = run("join", "-t", "0.5", "-s", "word:1", "--min-shingles", "5", TINY)
    assert "fox-short" not in r.stdout and "1 more dropped by --min-bytes/--min-shingles" in r.stderr


def test_lines_print_the_text_and_ids_are_line_numbers(tmp_path):
    f = tmp_path / "pw.txt"
    f.write_text("password1\npassword12\nqwerty\nPassword1\n")
    r = run("join", "--lines", "-t", "0.6", "-q", "--no-header", f)
    assert r.exit_code == 0, r.stderr
    # char:3: password1 has 7 trigrams, password12 one more (d12): J = 7/8.
    # With case folding "password1" and "Password1" are the same set.
    assert r.stdout.splitlines()[0] == "1\t2\t0.875000\tpassword1\tpassword12"
    assert "1\t4\t1.000000\tpassword1\tPassword1" in r.stdout.splitlines()
    raw = run("join", "--lines", "-t", "0.6", "-q", "--no-normalize", f)
    assert raw.stdout.splitlines()[0] == "left\tright\tsimilarity\tleft_text\tright_text"
    # Without folding only "Pas"/"pas" differ: 6 of 8 trigrams shared.
    assert "1\t4\t0.750000\tpassword1\tPassword1" in raw.stdout.splitlines()


def test_sets_from_stdin(tmp_path):
    r = run("join", "--sets", "-t", "0.5", "-q", "--no-header", "-", input="1 2 3\n1 2 3 4\n\n9\n")
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "1\t2\t0.750000\n"


def test_jsonl_input(tmp_path):
    f = tmp_path / "d.jsonl"
    f.write_text('{"id": "a", "text": "one two three four"}\n{"id": "b", "text": "one two three four five"}\n')
    r = run("join", "--jsonl", "-t", "0.5", "-s", "word:1", "-q", f)
    assert r.stdout == "left\tright\tsimilarity\na\tb\t0.800000\n"


def test_output_file_is_written_whole(tmp_path):
    out = tmp_path / "pairs.tsv"
    r = run("join", "-t", "0.5", "-s", "word:1", "-q", "-o", out, TINY)
    assert r.exit_code == 0 and r.stdout == ""
    assert out.read_text() == GOLDEN.read_text()
    assert list(tmp_path.iterdir()) == [out]
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask


@pytest.mark.parametrize("args, code, message", [
    (["join", "-t", "0.5", "/no/such/dir"], 2, "/no/such/dir: no such file or directory"),
    (["join", "-t", "0", str(TINY)], 2, "outside (0, 1]"),
    (["join", "-t", "1.01", str(TINY)], 2, "outside (0, 1]"),
    (["join", "-t", "half", str(TINY)], 2, "is not a number"),
    (["join", "-t", "0.5", "-s", "bogus:3", str(TINY)], 2, "bogus"),
    (["join", "-t", "0.5", "-s", "word:0", str(TINY)], 2, "shingle size must be at least 1"),
    (["join", "-t", "0.5", "--lines", "--sets", str(TINY)], 2, "choose one of"),
    (["join", "-t", "0.5", "--sets", str(TINY)], 2, "is a directory"),
    (["join", "-t", "0.5", "--include", "[", str(TINY)], 2, "glob '[': '[' at column 1 is never closed"),
    (["join", "-t", "0.5", "--exclude", "[z-a]", str(TINY)], 2, "range z-a is reversed"),
    (["join", "-t", "0.5", "--lines", str(TINY / "cat.txt"), str(TINY / "dog.txt")], 2, "--lines reads one file"),
    (["join", "-t", "0.5", "-j", "-1", str(TINY)], 2, "--jobs -1"),
    (["join", "-t", "0.5", "-f", "xml", str(TINY)], 2, "xml"),
    (["join", str(TINY)], 2, "--threshold"),
])
def test_usage_errors_exit_2_with_one_line(args, code, message):
    r = run(*args)
    assert r.exit_code == code, (r.stdout, r.stderr)
    assert message in r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


@pytest.mark.parametrize("args, message", [
    (["-t", "1e-999999999"], "threshold '1e-999999999' has an exponent beyond ±40"),
    (["-t", "0.3333333333333333"], "or a fraction p/q with q at most 1,000,000,000 (2/3); e.g. 0.333333333 or 1/3"),
    (["-t", "1e-10"], "e.g. 0.000000001"),
    (["-t", "0.5", "-m", "lsh", "-k", "100000000"], "num_perm 100,000,000 is above the limit of 4,096"),
    (["-t", "1e-9", "-m", "lsh"], "no num_perm up to the limit of 4,096 reaches it"),
    (["-t", "0.5", "-m", "lsh", "-b", "100000", "-r", "100000"], "num_perm is at most 4,096"),
    (["-t", "0.5", "-j", "100000"], "--jobs 100,000 is outside 0 to 256"),
])
def test_absurd_arguments_are_refused_at_once_with_one_line_and_the_bound(args, message):
    r = run("join", *args, "-s", "word:1", TINY)
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("allpairs: error: ") and message in r.stderr
    assert r.stdout == ""


def test_lsh_says_on_stderr_how_many_buckets_were_joined_instead_of_expanded(tmp_path):
    f = tmp_path / "two-token.txt"
    f.write_text("".join(f"a {i}\n" for i in range(1000)) + "x y z\nx y z w\n")
    r = run("join", "--sets", "-m", "lsh", "-t", "0.5", "--no-header", f)
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "1001\t1002\t0.750000\n"
    assert re.search(r"allpairs: [0-9,]+ LSH buckets of more than 64 distinct sets \(largest [0-9,]+\) were joined "
                     r"exactly instead of expanded", r.stderr), r.stderr


def test_estimate_verification_with_few_bits_is_refused_before_the_work_with_the_reason(tmp_path):
    # With 4-bit values 20,000 Zipf sets took 73 s where the exact join takes 1 s: refused, not run.
    f = tmp_path / "s.sets"
    f.write_text("a b c\na b d\n")
    r = run("join", "--sets", "-m", "lsh", "-t", "0.5", "--verify", "estimate", "--bits", "4", f)
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr == ("allpairs: error: --verify estimate needs --bits 16 or more, not 4: with 4-bit values "
                        "unrelated sets agree on 1 position in 16 by chance, and the estimate join over such "
                        "signatures grows with the square of the corpus; raise --bits 16 or more, or use "
                        "--verify exact (fast at any width)\n")
    for args in (["--verify", "estimate", "--bits", "16"], ["--bits", "4"], ["--verify", "estimate"]):
        r = run("join", "--sets", "-q", "-m", "lsh", "-t", "0.5", *args, f)
        assert r.exit_code == 0, (args, r.stderr)


def test_data_errors_exit_1(tmp_path):
    (tmp_path / "empty").mkdir()
    r = run("join", "-t", "0.5", tmp_path / "empty")
    assert r.exit_code == 1 and "corpus is empty" in r.stderr
    f = tmp_path / "bad.jsonl"
    f.write_text('{"id": 1, "text": "a"}\nnot json\n')
    r = run("join", "--jsonl", "-t", "0.5", f)
    assert r.exit_code == 1 and "bad.jsonl:2: not valid JSON" in r.stderr
    g = tmp_path / "latin.txt"
    g.write_bytes(b"ok\ncaf\xe9\n")
    r = run("join", "--lines", "-t", "0.5", g)
    assert r.exit_code == 1 and "latin.txt:2: not valid utf-8" in r.stderr
    h = tmp_path / "short.txt"
    h.write_text("a\nb\n")
    r = run("join", "--lines", "-t", "0.5", "--min-shingles", "2", h)
    assert r.exit_code == 1 and "no document has 2 or more char:3 shingles" in r.stderr


def test_failed_run_leaves_no_output_file(tmp_path):
    out = tmp_path / "pairs.tsv"
    (tmp_path / "empty").mkdir()
    r = run("join", "-t", "0.5", "-o", out, tmp_path / "empty")
    assert r.exit_code == 1
    assert list(tmp_path.iterdir()) == [tmp_path / "empty"]


def test_output_is_identical_across_runs_and_job_counts(tmp_path):
    f = tmp_path / "sets.dat"
    import random
    rng = random.Random(7)
    rows = [" ".join(str(rng.randint(0, 40)) for _ in range(rng.randint(0, 12))) for _ in range(400)]
    rows += rows[:50]
    f.write_text("\n".join(rows) + "\n")
    outs = {run("join", "--sets", "-t", "0.4", "-q", "-j", j, f).stdout for j in (1, 2, 3, 1)}
    assert len(outs) == 1 and len(next(iter(outs))) > 1000


def test_ctrl_c_exits_130_and_leaves_no_partial_file(tmp_path):
    # 8000 identical sets expand to 32 M pairs: the output is still being
    # written when SIGINT arrives.
    f = tmp_path / "sets.dat"
    f.write_text("1 2 3\n" * 8000)
    out = tmp_path / "out.tsv"
    # SIGINT as a terminal gives it, even where this runs as a background job (whose SIGINT is ignored).
    proc = subprocess.Popen([sys.executable, "-m", "allpairs", "join", "--sets", "-t", "0.5", "-q", "-o", str(out), str(f)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    part = []
    while time.monotonic() < deadline and not part:
        part = [p for p in tmp_path.iterdir() if p.name.startswith(".out.tsv") and p.stat().st_size > 0]
        time.sleep(0.02)
    assert part, "the output was never started"
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr.decode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sets.dat"]


def test_file_names_that_are_not_utf8_are_written_back_as_they_are(tmp_path):
    root = os.fsencode(tmp_path)
    for name in (b"caf\xe9.txt", b"b.txt"):
        with open(os.path.join(root, name), "w") as f:
            f.write("hello world again\n")
    out = tmp_path / "o.tsv"
    r = run("join", "-t", "0.5", "-s", "word:1", "-q", "--no-header", "-o", out, tmp_path)
    assert r.exit_code == 0, r.stderr
    assert out.read_bytes() == b"b.txt\tcaf\xe9.txt\t1.000000\n"
    j = run("join", "-t", "0.5", "-s", "word:1", "-q", "-f", "jsonl", "--include", "*.txt", tmp_path)
    # JSON text is UTF-8: the byte as the text \xe9, as in Parquet ("\udce9" would be half a character).
    assert json.loads(j.stdout)["right"] == "caf\\xe9.txt"


# --- issue 9: what a new user trips over

def test_a_bad_output_path_is_refused_before_the_corpus_is_read(tmp_path, monkeypatch):
    import allpairs.cli.join as cli_join

    def never(*a, **k):
        raise AssertionError("the corpus was read before the output path was checked")

    monkeypatch.setattr(cli_join, "read_input", never)
    r = run("join", "-t", "0.5", "-o", tmp_path / "no" / "such" / "x.tsv", TINY)
    assert r.exit_code == 1 and "directory" in r.stderr and "does not exist" in r.stderr, r.stderr
    r = run("join", "-t", "0.5", "-o", tmp_path, TINY)
    assert r.exit_code == 1 and "is a directory" in r.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args, message", [
    (["--bands", "4", "--rows", "2"], "--bands, --rows do nothing in exact mode"),
    (["--bits", "16"], "--bits does nothing in exact mode"),
    (["--max-bucket", "10"], "--max-bucket does nothing in exact mode"),
    (["--num-perm", "128"], "--num-perm does nothing in exact mode"),  # the default, but given
    (["--seed", "1"], "--seed does nothing in exact mode"),
    (["--verify", "exact"], "--verify does nothing in exact mode"),
    (["--count", "-o", "x.tsv"], "--output does nothing with --count"),
    (["--count", "-f", "csv"], "--format does nothing with --count"),
    (["-m", "lsh", "-b", "4", "-r", "2", "--recall", "0.9"], "--recall does nothing when --bands and --rows"),
    (["--id-field", "url"], "--id-col does nothing without --jsonl, --csv, --tsv or --parquet"),
    (["--keep-col", "url"], "--keep-col does nothing without --jsonl, --csv, --tsv or --parquet"),
    (["--headerless"], "--headerless does nothing without --csv or --tsv"),
    (["--no-header", "-f", "jsonl"], "--no-header does nothing with --format jsonl"),
    (["--singletons"], "--singletons does nothing without --clusters"),
    (["--encoding", "latin-1"], "--encoding does nothing for a directory"),
])
def test_options_that_would_do_nothing_are_refused_in_one_line(args, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = run("join", "-t", "0.5", *args, TINY)
    assert r.exit_code == 2, r.stderr
    assert r.stderr.startswith(f"allpairs: error: {message}") and r.stderr.count("\n") == 1, r.stderr
    assert r.stdout == "" and list(tmp_path.iterdir()) == []


def test_lsh_options_are_taken_in_lsh_mode_and_by_compare():
    r = run("join", "-t", "0.5", "-s", "word:1", "-q", "-m", "lsh", "-b", "4", "-r", "2", "--seed", "3", TINY)
    assert r.exit_code == 0, r.stderr
    c = run("compare", "-t", "0.5", "-s", "word:1", "-q", "-b", "4", "-r", "2", "--seed", "3", TINY)
    assert c.exit_code == 0, c.stderr


def test_empty_corpus_error_counts_files_and_each_filter(tmp_path):
    r = run("join", "-t", "0.5", "--include", "*.rs", TINY)
    assert r.exit_code == 1
    assert "8 files found; 8 left out by --include" in r.stderr, r.stderr
    r = run("join", "-t", "0.5", "--min-bytes", "100000000", TINY)
    assert r.exit_code == 1 and "8 smaller than --min-bytes" in r.stderr, r.stderr


def test_several_paths_and_single_files_are_one_corpus(tmp_path, monkeypatch):
    monkeypatch.chdir(TINY)
    files = sorted(p.name for p in TINY.glob("fox-*.txt"))
    r = run("join", "-t", "0.5", "-s", "word:1", "-q", "--no-header", *files)
    expected = [line for line in GOLDEN.read_text().splitlines()
                if line.split("\t")[0] in files and line.split("\t")[1] in files]
    assert r.exit_code == 0, r.stderr
    assert r.stdout.splitlines() == expected
    one = run("join", "-t", "0.5", "-s", "word:1", "-q", "cat.txt")  # one document pairs with nothing: said
    assert one.exit_code == 2 and one.stdout == "" and "--lines" in one.stderr, one.stderr
    (tmp_path / "json").mkdir()
    (tmp_path / "email").mkdir()
    (tmp_path / "json" / "a.txt").write_text("the quick brown fox")
    (tmp_path / "email" / "a.txt").write_text("the quick brown fox")
    monkeypatch.chdir(tmp_path)
    r = run("join", "-t", "0.5", "-s", "word:1", "-q", "json/", "email/")
    assert r.stdout == "left\tright\tsimilarity\njson/a.txt\temail/a.txt\t1.000000\n"


def test_hidden_and_ignored_files_are_left_out_and_the_summary_says_so(tmp_path):
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "copy.txt").write_text("the quick brown fox")
    (tmp_path / "a.txt").write_text("the quick brown fox")
    (tmp_path / "b.txt").write_text("the quick brown fox")
    (tmp_path / "c.log").write_text("the quick brown fox")
    (tmp_path / ".gitignore").write_text("*.log\n")
    r = run("join", "-t", "0.5", "-s", "word:1", "--no-header", tmp_path)
    assert r.stdout == "a.txt\tb.txt\t1.000000\n"
    assert ("allpairs: left out 1 folder and 1 file hidden; --hidden reads them; "
            "1 file ignored (.gitignore, .ignore, .git); --no-ignore reads them") in r.stderr, r.stderr
    r = run("join", "-t", "0.5", "-s", "word:1", "-q", "--hidden", "--no-ignore", "--count", tmp_path)
    assert r.stdout == "6\n"


def test_help_groups_options_in_panels_with_meaningful_metavars():
    r = run("join", "-h")
    assert r.exit_code == 0
    assert "Usage: allpairs join [OPTIONS] PATH..." in r.stdout
    for panel in ("Input options:", "Shingle options:", "Output options:", "LSH options:",
                  "Performance options:"):
        assert panel in r.stdout
    for shown in ("-t, --threshold T", "--recall FLOAT", "--include GLOB", "--min-bytes N", "-o, --output FILE"):
        assert shown in r.stdout
    for hidden in ("{path}", "<str>", "<list[str]>", "<int>"):
        assert hidden not in r.stdout
    c = run("compare", "--help")
    assert "printed" not in c.stdout and "--count" not in c.stdout
    top = run("--help")
    assert "..." not in top.stdout.split("Commands:")[1]


def test_compare_plot_writes_both_pictures(tmp_path):
    r = run("compare", "-t", "0.5", "-s", "word:1", "-b", "4", "-r", "2", "--plot", tmp_path / "c.png", TINY)
    assert r.exit_code == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c-chords.png", "c.png"]
    assert "6 joined" in r.stdout and f"wrote {tmp_path / 'c-chords.png'}" in r.stderr


def test_counts_of_one_are_singular_sets_say_tokens_and_line_records_say_line(tmp_path):
    f = tmp_path / "s.dat"
    f.write_text("a b c\na b c d\n\n")
    r = run("join", "--sets", "-t", "0.7", f)
    assert "skipped 1 document (no shingle: 1): line 3 (no shingle)" in r.stderr, r.stderr
    assert "; tokens: 7 (4 distinct); 2 distinct sets" in r.stderr
    assert "1 candidate, 1 pair (1 between distinct sets)" in r.stderr
    g = tmp_path / "l.txt"
    g.write_text("abcd\n\n")
    r = run("join", "--lines", "-t", "0.5", g)
    assert "line 2 (no shingle)" in r.stderr and "1 distinct set\n" in r.stderr, r.stderr


def test_a_threshold_above_one_is_not_explained_by_t_equals_0():
    r = run("join", "-t", "1.5", TINY)
    assert r.exit_code == 2 and "outside (0, 1]" in r.stderr and "no similarity is above 1" in r.stderr
    assert "t = 0" not in r.stderr
    assert "t = 0 would pair every two documents" in run("join", "-t", "0", TINY).stderr


# --- --measure, --against, --clusters ------------------------------------------

MEASURE_SETS = "1 2 3\n1 2 3 4\n\n9\n1 2 3\n5 6\n"


@pytest.mark.parametrize("args, expected", [
    (["-t", "0.7"], "1\t2\t0.750000\n1\t5\t1.000000\n2\t5\t0.750000\n"),
    (["-t", "0.7", "--measure", "dice"], "1\t2\t0.857142\n1\t5\t1.000000\n2\t5\t0.857142\n"),
    # 3/√12 = 0.8660254...
    (["-t", "0.7", "--measure", "cosine"], "1\t2\t0.866025\n1\t5\t1.000000\n2\t5\t0.866025\n"),
    # Ordered pairs, contained first: 3/4 of line 2 is in line 1, all of line 1 in line 2.
    (["-t", "0.75", "--measure", "containment"],
     "1\t2\t1.000000\n1\t5\t1.000000\n2\t1\t0.750000\n2\t5\t0.750000\n5\t1\t1.000000\n5\t2\t1.000000\n"),
    (["-t", "0.76", "--measure", "containment"], "1\t2\t1.000000\n1\t5\t1.000000\n5\t1\t1.000000\n5\t2\t1.000000\n"),
    (["-t", "3", "--measure", "overlap"], "1\t2\t3\n1\t5\t3\n2\t5\t3\n"),
    (["-t", "4", "--measure", "overlap"], ""),
])
def test_every_measure_prints_its_own_similarity(args, expected):
    r = run("join", "--sets", "-q", "--no-header", *args, "-", input=MEASURE_SETS)
    assert r.exit_code == 0, r.stderr
    assert r.stdout == expected


def test_overlap_prints_counts_of_several_digits_in_every_format():
    line = " ".join(map(str, range(123))) + "\n"
    r = run("join", "--sets", "-q", "-t", "100", "--measure", "overlap", "-f", "jsonl", "-", input=line * 2)
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["similarity"] == 123 and json.loads(r.stdout)["overlap"] == 123


def test_rs_join_pairs_the_first_corpus_with_the_other_only(tmp_path):
    left, right = tmp_path / "l.sets", tmp_path / "r.sets"
    left.write_text("1 2 3\n1 2 3\n7 8\n")
    right.write_text("1 2 3 4\n7 8\n1 2 3\n")
    r = run("join", "--sets", "-t", "0.75", "--no-header", left, "--against", right)
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "1\t1\t0.750000\n1\t3\t1.000000\n2\t1\t0.750000\n2\t3\t1.000000\n3\t2\t1.000000\n"
    assert "of 3 against 3 documents" in r.stderr


def test_clusters_print_size_then_ids_largest_first_and_are_counted(tmp_path):
    f = tmp_path / "c.sets"
    f.write_text("1 2 3\n9 9\n1 2 3 4\n5 6\n1 2 3\n5 6\n0\n")
    r = run("join", "--sets", "-t", "0.7", "--clusters", "--wide", f)
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "3\t1\t3\t5\n2\t4\t6\n"
    assert "2 clusters of 2 or more documents, the largest of 3" in r.stderr
    c = run("join", "--sets", "-q", "-t", "0.7", "--clusters", "--count", f)
    assert c.stdout == "2\n"
    j = run("join", "--sets", "-q", "-t", "0.7", "--clusters", "--wide", "-f", "jsonl", f)
    assert [json.loads(x) for x in j.stdout.splitlines()] == [{"size": 3, "ids": ["1", "3", "5"]},
                                                             {"size": 2, "ids": ["4", "6"]}]


@pytest.mark.parametrize("args, message", [
    (["-t", "2.5", "--measure", "overlap"], "is not a whole number"),
    (["-t", "0", "--measure", "overlap"], "below 1"),
    (["-t", "1.5", "--measure", "cosine"], "outside (0, 1]"),
    (["-t", "3", "--measure", "containment"], "outside (0, 1]"),
    (["-t", "0.5", "--measure", "tanimoto"], "tanimoto"),
    (["-t", "0.5", "--measure", "dice", "--method", "lsh"], "MinHash LSH estimates Jaccard only"),
    (["-t", "0.5", "--clusters", "--against", "-"], "clusters are for a self-join"),
])
def test_measure_options_refuse_bad_values_with_exit_2(args, message, tmp_path):
    f = tmp_path / "s.sets"
    f.write_text(MEASURE_SETS)
    r = run("join", "--sets", *args, f)
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert message in r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_peak_memory_is_the_programs_own_not_that_of_a_larger_process_that_started_it():
    # Linux carries getrusage's maxrss across exec: started from a process of 600 MiB, a run reported 600 MiB.
    tiny = Path(__file__).resolve().parents[1] / "datasets" / "tiny" / "corpus"
    parent = ("import subprocess, sys\n"
              "ballast = bytearray(600 * 2**20)\n"
              "for i in range(0, len(ballast), 4096): ballast[i] = 1\n"
              f"r = subprocess.run([sys.executable, '-m', 'allpairs', 'join', '-t', '0.5', '-s', 'word:1', {str(tiny)!r}],"
              " capture_output=True, text=True)\n"
              "sys.stdout.write(r.stderr)\n")
    r = subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True, timeout=300)
    m = re.search(r"peak memory ([\d,]+) MiB", r.stdout)
    assert m, r.stdout + r.stderr
    assert int(m.group(1).replace(",", "")) < 400


@pytest.mark.kernel_paths("compiled", "python", "jit")
def test_a_cosine_join_at_0_700000001_counts_13_pairs_on_every_kernel_path(tmp_path, kernels):
    # The plain-Python kernels counted 7: their 128-bit product comparison took int32 sizes and wrapped.
    sets = tmp_path / "cos.sets"
    sets.write_text("2 4 0 1\n4 2 1 3 0\n4 2 0 1\n0 3 2\n2 0 3 1 4\n0 2 4 1 3\n")
    for t, expected in [("0.700000001", 13), ("536870913/1000000000", 15), ("0.999999999", 4), ("1e-9", 15)]:
        r = run("join", "-q", "--sets", sets, "-t", t, "--measure", "cosine", "--count")
        assert (r.exit_code, r.stdout) == (0, f"{expected}\n"), (t, r.stdout, r.stderr)
