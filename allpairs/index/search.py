"""A saved, growing similarity-search index: build, query, add, save, load.

The index holds what a query needs to be answered exactly without the corpus:
the shingle settings, the global token order (shingle key -> rank, rare first),
every indexed set as sorted ranks, the documents behind each set, and the
inverted index of each set's indexing prefix with posting lists sorted by set
size, so that the size bound crops them (Bayardo et al. 2007).

A query's tokens are ranked by the same order; a token the index has never
seen is rarer than all others, so it comes first: it can match nothing, but it
counts in the query's size, which is what makes the answer exact.

Adding documents does not rebuild anything: a token never seen gets a new
rank below every existing one (rarer than all, like an unseen query token). As
a build does, identical sets are collapsed: added documents with the same set
become one set, and a document whose set is indexed already joins it (found
by a hash of its ranks, confirmed token by token). The new sets' prefix
postings, one integer each packing (token, set size, set), go into a sorted
list (sortedcontainers), probed beside the compiled arrays; a batch that would
bring that list to a quarter of the compiled postings is merged into them
instead (one pass of the compiled builder over arrays, as a build does), so a
large add costs what a build of it costs, a long series of small adds
amortised linear time, and every probe still crops by size.
"""
from __future__ import annotations

import os
from typing import Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from .._kernels.jit import resolve_jobs
from .._kernels.csr import distinct_sorted_rows
from ..order._kernel import gather_csr
from ..corpus import Corpus
from ..corpus.tree import named_from_above
from .._plural import count
from ..errors import InputError, UsageError
from ..exact.topk import check_k
from ..pipeline import Stats, timed, as_corpus, is_series, shingle_corpus
from ..measures import parse_threshold
from ..order import order_sets
from .. import shingles
from ..shingles import ShingleSpec, hash_sets, shingle_texts
from . import _kernel as _k
from ..output.files import OutputPlan
from . import blocks
from .arrays import spans
from .blocks import block_rows, match_blocks, query_blocks, threads_for
from .ids import Ids, check_python_ids, text_keys
from .matches import Matches
from .output import refuse_carried_names
from .postings import Postings, ScratchPool
from .rule import Rule
from .sets import SetStore, set_hashes
from .store import read_index, write_index
from .validate import check_arrays, check_meta
from .vocabulary import Ranked, Vocabulary

#: The version of the shingle keys (allpairs.shingles): an index of other keys is refused, not misread.
KEY_VERSION = getattr(shingles, "KEY_VERSION", 1)

#: The label of an index over pre-tokenised sets (tokens taken as given).
TOKENS = "tokens"

#: What :meth:`SearchIndex.add` does with a document whose id the index holds: refuse, replace, skip.
EXISTING = ("error", "replace", "skip")


