"""Near-duplicate Go files with dpu-utils' ``DuplicateDetector`` (its code from its sdist, run unchanged).

Only the module ``deduplication.py`` is loaded, with ``dpu_utils.codeutils``
standing in for the package (its ``get_language_keywords``, from the sdist's
own ``keywordlist.py``): the rest of dpu-utils imports Azure and
sentencepiece, which the detector never uses. Tokens: identifiers, numbers
and single punctuation characters of each file, in order.

Usage: ``dedup_go.py DPU_UTILS_DIR GO_SRC_DIR PREFIX...`` (files under ``GO_SRC_DIR/PREFIX``)
"""
import importlib.util
import re
import sys
import types
from pathlib import Path

TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|\S")


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    dpu, src, prefixes = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
    package = types.ModuleType("dpu_utils")
    package.__path__ = [str(dpu / "dpu_utils")]
    sys.modules["dpu_utils"] = package
    keywords = load("dpu_utils.codeutils.keywords.keywordlist", dpu / "dpu_utils/codeutils/keywords/keywordlist.py")
    codeutils = types.ModuleType("dpu_utils.codeutils")
    codeutils.get_language_keywords = keywords.get_language_keywords
    sys.modules["dpu_utils.codeutils"] = codeutils
    dedup = load("dpu_utils.codeutils.deduplication.deduplication",
                 dpu / "dpu_utils/codeutils/deduplication/deduplication.py")
    detector = dedup.DuplicateDetector()
    files = sorted(p for prefix in prefixes for p in (src / prefix).rglob("*.go"))
    added = sum(detector.add_file(str(p.relative_to(src)), TOKEN.findall(p.read_text(errors="replace")), "go")
                for p in files)
    clusters = detector.compute_duplicates()
    print(len(files), "files,", added, "added,", len(clusters), "clusters")
    detector.print_clone_set_stats(clusters)
    for cluster in clusters:
        print(list(cluster))
    print("exclude", list(detector.compute_ids_to_exclude()))


if __name__ == "__main__":
    main()
