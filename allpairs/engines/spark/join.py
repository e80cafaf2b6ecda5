"""Orchestration of the Spark engine: input DataFrame → sets → exact or LSH set pairs → document pairs.

:func:`plan` wires the stages and keeps what a report needs (the token order,
the hot-group splits, the LSH buckets); :func:`join` is the public entry
(``allpairs.spark.join``) and returns only the pairs, lazily. Computing the
token order is an action (as fitting a model is); the pairs are computed when
the returned DataFrame is.
"""
from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field
from fractions import Fraction

from ...errors import EmptyCorpusError, InputError, UsageError
from ...pipeline import LSHInfo, lsh_settings
from ...measures import MAX_DENOMINATOR, Threshold, get_measure, parse_threshold
from ...shingles import ShingleSpec
from . import copies, exact, lsh, one_task as small, sets
from .carried import frame_columns, with_carried
from .pairs import COLUMNS, MEMBERS_BROADCAST, ORDER, document_pairs, returned
from .session import check_workers, quoted, require_pyspark
from .shingle import choose_shingle, given_spec

METHODS = ("exact", "lsh")
#: The measures the Spark engine joins by the Jaccard route: a Jaccard join at a threshold low enough,
#: then each measure's own test.
JACCARD_ROUTED = ("jaccard", "cosine", "dice")
#: The measures whose self-join is an R–S join of the frame with itself (:func:`.against.self_pairs`).
SELF_RS = ("containment", "overlap")
#: Without max_bucket, buckets larger than this are reported (the local engine's warning size).
LARGE_BUCKET = 1000


@dataclass
class SparkJoin:
    """A planned Spark join: the pairs (with the hidden order columns) and what the plan found on the way."""

    pairs: object
    _members: object  # None: grouped on first use (see ``kept``), as ``_distinct`` and ``_grouped``
    _distinct: object
    _grouped: object
    threshold: Threshold
    method: str
    shingle: str
    ranked: object = None
    order: sets.TokenOrder | None = None
    plans: dict = field(default_factory=dict)
    groups: int | None = None
    buckets: object = None
    candidates: object = None
    lsh: LSHInfo | None = None
    summary: sets.Summary | None = None  # the documents, joined documents and distinct sets, counted
    one_task: bool = False  # the distinct sets joined in one task (:mod:`.one_task`), not by token groups
    # The documents kept in Spark's cache, where the one task groups the identical sets itself: the grouped
    # frames (:func:`.sets.group_identical`, the members, the distinct sets) are then made only if asked for
    # (dedup, clusters): analysing them took a cold JVM ~0.1-0.25 s.
    kept: object = None
    min_shingles: int = 1

    @property
    def grouped(self):
        """Every document with its set id (:func:`.sets.group_identical`)."""
        if self._grouped is None:
            self._grouped = sets.group_identical(self.kept, self.min_shingles)
        return self._grouped

    @property
    def members(self):
        """(set, ord, id, okey, size), a row per joined document (:func:`.sets.members_and_distinct`)."""
        if self._members is None:
            self._members, self._distinct = sets.members_and_distinct(self.grouped)
        return self._members

    @property
    def distinct(self):
        """(set, size, keys), a row per distinct set (:func:`.sets.members_and_distinct`)."""
        if self._distinct is None:
            self._members, self._distinct = sets.members_and_distinct(self.grouped)
        return self._distinct

    def describe(self) -> str | None:
        """Which plan joined the exact join's sets (the command line's note, the benchmarks' column); None for
        the LSH join and the R–S self-join."""
        if self.one_task:
            self.summary.settle()
            return (f"plan: one task ({self.summary.distinct:,} distinct sets of {self.summary.shingles:,} shingles; "
                    f"one task up to {small.ONE_TASK_SETS:,} and {small.ONE_TASK_SHINGLES:,})")
        if self.ranked is None:
            return None
        return f"plan: distributed ({self.groups:,} token groups, {len(self.plans):,} hot tokens split)"

    def unpersist(self) -> None:
        """Free the grouped sets (or the documents) this join keeps in Spark's cache."""
        (self._grouped if self.kept is None else self.kept).unpersist()


