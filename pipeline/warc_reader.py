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
``WARC-Newsclean-Category`` headers, from the same headers on the file's ``warcinfo`` record, else (a WARC from
another crawler: Common Crawl, wget, Heritrix, ...): site = the URL's host; category = the crawler's folder layout
``<site>/<category>/<site>-<category>-...warc.gz`` when the file is laid out so, else the section the URL's first
path segment names when that section has enough pages to fill a neighbour sample of its own (the pipeline counts
them first: ``stages.LearnSiteEvidence``), else ``"unknown"`` (the host's pages form one group). docs/CONTRACTS.md.
A Common Crawl news crawl file (named ``CC-NEWS-<stamp>-<serial>.warc.gz``: :mod:`newsclean.pipeline.cc_news`) is
such a WARC, except that its site is the host without a leading ``www.`` (:func:`without_www`).

With ``hosts`` (``--hosts``), a response record whose ``WARC-Target-URI`` host is none of them nor a subdomain of one
(:func:`in_hosts`) becomes no row: it is counted as skipped, type ``outside_hosts`` (:data:`OUTSIDE_HOSTS`), and its
offset is one the independent count finds accounted for (:func:`check_read`).
"""

from __future__ import annotations

import gzip
import html
import io
import logging
import re
import zlib
from collections import Counter
from collections.abc import Container, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import BinaryIO
from urllib.parse import unquote, urlsplit

import apache_beam as beam
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics
from fastwarc.warc import ArchiveIterator, WarcRecordType

from newsclean.pipeline.cc_news import warc_timestamp
from newsclean.pipeline.progress import PROGRESS
from newsclean.pipeline.warc_framing import (
    MAX_HEADER_BYTES,
    PADDING,
    WARC_MAGIC,
    ByteRange,
    MemberInflater,
    Rereading,
    after_long_block,
    find_warc_header,
    find_warc_member,
    headers_between,
    is_gzip,
    is_padding,
    members_between,
    missed_records,
    read_at,
    record_bounds,
    resume_after,
    scan_responses,
    skip_padding,
    stream_size,
)
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
from newsclean.transforms.parse import parse_content_type

try:  # brotli is optional: without it a ``Content-Encoding: br`` body becomes a decode_error reject
    import brotli as _brotli
except ImportError:  # pragma: no cover - depends on the environment
    _brotli = None

#: Largest HTTP payload accepted, in bytes, both as stored in the record and after removing its
#: transfer and content codings (a decompression bomb stops there): a reject ``too_large`` beyond.
#: Parsing and cleaning cost grows with the page (a 31 MB page took 85 s and 1.25 GB); real news article pages
#: are well under 5 MB.
MAX_BODY_BYTES = 10 * 1024 * 1024

#: Bytes of a metadata record read for its fields (newsclean's are a few hundred bytes).
MAX_METADATA_BYTES = 64 * 1024
#: warc-fields name -> :class:`~schemas.Page` attribute of the sitemap facts a metadata record carries.
SITEMAP_FIELDS = {SITEMAP_PUBLICATION_DATE_FIELD: "sitemap_publication_date", SITEMAP_TITLE_FIELD: "sitemap_title",
                  SITEMAP_LASTMOD_FIELD: "sitemap_lastmod"}

#: Tag of the reject output of :class:`ReadWarcFileFn`; the main output holds pages.
REJECTS_TAG = "rejects"
#: Tag of the per-file count output of :class:`ReadWarcFileFn`: ``("records_read", n)`` pairs.
COUNTS_TAG = "counts"
#: Count name prefix of the WARC records skipped, by type (``skipped_request``, ``skipped_metadata``, ...).
SKIPPED_PREFIX = "skipped_"
#: Skip type of the response records outside ``--hosts`` (count ``skipped_outside_hosts``).
OUTSIDE_HOSTS = "outside_hosts"

METRICS_NAMESPACE = "newsclean"

log = logging.getLogger(__name__)


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
        records_read: WARC response records read, plus one per unreadable unit (a stretch of bytes that is
            not WARC, a truncated tail).
        pages: records that became :class:`~schemas.Page`.
        rejects: records (and unreadable units) that became :class:`~schemas.Reject`.
        skipped: WARC records of other types, by type name (``request``, ``metadata``, ``revisit``,
            ``resource``, ``unknown``, ...), and the response records outside ``hosts`` (:data:`OUTSIDE_HOSTS`);
            not part of the accounting (not compared in ``==``).
        spans: the ``[start, end)`` byte ranges given up as damaged (one reject each), for :func:`check_read`.
        found: response records the independent count found (:func:`check_read`; None before it ran);
        missed: those of them no page or reject stands for (a reader bug; 0 when :func:`check_read` did not run).
        outside: the byte offsets of the response records skipped as outside ``hosts`` (:data:`OUTSIDE_HOSTS`).
        position: the byte offset in the (compressed) file that reading has reached: the offset of the last record
            begun, the file's size once it is read to its end (the progress line's bytes read).
    """

    records_read: int = 0
    pages: int = 0
    rejects: int = 0
    skipped: dict[str, int] = field(default_factory=dict, compare=False)
    spans: list[tuple[int, int]] = field(default_factory=list, compare=False, repr=False)
    found: int | None = field(default=None, compare=False)
    missed: int = field(default=0, compare=False)
    position: int = field(default=0, compare=False)
    outside: list[int] = field(default_factory=list, compare=False, repr=False)


# --------------------------------------------------------------------------------------------
# Small pure helpers
# --------------------------------------------------------------------------------------------


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


def folder_category(path: str) -> str | None:
    """The category of the crawler's folder layout ``.../<site>/<category>/<site>-<category>-<stamp>-<serial>.warc.gz``
    (docs/CONTRACTS.md), HTML entities decoded; None when ``path`` is not laid out so (the file's name must start
    with ``<site>-<category>-``: a WARC file of another crawler in some folder says nothing by its folder names).
    Works for local paths and URLs (``gs://bucket/warc/site/cat/f.warc.gz``)."""
    parts = [p for p in path.rpartition("://")[2].replace("\\", "/").split("/") if p]
    if len(parts) < 3:
        return None
    site, category, name = parts[-3:]
    if not name.startswith(f"{site}-{category}-"):
        return None
    return html.unescape(category)


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


def site_from_url(url: str) -> str:
    """The host of ``url``, lower-cased, without port or trailing dot (``https://www.bbc.co.uk:443/news/x`` ->
    ``www.bbc.co.uk``): the site of a page whose crawler recorded none. A host is one site, so blogs that share a
    registered domain (``a.typepad.com``, ``b.typepad.com``) stay apart. ``"unknown"`` when the URL has no host."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:  # an invalid port or IPv6 literal
        host = ""
    return host.strip(".").lower() or UNKNOWN


def without_www(host: str) -> str:
    """``host`` without a leading ``www.`` label (``www.bbc.co.uk`` -> ``bbc.co.uk``; ``www`` stays)."""
    return host[4:] if host.startswith("www.") and len(host) > 4 else host


def in_hosts(url: str, hosts: tuple[str, ...]) -> bool:
    """Whether the host of ``url`` (:func:`site_from_url`) is one of ``hosts`` or a subdomain of one (``hosts``:
    lower-case names; ``bbc.co.uk`` takes ``bbc.co.uk``, ``www.bbc.co.uk``, ``news.bbc.co.uk``, not ``xbbc.co.uk``)."""
    host = site_from_url(url)
    return any(host == h or host.endswith("." + h) for h in hosts)


_SEGMENT_OK = re.compile(r"^[\w][\w.&+-]{0,79}$")


def url_section(url: str) -> str | None:
    """The section a URL's path names: its first segment, percent- and HTML-entity-decoded and lower-cased, when
    the path has at least two segments and the first is a word, not a number or a file name
    (``/politics/2024/story.html`` -> ``politics``; ``/arts-&amp;-entertainment/x`` -> ``arts-&-entertainment``;
    ``/2024/05/x``, ``/story.html`` -> None)."""
    try:
        path = urlsplit(url).path
    except ValueError:
        return None
    segments = [html.unescape(unquote(seg)) for seg in path.split("/") if seg]
    if len(segments) < 2:
        return None
    first = segments[0].strip().lower()
    if not _SEGMENT_OK.match(first) or first.replace("-", "").replace("_", "").isdigit() or "." in first:
        return None
    return first


#: ``sections`` argument of the reader meaning "every section the URLs name counts" (no page counts known yet).
ANY_SECTION = None


def category_from_url(url: str, site: str, sections: Container[tuple[str, str]] | None = ANY_SECTION) -> str:
    """The category of a page whose crawler recorded none and whose file is not in the crawler's folder layout:
    the section its URL names (:func:`url_section`) when ``(site, section)`` is one of ``sections`` (the pipeline's
    sections with enough pages to fill a neighbour sample of their own: ``stages.LearnSiteEvidence``), else
    ``"unknown"``: the page is grouped with its host's other pages. With ``sections`` :data:`ANY_SECTION` every
    section counts.

    The category is half of the ``(site, category)`` key under which neighbour pages are sampled and the site
    evidence learnt before any page is parsed, so it comes from the URL, not from the page's markup."""
    section = url_section(url)
    if section is None or (sections is not ANY_SECTION and (site, section) not in sections):
        return UNKNOWN
    return section


def site_and_category(url: str, path: str, site: str | None, category: str | None,
                      sections: Container[tuple[str, str]] | None = ANY_SECTION) -> tuple[str, str, bool]:
    """``(site, category, category from the URL)`` of a record of ``path`` at ``url`` whose headers (or warcinfo)
    give ``site`` and ``category`` (None where they do not): site = the header, else the URL's host
    (:func:`site_from_url`); category = the header, else the crawler's folder layout (:func:`folder_category`),
    else :func:`category_from_url` over ``sections`` (the third value True: the pipeline re-keys such pages once
    it knows how many pages each section has). A CC-NEWS file's site drops the host's ``www.`` (:func:`without_www`)."""
    if not site:
        site = site_from_url(url)
        site = without_www(site) if warc_timestamp(path) is not None else site
    if category:
        return site, category, False
    category = folder_category(path)
    if category:
        return site, category, False
    return site, category_from_url(url, site, sections), True


# --------------------------------------------------------------------------------------------
# The reader
# --------------------------------------------------------------------------------------------


def _record_date(record) -> datetime | None:
    """fastwarc's parsed ``WARC-Date`` (aware UTC) or our own parse of the raw header."""
    date = record.record_date
    if date is not None:
        return date if date.tzinfo else date.replace(tzinfo=UTC)
    return parse_warc_date(record.headers.get("WARC-Date"))


def target_uri(headers) -> str:
    """A record's ``WARC-Target-URI`` (WARC 1.1 §5.6), without surrounding blanks and the ``<>`` of WARC 1.0 files;
    ``""`` when it has none."""
    return (headers.get("WARC-Target-URI") or "").strip().strip("<>")


def _reject(url: str, site: str, category: str, prov: Provenance, stage: Stage, message: str,
            reason: RejectReason = RejectReason.DECODE_ERROR) -> Reject:
    """A reject row of the reader (:meth:`Reject.of`; ``decode_error`` unless another reason is given)."""
    return Reject.of(url, site, category, prov, stage, reason, message)


def record_to_page(record, path: str, default_site: str | None = None, default_category: str | None = None,
                   offset: int | None = None,
                   sections: Container[tuple[str, str]] | None = ANY_SECTION) -> Page | Reject:
    """Turn one fastwarc response record (HTTP already parsed) into a Page, or a Reject.

    ``default_site`` / ``default_category`` (from the file's warcinfo record) are used when the
    record lacks the ``WARC-Newsclean-*`` headers; when they are missing too, site and category
    come from the URL and the folder layout (:func:`site_and_category`, over ``sections``). Reads the record's
    payload (consumes its reader), at most :data:`MAX_BODY_BYTES` + 1 bytes. ``offset``: the record's byte offset
    in the file (the offset of its gzip member), FastWARC's ``stream_pos`` when None.
    Rejects: ``too_large``, ``truncated_record`` (stage ``read``), ``decode_error`` (``read``/``decode``).
    """
    headers = record.headers
    url = target_uri(headers)
    site, category, from_url = site_and_category(url, path, headers.get(SITE_HEADER) or default_site,
                                                 headers.get(CATEGORY_HEADER) or default_category, sections)
    prov = Provenance(warc_file=path, record_id=record.record_id or "",
                      offset=int(record.stream_pos) if offset is None else offset)

    def reject(stage: Stage, message: str, reason: RejectReason = RejectReason.DECODE_ERROR) -> Reject:
        return _reject(url, site, category, prov, stage, message, reason)

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
        category_from_url=from_url,
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


def block_is_short(record, limit: int = MAX_METADATA_BYTES) -> bool:
    """Whether a record's block ends before its ``Content-Length`` (a file cut inside the record, or a gzip member
    that ends before the length its record declares).

    Reads (and so consumes) at most ``limit`` bytes of the block; a record declaring more than
    ``limit`` bytes is not judged (False).
    """
    if record.content_length > limit:
        return False
    return len(record.reader.read(record.content_length)) < record.content_length


def _record_type_name(record_type) -> str:
    """``WarcRecordType.response`` -> ``"response"``."""
    return str(record_type).rpartition(".")[2].lower()


def _fastwarc_records(stream: BinaryIO):
    """FastWARC's iterator over the WARC records of ``stream`` (every type, HTTP heads parsed)."""
    return iter(ArchiveIterator(stream, record_types=WarcRecordType.any_type, parse_http=True))


class _FileReading:
    """The state of one :func:`iter_warc_file` call: the warcinfo's site and category, the page held back for
    its metadata record, the counts, and the records of one stretch of the file (:meth:`records`)."""

    def __init__(self, path: str, stream: BinaryIO, stats: ReadStats,
                 sections: Container[tuple[str, str]] | None = ANY_SECTION, hosts: tuple[str, ...] = ()):
        self.path, self.stream, self.stats, self.sections, self.hosts = path, stream, stats, sections, hosts
        self.info_site: str | None = None
        self.info_category: str | None = None
        self.held: Page | None = None
        self.records_seen = 0
        self.last_offset = 0  # the last record's offset
        self.last_truncated = False  # the last record was already rejected as truncated_record
        self.error: Exception | None = None  # what stopped the last stretch (None: its end)

    def release(self) -> Iterator[Page]:
        """The held page, if any (nothing of ours follows it)."""
        if self.held is not None:
            page, self.held = self.held, None
            yield page

    def damaged(self, reason: RejectReason, start: int, end: int, what: str) -> Iterator[Page | Reject]:
        """The held page, then one reject for the damaged bytes ``[start, end)`` (counted as one record read)."""
        yield from self.release()
        self.stats.records_read += 1
        self.stats.rejects += 1
        self.stats.spans.append((start, end))
        prefix = "no WARC record" if not self.records_seen else "unreadable WARC data"
        message = f"{prefix} in bytes {start}-{end} ({end - start} bytes): {what}"
        yield _reject("", self.info_site or UNKNOWN, self.info_category or UNKNOWN, Provenance(self.path, "", start),
                      Stage.READ, message, reason)

    def unit(self, reason: RejectReason, message: str) -> Reject:
        """One reject for a record cut or damaged inside its header, at the last record's offset."""
        self.stats.records_read += 1
        self.stats.rejects += 1
        return _reject("", self.info_site or UNKNOWN, self.info_category or UNKNOWN,
                       Provenance(self.path, "", self.last_offset), Stage.READ, message, reason)

    def records(self, it, member: int | None = None) -> Iterator[Page | Reject]:
        """Pages and rejects of FastWARC iterator ``it`` until its end or its first error (kept in
        :attr:`error`). ``member``: the offset of the gzip member ``it`` reads, every record's offset."""
        self.error = None
        while True:
            try:
                record = next(it)
            except StopIteration:
                return
            except Exception as exc:  # corrupt data, invalid WARC header, I/O error
                self.error = exc
                return
            self.records_seen += 1
            self.last_offset = offset = member if member is not None else int(record.stream_pos)
            self.stats.position = max(self.stats.position, offset)
            self.last_truncated = False
            kind = _record_type_name(record.record_type)
            held = self.held
            if (held is not None and record.record_type == WarcRecordType.metadata
                    and record.headers.get("WARC-Concurrent-To") == held.provenance.record_id):
                fields = parse_warc_fields(record.reader.read(MAX_METADATA_BYTES))
                self.stats.skipped[kind] = self.stats.skipped.get(kind, 0) + 1
                self.held = None
                yield with_sitemap_facts(held, fields)
                continue
            if record.record_type != WarcRecordType.request:
                yield from self.release()  # no metadata record of ours follows this page's response
            if record.record_type == WarcRecordType.warcinfo:
                self.info_site = record.headers.get(SITE_HEADER) or self.info_site
                self.info_category = record.headers.get(CATEGORY_HEADER) or self.info_category
                continue
            if (record.record_type in (WarcRecordType.unknown, WarcRecordType.no_type)
                    and not (record.headers.get("WARC-Type") and record.headers.get("Content-Length"))):
                # fastwarc's reading of a header cut before its WARC-Type (or mandatory Content-Length) line:
                # the file ends here, or (a damaged header) reading goes on with the next record
                yield self.unit(RejectReason.TRUNCATED_RECORD, f"a WARC record header cut or damaged at offset {offset}")
                self.last_truncated = True
                continue
            if record.record_type != WarcRecordType.response:
                if block_is_short(record):
                    yield self.unit(RejectReason.TRUNCATED_RECORD,
                                    f"the {kind} record at offset {offset} ends before its Content-Length")
                    self.last_truncated = True
                    continue
                self.stats.skipped[kind] = self.stats.skipped.get(kind, 0) + 1
                continue
            if self.hosts and not in_hosts(target_uri(record.headers), self.hosts):
                self.stats.skipped[OUTSIDE_HOSTS] = self.stats.skipped.get(OUTSIDE_HOSTS, 0) + 1
                self.stats.outside.append(offset)
                continue
            self.stats.records_read += 1
            out = record_to_page(record, self.path, self.info_site, self.info_category, offset, self.sections)
            if isinstance(out, Page):
                self.stats.pages += 1
                self.held = out
                continue
            self.stats.rejects += 1
            self.last_truncated = out.reason == RejectReason.TRUNCATED_RECORD.value
            yield out


def _read_gzip(reading: _FileReading, start: int, end: int) -> Iterator[Page | Reject]:
    """The records of a ``.warc.gz`` from byte ``start``, gzip member by gzip member.

    Each intact member that inflates to WARC data is read by FastWARC on its own, so a record ends where its
    member ends (a ``Content-Length`` running past it makes a ``truncated_record``, not a lost next record). Damaged
    bytes (a corrupt member, a bad CRC, bytes that are no gzip member, a member that is not WARC) up to the next
    member that inflates to a WARC record become one reject with their byte range, and reading goes on there; a
    member that ends the file cut gives ``truncated_record``, the rest ``not_warc``. No number of damaged spans
    stops the reading; past the bound on bytes inflated again (:class:`~newsclean.pipeline.warc_framing.Rereading`)
    the search skips the members inside bytes already inflated, and the span's reject says how many.
    """
    stream, pos, rereading = reading.stream, start, Rereading(end)
    while pos < end:
        member = MemberInflater(stream, pos, end).finish()
        if member.intact and member.is_warc:
            yield from reading.records(_fastwarc_records(ByteRange(stream, pos, member.end)), pos)
            if reading.error is not None:  # FastWARC could not read the member's records (to its end)
                yield from reading.damaged(RejectReason.NOT_WARC, pos, member.end,
                                           f"{type(reading.error).__name__}: {reading.error}")
            pos = member.end
            continue
        if member.intact and not member.head.strip(PADDING):
            pos = member.end  # an empty member
            continue
        rereading.charge(pos, member.fed_to, member.checked_to)
        search = rereading.search_from(pos + 1)
        nxt = find_warc_member(stream, search, end)
        if nxt is None and not member.intact and member.error == "no gzip member starts here" and is_padding(
                stream, pos, end):
            return  # NUL or whitespace padding after the last member
        if member.intact:
            what = "a gzip member that holds no WARC record"
        else:
            what = f"{member.error} at offset {pos}"
        what += _skipped(members_between(stream, pos + 1, search), "gzip members starting a WARC record", pos + 1,
                         search)
        reason = RejectReason.TRUNCATED_RECORD if member.cut and nxt is None else RejectReason.NOT_WARC
        stop = nxt if nxt is not None else end
        yield from reading.damaged(reason, pos, stop, what + ("" if nxt is None else f"; reading resumed at {nxt}"))
        if nxt is None:
            return
        pos = nxt


def _read_plain(reading: _FileReading, start: int, end: int) -> Iterator[Page | Reject]:
    """The records of an uncompressed WARC from byte ``start``: FastWARC reads on until its first error; then
    reading goes on at the next ``WARC/1.`` line (:func:`~newsclean.pipeline.warc_framing.resume_after`), and the
    bytes skipped become one reject with their byte range. A file that ends inside a record gives
    ``truncated_record`` (FastWARC stops silently at a cut header: the end is checked here). No number of damaged
    spans stops the reading; the bytes read again are bounded as in :func:`_read_gzip`."""
    stream, pos, rereading = reading.stream, start, Rereading(end)
    while pos < end:
        seen = reading.records_seen
        yield from reading.records(_fastwarc_records(ByteRange(stream, pos, end)))
        last = reading.last_offset if reading.records_seen > seen else None
        bounds = record_bounds(stream, last) if last is not None else None
        if reading.error is None:
            if bounds is not None and bounds.block_end > end:  # cut, or a Content-Length too long
                rereading.charge(pos, end, bounds.header_end)
                search = after_long_block(stream, bounds.header_end, end, rereading)
                yield from _hidden_headers(reading, bounds.header_end, search, last)
                nxt = find_warc_header(stream, search, end)  # the latter hides the records after it
                if nxt is not None:
                    pos = nxt
                    continue
            yield from reading.release()
            yield from _plain_tail(reading, pos, last, bounds, end)
            return
        failed = skip_padding(stream, bounds.block_end if bounds else (last + 1 if last is not None else pos), end)
        resume = bounds.header_end if bounds else (last + 1 if last is not None else pos)
        rereading.charge(pos, failed)
        search = rereading.search_from(resume)
        nxt = resume_after(stream, failed, search, end)
        head = read_at(stream, failed, MAX_HEADER_BYTES)
        cut = nxt is None and head.startswith(WARC_MAGIC) and b"\r\n\r\n" not in head
        what = f"{type(reading.error).__name__}: {reading.error}" + _skipped(
            headers_between(stream, resume, search), "WARC/1. lines", resume, search)
        stop = max(nxt, failed) if nxt is not None else end
        yield from reading.damaged(RejectReason.TRUNCATED_RECORD if cut else RejectReason.NOT_WARC, failed, stop,
                                   what + ("" if nxt is None else f"; reading resumed at {nxt}"))
        if nxt is None:
            return
        pos = nxt


def _skipped(n: int, what: str, start: int, end: int) -> str:
    """The part of a damaged span's reject message naming the ``n`` records (``what``) in bytes ``[start, end)``
    that reading after damage skipped (:class:`~newsclean.pipeline.warc_framing.Rereading`); ``""`` for none."""
    if not n:
        return ""
    return (f"; {n} {what} in bytes {start}-{end} ({end - start} bytes) not read: damage there had been read again "
            "past the bound")


def _hidden_headers(reading: _FileReading, start: int, end: int, last: int) -> Iterator[Page | Reject]:
    """One reject for the ``WARC/1.`` lines in bytes ``[start, end)``, inside the block of the record at ``last``
    whose ``Content-Length`` runs past the file's end, that :class:`~newsclean.pipeline.warc_framing.Rereading`
    skipped; nothing when there are none."""
    n = headers_between(reading.stream, start, end)
    if n:
        yield from reading.damaged(RejectReason.NOT_WARC, start, end, f"inside the block of the record at offset "
                                   f"{last}" + _skipped(n, "WARC/1. lines", start, end))


def _plain_tail(reading: _FileReading, pos: int, last: int | None, bounds, end: int) -> Iterator[Reject]:
    """A reject when an uncompressed WARC read to its end by FastWARC (from byte ``pos``, ``last``: the offset of
    its last record, if any) does not end cleanly after that record: its header or block cut, or bytes that are
    no record (FastWARC stops silently at a header cut before its end)."""
    if reading.last_truncated:
        return
    if last is None:
        tail = skip_padding(reading.stream, pos, end)
        if tail < end:
            yield from reading.damaged(RejectReason.NOT_WARC, tail, end, "bytes that are no WARC record")
        return
    if bounds is None or bounds.block_end + 4 > end:
        yield reading.unit(RejectReason.TRUNCATED_RECORD, f"the file ends inside a WARC record after offset {last}")
        return
    tail = skip_padding(reading.stream, bounds.block_end, end)
    if tail < end:
        yield reading.unit(RejectReason.TRUNCATED_RECORD, f"the file ends inside a WARC record after offset {last}")


def iter_warc_file(path: str, stream: BinaryIO | None = None, stats: ReadStats | None = None,
                   sections: Container[tuple[str, str]] | None = ANY_SECTION, start: int = 0,
                   hosts: tuple[str, ...] = ()) -> Iterator[Page | Reject]:
    """Yield one :class:`~schemas.Page` or :class:`~schemas.Reject` per WARC response record of ``path``.

    Args:
        path: the WARC file (``.warc`` or ``.warc.gz``, local path or any Beam filesystem URL);
            also the ``warc_file`` of the provenance.
        stream: an open binary stream of the raw (still compressed) file, read from its current position; opened
            with Beam's ``FileSystems`` (no transparent decompression, so offsets are file offsets) when None.
        stats: if given, updated with the counts while iterating.
        sections: the ``(site, section)`` pairs a page of another crawler may take as its category
            (:func:`category_from_url`); :data:`ANY_SECTION`: every section its URL names.
        start: with no ``stream``, the byte offset to read from (a record's first byte: a grown file's new tail).
        hosts: ``--hosts`` (lower-case, no ``www.``): response records of other hosts are skipped, counted as
            :data:`OUTSIDE_HOSTS` (:func:`in_hosts`); ``()``: every host.

    Yields pages and rejects in file order, plus one ``not_warc`` or ``truncated_record`` reject for each
    stretch of bytes that are not (complete) WARC records, after which reading goes on at the next record
    (:mod:`newsclean.pipeline.warc_framing`; see the module docstring). Never raises for bad records or a
    broken file; raises ``OSError`` only when the file cannot be opened or read.
    """
    stats = stats if stats is not None else ReadStats()
    own = stream is None
    if own:
        stream = FileSystems.open(path, mime_type="application/octet-stream",
                                  compression_type=CompressionTypes.UNCOMPRESSED)
        stream.seek(start)
    try:
        start = stream.tell()
        end = stream_size(stream)
        if end is None:  # a stream that cannot seek: read it into memory (tests, pipes)
            stream = io.BytesIO(stream.read())
            start, end = 0, len(stream.getbuffer())
        reading = _FileReading(path, stream, stats, sections, hosts)
        read = _read_gzip if is_gzip(stream, start, path) else _read_plain
        stats.position = start
        yield from read(reading, start, end)
        stats.position = end
        yield from reading.release()
    finally:
        if own:
            stream.close()


def item_offset(item: Page | Reject) -> int:
    """The byte offset of the record a page or reject came from."""
    return item.provenance.offset if isinstance(item, Page) else item.warc_offset


def check_read(path: str, stats: ReadStats, rows: Counter, stream: BinaryIO | None = None,
               start: int = 0) -> ReadStats:
    """Compare what :func:`iter_warc_file` gave of the file ``path`` from byte ``start`` (``rows``: its pages and rejects by
    :func:`item_offset`; ``stats``: its counts, and the records it skipped as outside ``--hosts``) with the independent count
    (:func:`~newsclean.pipeline.warc_framing.scan_responses`), a second pass over the file that does not use
    FastWARC: sets ``stats.found`` and ``stats.missed`` and returns ``stats``.

    ``missed`` > 0 is a reader bug: intact response records that no page or reject stands for
    (:func:`~newsclean.pipeline.warc_framing.missed_records`); each is logged, and the run's accounting counts them
    as read, so that the summary's check fails instead of hiding them. ``stream``: the raw file, opened with
    Beam's ``FileSystems`` when None. Raises ``OSError`` when the file cannot be opened or read.
    """
    own = stream is None
    if own:
        stream = FileSystems.open(path, mime_type="application/octet-stream",
                                  compression_type=CompressionTypes.UNCOMPRESSED)
    try:
        if stream_size(stream) is None:
            stream = io.BytesIO(stream.read())
        stream.seek(start)
        found = scan_responses(stream, start, path)
    finally:
        if own:
            stream.close()
    missed = missed_records(found, rows + Counter(stats.outside), stats.spans)  # a skip outside --hosts: accounted
    for offset, n in missed.items():
        log.error("%s: %d intact WARC response record(s) at byte %d not read (a reader bug: please report it)",
                  path, n, offset)
    stats.found, stats.missed = sum(found.values()), sum(missed.values())
    return stats


def _advance(done: int, position: int) -> int:
    """Count the bytes from offset ``done`` to ``position`` as read in the progress tally; returns the new offset."""
    if position > done:
        PROGRESS.add("bytes", position - done)
        return position
    return done


class ReadWarcFileFn(beam.DoFn):
    """Beam ``DoFn``: WARC file path (``str``) -> pages (main output) and rejects (``REJECTS_TAG``); ``sections``
    (a side input): the ``(site, section)`` pairs a page of another crawler may take as its category.

    Also emits, once per file, on ``COUNTS_TAG`` for the run summary: ``("records_read", n)`` (the reader's pages
    and rejects, plus the records the independent count found that it missed: :func:`check_read`),
    ``("records_found", n)`` and ``("records_missed", n)`` of that count, and ``("skipped_<type>", n)`` for each
    skipped WARC record type; increments the ``newsclean`` counters ``records_read``, ``pages_read`` and
    ``rejects_<reason>``, and the progress tally's ``read`` (:mod:`newsclean.pipeline.progress`) for each record
    before passing it on, and its ``bytes`` as reading reaches each record (:attr:`ReadStats.position`; a file's
    every byte from its start offset once it is read to its end).
    """

    def __init__(self, read_from: dict[str, int] | None = None, hosts: tuple[str, ...] = ()):
        super().__init__()
        self.read_from = read_from or {}  # path -> byte offset its records are read from (a grown file's tail)
        self.hosts = tuple(hosts)  # --hosts: records of other hosts skipped (outside_hosts)

    def setup(self):
        self._records = Metrics.counter(METRICS_NAMESPACE, "records_read")
        self._pages = Metrics.counter(METRICS_NAMESPACE, "pages_read")

    def process(self, path: str, sections=ANY_SECTION):
        stats = ReadStats()
        rows: Counter = Counter()
        start = done = self.read_from.get(path, 0)
        for item in iter_warc_file(path, stats=stats, sections=sections, start=start, hosts=self.hosts):
            rows[item_offset(item)] += 1
            done = _advance(done, stats.position)
            PROGRESS.add("read")  # before the record goes on to be cleaned and counted again
            if isinstance(item, Page):
                yield item
            else:
                inc_counter(f"rejects_{item.reason}")
                yield beam.pvalue.TaggedOutput(REJECTS_TAG, item)
        _advance(done, stats.position)  # the file's end
        check_read(path, stats, rows, start=start)
        read = sum(rows.values()) + stats.missed
        self._records.inc(read)
        self._pages.inc(stats.pages)
        yield beam.pvalue.TaggedOutput(COUNTS_TAG, ("records_read", read))
        yield beam.pvalue.TaggedOutput(COUNTS_TAG, ("records_found", stats.found or 0))
        yield beam.pvalue.TaggedOutput(COUNTS_TAG, ("records_missed", stats.missed))
        for kind, n in sorted(stats.skipped.items()):
            yield beam.pvalue.TaggedOutput(COUNTS_TAG, (SKIPPED_PREFIX + kind, n))
