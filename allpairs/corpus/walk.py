"""The walk of a directory tree: every regular file below it, sorted, links not followed, hidden names
and what ``.gitignore``/``.ignore`` files say left out (git's rules, read by pathspec)."""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from .model import HIDDEN, IGNORED, LINK, SPECIAL


#: Files whose gitignore-style patterns leave files out, read in this order (a later one wins).
IGNORE_FILES = (".gitignore", ".ignore")


@dataclass(frozen=True)
class _Ignore:
    """One ignore file's patterns; a path below the walk's root is matched as ``prefix + path[strip:]``."""

    spec: object
    strip: int
    prefix: str

    def check(self, rel: str, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included by a ``!`` pattern; None: no pattern matches."""
        return self.spec.check_file(self.prefix + rel[self.strip:] + ("/" if is_dir else "")).include


def _ignore_file(directory: Path, strip: int, prefix: str, named: tuple[str, ...] = ()) -> list[_Ignore]:
    """The rules of ``directory``'s ignore files; patterns that would ignore one of the ``named``
    directories (those between it and a directory the user gave, given one included) are dropped:
    a directory named on the command line is read, as ripgrep reads it."""
    import pathspec

    out = []
    for name in IGNORE_FILES:
        try:
            lines = (directory / name).read_text(encoding="utf-8", errors="surrogateescape").splitlines()
        except OSError:
            continue  # absent or unreadable: it ignores nothing, as in git
        if named:
            lines = [line for line in lines
                     if not any(pathspec.GitIgnoreSpec.from_lines([line]).check_file(d).include for d in named)]
        out.append(_Ignore(pathspec.GitIgnoreSpec.from_lines(lines), strip, prefix))
    return out


def _parent_ignores(root: Path) -> list[_Ignore]:
    """Ignore files of the directories above ``root`` up to the git repository's top (the one holding .git)."""
    try:
        here = root.resolve()
    except OSError:
        return []
    chain = [here, *here.parents]
    top = next((k for k, d in enumerate(chain) if (d / ".git").exists()), None)
    if top is None or top == 0:
        return []
    out = []
    for d in reversed(chain[1:top + 1]):  # outermost first: a deeper file wins
        below = here.relative_to(d).parts
        named = tuple("/".join(below[:k]) + "/" for k in range(1, len(below) + 1))
        out += _ignore_file(d, 0, "/".join(below) + "/", named)
    return out


def walk(root: Path, *, hidden: bool, ignore: bool, left_out: Counter, on_error) -> list[tuple[str, Path]]:
    """:func:`walk_paths` with each path a :class:`~pathlib.Path`."""
    return [(rel, Path(path)) for rel, path in walk_paths(root, hidden=hidden, ignore=ignore, left_out=left_out,
                                                           on_error=on_error)]


def walk_paths(root: Path, *, hidden: bool, ignore: bool, left_out: Counter, on_error) -> list[tuple[str, str]]:
    """(relative posix path, path) of every regular file below root, sorted, links not followed.

    Unless ``hidden``, names starting with '.' are left out (folders with all
    they hold); with ``ignore``, so are ``.git`` and what ``.gitignore`` and
    ``.ignore`` files (in the tree and above it up to the repository's top)
    say, with git's rules (pathspec's GitIgnoreSpec). Each is counted in
    ``left_out`` under "hidden file", "hidden folder", "ignored file" or
    "ignored folder"; so are symbolic links ("symbolic link") and FIFOs,
    sockets and devices ("special file"), never read.
    """
    base = _parent_ignores(root) if ignore else []
    stack = [(root, "", base)]
    out = []
    while stack:
        d, rel, rules = stack.pop()
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError as e:
            on_error(rel or ".", f"unreadable directory ({e.strerror})")
            continue
        if ignore and any(e.name in IGNORE_FILES for e in entries):
            rules = rules + _ignore_file(d, len(rel) + 1 if rel else 0, "")
        for e in entries:
            r = f"{rel}/{e.name}" if rel else e.name
            try:
                is_dir = e.is_dir(follow_symlinks=False)
                regular = is_dir or e.is_file(follow_symlinks=False)
                link = not regular and e.is_symlink()
            except OSError as err:
                on_error(r, f"unreadable ({err.strerror})")
                continue
            kind = "folder" if is_dir else "file"
            if not hidden and e.name.startswith("."):
                left_out[f"{HIDDEN} {kind}"] += 1
                continue
            if ignore and ((is_dir and e.name == ".git") or _ignored(rules, r, is_dir)):
                left_out[f"{IGNORED} {kind}"] += 1
                continue
            if not regular:  # counted, so that a tree of links is not read as an empty one without a word
                left_out[LINK if link else SPECIAL] += 1
                continue
            if is_dir:
                stack.append((Path(e.path), r, rules))
            else:
                out.append((r, e.path))
    out.sort(key=lambda rp: rp[0])
    return out


def _ignored(rules: list[_Ignore], rel: str, is_dir: bool) -> bool:
    """The verdict of the deepest ignore file with a pattern matching ``rel``."""
    for rule in reversed(rules):
        verdict = rule.check(rel, is_dir)
        if verdict is not None:
            return verdict
    return False
