"""Stage 1: documents from a directory tree, a file of lines, a file of sets, or JSON Lines.

A :class:`Corpus` is a list of document ids with either texts or pre-tokenised
sets. Readers skip what cannot be a document (binary, undecodable, unreadable
files) and record why; malformed records in line-oriented input are errors
that name the file and line.
"""
from __future__ import annotations

import json
import os
import re
import stat
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Sequence

from .errors import InputError, UsageError
from .linefile import HashedSets, LineFile, TextLines, TokenSets, read_line_file, read_pieces

#: Bytes read to tell a binary file from text (as git and grep do: a NUL byte).
SNIFF_BYTES = 8192


@dataclass
class Corpus:
    """Documents to join.

    Attributes
    ----------
    ids : list of str
        One id per document, in output order (relative paths, line numbers or JSON ids).
    texts : list of str or None
        The documents' texts, when they are to be shingled.
    sets : list of list of str or None
        Pre-tokenised sets, when they are the shingles already.
    shown : list of str or None
        Text printed beside each id in the output (line records).
    languages : list of (str or None) or None
        Programming language of each document, for ``code:N`` shingles.
    skipped : list of (id, reason)
        Documents left out, with the reason.
    kind : str
        "directory", "lines", "sets", "jsonl" or "texts".
    seconds : float
        Time spent reading.
    dropped : int
        Files left out because they are smaller than the minimum size.
    """

    ids: list[str]
    texts: list[str] | None = None
    sets: list[list[str]] | None = None
    shown: list[str] | None = None
    languages: list[str | None] | None = None
    skipped: list[tuple[str, str]] = field(default_factory=list)
    kind: str = "texts"
    seconds: float = 0.0
    dropped: int = 0

    def __len__(self) -> int:
        return len(self.ids)


# --- directory trees ------------------------------------------------------

@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern:
    """A glob as a regex over '/'-separated relative paths.

    ``**`` crosses directories, ``*`` and ``?`` do not. A pattern is matched
    against the path and against every tail of it that starts a component
    (``*.go`` matches ``a/b.go``; ``testdata/**`` matches ``x/testdata/y.go``),
    unless it starts with ``/``, which anchors it at the root.
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
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pat.find("]", i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = pat[i + 1:j].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    head = "" if anchored else "(?:.*/)?"
    return re.compile(head + "".join(out) + r"\Z", re.DOTALL)


def matches(path: str, patterns: Iterable[str]) -> bool:
    """True if the relative '/'-separated ``path`` matches any glob pattern."""
    return any(_glob_regex(p).match(path) for p in patterns)


def _walk(root: Path, on_error) -> Iterable[tuple[str, Path]]:
    """(relative posix path, path) of every regular file below root, sorted, links not followed."""
    stack = [(root, "")]
    out = []
    while stack:
        d, rel = stack.pop()
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError as e:
            on_error(rel or ".", f"unreadable directory ({e.strerror})")
            continue
        for e in entries:
            r = f"{rel}/{e.name}" if rel else e.name
            try:
                if e.is_dir(follow_symlinks=False):
                    stack.append((Path(e.path), r))
                elif e.is_file(follow_symlinks=False):
                    out.append((r, Path(e.path)))
            except OSError as err:
                on_error(r, f"unreadable ({err.strerror})")
    out.sort(key=lambda rp: rp[0])
    return out


def decode_file(data: bytes) -> tuple[str | None, str | None]:
    """(text, None) for a UTF-8 text file's bytes; (None, reason) for a binary (a NUL byte in the
    first SNIFF_BYTES) or undecodable one."""
    if b"\0" in data[:SNIFF_BYTES]:
        return None, "binary"
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as e:
        return None, f"not UTF-8 (byte {e.start})"


def read_directory(path: str | os.PathLike, *, include: Sequence[str] = (), exclude: Sequence[str] = (),
                   min_bytes: int = 0) -> Corpus:
    """Every regular file under ``path`` as a document, its id the relative path.

    Files are chosen by glob patterns (``include``: any must match when given;
    ``exclude``: none may match; see :func:`matches`), then smaller than
    ``min_bytes`` are dropped (counted), and binary (a NUL byte in the first
    8 KiB), not UTF-8, or unreadable files are skipped with a reason. Symbolic
    links are not followed.
    """
    root = Path(path)
    if not root.exists():
        raise UsageError(f"{path}: no such file or directory")
    if not root.is_dir():
        raise UsageError(f"{path} is a file, not a directory; read it with --lines, --sets or --jsonl")
    from .shingles import language_for_path

    skipped: list[tuple[str, str]] = []
    ids, texts, langs = [], [], []
    dropped = 0
    for rel, p in _walk(root, lambda r, why: skipped.append((r, why))):
        if include and not matches(rel, include):
            continue
        if exclude and matches(rel, exclude):
            continue
        try:
            st = p.stat()
            if not stat.S_ISREG(st.st_mode):
                continue
            if st.st_size < min_bytes:
                dropped += 1
                continue
            data = p.read_bytes()
        except OSError as e:
            skipped.append((rel, f"unreadable ({e.strerror})"))
            continue
        text, why = decode_file(data)
        if text is None:
            skipped.append((rel, why))
            continue
        ids.append(rel)
        texts.append(text)
        langs.append(language_for_path(rel))
    return Corpus(ids=ids, texts=texts, languages=langs, skipped=skipped, kind="directory", dropped=dropped)


# --- line-oriented files --------------------------------------------------

def _open_lines(path: str | os.PathLike, encoding: str) -> LineFile:
    """The file's lines, read in chunks ('-' reads stdin); see :mod:`allpairs.linefile` for the rules."""
    return read_line_file(path, encoding)


