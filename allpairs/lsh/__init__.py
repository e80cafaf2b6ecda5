"""(4b) The approximate path: MinHash signatures, LSH banding, the S-curve.

``signatures`` turns a CSR corpus of 64-bit keys into a (sets × K) matrix,
``candidates`` bands it into candidate pairs, ``choose_params`` picks the
banding from a threshold; nothing here imports the exact join.
"""
from .bands import Candidates, candidates, check_banding
from .minhash import (empty_rows, empty_signatures, estimate, estimate_pairs, permutation_params,
                      signature_dtype, signatures)
from .scurve import choose_params, expected_recall, knee, probability

__all__ = [
    "Candidates",
    "candidates",
    "check_banding",
    "choose_params",
    "empty_rows",
    "empty_signatures",
    "estimate",
    "estimate_pairs",
    "expected_recall",
    "knee",
    "permutation_params",
    "probability",
    "signature_dtype",
    "signatures",
]
