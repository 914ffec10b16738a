"""Politeness per download slot: a delay floor, robots.txt ``Crawl-delay``, and ``Retry-After`` holds.

:class:`HostPolitenessMiddleware` (downloader middleware, order 40) keeps, per Scrapy download slot
(one per site, ``site:<name>``; robots.txt fetches use the host name), a *floor* on the delay
between two requests, ``DOWNLOAD_DELAY`` raised to the site's ``Crawl-delay`` (capped at
``NEWSCLEAN_MAX_CRAWL_DELAY``), re-applied after every response so that AutoThrottle never goes
below it; and a *hold*: after a 429/503 with ``Retry-After``, no request of that slot is sent
before the time the server named (at most ``NEWSCLEAN_MAX_RETRY_AFTER`` seconds). RFC 9309 leaves
Crawl-delay out (a widespread extension); Heritrix and StormCrawler honour it up to a cap, as here.

Retries that respect the server: ``Retry-After`` on 429 and 503 responses.

:class:`RetryAfterMiddleware` replaces Scrapy's ``RetryMiddleware`` (same order, 550, same
settings: ``RETRY_TIMES``, ``RETRY_HTTP_CODES``, ``RETRY_EXCEPTIONS``) and adds one rule: a 429 or
503 response with a ``Retry-After`` header (seconds or an HTTP date, RFC 9110 §10.2.3) is retried
only after that delay, and not at all when the delay exceeds ``NEWSCLEAN_MAX_RETRY_AFTER`` seconds
(the final response is then the 503 itself, reported as ``http_503``). Either way the slot is held
(:meth:`HostPolitenessMiddleware.hold`), so the site is not asked for anything meanwhile. A refused
private address (:mod:`newsclean.crawler.safety`) and a response whose header section was too
large (:mod:`newsclean.crawler.fetch`) are never retried.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from scrapy import signals
from scrapy.downloadermiddlewares.retry import RetryMiddleware
from scrapy.utils.asyncio import sleep
from scrapy.utils.response import response_status_message

from newsclean.crawler.fetch import is_header_too_large
from newsclean.crawler.safety import is_private_address_failure

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response

RETRY_AFTER_STATUSES = frozenset({429, 503})


def parse_retry_after(value: str | bytes | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value: delta-seconds (``"120"``) or an HTTP date
    (``"Wed, 21 Oct 2015 07:28:00 GMT"``); a date in the past gives 0. ``None`` when absent or
    unparseable."""
    if value is None:
        return None
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    text = text.strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class HostPolitenessMiddleware:
    """Per-slot delay floor and ``Retry-After`` holds (see the module docstring).

    Settings: ``DOWNLOAD_DELAY`` (the floor, seconds; a slot's own ``delay`` in ``DOWNLOAD_SLOTS`` wins,
    a site's ``download_delay`` override), ``NEWSCLEAN_MAX_CRAWL_DELAY`` (seconds).
    """

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.floor = crawler.settings.getfloat("DOWNLOAD_DELAY")
        self.slot_floors = {key: float(opts["delay"]) for key, opts in crawler.settings.getdict("DOWNLOAD_SLOTS").items()
                            if isinstance(opts, dict) and "delay" in opts}
        self.max_crawl_delay = crawler.settings.getfloat("NEWSCLEAN_MAX_CRAWL_DELAY", 30.0)
        self.floors: dict[str, float] = {}
        self.holds: dict[str, float] = {}
        crawler.signals.connect(self._response_downloaded, signal=signals.response_downloaded)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> HostPolitenessMiddleware:
        """Build from the crawler's settings; listens to ``response_downloaded`` (after AutoThrottle)."""
        return cls(crawler)

    def slot_key(self, request: Request) -> str:
        """The download slot of ``request`` (``meta["download_slot"]``, else its host name)."""
        return self.crawler.engine.downloader.get_slot_key(request)

    def set_crawl_delay(self, key: str, seconds: float | None) -> float:
        """Raise slot ``key``'s floor to a robots.txt ``Crawl-delay`` of ``seconds`` (capped at
        ``NEWSCLEAN_MAX_CRAWL_DELAY``); returns the slot's floor."""
        floor = max(self.slot_floors.get(key, self.floor), min(seconds or 0.0, self.max_crawl_delay))
        self.floors[key] = max(self.floors.get(key, 0.0), floor)
        return self.floors[key]

    def hold(self, key: str, seconds: float) -> None:
        """Send no request of slot ``key`` for ``seconds`` from now: requests not yet in the downloader wait
        in :meth:`process_request`; those already queued in the slot wait because the slot's last request
        is post-dated (Scrapy's downloader sends the next one ``delay`` after ``lastseen``)."""
        until = max(self.holds.get(key, 0.0), time.monotonic() + seconds)
        self.holds[key] = until
        slot = self.crawler.engine.downloader.slots.get(key)
        if slot is not None:
            slot.delay = max(slot.delay, 0.001)  # a zero delay skips the lastseen check
            slot.lastseen = max(slot.lastseen, until - slot.delay)

    async def process_request(self, request: Request) -> None:
        """Wait out a hold on the request's slot, then make sure the slot's delay is at its floor."""
        key = self.slot_key(request)
        while (wait := self.holds.get(key, 0.0) - time.monotonic()) > 0:
            await sleep(wait)
        self._apply_floor(key)

    def _response_downloaded(self, response: Response, request: Request, spider=None) -> None:
        self._apply_floor(self.slot_key(request))

    def _apply_floor(self, key: str) -> None:
        slot = self.crawler.engine.downloader.slots.get(key)
        floor = self.floors.get(key, self.slot_floors.get(key, self.floor))
        if slot is not None and slot.delay < floor:
            slot.delay = floor
            slot.jitter = 0.0  # a floor, not an average


