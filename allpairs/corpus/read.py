"""Stage 1's entry: :func:`read_corpus` checks the options of an input kind and calls its reader; the
readers of lines and of sets, and what a lone file read whole looks like it should have been read as."""
from __future__ import annotations

import os
import stat
import time
from typing import Callable, Sequence

from .._kernels.jit import kernels_for
from .._plural import count
from ..errors import UsageError
from .linefile import HashedSets, LineFile, TextLines, TokenSets, read_line_file, read_pieces
from .model import Corpus, LineNumbers


def _open_lines(path: str | os.PathLike, encoding: str) -> LineFile:
    """The file's lines, read in chunks ('-' reads stdin); see :mod:`allpairs.corpus.linefile` for the rules."""
    return read_line_file(path, encoding)


def read_lines(path: str | os.PathLike, *, encoding: str = "utf-8") -> Corpus:
    """Each line a record (passwords, titles); id = line number, the line shown beside it.

    Lines are held as one UTF-8 buffer and decoded on access (:class:`TextLines`).
    """
    lines = _open_lines(path, encoding)
    ids = LineNumbers(len(lines))
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
    return Corpus(ids=LineNumbers(len(sets)), sets=sets, kind="sets")


INPUT_KINDS = ("directory", "lines", "sets", "jsonl", "csv", "tsv", "parquet")

#: The record kinds in a message (the command line names their options).
RECORD_OPTIONS = "{{kind=jsonl}}, {{kind=csv}}, {{kind=tsv}} or {{kind=parquet}}"


def _kind(kind: str) -> str:
    """An input kind in a message: ``{{kind=csv}}``, which the command line renders as its option."""
    return "a directory" if kind == "directory" else "{{kind=%s}}" % kind


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


def one_document_hint(corpus: Corpus) -> str | None:
    """For a corpus that is one file named on its own and read whole (directory input), what the file
    looks like and the option that reads it a document at a time, in one line; else None.

    A self-join or dedup of one document can find nothing: the file was most
    likely meant as many (a line each, or a record each).
    """
    if corpus.kind != "directory" or len(corpus.ids) != 1 or len(corpus.paths) != 1:
        return None
    path = os.fspath(corpus.paths[0])
    if not os.path.isfile(path) or corpus.texts is None:
        return None
    text = corpus.texts[0]
    lines = [line for line in text[:1 << 20].splitlines() if line.strip()]
    n = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    first = lines[0].strip() if lines else ""
    option = RECORD_FILES.get(os.path.splitext(path)[1].lower())
    if option is None and first.startswith("{"):
        import json  # here, as csv below: only a lone file read whole is looked at

        try:
            option = "--jsonl" if isinstance(json.loads(first), dict) else None
        except ValueError:
            option = None
    if option is None and len(lines) >= 2:
        import csv

        for sep, flag in (("\t", "--tsv"), (",", "--csv")):
            widths = {len(next(csv.reader([line], delimiter=sep))) for line in lines[:20]}
            if len(widths) == 1 and widths.pop() >= 2:
                option = flag
                break
    what = f"{path} was read as one document (the whole file), and one document pairs with nothing"
    if option == "--jsonl":
        return f"{what}; it looks like JSON Lines: --jsonl reads each record as one (--text-col names the text field)"
    if option is not None:
        kind = option[2:].upper()
        return f"{what}; it looks like {kind}: {option} reads each row as one (--text-col names the text column)"
    return f"{what}; --lines reads each of its {count(n, 'line')} as one (--csv, --jsonl read records)"


