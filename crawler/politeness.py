"""Retries that respect the server: ``Retry-After`` on 429 and 503 responses.

:class:`RetryAfterMiddleware` replaces Scrapy's ``RetryMiddleware`` (same order, 550, same
settings: ``RETRY_TIMES``, ``RETRY_HTTP_CODES``, ``RETRY_EXCEPTIONS``) and adds one rule: a 429 or
503 response with a ``Retry-After`` header (seconds or an HTTP date, RFC 9110 §10.2.3) is retried
only after that delay, and not at all when the delay exceeds ``NEWSCLEAN_MAX_RETRY_AFTER`` seconds
(the final response is then the 503 itself, reported as ``http_503``). While it waits, the request
keeps its place in the downloader, so the site is not asked for more meanwhile. A refused private
address (:mod:`newsclean.crawler.safety`) is never retried.
"""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from scrapy.downloadermiddlewares.retry import RetryMiddleware
from scrapy.utils.asyncio import sleep
from scrapy.utils.response import response_status_message

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
        if delay is not None and delay > self.max_retry_after:
            request.meta["newsclean_retry_after"] = delay
            return response
        retry = self._retry(request, response_status_message(response.status))
        if retry is None:
            return response
        if delay:
            await sleep(delay)
        return retry

    def process_exception(self, request: Request, exception: Exception) -> Request | Response | None:
        """Retry download errors as Scrapy does, except a refused private address."""
        if is_private_address_failure(exception, urlsplit(request.url).hostname):
            return None
        return super().process_exception(request, exception)
