"""Stage 1: documents from a directory tree, a file of lines, a file of sets, or JSON Lines.

A :class:`Corpus` is a list of document ids with either texts or pre-tokenised
sets. Readers skip what cannot be a document (binary, undecodable, unreadable
files) and record why; malformed records in line-oriented input are errors
that name the file and line.
"""
from __future__ import annotations

import codecs
import json
import os
import re
import shlex
import stat
import string
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from .._kernels.jit import kernels_for
from .._plural import count
from ..errors import InputError, UsageError
from .languages import language_for_path
from .linefile import HashedSets, LineFile, TextLines, TokenSets, Utf8Texts, read_line_file, read_pieces

#: Bytes read to tell a binary file from text (as git and grep do: a NUL byte).
SNIFF_BYTES = 8192


@dataclass
class Corpus:
    """Documents to join.

    Attributes
    ----------
    ids : list
        One id per document, in output order: relative paths, line numbers or
        JSON ids (str), or for Python input dict keys or list positions.
    texts : sequence of str or None
        The documents' texts, when they are to be shingled (a directory's
        files are held as UTF-8 bytes and decoded on access, see
        :class:`~allpairs.corpus.linefile.Utf8Texts`).
    sets : list of list of str or None
        Pre-tokenised sets, when they are the shingles already.
    columns : dict of str to sequence of str
        Columns carried beside each id into every output, by name: the line
        for ``--lines`` ("text"), the ``--keep-col`` columns of a table or
        JSON Lines.
    languages : list of (str or None) or None
        Programming language of each document, for ``code:N`` shingles.
    skipped : list of (id, reason)
        Documents left out, with the reason.
    kind : str
        "directory", "lines", "sets", "jsonl", "csv", "tsv", "parquet", or for
        Python lists and dicts "texts" or "tokens".
    seconds : float
        Time spent reading.
    dropped : int
        Files left out because they are smaller than the minimum size.
    found : int
        Files found below the paths given (directory input), before any filter.
    left_out : dict of str to int
        Files and folders left out before reading, by reason: "hidden file",
        "hidden folder", "ignored file", "ignored folder" (by .gitignore,
        .ignore or being .git), "--include", "--exclude", "named twice".
    paths : list of str
        The paths read, as given.
    sources : list of str or None
        Directory input: for each document, the PATH it was found below, as
        given ("" for a file named on its own); what groups the documents of
        several PATHs in a picture as one root's directories are grouped.
    notes : list of str
        What the reader decided that the summary should say (ids taken from
        line numbers, a table read as one document).
    """

    ids: list[str]
    texts: list[str] | None = None
    sets: list[list[str]] | None = None
    columns: dict[str, Sequence[str]] = field(default_factory=dict)
    languages: list[str | None] | None = None
    skipped: list[tuple[str, str]] = field(default_factory=list)
    kind: str = "texts"
    seconds: float = 0.0
    dropped: int = 0
    found: int = 0
    left_out: dict[str, int] = field(default_factory=dict)
    paths: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    sources: list[str] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def shown(self) -> Sequence[str] | None:
        """The first carried column (a line's text for ``--lines``), or None: what labels a document."""
        return next(iter(self.columns.values()), None)

    def left_out_note(self) -> str | None:
        """What the hidden and ignore rules left out, in words, or None if nothing."""
        parts = []
        for why, flag in ((HIDDEN, "--hidden"), (IGNORED, "--no-ignore")):
            folders, files = self.left_out.get(f"{why} folder", 0), self.left_out.get(f"{why} file", 0)
            if folders or files:
                what = " and ".join(count(n, noun) for n, noun in ((folders, "folder"), (files, "file")) if n)
                by = "hidden" if why == HIDDEN else "ignored (.gitignore, .ignore, .git)"
                parts.append(f"{what} {by}; {flag} reads them")
        return "left out " + "; ".join(parts) if parts else None

    def empty_message(self) -> str:
        """Why no document was read: files found, what each filter left out, what was skipped."""
        where = f" from {', '.join(self.paths)}" if self.paths else ""
        parts = []
        if self.kind == "directory":
            parts.append(f"{count(self.found, 'file')} found")
            for key in (NOT_INCLUDED, EXCLUDED, NAMED_TWICE):
                if self.left_out.get(key):
                    parts.append(f"{self.left_out[key]:,} left out by {key}" if key.startswith("--")
                                 else f"{self.left_out[key]:,} {key}")
            if self.dropped:
                parts.append(f"{self.dropped:,} smaller than --min-bytes")
            note = self.left_out_note()
            if note:
                parts.append(note)
        if self.skipped:
            reasons = Counter(why.split(" (")[0] for _, why in self.skipped)
            parts.append("skipped " + ", ".join(f"{n:,} {why}" for why, n in reasons.most_common()))
        parts += self.notes
        return f"the corpus is empty: no document was read{where}" + (f" ({'; '.join(parts)})" if parts else "")


