"""A signal harness: runs interrupted and terminated at random moments of every stage.

Each run either finishes (exit 0, the whole output) or ends with 128 + the
signal number and the one line for that signal on stderr; either way no
temporary file is left in the output directory and no process of the run
survives it. The moments are random (seeded) and the outcome is checked, never
the time anything took.
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

WORDS = [f"w{i}" for i in range(400)]
SEED = 10
TINY = Path(__file__).resolve().parents[1] / "datasets" / "tiny" / "corpus"

LINE = {signal.SIGINT: "allpairs: interrupted", signal.SIGTERM: "allpairs: terminated",
        signal.SIGHUP: "allpairs: hung up"}


def _corpus(path: Path, docs: int, words: int, rng: random.Random) -> None:
    """JSON Lines of random texts, a third of them copies or near-copies of others, so that
    every stage (shingle, order, join, write) has work to do."""
    texts = []
    for d in range(docs):
        if texts and rng.random() < 0.35:
            base = rng.choice(texts).split()
            base[rng.randrange(len(base))] = rng.choice(WORDS)
            texts.append(" ".join(base))
        else:
            texts.append(" ".join(rng.choice(WORDS) for _ in range(words)))
    with open(path, "w") as f:
        for d, t in enumerate(texts):
            f.write(json.dumps({"id": f"doc{d}", "text": t}) + "\n")


def _handlers_installed(pid: int) -> bool:
    """True once the program catches SIGTERM (its signal set-up is done); /proc on Linux."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    except OSError:
        pass
    return False


def _survivors(marker: str) -> list[int]:
    """Processes whose environment carries this run's marker (workers it left behind)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if marker.encode() in f.read():
                        found.append(int(entry))
            except OSError:
                pass
    return found


def _outliving(marker: str) -> list[int]:
    """The run's processes still there after up to 30 s (they take a moment to end or be reaped); each killed,
    so that none is left to the rest of the suite."""
    survivors = _survivors(marker)
    for _ in range(600):
        if not survivors:
            break
        time.sleep(0.05)
        survivors = _survivors(marker)
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    return survivors


def _run(args: list[str], out: Path | None, signum: int | None, delay: float):
    """Start the program (``-o out`` added unless ``out`` is None), send ``signum`` ``delay`` seconds
    after its signal set-up (None: let it finish); return (status, stderr, survivors)."""
    marker = f"ALLPAIRS_HARNESS={uuid.uuid4().hex}"
    env = dict(os.environ, ALLPAIRS_HARNESS=marker.split("=", 1)[1])
    proc = subprocess.Popen(
        [sys.executable, "-m", "allpairs", *args, *(["-o", str(out)] if out is not None else [])], env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        # A background job of a non-interactive shell ignores SIGINT, and so would the child.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    ready = signum is None
    if signum is not None:
        while proc.poll() is None and not ready:
            ready = _handlers_installed(proc.pid)
            time.sleep(0.005)
        time.sleep(delay)
        if proc.poll() is None:
            proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=300)
    # A program that never catches SIGTERM cannot clean up after it.
    assert ready, f"the program never set up its signal handling: status {proc.returncode}"
    survivors = _outliving(marker)
    return proc.returncode, stderr.decode(), survivors


def _check(tmp: Path, out: Path, args, signum, delay, expected: bytes | None, *, option: bool = True):
    """One run (see :func:`_run`; ``option``: name ``out`` with ``-o``, else it is in ``args``): no process
    left, no temporary file in ``tmp``, and the whole output or the signal's one line."""
    status, stderr, survivors = _run(args, out if option else None, signum, delay)
    what = f"{args} signal {signum} after {delay:.2f}s: status {status}, stderr {stderr!r}"
    assert not survivors, f"processes left behind: {survivors}; {what}"
    assert "Traceback" not in stderr, what
    leftovers = [p.name for p in tmp.iterdir() if p.name.startswith(".")]
    assert leftovers == [], f"{leftovers}; {what}"
    if status == 0:
        assert expected is None or out.read_bytes() == expected, what
    else:
        assert signum is not None and status == 128 + signum, what
        # The signal's one line comes last (the summary may precede it if the work was done).
        lines = stderr.splitlines()
        assert lines[-1:] == [LINE[signum]] and lines.count(LINE[signum]) == 1, what
        assert all(line.startswith("allpairs: ") and "error" not in line for line in lines), what
    return status


