"""robots.txt as RFC 9309 says: what a failed fetch means, how much is parsed, fetched once per host.

:class:`RobotsMiddleware` replaces Scrapy's ``RobotsTxtMiddleware`` (same order, 100; same parser,
Protego) and changes what Scrapy gets wrong for an archive crawler:

* **Status** (RFC 9309 §2.3.1): a 2xx body is parsed; a 4xx ("unavailable") allows everything;
  a 5xx or 429 ("unreachable"), a network error or a timeout **disallows everything** for that host
  (§2.3.1.4), reported per page as ``robots_unavailable`` (``dns`` when the host name did not resolve: there
  is then no host to ask); the host's robots.txt is fetched again
  by the first request made :data:`UNREACHABLE_RETRY_S` seconds later, and a successful fetch
  lifts the disallow. Scrapy parses any body, so a 500 error page allowed all.
* **Size** (§2.5): the first :data:`ROBOTS_PARSE_BYTES` (500 KiB, the RFC's minimum) are parsed,
  the rest is not downloaded (``bytes_received`` stops the download, the last partial line is
  dropped); a larger file is no longer cancelled by ``DOWNLOAD_MAXSIZE`` and then ignored.
* **Once** (§2.4 caching): a robots.txt that is also a start point is answered from the fetch the
  middleware made, not fetched a second time.
* **Crawl-delay**: handed to :class:`newsclean.crawler.politeness.HostPolitenessMiddleware`
  (capped there).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.exceptions import IgnoreRequest, StopDownload
from scrapy.http import Request, Response
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import build_from_crawler
from twisted.internet.defer import Deferred

from newsclean.crawler.fetch import is_not_http
from newsclean.crawler.politeness import politeness
from newsclean.crawler.safety import RefusedRequest, is_dns_failure, is_private_address_failure
from newsclean.schemas.contract import FetchReason

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

#: Bytes of a robots.txt that are parsed (RFC 9309 §2.5: at least 500 kibibytes).
ROBOTS_PARSE_BYTES = 500 * 1024
#: Seconds after which an unreachable robots.txt is fetched again.
UNREACHABLE_RETRY_S = 60.0
#: ``Request.meta`` key marking the middleware's own robots.txt fetches.
ROBOTS_META = "newsclean_robots"


@dataclass(frozen=True)
class Unreachable:
    """A host whose robots.txt could not be fetched: everything is disallowed until ``retry_at``
    (``time.monotonic()``), then it is fetched again. ``why``: ``http_503``, ``timeout``, ..."""

    why: str
    retry_at: float


def unreachable_reason(exc: BaseException) -> str:
    """What :attr:`Unreachable.why` says of a robots.txt fetch that raised ``exc``: ``dns`` (the host name did
    not resolve: the host's pages then fail as ``dns``, not as ``robots_unavailable``), ``not_http`` (the reply
    was not HTTP), else ``error:<exception class>``."""
    if is_dns_failure(exc):
        return FetchReason.DNS
    if is_not_http(exc):
        return FetchReason.NOT_HTTP
    return f"error:{type(exc).__name__}"


def robots_status_rule(status: int) -> str:
    """What a robots.txt response status means (RFC 9309 §2.3.1): ``"parse"`` (2xx), ``"allow_all"``
    (3xx left after redirects, 4xx except 429), ``"disallow_all"`` (429 and 5xx)."""
    if 200 <= status < 300:
        return "parse"
    if status == 429 or status >= 500:
        return "disallow_all"
    return "allow_all"


def truncate_robots(body: bytes, limit: int = ROBOTS_PARSE_BYTES) -> bytes:
    """The first ``limit`` bytes of ``body``, cut back to the last whole line when it was longer."""
    if len(body) <= limit:
        return body
    head = body[:limit]
    cut = head.rfind(b"\n")
    return head[: cut + 1] if cut >= 0 else b""


class RobotsMiddleware(RobotsTxtMiddleware):
    """Scrapy's robots.txt middleware with RFC 9309 semantics (see the module docstring)."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self._received: dict[int, int] = {}
        self._responses: dict[str, Response] = {}
        crawler.signals.connect(self._bytes_received, signal=signals.bytes_received)

    async def process_request(self, request: Request, spider=None) -> Response | None:
        """Refuse a request robots.txt disallows; answer a robots.txt start point from the cache."""
        if request.meta.get("dont_obey_robotstxt") or request.url.startswith(("data:", "file:")):
            return None
        rp = await self.robot_parser(request)
        url = urlparse_cached(request)
        if url.path == "/robots.txt" and not url.query:  # always allowed; fetched once
            cached = self._responses.pop(url.netloc, None)
            if cached is not None and cached.url == request.url:
                sent = cached.request
                if sent is not None:  # the WARC request record shows what was sent, and when
                    for name, values in sent.headers.items():
                        request.headers.setlist(name, values)
                    if "download_latency" in sent.meta:
                        request.meta["download_latency"] = sent.meta["download_latency"]
                return cached.replace(request=request)
            return None
        if isinstance(rp, Unreachable) and rp.why == FetchReason.DNS:
            raise RefusedRequest(FetchReason.DNS, f"{url.hostname}: the host name did not resolve")
        if isinstance(rp, Unreachable):
            self._stats.inc_value("robotstxt/forbidden")
            raise RefusedRequest("robots_unavailable", f"robots.txt of {url.netloc} unreachable ({rp.why}): "
                                 "everything disallowed (RFC 9309 §2.3.1.4)")
        self.process_request_2(rp, request)
        return None

    async def robot_parser(self, request: Request):
        """The host's parser, :class:`Unreachable`, or ``None`` (allow all); fetches robots.txt first
        when the host has none yet (or its unreachable period is over)."""
        url = urlparse_cached(request)
        netloc = url.netloc
        known = self._parsers.get(netloc)
        if isinstance(known, Unreachable) and known.retry_at <= time.monotonic():
            del self._parsers[netloc]
        if netloc not in self._parsers:
            self._parsers[netloc] = Deferred()
            result = await self._fetch(f"{url.scheme}://{netloc}/robots.txt", request)
            waiting = self._parsers[netloc]
            self._parsers[netloc] = result
            waiting.callback(result)
            self._stats.inc_value("robotstxt/request_count")
        parser = self._parsers[netloc]
        if isinstance(parser, Deferred):
            return await maybe_deferred_to_future(parser)
        return parser

    async def _fetch(self, robots_url: str, request: Request):
        # No size limit here: _bytes_received stops the download past ROBOTS_PARSE_BYTES, whereas
        # DOWNLOAD_MAXSIZE would cancel a large one from its Content-Length and keep nothing. Bodies are
        # asked for uncompressed, so that no decompression limit is needed either.
        meta = {"dont_obey_robotstxt": True, ROBOTS_META: True, "download_maxsize": 0}
        robots_request = Request(robots_url, priority=self.DOWNLOAD_PRIORITY, meta=meta, callback=NO_CALLBACK,
                                 headers={"Accept-Encoding": "identity"})
        try:
            response = await self.crawler.engine.download_async(robots_request)
        except IgnoreRequest:  # refused by our own checks: the page requests will be refused too
            return None
        except Exception as exc:  # noqa: BLE001 (any network failure means unreachable)
            if is_private_address_failure(exc, urlparse_cached(robots_request).hostname):
                return None  # refused by our own checks, as above
            why = unreachable_reason(exc)
            if why == FetchReason.DNS:  # no host to crawl at all: its pages fail the same way, named for it
                logger.warning("robots.txt %s: the host name did not resolve: %s", robots_url, exc)
            else:
                logger.warning("robots.txt %s unreachable: %s: everything disallowed", robots_url, exc)
            return Unreachable(why, time.monotonic() + UNREACHABLE_RETRY_S)
        finally:
            self._received.pop(id(robots_request), None)
        self._stats.inc_value(f"robotstxt/response_status_count/{response.status}")
        if robots_url in self._start_urls():  # kept (up to 500 KiB) only for the start point it will answer
            self._responses[urlparse_cached(robots_request).netloc] = response
        rule = robots_status_rule(response.status)
        if rule == "disallow_all":
            logger.warning("robots.txt %s answered %d: everything disallowed", robots_url, response.status)
            return Unreachable(f"http_{response.status}", time.monotonic() + UNREACHABLE_RETRY_S)
        if rule == "allow_all":
            return None
        rp = build_from_crawler(self._parserimpl, self.crawler, truncate_robots(response.body))
        await self.crawler.signals.send_catch_log_async(signal=signals.robots_parsed, robotparser=rp,
                                                        request=request)
        holder = politeness(self.crawler)
        delay = rp.crawl_delay(self._robotstxt_useragent or self._default_useragent)
        if holder is not None and delay:
            holder.set_crawl_delay(holder.slot_key(request), delay)
        return rp

    def _start_urls(self) -> set[str]:
        config = getattr(self.crawler.spider, "config", None)
        return {url for _, _, url in config.start_points()} if config is not None else set()

    def _bytes_received(self, data: bytes, request: Request, spider=None) -> None:
        """Stop a robots.txt download once :data:`ROBOTS_PARSE_BYTES` arrived (keeping what came)."""
        if not request.meta.get(ROBOTS_META):
            return
        total = self._received.get(id(request), 0) + len(data)
        self._received[id(request)] = total
        if total > ROBOTS_PARSE_BYTES:
            raise StopDownload(fail=False)