# --- directory trees ------------------------------------------------------

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
def _glob_regex(pattern: str) -> re.Pattern:
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
    return any(_glob_regex(p).match(path) for p in patterns)


#: Files whose gitignore-style patterns leave files out, read in this order (a later one wins).
IGNORE_FILES = (".gitignore", ".ignore")

#: Reasons a file or folder is left out before it is read (keys of :attr:`Corpus.left_out`).
HIDDEN, IGNORED, EXCLUDED, NOT_INCLUDED, NAMED_TWICE = "hidden", "ignored", "--exclude", "--include", "named twice"


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
    """:func:`_walk_paths` with each path a :class:`~pathlib.Path`."""
    return [(rel, Path(path)) for rel, path in _walk_paths(root, hidden=hidden, ignore=ignore, left_out=left_out,
                                                           on_error=on_error)]


def _walk_paths(root: Path, *, hidden: bool, ignore: bool, left_out: Counter, on_error) -> list[tuple[str, str]]:
    """(relative posix path, path) of every regular file below root, sorted, links not followed.

    Unless ``hidden``, names starting with '.' are left out (folders with all
    they hold); with ``ignore``, so are ``.git`` and what ``.gitignore`` and
    ``.ignore`` files (in the tree and above it up to the repository's top)
    say, with git's rules (pathspec's GitIgnoreSpec). Each is counted in
    ``left_out`` under "hidden file", "hidden folder", "ignored file" or
    "ignored folder".
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
                if not is_dir and not e.is_file(follow_symlinks=False):
                    continue
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


def check_file(data: bytes) -> tuple[bytes | None, str | None]:
    """(UTF-8 bytes, None) for a text file's bytes, a leading BOM dropped; (None, reason) for a binary
    (a NUL byte in the first SNIFF_BYTES) or undecodable one."""
    if data.find(b"\0", 0, SNIFF_BYTES) >= 0:
        return None, "binary"
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            return None, f"not UTF-8 (byte {e.start})"
        # A byte-order mark is not text: with it, a file's first shingles would differ from its copy's.
        if data.startswith(codecs.BOM_UTF8):
            data = data[len(codecs.BOM_UTF8):]
    return data, None


def decode_file(data: bytes) -> tuple[str | None, str | None]:
    """:func:`check_file`, the text decoded: (text, None) or (None, reason)."""
    data, why = check_file(data)
    return (None, why) if data is None else (data.decode("utf-8"), None)


def _disambiguate(ids: list[str], sources: list[str]) -> list[str]:
    """Ids made unique: an id that two paths given would both yield is prefixed by the
    path it came from (``json/a.txt``, ``email/a.txt``), again until no prefixed id is
    another document's id too (then each reads as the path to its own file); if that
    is still not unique, ``#2``, ``#3``, ... is appended in reading order."""
    out = list(ids)
    prefixed = [False] * len(ids)
    while True:  # a prefixed id can equal a document's id below another path: prefix that one too
        seen = Counter(out)
        clash = [k for k, i in enumerate(out) if seen[i] > 1 and sources[k] and not prefixed[k]]
        if not clash:
            break
        for k in clash:
            out[k] = f"{sources[k].rstrip('/')}/{ids[k]}"
            prefixed[k] = True
    taken: Counter = Counter()
    final = []
    for i in out:
        taken[i] += 1
        final.append(i if seen[i] == 1 or taken[i] == 1 else f"{i}#{taken[i]}")
    return final


