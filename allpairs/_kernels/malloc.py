"""Memory for large work arrays: large pages for them (:func:`large_empty`), and what the C allocator holds
after large arrays are freed, given back to the system between stages (:func:`release`).

glibc serves a large allocation from its heap once a larger one was freed
(its mmap threshold rises, up to 32 MiB), and memory freed there stays with
the process: a stage's freed work arrays would count again in the next
stage's peak.  :func:`release` hands such memory back (``malloc_trim``);
elsewhere than glibc it does nothing.
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import mmap
import os

import numpy as np

#: A large page (x86-64, arm64 with 4 KiB pages: a PMD) and the smallest array given large pages.
LARGE_PAGE = 1 << 21
LARGE_FROM = 1 << 20
#: The smallest of a thread's scratch arrays given large pages: made anew for each join (and each thread), so
#: even 32 small pages' faults (~1.3 microseconds each) cost more than a large page's one (~35).
SCRATCH_FROM = 1 << 17
_LARGE_PAGES = hasattr(mmap, "MADV_HUGEPAGE") and hasattr(mmap, "MAP_ANONYMOUS")


#: False inside :func:`ordinary_pages`.
_large_pages_wanted = True


@contextlib.contextmanager
def ordinary_pages():
    """:func:`large_empty` as ``np.empty`` while it lasts: for a Spark task's body, whose memory is mostly new to
    its worker (:func:`allpairs.engines.spark.arrow.small_pages` says why)."""
    global _large_pages_wanted
    was, _large_pages_wanted = _large_pages_wanted, False
    try:
        yield
    finally:
        _large_pages_wanted = was


def large_empty(n: int, dtype, smallest: int = LARGE_FROM) -> np.ndarray:
    """``np.empty(n, dtype)``, of large pages (2 MiB: one page fault where there would be 512) when it
    takes at least ``smallest`` bytes and the system gives them (Linux's transparent huge pages,
    in "always" or "madvise" mode); else as numpy allocates it.

    numpy asks for large pages for 4 MiB and more, but within memory from malloc, whose first and last
    2 MiB-aligned pages are not whole: 5.7 MiB of Kosarak's keys took ~480 page faults before their first
    large page, ~1.3 microseconds each on a virtual machine (a large page: ~35 microseconds for 2 MiB).
    Here the mapping is a whole number of large pages, which Linux aligns on a large page (6.7 and later).
    Pages never written take no memory, as with ``np.empty``; a large page written at all takes 2 MiB.
    """
    dtype = np.dtype(dtype)
    size = n * dtype.itemsize
    if size < smallest or not _LARGE_PAGES or not _large_pages_wanted:
        return np.empty(n, dtype)
    try:
        pages = mmap.mmap(-1, -(-size // LARGE_PAGE) * LARGE_PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    except OSError:  # no address space left for a mapping: as numpy would (it raises MemoryError)
        return np.empty(n, dtype)
    try:
        pages.madvise(mmap.MADV_HUGEPAGE)
    except OSError:  # no transparent huge pages in this kernel: small pages, as np.empty
        pass
    return np.frombuffer(pages, dtype, count=n)


#: The smallest array :func:`small_pages_empty` keeps out of large pages (the records of 32 M postings): below
#: it, the cold faults of large pages cost less than the TLB misses of small ones (1 M Zipf sets' 86 MB of
#: records: the probe +0.04 s in small pages, 7 interleaved rounds, against 0.01-0.04 s of faults saved).
SMALL_FROM = 1 << 29


#: Where Linux lists the virtio devices; the balloon's device id and its free page reporting feature bit
#: (VIRTIO_BALLOON_F_REPORTING, virtio 1.2, 5.5.3): sysfs prints a device's features as one 0/1 per bit.
#: (os.path, not pathlib: a plain ``join --sets`` does not import pathlib, tests/test_cli_startup.py.)
VIRTIO_DEVICES = "/sys/bus/virtio/devices"
_BALLOON, _REPORTING = "0x0005", 5


def _read(path: str) -> str:
    with open(path, encoding="ascii", errors="replace") as f:
        return f.read().strip()


@functools.lru_cache(maxsize=None)
def host_reclaims_free_memory(devices: str = VIRTIO_DEVICES) -> bool:
    """Whether this is a virtual machine whose host takes back the memory the guest leaves free (a virtio
    balloon with free page reporting): memory then faults in anew from the host, a large page for milliseconds."""
    try:
        found = sorted(os.listdir(devices))
    except OSError:
        return False
    for device in found:
        try:
            if _read(os.path.join(devices, device, "device")) == _BALLOON:
                if _read(os.path.join(devices, device, "features"))[_REPORTING:_REPORTING + 1] == "1":
                    return True
        except OSError:
            continue
    return False


def small_pages_empty(n: int, dtype) -> np.ndarray:
    """``np.empty(n, dtype)`` of small pages (4 KiB) only from :data:`SMALL_FROM` bytes and where the host takes
    free memory back (:func:`host_reclaims_free_memory`), where numpy would ask for large ones: for a large
    array written once and then read sparsely, such as the records of a large join's postings.

    There a large page's first fault needs 2 MiB that the host may have taken back: on this project's VM
    3.5-6.6 ms each, against ~1.5 microseconds for a small page the guest held. 10 M Zipf sets' 858 MB of
    records: 2.0-2.3 s of system time in large pages, 0.3-0.4 s in small ones, for the probe's reads
    +0.3-1.2 s (TLB misses; the stage 17.9 -> 15.3-15.5 s, 2026-12-05). Elsewhere a large page faults in
    within ~0.1 ms and only the TLB misses would remain, so large pages stay. ``madvise(MADV_NOHUGEPAGE)`` on
    this mapping alone (no process setting).
    """
    dtype = np.dtype(dtype)
    size = n * dtype.itemsize
    if size < SMALL_FROM or not _LARGE_PAGES or not host_reclaims_free_memory():
        return np.empty(n, dtype)
    try:
        pages = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    except OSError:  # no address space left for a mapping: as numpy would (it raises MemoryError)
        return np.empty(n, dtype)
    try:
        pages.madvise(mmap.MADV_NOHUGEPAGE)
    except (OSError, AttributeError):
        pass
    return np.frombuffer(pages, dtype, count=n)


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
