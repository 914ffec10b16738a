"""The bounded local run: a large input cleaned in batches of files, with the rows of one run over all of them.

Beam's local runner (the FnApiRunner) holds every shuffle and side input of a run in its processes, so one run over
all the files needs memory that grows with the corpus (docs/runners.md). A run that leaves the runner to newsclean
(:func:`~newsclean.pipeline.runner.chooses_local_mode`: no ``--runner``, no ``--direct_*`` flag) and reads more
than ``--batch-mib`` (:attr:`~newsclean.pipeline.options.CleanConfig.batch_bytes`) of WARC files runs in three steps instead, into the same staging folder:

1. **Evidence**, one Beam run over every file: :class:`~newsclean.pipeline.stages.LearnSiteEvidence`, so the
   neighbour samples and the URL sections are chosen over all the files, as in one run; its two outputs (one small
   value per key) go to ``STAGING/_evidence/`` (:class:`WritePickled`).
2. **Batches**, one Beam run per batch of files (:func:`file_batches`): reading, filtering and cleaning
   (:func:`~newsclean.pipeline.stages.read_and_clean`) with that evidence read back from disk as side inputs
   (:class:`ReadPickled`, not learnt again); each article's MinHash is computed once
   (:func:`~newsclean.pipeline.dedup.keyed_article`) and the articles wait in the batch's ``_spill/articles/``,
   their dedup keys in ``_spill/keys/``; rejects and counts are written as a run writes them.
3. **Dedup**, in this process (:func:`write_deduplicated`): :func:`~newsclean.pipeline.dedup.dedup_decisions` over
   every batch's keys (the graph's decision functions: exact winners, the corpus, near-duplicate clusters), then
   the spilled rows streamed through :func:`~newsclean.pipeline.dedup.decided` into ``articles/``, ``_index/`` and
   ``duplicates/``; the batches' rejects move to ``rejects/`` and their counts are summed into ``_counts/``.

The rows are those of one run over the same files (articles, rejects, duplicates); only the part files differ (one
per spill file). One batch's run holds what its batch needs, no dedup shuffle; the dedup step holds each kept
article's near-dedup entry (~1 KB) and the keys of the exact-duplicate groups. Publishing, the lock, the summary,
incremental runs and the accounting check are :func:`newsclean.pipeline.clean.run_clean`'s, as for one run.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import pickle
from collections.abc import Iterator

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from newsclean.pipeline.dedup import (
    DUPLICATE_SCHEMA,
    DUPLICATES_DIR,
    KEYS_DIR,
    SPILL_DIR,
    DedupDecisions,
    NearDupParams,
    SpillArticles,
    SpillKeys,
    article_of,
    corpus_index,
    decided,
    dedup_decisions,
    drop_counts,
    key_of_row,
    keyed_article,
    repeated_hashes,
    spilled_article,
)
from newsclean.pipeline.file_patterns import literal_pattern
from newsclean.pipeline.incremental import (
    INDEX_DIR,
    INDEX_ROW_GROUP_BYTES,
    INDEX_SCHEMA,
    corpus_of,
    index_row,
    read_index,
    run_settings,
)
from newsclean.pipeline.options import CleanConfig
from newsclean.pipeline.progress import PROGRESS
from newsclean.pipeline.runner import BeamArgs, chooses_local_mode, run_graph
from newsclean.pipeline.stages import (
    ARTICLE_ROW_GROUP_BYTES,
    ARTICLES_DIR,
    COUNTS_DIR,
    PARQUET_SUFFIX,
    REJECTS_DIR,
    FindWarcFiles,
    LearnSiteEvidence,
    WriteCounts,
    WriteParquet,
    json_line,
    read_and_clean,
    with_settings,
)
from newsclean.pipeline.summary import read_counts
from newsclean.schemas.records import ARTICLE_SCHEMA, to_row

log = logging.getLogger(__name__)

#: Folders of the staging folder: the learnt evidence (step 1) and one folder per batch (step 2).
EVIDENCE_DIR, BATCHES_DIR = "_evidence", "_batches"
#: The two outputs of :class:`~newsclean.pipeline.stages.LearnSiteEvidence`, as folders of ``_evidence/``.
EVIDENCE, SECTIONS = "evidence", "sections"
#: One pickled value (:class:`WritePickled`): internal to one run, read back by the same code.
VALUE_SCHEMA = pa.schema([pa.field("value", pa.binary(), nullable=False)])


def file_batches(files: list[tuple[str, int]], batch_bytes: int) -> list[list[str]]:
    """``files`` (``(path, size in bytes)``, in order) cut into consecutive batches of at most ``batch_bytes``
    bytes each; a file larger than that is a batch of its own. Returns the batches' paths."""
    batches: list[list[str]] = []
    size = 0
    for path, n in files:
        if not batches or (size + n > batch_bytes and batches[-1]):
            batches.append([])
            size = 0
        batches[-1].append(path)
        size += n
    return batches


