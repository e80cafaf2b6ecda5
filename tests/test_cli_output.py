"""Where `-o` and stdout write: devices, FIFOs, links, modes, full disks, closed streams, long names.

Devices are reached through a symlink in the test's own directory, so that a
regression replaces the link, never the system's /dev/null.
"""
from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from allpairs.cli import app

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "datasets" / "tiny" / "corpus"
GOLDEN = REPO / "datasets" / "tiny" / "golden-word1-t0.5.tsv"
JOIN = ["join", "-t", "0.5", "-s", "word:1", "-q"]


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args], prog_name="allpairs")


def run_program(shell_tail: str, *args, **kwargs) -> subprocess.CompletedProcess:
    """The real program in a shell, for what only a process can show (closed fds, pipes)."""
    cmd = " ".join(f"'{a}'" for a in [sys.executable, "-m", "allpairs", *map(str, args)]) + " " + shell_tail
    return subprocess.run(["sh", "-c", cmd], capture_output=True, timeout=120, **kwargs)


def one_error_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("allpairs: error: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_output_through_a_link_to_dev_null_writes_to_the_device_and_keeps_the_link(tmp_path):
    link = tmp_path / "null"
    link.symlink_to(os.devnull)
    r = run(*JOIN, "-o", link, TINY)
    assert r.exit_code == 0, r.stderr
    assert link.is_symlink() and stat.S_ISCHR(os.stat(link).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]


def test_output_to_a_full_device_is_one_line_exit_1(tmp_path):
    link = tmp_path / "full"
    link.symlink_to("/dev/full")
    r = run(*JOIN, "-o", link, TINY)
    assert r.exit_code == 1
    assert "No space left on device" in one_error_line(r.stderr)
    assert link.is_symlink() and sorted(p.name for p in tmp_path.iterdir()) == ["full"]


def test_output_to_a_fifo_is_written_through_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    r = run(*JOIN, "-o", fifo, TINY)
    assert r.exit_code == 0, r.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced by a file"
    reader.join(30)
    assert got == [GOLDEN.read_bytes()]


def test_output_through_a_symlink_replaces_the_target_and_keeps_the_link(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "pairs.tsv"
    target.write_text("old\n")
    link = tmp_path / "pairs.tsv"
    link.symlink_to(target)
    r = run(*JOIN, "-o", link, TINY)
    assert r.exit_code == 0, r.stderr
    assert link.is_symlink() and target.read_text() == GOLDEN.read_text()
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["pairs.tsv"]


def test_overwriting_keeps_the_mode_of_the_existing_file(tmp_path):
    out = tmp_path / "pairs.tsv"
    out.write_text("old\n")
    out.chmod(0o600)
    r = run(*JOIN, "-o", out, TINY)
    assert r.exit_code == 0, r.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o600 and out.read_text() == GOLDEN.read_text()


def test_a_read_only_output_file_is_refused_before_the_work_and_kept(tmp_path):
    out = tmp_path / "pairs.tsv"
    out.write_text("old\n")
    out.chmod(0o444)
    r = run(*JOIN, "-o", out, TINY)
    assert r.exit_code == 1
    assert "read-only" in one_error_line(r.stderr)
    assert out.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["pairs.tsv"]


def test_an_output_name_ending_in_a_slash_is_refused_and_nothing_is_created(tmp_path):
    r = run(*JOIN, "-o", f"{tmp_path}/newdir/", TINY)
    assert r.exit_code == 1
    assert "give a file name" in one_error_line(r.stderr)
    assert list(tmp_path.iterdir()) == []
    r = run(*JOIN, "-o", tmp_path, TINY)
    assert r.exit_code == 1 and "is a directory" in one_error_line(r.stderr)


def test_an_output_name_too_long_is_one_line(tmp_path):
    r = run(*JOIN, "-o", tmp_path / ("x" * 300), TINY)
    assert r.exit_code == 1
    assert "File name too long" in one_error_line(r.stderr)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("length", [241, 250, 255])
def test_an_output_name_that_fits_is_written_although_the_temporary_suffix_would_not(tmp_path, length):
    out = tmp_path / ("y" * length)
    r = run(*JOIN, "-o", out, TINY)
    assert r.exit_code == 0, r.stderr
    assert out.read_text() == GOLDEN.read_text() and list(tmp_path.iterdir()) == [out]


def test_a_missing_output_directory_is_refused_before_the_work(tmp_path):
    (tmp_path / "empty").mkdir()
    # The corpus is empty: had the input been read first, the error would be about it.
    r = run(*JOIN, "-o", tmp_path / "no" / "x.tsv", tmp_path / "empty")
    assert r.exit_code == 1
    assert "does not exist" in one_error_line(r.stderr)


def test_stdout_on_a_full_device_is_one_line_exit_1():
    r = run_program(">/dev/full", *JOIN, TINY)
    assert r.returncode == 1
    assert "No space left on device" in one_error_line(r.stderr.decode())


def test_closed_stdout_and_closed_stdin_are_one_line_exit_1(tmp_path):
    r = run_program(">&-", *JOIN, TINY)
    assert r.returncode == 1
    assert "standard output is closed" in one_error_line(r.stderr.decode())
    r = run_program("<&-", "join", "--sets", "-t", "0.5", "-")
    assert r.returncode == 1
    assert "stdin is closed" in one_error_line(r.stderr.decode())


def test_a_closed_pipe_ends_quietly_as_cat_does(tmp_path):
    # 3000 identical sets: 4.5 M pairs, far more than a pipe holds; cat of a file as large.
    f = tmp_path / "sets.dat"
    f.write_text("1 2 3\n" * 3000)
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * (1 << 20) + b"\n" + b"y" * (8 << 20))
    statuses = []
    for program in ([sys.executable, "-m", "allpairs", "join", "--sets", "-t", "0.5", "-q", str(f)],
                    ["cat", str(big)]):
        proc = subprocess.Popen(program, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        proc.stdout.readline()
        proc.stdout.close()
        _, stderr = proc.communicate(timeout=120)
        assert stderr == b"", stderr
        statuses.append(proc.returncode)
    assert statuses == [-13, -13]  # ended by SIGPIPE, 141 in the shell


def test_output_to_a_stream_of_the_process_is_written_through(tmp_path):
    # /dev/fd/N (like /dev/stdout) leads through /proc to a file this process holds open:
    # write to it, appending, never replace what it points at.
    f = tmp_path / "log.txt"
    f.write_text("first\n")
    inode = f.stat().st_ino
    with open(f, "a") as held:
        r = run(*JOIN, "-o", f"/dev/fd/{held.fileno()}", TINY)
    assert r.exit_code == 0, r.stderr
    assert f.stat().st_ino == inode and f.read_text() == "first\n" + GOLDEN.read_text()


def test_a_write_error_on_a_regular_file_is_one_line_and_keeps_the_old_file(tmp_path):
    # A file-size limit stands in for a full disk: the write fails half-way (EFBIG, as ENOSPC would).
    import resource

    f = tmp_path / "sets.dat"
    f.write_text("1 2 3\n" * 3000)  # 4.5 M pairs, far over the limit
    (tmp_path / "out").mkdir()
    target = tmp_path / "out" / "pairs.tsv"
    target.write_text("old\n")
    limit = 1 << 20
    r = subprocess.run([sys.executable, "-m", "allpairs", "join", "--sets", "-t", "0.5", "-q", "-o", str(target),
                        str(f)], capture_output=True, timeout=120,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)))
    assert r.returncode == 1, r.stderr
    assert "File too large" in one_error_line(r.stderr.decode())
    assert target.read_text() == "old\n" and [p.name for p in target.parent.iterdir()] == ["pairs.tsv"]


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_overwriting_keeps_the_owner_of_the_existing_file(tmp_path):
    out = tmp_path / "pairs.tsv"
    out.write_text("old\n")
    os.chown(out, 4321, 4321)
    r = run(*JOIN, "-o", out, TINY)
    assert r.exit_code == 0, r.stderr
    assert (out.stat().st_uid, out.stat().st_gid) == (4321, 4321) and out.read_text() == GOLDEN.read_text()