def check_schema(df, id_col, text_col, tokens_col, order_col, language_col, side: str = ""):
    """Refuse, before any job, a missing column or one of the wrong type, in one line naming the column
    (``side``, e.g. "against's ", says which frame of an R–S join)."""
    from pyspark.sql import types as T

    if (text_col is None) == (tokens_col is None):
        raise UsageError("give exactly one of text_col (texts to shingle) and tokens_col (sets of tokens)")
    for what, name in (("id_col", id_col), ("text_col", text_col), ("tokens_col", tokens_col),
                       ("order_col", order_col), ("language_col", language_col)):
        if name is not None and name not in df.columns:
            raise UsageError(f"{side}{what} {name!r} is not a column of the DataFrame; its columns are "
                             f"{', '.join(df.columns)}")
    types = dict(df.dtypes)
    fields = {f.name: f.dataType for f in df.schema.fields}
    if not isinstance(fields[id_col], (T.StringType, T.IntegralType)):
        raise UsageError(f"{side}id_col {id_col!r} holds {types[id_col]}; ids are strings or integers: cast it "
                         f"(F.col({id_col!r}).cast('string')) or name another column with id_col")
    if text_col is not None and not isinstance(fields[text_col], T.StringType):
        hint = ("; an array of tokens goes in tokens_col" if isinstance(fields[text_col], T.ArrayType)
                else f": cast it (F.col({text_col!r}).cast('string')) or name another column with text_col")
        raise UsageError(f"{side}text_col {text_col!r} holds {types[text_col]}, not strings{hint}")
    if tokens_col is not None:
        dtype = fields[tokens_col]
        ok = isinstance(dtype, T.StringType) or (
            isinstance(dtype, T.ArrayType) and isinstance(dtype.elementType, (T.StringType, T.IntegralType)))
        if not ok:
            raise UsageError(f"{side}tokens_col {tokens_col!r} holds {types[tokens_col]}; give an array of strings or "
                             "integers (or a string of whitespace-separated tokens)")
    if language_col is not None and not isinstance(fields[language_col], T.StringType):
        raise UsageError(f"{side}language_col {language_col!r} holds {types[language_col]}, not strings")


def check_ids(df, id_col, side: str = "") -> None:
    """Refuse null and repeated ids (one job: the ids counted by value), as the local engine refuses them."""
    from pyspark.sql import functions as F

    empty = F.col("id").cast("string") == ""
    bad = df.groupBy(F.col(quoted(id_col)).alias("id")).count() \
        .where(F.col("id").isNull() | empty | (F.col("count") > 1)) \
        .orderBy(F.col("id").isNotNull(), ~empty).limit(1).collect()
    if bad:
        row = bad[0]
        if row["id"] is None or str(row["id"]) == "":
            what = "null" if row["id"] is None else "empty"
            raise InputError(f"{side}id_col {id_col!r} holds {row['count']:,} {what} ids; every row needs an id "
                             "(drop those rows or fill them)")
        raise InputError(f"{side}id_col {id_col!r}: id {row['id']!r} is given {row['count']:,} times; ids must be "
                         "different (deduplicate the rows or give another id_col)")


def _checked(summary: sets.Summary, df, id_col, kept, label: str, min_shingles: int) -> sets.Summary:
    """``summary``, once a suspect id (:attr:`.sets.Summary.suspect_ids`) is found to be none and some document
    holds a set: a null or repeated id is refused, and so is a corpus without a set of ``min_shingles`` or
    more ``label`` shingles, in the local engine's words (``kept`` freed first)."""
    try:
        if summary.suspect_ids:
            check_ids(df, id_col)  # names the null or repeated id; passes a mere collision of hashes
        if not summary.joined:  # joined against nothing, the corpus finds nothing: an error, as locally
            raise EmptyCorpusError.no_sets(summary.documents, min_shingles, None if label == "tokens" else label)
    except InputError:
        kept.unpersist()
        raise
    return summary


