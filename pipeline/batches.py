"""The batched executor of the cleaning graph: a large local input cleaned in batches of files, so that memory
follows the batch, not the corpus; the rows are one run's, because the stages are the one graph's.

Beam's local runner (the FnApiRunner) holds every shuffle and side input of a run in its processes, so one run over
all the files needs memory that grows with the corpus (docs/runners.md). A run that leaves the runner to newsclean
(:func:`~newsclean.pipeline.runner.chooses_local_mode`: no ``--runner``, no ``--direct_*`` flag) and reads more
than ``--batch-mib`` (:attr:`~newsclean.pipeline.options.CleanConfig.batch_bytes`) of WARC files runs the graph of
:func:`~newsclean.pipeline.clean.build_pipeline` as several Beam runs instead, into the same staging folder:

1. **Evidence**, one Beam run over every file: :class:`~newsclean.pipeline.stages.LearnSiteEvidence`, so the
   neighbour samples and the URL sections are chosen over all the files, as in one run; its two outputs (one small
   value per key) and the sites of each file go to ``STAGING/_evidence/`` (:class:`WritePickled`).
2. **Batches**, one Beam run per batch of files (:func:`file_batches`): reading, filtering and cleaning
   (:func:`~newsclean.pipeline.stages.read_and_clean`) with that evidence read back from disk as side inputs
   (:class:`ReadPickled`, not learnt again), of the batch's own sites only (:func:`batch_sites`); the articles
   wait in the batch's ``_spill/articles/`` with their MinHash (:func:`~newsclean.pipeline.dedup.spill_articles`,
   as in one run), their dedup keys in ``_spill/keys/`` (:class:`~newsclean.pipeline.dedup.SpillKeys`), the
   rejects and counts in the batch's folder
   (the graph's :class:`~newsclean.pipeline.stages.WriteParquet` and :class:`~newsclean.pipeline.stages.WriteCounts`).
3. **Dedup and write**, one Beam run over every batch's spill (:func:`spilled_batches` as its inputs): the one
   graph's own dedup stages and sinks (:func:`~newsclean.pipeline.clean.dedup_and_write`) write ``articles/``,
   ``rejects/``, ``duplicates/``, ``_index/`` and ``_counts/``.

**Resuming.** Steps 1 and 2 each leave a completion marker (:data:`DONE_FILE`, written atomically once the step's
Beam run has finished, :func:`~newsclean.pipeline.output.write_marker`) in their folder, and the staging folder
holds the run's resume key (:func:`resume_key`: its settings, the batch size and each input file's path, size and
modification time). A batched run that was killed, failed or interrupted keeps its staging folder; the next run into the same
local ``OUT`` with the same key adopts it (:func:`adopt_staging`) and runs only the steps without a marker (a
batch's folder without one is deleted first), then step 3 again, so its rows are those of an uninterrupted run.
A different key (other settings, files or batch size) deletes the folder, as does any one-graph run: a run below
the batch size starts over.

One batch's run holds what its batch needs and no dedup shuffle; the last run holds the dedup shuffles of the
corpus's small keys (~3.5 KB an article: docs/runners.md) and streams the articles from the spill, in one process
(its input is the spill, not WARC files: :func:`~newsclean.pipeline.runner.with_local_mode` starts no workers).
Publishing, the lock, the summary, incremental runs and the accounting check are
:func:`newsclean.pipeline.clean.run_clean`'s, as for one run.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import pickle
from typing import NamedTuple

import apache_beam as beam
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from newsclean.pipeline.dedup import KEYS_DIR, SPILL_DIR, SpillKeys, key_of_row, spill_articles
from newsclean.pipeline.dedup_decisions import NearDupParams
from newsclean.pipeline.file_patterns import literal_pattern
from newsclean.pipeline.incremental import matched_file_stamps, run_settings
from newsclean.pipeline.options import CleanConfig
from newsclean.pipeline.output import (
    RESUME_FILE,
    discard_staging,
    read_marker,
    resumable_staging,
    write_marker,
)
from newsclean.pipeline.progress import PROGRESS
from newsclean.pipeline.runner import BeamArgs, chooses_local_mode, run_graph
from newsclean.pipeline.stages import (
    ARTICLES_DIR,
    PARQUET_SUFFIX,
    REJECTS_DIR,
    FindWarcFiles,
    LearnSiteEvidence,
    WriteCounts,
    WriteParquet,
    distinct_paths,
    read_and_clean,
)
from newsclean.pipeline.summary import read_counts
from newsclean.schemas.records import Reject, from_row

log = logging.getLogger(__name__)

#: Folders of the staging folder: the learnt evidence (step 1) and one folder per batch (step 2).
EVIDENCE_DIR, BATCHES_DIR = "_evidence", "_batches"
#: Step 1's outputs, as folders of ``_evidence/``: those of :class:`~newsclean.pipeline.stages.LearnSiteEvidence`,
#: with each file's sites (``(WARC file path, sites)``, so that a batch reads the evidence of its own sites only).
EVIDENCE, SECTIONS, FILE_SITES = "evidence", "sections", "file_sites"
#: Version of the rows step 1 writes (:data:`VALUE_SCHEMA`).
EVIDENCE_FORMAT = 2
#: What step 1's completion marker holds besides its files (its folders and :data:`EVIDENCE_FORMAT`): a folder an
#: older version left, without ``file_sites`` or with rows of another shape, is learnt again.
EVIDENCE_MARKER = {"outputs": [EVIDENCE, SECTIONS, FILE_SITES], "format": EVIDENCE_FORMAT}
#: The completion marker of step 1's folder and of each batch's folder (JSON: the files the step read, and for
#: step 1 :data:`EVIDENCE_MARKER`).
DONE_FILE = "_done.json"
#: One pickled value a row (:class:`WritePickled`), with the string a batch selects it by (``key``: the site of a value
#: keyed ``((site, ...), value)``, the path of a file's ``(path, sites)``): internal to one run, read back by the same
#: code.
VALUE_SCHEMA = pa.schema([pa.field("key", pa.string(), nullable=False), pa.field("value", pa.binary(), nullable=False)])


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
# Resuming a killed run
# --------------------------------------------------------------------------------------------


def resume_key(config: CleanConfig, files: list[tuple[str, int, float]]) -> dict:
    """The resume key of a batched run of ``config`` over ``files`` (``(path, size in bytes, modification time in
    seconds)``, :func:`~newsclean.pipeline.incremental.matched_file_stamps`): what its staged rows depend on, as JSON
    values: :func:`~newsclean.pipeline.incremental.run_settings`, ``--format``, the batch size, the incremental flag,
    the offsets files are read from, and each file's path, size and modification time (a file rewritten since is
    another file, as make and rsync take it; no extra read of the files)."""
    key = {"settings": run_settings(config), "output_format": config.output_format,
           "batch_bytes": config.batch_bytes, "incremental": config.incremental,
           "read_from": sorted(config.read_from), "files": [list(stamp) for stamp in files]}
    return json.loads(json.dumps(key, sort_keys=True))


def batched_resume_key(config: CleanConfig, patterns: list[str], beam_args: BeamArgs) -> dict | None:
    """:func:`resume_key` of the run of ``config`` over the files of ``patterns`` (one listing) when it runs in
    batches (:func:`runs_in_batches`), else None (a one-graph run is not resumed)."""
    stamps = matched_file_stamps(patterns)
    if not runs_in_batches(beam_args, [(path, size) for path, size, _ in stamps], config.batch_bytes):
        return None
    return resume_key(config, stamps)


def adopt_staging(out: str, key: dict | None) -> str | None:
    """The staging folder in ``out`` (:func:`~newsclean.pipeline.output.resumable_staging`) whose resume key is
    ``key``, made ready to resume: everything in it but the key, step 1's folder and the batches' folders deleted
    (step 3 runs again). Every other resumable staging folder in ``out`` is deleted. Returns None when none has
    ``key`` (or ``key`` is None). Call it under the output's lock."""
    adopted = None
    for staging in resumable_staging(out):
        if adopted is None and key is not None and read_marker(FileSystems.join(staging, RESUME_FILE)) == key:
            adopted = staging
            continue
        log.info("deleting %s, left by an interrupted run with other settings or input files", staging)
        discard_staging(staging)
    if adopted is not None:
        for name in os.listdir(adopted):  # resumable staging folders are local
            if name not in (RESUME_FILE, EVIDENCE_DIR, BATCHES_DIR):
                path = os.path.join(adopted, name)
                if os.path.isdir(path):
                    discard_staging(path)
                else:
                    os.remove(path)
        log.info("resuming the interrupted run in %s", adopted)
    return adopted


