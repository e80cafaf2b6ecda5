"""Checks in the shape of SetSimilaritySearch 1.0.1's own test files (our own code; its tests are not in its sdist).

Its tests call ``all_pairs`` and ``SearchIndex.query`` on small lists and
check the results; one fills a lower-triangular matrix with numpy fancy
indexing from the pairs' indices (numpy ints there). This prints every
result, so that two runs can be compared byte for byte.
"""
import random

import numpy as np

from SetSimilaritySearch import SearchIndex, all_pairs


def main() -> None:
    sets = [[1, 2, 3], [3, 4, 5], [2, 3, 4], [5, 6, 7]]
    for func in ("jaccard", "cosine", "containment_min"):
        print(func, list(all_pairs(sets, similarity_func_name=func, similarity_threshold=0.1)))
    for func, t in (("jaccard", 0.1), ("containment", 0.1), ("containment", 0.5), ("cosine", 0.3)):
        index = SearchIndex(sets, similarity_func_name=func, similarity_threshold=t)
        print(func, t, index.query([3, 5, 4]), index.query([3, 4, 8]), index.query([8, 9]))
    rng = random.Random(42)
    population = list(range(100))
    n = 10
    sampled = [set(population) - set(rng.sample(population, k=10)) for _ in range(n)]
    x, y, z = zip(*all_pairs(sampled, similarity_threshold=0))
    matrix = np.nan * np.empty((n, n))
    matrix[x, y] = z
    print(np.array2string(matrix, precision=17))
    print(bool(np.all(np.isnan(matrix[np.triu_indices(n)]))), bool(not np.any(np.isnan(matrix[np.tril_indices(n, -1)]))))


if __name__ == "__main__":
    main()
