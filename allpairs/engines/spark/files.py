"""A directory tree read into Spark: its files chosen as the local engine chooses them, decoded in tasks.

:func:`read_directory` lists the tree on the driver (globs on the relative
path, ``--min-bytes``, hidden and ignored files left out, as locally) and
hands Spark the chosen files; each task decodes its files (binary and
undecodable ones skipped with a reason) and may count the skipped ones in a
:class:`SkipCounts` accumulator, so that no job of its own is needed to count them.
A local tree's tasks read their own files; :func:`decoded` of such a frame is
remembered with its groups (:func:`task_groups`), so that the shingling reads
and shingles each task's files in one Python pass (``sets.docs_frame``).
"""
from __future__ import annotations

import os
import re
import weakref
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from ...corpus.globs import matches
from ...corpus.linefile import Utf8Texts
from ...corpus.tree import check_file, decode_file
from ...corpus.walk import walk_paths
from ...errors import InputError, UsageError
from ...shingles import language_for_path
from .arrow import struct


class SkipCounts:
    """The param (pyspark's ``AccumulatorParam``) of an accumulator of the files skipped per reason, by
    partition: ``{partition: ((reason, n), ...)}``.

    A task adds its partition's counts so far after each batch; a later value of a partition replaces the
    earlier one, so a partition read twice (a retried task, a recomputed frame) is counted once.
    """

    def zero(self, value):
        return {}

    def addInPlace(self, value1, value2):
        value1.update(value2)
        return value1


def skipped_by_reason(counts: dict) -> dict:
    """{reason: files} of a :class:`SkipCounts` value (the reason's first words: ``binary``, ``not UTF-8``)."""
    out: dict = {}
    for pairs in counts.values():
        for why, n in pairs:
            out[why] = out.get(why, 0) + n
    return out


#: The decoded files' frame: (id, text, language, skip), a skipped file with a reason and no text.
FILES_SCHEMA = "id string, text string, language string, skip string"


def _files_batch(rows) -> pa.RecordBatch:
    """A batch of FILES_SCHEMA of (id, text, language, skip) rows."""
    ids, texts, langs, skipped = zip(*rows) if rows else ((), (), (), ())
    return pa.RecordBatch.from_arrays([pa.array(ids, pa.string()), pa.array(texts, pa.string()),
                                       pa.array(langs, pa.string()), pa.array(skipped, pa.string())],
                                      names=["id", "text", "language", "skip"])


def _count_skips(skips, counted: Counter) -> None:
    """Give the :class:`SkipCounts` accumulator ``skips`` (if any) this partition's skipped files so far."""
    if skips is not None:
        from pyspark import TaskContext

        skips.add({TaskContext.get().partitionId(): tuple(sorted(counted.items()))})


def _file_batches(batches, root, skips=None):
    """mapInArrow body: (id, text, language, skip) of each file of binaryFile's (path, content) batches.
    ``skips``: a :class:`SkipCounts` accumulator, given the partition's skipped files by reason."""
    counted: Counter = Counter()
    for batch in batches:
        rows = []
        for path, data in zip(batch.column("path").to_pylist(), batch.column("content").to_pylist()):
            rel = _relative(path, root)
            text, skip = decode_file(data)
            rows.append((rel, text, language_for_path(rel), skip))
            if skip is not None:
                counted[skip.split(" (")[0]] += 1
        _count_skips(skips, counted)
        yield _files_batch(rows)


#: Most bytes of files in one batch that :func:`_read_batches` (and :func:`group_texts`) yields (Arrow's
#: string offsets are 32-bit).
READ_BATCH_BYTES = 64 << 20


def _group_files(files):
    """(id, UTF-8 bytes or None, language, skip reason or None, size) of each of ``files`` ((local path, id,
    size), one task's group), read here: binary, undecodable and unreadable files skipped with the reason,
    as locally."""
    for local, rel, size in files:
        try:
            with open(local, "rb", buffering=0) as f:
                data, skip = check_file(f.readall())
        except OSError as e:
            data, skip = None, f"unreadable ({e.strerror})"
        yield rel, data, language_for_path(rel), skip, size


def _read_batches(batches, groups, skips=None):
    """mapInArrow body over the numbers of ``groups`` (lists of (local path, id, size)): (id, text, language,
    skip) of each file of each group, read here (unreadable: skipped with the reason, as locally)."""
    counted: Counter = Counter()
    for batch in batches:
        for g in batch.column("id").to_pylist():
            rows, held = [], 0
            for rel, data, lang, skip, size in _group_files(groups[g]):
                rows.append((rel, None if data is None else data.decode("utf-8"), lang, skip))
                if skip is not None:
                    counted[skip.split(" (")[0]] += 1
                held += size
                if held >= READ_BATCH_BYTES:
                    _count_skips(skips, counted)
                    yield _files_batch(rows)
                    rows, held = [], 0
            _count_skips(skips, counted)
            yield _files_batch(rows)