def named_from_above(path: str | os.PathLike) -> str | None:
    """The PATH and ``--include`` that read the files below directory ``path`` with their
    ids prefixed by its name (``b/x.txt``, not ``x.txt``): its parent with ``--include 'b/**'``;
    None when ``path`` is no directory or its name is hidden or holds glob characters."""
    p = os.path.normpath(os.fspath(path))
    parent, name = os.path.split(p)
    if not os.path.isdir(p) or not name or name.startswith(".") or any(ch in name for ch in "*?[]{}!\\"):
        return None
    return f"{shlex.quote(parent or '.')} --include {shlex.quote(name + '/**')}"


def _read_bytes(path: str) -> bytes:
    """The bytes of the file at ``path``."""
    with open(path, "rb", buffering=0) as f:
        return f.readall()


class _TextBuffer:
    """Files' texts back to back in one UTF-8 buffer (about a byte a character, no string each),
    with room for ``capacity`` bytes at first, grown if files turn out larger."""

    def __init__(self, capacity: int) -> None:
        self.buffer = np.empty(capacity, np.uint8)
        self.ends = [0]

    def add(self, data: bytes) -> None:
        start = self.ends[-1]
        end = start + len(data)
        if end > len(self.buffer):
            grown = np.empty(max(end, 2 * len(self.buffer)), np.uint8)
            grown[:start] = self.buffer[:start]
            self.buffer = grown
        self.buffer[start:end] = np.frombuffer(data, np.uint8)
        self.ends.append(end)

    def texts(self) -> Utf8Texts:
        return Utf8Texts(self.buffer[: self.ends[-1]], np.array(self.ends, np.int64))


def read_directory(path: str | os.PathLike | Sequence[str | os.PathLike], *, include: Sequence[str] = (),
                   exclude: Sequence[str] = (), min_bytes: int = 0, hidden: bool = False,
                   ignore: bool = True) -> Corpus:
    """Every regular file under one or several paths as a document.

    ``path`` is a directory or a file, or a list of them, read as one corpus
    in the order given: a directory's files (sorted) get their path relative
    to it as id, a file given by name gets the path as given. An id that two
    paths would both give is prefixed by the path it came from (``json/a.txt``
    and ``email/a.txt``), and so is one that a prefixed id would take (then
    every prefixed id is the path of its own file), then numbered ``#2``,
    ``#3`` if still not unique; a file reached through two of the paths is
    read once.

    Below a directory, names starting with '.' are left out unless ``hidden``,
    and with ``ignore`` so are ``.git`` and what ``.gitignore`` and ``.ignore``
    files say (git's rules, nested files included, and those above the
    directory up to the repository's top), as ripgrep and fd do. Then files
    are chosen by glob patterns (``include``: any must match when given;
    ``exclude``: none may match; see :func:`matches`), then those smaller
    than ``min_bytes`` are dropped (counted), and binary (a NUL byte in the
    first 8 KiB), not UTF-8, or unreadable files are skipped with a reason.
    Symbolic links are not followed. What each filter left out is counted in
    :attr:`Corpus.left_out`.
    """
    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    if not paths:
        raise UsageError("no path given; give a directory or files")
    for pattern in (*include, *exclude):
        _glob_regex(pattern)  # a malformed pattern is a usage error before any reading
    for p in paths:
        if not Path(p).exists() and not Path(p).is_symlink():
            raise UsageError(f"{os.fspath(p)}: no such file or directory")
    skipped: list[tuple[str, str]] = []
    left_out: Counter = Counter()
    # First the files to read, with their sizes, so that one buffer holds them all;
    # a file skipped on the way keeps its place among them (a str: the reason).
    todo: list[tuple[str, str, int, str] | tuple[str, str]] = []
    read_from: dict[tuple[int, int], int] = {}
    found = dropped = 0
    for k, p in enumerate(paths):
        root = Path(p)
        if root.is_dir():
            files = _walk_paths(root, hidden=hidden, ignore=ignore, left_out=left_out,
                                on_error=lambda r, why: todo.append((r, why)))
            source = os.fspath(p)
        else:
            files = [(os.fspath(p), os.fspath(p))]
            source = ""
        for rel, f in files:
            found += 1
            if include and not matches(rel, include):
                left_out[NOT_INCLUDED] += 1
                continue
            if exclude and matches(rel, exclude):
                left_out[EXCLUDED] += 1
                continue
            try:
                st = os.stat(f)
            except OSError as e:
                todo.append((rel, f"unreadable ({e.strerror})"))
                continue
            if not stat.S_ISREG(st.st_mode):
                todo.append((rel, "not a regular file"))
                continue
            if read_from.setdefault((st.st_dev, st.st_ino), k) != k:
                left_out[NAMED_TWICE] += 1
                continue
            if st.st_size < min_bytes:
                dropped += 1
                continue
            todo.append((rel, f, st.st_size, source))
    ids, sources, langs = [], [], []
    texts = _TextBuffer(sum(item[2] for item in todo if len(item) == 4))
    for item in todo:
        if len(item) == 2:
            skipped.append(item)
            continue
        rel, f, _, source = item
        try:
            data = _read_bytes(f)
        except OSError as e:
            skipped.append((rel, f"unreadable ({e.strerror})"))
            continue
        data, why = check_file(data)
        if data is None:
            skipped.append((rel, why))
            continue
        ids.append(rel)
        sources.append(source)
        texts.add(data)
        langs.append(language_for_path(rel))
    if len(paths) > 1:
        ids = _disambiguate(ids, sources)
    return Corpus(ids=ids, texts=texts.texts(), languages=langs, skipped=skipped, kind="directory",
                  dropped=dropped, found=found, left_out=dict(left_out), paths=[os.fspath(p) for p in paths],
                  sources=sources)


