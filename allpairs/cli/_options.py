"""Options shared by several commands (one definition, so help and defaults agree), and reading the input they name."""
from __future__ import annotations

from enum import Enum

import typer

from .._numba import MAX_JOBS
from ..corpus import Corpus, read_corpus
from ..errors import UsageError
from ..lsh import MAX_EXPAND, MAX_NUM_PERM
from ..measures import MAX_DENOMINATOR, MAX_THRESHOLD_CHARS, MAX_THRESHOLD_EXPONENT
from ._app import fail


class Format(str, Enum):
    tsv = "tsv"
    csv = "csv"
    jsonl = "jsonl"


PATH = typer.Argument(..., help="A directory (every file a document), or a file with --lines/--sets/--jsonl ('-' for stdin).")
THRESHOLD = typer.Option(..., "--threshold", "-t", help=f"Jaccard threshold in (0, 1]: pairs with J >= t. Read exactly (0.7 is 7/10): a decimal with at most 9 decimal places (0.7, 7e-1) or a fraction p/q with q <= {MAX_DENOMINATOR:,} (2/3); at most {MAX_THRESHOLD_CHARS} characters, exponent within ±{MAX_THRESHOLD_EXPONENT}.")
LINES = typer.Option(False, "--lines", help="Each line of PATH is a record (id = line number; the line is printed too). A line may hold up to 64 MiB.")
SETS = typer.Option(False, "--sets", help="Each line of PATH is a set of whitespace-separated tokens (id = line number). A line may hold up to 64 MiB.")
JSONL = typer.Option(False, "--jsonl", help="PATH is JSON Lines with an id and a text field. A line may hold up to 64 MiB.")
SHINGLE = typer.Option(None, "--shingle", "-s", help="word:N, char:N or code:N. Default: code:5 for a tree of source files, word:5 for other files and JSON Lines, char:3 for --lines.")
NO_NORMALIZE = typer.Option(False, "--no-normalize", help="Keep text as is (default: NFKC, case folding, whitespace collapsed) for word and char shingles.")
INCLUDE = typer.Option([], "--include", help="Only files matching this glob (repeatable), e.g. '*.go'.")
EXCLUDE = typer.Option([], "--exclude", help="Leave out files matching this glob (repeatable), e.g. '*_test.go' or 'testdata/**'.")
MIN_BYTES = typer.Option(0, "--min-bytes", help="Drop files smaller than this many bytes.")
MIN_SHINGLES = typer.Option(1, "--min-shingles", help="Drop documents with fewer distinct shingles.")
ENCODING = typer.Option("utf-8", "--encoding", help="Encoding of --lines/--sets/--jsonl input.")
ID_FIELD = typer.Option("id", "--id-field", help="JSON Lines: the field holding the document id.")
TEXT_FIELD = typer.Option("text", "--text-field", help="JSON Lines: the field holding the text.")
JOBS = typer.Option(0, "--jobs", "-j", help=f"Threads (0 = one per core; at most {MAX_JOBS}). The output is the same for any value.")
QUIET = typer.Option(False, "--quiet", "-q", help="No progress bar, warnings or summary on stderr.")
NUM_PERM = typer.Option(128, "--num-perm", "-k", help=f"LSH: MinHash values per document (K), 1 to {MAX_NUM_PERM}.")
BANDS = typer.Option(None, "--bands", "-b", help="LSH: number of bands b (with --rows; b × r <= K). Default: chosen from the threshold and --recall.")
ROWS = typer.Option(None, "--rows", "-r", help="LSH: rows per band r (with --bands; b × r <= K).")
RECALL = typer.Option(0.99, "--recall", help="LSH: when choosing b and r, the probability of finding a pair exactly at the threshold.")
SEED = typer.Option(1, "--seed", help="LSH: seed of the MinHash hash family; same seed, same signatures on any machine.")
BITS = typer.Option(None, "--bits", help="LSH: keep only the w low bits of each MinHash value (b-bit MinHash, 1..32); estimates are corrected for chance collisions.")
MAX_BUCKET = typer.Option(None, "--max-bucket", help=f"LSH: skip buckets of more distinct sets than this (reported on stderr). Default: no limit; buckets of more than {MAX_EXPAND} are joined exactly instead of expanded pair by pair, with the same result.")


def read_input(path, lines, sets, jsonl, include, exclude, min_bytes, encoding, id_field, text_field) -> Corpus:
    """The corpus named by the shared input options (at most one of --lines, --sets, --jsonl)."""
    kinds = [k for k, on in (("lines", lines), ("sets", sets), ("jsonl", jsonl)) if on]
    if len(kinds) > 1:
        raise typer.BadParameter(f"choose one of --lines, --sets, --jsonl (got {', '.join('--' + k for k in kinds)})")
    return read_corpus(path, kinds[0] if kinds else "directory", include=include, exclude=exclude,
                       min_bytes=min_bytes, encoding=encoding, id_field=id_field, text_field=text_field)


def check_jobs(jobs: int) -> None:
    """Refuse a thread count outside 0..MAX_JOBS before any input is read (one line, exit 2)."""
    if not 0 <= jobs <= MAX_JOBS:
        fail(UsageError(f"--jobs {jobs:,} is outside 0 to {MAX_JOBS}; give 0 (one thread per core) "
                        f"or 1 to {MAX_JOBS} threads"))
