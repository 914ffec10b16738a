"""Output fingerprints: is the chain's output, or a cleaning run's, the same as before a change?

Two kinds, each a TSV with one line per item and a digest of everything the item holds:

* ``chains``: every named chain (``newsclean.transforms.chain.CONFIGS``) on every page of the shared data
  sets, with the static-noise signature learnt from the page's neighbour group as ``newsclean eval`` learns
  it (:mod:`newsclean_eval.runner`): per page the SHA-1 of the extraction's title, text, cleaned HTML,
  dates, language, word count, per-stage counts and metadata, or the reject reason;
* ``corpus``: the rows of a ``newsclean clean`` output folder (``articles/``, ``rejects/``, ``duplicates/``),
  each keyed by its provenance, the run-dependent columns (pipeline version) left out.

``compare`` prints the lines that differ between two such files and exits 1 when any does::

    python -m newsclean_eval.fingerprint chains --out before.tsv [--datasets all] [--chains all] [--jobs 2]
    python -m newsclean_eval.fingerprint corpus OUT_FOLDER --out before-corpus.tsv
    python -m newsclean_eval.fingerprint compare before.tsv after.tsv

A refactoring that must not change the output is checked this way (page for page, every chain).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from newsclean_eval.datasets import LOADERS, load
from newsclean_eval.runner import Runner, default_jobs, group_pages, neighbour_sample, quiet_worker
from newsclean_eval.systems import DEFAULT_NEIGHBOURS

#: Article columns that depend on the run, not on the page (left out of the corpus fingerprint).
RUN_COLUMNS = frozenset({"pipeline_version"})


def _digest(parts: Iterable[object]) -> str:
    h = hashlib.sha1()
    for part in parts:
        h.update(repr(part).encode("utf-8", "surrogatepass"))
        h.update(b"\x1f")
    return h.hexdigest()


def extraction_digest(extraction) -> str:
    """SHA-1 over every field of an ``Extraction`` (metadata included, ``article_body`` too)."""
    meta = dataclasses.asdict(extraction.metadata) if extraction.metadata is not None else None
    fields = {f.name: getattr(extraction, f.name) for f in dataclasses.fields(extraction) if f.name != "metadata"}
    return _digest([sorted(fields.items(), key=lambda kv: kv[0]), sorted(meta.items()) if meta else None])


def _chain_group(task: tuple) -> list[str]:
    """Fingerprint lines of one neighbour group for the given chains: ``dataset, page, chain, digest``."""
    from newsclean.transforms.chain import CONFIGS
    from newsclean_eval.runner import _Signatures, decode_page

    dataset, pages, chains, neighbours = task
    quiet_worker()
    htmls = {p.page_id: decode_page(p) for p in pages}
    sigs = _Signatures(htmls)
    lines = []
    for name in chains:
        config = CONFIGS[name]
        signature = None
        if config.static is not None:
            signature = sigs.get(neighbour_sample(pages, neighbours), config.static)[0]
        for page in pages:
            lines.append(f"{dataset}\t{page.page_id}\t{name}\t{_page_digest(htmls[page.page_id], signature, config)}")
    return lines


def _page_digest(html: str, signature, config) -> str:
    from newsclean.transforms.chain import extract_article
    from newsclean.transforms.errors import ExtractionError

    if not html:
        return "reject:empty_body"
    try:
        return extraction_digest(extract_article(html, signature, config))
    except ExtractionError as exc:
        return f"reject:{exc.reason.value}:{_digest([exc.message])[:12]}"
    except Exception as exc:  # noqa: BLE001 - a crash is an output too, and must stay the same
        return f"crash:{type(exc).__name__}"


def chain_fingerprints(datasets: Sequence[str], chains: Sequence[str], jobs: int,
                       neighbours: int = DEFAULT_NEIGHBOURS) -> list[str]:
    """Sorted fingerprint lines of ``chains`` on every page of ``datasets`` (see module docstring)."""
    tasks = []
    for dataset in datasets:
        for pages in group_pages(load(dataset)).values():
            tasks.append((dataset, tuple(pages), tuple(chains), neighbours))
    tasks.sort(key=lambda t: -len(t[1]))
    with Runner(jobs, progress=lambda line: None) as runner:
        results = runner.pool.imap_unordered(_chain_group, tasks) if runner.pool else map(_chain_group, tasks)
        lines = [line for group in results for line in group]
    return sorted(lines)


def _table_rows(folder: Path, table: str) -> list[dict]:
    """The rows of one table of a ``newsclean clean`` output: its ``*.jsonl.gz`` files (``--format jsonl``; timestamps
    parsed back, so both formats give the same rows) or its Parquet files (Hive partitions read as columns)."""
    import pyarrow.dataset as ds

    from newsclean.pipeline.dedup import DUPLICATE_SCHEMA
    from newsclean.pipeline.formats import SUFFIXES, read_rows, row_files
    from newsclean.schemas.records import ARTICLE_SCHEMA, REJECT_SCHEMA

    jsonl = row_files(str(folder), (SUFFIXES["jsonl"],))
    if jsonl:
        schema = {"articles": ARTICLE_SCHEMA, "rejects": REJECT_SCHEMA, "duplicates": DUPLICATE_SCHEMA}[table]
        return [row for path in jsonl for row in read_rows(path, schema)]
    return ds.dataset(str(folder), format="parquet", partitioning="hive").to_table().to_pylist()


def corpus_fingerprints(out: Path) -> list[str]:
    """Sorted fingerprint lines of the rows under ``out``'s ``articles/``, ``rejects/`` and ``duplicates/``
    (Parquet or JSON Lines): ``table, warc file, offset, digest of the row's other columns``."""
    lines = []
    for table in ("articles", "rejects", "duplicates"):
        folder = out / table
        if not folder.exists():
            continue
        rows = _table_rows(folder, table)
        for row in rows:
            row = {k: v for k, v in row.items() if k not in RUN_COLUMNS}
            where = f"{row.get('warc_file', '')}\t{row.get('warc_offset', '')}"
            lines.append(f"{table}\t{where}\t{_digest(sorted(row.items()))}")
    return sorted(lines)


