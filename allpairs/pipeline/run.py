"""The library's one entry point for a join, :func:`join`: its checks, then the stages wired in order."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence


import numpy as np

from ..corpus import Corpus
from ..corpus.model import ids_of
from ..errors import EmptyCorpusError, UsageError
from .._kernels.jit import kernels_for, resolve_jobs
from ..lsh.limits import MAX_EXPAND
from ..measures import Threshold, get_measure, parse_threshold
from .._plural import count as count_of
from ..output.spill import parse_memory, size_text
from ..pairs.streamed import SpilledPairs
from .stats import Progress, Stats, peak_memory, timed, with_detail
from .result import JoinResult
from .front import as_corpus, merge_corpora, input_bytes, shingle_corpus
from .exact_path import exact_pairs, check_ranked, group_ok_of, ranked_pairs_of, _much_join

if TYPE_CHECKING:  # an annotation only: the spec is parsed by the front stage, for texts
    from ..shingles import ShingleSpec


METHODS = ("exact", "lsh")
VERIFY = ("exact", "estimate")


def join(data: Corpus | Mapping | Sequence[str] | Sequence[Iterable], threshold: float | str | Threshold | None = None, *,
         top: int | None = None, neighbors: int | None = None,
         method: str = "exact", shingle: ShingleSpec | str | None = None, normalize: bool = True,
         min_shingles: int = 1, jobs: int | None = None, num_perm: int = 128, bands: int | None = None,
         rows: int | None = None, recall: float = 0.99, seed: int = 1, bits: int | None = None,
         max_bucket: int | None = None, max_expand: int | None = MAX_EXPAND, verify: str = "exact",
         measure: str = "jaccard", against: Corpus | Sequence[str] | Sequence[Iterable] | None = None,
         clusters: bool = False, progress: Progress | None = None, ids: Sequence | None = None,
         against_ids: Sequence | None = None, count: bool = False, memory: int | str | None = None,
         spill: str | os.PathLike | bool | None = None) -> JoinResult:
    """Every pair of documents whose shingle sets have similarity >= threshold (Jaccard unless ``measure`` says).

    With ``method="exact"`` (the default) the answer is exact: a prefix-filter
    join. With ``method="lsh"`` candidates come from MinHash signatures and LSH
    banding and are verified exactly, so every pair printed is a true pair, but
    a pair of similarity s is found only with probability
    ``P(s) = 1 - (1 - s^rows)^bands``.

    Parameters
    ----------
    data : Corpus, dict, pandas Series, list of str, or list of token collections
        A corpus from :mod:`allpairs.corpus`, texts to shingle, or sets of
        tokens (str or int) to join as they are; a dict maps ids to either,
        a Series is named by its index. Pairs name documents by position
        (``res.ids[pair.left]`` is the id); a list's ids are ``ids``, or the
        positions themselves. Ids keep their type.
    threshold : float, str, Fraction or Decimal in (0, 1]
        Pairs with J >= threshold are returned; read exactly (0.7, "0.7" and Decimal("0.7") are 7/10).
        With ``top`` or ``neighbors`` optional: a floor.
    top : int >= 1, optional
        Only the ``top`` pairs of largest similarity, best first, ties by
        (left, right) in input order (Xiao et al., ICDE 2009; see
        :mod:`allpairs.exact.topk`). Jaccard, cosine and dice.
    neighbors : int >= 1, optional
        For each document in input order, its ``neighbors`` best partners
        (pairs (document, partner), best first, ties by the partner's
        position); without ``threshold`` any document sharing a token.
    method : "exact" or "lsh"
    shingle : "word:N", "char:N", "code:N", optional
        How texts become sets; see :func:`default_shingle` for the default.
    normalize : bool
        NFKC, case folding and whitespace collapsing for word and char shingles.
    min_shingles : int
        Documents with fewer distinct shingles are dropped (and counted).
    jobs : int, optional
        Threads; default all cores. The result does not depend on it.
    num_perm, bands, rows, recall, seed, bits, max_bucket :
        LSH only: K MinHash values per set; ``bands`` × ``rows`` (both, or
        neither to take the recall-first choice of
        :func:`allpairs.lsh.choose_params` for P(threshold) >= ``recall``); the
        hash family's seed; keep ``bits`` low bits of each value (b-bit
        MinHash); buckets of more than ``max_bucket`` sets are skipped (and
        reported); buckets of more than ``max_expand`` sets (and at most
        ``max_bucket``) are joined exactly instead of expanded pair by pair,
        with the same result (None: expand them all).
    verify : "exact" or "estimate"
        LSH only: verify candidates exactly (default), or keep those whose
        MinHash estimate is >= threshold (the output then says "estimate");
        the estimate needs ``bits`` None or at least :data:`MIN_ESTIMATE_BITS`.
    measure : "jaccard", "cosine", "dice", "containment" or "overlap"
        See :data:`allpairs.measures.MEASURES`. Containment |A∩B|/|A| is
        asymmetric: each ordered pair of distinct documents is tested both
        ways and a pair is (contained, container). Overlap counts common
        tokens: ``threshold`` is then a whole number k >= 1. Other measures
        than Jaccard need ``method="exact"``.
    against : corpus like ``data``, optional
        An R–S join: only pairs (a, b) with a from ``data`` and b from
        ``against`` (numbered from 0 within it); for containment a is the
        contained one. Both sides are shingled alike and share one order.
        Name its documents as ``data``'s: by a dict's keys, a Series' index,
        or ``against_ids``; ``res.left_ids[pair.left]`` and
        ``res.right_ids[pair.right]`` are then the two documents' ids.
    clusters : bool
        Also find the connected components of the pairs with two or more
        documents (:attr:`JoinResult.clusters`); self-joins only.
    progress : callable(stage, done, total[, detail]), optional
        Told how far each long stage is; a callback of four parameters also
        gets a line of detail (the pairs found so far, the bytes spilled).
    ids : sequence, optional
        One id per document of a list (all different), used in ``res.ids``
        and by the writers; default the positions 0, 1, 2, ...
    against_ids : sequence, optional
        The same for ``against`` when it is a list.
    count : bool
        Count the pairs, keep none: ``len(res.pairs)`` is their number, in
        memory that does not grow with them (either method; with ``clusters``,
        the clusters are found by union–find as the pairs pass).
    memory : int (bytes) or str ("512M", "2G"), optional
        What the pairs of distinct sets may take at once (about 48 bytes
        each; ``top`` and ``neighbors`` keep their best a block of this size
        at a time), default half the memory available when the join starts.
        Past it the pairs are spilled (``spill``), or the join stops with an
        :class:`AllPairsError` before it would exhaust the memory.
    spill : directory, or True for ``TMPDIR``, optional
        Where pairs past ``memory`` go, as sorted runs in a temporary
        directory made there; ``res.pairs`` then reads them back in order a
        chunk at a time (``res.pairs.chunks()``, iteration, the writers: the
        same pairs in the same order) and ``res.pairs.close()`` removes them
        (done too at exit and when the result is collected). Both methods.
    """
    m = get_measure(measure)
    ranked = check_ranked(top, neighbors, m, method=method, against=against, clusters=clusters)
    if threshold is None and ranked is None:
        raise UsageError("give a threshold (or top=K, neighbors=K)")
    t = None if threshold is None else parse_threshold(threshold, m)
    jobs = resolve_jobs(jobs)
    if method not in METHODS:
        raise UsageError(f"unknown method {method!r}; choose exact or lsh")
    if verify not in VERIFY:
        raise UsageError(f"unknown verification {verify!r}; choose exact or estimate")
    if min_shingles < 0:
        raise UsageError(f"min_shingles {min_shingles} is negative; give 0 or more")
    if method == "lsh" and m.name != "jaccard":
        raise UsageError(f"MinHash LSH estimates Jaccard only; drop {{{{method=lsh}}}} to join on {m.name}", param="method")
    if method == "lsh" and against is not None:
        raise UsageError("an R–S join ({{against}}) is exact only; drop {{method=lsh}}", param="method")
    if clusters and against is not None:
        raise UsageError("clusters are for a self-join; drop {{against}} or {{clusters=True}}", param="clusters")
    if against_ids is not None and against is None:
        raise UsageError("against_ids= names the documents of against=; give both, or ids= for a self-join")
    info = None
    if method == "lsh":
        from .lsh_path import MIN_ESTIMATE_BITS, lsh_pairs, lsh_settings  # here: only an LSH join needs them

        info = lsh_settings(t, num_perm=num_perm, bands=bands, rows=rows, recall=recall, seed=seed, bits=bits,
                            max_bucket=max_bucket, max_expand=max_expand)
        if verify == "estimate" and bits is not None and bits < MIN_ESTIMATE_BITS:
            raise UsageError(f"{{{{verify=estimate}}}} needs {{{{bits={MIN_ESTIMATE_BITS}}}}} or more, not {bits}: with "
                             f"{bits}-bit values unrelated sets agree on 1 position in {2**bits} by chance, and "
                             "the estimate join over such signatures grows with the square of the corpus; "
                             f"raise {{{{bits={MIN_ESTIMATE_BITS}}}}} or more, or use {{{{verify=exact}}}} (fast at any width)",
                             param="bits")
        if clusters and verify == "estimate":
            raise UsageError("clusters are built from verified pairs only; drop {{verify=estimate}}", param="verify")
    elif verify != "exact":
        raise UsageError("{{verify=estimate}} goes with {{method=lsh}}", param="verify")
    budget = None if memory is None else parse_memory(memory)
    if spill is not None and spill is not True and not os.path.isdir(spill):
        raise UsageError(f"{{{{spill={os.fsdecode(spill)}}}}} is not a directory; give one to hold the spilled pairs, "
                         "or {{spill=True}} for TMPDIR", param="spill")
    if count and ranked is not None:
        raise UsageError(f"{{{{count=True}}}} goes with a threshold join; {{{{{ranked}}}}} gives the pairs themselves",
                         param="count")
    progress = with_detail(progress)
    corpus = as_corpus(data, ids)
    n_left = None
    if against is not None:
        other = as_corpus(against, against_ids, ids_name="against_ids")
        # Either side empty is an empty corpus, as for a self-join: joining against nothing finds nothing.
        for side, c in (("", corpus), ("against: ", other)):
            if len(c) == 0:
                raise EmptyCorpusError(side + c.empty_message())
        n_left = len(corpus)
        corpus = merge_corpora(corpus, other)
    stats = Stats()
    union = None
    # A small input runs the kernels as plain Python: no numba to import, no kernels to load.
    with kernels_for(input_bytes(corpus)):
        sets, label = shingle_corpus(corpus, shingle, normalize=normalize, min_shingles=min_shingles,
                                     stats=stats, progress=progress, ranked=info is None, jobs=jobs,
                                     n_left=n_left)
        if ranked is not None:
            # The joins may go down to the floor, or without one to the lowest threshold: judge the work there.
            from ..exact.topk import lowest_threshold  # here: a plain join needs none of the ranked joins

            lowest = t or lowest_threshold(m, int(np.diff(sets.indptr).max()) if sets.num_sets else 1)
            with timed(stats, "join"), kernels_for(None if _much_join(sets, lowest, m) else 0):
                pairs, t = ranked_pairs_of(sets, t, m, top=top, neighbors=neighbors, jobs=jobs, stats=stats,
                                           memory=budget, progress=progress)
        elif info is None:
            union = _set_union(sets, group_ok_of(sets, t, m)) if clusters else None
            with timed(stats, "join"), kernels_for(None if _much_join(sets, t, m) else 0):
                pairs, stats.candidates = exact_pairs(sets, t, m, n_left=n_left, jobs=jobs, progress=progress,
                                                      memory=budget, count=count, spill=spill, union=union)
        else:
            stats.notes.append(info.describe())
            # Identical documents always pair on the LSH path.
            union = _set_union(sets, np.ones(sets.num_sets, np.bool_)) if clusters else None
            pairs, _ = lsh_pairs(sets, t, info, verify=verify, jobs=jobs, stats=stats, memory=budget, count=count,
                                 spill=spill, union=union, progress=progress)
        if isinstance(pairs, SpilledPairs):
            runs = pairs.runs
            stats.notes.append(f"the pairs went past the memory budget ({size_text(pairs.memory)}): "
                               f"{count_of(runs.made, 'sorted run')}, {size_text(runs.bytes)} spilled in "
                               f"{runs.root} and merged back in order")
        stats.set_pairs = pairs.num_set_pairs
        stats.pairs = len(pairs)
        found_clusters = None
        if union is not None:
            with timed(stats, "clusters"):
                if progress:
                    progress("clusters", 0, 1)
                found_clusters = union.clusters(ids=corpus.ids)
                if progress:
                    progress("clusters", 1, 1)
    stats.peak_memory = peak_memory()
    return JoinResult(pairs=pairs, ids=ids_of(corpus), threshold=t, shingle=label, method=method,
                      stats=stats, columns=corpus.columns, lsh=info, measure=m, n_left=n_left,
                      clusters=found_clusters, texts=corpus.texts)


def _set_union(sets, group_ok):
    """The union–find of a join asked for clusters, its module imported here: every other join loads none of it."""
    from ..pairs.clusters import SetUnion

    return SetUnion(sets, group_ok)
