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
(:func:`prepare_output`), unless it is a batched run's that holds a resume key (:data:`RESUME_FILE`): a local run
into ``OUT`` keeps it for :func:`~newsclean.pipeline.batches.adopt_staging`, which resumes it when the key is the
rerun's and deletes it otherwise.

One run at a time: a run holds ``OUT/.clean.lock`` (:func:`hold_output`, an exclusive ``flock``, with the
holder's pid, host and start time written in it) from before it deletes stale staging folders until it has
published, so a second run into the same folder never deletes the first's live staging folder: it refuses,
naming the holder, or waits. The kernel releases the lock of a killed run; the next run takes it over and says
whose it was. An output folder on an object store (``s3://``, ``gs://``) has no ``flock``: the run writes a lock
object ``OUT/.clean.lock`` there instead (:func:`object_lock`) and deletes it when it ends; a run that finds one
refuses (or, with ``--wait-for-lock``, polls until it is gone). Create-if-absent is not atomic on S3: two runs that
start within the same second can both see no lock object; the one whose object is not read back refuses, but both
run when each reads its own object back before the other writes. A killed run's lock object stays until deleted.
Object-store paths reach Beam's filesystems with the run's pipeline options (:func:`use_filesystem_options`:
``--s3_endpoint_url``, ``--s3_access_key_id``, ``--project``, ...).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import re
import shutil
import socket
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime

from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions

from newsclean.pipeline.errors import NewscleanError, UsageError

log = logging.getLogger(__name__)

STAGING_PREFIX = "_staging-"
#: The lock file of a cleaning run in ``OUT`` (a dot file: data tools and ``**/*.warc.gz`` globs skip it).
LOCK_FILE = ".clean.lock"
#: A ``--no-wait`` run's job id and staging folder, until ``newsclean summarize OUT`` publishes it.
PENDING_FILE = "_pending.json"
#: ``--partition-by`` values: the Hive partition column and how it is derived from an article row.
PARTITION_KEYS = ("crawl_date", "site")
#: A batched run's resume key in its staging folder (pipeline/batches.py: its settings and input files).
RESUME_FILE = "_resume.json"

#: Seconds between two looks at an object store's lock object while ``--wait-for-lock`` waits.
LOCK_POLL_S = 5.0

_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)


def is_url(path: str) -> bool:
    """Whether ``path`` names a filesystem URL (``gs://...``) rather than a local path."""
    return bool(_SCHEME.match(path))


def use_filesystem_options(beam_args: Sequence[str] | PipelineOptions | None) -> PipelineOptions:
    """Hand the run's Beam flags (a list of flags or ready ``PipelineOptions``; None: none) to Beam's filesystems
    (``FileSystems.set_options``) and return them as options: an ``s3://`` path is then read and written with
    ``--s3_endpoint_url``, ``--s3_access_key_id``, ``--s3_secret_access_key``, ``--s3_region_name``,
    ``--s3_disable_ssl`` (Beam's ``S3Options``), a ``gs://`` path with ``--project`` and the GCP options. Call it
    before the first ``FileSystems.match``/``exists``/``open`` of a command: without it Beam's S3 filesystem raises
    ``Must provide one of client or options``. Raises ``SystemExit`` (argparse) for flags Beam cannot parse."""
    options = beam_args if isinstance(beam_args, PipelineOptions) else PipelineOptions(list(beam_args or []))
    FileSystems.set_options(options)
    return options


def upload_file(local: str, url: str) -> None:
    """Copy the local file ``local`` to ``url`` on any Beam filesystem (``FileSystems.create``, bytes as they are).
    Raises ``OSError`` (``BeamIOError``) when either side fails."""
    with open(local, "rb") as src, FileSystems.create(url, mime_type="application/octet-stream",
                                                      compression_type=CompressionTypes.UNCOMPRESSED) as dst:
        shutil.copyfileobj(src, dst, 1 << 20)


def download_file(url: str, local: str) -> None:
    """Copy ``url`` (any Beam filesystem) to the local file ``local``, bytes as they are. Raises ``OSError``."""
    with FileSystems.open(url, compression_type=CompressionTypes.UNCOMPRESSED) as src, open(local, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)


def upload_tree(local_dir: str, url: str, keep: Callable[[str], bool] | None = None) -> list[str]:
    """Copy every file under the local folder ``local_dir`` (``keep``: only those whose file name it accepts) to
    ``url`` (an object-store folder), keeping the relative paths; returns the URLs written, sorted. Raises
    ``OSError`` on the first file that fails."""
    written = []
    for root, _, names in os.walk(local_dir):
        for name in sorted(n for n in names if keep is None or keep(n)):
            path = os.path.join(root, name)
            target = FileSystems.join(url, *os.path.relpath(path, local_dir).split(os.sep))
            upload_file(path, target)
            written.append(target)
    return sorted(written)


def _entries(out: str, pattern: str) -> list[str]:
    return [m.path for r in FileSystems.match([FileSystems.join(out, pattern)]) for m in r.metadata_list]


class OutputLockedError(NewscleanError):
    """Another run holds the output folder (or a ``--no-wait`` run is pending there)."""


def prepare_output(out: str) -> str:
    """Check and create the output folder ``out`` and delete staging folders of killed earlier runs (call it
    under :func:`hold_output`'s lock, which does both).

    Earlier outputs (``articles/``, ``rejects/``, summary) stay until a new run succeeds. Local paths
    become absolute. Returns the output path.

    Raises:
        UsageError: ``out`` names an existing file (exit status 2 in the CLI).
        NewscleanError: ``out`` cannot be created, e.g. on a read-only filesystem (exit status 1).
    """
    out = create_output(out)
    discard_stale_staging(out)
    return out


def create_output(out: str) -> str:
    """``out`` checked and created (local paths: made absolute); returns it. Raises :class:`UsageError` when ``out``
    is a file, :class:`NewscleanError` when the directory cannot be created (a read-only filesystem, ...)."""
    if is_url(out):
        return out
    out = os.path.abspath(os.path.expanduser(out))
    if os.path.exists(out) and not os.path.isdir(out):
        raise UsageError(f"--out {out!r} is a file, not a directory")
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        raise NewscleanError(f"--out {out!r}: cannot create the directory: {exc.strerror or exc}") from None
    return out


def discard_stale_staging(out: str, keep_resumable: bool = False) -> None:
    """Delete the staging folders left in ``out`` by runs that were killed (no run may be live there: the caller
    holds the lock); ``keep_resumable``: not those of a local ``out`` that hold a :data:`RESUME_FILE`
    (:func:`resumable_staging`)."""
    if not is_url(out):
        kept = resumable_staging(out) if keep_resumable else []
        for name in os.listdir(out):
            if name.startswith(STAGING_PREFIX) and os.path.join(out, name) not in kept:
                log.info("deleting %s left by an interrupted run", name)
                shutil.rmtree(os.path.join(out, name), ignore_errors=True)
        return
    stale = _entries(out, STAGING_PREFIX + "*/**")
    if stale:
        FileSystems.delete(stale)


def resumable_staging(out: str) -> list[str]:
    """The staging folders in the local folder ``out`` that hold a :data:`RESUME_FILE`, sorted (none on object
    stores: their runs start over)."""
    if is_url(out):
        return []
    return sorted(os.path.join(out, name) for name in os.listdir(out) if name.startswith(STAGING_PREFIX)
                  and os.path.isfile(os.path.join(out, name, RESUME_FILE)))


def write_marker(path: str, obj: dict) -> None:
    """Write the JSON object ``obj`` to ``path`` atomically: a local file is written beside it and renamed over it
    (``os.replace``), so a reader sees the whole object or no file; an object store's object appears when
    written whole. Raises ``OSError`` when it cannot be written."""
    data = (json.dumps(obj, sort_keys=True) + "\n").encode("utf-8")
    if is_url(path):
        with FileSystems.create(path, mime_type="application/json",
                                compression_type=CompressionTypes.UNCOMPRESSED) as f:
            f.write(data)
        return
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def read_marker(path: str) -> dict | None:
    """The JSON object :func:`write_marker` wrote to ``path``; None when there is none or it is not a JSON object
    (then it counts as absent)."""
    try:
        if not FileSystems.exists(path):
            return None
        with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
            obj = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError):
        return None
    return obj if isinstance(obj, dict) else None


