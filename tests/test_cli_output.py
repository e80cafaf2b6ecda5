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


def run(*args, input=None):
    return CliRunner().invoke(app, [str(a) for a in args], input=input, prog_name="allpairs")


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


@pytest.mark.parametrize("command", [["sets", "-s", "word:1", "-q", "-o"], ["dedup", "-t", "0.5", "-s", "word:1", "-q", "-o"],
                                     ["compare", "-t", "0.5", "-s", "word:1", "-q", "--missed"]])
def test_other_commands_refuse_a_bad_output_before_reading_and_keep_the_trailing_slash(tmp_path, command,
                                                                                        monkeypatch):
    def never(*a, **k):
        raise AssertionError("the corpus was read before the output was checked")

    for module in ("sets", "dedup", "compare"):
        monkeypatch.setattr(f"allpairs.cli.{module}.read_input", never)
    r = run(*command, tmp_path / "no" / "such" / "x.tsv", TINY)
    assert r.exit_code == 1 and "does not exist" in one_error_line(r.stderr)
    r = run(*command, f"{tmp_path}/newdir/", TINY)
    assert r.exit_code == 1 and "give a file name" in one_error_line(r.stderr)
    assert list(tmp_path.iterdir()) == []


def test_index_query_refuses_a_bad_output_before_reading_the_queries(tmp_path):
    idx = tmp_path / "tiny.idx"
    r = run("index", "build", "-t", "0.5", "-s", "word:1", "-q", TINY, "-o", idx)
    assert r.exit_code == 0, r.stderr
    r = run("index", "query", idx, "-t", "0.5", "-q", TINY, "-o", f"{tmp_path}/newdir/")
    assert r.exit_code == 1 and "give a file name" in one_error_line(r.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.idx"]


# ---- every command that writes a file, against the same targets -------------------------------------

#: Each command that writes a file: its arguments given the output's name (compare --plot also
#: writes NAME-chords.png beside it; both get the target).
WRITERS = {
    "join": lambda out, idx: [*JOIN, TINY, "-o", out],
    "sets": lambda out, idx: ["sets", "-s", "word:1", "-q", TINY, "-o", out],
    "dedup": lambda out, idx: ["dedup", "-t", "0.5", "-s", "word:1", "-q", TINY, "-o", out],
    "index query": lambda out, idx: ["index", "query", idx, TINY, "-q", "-o", out],
    "index build": lambda out, idx: ["index", "build", "-t", "0.5", "-s", "word:1", "-q", TINY, "-o", out],
    "compare --plot": lambda out, idx: ["compare", "-t", "0.5", "-s", "word:1", "-q", TINY, "--plot", out],
    # One band of 8 rows: LSH misses 7 pairs of the tiny corpus, so the file has rows.
    "compare --missed": lambda out, idx: ["compare", "-t", "0.5", "-s", "word:1", "-q", "-k", "8", "-b", "1", "-r",
                                          "8", TINY, "--missed", out],
}


@pytest.fixture(scope="module")
def tiny_index(tmp_path_factory) -> Path:
    idx = tmp_path_factory.mktemp("idx") / "tiny.idx"
    assert run("index", "build", "-t", "0.5", "-s", "word:1", "-q", TINY, "-o", idx).exit_code == 0
    return idx


@pytest.fixture(scope="module")
def written(tmp_path_factory, tiny_index) -> dict[str, list[bytes]]:
    """What each writer writes to a new regular file (the picture and its chords for compare)."""
    out = {}
    for name, args in WRITERS.items():
        d = tmp_path_factory.mktemp("ref")
        paths = _outputs(d, name)
        r = run(*args(paths[0], tiny_index))
        assert r.exit_code == 0, (name, r.stderr)
        out[name] = [p.read_bytes() for p in paths]
        assert all(out[name]), name
    return out


def _outputs(directory: Path, writer: str) -> list[Path]:
    """The files a writer writes when given ``directory/out`` (``out.png`` and ``out-chords.png`` for compare)."""
    if writer == "compare --plot":
        return [directory / "out.png", directory / "out-chords.png"]
    return [directory / "out"]


def _fifo_readers(paths: list[Path]) -> tuple[list[threading.Thread], list]:
    got = [None] * len(paths)

    def read(k: int) -> None:
        got[k] = paths[k].read_bytes()

    threads = [threading.Thread(target=read, args=(k,), daemon=True) for k in range(len(paths))]
    for t in threads:
        t.start()
    return threads, got


@pytest.mark.parametrize("writer", list(WRITERS))
def test_every_writer_writes_through_a_link_to_a_device_and_keeps_the_link(tmp_path, writer, tiny_index):
    paths = _outputs(tmp_path, writer)
    for p in paths:
        p.symlink_to(os.devnull)
    r = run(*WRITERS[writer](paths[0], tiny_index))
    assert r.exit_code == 0, r.stderr
    assert all(p.is_symlink() and stat.S_ISCHR(os.stat(p).st_mode) for p in paths)
    assert sorted(tmp_path.iterdir()) == sorted(paths)


@pytest.mark.parametrize("writer", list(WRITERS))
def test_every_writer_writes_through_a_fifo(tmp_path, writer, tiny_index, written):
    paths = _outputs(tmp_path, writer)
    for p in paths:
        os.mkfifo(p)
    threads, got = _fifo_readers(paths)
    r = run(*WRITERS[writer](paths[0], tiny_index))
    assert r.exit_code == 0, r.stderr
    for t in threads:
        t.join(60)
    assert all(stat.S_ISFIFO(os.lstat(p).st_mode) for p in paths), "a FIFO was replaced by a file"
    assert got == written[writer]


@pytest.mark.parametrize("dangling", [False, True], ids=["link", "dangling link"])
@pytest.mark.parametrize("writer", list(WRITERS))
def test_every_writer_replaces_a_link_s_target_and_keeps_the_link(tmp_path, writer, dangling, tiny_index, written):
    (tmp_path / "real").mkdir()
    targets = _outputs(tmp_path / "real", writer)
    links = _outputs(tmp_path, writer)
    for link, target in zip(links, targets):
        if not dangling:
            target.write_text("old\n")
        link.symlink_to(target)
    r = run(*WRITERS[writer](links[0], tiny_index))
    assert r.exit_code == 0, r.stderr
    assert all(link.is_symlink() for link in links)
    assert [t.read_bytes() for t in targets] == written[writer]
    assert sorted((tmp_path / "real").iterdir()) == sorted(targets)


@pytest.mark.parametrize("writer", list(WRITERS))
def test_every_writer_keeps_the_mode_of_the_file_it_replaces(tmp_path, writer, tiny_index, written):
    paths = _outputs(tmp_path, writer)
    for p in paths:
        p.write_text("old\n")
        p.chmod(0o600)
    r = run(*WRITERS[writer](paths[0], tiny_index))
    assert r.exit_code == 0, r.stderr
    assert [stat.S_IMODE(p.stat().st_mode) for p in paths] == [0o600] * len(paths)
    assert [p.read_bytes() for p in paths] == written[writer]


@pytest.mark.parametrize("writer", list(WRITERS))
def test_every_writer_refuses_a_read_only_file_and_keeps_it(tmp_path, writer, tiny_index):
    paths = _outputs(tmp_path, writer)
    for p in paths:
        p.write_text("old\n")
    paths[-1].chmod(0o444)  # compare: the chords picture alone is read-only; neither file is touched
    r = run(*WRITERS[writer](paths[0], tiny_index))
    assert r.exit_code == 1
    assert f"{paths[-1]} is read-only (mode 0444)" in one_error_line(r.stderr)
    assert [p.read_text() for p in paths] == ["old\n"] * len(paths)
    assert sorted(tmp_path.iterdir()) == sorted(paths)


@pytest.mark.parametrize("writer", list(WRITERS))
def test_every_writer_names_the_file_when_the_device_is_full(tmp_path, writer, tiny_index):
    paths = _outputs(tmp_path, writer)
    for p in paths:
        p.symlink_to("/dev/full")
    r = run(*WRITERS[writer](paths[0], tiny_index))
    assert r.exit_code == 1
    assert one_error_line(r.stderr) == f"allpairs: error: cannot write {paths[0]}: No space left on device"
    assert sorted(tmp_path.iterdir()) == sorted(paths)


@pytest.mark.parametrize("writer", ["index build", "compare --plot"])
def test_every_writer_names_the_file_over_the_file_size_limit_and_keeps_the_old_one(tmp_path, writer, tiny_index):
    # ulimit -f: the write fails half-way (EFBIG, as ENOSPC would); it used to say "cannot write standard output".
    import resource

    paths = _outputs(tmp_path, writer)
    for p in paths:
        p.write_text("old\n")
    limit = 2048
    r = subprocess.run([sys.executable, "-m", "allpairs", *map(str, WRITERS[writer](paths[0], tiny_index))],
                       capture_output=True, timeout=120,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)))
    assert r.returncode == 1, r.stderr
    assert one_error_line(r.stderr.decode()) == f"allpairs: error: cannot write {paths[0]}: File too large"
    assert [p.read_text() for p in paths] == ["old\n"] * len(paths)
    assert sorted(tmp_path.iterdir()) == sorted(paths)