def politeness(crawler: Crawler) -> HostPolitenessMiddleware | None:
    """The crawl's :class:`HostPolitenessMiddleware`, if installed."""
    try:
        return crawler.get_downloader_middleware(HostPolitenessMiddleware)
    except RuntimeError:  # the downloader is not built yet
        return None


class RetryAfterMiddleware(RetryMiddleware):
    """Scrapy's ``RetryMiddleware`` honouring ``Retry-After`` (see the module docstring)."""

    max_retry_after: float = 60.0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RetryAfterMiddleware:
        """Build from the settings (``NEWSCLEAN_MAX_RETRY_AFTER``, seconds, besides Scrapy's own)."""
        mw = super().from_crawler(crawler)
        mw.max_retry_after = crawler.settings.getfloat("NEWSCLEAN_MAX_RETRY_AFTER", 60.0)
        return mw

    async def process_response(self, request: Request, response: Response) -> Request | Response:
        """Retry a retryable status, after ``Retry-After`` when the server sent one (429/503)."""
        if request.meta.get("dont_retry", False) or response.status not in self.retry_http_codes:
            return response
        delay = None
        if response.status in RETRY_AFTER_STATUSES:
            delay = parse_retry_after(response.headers.get("Retry-After"))
        if delay:
            holder = politeness(self.crawler)
            if holder is not None:
                holder.hold(holder.slot_key(request), min(delay, self.max_retry_after))
        if delay is not None and delay > self.max_retry_after:
            request.meta["newsclean_retry_after"] = delay
            return response
        retry = self._retry(request, response_status_message(response.status))
        if retry is None:
            return response
        if delay:
            await sleep(delay)  # the slot is held meanwhile; the retry keeps its place
        return retry

    def process_exception(self, request: Request, exception: Exception) -> Request | Response | None:
        """Retry download errors as Scrapy does, except a refused private address."""
        if is_private_address_failure(exception, urlsplit(request.url).hostname) or is_header_too_large(exception):
            return None
        return super().process_exception(request, exception)
