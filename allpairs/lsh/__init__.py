"""(4b) The approximate path: MinHash signatures, LSH banding, the S-curve.

``signatures`` turns a CSR corpus of 64-bit keys into a (sets × K) matrix;
nothing here imports the exact join.
"""
from .minhash import (empty_rows, empty_signatures, estimate, estimate_pairs, permutation_params,
                      signature_dtype, signatures)

__all__ = [
    "empty_rows",
    "empty_signatures",
    "estimate",
    "estimate_pairs",
    "permutation_params",
    "signature_dtype",
    "signatures",
]