# --- line-oriented files --------------------------------------------------

def _open_lines(path: str | os.PathLike, encoding: str) -> LineFile:
    """The file's lines, read in chunks ('-' reads stdin); see :mod:`allpairs.corpus.linefile` for the rules."""
    return read_line_file(path, encoding)


def read_lines(path: str | os.PathLike, *, encoding: str = "utf-8") -> Corpus:
    """Each line a record (passwords, titles); id = line number, the line shown beside it.

    Lines are held as one UTF-8 buffer and decoded on access (:class:`TextLines`).
    """
    lines = _open_lines(path, encoding)
    ids = [str(k + 1) for k in range(len(lines))]
    texts = TextLines(lines)
    return Corpus(ids=ids, texts=texts, columns={"text": texts}, kind="lines")


def read_sets(path: str | os.PathLike, *, encoding: str = "utf-8",
              hash_pieces: Callable | None = None) -> Corpus:
    """Each line a set of whitespace-separated tokens (the set-join benchmark format); id = line number.

    By default the sets are held as one UTF-8 buffer (:class:`TokenSets`),
    hashed later by a compiled kernel without a Python string per token.
    ``hash_pieces`` (the wiring passes :func:`allpairs.shingles.hash_set_pieces`:
    the reader never imports a later stage) hashes each chunk as it is read and
    keeps only the keys (:class:`HashedSets`, as :func:`allpairs.shingles.hash_sets`
    would give them): the file's text is never held whole.
    """
    if hash_pieces is not None:
        name, pieces = read_pieces(path, encoding)
        size = None
        if str(path) != "-":
            st = os.stat(path)
            size = st.st_size if stat.S_ISREG(st.st_mode) else None
        with kernels_for(size):  # a small file is hashed by the plain Python kernel
            sets = HashedSets(*hash_pieces(pieces, size))
    else:
        sets = TokenSets(_open_lines(path, encoding))
    ids = [str(k + 1) for k in range(len(sets))]
    return Corpus(ids=ids, sets=sets, kind="sets")


def fields_of(record: Sequence[str], most: int = 12) -> str:
    """The names of a record's fields (or a table's columns) for a message: the first ``most`` of them."""
    names = [str(k) for k in record]
    more = f", and {len(names) - most:,} more" if len(names) > most else ""
    return ", ".join(names[:most]) + more if names else "none"


def _json_default(value):
    """JSON text of what JSON has no type for: dates and times as ISO 8601, anything else by ``str``."""
    iso = getattr(value, "isoformat", None)
    return iso() if callable(iso) else str(value)


