"""Read WARC files into :class:`schemas.Page` records (fastwarc), one per WARC response record.

The reader is a plain generator, :func:`iter_warc_file`, so that it can be tested and used
without Beam; :class:`ReadWarcFileFn` is the thin Beam ``DoFn`` around it.

For each WARC response record the reader yields exactly one of:

* a :class:`~schemas.Page`: URL, site, category, fetch time (``WARC-Date``, aware UTC), HTTP
  status, MIME type and ``charset`` parameter of ``Content-Type``, the body with its
  ``Content-Encoding`` (gzip, deflate, br) removed, and provenance (file, WARC-Record-ID,
  byte offset of the record in the compressed file);
* a :class:`~schemas.Reject` (stage ``read`` or ``decode``, reason ``decode_error``) when the
  record cannot become a page: no parseable HTTP status line, an unknown or corrupt
  ``Content-Encoding``, a record shorter than its ``Content-Length``, no target URI or date.

A file that breaks in the middle (corrupt gzip member, garbage instead of a WARC header)
yields one more ``Reject`` (stage ``read``, record id ``""``, the offset where reading stopped)
for the unreadable remainder, and reading goes on with the next file. That unit counts as one
record read (see :class:`ReadStats`) so that the pipeline's accounting stays exact.

Site and category come, in order of preference, from the record's ``WARC-Newsclean-Site`` /
``WARC-Newsclean-Category`` headers, from the same headers on the file's ``warcinfo`` record,
from the path ``.../<site>/<category>/<file>``, else ``"unknown"`` (docs/CONTRACTS.md).
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import BinaryIO

import apache_beam as beam
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics
from fastwarc.warc import ArchiveIterator, WarcRecordType

from newsclean.schemas.records import Page, Provenance, Reject, RejectReason, Stage

try:  # brotli is optional: without it a ``Content-Encoding: br`` body becomes a decode_error reject
    import brotli as _brotli
except ImportError:  # pragma: no cover - depends on the environment
    _brotli = None

SITE_HEADER = "WARC-Newsclean-Site"
CATEGORY_HEADER = "WARC-Newsclean-Category"
PAGE_TYPE_HEADER = "WARC-Newsclean-Page-Type"
UNKNOWN = "unknown"

#: Largest body accepted after removing Content-Encoding, in bytes (guards against decompression bombs).
MAX_DECODED_BYTES = 64 * 1024 * 1024

#: Tag of the reject output of :class:`ReadWarcFileFn`; the main output holds pages.
REJECTS_TAG = "rejects"
#: Tag of the per-file count output of :class:`ReadWarcFileFn`: ``("records_read", n)`` pairs.
COUNTS_TAG = "counts"

METRICS_NAMESPACE = "newsclean"


class ContentDecodingError(ValueError):
    """A body's ``Content-Encoding`` is unknown, unsupported here, or its data is corrupt."""


@dataclass
class ReadStats:
    """Counts of one :func:`iter_warc_file` call, filled in while the generator runs.

    Attributes:
        records_read: WARC response records read, plus one for an unreadable file remainder.
        pages: records that became :class:`~schemas.Page`.
        rejects: records (and unreadable remainders) that became :class:`~schemas.Reject`.
    """

    records_read: int = 0
    pages: int = 0
    rejects: int = 0


# --------------------------------------------------------------------------------------------
# Small pure helpers
# --------------------------------------------------------------------------------------------


def parse_content_type(value: str | None) -> tuple[str, str | None]:
    """Split a ``Content-Type`` header value into ``(mime_type, charset)``.

    ``mime_type`` is lower-cased without parameters (``""`` when the header is missing);
    ``charset`` is the ``charset`` parameter with quotes stripped, or ``None``.
    Example: ``'text/html; Charset="UTF-8"'`` -> ``('text/html', 'UTF-8')``.
    """
    if not value:
        return "", None
    parts = value.split(";")
    mime = parts[0].strip().lower()
    charset = None
    for param in parts[1:]:
        name, _, val = param.partition("=")
        if name.strip().lower() == "charset":
            charset = val.strip().strip("\"'").strip() or None
    return mime, charset


def _bounded_decompress(data: bytes, wbits: int) -> bytes:
    """zlib-decompress ``data`` (all concatenated members for gzip), at most :data:`MAX_DECODED_BYTES`."""
    out: list[bytes] = []
    size = 0
    while data:
        d = zlib.decompressobj(wbits)
        chunk = d.decompress(data, MAX_DECODED_BYTES - size + 1)
        size += len(chunk)
        out.append(chunk)
        if size > MAX_DECODED_BYTES or d.unconsumed_tail:
            raise ContentDecodingError(f"decoded body exceeds {MAX_DECODED_BYTES} bytes")
        if not d.eof:
            raise ContentDecodingError("compressed data is truncated")
        data = d.unused_data if wbits & 16 else b""  # gzip may hold several members
        if data and not data.startswith(b"\x1f\x8b"):
            break  # trailing garbage after the last gzip member: ignored, as browsers do
    return b"".join(out)


