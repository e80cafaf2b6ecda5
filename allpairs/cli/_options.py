"""Options shared by several commands (one definition, so help and defaults agree), and reading the input they name."""
from __future__ import annotations

from enum import Enum

import typer

from ..corpus import Corpus, read_corpus


class Format(str, Enum):
    tsv = "tsv"
    csv = "csv"
    jsonl = "jsonl"


PATH = typer.Argument(..., help="A directory (every file a document), or a file with --lines/--sets/--jsonl ('-' for stdin).")
THRESHOLD = typer.Option(..., "--threshold", "-t", help="Jaccard threshold in (0, 1]: pairs with J >= t. Read exactly (0.7 is 7/10).")
LINES = typer.Option(False, "--lines", help="Each line of PATH is a record (id = line number; the line is printed too).")
SETS = typer.Option(False, "--sets", help="Each line of PATH is a set of whitespace-separated tokens (id = line number).")
JSONL = typer.Option(False, "--jsonl", help="PATH is JSON Lines with an id and a text field.")
SHINGLE = typer.Option(None, "--shingle", "-s", help="word:N, char:N or code:N. Default: code:5 for a tree of source files, word:5 for other files and JSON Lines, char:3 for --lines.")
NO_NORMALIZE = typer.Option(False, "--no-normalize", help="Keep text as is (default: NFKC, case folding, whitespace collapsed) for word and char shingles.")
INCLUDE = typer.Option([], "--include", help="Only files matching this glob (repeatable), e.g. '*.go'.")
EXCLUDE = typer.Option([], "--exclude", help="Leave out files matching this glob (repeatable), e.g. '*_test.go' or 'testdata/**'.")
MIN_BYTES = typer.Option(0, "--min-bytes", help="Drop files smaller than this many bytes.")
MIN_SHINGLES = typer.Option(1, "--min-shingles", help="Drop documents with fewer distinct shingles.")
ENCODING = typer.Option("utf-8", "--encoding", help="Encoding of --lines/--sets/--jsonl input.")
ID_FIELD = typer.Option("id", "--id-field", help="JSON Lines: the field holding the document id.")
TEXT_FIELD = typer.Option("text", "--text-field", help="JSON Lines: the field holding the text.")
JOBS = typer.Option(0, "--jobs", "-j", help="Threads (0 = all cores). The output is the same for any value.")
QUIET = typer.Option(False, "--quiet", "-q", help="No progress bar, warnings or summary on stderr.")
NUM_PERM = typer.Option(128, "--num-perm", "-k", help="LSH: MinHash values per document (K).")
BANDS = typer.Option(None, "--bands", "-b", help="LSH: number of bands b (with --rows). Default: chosen from the threshold and --recall.")
ROWS = typer.Option(None, "--rows", "-r", help="LSH: rows per band r (with --bands).")
RECALL = typer.Option(0.99, "--recall", help="LSH: when choosing b and r, the probability of finding a pair exactly at the threshold.")
SEED = typer.Option(1, "--seed", help="LSH: seed of the MinHash hash family; same seed, same signatures on any machine.")
BITS = typer.Option(None, "--bits", help="LSH: keep only the w low bits of each MinHash value (b-bit MinHash, 1..32); estimates are corrected for chance collisions.")
MAX_BUCKET = typer.Option(None, "--max-bucket", help="LSH: do not expand buckets of more distinct sets than this (reported on stderr). Default: no limit.")


def read_input(path, lines, sets, jsonl, include, exclude, min_bytes, encoding, id_field, text_field) -> Corpus:
    """The corpus named by the shared input options (at most one of --lines, --sets, --jsonl)."""
    kinds = [k for k, on in (("lines", lines), ("sets", sets), ("jsonl", jsonl)) if on]
    if len(kinds) > 1:
        raise typer.BadParameter(f"choose one of --lines, --sets, --jsonl (got {', '.join('--' + k for k in kinds)})")
    return read_corpus(path, kinds[0] if kinds else "directory", include=include, exclude=exclude,
                       min_bytes=min_bytes, encoding=encoding, id_field=id_field, text_field=text_field)


def check_jobs(jobs: int) -> None:
    if jobs < 0:
        raise typer.BadParameter(f"--jobs {jobs} is negative; give 0 (all cores) or more")
