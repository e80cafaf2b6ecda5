"""Options shared by several commands (one definition, so help and defaults agree), reading the input they
name, and refusing options that would do nothing."""
from __future__ import annotations

from enum import Enum

import typer
from typer.core import TyperCommand

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


# Help panels: join has some thirty options; each belongs to one step of the run.
INPUT, SHINGLES, OUTPUT, LSH, PERFORMANCE = "Input", "Shingle", "Output", "LSH", "Performance"
SPARK = "Spark"


class PanelCommand(TyperCommand):
    """A command whose --help lists its options in panels (typer's ``rich_help_panel``), in plain text."""

    def collect_usage_pieces(self, ctx) -> list[str]:
        """``[OPTIONS] PATH...``: arguments by their metavar, without typer's braces."""
        pieces = [self.options_metavar] if self.options_metavar else []
        return pieces + [p.metavar or p.name.upper() for p in self.get_params(ctx) if p.param_type_name == "argument"]

    def format_options(self, ctx, formatter) -> None:
        args, panels = [], {"": []}  # the options of no panel (threshold, method, help) first
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                args.append((param.metavar or record[0], record[1]))
            else:
                panels.setdefault(getattr(param, "rich_help_panel", None) or "", []).append(record)
        if args:
            with formatter.section("Arguments"):
                formatter.write_dl(args)
        for panel, records in panels.items():
            with formatter.section(f"{panel} options" if panel else "Options"):
                formatter.write_dl(records)


PATHS = typer.Argument(..., metavar="PATH...", show_default=False,
                       help="Directories (every file below is a document) and files, read as one corpus; "
                            "or one file with --lines/--sets/--jsonl ('-' for stdin).")
THRESHOLD = typer.Option(..., "--threshold", "-t", metavar="FLOAT",
                         help=f"Jaccard threshold in (0, 1]: pairs with J >= t. Read exactly (0.7 is 7/10): a "
                              f"decimal with at most 9 decimal places (0.7, 7e-1) or a fraction p/q with q <= "
                              f"{MAX_DENOMINATOR:,} (2/3); at most {MAX_THRESHOLD_CHARS} characters, exponent within "
                              f"±{MAX_THRESHOLD_EXPONENT}.")
SETS = typer.Option(False, "--sets", rich_help_panel=INPUT,
                    help="Each line of PATH is a set of whitespace-separated tokens (id = line number). A line may "
                         "hold up to 64 MiB.")
JSONL = typer.Option(False, "--jsonl", rich_help_panel=INPUT,
                     help="PATH is JSON Lines with an id and a text field. A line may hold up to 64 MiB.")
SHINGLE = typer.Option(None, "--shingle", "-s", metavar="KIND:N", rich_help_panel=SHINGLES,
                       help="word:N, char:N or code:N. Default: code:5 for a tree of source files, word:5 for other "
                            "files and JSON Lines, char:3 for --lines.")
NO_NORMALIZE = typer.Option(False, "--no-normalize", rich_help_panel=SHINGLES,
                            help="Keep text as is (default: NFKC, case folding, whitespace collapsed) for word and "
                                 "char shingles.")
INCLUDE = typer.Option([], "--include", metavar="GLOB", rich_help_panel=INPUT, show_default=False,
                       help="Only files matching this glob (repeatable), e.g. '*.go'.")
EXCLUDE = typer.Option([], "--exclude", metavar="GLOB", rich_help_panel=INPUT, show_default=False,
                       help="Leave out files matching this glob (repeatable), e.g. '*_test.go' or 'testdata/**'.")
HIDDEN = typer.Option(False, "--hidden", rich_help_panel=INPUT,
                      help="Read hidden files and folders too (names starting with '.'; left out by default).")
NO_IGNORE = typer.Option(False, "--no-ignore", rich_help_panel=INPUT,
                         help="Read what .gitignore and .ignore files leave out, and .git (left out by default).")
MIN_BYTES = typer.Option(0, "--min-bytes", metavar="N", rich_help_panel=INPUT,
                         help="Drop files smaller than N bytes.")
MIN_SHINGLES = typer.Option(1, "--min-shingles", metavar="N", rich_help_panel=SHINGLES,
                            help="Drop documents with fewer than N distinct shingles.")
ENCODING = typer.Option("utf-8", "--encoding", metavar="NAME", rich_help_panel=INPUT,
                        help="Encoding of --lines/--sets/--jsonl input.")
ID_FIELD = typer.Option("id", "--id-field", metavar="NAME", rich_help_panel=INPUT,
                        help="JSON Lines: the field holding the document id.")
TEXT_FIELD = typer.Option("text", "--text-field", metavar="NAME", rich_help_panel=INPUT,
                          help="JSON Lines: the field holding the text.")
JOBS = typer.Option(0, "--jobs", "-j", metavar="N", rich_help_panel=PERFORMANCE,
                    help=f"Threads (0 = one per core; at most {MAX_JOBS}). The output is the same for any value.")
QUIET = typer.Option(False, "--quiet", "-q", rich_help_panel=OUTPUT,
                     help="No progress bar, warnings or summary on stderr.")