def jaccard_bound(measure: str, t: Threshold) -> Threshold:
    """A Jaccard threshold that every pair with ``measure >= t`` meets (denominator at most 10**9).

    Dice is a function of Jaccard (``D = 2J / (1 + J)``): ``D >= t`` exactly when
    ``J >= t / (2 - t)``. Cosine is not, but ``cos >= t`` implies ``J >= t²``
    (for fixed overlap o and ``|A|·|B| <= o²/t²``, the union ``|A| + |B| - o`` is
    largest, ``o/t²``, when one set is the overlap itself). A bound with too
    large a denominator is rounded down; each pair is then tested on the measure itself.
    """
    f = t.fraction
    bound = f if measure == "jaccard" else f / (2 - f) if measure == "dice" else f * f
    if bound.denominator > MAX_DENOMINATOR:
        bound = Fraction(max(1, math.floor(bound * MAX_DENOMINATOR)), MAX_DENOMINATOR)
    return Threshold(bound.numerator, bound.denominator)


def _accept_batches(batches, measure: str, t: Threshold):
    """mapInArrow body: the set pairs that meet ``measure >= t``, decided on integers by the measure's own test."""
    m = get_measure(measure)
    for batch in batches:
        o, a, b = (batch.column(k).to_pylist() for k in ("overlap", "size_a", "size_b"))
        keep = [m.accept(t, *row) for row in zip(o, a, b)]
        yield batch.filter(keep)