def read_lines(path: str | os.PathLike, *, encoding: str = "utf-8") -> Corpus:
    """Each line a record (passwords, titles); id = line number, the line shown beside it.

    Lines are held as one UTF-8 buffer and decoded on access (:class:`TextLines`).
    """
    lines = _open_lines(path, encoding)
    ids = [str(k + 1) for k in range(len(lines))]
    texts = TextLines(lines)
    return Corpus(ids=ids, texts=texts, shown=texts, kind="lines")


def read_sets(path: str | os.PathLike, *, encoding: str = "utf-8", hashed: bool = False) -> Corpus:
    """Each line a set of whitespace-separated tokens (the set-join benchmark format); id = line number.

    By default the sets are held as one UTF-8 buffer (:class:`TokenSets`),
    hashed later by a compiled kernel without a Python string per token.
    ``hashed=True`` hashes each chunk as it is read and keeps only the keys
    (:class:`HashedSets`, as :func:`allpairs.shingles.hash_sets` would give
    them): the file's text is never held whole.
    """
    if hashed:
        from .shingles import hash_set_pieces

        name, pieces = read_pieces(path, encoding)
        size = None
        if str(path) != "-":
            st = os.stat(path)
            size = st.st_size if stat.S_ISREG(st.st_mode) else None
        sets = HashedSets(*hash_set_pieces(pieces, size))
    else:
        sets = TokenSets(_open_lines(path, encoding))
    ids = [str(k + 1) for k in range(len(sets))]
    return Corpus(ids=ids, sets=sets, kind="sets")


def jsonl_record(line: str, where: str, id_field: str = "id", text_field: str = "text") -> tuple[str, str] | None:
    """(id, text) of one JSON Lines record, None for a blank line; ``where`` ("file:line") starts each error.

    Raises
    ------
    InputError
        Not JSON, not an object, a field missing, an id that is not a string or
        an integer, a text that is not a string.
    """
    if not line.strip():
        return None
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        raise InputError(f"{where}: not valid JSON ({e.msg} at column {e.colno})") from None
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    if id_field not in obj:
        raise InputError(f"{where}: no {id_field!r} field; name the id field with --id-field")
    if text_field not in obj:
        raise InputError(f"{where}: no {text_field!r} field; name the text field with --text-field")
    doc_id, text = obj[id_field], obj[text_field]
    if not isinstance(doc_id, (str, int)) or isinstance(doc_id, bool):
        raise InputError(f"{where}: field {id_field!r} must be a string or an integer")
    if not isinstance(text, str):
        raise InputError(f"{where}: field {text_field!r} must be a string, got {type(text).__name__}")
    return str(doc_id), text


def read_jsonl(path: str | os.PathLike, *, id_field: str = "id", text_field: str = "text",
               encoding: str = "utf-8") -> Corpus:
    """JSON Lines: one object per line with an id and a text; blank lines are ignored."""
    lines = _open_lines(path, encoding)
    name = lines.name
    ids, texts, seen = [], [], {}
    for k in range(1, len(lines) + 1):
        record = jsonl_record(lines.line(k - 1), f"{name}:{k}", id_field, text_field)
        if record is None:
            continue
        doc_id, text = record
        if doc_id in seen:
            raise InputError(f"{name}:{k}: id {doc_id!r} already used on line {seen[doc_id]}")
        seen[doc_id] = k
        ids.append(doc_id)
        texts.append(text)
    return Corpus(ids=ids, texts=texts, kind="jsonl")


INPUT_KINDS = ("directory", "lines", "sets", "jsonl")


def read_corpus(path: str | os.PathLike, kind: str = "directory", *, include: Sequence[str] = (),
                exclude: Sequence[str] = (), min_bytes: int = 0, encoding: str = "utf-8",
                id_field: str = "id", text_field: str = "text") -> Corpus:
    """Read a corpus of the given kind (one of :data:`INPUT_KINDS`); '-' is stdin for line-oriented kinds."""
    if kind not in INPUT_KINDS:
        raise UsageError(f"unknown input kind {kind!r}; choose one of {', '.join(INPUT_KINDS)}")
    if min_bytes < 0:
        raise UsageError(f"minimum size {min_bytes} is negative; give 0 or more bytes")
    if kind != "directory" and (include or exclude or min_bytes):
        raise UsageError("--include, --exclude and --min-bytes choose files in a directory; "
                         f"they do not apply to --{kind}")
    if kind == "directory" and str(path) == "-":
        raise UsageError("'-' (stdin) needs --lines, --sets or --jsonl")
    t0 = time.perf_counter()
    if kind == "directory":
        corpus = read_directory(path, include=include, exclude=exclude, min_bytes=min_bytes)
    elif kind == "lines":
        corpus = read_lines(path, encoding=encoding)
    elif kind == "sets":
        corpus = read_sets(path, encoding=encoding, hashed=True)
    else:
        corpus = read_jsonl(path, id_field=id_field, text_field=text_field, encoding=encoding)
    corpus.seconds = time.perf_counter() - t0
    return corpus