def start_resumable(staging: str, key: dict) -> None:
    """Record ``key`` (:func:`resume_key`) in the new staging folder ``staging``, so that the run can resume."""
    write_marker(FileSystems.join(staging, RESUME_FILE), key)


def _completed(folder: str, marker: dict) -> bool:
    """Whether ``folder`` holds the completion marker ``marker`` (:func:`_run_step`)."""
    return read_marker(FileSystems.join(folder, DONE_FILE)) == marker


def _run_step(folder: str, files: list[str], run, marker_fields: dict | None = None) -> bool:
    """Run one step over ``files`` into ``folder`` with ``run()`` unless an earlier run completed it (its marker
    names the same files and holds ``marker_fields``, a JSON object); then mark it completed. Returns whether it
    ran. A folder without that marker is deleted first (what a killed run, or an older version, left of it)."""
    marker = {"files": files} | (marker_fields or {})
    if _completed(folder, marker):
        return False
    discard_staging(folder)
    run()
    write_marker(FileSystems.join(folder, DONE_FILE), marker)
    return True


# --------------------------------------------------------------------------------------------
# The graphs of steps 1 and 2
# --------------------------------------------------------------------------------------------


def site_of(value: tuple) -> str:
    """The site of a value keyed ``((site, ...), value)`` (step 1's evidence and URL sections)."""
    return value[0][0]