def plan(df, threshold, *, id_col: str = "id", text_col: str | None = None, tokens_col: str | None = None,
         order_col: str | None = None, language_col: str | None = None, shingle: ShingleSpec | str | None = None,
         normalize: bool = True, min_shingles: int = 1, method: str = "exact", max_group: int = exact.MAX_GROUP,
         broadcast_limit: int = sets.BROADCAST_LIMIT, token_groups: int | None = None, num_perm: int = 128,
         bands: int | None = None, rows: int | None = None, recall: float = 0.99, seed: int = 1, bits: int | None = None,
         max_bucket: int | None = None, max_expand: int | None = lsh.MAX_EXPAND_SHUFFLED, measure: str = "jaccard",
         one_task: bool | None = None, check: bool = True, members_read: bool = False) -> SparkJoin:
    """Plan the join of :func:`join` and keep its intermediate results (see :class:`SparkJoin`).

    Everything given is checked before any job. Then one job shingles the
    rows, groups identical sets (kept in Spark's cache), counts the shared
    shingles and, with ``check``, refuses null and repeated ids
    (:func:`sets.summarize`). Few distinct sets (:func:`.one_task.fits`, from
    that pass's counts) are then joined in one task (``one_task`` None; True
    or False forces either plan); more are ranked on the driver and routed
    to token groups, and one more job sizes the groups of hot tokens, if any.
    An input known to be small before any job (:func:`.one_task.expected`, or
    ``one_task`` True) is neither grouped nor counted by that job: it reads the
    documents' sizes on the driver, and the one task groups the identical sets
    (:func:`.one_task.grouping_document_pairs`). Until that task has run,
    ``summary.distinct`` of such a plan is an upper bound (each joined
    document counted as a set of its own); computing the pairs settles it
    (:meth:`sets.Summary.settle`). A distributed exact join does not group
    identical sets before the route (:mod:`.copies`) unless ``members_read``
    (dedup, clusters: they read the grouped frames).
    """
    require_pyspark()
    if method not in METHODS:
        raise UsageError(f"unknown method {method!r}; choose exact or lsh")
    t = parse_threshold(threshold, measure) if measure in SELF_RS else Threshold.parse(threshold)
    if measure not in JACCARD_ROUTED + SELF_RS:
        get_measure(measure)  # an unknown name: the local engine's message
        raise UsageError(f"measure {measure!r} is not available on Spark; choose one of {', '.join(JACCARD_ROUTED + SELF_RS)} "
                         "(or join with allpairs.join)")
    if measure != "jaccard" and method != "exact":
        raise UsageError(f"measure {measure!r} goes with method 'exact'; LSH estimates Jaccard similarity")
    if isinstance(min_shingles, bool) or not isinstance(min_shingles, int) or min_shingles < 0:
        raise UsageError(f"min_shingles must be a whole number >= 0, got {min_shingles!r}")
    if isinstance(max_group, bool) or not isinstance(max_group, int) or max_group < 2:
        raise UsageError(f"max_group must be a whole number >= 2, got {max_group!r}")
    if token_groups is not None and (isinstance(token_groups, bool) or not isinstance(token_groups, int)
                                     or not 1 <= token_groups <= 2**30):
        raise UsageError(f"token_groups must be a whole number from 1 to 2**30, got {token_groups!r}")
    if one_task not in (None, True, False):
        raise UsageError(f"one_task must be None (chosen from the input's size), True or False, got {one_task!r}")
    check_schema(df, id_col, text_col, tokens_col, order_col, language_col)
    info = None
    if method == "lsh":
        info = lsh_settings(t, num_perm=num_perm, bands=bands, rows=rows, recall=recall, seed=seed, bits=bits,
                            max_bucket=max_bucket, max_expand=max_expand)
    spec = given_spec(shingle, tokens_col, normalize)  # None: chosen from the texts below
    # The workers must import pyarrow and allpairs: checked here, before the first job.
    check_workers(df.sparkSession)
    if spec is None and text_col is not None:
        spec = choose_shingle([(df, text_col, order_col)]).spec  # the local engine's rule, on the same texts
    docs = sets.docs_frame(df, id_col=id_col, text_col=text_col, tokens_col=tokens_col, order_col=order_col,
                           language_col=language_col, spec=spec, normalize=normalize)
    label = "tokens" if spec is None else str(spec)
    # The shingles are counted on the way unless the input is known to be small before any job (then the
    # one task orders the sets itself: :mod:`.one_task`).
    small_before = small.expected(df) if one_task is None else one_task
    if small_before and info is None and measure not in SELF_RS and small.orders_alike(docs.schema["okey"].dataType):
        # Nor are identical sets grouped by a shuffle of the key arrays: the one task groups them. The planning
        # job reads the documents' sizes (and ids' hashes) on the driver, each joined document counted as a
        # set of its own (the distinct sets and their shingles, at most).
        kept = docs.localCheckpoint(eager=False)
        summary = _checked(sets.document_summary(kept, ids=check, min_size=min_shingles), df, id_col, kept, label,
                           min_shingles)
        if one_task or small.fits(summary.distinct, summary.shingles):
            bound = jaccard_bound(measure, t)
            pairs, summary.late = small.grouping_document_pairs(kept, min_shingles, bound, measure,
                                                                t if bound != t or measure != "jaccard" else None)
            # Only what reads the members (dedup, clusters) groups the sets in Spark.
            return SparkJoin(pairs, None, None, None, t, method, label, summary=summary, one_task=True, kept=kept,
                             min_shingles=min_shingles)
        # Past the one task's bounds: identical sets grouped in Spark and the shingles counted by a second pass.
        grouped = sets.group_identical(kept, min_shingles).localCheckpoint(eager=False)
        summary = sets.summarize(grouped, ids=False, shingles=True)
    elif info is None and measure in JACCARD_ROUTED and not members_read:
        # No identical sets grouped before the route (:mod:`.copies`): the documents kept, each shingle's
        # documents counted, and the copies grouped where they meet, in the token groups' tasks.
        kept = docs.localCheckpoint(eager=False)
        summary = _checked(sets.summarize(copies.with_set(kept, min_shingles), ids=check, shingles=True),
                           df, id_col, kept, label, min_shingles)
        bound = jaccard_bound(measure, t)
        accept = t if bound != t or measure != "jaccard" else None
        fits = small.fits(summary.distinct, summary.shingles) if one_task is None else one_task
        if fits and small.orders_alike(docs.schema["okey"].dataType):
            pairs, summary.late = small.grouping_document_pairs(kept, min_shingles, bound, measure, accept)
            return SparkJoin(pairs, None, None, None, t, method, label, summary=summary, one_task=True, kept=kept,
                             min_shingles=min_shingles)
        planned = None if fits else _copies_join(kept, summary, t, method, label, measure, min_shingles,
                                                 max_group, broadcast_limit, token_groups)
        if planned is not None:
            return planned
        # A hot token split (its chunks by set id would part copies), or one task for an order it cannot
        # compare: identical sets grouped and counted as below, in the order counted (any order is exact).
        grouped = sets.group_identical(kept, min_shingles).localCheckpoint(eager=False)
        shared = summary.shared
        summary = sets.summarize(grouped, ids=False, shingles=False, on_driver=True)
        summary.shared = shared
    else:
        # Kept (memory, then disk) and cut from its lineage, so that the plans of the pairs (the sets joined
        # with their members, twice) stay small for Spark's analyser; lazily: the one planning job below
        # computes it on its way to checking the ids and counting the shingles (no job of its own).
        grouped = sets.group_identical(docs, min_shingles).localCheckpoint(eager=False)
        counted = info is None and not small_before
        summary = _checked(sets.summarize(grouped, ids=check, shingles=counted, on_driver=small_before and not counted),
                           df, id_col, grouped, label, min_shingles)
    members, distinct = sets.members_and_distinct(grouped)
    if measure in SELF_RS:
        # Containment is asymmetric, and overlap has no Jaccard bound: the frame joined with itself as an
        # R–S join (every candidate's overlap counted exactly), a pair kept once (containment: each way).
        from pyspark.sql import functions as F

        from .against import self_pairs

        # Only the documents the join takes (at least min_shingles shingles: a set id), as locally.
        found, _ = self_pairs(grouped.where(F.col("set").isNotNull()), t, get_measure(measure))
        return SparkJoin(found, members, distinct, grouped, t, method, label, summary=summary)
    if info is None and (small.fits(summary.distinct, summary.shingles) if one_task is None else one_task):
        # Few sets: one task joins them all (no ranks broadcast, no routing); the same pairs. It also makes
        # the document pairs where it orders the documents as Spark does (no join with the members).
        bound = jaccard_bound(measure, t)
        accept = t if bound != t or measure != "jaccard" else None
        if small.orders_alike(grouped.schema["okey"].dataType):
            pairs = small.document_pairs(grouped, bound, measure, accept)
        else:
            found = small.set_pairs(distinct, bound)
            if accept is not None:
                found = found.mapInArrow(lambda b: _accept_batches(b, measure, t), found.schema)
            pairs = document_pairs(found, members, measure)
        return SparkJoin(pairs, members, distinct, grouped, t, method, label, summary=summary, one_task=True)
    if info is None:
        if summary.shared is None:  # expected small, but its totals do not fit: the shingles counted now
            summary.shared = sets.summarize(grouped, ids=False, shingles=True).shared
        pairs, routed = _routed_pairs(distinct, members, summary, t, measure, max_group, broadcast_limit,
                                      token_groups)
        return SparkJoin(pairs, members, distinct, grouped, t, method, label, summary=summary, **routed)
    bucket_rows = lsh.buckets(distinct, num_perm=info.num_perm, bands=info.bands, rows=info.rows, seed=info.seed,
                              bits=info.bits, max_bucket=info.max_bucket, max_expand=info.max_expand,
                              report=LARGE_BUCKET)
    cand, found = lsh.set_pairs(distinct, bucket_rows, t)
    return SparkJoin(document_pairs(found, members), members, distinct, grouped, t, method, label,
                     buckets=bucket_rows, candidates=cand, lsh=info, summary=summary)