def group_texts(files, counted: Counter, skips=None):
    """The decoded files of one group (``files``, as :func:`_read_batches` reads them), in chunks of about
    READ_BATCH_BYTES: (ids, languages, texts as :class:`~allpairs.corpus.linefile.Utf8Texts`), the
    skipped files left out, counted by reason in ``counted`` and handed to ``skips`` after each chunk."""
    ids, langs, datas, held = [], [], [], 0
    for rel, data, lang, skip, size in _group_files(files):
        if skip is not None:
            counted[skip.split(" (")[0]] += 1
        else:
            ids.append(rel)
            langs.append(lang)
            datas.append(data)
        held += size
        if held >= READ_BATCH_BYTES:
            _count_skips(skips, counted)
            yield ids, langs, Utf8Texts.of(datas)
            ids, langs, datas, held = [], [], [], 0
    _count_skips(skips, counted)
    if ids:
        yield ids, langs, Utf8Texts.of(datas)


def skip_counts(batches):
    """mapInArrow body: (skip, prose, n) of a batch of decoded files: how many per reason to skip (null: read),
    and whether of no known program language."""
    for batch in batches:
        counts = Counter(zip(batch.column("skip").to_pylist(),
                             (lang is None for lang in batch.column("language").to_pylist())))
        yield pa.RecordBatch.from_arrays([pa.array([k[0] for k in counts], pa.string()),
                                          pa.array([k[1] for k in counts], pa.bool_()),
                                          pa.array(list(counts.values()), pa.int64())], names=["skip", "prose", "n"])


def root_path(path: str) -> str:
    """The path part of a directory URI or local path, without a trailing slash."""
    m = re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/]*(/.*)$", path) or re.match(r"^file:(/.*)$", path)
    if m:
        return m.group(1).rstrip("/")
    return os.path.abspath(path).rstrip("/")


def _relative(uri: str, root: str) -> str:
    from urllib.parse import unquote

    p = unquote(re.sub(r"^[A-Za-z][A-Za-z0-9+.-]*:(//[^/]*)?", "", uri))
    return p[len(root):].lstrip("/") if p.startswith(root) else p


@contextmanager
def _session_conf(spark, settings: dict):
    """Set SQL settings of the session for a while, then put back what was there."""
    before = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


@dataclass(frozen=True)
class TaskGroups:
    """How :func:`read_directory` dealt a local tree's files into tasks: ``groups[p]`` the (local path, id,
    size) of task ``p``'s files; ``skips`` the :class:`SkipCounts` accumulator counting the skipped ones."""

    groups: list
    skips: object = None


#: The frames of :func:`read_directory` whose tasks read their files themselves, and of :func:`decoded`
#: over those: how their files were dealt (the frame itself is the key, held weakly).
_TASK_READ: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_TASK_DECODED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def decoded(frame):
    """The rows of ``frame`` (:func:`read_directory`'s) that were decoded, the skipped files left out: where
    its tasks read their files themselves, remembered with their groups (:func:`task_groups`), so that the
    shingling can read and shingle each task's files in one Python pass."""
    from pyspark.sql import functions as F

    out = frame.where(F.col("skip").isNull())
    if frame in _TASK_READ:
        _TASK_DECODED[out] = _TASK_READ[frame]
    return out


def task_groups(frame) -> TaskGroups | None:
    """The groups of a frame of :func:`decoded` whose tasks read their files themselves; None for any other
    frame (one derived from it too). Its task ``p`` gives the files of ``groups[p]``, in that order."""
    try:
        return _TASK_DECODED.get(frame)
    except TypeError:  # not weakly referable: not ours
        return None


#: A local tree of at most this many tasks and files is read by Python tasks of about equal bytes
#: (:func:`read_directory`); a larger one, or one on another file system, by Spark's binaryFile.
BALANCED_TASKS = 64
BALANCED_FILES = 100_000


@dataclass(frozen=True)
class Listing:
    """A local tree's files chosen as locally (:func:`list_directory`): ``chosen`` (uri, size, id, local path) of
    each, in the walk's order; files under --min-bytes ``dropped``; files or folders ``unreadable``; whether
    every chosen file has a program language by its name (``code``)."""

    chosen: list
    dropped: int = 0
    unreadable: int = 0
    code: bool = True


def _chosen(files, include, exclude, min_bytes: int, unreadable: int = 0) -> Listing:
    """The :class:`Listing` of ``files`` ((uri, size, id, local path)): globs on the id, --min-bytes."""
    chosen, dropped, code = [], 0, True
    for uri, size, rel, local in files:
        if (include and not matches(rel, include)) or (exclude and matches(rel, exclude)):
            continue
        if size < min_bytes:
            dropped += 1
            continue
        chosen.append((uri, size, rel, local))
        code = code and language_for_path(rel) is not None
    return Listing(chosen, dropped, unreadable, code)