def _holder(text: str) -> dict:
    """The holder recorded in a lock file's text (``{}`` when none or unreadable)."""
    try:
        holder = json.loads(text)
    except ValueError:
        return {}
    return holder if isinstance(holder, dict) else {}


def describe_holder(holder: dict) -> str:
    """``"pid 123 on host h, started 2024-05-01T12:00:00+00:00"`` of a lock file's holder."""
    return (f"pid {holder.get('pid', '?')} on host {holder.get('host', '?')}, "
            f"started {holder.get('started', '?')}")


@contextlib.contextmanager
def output_lock(out: str, wait: bool = False) -> Iterator[None]:
    """Hold the exclusive lock ``OUT/.clean.lock`` (``fcntl.flock``) while the block runs; ``out`` exists.

    The lock file records the holder (pid, host, start time). A held lock makes this raise
    :class:`OutputLockedError` naming the holder, or, with ``wait``, block until it is released. A lock file
    that names a holder but is not locked was left by a run that was killed (the kernel released its lock): it
    is taken over, with a warning naming that run. Object-store folders: :func:`object_lock`.
    """
    if is_url(out):
        with object_lock(out, wait):
            yield
        return
    path = os.path.join(out, LOCK_FILE)
    with open(path, "a+", encoding="utf-8") as fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = describe_holder(_holder(fh.read()))
            if not wait:
                raise OutputLockedError(f"another newsclean run is writing into {out} ({holder}; lock {path}): "
                                        "wait for it to end, or pass --wait-for-lock") from None
            log.warning("waiting for the newsclean run writing into %s (%s)", out, holder)
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        fh.seek(0)
        stale = _holder(fh.read())
        if stale:
            log.warning("taking over the lock of a newsclean run that ended without releasing it (%s)",
                        describe_holder(stale))
        fh.seek(0)
        fh.truncate()
        fh.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                             "started": datetime.now(UTC).isoformat(timespec="seconds")}) + "\n")
        fh.flush()
        try:
            yield
        finally:
            fh.seek(0)
            fh.truncate()
            fh.flush()
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _holder_record() -> dict:
    """This process as a lock's holder: pid, host, start time (UTC, ISO 8601 seconds) and a random token."""
    return {"pid": os.getpid(), "host": socket.gethostname(), "token": uuid.uuid4().hex,
            "started": datetime.now(UTC).isoformat(timespec="seconds")}


