"""The ``allpairs`` command: parse, call one library function, render.

stdout carries only data (pairs, a count, a JSON report); progress, warnings
and the summary go to stderr, and ``--quiet`` silences them. An
:class:`~allpairs.errors.AllPairsError` becomes one line on stderr and exit
status 1 (data) or 2 (usage); Ctrl-C exits 130 and leaves no partial file.
"""
from __future__ import annotations

import sys
import time
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

from . import __version__
from .corpus import read_corpus
from .errors import AllPairsError
from .join import JoinResult, join as run_join
from .pairs import PairWriter, open_output

app = typer.Typer(
    add_completion=False,
    pretty_exceptions_enable=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Exact all-pairs set-similarity join (Jaccard of shingle sets), with MinHash+LSH beside it.",
)
err = Console(stderr=True, highlight=False, soft_wrap=True)


class Format(str, Enum):
    tsv = "tsv"
    csv = "csv"
    jsonl = "jsonl"


def _version(value: bool) -> None:
    if value:
        typer.echo(f"allpairs {__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """Exact all-pairs set-similarity join."""


class _Bar:
    """A progress bar on stderr that appears only once a run has lasted a second."""

    def __init__(self, enabled: bool):
        self.enabled = enabled and err.is_terminal
        self.start = time.monotonic()
        self.progress: Progress | None = None
        self.tasks: dict[str, int] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled or time.monotonic() - self.start < 1.0:
            return
        if self.progress is None:
            self.progress = Progress(TextColumn("{task.description:>8}"), BarColumn(), TaskProgressColumn(),
                                     TimeElapsedColumn(), console=err, transient=True)
            self.progress.start()
        if stage not in self.tasks:
            self.tasks[stage] = self.progress.add_task(stage, total=total)
        self.progress.update(self.tasks[stage], completed=done, total=total)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()


def _mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB"


def _summary(res: JoinResult, write_seconds: float | None) -> None:
    s = res.stats
    dropped = f" ({s.dropped:,} more dropped by --min-bytes/--min-shingles)" if s.dropped else ""
    err.print(f"allpairs: {s.documents:,} documents, {len(s.skipped):,} skipped, {s.joined:,} joined{dropped}; "
              f"{res.shingle} shingles: {s.shingles:,} ({s.distinct_shingles:,} distinct); "
              f"{s.distinct_sets:,} distinct sets")
    err.print(f"allpairs: {res.method} join at t = {res.threshold}: {s.candidates:,} candidates, "
              f"{s.pairs:,} pairs ({s.set_pairs:,} between distinct sets)")
    for note in s.notes:
        err.print(f"allpairs: {note}")
    times = dict(s.seconds)
    if write_seconds is not None:
        times["write"] = write_seconds
    err.print("allpairs: time " + ", ".join(f"{k} {v:.2f}s" for k, v in times.items())
              + f"; peak memory {_mib(s.peak_memory)}")


def _warn_skipped(res: JoinResult, shown: int = 5) -> None:
    skipped = res.stats.skipped
    if not skipped:
        return
    reasons = ", ".join(f"{why}: {n:,}" for why, n in res.stats.skipped_by_reason.most_common())
    examples = ", ".join(f"{i} ({why})" for i, why in skipped[:shown])
    more = f", and {len(skipped) - shown:,} more" if len(skipped) > shown else ""
    err.print(f"allpairs: warning: skipped {len(skipped):,} documents ({reasons}): {examples}{more}")


def _fail(e: AllPairsError) -> None:
    err.print(f"allpairs: error: {e}")
    raise typer.Exit(e.exit_code)


@app.command("join")
def join_command(
    path: str = typer.Argument(..., help="A directory (every file a document), or a file with --lines/--sets/--jsonl ('-' for stdin)."),
    threshold: str = typer.Option(..., "--threshold", "-t", help="Jaccard threshold in (0, 1]: pairs with J >= t are printed. Read exactly (0.7 is 7/10)."),
    lines: bool = typer.Option(False, "--lines", help="Each line of PATH is a record (id = line number; the line is printed too)."),
    sets: bool = typer.Option(False, "--sets", help="Each line of PATH is a set of whitespace-separated tokens (id = line number)."),
    jsonl: bool = typer.Option(False, "--jsonl", help="PATH is JSON Lines with an id and a text field."),
    shingle: Optional[str] = typer.Option(None, "--shingle", "-s", help="word:N, char:N or code:N. Default: code:5 for a tree of source files, word:5 for other files and JSON Lines, char:3 for --lines."),
    no_normalize: bool = typer.Option(False, "--no-normalize", help="Keep text as is (default: NFKC, case folding, whitespace collapsed) for word and char shingles."),
    include: List[str] = typer.Option([], "--include", help="Only files matching this glob (repeatable), e.g. '*.go'."),
    exclude: List[str] = typer.Option([], "--exclude", help="Leave out files matching this glob (repeatable), e.g. '*_test.go' or 'testdata/**'."),
    min_bytes: int = typer.Option(0, "--min-bytes", help="Skip files smaller than this many bytes."),
    min_shingles: int = typer.Option(1, "--min-shingles", help="Skip documents with fewer distinct shingles."),
    encoding: str = typer.Option("utf-8", "--encoding", help="Encoding of --lines/--sets/--jsonl input."),
    id_field: str = typer.Option("id", "--id-field", help="JSON Lines: the field holding the document id."),
    text_field: str = typer.Option("text", "--text-field", help="JSON Lines: the field holding the text."),
    fmt: Format = typer.Option(Format.tsv, "--format", "-f", help="tsv: left, right, similarity. csv and jsonl add overlap and both set sizes."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write pairs to FILE (atomically) instead of stdout."),
    count: bool = typer.Option(False, "--count", help="Print only the number of pairs."),
    jobs: int = typer.Option(0, "--jobs", "-j", help="Threads (0 = all cores). The output is the same for any value."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar, warnings or summary on stderr."),
) -> None:
    """Print every pair of documents whose shingle sets have Jaccard similarity >= THRESHOLD.

    Pairs are sorted by left then right document, in input order (paths sorted,
    or line order); left comes before right. The similarity is truncated to 6
    decimals.
    """
    kinds = [k for k, on in (("lines", lines), ("sets", sets), ("jsonl", jsonl)) if on]
    if len(kinds) > 1:
        raise typer.BadParameter(f"choose one of --lines, --sets, --jsonl (got {', '.join('--' + k for k in kinds)})")
    if jobs < 0:
        raise typer.BadParameter(f"--jobs {jobs} is negative; give 0 (all cores) or more")
    bar = _Bar(not quiet)
    try:
        try:
            corpus = read_corpus(path, kinds[0] if kinds else "directory", include=include, exclude=exclude,
                                 min_bytes=min_bytes, encoding=encoding, id_field=id_field, text_field=text_field)
            res = run_join(corpus, threshold, shingle=shingle, normalize=not no_normalize,
                           min_shingles=min_shingles, jobs=jobs or None, progress=bar)
        finally:
            bar.close()
        if not quiet:
            _warn_skipped(res)
        write_seconds = None
        if count:
            typer.echo(len(res.pairs))
        else:
            t0 = time.perf_counter()
            writer = PairWriter(res.ids, fmt.value, texts=res.shown)
            with open_output(output) as out:
                writer.write(res.pairs, out)
            write_seconds = time.perf_counter() - t0
        if not quiet:
            _summary(res, write_seconds)
    except AllPairsError as e:
        _fail(e)


def _interrupted(e: BaseException | None) -> bool:
    """True if Ctrl-C is behind this exception (numba wraps an interrupt that lands in a
    compiled call in SystemError)."""
    seen = set()
    while e is not None and id(e) not in seen:
        if isinstance(e, KeyboardInterrupt):
            return True
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return False


def main() -> None:
    """Entry point of the console script: exit 0, 1 (data error), 2 (usage error) or 130 (Ctrl-C)."""
    try:
        app(prog_name="allpairs")
    except (SystemError, KeyboardInterrupt) as e:
        if not _interrupted(e):
            raise
        err.print("allpairs: interrupted")
        sys.exit(130)
