"""Time what a notebook shows of a large result: ``repr`` and ``_repr_html_`` of a join of millions of pairs.

Run from the repository root::

    python scripts/bench_repr.py          # the Kosarak sample as it is (with its duplicates), t = 0.5

A notebook prints ``repr`` of a cell's last value (``_repr_html_`` where the
object has one), so that cost is paid by every cell ending in ``res``. Printed
beside the join itself (``allpairs.join`` of the sample's lines as token
sets, Jaccard 0.5): the seconds and characters of ``repr`` and of the HTML
view, and the ratio of their time to the join's. An allpairs without a
summary (``repr`` of the dataclass) prints its whole id list. The machine is
usually shared: compare ratios, not absolute times.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # this repo's `datasets`, not the PyPI package of that name

import allpairs  # noqa: E402
from datasets import kosarak  # noqa: E402


def timed(f):
    t0 = time.perf_counter()
    out = f()
    return time.perf_counter() - t0, out


def main() -> None:
    sets = kosarak.kosarak_sets()
    allpairs.join(sets[:100], 0.5)  # kernels loaded before timing
    t_join, res = timed(lambda: allpairs.join(sets, 0.5))
    print(f"join: {len(sets):,} sets, {len(res):,} pairs in {t_join:.2f} s")
    for name in ("__repr__", "_repr_html_"):
        method = getattr(res, name, None)
        if method is None:
            print(f"{name:12} (none)")
            continue
        t, text = timed(method)
        print(f"{name:12} {t:8.3f} s {len(text):>12,} characters  {t / t_join:8.4f} of the join")
    print(f"load: {os.getloadavg()[0]:.2f} (1 min)")


if __name__ == "__main__":
    main()
