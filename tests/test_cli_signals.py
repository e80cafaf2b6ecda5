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


def _run(args: list[str], out: Path, signum: int | None, delay: float):
    """Start the program, send ``signum`` ``delay`` seconds after its signal set-up (None: let
    it finish); return (status, stderr, survivors)."""
    marker = f"ALLPAIRS_HARNESS={uuid.uuid4().hex}"
    env = dict(os.environ, ALLPAIRS_HARNESS=marker.split("=", 1)[1])
    proc = subprocess.Popen(
        [sys.executable, "-m", "allpairs", *args, "-o", str(out)], env=env,
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
    survivors = _survivors(marker)
    for _ in range(600):  # killed workers take a moment to be reaped
        if not survivors:
            break
        time.sleep(0.05)
        survivors = _survivors(marker)
    for pid in survivors:  # do not leave them to the rest of the suite
        os.kill(pid, signal.SIGKILL)
    return proc.returncode, stderr.decode(), survivors


def _check(tmp: Path, out: Path, args, signum, delay, expected: bytes | None):
    status, stderr, survivors = _run(args, out, signum, delay)
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
            "import allpairs.join; assert callable(allpairs.join) and allpairs.join.__name__ == 'join'")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


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
