"""The fast path of a plain join (allpairs.cli.plain_join, allpairs.cli._fast) against the typer command.

A command line the fast path takes must come out exactly as the typer command would make it: the same
stdout, stderr (but for the times and peak memory the summary measures), exit status and files; and it
must take only command lines that click would parse to those values with every other option at its
default. Anything else goes to the typer app."""
from __future__ import annotations

import re
import shlex
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from allpairs.cli import PlainJoin, plain_join

#: The program as the console script runs it; the first argument says whether the fast path may run
#: ("fast") or not ("typer"), the second names a file that gets, at exit, which of them ran.
PROGRAM = ("import atexit, sys\n"
           "mode, record = sys.argv.pop(1), sys.argv.pop(1)\n"
           "import allpairs.cli as cli\n"
           "if mode == 'typer':\n"
           "    cli.plain_join = lambda argv: None\n"
           "atexit.register(lambda: open(record, 'w').write('typer' if 'typer' in sys.modules else 'fast'))\n"
           "from allpairs.__main__ import main\n"
           "main()\n")


def _program(mode: str, args: list[str], tmp_path) -> tuple[subprocess.CompletedProcess, str]:
    record = tmp_path / f"ran-{mode}"
    run = subprocess.run([sys.executable, "-c", PROGRAM, mode, str(record), *map(str, args)], capture_output=True,
                         timeout=300)
    return run, record.read_text() if record.exists() else "?"


def _measured(stderr: bytes) -> bytes:
    """stderr without what the run measures (stage times, peak memory)."""
    return re.sub(rb"\d+\.\d\ds", b"_s", re.sub(rb"peak memory [\d,]+ MiB", b"peak memory _", stderr))


def _files(folder) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture
def data(tmp_path):
    d = tmp_path / "data"
    d.mkdir()
    (d / "a.sets").write_text("".join(f"w{i} x{i} y{i % 3} z{i % 2} common\n" for i in range(12)) + "\n=lone =x\n")
    (d / "one.sets").write_text("a b c\n")
    (d / "empty.sets").write_text("")
    (d / "latin1.sets").write_bytes(b"caf\xe9 a b\ncaf\xe9 a\n")
    (d / "nul.sets").write_bytes(b"a b\n\0 c\n")
    # Whole numbers, keyed by value on the fast path: "1", "01" and "+1" are three tokens, as when hashed.
    (d / "nums.sets").write_text("1 2 3 01\n1 2 3 001\n01 2 3\n1 02 3 4\n+1 1 2 3\n1.0 1 2 3\n\u0663 3 2 1\n"
                                 "123456789012345678 1234567890123456789 9\n"
                                 "123456789012345678 1234567890123456789 9 0\n0 00 9\u00a07 7\n")
    (d / "adir").mkdir()
    return d


