"""The ``allpairs`` command: parse, call one library function, render.

stdout carries only data (pairs, a count, a JSON report); progress, warnings
and the summary go to stderr, and ``--quiet`` silences them. An
:class:`~allpairs.errors.AllPairsError` becomes one line on stderr and exit
status 1 (data) or 2 (usage); Ctrl-C exits 130 and leaves no partial file.
"""
from __future__ import annotations

import json
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
from .join import JoinResult, Stats, join as run_join, peak_memory
from .pairs import PairWriter, open_output
from .report import compare as run_compare, render_table

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


class Method(str, Enum):
    exact = "exact"
    lsh = "lsh"


class Verify(str, Enum):
    exact = "exact"
    estimate = "estimate"


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
              + f"; peak memory {_mib(max(s.peak_memory, peak_memory()))}")


def _warn_skipped(stats: Stats, shown: int = 5) -> None:
    skipped = stats.skipped
    if not skipped:
        return
    reasons = ", ".join(f"{why}: {n:,}" for why, n in stats.skipped_by_reason.most_common())
    examples = ", ".join(f"{i} ({why})" for i, why in skipped[:shown])
    more = f", and {len(skipped) - shown:,} more" if len(skipped) > shown else ""
    err.print(f"allpairs: warning: skipped {len(skipped):,} documents ({reasons}): {examples}{more}")


def _fail(e: AllPairsError) -> None:
    err.print(f"allpairs: error: {e}")
    raise typer.Exit(e.exit_code)


# Options shared by join and compare (one definition, so help and defaults agree).
PATH = typer.Argument(..., help="A directory (every file a document), or a file with --lines/--sets/--jsonl ('-' for stdin).")
THRESHOLD = typer.Option(..., "--threshold", "-t", help="Jaccard threshold in (0, 1]: pairs with J >= t. Read exactly (0.7 is 7/10).")
LINES = typer.Option(False, "--lines", help="Each line of PATH is a record (id = line number; the line is printed too).")
SETS = typer.Option(False, "--sets", help="Each line of PATH is a set of whitespace-separated tokens (id = line number).")
JSONL = typer.Option(False, "--jsonl", help="PATH is JSON Lines with an id and a text field.")
SHINGLE = typer.Option(None, "--shingle", "-s", help="word:N, char:N or code:N. Default: code:5 for a tree of source files, word:5 for other files and JSON Lines, char:3 for --lines.")
NO_NORMALIZE = typer.Option(False, "--no-normalize", help="Keep text as is (default: NFKC, case folding, whitespace collapsed) for word and char shingles.")
INCLUDE = typer.Option([], "--include", help="Only files matching this glob (repeatable), e.g. '*.go'.")
EXCLUDE = typer.Option([], "--exclude", help="Leave out files matching this glob (repeatable), e.g. '*_test.go' or 'testdata/**'.")
MIN_BYTES = typer.Option(0, "--min-bytes", help="Drop files smaller than this many bytes.")
MIN_SHINGLES = typer.Option(1, "--min-shingles", help="Drop documents with fewer distinct shingles.")
ENCODING = typer.Option("utf-8", "--encoding", help="Encoding of --lines/--sets/--jsonl input.")
ID_FIELD = typer.Option("id", "--id-field", help="JSON Lines: the field holding the document id.")
TEXT_FIELD = typer.Option("text", "--text-field", help="JSON Lines: the field holding the text.")
JOBS = typer.Option(0, "--jobs", "-j", help="Threads (0 = all cores). The output is the same for any value.")
QUIET = typer.Option(False, "--quiet", "-q", help="No progress bar, warnings or summary on stderr.")
NUM_PERM = typer.Option(128, "--num-perm", "-k", help="LSH: MinHash values per document (K).")
BANDS = typer.Option(None, "--bands", "-b", help="LSH: number of bands b (with --rows). Default: chosen from the threshold and --recall.")
ROWS = typer.Option(None, "--rows", "-r", help="LSH: rows per band r (with --bands).")
RECALL = typer.Option(0.99, "--recall", help="LSH: when choosing b and r, the probability of finding a pair exactly at the threshold.")
SEED = typer.Option(1, "--seed", help="LSH: seed of the MinHash hash family; same seed, same signatures on any machine.")
BITS = typer.Option(None, "--bits", help="LSH: keep only the w low bits of each MinHash value (b-bit MinHash, 1..32); estimates are corrected for chance collisions.")
MAX_BUCKET = typer.Option(None, "--max-bucket", help="LSH: do not expand buckets of more distinct sets than this (reported on stderr). Default: no limit.")


def _read(path, lines, sets, jsonl, include, exclude, min_bytes, encoding, id_field, text_field):
    kinds = [k for k, on in (("lines", lines), ("sets", sets), ("jsonl", jsonl)) if on]
    if len(kinds) > 1:
        raise typer.BadParameter(f"choose one of --lines, --sets, --jsonl (got {', '.join('--' + k for k in kinds)})")
    return read_corpus(path, kinds[0] if kinds else "directory", include=include, exclude=exclude,
                       min_bytes=min_bytes, encoding=encoding, id_field=id_field, text_field=text_field)


def _check_jobs(jobs: int) -> None:
    if jobs < 0:
        raise typer.BadParameter(f"--jobs {jobs} is negative; give 0 (all cores) or more")


