"""Documents from directory trees and files: the files chosen (:mod:`~allpairs.corpus.walk`,
:mod:`~allpairs.corpus.globs`), read back to back into one UTF-8 buffer, binary and undecodable ones
skipped with a reason, ids made unique across the paths given."""
from __future__ import annotations

import codecs
import os
import shlex
import stat
from collections import Counter
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import UsageError
from .languages import language_for_path
from .globs import glob_regex, matches
from .linefile import Utf8Texts
from .model import EXCLUDED, NAMED_TWICE, NOT_INCLUDED, Corpus
from .walk import walk_paths


#: Bytes read to tell a binary file from text (as git and grep do: a NUL byte).
SNIFF_BYTES = 8192


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


def _identities(paths) -> dict:
    """(device, inode) of each existing file of ``paths`` (through links), to the path given."""
    found = {}
    for p in paths:
        if os.fsencode(p) == b"-":
            continue
        try:
            st = os.stat(p)
        except OSError:  # not there (yet): nothing to replace
            continue
        found[(st.st_dev, st.st_ino)] = p
    return found


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


def read_directory(path: str | os.PathLike | Sequence[str | os.PathLike], *, include: str | Sequence[str] = (),
                   exclude: str | Sequence[str] = (), min_bytes: int = 0, hidden: bool = False,
                   ignore: bool = True, protect: Sequence[str | os.PathLike] = ()) -> Corpus:
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
    # One pattern, not its letters: include="*.csv" as "*", ".", "c", ... read every file.
    include, exclude = ([p] if isinstance(p, str) else list(p) for p in (include, exclude))
    if not paths:
        raise UsageError("no path given; give a directory or files")
    for pattern in (*include, *exclude):
        glob_regex(pattern)  # a malformed pattern is a usage error before any reading
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
            files = walk_paths(root, hidden=hidden, ignore=ignore, left_out=left_out,
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
            todo.append((rel, f, st.st_size, source, (st.st_dev, st.st_ino)))
    ids, sources, langs = [], [], []
    texts = _TextBuffer(sum(item[2] for item in todo if len(item) == 5))
    guarded = _identities(protect)
    for item in todo:
        if len(item) == 2:
            skipped.append(item)
            continue
        rel, f, _, source, identity = item
        try:
            data = _read_bytes(f)
        except OSError as e:
            skipped.append((rel, f"unreadable ({e.strerror})"))
            continue
        data, why = check_file(data)
        if data is None:
            skipped.append((rel, why))
            continue
        if identity in guarded:
            out = guarded[identity]
            raise UsageError(f"{os.fspath(out)} is a document of the input ({rel} below {source or rel}); writing it "
                             "would replace it: write the output outside the input, or leave the file out "
                             "(--exclude)")
        ids.append(rel)
        sources.append(source)
        texts.add(data)
        langs.append(language_for_path(rel))
    if len(paths) > 1:
        ids = _disambiguate(ids, sources)
    return Corpus(ids=ids, texts=texts.texts(), languages=langs, skipped=skipped, kind="directory",
                  dropped=dropped, found=found, left_out=dict(left_out), paths=[os.fspath(p) for p in paths],
                  sources=sources)
