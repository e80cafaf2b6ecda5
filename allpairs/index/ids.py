"""Document ids (and the columns carried beside them) as one UTF-8 blob and offsets, and how the ids of
added documents meet the index's: line numbers continued, a missing carried column refused."""
from __future__ import annotations

import dataclasses
from collections import abc
from typing import TYPE_CHECKING, Sequence

import numpy as np

from .._kernels.mix import GOLDEN, mix64
from ..corpus import Corpus
from ..errors import InputError, UsageError
from ..pairs.result import sequence_item
from ..pairs.summary import SHOWN
from .arrays import Column, spans

if TYPE_CHECKING:
    from .search import SearchIndex


def text_keys(ptr: np.ndarray, blob: np.ndarray) -> np.ndarray:
    """A 64-bit key of each text of a CSR of bytes (uint64) from its length, its first 8 and its last 16
    bytes (where paths and numbers differ): equal texts, equal keys; the other way round is checked
    text by text. A few passes over the offsets, none over all the bytes."""
    lengths = np.diff(ptr)
    start = ptr[:-1]
    last = max(len(blob) - 1, 0)
    padded = blob if len(blob) else np.zeros(1, np.uint8)
    with np.errstate(over="ignore"):
        key = mix64.py_func(lengths.astype(np.uint64) + GOLDEN)
        for word in range(3):  # bytes 0..7 from the front, then 0..7 and 8..15 from the end
            bits = np.zeros(len(lengths), np.uint64)
            for k in range(8):
                at = start + k if word == 0 else start + lengths - 1 - (8 * (word - 1) + k)
                has = lengths > (k if word == 0 else 8 * (word - 1) + k)
                bits |= np.where(has, padded[np.clip(at, 0, last)], 0).astype(np.uint64) << np.uint64(8 * k)
            key = mix64.py_func(key ^ bits)
        return key


class Ids(abc.Sequence):
    """Document ids as one UTF-8 blob and offsets, decoded only when asked for: a read-only sequence
    (negative indexes, slices, iteration). ``ints``: every id is an int, and reads back as one."""

    def __init__(self, ptr: np.ndarray, blob: np.ndarray, *, ints: bool = False):
        self.ptr = Column(ptr, np.int64)
        self.blob = Column(blob, np.uint8)
        self.ints = ints
        self._keys = np.zeros(0, np.uint64)  # text_keys of the first ids, made when asked for

    def keys(self) -> np.ndarray:
        """:func:`text_keys` of every id (uint64), kept: a series of adds keys each id once."""
        if len(self._keys) < len(self):
            self._keys = np.concatenate([self._keys, text_keys(self.ptr.array[len(self._keys):], self.blob.array)])
        return self._keys

    @classmethod
    def of(cls, ids: Sequence) -> "Ids":
        out = cls(np.zeros(1, np.int64), np.zeros(0, np.uint8), ints=True)
        out.extend(ids)
        return out

    def __len__(self) -> int:
        return len(self.ptr) - 1

    def __getitem__(self, d):
        return sequence_item(d, len(self), self._decode, "id", "documents")

    def text(self, d: int) -> str:
        """Id ``d`` as the text it is stored as."""
        ptr = self.ptr.array
        return bytes(self.blob.array[ptr[d]:ptr[d + 1]]).decode("utf-8", "surrogateescape")

    def _decode(self, d: int):
        return int(self.text(d)) if self.ints else self.text(d)

    def __iter__(self):
        return map(self._decode, range(len(self)))

    def __repr__(self) -> str:
        n = len(self)
        shown = ", ".join(map(repr, self[:SHOWN])) + (", ..." if n > SHOWN else "")
        return f"<{n:,} ids: {shown}>"

    def extend(self, ids: Sequence) -> None:
        """Append ``ids``; once one is not an int (bool is not; numpy's ints are), every id reads back as str."""
        ids = list(ids)
        if self.ints and not all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in ids):
            self.ints = False
        try:
            encoded = [str(i).encode("utf-8", "surrogateescape") for i in ids]
        except UnicodeEncodeError:
            refuse_unstorable(ids)
            raise
        lengths = np.fromiter(map(len, encoded), np.int64, len(encoded))
        self.ptr.extend(self.ptr.array[-1] + np.cumsum(lengths))
        self.blob.extend(np.frombuffer(b"".join(encoded), np.uint8))

    def last_number(self) -> int:
        """The largest id that is a whole number written without leading zeros (a line id), or 0."""
        ptr, blob = self.ptr.array, self.blob.array
        lengths = np.diff(ptr)
        other = np.zeros(len(blob) + 1, np.int64)
        np.cumsum((blob < ord("0")) | (blob > ord("9")), out=other[1:])
        first = blob[np.minimum(ptr[:-1], len(blob) - 1)] if len(blob) else np.zeros(len(lengths), np.uint8)
        number = ((lengths > 0) & (lengths <= 18) & (other[ptr[1:]] == other[ptr[:-1]])
                  & ((first != ord("0")) | (lengths == 1)))
        if not number.any():
            return 0
        width = int(lengths[number].max())  # the longest numbers are the largest: read only those
        rows = np.flatnonzero(number & (lengths == width))
        digits = (blob[spans(ptr[rows], np.full(len(rows), width))].astype(np.int64) - ord("0")).reshape(-1, width)
        return int((digits @ (10 ** np.arange(width - 1, -1, -1, dtype=np.int64))).max())

    def keep(self, mask: np.ndarray) -> "Ids":
        """The ids where ``mask`` (bool, one per id) is true, as new ids of the same kind."""
        ptr = self.ptr.array
        rows = np.flatnonzero(mask)
        lengths = ptr[rows + 1] - ptr[rows]
        new_ptr = np.zeros(len(rows) + 1, np.int64)
        np.cumsum(lengths, out=new_ptr[1:])
        out = Ids(new_ptr, self.blob.array[spans(ptr[rows], lengths)], ints=self.ints)
        out._keys = self._keys[mask[: len(self._keys)]]
        return out


