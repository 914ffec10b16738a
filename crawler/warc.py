"""WARC output of the crawl: raw captures in the downloader, page groups written by the item pipeline.

Two halves:

* :class:`CaptureMiddleware`, a downloader middleware at order 950 (:mod:`newsclean.crawler.settings`),
  sees each response of the spider's requests in ``process_response`` *before*
  ``HttpCompressionMiddleware`` (590) decodes the body and before ``RedirectMiddleware`` (600)
  and ``RetryMiddleware`` (550) act on it, and appends a :class:`Capture` (request as sent,
  response status line, headers and body **as received**) to ``request.meta["newsclean_captures"]``.
  Redirects and retries copy the meta, so the final response (or the failure) carries the list
  of every HTTP exchange of the page.
* :class:`WarcFiles` writes one *page group* per page: for each capture a ``response`` record
  then a ``request`` record (``WARC-Concurrent-To`` the response), then one ``metadata`` record
  with the crawl's facts (``WARC-Concurrent-To`` the final response). It is driven by
  :class:`newsclean.crawler.pipelines.ArchivePipeline`, which decides a page's final category first.

Layout and record contract (docs/CONTRACTS.md, "WARC files the crawler writes")::

    OUT/<site>/<category>/<site>-<category>-<YYYYMMDDTHHMMSSZ>-<serial:05d>.warc.gz

WARC/1.1, one gzip member per record, ``warcinfo`` first. A file is written as
``<name>.warc.gz.open`` and renamed when closed, so a reader globbing ``*.warc.gz`` never sees a
growing file. A file is rotated (closed) before the next group once it holds ``max_bytes``.
:func:`recover_open_files` repairs the ``.open`` leftovers of a killed crawl.
"""

from __future__ import annotations

import contextlib
import http
import logging
import os
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from importlib import metadata
from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO
from urllib.parse import urlsplit

from warcio.recordbuilder import RecordBuilder
from warcio.recordloader import ArcWarcRecord
from warcio.statusandheaders import StatusAndHeaders, StatusAndHeadersParser
from warcio.warcwriter import WARCWriter

from newsclean.crawler.config import is_safe_name, name_key
from newsclean.schemas.contract import CATEGORY_HEADER, DEPTH_HEADER, PAGE_TYPE_HEADER, SITE_HEADER

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response

    from newsclean.crawler.store import CrawlStore

logger = logging.getLogger(__name__)

WARC_VERSION = "WARC/1.1"
OPEN_SUFFIX = ".open"
#: ``Request.meta`` key of the capture list.
CAPTURES_KEY = "newsclean_captures"

#: What differs from the bytes on the wire in a response record's HTTP head (Scrapy parses the head and
#: hands over no raw bytes); in every warcinfo record, and in short in every page's metadata record (WARC 1.1
#: has no header for "re-serialised", and WARC-Truncated is for bodies).
HTTP_HEADER_FIDELITY = ("re-serialised: reason phrase from the status code; header names as Scrapy "
                        "normalises them and grouped by name; non-ASCII values percent-encoded by warcio; "
                        "Transfer-Encoding, chunk extensions and trailers dropped; body bytes as received")
#: The per-page form (metadata records), pointing at the warcinfo field.
HTTP_HEADER_FIDELITY_SHORT = "re-serialised (see the warcinfo record's http-header-fidelity)"

#: Response headers not stored: Scrapy hands over de-chunked bytes, so the framing header would lie.
DROPPED_RESPONSE_HEADERS = frozenset({"transfer-encoding"})


def warc_file_name(site: str, category: str, stamp: datetime, serial: int) -> str:
    """File name ``<site>-<category>-<YYYYMMDDTHHMMSSZ>-<serial:05d>.warc.gz`` for a file opened at ``stamp`` (UTC)."""
    return f"{site}-{category}-{stamp.astimezone(UTC):%Y%m%dT%H%M%SZ}-{serial:05d}.warc.gz"