def path_of(file_sites: tuple[str, tuple[str, ...]]) -> str:
    """The WARC file path of a file's ``(path, sites)``."""
    return file_sites[0]


def _value_row(value, key_of) -> dict:
    return {"key": key_of(value), "value": pickle.dumps(value, protocol=5)}


class WritePickled(beam.PTransform):
    """Any picklable values -> ``FOLDER/part-*.parquet`` (:data:`VALUE_SCHEMA`: one pickled value a row, with
    ``key_of(value)``, a string, as the key a reader selects it by: :class:`ReadPickled`)."""

    def __init__(self, folder: str, key_of):
        super().__init__()
        self.folder, self.key_of = folder, key_of

    def expand(self, values):
        return (values | "Rows" >> beam.Map(_value_row, self.key_of)
                | "Write" >> beam.io.WriteToParquet(FileSystems.join(self.folder, "part"), VALUE_SCHEMA,
                                                    codec="snappy", file_name_suffix=PARQUET_SUFFIX))


def selected_values(table: pa.Table, keys) -> list:
    """The values of ``table`` (rows of :data:`VALUE_SCHEMA`) whose key is one of ``keys`` (an iterable of
    strings; None: every row), unpickled. The keys are compared in Arrow, so only the selected rows are unpickled:
    a batch reads step 1's rows of every site and keeps its own sites' few."""
    if keys is not None:
        table = table.filter(pc.is_in(table.column("key"), value_set=pa.array(list(keys), pa.string())))
    return [pickle.loads(value) for value in table.column("value").to_pylist()]


class ReadValuesFn(beam.DoFn):
    """A Parquet file :class:`WritePickled` wrote -> its values whose key is in the side input ``keys`` (a dict of
    ``(key, None)``; None: all of them): :func:`selected_values`."""

    def process(self, path: str, keys=None):
        with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
            table = pq.read_table(f)
        yield from selected_values(table, None if keys is None else keys.keys())


class ReadPickled(beam.PTransform):
    """The values :class:`WritePickled` wrote to ``folder`` (input: the pipeline) whose key is in ``keys``, a side
    input of ``(key, None)`` pairs (the batch's sites, :func:`batch_sites`, or its files' paths); None: every
    value."""

    def __init__(self, folder: str, keys=None):
        super().__init__()
        self.folder, self.keys = folder, keys

    def expand(self, pbegin):
        keys = () if self.keys is None else (self.keys,)
        files = distinct_paths(pbegin, [FileSystems.join(self.folder, "*" + PARQUET_SUFFIX)])
        return files | "Values" >> beam.ParDo(ReadValuesFn(), *keys)