def runs_in_batches(beam_args: BeamArgs, files: list[tuple[str, int]], batch_bytes: int) -> bool:
    """Whether a run with ``beam_args`` over ``files`` (``(path, size)``) runs in batches: ``batch_bytes`` (the
    batch size, :attr:`~newsclean.pipeline.options.CleanConfig.batch_bytes`) is not 0, newsclean chooses its local
    mode (:func:`~newsclean.pipeline.runner.chooses_local_mode`) and the files hold more than ``batch_bytes``."""
    return batch_bytes > 0 and chooses_local_mode(beam_args) and sum(n for _, n in files) > batch_bytes


# --------------------------------------------------------------------------------------------
# The graphs of steps 1 and 2
# --------------------------------------------------------------------------------------------


def _value_row(value) -> dict:
    return {"value": pickle.dumps(value, protocol=5)}


def _row_value(row: dict):
    return pickle.loads(row["value"])


class WritePickled(beam.PTransform):
    """Any picklable values -> ``FOLDER/part-*.parquet`` (:data:`VALUE_SCHEMA`, one pickled value a row)."""

    def __init__(self, folder: str):
        super().__init__()
        self.folder = folder

    def expand(self, values):
        return (values | "Rows" >> beam.Map(_value_row)
                | "Write" >> beam.io.WriteToParquet(FileSystems.join(self.folder, "part"), VALUE_SCHEMA,
                                                    codec="snappy", file_name_suffix=PARQUET_SUFFIX))


class ReadPickled(beam.PTransform):
    """The values :class:`WritePickled` wrote to ``folder`` (input: the pipeline)."""

    def __init__(self, folder: str):
        super().__init__()
        self.folder = folder

    def expand(self, pbegin):
        return (pbegin | "Read" >> beam.io.ReadFromParquet(FileSystems.join(self.folder, "*" + PARQUET_SUFFIX))
                | "Values" >> beam.Map(_row_value))


def build_evidence_pipeline(p: beam.Pipeline, patterns: list[str], config: CleanConfig, folder: str) -> None:
    """Step 1: learn the site evidence and the URL sections of all the files of ``patterns`` (labels as in one
    run's graph) and write them to ``folder/evidence/`` and ``folder/sections/``."""
    paths = p | "FindWarcFiles" >> FindWarcFiles(patterns)
    learnt = paths | "LearnSiteEvidence" >> LearnSiteEvidence(config.neighbour_sample, config.chain)
    _ = learnt[EVIDENCE] | "WriteEvidence" >> WritePickled(FileSystems.join(folder, EVIDENCE))
    _ = learnt[SECTIONS] | "WriteSections" >> WritePickled(FileSystems.join(folder, SECTIONS))


