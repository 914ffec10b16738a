"""Incremental runs (``newsclean clean --incremental``, ``newsclean run --incremental``): clean only WARC
files not yet cleaned into ``OUT``, append the new rows, dedup against the corpus already built.

State kept in the output folder (names starting with ``_``, which data tools skip):

- ``OUT/_manifest/files.jsonl``: one line per WARC file cleaned into ``OUT``: ``path``, ``size`` (bytes),
  ``sha256`` (hex digest of the file's bytes), ``start`` (the byte offset its reading began at), ``run`` (run
  id). A file is *already cleaned* when its path is listed with the same size, or its digest is (the same file
  copied or moved elsewhere). A file that grew by appending (longer, its first old-size bytes still of the digest
  listed, a record starting at the old end) is read from its old end only: its new records, keyed by file and
  byte offset, none read twice. Any other change of size means a new file, read whole.
- ``OUT/_manifest/runs.jsonl``: one line per run: files new / skipped, records read, rows added.
- ``OUT/_index/*.parquet``: one row per article in the corpus (:data:`INDEX_SCHEMA`): id, URL, content
  hash, version, first and last fetch, MinHash signature. Every run writes the rows of its kept articles.

An incremental run (:func:`plan_run`, then the graph with the corpus's :class:`ReadIndex` given to
:func:`newsclean.pipeline.dedup.deduplicate`, then :func:`publish_append`):

1. lists the ``--warc`` files and drops those already cleaned; with none left it does nothing;
2. drops a new article whose content hash is already in the corpus (``exact_duplicate``), and one that is a
   near-duplicate of a corpus article (MinHash LSH, the corpus rows win: :mod:`newsclean.pipeline.dedup`);
3. gives a new text at a URL already in the corpus ``version`` = the URL's highest version + 1 and the
   URL's ``first_seen`` (the same URL with changed text is a new version of that article, not a new
   article: near-dedup never drops a row for resembling an earlier version of its own URL);
4. appends: the run's part files move into ``articles/``, ``rejects/``, ``duplicates/``, ``_index/`` under
   names prefixed ``run-<id>-``, its counts become ``_counts/run-<id>.jsonl`` (the summary sums all runs),
   and its files are added to the manifest. Nothing already in ``OUT`` is deleted or rewritten.

A non-incremental run replaces the corpus and starts a new manifest and index.

Limits: rows are immutable, so an unchanged text fetched again is counted as a duplicate (never a new version of
its URL) and the ``last_seen`` of its corpus row stays that of the run that wrote it. A file first cleaned by a
non-incremental run has no digest listed, so it is read whole when it has grown. The tail of a grown file is read
without its ``warcinfo`` record: its pages take site and category from their own headers (newsclean's crawler
writes them on every record), else from the URL and folder. Its site evidence is learnt from the whole file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import logging
import os
import signal
import threading
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from newsclean.pipeline.dedup import DUPLICATES_DIR, SignedArticle
from newsclean.pipeline.errors import SettingsMismatchError
from newsclean.pipeline.file_patterns import literal_pattern
from newsclean.pipeline.options import CleanConfig
from newsclean.pipeline.output import discard_staging, partition_articles, publish_output
from newsclean.pipeline.stages import ARTICLES_DIR, COUNTS_DIR, REJECTS_DIR
from newsclean.pipeline.summary import (
    CARD_FILE,
    LEGACY_SUMMARY_FILE,
    SUMMARY_FILE,
    read_staged_summary,
    summarize_output,
    write_dataset_card,
    write_summary,
)
from newsclean.pipeline.warc_framing import WARC_MAGIC, is_gzip, read_at, starts_warc_member
from newsclean.schemas.records import PIPELINE_VERSION, Article
from newsclean.transforms.chain import CONFIGS, ChainConfig

log = logging.getLogger(__name__)

MANIFEST_DIR, INDEX_DIR = "_manifest", "_index"
FILES_MANIFEST, RUNS_MANIFEST = "files.jsonl", "runs.jsonl"

_TS = pa.timestamp("us", tz="UTC")
#: One row of ``OUT/_index/*.parquet``: what later runs dedup and version against.
INDEX_SCHEMA = pa.schema(
    [
        pa.field("article_id", pa.string(), nullable=False),
        pa.field("url", pa.string(), nullable=False),
        pa.field("content_hash", pa.string(), nullable=False),
        pa.field("version", pa.int32(), nullable=False),
        pa.field("first_seen", _TS, nullable=True),
        pa.field("last_seen", _TS, nullable=True),
        pa.field("signature", pa.binary(), nullable=False),  # MinHash, uint32 little-endian, num_perm values
    ],
    metadata={b"newsclean.record": b"corpus_index", b"newsclean.schema_version": b"1"},
)


# --------------------------------------------------------------------------------------------
# Manifest and plan (launcher side)
# --------------------------------------------------------------------------------------------


def file_digest(path: str, chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of the bytes of ``path`` (any Beam filesystem), read in ``chunk``-byte pieces."""
    return file_digests(path, 0, chunk)[1]


