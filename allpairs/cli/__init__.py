"""The ``allpairs`` command: one module per command; each parses, calls one library function, renders.

stdout carries only data; progress, warnings and the summary go to stderr. Exit
status: 0, 1 (data error), 2 (usage error), 130 (Ctrl-C, no partial file left).
"""
from __future__ import annotations

import sys

from . import compare, dedup, index, join, sets  # noqa: F401  (each module registers its command on the app)
from .._numba import CompileClock, compile_clock
from ._app import app, err

__all__ = ["app", "main"]


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


def _quiet(argv: list[str]) -> bool:
    """True if the command line asks for --quiet (-q) before any ``--``."""
    args = argv[: argv.index("--")] if "--" in argv else argv
    return "-q" in args or "--quiet" in args


def _say_compiled(clock: CompileClock) -> None:
    """On a cold first run (kernels not yet in numba's cache): one line saying so, and how long it took."""
    if clock.kernels and not _quiet(sys.argv[1:]):
        err.print(f"allpairs: compiled {clock.kernels} kernels once in {clock.seconds:.1f}s "
                  "(cached for later runs, which skip this)")


def main() -> None:
    """Entry point of the console script: exit 0, 1 (data error), 2 (usage error) or 130 (Ctrl-C)."""
    clock, watching = compile_clock()
    try:
        with watching:
            app(prog_name="allpairs")
    except (SystemError, KeyboardInterrupt) as e:
        if not _interrupted(e):
            raise
        err.print("allpairs: interrupted")
        sys.exit(130)
    finally:
        _say_compiled(clock)