@contextlib.contextmanager
def object_lock(out: str, wait: bool = False) -> Iterator[None]:
    """Hold the lock object ``OUT/.clean.lock`` of an object-store folder (``s3://``, ``gs://``) while the block
    runs: written with the holder (:func:`_holder_record`), read back, deleted at the end.

    A lock object already there makes this raise :class:`OutputLockedError` naming its holder (with ``wait``:
    poll every :data:`LOCK_POLL_S` seconds until it is gone); so does one that another run overwrote between this
    run's write and its read-back. Not atomic: check, write and read-back are three requests (the race window of
    the module docstring). A lock object left by a killed run is never taken over: delete it by hand.
    """
    path = FileSystems.join(out, LOCK_FILE)
    warned = False
    while FileSystems.exists(path):
        holder = describe_holder(read_marker(path) or {})
        if not wait:
            raise OutputLockedError(f"another newsclean run is writing into {out} ({holder}; lock object {path}): wait "
                                    "for it to end, pass --wait-for-lock, or delete the lock object if no run is live")
        if not warned:
            log.warning("waiting for the newsclean run writing into %s (%s)", out, holder)
            warned = True
        time.sleep(LOCK_POLL_S)
    mine = _holder_record()
    write_marker(path, mine)
    seen = read_marker(path) or {}
    if seen.get("token") != mine["token"]:
        raise OutputLockedError(f"another newsclean run took the lock object {path} at the same time "
                                f"({describe_holder(seen)}): wait for it to end")
    try:
        yield
    finally:
        try:
            FileSystems.delete([path])
        except Exception as exc:  # never hide the run's own error behind a cleanup error
            log.warning("could not delete the lock object %s: %s", path, exc)


@contextlib.contextmanager
def hold_output(out: str, wait: bool = False, keep_resumable: bool = False) -> Iterator[str]:
    """Make ``out`` ready for one run and hold it for the block: created (:func:`create_output`), locked
    (:func:`output_lock`), no ``--no-wait`` run pending there, stale staging folders deleted (``keep_resumable``:
    but those :func:`resumable_staging` names, for the run to adopt or delete). Yields the output path (local
    paths absolute).

    Raises:
        UsageError: ``out`` cannot be created. OutputLockedError: another run holds it (and not ``wait``), or a
            ``--no-wait`` run is pending there (``OUT/_pending.json``).
    """
    out = create_output(out)
    with output_lock(out, wait):
        pending = FileSystems.join(out, PENDING_FILE)
        if FileSystems.exists(pending):
            raise OutputLockedError(f"a --no-wait run is pending in {out} ({pending}): run 'newsclean summarize "
                                    f"{out}' once its job finished (or delete {PENDING_FILE} if the job failed)")
        discard_stale_staging(out, keep_resumable)
        yield out


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
    """Rewrite the Parquet files of ``articles_dir`` Hive-partitioned by ``key`` (``<key>=<value>/part-*.parquet``);
    JSON Lines files (``--format jsonl``) by :func:`~newsclean.pipeline.formats.partition_jsonl`, every field kept.

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

    from newsclean.pipeline.formats import SUFFIXES, partition_jsonl, row_files

    if key not in PARTITION_KEYS:
        raise UsageError(f"--partition-by must be one of {list(PARTITION_KEYS)}, got {key!r}")
    if row_files(articles_dir, (SUFFIXES["jsonl"],)):  # --format jsonl
        partition_jsonl(articles_dir, key)
        return
    if is_url(articles_dir):
        _partition_in_store(articles_dir, key)
        return
    fs, path = pafs.LocalFileSystem(), articles_dir
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


def _partition_in_store(articles_dir: str, key: str) -> None:
    """:func:`partition_articles` for an object-store folder (no directory rename there): its Parquet files are
    copied into a local temporary folder, partitioned there, the partitions uploaded (:func:`upload_tree`) and only
    then the unpartitioned files deleted, all through Beam's filesystems and the run's options."""
    from newsclean.pipeline.formats import SUFFIXES, row_files

    sources = row_files(articles_dir, (SUFFIXES["parquet"],))
    if not sources:
        return
    with tempfile.TemporaryDirectory(prefix="newsclean-partition-") as tmp:
        local = os.path.join(tmp, "articles")
        os.makedirs(local)
        for n, url in enumerate(sources):
            download_file(url, os.path.join(local, f"source-{n}.parquet"))
        partition_articles(local, key)
        upload_tree(local, articles_dir)
    FileSystems.delete(sources)
