"""Options shared by several commands (one definition, so help and defaults agree), reading the input they
name, and refusing options that would do nothing."""
from __future__ import annotations

import inspect
import os
from enum import Enum
from typing import List, Optional

import typer
from typer.core import TyperCommand

from .._kernels.jit import MAX_JOBS
from ..corpus import Corpus, read_corpus
from ..errors import UsageError
from ..lsh.limits import MAX_NUM_PERM
from ..measures import JOIN_MEASURES
from . import _checks as checks
from ._app import fail
from ._checks import refuse_one_document, spill_directory  # noqa: F401  (the commands take them from here)


class Format(str, Enum):
    tsv = "tsv"
    csv = "csv"
    jsonl = "jsonl"
    parquet = "parquet"


Measure = Enum("Measure", {name: name for name in JOIN_MEASURES}, type=str)

MEASURE = typer.Option("jaccard", "--measure", show_default=True,
                       help="jaccard |A∩B|/|A∪B|, cosine |A∩B|/√(|A||B|), dice 2|A∩B|/(|A|+|B|), containment "
                            "|A∩B|/|A| (A the contained one, or the query), overlap |A∩B| >= k (a whole number).")


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
        order = ("", INPUT, SHINGLES, OUTPUT, LSH, PERFORMANCE, SPARK)  # the order of the run, whatever the signature's
        for panel, records in sorted(panels.items(), key=lambda item: (order + (item[0],)).index(item[0])):
            with formatter.section(f"{panel} options" if panel else "Options"):
                formatter.write_dl(records)


PATHS = typer.Argument(..., metavar="PATH...", show_default=False,
                       help="Directories (every file below is a document) and files, read as one corpus; "
                            "or one file with --lines/--sets/--jsonl/--csv/--tsv/--parquet ('-' for stdin).")
THRESHOLD = typer.Option(..., "--threshold", "-t", metavar="FLOAT",
                         help="Jaccard threshold in (0, 1]: pairs with J >= t, read exactly (0.7 is 7/10; 2/3 is allowed).")
SETS = typer.Option(False, "--sets", rich_help_panel=INPUT,
                    help="Each line of PATH is a set of whitespace-separated tokens (id = line number). A line may "
                         "hold up to 64 MiB.")
JSONL = typer.Option(False, "--jsonl", rich_help_panel=INPUT,
                     help="PATH is JSON Lines, an object a document: its text field (--text-col) and id (--id-col, "
                          "else line numbers). A line may hold up to 64 MiB.")
CSV = typer.Option(False, "--csv", rich_help_panel=INPUT,
                   help="PATH is a CSV table, a row a document (--text-col, --id-col, --keep-col name columns); "
                        "the first row is the header unless --no-input-header.")
TSV = typer.Option(False, "--tsv", rich_help_panel=INPUT, help="PATH is a tab-separated table, as --csv.")
PARQUET = typer.Option(False, "--parquet", rich_help_panel=INPUT,
                       help="PATH is a Parquet file, a row a document, columns as for --csv (the parquet "
                            "extra); with --engine spark, a Parquet dataset.")
TEXT_COL = typer.Option([], "--text-col", "--text-field", metavar="NAME", rich_help_panel=INPUT, show_default=False,
                        help="Records (--jsonl, --csv, --tsv, --parquet): the column holding the text; repeat to "
                             "join several, separated by a space. Default: text (a table's only column, if one).")
ID_COL = typer.Option(None, "--id-col", "--id-field", metavar="NAME", rich_help_panel=INPUT, show_default=False,
                      help="Records: the column holding each document's id. Default: id, when there is one; "
                           "else row numbers (line numbers for --jsonl), as the summary says.")
KEEP_COL = typer.Option([], "--keep-col", metavar="NAME", rich_help_panel=INPUT, show_default=False,
                        help="Records: carry this column into the output beside each id (repeatable).")
KEEP_ALL = typer.Option(False, "--keep-all", rich_help_panel=INPUT,
                        help="Records: carry every column into the output beside each id (dedup of a table "
                             "writes whole rows without it).")
