"""The default shingle on Spark: the local engine's rule, on the same texts.

:func:`allpairs.shingles.shingle_for_texts` chooses from the median length of
up to ``LENGTH_SAMPLE`` texts evenly spaced through the corpus. Here the same
texts (by position in the input order) are fetched from the DataFrame, their
first ``LENGTH_PREFIX`` characters only, and handed to that function: the
rule is the local engine's own, not restated.
"""
from __future__ import annotations

import numpy as np

from ...errors import UsageError
from ...shingles import ShingleSpec
from ...shingles.keys import LENGTH_PREFIX, LENGTH_SAMPLE, SETS_NOT_NORMALIZED, ShingleChoice, shingle_for_texts
from .pairs import order_key
from .session import quoted


def given_spec(shingle, tokens_col: str | None, normalize: bool = True) -> ShingleSpec | None:
    """The shingle given (parsed), or None: none given for texts (choose it with :func:`choose_shingle`)
    or sets of tokens (joined as they are; a shingle or ``normalize=False`` with them is a usage error)."""
    if tokens_col is not None:
        if shingle is not None:
            raise UsageError("pre-tokenised sets are joined on their tokens; drop shingle")
        if not normalize:
            raise UsageError(SETS_NOT_NORMALIZED, param="normalize")
        return None
    return ShingleSpec.parse(shingle) if isinstance(shingle, str) else shingle


def sample_positions(n: int) -> list[int]:
    """The positions :func:`shingle_for_texts` samples among ``n`` texts."""
    return list(range(n)) if n <= LENGTH_SAMPLE else np.linspace(0, n - 1, LENGTH_SAMPLE).astype(np.int64).tolist()


def choose_shingle(frames) -> ShingleChoice:
    """The shingle the local engine chooses for the texts of ``frames`` read one after the other: a list of
    (df, text_col, order_col), each in its input order (``order_col``, else the row order Spark reads).
    A few small jobs; a thousand text prefixes come to the driver."""
    from pyspark.sql import functions as F

    indexed, sizes = [], []
    for df, text_col, order_col in frames:
        key = [order_key(F.col(quoted(order_col)), df.schema[order_col].dataType).alias("o")] if order_col else []
        texts = df.select(*key,
                          F.substring(F.coalesce(F.col(quoted(text_col)), F.lit("")), 1, LENGTH_PREFIX).alias("t"))
        if order_col:
            texts = texts.orderBy("o")
        rdd = texts.select("t").rdd.map(lambda r: r[0]).zipWithIndex()
        indexed.append(rdd)
        sizes.append(rdd.count())
    wanted = sample_positions(sum(sizes))
    picked, start = [], 0
    for rdd, n in zip(indexed, sizes):
        mine = {p - start for p in wanted if start <= p < start + n}
        if mine:
            picked += [(start + i, t) for t, i in rdd.filter(lambda ti, mine=mine: ti[1] in mine).collect()]
        start += n
    picked.sort()
    return shingle_for_texts([t for _, t in picked])


__all__ = ["choose_shingle", "given_spec", "sample_positions"]