def build_evidence_pipeline(p: beam.Pipeline, patterns: list[str], config: CleanConfig, folder: str) -> None:
    """Step 1: learn the site evidence and the URL sections of all the files of ``patterns`` (labels as in one
    run's graph) and write them to ``folder/evidence/`` and ``folder/sections/``, keyed by site, and each file's
    sites to ``folder/file_sites/``, keyed by its path."""
    paths = p | "FindWarcFiles" >> FindWarcFiles(patterns)
    learnt = paths | "LearnSiteEvidence" >> LearnSiteEvidence(config.neighbour_sample, config.chain, config.hosts)
    _ = learnt[EVIDENCE] | "WriteEvidence" >> WritePickled(FileSystems.join(folder, EVIDENCE), site_of)
    _ = learnt[SECTIONS] | "WriteSections" >> WritePickled(FileSystems.join(folder, SECTIONS), site_of)
    _ = learnt[FILE_SITES] | "WriteFileSites" >> WritePickled(FileSystems.join(folder, FILE_SITES), path_of)


def _as_key(value) -> tuple:
    return value, None


def _sites_as_keys(file_sites: tuple[str, tuple[str, ...]]) -> list[tuple[str, None]]:
    return [(site, None) for site in file_sites[1]]


def batch_sites(paths, evidence: str):
    """The sites of the batch's WARC files ``paths`` (a PCollection of paths): those step 1 saw in them (its
    ``file_sites``, read from the folder ``evidence``, the rows of these paths only), as ``(site, None)`` once each,
    for the side input that keeps of step 1's evidence and sections the batch's sites only (:class:`ReadPickled`).
    So a batch's side inputs follow its files, not the corpus; a page needs its own site's values only, so its
    row is the same."""
    return (paths.pipeline
            | "ReadFileSites" >> ReadPickled(FileSystems.join(evidence, FILE_SITES),
                                             beam.pvalue.AsDict(paths | "PathKeys" >> beam.Map(_as_key)))
            | "Sites" >> beam.FlatMap(_sites_as_keys)
            | "DistinctSites" >> beam.Distinct())


def build_batch_pipeline(p: beam.Pipeline, patterns: list[str], config: CleanConfig, evidence: str,
                         params: NearDupParams = NearDupParams()) -> None:
    """Step 2 for one batch, the files of ``patterns``: read, filter and clean them with the evidence and sections
    in the folder ``evidence`` (step 1's, of the batch's sites only: :func:`batch_sites`) as side inputs; into
    ``config.out`` (the batch's folder) write the articles with their MinHash (``_spill/articles/``), their keys
    (``_spill/keys/``), the rejects and the counts."""
    paths = p | "FindWarcFiles" >> FindWarcFiles(patterns)
    sites = beam.pvalue.AsDict(batch_sites(paths, evidence))
    sections = p | "ReadSections" >> ReadPickled(FileSystems.join(evidence, SECTIONS), sites)
    learnt = p | "ReadEvidence" >> ReadPickled(FileSystems.join(evidence, EVIDENCE), sites)
    cleaned = read_and_clean(paths, sections, learnt, config)
    keyed, _ = spill_articles(cleaned.articles, config.out, params)
    _ = keyed | "SpillKeys" >> SpillKeys(config.out)
    _ = {"rejects": cleaned.rejects} | "WriteParquet" >> WriteParquet(config.out, run_settings(config))
    _ = cleaned.counts | "WriteCounts" >> WriteCounts(config.out)