def warc_date(moment: datetime) -> str:
    """``WARC-Date`` value for ``moment``: ISO 8601 UTC with microseconds (WARC/1.1 allows fractions)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def software_name() -> str:
    """``software`` field of warcinfo: newsclean, Scrapy and warcio versions."""
    return f"newsclean/{_version('newsclean')} (Scrapy/{_version('Scrapy')}; warcio/{_version('warcio')})"


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"


def http_response_headers(response: Response) -> StatusAndHeaders:
    """HTTP status line and headers of ``response`` as received, minus ``Transfer-Encoding``.

    Header bytes are decoded as ISO-8859-1 (lossless); warcio percent-encodes any non-ASCII
    value when it serialises the block.
    """
    reason = _reason_phrase(response.status)
    statusline = f"{response.status} {reason}" if reason else str(response.status)
    headers = [
        (name, value)
        for name, value in _header_pairs(response.headers)
        if name.lower() not in DROPPED_RESPONSE_HEADERS
    ]
    return StatusAndHeaders(statusline, headers, protocol=response.protocol or "HTTP/1.1")


def http_request_headers(request: Request) -> StatusAndHeaders:
    """HTTP request line and headers of ``request`` as Scrapy sent them, with ``Host`` added.

    Twisted adds ``Host`` itself at send time, so it is not in ``request.headers``.
    """
    parts = urlsplit(request.url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    headers = _header_pairs(request.headers)
    if not any(name.lower() == "host" for name, _ in headers):
        headers.insert(0, ("Host", parts.netloc))
    return StatusAndHeaders(f"{request.method} {target} HTTP/1.1", headers, is_http_request=True)


def _reason_phrase(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return ""


def _header_pairs(headers) -> list[tuple[str, str]]:
    return [
        (name.decode("latin-1"), value.decode("latin-1"))
        for name, values in headers.items()
        for value in values
    ]




# ------------------------------------------------------------------------------------- capture


@dataclass
class Capture:
    """One HTTP exchange as it went over the wire (picklable: it travels in ``Request.meta``).

    Attributes:
        url: the requested URL.
        started: UTC time the download started (``WARC-Date`` of both records).
        request_line: ``StatusAndHeaders`` of the request as sent (``Host`` added).
        request_body: request body bytes.
        status: HTTP status code.
        response_head: ``StatusAndHeaders`` of the response as received, minus ``Transfer-Encoding``.
        body: response body **as received** (still content-encoded).
        ip_address: the server's IP address, when Scrapy knows it.
    """

    url: str
    started: datetime
    request_line: StatusAndHeaders
    request_body: bytes
    status: int
    response_head: StatusAndHeaders
    body: bytes
    ip_address: str | None = None

    @property
    def content_type(self) -> str:
        """The response's ``Content-Type`` header value (``""`` when absent)."""
        return self.response_head.get_header("Content-Type") or ""


def capture_exchange(request: Request, response: Response) -> Capture:
    """A :class:`Capture` of ``request`` and its raw ``response`` (call it before any middleware
    decodes the body). The start time is when the download handler began the request
    (``meta["newsclean_fetch_started"]``, :mod:`newsclean.crawler.fetch`), else now minus Scrapy's
    ``download_latency`` (which ends when the headers arrived, not the body)."""
    started = request.meta.get("newsclean_fetch_started") or (
        datetime.now(UTC) - timedelta(seconds=request.meta.get("download_latency", 0.0)))
    ip = str(response.ip_address) if response.ip_address is not None else None
    return Capture(response.url, started, http_request_headers(request), request.body or b"",
                   response.status, http_response_headers(response), response.body, ip)


class CaptureMiddleware:
    """Downloader middleware (order 950): append a :class:`Capture` of every response to a request that
    carries ``meta["newsclean"]`` (the spider's requests; robots.txt fetches are left out) to
    ``meta["newsclean_captures"]``. Passes the response on unchanged."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CaptureMiddleware:
        """Build the middleware (it reads no setting)."""
        return cls()

    def process_response(self, request: Request, response: Response) -> Response:
        """Record the exchange in ``request.meta`` when the request is the spider's."""
        if "newsclean" in request.meta:
            request.meta.setdefault(CAPTURES_KEY, []).append(capture_exchange(request, response))
        return response


# ------------------------------------------------------------------------------------- records

#: ``WARC-Profile`` of a revisit record for a 304 answer to a conditional request (WARC 1.1 §6.7.2).
SERVER_NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"


