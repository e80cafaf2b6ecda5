"""stderr messages and the rendering every command shares, without typer: so that a plain join run by
the fast path (:mod:`._fast`) prints what the typer command prints, through the same code.

stdout carries only data (pairs, a count, a JSON report); progress, warnings
and the summary go to stderr, and ``--quiet`` silences them. Every message is
one line, printed as plain text through :func:`shown`, so that ids, paths and
user values appear verbatim (no markup) and their control characters escaped
(never interpreted by the terminal).
"""
from __future__ import annotations

import errno
import functools
import re
import sys
import time
from typing import TYPE_CHECKING

from .._plural import count
from ..errors import AllPairsError
from ..output.files import open_output
from ..pairs import PairWriter
from ..pipeline.result import ClustersNotAsked
from ..pipeline.stats import peak_memory

if TYPE_CHECKING:
    from ..pipeline import JoinResult, Stats

#: Characters a terminal could act on, or that would break a message's line:
#: C0 and C1 controls, DEL, line and paragraph separators, bidirectional
#: overrides, and lone surrogates (bytes of a file name that is not UTF-8).
@functools.cache  # compiled on first use, not on the import of every run
def _unsafe() -> re.Pattern:
    return re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(ch: str) -> str:
    c = ord(ch)
    if ch in _NAMED:
        return _NAMED[ch]
    if 0xDC80 <= c <= 0xDCFF:  # surrogateescape: the original byte of a non-UTF-8 name
        return f"\\x{c - 0xDC00:02x}"
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def shown(text: object) -> str:
    """``text`` as it may appear on stderr: verbatim but for control characters, shown escaped
    (``\\x1b``, ``\\n``); the one rendering of ids, paths and user values in every message."""
    s = str(text)
    unsafe = _unsafe()
    return unsafe.sub(lambda m: _escape(m.group()), s) if unsafe.search(s) else s


