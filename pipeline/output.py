"""The output folder of ``newsclean clean``: staged, published atomically, optionally Hive-partitioned.

Layout of ``OUT`` after a successful run::

    OUT/articles/part-*.parquet       (or articles/<key>=<value>/part-*.parquet with --partition-by)
    OUT/rejects/part-*.parquet
    OUT/duplicates/part-*.parquet     (near-duplicates, when the pipeline writes them)
    OUT/_counts/counts.jsonl
    OUT/_summary.json                 run summary (a name data tools skip)
    OUT/README.md                     dataset card: YAML ``configs:`` for ``articles`` and ``rejects``

A run writes everything under ``OUT/_staging-<id>/`` (Beam's ``beam-temp-*`` folders included) and only
when the job succeeded replaces the published outputs with the staged ones (:func:`publish_output`):
local folders by ``os.replace`` (one rename per folder), other filesystems file by file. A run killed
before that leaves the earlier output as it was; its staging folder starts with ``_`` (skipped by Spark,
pandas, ``pyarrow.dataset``, DuckDB globs of ``articles/`` and HF ``datasets``) and the next run deletes it
(:func:`prepare_output`).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import uuid

from apache_beam.io.filesystems import FileSystems

from newsclean.pipeline.errors import UsageError

log = logging.getLogger(__name__)

STAGING_PREFIX = "_staging-"
#: ``--partition-by`` values: the Hive partition column and how it is derived from an article row.
PARTITION_KEYS = ("crawl_date", "site")

_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)


def is_url(path: str) -> bool:
    """Whether ``path`` names a filesystem URL (``gs://...``) rather than a local path."""
    return bool(_SCHEME.match(path))


def _entries(out: str, pattern: str) -> list[str]:
    return [m.path for r in FileSystems.match([FileSystems.join(out, pattern)]) for m in r.metadata_list]


def prepare_output(out: str) -> str:
    """Check and create the output folder ``out`` and delete staging folders of killed earlier runs.

    Earlier outputs (``articles/``, ``rejects/``, summary) stay until a new run succeeds. Local paths
    become absolute. Returns the output path.

    Raises:
        UsageError: ``out`` names an existing file, or cannot be created (exit status 2 in the CLI).
    """
    if not is_url(out):
        out = os.path.abspath(os.path.expanduser(out))
        if os.path.exists(out) and not os.path.isdir(out):
            raise UsageError(f"--out {out!r} is a file, not a directory")
        try:
            os.makedirs(out, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--out {out!r}: cannot create the directory: {exc.strerror or exc}") from None
        for name in os.listdir(out):
            if name.startswith(STAGING_PREFIX):
                log.info("deleting %s left by an interrupted run", name)
                shutil.rmtree(os.path.join(out, name), ignore_errors=True)
        return out
    stale = _entries(out, STAGING_PREFIX + "*/**")
    if stale:
        FileSystems.delete(stale)
    return out


def new_staging(out: str) -> str:
    """A fresh staging folder under ``out`` (``OUT/_staging-<12 hex>``); created for local paths."""
    path = FileSystems.join(out, STAGING_PREFIX + uuid.uuid4().hex[:12])
    if not is_url(path):
        os.makedirs(path)
    return path


def discard_staging(staging: str) -> None:
    """Delete a staging folder (best effort: a failure only leaves it for the next run to delete)."""
    try:
        if is_url(staging):
            files = _entries(staging, "**")
            if files:
                FileSystems.delete(files)
        else:
            shutil.rmtree(staging, ignore_errors=True)
    except Exception as exc:  # never hide the run's own error behind a cleanup error
        log.warning("could not delete %s: %s", staging, exc)


def publish_output(staging: str, out: str, dirs: tuple[str, ...], files: tuple[str, ...],
                   stale: tuple[str, ...] = ()) -> None:
    """Replace ``OUT/<name>`` by ``STAGING/<name>`` for each folder of ``dirs`` and file of ``files``.

    A name absent from the staging folder is deleted from ``out`` (it belongs to an earlier run), and so
    is every name of ``stale`` (outputs of older versions, e.g. ``summary.json``). Local: each folder
    moves with one ``os.replace`` (the old one is first moved aside into the staging folder, which is
    deleted at the end). Other filesystems: the old files are deleted and the new ones renamed.
    """
    for name in (*dirs, *files, *stale):
        src, dst = FileSystems.join(staging, name), FileSystems.join(out, name)
        if name in stale:
            src = None
        if not is_url(out):
            if os.path.lexists(dst):
                aside = os.path.join(staging, "_old-" + name)
                os.replace(dst, aside)
            if src and os.path.exists(src):
                os.replace(src, dst)
            continue
        old = _entries(out, name + ("/**" if name in dirs else ""))
        if old:
            FileSystems.delete(old)
        if src:
            new = _entries(staging, name + ("/**" if name in dirs else ""))
            if new:
                FileSystems.rename(new, [dst + p[len(src):] for p in new])
    discard_staging(staging)


def partition_articles(articles_dir: str, key: str) -> None:
    """Rewrite the Parquet files of ``articles_dir`` Hive-partitioned by ``key`` (``<key>=<value>/part-*.parquet``).

    ``key``: ``crawl_date`` (UTC day of ``fetched_at``, ``YYYY-MM-DD``; a partition column added to the
    table) or ``site`` (the column moves into the folder names, as Hive partitioning does). Streams
    record batches through ``pyarrow.dataset``; the column descriptions stay in the files' schema.

    Raises:
        UsageError: ``key`` is not one of :data:`PARTITION_KEYS`.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.dataset as ds
    import pyarrow.fs as pafs

    if key not in PARTITION_KEYS:
        raise UsageError(f"--partition-by must be one of {list(PARTITION_KEYS)}, got {key!r}")
    fs, path = pafs.FileSystem.from_uri(articles_dir) if is_url(articles_dir) else (pafs.LocalFileSystem(), articles_dir)
    source = ds.dataset(path, filesystem=fs, format="parquet")
    schema = source.schema
    if key == "crawl_date":
        schema = schema.append(pa.field("crawl_date", pa.string(), metadata={
            b"description": b"UTC day the page was fetched (fetched_at), YYYY-MM-DD: the Hive partition key."}))

    def batches():
        for batch in source.to_batches():
            if key == "crawl_date":
                day = pc.strftime(batch.column("fetched_at"), format="%Y-%m-%d")
                batch = pa.RecordBatch.from_arrays([*batch.columns, day], schema=schema)
            yield batch

    target = path.rstrip("/") + ".partitioned"
    ds.write_dataset(batches(), target, schema=schema, filesystem=fs, format="parquet",
                     partitioning=ds.partitioning(pa.schema([schema.field(key)]), flavor="hive"),
                     basename_template="part-{i}.parquet", existing_data_behavior="overwrite_or_ignore")
    fs.delete_dir(path)
    if fs.get_file_info(target).type == pafs.FileType.NotFound:  # no article: an empty folder
        fs.create_dir(path)
    else:
        fs.move(target, path)