class SearchIndex:
    """An exact set-similarity search index over shingle sets; it grows with :meth:`add` and saves to one file.

    Build one with :meth:`build` (from a corpus, texts or token sets) or
    :meth:`load` (from a file written by :meth:`save`); ask it with
    :meth:`query` at its threshold or any higher one.

    It holds the token order (``vocab``), the sets and their documents
    (``sets``), the postings of the sets' indexing prefixes (``postings``),
    the documents' ids and carried columns.
    """

    def __init__(self, *, rule: Rule, label: str, normalize: bool, min_shingles: int, vocab: Vocabulary,
                 sets: SetStore, ids: Ids, postings: Postings | None = None, columns: dict[str, Ids] | None = None):
        self.rule = rule
        self.label = label
        self.normalize = normalize
        self.min_shingles = min_shingles
        self.vocab = vocab
        self.sets = sets
        self.ids = ids
        #: Columns carried beside each indexed document's id into query answers, by name.
        self.columns: dict[str, Ids] = dict(columns or {})
        self._scratch = ScratchPool()
        if postings is None:
            self._compact()
        else:
            self.postings = postings

    # ---- sizes -------------------------------------------------------------

    @property
    def num_sets(self) -> int:
        return len(self.sets)

    @property
    def num_docs(self) -> int:
        return len(self.ids)

    @property
    def num_tokens(self) -> int:
        return len(self.vocab)
    @property
    def shingle(self) -> ShingleSpec | None:
        return None if self.label == TOKENS else ShingleSpec.parse(self.label)

    def __len__(self) -> int:
        return self.num_docs

    def __repr__(self) -> str:
        return (f"SearchIndex({self.num_docs:,} documents, {self.num_sets:,} distinct sets, {self.label} shingles, "
                f"{self.rule})")

    # ---- building ----------------------------------------------------------

    @classmethod
    def build(cls, data: Corpus | Sequence[str] | Sequence[Iterable], threshold, *, measure: str = "jaccard",
              shingle: ShingleSpec | str | None = None, normalize: bool = True, min_shingles: int = 1,
              stats: Stats | None = None, progress: Callable[[str, int, int], None] | None = None,
              ids: Sequence | None = None) -> "SearchIndex":
        """Index a corpus for queries at ``threshold`` or above.

        Parameters
        ----------
        data : Corpus, dict, pandas Series, list of str, or list of token collections
            As for :func:`allpairs.join`: a dict is named by its keys, a Series
            by its index, a list by ``ids`` or else by positions (ints).
            Ids keep their type while the index is in memory; a saved index
            reads its ids back as ints when they all were ints, else as str.
        threshold : float, str or Fraction in (0, 1]
            The lowest threshold the index answers; read exactly (for
            ``overlap``, a whole number of common tokens).
        measure : str
            ``jaccard``, ``cosine``, ``dice``, ``containment`` (the share of
            the query found in an indexed set) or ``overlap``.
        shingle, normalize, min_shingles
            How texts become sets, as for :func:`allpairs.join`; saved with
            the index. ``shingle`` and ``normalize`` make every query's and
            added document's set too; ``min_shingles`` leaves out indexed and
            added documents of fewer distinct shingles (a query is answered
            whatever its size).
        """
        rule = Rule.parse(measure, threshold)
        return cls._build(as_corpus(data, ids), rule, shingle=shingle, normalize=normalize, min_shingles=min_shingles,
                          stats=stats, progress=progress)

    @classmethod
    def _build(cls, corpus: Corpus, rule: Rule, *, shingle, normalize: bool, min_shingles: int,
               stats: Stats | None = None, progress=None) -> "SearchIndex":
        if min_shingles < 0:
            raise UsageError(f"min_shingles {min_shingles} is negative; give 0 or more")
        refuse_carried_names("indexed", corpus.columns)  # before the work: no index that no query can write
        check_python_ids(corpus)
        stats = stats if stats is not None else Stats()
        sets, label = shingle_corpus(corpus, shingle, normalize=normalize, min_shingles=min_shingles,
                                     stats=stats, progress=progress)
        kept = sets.doc_set >= 0
        position = np.cumsum(kept) - 1  # corpus position -> position among indexed documents
        docs = np.flatnonzero(kept).tolist()
        ids = [corpus.ids[d] for d in docs]
        columns = {name: [values[d] for d in docs] for name, values in corpus.columns.items()}
        with timed(stats, "index"):
            if progress:
                progress("index", 0, 1)
            index = cls.empty(rule, keys=sets.keys, label=label, normalize=normalize, min_shingles=min_shingles,
                              indptr=sets.indptr, tokens=sets.tokens, set_doc_ptr=sets.group_indptr,
                              set_docs=position[sets.group_docs].astype(np.int32), ids=ids, columns=columns)
            if progress:
                progress("index", 1, 1)
        return index
    @classmethod
    def empty(cls, rule: Rule, *, keys: np.ndarray, label: str, normalize: bool = True, min_shingles: int = 1,
              indptr=None, tokens=None, set_doc_ptr=None, set_docs=None, ids: Sequence[str] = (),
              columns: dict[str, Sequence[str]] | None = None) -> "SearchIndex":
        """An index whose order ranks ``keys`` (rank = position), holding the given sets (none by default)
        and the given documents' carried ``columns``."""
        sets = SetStore(np.zeros(1, np.int64) if indptr is None else indptr,
                        np.zeros(0, np.int32) if tokens is None else tokens,
                        np.zeros(1, np.int64) if set_doc_ptr is None else set_doc_ptr,
                        np.zeros(0, np.int32) if set_docs is None else set_docs)
        return cls(rule=rule, label=label, normalize=normalize, min_shingles=min_shingles, vocab=Vocabulary.of(keys),
                   sets=sets, ids=Ids.of(ids), columns={name: Ids.of(values) for name, values in (columns or {}).items()})

    def _compact(self) -> None:
        """Merge the added tokens and postings into the compiled arrays (postings rebuilt, sorted by set size)."""
        self.vocab.fold()
        self.postings = Postings.build(self.sets.indptr.array, self.sets.tokens.array, self.rule, self.num_tokens,
                                       self.vocab.v0)

    # ---- from documents to ranks -------------------------------------------

    def _keys(self, corpus: Corpus, shingle, normalize) -> tuple[np.ndarray, np.ndarray]:
        """Shingle keys of each document with the index's settings (checking any given ones agree)."""
        if shingle is not None and str(shingle if isinstance(shingle, ShingleSpec) else ShingleSpec.parse(shingle)) \
                != self.label:
            raise UsageError(f"the index holds {self.label} shingles, not {shingle}; "
                             "query with the shingle settings it was built with (leave {{shingle}} out)", param="shingle")
        if normalize is not None and bool(normalize) != self.normalize and self.label != TOKENS:
            raise UsageError(f"the index was built {'with' if self.normalize else 'without'} text normalisation; "
                             f"query it {'without' if self.normalize else 'with'} {{{{normalize=False}}}}",
                             param="normalize")
        if len(corpus) == 0:
            return np.zeros(1, np.int64), np.zeros(0, np.uint64)
        self.check_kind(corpus)
        if self.label == TOKENS:
            return hash_sets(corpus.sets)
        return shingle_texts(corpus.texts, self.label, normalize=self.normalize, languages=corpus.languages)

    def check_kind(self, corpus: Corpus) -> None:
        """Refuse texts for an index of pre-tokenised sets, and sets for an index of texts' shingles."""
        if self.label == TOKENS and corpus.sets is None:
            raise UsageError("the index holds pre-tokenised sets; give sets ({{kind=sets}}), not texts", param="data")
        if self.label != TOKENS and corpus.sets is not None:
            raise UsageError(f"the index holds {self.label} shingles of texts; give texts, not pre-tokenised sets",
                             param="data")

    # ---- queries -----------------------------------------------------------

    def _rule_at(self, threshold) -> Rule:
        if threshold is None:
            return self.rule
        t = parse_threshold(threshold, self.rule.row)
        if t.fraction < self.rule.fraction:
            raise UsageError(f"threshold {t} is below the index's {self.rule.threshold}, the lowest "
                             "it answers exactly; query at that or above, or build the index at a lower threshold")
        return Rule(self.rule.measure, t.p, t.q)

    def query(self, data: Corpus | Sequence[str] | Sequence[Iterable], threshold=None, *,
              shingle: ShingleSpec | str | None = None, normalize: bool | None = None,
              jobs: int | None = 1, top: int | None = None,
              progress: Callable[[str, int, int], None] | None = None) -> Matches:
        """Every indexed document reaching ``threshold`` with each query document, exactly.

        The matches name documents by position, from 0: ``matches.query`` the
        query's place in ``data``, ``matches.indexed`` the indexed document's
        place in the index (0-based here; the command line prints ids, and a
        ``--lines`` id is the line number, from 1). They come sorted by query,
        then indexed document, not by similarity; ``top`` orders each query's
        best first.

        Parameters
        ----------
        data : Corpus, list of str, or list of token collections
            The queries, shingled with the index's settings.
        threshold : float, str or Fraction, optional
            At or above the index's threshold (its own by default).
        shingle, normalize : optional
            When given, checked against the index's settings (a mismatch is an
            error, not a silent re-shingling).
        jobs : int, optional
            Threads for a large batch (1 by default; 0 or None: every core).
        top : int >= 1, optional
            Only each query's ``top`` best matches, best first, ties by indexed
            document (Jaccard, cosine and dice indexes).
        progress : callable(stage, done, total), optional
            Told the queries answered ("query"), a block at a time.
        """
        rule, corpus, ranked = self._ranked_queries(data, threshold, shingle, normalize, top)
        q, s, o = self._query_ranked(ranked, rule, jobs=resolve_jobs(jobs), progress=progress)
        matches = self._matches(ranked, q, s, o, list(corpus.ids), rule)
        # As text, as the index holds its own documents' columns (its file stores texts): the two sides of a
        # match carry a column alike.
        matches.query_columns = {name: list(values) for name, values in corpus.columns.items()}
        if top is not None:
            matches = matches.best(top)
        return matches

    def count(self, data: Corpus | Sequence[str] | Sequence[Iterable], threshold=None, *,
              shingle: ShingleSpec | str | None = None, normalize: bool | None = None,
              jobs: int | None = 1, top: int | None = None,
              progress: Callable[[str, int, int], None] | None = None, memory: int | str | None = None) -> int:
        """The number of matches :meth:`query` returns for the same arguments, without holding them.

        The queries are answered :data:`~.blocks.QUERY_BLOCK` at a time (fewer where their matches of sets
        would pass ``memory``, as in :meth:`query_blocks`) and each block's matches of distinct sets are
        counted as the documents of those sets and dropped: the memory is a block's matches of sets, not the
        answer (3,000 identical queries against the same 3,000 documents: 9 M matches, one set).
        """
        rows = block_rows(memory)
        rule, corpus, ranked = self._ranked_queries(data, threshold, shingle, normalize, top)
        per_set = self.sets.documents_per_set()
        found = 0
        for a, b, q, s, o in query_blocks(self, ranked, rule, jobs=resolve_jobs(jobs), progress=progress,
                                          rows=rows):
            if top is None:
                found += int(per_set[s].sum())
            else:
                per_query = np.bincount(q - a, weights=per_set[s], minlength=b - a).astype(np.int64)
                found += int(np.minimum(per_query, top).sum())
        return found

    def query_blocks(self, data: Corpus | Sequence[str] | Sequence[Iterable], threshold=None, *,
                     shingle: ShingleSpec | str | None = None, normalize: bool | None = None,
                     jobs: int | None = 1, top: int | None = None,
                     progress: Callable[[str, int, int], None] | None = None,
                     memory: int | str | None = None) -> Iterator[Matches]:
        """The matches :meth:`query` returns for the same arguments, in its order, a block at a time.

        Each block is a :class:`Matches` of consecutive queries (positions in
        ``data``, as :meth:`query` gives them), all of their matches; together
        they are :meth:`query`'s answer, and there is at least one (empty when
        nothing matches). Written one after the other by
        :func:`~allpairs.index.matches.write_matches`, they give the bytes the
        whole answer does: the queries are answered in order, so no block's
        rows go after a later one's. A block holds about ``memory`` bytes at
        most (:data:`~.blocks.MATCH_BYTES` a match), queries fewer than
        :data:`~.blocks.QUERY_BLOCK` where their matches so far say it must, or more
        when one query alone matches more: a query's matches are listed whole
        (at most one per indexed document).

        Parameters
        ----------
        memory : int (bytes) or str ("512M", "2G"), optional
            What a block of matches may take, as for :func:`allpairs.join`;
            default half the memory available when the query starts.

        The other parameters are :meth:`query`'s; they are checked, and the
        queries shingled, before this returns.
        """
        rows = block_rows(memory)
        rule, corpus, ranked = self._ranked_queries(data, threshold, shingle, normalize, top)
        return match_blocks(self, ranked, rule, corpus, top=top, jobs=resolve_jobs(jobs), progress=progress,
                            rows=rows)

    def _ranked_queries(self, data, threshold, shingle, normalize, top) -> tuple[Rule, Corpus, Ranked]:
        """The rule at ``threshold``, the queries as a corpus, and their sets ranked by the index's vocabulary."""
        rule = self._rule_at(threshold)
        if top is not None:
            check_k("top", top, rule.row)
        corpus = as_corpus(data)
        indptr, keys = self._keys(corpus, shingle, normalize)
        return rule, corpus, self.vocab.rank(indptr, keys)

    def _matches(self, ranked: Ranked, q, s, o, query_ids, rule) -> Matches:
        """Expand matching sets to their documents, sorted by (query, indexed document)."""
        q, s, o, docs = self.sets.documents(q, s, o)
        return Matches(query=q.astype(np.int32, copy=False), indexed=docs.astype(np.int32, copy=False),
                       overlap=o.astype(np.int32, copy=False), query_size=ranked.sizes[q].astype(np.int32),
                       indexed_size=self.sets.sizes(s).astype(np.int32), query_ids=query_ids, index=self,
                       rule=rule)

    def _query_ranked(self, ranked: Ranked, rule: Rule, *, jobs: int = 1, limit: np.ndarray | None = None,
                      progress: Callable[[str, int, int], None] | None = None):
        """(query, set, overlap) of every match of ranked queries; ``limit[k]``: answer only sets below it.
        With ``progress``, the queries are answered QUERY_BLOCK at a time (per thread), each block told."""
        n = len(ranked.unseen)
        # Without progress, one block a thread (one block in all on one thread).
        step = blocks.QUERY_BLOCK if progress is not None else max(-(-n // threads_for(n, jobs)), 1)
        parts = [part[2:] for part in query_blocks(self, ranked, rule, jobs=jobs, limit=limit, progress=progress,
                                                   step=step)]
        return parts[0] if len(parts) == 1 else tuple(np.concatenate([pt[i] for pt in parts]) for i in range(3))

    def _query_part(self, ranked: Ranked, rule: Rule, limit: np.ndarray, a: int, b: int, bits: np.ndarray,
                    scratch_rows: tuple[np.ndarray, np.ndarray]):
        """The matches of queries a..b-1 (numbered from 0 for the whole batch), on a worker's scratch rows and
        α cache, with the sets' signatures ``bits`` (empty: no bitmap filter)."""
        x_ptr, x_set = self.postings.delta_candidates(ranked, rule, a, b, self.vocab.v0)
        if a == 0 and b == len(ranked.unseen):
            ptr, tokens, unseen, sizes, lim = ranked.indptr, ranked.tokens, ranked.unseen, ranked.sizes, limit
        else:
            ptr = ranked.indptr[a:b + 1]
            tokens = ranked.tokens[ptr[0]:ptr[-1]]
            ptr = ptr - ptr[0]
            unseen, sizes, lim = ranked.unseen[a:b], ranked.sizes[a:b], limit[a:b]
        _, lo, hi = rule.probe(sizes)
        q, s, o = _k.query(ptr, tokens, unseen, lo, hi, lim, rule.code, rule.p, rule.q, self.sets.indptr.array,
                           self.sets.tokens.array, bits, self.postings.list_ptr, self.postings.post, self.vocab.v0,
                           x_ptr, x_set, *scratch_rows)
        return (q + a if a else q), s, o

    # ---- growth ------------------------------------------------------------
    def add(self, data: Corpus | Mapping | Sequence[str] | Sequence[Iterable], *, ids: Sequence | None = None,
            existing: str = "error", stats: Stats | None = None) -> np.ndarray:
        """Append documents (shingled with the index's settings) without rebuilding; return their positions.

        Parameters
        ----------
        data : Corpus, dict, pandas Series, list of str, or list of token collections
            As for :meth:`build`. A list's ids are ``ids``, or by default the
            positions the documents take in the index (ints). A corpus's ids
            are taken as they are (see :func:`continue_lines` for line numbers).
        existing : "error", "replace" or "skip"
            What to do with a document whose id the index holds already (ids
            compared as text): refuse the whole batch (:class:`InputError`,
            nothing added); replace the old document (it is removed and the new
            one appended, so the index answers as a build of its documents
            without the old one, then the batch, would); or keep the old one
            and skip the new (counted in ``stats.skipped``).
        stats : Stats, optional
            Counts what was read, skipped and replaced.

        Documents with fewer than the index's ``min_shingles`` distinct shingles
        (or none) are not added and get -1, as do skipped ones.
        """
        if existing not in EXISTING:
            raise UsageError(f"existing={existing!r}; choose one of {', '.join(map(repr, EXISTING))}")
        numbered = ids is None and not isinstance(data, (Corpus, Mapping)) and not is_series(data)
        corpus = as_corpus(data, ids)
        check_python_ids(corpus)
        indptr, keys = self._keys(corpus, None, None)
        known = None if numbered else self._known(corpus.ids)
        take = np.arange(len(corpus))
        old: list[int] = []
        if known:
            if existing == "error":
                first = min(known)
                above = named_from_above(corpus.paths[0]) \
                    if corpus.kind == "directory" and len(corpus.paths) == 1 else None
                raise InputError(f"{count(len(known), 'document')} of the {len(corpus):,} added "
                                 f"{'has an id' if len(known) == 1 else 'have ids'} the index holds already "
                                 f"(the first: {corpus.ids[first]!r}); replace the old documents "
                                 "({{existing=replace}}) or keep them and skip the new ({{existing=skip}})"
                                 + (f"; if they are other files, read them from the directory above to give "
                                    f"them ids of their own ({above})" if above else ""), param="existing")
            if existing == "skip":
                take = np.flatnonzero(~np.isin(take, list(known)))
                lengths = np.diff(indptr)[take]
                keys = keys[spans(indptr[take], lengths)]
                indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
            else:
                old = sorted(set(known.values()))
        # The batch is ordered as a build orders its corpus: its own ranks (rare first), its distinct sets.
        batch = order_sets(indptr, keys, min_size=max(1, self.min_shingles))
        sizes = batch.doc_size
        keep = np.flatnonzero(batch.doc_set >= 0)
        batch_positions = np.full(len(take), -1, np.int64)
        batch_positions[keep] = self.num_docs - len(old) + np.arange(len(keep))  # after the old ones go
        docs = take[keep].tolist()
        if numbered:  # a plain list: each document's id is its position in the index
            new_ids = batch_positions[keep].tolist()
            clash = self._known(new_ids)
            if clash:
                raise InputError(f"the index holds the id {new_ids[min(clash)]!r} already, the position a "
                                 "new document takes; give the documents ids (ids=)")
        else:
            new_ids = [corpus.ids[d] for d in docs]
        if stats is not None:
            stats.documents += len(corpus) + len(corpus.skipped)
            stats.skipped.extend(corpus.skipped)
            if existing == "skip" and known:
                stats.skipped.extend((corpus.ids[d], "in the index already") for d in sorted(known))
            stats.skipped.extend((corpus.ids[d], "no shingle") for d in take[sizes == 0].tolist())
            stats.dropped += int(((sizes > 0) & (sizes < self.min_shingles)).sum())
            stats.joined += len(keep)
            if old:
                stats.notes.append(f"replaced {count(len(old), 'document')} of the same id")
        if old:
            self._drop_docs(np.asarray(old, np.int64))
        positions = np.full(len(corpus), -1, np.int64)
        positions[take] = batch_positions
        if len(keep):
            self.ids.extend(new_ids)
            for name, column in self.columns.items():  # what the documents carry, "" where they carry nothing
                values = corpus.columns.get(name)
                column.extend([values[d] for d in docs] if values is not None else [""] * len(keep))
            self._append(batch, batch_positions)
        return positions

    def _known(self, ids: Sequence) -> dict[int, int]:
        """For each of ``ids`` that the index holds (compared as text): its place in ``ids`` -> its position.

        Only the indexed ids whose :func:`text_keys` key is one of ``ids``' keys are decoded and compared:
        no Python string for every indexed id."""
        if not len(self.ids) or not len(ids):
            return {}
        new = Ids.of([str(i) for i in ids])
        wanted = np.sort(text_keys(new.ptr.array, new.blob.array))
        held = self.ids.keys()
        hit = np.flatnonzero(wanted[np.minimum(np.searchsorted(wanted, held), len(wanted) - 1)] == held)
        if not len(hit):
            return {}
        places: dict[str, list[int]] = {}
        for k in range(len(new)):
            places.setdefault(new.text(k), []).append(k)
        found: dict[int, int] = {}
        for d in hit.tolist():
            for k in places.get(self.ids.text(d), ()):
                found[k] = d
        return found

    def _drop_docs(self, docs: np.ndarray) -> None:
        """Remove the documents at positions ``docs``: later ones move down, and a set left with no
        document is removed with its postings (the compiled postings are rebuilt, as a build does)."""
        alive = np.ones(self.num_docs, bool)
        alive[docs] = False
        if self.sets.drop(alive, self.num_docs):
            self._compact()
        self.ids = self.ids.keep(alive)
        self.columns = {name: column.keep(alive) for name, column in self.columns.items()}

    def _append(self, batch, positions: np.ndarray) -> None:
        """Append a batch's documents (:func:`~allpairs.order.order_sets`; ``positions``: each one's
        position in the index): each joins the indexed set identical to its own, or a new set (one per
        distinct set of the batch), whose prefix postings are added."""
        # The batch's sets in the index's ranks, each sorted again (as a biased key: uint64 order is int32's).
        ranks = self.vocab.learn(batch.keys)
        ptr, biased = distinct_sorted_rows(batch.indptr, (ranks[batch.tokens].astype(np.int64) + 2**31)
                                           .astype(np.uint64))
        tok = (biased.astype(np.int64) - 2**31).astype(np.int32)
        docs = positions[batch.group_docs].astype(np.int32)
        hashes = set_hashes(ptr, tok)
        known = self.sets.find(ptr, tok, hashes)
        members = np.diff(batch.group_indptr)
        new = np.flatnonzero(known < 0)
        if len(new):
            if len(new) < len(known):
                new_ptr, new_tok = gather_csr(ptr, tok, new)
                gptr, new_docs = gather_csr(batch.group_indptr, docs, new)
            else:
                new_ptr, new_tok, gptr, new_docs = ptr, tok, batch.group_indptr, docs
            first_set = self.sets.append(new_ptr, new_tok, gptr, new_docs, hashes[new])
            if not self.postings.add(new_ptr, new_tok, first_set, self.rule, self.vocab.v0):
                self._compact()  # a large batch: straight into the compiled postings, as a build
        old = np.flatnonzero(known >= 0)
        if len(old):
            self.sets.join(np.repeat(known[old], members[old]), docs[spans(batch.group_indptr[old], members[old])],
                           self.num_docs)

    # ---- files -------------------------------------------------------------

    def save(self, path: str | os.PathLike, *, plan: OutputPlan | None = None, progress=None) -> int:
        """Write the index to ``path`` atomically (temporary file, then rename); return its size in bytes.

        ``path`` is written as every allpairs output is (:mod:`allpairs.output.files`);
        ``plan`` is what :func:`~allpairs.output.files.check_output` said of it before the work;
        ``progress(done, total)`` is told the bytes written.
        """
        if self.postings.delta or self.vocab.learnt:
            self._compact()
        self.sets.merge_members(self.num_docs)
        vocab, sets = self.vocab, self.sets
        meta = {"measure": self.rule.measure, "p": self.rule.p, "q": self.rule.q, "label": self.label,
                "normalize": self.normalize, "min_shingles": self.min_shingles, "v0": vocab.v0,
                "key_version": KEY_VERSION, "columns": list(self.columns)}
        if self.ids.ints and len(self.ids):
            meta["id_type"] = "int"
        arrays = {
            "slot_keys": vocab.slot_keys.array, "lookup_keys": vocab.lookup_keys, "lookup_ranks": vocab.lookup_ranks,
            "indptr": sets.indptr.array, "tokens": sets.tokens.array,
            "set_doc_ptr": sets.set_doc_ptr.array, "set_docs": sets.set_docs.array,
            "id_ptr": self.ids.ptr.array, "id_bytes": self.ids.blob.array,
            "list_ptr": self.postings.list_ptr, "post": self.postings.post,
        }
        for k, column in enumerate(self.columns.values()):
            arrays[f"column{k}_ptr"], arrays[f"column{k}_bytes"] = column.ptr.array, column.blob.array
        return write_index(path, meta, arrays, plan=plan, progress=progress)

    @classmethod
    def load(cls, path: str | os.PathLike, *, check: bool = True, fd: int | None = None) -> "SearchIndex":
        """Open an index file written by :meth:`save` (memory-mapped; refused if of another version or damaged).

        Every header field and array is checked (:mod:`allpairs.index.validate`) before
        it is used, so that no file, however made, leads a kernel out of bounds.
        ``fd``: the file already open (and locked, see :func:`~allpairs.index.store.locked`).
        """
        def validate(meta: dict, arrays: dict) -> Rule:
            check_meta(meta, path, key_version=KEY_VERSION, tokens_label=TOKENS)
            rule = Rule(meta["measure"], meta["p"], meta["q"])
            check_arrays(arrays, meta, path, rule.index_prefix)
            return rule

        meta, a, rule = read_index(path, check=check, fd=fd, validate=validate)
        return cls(rule=rule, label=meta["label"], normalize=meta["normalize"], min_shingles=meta["min_shingles"],
                   vocab=Vocabulary(a["slot_keys"], a["lookup_keys"], a["lookup_ranks"], meta["v0"]),
                   sets=SetStore(a["indptr"], a["tokens"], a["set_doc_ptr"], a["set_docs"]),
                   ids=Ids(a["id_ptr"], a["id_bytes"], ints=meta.get("id_type") == "int"),
                   postings=Postings(a["list_ptr"], a["post"]),
                   columns={name: Ids(a[f"column{k}_ptr"], a[f"column{k}_bytes"])
                            for k, name in enumerate(meta.get("columns", []))})