def clean_in_batches(config: CleanConfig, files: list[tuple[str, int]], beam_args: BeamArgs,
                     params: NearDupParams = NearDupParams()) -> list[str]:
    """Steps 1 and 2 of the module docstring over ``files`` (``(path, size)``) into ``config.out`` (the run's
    staging folder), in batches of at most ``config.batch_bytes`` of WARC bytes (:func:`file_batches`), each Beam
    run with ``beam_args`` (the local mode of :func:`~newsclean.pipeline.runner.runner_options` over its own
    files). Steps an earlier run completed into the same staging folder are not run again (the module docstring's
    "Resuming"). Returns the batches' folders (``STAGING/_batches/bNNNNN``, deleted with the staging folder), for
    :func:`spilled_batches`. Raises what :func:`~newsclean.pipeline.runner.run_to_completion` raises."""
    staging = config.out
    paths = [literal_pattern(path) for path, _ in files]  # Beam file patterns, each matching its path only
    evidence = FileSystems.join(staging, EVIDENCE_DIR)
    batch_bytes = config.batch_bytes
    batches = [[literal_pattern(path) for path in batch] for batch in file_batches(files, batch_bytes)]
    PROGRESS.note(f"{len(files):,} WARC files ({sum(n for _, n in files) / 2**20:,.0f} MiB): site evidence from all "
                  f"of them, then cleaning in {len(batches)} batches of at most {batch_bytes / 2**20:,.0f} MiB")
    if not _run_step(evidence, paths, lambda: run_graph(
            lambda p: build_evidence_pipeline(p, paths, config, evidence), beam_args, paths), EVIDENCE_MARKER):
        PROGRESS.note("site evidence: learnt by an earlier run (resumed)")
    folders = []
    read_from = dict(config.read_from)
    to_read = {literal_pattern(path): max(n - read_from.get(path, 0), 0) for path, n in files}  # bytes, by pattern
    for i, batch in enumerate(batches):
        folder = FileSystems.join(staging, BATCHES_DIR, f"b{i:05d}")
        PROGRESS.note(f"batch {i + 1} of {len(batches)}: {len(batch):,} WARC files")
        log.info("batch %d of %d: %d WARC files into %s", i + 1, len(batches), len(batch), folder)
        batch_config = dataclasses.replace(config, out=folder)
        if not _run_step(folder, batch, lambda b=batch, c=batch_config: run_graph(
                lambda p: build_batch_pipeline(p, b, c, evidence, params), beam_args, b)):
            PROGRESS.note(f"batch {i + 1} of {len(batches)}: cleaned by an earlier run (resumed)")
            PROGRESS.skip_bytes(sum(to_read[pattern] for pattern in batch))
        folders.append(folder)
    PROGRESS.note("deduplicating the batches' articles")
    return folders


# --------------------------------------------------------------------------------------------
# Step 3's inputs: every batch's spill, rejects and counts
# --------------------------------------------------------------------------------------------


def _parquet_files(folders: list[str], *parts: str) -> list[str]:
    """The Parquet files directly in ``FOLDER/parts...`` of each of ``folders``, sorted."""
    patterns = [FileSystems.join(literal_pattern(folder), *parts, "*" + PARQUET_SUFFIX) for folder in folders]
    return sorted(m.path for r in FileSystems.match(patterns) for m in r.metadata_list)


def _reject_of_row(row: dict) -> Reject:
    return from_row(Reject, row)


class SpilledBatches(NamedTuple):
    """What the batches of a run left for step 3 (:func:`spilled_batches`): ``keys`` (every article's
    :class:`~newsclean.pipeline.dedup_decisions.ArticleKey`), ``spilled`` (the paths of the spilled articles'
    files), ``rejects`` (:class:`~newsclean.schemas.records.Reject` records) and ``counts`` (``(name, int)`` pairs
    of each batch's ``_counts``)."""

    keys: beam.PCollection
    spilled: beam.PCollection
    rejects: beam.PCollection
    counts: beam.PCollection


def spilled_batches(p: beam.Pipeline, folders: list[str]) -> SpilledBatches:
    """Add the reading of what the batches of ``folders`` spilled and wrote (:func:`build_batch_pipeline`) to
    ``p``, as the inputs of the one graph's dedup stages and sinks: the spilled keys and rejects are read back
    streaming, the spill files are named (read by ``ReadSpilled`` once the decisions are made), the counts (a few
    lines a batch) are read now."""
    key_files = _parquet_files(folders, SPILL_DIR, KEYS_DIR)
    keys = (p | "KeyFiles" >> beam.Create(key_files)
            | "ReadKeys" >> beam.io.ReadAllFromParquet(columns=["key"])
            | "Keys" >> beam.Map(key_of_row))
    spilled = p | "SpilledFiles" >> beam.Create(_parquet_files(folders, SPILL_DIR, ARTICLES_DIR))
    rejects = (p | "RejectFiles" >> beam.Create(_parquet_files(folders, REJECTS_DIR))
               | "ReadRejects" >> beam.io.ReadAllFromParquet()
               | "Rejects" >> beam.Map(_reject_of_row))
    counts = p | "BatchCounts" >> beam.Create([item for folder in folders for item in read_counts(folder).items()])
    return SpilledBatches(keys, spilled, rejects, counts)
