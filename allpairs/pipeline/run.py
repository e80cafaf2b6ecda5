"""The library's one entry point for a join, :func:`join`: its checks, then the stages wired in order."""
from __future__ import annotations

from __future__ import annotations

from typing import Iterable, Mapping, Sequence


from ..corpus import Corpus
from ..errors import EmptyCorpusError, UsageError
from .._kernels.jit import kernels_for, resolve_jobs
from ..lsh import MAX_EXPAND
from ..measures import Threshold, get_measure, parse_threshold
from ..pairs.clusters import find_clusters
from ..shingles import ShingleSpec
from .stats import Progress, Stats, peak_memory, timed
from .result import JoinResult
from .front import as_corpus, merge_corpora, input_bytes, shingle_corpus
from .lsh_path import lsh_settings, lsh_pairs, MIN_ESTIMATE_BITS
from .exact_path import exact_pairs, check_ranked, ranked_pairs_of, _much_join


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
         against_ids: Sequence | None = None) -> JoinResult:
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
    threshold : float, str or Fraction in (0, 1]
        Pairs with J >= threshold are returned; read exactly (0.7 is 7/10).
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
    progress : callable(stage, done, total), optional
    ids : sequence, optional
        One id per document of a list (all different), used in ``res.ids``
        and by the writers; default the positions 0, 1, 2, ...
    against_ids : sequence, optional
        The same for ``against`` when it is a list.
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
        info = lsh_settings(t, num_perm=num_perm, bands=bands, rows=rows, recall=recall, seed=seed, bits=bits,
                            max_bucket=max_bucket, max_expand=max_expand)
        if verify == "estimate" and bits is not None and bits < MIN_ESTIMATE_BITS:
            raise UsageError(f"{{{{verify=estimate}}}} needs {{{{bits={MIN_ESTIMATE_BITS}}}}} or more, not {bits}: with "
                             f"{bits}-bit values unrelated sets agree on 1 position in {2**bits} by chance, and "
                             "the estimate join over such signatures grows with the square of the corpus; "
                             f"raise {{{{bits={MIN_ESTIMATE_BITS}}}}} or more, or use {{{{verify=exact}}}} (fast at any width)",
                             param="bits")
    elif verify != "exact":
        raise UsageError("{{verify=estimate}} goes with {{method=lsh}}", param="verify")
    corpus = as_corpus(data, ids)
    n_left = None
    if against is not None:
        other = as_corpus(against, against_ids)
        # Either side empty is an empty corpus, as for a self-join: joining against nothing finds nothing.
        for side, c in (("", corpus), ("against: ", other)):
            if len(c) == 0:
                raise EmptyCorpusError(side + c.empty_message())
        n_left = len(corpus)
        corpus = merge_corpora(corpus, other)
    stats = Stats()
    # A small input runs the kernels as plain Python: no numba to import, no kernels to load.
    with kernels_for(input_bytes(corpus)):
        sets, label = shingle_corpus(corpus, shingle, normalize=normalize, min_shingles=min_shingles,
                                     stats=stats, progress=progress, ranked=info is None, jobs=jobs)
        if ranked is not None:
            with timed(stats, "join"), kernels_for(None if _much_join(sets, t or Threshold(1, 2), m) else 0):
                pairs, t = ranked_pairs_of(sets, t, m, top=top, neighbors=neighbors, jobs=jobs, stats=stats)
        elif info is None:
            with timed(stats, "join"), kernels_for(None if _much_join(sets, t, m) else 0):
                pairs, found = exact_pairs(sets, t, m, n_left=n_left, jobs=jobs, progress=progress)
            stats.candidates = found.candidates
        else:
            stats.notes.append(info.describe())
            pairs, _ = lsh_pairs(sets, t, info, verify=verify, jobs=jobs, stats=stats)
        stats.set_pairs = pairs.num_set_pairs
        stats.pairs = len(pairs)
        found_clusters = None
        if clusters:
            with timed(stats, "clusters"):
                found_clusters = find_clusters(pairs, ids=corpus.ids)
    stats.peak_memory = peak_memory()
    return JoinResult(pairs=pairs, ids=corpus.ids, threshold=t, shingle=label, method=method,
                      stats=stats, columns=corpus.columns, lsh=info, measure=m, n_left=n_left,
                      clusters=found_clusters)
