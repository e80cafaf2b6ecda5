"""The result of a join (:class:`JoinResult`); how its LSH path was set up (:class:`~.lsh_path.LSHInfo`) is
with that path, which an exact join does not load."""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ..corpus.model import FACTORY, lazy_ids
from .._plural import count
from ..measures import Measure, Threshold, get_measure
from ..pairs import Pairs
from ..output.carried import Carried
from ..pairs.result import Pair, similarity_text
from ..errors import UsageError, require_extra
from ..pairs.summary import SHOWN, Summarised
from .stats import Stats

if TYPE_CHECKING:  # the clusters' module is imported by a join asked for them, not by every join
    from ..pairs.clusters import Clusters
    from .lsh_path import LSHInfo


class ClustersNotAsked:
    """What :attr:`JoinResult.clusters` holds when the join was not asked for clusters: every use raises a
    :class:`UsageError` saying how to get them."""

    MESSAGE = "no clusters: this join was run without clusters=True; run allpairs.join(..., clusters=True)"

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        raise UsageError(self.MESSAGE)

    def __len__(self) -> int:
        raise UsageError(self.MESSAGE)

    def __iter__(self):
        raise UsageError(self.MESSAGE)

    def __getitem__(self, c):
        raise UsageError(self.MESSAGE)

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "<no clusters: pass clusters=True to allpairs.join>"