NO_INPUT_HEADER = typer.Option(False, "--no-input-header", rich_help_panel=INPUT,
                               help="--csv/--tsv: the table read has no header row; name columns by number from 1 "
                                    "(--no-header writes tables without one; dedup writes the kept rows without one).")
#: The old name of --no-input-header, still read, not shown.
HEADERLESS = typer.Option(False, "--headerless", hidden=True)
QUOTECHAR = typer.Option(None, "--quotechar", metavar="CHAR", rich_help_panel=INPUT, show_default=False,
                         help="--csv/--tsv: the character quoting fields (CSV: '\"'; TSV: none, fields read "
                              "literally; --quotechar '\"' reads quoted TSV).")
DELIMITER = typer.Option(None, "--delimiter", "-d", metavar="CHAR", rich_help_panel=INPUT, show_default=False,
                         help="--csv: the character between fields, e.g. ';' (a spreadsheet's CSV where the comma "
                              "is the decimal mark) or '|'; CSV output is written with it too.")
VERBATIM_CELLS = typer.Option(False, "--verbatim-cells", rich_help_panel=OUTPUT,
                              help="CSV: write cells starting with = + - @ tab or CR as they are (by default "
                                   "a ' goes before them, plain numbers aside, so that spreadsheets run no formula).")
TOKENS_COL = typer.Option(None, "--tokens-col", metavar="NAME", rich_help_panel=INPUT, show_default=False,
                          help="--parquet: a column of lists of strings, joined as sets (tokens as they are).")
NO_HEADER = typer.Option(False, "--no-header", rich_help_panel=OUTPUT,
                         help="Write tables (TSV and CSV) without their header row.")
SHINGLE = typer.Option(None, "--shingle", "-s", metavar="KIND:N", rich_help_panel=SHINGLES,
                       help="word:N, char:N or code:N. Default: code:5 for a tree of source files, else char:3, word:1 "
                            "or word:5 by the texts' median length, as the summary says.")
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
                        help="Encoding of --lines/--sets/--jsonl/--csv/--tsv input.")
JOBS = typer.Option(0, "--jobs", "-j", metavar="N", rich_help_panel=PERFORMANCE,
                    help=f"Threads (0 = one per core; at most {MAX_JOBS}). The output is the same for any value.")
MEMORY = typer.Option(checks.MEMORY, "--memory", metavar="SIZE", rich_help_panel=PERFORMANCE,
                      help="Memory the pairs may take (K, M, G: powers of 1024); past it they are spilled to sorted "
                           "runs beside -o (or in TMPDIR) and merged: the same output.")


def check_memory(value: str) -> int:
    """--memory as bytes, or a usage error naming the flag (one line, exit 2) before any input is read."""
    from ..output.spill import parse_memory

    try:
        return parse_memory(value)
    except UsageError as e:
        fail(e)


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
                          help="Skip buckets of more than N distinct sets (reported on stderr). Default: no limit.")


LINES = typer.Option(False, "--lines", rich_help_panel=INPUT,
                     help="Each line of PATH is a document (id = line number), carried into the output as its "
                          "text. A line may hold up to 64 MiB.")


#: The input options every command that reads documents takes: (parameter name, type, option).
INPUT_OPTIONS = (
    ("lines", bool, LINES), ("sets", bool, SETS), ("jsonl", bool, JSONL), ("csv", bool, CSV), ("tsv", bool, TSV),
    ("parquet", bool, PARQUET), ("text_col", List[str], TEXT_COL), ("id_col", Optional[str], ID_COL),
    ("keep_col", List[str], KEEP_COL), ("keep_all", bool, KEEP_ALL),
    ("no_input_header", bool, NO_INPUT_HEADER), ("headerless", bool, HEADERLESS),
    ("quotechar", Optional[str], QUOTECHAR), ("delimiter", Optional[str], DELIMITER),
    ("tokens_col", Optional[str], TOKENS_COL),
    ("include", List[str], INCLUDE), ("exclude", List[str], EXCLUDE), ("hidden", bool, HIDDEN),
    ("no_ignore", bool, NO_IGNORE), ("min_bytes", int, MIN_BYTES), ("encoding", str, ENCODING),
)