def _routed_pairs(distinct, members, summary: sets.Summary, t: Threshold, measure: str, max_group: int,
                  broadcast_limit: int, token_groups: int | None, routed_documents: bool = False):
    """The document pairs of the distributed exact join: ``distinct`` (set, size, keys) ranked on the driver,
    the hot tokens' groups planned, the sets routed to token groups and joined there, the pairs accepted at
    ``t`` where the join ran at a looser Jaccard bound, then paired with their ``members``; and the plan's
    parts (:class:`SparkJoin`'s ``ranked``, ``order``, ``plans``, ``groups``).

    ``routed_documents``: ``distinct`` holds documents, not grouped (:mod:`.copies`): each a set of its own, copies
    are grouped in the join's tasks (``summary.late`` then settles the distinct sets), and None is returned
    where a hot token's group is split (its chunks by set id would part copies)."""
    bound = jaccard_bound(measure, t)
    ranked, order = sets.rank_sets(distinct, hot_limit=max_group, broadcast_limit=broadcast_limit,
                                   shared=summary.shared)
    plans = exact.plan_hot_groups(ranked, bound, order.hot, max_group)
    if plans and routed_documents:
        return None
    spark = distinct.sparkSession
    groups = token_groups or exact.token_groups(spark.sparkContext.defaultParallelism, summary.distinct,
                                                summary.shared_ranks, summary.shingles, bound)
    merged = None
    if routed_documents:
        summary.late = copies.Merged(spark.sparkContext, summary.distinct, summary.shingles)
        merged = summary.late.accumulator
    found = exact.set_pairs(ranked, bound, plans, groups, merged)
    if bound != t or measure != "jaccard":
        found = found.mapInArrow(lambda b: _accept_batches(b, measure, t), found.schema)
    pairs = document_pairs(found, members, measure, broadcast=summary.joined <= MEMBERS_BROADCAST,
                           identical=not routed_documents)
    return pairs, {"ranked": ranked, "order": order, "plans": plans, "groups": groups}


