"""Shingling worker processes end with the process that started them, however it ends (issue 10, item 5)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

# The parent starts a pool the way shingle_texts does, prints its workers' pids, and waits.
PARENT = """
import os, sys, time
from allpairs.shingles import pool as shingle_pool
pool = shingle_pool.worker_pool(2)
pids = sorted(set(pool.submit(os.getpid).result() for _ in range(8)))
futures = [pool.submit(time.sleep, 120) for _ in range(2)]
print(" ".join(map(str, pids)), flush=True)
time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_shingling_workers_end_when_the_parent_is_killed(sig):
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    try:
        workers = [int(p) for p in parent.stdout.readline().split()]
        assert workers and all(_alive(p) for p in workers)
        os.kill(parent.pid, sig)
        parent.wait(timeout=30)
        deadline = time.monotonic() + 30
        while any(_alive(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(p) for p in workers), f"workers {workers} outlived their parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
