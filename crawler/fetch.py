"""HTTP/1.1 downloads with a bound on the response *header* section, which ``DOWNLOAD_MAXSIZE`` does not cover.

Scrapy's ``DOWNLOAD_MAXSIZE`` counts body bytes only. A hostile server can instead stream header
lines for ever (each line short enough for Twisted's 16 KiB line limit) and the client keeps every
one in memory. :class:`GuardedHTTP11DownloadHandler` is Scrapy's ``HTTP11DownloadHandler`` whose
response parser counts the status line and header lines as they arrive and gives the download up
with :class:`HeaderTooLargeError` once the header section exceeds ``NEWSCLEAN_MAX_HEADER_BYTES``
bytes (default 256 KiB, Chromium's limit for a response header block, ``kMaxHeaderBufSize`` in
``net/http/http_stream_parser.cc``) or ``NEWSCLEAN_MAX_HEADERS`` header lines (default 500). The
crawl report gives such a page the reason ``too_large``. It also notes when each download began
(:data:`STARTED_KEY`), the capture's ``WARC-Date``. Installed for ``http`` and ``https`` by
:func:`newsclean.crawler.settings.build_settings` (``DOWNLOAD_HANDLERS``).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from scrapy.core.downloader.handlers.http11 import (
    HTTP11DownloadHandler,
    _LenientHTTP11ClientFactory,
    _LenientHTTP11ClientProtocol,
    _LenientHTTPClientParser,
)
from twisted.web._newclient import ParseError

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response

#: ``Request.meta`` key: UTC time the download handler started the request (connection included),
#: the ``WARC-Date`` of its records (WARC 1.1 §5.4: when the capture began).
STARTED_KEY = "newsclean_fetch_started"

DEFAULT_MAX_HEADER_BYTES = 256 * 1024
DEFAULT_MAX_HEADERS = 500


class HeaderTooLargeError(Exception):
    """A response's header section went past the configured byte or line limit; the download was given up."""


def failure_causes(exc: BaseException | None) -> Iterator[BaseException]:
    """``exc`` and every exception it wraps (``__cause__``/``__context__``) or lists (Twisted's
    ``ResponseFailed.reasons``, Scrapy's ``DownloadFailedError`` raised from one), each once."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        todo += [current.__cause__, current.__context__]
        todo += [getattr(r, "value", None) for r in getattr(current, "reasons", None) or ()]


def is_header_too_large(exc: BaseException | None) -> bool:
    """Whether ``exc`` is, wraps or lists (:func:`failure_causes`) a :class:`HeaderTooLargeError`."""
    return any(isinstance(cause, HeaderTooLargeError) for cause in failure_causes(exc))


def is_not_http(exc: BaseException | None) -> bool:
    """Whether ``exc`` is, wraps or lists (:func:`failure_causes`) Twisted's response ``ParseError``: the server
    answered with bytes that are no HTTP/1.x status line and header section (RFC 9112 sections 2-5), e.g. an SSH
    banner, a TLS record or garbage, which Scrapy reports as a bare ``DownloadFailedError``."""
    return any(isinstance(cause, ParseError) for cause in failure_causes(exc))


class _GuardedParser(_LenientHTTPClientParser):
    """Scrapy's lenient response parser that counts header bytes and lines (limits set on a subclass)."""

    max_header_bytes = DEFAULT_MAX_HEADER_BYTES
    max_headers = DEFAULT_MAX_HEADERS

    def lineReceived(self, line: bytes) -> None:  # noqa: N802 (Twisted interface)
        """Count the line (+2 for CR LF) against the limits, then parse it as Scrapy does."""
        self._head_bytes = getattr(self, "_head_bytes", 0) + len(line) + 2
        self._head_lines = getattr(self, "_head_lines", 0) + 1
        if self._head_bytes > self.max_header_bytes:
            raise HeaderTooLargeError(f"response header section over {self.max_header_bytes} bytes")
        if self._head_lines > self.max_headers + 1:  # + the status line
            raise HeaderTooLargeError(f"response has over {self.max_headers} header lines")
        super().lineReceived(line)

    def lineLengthExceeded(self, line: bytes) -> None:  # noqa: N802 (Twisted interface)
        """A single line past Twisted's line limit (``MAX_LENGTH``, set to the byte limit)."""
        raise HeaderTooLargeError(f"response header line over {self.MAX_LENGTH} bytes")


def _guarded_factory(max_header_bytes: int, max_headers: int) -> type[_LenientHTTP11ClientFactory]:
    """A connection factory class whose protocols parse responses with the given limits."""
    parser_class = type("GuardedParser", (_GuardedParser,), {
        "max_header_bytes": max_header_bytes, "max_headers": max_headers, "MAX_LENGTH": max_header_bytes})

    class GuardedProtocol(_LenientHTTP11ClientProtocol):
        def request(self, request):
            d = super().request(request)
            self._parser.__class__ = parser_class  # same trick as Scrapy's lenient protocol: no added state
            return d

    class GuardedFactory(_LenientHTTP11ClientFactory):
        def buildProtocol(self, addr):  # noqa: N802 (Twisted interface)
            return GuardedProtocol(self._quiescentCallback)

    return GuardedFactory


class GuardedHTTP11DownloadHandler(HTTP11DownloadHandler):
    """Scrapy's HTTP/1.1 download handler with the header limits of the module docstring.

    Settings: ``NEWSCLEAN_MAX_HEADER_BYTES`` (bytes, status line and CR LF included) and
    ``NEWSCLEAN_MAX_HEADERS`` (header lines). The failed download's exception is Twisted's
    ``ResponseFailed`` listing a :class:`HeaderTooLargeError` (see :func:`is_header_too_large`).
    """

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        settings = crawler.settings
        self._pool._factory = _guarded_factory(
            settings.getint("NEWSCLEAN_MAX_HEADER_BYTES", DEFAULT_MAX_HEADER_BYTES),
            settings.getint("NEWSCLEAN_MAX_HEADERS", DEFAULT_MAX_HEADERS))

    async def download_request(self, request: Request) -> Response:
        """Note the capture start in ``meta[STARTED_KEY]``, then download as Scrapy does."""
        request.meta[STARTED_KEY] = datetime.now(UTC)
        return await super().download_request(request)