def _copies_join(kept, summary: sets.Summary, t: Threshold, method: str, label: str, measure: str,
                 min_shingles: int, max_group: int, broadcast_limit: int, token_groups: int | None) -> SparkJoin | None:
    """The distributed exact join of the documents ``kept`` (not grouped: :mod:`.copies`), each joined document
    ranked and routed as a set of its own (set id = ord); the summary's distinct sets settled by the join.
    None where a hot token's group is split (:func:`.exact.plan_hot_groups`)."""
    from pyspark.sql import functions as F

    joined = kept.where(F.col("size") >= max(1, min_shingles))
    members = joined.select(F.col("ord").alias("set"), "ord", "id", "okey", "size")
    got = _routed_pairs(joined.select(F.col("ord").alias("set"), "size", "keys"), members, summary, t, measure,
                        max_group, broadcast_limit, token_groups, routed_documents=True)
    if got is None:
        return None
    pairs, routed = got
    return SparkJoin(pairs, None, None, None, t, method, label, summary=summary, kept=kept,
                     min_shingles=min_shingles, **routed)


#: What :func:`join` passes on to :func:`plan` besides its own parameters.
PLAN_OPTIONS = tuple(name for name in inspect.signature(plan).parameters
                     if name not in ("df", "threshold", "id_col", "text_col", "tokens_col", "shingle", "method",
                                     "measure", "check", "members_read"))