@dataclass(frozen=True)
class PreviousCapture:
    """An earlier capture of a URL, read back from its response record, for a conditional refetch.

    ``uri``, ``warc_date`` and ``record_id`` of the response record (the revisit's ``WARC-Refers-To-*``);
    its ``etag`` and ``last_modified`` response headers (the ``If-None-Match`` / ``If-Modified-Since``
    values); where it is (``warc_file`` relative to ``OUT``, ``warc_offset``) and its ``payload_digest``.
    """

    uri: str
    warc_date: str
    record_id: str
    etag: str | None
    last_modified: str | None
    warc_file: str
    warc_offset: int
    payload_digest: str | None


def read_previous_capture(out_dir: str | Path, warc_file: str, offset: int) -> PreviousCapture | None:
    """The :class:`PreviousCapture` of the response record at ``offset`` in ``out_dir / warc_file``;
    ``None`` when the file is gone or the record there is not a response."""
    from warcio.archiveiterator import ArchiveIterator  # noqa: PLC0415

    try:
        with open(Path(out_dir) / warc_file, "rb") as fh:
            fh.seek(offset)
            record = next(iter(ArchiveIterator(fh)), None)
            if record is None or record.rec_type != "response":
                return None
            head, http_head = record.rec_headers, record.http_headers
            return PreviousCapture(head.get_header("WARC-Target-URI"), head.get_header("WARC-Date"),
                                   head.get_header("WARC-Record-ID"), http_head.get_header("ETag"),
                                   http_head.get_header("Last-Modified"), warc_file, offset,
                                   head.get_header("WARC-Payload-Digest"))
    except (OSError, ValueError):
        return None



@dataclass(frozen=True)
class PageFacts:
    """Crawl facts of one page, for the extension headers and the ``metadata`` record.

    ``fields`` are extra ``name: value`` lines of the metadata record (``outcome``, ``reason``,
    ``via``, ...), in order.
    """

    site: str
    category: str
    depth: int
    page_type: str
    fields: tuple[tuple[str, str], ...] = ()

    def headers(self) -> dict[str, str]:
        """The ``WARC-Newsclean-*`` extension headers."""
        return {SITE_HEADER: self.site, CATEGORY_HEADER: self.category, DEPTH_HEADER: str(self.depth),
                PAGE_TYPE_HEADER: self.page_type}


class RecordFactory:
    """Builds the WARC records of a page group (warcio ``RecordBuilder``, WARC/1.1, sha1 digests)."""

    def __init__(self) -> None:
        self._builder = RecordBuilder(warc_version=WARC_VERSION)

    def exchange(self, capture: Capture, facts: PageFacts) -> tuple[ArcWarcRecord, ArcWarcRecord]:
        """``(response, request)`` records of ``capture``; the request's ``WARC-Concurrent-To`` is the
        response's ``WARC-Record-ID``; both share ``WARC-Date`` and ``WARC-Target-URI``."""
        date = warc_date(capture.started)
        extra = facts.headers()
        response_extra = {**extra, "WARC-IP-Address": capture.ip_address} if capture.ip_address else extra
        response = self._record("response", capture.url, date, response_extra, capture.response_head, capture.body)
        request = self._record("request", capture.url, date, extra, capture.request_line, capture.request_body)
        request.rec_headers.add_header("WARC-Concurrent-To", response.rec_headers.get_header("WARC-Record-ID"))
        return response, request

    def revisit(self, capture: Capture, facts: PageFacts, previous: PreviousCapture) -> tuple[ArcWarcRecord, ArcWarcRecord]:
        """``(revisit, request)`` records of a 304 answer to a conditional request: the revisit record
        (profile :data:`SERVER_NOT_MODIFIED`) holds the 304's HTTP head and refers to ``previous``."""
        date = warc_date(capture.started)
        extra = {**facts.headers(), "WARC-Profile": SERVER_NOT_MODIFIED,
                 "WARC-Refers-To": previous.record_id, "WARC-Refers-To-Target-URI": previous.uri,
                 "WARC-Refers-To-Date": previous.warc_date}
        if capture.ip_address:
            extra["WARC-IP-Address"] = capture.ip_address
        revisit = self._record("revisit", capture.url, date, extra, capture.response_head, b"")
        request = self._record("request", capture.url, date, facts.headers(), capture.request_line,
                               capture.request_body)
        request.rec_headers.add_header("WARC-Concurrent-To", revisit.rec_headers.get_header("WARC-Record-ID"))
        return revisit, request

    def metadata(self, url: str, date: datetime, concurrent_to: str | None, facts: PageFacts) -> ArcWarcRecord:
        """The ``metadata`` record (``application/warc-fields``) of a page: site, category, page type,
        depth, then ``facts.fields``. ``concurrent_to``: the final response's record id, if any."""
        lines = [("site", facts.site), ("category", facts.category), ("page-type", facts.page_type),
                 ("depth", str(facts.depth)), *facts.fields]
        body = "".join(f"{k}: {_field_value(v)}\r\n" for k, v in lines).encode("utf-8")
        headers = {"WARC-Type": "metadata", "WARC-Record-ID": StatusAndHeadersParser.make_warc_id(),
                   "WARC-Date": warc_date(date), "WARC-Target-URI": url, **facts.headers()}
        if concurrent_to:
            headers["WARC-Concurrent-To"] = concurrent_to
        return self._builder.create_warc_record(url, "metadata", payload=BytesIO(body), length=len(body),
                                                warc_content_type="application/warc-fields",
                                                warc_headers_dict=headers)

    def _record(self, record_type: str, uri: str, date: str, extra: dict[str, str],
                http_headers: StatusAndHeaders, body: bytes) -> ArcWarcRecord:
        # Standard headers first, in the usual order, then ours; digests are added by warcio.
        headers = {"WARC-Type": record_type, "WARC-Record-ID": StatusAndHeadersParser.make_warc_id(),
                   "WARC-Date": date, "WARC-Target-URI": uri, **extra}
        return self._builder.create_warc_record(
            uri, record_type, payload=BytesIO(body), length=len(body),
            http_headers=http_headers, warc_headers_dict=headers)


