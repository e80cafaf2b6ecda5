"""Stage 2: documents to shingle keys, with the tokenizers, their kernels and the token hash.

``keys.py`` defines the keys (:data:`KEY_VERSION`) and turns texts and sets
into them (kernels in ``_kernel.py``); ``codetokens.py`` holds the program
tokenizers (compiled in ``_codetok_kernel.py`` for Go, ``_codetok_c_cxx_kernel.py``
for C and C++, ``_codetok_c_python_kernel.py`` for the rest of the C family and
Python); ``_hash_kernel.py``
is XXH64, the token hash.
"""
from .keys import (KEY_VERSION, PARALLEL_MIN_CHARS, ShingleChoice, ShingleSpec, format_sets, hash_set_pieces,
                   hash_sets, language_for_path, normalize_text, shingle_for_texts, shingle_texts, token_key,
                   token_keys)

__all__ = ["KEY_VERSION", "PARALLEL_MIN_CHARS", "ShingleChoice", "ShingleSpec", "format_sets", "hash_set_pieces",
           "hash_sets", "language_for_path", "normalize_text", "shingle_for_texts", "shingle_texts", "token_key",
           "token_keys"]