#: Command lines the fast path takes, good and bad; {d} is the data folder.
CASES = [
    ["join", "--sets", "{d}/a.sets", "-t", "0.5"],
    ["join", "--sets", "{d}/a.sets", "-t", "0.5", "-q"],
    ["join", "-t", "2/3", "{d}/a.sets", "--sets", "--quiet", "-j", "1"],
    ["join", "--sets", "{d}/a.sets", "--threshold", "0.25", "--count"],
    ["join", "--count", "-q", "--jobs", "2", "--sets", "{d}/a.sets", "-t", "1"],
    ["join", "--sets", "{d}/a.sets", "-t", "0.5", "-o", "{d}/out.tsv"],
    ["join", "--sets", "{d}/a.sets", "-t", "0.5", "--output", "{d}/out.csv", "-q"],
    ["join", "--sets", "{d}/a.sets", "-t", "0.5", "-o", "{d}/out.jsonl"],
    ["join", "--sets", "{d}/a.sets", "-t", "0.5", "-o", "{d}/out"],
    ["join", "--sets", "{d}/one.sets", "-t", "0.5"],
    ["join", "--sets", "{d}/empty.sets", "-t", "0.5"],
    ["join", "--sets", "{d}/nums.sets", "-t", "0.5", "-o", "{d}/nums.tsv"],
    ["join", "--sets", "{d}/nums.sets", "-t", "0.3", "--count"],
    # Bad input: each a usage (2) or data (1) error in one line, no file written.
    ["join", "--sets", "{d}/missing.sets", "-t", "0.5"],
    ["join", "--sets", "{d}/adir", "-t", "0.5"],
    ["join", "--sets", "{d}/a.sets", "-t", "abc"],
    ["join", "--sets", "{d}/a.sets", "-t", "1.5", "-q"],
    ["join", "--sets", "{d}/a.sets", "-t", "0"],
    ["join", "--sets", "{d}/a.sets", "-t", "0.5", "-j", "100000"],
    ["join", "--sets", "{d}/a.sets", "-t", "0.5", "-o", "{d}/a.sets"],
    ["join", "--sets", "{d}/a.sets", "-t", "0.5", "-o", "{d}/adir"],
    ["join", "--sets", "{d}/a.sets", "-t", "0.5", "-o", "{d}/nowhere/out.tsv"],
    ["join", "--sets", "{d}/a.sets", "-t", "0.5", "-o", "/dev/full"],
    ["join", "--sets", "{d}/latin1.sets", "-t", "0.5"],
    ["join", "--sets", "{d}/nul.sets", "-t", "0.5"],
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: " ".join(case[1:]).replace("{d}/", ""))
def test_the_fast_path_prints_and_writes_what_the_typer_command_does(case, data, tmp_path):
    args = [a.format(d=data) for a in case]
    assert plain_join(args) is not None
    before = _files(data)
    typer, ran = _program("typer", args, tmp_path)
    assert ran == "typer"
    typer_files = _files(data)
    for name in set(typer_files) - set(before):
        (data / name).unlink()
    fast, ran = _program("fast", args, tmp_path)
    assert ran == "fast"
    assert (fast.returncode, fast.stdout, _measured(fast.stderr)) == \
        (typer.returncode, typer.stdout, _measured(typer.stderr))
    assert _files(data) == typer_files
    assert b"Traceback" not in fast.stderr
    if fast.returncode:
        assert fast.returncode in (1, 2) and fast.stderr.count(b"allpairs: error:") == 1 and fast.stdout == b""


@pytest.mark.parametrize("tail", ["| head -c 20 > /dev/null", ">&-"])
def test_a_closed_pipe_and_a_closed_stdout_end_the_fast_path_as_the_typer_command(tail, data, tmp_path):
    many = data / "many.sets"
    many.write_text("".join(f"a b c d{i % 7}\n" for i in range(3000)))
    ends = {}
    for mode in ("typer", "fast"):
        record = tmp_path / f"ran-{mode}"
        words = [sys.executable, "-c", PROGRAM, mode, str(record), "join", "--sets", str(many), "-t", "0.5"]
        shell = f"set -o pipefail; {' '.join(map(shlex.quote, words))} {tail}; echo \"status $?\" >&2"
        run = subprocess.run(["bash", "-c", shell], capture_output=True, timeout=300)
        ends[mode] = _measured(run.stderr)
        # Ended by SIGPIPE, as cat is, the program runs no exit handler: nothing recorded then.
        assert record.read_text() == mode if record.exists() else b"status 141" in run.stderr
    assert plain_join(words[5:]) is not None
    assert ends["fast"] == ends["typer"]


#: The console script's program (allpairs.__main__.program), recording how the process ends: by os._exit,
#: without the interpreter's teardown, or by SystemExit; the first argument asks for an exit handler, or a
#: thread that is not a daemon (the interpreter waits for it: it lives until the main thread's end, so that a
#: slow run on a loaded machine still finds it running), or neither.
ENDING = ("import os, sys\n"
          "record, hook = sys.argv.pop(1), sys.argv.pop(1)\n"
          "if hook == 'atexit':\n"
          "    import atexit\n"
          "    atexit.register(lambda: open(record, 'a').write('atexit '))\n"
          "if hook == 'thread':\n"
          "    import threading\n"
          "    threading.Thread(target=threading.main_thread().join).start()\n"
          "_exit = os._exit\n"
          "os._exit = lambda code: (open(record, 'a').write(f'_exit {code}'), _exit(code))\n"
          "from allpairs.__main__ import program\n"
          "program()\n")