def _field_value(value: str) -> str:
    # warc-fields values are single lines: fold any line break.
    return " ".join(str(value).split())


# --------------------------------------------------------------------------------------- files


@dataclass
class WrittenGroup:
    """Where a page group went: the (``.open``) ``path``, the byte ``offsets`` of its records in
    write order, ``end``, the file size after it, and ``final_response``, the position of the final
    response record among them."""

    path: str
    offsets: list[int]
    end: int
    #: Position (in ``offsets``) of the page's final response record, set by its writer.
    final_response: int = 0


class RotatingWarcFile:
    """WARC output of one (site, category): opens files lazily, rotates them past ``max_bytes``.

    ``on_opened(open_path, size)`` is called once a new file holds its warcinfo;
    ``on_closed(open_path, final_path, size)`` after a file was closed and renamed.
    """

    def __init__(self, directory: Path, site: str, category: str, max_bytes: int,
                 warcinfo_fields: dict[str, str],
                 on_opened: Callable[[str, int], None] | None = None,
                 on_closed: Callable[[str, str, int], None] | None = None) -> None:
        self.directory = directory
        self.site = site
        self.category = category
        self.max_bytes = max_bytes
        self.warcinfo_fields = warcinfo_fields
        self.on_opened = on_opened
        self.on_closed = on_closed
        self._serial = 0
        self._path: Path | None = None
        self._fh: BinaryIO | None = None
        self._writer: WARCWriter | None = None

    def write_group(self, records: list[ArcWarcRecord]) -> WrittenGroup:
        """Write ``records`` (one gzip member each) and flush them to the operating system.

        The current file is closed first when it already holds ``max_bytes``, so a group is never
        split and every file holds its warcinfo plus at least one group.
        """
        if self._fh is not None and self._fh.tell() >= self.max_bytes:
            self.close()
        if self._writer is None:
            self._open()
        start, offsets = self._fh.tell(), []
        try:
            for record in records:
                offsets.append(self._fh.tell())
                self._writer.write_record(record)
            self._fh.flush()
        except OSError:  # e.g. a full disk: cut the torn group off (best effort), so the file stays whole groups
            with contextlib.suppress(OSError):
                self._fh.seek(start)
                self._fh.truncate()
            raise
        return WrittenGroup(str(self._path), offsets, self._fh.tell())

    def close(self) -> None:
        """Close the current file (if any), fsync it and give it its final ``.warc.gz`` name."""
        if self._fh is None:
            return
        size = self._fh.tell()
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()
        final = self._path.with_name(self._path.name[: -len(OPEN_SUFFIX)])
        os.replace(self._path, final)
        open_path = self._path
        self._fh = self._writer = self._path = None
        if self.on_closed:
            self.on_closed(str(open_path), str(final), size)

    def _open(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC)
        while True:  # never overwrite: a crawl started in the same second may own the serial
            name = warc_file_name(self.site, self.category, stamp, self._serial)
            self._serial += 1
            path = self.directory / (name + OPEN_SUFFIX)
            if (self.directory / name).exists():
                continue
            try:
                self._fh = open(path, "xb")  # noqa: SIM115 (closed in close())
            except FileExistsError:
                continue
            break
        self._path = path
        self._writer = WARCWriter(self._fh, gzip=True, warc_version=WARC_VERSION)
        self._writer.write_record(self._warcinfo_record(name))
        self._fh.flush()
        if self.on_opened:
            self.on_opened(str(path), self._fh.tell())

    def _warcinfo_record(self, name: str) -> ArcWarcRecord:
        record = self._writer.create_warcinfo_record(name, self.warcinfo_fields)
        record.rec_headers.add_header(SITE_HEADER, self.site)
        record.rec_headers.add_header(CATEGORY_HEADER, self.category)
        return record