@pytest.mark.parametrize("command", [["sets", "-s", "word:1", "-q"], ["dedup", "-t", "0.5", "-s", "word:1", "-q"]])
def test_other_commands_refuse_a_bad_output_before_reading_and_keep_the_trailing_slash(tmp_path, command,
                                                                                        monkeypatch):
    def never(*a, **k):
        raise AssertionError("the corpus was read before the output was checked")

    for module in ("sets", "dedup"):
        monkeypatch.setattr(f"allpairs.cli.{module}.read_input", never)
    r = run(*command, "-o", tmp_path / "no" / "such" / "x.tsv", TINY)
    assert r.exit_code == 1 and "does not exist" in one_error_line(r.stderr)
    r = run(*command, "-o", f"{tmp_path}/newdir/", TINY)
    assert r.exit_code == 1 and "give a file name" in one_error_line(r.stderr)
    assert list(tmp_path.iterdir()) == []


def test_index_query_refuses_a_bad_output_before_reading_the_queries(tmp_path):
    idx = tmp_path / "tiny.idx"
    r = run("index", "build", "-t", "0.5", "-s", "word:1", "-q", TINY, "-o", idx)
    assert r.exit_code == 0, r.stderr
    r = run("index", "query", idx, "-t", "0.5", "-q", TINY, "-o", f"{tmp_path}/newdir/")
    assert r.exit_code == 1 and "give a file name" in one_error_line(r.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.idx"]