class Messages:
    """stderr for messages: plain lines, each passed through :func:`shown`; a closed or
    broken stderr loses the message, never the run."""

    @property
    def is_terminal(self) -> bool:
        try:
            return sys.stderr is not None and sys.stderr.isatty()
        except (OSError, ValueError):
            return False

    def print(self, *parts: object, **_style) -> None:
        """One message line; ``_style`` (rich's ``style=`` and the like) is ignored: plain text only."""
        if sys.stderr is None:
            return
        try:
            sys.stderr.write(shown(" ".join(map(str, parts))) + "\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass


err = Messages()


class BrokenPipe(SystemExit):
    """The reader of stdout went away (``| head``): end quietly, with the status ``cat`` has there."""

    def __init__(self):
        super().__init__(141)


class Bar:
    """A progress bar on stderr that appears only once a run has lasted a second."""

    def __init__(self, enabled: bool):
        self.enabled = enabled and err.is_terminal
        self.start = time.monotonic()
        self.progress = None  # a rich Progress, made (and rich imported) when the bar first shows
        self.tasks: dict[str, int] = {}

    def __call__(self, stage: str, done: int, total: int, detail: str = "") -> None:
        """Show a stage's progress, with its detail (the pairs so far, the bytes spilled) after the bar."""
        if not self.enabled or time.monotonic() - self.start < 1.0:
            return
        if self.progress is None:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

            self.progress = Progress(TextColumn("{task.description:>8}"), BarColumn(), TaskProgressColumn(),
                                     TimeElapsedColumn(), TextColumn("{task.fields[detail]}"),
                                     console=Console(stderr=True), transient=True)
            self.progress.start()
        if stage not in self.tasks:
            self.tasks[stage] = self.progress.add_task(stage, total=total, detail=detail)
        self.progress.update(self.tasks[stage], completed=done, total=total, detail=detail)

    def close(self) -> None:
        """Take the bar off; a later call shows it again (the writing after the join)."""
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
            self.tasks = {}


def _mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB"


def summary(res: JoinResult, write_seconds: float | None) -> None:
    s = res.stats
    dropped = f" ({s.dropped:,} more dropped by --min-bytes/--min-shingles)" if s.dropped else ""
    shingles = "tokens" if res.shingle == "tokens" else f"{res.shingle} shingles"
    err.print(f"allpairs: {count(s.documents, 'document')}, {len(s.skipped):,} skipped, {s.joined:,} joined{dropped}; "
              f"{shingles}: {s.shingles:,} ({s.distinct_shingles:,} distinct); "
              f"{count(s.distinct_sets, 'distinct set')}")
    measure = res.measure.name
    at = f"k = {res.threshold.p}" if res.measure.integer_threshold else f"t = {res.threshold}"
    what = f"{res.method} join" if measure == "jaccard" else f"{res.method} {measure} join"
    if res.n_left is not None:
        what += f" of {res.n_left:,} against {count(len(res.ids) - res.n_left, 'document')}"
    if s.ranked is not None:  # --neighbors: what was printed, then what the joins behind it did
        err.print(f"allpairs: {s.ranked}")
    else:
        err.print(f"allpairs: {what} at {at}: {count(s.candidates, 'candidate')}, "
                  f"{count(s.pairs, 'pair')} ({s.set_pairs:,} between distinct sets)")
    if not isinstance(res.clusters, ClustersNotAsked):
        if len(res.clusters):
            err.print(f"allpairs: {count(len(res.clusters), 'cluster')} of 2 or more documents, the largest of "
                      f"{res.clusters.largest:,}")
        else:
            err.print("allpairs: no cluster of 2 or more documents")
    for note in s.notes:
        err.print(f"allpairs: {note}")
    times = dict(s.seconds)
    if write_seconds is not None:
        times["write"] = write_seconds
    err.print("allpairs: time " + ", ".join(f"{k} {v:.2f}s" for k, v in times.items())
              + f"; peak memory {_mib(max(s.peak_memory, peak_memory()))}")


def warn_skipped(stats: Stats, shown: int = 5) -> None:
    skipped = stats.skipped
    if not skipped:
        return
    reasons = ", ".join(f"{why}: {n:,}" for why, n in stats.skipped_by_reason.most_common())
    line = "line " if stats.input_kind in ("lines", "sets") else ""
    examples = ", ".join(f"{line}{i} ({why})" for i, why in skipped[:shown])
    more = f", and {len(skipped) - shown:,} more" if len(skipped) > shown else ""
    err.print(f"allpairs: warning: skipped {count(len(skipped), 'document')} ({reasons}): {examples}{more}")


#: Library parameters whose flag is not ``--`` and the name with dashes.
FLAGS = {"threshold": "-t/--threshold", "id_field": "--id-col", "text_field": "--text-col", "keep": "--keep-col",
         "tokens_field": "--tokens-col", "against_ids": "--against", "ids": "--id-col",
         **{f"kind={kind}": f"--{kind}" for kind in ("lines", "sets", "jsonl", "csv", "tsv", "parquet")},
         "kind=directory": "without an input option", "text_cols": "--text-col", "header=False": "--no-input-header",
         "ignore=False": "--no-ignore", "normalize=False": "--no-normalize", "existing=replace": "--replace",
         "existing=skip": "--skip-existing", "all_rows": "--removed"}


def message(e: AllPairsError) -> str:
    """The library's message as the command line says it: its parameters as flags."""
    return e.for_flags(FLAGS)


def refused(e: AllPairsError) -> int:
    """The library's error as one line; its exit status (1 for data, 2 for usage)."""
    err.print(f"allpairs: error: {message(e)}")
    return e.exit_code


def write_join(res: JoinResult, output: str | None, plan, *, count: bool, fmt: str, quiet: bool, bar: Bar,
               clusters: bool = False, wide: bool = False, singletons: bool = False, no_header: bool = False) -> None:
    """``join``'s output: the pair count (``count``), the clusters or the pairs, to ``output`` (None: stdout) as
    :func:`~allpairs.output.files.check_output` planned it (``plan``); then, unless ``quiet``, the warnings and
    the summary on stderr."""
    if not quiet:
        warn_skipped(res.stats)
    write_seconds = None
    t0 = time.perf_counter()
    try:
        with open_output(None if count else output, plan) as out:
            if count:
                out.write(f"{len(res.clusters) if clusters else len(res.pairs)}\n".encode())
            elif clusters and wide:
                from ..pairs.clusters import write_clusters  # here, as below: only --clusters writes them

                write_clusters(res.clusters, res.ids, out, fmt, progress=bar)
            elif clusters:
                from ..pairs.clusters import write_cluster_table

                write_cluster_table(res.clusters, res.ids, out, fmt, columns=res.columns,
                                    singletons=singletons, header=not no_header, progress=bar)
            elif fmt == "parquet":
                from ..pairs.rows import write_pairs_table  # here: only Parquet output needs the table writers

                write_pairs_table(res.pairs, res.ids, out, res.measure, columns=res.columns, progress=bar)
            else:
                writer = PairWriter(res.ids, fmt, columns=res.columns, estimated=res.pairs.estimated,
                                    measure=res.measure, header=not no_header)
                writer.write(res.pairs, out, progress=bar)
            if not count:
                write_seconds = time.perf_counter() - t0
    except BrokenPipeError:  # `| head`: the join is done, its summary still holds; end as cat would
        if not quiet:
            summary(res, None)
        raise BrokenPipe() from None
    finally:
        bar.close()
        close = getattr(res.pairs, "close", None)
        if close is not None:
            close()  # spilled runs
    if not quiet:
        summary(res, write_seconds)


def broken_pipe(e: OSError) -> bool:
    """Whether ``e`` says that the reader of stdout went away (``| head``)."""
    return isinstance(e, BrokenPipeError) or e.errno == errno.EPIPE


def failed(e: MemoryError | OSError) -> int:
    """One line for exhausted memory, or an I/O error the library did not name (writing stdout to a full
    disk, mostly); the exit status, 1."""
    if isinstance(e, MemoryError):
        err.print("allpairs: error: out of memory; free some, raise the limit (ulimit -v), or join a smaller input")
    else:
        what = e.filename if e.filename else "cannot write standard output"
        err.print(f"allpairs: error: {what}: {e.strerror or e}")
    return 1