def warcinfo_fields(user_agent: str, obey_robots: bool) -> dict[str, str]:
    """The warcinfo fields every file starts with (``site`` and ``category`` are added per file)."""
    return {
        "software": software_name(),
        "format": "WARC File Format 1.1",
        "conformsTo": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
        "robots": "obey" if obey_robots else "ignore",
        "http-header-user-agent": user_agent,
        "description": "HTTP bodies stored as received (Content-Encoding kept); Transfer-Encoding dropped "
                       "(bodies are de-chunked); one metadata record per page with the crawl facts",
        "http-header-fidelity": HTTP_HEADER_FIDELITY,
    }


@dataclass
class WarcTotals:
    """Files closed by :class:`WarcFiles`: their final ``paths`` and total size in ``bytes``."""

    paths: list[str] = field(default_factory=list)
    bytes: int = 0


class WarcFiles:
    """All WARC outputs of one crawl, one :class:`RotatingWarcFile` per (site, category), under ``out_dir``.

    ``store`` and ``job`` (optional) register every file opened and closed in the crawl store, so a
    killed crawl can be recovered (:func:`recover_open_files`). :meth:`write_group` raises ``ValueError`` for a
    site or category that is not a safe path segment (:func:`newsclean.crawler.config.is_safe_name`) or that
    differs only in case from one already written (:func:`newsclean.crawler.config.name_key`), and ``OSError``
    when the file system refuses the file.
    """

    def __init__(self, out_dir: str | Path, max_bytes: int, info_fields: dict[str, str],
                 store: CrawlStore | None = None, job: str | None = None) -> None:
        self.out_dir = Path(out_dir)
        self.max_bytes = max_bytes
        self.info_fields = info_fields
        self.store = store
        self.job = job
        self.totals = WarcTotals()
        self._outputs: dict[tuple[str, str], RotatingWarcFile] = {}
        self._folded: dict[tuple[str, str], tuple[str, str]] = {}

    def write_group(self, site: str, category: str, records: list[ArcWarcRecord]) -> WrittenGroup:
        """Write one page group into the (site, category) output."""
        return self._output(site, category).write_group(records)

    def close(self) -> None:
        """Close every open file; safe to call more than once."""
        for output in self._outputs.values():
            output.close()

    def _output(self, site: str, category: str) -> RotatingWarcFile:
        key = (site, category)
        if key not in self._outputs:
            for value in key:  # they become path segments: never let meta escape OUT
                if not is_safe_name(value):
                    raise ValueError(f"site/category {value[:100]!r} is not a safe path segment")
            folded = (name_key(site), name_key(category))
            other = self._folded.setdefault(folded, key)
            if other != key:  # one directory on a case-insensitive file system
                raise ValueError(f"{'/'.join(key)!r} differs only in case from {'/'.join(other)!r}, whose WARC "
                                 "files it would share on a case-insensitive file system")
            info = {**self.info_fields, "site": site, "category": category}
            self._outputs[key] = RotatingWarcFile(self.out_dir / site / category, site, category, self.max_bytes,
                                                  info, self._opened, self._closed)
        return self._outputs[key]

    def relative(self, path: str | Path) -> str:
        """``path`` as the crawl store keeps it: relative to ``out_dir`` (see :func:`store_path`)."""
        return store_path(self.out_dir, path)

    def _opened(self, path: str, size: int) -> None:
        if self.store is not None:
            self.store.warc_opened(self.job or "", self.relative(path), size)

    def _closed(self, open_path: str, final_path: str, size: int) -> None:
        self.totals.paths.append(final_path)
        self.totals.bytes += size
        logger.info("closed WARC file %s (%d bytes)", final_path, size)
        if self.store is not None:
            self.store.warc_closed(self.relative(open_path), self.relative(final_path))


