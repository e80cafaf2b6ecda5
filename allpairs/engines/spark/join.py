"""Orchestration of the Spark engine: input DataFrame → sets → exact or LSH set pairs → document pairs.

:func:`plan` wires the stages and keeps what a report needs (the token order,
the hot-group splits, the LSH buckets); :func:`join` is the public entry
(``allpairs.spark.join``) and returns only the pairs, lazily. Computing the
token order is an action (as fitting a model is); the pairs are computed when
the returned DataFrame is.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import UsageError
from ...join import LSHInfo, lsh_settings
from ...measures import Threshold
from ...shingles import ShingleSpec
from . import exact, lsh, sets
from .pairs import COLUMNS, ORDER, document_pairs
from .session import require_pyspark

METHODS = ("exact", "lsh")
#: Without max_bucket, buckets larger than this are reported (the local engine's warning size).
LARGE_BUCKET = 1000


@dataclass
class SparkJoin:
    """A planned Spark join: the pairs (with the hidden order columns) and what the plan found on the way."""

    pairs: object
    members: object
    distinct: object
    grouped: object
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

    def unpersist(self) -> None:
        """Free the grouped sets this join keeps in Spark's cache (a local checkpoint: Spark's cleaner
        drops its blocks once nothing refers to it)."""
        self.grouped.unpersist()


def _check_columns(df, id_col, text_col, tokens_col, order_col, language_col):
    if (text_col is None) == (tokens_col is None):
        raise UsageError("give exactly one of text_col (texts to shingle) and tokens_col (sets of tokens)")
    for what, name in (("id_col", id_col), ("text_col", text_col), ("tokens_col", tokens_col),
                       ("order_col", order_col), ("language_col", language_col)):
        if name is not None and name not in df.columns:
            raise UsageError(f"{what} {name!r} is not a column of the DataFrame; its columns are "
                             f"{', '.join(df.columns)}")


def plan(df, threshold, *, id_col: str = "id", text_col: str | None = None, tokens_col: str | None = None,
         order_col: str | None = None, language_col: str | None = None, shingle: ShingleSpec | str | None = None,
         normalize: bool = True, min_shingles: int = 1, method: str = "exact", max_group: int = exact.MAX_GROUP,
         broadcast_limit: int = sets.BROADCAST_LIMIT, token_groups: int | None = None, num_perm: int = 128,
         bands: int | None = None, rows: int | None = None, recall: float = 0.99, seed: int = 1, bits: int | None = None,
         max_bucket: int | None = None, max_expand: int | None = lsh.MAX_EXPAND) -> SparkJoin:
    """Plan the join of :func:`join` and keep its intermediate results (see :class:`SparkJoin`)."""
    require_pyspark()
    t = Threshold.parse(threshold)
    if method not in METHODS:
        raise UsageError(f"unknown method {method!r}; choose exact or lsh")
    if isinstance(min_shingles, bool) or not isinstance(min_shingles, int) or min_shingles < 0:
        raise UsageError(f"min_shingles must be a whole number >= 0, got {min_shingles!r}")
    if isinstance(max_group, bool) or not isinstance(max_group, int) or max_group < 2:
        raise UsageError(f"max_group must be a whole number >= 2, got {max_group!r}")
    if token_groups is not None and (isinstance(token_groups, bool) or not isinstance(token_groups, int)
                                     or not 1 <= token_groups <= 2**30):
        raise UsageError(f"token_groups must be a whole number from 1 to 2**30, got {token_groups!r}")
    _check_columns(df, id_col, text_col, tokens_col, order_col, language_col)
    info = None
    if method == "lsh":
        info = lsh_settings(t, num_perm=num_perm, bands=bands, rows=rows, recall=recall, seed=seed, bits=bits,
                            max_bucket=max_bucket, max_expand=max_expand)
    if tokens_col is not None:
        if shingle is not None:
            raise UsageError("pre-tokenised sets are joined on their tokens; drop shingle")
        spec = None
    else:
        spec = ShingleSpec.parse(shingle) if isinstance(shingle, str) else (shingle or ShingleSpec("word", 5))
    docs = sets.docs_frame(df, id_col=id_col, text_col=text_col, tokens_col=tokens_col, order_col=order_col,
                           language_col=language_col, spec=spec, normalize=normalize)
    # Kept (memory, then disk) and cut from its lineage: every later stage reads it, and the plans
    # of the pairs (the sets joined with their members, twice) stay small for Spark's analyser.
    grouped = sets.group_identical(docs, min_shingles).localCheckpoint(eager=True)
    members, distinct = sets.members_and_distinct(grouped)
    label = "tokens" if spec is None else str(spec)
    if info is None:
        ranked, order = sets.rank_sets(distinct, hot_limit=max_group, broadcast_limit=broadcast_limit)
        plans = exact.plan_hot_groups(ranked, t, order.hot, max_group)
        groups = token_groups or exact.token_groups(df.sparkSession)
        found = exact.set_pairs(ranked, t, plans, groups)
        return SparkJoin(document_pairs(found, members), members, distinct, grouped, t, method, label,
                         ranked=ranked, order=order, plans=plans, groups=groups)
    bucket_rows = lsh.buckets(distinct, num_perm=info.num_perm, bands=info.bands, rows=info.rows, seed=info.seed,
                              bits=info.bits, max_bucket=info.max_bucket, max_expand=info.max_expand,
                              report=LARGE_BUCKET)
    cand, found = lsh.set_pairs(distinct, bucket_rows, t)
    return SparkJoin(document_pairs(found, members), members, distinct, grouped, t, method, label,
                     buckets=bucket_rows, candidates=cand, lsh=info)


def join(df, threshold, *, id_col: str = "id", text_col: str | None = None, tokens_col: str | None = None,
         shingle: ShingleSpec | str | None = None, method: str = "exact", **options):
    """Every pair of rows of ``df`` whose shingle sets have Jaccard similarity >= threshold, on Spark.

    The same answer as :func:`allpairs.join` on the same documents: the exact
    join finds every pair (the prefix-filter join of Vernica, Carey, Li, SIGMOD
    2010, over the local engine's kernels); ``method="lsh"`` finds the pairs
    among the candidates of MinHash banding (with the same seed and banding,
    the local engine's candidates) and verifies them exactly.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        One row per document.
    threshold : float, str or Fraction in (0, 1]
        Read exactly (0.7 is 7/10); pairs with J >= threshold are returned.
    id_col : str
        The documents' ids (cast to string).
    text_col, tokens_col : str
        Exactly one: a string column of texts to shingle, or an array column
        of tokens (strings or integers) joined as they are.
    shingle : "word:N", "char:N", "code:N", optional
        For texts; default ``word:5``.
    method : "exact" or "lsh"
    **options
        ``order_col`` (the input order, for which document of a pair is left;
        default the row order Spark reads), ``language_col`` (program language
        per row, for code:N), ``normalize``, ``min_shingles``, ``max_group``
        (prefix-token groups of more sets are split by size, default 10,000),
        ``token_groups`` (ordinary prefix tokens are dealt into this many
        groups, a task each, so a set is copied at most that many times;
        default four per task slot, ``4 * defaultParallelism``),
        ``broadcast_limit`` (shared shingles ranked on the driver and broadcast
        up to this many, default 4 M; more are joined), and for LSH
        ``num_perm``, ``bands``, ``rows``, ``recall``, ``seed``, ``bits``,
        ``max_bucket``, ``max_expand``, as in :func:`allpairs.join` (a bucket
        of more than ``max_expand`` sets is joined exactly in one task instead
        of expanded pair by pair: the same pairs; default
        :data:`allpairs.engines.spark.lsh.MAX_EXPAND`, 4, lower than the local
        engine's 64 since each expanded pair is shuffled with both sets).

    Returns
    -------
    pyspark.sql.DataFrame
        Columns left, right (ids; left first in the input order), similarity
        (double), overlap, left_size, right_size (ints: the exact similarity is
        overlap / (left_size + right_size - overlap)). Unordered; not yet computed.
    """
    planned = plan(df, threshold, id_col=id_col, text_col=text_col, tokens_col=tokens_col, shingle=shingle,
                   method=method, **options)
    return planned.pairs.select(*COLUMNS)


__all__ = ["COLUMNS", "ORDER", "SparkJoin", "join", "plan"]
