"""The corpus: documents' ids with their texts or pre-tokenised sets, what was skipped and left out
and why, and the notes a summary shows."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

from .._plural import count


class LineNumbers:
    """The ids ``"1"``, ``"2"``, ... ``str(n)`` of ``n`` lines, not made until a run needs them.

    A reader of lines or sets gives this to :class:`Corpus` in place of the list
    of ids; the ``ids`` attribute (of a corpus, of a join's result) makes the list
    at its first use and keeps it. A run that shows no id (``--count``) never
    makes one: on 35,000 Kosarak sets ~15 M instructions and 35,000 objects.
    """

    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __reduce__(self):  # a list where it crosses to another process
        return list, (self.ids(),)

    def ids(self) -> list[str]:
        return [str(k + 1) for k in range(self.n)]


def lazy_ids(cls):
    """``cls`` (a dataclass with an ``ids`` field) taking a :class:`LineNumbers` for ``ids``: the attribute
    is then the list of those ids, made at its first read; :func:`ids_of` passes them on unmade."""

    def get(self):
        ids = self._ids
        if type(ids) is LineNumbers:
            ids = self._ids = ids.ids()
        return ids

    def put(self, value) -> None:
        self._ids = value

    cls.ids = property(get, put)
    return cls


def ids_of(holder) -> Sequence:
    """The ids of a corpus or a result as held: a :class:`LineNumbers` not yet made stays so (its ``len`` is
    the documents' number); pass it to another holder's ``ids``."""
    return holder._ids


#: Reasons a file or folder is left out before it is read (keys of :attr:`Corpus.left_out`).
HIDDEN, IGNORED, EXCLUDED, NOT_INCLUDED, NAMED_TWICE = "hidden", "ignored", "--exclude", "--include", "named twice"
#: A symbolic link below a directory (not followed), and a FIFO, socket or device there (never read).
LINK, SPECIAL = "symbolic link", "special file"


class _Factory:
    """The default of a field made by a factory, shown in a signature as :mod:`dataclasses` shows it."""

    def __repr__(self) -> str:
        return "<factory>"


#: The default of a factory-made field in an ``__init__`` written out by hand (what ``@dataclass``
#: generates, as the standard library's own modules write theirs): the decorator's ``exec`` of each
#: generated method cost ~5 M instructions a class at every import (~19 M of a plain join's ~0.6 G).
FACTORY: Any = _Factory()


@lazy_ids
@dataclass(init=False, repr=False, eq=False)  # the three methods below are those it would generate
class Corpus:
    """Documents to join.

    Attributes
    ----------
    ids : list
        One id per document, in output order: relative paths, line numbers or
        JSON ids (str), or for Python input dict keys or list positions.
        Line numbers are made at the first read of ``ids`` (:class:`LineNumbers`).
    texts : sequence of str or None
        The documents' texts, when they are to be shingled (a directory's
        files are held as UTF-8 bytes and decoded on access, see
        :class:`~allpairs.corpus.linefile.Utf8Texts`).
    sets : list of list of str or None
        Pre-tokenised sets, when they are the shingles already.
    columns : dict of str to sequence of str
        Columns carried beside each id into every output, by name: the line
        for ``--lines`` ("text"), the ``--keep-col`` columns of a table or
        JSON Lines; those of JSON Lines and Parquet are
        :class:`~allpairs.output.carried.Carried` (texts with their types).
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
    header : list of str or None
        Records read with every column carried (``keep_all``): the names of
        the columns in the input's order, the id column among them (a JSON
        Lines file: the first record's fields), so that a row can be written
        back as it came.
    id_column : str or None
        Records: the column the ids came from (None: row or line numbers).
    rows : list of str, pyarrow.Table or None
        Records read with every column carried: the rows as they came, for
        writing them back with their types: a JSON Lines file's record lines
        (one per document), or a Parquet file's table (row ``d`` is document
        ``d``); None for the other inputs.
    dialect : tuple or None
        CSV input: (delimiter, quote character, line end, whether it began
        with a byte-order mark), for CSV output to write the table back so;
        None for the other inputs.
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
    header: list[str] | None = None
    id_column: str | None = None
    rows: object = None
    dialect: tuple | None = None

    def __init__(self, ids: list[str], texts: list[str] | None = None, sets: list[list[str]] | None = None,
                 columns: dict[str, Sequence[str]] = FACTORY, languages: list[str | None] | None = None,
                 skipped: list[tuple[str, str]] = FACTORY, kind: str = "texts", seconds: float = 0.0,
                 dropped: int = 0, found: int = 0, left_out: dict[str, int] = FACTORY, paths: list[str] = FACTORY,
                 notes: list[str] = FACTORY, sources: list[str] | None = None, header: list[str] | None = None,
                 id_column: str | None = None, rows: object = None, dialect: tuple | None = None) -> None:
        self.ids = ids
        self.texts = texts
        self.sets = sets
        self.columns = {} if columns is FACTORY else columns
        self.languages = languages
        self.skipped = [] if skipped is FACTORY else skipped
        self.kind = kind
        self.seconds = seconds
        self.dropped = dropped
        self.found = found
        self.left_out = {} if left_out is FACTORY else left_out
        self.paths = [] if paths is FACTORY else paths
        self.notes = [] if notes is FACTORY else notes
        self.sources = sources
        self.header = header
        self.id_column = id_column
        self.rows = rows
        self.dialect = dialect

    def _compared(self) -> tuple:
        """The fields in order, as ``__eq__`` compares them."""
        return (self.ids, self.texts, self.sets, self.columns, self.languages, self.skipped, self.kind, self.seconds,
                self.dropped, self.found, self.left_out, self.paths, self.notes, self.sources, self.header,
                self.id_column, self.rows, self.dialect)

    def __repr__(self) -> str:
        return (f"{type(self).__qualname__}(ids={self.ids!r}, texts={self.texts!r}, sets={self.sets!r}, "
                f"columns={self.columns!r}, languages={self.languages!r}, skipped={self.skipped!r}, "
                f"kind={self.kind!r}, seconds={self.seconds!r}, dropped={self.dropped!r}, found={self.found!r}, "
                f"left_out={self.left_out!r}, paths={self.paths!r}, notes={self.notes!r}, "
                f"sources={self.sources!r}, header={self.header!r}, id_column={self.id_column!r}, "
                f"rows={self.rows!r}, dialect={self.dialect!r})")

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return self._compared() == other._compared()
        return NotImplemented

    def __len__(self) -> int:
        return len(self._ids)

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
        if self.left_out.get(LINK):  # a corpus of links (git-annex, DVC, a Hugging Face snapshot) read as nothing
            parts.append(f"{count(self.left_out[LINK], 'symbolic link')} below a directory, not followed; name "
                         "the files to read them")
        if self.left_out.get(SPECIAL):
            parts.append(f"{count(self.left_out[SPECIAL], 'FIFO, socket or device', 'FIFOs, sockets or devices')}")
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
