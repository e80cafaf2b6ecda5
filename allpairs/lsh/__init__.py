"""(4b) The approximate path: MinHash signatures, LSH banding, the S-curve.

``signatures`` turns a CSR corpus of 64-bit keys into a (sets × K) matrix,
``candidates`` bands it into candidate pairs (and marks the buckets too large
to expand, whose rows the orchestration in :mod:`allpairs.join` joins exactly),
``choose_params`` picks the banding from a threshold; nothing here imports the
exact join.
"""
from .bands import MAX_EXPAND, Candidates, candidates, check_banding, share_joined_bucket
from .minhash import (MAX_NUM_PERM, agreement_counts, agreement_needed, check_num_perm, empty_rows, empty_signatures, estimate,
                      estimate_pairs, estimate_table, permutation_params, signature_dtype, signature_sets, signatures)
from .scurve import choose_params, expected_recall, knee, probability

__all__ = [
    "MAX_EXPAND",
    "MAX_NUM_PERM",
    "agreement_counts",
    "agreement_needed",
    "Candidates",
    "candidates",
    "check_banding",
    "check_num_perm",
    "choose_params",
    "empty_rows",
    "empty_signatures",
    "estimate",
    "estimate_pairs",
    "estimate_table",
    "expected_recall",
    "knee",
    "permutation_params",
    "probability",
    "share_joined_bucket",
    "signature_dtype",
    "signature_sets",
    "signatures",
]