def read_corpus(path: str | os.PathLike | Sequence[str | os.PathLike], kind: str = "directory", *,
                include: str | Sequence[str] = (), exclude: str | Sequence[str] = (), min_bytes: int = 0,
                encoding: str = "utf-8", id_field: str | None = None, text_field: str | Sequence[str] | None = None,
                keep: str | Sequence[str] = (), header: bool = True, tokens_field: str | None = None,
                hidden: bool = False, ignore: bool = True, quotechar: str | None = None,
                hash_pieces: Callable | None = None, keep_all: bool = False, protect: Sequence = (),
                delimiter: str | None = None) -> Corpus:
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
    ``quotechar`` the character quoting a CSV/TSV field (TSV: none by default),
    ``delimiter`` the character between a CSV's fields (default ``,``), and
    ``tokens_field`` a Parquet column of token lists to join as sets; see
    :func:`read_jsonl` and :func:`allpairs.corpus.tables.read_table`.
    ``hash_pieces``: for ``sets``, hash the file's tokens as it is read (see :func:`read_sets`).
    ``keep_all`` carries every column of records (then ``keep`` must be empty).
    ``protect``: files the caller will write; a directory's file among them read as a document is an error.
    """
    if kind not in INPUT_KINDS:
        raise UsageError(f"unknown input kind {kind!r}; choose one of {', '.join(INPUT_KINDS)}")
    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    if min_bytes < 0:
        raise UsageError(f"minimum size {min_bytes} is negative; give 0 or more bytes")
    records = kind in ("jsonl", "csv", "tsv", "parquet")
    if keep_all and keep:
        raise UsageError("{{keep_all}} carries every column already; drop {{keep}}", param="keep")
    if keep_all and not records:
        raise UsageError(f"{{{{keep_all}}}} carries the columns of records ({RECORD_OPTIONS}); {_kind(kind)} has none",
                         param="keep_all")
    if not records and (id_field is not None or text_field is not None or keep):
        raise UsageError(f"{{{{id_field}}}}, {{{{text_field}}}} and {{{{keep}}}} name fields of records "
                         f"({RECORD_OPTIONS}); {_kind(kind)} has none", param="id_field" if id_field is not None
                         else "text_field" if text_field is not None else "keep")
    if kind not in ("csv", "tsv") and not header:
        raise UsageError("{{header=False}} goes with {{kind=csv}} and {{kind=tsv}} (a table's first row is its "
                         "header by default)", param="header")
    if kind not in ("csv", "tsv") and quotechar is not None:
        raise UsageError("{{quotechar}} goes with {{kind=csv}} and {{kind=tsv}}", param="quotechar")
    if kind != "csv" and delimiter is not None:
        raise UsageError("{{delimiter}} goes with {{kind=csv}}" + ("; a TSV is split at tabs" if kind == "tsv" else ""),
                         param="delimiter")
    if kind != "parquet" and tokens_field is not None:
        raise UsageError("{{tokens_field}} names a column of token lists in {{kind=parquet}} input",
                         param="tokens_field")
    if kind != "directory":
        if include or exclude or min_bytes or hidden or not ignore:
            raise UsageError("{{include}}, {{exclude}}, {{min_bytes}}, {{hidden}} and {{ignore=False}} choose files "
                             f"in a directory; they do not apply to {_kind(kind)}", param="kind")
        if len(paths) != 1:
            raise UsageError(f"{_kind(kind)} reads one file; got {len(paths)} paths", param="path")
        path = paths[0]
        if kind != "parquet" and str(path) != "-" and os.path.isdir(path):  # Parquet: a directory is a dataset
            raise UsageError(f"{path} is a directory; give a file, or drop {_kind(kind)} to read the tree",
                             param="kind")
    if kind == "directory" and any(str(p) == "-" for p in paths):
        raise UsageError(f"'-' (stdin) needs {{{{kind=lines}}}}, {{{{kind=sets}}}}, {RECORD_OPTIONS}", param="kind")
    t0 = time.perf_counter()
    if kind == "directory":
        from .tree import read_directory  # here, like each reader below: a run loads only the reader it uses

        corpus = read_directory(paths, include=include, exclude=exclude, min_bytes=min_bytes, hidden=hidden,
                                ignore=ignore, protect=protect)
        corpus.notes += _record_file_notes(paths)
    elif kind == "lines":
        corpus = read_lines(path, encoding=encoding)
    elif kind == "sets":
        corpus = read_sets(path, encoding=encoding, hash_pieces=hash_pieces)
    elif kind == "jsonl":
        from .records import read_jsonl

        corpus = read_jsonl(path, id_field=id_field, text_field=text_field or "text", keep=keep, encoding=encoding,
                            keep_all=keep_all)
    else:
        from .tables import read_table

        corpus = read_table(path, kind, id_col=id_field, text_cols=text_field, keep=keep, header=header,
                            tokens_col=tokens_field, encoding=encoding, quotechar=quotechar, keep_all=keep_all,
                            delimiter=delimiter)
    corpus.seconds = time.perf_counter() - t0
    return corpus