@lazy_ids
@dataclass(init=False, repr=False, eq=False)  # __init__ and __eq__ below are those it would generate (see FACTORY)
class JoinResult(Summarised):
    """Pairs with J >= threshold, the documents' ids, and the statistics of the run.

    ``pairs`` name documents by position: ``ids[pair.left]`` is the left
    document's id (a relative path, a line number, a JSON id, a dict key, or
    for a list the position itself). :meth:`to_pandas` and :meth:`to_arrow`
    give the pairs as a table with the ids filled in. In an R–S join,
    ``left_ids[pair.left]`` and ``right_ids[pair.right]`` name the two sides.
    ``repr(res)`` (and a notebook's view) sums the result up: the counts, the
    settings and the first few pairs.
    """

    pairs: Pairs
    ids: list
    threshold: Threshold
    shingle: str
    method: str
    stats: Stats
    #: Columns carried beside each id into the output (the line for ``--lines``, ``--keep-col`` columns).
    columns: dict[str, Sequence[str]] = field(default_factory=dict)
    lsh: LSHInfo | None = None
    measure: Measure = field(default_factory=lambda: get_measure("jaccard"))
    #: For an R–S join, the number of documents of the first corpus: ``ids``
    #: (and ``columns``) hold both corpora, the first one's first.
    n_left: int | None = None
    #: With ``clusters=True``: the connected components of the pairs (else a stand-in whose every use
    #: raises a :class:`UsageError` saying to pass ``clusters=True``).
    clusters: Clusters | ClustersNotAsked | None = None
    #: The documents' texts (for :meth:`to_pandas` ``texts=True``), when they were texts.
    texts: Sequence[str] | None = field(default=None, repr=False)

    def __init__(self, pairs: Pairs, ids: list, threshold: Threshold, shingle: str, method: str, stats: Stats,
                 columns: dict[str, Sequence[str]] = FACTORY, lsh: LSHInfo | None = None, measure: Measure = FACTORY,
                 n_left: int | None = None, clusters: Clusters | ClustersNotAsked | None = None,
                 texts: Sequence[str] | None = None) -> None:
        self.pairs = pairs
        self.ids = ids
        self.threshold = threshold
        self.shingle = shingle
        self.method = method
        self.stats = stats
        self.columns = {} if columns is FACTORY else columns
        self.lsh = lsh
        self.measure = get_measure("jaccard") if measure is FACTORY else measure
        self.n_left = n_left
        self.clusters = clusters
        self.texts = texts
        self.__post_init__()

    def _compared(self) -> tuple:
        """The fields in order, as ``__eq__`` compares them."""
        return (self.pairs, self.ids, self.threshold, self.shingle, self.method, self.stats, self.columns, self.lsh,
                self.measure, self.n_left, self.clusters, self.texts)

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return self._compared() == other._compared()
        return NotImplemented

    def __post_init__(self) -> None:
        if self.clusters is None:
            self.clusters = ClustersNotAsked()
        if isinstance(self.pairs, Pairs):  # so that a writer of another measure is refused
            self.pairs.measure = self.measure

    def __len__(self) -> int:
        return len(self.pairs)

    @property
    def shown(self) -> Sequence[str] | None:
        """The first carried column (a line's text for ``--lines``), or None."""
        return next(iter(self.columns.values()), None)

    @property
    def left_ids(self) -> Sequence:
        """The ids of the first corpus (of every document in a self-join): ``left_ids[pair.left]``."""
        return self.ids if self.n_left is None else self.ids[: self.n_left]

    @property
    def right_ids(self) -> Sequence:
        """The ids of the other corpus of an R–S join (of every document in a self-join): ``right_ids[pair.right]``."""
        return self.ids if self.n_left is None else self.ids[self.n_left:]

    def similarity(self, pair):
        """The pair's exact similarity under the join's measure (a Fraction; int for overlap; float for cosine)."""
        Pair(*pair).check_verified()
        return self.measure.similarity(pair.overlap, pair.left_size, pair.right_size)

    def _summary(self) -> tuple[str, tuple[str, ...], list[tuple], int]:
        """Title, column names, the first pairs and the number of pairs, for repr and notebooks."""
        docs = count(len(self.ids), "document") if self.n_left is None else \
            f"{count(self.n_left, 'document')} against {count(len(self.ids) - self.n_left, 'document')}"
        how = self.method if not self.shingle else f"{self.method}, tokens as given" if self.shingle == "tokens" \
            else f"{self.method}, {self.shingle} shingles"
        title = f"JoinResult: {count(len(self), 'pair')} of {docs} at {self.measure.name} >= {self.threshold} ({how})"
        if not isinstance(self.clusters, ClustersNotAsked):
            title += f"; {count(len(self.clusters), 'cluster')}, the largest of {self.clusters.largest:,}"
        left, right = self.left_ids, self.right_ids
        first = self.pairs.head()
        if self.pairs.estimated:  # as the writer prints them: ~, then truncated to 6 decimals
            estimates = np.concatenate([c.estimate for c in itertools.islice(self.pairs.chunks(SHOWN), SHOWN)]
                                       or [np.zeros(0)])
            scores = [f"~{n // 10**6}.{n % 10**6:06d}" for n in np.floor(estimates[:len(first)] * 10**6)
                      .astype(np.int64).tolist()]
        else:
            scores = [similarity_text(self.measure, *p[2:]) for p in first]
        rows = [(left[p.left], right[p.right], score) for p, score in zip(first, scores)]
        return title, ("left", "right", "estimate" if self.pairs.estimated else "similarity"), rows, len(self)

    def to_pandas(self, columns=None, texts: bool = False):
        """The pairs as a pandas DataFrame: left, right (ids), similarity (a float, under the join's measure),
        overlap, left_size, right_size; then, when asked, columns beside each pair, both sides' values.

        Parameters
        ----------
        columns : DataFrame, list of str, or True, optional
            A DataFrame whose index holds the documents' ids (the input's own
            frame, when its column or Series was joined): each of its columns
            as ``left_NAME``, ``right_NAME``; for an R–S join whose sides
            share ids, a pair ``(left_frame, right_frame)``. A list names carried columns
            (:attr:`columns`, such as ``--keep-col`` ones), their values typed
            as a JSON Lines or Parquet input had them; True takes them all.
        texts : bool
            Add ``left_text`` and ``right_text``: both documents' texts.
        """
        pandas = require_extra("pandas", "to_pandas")
        frame = self.pairs.to_pandas(self.ids, self.measure)
        if columns is None and not texts:
            return frame
        pos = self.pairs._columns(None, self.measure)
        left = np.asarray(pos["left"], np.int64)
        right = np.asarray(pos["right"], np.int64) + (self.n_left or 0)
        extra = _NewColumns(frame.columns)
        if isinstance(columns, tuple) and any(isinstance(c, pandas.DataFrame) for c in columns):
            if self.n_left is None or len(columns) != 2:
                raise UsageError("a pair of frames, columns=(left_frame, right_frame), is for an R–S join; "
                                 "give one frame" if self.n_left is None else "give two frames, "
                                 "columns=(left_frame, right_frame)")
            for side, frame_of, ids, docs in (("left", columns[0], self.left_ids, left),
                                              ("right", columns[1], self.right_ids, right - self.n_left)):
                aligned = _aligned(pandas, frame_of, ids)
                for name in aligned.columns:
                    extra[f"{side}_{name}"] = aligned[name].to_numpy()[docs]
        elif isinstance(columns, pandas.DataFrame):
            if self.n_left is not None and len(set(self.left_ids) & set(self.right_ids)):
                raise UsageError("the two sides of this R–S join share ids (both number their documents from 0, "
                                 "say): one frame cannot tell their rows apart; give both frames, "
                                 "columns=(left_frame, right_frame)")
            aligned = _aligned(pandas, columns, self.ids)
            for name in aligned.columns:
                values = aligned[name].to_numpy()
                extra[f"left_{name}"], extra[f"right_{name}"] = values[left], values[right]
        elif columns is not None:
            names = list(self.columns) if columns is True else [columns] if isinstance(columns, str) else list(columns)
            for name in names:
                if name not in self.columns:
                    raise UsageError(f"no carried column {name!r} (the result carries "
                                     f"{', '.join(map(repr, self.columns)) or 'none'}); give a DataFrame instead")
                column = self.columns[name]  # typed where the input was (JSON Lines, Parquet)
                values = np.empty(len(column), object)
                values[:] = column.values() if isinstance(column, Carried) else list(column)
                extra[f"left_{name}"], extra[f"right_{name}"] = values[left], values[right]
        if texts:
            if self.texts is None:
                raise UsageError("texts=True needs texts: this join was of token sets")
            extra.texts = True
            extra["left_text"] = [self.texts[d] for d in left.tolist()]
            extra["right_text"] = [self.texts[d] for d in right.tolist()]
        return frame.assign(**extra) if extra else frame


    def to_arrow(self):
        """The pairs as a pyarrow Table, with the columns of :meth:`to_pandas`."""
        return self.pairs.to_arrow(self.ids, self.measure)


