"""The typer application, stderr console and rendering shared by every command.

stdout carries only data (pairs, a count, a JSON report); progress, warnings
and the summary go to stderr, and ``--quiet`` silences them. An
:class:`~allpairs.errors.AllPairsError` becomes one line on stderr and exit
status 1 (data) or 2 (usage).
"""
from __future__ import annotations

import time

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

from .. import __version__
from ..errors import AllPairsError
from ..join import JoinResult, Stats, peak_memory

app = typer.Typer(
    add_completion=False,
    pretty_exceptions_enable=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Exact all-pairs set-similarity join (Jaccard of shingle sets), with MinHash+LSH beside it.",
)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"allpairs {__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """Exact all-pairs set-similarity join."""


class Bar:
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


def summary(res: JoinResult, write_seconds: float | None) -> None:
    s = res.stats
    dropped = f" ({s.dropped:,} more dropped by --min-bytes/--min-shingles)" if s.dropped else ""
    err.print(f"allpairs: {s.documents:,} documents, {len(s.skipped):,} skipped, {s.joined:,} joined{dropped}; "
              f"{res.shingle} shingles: {s.shingles:,} ({s.distinct_shingles:,} distinct); "
              f"{s.distinct_sets:,} distinct sets")
    measure = res.measure.name
    at = f"k = {res.threshold.p}" if res.measure.integer_threshold else f"t = {res.threshold}"
    what = f"{res.method} join" if measure == "jaccard" else f"{res.method} {measure} join"
    if res.n_left is not None:
        what += f" of {res.n_left:,} against {len(res.ids) - res.n_left:,} documents"
    err.print(f"allpairs: {what} at {at}: {s.candidates:,} candidates, "
              f"{s.pairs:,} pairs ({s.set_pairs:,} between distinct sets)")
    if res.clusters is not None:
        err.print(f"allpairs: {len(res.clusters):,} clusters of 2 or more documents, the largest of "
                  f"{res.clusters.largest:,}")
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
    examples = ", ".join(f"{i} ({why})" for i, why in skipped[:shown])
    more = f", and {len(skipped) - shown:,} more" if len(skipped) > shown else ""
    err.print(f"allpairs: warning: skipped {len(skipped):,} documents ({reasons}): {examples}{more}")


def fail(e: AllPairsError) -> None:
    err.print(f"allpairs: error: {e}")
    raise typer.Exit(e.exit_code)