def input_options(command):
    """Give a command (whose signature ends in ``**inputs``) the options of :data:`INPUT_OPTIONS`, so that
    every command reads input with the same options, help and defaults; :func:`read_input` reads them."""
    sig = inspect.signature(command)
    own = [p for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    added = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=kind)
             for name, kind, option in INPUT_OPTIONS]
    command.__signature__ = sig.replace(parameters=own + added)
    return command


#: The options that say what kind of file PATH is, by parameter name.
KINDS = ("lines", "sets", "jsonl", "csv", "tsv", "parquet")

#: The kinds whose documents are records with named columns.
RECORD_KINDS = ("jsonl", "csv", "tsv", "parquet")

#: The one message for a command run without its threshold (join adds what else it takes).
MISSING_THRESHOLD = "missing option '--threshold' (-t T)"


def input_kind(ctx: typer.Context) -> str:
    """The kind of input the options chose ("directory" by default); at most one of :data:`KINDS`."""
    kinds = [k for k in KINDS if ctx.params.get(k)]
    if len(kinds) > 1:
        raise typer.BadParameter(f"choose one of {', '.join('--' + k for k in KINDS)} "
                                 f"(got {', '.join('--' + k for k in kinds)})")
    return kinds[0] if kinds else "directory"


def read_input(ctx: typer.Context, paths=None, *, keep_all: bool | None = None, writes=()) -> Corpus:
    """The corpus named by the command's input options (its PATHs, or ``paths``); ``keep_all``, when given,
    in place of --keep-all (dedup carries every column of a table by default); ``writes``: files the command
    writes besides those its options name (compare's chord picture)."""
    p = ctx.params
    from ..shingles import hash_set_pieces  # here: the shingle stage loads only when a corpus is read

    corpus = read_corpus(p["paths"] if paths is None else paths, input_kind(ctx), include=p.get("include", ()),
                       exclude=p.get("exclude", ()), min_bytes=p.get("min_bytes", 0),
                       encoding=p.get("encoding", "utf-8"), id_field=p.get("id_col"),
                       text_field=p.get("text_col") or None, keep=p.get("keep_col", ()),
                       header=not (p.get("no_input_header") or p.get("headerless")), tokens_field=p.get("tokens_col"),
                       hidden=p.get("hidden", False), ignore=not p.get("no_ignore", False),
                       quotechar=p.get("quotechar"), delimiter=p.get("delimiter"),
                       keep_all=p.get("keep_all", False) if keep_all is None else keep_all,
                       hash_pieces=hash_set_pieces,
                       # A file below an input directory that the command will write: refused if read as a document.
                       protect=[*(p[k] for k in ("output", "missed", "plot") if p.get(k) is not None), *writes])
    if corpus.dialect is not None and not ctx.meta.get("allpairs.csv_dialect"):
        # Every CSV the run writes as the (first) CSV read was: its delimiter, quotes, line ends, byte-order mark.
        from ..output.escape import csv_dialect

        ctx.meta["allpairs.csv_dialect"] = corpus.dialect
        ctx.with_resource(csv_dialect(*corpus.dialect))
    return corpus


def verbatim_cells(on: bool):
    """The context (entered for the command's run, ``ctx.with_resource``) in which CSV cells are written
    verbatim when ``on`` (--verbatim-cells), guarded against formulas otherwise."""
    from ..output.escape import verbatim_cells as within

    return within(on)


def refuse_output_of_input(ctx: typer.Context, *outputs, inputs=()) -> None:
    """A usage error, before any work, if a file to be written is one of the files read
    (:func:`._checks.refuse_output_of_input`).

    ``outputs``: the files the command writes (None and '-' are stdout); the inputs are its PATHs, its
    --against and ``inputs`` (an index file).
    """
    p = ctx.params
    read = [*(p.get("paths") or []), *([p["against"]] if p.get("against") is not None else []), *inputs]
    checks.refuse_output_of_input(outputs, read)


