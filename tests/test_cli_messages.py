"""Messages on stderr: hostile ids and paths shown verbatim and escaped, usage errors on one line,
tracebacks turned into one line, and control characters and broken UTF-8 in TSV."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from allpairs.cli import app
from allpairs.cli._app import shown


def run(*args, input=None):
    return CliRunner().invoke(app, [str(a) for a in args], input=input, prog_name="allpairs")


def one_error_line(r, code: int) -> str:
    assert r.exit_code == code, (r.exit_code, r.stderr)
    lines = r.stderr.splitlines()
    assert lines and lines[0].startswith("allpairs: error: "), r.stderr
    assert len(lines) == 1, r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""
    return lines[0]


def test_shown_escapes_control_characters_and_keeps_the_rest_verbatim():
    assert shown("app/[slug]/page.tsx") == "app/[slug]/page.tsx"
    assert shown("see [/b]") == "see [/b]"
    assert shown("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert shown("x\nallpairs: error: disk on fire") == "x\\nallpairs: error: disk on fire"
    assert shown("\x1b]0;title\x07") == "\\x1b]0;title\\x07"
    assert shown("caf\udce9") == "caf\\xe9"  # a file name that is not UTF-8: its byte
    assert shown("\u202eevil\x9b") == "\\u202eevil\\x9b"
    assert shown("∂ é\t") == "∂ é\\t"


def test_hostile_ids_in_warnings_are_shown_escaped_on_one_line(tmp_path):
    f = tmp_path / "d.jsonl"
    hostile = ["see [/b]", "app/[slug]/page.tsx", "\x1b[2J\x1b]0;pwned\x07", "x\nallpairs: error: disk on fire"]
    rows = [{"id": i, "text": ""} for i in hostile] + [{"id": "a", "text": "one two"}, {"id": "b", "text": "one two"}]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = run("join", "--jsonl", "-t", "0.5", "-s", "word:1", f)
    assert r.exit_code == 0, r.stderr
    warning = next(line for line in r.stderr.splitlines() if "warning" in line)
    for text in ("see [/b]", "app/[slug]/page.tsx", "\\x1b[2J\\x1b]0;pwned\\x07", "x\\nallpairs: error: disk on fire"):
        assert text in warning
    assert "\x1b" not in r.stderr and "disk on fire" not in r.stderr.replace(warning, "")
    assert r.stdout == "left\tright\tsimilarity\na\tb\t1.000000\n"


def test_file_names_with_brackets_and_escapes_are_shown_verbatim(tmp_path):
    (tmp_path / "x[").mkdir()
    for name in ("x[/b]y", "[bold]", "a\x1b[31mred"):  # the first: a file b]y.txt in a folder x[
        (tmp_path / f"{name}.txt").write_text("")
    (tmp_path / "a.txt").write_text("same words here")
    (tmp_path / "b.txt").write_text("same words here")
    r = run("join", "-t", "0.5", "-s", "word:1", tmp_path)
    assert r.exit_code == 0, r.stderr
    assert "x[/b]y.txt" in r.stderr and "[bold].txt" in r.stderr and "a\\x1b[31mred.txt" in r.stderr


@pytest.mark.parametrize("args, expected", [
    (["join", "-t", "0.5", "no[red]such/"], "no[red]such/: no such file or directory"),
    (["join", "-t", "[/x]", "."], "'[/x]' is not a number"),
    (["join", "-t", "0.5", "--lines", "see [/b]\x1b[2J"], "see [/b]\\x1b[2J: no such file or directory"),
])
def test_user_values_in_errors_print_verbatim(args, expected):
    assert expected in one_error_line(run(*args), 2)


@pytest.mark.parametrize("args, message", [
    (["join", "-t", "0.5", "-f", "xml", "."], "--format: 'xml' is not one of 'tsv', 'csv', 'jsonl'"),
    (["join", "-t", "0.5", "--lines", "--sets", "."], "choose one of --lines, --sets, --jsonl"),
    (["join", "-t", "0.5", "-j", "-1", "."], "--jobs -1 is outside"),
    (["join", "."], "missing option '--threshold'"),
    (["join", "-t", "0.5", "--no-such-option", "."], "no such option: --no-such-option"),
    (["join", "-t", "0.5", "-m", "guess", "."], "--method: 'guess' is not one of 'exact', 'lsh'"),
])
def test_every_usage_error_is_one_line_exit_2(args, message):
    line = one_error_line(run(*args), 2)
    assert message in line and "Value error" not in line


def test_a_json_line_nested_too_deeply_is_one_line_exit_1(tmp_path):
    f = tmp_path / "deep.jsonl"
    f.write_text('{"id": "a", "text": ' + "[" * 100_000 + "}\n")
    assert "deep.jsonl:1: JSON nested too deeply" in one_error_line(run("join", "--jsonl", "-t", "0.5", f), 1)


def test_an_integer_id_of_5000_digits_is_one_line_exit_1(tmp_path):
    f = tmp_path / "big.jsonl"
    f.write_text('{"id": ' + "9" * 5000 + ', "text": "a b c"}\n')
    assert "big.jsonl:1: a number of more than" in one_error_line(run("join", "--jsonl", "-t", "0.5", f), 1)


def test_an_encoding_that_fails_without_a_position_is_one_line_exit_1(tmp_path):
    f = tmp_path / "l.txt"
    f.write_text("abcd\nabce\n")
    line = one_error_line(run("join", "--lines", "-t", "0.5", "--encoding", "punycode", f), 1)
    assert "l.txt: cannot decode as punycode" in line


def test_an_empty_sets_file_is_not_told_to_change_the_shingle():
    line = one_error_line(run("join", "--sets", "-t", "0.5", "-", input="\n \n\n"), 1)
    assert "--shingle" not in line and "no set has a token (3 read): every one is empty" in line


def test_tsv_escapes_control_characters_and_a_lone_surrogate_is_refused_at_read_time(tmp_path):
    # A lone surrogate (JSON's "\\ud800") has no UTF-8: written as the text \ud800 it would be the same name
    # as the six characters "\\ud800" (issue 35), so it is refused when read, naming the line, for every format.
    f = tmp_path / "d.jsonl"
    rows = [{"id": "nul\x00\x1b[2J", "text": "one two"}, {"id": "tab\there\\", "text": "one two"}]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "o.tsv"
    r = run("join", "--jsonl", "-t", "0.5", "-s", "word:1", "-q", "-o", out, f)
    assert r.exit_code == 0, r.stderr
    assert out.read_bytes().decode("utf-8").splitlines() == [
        "left\tright\tsimilarity",
        "nul\\x00\\x1b[2J\ttab\\there\\\\\t1.000000",
    ]
    lone = tmp_path / "lone.jsonl"
    lone.write_text(f.read_text() + json.dumps({"id": "lone\ud800", "text": "one two"}) + "\n")
    for fmt in ("tsv", "csv", "jsonl"):
        r = run("join", "--jsonl", "-t", "0.5", "-s", "word:1", "-q", "-f", fmt, lone)
        assert r.exit_code == 1 and r.stdout == "", fmt
        assert f"{lone}:3: field 'id' holds a lone surrogate \\ud800" in r.stderr, r.stderr


def test_running_out_of_memory_is_one_line_exit_1(monkeypatch, tmp_path):
    # What a memory limit (ulimit -v) does to a stage: numba and numpy raise MemoryError.
    import allpairs.cli.join as join_command

    def exhausted(*args, **kwargs):
        raise MemoryError("Allocation failed (probably too large).")

    monkeypatch.setattr(join_command, "run_join", exhausted)
    line = one_error_line(run("join", "--sets", "-t", "0.5", "-", input="1 2\n1 2\n"), 1)
    assert "out of memory" in line


def test_the_readers_and_the_index_name_parameters_and_the_command_line_names_its_flags(tmp_path):
    # The library speaks Python (issue 29): no flag in str(e); the CLI renders the same message with flags.
    import re

    from allpairs.corpus import read_corpus
    from allpairs.index import SearchIndex
    from allpairs.cli._app import message
    from allpairs.errors import AllPairsError

    table = tmp_path / "t.csv"
    table.write_text("id,text\n1,a b\n")
    record = tmp_path / "r.jsonl"
    record.write_text('{"id": 1, "body": "a b"}\n')
    index = SearchIndex.build({"a": "x y z", "b": "x y"}, 0.5, shingle="word:1")
    calls = [(lambda: read_corpus(str(table), "lines", header=False), "header=False", "--no-input-header"),
             (lambda: read_corpus(str(table), "csv", text_field="body"), "text_cols=", "--text-col"),
             (lambda: read_corpus(str(record), "jsonl"), "text_field=", "--text-col"),
             (lambda: read_corpus(str(tmp_path), "lines"), "drop kind='lines'", "drop --lines"),
             (lambda: index.query(["x y"], shingle="word:2"), "shingle=", "--shingle"),
             (lambda: index.add({"a": "x"}), "existing='replace'", "--replace")]
    for call, python, flag in calls:
        with pytest.raises(AllPairsError) as e:
            call()
        assert python in str(e.value) and not re.search(r"(^|\s|\()--\w", str(e.value)), str(e.value)
        assert flag in message(e.value) and python not in message(e.value), message(e.value)