def join(df, threshold, *, id_col: str = "id", text_col: str | None = None, tokens_col: str | None = None,
         shingle: ShingleSpec | str | None = None, method: str = "exact", measure: str = "jaccard",
         against=None, keep=(), cache: bool = True, **options):
    """Every pair of rows of ``df`` whose shingle sets have similarity >= threshold (Jaccard unless ``measure``
    says), on Spark.

    The same answer as :func:`allpairs.join` on the same documents: the exact
    join finds every pair (the prefix-filter join of Vernica, Carey, Li, SIGMOD
    2010, over the local engine's kernels); ``method="lsh"`` finds the pairs
    among the candidates of MinHash banding (with the same seed and banding,
    the local engine's candidates) and verifies them exactly.

    What it runs: the columns, their types and the Python workers' interpreter
    (``PYSPARK_PYTHON``, ``spark.pyspark.python``: it must import pyarrow and
    allpairs) are checked before any job. Then, as fitting a model does, it runs
    the job that plans the join: one pass that shingles the rows, groups
    identical sets (kept in Spark's cache), counts the shared shingles and
    refuses null and repeated ids (plus one histogram where a token is in more
    than ``max_group`` sets, and two small jobs choosing the shingle when none
    is given; AQE may show a job as several). The pairs themselves are computed by the first
    action on the result, which is persisted (``cache``, memory then disk), so
    that ``count()`` then ``write`` do not join twice; ``unpersist()`` frees it.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        One row per document.
    threshold : float, str or Fraction in (0, 1]
        Read exactly (0.7 is 7/10); pairs with similarity >= threshold are returned.
    id_col : str
        The documents' ids: strings or integers, none null, none repeated; the
        pairs keep their type.
    text_col, tokens_col : str
        At most one: a string column of texts to shingle (default ``"text"``), or
        an array column of tokens (strings or integers) joined as they are.
    shingle : "word:N", "char:N", "code:N", optional
        For texts; by default the one the local engine chooses for the same
        texts (:func:`allpairs.shingles.shingle_for_texts`, from the median
        text's length: ``char:3``, ``word:1`` or ``word:5``).
    method : "exact" or "lsh"
    measure : "jaccard", "cosine" or "dice"; with ``against`` also "containment" or "overlap"
        As in :func:`allpairs.join` (exact method only): a Jaccard join at
        ``t/(2-t)`` for Dice (the same pairs) or ``t²`` for cosine (a superset),
        each pair then tested on the measure itself, on integers.
    against : pyspark.sql.DataFrame, optional
        An R–S join (:mod:`allpairs.engines.spark.against`): only pairs (a, b)
        with a from ``df`` and b from ``against`` (the same column names; for
        containment, a is the contained one: benchmark items against training
        documents). Its ids must have the type of ``df``'s; ``options`` then
        take ``order_col``, ``language_col``, ``normalize``, ``min_shingles``.
    keep : list of str
        Columns of ``df`` (and of ``against``) carried beside each pair as
        ``left_NAME``, ``right_NAME``, with their types, as ``--keep-col`` on
        the command line: the pairs joined back with the rows by id.
    cache : bool
        Persist the pairs (see above).
    **options
        ``order_col`` (the input order, for which document of a pair is left;
        default the row order Spark reads; a null sorts first), ``language_col`` (program language
        per row, for code:N), ``normalize``, ``min_shingles``, ``max_group``
        (prefix-token groups of more sets are split by size, default 10,000),
        ``token_groups`` (ordinary prefix tokens are dealt into this many
        groups, a task each, so a set is copied at most that many times;
        default the fewest, a multiple of ``defaultParallelism``, whose tasks
        are each estimated to hold about 2**27 routed ranks or fewer:
        :func:`allpairs.engines.spark.exact.token_groups`),
        ``broadcast_limit`` (shared shingles ranked on the driver and broadcast
        up to this many, default 4 M; more are joined), ``one_task`` (None:
        at most 2**16 distinct sets of 2**25 shingles are joined in one task,
        :mod:`allpairs.engines.spark.one_task`; True or False forces either
        plan, the same rows), and for LSH
        ``num_perm``, ``bands``, ``rows``, ``recall``, ``seed``, ``bits``,
        ``max_bucket``, ``max_expand``, as in :func:`allpairs.join` (a bucket
        of more than ``max_expand`` sets is joined exactly in one task instead
        of expanded pair by pair: the same pairs; default
        :data:`allpairs.engines.spark.lsh.MAX_EXPAND_SHUFFLED`, 4, lower than the local
        engine's 64 since each expanded pair is shuffled with both sets).
        Any other keyword is a ``TypeError``.

    Returns
    -------
    pyspark.sql.DataFrame
        Columns left, right (ids; left first in the input order), similarity
        (double), overlap, left_size, right_size (ints: the exact similarity is
        overlap / (left_size + right_size - overlap) for Jaccard), then the
        ``keep`` columns. Unordered; not yet computed.

    Raises
    ------
    TypeError
        An unknown keyword.
    UsageError, InputError
        A missing column or one of the wrong type, a bad option; null or repeated ids.
    SparkSetupError
        The Python workers cannot import pyarrow or allpairs.
    """
    unknown = sorted(set(options) - set(PLAN_OPTIONS))
    if unknown:
        raise TypeError(f"allpairs.spark.join() got an unexpected keyword argument {unknown[0]!r}; "
                        f"it takes id_col, text_col, tokens_col, shingle, method, measure, against, keep, cache, "
                        f"{', '.join(PLAN_OPTIONS)}")
    if text_col is None and tokens_col is None:
        text_col = "text"
    keep = list(dict.fromkeys([keep] if isinstance(keep, str) else keep))  # each once, as locally
    if keep:  # a missing column: refused before any job
        left = frame_columns(df, id_col, keep)
        right = None if against is None else frame_columns(against, id_col, keep, "against's ")
    if against is not None:
        from .against import join_against

        pairs = join_against(df, against, threshold, measure=measure, id_col=id_col, text_col=text_col,
                             tokens_col=tokens_col, shingle=shingle, method=method, **options)
    else:
        pairs = plan(df, threshold, id_col=id_col, text_col=text_col, tokens_col=tokens_col, shingle=shingle,
                     method=method, measure=measure, **options).pairs.select(*COLUMNS)
    cols: list = []
    if keep:
        pairs, cols = with_carried(pairs, left, keep, right)
    return returned(pairs.select(*COLUMNS, *cols), cache)


__all__ = ["COLUMNS", "ORDER", "SparkJoin", "join", "plan"]