def check_jobs(jobs: int) -> None:
    """Refuse a thread count outside 0..MAX_JOBS before any input is read (one line, exit 2)."""
    try:
        checks.refuse_jobs(jobs)
    except UsageError as e:
        fail(e)


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


def refuse_unused_input_options(ctx: typer.Context) -> None:
    """Input options that the kind of input chosen does not read."""
    kind = input_kind(ctx)
    if kind not in RECORD_KINDS:
        refuse(ctx, ("id_col", "text_col", "keep_col", "keep_all"), "without --jsonl, --csv, --tsv or --parquet")
    elif ctx.params.get("keep_all") and ctx.params.get("keep_col"):
        raise UsageError("--keep-all carries every column already; drop --keep-col")
    if kind not in ("csv", "tsv"):
        refuse(ctx, ("no_input_header", "headerless", "quotechar"), "without --csv or --tsv")
    if kind == "tsv":
        refuse(ctx, ("delimiter",), "with --tsv, split at tabs; read the file with --csv --delimiter CHAR")
    elif kind != "csv":
        refuse(ctx, ("delimiter",), "without --csv")
    if kind != "parquet":
        refuse(ctx, ("tokens_col",), "without --parquet")
    if kind in ("directory", "parquet"):
        refuse(ctx, ("encoding",), f"for {'a directory (files are read as UTF-8)' if kind == 'directory' else 'Parquet'}; "
                                   "it goes with --lines, --sets, --jsonl, --csv, --tsv")


def output_format(ctx: typer.Context, fmt: Format, output, *, own: str | None = None) -> Format:
    """The format to write: the one -o's extension names (``.tsv .csv .jsonl .parquet``), else --format's
    (TSV by default, and for stdout; ``own``, the kind of a table written back whole: CSV for a CSV, JSON
    Lines for JSON Lines); an extension that contradicts a --format given is a usage error."""
    named = checks.format_named(output)
    if named is None:
        return Format(own) if own in ("csv", "jsonl") and not given(ctx, "fmt") else fmt
    named = Format(named)
    if given(ctx, "fmt") and fmt is not named:
        raise UsageError(f"-o {output} names {named.value.upper()} by its extension, --format {fmt.value} "
                         "another; give one of them, or rename the file")
    return named


def check_table_output(ctx: typer.Context, fmt: Format, output, *, wide: bool = False) -> None:
    """Refuse a table format that cannot be written where asked, and --no-header where there is no header."""
    if fmt is Format.parquet:
        if output is None or str(output) == "-":
            raise UsageError("--format parquet is binary: write it to a file with -o FILE")
        if wide:
            raise UsageError("--wide lines are of varying width, no table: choose tsv, csv or jsonl")
    if fmt in (Format.jsonl, Format.parquet):
        refuse(ctx, ("no_header",), f"with --format {fmt.value}, which has no header row")
    if fmt is not Format.csv:
        refuse(ctx, ("verbatim",), f"with --format {fmt.value}: only CSV cells get a ' before a formula")


def refuse_unused_lsh_options(ctx: typer.Context, method_lsh: bool, bands, rows) -> None:
    """LSH options in exact mode, and --recall when --bands and --rows are given."""
    if not method_lsh:
        refuse(ctx, ("num_perm", "bands", "rows", "recall", "seed", "bits", "max_bucket", "verify"),
               "in exact mode; add --method lsh, or drop them")
    elif bands is not None and rows is not None:
        refuse(ctx, ("recall",), "when --bands and --rows are given (it chooses them)")


def spark_input_kind(paths, inputs: dict) -> str:
    """The one kind of input --engine spark reads (``directory`` unless --lines, --sets, --jsonl or --parquet),
    of one PATH; a usage error otherwise."""
    if len(paths) != 1:
        raise typer.BadParameter(f"--engine spark reads one PATH, got {len(paths)}")
    kinds = [k for k in ("lines", "sets", "jsonl", "parquet") if inputs[k]]
    if len(kinds) > 1:
        raise typer.BadParameter(f"choose one of --lines, --sets, --jsonl, --parquet (got "
                                 f"{', '.join('--' + k for k in kinds)})")
    return kinds[0] if kinds else "directory"
