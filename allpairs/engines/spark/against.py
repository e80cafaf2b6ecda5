"""R–S joins on Spark (``against=``): every pair (a, b), a from one frame and b from the other, with
similarity >= t; for containment, the share of a found in b (decontamination: benchmark items a
contained in training documents b).

Prefix filtering with only one side filtered (Mann, Augsten, Bouros, PVLDB 2016,
and the containment row of :mod:`allpairs.measures`): a pair needs at least
α of a's tokens in b, with α at least the measure's least overlap for a set of
a's size (``⌈t·|a|⌉`` for containment and Jaccard, ``k`` for overlap), so it
shares one of a's first ``|a| - α + 1`` tokens in any order both sides share.
The order here ranks a's tokens by how many b's hold them (rare first), so
that a's prefix meets few documents.

The routing. The documents b are never copied whole per token (a long
document would be sent once for each of its thousands of tokens): they are
exploded once into (document, token) rows. A candidate is a (a, b) with a
token of a's prefix among b's tokens (a join on the token); its overlap is
counted exactly by joining the candidate's a-tokens with b's (document, token)
rows, and each pair is then tested on the measure itself, on integers.
"""
from __future__ import annotations

from ...errors import UsageError
from ...measures import JOIN_MEASURES, get_measure, parse_threshold
from . import sets
from .pairs import COLUMNS, returned, similarity

def _sets(df, *, id_col, text_col, tokens_col, order_col, language_col, spec, normalize, min_shingles):
    from pyspark.sql import functions as F

    docs = sets.docs_frame(df, id_col=id_col, text_col=text_col, tokens_col=tokens_col, order_col=order_col,
                           language_col=language_col, spec=spec, normalize=normalize)
    return docs.where(F.col("size") >= max(1, min_shingles))


def check_against(df, other, id_col: str, other_id_col: str) -> None:
    """Refuse, before any job, ids of different kinds on the two sides, strings and integers (one line naming
    both columns)."""
    from pyspark.sql import types as T

    a, b = df.schema[id_col].dataType, other.schema[other_id_col].dataType
    if a != b and not (isinstance(a, T.IntegralType) and isinstance(b, T.IntegralType)):  # int and long: alike
        raise UsageError(f"id_col {id_col!r} holds {a.simpleString()} but against's {other_id_col!r} holds "
                         f"{b.simpleString()}; cast one (F.col(...).cast('string')) so the pairs' ids have one type")


def plan_against(df, other, threshold, *, measure: str, id_col: str, text_col, tokens_col, spec, order_col=None,
                 language_col=None, normalize: bool = True, min_shingles: int = 1, other_id_col: str | None = None,
                 other_order_col: str | None = None):
    """The R–S pairs of ``df`` (left) against ``other`` (right): COLUMNS and the order columns, unordered.

    Both frames have the same columns for the text or tokens (``text_col`` or
    ``tokens_col``; ``language_col`` on both or neither); ``other_id_col``
    defaults to ``id_col``.
    """
    row = get_measure(measure)
    if row.name not in JOIN_MEASURES:
        raise UsageError(f"measure {measure!r} is not available on Spark; choose one of {', '.join(JOIN_MEASURES)}")
    t = parse_threshold(threshold, row)
    other_id_col = other_id_col or id_col
    from .join import check_schema

    check_schema(df, id_col, text_col, tokens_col, order_col, language_col)
    check_schema(other, other_id_col, text_col, tokens_col, other_order_col, language_col, "against's ")
    check_against(df, other, id_col, other_id_col)
    common = dict(text_col=text_col, tokens_col=tokens_col, language_col=language_col, spec=spec,
                  normalize=normalize, min_shingles=min_shingles)
    left = _sets(df, id_col=id_col, order_col=order_col, **common)
    right = _sets(other, id_col=other_id_col, order_col=other_order_col, **common)
    pairs, right_tokens = rs_pairs(left, right, t, row)
    return pairs, right_tokens, t