def _aligned(pandas, frame, ids: Sequence):
    """``frame``'s rows in the order of ``ids`` (its index holds them), refusing a frame that lacks one (its
    row would be NaN, silently) or holds one twice."""
    if not isinstance(frame, pandas.DataFrame):
        raise UsageError(f"columns= takes DataFrames, not {type(frame).__name__}")
    index = pandas.Index(ids)
    missing = np.flatnonzero(~index.isin(frame.index))  # every id, not the first few
    if len(missing):
        raise UsageError(f"the columns' index has no row {ids[int(missing[0])]!r}"
                         f"{f' (nor {len(missing) - 1:,} other ids)' if len(missing) > 1 else ''}; give a "
                         "DataFrame indexed by the documents' ids (the frame whose column was joined)")
    if not frame.index.is_unique:
        twice = frame.index[frame.index.duplicated()].tolist()[0]
        raise UsageError(f"the columns' index holds {twice!r} twice; give a DataFrame with one row per "
                         "document id")
    return frame.reindex(index)


class _NewColumns(dict):
    """The columns :meth:`JoinResult.to_pandas` adds, refusing a name the frame has or that came already
    (a column ``size`` of the user's frame as ``left_size``, which would replace the set sizes)."""

    def __init__(self, existing):
        super().__init__()
        self.existing = set(existing)
        self.texts = False

    def __setitem__(self, name: str, values) -> None:
        if name in self.existing or name in self:
            why = ("columns= has a column 'text' and texts=True adds the texts; rename that column or drop "
                   "texts=True") if self.texts else "rename the column of columns= that gives it, or leave it out"
            raise UsageError(f"the frame would have two columns named {name!r}; {why}")
        super().__setitem__(name, values)