def check_python_ids(corpus: Corpus) -> None:
    """Refuse a corpus from Python (or a :class:`Corpus` made by hand) that an index would store wrongly:
    ids that differ as values but not as the text an index stores and compares (``1`` and ``'1'``,
    ``None`` and ``'None'``: two documents of one id, both replaced or skipped for one), and ids or
    carried values holding a lone surrogate (UTF-8 has none), before anything is added. The readers'
    ids are checked as text already."""
    if corpus.kind not in ("texts", "tokens"):
        return
    ids = corpus.ids
    kinds = set(map(type, ids))
    if len(kinds) == 1 and kinds <= {int, str} and len(set(ids)) == len(ids):
        texts = ids if kinds == {str} else ()  # ints (a list's positions): distinct values, distinct texts
    else:  # other kinds, or mixed: compare the texts
        seen: dict[str, int] = {}
        for d, i in enumerate(ids):
            first = seen.setdefault(str(i), d)
            if first != d:
                twin = ids[first]
                if twin is i or twin == i:
                    raise UsageError(f"id {i!r} is given twice; ids must be different", param="ids")
                raise UsageError(f"ids {twin!r} and {i!r} are both {str(i)!r} as text, which is how an index "
                                 "stores and compares ids; give ids that differ as text (str of each)", param="ids")
        texts = seen
    refuse_unstorable(texts)
    for values in corpus.columns.values():
        refuse_unstorable(values)


def refuse_unstorable(values) -> None:
    """An :class:`InputError` for the first of ``values`` whose text holds a lone surrogate other than an
    undecodable byte's (``\\udc80``-``\\udcff``, kept by surrogateescape): UTF-8 cannot store it."""
    texts = [str(v) for v in values]
    try:
        "".join(texts).encode("utf-8", "surrogateescape")  # one pass when every text encodes
        return
    except UnicodeEncodeError:
        pass
    for v in texts:
        try:
            v.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError as e:
            raise InputError(f"{v!r} holds the lone surrogate {e.object[e.start]!r}, which an index cannot "
                             "store as UTF-8; remove it, or decode the text it came from with errors='replace'") \
                from None


def line_numbered(corpus: Corpus) -> bool:
    """Whether a corpus's ids are its line or row numbers (``--lines``, ``--sets``, records without ids)."""
    return corpus.kind in ("lines", "sets") or any(
        note.startswith(("ids are line numbers", "ids are row numbers")) for note in corpus.notes)


def check_added_columns(corpus: Corpus, index: "SearchIndex") -> None:
    """Refuse an addition whose documents lack a column the index carries beside each id (a --lines file
    added to an index of a table's rows): they would be added with that column empty, silently."""
    missing = [name for name in index.columns if name not in corpus.columns]
    if index.num_docs and missing:
        those = 'that column' if len(missing) == 1 else 'those columns'
        how = (f"read them with {those} ({{{{keep={missing[0]}}}}})" if corpus.kind in ("jsonl", "csv", "tsv", "parquet")
               else f"add them as records (a table or JSON Lines) with {those}")
        raise UsageError(f"the index carries {', '.join(map(repr, missing))} beside each id and these documents "
                         f"do not; {how}", param="keep")


def line_ids_note(corpus: Corpus, index: "SearchIndex") -> str | None:
    """The note for line-numbered documents added to an index none of whose ids is a line number (an index
    of a table's rows by an id column, or of files by path): they are added, numbered, among ids of
    another kind; None otherwise."""
    if not (len(corpus) and index.num_docs and line_numbered(corpus)) or index.ids.last_number():
        return None
    numbers = f"{corpus.ids[0]}" if len(corpus) == 1 else f"{corpus.ids[0]} to {corpus.ids[-1]}"
    return (f"note: the index's ids are not line numbers (the first is {index.ids[0]!r}); these documents were "
            f"given the line numbers {numbers} as ids: read them as records with an id column to give them ids "
            "of their own")


def continue_lines(corpus: Corpus, index: "SearchIndex") -> Corpus:
    """A corpus whose ids are line numbers (:func:`line_numbered`) renumbered to follow the index's largest
    line id: line k becomes ``last + k``, so that the lines of two added files never share an id.
    Any other corpus as it is."""
    last = index.ids.last_number() if line_numbered(corpus) else 0
    if not last:
        return corpus
    def shift(i):
        return str(last + int(i)) if str(i).isascii() and str(i).isdigit() else i

    return dataclasses.replace(corpus, ids=[shift(i) for i in corpus.ids],
                               skipped=[(shift(i), why) for i, why in corpus.skipped])