@app.command("join")
def join_command(
    path: str = PATH, threshold: str = THRESHOLD, lines: bool = LINES, sets: bool = SETS, jsonl: bool = JSONL,
    shingle: Optional[str] = SHINGLE, no_normalize: bool = NO_NORMALIZE, include: List[str] = INCLUDE,
    exclude: List[str] = EXCLUDE, min_bytes: int = MIN_BYTES, min_shingles: int = MIN_SHINGLES,
    encoding: str = ENCODING, id_field: str = ID_FIELD, text_field: str = TEXT_FIELD,
    method: Method = typer.Option(Method.exact, "--method", "-m", help="exact: prefix-filter join, every pair. lsh: MinHash + LSH candidates, verified; finds a pair of similarity s with probability P(s)."),
    num_perm: int = NUM_PERM, bands: Optional[int] = BANDS, rows: Optional[int] = ROWS, recall: float = RECALL,
    seed: int = SEED, bits: Optional[int] = BITS, max_bucket: Optional[int] = MAX_BUCKET,
    verify: Verify = typer.Option(Verify.exact, "--verify", help="LSH: exact (default) checks every candidate; estimate keeps the MinHash estimate, marked '~' in TSV and named 'estimate' in CSV/JSON."),
    fmt: Format = typer.Option(Format.tsv, "--format", "-f", help="tsv: left, right, similarity. csv and jsonl add overlap and both set sizes."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write pairs to FILE (atomically) instead of stdout."),
    count: bool = typer.Option(False, "--count", help="Print only the number of pairs."),
    jobs: int = JOBS, quiet: bool = QUIET,
) -> None:
    """Print every pair of documents whose shingle sets have Jaccard similarity >= THRESHOLD.

    Pairs are sorted by left then right document, in input order (paths sorted,
    or line order); left comes before right. The similarity is truncated to 6
    decimals.
    """
    _check_jobs(jobs)
    bar = _Bar(not quiet)
    try:
        try:
            corpus = _read(path, lines, sets, jsonl, include, exclude, min_bytes, encoding, id_field, text_field)
            res = run_join(corpus, threshold, method=method.value, shingle=shingle, normalize=not no_normalize,
                           min_shingles=min_shingles, jobs=jobs or None, num_perm=num_perm, bands=bands,
                           rows=rows, recall=recall, seed=seed, bits=bits, max_bucket=max_bucket,
                           verify=verify.value, progress=bar)
        finally:
            bar.close()
        if not quiet:
            _warn_skipped(res.stats)
        write_seconds = None
        if count:
            typer.echo(len(res.pairs))
        else:
            t0 = time.perf_counter()
            writer = PairWriter(res.ids, fmt.value, texts=res.shown, estimated=res.pairs.estimated)
            with open_output(output) as out:
                writer.write(res.pairs, out)
            write_seconds = time.perf_counter() - t0
        if not quiet:
            _summary(res, write_seconds)
    except AllPairsError as e:
        _fail(e)


@app.command("compare")
def compare_command(
    path: str = PATH, threshold: str = THRESHOLD, lines: bool = LINES, sets: bool = SETS, jsonl: bool = JSONL,
    shingle: Optional[str] = SHINGLE, no_normalize: bool = NO_NORMALIZE, include: List[str] = INCLUDE,
    exclude: List[str] = EXCLUDE, min_bytes: int = MIN_BYTES, min_shingles: int = MIN_SHINGLES,
    encoding: str = ENCODING, id_field: str = ID_FIELD, text_field: str = TEXT_FIELD,
    num_perm: int = NUM_PERM, bands: Optional[int] = BANDS, rows: Optional[int] = ROWS, recall: float = RECALL,
    seed: int = SEED, bits: Optional[int] = BITS, max_bucket: Optional[int] = MAX_BUCKET,
    json_out: bool = typer.Option(False, "--json", help="Print the comparison as JSON instead of a table."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Draw the S-curve with the observed recall per band to FILE (.png or .svg), and the LSH candidates as chords on a circle to FILE-chords.png/.svg."),
    jobs: int = JOBS, quiet: bool = QUIET,
) -> None:
    """Run the exact join and the LSH join on the same shingle sets and compare recall and cost.

    Prints all pairs, pairs with J >= THRESHOLD, LSH candidates and their share
    of all pairs, pairs LSH found, recall overall and per similarity band beside
    the S-curve's prediction, and the time and peak memory of each stage.
    """
    _check_jobs(jobs)
    bar = _Bar(not quiet)
    try:
        if plot is not None:
            from .plot import check_plot_path

            check_plot_path(plot)  # refuse a bad file name before the work, not after
        try:
            corpus = _read(path, lines, sets, jsonl, include, exclude, min_bytes, encoding, id_field, text_field)
            c = run_compare(corpus, threshold, shingle=shingle, normalize=not no_normalize,
                            min_shingles=min_shingles, jobs=jobs or None, num_perm=num_perm, bands=bands,
                            rows=rows, recall=recall, seed=seed, bits=bits, max_bucket=max_bucket, progress=bar)
        finally:
            bar.close()
        if not quiet:
            _warn_skipped(c.stats)
            for note in c.stats.notes:
                err.print(f"allpairs: {note}")
        if json_out:
            typer.echo(json.dumps(c.as_dict(), indent=2))
        else:
            typer.echo(render_table(c), nl=False)
        if plot is not None:
            from .plot import plot_comparison

            for written in plot_comparison(c, plot):
                if not quiet:
                    err.print(f"allpairs: wrote {written}")
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
