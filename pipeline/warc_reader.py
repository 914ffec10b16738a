"""Read WARC files into :class:`schemas.Page` records (fastwarc), one per WARC response record.

The reader is a plain generator, :func:`iter_warc_file`, so that it can be tested and used
without Beam; :class:`ReadWarcFileFn` is the thin Beam ``DoFn`` around it.

For each WARC response record the reader yields exactly one of:

* a :class:`~schemas.Page`: URL, site, category, fetch time (``WARC-Date``, aware UTC), HTTP
  status, MIME type and ``charset`` parameter of ``Content-Type``, the body with its chunked
  ``Transfer-Encoding`` (RFC 9112 §7.1) and its ``Content-Encoding`` (gzip, deflate, br) removed,
  and provenance (file, WARC-Record-ID, byte offset of the record in the compressed file);
* a :class:`~schemas.Reject` (stage ``read`` or ``decode``) when the record cannot become a page:
  ``truncated_record`` (the file ends inside the record), ``too_large`` (payload or decoded body
  over :data:`MAX_BODY_BYTES`: every decoder stops there, so a decompression bomb costs at most
  that much memory), ``decode_error`` (no parseable HTTP status line, an unknown or corrupt
  coding, no target URI or date).

Bytes that are not WARC records are counted too, never dropped: a file (or a remainder after
some good records) that does not parse as WARC yields one ``not_warc`` reject (stage ``read``,
record id ``""``, the offset where reading stopped); a file that ends inside a record
(a cut download: an incomplete last gzip member, or a record header without its ``WARC-Type``)
yields one ``truncated_record`` reject. Each such unit counts as one record read (see
:class:`ReadStats`) so that the pipeline's accounting stays exact. Records of other types
(request, metadata, revisit, resource, ...) are skipped and counted by type
(``skipped_<type>`` counts). A newsclean ``metadata`` record (``application/warc-fields``) that is
``WARC-Concurrent-To`` the last response is read for the crawler's sitemap facts
(``sitemap-publication-date``, ``sitemap-title``, ``sitemap-lastmod``; names in
:mod:`newsclean.schemas.contract`), which land on that response's page (``Page.sitemap_*``); the page is
held back until then (the crawler writes response, request, metadata), so file order is kept.

Site and category come, in order of preference, from the record's ``WARC-Newsclean-Site`` /
``WARC-Newsclean-Category`` headers, from the same headers on the file's ``warcinfo`` record,
else (a WARC from another crawler: Common Crawl, wget, Heritrix, ...) from the record's URL:
site = the registered domain (tldextract with its bundled Public Suffix List snapshot, no
network), category = the first segment of the URL path when the path has more than one segment,
else the page's ``article:section`` meta tag (Open Graph), else ``"unknown"`` (docs/CONTRACTS.md).
"""

from __future__ import annotations

import gzip
import io
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import lru_cache
from typing import BinaryIO
from urllib.parse import unquote, urlsplit

import apache_beam as beam
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics
from fastwarc.warc import ArchiveIterator, WarcRecordType

from newsclean.schemas.contract import (
    CATEGORY_HEADER,
    PAGE_TYPE_HEADER,
    SITE_HEADER,
    SITEMAP_LASTMOD_FIELD,
    SITEMAP_PUBLICATION_DATE_FIELD,
    SITEMAP_TITLE_FIELD,
    UNKNOWN,
)
from newsclean.schemas.records import Page, Provenance, Reject, RejectReason, Stage

try:  # brotli is optional: without it a ``Content-Encoding: br`` body becomes a decode_error reject
    import brotli as _brotli
except ImportError:  # pragma: no cover - depends on the environment
    _brotli = None

#: Largest HTTP payload accepted, in bytes, both as stored in the record and after removing its
#: transfer and content codings (a decompression bomb stops there): a reject ``too_large`` beyond.
#: Parsing and cleaning cost grows with the page (a 31 MB page took 85 s and 1.25 GB); real news article pages
#: are well under 5 MB.
MAX_BODY_BYTES = 10 * 1024 * 1024
#: Bytes at the start of a body searched for an ``article:section`` meta tag.
SECTION_SNIFF_BYTES = 64 * 1024

