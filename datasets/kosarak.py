"""The Kosarak click-stream sample: pre-tokenised sets for ``--sets``.

The shared ``kosarak-sample.dat`` has one transaction per line, its items
space-separated integer ids. It holds 49,207 lines, of which 34,985 are
distinct as sets. (``wc -l`` says 49,206: the last line has no newline.)
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from datasets import missing, shared_file, shared_place

__all__ = ["KOSARAK", "kosarak_path", "kosarak_sets", "write_distinct"]

#: The sample in the shared data folder.
KOSARAK = "kosarak-sample.dat"


def kosarak_path() -> Path:
    """The shared ``kosarak-sample.dat``.

    Raises
    ------
    FileNotFoundError
        When it is absent (it comes with the project's shared data folder only).
    """
    path = shared_file(KOSARAK)
    if path is None:
        raise missing(
            "the Kosarak sample",
            [shared_place(KOSARAK)],
            [f"put {KOSARAK} in the shared data folder or set ALLPAIRS_DATASETS to a folder that holds it"],
        )
    return path


def _token_key(token: str) -> tuple[int, int, str]:
    """Integer ids in numeric order, any other token after them in string order."""
    return (0, int(token), token) if token.isdigit() else (1, 0, token)


def kosarak_sets(distinct: bool = False) -> list[list[str]]:
    """The sample's transactions, one list of item ids per line, in file order.

    Parameters
    ----------
    distinct : bool
        False: every line, its tokens as written (one line repeats an item).
        True: each line taken as a set (repeated items dropped, ids sorted
        numerically), and only the first line with each set kept, in file
        order: 34,985 sets.
    """
    lines = kosarak_path().read_text(encoding="ascii").splitlines()
    if not distinct:
        return [line.split() for line in lines]
    seen: set[tuple[str, ...]] = set()
    out: list[list[str]] = []
    for line in lines:
        key = tuple(sorted(set(line.split()), key=_token_key))
        if key not in seen:
            seen.add(key)
            out.append(list(key))
    return out


def write_distinct(path: str | os.PathLike) -> Path:
    """Write the distinct sets as a ``--sets`` file (one set per line), atomically.

    Returns the path written.
    """
    path = Path(path)
    text = "".join(" ".join(tokens) + "\n" for tokens in kosarak_sets(distinct=True))
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes it private
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path