def _decode_one(body: bytes, coding: str) -> bytes:
    """Remove one content coding (``gzip``, ``x-gzip``, ``deflate``, ``br``) from ``body``."""
    try:
        if coding in ("gzip", "x-gzip"):
            return _bounded_decompress(body, 16 + zlib.MAX_WBITS)
        if coding == "deflate":  # RFC 9110 says zlib-wrapped; some servers send raw deflate
            try:
                return _bounded_decompress(body, zlib.MAX_WBITS)
            except zlib.error:
                return _bounded_decompress(body, -zlib.MAX_WBITS)
        if coding == "br":
            if _brotli is None:
                raise ContentDecodingError("Content-Encoding br needs the 'brotli' module, not installed")
            decoded = _brotli.decompress(body)
            if len(decoded) > MAX_DECODED_BYTES:
                raise ContentDecodingError(f"decoded body exceeds {MAX_DECODED_BYTES} bytes")
            return decoded
    except (zlib.error, gzip.BadGzipFile, EOFError) as exc:
        raise ContentDecodingError(f"corrupt {coding} data: {exc}") from exc
    except ContentDecodingError:
        raise
    except Exception as exc:  # brotli.error has no stable import path across brotli packages
        raise ContentDecodingError(f"corrupt {coding} data: {type(exc).__name__}: {exc}") from exc
    raise ContentDecodingError(f"unsupported Content-Encoding {coding!r}")


def decode_content_encoding(body: bytes, content_encoding: str | None) -> bytes:
    """Undo the ``Content-Encoding`` of an HTTP body (RFC 9110 §8.4).

    ``content_encoding`` is the header value, e.g. ``"gzip"`` or ``"deflate, br"`` (codings
    are undone last first); ``None``, ``""`` and ``identity`` leave ``body`` as it is.
    An empty body is returned as it is whatever the header says (a HEAD-like empty reply).

    Raises:
        ContentDecodingError: unknown coding, ``br`` without the ``brotli`` module, corrupt or
            truncated compressed data, or a result larger than :data:`MAX_DECODED_BYTES`.
    """
    if not content_encoding or not body:
        return body
    codings = [c.strip().lower() for c in content_encoding.split(",")]
    for coding in reversed(codings):
        if coding in ("", "identity"):
            continue
        body = _decode_one(body, coding)
    return body


def site_category_from_path(path: str) -> tuple[str, str]:
    """``(site, category)`` from a path ``.../<site>/<category>/<file>``; ``"unknown"`` where missing.

    Works for local paths and URLs (``gs://bucket/warc/site/cat/f.warc.gz``): the two directory
    names right above the file are taken, never a URL scheme or bucket-less root.
    """
    _, _, rest = path.rpartition("://")
    parts = [p for p in rest.replace("\\", "/").split("/") if p]
    dirs = parts[:-1]
    if "://" in path and dirs:
        dirs = dirs[1:]  # the bucket / host is not a site directory
    site = dirs[-2] if len(dirs) >= 2 else UNKNOWN
    category = dirs[-1] if len(dirs) >= 1 else UNKNOWN
    if site == UNKNOWN:
        category = UNKNOWN  # a lone parent directory is not enough to say which level it is
    return site, category


def parse_warc_date(value: str | None) -> datetime | None:
    """Parse a ``WARC-Date`` (W3C-DTF, e.g. ``2024-01-02T03:04:05Z``) to an aware UTC datetime.

    Accepts the reduced precisions of W3C-DTF (date only, minutes) and fractional seconds;
    a value without a zone is taken as UTC (WARC 1.1 §5.4 requires UTC). ``None`` if unparseable.
    """
    if not value:
        return None
    text = value.strip()
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if dt.tzinfo is None:
        return dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


# --------------------------------------------------------------------------------------------
# The reader
# --------------------------------------------------------------------------------------------


def _record_date(record) -> datetime | None:
    """fastwarc's parsed ``WARC-Date`` (aware UTC) or our own parse of the raw header."""
    date = record.record_date
    if date is not None:
        return date if date.tzinfo else date.replace(tzinfo=UTC)
    return parse_warc_date(record.headers.get("WARC-Date"))


def _reject(url: str, site: str, category: str, prov: Provenance, stage: Stage, message: str) -> Reject:
    return Reject(
        url=url,
        site=site,
        category=category,
        stage=stage.value,
        reason=RejectReason.DECODE_ERROR.value,
        message=message[:2000],
        warc_file=prov.warc_file,
        warc_record_id=prov.record_id,
        warc_offset=prov.offset,
    )


