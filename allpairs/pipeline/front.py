"""Stages 1–3 for a corpus, shared by every path: Python input adapted to a corpus, the default shingle,
keys, then the global order with identical sets grouped."""
from __future__ import annotations

import sys
from collections import Counter
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

import numpy as np

from ..corpus import Corpus
from ..errors import EmptyCorpusError, UsageError
from ..output.carried import Carried, concat
from .._kernels.jit import PLAIN_BELOW
from .._plural import count
from ..order import OrderedSets, order_sets
from ..shingles import hash_sets
from .stats import Progress, Stats, timed

if TYPE_CHECKING:  # the spec's module loads where a spec is parsed or made: a --sets run has none
    from ..shingles import ShingleSpec


def is_series(data) -> bool:
    """Whether ``data`` is a pandas Series (pandas is not imported for the question)."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(data, pandas.Series)


def as_corpus(data: Corpus | Mapping | Sequence[str] | Sequence[Iterable], ids: Sequence | None = None, *,
              ids_name: str = "ids") -> Corpus:
    """A Corpus from a Corpus, a dict, a pandas Series, a list of texts, or a list of token collections.

    A dict's keys are the ids and its values the documents (texts, or token
    collections); a Series is named by its index. A list's ids are ``ids``
    when given (as many as documents, all different), else the positions 0,
    1, 2, ... as ints, so that an id and the index :class:`~allpairs.pairs.Pair`
    gives for it are the same number. Ids keep their type. ``ids_name``: the parameter ``ids`` came as
    (``against_ids``), named in the messages.
    """
    if isinstance(data, Corpus):
        if ids is not None:
            raise UsageError(f"a Corpus names its documents already; {ids_name}= goes with a list of documents")
        check_shape(data)
        return data
    if isinstance(data, (str, bytes)):
        raise UsageError("give a list of documents, not one string; read a path with allpairs.read_directory")
    if _is_frame(data):  # iterating a table gives its column names: two documents named "text" and "title"
        raise UsageError(f"give one column of the table, df[{str(next(iter(data.columns), 'text'))!r}] (its "
                         "documents named by the frame's index), not the table, whose iteration gives its column "
                         "names; allpairs.dedup takes the frame itself (text=)", param="data")
    if isinstance(data, Mapping) or is_series(data):
        if ids is not None:
            what = "a dict names its documents by its keys" if isinstance(data, Mapping) else \
                "a pandas Series names its documents by its index"
            raise UsageError(f"{what}; {ids_name}= goes with a list of documents")
        if isinstance(data, Mapping):
            ids, data = list(data.keys()), list(data.values())
        else:
            ids, data = data.index.tolist(), data.tolist()
            if len(set(ids)) != len(ids):
                twice = next(i for i, n in Counter(ids).items() if n > 1)
                raise UsageError(f"the Series' index holds {twice!r} twice; ids must be different")
    else:
        data = list(data)
        if ids is None:
            ids = list(range(len(data)))
        else:
            ids = list(ids)
            if len(ids) != len(data):
                raise UsageError(f"{len(ids):,} ids for {len(data):,} documents; give one id per document")
            if len(set(ids)) != len(ids):
                twice = next(i for i, n in Counter(ids).items() if n > 1)
                raise UsageError(f"id {twice!r} is given twice; ids must be different")
    if all(isinstance(d, str) for d in data):
        return Corpus(ids=ids, texts=data, kind="texts")
    if any(isinstance(d, str) for d in data) and all(isinstance(d, str) or _missing(d) for d in data):
        # Texts with some missing (a Series' NaN, a None): an empty document each, as Spark's null text is.
        return Corpus(ids=ids, texts=[d if isinstance(d, str) else "" for d in data], kind="texts")
    if any(isinstance(d, str) for d in data):
        raise UsageError("mixed input: give either texts (str) or token sets, not both")
    # Tokens stay as given (hash_sets keys a token by str(token)): no copy of each token. A missing value
    # (a Series' NaN, a None) is an empty set, as a missing text is an empty text.
    return Corpus(ids=ids, sets=[d if isinstance(d, (list, tuple)) else _token_list(d, k) for k, d in enumerate(data)],
                  kind="tokens")


def _token_list(document, position: int) -> list:
    if _missing(document):
        return []
    try:
        return list(document)
    except TypeError:
        raise UsageError(f"document {position:,} is {document!r}, neither a text nor a collection of tokens; "
                         "give texts (str) or token sets (lists)", param="data") from None


def check_shape(corpus: Corpus) -> None:
    """Refuse a Corpus (one made by hand) whose parts disagree: texts and sets both or neither, or a number
    of texts, sets, languages or a column's values other than its ids' (a document silently left out, or
    an IndexError deep in a stage)."""
    n = len(corpus)
    if (corpus.texts is None) == (corpus.sets is None):
        raise UsageError(f"a Corpus holds texts or sets; this one holds "
                         f"{'both' if corpus.sets is not None else 'neither'}: give one of them", param="data")
    parts = {"texts" if corpus.texts is not None else "sets": corpus.texts if corpus.texts is not None
             else corpus.sets, "languages": corpus.languages, **{f"values of column {k!r}": v
                                                                   for k, v in corpus.columns.items()}}
    for what, values in parts.items():
        if values is not None and len(values) != n:
            raise UsageError(f"the Corpus has {n:,} ids but {len(values):,} {what}; give one for each "
                             "document", param="data")


def _is_frame(data) -> bool:
    """Whether ``data`` is a table of columns (a pandas or polars DataFrame), not a list of documents."""
    shape = getattr(data, "shape", None)
    return hasattr(data, "columns") and isinstance(shape, tuple) and len(shape) == 2


def _missing(value) -> bool:
    """Whether a document is a missing value: None, a float NaN (pandas' missing text) or pandas.NA."""
    return value is None or (isinstance(value, float) and value != value) or type(value).__name__ == "NAType"


def merge_corpora(left: Corpus, right: Corpus) -> Corpus:
    """Both sides of an R–S join as one corpus (left's documents first), so that they share one global order."""
    if (left.sets is None) != (right.sets is None):
        raise UsageError("both sides of an R–S join must be texts, or both pre-tokenised sets")

    def both(a, b, n_a, n_b):
        return None if a is None and b is None else list(a or [None] * n_a) + list(b or [None] * n_b)

    n_l, n_r = len(left), len(right)
    # A column one side lacks is nothing ("", null) on that side; typed columns stay typed.
    columns = {name: concat([(left.columns.get(name), n_l), (right.columns.get(name), n_r)])
               for name in {**left.columns, **right.columns}}
    # Integer ids on both sides stay integers; on one side only, every id is text.
    ids = concat([(left.ids, n_l), (right.ids, n_r)])
    return Corpus(ids=ids if isinstance(ids, Carried) else list(ids), texts=both(left.texts, right.texts, n_l, n_r),
                  sets=both(left.sets, right.sets, n_l, n_r), columns=columns, notes=left.notes + right.notes,
                  languages=both(left.languages, right.languages, n_l, n_r),
                  skipped=list(left.skipped) + list(right.skipped),
                  kind=left.kind if left.kind == right.kind else "texts",
                  seconds=left.seconds + right.seconds, dropped=left.dropped + right.dropped)


def input_bytes(corpus: Corpus, enough: int = PLAIN_BELOW) -> int:
    """About how many bytes of input ``corpus`` holds: characters of its texts and of its sets' string
    tokens, 8 per token that is not a string (a key's size); counting stops past ``enough``, which is all that
    :func:`allpairs._kernels.jit.kernels_for` needs to know."""
    docs = corpus.texts if corpus.texts is not None else corpus.sets
    lines = getattr(docs, "lines", None)  # read from a file: its buffer's size
    if lines is not None:
        return len(lines.data)
    buffer = getattr(docs, "buffer", None)  # texts held as one UTF-8 buffer
    if isinstance(buffer, np.ndarray):
        return len(buffer)
    keys = getattr(docs, "keys", None)  # hashed while read: the keys
    if keys is not None:
        return 8 * len(keys)
    total = 0
    for doc in docs:
        if corpus.texts is not None:
            total += len(doc)
        else:  # a string token is hashed byte by byte: a few long ones are much work
            total += sum(len(t) if isinstance(t, str) else 8 for t in doc)
        if total >= enough:
            break
    return total


def default_shingle(corpus: Corpus) -> tuple[ShingleSpec | None, str | None]:
    """The documented default and, when it was chosen from the data, a line that says so: tokens as
    given for sets; ``code:5`` for a tree of source files only; else the shingle the texts' lengths
    call for (:func:`allpairs.shingles.shingle_for_texts`: ``char:3``, ``word:1`` or ``word:5``)."""
    if corpus.sets is not None:
        return None, None
    from ..shingles import ShingleSpec, shingle_for_texts

    if corpus.kind == "directory" and corpus.languages and all(corpus.languages):
        return ShingleSpec("code", 5), None
    choice = shingle_for_texts(corpus.texts)
    return choice.spec, choice.describe()


#: The share of documents with a single shingle above which the summary suggests a shorter shingle.
SHORT_SHARE = 0.1


def short_note(spec: ShingleSpec, doc_size: np.ndarray) -> str | None:
    """A line for the summary when many documents are a single shingle (too short for ``spec``): at a
    threshold above 1/2 each pairs only with copies of it, so a shorter shingle of the kind is named."""
    from ..shingles import ShingleSpec

    shorter = {"word": ShingleSpec("word", 1), "char": ShingleSpec("char", 3)}.get(spec.kind)
    if shorter is None or shorter.n >= spec.n:
        return None
    joined = int((doc_size > 0).sum())
    single = int((doc_size == 1).sum())
    if not joined or single < SHORT_SHARE * joined:
        return None
    unit = "words" if spec.kind == "word" else "characters"
    return (f"note: {single:,} of {count(joined, 'document')} ({100 * single / joined:.0f}%) are a single {spec} "
            f"shingle ({spec.n} {unit} or fewer): above t = 0.5 each pairs only with copies of it; "
            f"--shingle {shorter} suits texts this short")


def corpus_keys(corpus: Corpus, shingle: ShingleSpec | str | None, *, normalize: bool,
                progress: Progress | None = None, jobs: int | None = None,
                sorted_rows: bool = False, notes: list[str] | None = None) -> tuple[np.ndarray, np.ndarray, str]:
    """Stage 2 for a corpus: the keys of its sets' tokens, or of its texts' shingles (default spec
    as documented in :func:`default_shingle`, which ``notes`` is told of when chosen from the data),
    as CSR, and the label of what they are.
    ``sorted_rows``: sets' tokens may come back sorted with repeats dropped, where that is cheaper
    here than later (see :func:`allpairs.shingles.hash_sets`)."""
    if isinstance(shingle, str):
        from ..shingles import ShingleSpec

        shingle = ShingleSpec.parse(shingle)
    if corpus.sets is not None:
        if shingle is not None:
            raise UsageError("pre-tokenised sets are joined on their tokens; drop {{shingle}}", param="shingle")
        if not normalize:
            from ..shingles.keys import SETS_NOT_NORMALIZED

            raise UsageError(SETS_NOT_NORMALIZED, param="normalize")
        indptr, keys = hash_sets(corpus.sets, jobs=jobs, sorted_rows=sorted_rows)
        return indptr, keys, "tokens"
    if shingle is None:
        shingle, why = default_shingle(corpus)
        if why and notes is not None:
            notes.append(why)
    done = [0]

    def tick(k: int) -> None:
        done[0] += k
        if progress:
            progress("shingle", done[0], len(corpus))

    from ..shingles import shingle_texts  # here, not at the top: a --sets run loads no tokenizer

    indptr, keys = shingle_texts(corpus.texts, shingle, normalize=normalize, languages=corpus.languages,
                                 progress=tick, distinct=True, jobs=jobs)
    return indptr, keys, str(shingle)


def shingle_corpus(corpus: Corpus, shingle: ShingleSpec | str | None, *, normalize: bool,
                   min_shingles: int, stats: Stats, progress: Progress | None,
                   ranked: bool = True, jobs: int | None = None, n_left: int | None = None) -> tuple[OrderedSets, str]:
    """Stages 1–3: shingle every document, drop the near-empty, rank and group (shared by join and compare).

    ``ranked=False`` (the LSH path) groups the sets without ranking their keys
    (:func:`allpairs.lsh.keysets.keyed_sets`): MinHash and verification need no rank order.
    ``jobs``: threads for the compiled tokenizers (see :func:`allpairs.shingles.shingle_texts`).
    ``n_left``: an R–S join's first ``n_left`` documents are one side, the rest the other; a side left
    without a set is an empty corpus, as a self-join's corpus is (joined against nothing, it finds nothing).
    """
    stats.documents = len(corpus) + len(corpus.skipped)
    stats.skipped = list(corpus.skipped)
    stats.dropped = corpus.dropped
    stats.input_kind = corpus.kind
    stats.notes.extend(corpus.notes)
    left_out = corpus.left_out_note()
    if left_out:
        stats.notes.append(left_out)
    if corpus.seconds:
        stats.seconds["read"] = corpus.seconds
    if len(corpus) == 0:
        raise EmptyCorpusError(corpus.empty_message())
    with timed(stats, "shingle"):
        indptr, keys, label = corpus_keys(corpus, shingle, normalize=normalize, progress=progress, jobs=jobs,
                                          sorted_rows=not ranked, notes=stats.notes)
    with timed(stats, "order"):
        if ranked:
            sets = order_sets(indptr, keys, min_size=max(1, min_shingles), jobs=jobs)
        else:
            from ..lsh.keysets import keyed_sets  # here, not at the top: only the LSH path keys its sets

            sets = keyed_sets(indptr, keys, min_size=max(1, min_shingles), jobs=jobs)
    stats.shingles = int(sets.doc_size.sum())
    stats.distinct_shingles = sets.num_tokens
    stats.distinct_sets = sets.num_sets
    stats.joined = int((sets.doc_set >= 0).sum())
    if label != "tokens":
        from ..shingles import ShingleSpec

        note = short_note(ShingleSpec.parse(label), np.where(sets.doc_set >= 0, sets.doc_size, 0))
        if note:
            stats.notes.append(note)
    dropped = np.flatnonzero(sets.doc_set < 0)
    for d in dropped.tolist():
        if sets.doc_size[d] == 0:
            stats.skipped.append((corpus.ids[d], "no shingle"))
        else:
            stats.dropped += 1
    sides = [("", 0, len(corpus))] if n_left is None else [("", 0, n_left), ("against: ", n_left, len(corpus))]
    for side, lo, hi in sides:
        if sets.num_sets and (n_left is None or (sets.doc_set[lo:hi] >= 0).any()):
            continue
        raise EmptyCorpusError.no_sets(hi - lo, min_shingles, None if corpus.sets is not None else label, side,
                                       most=int(sets.doc_size[lo:hi].max(initial=0)))
    return sets, label

