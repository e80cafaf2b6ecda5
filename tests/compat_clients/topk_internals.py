"""Exact top-k Jaccard search that reads ``SearchIndex``'s internals (our own code, for tests).

The shape of the exact baseline in set-similarity benchmarks: an index built
at threshold 0 keeps every token of every set in its posting lists, and a
query counts, per indexed set, the posting lists of its tokens that hold it
(``index.order``, ``index.index``, ``index.sets``), then ranks by Jaccard,
keeping the first of equal scores. Prints one line per query.

Usage: ``topk_internals.py SETS_FILE K N_QUERIES`` (one set per line, tokens separated by spaces)
"""
import sys

from SetSimilaritySearch import SearchIndex


def top_k(index, query, k):
    assert index.similarity_threshold == 0.0
    ranks = [index.order[token] for token in query if token in index.order]
    shared = {}
    for rank in ranks:
        for i, _position in index.index[rank]:
            shared[i] = shared.get(i, 0) + 1
    scored = [(i, float(c) / float(len(ranks) + len(index.sets[i]) - c)) for i, c in shared.items()]
    scored.sort(key=lambda hit: hit[1], reverse=True)
    return scored[:k]


def main() -> None:
    path, k, n_queries = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with open(path) as f:
        sets = [line.split() for line in f if line.strip()]
    index = SearchIndex(sets, similarity_func_name="jaccard", similarity_threshold=0.0)
    step = max(1, len(sets) // n_queries)
    for q in range(0, len(sets), step)[:n_queries]:
        print(q, " ".join(f"{i}:{s!r}" for i, s in top_k(index, sets[q], k)))
    print("keys", len(index.index), "sets", len(index.sets), "tokens", len(index.order))


if __name__ == "__main__":
    main()