# ------------------------------------------------------------------------------------ recovery


def store_path(out_dir: str | Path, path: str | Path) -> str:
    """The crawl store's name for the WARC file ``path`` under ``out_dir``: relative to ``out_dir``, so that
    it does not depend on the working directory or on how ``--out`` was spelled (``warc/`` vs its absolute
    path) and survives moving the output folder. Both are made absolute first (``os.path.abspath``)."""
    return os.path.relpath(os.path.abspath(path), os.path.abspath(out_dir))


@dataclass(frozen=True)
class RecoveredFile:
    """What :func:`recover_open_files` did with one ``.open`` leftover.

    ``path``: the leftover; ``final``: its new name (``None`` when it was removed because it held
    no page); ``kept`` / ``dropped``: bytes kept and cut off.
    """

    path: str
    final: str | None
    kept: int
    dropped: int


def complete_members_end(path: str | Path, chunk_size: int = 1 << 20) -> tuple[int, int]:
    """Scan the gzip members of a ``.warc.gz`` file: ``(end, first_end)`` where ``end`` is the offset
    after the last complete member that holds a whole WARC record, and ``first_end`` the offset after
    the first one (the warcinfo); both 0 when there is none. Stops at the first torn or corrupt
    member. Reads the file once, ``chunk_size`` bytes at a time; memory is bounded by one record."""
    end = first_end = 0
    member_start, fed = 0, 0
    d, block, buf = zlib.decompressobj(16 + zlib.MAX_WBITS), bytearray(), b""
    with open(path, "rb") as fh:
        while True:
            if not buf:
                buf = fh.read(chunk_size)
                if not buf:
                    break
            try:
                block += d.decompress(buf)
            except zlib.error:
                break
            if not d.eof:
                fed, buf = fed + len(buf), b""
                continue
            member_end = member_start + fed + len(buf) - len(d.unused_data)
            if not _is_whole_record(bytes(block)):
                break
            end, first_end = member_end, first_end or member_end
            member_start, fed, buf = member_end, 0, d.unused_data
            d, block = zlib.decompressobj(16 + zlib.MAX_WBITS), bytearray()
    return end, first_end


def _is_whole_record(block: bytes) -> bool:
    head, sep, rest = block.partition(b"\r\n\r\n")
    if not sep or not head.startswith(b"WARC/"):
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                return len(rest) >= int(value.strip())
            except ValueError:
                return False
    return False


def recover_open_files(out_dir: str | Path, store: CrawlStore | None = None) -> list[RecoveredFile]:
    """Repair the ``*.warc.gz.open`` files a killed crawl left under ``out_dir``.

    Each file is cut to its last acknowledged page group (``acked_bytes`` in the store), or, when
    the store does not know it, to its last complete record; records past that point belong to
    pages that were never acknowledged, which the resumed or next crawl fetches again. A file left
    with a page is renamed to ``.warc.gz``; one left with only its warcinfo (or nothing) is removed.
    Call it only while no crawl writes into ``out_dir`` (the crawl holds a lock on it).
    """
    recovered = []
    for path in sorted(Path(out_dir).rglob("*" + OPEN_SUFFIX)):
        end, first_end = complete_members_end(path)
        key = store_path(out_dir, path)
        acked = store.acked_bytes(key) if store is not None else None
        keep = min(end, acked) if acked is not None else end
        size = path.stat().st_size
        final = path.with_name(path.name[: -len(OPEN_SUFFIX)])
        if keep <= first_end:
            path.unlink()
            final_name, keep = None, 0
            if store is not None:
                store.forget_warc(key)
        else:
            with open(path, "r+b") as fh:
                fh.truncate(keep)
                os.fsync(fh.fileno())
            os.replace(path, final)
            final_name = str(final)
            if store is not None:
                store.warc_closed(key, store_path(out_dir, final))
        logger.warning("recovered WARC leftover %s: kept %d bytes, dropped %d", path, keep, size - keep)
        recovered.append(RecoveredFile(str(path), final_name, keep, size - keep))
    return recovered
