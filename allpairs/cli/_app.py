"""The typer application, stderr messages and rendering shared by every command.

stdout carries only data (pairs, a count, a JSON report); progress, warnings
and the summary go to stderr, and ``--quiet`` silences them. Every message is
one line, printed as plain text through :func:`shown`, so that ids, paths and
user values appear verbatim (no markup) and their control characters escaped
(never interpreted by the terminal). Exit status: 0; 1 for a data or output
error (:class:`~allpairs.errors.AllPairsError`, a full disk, out of memory); 2
for a usage error, every one of them a single ``allpairs: error: ...`` line;
130 on Ctrl-C; 141 (as ``cat``) when the reader of stdout has gone.
"""
from __future__ import annotations

import errno
import importlib
import re
import sys
import time
from collections.abc import MutableMapping

import typer
from typer.core import TyperGroup

from .. import __version__
from .._plural import count
from ..errors import AllPairsError
from ..pipeline import JoinResult, Stats, peak_memory
from ..pairs.clusters import Clusters

#: Characters a terminal could act on, or that would break a message's line:
#: C0 and C1 controls, DEL, line and paragraph separators, bidirectional
#: overrides, and lone surrogates (bytes of a file name that is not UTF-8).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")
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
    return _UNSAFE.sub(lambda m: _escape(m.group()), s) if _UNSAFE.search(s) else s


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


#: click's exceptions, wherever this typer keeps click (its own copy since typer 0.2x, else click).
_ce = importlib.import_module(typer.BadParameter.__module__)
_NoArgsIsHelp = getattr(_ce, "NoArgsIsHelpError", ())


class BrokenPipe(SystemExit):
    """The reader of stdout went away (``| head``): end quietly, with the status ``cat`` has there."""

    def __init__(self):
        super().__init__(141)


def _usage_line(e: Exception) -> str:
    """A click usage error as one line, in our words."""
    if isinstance(e, _ce.BadParameter) and not isinstance(e, _ce.MissingParameter):
        message = str(e.message).removeprefix("Value error, ").rstrip(".")
        param = e.param
        if e.param_hint is None and param is not None and getattr(param, "opts", None):
            opts = [o for o in param.opts if o.startswith("--")] or list(param.opts)
            if param.param_type_name == "argument":
                return f"{param.human_readable_name}: {message}"
            return f"{opts[0]}: {message}"
        return message
    message = e.format_message().rstrip(".")
    return message[:1].lower() + message[1:]


#: The commands in the order of the pipeline they run (the help lists them so), each defined by the module
#: of its name in this package.
PIPELINE = ("sets", "join", "compare", "index", "dedup")


class Commands(MutableMapping):
    """The group's commands by name, each made when it is first looked up: its module imported (which
    registers the command on :data:`app`), then typer's click command built from that. A run imports the
    command it runs and not the others' libraries (the report's, the index's); ``allpairs --help`` looks
    every command up."""

    def __init__(self) -> None:
        self._made: dict = {}

    def __getitem__(self, name: str):
        if name not in self._made:
            if name not in PIPELINE:
                raise KeyError(name)
            self._made[name] = _make_command(name)
        return self._made[name]

    def __setitem__(self, name: str, command) -> None:
        self._made[name] = command

    def __delitem__(self, name: str) -> None:
        del self._made[name]

    def __iter__(self):
        return iter(dict.fromkeys([*PIPELINE, *self._made]))

    def __len__(self) -> int:
        return len(set(PIPELINE) | set(self._made))


def _make_command(name: str):
    """The click command (or group) ``name``: its module imported, built as typer builds a group's commands."""
    importlib.import_module(f"{__package__}.{name}")
    for info in app.registered_commands:
        if info.name == name:
            # The command list of `allpairs --help` shows the first paragraph whole, never cut with "...".
            if info.short_help is None and info.callback is not None and info.callback.__doc__:
                info.short_help = " ".join(info.callback.__doc__.strip().split("\n\n")[0].split())
            return typer.main.get_command_from_info(info, pretty_exceptions_short=app.pretty_exceptions_short,
                                                    rich_markup_mode=app.rich_markup_mode)
    info = next(info for info in app.registered_groups if info.name == name)
    return typer.main.get_group_from_info(info, pretty_exceptions_short=app.pretty_exceptions_short,
                                          rich_markup_mode=app.rich_markup_mode,
                                          suggest_commands=app.suggest_commands)


class Group(TyperGroup):
    """The command group, with our own ending for every outcome: usage errors as one line
    (exit 2), library errors as one line (exit 1 or 2), Ctrl-C (130), a closed pipe (quiet,
    141), a full disk or other I/O error and exhausted memory (one line, exit 1).
    Its commands are listed in pipeline order (:data:`PIPELINE`), not alphabetically, and
    made on first use (:class:`Commands`)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.commands = Commands()  # typer built those already registered: made again, alike, when looked up

    def list_commands(self, ctx):
        return sorted(self.commands, key=lambda name: (PIPELINE + (name,)).index(name))

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BrokenPipeError:  # before typer's own handler turns it into exit 1
            raise BrokenPipe() from None
        except OSError as e:
            if e.errno == errno.EPIPE:
                raise BrokenPipe() from None
            raise

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
            code = rv if isinstance(rv, int) and not isinstance(rv, bool) else 0
            if code == 130:  # typer turns an uncaught KeyboardInterrupt into exit 130
                err.print("allpairs: interrupted")
            if sys.stdout is not None:
                sys.stdout.flush()
        except _NoArgsIsHelp as e:  # bare `allpairs`: the help, on stderr as click does
            if sys.stderr is not None:
                sys.stderr.write(e.format_message() + "\n")
            code = 2
        except _ce.UsageError as e:  # one line, as every error (the help is a -h away)
            err.print(f"allpairs: error: {_usage_line(e)}")
            code = 2
        except typer.Abort:
            err.print("allpairs: interrupted")
            code = 130
        except MemoryError:
            err.print("allpairs: error: out of memory; free some, raise the limit (ulimit -v), or join a smaller input")
            code = 1
        except OSError as e:  # an I/O error the library did not name: writing stdout (a full disk), mostly
            what = e.filename if e.filename else "cannot write standard output"
            err.print(f"allpairs: error: {what}: {e.strerror or e}")
            code = 1
        sys.exit(code)


app = typer.Typer(
    cls=Group,
    add_completion=False,
    pretty_exceptions_enable=False,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,
    help="Exact all-pairs set-similarity join (Jaccard of shingle sets), with MinHash+LSH beside it.",
)


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
    if isinstance(res.clusters, Clusters):
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
         "existing=skip": "--skip-existing"}


def message(e: AllPairsError) -> str:
    """The library's message as the command line says it: its parameters as flags."""
    return e.for_flags(FLAGS)


def fail(e: AllPairsError) -> None:
    err.print(f"allpairs: error: {message(e)}")
    raise typer.Exit(e.exit_code)