def record_to_page(record, path: str, default_site: str, default_category: str) -> Page | Reject:
    """Turn one fastwarc response record (HTTP already parsed) into a Page, or a decode_error Reject.

    ``default_site`` / ``default_category`` are used when the record lacks the
    ``WARC-Newsclean-*`` headers. Reads the record's payload (consumes its reader).
    """
    headers = record.headers
    url = (headers.get("WARC-Target-URI") or "").strip().strip("<>")
    site = headers.get(SITE_HEADER) or default_site
    category = headers.get(CATEGORY_HEADER) or default_category
    prov = Provenance(warc_file=path, record_id=record.record_id or "", offset=int(record.stream_pos))

    def reject(stage: Stage, message: str) -> Reject:
        return _reject(url, site, category, prov, stage, message)

    if not url:
        return reject(Stage.READ, "WARC response record has no WARC-Target-URI")
    fetched_at = _record_date(record)
    if fetched_at is None:
        return reject(Stage.READ, f"missing or invalid WARC-Date {headers.get('WARC-Date')!r}")
    http = record.http_headers if record.is_http_parsed else None
    status = http.status_code if http is not None else None
    if status is None:
        line = (http.status_line if http is not None else None) or ""
        return reject(Stage.READ, f"HTTP response head could not be parsed (status line {line[:80]!r})")
    raw = record.reader.read()
    if len(raw) < record.content_length:
        return reject(Stage.READ, f"record truncated: {len(raw)} of {record.content_length} payload bytes")
    try:
        body = decode_content_encoding(raw, http.get("Content-Encoding"))
    except ContentDecodingError as exc:
        return reject(Stage.DECODE, str(exc))
    mime, charset = parse_content_type(http.get("Content-Type"))
    return Page(
        url=url,
        site=site,
        category=category,
        fetched_at=fetched_at,
        status=int(status),
        content_type=mime,
        charset=charset,
        html=body,
        provenance=prov,
        page_type=(headers.get(PAGE_TYPE_HEADER) or "").strip().lower() or None,
    )


def iter_warc_file(path: str, stream: BinaryIO | None = None,
                   stats: ReadStats | None = None) -> Iterator[Page | Reject]:
    """Yield one :class:`~schemas.Page` or :class:`~schemas.Reject` per WARC response record of ``path``.

    Args:
        path: the WARC file (``.warc`` or ``.warc.gz``, local path or any Beam filesystem URL);
            also the ``warc_file`` of the provenance.
        stream: an open binary stream of the raw (still compressed) file; opened with Beam's
            ``FileSystems`` (no transparent decompression, so offsets are file offsets) when None.
        stats: if given, updated with the counts while iterating.

    Yields pages and rejects in file order. Never raises for bad records or a broken file
    remainder (see the module docstring); raises ``OSError`` only when the file cannot be opened.
    """
    stats = stats if stats is not None else ReadStats()
    path_site, path_category = site_category_from_path(path)
    own = stream is None
    if own:
        stream = FileSystems.open(path, mime_type="application/octet-stream",
                                  compression_type=CompressionTypes.UNCOMPRESSED)
    info_site = info_category = None
    last_offset = 0
    try:
        records = ArchiveIterator(stream, record_types=WarcRecordType.response | WarcRecordType.warcinfo,
                                  parse_http=True)
        it = iter(records)
        while True:
            try:
                record = next(it)
            except StopIteration:
                return
            except Exception as exc:  # corrupt gzip member, invalid WARC header, I/O error
                stats.records_read += 1
                stats.rejects += 1
                prov = Provenance(path, "", last_offset)
                yield _reject("", info_site or path_site, info_category or path_category, prov, Stage.READ,
                              f"unreadable WARC data after offset {last_offset}: {type(exc).__name__}: {exc}")
                return
            last_offset = int(record.stream_pos)
            if record.record_type == WarcRecordType.warcinfo:
                info_site = record.headers.get(SITE_HEADER) or info_site
                info_category = record.headers.get(CATEGORY_HEADER) or info_category
                continue
            stats.records_read += 1
            out = record_to_page(record, path, info_site or path_site, info_category or path_category)
            if isinstance(out, Page):
                stats.pages += 1
            else:
                stats.rejects += 1
            yield out
    finally:
        if own:
            stream.close()


class ReadWarcFileFn(beam.DoFn):
    """Beam ``DoFn``: WARC file path (``str``) -> pages (main output) and rejects (``REJECTS_TAG``).

    Also emits ``("records_read", n)`` on ``COUNTS_TAG`` once per file, for the run summary,
    and increments the ``newsclean`` counters ``records_read``, ``pages_read`` and
    ``rejects_decode_error``.
    """

    def setup(self):
        self._records = Metrics.counter(METRICS_NAMESPACE, "records_read")
        self._pages = Metrics.counter(METRICS_NAMESPACE, "pages_read")
        self._rejects = Metrics.counter(METRICS_NAMESPACE, f"rejects_{RejectReason.DECODE_ERROR.value}")

    def process(self, path: str):
        stats = ReadStats()
        for item in iter_warc_file(path, stats=stats):
            if isinstance(item, Page):
                yield item
            else:
                yield beam.pvalue.TaggedOutput(REJECTS_TAG, item)
        self._records.inc(stats.records_read)
        self._pages.inc(stats.pages)
        self._rejects.inc(stats.rejects)
        yield beam.pvalue.TaggedOutput(COUNTS_TAG, ("records_read", stats.records_read))