def cell_text(value) -> str:
    """A carried value as text, one rule for every input: a string as it is, nothing (None) as "", a date
    or time as ISO 8601 (``2024-05-01T12:30:00``), anything else as its JSON (``true``, ``2.5``, ``[1, 2]``)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    iso = getattr(value, "isoformat", None)
    if callable(iso):
        return iso()
    return json.dumps(value, ensure_ascii=False, default=_json_default)


#: A lone surrogate: half of a UTF-16 pair, which no UTF-8 text holds (JSON's "\ud800" escape makes one).
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def refuse_surrogates(value: str, where: str, what: str) -> None:
    """An InputError naming ``where`` if ``value`` holds a lone surrogate, which no output could write
    unambiguously as UTF-8 (so none is ever read)."""
    m = _LONE_SURROGATE.search(value)
    if m:
        raise InputError(f"{where}: {what} holds a lone surrogate \\u{ord(m.group()):04x} (half of a UTF-16 "
                         "pair, not a character; a JSON escape makes one): give the pair or the character")


class Records:
    """Documents read record by record from a table or JSON Lines: ids (given, or numbered), texts and
    carried columns; an id given twice is an error naming the places of both: lines (a table's record
    that spans lines by the line it starts on), or ``unit`` ("row" for Parquet)."""

    def __init__(self, keep: Sequence[str], unit: str = "line", id_name: str = "id", escapes: bool = False,
                 text_names: Sequence[str] = ("text",)) -> None:
        self.unit = unit
        self.text_names = ", ".join(map(repr, text_names))
        self.id_name = id_name
        self.escapes = escapes  # whether a value may hold a lone surrogate (JSON escapes; UTF-8 text holds none)
        self.ids: list = []
        self.texts: list[str] = []
        self.columns: dict[str, list[str]] = {name: [] for name in keep}
        self.seen: dict = {}

    def add(self, where: str, place: int, doc_id, text: str, kept: Sequence) -> None:
        """One document: its id (already a string), text and carried values, found at ``where`` (file:line),
        the ``place``-th line (or row) of its file. A lone surrogate in any of them is refused."""
        if doc_id in self.seen:
            raise InputError(f"{where}: id {doc_id!r} already used on {self.unit} {self.seen[doc_id]:,}")
        if self.escapes:
            refuse_surrogates(doc_id, where, f"field {self.id_name!r}")
            refuse_surrogates(text, where, f"the text ({self.text_names})")
        self.seen[doc_id] = place
        self.ids.append(doc_id)
        self.texts.append(text)
        for (name, values), value in zip(self.columns.items(), kept):
            cell = cell_text(value)
            if self.escapes:
                refuse_surrogates(cell, where, f"field {name!r}")
            values.append(cell)

    def corpus(self, kind: str, notes: list[str]) -> Corpus:
        return Corpus(ids=self.ids, texts=self.texts, columns=self.columns, kind=kind, notes=notes)


def id_text(value, where: str, name: str) -> str:
    """An id field's value as the id (a string or an integer, as text), else an error naming the field."""
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        raise InputError(f"{where}: field {name!r} holds {json.dumps(value)[:40]}; ids are strings or integers, "
                         "as in every input: write it as a string")
    return str(value)


def jsonl_object(line: str, where: str) -> dict | None:
    """One JSON Lines record as a dict, None for a blank line; ``where`` ("file:line") starts each error."""
    if not line.strip():
        return None
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        raise InputError(f"{where}: not valid JSON ({e.msg} at column {e.colno})") from None
    except RecursionError:
        raise InputError(f"{where}: JSON nested too deeply to read") from None
    except ValueError:  # an integer of more digits than Python converts
        raise InputError(f"{where}: a number of more than {sys.get_int_max_str_digits()} digits; "
                         "write such an id as a string") from None
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    return obj


def jsonl_field(obj: dict, name: str, where: str, option: str):
    """The value of field ``name``, or an error listing the fields the record has and the option to use."""
    if name not in obj:
        raise InputError(f"{where}: no {name!r} field (the record has {fields_of(obj)}); "
                         f"name the field with {option}")
    return obj[name]