def compare(before: Path, after: Path) -> int:
    """Print the lines of ``before`` and ``after`` that differ (by their key columns); 1 when any does."""
    def keyed(path: Path) -> dict[str, str]:
        out = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            key, _, value = line.rpartition("\t")
            out[key] = value
        return out

    a, b = keyed(before), keyed(after)
    changed = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
    for key in changed[:50]:
        print(f"{key}\t{a.get(key, '-')}\t{b.get(key, '-')}")
    print(f"{len(changed)} of {len(a.keys() | b.keys())} items differ", file=sys.stderr)
    return 1 if changed else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m newsclean_eval.fingerprint", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    chains = sub.add_parser("chains", help="every named chain on every shared page")
    chains.add_argument("--out", type=Path, required=True)
    chains.add_argument("--datasets", default="all", help="comma-separated data sets, or all")
    chains.add_argument("--chains", default="all", help="comma-separated chain names, or all")
    chains.add_argument("--jobs", type=int, default=default_jobs())
    corpus = sub.add_parser("corpus", help="the rows of a newsclean clean output folder")
    corpus.add_argument("folder", type=Path)
    corpus.add_argument("--out", type=Path, required=True)
    comp = sub.add_parser("compare", help="the items that differ between two fingerprint files")
    comp.add_argument("before", type=Path)
    comp.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    if args.command == "compare":
        return compare(args.before, args.after)
    if args.command == "chains":
        from newsclean.transforms.chain import CONFIGS

        datasets = list(LOADERS) if args.datasets == "all" else args.datasets.split(",")
        names = list(CONFIGS) if args.chains == "all" else args.chains.split(",")
        lines = chain_fingerprints(datasets, names, args.jobs)
    else:
        lines = corpus_fingerprints(args.folder)
    args.out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    print(f"{len(lines)} fingerprints -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