def file_digests(path: str, prefix: int, chunk: int = 1 << 20) -> tuple[str, str]:
    """Hex SHA-256 of the first ``prefix`` bytes of ``path`` and of all its bytes, in one read."""
    h = hashlib.sha256()
    head = h.hexdigest() if prefix <= 0 else None
    done = 0
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        while block := f.read(chunk if head is not None else min(chunk, prefix - done)):
            h.update(block)
            done += len(block)
            if head is None and done == prefix:
                head = h.hexdigest()
    return head or "", h.hexdigest()


def record_starts_at(path: str, offset: int) -> bool:
    """Whether a WARC record starts at byte ``offset`` of ``path``: a gzip member that inflates to ``WARC/1.`` in a
    ``.warc.gz`` (one member per record, WARC 1.1 annex D.2), the ``WARC/1.`` line itself in a ``.warc``."""
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        if is_gzip(f, 0, path):
            return starts_warc_member(f, offset)
        return read_at(f, offset, len(WARC_MAGIC)) == WARC_MAGIC


def grown_file(path: str, size: int, cleaned: dict | None) -> tuple[str, int]:
    """``(SHA-256 of the file, byte offset to read it from)`` for a file of ``size`` bytes whose path the manifest
    lists as ``cleaned`` (its entry of the largest size, or None): the old size when the file grew by appending
    (it is longer, its first old-size bytes have the digest recorded then, and a record starts there), else 0 (read
    it whole)."""
    old = (cleaned or {}).get("size") or 0
    if not cleaned or not cleaned.get("sha256") or not 0 < old < size:
        return file_digest(path), 0
    head, digest = file_digests(path, old)
    if head != cleaned["sha256"] or not record_starts_at(path, old):
        log.info("%s changed since it was cleaned (not only appended to): read whole", path)
        return digest, 0
    return digest, old


#: The settings two runs must share to append to one corpus (``--incremental``): all of :func:`run_settings` but the
#: Beam version, which changes no row.
OUTPUT_SETTINGS = ("chain", "min_words", "neighbour_sample", "text_includes", "keep_listings", "languages", "hosts",
                   "models", "newsclean")


@functools.lru_cache(maxsize=16)
def model_digest(path: str) -> str:
    """``"sha256:<hex>"`` of a model file (:func:`file_digest`, cached per process)."""
    return "sha256:" + file_digest(path)