#: Bytes of a metadata record read for its fields (newsclean's are a few hundred bytes).
MAX_METADATA_BYTES = 64 * 1024
#: warc-fields name -> :class:`~schemas.Page` attribute of the sitemap facts a metadata record carries.
SITEMAP_FIELDS = {SITEMAP_PUBLICATION_DATE_FIELD: "sitemap_publication_date", SITEMAP_TITLE_FIELD: "sitemap_title",
                  SITEMAP_LASTMOD_FIELD: "sitemap_lastmod"}

#: Tag of the reject output of :class:`ReadWarcFileFn`; the main output holds pages.
REJECTS_TAG = "rejects"
#: Tag of the per-file count output of :class:`ReadWarcFileFn`: ``("records_read", n)`` pairs.
COUNTS_TAG = "counts"

METRICS_NAMESPACE = "newsclean"


def inc_counter(name: str, n: int = 1) -> None:
    """Add ``n`` to the Beam counter ``name`` of namespace :data:`METRICS_NAMESPACE` (the runner's metrics)."""
    Metrics.counter(METRICS_NAMESPACE, name).inc(n)


class ContentDecodingError(ValueError):
    """A body's ``Content-Encoding`` is unknown, unsupported here, or its data is corrupt."""


class BodyTooLargeError(ContentDecodingError):
    """A payload, or what decoding it gives, is larger than :data:`MAX_BODY_BYTES`."""


@dataclass
class ReadStats:
    """Counts of one :func:`iter_warc_file` call, filled in while the generator runs.

    Attributes:
        records_read: WARC response records read, plus one per unreadable unit (a file or
            remainder that is not WARC, a truncated tail).
        pages: records that became :class:`~schemas.Page`.
        rejects: records (and unreadable units) that became :class:`~schemas.Reject`.
        skipped: WARC records of other types, by type name (``request``, ``metadata``, ``revisit``,
            ``resource``, ``unknown``, ...); not part of the accounting (not compared in ``==``).
    """

    records_read: int = 0
    pages: int = 0
    rejects: int = 0
    skipped: dict[str, int] = field(default_factory=dict, compare=False)


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


# HTTP decoding is done here, over zlib and brotli, rather than by the WARC libraries, because neither keeps what
# the reader promises (checked on warcio 1.8.1 and FastWARC 2.0.1 against the cases of tests/pipeline):
# - FastWARC's ``auto_decode`` / ``ChunkedReader`` reject chunk extensions, trailer fields and bare-LF chunk lines
#   (RFC 9112 §7.1, §2.2), fail on a body stored de-chunked under its ``Transfer-Encoding: chunked`` header and on a
#   cut last chunk, accept a malformed chunk terminator; its ``GzipReader`` accepts a truncated gzip body, rejects
#   raw deflate and trailing bytes after the last member; its ``BrotliReader`` ignores bytes after the stream.
# - warcio's ``ChunkedDataReader`` requires CRLF and no trailer fields; its ``DecompressingBufferedReader`` passes
#   corrupt gzip data through as if it were not compressed, and its ``br`` decoder fails with brotli 1.2 (and would
#   inflate a block whole, with no output bound).
# Each decoder below stops at ``limit`` bytes of output, so a decompression bomb costs at most that much memory.


def _bounded_decompress(data: bytes, wbits: int, limit: int = MAX_BODY_BYTES) -> bytes:
    """zlib-decompress ``data`` (all concatenated members for gzip), at most ``limit`` bytes out.

    Raises BodyTooLargeError beyond ``limit``; ContentDecodingError for truncated data; zlib.error for corrupt data.
    """
    out: list[bytes] = []
    size = 0
    while data:
        d = zlib.decompressobj(wbits)
        chunk = d.decompress(data, limit - size + 1)
        size += len(chunk)
        out.append(chunk)
        if size > limit or d.unconsumed_tail:
            raise BodyTooLargeError(f"decoded body exceeds {limit} bytes")
        if not d.eof:
            raise ContentDecodingError("compressed data is truncated")
        data = d.unused_data if wbits & 16 else b""  # gzip may hold several members
        if data and not data.startswith(b"\x1f\x8b"):
            break  # trailing garbage after the last gzip member: ignored, as browsers do
    return b"".join(out)