def jsonl_text(obj: dict, names: Sequence[str], where: str) -> str:
    """The text of a record: its text fields, strings, joined by a space."""
    parts = []
    for name in names:
        value = jsonl_field(obj, name, where, "--text-col")
        if not isinstance(value, str):
            raise InputError(f"{where}: field {name!r} must be a string, got {type(value).__name__}")
        parts.append(value)
    return " ".join(parts)


def jsonl_record(line: str, where: str, id_field: str = "id", text_field: str = "text") -> tuple[str, str] | None:
    """(id, text) of one JSON Lines record, None for a blank line; ``where`` ("file:line") starts each error.

    Raises
    ------
    InputError
        Not JSON, not an object, a field missing (the message lists the
        record's fields), an id that is not a string or an integer, a text
        that is not a string.
    """
    obj = jsonl_object(line, where)
    if obj is None:
        return None
    return id_text(jsonl_field(obj, id_field, where, "--id-col"), where, id_field), jsonl_text(obj, [text_field], where)


def read_jsonl(path: str | os.PathLike, *, id_field: str | None = None, text_field: str | Sequence[str] = "text",
               keep: Sequence[str] = (), encoding: str = "utf-8") -> Corpus:
    """JSON Lines: one object per line with a text field (or several, joined by a space); blank lines are ignored.

    Ids are the ``id_field`` of each record; by default the ``id`` field, or,
    when no record has one, the line numbers (from 1, as for ``--lines``; the
    corpus's notes say so): records with and without ids are refused, naming
    a line of each. Ids are strings or integers; a lone surrogate (a JSON
    escape such as ``"\\ud800"``) in an id, a text or a carried field is
    refused, naming the line. ``keep`` names fields carried
    into the output beside each id (as text: a string as it is, a missing
    field or null as "", anything else as JSON); the first record must have
    them. A field missing is an error that lists the fields the record has.
    """
    lines = _open_lines(path, encoding)
    name = lines.name
    text_fields = [text_field] if isinstance(text_field, str) else list(text_field)
    records = Records(keep, id_name=id_field or "id", escapes=True, text_names=text_fields)
    by_line = None  # whether ids are line numbers, decided at the first record
    first = 0  # the line of the first record
    for k in range(1, len(lines) + 1):
        where = f"{name}:{k}"
        obj = jsonl_object(lines.line(k - 1), where)
        if obj is None:
            continue
        if by_line is None:
            by_line = id_field is None and "id" not in obj
            first = k
            for field_name in keep:
                jsonl_field(obj, field_name, where, "--keep-col")
        if by_line:
            if "id" in obj:  # ids on some records only: line numbers would drop them silently
                raise InputError(f"{where}: this record has an 'id' field, the first record (line {first:,}) has "
                                 "none; give every record an id, or none")
            doc_id = str(k)
        else:
            if id_field is None and "id" not in obj:
                raise InputError(f"{where}: no 'id' field, the first record (line {first:,}) has one; give every "
                                 "record an id, or none")
            doc_id = id_text(jsonl_field(obj, id_field or "id", where, "--id-col"), where, id_field or "id")
        records.add(where, k, doc_id, jsonl_text(obj, text_fields, where), [obj.get(f) for f in keep])
    notes = ["ids are line numbers: the records have no 'id' field (--id-col names one)"] if by_line else []
    return records.corpus("jsonl", notes)


INPUT_KINDS = ("directory", "lines", "sets", "jsonl", "csv", "tsv", "parquet")

#: What a file named as a PATH of a directory corpus looks like by its ending, and the option that reads it
#: record by record: the summary suggests it.
RECORD_FILES = {".csv": "--csv", ".tsv": "--tsv", ".tab": "--tsv", ".jsonl": "--jsonl", ".ndjson": "--jsonl",
                ".parquet": "--parquet"}


def _record_file_notes(paths: Sequence[str | os.PathLike]) -> list[str]:
    """For each file given by name whose ending says it holds records, a line suggesting the option."""
    notes = []
    for p in paths:
        option = RECORD_FILES.get(os.path.splitext(os.fspath(p))[1].lower())
        if option and os.path.isfile(p):
            cols = " (--text-col names the text column)" if option != "--jsonl" else ""
            notes.append(f"warning: {os.fspath(p)} was read as one document; {option} reads each of its records as "
                         f"one{cols}")
    return notes