def run_settings(config: CleanConfig) -> dict:
    """What a run's rows depend on besides its WARC files, as JSON-ready values: ``chain`` (:func:`chain_setting`),
    ``min_words``, ``neighbour_sample``, ``text_includes`` (what ``text`` holds besides the body, the chain's own when
    ``--text-includes`` is not given), ``keep_listings``, ``languages`` (``--languages``, sorted; None: no filter, as
    in a corpus made before the filter existed), ``hosts`` (``--hosts``, sorted; None: every host: an incremental
    run reads each file once, so a corpus holds one host selection), ``models`` (file name -> :func:`model_digest` of each model and lexicon file
    the chain reads, :meth:`~newsclean.transforms.chain.ChainConfig.model_files`), ``newsclean`` (the version that
    writes the rows' ``pipeline_version``) and ``apache_beam`` (its version). Recorded in ``_summary.json``, the
    manifest, the dataset card and the Parquet files' metadata; :data:`OUTPUT_SETTINGS` must match to append.

    Raises:
        OSError: a model file cannot be read.
    """
    chain = config.chain
    return {"chain": chain_setting(chain), "min_words": config.min_words, "neighbour_sample": config.neighbour_sample,
            "text_includes": list(chain.text_includes), "keep_listings": config.keep_listings,
            "languages": list(config.languages) if config.languages is not None else None,
            "hosts": list(config.hosts) or None,
            "models": {path.name: model_digest(str(path)) for path in chain.model_files()},
            "newsclean": PIPELINE_VERSION, "apache_beam": beam.__version__}


def chain_setting(chain: ChainConfig) -> str:
    """The ``chain`` value of a run's settings: the name of a shipped chain (a key of
    :data:`~newsclean.transforms.chain.CONFIGS`, as ``--chain`` names it) when ``chain`` is that chain, whatever its
    ``text_includes`` and ``listing_text`` (recorded as ``text_includes`` and ``keep_listings``); else ``"<name>
    (custom sha256:<12 hex digits>)"``, a digest of every parameter (:func:`_canonical`), so that two runs with
    different custom chains never count as the same settings."""
    shipped = CONFIGS.get(chain.name)
    if shipped is not None and chain == shipped.with_(text_includes=chain.text_includes,
                                                      listing_text=chain.listing_text):
        return chain.name
    digest = hashlib.sha256(json.dumps(_canonical(chain), sort_keys=True).encode()).hexdigest()[:12]
    return f"{chain.name} (custom sha256:{digest})"


def _canonical(value):
    """``value`` as JSON-ready data that is the same in every process: dataclasses as ``{type: {field: ...}}``
    (fields that take no part in equality left out), sets sorted, paths by file name, anything else by ``repr``."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {type(value).__name__: {f.name: _canonical(getattr(value, f.name))
                                       for f in dataclasses.fields(value) if f.compare}}
    if isinstance(value, (set, frozenset)):
        return sorted((_canonical(v) for v in value), key=repr)
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, dict):
        return {repr(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, os.PathLike):
        return os.path.basename(os.fspath(value))
    return value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)


def settings_differ(a: dict, b: dict) -> list[str]:
    """The names of :data:`OUTPUT_SETTINGS` whose values differ between two :func:`run_settings` (a name missing
    from either, as in an output folder of an older version, differs)."""
    return [name for name in OUTPUT_SETTINGS if a.get(name) != b.get(name)]


def _read_jsonl(path: str) -> list[dict]:
    if not FileSystems.exists(path):
        return []
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        return [json.loads(line) for line in f.read().decode("utf-8").splitlines() if line.strip()]


def _append_jsonl(path: str, rows: Iterable[dict]) -> None:
    """Rewrite ``path`` with its lines plus ``rows`` (object stores have no append)."""
    old = _read_jsonl(path)
    with FileSystems.create(path, mime_type="application/json",
                            compression_type=CompressionTypes.UNCOMPRESSED) as f:
        for row in [*old, *rows]:
            f.write((json.dumps(row, sort_keys=True) + "\n").encode("utf-8"))


def read_manifest(out: str) -> list[dict]:
    """The ``_manifest/files.jsonl`` entries of ``out`` (empty for a new output folder)."""
    return _read_jsonl(FileSystems.join(out, MANIFEST_DIR, FILES_MANIFEST))


def read_runs(out: str) -> list[dict]:
    """The ``_manifest/runs.jsonl`` entries of ``out``, oldest first."""
    return _read_jsonl(FileSystems.join(out, MANIFEST_DIR, RUNS_MANIFEST))


@dataclasses.dataclass
class RunPlan:
    """What one run cleans: ``files`` ``[{path, size, sha256, start}]`` (new ones; ``start``: the byte offset
    reading begins at, the old size of a file grown by appending, else 0), ``skipped`` (paths already cleaned into
    the output), ``incremental``, the run id (12 hex digits) and the run's settings (:func:`run_settings`)."""

    files: list[dict]
    skipped: list[str]
    incremental: bool
    run_id: str = dataclasses.field(default_factory=lambda: uuid.uuid4().hex[:12])
    settings: dict = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON form (``_pending.json`` of a ``--no-wait`` run)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, obj: dict) -> RunPlan:
        """Inverse of :meth:`to_dict`."""
        return cls(obj["files"], obj["skipped"], obj["incremental"], obj["run_id"], obj.get("settings", {}))

    @property
    def patterns(self) -> list[str]:
        """The new files as Beam file patterns that match each path only (:func:`literal_pattern`)."""
        return [literal_pattern(f["path"]) for f in self.files]

    @property
    def read_from(self) -> tuple[tuple[str, int], ...]:
        """``(path, byte offset)`` of the files read from an offset (``CleanConfig.read_from``)."""
        return tuple((f["path"], f["start"]) for f in self.files if f.get("start"))