@pytest.mark.parametrize("hook", ["none", "atexit", "thread"])
def test_the_program_runs_the_exit_handlers_and_skips_the_teardown_unless_a_thread_runs(hook, data, tmp_path):
    record = tmp_path / "ending"
    ends = []
    for output in (["--count"], ["-o", str(tmp_path / "out.tsv")]):
        args = ["join", "--sets", str(data / "a.sets"), "-t", "0.25", "-q", *output]
        run = subprocess.run([sys.executable, "-c", ENDING, str(record), hook, *args], capture_output=True, timeout=300)
        typer, _ = _program("typer", args, tmp_path)  # main() in Python: SystemExit and the teardown, as ever
        assert (run.returncode, run.stdout, run.stderr) == (0, typer.stdout, b"")
        ends.append(record.read_text() if record.exists() else "")
        record.unlink(missing_ok=True)
        if output == ["--count"]:
            pairs = int(run.stdout)
    assert pairs > 0 and (tmp_path / "out.tsv").read_bytes().count(b"\n") == pairs + 1  # flushed and closed
    assert ends == [{"none": "_exit 0", "atexit": "atexit _exit 0", "thread": ""}[hook]] * 2


@pytest.mark.parametrize("args", [
    ["join", "--sets", "x.sets", "-t", "0.5", "--count", "-o", "out.tsv"],  # a usage error typer words
    ["join", "--sets", "x.sets", "--threshold=0.5"],
    ["join", "--sets", "x.sets", "-t0.5"],
    ["join", "--sets", "x.sets", "-t", "0.5", "-q", "--quiet"],
    ["join", "--sets", "x.sets", "-t", "0.5", "--sets"],
    ["join", "--sets", "-", "-t", "0.5"],
    ["join", "--sets", "x.sets", "-t", "-0.5"],
    ["join", "--sets", "x.sets", "-t", "0.5", "-o", "-"],
    ["join", "--sets", "x.sets", "-t", "0.5", "-j", "+1"],
    ["join", "--sets", "x.sets", "-t", "0.5", "-j", "\u0661"],
    ["join", "--sets", "x.sets", "-t", "0.5", "--", "y.sets"],
    ["join", "--sets", "x.sets", "y.sets", "-t", "0.5"],
    ["join", "--sets", "x.sets", "-t", "0.5", "-t"],
    ["join", "--sets", "x.sets", "-t", ""],
    ["join", "--sets", "", "-t", "0.5"],
    ["join", "--sets", "x.sets", "-t", "0.5", "-h"],
    ["join", "--sets", "x.sets", "-t", "0.5", "--format", "csv"],
    ["join", "x.sets", "-t", "0.5"],
    ["join", "--sets", "x.sets"],
    ["--version"], ["sets", "--lines", "x.txt"], [],
])
def test_any_other_command_line_goes_to_the_typer_app(args):
    assert plain_join(args) is None


def test_shell_completion_goes_to_the_typer_app(monkeypatch):
    monkeypatch.setenv("_ALLPAIRS_COMPLETE", "bash_complete")
    assert plain_join(["join", "--sets", "x.sets", "-t", "0.5"]) is None


WORDS = ["join", "--sets", "-t", "--threshold", "0.5", "2/3", "-q", "--quiet", "--count", "-o", "--output",
         "out.tsv", "-j", "--jobs", "2", "x.sets", "-", "--", "-h", "--lines", "-t0.5", "--threshold=0.5", "",
         "-x", "-qt", "--set", "--jobs=1", "--verbatim-cells"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=9).map(lambda words: ["join", *words]))
def test_a_command_line_the_fast_path_takes_is_one_click_reads_alike(argv):
    """Whatever the fast path takes, typer's join parses to the same values, every other option unset."""
    plain = plain_join(argv)
    if plain is None:
        return
    from typer.main import get_command

    from allpairs.cli import app

    command = get_command(app).commands["join"]
    ctx = command.make_context("join", list(argv[1:]))
    p = ctx.params
    assert PlainJoin(p["paths"][0], p["threshold"], p["quiet"], p["count"], p["output"], p["jobs"]) == plain
    assert p["sets"] and len(p["paths"]) == 1
    given_ = {name for name in p if getattr(ctx.get_parameter_source(name), "name", "") != "DEFAULT"}
    assert given_ <= {"paths", "sets", "threshold", "quiet", "count", "output", "jobs"}
