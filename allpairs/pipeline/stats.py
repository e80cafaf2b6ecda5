"""Run statistics: what a join read, dropped, compared and found, what each stage cost, and the
process's peak memory; the one ``Progress`` callback every stage reports through."""
from __future__ import annotations

from __future__ import annotations

import resource
import sys
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable





#: progress(stage, done, total): called now and then during long stages.
Progress = Callable[[str, int, int], None]


@dataclass
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
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


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
