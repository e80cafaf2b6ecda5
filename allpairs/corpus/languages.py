"""The programming language of a source file, from its name: what the corpus records beside each file of a
tree, so that the shingle stage tokenizes it by that language's rules (:mod:`allpairs.shingles.codetokens`)."""
from __future__ import annotations

import os

_PATH_LANGUAGES = {".go": "go", ".py": "python", ".pyi": "python", ".pyw": "python"}
_PATH_LANGUAGES.update(
    (ext, "c")
    for ext in (
        ".c .h .cc .cpp .cxx .c++ .hh .hpp .hxx .h++ .inl .ino .m .mm .java .js .mjs .cjs .jsx "
        ".ts .mts .cts .tsx .rs .cs .swift .kt .kts .scala .sc .groovy .gradle .dart .zig .d "
        ".proto .cu .cuh .glsl .hlsl .sol"
    ).split()
)


def language_for_path(path: str) -> str | None:
    """The tokenizer for a file name, from its extension (case-insensitive).

    ``"go"`` for ``*.go``; ``"python"`` for ``*.py``, ``*.pyi``, ``*.pyw``;
    ``"c"`` for the C family (``.c .h .cc .cpp .hpp .java .js .ts .rs .cs
    .swift .kt .scala`` and kin); ``None`` for anything else.
    """
    return _PATH_LANGUAGES.get(os.path.splitext(path)[1].lower())
