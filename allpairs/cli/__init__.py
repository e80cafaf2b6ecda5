"""The ``allpairs`` command: one module per command; each parses, calls one library function, renders.

stdout carries only data; progress, warnings and the summary go to stderr. Exit
status: 0, 1 (data or output error), 2 (usage error), 130 (Ctrl-C) and 128 + N
for any other terminating signal N (no partial file left), 141 on a closed pipe.
The program's entry point, which sets up signals before this package is
imported, is :func:`allpairs.__main__.main`.

A command's module is imported when the command runs (:class:`._app.Commands`).
The command modules do without ``from __future__ import annotations``: typer
evaluates each string annotation twice while it builds the command (some
12 M instructions a run for ``join``'s options), a plain one not at all.
"""
from __future__ import annotations

import sys

from .._kernels.jit import CompileClock, compile_clock
from .._plural import count
from ._app import app, err

__all__ = ["app", "main"]


def _quiet(argv: list[str]) -> bool:
    """True if the command line asks for --quiet (-q) before any ``--``."""
    args = argv[: argv.index("--")] if "--" in argv else argv
    return "-q" in args or "--quiet" in args


def _say_compiled(clock: CompileClock) -> None:
    """On a cold first run (kernels not yet in numba's cache): one line saying so, and how long it took."""
    if clock.kernels and not _quiet(sys.argv[1:]):
        err.print(f"allpairs: compiled {count(clock.kernels, 'kernel')} once in {clock.seconds:.1f}s "
                  "(cached for later runs, which skip this)")


def main() -> None:
    """Run the command line, and on a cold run say what compiling the kernels cost. The program,
    :func:`allpairs.__main__.main`, sets up standard streams and signals first and then calls this."""
    clock, watching = compile_clock()
    try:
        with watching:
            app(prog_name="allpairs")
    finally:
        _say_compiled(clock)
