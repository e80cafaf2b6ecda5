"""Shingling in worker processes: a fork pool whose workers inherit the corpus and die with their
parent, sized by the input, ``workers`` and ``jobs``."""
from __future__ import annotations

import concurrent.futures
import ctypes
import multiprocessing
import os
import signal
import sys
from collections.abc import Sequence

import numpy as np

from allpairs._kernels.jit import resolve_jobs
from allpairs.corpus.linefile import Utf8Texts
from allpairs.errors import UsageError
from allpairs.shingles.keys import ShingleSpec
from allpairs.shingles.utf8 import text_sizes


#: Below this many characters of text, shingle_texts does not start worker
#: processes by default (starting them costs about a tenth of a second).
PARALLEL_MIN_CHARS = 1 << 23


def pool_workers(workers: int | None, texts: Sequence[str], spec: ShingleSpec, jobs: int | None = None) -> int:
    """Worker processes for :func:`shingle_texts`: ``workers`` when given, else none for small or code input,
    else one per core up to 8, and never more than ``jobs`` (``-j``) allows."""
    if workers is not None:
        if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
            raise UsageError(f"workers must be an integer >= 1, got {workers!r}; use 1 for no pool")
        return min(int(workers), max(len(texts), 1))
    # By default only where fork is the safe, cheap way to start workers, and
    # never from inside a worker of some other pool.
    if not sys.platform.startswith("linux") or multiprocessing.current_process().daemon:
        return 1
    if spec.kind == "code":
        # The compiled tokenizer is faster alone than a pool is with its start-up
        # and the keys sent back (Go tree: 2.55 s in this process, 3.25 s with two).
        return 1
    cpus = len(os.sched_getaffinity(0))
    if jobs is not None:
        cpus = min(cpus, resolve_jobs(jobs))
    if cpus < 2 or sum(text_sizes(texts)) < PARALLEL_MIN_CHARS:
        return 1
    return min(cpus, 8)


def _chunks(sizes: Sequence[int], size: int) -> list[range]:
    """Consecutive ranges of texts of about ``size`` characters each."""
    chunks, start, chars = [], 0, 0
    for i, n in enumerate(sizes):
        chars += n
        if chars >= size:
            chunks.append(range(start, i + 1))
            start, chars = i + 1, 0
    if start < len(sizes):
        chunks.append(range(start, len(sizes)))
    return chunks


#: Corpora being shingled in a pool, by call: forked workers inherit them, so
#: that only index ranges, not the texts, travel to the workers.
_FORKED_INPUTS: dict[int, tuple[Sequence[str], list | None]] = {}


def _shingle_inherited(serial, call: int, chunk: range, spec: ShingleSpec, normalize: bool, distinct: bool):
    """Worker side of the fork pool: shingle ``chunk`` of the inherited corpus ``call`` with ``serial``."""
    texts, langs = _FORKED_INPUTS[call]
    return serial(
        _part(texts, chunk), None if langs is None else [langs[i] for i in chunk], spec, normalize,
        distinct=distinct,
    )


def _part(texts, chunk: range):
    """The texts ``chunk`` of ``texts``, kept as UTF-8 bytes if they are held so."""
    if isinstance(texts, Utf8Texts):
        return Utf8Texts(*texts.span(chunk.start, chunk.stop))
    return [texts[i] for i in chunk]


def shingle_in_pool(texts, langs, spec, normalize, progress, pool_size, distinct, serial):
    """``serial`` (:func:`allpairs.shingles.texts.shingle_serial`, a module-level function: it travels to the
    workers by name) over chunks of texts in worker processes, results in input order."""
    sizes = text_sizes(texts)
    # About four chunks per worker balance skewed file sizes without much overhead.
    chunks = _chunks(sizes, max(sum(sizes) // (4 * pool_size), 1))
    fork = sys.platform.startswith("linux")
    context = multiprocessing.get_context("fork" if fork else None)
    call = id(texts)
    counts_parts, keys_parts = [], []
    try:
        if fork:
            _FORKED_INPUTS[call] = (texts, langs)
            jobs = [(_shingle_inherited, serial, call, chunk, spec, normalize, distinct) for chunk in chunks]
        else:
            jobs = [
                (serial, _part(texts, chunk),
                 None if langs is None else [langs[i] for i in chunk], spec, normalize, None, distinct)
                for chunk in chunks
            ]
        with worker_pool(pool_size, context) as pool:
            futures = [pool.submit(*job) for job in jobs]
            for chunk, future in zip(chunks, futures):
                counts, keys = future.result()
                counts_parts.append(counts)
                keys_parts.append(keys)
                if progress is not None:
                    progress(len(chunk))
    finally:
        _FORKED_INPUTS.pop(call, None)
    return np.concatenate(counts_parts), np.concatenate(keys_parts)


def worker_pool(size: int, context=None) -> concurrent.futures.ProcessPoolExecutor:
    """A process pool whose workers end when this process ends, however it ends."""
    if context is None:
        context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else None)
    return concurrent.futures.ProcessPoolExecutor(
        size, mp_context=context, initializer=_die_with_parent, initargs=(os.getpid(),)
    )


_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """Worker start: ask Linux for SIGKILL when the parent dies (prctl PR_SET_PDEATHSIG).

    Without it a worker whose parent was killed (SIGTERM, SIGKILL) is
    reparented and waits forever on its task pipe, holding the caller's
    stdout and stderr open.  Elsewhere the pool's own shutdown is all there is.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    # The parent may have died before prctl took effect.
    if os.getppid() != parent:
        os._exit(1)