def staged_config(config: CleanConfig, staging: str, plan: RunPlan) -> CleanConfig:
    """``config`` for the job of ``plan``: its outputs into ``staging``, grown files read from their old end."""
    return dataclasses.replace(config, out=staging, read_from=plan.read_from)


def _matched(patterns: list[str]) -> dict:
    """Beam's ``FileMetadata`` of the distinct files the Beam file patterns match, by path."""
    return {m.path: m for r in FileSystems.match(patterns) for m in r.metadata_list
            if not m.path.endswith(("/", "\\"))}


def matched_files(patterns: list[str]) -> list[tuple[str, int]]:
    """``(path, size in bytes)`` of the distinct files the Beam file patterns match, sorted."""
    return sorted((path, m.size_in_bytes) for path, m in _matched(patterns).items())


def matched_file_stamps(patterns: list[str]) -> list[tuple[str, int, float]]:
    """``(path, size in bytes, modification time in seconds since the epoch)`` of the distinct files the Beam file
    patterns match, sorted, from one listing (local files, ``gs://``, ``s3://``)."""
    return sorted((path, m.size_in_bytes, m.last_updated_in_seconds) for path, m in _matched(patterns).items())


def plan_run(out: str, patterns: list[str], incremental: bool, settings: dict | None = None,
             allow_mixed: bool = False) -> RunPlan:
    """The files a run cleans. Not incremental: every matched file. Incremental: those whose path is not
    in the manifest with the same size and whose SHA-256 is not in it either (see the module docstring); a file
    grown by appending since it was cleaned is read from its old end (:func:`grown_file`).
    ``settings``: the run's (:func:`run_settings`), recorded with it.

    Raises:
        SettingsMismatchError: incremental, the corpus in ``out`` was made with other settings
            (:func:`check_same_settings`) and not ``allow_mixed``.
    """
    settings = settings or {}
    matched = matched_files(patterns)
    if not incremental:
        return RunPlan([{"path": p, "size": s, "sha256": None} for p, s in matched], [], False, settings=settings)
    if not allow_mixed:
        check_same_settings(out, settings)
    manifest = read_manifest(out)
    by_path = {(e["path"], e["size"]) for e in manifest}
    digests = {e["sha256"] for e in manifest if e.get("sha256")}
    largest = {e["path"]: e for e in sorted(manifest, key=lambda e: e["size"])}
    new, skipped = [], []
    for path, size in matched:
        if (path, size) in by_path:
            skipped.append(path)
            continue
        digest, start = grown_file(path, size, largest.get(path))
        if digest in digests:
            skipped.append(path)
        else:
            new.append({"path": path, "size": size, "sha256": digest, "start": start})
    return RunPlan(new, skipped, True, settings=settings)


