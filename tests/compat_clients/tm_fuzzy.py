"""A translation-memory fuzzy matcher of the kind built on SetSimilaritySearch (our own code, for tests).

For each input segment: the TM segments whose word lists (``line.split()``,
repeats kept) reach ``--minscore`` by ``--function``, best first, the first
result kept among equal scores (a stable sort of ``SearchIndex.query``'s
list), at most ``--candidates`` of them, the segment itself skipped; one
tab-separated line per match: input segment, TM line number, TM segment, score.

Usage: ``tm_fuzzy.py TM_FILE INPUT_FILE OUT_FILE [--function F] [--minscore S] [--candidates N]``
"""
import argparse

from SetSimilaritySearch import SearchIndex


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("tm")
    ap.add_argument("input")
    ap.add_argument("out")
    ap.add_argument("--function", default="containment_min")
    ap.add_argument("--minscore", type=float, default=0.5)
    ap.add_argument("--candidates", type=int, default=3)
    args = ap.parse_args()
    with open(args.tm, encoding="utf-8") as f:
        memory = [line.strip() for line in f]
    with open(args.input, encoding="utf-8") as f:
        segments = [line.strip() for line in f]
    index = SearchIndex([m.split() for m in memory], similarity_func_name=args.function,
                        similarity_threshold=args.minscore)
    with open(args.out, "w", encoding="utf-8") as out:
        for segment in segments:
            found = index.query(segment.split())
            found.sort(key=lambda hit: hit[1], reverse=True)
            for number, score in found[: args.candidates]:
                if memory[number] != segment:
                    out.write(f"{segment}\t{number}\t{memory[number]}\t{score}\n")


if __name__ == "__main__":
    main()
