"""A directory tree read into Spark: its files chosen as the local engine chooses them, decoded in tasks.

:func:`read_directory` lists the tree on the driver (globs on the relative
path, ``--min-bytes``, hidden and ignored files left out, as locally) and
hands Spark the chosen files; each task decodes its files (binary and
undecodable ones skipped with a reason) and may count the skipped ones in a
:class:`SkipCounts` accumulator, so that no job of its own is needed to count them.
"""
from __future__ import annotations

import os
import re
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa

from ...corpus.globs import matches
from ...corpus.tree import decode_file
from ...corpus.walk import walk
from ...errors import InputError, UsageError
from ...shingles import language_for_path


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


def _file_batches(batches, root, skips=None):
    """mapInArrow body: (id, text, language, skip) of each file; a skipped file has a reason and no text.
    ``skips``: a :class:`SkipCounts` accumulator, given the partition's skipped files by reason."""
    counted: Counter = Counter()
    for batch in batches:
        ids, texts, langs, skipped = [], [], [], []
        for path, data in zip(batch.column("path").to_pylist(), batch.column("content").to_pylist()):
            rel = _relative(path, root)
            text, skip = decode_file(data)
            ids.append(rel)
            texts.append(text)
            langs.append(language_for_path(rel))
            skipped.append(skip)
            if skip is not None:
                counted[skip.split(" (")[0]] += 1
        if skips is not None:
            from pyspark import TaskContext

            skips.add({TaskContext.get().partitionId(): tuple(sorted(counted.items()))})
        yield pa.RecordBatch.from_arrays([pa.array(ids, pa.string()), pa.array(texts, pa.string()),
                                          pa.array(langs, pa.string()), pa.array(skipped, pa.string())],
                                         names=["id", "text", "language", "skip"])


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


def read_directory(spark, path, include, exclude, min_bytes, run, skips=None):
    """Files below ``path`` chosen as locally (globs on the relative path, --min-bytes), then decoded in tasks
    (``skips``: a :class:`SkipCounts` accumulator counting the skipped files). Returns (the frame, whether
    every chosen file has a program language by its name)."""
    root = root_path(path)
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", path) and not path.startswith("file:"):
        # A remote filesystem: Spark lists it (files of zero bytes are not listed there).
        listing = spark.read.format("binaryFile").option("recursiveFileLookup", "true").load(path) \
            .select("path", "length").toArrow()
        files = list(zip(listing.column("path").to_pylist(), listing.column("length").to_pylist()))
    else:
        if not os.path.isdir(root):
            raise UsageError(f"{path}: no such directory; read a file with --lines, --sets, --jsonl or --parquet")
        files = []
        # Listed as the local engine lists it by default: hidden and ignored files left out.
        unreadable = lambda r, why: run.skipped.update(unreadable=run.skipped.get("unreadable", 0) + 1)  # noqa: E731
        for rel, p in walk(Path(root), hidden=False, ignore=True, left_out=Counter(), on_error=unreadable):
            try:
                files.append(("file://" + str(p), p.stat().st_size))
            except OSError:
                run.skipped["unreadable"] = run.skipped.get("unreadable", 0) + 1
    chosen, dropped, chosen_bytes, code = [], 0, 0, True
    for uri, size in files:
        rel = _relative(uri, root)
        if (include and not matches(rel, include)) or (exclude and matches(rel, exclude)):
            continue
        if size < min_bytes:
            dropped += 1
            continue
        chosen.append(re.sub(r"([\\\[\]{}*?])", r"\\\1", uri))  # literal names, not Hadoop globs
        chosen_bytes += size
        code = code and language_for_path(rel) is not None
    run.documents = len(chosen)
    if dropped:
        run.notes.append(f"{dropped:,} files smaller than --min-bytes {min_bytes:,} dropped")
    if not chosen:
        raise InputError(f"the corpus is empty: no file under {path} was chosen")
    # The files are listed already: Spark only stats them, on the driver (above its threshold, by
    # default 32 paths, it would start a listing job of one task per file).
    with _session_conf(spark, {"spark.sql.sources.parallelPartitionDiscovery.threshold": str(len(chosen) + 1)}):
        files = spark.read.format("binaryFile").load(chosen)
    # Spark counts 4 MiB per file when it packs files into tasks (one task per ~30 small sources);
    # two tasks per core, or one per 64 MiB, cost far less in Python worker start-ups.
    tasks = max(2 * spark.sparkContext.defaultParallelism, -(-chosen_bytes // (64 << 20)))
    if files.rdd.getNumPartitions() > tasks:
        files = files.coalesce(tasks)
    return files.select("path", "content").mapInArrow(
        lambda b: _file_batches(b, root, skips), "id string, text string, language string, skip string"), code