def corpus_settings(out: str) -> dict | None:
    """The settings of the last run that wrote the corpus in ``out`` (its ``_manifest/runs.jsonl`` line); ``{}``
    for a corpus of a version that did not record them, None when ``out`` holds no corpus."""
    runs = read_runs(out)
    return runs[-1].get("settings", {}) if runs else None


def check_same_settings(out: str, settings: dict) -> None:
    """Raises :class:`SettingsMismatchError` when ``out`` holds a corpus made with other :data:`OUTPUT_SETTINGS`
    than ``settings`` (one line naming each that differs)."""
    corpus = corpus_settings(out)
    if corpus is None:
        return
    differ = settings_differ(corpus, settings)
    if differ:
        what = "; ".join(f"{name} {json.dumps(corpus.get(name))} there, {json.dumps(settings.get(name))} now"
                         for name in differ)
        raise SettingsMismatchError(f"--incremental: the corpus in {out} was made with other settings ({what}); "
                                    "pass --allow-mixed-settings to append to it anyway")


# --------------------------------------------------------------------------------------------
# Pipeline part: the corpus index (dedup against it: pipeline/dedup.py)
# --------------------------------------------------------------------------------------------


def corpus_of(staging: str) -> str:
    """The output folder of a staging folder ``OUT/_staging-<id>``."""
    return staging.rstrip("/").rsplit("/", 1)[0] if "/" in staging.rstrip("/") else os.path.dirname(staging)


def _index_files(out: str) -> list[str]:
    pattern = FileSystems.join(out, INDEX_DIR, "*.parquet")
    return sorted(m.path for r in FileSystems.match([pattern]) for m in r.metadata_list)


def index_fields(article: Article) -> dict:
    """The ``_index`` row of a kept article without its ``signature``: small values only, no text."""
    return {"article_id": article.article_id, "url": article.url, "content_hash": article.content_hash,
            "version": article.version, "first_seen": article.first_seen or article.fetched_at,
            "last_seen": article.last_seen or article.fetched_at}


def index_row(signed: SignedArticle) -> dict:
    """The ``_index`` row (:data:`INDEX_SCHEMA`) of a kept article and the MinHash signature it carries (the one
    near-dedup used, :attr:`SignatureEntry.signature`, read back from the spill with the article)."""
    article, sig = signed
    return {**index_fields(article), "signature": sig}


class ReadIndex(beam.PTransform):
    """The ``_index`` rows of the corpus in ``out`` (an empty PCollection when there is none)."""

    def __init__(self, out: str):
        super().__init__()
        self.out = out

    def expand(self, pbegin):
        files = _index_files(self.out)
        if not files:
            return pbegin | "NoIndex" >> beam.Create([])
        return pbegin | "ReadIndexFiles" >> beam.io.ReadFromParquet(FileSystems.join(self.out, INDEX_DIR, "*.parquet"))


#: Parquet row group of ``OUT/_index``, in bytes, and rows turned into Arrow at once (Beam's defaults, 64 MiB
#: and 1,000 rows, held ~64 MiB per worker at 100k articles).
INDEX_ROW_GROUP_BYTES, INDEX_RECORD_BATCH = 16 << 20, 1000


class WriteIndex(beam.PTransform):
    """Kept articles -> ``OUT/_index/part-*.parquet`` (:data:`INDEX_SCHEMA`).

    Input: the kept :data:`SignedArticle` pairs: each article comes with the MinHash near-dedup used (carried in
    the spill), so that it is not computed a second time and no join by article id is needed (one would hold every
    signature until the last stage in the in-memory runner). Each row: :func:`index_row`."""

    def __init__(self, out: str):
        super().__init__()
        self.out = out

    def expand(self, articles):
        return (articles
                | "IndexFields" >> beam.Map(index_row)
                | "WriteIndexFiles" >> beam.io.WriteToParquet(
                    FileSystems.join(self.out, INDEX_DIR, "part"), INDEX_SCHEMA, codec="snappy",
                    file_name_suffix=".parquet", row_group_buffer_size=INDEX_ROW_GROUP_BYTES,
                    record_batch_size=INDEX_RECORD_BATCH))


