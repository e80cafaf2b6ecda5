"""Every command on both engines, their outputs compared row for row: the Spark engine must give the local one's.

Runs ``join``, ``join --clusters``, ``dedup`` (and ``--removed``), R–S joins and
the LSH join with ``--engine spark --master local[2]`` and with the local engine,
in one process (one Spark session), on inputs shaped as users have them: a
password list as ``--lines``, JSON Lines records with unicode ids, empty texts,
nulls, lists, a Parquet table with integer ids, null texts and typed columns
(UTC and naive timestamps, dates, decimals, float32, maps, structs), click-stream
sets as ``--sets``, and a directory. A local run writes ``-o FILE.parquet``
(R–S joins: TSV, as Spark writes those), the Spark run its dataset; both are read
back with pyarrow and compared as Python values, and their column names and
types listed where they differ (Spark's overlaps and sizes are int32, the local
engine's int64: not counted as a difference). Then ``--count`` on both. Exit 1
when any case differs.

    python scripts/check_spark_parity.py [--only NAME ...] [--keep DIR]

The passwords and the click streams are the shared data folder's
(``$ALLPAIRS_DATASETS``, else ``../shared/datasets``); without them those cases
are skipped, and say so.
"""
from __future__ import annotations

import argparse
import datetime
import decimal
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("ALLPAIRS_DATASETS", REPO.parent / "shared" / "datasets"))
SPARK = ["--engine", "spark", "--master", "local[2]"]
#: Columns whose integer width differs by engine by design (Spark writes int32).
WIDTHS = {"overlap", "left_size", "right_size", "removed_size", "kept_size", "cluster", "cluster_size"}


