"""``allpairs join``: every pair of documents at or above a threshold, to stdout or a file."""
from __future__ import annotations

import time
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from ..errors import AllPairsError
from ..join import join as run_join
from ..pairs import PairWriter, open_output
from ._app import Bar, app, fail, summary, warn_skipped
from ._options import (BANDS, BITS, ENCODING, EXCLUDE, ID_FIELD, INCLUDE, JOBS, JSONL, LINES, MAX_BUCKET, MIN_BYTES,
                       MIN_SHINGLES, NO_NORMALIZE, NUM_PERM, PATH, QUIET, RECALL, ROWS, SEED, SETS, SHINGLE,
                       TEXT_FIELD, THRESHOLD, Format, check_jobs, read_input)


class Method(str, Enum):
    exact = "exact"
    lsh = "lsh"


class Verify(str, Enum):
    exact = "exact"
    estimate = "estimate"


@app.command("join")
def join_command(
    path: str = PATH, threshold: str = THRESHOLD, lines: bool = LINES, sets: bool = SETS, jsonl: bool = JSONL,
    shingle: Optional[str] = SHINGLE, no_normalize: bool = NO_NORMALIZE, include: List[str] = INCLUDE,
    exclude: List[str] = EXCLUDE, min_bytes: int = MIN_BYTES, min_shingles: int = MIN_SHINGLES,
    encoding: str = ENCODING, id_field: str = ID_FIELD, text_field: str = TEXT_FIELD,
    method: Method = typer.Option(Method.exact, "--method", "-m", help="exact: prefix-filter join, every pair. lsh: MinHash + LSH candidates, verified; finds a pair of similarity s with probability P(s)."),
    num_perm: int = NUM_PERM, bands: Optional[int] = BANDS, rows: Optional[int] = ROWS, recall: float = RECALL,
    seed: int = SEED, bits: Optional[int] = BITS, max_bucket: Optional[int] = MAX_BUCKET,
    verify: Verify = typer.Option(Verify.exact, "--verify", help="LSH: exact (default) checks every candidate; estimate keeps the MinHash estimate, marked '~' in TSV and named 'estimate' in CSV/JSON."),
    fmt: Format = typer.Option(Format.tsv, "--format", "-f", help="tsv: left, right, similarity. csv and jsonl add overlap and both set sizes."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write pairs to FILE (atomically) instead of stdout."),
    count: bool = typer.Option(False, "--count", help="Print only the number of pairs."),
    jobs: int = JOBS, quiet: bool = QUIET,
) -> None:
    """Print every pair of documents whose shingle sets have Jaccard similarity >= THRESHOLD.

    Pairs are sorted by left then right document, in input order (paths sorted,
    or line order); left comes before right. The similarity is truncated to 6
    decimals.
    """
    check_jobs(jobs)
    bar = Bar(not quiet)
    try:
        try:
            corpus = read_input(path, lines, sets, jsonl, include, exclude, min_bytes, encoding, id_field, text_field)
            res = run_join(corpus, threshold, method=method.value, shingle=shingle, normalize=not no_normalize,
                           min_shingles=min_shingles, jobs=jobs or None, num_perm=num_perm, bands=bands,
                           rows=rows, recall=recall, seed=seed, bits=bits, max_bucket=max_bucket,
                           verify=verify.value, progress=bar)
        finally:
            bar.close()
        if not quiet:
            warn_skipped(res.stats)
        write_seconds = None
        if count:
            typer.echo(len(res.pairs))
        else:
            t0 = time.perf_counter()
            writer = PairWriter(res.ids, fmt.value, texts=res.shown, estimated=res.pairs.estimated)
            with open_output(output) as out:
                writer.write(res.pairs, out)
            write_seconds = time.perf_counter() - t0
        if not quiet:
            summary(res, write_seconds)
    except AllPairsError as e:
        fail(e)