# --------------------------------------------------------------------------------------------
# Publishing
# --------------------------------------------------------------------------------------------


def _files_under(folder: str) -> list[str]:
    return sorted(m.path for r in FileSystems.match([FileSystems.join(folder, "**")]) for m in r.metadata_list
                  if not m.path.endswith(("/", "\\")))


def publish_append(staging: str, out: str, dirs: Iterable[str], plan: RunPlan) -> int:
    """Move the staged part files of ``dirs`` into ``out`` under names prefixed ``run-<id>-``, keeping
    their sub-folders (Hive partitions); counts go to ``_counts/run-<id>.jsonl``. Returns files moved."""
    moved = 0
    for name in dirs:
        src_dir = FileSystems.join(staging, name)
        files = _files_under(src_dir)
        if not files:
            continue
        dst = []
        for path in files:
            rel = path[len(src_dir):].lstrip("/\\")
            head, _, base = rel.rpartition("/")
            target = FileSystems.join(out, name, *([head] if head else []), f"run-{plan.run_id}-{base}")
            if "://" not in target:
                os.makedirs(os.path.dirname(target), exist_ok=True)
            dst.append(target)
        FileSystems.rename(files, dst)
        moved += len(files)
    return moved


def record_run(out: str, plan: RunPlan, summary) -> dict:
    """Add the plan's files to the manifest (a new manifest when not incremental) and a line to
    ``_manifest/runs.jsonl``; returns that line. ``summary``: the run's own RunSummary (its staging)."""
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    files = [{**f, "run": plan.run_id} for f in plan.files]  # sha256 None on full runs: path + size only
    manifest = FileSystems.join(out, MANIFEST_DIR, FILES_MANIFEST)
    runs = FileSystems.join(out, MANIFEST_DIR, RUNS_MANIFEST)
    if "://" not in out:
        os.makedirs(os.path.join(out, MANIFEST_DIR), exist_ok=True)
    if not plan.incremental:
        for path in (manifest, runs):
            if FileSystems.exists(path):
                FileSystems.delete([path])
    _append_jsonl(manifest, files)
    line = {"run": plan.run_id, "finished_at": stamp, "incremental": plan.incremental, "settings": plan.settings,
            "files_cleaned": len(plan.files), "files_skipped": len(plan.skipped),
            "records_read": summary.records_read if summary else 0,
            "articles_added": summary.articles_written if summary else 0,
            "rejects_added": summary.rejects_total if summary else 0,
            "duplicates_dropped": summary.duplicates_dropped if summary else 0}
    _append_jsonl(runs, [line])
    return line


def format_run(line: dict) -> str:
    """One line on what a run added (a ``_manifest/runs.jsonl`` entry, :func:`record_run`), for the terminal: the
    corpus summary :func:`format_incremental` prints after it is the whole corpus's (a run with nothing new leaves
    it as it was)."""
    return (f"  this run {line['run']}: {line['files_cleaned']} WARC files cleaned, {line['files_skipped']} skipped "
            f"(already cleaned into this output), {line['records_read']} records read, {line['articles_added']} "
            f"articles and {line['rejects_added']} rejects added, {line['duplicates_dropped']} duplicates dropped")


