"""Run statistics: what a join read, dropped, compared and found, what each stage cost, and the
process's peak memory; the one ``Progress`` callback every stage reports through."""
from __future__ import annotations

import inspect
import os
import resource
import sys
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable

from ..corpus.model import FACTORY


#: progress(stage, done, total[, detail]): called now and then during long stages; ``detail`` (text: the pairs
#: found so far, the bytes spilled) goes only to a callback that takes a fourth argument.
Progress = Callable[..., None]


def with_detail(progress: Callable[..., None] | None) -> Callable[[str, int, int, str], None] | None:
    """``progress`` called with a stage's detail when it takes four arguments, without it when three."""
    if progress is None:
        return None
    try:
        inspect.signature(progress).bind("stage", 0, 0, "")
    except (TypeError, ValueError):  # three parameters, or no signature to read (a builtin)
        return lambda stage, done, total, detail="": progress(stage, done, total)
    return progress


#: The memory limit of this process's cgroup (v2).
CGROUP_MAX = "/sys/fs/cgroup/memory.max"


def available_memory() -> int:
    """Bytes this process may still take: the least of the memory the system has available
    (``MemAvailable``), the cgroup's limit less its use, and the address-space limit less the address
    space taken (Linux; elsewhere 4 GiB)."""
    room = []
    available = _kib_field("/proc/meminfo", "MemAvailable")
    if available is not None:
        room.append(available)
    if os.access(CGROUP_MAX, os.R_OK):  # not a failed open: its exception costs a join ~0.04 ms
        try:
            limit = _read_bytes(CGROUP_MAX).strip()
            if limit != b"max":
                room.append(int(limit) - int(_read_bytes("/sys/fs/cgroup/memory.current")))
        except (OSError, ValueError):
            pass
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        room.append(soft - (process_status("VmSize") or 0))
    return max(min(room), 0) if room else 4 << 30


@dataclass(init=False, repr=False, eq=False)  # the three methods below are those it would generate (see FACTORY)
class Stats:
    """What a join read, dropped, compared and found, and what each stage cost."""

    documents: int = 0
    joined: int = 0
    dropped: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    shingles: int = 0
    distinct_shingles: int = 0
    distinct_sets: int = 0
    candidates: int = 0
    set_pairs: int = 0
    pairs: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    peak_memory: int = 0
    notes: list[str] = field(default_factory=list)
    input_kind: str = "texts"  # the corpus's kind: "lines" and "sets" ids are line numbers
    #: For ``neighbors``: what the joins behind the lists did, in one line (the summary prints it in place
    #: of the threshold join's line, whose counts of pairs would read as a contradiction).
    ranked: str | None = None

    def __init__(self, documents: int = 0, joined: int = 0, dropped: int = 0, skipped: list[tuple[str, str]] = FACTORY,
                 shingles: int = 0, distinct_shingles: int = 0, distinct_sets: int = 0, candidates: int = 0,
                 set_pairs: int = 0, pairs: int = 0, seconds: dict[str, float] = FACTORY, peak_memory: int = 0,
                 notes: list[str] = FACTORY, input_kind: str = "texts", ranked: str | None = None) -> None:
        self.documents = documents
        self.joined = joined
        self.dropped = dropped
        self.skipped = [] if skipped is FACTORY else skipped
        self.shingles = shingles
        self.distinct_shingles = distinct_shingles
        self.distinct_sets = distinct_sets
        self.candidates = candidates
        self.set_pairs = set_pairs
        self.pairs = pairs
        self.seconds = {} if seconds is FACTORY else seconds
        self.peak_memory = peak_memory
        self.notes = [] if notes is FACTORY else notes
        self.input_kind = input_kind
        self.ranked = ranked

    def _compared(self) -> tuple:
        """The fields in order, as ``__eq__`` compares them."""
        return (self.documents, self.joined, self.dropped, self.skipped, self.shingles, self.distinct_shingles,
                self.distinct_sets, self.candidates, self.set_pairs, self.pairs, self.seconds, self.peak_memory,
                self.notes, self.input_kind, self.ranked)

    def __repr__(self) -> str:
        return (f"{type(self).__qualname__}(documents={self.documents!r}, joined={self.joined!r}, "
                f"dropped={self.dropped!r}, skipped={self.skipped!r}, shingles={self.shingles!r}, "
                f"distinct_shingles={self.distinct_shingles!r}, distinct_sets={self.distinct_sets!r}, "
                f"candidates={self.candidates!r}, set_pairs={self.set_pairs!r}, pairs={self.pairs!r}, "
                f"seconds={self.seconds!r}, peak_memory={self.peak_memory!r}, notes={self.notes!r}, "
                f"input_kind={self.input_kind!r}, ranked={self.ranked!r})")

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return self._compared() == other._compared()
        return NotImplemented

    @property
    def skipped_by_reason(self) -> Counter:
        return Counter(why.split(" (")[0] for _, why in self.skipped)

    def as_dict(self) -> dict:
        return {
            "documents": self.documents, "joined": self.joined, "dropped": self.dropped,
            "skipped": len(self.skipped),
            "skipped_by_reason": dict(self.skipped_by_reason),
            "shingles": self.shingles, "distinct_shingles": self.distinct_shingles,
            "distinct_sets": self.distinct_sets, "candidates": self.candidates,
            "set_pairs": self.set_pairs, "pairs": self.pairs,
            "seconds": {k: round(v, 4) for k, v in self.seconds.items()},
            "peak_memory_bytes": self.peak_memory, "notes": list(self.notes),
        }


def process_status(field_name: str) -> int | None:
    """A size field of /proc/self/status (``VmRSS``, ``VmHWM``) in bytes (Linux), or None."""
    return _kib_field("/proc/self/status", field_name)


def _kib_field(path: str, name: str) -> int | None:
    """The field ``name`` (in kB) of a /proc file such as /proc/meminfo, in bytes, or None. Read as bytes in
    one call: a text file's line iterator costs a join ~0.1 ms the first time (its decoder set up), as
    much as 5 % of a small join's stage."""
    try:
        text = _read_bytes(path)
        at = text.find(b"\n" + name.encode() + b":") + 1
        if at == 0 and not text.startswith(name.encode() + b":"):
            return None
        return int(text[at:].split(None, 2)[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None


def _read_bytes(path: str) -> bytes:
    """A small file's bytes by system calls, no buffered file object (its set-up costs more than the read)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        parts = []
        while part := os.read(fd, 1 << 16):
            parts.append(part)
        return b"".join(parts)
    finally:
        os.close(fd)


def peak_memory() -> int:
    """Peak resident memory of this process so far, in bytes.

    The kernel's high-water mark of this program's memory (``VmHWM``) where
    there is one: getrusage's ``ru_maxrss`` also keeps the peak of the
    process this program was started from (Linux carries it across exec), so
    a run started by a large Python process would report that one's peak.
    """
    hwm = process_status("VmHWM")
    if hwm is not None:
        return hwm
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss if sys.platform == "darwin" else rss * 1024


@contextmanager
def timed(stats: Stats, stage: str):
    t0 = time.perf_counter()
    yield
    stats.seconds[stage] = stats.seconds.get(stage, 0.0) + time.perf_counter() - t0
