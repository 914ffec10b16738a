"""How the published tables (``articles/``, ``rejects/``, ``duplicates/``) are stored: ``--format parquet|jsonl``.

``parquet`` (the default): Apache Parquet, snappy, the run's settings in each file's metadata. ``jsonl``: gzip-
compressed JSON Lines (``part-*.jsonl.gz``; JSON Lines, https://jsonlines.org; gzip, RFC 1952), one row a line, the
fields and names of the Parquet columns in the schema's order (:func:`json_row`): timestamps as ISO 8601 UTC
strings (``2024-05-01T09:00:00Z``), list columns as arrays, nulls as ``null``, UTF-8 text as it is
(``ensure_ascii=False``). JSON Lines files carry no metadata: the run's settings are in ``_summary.json`` and the
manifest. What a run keeps for itself (``_index/``, ``_spill/``, a batch's rejects) stays Parquet whatever the
format.

Both executors write through :func:`write_rows`, one sink per format; everything that reads the tables back (the
summary, the accounting check, ``--partition-by``, ``newsclean summarize``, the corpus fingerprint) reads both
(:func:`read_rows`, :func:`stored_formats`).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from urllib.parse import quote

import apache_beam as beam
import pyarrow as pa
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from newsclean.pipeline.errors import SettingsMismatchError

#: ``--format`` values, the default first.
OUTPUT_FORMATS = ("parquet", "jsonl")
#: File name ending of each format's part files.
SUFFIXES = {"parquet": ".parquet", "jsonl": ".jsonl.gz"}
#: The published tables whose format ``--format`` chooses.
TABLES = ("articles", "rejects", "duplicates")


def json_value(value):
    """A row value as JSON: a ``datetime`` as an ISO 8601 UTC string ending in ``Z`` (a naive one taken as UTC,
    as Parquet's UTC timestamp columns take it), a tuple as a list, anything else as it is."""
    if isinstance(value, datetime):
        aware = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return aware.isoformat().replace("+00:00", "Z")
    if isinstance(value, tuple):
        return list(value)
    return value


def json_row(row: dict, schema: pa.Schema) -> str:
    """One JSON Lines line (no newline) of ``row``: an object of ``schema``'s fields, in its order, with
    :func:`json_value` values. Raises ``KeyError`` for a field the row lacks, as the Parquet sink does."""
    return json.dumps({f.name: json_value(row[f.name]) for f in schema}, ensure_ascii=False)


class WriteJsonl(beam.PTransform):
    """Row dicts -> ``PREFIX-*.jsonl.gz`` (:func:`json_row` lines of ``schema``, gzip). An empty PCollection still
    gives one file, with no line."""

    def __init__(self, prefix: str, schema: pa.Schema):
        super().__init__()
        self.prefix, self.schema = prefix, schema

    def expand(self, rows):
        return (rows | "JsonLines" >> beam.Map(json_row, self.schema)
                | "Write" >> beam.io.WriteToText(self.prefix, file_name_suffix=SUFFIXES["jsonl"],
                                                 compression_type=CompressionTypes.GZIP))


def write_rows(rows, label: str, prefix: str, schema: pa.Schema, output_format: str = "parquet", **parquet):
    """Apply the sink of ``output_format`` to ``rows`` (row dicts of ``schema``) under ``label``: Beam's
    ``WriteToParquet`` (snappy, the ``parquet`` keyword arguments added) or :class:`WriteJsonl`, into
    ``PREFIX-*`` files. Returns the sink's output. Raises ``ValueError`` for an unknown format."""
    if output_format == "parquet":
        return rows | label >> beam.io.WriteToParquet(prefix, schema, codec="snappy",
                                                      file_name_suffix=SUFFIXES["parquet"], **parquet)
    if output_format == "jsonl":
        return rows | label >> WriteJsonl(prefix, schema)
    raise ValueError(f"unknown output format {output_format!r}; choose from {', '.join(OUTPUT_FORMATS)}")


def row_files(folder: str, suffixes=tuple(SUFFIXES.values())) -> list[str]:
    """Paths of ``FOLDER/*<suffix>`` and of Hive partitions ``FOLDER/<key>=<value>/*<suffix>`` for each of
    ``suffixes``, sorted (any Beam filesystem)."""
    patterns = [FileSystems.join(folder, *part, "*" + suffix) for suffix in suffixes for part in ((), ("*=*",))]
    return sorted({m.path for r in FileSystems.match(patterns) for m in r.metadata_list})


def stored_formats(out: str) -> set[str]:
    """The formats of the part files of ``out``'s published tables (:data:`TABLES`; empty: none there)."""
    files = [path for table in TABLES for path in row_files(FileSystems.join(out, table))]
    return {fmt for fmt, suffix in SUFFIXES.items() if any(path.endswith(suffix) for path in files)}


def stored_format(out: str) -> str:
    """The format ``out``'s tables are stored in: ``jsonl`` when any part file is JSON Lines, else ``parquet``."""
    return "jsonl" if "jsonl" in stored_formats(out) else "parquet"


def check_corpus_format(out: str, output_format: str) -> None:
    """Refuse to append rows of ``output_format`` to a corpus stored in another format (``--incremental``; not
    overridden by ``--allow-mixed-settings``: one table, one format).

    Raises:
        SettingsMismatchError: ``out``'s tables hold part files of another format.
    """
    other = sorted(stored_formats(out) - {output_format})
    if other:
        raise SettingsMismatchError(
            f"--incremental: the corpus in {out} is stored as {', '.join(other)}; --format {output_format} cannot "
            f"append to it (give --format {other[0]}, or run without --incremental to replace it)")


def open_part(path: str):
    """``path`` (a part file on any Beam filesystem) opened for reading, its bytes as stored (no decompression by
    Beam: a ``.jsonl.gz`` part is ungzipped by its reader). Raises ``OSError`` (``BeamIOError``)."""
    return FileSystems.open(path, mime_type="application/octet-stream",
                            compression_type=CompressionTypes.UNCOMPRESSED)


def iter_jsonl(path: str) -> Iterator[dict]:
    """The rows (JSON objects) of a ``*.jsonl.gz`` file, streaming; blank lines skipped.

    Raises:
        ValueError: a line is not JSON, or the gzip stream is cut short (a write lost on a full disk).
        OSError: the file cannot be opened or is not gzip.
    """
    with open_part(path) as raw, gzip.GzipFile(fileobj=raw) as lines:
        try:
            for line in lines:
                if line.strip():
                    yield json.loads(line)
        except EOFError:
            raise ValueError(f"{path}: the gzip stream ends before its end-of-stream marker") from None


def _timestamp(value):
    return None if value is None else datetime.fromisoformat(value).astimezone(UTC)


def read_rows(path: str, schema: pa.Schema | None = None) -> list[dict]:
    """The rows of one part file of either format as Python values: a Parquet file's as pyarrow gives them; a JSON
    Lines file's with the timestamp fields of ``schema`` (if given) parsed back and every value passed through Arrow
    with ``schema``, so that both formats give equal rows of equal types (the JSON values as they are without it).
    Raises what :func:`iter_jsonl` or pyarrow raise."""
    if not path.endswith(SUFFIXES["jsonl"]):
        import pyarrow.parquet as pq

        with open_part(path) as f:
            return pq.read_table(f, use_threads=False).to_pylist()
    stamps = [f.name for f in schema or () if pa.types.is_timestamp(f.type)]
    rows = list(iter_jsonl(path))
    for row in rows:
        for name in stamps:
            if name in row:
                row[name] = _timestamp(row[name])
    return rows if schema is None else pa.Table.from_pylist(rows, schema=schema).to_pylist()


def partition_jsonl(articles_dir: str, key: str) -> None:
    """Rewrite the JSON Lines part files of ``articles_dir`` Hive-partitioned by ``key``: each row goes to
    ``<key>=<value>/part-<n>.jsonl.gz`` (``n``: the source file's rank), the value URL-quoted as in a Hive path;
    ``crawl_date`` is the UTC day of ``fetched_at`` (``YYYY-MM-DD``). Rows keep every field (JSON readers do not
    read values from folder names). Streams each source file once, any Beam filesystem; the sources are deleted
    once every partition is written. Raises what :func:`iter_jsonl` raises."""
    sources = row_files(articles_dir, (SUFFIXES["jsonl"],))
    for n, path in enumerate(sources):
        writers = {}
        try:
            for row in iter_jsonl(path):
                value = row["fetched_at"][:10] if key == "crawl_date" else str(row[key])
                if value not in writers:
                    target = FileSystems.join(articles_dir, f"{key}={quote(value, safe='')}", f"part-{n}.jsonl.gz")
                    writers[value] = FileSystems.create(target, compression_type=CompressionTypes.GZIP)
                writers[value].write(json.dumps(row, ensure_ascii=False).encode("utf-8") + b"\n")
        finally:
            for writer in writers.values():
                writer.close()
    if sources:
        FileSystems.delete(sources)


__all__ = ["OUTPUT_FORMATS", "SUFFIXES", "json_row", "json_value", "WriteJsonl", "write_rows", "row_files",
           "stored_formats", "stored_format", "check_corpus_format", "iter_jsonl", "read_rows", "partition_jsonl"]