def format_incremental(summary, line: dict) -> str:
    """What an incremental run prints: a first line on what this run read (``"nothing new read this run (0 records
    read; ...)"`` when it read nothing), its :func:`format_run` line, then the whole corpus's summary (``summary``,
    a :class:`~newsclean.pipeline.summary.RunSummary` of every run's rows; ``line``: this run's
    ``_manifest/runs.jsonl`` entry) under the label ``corpus total``. Counts are records and files."""
    if not line["records_read"] and not line["files_cleaned"]:
        head = (f"nothing new read this run (0 records read; {line['files_skipped']} WARC files already cleaned into "
                "this output)")
    else:
        head = f"{line['records_read']} WARC records read this run"
    corpus = summary.format().splitlines()
    corpus[0] = "corpus total (every run into this output): " + corpus[0].removeprefix("newsclean clean: ")
    return "\n".join([f"newsclean clean: {head}", format_run(line), *corpus])


def read_index(out: str) -> pa.Table:
    """The corpus index of ``out`` as one table (:data:`INDEX_SCHEMA`; empty when there is none)."""
    files = _index_files(out)
    if not files:
        return INDEX_SCHEMA.empty_table()
    return pa.concat_tables([pq.read_table(FileSystems.open(f, compression_type=CompressionTypes.UNCOMPRESSED), use_threads=False)
                             for f in files])


@contextlib.contextmanager
def interrupts_deferred():
    """Hold back SIGINT (Ctrl-C) while the block runs, so that what it publishes is published whole: a SIGINT
    that arrives meanwhile is acted on when the block has ended: the handler it replaced runs then (Python's
    raises ``KeyboardInterrupt``, in place of an exception the block raised). Blocks nest. Nothing changes outside
    the main thread (where Python runs signal handlers) or where SIGINT is ignored or not Python's to handle."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous):  # SIG_IGN, SIG_DFL, or a handler not set from Python (None)
        yield
        return
    arrived: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, frame: arrived.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if arrived:
            log.info("interrupted while publishing: publishing finished first")
            previous(signal.SIGINT, None)


def finish_run(staging: str, out: str, plan: RunPlan, warc: str, partition_by: str | None):
    """Publish a finished job's staging folder for ``plan`` and record the run in the manifest, with SIGINT held
    back (:func:`interrupts_deferred`): a Ctrl-C finds the output either as it was or with the run published and
    recorded, never half of it (and the command still ends as interrupted).

    Incremental: the staged rows are appended (:func:`publish_append`) and the returned summary is the whole
    corpus's (every run's counts); otherwise the published outputs are replaced by the staged ones
    (:func:`~newsclean.pipeline.output.publish_output`). Returns ``(corpus RunSummary, this run's manifest line)``.
    """
    with interrupts_deferred():
        return _publish_run(staging, out, plan, warc, partition_by)


def _publish_run(staging: str, out: str, plan: RunPlan, warc: str, partition_by: str | None):
    """:func:`finish_run`'s work."""
    run = dataclasses.replace(read_staged_summary(staging, warc=warc), settings=plan.settings)
    if partition_by:
        partition_articles(FileSystems.join(staging, ARTICLES_DIR), partition_by)
    if plan.incremental:
        publish_append(staging, out, (ARTICLES_DIR, REJECTS_DIR, DUPLICATES_DIR, INDEX_DIR, COUNTS_DIR), plan)
        discard_staging(staging)
        summary = dataclasses.replace(summarize_output(out, warc=warc), settings=plan.settings)
        write_summary(summary)
        write_dataset_card(summary, partition_by)
    else:
        summary = dataclasses.replace(run, out=out)
        write_summary(summary, staging)
        write_dataset_card(summary, partition_by, staging)
        publish_output(staging, out, (ARTICLES_DIR, REJECTS_DIR, DUPLICATES_DIR, COUNTS_DIR, INDEX_DIR),
                       (SUMMARY_FILE, CARD_FILE), stale=(LEGACY_SUMMARY_FILE,))
    return summary, record_run(out, plan, run)


def nothing_new(out: str, plan: RunPlan, warc: str):
    """An incremental run with no new WARC file: record it and return the corpus summary (nothing runs)."""
    log.info("no new WARC file: %d already cleaned into %s", len(plan.skipped), out)
    return dataclasses.replace(summarize_output(out, warc=warc), settings=plan.settings), record_run(out, plan, None)
