"""Write every fetched page as WARC records, from inside Scrapy's downloader.

:class:`WarcWriterMiddleware` is a downloader middleware (order 950, see
:mod:`crawler.settings`). In ``process_response`` it sees each response *before*
``HttpCompressionMiddleware`` (590) decodes the body and before ``RedirectMiddleware`` (600)
follows a redirect, so it stores the body **as received** (gzip stays gzip, with its
``Content-Encoding`` header) and records 3xx responses too. It only records requests that
carry ``site`` and ``category`` in ``Request.meta`` (the spider's own requests), so
robots.txt fetches are left out.

Layout and record contract (docs/CONTRACTS.md, "WARC files the crawler writes")::

    OUT/<site>/<category>/<site>-<category>-<YYYYMMDDTHHMMSSZ>-<serial:05d>.warc.gz

Each file is a sequence of gzip members, one per WARC record (WARC/1.1): a ``warcinfo``
record first, then per page a ``response`` record and a ``request`` record whose
``WARC-Concurrent-To`` names the response's ``WARC-Record-ID`` (warcio's
``write_request_response_pair`` order, as Heritrix writes them). Records carry
``WARC-Payload-Digest`` and ``WARC-Block-Digest`` (sha1, base32) and the extension headers
``WARC-Newsclean-Site``, ``WARC-Newsclean-Category`` and (request/response)
``WARC-Newsclean-Depth``. A file is written as ``<name>.warc.gz.open`` and renamed to
``<name>.warc.gz`` when closed, so that a reader globbing ``*.warc.gz`` never sees a file that
is still growing; a crash leaves the ``.open`` file, whose complete records stay readable.
A file is closed once it holds at least ``max_bytes`` (compressed) bytes; the next page of
that (site, category) opens the next serial.
"""

from __future__ import annotations

import http
import logging
import os
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from importlib import metadata
from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO
from urllib.parse import urlsplit

from scrapy import signals
from scrapy.exceptions import NotConfigured
from warcio.recordbuilder import RecordBuilder
from warcio.recordloader import ArcWarcRecord
from warcio.statusandheaders import StatusAndHeaders, StatusAndHeadersParser
from warcio.warcwriter import WARCWriter

from crawler.config import SAFE_NAME

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response

logger = logging.getLogger(__name__)

WARC_VERSION = "WARC/1.1"
SITE_HEADER = "WARC-Newsclean-Site"
CATEGORY_HEADER = "WARC-Newsclean-Category"
DEPTH_HEADER = "WARC-Newsclean-Depth"
OPEN_SUFFIX = ".open"

#: Response headers not stored: Scrapy hands over de-chunked bytes, so the framing header would lie.
DROPPED_RESPONSE_HEADERS = frozenset({"transfer-encoding"})


@dataclass
class WarcCounts:
    """Running totals of what the writer recorded in one crawl.

    Attributes:
        files: paths of the closed WARC files, in closing order.
        responses: response records per ``(site, category)``.
        statuses: response records per HTTP status code.
        warc_bytes: total size of the closed WARC files in bytes (compressed, warcinfo included).
        payload_bytes: response bodies stored, in bytes as received (possibly still compressed).
    """

    files: list[str] = field(default_factory=list)
    responses: Counter[tuple[str, str]] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    warc_bytes: int = 0
    payload_bytes: int = 0


def warc_file_name(site: str, category: str, stamp: datetime, serial: int) -> str:
    """File name ``<site>-<category>-<YYYYMMDDTHHMMSSZ>-<serial:05d>.warc.gz`` for a file opened at ``stamp`` (UTC)."""
    return f"{site}-{category}-{stamp.astimezone(timezone.utc):%Y%m%dT%H%M%SZ}-{serial:05d}.warc.gz"