def build_batch_pipeline(p: beam.Pipeline, patterns: list[str], config: CleanConfig, evidence: str,
                         params: NearDupParams = NearDupParams()) -> None:
    """Step 2 for one batch, the files of ``patterns``: read, filter and clean them with the evidence and sections
    in the folder ``evidence`` (step 1's) as side inputs; into ``config.out`` (the batch's folder) write the
    articles with their MinHash (``_spill/articles/``), their keys (``_spill/keys/``), the rejects and the counts."""
    paths = p | "FindWarcFiles" >> FindWarcFiles(patterns)
    sections = p | "ReadSections" >> ReadPickled(FileSystems.join(evidence, SECTIONS))
    learnt = p | "ReadEvidence" >> ReadPickled(FileSystems.join(evidence, EVIDENCE))
    cleaned = read_and_clean(paths, sections, learnt, config)
    keyed = cleaned.articles | "ArticleKeys" >> beam.Map(keyed_article, params)  # the MinHash, computed once
    _ = keyed | "SpillArticles" >> SpillArticles(config.out)
    _ = keyed | "SpillKeys" >> SpillKeys(config.out)
    _ = {"rejects": cleaned.rejects} | "WriteParquet" >> WriteParquet(config.out, run_settings(config))
    _ = cleaned.counts | "WriteCounts" >> WriteCounts(config.out)


# --------------------------------------------------------------------------------------------
# Step 3: dedup over the spilled keys, the spilled rows streamed to the outputs
# --------------------------------------------------------------------------------------------


def _parquet_files(folder: str) -> list[str]:
    """The Parquet files directly in ``folder``, sorted."""
    pattern = FileSystems.join(folder, "*" + PARQUET_SUFFIX)
    return sorted(m.path for r in FileSystems.match([pattern]) for m in r.metadata_list)


def _open(path: str):
    return FileSystems.open(path, mime_type="application/octet-stream",
                            compression_type=CompressionTypes.UNCOMPRESSED)


def parquet_rows(path: str, columns: list[str] | None = None, batch_rows: int = 100) -> Iterator[dict]:
    """The rows of the Parquet file ``path`` as dicts (only ``columns`` when given), ``batch_rows`` at a time."""
    with _open(path) as f:
        for batch in pq.ParquetFile(f).iter_batches(batch_size=batch_rows, columns=columns, use_threads=False):
            yield from batch.to_pylist()


class ParquetRows:
    """Row dicts written to one new Parquet file (any Beam filesystem) as Beam's ``WriteToParquet`` writes them:
    ``schema``, snappy, record batches of ``batch_rows`` rows gathered into row groups of about
    ``row_group_bytes`` bytes of Arrow data. A file closed with no row holds the schema (an empty table).
    Use as a context manager; raises what pyarrow and the filesystem raise."""

    def __init__(self, path: str, schema: pa.Schema, row_group_bytes: int = ARTICLE_ROW_GROUP_BYTES,
                 batch_rows: int = 100):
        self.schema, self.row_group_bytes, self.batch_rows = schema, row_group_bytes, batch_rows
        self._file = FileSystems.create(path, mime_type="application/octet-stream",
                                        compression_type=CompressionTypes.UNCOMPRESSED)
        self._writer = pq.ParquetWriter(self._file, schema, compression="snappy", use_compliant_nested_type=False)
        self._rows: list[dict] = []
        self._batches: list[pa.RecordBatch] = []
        self._bytes = 0
        self.written = 0

    def append(self, row: dict) -> None:
        """Add one row (a dict of the schema's columns)."""
        self._rows.append(row)
        if len(self._rows) >= self.batch_rows:
            self._to_batch()

    def _to_batch(self) -> None:
        if self._rows:
            batch = pa.RecordBatch.from_pylist(self._rows, schema=self.schema)
            self._batches.append(batch)
            self._bytes += batch.nbytes
            self.written += len(self._rows)
            self._rows = []
        if self._bytes >= self.row_group_bytes:
            self._flush()

    def _flush(self) -> None:
        if self._batches:
            self._writer.write_table(pa.Table.from_batches(self._batches, schema=self.schema))
        self._batches, self._bytes = [], 0

    def close(self) -> None:
        """Write what is left and close the file."""
        self._to_batch()
        self._flush()
        self._writer.close()
        self._file.close()

    def __enter__(self) -> ParquetRows:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def spilled_keys(folders: list[str]) -> Iterator:
    """The :class:`~newsclean.pipeline.dedup.ArticleKey` of every article the batches of ``folders`` spilled."""
    for folder in folders:
        for path in _parquet_files(FileSystems.join(folder, SPILL_DIR, KEYS_DIR)):
            for row in parquet_rows(path, ["key"], batch_rows=1000):
                yield key_of_row(row)