def make_inputs(folder: Path) -> dict[str, list[str]]:
    """The inputs, written in ``folder``; name -> the input's flags (threshold and shingle included)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(7)
    inputs = {"dir": [str(REPO / "datasets" / "tiny" / "corpus"), "-t", "0.5", "-s", "word:1"]}
    words = ["the quick brown fox", "the quick brown fox", "lorem ipsum dolor", "lorem ipsum dolor sit", "zzz",
             "the quick brown fox jumps"]
    n = len(words)
    utc = datetime.timezone.utc
    pq.write_table(pa.table({
        "id": [f"d{i}" for i in range(n)], "text": words,
        "ts": pa.array([datetime.datetime(2026, 1, i + 1, 12, tzinfo=utc) for i in range(n)],
                       pa.timestamp("us", tz="UTC")),
        "naive": pa.array([datetime.datetime(2026, 1, i + 1, 12) for i in range(n)], pa.timestamp("us")),
        "day": pa.array([datetime.date(2026, 1, i + 1) for i in range(n)], pa.date32()),
        "dec": pa.array([decimal.Decimal(f"{i}.25") for i in range(n)], pa.decimal128(10, 2)),
        "f32": pa.array([i / 3 for i in range(n)], pa.float32()),
        "m": pa.array([{"a": i} for i in range(n)], pa.map_(pa.string(), pa.int64())),
        "st": pa.array([{"x": i, "y": str(i)} for i in range(n)]),
    }), folder / "types.parquet")
    inputs["types"] = ["--parquet", str(folder / "types.parquet"), "-t", "0.5", "-s", "word:1"]
    passwords = SHARED / "passwords-john.txt"
    if passwords.exists():
        pw = passwords.read_text(encoding="latin-1").splitlines()[:1500]
        (folder / "lines.txt").write_text("\n".join(pw) + "\n", encoding="utf-8")
        with open(folder / "docs.jsonl", "w", encoding="utf-8") as f:
            for i, p in enumerate(pw):
                f.write(json.dumps({"id": f"ü{i}" if i % 3 else f"id {i}", "text": p if i % 50 else "",
                                    "n": i if i % 7 else None, "score": rng.random() if i % 5 else None,
                                    "tags": [p[:1]] if i % 4 else []}, ensure_ascii=False) + "\n")
        with open(folder / "other.jsonl", "w", encoding="utf-8") as f:
            for i, p in enumerate(pw[::5]):
                f.write(json.dumps({"id": f"o{i}", "text": p + "x", "src": i % 3}) + "\n")
        pq.write_table(pa.table({"id": pa.array(range(1000, 1000 + len(pw)), pa.int64()),
                                 "text": [p if i % 60 else None for i, p in enumerate(pw)],
                                 "n": [2 * i for i in range(len(pw))]}), folder / "docs.parquet")
        inputs["lines"] = ["--lines", str(folder / "lines.txt"), "-t", "0.7"]
        inputs["jsonl"] = ["--jsonl", str(folder / "docs.jsonl"), "-t", "0.7", "-s", "char:3"]
        inputs["parquet"] = ["--parquet", str(folder / "docs.parquet"), "-t", "0.7", "-s", "char:3"]
    else:
        print(f"skipped: lines, jsonl, parquet and R–S cases ({passwords} not found)", file=sys.stderr)
    kosarak = SHARED / "kosarak-sample.dat"
    if kosarak.exists():
        (folder / "sets.txt").write_text("\n".join(kosarak.read_text().splitlines()[:4000]) + "\n")
        inputs["sets"] = ["--sets", str(folder / "sets.txt"), "-t", "0.5"]
    else:
        print(f"skipped: sets cases ({kosarak} not found)", file=sys.stderr)
    return inputs


def cases(inputs: dict[str, list[str]], folder: Path) -> dict[str, tuple[list[str], str]]:
    """name -> (the command's arguments, the local output's extension)."""
    tables = [k for k in ("jsonl", "parquet", "types") if k in inputs]
    out: dict[str, tuple[list[str], str]] = {}
    for kind, flags in inputs.items():
        commands = {"join": ["join"], "clusters": ["join", "--clusters"], "dedup": ["dedup"],
                    "removed": ["dedup", "--removed"], "containment": ["dedup", "--measure", "containment"]}
        if kind != "types":
            commands |= {"cosine": ["join", "--measure", "cosine"], "singletons": ["join", "--clusters", "--singletons"],
                         "min-shingles": ["dedup", "--min-shingles", "5"], "lsh": ["join", "--method", "lsh"],
                         "lsh-8x3": ["join", "--method", "lsh", "--bands", "8", "--rows", "3"]}
        if kind in tables:
            commands |= {"join-keep-all": ["join", "--keep-all"], "removed-keep-all": ["dedup", "--removed", "--keep-all"]}
        if kind == "sets":
            commands |= {"overlap": ["join", "--measure", "overlap"], "dice": ["dedup", "--measure", "dice"]}
        for name, command in commands.items():
            given = [*flags[:-2], "-t", "12"] if name == "overlap" else flags  # an overlap of 12 tokens
            out[f"{kind}:{name}"] = ([*command, *given], ".parquet")
    if "jsonl" in inputs:
        other = ["--against", str(folder / "docs.jsonl"), "--jsonl", str(folder / "other.jsonl"), "-s", "char:3"]
        out["against:jaccard"] = (["join", *other, "-t", "0.6"], ".tsv")
        out["against:containment"] = (["join", *other, "-t", "0.8", "--measure", "containment"], ".tsv")
        out["against:keep-col"] = (["join", *other, "-t", "0.6", "--keep-col", "text", "-f", "jsonl"], ".jsonl")
    return out


def read(path: Path, ext: str):
    """A Parquet file or dataset as (column names and types, rows); another file as its bytes."""
    if ext != ".parquet":
        return None, path.read_bytes()
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    return [(f.name, str(f.type)) for f in table.schema], table.to_pylist()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", default=[], help="case names (kind:command) or kinds to run")
    ap.add_argument("--keep", help="write inputs and outputs here and keep them (default: a temporary folder)")
    args = ap.parse_args(argv)
    from typer.testing import CliRunner

    from allpairs.cli import app

    def run(*a):
        return CliRunner().invoke(app, [str(x) for x in a], prog_name="allpairs")

    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="allpairs-parity-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        todo = cases(make_inputs(folder), folder)
        if args.only:
            todo = {k: v for k, v in todo.items() if k in args.only or k.split(":")[0] in args.only}
        bad = 0
        for name, (command, ext) in todo.items():
            t0 = time.perf_counter()
            stem = folder / name.replace(":", "-")
            shutil.rmtree(f"{stem}.spark", ignore_errors=True)
            a = run(*command, "-q", "-o", f"{stem}{ext}")
            b = run(*command, "-q", *SPARK, "-o", f"{stem}.spark{'' if ext == '.parquet' else ext}")
            if a.exit_code or b.exit_code:
                same = a.exit_code == b.exit_code and a.stderr == b.stderr
                print(f"{name}: exit {a.exit_code} / {b.exit_code} {'same' if same else 'DIFFERENT'}: "
                      f"{a.stderr.strip()[-200:]!r} / {b.stderr.strip()[-200:]!r}")
                bad += not same
                continue
            (types_a, rows_a), (types_b, rows_b) = (read(Path(f"{stem}{ext}"), ext),
                                                    read(Path(f"{stem}.spark{'' if ext == '.parquet' else ext}"), ext))
            counted = [run(*command, "-q", "--count", *engine) for engine in ([], SPARK)]
            counts = [c.stdout.strip() if c.exit_code == 0 else f"exit {c.exit_code}" for c in counted]
            widths = [] if types_a is None else [(x, y) for x, y in zip(types_a, types_b) if x != y]
            typed = types_a is None or (len(types_a) == len(types_b) and all(
                x[0] == y[0] and x[0] in WIDTHS and "int" in x[1] and "int" in y[1] for x, y in widths))
            ok = rows_a == rows_b and typed and counts[0] == counts[1]
            bad += not ok
            rows = len(rows_a) if isinstance(rows_a, list) else rows_a.count(b"\n")
            print(f"{name}: {rows:,} rows, count {counts[0]} / {counts[1]}, {'same' if ok else 'DIFFERENT'}"
                  f" ({time.perf_counter() - t0:.0f} s)")
            if not typed:
                print(f"  types {types_a} / {types_b}")
            if rows_a != rows_b:
                first = next((i for i, (x, y) in enumerate(zip(rows_a, rows_b)) if x != y), min(len(rows_a), len(rows_b)))
                print(f"  rows {len(rows_a)} / {len(rows_b)}; first difference at {first}")
        print(f"{len(todo)} cases, {bad} different")
        return 1 if bad else 0
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
