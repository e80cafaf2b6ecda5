"""The ``allpairs`` command: one module per command; each parses, calls one library function, renders.

stdout carries only data; progress, warnings and the summary go to stderr. Exit
status: 0, 1 (data or output error), 2 (usage error), 130 (Ctrl-C) and 128 + N
for any other terminating signal N (no partial file left), 141 on a closed pipe.
The program's entry point, which sets up signals before this package is
imported, is :func:`allpairs.__main__.main`.
"""
from __future__ import annotations

from . import compare, dedup, index, join  # noqa: F401  (each module registers its command on the app)
from ._app import app, err

__all__ = ["app", "main"]


def main() -> None:
    """Run the command line. The program, :func:`allpairs.__main__.main`, sets up standard
    streams and signals first and then calls this."""
    app(prog_name="allpairs")