NUM_PERM = typer.Option(128, "--num-perm", "-k", metavar="K", rich_help_panel=LSH,
                        help=f"MinHash values per document, 1 to {MAX_NUM_PERM}.")
BANDS = typer.Option(None, "--bands", "-b", metavar="B", rich_help_panel=LSH, show_default=False,
                     help="Number of bands (with --rows; B × R <= K). Default: chosen from the threshold and "
                          "--recall.")
ROWS = typer.Option(None, "--rows", "-r", metavar="R", rich_help_panel=LSH, show_default=False,
                    help="Rows per band (with --bands; B × R <= K).")
RECALL = typer.Option(0.99, "--recall", metavar="FLOAT", rich_help_panel=LSH,
                      help="When choosing --bands and --rows, the probability of finding a pair exactly at the "
                           "threshold.")
SEED = typer.Option(1, "--seed", metavar="N", rich_help_panel=LSH,
                    help="Seed of the MinHash hash family; same seed, same signatures on any machine.")
BITS = typer.Option(None, "--bits", metavar="W", rich_help_panel=LSH, show_default=False,
                    help="Keep only the W low bits of each MinHash value (b-bit MinHash, 1..32); estimates are "
                         "corrected for chance collisions.")
MAX_BUCKET = typer.Option(None, "--max-bucket", metavar="N", rich_help_panel=LSH, show_default=False,
                          help=f"Skip buckets of more than N distinct sets (reported on stderr). Default: no "
                               f"limit; buckets of more than {MAX_EXPAND} are joined exactly instead of expanded "
                               "pair by pair, with the same result.")


def lines_option(shown: str) -> typer.models.OptionInfo:
    """--lines, whose help says what the command shows of each line."""
    return typer.Option(False, "--lines", rich_help_panel=INPUT,
                        help=f"Each line of PATH is a record (id = line number){shown}. A line may hold up to "
                             "64 MiB.")


#: For commands that read one path (index, dedup), and --lines for any command.
PATH = typer.Argument(..., metavar="PATH", show_default=False,
                      help="A directory (every file a document), or a file with --lines/--sets/--jsonl ('-' for stdin).")
LINES = lines_option("")


def read_input(paths, lines, sets, jsonl, include, exclude, min_bytes, encoding, id_field, text_field,
               hidden=False, no_ignore=False) -> Corpus:
    """The corpus named by the shared input options (at most one of --lines, --sets, --jsonl)."""
    kinds = [k for k, on in (("lines", lines), ("sets", sets), ("jsonl", jsonl)) if on]
    if len(kinds) > 1:
        raise typer.BadParameter(f"choose one of --lines, --sets, --jsonl (got {', '.join('--' + k for k in kinds)})")
    return read_corpus(paths, kinds[0] if kinds else "directory", include=include, exclude=exclude,
                       min_bytes=min_bytes, encoding=encoding, id_field=id_field, text_field=text_field,
                       hidden=hidden, ignore=not no_ignore)


def check_jobs(jobs: int) -> None:
    """Refuse a thread count outside 0..MAX_JOBS before any input is read (one line, exit 2)."""
    if not 0 <= jobs <= MAX_JOBS:
        fail(UsageError(f"--jobs {jobs:,} is outside 0 to {MAX_JOBS}; give 0 (one thread per core) "
                        f"or 1 to {MAX_JOBS} threads"))


def given(ctx: typer.Context, *names: str) -> list[str]:
    """The options among ``names`` (parameter names) that the user gave, as their long flags.

    Decided by where the value came from, not by comparing it with the default:
    ``--seed 1`` in exact mode is refused although 1 is the default seed.
    """
    flags = {p.name: next((o for o in p.opts if o.startswith("--")), p.opts[0]) for p in ctx.command.params}
    return [flags[n] for n in names if n in flags
            and getattr(ctx.get_parameter_source(n), "name", "DEFAULT") not in ("DEFAULT", "DEFAULT_MAP")]


def refuse(ctx: typer.Context, names: tuple[str, ...], why: str) -> None:
    """A usage error if the user gave any of these options: they would do nothing ``why``."""
    flags = given(ctx, *names)
    if flags:
        verb = "does" if len(flags) == 1 else "do"
        raise UsageError(f"{', '.join(flags)} {verb} nothing {why}")


def refuse_unused_input_options(ctx: typer.Context, lines: bool, sets: bool, jsonl: bool) -> None:
    """Input options that the kind of input chosen does not read."""
    if not jsonl:
        refuse(ctx, ("id_field", "text_field"), "without --jsonl")
    if not (lines or sets or jsonl):
        refuse(ctx, ("encoding",), "for a directory (files are read as UTF-8); it goes with --lines, --sets, --jsonl")


def refuse_unused_lsh_options(ctx: typer.Context, method_lsh: bool, bands, rows) -> None:
    """LSH options in exact mode, and --recall when --bands and --rows are given."""
    if not method_lsh:
        refuse(ctx, ("num_perm", "bands", "rows", "recall", "seed", "bits", "max_bucket", "verify"),
               "in exact mode; add --method lsh, or drop them")
    elif bands is not None and rows is not None:
        refuse(ctx, ("recall",), "when --bands and --rows are given (it chooses them)")
