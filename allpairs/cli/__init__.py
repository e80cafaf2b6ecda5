"""The ``allpairs`` command: one module per command; each parses, calls one library function, renders.

stdout carries only data; progress, warnings and the summary go to stderr. Exit
status: 0, 1 (data or output error), 2 (usage error), 130 (Ctrl-C) and 128 + N
for any other terminating signal N (no partial file left), 141 on a closed pipe.
The program's entry point, which sets up signals before this package is
imported, is :func:`allpairs.__main__.main`.

A plain ``join --sets FILE -t T`` (:func:`plain_join`) runs by the fast path (:mod:`._fast`), which makes
the calls the typer command makes without importing typer; every other command line runs the typer app
(:mod:`._app`), imported here only then. A command's module is imported when the command runs
(:class:`._app.Commands`). The command modules do without ``from __future__ import annotations``: typer
evaluates each string annotation twice while it builds the command (some 12 M instructions a run for
``join``'s options), a plain one not at all.
"""
from __future__ import annotations

import functools
import os
import sys
from typing import Callable, NamedTuple

from .._kernels.jit import CompileClock, compile_clock
from .._plural import count
from ._render import err

__all__ = ["app", "command", "main", "plain_join"]


def __getattr__(name: str):
    if name == "app":  # the typer app, imported when asked for (tests, `allpairs.cli.app`)
        from ._app import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class PlainJoin(NamedTuple):
    """A plain join's command line: ``join PATH --sets -t T``, and ``-q``, ``--count`` or ``-o FILE``, ``-j N``."""
    path: str
    threshold: str
    quiet: bool = False
    count: bool = False
    output: str | None = None
    jobs: int = 0


#: The words of a plain join: its flags, then its options that take the next word as their value.
_FLAGS = {"--sets": "sets", "-q": "quiet", "--quiet": "quiet", "--count": "count"}
_VALUED = {"-t": "threshold", "--threshold": "threshold", "-o": "output", "--output": "output",
           "-j": "jobs", "--jobs": "jobs"}


def plain_join(argv: list[str]) -> PlainJoin | None:
    """``argv`` (the words after the program's name) as a plain join, if it is one beyond doubt; else None.

    A plain join is ``join``, one PATH, ``--sets`` and ``-t T``, with at most ``-q``, ``-j N`` and either
    ``--count`` or ``-o FILE`` beside them, in any order, each once; no word but a flag starts with '-'
    (PATH, T, FILE), N is ASCII digits. Anything else (help, another option, ``--opt=value``, a repeated or
    misspelt option, ``--``, '-' for stdin) is None: the typer app parses it, as ever.
    """
    if argv[:1] != ["join"] or "_ALLPAIRS_COMPLETE" in os.environ:  # click's shell completion: typer's
        return None
    given: dict[str, str | bool] = {}
    paths: list[str] = []
    words = iter(argv[1:])
    for word in words:
        if word in _FLAGS:
            name, value = _FLAGS[word], True
        elif word in _VALUED:
            name, value = _VALUED[word], next(words, "")
            if not value or value.startswith("-"):
                return None
        elif not word or word.startswith("-"):
            return None
        else:
            paths.append(word)
            continue
        if name in given:
            return None
        given[name] = value
    jobs = given.get("jobs", "0")
    if (len(paths) != 1 or not given.get("sets") or "threshold" not in given or
            (given.get("count") and "output" in given) or not (jobs.isascii() and jobs.isdigit())):
        return None
    return PlainJoin(paths[0], given["threshold"], quiet="quiet" in given, count="count" in given,
                     output=given.get("output"), jobs=int(jobs))


def command(argv: list[str]) -> Callable[[], None]:
    """What runs the command line ``argv``, with the modules it needs imported (the program imports them
    while the garbage collector pauses): a plain join's fast path, or the typer app."""
    plain = plain_join(argv)
    if plain is not None:
        from ._fast import run

        return functools.partial(run, plain)
    from ._app import app

    return functools.partial(app, prog_name="allpairs")


def _quiet(argv: list[str]) -> bool:
    """True if the command line asks for --quiet (-q) before any ``--``."""
    args = argv[: argv.index("--")] if "--" in argv else argv
    return "-q" in args or "--quiet" in args


def _say_compiled(clock: CompileClock) -> None:
    """On a cold first run (kernels not yet in numba's cache): one line saying so, and how long it took."""
    if clock.kernels and not _quiet(sys.argv[1:]):
        err.print(f"allpairs: compiled {count(clock.kernels, 'kernel')} once in {clock.seconds:.1f}s "
                  "(cached for later runs, which skip this)")


def main(run: Callable[[], None] | None = None) -> None:
    """Run the command line (``run``, made by :func:`command`), and on a cold run say what compiling the
    kernels cost. The program, :func:`allpairs.__main__.main`, sets up standard streams and signals first
    and then calls this."""
    run = command(sys.argv[1:]) if run is None else run
    clock, watching = compile_clock()
    try:
        with watching:
            run()
    finally:
        _say_compiled(clock)