def test_the_program_sets_up_signals_before_numba_is_imported():
    # import allpairs is cheap (its names load on first use), so __main__ can set up signals first;
    # and allpairs.join stays the function when the submodule of that name loads.
    code = ("import sys, allpairs, allpairs.__main__; assert 'numba' not in sys.modules; "
            "import allpairs.pipeline; assert callable(allpairs.join) and allpairs.join.__name__ == 'join'")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_a_signal_while_the_output_module_is_half_imported_is_still_one_line():
    # The watcher thread can run while the main thread is inside ``import allpairs.output.files``:
    # the module is in sys.modules without its functions yet (a traceback came out there once).
    code = ("import sys, types, allpairs.__main__ as m; "
            "sys.modules['allpairs.output.files'] = types.ModuleType('allpairs.output.files'); m._die(15)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 143 and done.stderr == LINE[signal.SIGTERM] + "\n", done.stderr


def test_ctrl_c_while_the_program_is_still_starting_is_one_line_exit_130(tmp_path):
    # Right after the signal set-up, numba and the kernels are still being imported (the
    # first 0.3 s or so), where a KeyboardInterrupt traceback used to come out.
    (tmp_path / "d.txt").write_text("1 2 3\n")
    status = _check(tmp_path, tmp_path / "out.tsv", ["join", "--sets", "-t", "0.5", str(tmp_path / "d.txt")],
                    signal.SIGINT, 0.0, None)
    assert status == 130


@pytest.mark.parametrize("method", ["exact", "lsh"])
def test_runs_signalled_at_random_moments_end_cleanly(tmp_path, method):
    rng = random.Random(f"{SEED}-{method}")
    corpus = tmp_path / "in" / "docs.jsonl"
    corpus.parent.mkdir()
    _corpus(corpus, docs=3000, words=60, rng=rng)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "pairs.tsv"
    args = ["join", "--jsonl", "-t", "0.5", "-s", "word:2", "-m", method, str(corpus)]
    # A whole run first: the expected output and how long a run takes here (for the moments).
    t0 = time.monotonic()
    assert _check(out_dir, out, args, None, 0.0, None) == 0
    whole = time.monotonic() - t0
    expected = out.read_bytes()
    assert expected.count(b"\n") > 1000
    outcomes = []
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        out.unlink(missing_ok=True)
        outcomes.append(_check(out_dir, out, args, signum, rng.uniform(0, whole), expected))
    assert set(outcomes) <= {0, 130, 143, 129}


def test_interrupt_during_and_right_after_parallel_shingling(tmp_path):
    # Over 8 M characters: shingled by a pool of worker processes (shingles.PARALLEL_MIN_CHARS).
    from allpairs.shingles import PARALLEL_MIN_CHARS

    rng = random.Random(SEED)
    corpus = tmp_path / "in" / "big.jsonl"
    corpus.parent.mkdir()
    _corpus(corpus, docs=3000, words=PARALLEL_MIN_CHARS // 3000 // 4 + 50, rng=rng)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    args = ["join", "--jsonl", "-t", "0.9", "-s", "word:3", str(corpus)]
    for signum in (signal.SIGINT, signal.SIGTERM):
        _check(out_dir, out_dir / "pairs.tsv", args, signum, rng.uniform(0.5, 4.0), None)


def _index_build_args(corpus: Path) -> list[str]:
    return ["index", "build", "--jsonl", "-t", "0.5", "-s", "word:2", str(corpus)]


@pytest.fixture(scope="module")
def signal_corpus(tmp_path_factory) -> Path:
    corpus = tmp_path_factory.mktemp("in") / "docs.jsonl"
    _corpus(corpus, docs=3000, words=60, rng=random.Random(f"{SEED}-files"))
    return corpus


def _moments(rng: random.Random, whole: float) -> list[tuple[int, float]]:
    """A signal of each kind at a random moment, and one more in the last third (where files are written)."""
    return [(signum, rng.uniform(0, whole)) for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)] + \
        [(signal.SIGTERM, rng.uniform(2 * whole / 3, whole))]


def test_index_build_signalled_at_random_moments_leaves_the_old_index_or_the_new(tmp_path, signal_corpus):
    rng = random.Random(f"{SEED}-index-build")
    out = tmp_path / "i.idx"
    args = _index_build_args(signal_corpus)
    t0 = time.monotonic()
    assert _check(tmp_path, out, args, None, 0.0, None) == 0
    whole = time.monotonic() - t0
    expected = out.read_bytes()
    for signum, delay in _moments(rng, whole):
        out.write_bytes(b"old")
        status = _check(tmp_path, out, args, signum, delay, expected)
        # Old or new whole, never a mix: a signal can also land after the rename, before the exit (then 128 + N).
        assert out.read_bytes() == expected if status == 0 else out.read_bytes() in (b"old", expected)


def test_index_add_signalled_at_random_moments_leaves_the_old_index_or_the_new(tmp_path, signal_corpus):
    rng = random.Random(f"{SEED}-index-add")
    base = tmp_path / "base.txt"
    base.write_text("a first document\n")
    out = tmp_path / "i.idx"
    subprocess.run([sys.executable, "-m", "allpairs", "index", "build", "--lines", "-t", "0.5", "-s", "word:2",
                    str(base), "-o", str(out), "-q"], check=True, timeout=120)
    old = out.read_bytes()
    args = ["index", "add", str(out), "--jsonl", str(signal_corpus)]
    t0 = time.monotonic()
    assert _check(tmp_path, out, args, None, 0.0, None, option=False) == 0
    whole = time.monotonic() - t0
    expected = out.read_bytes()
    for signum, delay in _moments(rng, whole):
        out.write_bytes(old)
        status = _check(tmp_path, out, args, signum, delay, expected, option=False)
        # Old or new whole, never a mix: a signal can also land after the rename, before the exit (then 128 + N).
        assert out.read_bytes() == expected if status == 0 else out.read_bytes() in (old, expected)


def test_index_query_written_a_block_at_a_time_and_signalled_leaves_the_old_output_or_the_new(tmp_path):
    # 400 identical lines queried by themselves: 160,000 matches written 512 at a time (--memory 64K), so
    # that most moments fall while blocks are being written into the temporary file.
    rng = random.Random(f"{SEED}-index-query")
    inputs = tmp_path / "in"
    inputs.mkdir()
    same = inputs / "same.sets"
    same.write_text("a b c\n" * 400)
    idx = inputs / "same.idx"
    subprocess.run([sys.executable, "-m", "allpairs", "index", "build", "--sets", "-t", "0.5", str(same), "-o",
                    str(idx), "-q"], check=True, timeout=120)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "matches.tsv"
    args = ["index", "query", str(idx), "--sets", str(same), "--memory", "64K"]
    t0 = time.monotonic()
    assert _check(out_dir, out, args, None, 0.0, None) == 0
    whole = time.monotonic() - t0
    expected = out.read_bytes()
    assert expected.count(b"\n") == 160_001
    for signum, delay in _moments(rng, whole):
        out.write_bytes(b"old")
        status = _check(out_dir, out, args, signum, delay, expected)
        assert out.read_bytes() == expected if status == 0 else out.read_bytes() in (b"old", expected)


def test_compare_plot_signalled_at_random_moments_leaves_all_its_files_old_or_all_new(tmp_path, signal_corpus):
    # --plot writes two pictures and --missed the pairs LSH missed: one rename of all three.
    rng = random.Random(f"{SEED}-plot")
    out, chords, missed = tmp_path / "p.png", tmp_path / "p-chords.png", tmp_path / "missed.tsv"
    args = ["compare", "--jsonl", "-t", "0.5", "-s", "word:2", str(signal_corpus), "--plot", str(out),
            "--missed", str(missed)]
    t0 = time.monotonic()
    assert _check(tmp_path, out, args, None, 0.0, None, option=False) == 0
    whole = time.monotonic() - t0
    files = (out, chords, missed)
    expected = tuple(f.read_bytes() for f in files)
    for signum, delay in _moments(rng, whole):
        for f in files:
            f.write_bytes(b"old")
        status = _check(tmp_path, out, args, signum, delay, expected[0], option=False)
        written = tuple(f.read_bytes() for f in files)
        assert written == expected if status == 0 else written == (b"old",) * 3


def test_the_index_and_picture_writers_register_their_temporary_files_with_the_watcher(tmp_path, monkeypatch):
    # What the watcher removes on a signal is what is registered: check it at a moment inside each write.
    from allpairs.index import SearchIndex
    from allpairs.output import files as output

    seen = []
    real_write = output.Sink.write

    def write(self, data):
        seen.append([os.path.basename(p).decode() for p in output._pending if os.path.exists(p)])
        return real_write(self, data)

    monkeypatch.setattr(output.Sink, "write", write)
    SearchIndex.build([["a", "b"], ["b", "c"]], 0.5).save(tmp_path / "i.idx")
    assert seen and all(len(names) == 1 and names[0].startswith(".i.idx.") for names in seen)
    from allpairs.report import compare
    from allpairs.report.plot import plot_comparison

    seen.clear()
    plot_comparison(compare([["a", "b", "c"], ["a", "b", "d"], ["x", "y"]], 0.5), tmp_path / "p.svg")
    assert seen and all(sorted(n.split(".")[1] for n in names) == ["p", "p-chords"] for names in seen)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["i.idx", "p-chords.svg", "p.svg"]


#: A writer that is SIGKILLed in the middle of writing (nothing can clean up after SIGKILL).
KILLED_WRITER = """
import os, signal, sys
from allpairs.output.files import open_output
with open_output(sys.argv[1]) as out:
    out.write(b"partial")
    if sys.argv[2] == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    print("writing", flush=True)
    sys.stdin.read()
"""


def _parts(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.name.endswith(".part"))


def test_a_temporary_file_left_by_a_killed_run_is_removed_by_the_next_run(tmp_path, signal_corpus):
    out = tmp_path / "i.idx"
    killed = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(out), "kill"], timeout=120)
    assert killed.returncode == -signal.SIGKILL
    (stale,) = _parts(tmp_path)
    assert stale.name.startswith(".i.idx.") and stale.name.endswith(".allpairs.part")
    # A run still writing holds its own temporary file: the next run leaves that one alone.
    live = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(out), "wait"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert live.stdout.readline() == "writing\n"
        an_hour_ago = time.time() - 3600
        for p in _parts(tmp_path):  # older than any write in progress could be
            os.utime(p, (an_hour_ago, an_hour_ago))
        (mine,) = [p for p in _parts(tmp_path) if p != stale]
        r = subprocess.run([sys.executable, "-m", "allpairs", *_index_build_args(signal_corpus), "-o", str(out), "-q"],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0 and r.stderr == ""
        assert _parts(tmp_path) == [mine]
    finally:
        live.kill()
        live.wait(60)


def _spark_scratch(tmp_path: Path) -> tuple[list[Path], dict]:
    """Folders for the scratch of a Spark run's JVM (spark.local.dir: blockmgr-*, spark-*; java.io.tmpdir:
    artifacts-*), and the environment that puts it there."""
    local, tmp = tmp_path / "spark-local", tmp_path / "java-tmp"
    local.mkdir()
    tmp.mkdir()
    return [local, tmp], dict(os.environ, SPARK_LOCAL_DIRS=str(local), JAVA_TOOL_OPTIONS=f"-Djava.io.tmpdir={tmp}")


def left_in(folders: list[Path], wait_s: float = 60) -> list[str]:
    """What is still in ``folders`` once they are empty or ``wait_s`` has passed (a JVM ends, and removes its
    scratch, just after the run that started it)."""
    deadline = time.monotonic() + wait_s
    while True:
        left = sorted(str(p.relative_to(f.parent)) for f in folders for p in f.iterdir())
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def _needs_spark() -> None:
    """Skip, saying why, where the Spark engine cannot start: no pyspark, or no Java runtime."""
    pytest.importorskip("pyspark", reason="the Spark engine needs the spark extra")
    from allpairs.engines.spark.session import find_java

    if find_java() is None:
        pytest.skip("no Java runtime for Spark")


def _spark_tmp(tmp_path: Path) -> tuple[Path, str]:
    """For a Spark run's signal test (skipped where Spark cannot start): a TMPDIR of its own, and a marker
    for the environment of its processes."""
    _needs_spark()
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    return tmp, uuid.uuid4().hex


@pytest.mark.long_running
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_while_spark_starts_leaves_no_folder_of_the_jvms_port_and_secret(tmp_path, signum):
    # pyspark writes where the JVM listens, and its secret, in a folder of its own (tempfile.mkdtemp) and
    # removes it in a finally once read; the watcher ends the program at once on a signal, so a signal
    # during the JVM's start left that folder (72 bytes: port and secret) in TMPDIR.
    tmp, marker = _spark_tmp(tmp_path)
    scratch, env = _spark_scratch(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "allpairs", "join", "--engine", "spark", "--master", "local[1]", "-t", "0.5",
         "-s", "word:1", "-q", str(TINY), "--count"], env=dict(env, TMPDIR=str(tmp), ALLPAIRS_HARNESS=marker),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        # A background job of a non-interactive shell ignores SIGINT, and so would the child.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    def driver_jvm() -> bool:
        """The driver's JVM has started (not Spark's launcher, which only prints its command)."""
        for pid in _survivors(marker):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            if b"org.apache.spark.deploy.SparkSubmit" in argv and b"org.apache.spark.launcher.Main" not in argv:
                return True
        return False

    deadline = time.monotonic() + 120
    while proc.poll() is None and not driver_jvm() and time.monotonic() < deadline:
        time.sleep(0.005)
    # Signalled while the JVM starts: pyspark's folder is there, the JVM writes in it when it listens.
    assert proc.poll() is None and any(tmp.iterdir()), f"the JVM's start was never seen: status {proc.poll()}"
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signum and stderr.decode().splitlines() == [LINE[signum]], stderr
    assert sorted(p.name for p in tmp.rglob("*")) == []
    survivors = _outliving(marker)
    # Not a JVM left with its gateway and no driver (its folder gone, it could not say where it listens).
    assert survivors == []


# The child signals itself in pyspark's launch_gateway, between its mkdtemp (the folder of the JVM's port and
# secret) and the JVM's spawn: its mkstemp in that folder is the next call.
BEFORE_SPAWN = """
import os, signal, sys, tempfile, time
made, signum = tempfile.mkstemp, int(sys.argv[1])

def mkstemp(*args, **kwargs):
    if kwargs.get("dir"):  # pyspark's call, in the folder it has just made
        os.kill(os.getpid(), signum)
        time.sleep(30)  # the watcher ends the process meanwhile
    return made(*args, **kwargs)

tempfile.mkstemp = mkstemp
sys.argv = ["allpairs", *sys.argv[2:]]
from allpairs.__main__ import program
program()
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_between_pysparks_folder_and_the_jvms_spawn_leaves_no_folder(tmp_path, signum):
    # pyspark registers nothing: a signal after its mkdtemp and before the JVM's spawn (where the folder
    # was registered with the watcher) left the empty folder in TMPDIR. It is now registered as it is made.
    tmp, marker = _spark_tmp(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-c", BEFORE_SPAWN, str(int(signum)), "join", "--engine", "spark", "--master", "local[1]",
         "-t", "0.5", "-s", "word:1", "-q", str(TINY), "--count"],
        env=dict(os.environ, TMPDIR=str(tmp), ALLPAIRS_HARNESS=marker), capture_output=True, timeout=120,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.returncode == 128 + signum and proc.stderr.decode().splitlines() == [LINE[signum]], proc.stderr
    assert sorted(p.name for p in tmp.rglob("*")) == [] and proc.stdout == b""
    assert _outliving(marker) == []  # no JVM was spawned


@pytest.mark.long_running
def test_a_sigterm_while_spark_writes_its_dataset_leaves_no_partial_dataset(tmp_path):
    # Spark writes into OUT/_temporary and renames its task files at the end: a SIGTERM there once left
    # OUT/_temporary behind. The dataset is now written in a folder beside OUT, moved into place at the
    # end; the watcher kills the JVM (its tasks would go on writing), then removes that folder.
    _needs_spark()
    corpus = tmp_path / "in" / "docs.jsonl"
    corpus.parent.mkdir()
    _corpus(corpus, docs=600, words=40, rng=random.Random(f"{SEED}-spark"))
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "pairs"
    marker = uuid.uuid4().hex
    scratch, env = _spark_scratch(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "allpairs", "join", "--engine", "spark", "--master", "local[2]", "--jsonl", "-t", "0.5",
         "-s", "word:2", "-q", str(corpus), "-o", str(out)], env=dict(env, ALLPAIRS_HARNESS=marker),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        # A background job of a non-interactive shell ignores SIGINT, and so would the child.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    temporary = None
    deadline = time.monotonic() + 240
    while proc.poll() is None and temporary is None and time.monotonic() < deadline:
        temporary = next((p / "_temporary" for p in out_dir.iterdir() if (p / "_temporary").is_dir()), None)
        time.sleep(0.01)
    assert temporary is not None, f"the write stage was never seen: status {proc.poll()}"
    assert temporary.parent.name.startswith(".pairs.") and temporary.parent.name.endswith(".allpairs.part")
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 143 and stderr.decode().splitlines() == [LINE[signal.SIGTERM]], stderr
    assert list(out_dir.iterdir()) == []
    survivors = _outliving(marker)
    assert survivors == []
    # Its JVM ended by SIGTERM, not SIGKILL: its shutdown hooks removed its scratch folders (at a normal end:
    # test_spark.py's standalone-cluster test).
    assert left_in(scratch) == []
