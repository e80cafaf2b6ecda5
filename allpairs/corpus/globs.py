"""Glob patterns of ``--include`` and ``--exclude``: ``*`` within a path component, ``**`` across,
``[...]`` with ranges and POSIX classes; a malformed pattern is a usage error."""
from __future__ import annotations

import re
import string
from functools import lru_cache
from typing import Iterable

from ..errors import UsageError


#: Character classes of ``[[:name:]]`` in a glob, over ASCII as in git's wildmatch.
_POSIX_CLASSES = {
    "alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "blank": " \\t", "cntrl": "\\x00-\\x1f\\x7f", "digit": "0-9",
    "graph": "!-~", "lower": "a-z", "print": " -~", "punct": "".join("\\" + c for c in string.punctuation),
    "space": " \\t\\n\\r\\f\\v", "upper": "A-Z", "xdigit": "0-9A-Fa-f",
}


def _bracket(pattern: str, i: int) -> tuple[str, int]:
    """The regex of the ``[...]`` class opening at ``pattern[i]``, and the index after its ``]``.

    ``[!...]`` or ``[^...]`` negates, a ``]`` first in the class is literal,
    ``a-z`` is a range, ``[:alpha:]`` a POSIX class, ``\\`` escapes the next
    character; no class matches ``/``.
    """
    def bad(why: str) -> UsageError:
        return UsageError(f"glob {pattern!r}: {why}")

    j = i + 1
    negate = j < len(pattern) and pattern[j] in "!^"
    j += negate
    items: list[str] = []
    first = True
    while True:
        if j >= len(pattern):
            raise bad(f"'[' at column {i + 1} is never closed; write '[[]' for a literal '['")
        c = pattern[j]
        if c == "]" and not first:
            break
        first = False
        if pattern.startswith("[:", j) and ":]" in pattern[j + 2:]:
            k = pattern.index(":]", j + 2)
            name = pattern[j + 2:k]
            if name not in _POSIX_CLASSES:
                raise bad(f"unknown character class [:{name}:]; known: {', '.join(sorted(_POSIX_CLASSES))}")
            items.append(_POSIX_CLASSES[name])
            j = k + 2
            continue
        if c == "\\" and j + 1 < len(pattern):
            j += 1
            c = pattern[j]
        if j + 2 < len(pattern) and pattern[j + 1] == "-" and pattern[j + 2] != "]":
            hi = pattern[j + 2]
            if hi < c:
                raise bad(f"range {c}-{hi} is reversed; write {hi}-{c}")
            items.append(f"{re.escape(c)}-{re.escape(hi)}")
            j += 3
            continue
        items.append(re.escape(c))
        j += 1
    return f"(?!/)[{'^' if negate else ''}{''.join(items)}]", j + 1


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern:
    """A glob as a regex over '/'-separated relative paths.

    ``**`` crosses directories, ``*`` and ``?`` do not. A pattern is matched
    against the path and against every tail of it that starts a component
    (``*.go`` matches ``a/b.go``; ``testdata/**`` matches ``x/testdata/y.go``),
    unless it starts with ``/``, which anchors it at the root. A malformed
    pattern (an unclosed ``[``, a reversed range, an unknown ``[:class:]``) is
    a :class:`UsageError`.
    """
    anchored = pattern.startswith("/")
    pat = pattern.lstrip("/")
    out = []
    i = 0
    while i < len(pat):
        c = pat[i]
        if pat.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pat.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "[":
            part, i = _bracket(pattern, i + len(pattern) - len(pat))
            i -= len(pattern) - len(pat)
            out.append(part)
            continue
        out.append("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c))
        i += 1
    head = "" if anchored else "(?:.*/)?"
    return re.compile(head + "".join(out) + r"\Z", re.DOTALL)


def matches(path: str, patterns: Iterable[str]) -> bool:
    """True if the relative '/'-separated ``path`` matches any glob pattern."""
    return any(glob_regex(p).match(path) for p in patterns)