def _bounded_brotli(data: bytes, limit: int = MAX_BODY_BYTES) -> bytes:
    """Brotli-decompress ``data`` (RFC 7932) with the streaming ``Decompressor``, at most ``limit`` bytes out.

    The output buffer is bounded on every call, so a bomb (1 KB -> 1 GiB) stops after ``limit``
    bytes instead of being inflated first and measured after.
    """
    d = _brotli.Decompressor()
    out = [d.process(data, output_buffer_limit=limit + 1)]
    size = len(out[0])
    while size <= limit and not d.is_finished() and not d.can_accept_more_data():
        chunk = d.process(b"", output_buffer_limit=limit + 1 - size)
        if not chunk:
            break
        out.append(chunk)
        size += len(chunk)
    if size > limit:
        raise BodyTooLargeError(f"decoded body exceeds {limit} bytes")
    if not d.is_finished():
        raise ContentDecodingError("brotli data is truncated")
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
            return _bounded_brotli(body)
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
        BodyTooLargeError: a result larger than :data:`MAX_BODY_BYTES` (decoding stops there).
        ContentDecodingError: unknown coding, ``br`` without the ``brotli`` module, corrupt or
            truncated compressed data.
    """
    if not content_encoding or not body:
        return body
    codings = [c.strip().lower() for c in content_encoding.split(",")]
    for coding in reversed(codings):
        if coding in ("", "identity"):
            continue
        body = _decode_one(body, coding)
    return body


_CHUNK_SIZE_LINE = re.compile(rb"([0-9A-Fa-f]{1,16})[ \t]*(?:;[^\r\n]*)?\r?\n")


def decode_chunked(body: bytes, limit: int = MAX_BODY_BYTES) -> bytes:
    """Undo HTTP/1.1 chunked transfer coding (RFC 9112 §7.1): ``size-hex[;ext] CRLF data CRLF ... 0 CRLF``.

    A body whose first line is not a chunk-size line is returned as it is: many crawlers store the
    de-chunked body but keep the ``Transfer-Encoding: chunked`` header. Bare LF line ends are
    accepted (RFC 9112 §2.2); trailer fields after the last chunk are ignored. A body that ends
    before its last (zero-size) chunk keeps the chunks it has, as a browser shows a cut page.

    Raises:
        BodyTooLargeError: the data grows over ``limit`` bytes.
        ContentDecodingError: a chunk without its CRLF, or a malformed size line after the first.
    """
    if not _CHUNK_SIZE_LINE.match(body):
        return body
    out: list[bytes] = []
    size = pos = 0
    while pos < len(body):
        m = _CHUNK_SIZE_LINE.match(body, pos)
        if m is None:
            raise ContentDecodingError(f"malformed chunk-size line at byte {pos}")
        n = int(m.group(1), 16)
        pos = m.end()
        if n == 0:
            break
        size += n
        if size > limit:
            raise BodyTooLargeError(f"decoded body exceeds {limit} bytes")
        out.append(body[pos:pos + n])
        pos += n
        if pos >= len(body):
            break  # cut inside or right after the last chunk's data
        if body.startswith(b"\r\n", pos):
            pos += 2
        elif body.startswith(b"\n", pos):
            pos += 1
        else:
            raise ContentDecodingError(f"chunk of {n} bytes not followed by CRLF at byte {pos}")
    return b"".join(out)


def decode_http_body(body: bytes, transfer_encoding: str | None, content_encoding: str | None) -> bytes:
    """Remove the transfer coding (only ``chunked`` is in use, RFC 9112 §7), then the content codings.

    Raises BodyTooLargeError / ContentDecodingError as :func:`decode_chunked` and
    :func:`decode_content_encoding` do.
    """
    codings = [c.strip().lower() for c in (transfer_encoding or "").split(",") if c.strip()]
    if codings and codings[-1] == "chunked":
        body = decode_chunked(body)
        codings.pop()
    for coding in reversed(codings):  # a transfer coding other than chunked (gzip): rare, undo it too
        if coding != "identity":
            body = _decode_one(body, coding)
    return decode_content_encoding(body, content_encoding)


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


@lru_cache(maxsize=1)
def _tld_extract():
    """A tldextract extractor on the Public Suffix List snapshot bundled with the package (no network, no cache
    dir), private suffixes included: ``a.blogspot.com`` and ``b.blogspot.com`` are two sites."""
    import tldextract

    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, include_psl_private_domains=True)


def site_from_url(url: str) -> str:
    """The registered domain of ``url`` (``https://www.bbc.co.uk/news/x`` -> ``bbc.co.uk``), lower-cased.

    Uses the Public Suffix List (tldextract's bundled snapshot), so ``foo.blogspot.com`` is its
    own site. A host without a public suffix (an IP address, ``localhost``) is its own site;
    ``"unknown"`` when the URL has no host.
    """
    host = (urlsplit(url).hostname or "").strip(".").lower()
    if not host:
        return UNKNOWN
    ext = _tld_extract()(host)
    domain = getattr(ext, "top_domain_under_public_suffix", None)
    if domain is None:  # tldextract < 5.3
        domain = ext.registered_domain
    return domain or host


_SECTION_META = re.compile(
    rb"""<meta\b[^>]*?\bproperty\s*=\s*["']?article:section["']?[^>]*?\bcontent\s*=\s*["']([^"'<>]{1,80})["']"""
    rb"""|<meta\b[^>]*?\bcontent\s*=\s*["']([^"'<>]{1,80})["'][^>]*?\bproperty\s*=\s*["']?article:section\b""",
    re.I,
)
_SEGMENT_OK = re.compile(r"^[\w][\w.-]{0,79}$")


def _slug(text: str) -> str:
    return "-".join(text.strip().lower().split())[:80]


def category_from_url(url: str, body: bytes = b"") -> str:
    """A category for a page whose crawler did not record one (a WARC file of another crawler).

    The first segment of the URL path when the path has at least two segments and the first is a
    word, not a number (``/politics/2024/story.html`` -> ``politics``; ``/2024/05/x`` has none),
    else the page's Open Graph ``article:section`` (searched in its first
    :data:`SECTION_SNIFF_BYTES` bytes, lower-cased, spaces to ``-``), else ``"unknown"``.

    The section is sniffed from the raw bytes, not taken from the parsed metadata
    (:attr:`newsclean.transforms.metadata.Metadata.section`), because the category is needed before any page is
    parsed: it is half of the ``(site, category)`` key under which the neighbour sample is drawn and the site
    evidence learnt (``stages.LearnSiteEvidence``) before a page is cleaned, and every reject of the reader and of
    ``FilterResponses`` carries it. Parsing each such page in the reader for it would add an lxml parse per page.
    """
    segments = [unquote(seg) for seg in urlsplit(url).path.split("/") if seg]
    if len(segments) >= 2:
        first = segments[0].lower()
        if _SEGMENT_OK.match(first) and not first.replace("-", "").replace("_", "").isdigit() and "." not in first:
            return first[:80]
    m = _SECTION_META.search(body[:SECTION_SNIFF_BYTES]) if body else None
    if m:
        section = _slug((m.group(1) or m.group(2)).decode("utf-8", "replace"))
        if section:
            return section
    return UNKNOWN


# --------------------------------------------------------------------------------------------
# The reader
# --------------------------------------------------------------------------------------------


def _record_date(record) -> datetime | None:
    """fastwarc's parsed ``WARC-Date`` (aware UTC) or our own parse of the raw header."""
    date = record.record_date
    if date is not None:
        return date if date.tzinfo else date.replace(tzinfo=UTC)
    return parse_warc_date(record.headers.get("WARC-Date"))


def _reject(url: str, site: str, category: str, prov: Provenance, stage: Stage, message: str,
            reason: RejectReason = RejectReason.DECODE_ERROR) -> Reject:
    """A reject row of the reader (:meth:`Reject.of`; ``decode_error`` unless another reason is given)."""
    return Reject.of(url, site, category, prov, stage, reason, message)


def record_to_page(record, path: str, default_site: str | None = None,
                   default_category: str | None = None) -> Page | Reject:
    """Turn one fastwarc response record (HTTP already parsed) into a Page, or a Reject.

    ``default_site`` / ``default_category`` (from the file's warcinfo record) are used when the
    record lacks the ``WARC-Newsclean-*`` headers; when both are missing too, site and category
    come from the URL (:func:`site_from_url`, :func:`category_from_url`). Reads the record's
    payload (consumes its reader), at most :data:`MAX_BODY_BYTES` + 1 bytes.
    Rejects: ``too_large``, ``truncated_record`` (stage ``read``), ``decode_error`` (``read``/``decode``).
    """
    headers = record.headers
    url = (headers.get("WARC-Target-URI") or "").strip().strip("<>")
    site = headers.get(SITE_HEADER) or default_site
    category = headers.get(CATEGORY_HEADER) or default_category
    prov = Provenance(warc_file=path, record_id=record.record_id or "", offset=int(record.stream_pos))
    from_url = not site or not category

    def reject(stage: Stage, message: str, reason: RejectReason = RejectReason.DECODE_ERROR) -> Reject:
        return _reject(url, site or site_from_url(url), category or category_from_url(url), prov, stage,
                       message, reason)

    if not url:
        if block_is_short(record, MAX_BODY_BYTES):  # a header cut before its WARC-Target-URI line
            return reject(Stage.READ, "record truncated inside its header", RejectReason.TRUNCATED_RECORD)
        return reject(Stage.READ, "WARC response record has no WARC-Target-URI")
    fetched_at = _record_date(record)
    if fetched_at is None:
        return reject(Stage.READ, f"missing or invalid WARC-Date {headers.get('WARC-Date')!r}")
    if record.content_length > MAX_BODY_BYTES + 64 * 1024:  # the HTTP head is part of the block
        return reject(Stage.READ, f"record block of {record.content_length} bytes exceeds {MAX_BODY_BYTES}",
                      RejectReason.TOO_LARGE)
    http = record.http_headers if record.is_http_parsed else None
    status = http.status_code if http is not None else None
    if status is None:
        line = (http.status_line if http is not None else None) or ""
        return reject(Stage.READ, f"HTTP response head could not be parsed (status line {line[:80]!r})")
    raw = record.reader.read(MAX_BODY_BYTES + 1)
    if len(raw) > MAX_BODY_BYTES:
        return reject(Stage.READ, f"payload exceeds {MAX_BODY_BYTES} bytes", RejectReason.TOO_LARGE)
    if len(raw) < record.content_length:
        return reject(Stage.READ, f"record truncated: {len(raw)} of {record.content_length} payload bytes",
                      RejectReason.TRUNCATED_RECORD)
    try:
        body = decode_http_body(raw, http.get("Transfer-Encoding"), http.get("Content-Encoding"))
    except BodyTooLargeError as exc:
        return reject(Stage.DECODE, str(exc), RejectReason.TOO_LARGE)
    except ContentDecodingError as exc:
        return reject(Stage.DECODE, str(exc))
    mime, charset = parse_content_type(http.get("Content-Type"))
    if from_url:
        site = site or site_from_url(url)
        category = category or category_from_url(url, body)
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


def parse_warc_fields(block: bytes) -> dict[str, str]:
    """``name -> value`` of an ``application/warc-fields`` block (WARC 1.1 §6.3: ``name: value`` lines).

    Names are kept as written; the first of repeated names wins; lines without ``:`` are ignored;
    bytes that are not UTF-8 are replaced. Never raises.
    """
    out: dict[str, str] = {}
    for line in block.decode("utf-8", "replace").splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip():
            out.setdefault(name.strip(), value.strip())
    return out


def with_sitemap_facts(page: Page, fields: dict[str, str]) -> Page:
    """``page`` with the sitemap facts of its metadata record's ``fields`` (:data:`SITEMAP_FIELDS`); empty values
    are ignored, and a page without any such field is returned as it is."""
    facts = {attr: fields[name] for name, attr in SITEMAP_FIELDS.items() if fields.get(name)}
    return replace(page, **facts) if facts else page


def plain_tail_complete(stream: BinaryIO, offset: int, records_seen: int) -> bool | None:
    """Whether an uncompressed WARC ends cleanly after the record at byte ``offset`` (the last one read).

    fastwarc stops silently at a record header cut before its end; this re-reads the last record's header
    from ``offset``, finds where its block (``Content-Length``) and the two closing CRLFs end, and calls
    the file incomplete when it ends before that or anything but whitespace follows. With no record read (``records_seen`` 0) any
    non-whitespace byte is incomplete. Returns None when ``stream`` cannot seek or starts with gzip
    (see :func:`gzip_tail_complete`). Reads the last record's header (≤ 64 KiB) and the bytes after its block.
    """
    try:
        if not stream.seekable():
            return None
        stream.seek(0)
        if stream.read(2) == b"\x1f\x8b":
            return None
        stream.seek(offset)
        data = stream.read(MAX_METADATA_BYTES)
        if records_seen:
            end = data.find(b"\r\n\r\n")
            length = re.search(rb"(?im)^content-length:[ \t]*(\d+)", data[:end]) if end >= 0 else None
            if length is None:
                return False
            block_end = offset + end + 4 + int(length.group(1))
            if stream.seek(0, io.SEEK_END) < block_end + 4:  # the block and its closing CRLF CRLF
                return False
            stream.seek(block_end)
            data = stream.read(MAX_METADATA_BYTES)
    except (OSError, ValueError):
        return None
    return not data.strip(b"\x00\r\n\t ")


def block_is_short(record, limit: int = MAX_METADATA_BYTES) -> bool:
    """Whether a record's block ends before its ``Content-Length`` (a file cut inside the record).

    Reads (and so consumes) at most ``limit`` bytes of the block; a record declaring more than
    ``limit`` bytes is not judged (False). For an uncompressed ``.warc`` this is the only sign of a cut:
    a ``.warc.gz`` also has :func:`gzip_tail_complete`.
    """
    if record.content_length > limit:
        return False
    return len(record.reader.read(record.content_length)) < record.content_length


def _record_type_name(record_type) -> str:
    """``WarcRecordType.response`` -> ``"response"``."""
    return str(record_type).rpartition(".")[2].lower()


def gzip_tail_complete(stream: BinaryIO, offset: int) -> bool | None:
    """Whether the gzip members from byte ``offset`` of ``stream`` to its end are all complete.

    A ``.warc.gz`` holds one gzip member per record (WARC 1.1 annex D); a cut download ends in
    an incomplete member, which fastwarc reads as a short record or as the end of the file.
    Bytes after the last member other than NUL or whitespace padding make it incomplete too.
    Returns None when ``stream`` cannot seek or the bytes at ``offset`` are not gzip (an
    uncompressed WARC). Reads from ``offset`` to the end (normally the last record only).
    """
    try:
        if not stream.seekable():
            return None
        stream.seek(offset)
        data = stream.read()
    except (OSError, ValueError):
        return None
    if not data.startswith(b"\x1f\x8b"):
        return None
    while data.startswith(b"\x1f\x8b"):
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            while not d.eof and (data or d.unconsumed_tail):  # inflate in bounded steps (memory)
                d.decompress(d.unconsumed_tail or data, 1 << 20)
                data = b""
        except zlib.error:
            return False
        if not d.eof:
            return False
        data = d.unused_data
    return not data.strip(b"\x00\r\n\t ")  # bytes left that are no gzip member: a cut member header


def iter_warc_file(path: str, stream: BinaryIO | None = None,
                   stats: ReadStats | None = None) -> Iterator[Page | Reject]:
    """Yield one :class:`~schemas.Page` or :class:`~schemas.Reject` per WARC response record of ``path``.

    Args:
        path: the WARC file (``.warc`` or ``.warc.gz``, local path or any Beam filesystem URL);
            also the ``warc_file`` of the provenance.
        stream: an open binary stream of the raw (still compressed) file; opened with Beam's
            ``FileSystems`` (no transparent decompression, so offsets are file offsets) when None.
        stats: if given, updated with the counts while iterating.

    Yields pages and rejects in file order, plus one ``not_warc`` or ``truncated_record`` reject
    for bytes that are not (complete) WARC records (see the module docstring). Never raises for
    bad records or a broken file; raises ``OSError`` only when the file cannot be opened.
    """
    stats = stats if stats is not None else ReadStats()
    own = stream is None
    if own:
        stream = FileSystems.open(path, mime_type="application/octet-stream",
                                  compression_type=CompressionTypes.UNCOMPRESSED)
    info_site = info_category = None
    held: Page | None = None  # the last page, until its metadata record (or anything else) comes
    last_offset = 0
    records_seen = 0
    last_truncated = False  # the last record was already rejected as truncated_record

    def unit(reason: RejectReason, message: str) -> Reject:
        stats.records_read += 1
        stats.rejects += 1
        return _reject("", info_site or UNKNOWN, info_category or UNKNOWN, Provenance(path, "", last_offset),
                       Stage.READ, message, reason)

    try:
        it = iter(ArchiveIterator(stream, record_types=WarcRecordType.any_type, parse_http=True))
        while True:
            try:
                record = next(it)
            except StopIteration:
                break
            except Exception as exc:  # corrupt gzip member, invalid WARC header, I/O error
                if held is not None:
                    yield held
                    held = None
                reason = RejectReason.NOT_WARC
                yield unit(reason, f"{'no WARC record' if not records_seen else 'unreadable WARC data'} "
                                   f"after offset {last_offset}: {type(exc).__name__}: {exc}")
                return
            records_seen += 1
            last_offset = int(record.stream_pos)
            last_truncated = False
            kind = _record_type_name(record.record_type)
            if (held is not None and record.record_type == WarcRecordType.metadata
                    and record.headers.get("WARC-Concurrent-To") == held.provenance.record_id):
                fields = parse_warc_fields(record.reader.read(MAX_METADATA_BYTES))
                stats.skipped[kind] = stats.skipped.get(kind, 0) + 1
                yield with_sitemap_facts(held, fields)
                held = None
                continue
            if held is not None and record.record_type != WarcRecordType.request:
                yield held  # no metadata record of ours follows this page's response
                held = None
            if record.record_type == WarcRecordType.warcinfo:
                info_site = record.headers.get(SITE_HEADER) or info_site
                info_category = record.headers.get(CATEGORY_HEADER) or info_category
                continue
            if (record.record_type in (WarcRecordType.unknown, WarcRecordType.no_type)
                    and not (record.headers.get("WARC-Type") and record.headers.get("Content-Length"))):
                # fastwarc's reading of a header cut before its WARC-Type (or mandatory Content-Length) line:
                # the file ends here, or (a damaged header) reading goes on with the next record
                yield unit(RejectReason.TRUNCATED_RECORD,
                           f"a WARC record header cut or damaged at offset {last_offset}")
                last_truncated = True
                continue
            if record.record_type != WarcRecordType.response:
                if block_is_short(record):
                    yield unit(RejectReason.TRUNCATED_RECORD, f"the file ends inside the {kind} record at offset "
                                                             f"{last_offset}")
                    last_truncated = True
                    continue
                stats.skipped[kind] = stats.skipped.get(kind, 0) + 1
                continue
            stats.records_read += 1
            out = record_to_page(record, path, info_site, info_category)
            if isinstance(out, Page):
                stats.pages += 1
                held = out
                continue
            stats.rejects += 1
            last_truncated = out.reason == RejectReason.TRUNCATED_RECORD.value
            yield out
        if held is not None:
            yield held
            held = None
        if not last_truncated and plain_tail_complete(stream, last_offset, records_seen) is False:
            yield unit(RejectReason.TRUNCATED_RECORD, f"the file ends inside a WARC record after offset {last_offset}")
        elif not last_truncated and gzip_tail_complete(stream, last_offset) is False:
            yield unit(RejectReason.TRUNCATED_RECORD,
                       f"the file ends inside the gzip member {'of the record ' if records_seen else ''}"
                       f"at offset {last_offset}")
    finally:
        if own:
            stream.close()


class ReadWarcFileFn(beam.DoFn):
    """Beam ``DoFn``: WARC file path (``str``) -> pages (main output) and rejects (``REJECTS_TAG``).

    Also emits, once per file, ``("records_read", n)`` and ``("skipped_<type>", n)`` for each
    skipped WARC record type on ``COUNTS_TAG``, for the run summary, and increments the
    ``newsclean`` counters ``records_read``, ``pages_read`` and ``rejects_<reason>``.
    """

    def setup(self):
        self._records = Metrics.counter(METRICS_NAMESPACE, "records_read")
        self._pages = Metrics.counter(METRICS_NAMESPACE, "pages_read")

    def process(self, path: str):
        stats = ReadStats()
        for item in iter_warc_file(path, stats=stats):
            if isinstance(item, Page):
                yield item
            else:
                inc_counter(f"rejects_{item.reason}")
                yield beam.pvalue.TaggedOutput(REJECTS_TAG, item)
        self._records.inc(stats.records_read)
        self._pages.inc(stats.pages)
        yield beam.pvalue.TaggedOutput(COUNTS_TAG, ("records_read", stats.records_read))
        for kind, n in sorted(stats.skipped.items()):
            yield beam.pvalue.TaggedOutput(COUNTS_TAG, (f"skipped_{kind}", n))