def batch_decisions(folders: list[str], corpus_out: str | None,
                    params: NearDupParams = NearDupParams()) -> DedupDecisions:
    """:func:`~newsclean.pipeline.dedup.dedup_decisions` over the keys the batches of ``folders`` spilled: their
    content hashes are read first (:func:`~newsclean.pipeline.dedup.repeated_hashes`), then the keys streamed.
    ``corpus_out``: the output folder whose corpus an incremental run dedups against (its ``_index``), or None."""
    hashes = (row["content_hash"] for folder in folders
              for path in _parquet_files(FileSystems.join(folder, SPILL_DIR, KEYS_DIR))
              for row in parquet_rows(path, ["content_hash"], batch_rows=10000))
    repeated = repeated_hashes(hashes)
    corpus = corpus_index(read_index(corpus_out).to_pylist()) if corpus_out is not None else None
    return dedup_decisions(spilled_keys(folders), repeated, params, corpus)


def write_deduplicated(staging: str, folders: list[str], decisions: DedupDecisions, settings: dict) -> dict[str, int]:
    """Stream the articles the batches of ``folders`` spilled through ``decisions``
    (:func:`~newsclean.pipeline.dedup.decided`): each kept one to ``STAGING/articles/`` and ``STAGING/_index/``
    (one part file per spill file), each dropped one's row, and the exact losers' rows, to ``STAGING/duplicates/``.
    ``settings``: the run's (:func:`~newsclean.pipeline.incremental.run_settings`), in the files' metadata.
    Returns the dedup counts (``duplicates_dropped``, ``near_duplicates_dropped``, ``corpus_duplicates_dropped``)."""
    counts = collections.Counter(decisions.counts)
    article_schema = with_settings(ARTICLE_SCHEMA, settings)
    duplicates_path = FileSystems.join(staging, DUPLICATES_DIR, "part-00000-of-00001" + PARQUET_SUFFIX)
    with ParquetRows(duplicates_path, with_settings(DUPLICATE_SCHEMA, settings)) as duplicates:
        for row in decisions.rows:
            duplicates.append(row)
        for i, folder in enumerate(folders):
            for j, path in enumerate(_parquet_files(FileSystems.join(folder, SPILL_DIR, ARTICLES_DIR))):
                name = f"part-b{i:05d}-{j:05d}" + PARQUET_SUFFIX
                with (ParquetRows(FileSystems.join(staging, ARTICLES_DIR, name), article_schema) as articles,
                      ParquetRows(FileSystems.join(staging, INDEX_DIR, name), INDEX_SCHEMA, INDEX_ROW_GROUP_BYTES,
                                  batch_rows=1000) as index):
                    for row in parquet_rows(path):
                        out = decided(spilled_article(row), decisions)
                        if out is None:
                            continue
                        if isinstance(out, dict):
                            duplicates.append(out)
                            counts.update(dict(drop_counts(out)))
                            continue
                        articles.append(to_row(article_of(out)))
                        index.append(index_row(out))
    return dict(counts)


