"""Run a program that imports SetSimilaritySearch, with the real package or with allpairs.compat in its place.

Usage: ``python run_client.py MODE PROGRAM [ARGS...]``, MODE one of

- ``setsimilaritysearch``: the real package, as installed;
- ``install``: ``allpairs.compat.install()`` first;
- ``bare``: ``sys.modules["SetSimilaritySearch"] = allpairs.compat`` first (submodules found through it).

The program runs as ``__main__`` with ``sys.argv = [PROGRAM, *ARGS]``, unchanged.
"""
import runpy
import sys


def main() -> None:
    mode, program, *args = sys.argv[1:]
    if mode == "install":
        import allpairs.compat

        allpairs.compat.install()
    elif mode == "bare":
        import allpairs.compat

        sys.modules["SetSimilaritySearch"] = allpairs.compat
    elif mode != "setsimilaritysearch":
        sys.exit(f"run_client.py: unknown mode {mode!r}")
    sys.argv = [program, *args]
    runpy.run_path(program, run_name="__main__")


if __name__ == "__main__":
    main()
