"""Memory that the C allocator holds after large arrays are freed, given back to the system between stages.

glibc serves a large allocation from its heap once a larger one was freed
(its mmap threshold rises, up to 32 MiB), and memory freed there stays with
the process: a stage's freed work arrays would count again in the next
stage's peak.  :func:`release` hands such memory back (``malloc_trim``);
elsewhere than glibc it does nothing.
"""
from __future__ import annotations

import ctypes
import functools


@functools.lru_cache(maxsize=1)
def _malloc_trim():
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None


def release() -> None:
    """Give freed heap memory back to the system (glibc's ``malloc_trim(0)``)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