def move_rejects(staging: str, folders: list[str]) -> int:
    """Move the rejects' part files of the batches of ``folders`` into ``STAGING/rejects/``, each name prefixed
    by its batch's folder name; returns the files moved."""
    src, dst = [], []
    for folder in folders:
        batch = folder.rstrip("/").rsplit("/", 1)[-1]
        for path in _parquet_files(FileSystems.join(folder, REJECTS_DIR)):
            src.append(path)
            dst.append(FileSystems.join(staging, REJECTS_DIR, f"{batch}-{path.rsplit('/', 1)[-1]}"))
    target = FileSystems.join(staging, REJECTS_DIR)
    if src and not FileSystems.exists(target):
        FileSystems.mkdirs(target)
    FileSystems.rename(src, dst)
    return len(src)


def write_counts(staging: str, counts: dict[str, int]) -> str:
    """Write ``counts`` to ``STAGING/_counts/counts.jsonl`` as :class:`~newsclean.pipeline.stages.WriteCounts`
    writes them (one ``{"name", "value"}`` line each); returns the path."""
    path = FileSystems.join(staging, COUNTS_DIR, "counts.jsonl")
    with FileSystems.create(path, mime_type="application/json",
                            compression_type=CompressionTypes.UNCOMPRESSED) as f:
        for item in sorted(counts.items()):
            f.write((json_line(item) + "\n").encode("utf-8"))
    return path


# --------------------------------------------------------------------------------------------
# The three steps
# --------------------------------------------------------------------------------------------


def run_in_batches(config: CleanConfig, files: list[tuple[str, int]], beam_args: BeamArgs,
                   params: NearDupParams = NearDupParams()) -> None:
    """Clean ``files`` (``(path, size)``) into ``config.out`` (the run's staging folder) in the three steps of the
    module docstring, batches of at most ``config.batch_bytes`` of WARC bytes (:func:`file_batches`), each Beam run with
    ``beam_args`` (the local mode of :func:`~newsclean.pipeline.runner.runner_options` over its own files). Leaves
    in ``config.out`` what one run's graph writes there (``articles/``, ``rejects/``, ``duplicates/``,
    ``_index/``, ``_counts/``), plus the steps' own folders (``_evidence/``, ``_batches/``, deleted with the
    staging folder). Raises what :func:`~newsclean.pipeline.runner.run_to_completion` raises."""
    staging = config.out
    paths = [literal_pattern(path) for path, _ in files]  # Beam file patterns, each matching its path only
    evidence = FileSystems.join(staging, EVIDENCE_DIR)
    batch_bytes = config.batch_bytes
    batches = [[literal_pattern(path) for path in batch] for batch in file_batches(files, batch_bytes)]
    PROGRESS.note(f"{len(files):,} WARC files ({sum(n for _, n in files) / 2**20:,.0f} MiB): site evidence from all "
                  f"of them, then cleaning in {len(batches)} batches of at most {batch_bytes / 2**20:,.0f} MiB")
    run_graph(lambda p: build_evidence_pipeline(p, paths, config, evidence), beam_args, paths)
    folders = []
    for i, batch in enumerate(batches):
        folder = FileSystems.join(staging, BATCHES_DIR, f"b{i:05d}")
        PROGRESS.note(f"batch {i + 1} of {len(batches)}: {len(batch):,} WARC files")
        log.info("batch %d of %d: %d WARC files into %s", i + 1, len(batches), len(batch), folder)
        batch_config = dataclasses.replace(config, out=folder)
        run_graph(lambda p, b=batch, c=batch_config: build_batch_pipeline(p, b, c, evidence, params), beam_args, batch)
        folders.append(folder)
    PROGRESS.note("deduplicating the batches' articles")
    decisions = batch_decisions(folders, corpus_of(staging) if config.incremental else None, params)
    counts = collections.Counter(write_deduplicated(staging, folders, decisions, run_settings(config)))
    for folder in folders:
        counts.update(read_counts(folder))
    move_rejects(staging, folders)
    write_counts(staging, dict(counts))
