"""Which processes a run starts may outlive it.

The ``allpairs`` program asks Linux to kill every process forked from the run
when the run ends (PR_SET_PDEATHSIG, :mod:`allpairs.__main__`), so that no
worker is left behind. Spark's JVM is the exception: killed, it leaves its
scratch folders under ``spark.local.dir`` (``blockmgr-*`` with the shuffle
files, ``spark-*``, ``artifacts-*``) behind; left alone it ends by itself when
the run's end closes its stdin, and removes them as it goes. Its start runs
inside :func:`ending_by_itself`.
"""
from __future__ import annotations

import contextlib

#: Above 0 while a child that ends by itself is being started: its fork gets no PR_SET_PDEATHSIG.
_depth = 0


def dies_with_the_run() -> bool:
    """Whether a process forked now is to be killed when the run ends."""
    return _depth == 0


@contextlib.contextmanager
def ending_by_itself():
    """Processes forked in this block are not killed when the run ends."""
    global _depth
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