def is_remote(path: str) -> bool:
    """Whether ``path`` names another file system than this machine's (Spark lists it)."""
    return bool(re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", path)) and not path.startswith("file:")


def check_directory(path: str) -> None:
    """Refuse a local ``path`` that is no directory (before Spark starts: a mistyped path costs no JVM)."""
    if not is_remote(path) and not os.path.isdir(root_path(path)):
        raise UsageError(f"{path}: no such directory; read a file with --lines, --sets, --jsonl or --parquet")


def list_directory(path: str, include, exclude, min_bytes: int) -> Listing:
    """The files of the local tree ``path`` chosen as the local engine chooses them by default (hidden and
    ignored files left out, globs on the relative path, --min-bytes); no Spark needed."""
    check_directory(path)
    root = root_path(path)
    files, unreadable = [], 0

    def count_unreadable(rel, why):
        nonlocal unreadable
        unreadable += 1

    for rel, p in walk_paths(Path(root), hidden=False, ignore=True, left_out=Counter(), on_error=count_unreadable):
        try:
            files.append(("file://" + p, os.stat(p).st_size, rel, p))
        except OSError:
            unreadable += 1
    return _chosen(files, include, exclude, min_bytes, unreadable)


def read_directory(spark, path, include, exclude, min_bytes, run, skips=None):
    """Files below ``path`` chosen as locally (globs on the relative path, --min-bytes; a local tree by
    :func:`list_directory`), then decoded in tasks (``skips``: a :class:`SkipCounts` accumulator counting the
    skipped ones). Returns (the frame, whether every chosen file has a program language by its name)."""
    root = root_path(path)
    remote = is_remote(path)
    if remote:
        # A remote filesystem: Spark lists it (files of zero bytes are not listed there).
        listed = spark.read.format("binaryFile").option("recursiveFileLookup", "true").load(path) \
            .select("path", "length").toArrow()
        listing = _chosen([(uri, size, _relative(uri, root), None) for uri, size in
                           zip(listed.column("path").to_pylist(), listed.column("length").to_pylist())],
                          include, exclude, min_bytes)
    else:
        listing = list_directory(path, include, exclude, min_bytes)
    chosen, code = listing.chosen, listing.code
    if listing.unreadable:
        run.skipped["unreadable"] = run.skipped.get("unreadable", 0) + listing.unreadable
    run.documents = len(chosen)
    if listing.dropped:
        run.notes.append(f"{listing.dropped:,} files smaller than --min-bytes {min_bytes:,} dropped")
    if not chosen:
        raise InputError(f"the corpus is empty: no file under {path} was chosen")
    # Two tasks per core, or one per 64 MiB; but no task for less than 1 MiB (the tiny corpus: one task,
    # where four waited for the Python workers' start on two cores).
    total = sum(f[1] for f in chosen)
    tasks = max(1, min(2 * spark.sparkContext.defaultParallelism, -(-total // (1 << 20))), -(-total // (64 << 20)))
    if not remote and tasks <= BALANCED_TASKS and len(chosen) <= BALANCED_FILES:
        # Each task reads its files itself, tasks of about equal bytes: binaryFile packs files into tasks of
        # up to 128 MiB, the largest first, 4 MiB counted per file, and those coalesced into a few were
        # unequal (one of the Go tree's four tasks held 75% of its bytes: one core shingled alone); and
        # the files' bytes do not go through the JVM to reach Python.
        groups = [[(chosen[k][3], chosen[k][2], chosen[k][1]) for k in group] for group in balanced([f[1] for f in chosen], tasks)]
        frame = spark.range(len(groups), numPartitions=len(groups)).mapInArrow(
            lambda b: _read_batches(b, groups, skips), struct(FILES_SCHEMA))
        _TASK_READ[frame] = TaskGroups(groups, skips)
        return frame, code
    uris = [re.sub(r"([\\\[\]{}*?])", r"\\\1", f[0]) for f in chosen]  # literal names, not Hadoop globs
    # The files are listed already: Spark only stats them, on the driver (above its threshold, by
    # default 32 paths, it would start a listing job of one task per file).
    with _session_conf(spark, {"spark.sql.sources.parallelPartitionDiscovery.threshold": str(len(uris) + 1)}):
        frame = spark.read.format("binaryFile").load(uris)
    if frame.rdd.getNumPartitions() > tasks:
        frame = frame.coalesce(tasks)
    return frame.select("path", "content").mapInArrow(lambda b: _file_batches(b, root, skips), struct(FILES_SCHEMA)), code


def balanced(sizes, groups: int) -> list[list[int]]:
    """The indexes of ``sizes`` dealt into at most ``groups`` non-empty groups of about equal sums, each in
    ascending order (the largest first to the group that holds least so far)."""
    import heapq

    heap = [(0, g) for g in range(min(groups, len(sizes)))]
    out: list[list[int]] = [[] for _ in heap]
    for k in sorted(range(len(sizes)), key=lambda k: -sizes[k]):
        total, g = heapq.heappop(heap)
        out[g].append(k)
        heapq.heappush(heap, (total + sizes[k], g))
    return [sorted(group) for group in out]