def read_corpus(path: str | os.PathLike | Sequence[str | os.PathLike], kind: str = "directory", *,
                include: Sequence[str] = (), exclude: Sequence[str] = (), min_bytes: int = 0,
                encoding: str = "utf-8", id_field: str | None = None, text_field: str | Sequence[str] | None = None,
                keep: Sequence[str] = (), header: bool = True, tokens_field: str | None = None,
                hidden: bool = False, ignore: bool = True, quotechar: str | None = None,
                hash_pieces: Callable | None = None) -> Corpus:
    """Read a corpus of the given kind (one of :data:`INPUT_KINDS`); '-' is stdin for the kinds that read one file.

    A directory corpus takes any number of directories and files (see
    :func:`read_directory`); a file named there whose ending says it holds
    records (``.csv``, ``.jsonl``, ...) is read as one document, and the
    corpus's notes suggest the option that reads its records. The other kinds
    read one file. For record input (``jsonl``, ``csv``, ``tsv``,
    ``parquet``): ``id_field`` and ``text_field`` name the id and the text
    field or column (several text columns are joined by a space), ``keep``
    the columns carried into the output, ``header`` whether a CSV/TSV has a
    header row (without one, columns are named by number from 1),
    ``quotechar`` the character quoting a CSV/TSV field (TSV: none by default), and
    ``tokens_field`` a Parquet column of token lists to join as sets; see
    :func:`read_jsonl` and :func:`allpairs.corpus.tables.read_table`.
    ``hash_pieces``: for ``sets``, hash the file's tokens as it is read (see :func:`read_sets`).
    """
    if kind not in INPUT_KINDS:
        raise UsageError(f"unknown input kind {kind!r}; choose one of {', '.join(INPUT_KINDS)}")
    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    if min_bytes < 0:
        raise UsageError(f"minimum size {min_bytes} is negative; give 0 or more bytes")
    records = kind in ("jsonl", "csv", "tsv", "parquet")
    if not records and (id_field is not None or text_field is not None or keep):
        raise UsageError(f"--id-col, --text-col and --keep-col name fields of records (--jsonl, --csv, --tsv, "
                         f"--parquet); {'a directory' if kind == 'directory' else '--' + kind} has none")
    if kind not in ("csv", "tsv") and not header:
        raise UsageError("--headerless goes with --csv and --tsv (a table's first row is its header by default)")
    if kind not in ("csv", "tsv") and quotechar is not None:
        raise UsageError("--quotechar goes with --csv and --tsv")
    if kind != "parquet" and tokens_field is not None:
        raise UsageError("--tokens-col names a column of token lists in --parquet input")
    if kind != "directory":
        if include or exclude or min_bytes or hidden or not ignore:
            raise UsageError("--include, --exclude, --min-bytes, --hidden and --no-ignore choose files in a "
                             f"directory; they do not apply to --{kind}")
        if len(paths) != 1:
            raise UsageError(f"--{kind} reads one file; got {len(paths)} paths")
        path = paths[0]
    if kind == "directory" and any(str(p) == "-" for p in paths):
        raise UsageError("'-' (stdin) needs --lines, --sets, --jsonl, --csv, --tsv or --parquet")
    t0 = time.perf_counter()
    if kind == "directory":
        corpus = read_directory(paths, include=include, exclude=exclude, min_bytes=min_bytes, hidden=hidden,
                                ignore=ignore)
        corpus.notes += _record_file_notes(paths)
    elif kind == "lines":
        corpus = read_lines(path, encoding=encoding)
    elif kind == "sets":
        corpus = read_sets(path, encoding=encoding, hash_pieces=hash_pieces)
    elif kind == "jsonl":
        corpus = read_jsonl(path, id_field=id_field, text_field=text_field or "text", keep=keep, encoding=encoding)
    else:
        from .tables import read_table

        corpus = read_table(path, kind, id_col=id_field, text_cols=text_field, keep=keep, header=header,
                            tokens_col=tokens_field, encoding=encoding, quotechar=quotechar)
    corpus.seconds = time.perf_counter() - t0
    return corpus