def rs_pairs(left, right, t, row):
    """(pairs, right_tokens): the pairs (a, b), a from the sets ``left`` and b from ``right`` (each a frame
    of ord, id, okey, size, keys, sizes at least 1), that reach ``t`` under the measure ``row``: COLUMNS
    and the order columns, unordered; and the right side's (rid, key) rows, kept as a local checkpoint."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    spark = left.sparkSession
    right_tokens = right.select(F.col("ord").alias("rid"), F.explode("keys").alias("key")).localCheckpoint(eager=True)
    left_tokens = left.select(F.col("ord").alias("lid"), "size", F.explode("keys").alias("key"))
    # How many documents hold each of the left side's tokens: the order of its prefixes (rare first).
    freq = right_tokens.join(left_tokens.select("key").distinct(), "key", "left_semi").groupBy("key") \
        .agg(F.count(F.lit(1)).alias("df"))
    sizes = [r["size"] for r in left.select("size").distinct().collect()]
    prefix = spark.createDataFrame([(s, row.probe_prefix(t, s, "left")) for s in sizes] or [(0, 0)],
                                   "size int, plen int")
    ranked = left_tokens.join(freq, "key", "left").fillna(0, ["df"]).join(F.broadcast(prefix), "size") \
        .withColumn("pos", F.row_number().over(Window.partitionBy("lid").orderBy("df", "key")))
    probes = ranked.where(F.col("pos") <= F.col("plen")).select("lid", "key")
    candidates = probes.join(right_tokens, "key").select("lid", "rid").distinct()
    overlap = candidates.join(left_tokens.select("lid", "key"), "lid").join(right_tokens, ["rid", "key"]) \
        .groupBy("lid", "rid").agg(F.count(F.lit(1)).cast("int").alias("overlap"))

    def side(frame, key, name):
        return frame.select(F.col("ord").alias(key), F.col("id").alias(name), F.col("size").alias(f"{name}_size"),
                            F.col("okey").alias(f"{name}_key"), F.col("ord").alias(f"{name}_ord"))

    both = overlap.join(side(left, "lid", "left"), "lid").join(side(right, "rid", "right"), "rid") \
        .select("*", F.col("left_size").alias("size_a"), F.col("right_size").alias("size_b"))
    from .join import _accept_batches

    accepted = both.mapInArrow(lambda b: _accept_batches(b, row.name, t), both.schema)
    if row.name == "containment":
        sim = F.col("overlap") / F.col("size_a")
    elif row.name == "overlap":
        sim = F.col("overlap").cast("double")
    else:
        sim = similarity(row.name)
    return accepted.select("left", "right", sim.cast("double").alias("similarity"), "overlap",
                           "left_size", "right_size", "left_key", "left_ord", "right_key", "right_ord"), right_tokens


def self_pairs(sets, t, row):
    """The pairs of one frame of sets with itself under an R–S measure (containment, overlap): for
    containment every ordered pair of two documents (a, b) with a's share in b at least ``t`` (identical
    sets both ways), as locally; for the others each pair once, left first in the input order."""
    from pyspark.sql import functions as F

    pairs, right_tokens = rs_pairs(sets, sets, t, row)
    if row.name == "containment":
        return pairs.where(F.col("left_ord") != F.col("right_ord")), right_tokens
    first = (F.col("left_key") < F.col("right_key")) | (
        (F.col("left_key") == F.col("right_key")) & (F.col("left_ord") < F.col("right_ord")))
    return pairs.where(first), right_tokens


#: The options of :func:`allpairs.spark.join` an R–S join takes.
AGAINST_OPTIONS = ("order_col", "language_col", "normalize", "min_shingles")


def join_against(df, other, threshold, *, measure: str = "jaccard", id_col: str = "id",
                 text_col: str | None = None, tokens_col: str | None = None, shingle=None, method: str = "exact",
                 cache: bool = True, **options):
    """:func:`allpairs.spark.join` with ``against=other``: COLUMNS, left from ``df``, right from ``other``."""
    from .join import check_ids, check_schema
    from .session import check_workers
    from .shingle import choose_shingle, given_spec

    if method != "exact":
        raise UsageError("an R–S join (against=) is exact only; drop method='lsh'")
    extra = sorted(set(options) - set(AGAINST_OPTIONS))
    if extra:
        raise UsageError(f"{extra[0]} does not apply to an R–S join (against=); it takes "
                         f"{', '.join(AGAINST_OPTIONS)}")
    spec = given_spec(shingle, tokens_col)  # None: chosen from the texts below
    order_col = options.get("order_col")
    get_measure(measure)  # an unknown measure: one line before any job
    check_schema(df, id_col, text_col, tokens_col, order_col, options.get("language_col"))
    check_schema(other, id_col, text_col, tokens_col, order_col, options.get("language_col"), "against's ")
    check_against(df, other, id_col, id_col)
    check_workers(df.sparkSession)
    check_ids(df, id_col)
    check_ids(other, id_col, "against's ")
    if spec is None and text_col is not None:
        # Both sides shingled alike, chosen as locally from the texts of both (left first).
        spec = choose_shingle([(df, text_col, order_col), (other, text_col, order_col)]).spec
    pairs, _, _ = plan_against(df, other, threshold, measure=measure, id_col=id_col, text_col=text_col,
                               tokens_col=tokens_col, spec=spec, other_order_col=order_col, **options)
    return returned(pairs.select(*COLUMNS), cache)


__all__ = ["check_against", "join_against", "plan_against", "rs_pairs", "self_pairs"]
