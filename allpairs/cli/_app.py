"""The typer application: its commands, made on first use, and the ending of every run.

Messages and rendering shared by every command are in :mod:`._render` (no typer
there), and named here too. Exit status: 0; 1 for a data or output
error (:class:`~allpairs.errors.AllPairsError`, a full disk, out of memory); 2
for a usage error, every one of them a single ``allpairs: error: ...`` line;
130 on Ctrl-C; 141 (as ``cat``) when the reader of stdout has gone.
"""
from __future__ import annotations

import importlib
import sys
from collections.abc import MutableMapping

import typer
from typer.core import TyperGroup

from .. import __version__
from ..errors import AllPairsError
from ._render import (FLAGS, Bar, BrokenPipe, Messages, broken_pipe, err, failed, message, refused, shown, summary,
                      warn_skipped, write_join)

__all__ = ["FLAGS", "Bar", "BrokenPipe", "Messages", "app", "err", "fail", "message", "shown", "summary",
           "warn_skipped", "write_join"]

#: click's exceptions, wherever this typer keeps click (its own copy since typer 0.2x, else click).
_ce = importlib.import_module(typer.BadParameter.__module__)
_NoArgsIsHelp = getattr(_ce, "NoArgsIsHelpError", ())


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
        except OSError as e:  # a closed pipe, before typer's own handler turns it into exit 1
            if broken_pipe(e):
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
        except (MemoryError, OSError) as e:  # an I/O error the library did not name: writing stdout, mostly
            code = failed(e)
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


def fail(e: AllPairsError) -> None:
    raise typer.Exit(refused(e))