# ---- index add: INDEX is read, then replaced as any output is ----------------------------------------

def _grown(tmp_path: Path) -> Path:
    idx = tmp_path / "real" / "i.idx"
    idx.parent.mkdir()
    assert run("index", "build", "-t", "0.5", "-s", "word:1", "-q", TINY, "-o", idx).exit_code == 0
    return idx


def test_index_add_through_a_link_replaces_the_target_and_keeps_the_link(tmp_path):
    idx = _grown(tmp_path)
    link = tmp_path / "i.idx"
    link.symlink_to(idx)
    r = run("index", "add", link, "--lines", "-q", "-", input="new set of tokens\n")
    assert r.exit_code == 0, r.stderr
    assert link.is_symlink() and sorted(p.name for p in idx.parent.iterdir()) == ["i.idx"]
    from allpairs.index import SearchIndex

    assert SearchIndex.load(idx).num_docs == 7


def test_index_add_keeps_the_mode_of_the_index(tmp_path):
    idx = _grown(tmp_path)
    idx.chmod(0o600)
    r = run("index", "add", idx, "--lines", "-q", "-", input="new set\n")
    assert r.exit_code == 0, r.stderr
    assert stat.S_IMODE(idx.stat().st_mode) == 0o600


def test_index_add_refuses_a_read_only_index_before_reading_and_keeps_it(tmp_path, monkeypatch):
    idx = _grown(tmp_path)
    idx.chmod(0o444)
    before = idx.read_bytes()
    monkeypatch.setattr("allpairs.cli.index.read_input",
                        lambda *a: (_ for _ in ()).throw(AssertionError("the input was read first")))
    r = run("index", "add", idx, "--lines", "-q", "-", input="new set\n")
    assert r.exit_code == 1
    assert f"index {idx} is read-only (mode 0444)" in one_error_line(r.stderr)
    assert idx.read_bytes() == before and sorted(p.name for p in idx.parent.iterdir()) == ["i.idx"]


def test_index_add_names_the_index_over_the_file_size_limit_and_keeps_it(tmp_path):
    import resource

    idx = _grown(tmp_path)
    before = idx.read_bytes()
    limit = len(before) + 1024  # room for the old index, not for the new one
    big = tmp_path / "big.txt"
    big.write_text("".join(f"w{k} w{k + 1} w{k + 2}\n" for k in range(2000)))
    r = subprocess.run([sys.executable, "-m", "allpairs", "index", "add", str(idx), "--lines", str(big), "-q"],
                       capture_output=True, timeout=120,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)))
    assert r.returncode == 1, r.stderr
    assert one_error_line(r.stderr.decode()) == f"allpairs: error: cannot write {idx}: File too large"
    assert idx.read_bytes() == before and sorted(p.name for p in idx.parent.iterdir()) == ["i.idx"]