def warc_date(moment: datetime) -> str:
    """``WARC-Date`` value for ``moment``: ISO 8601 UTC with microseconds (WARC/1.1 allows fractions)."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


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


class _RotatingWarcFile:
    """WARC output of one (site, category): opens files lazily, rotates them past ``max_bytes``.

    ``on_closed(path, size)`` is called with the final path and byte size of each closed file.
    """

    def __init__(self, directory: Path, site: str, category: str, max_bytes: int,
                 warcinfo_fields: dict[str, str], on_closed) -> None:
        self.directory = directory
        self.site = site
        self.category = category
        self.max_bytes = max_bytes
        self.warcinfo_fields = warcinfo_fields
        self.on_closed = on_closed
        self._serial = 0
        self._path: Path | None = None
        self._fh: BinaryIO | None = None
        self._writer: WARCWriter | None = None

    def write_pair(self, request_record: ArcWarcRecord, response_record: ArcWarcRecord) -> None:
        """Write one response + request pair (opening a file first if none is open), then close
        the file if it has reached ``max_bytes``: every file holds warcinfo plus at least one pair."""
        if self._writer is None:
            self._open()
        self._writer.write_request_response_pair(request_record, response_record)
        if self._fh.tell() >= self.max_bytes:
            self.close()

    def close(self) -> None:
        """Close the current file (if any) and give it its final ``.warc.gz`` name."""
        if self._fh is None:
            return
        size = self._fh.tell()
        self._fh.close()
        final = self._path.with_name(self._path.name[: -len(OPEN_SUFFIX)])
        os.replace(self._path, final)
        self._fh = self._writer = self._path = None
        self.on_closed(final, size)

    def _open(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(timezone.utc)
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

    def _warcinfo_record(self, name: str) -> ArcWarcRecord:
        record = self._writer.create_warcinfo_record(name, self.warcinfo_fields)
        record.rec_headers.add_header(SITE_HEADER, self.site)
        record.rec_headers.add_header(CATEGORY_HEADER, self.category)
        return record


class WarcWriterMiddleware:
    """Scrapy downloader middleware that stores each response of the spider's requests as WARC records.

    Settings read (all set by :func:`crawler.settings.build_settings`):

    - ``NEWSCLEAN_WARC_DIR`` (required, else the middleware is disabled): output root ``OUT``.
    - ``NEWSCLEAN_WARC_MAX_BYTES``: rotation threshold in bytes (default 100 MiB).
    - ``USER_AGENT`` and ``ROBOTSTXT_OBEY``: noted in each warcinfo record.

    Only requests whose ``meta`` holds ``site`` and ``category`` are recorded (``depth`` is
    taken from ``meta`` too, default 0). Every such response is recorded whatever its status;
    a response retried by RetryMiddleware is recorded once per attempt, as each was a real
    fetch. Totals are in :attr:`counts` and in the crawl stats under ``newsclean/warc/``.
    All files are closed on ``spider_closed``.
    """

    def __init__(self, out_dir: str | Path, max_bytes: int, warcinfo_fields: dict[str, str],
                 stats=None) -> None:
        self.out_dir = Path(out_dir)
        self.max_bytes = max_bytes
        self.warcinfo_fields = warcinfo_fields
        self.stats = stats
        self.counts = WarcCounts()
        self._outputs: dict[tuple[str, str], _RotatingWarcFile] = {}
        self._builder = RecordBuilder(warc_version=WARC_VERSION)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WarcWriterMiddleware:
        """Build from the crawler's settings and connect ``spider_closed``; raises ``NotConfigured``
        when ``NEWSCLEAN_WARC_DIR`` is unset."""
        settings = crawler.settings
        out_dir = settings.get("NEWSCLEAN_WARC_DIR")
        if not out_dir:
            raise NotConfigured("NEWSCLEAN_WARC_DIR is not set")
        fields = {
            "software": software_name(),
            "format": "WARC File Format 1.1",
            "conformsTo": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
            "robots": "obey" if settings.getbool("ROBOTSTXT_OBEY") else "ignore",
            "http-header-user-agent": settings.get("USER_AGENT"),
        }
        mw = cls(out_dir, settings.getint("NEWSCLEAN_WARC_MAX_BYTES", 100 * 1024 * 1024),
                 fields, crawler.stats)
        crawler.signals.connect(mw.spider_closed, signal=signals.spider_closed)
        return mw

    def process_response(self, request: Request, response: Response) -> Response:
        """Record ``response`` (and ``request``) when the request belongs to a site/category; pass it on unchanged."""
        meta = request.meta
        if "site" in meta and "category" in meta:
            self.record(request, response, meta["site"], meta["category"], int(meta.get("depth", 0)))
        return response

    def record(self, request: Request, response: Response, site: str, category: str,
               depth: int) -> None:
        """Write the response + request pair for one fetch into the (site, category) WARC output."""
        captured = datetime.now(timezone.utc) - timedelta(seconds=request.meta.get("download_latency", 0.0))
        extra = {SITE_HEADER: site, CATEGORY_HEADER: category, DEPTH_HEADER: str(depth)}
        if response.ip_address is not None:
            extra["WARC-IP-Address"] = str(response.ip_address)
        response_record = self._record("response", response.url, warc_date(captured), extra,
                                        http_response_headers(response), response.body)
        request_record = self._record("request", request.url, warc_date(captured),
                                      {k: v for k, v in extra.items() if k != "WARC-IP-Address"},
                                      http_request_headers(request), request.body)
        self._output(site, category).write_pair(request_record, response_record)
        self._count(site, category, response.status, len(response.body))

    def spider_closed(self, spider: Spider, reason: str) -> None:
        """Close every open WARC file (signal handler)."""
        self.close()

    def close(self) -> None:
        """Close every open WARC file; safe to call more than once."""
        for output in self._outputs.values():
            output.close()

    def _record(self, record_type: str, uri: str, date: str, extra: dict[str, str],
                http_headers: StatusAndHeaders, body: bytes) -> ArcWarcRecord:
        # Standard headers first, in the usual order, then ours; digests are added by warcio.
        headers = {"WARC-Type": record_type, "WARC-Record-ID": StatusAndHeadersParser.make_warc_id(),
                   "WARC-Date": date, "WARC-Target-URI": uri, **extra}
        return self._builder.create_warc_record(
            uri, record_type, payload=BytesIO(body), length=len(body),
            http_headers=http_headers, warc_headers_dict=headers)

    def _output(self, site: str, category: str) -> _RotatingWarcFile:
        key = (site, category)
        if key not in self._outputs:
            for value in key:  # they become path segments: never let meta escape OUT
                if not SAFE_NAME.fullmatch(value) or value in {".", ".."}:
                    raise ValueError(f"site/category {value!r} in Request.meta is not a safe path segment")
            info = {**self.warcinfo_fields, "site": site, "category": category}
            self._outputs[key] = _RotatingWarcFile(
                self.out_dir / site / category, site, category, self.max_bytes, info, self._file_closed)
        return self._outputs[key]

    def _count(self, site: str, category: str, status: int, payload: int) -> None:
        self.counts.responses[(site, category)] += 1
        self.counts.statuses[status] += 1
        self.counts.payload_bytes += payload
        if self.stats is not None:
            self.stats.inc_value("newsclean/warc/responses")
            self.stats.inc_value(f"newsclean/warc/responses/{site}/{category}")
            self.stats.inc_value(f"newsclean/warc/status/{status}")
            self.stats.inc_value("newsclean/warc/payload_bytes", payload)

    def _file_closed(self, path: Path, size: int) -> None:
        self.counts.files.append(str(path))
        self.counts.warc_bytes += size
        logger.info("closed WARC file %s (%d bytes)", path, size)
        if self.stats is not None:
            self.stats.inc_value("newsclean/warc/files")
            self.stats.inc_value("newsclean/warc/bytes", size)
