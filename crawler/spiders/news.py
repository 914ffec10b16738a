"""The config-driven news spider: start points per (site, category), listings followed, articles stored.

Every request carries a :class:`~newsclean.crawler.items.PageTask` in ``meta["newsclean"]`` and is answered
by exactly one :class:`~newsclean.crawler.items.PageOutcome` item (from :meth:`NewsSpider.parse` or
:meth:`NewsSpider.errback`), which the item pipeline writes to WARC, acknowledges in the crawl
store and counts in the report.

What each response leads to (see :mod:`newsclean.crawler.discovery`):

- a robots.txt start point: its ``Sitemap:`` URLs (role ``sitemap``, same depth);
- a sitemap index: its child sitemaps (same depth); a urlset (news sitemaps included) or an
  RSS/Atom feed: its entries, classified by the site's URL patterns, at depth + 1;
- an HTML listing page (start point or ``listing``): its in-site ``<a href>`` links, classified,
  at depth + 1, while depth < ``depth_limit``;
- an HTML article: stored; its links are followed only when the site follows article links
  (by default, only a site without URL patterns does), and then only those that look like the site's
  articles or listings (:func:`~newsclean.crawler.discovery.followed_from_article`: without
  ``article_allow``, links in the section of a start URL), at depth + 1 while depth < ``depth_limit``;
- a gzip sitemap that unpacks past ``download_maxsize``: failed ``too_large`` (a decompression bomb);
- anything else (images, PDFs, binary bodies served as HTML): recorded as skipped with its
  content type, not parsed.

Dedup is the spider's, not Scrapy's (requests are ``dont_filter``): a URL is requested once per
job (start URLs of every category reserved up front); an article URL the crawl store knows is not
requested at all (``skipped_known``) unless ``refetch_after_days`` has passed. Only links inside the
*same site's* ``allowed_domains`` are followed (host compared without its port).
"""

from __future__ import annotations

import math
import time
import uuid
from collections import Counter, deque
from collections.abc import AsyncIterator, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import scrapy
from scrapy import signals
from scrapy.exceptions import (
    DontCloseSpider,
    DownloadCancelledError,
    DownloadConnectionRefusedError,
    DownloadTimeoutError,
    IgnoreRequest,
    ResponseDataLossError,
)
from scrapy.http import Response
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils._compression import _DecompressionMaxSizeExceeded
from twisted.internet.error import ConnectError
from twisted.internet.error import TimeoutError as TxTimeoutError
from twisted.python.failure import Failure

from newsclean.crawler.config import SiteConfig, SitesConfig, load_config
from newsclean.crawler.discovery import (
    SitemapFacts,
    article_section,
    category_for,
    classify_url,
    content_type,
    feed_links,
    followed_from_article,
    html_links,
    in_site_links,
    page_kind,
    read_sitemap,
    robots_sitemaps,
)
from newsclean.crawler.fetch import is_header_too_large, is_not_http
from newsclean.crawler.items import PageOutcome, PageTask
from newsclean.crawler.report import CrawlReport
from newsclean.crawler.safety import (
    RefusedRequest,
    is_dns_failure,
    is_private_address_failure,
    refused_redirect_target,
)
from newsclean.crawler.state import CrawlState
from newsclean.crawler.store import Admission, FrontierEntry, canonical_url
from newsclean.crawler.warc import CAPTURES_KEY, Capture, PreviousCapture
from newsclean.schemas.contract import (
    SITEMAP_LASTMOD_FIELD,
    SITEMAP_PUBLICATION_DATE_FIELD,
    SITEMAP_TITLE_FIELD,
    FetchReason,
)

#: ``Request.meta`` key of the :class:`PreviousCapture` a conditional refetch asks about.
PREVIOUS_KEY = "newsclean_previous"

#: Page kinds that are followed like listings.
_INDEX_KINDS = {"robots": "robots", "sitemap": "sitemap", "feed": "feed"}


def failure_reason(exc: BaseException, chain: list[str]) -> tuple[str, str]:
    """``(outcome, reason)`` for a request that ended in ``exc`` after visiting the URLs ``chain`` (the
    last one is the URL that failed)."""
    if isinstance(exc, RefusedRequest):
        return ("skipped" if exc.reason.startswith("robots") else "failed"), exc.reason
    if is_header_too_large(exc):
        return "failed", "too_large"
    if isinstance(exc, IgnoreRequest):
        message = str(exc)
        if "robots.txt" in message:
            return "skipped", "robots_txt"
        if isinstance(exc.__cause__, _DecompressionMaxSizeExceeded):  # a decompression bomb
            return "failed", "too_large"
        if "max redirections" in message:
            return "failed", "redirect_loop" if len(set(chain)) < len(chain) else "max_redirects"
        return "failed", "ignored"
    if isinstance(exc, (DownloadTimeoutError, TxTimeoutError)):
        return "failed", "timeout"
    if isinstance(exc, DownloadCancelledError):
        return "failed", "too_large"
    if is_private_address_failure(exc, urlsplit(chain[-1]).hostname if chain else None):
        return "failed", "private_address"
    if is_dns_failure(exc):
        return "failed", FetchReason.DNS
    if isinstance(exc, (DownloadConnectionRefusedError, ConnectError)):
        return "failed", "connection"
    if isinstance(exc, ResponseDataLossError):
        return "failed", "data_loss"
    if is_not_http(exc):
        return "failed", FetchReason.NOT_HTTP
    return "failed", f"error:{type(exc).__name__}"


def _hostname(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


class NewsSpider(scrapy.Spider):
    """Crawl the sites of a :class:`~newsclean.crawler.config.SitesConfig` category by category.

    Args:
        config: the config, or the path of a ``sites.toml`` (so ``scrapy crawl news -a config=sites.toml``
            works too). Raises ``ValueError`` as :func:`newsclean.crawler.config.load_config`.

    Limits: links are followed from pages at depth < ``crawl.depth_limit`` (start points have
    depth 0); with ``crawl.max_pages_per_category`` > 0, at most that many requests are issued
    per (site, category), start points included (start points are always issued); with
    ``crawl.max_pages`` > 0, at most that many over the whole crawl, start points included (a trial run). Without the
    :class:`~newsclean.crawler.state.CrawlState` extension (unit tests) there is no store: nothing is known.
    """

    name = "news"

    def __init__(self, config: SitesConfig | str | Path | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if config is None:
            raise ValueError("NewsSpider needs config= (a SitesConfig or a sites.toml path)")
        self.config = config if isinstance(config, SitesConfig) else load_config(config)
        self.allowed_domains = sorted({d for s in self.config.sites for d in s.allowed_domains})
        self._seen = {canonical_url(url) for _, _, url in self.config.start_points()}
        self._issued: Counter[tuple[str, str]] = Counter()
        self._per_host: Counter[str] = Counter()
        self._reissued: set[str] = set()
        self._capped: set[tuple[str, str]] = set()
        # Canonical article URL -> what a sitemap said of it, until the article is parsed (this process only).
        self._sitemap_facts: dict[str, SitemapFacts] = {}
        self.crawl_state: CrawlState | None = None
        self.report = CrawlReport()
        self.frontier = Frontier()
        self._deadline = math.inf

    @classmethod
    def from_crawler(cls, crawler, *args: Any, **kwargs: Any) -> NewsSpider:
        """Scrapy's constructor hook; also listens to ``spider_idle`` (see :meth:`reissue_pending`)."""
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.reissue_pending, signal=signals.spider_idle)
        return spider

    def reissue_pending(self) -> None:
        """On ``spider_idle``: the requests :attr:`frontier` still holds go to the downloader (nothing is in flight
        when the spider is idle). Then the job may not end while the store still has pending requests that no
        request of this process carries (e.g. one Scrapy's disk queue lost after a hard kill). Each such
        request is issued again, once per process. Raises ``DontCloseSpider`` when it issued any."""
        if self.frontier.waiting():
            self.frontier.idle()
            for request in self._released():
                self.crawler.engine.crawl(request)
            raise DontCloseSpider
        state = self.crawl_state
        if state is None:
            return
        missing = [e for e in state.store.pending(state.job) if e.url not in state.inflight and e.url not in self._reissued]
        if not missing:
            return
        self.logger.warning("%d pending requests of job %s were in no queue: issuing them again", len(missing),
                            state.job)
        for entry in missing:
            self._reissued.add(entry.url)
            self.crawler.engine.crawl(self._request(entry))
        raise DontCloseSpider

    # ----------------------------------------------------------------------------- requests

    async def start(self) -> AsyncIterator[scrapy.Request]:
        """The start requests: every start URL of every category at depth 0 or, when resuming a job,
        the job's pending requests."""
        crawler = getattr(self, "crawler", None)
        self.crawl_state = crawler.get_extension(CrawlState) if crawler is not None else None
        max_time = crawler.settings.getfloat("CLOSESPIDER_TIMEOUT") if crawler is not None else 0.0
        self._deadline = time.monotonic() + max_time if max_time > 0 else math.inf
        if self.crawl_state is not None:
            self.report = self.crawl_state.report
        self.frontier.add(self._start_entries())
        for request in self._released():
            yield request

    def _start_entries(self) -> list[FrontierEntry]:
        state = self.crawl_state
        if state is not None and state.resumed:
            for url, site, category in state.store.frontier_urls(state.job):
                self._seen.add(url)
                self._issued[(site, category)] += 1
                self._per_host[_hostname(url)] += 1
            pending = state.store.pending(state.job)
            self.logger.info("resuming job %s: %d pending requests", state.job, len(pending))
            return pending
        entries = []
        for site, category, url in self.config.start_points():
            if self._over_crawl_budget():
                break
            self._issued[(site, category)] += 1
            self._per_host[_hostname(url)] += 1
            entries.append(FrontierEntry(canonical_url(url), url, site, category, 0, "start"))
        if state is not None:
            state.store.add_frontier(state.job, entries)
            adopted = state.store.adopt_pending(state.job, [site.name for site in self.config.sites], self._adoptable)
            if adopted:
                self.logger.info("%d requests left pending by earlier crawls are issued again", len(adopted))
            entries += adopted
        return entries

    def _adoptable(self, entry: FrontierEntry) -> Admission:
        """What this job does with a request an earlier job left pending (:meth:`CrawlStore.adopt_pending`):
        :meth:`_admit` it as a discovered link."""
        return self._admit(entry.request_url, entry.site, entry.category, entry.role, entry.url)[0]

    def _request(self, entry: FrontierEntry) -> scrapy.Request:
        task = PageTask(entry.site, entry.category, entry.depth, entry.role, entry.referrer, entry.url,
                        uuid.uuid4().hex)
        self.report.started(entry.site, entry.category)
        meta = {"newsclean": task, "download_slot": site_slot(entry.site)}
        headers = {}
        language = self.config.site(entry.site).accept_language
        if language:  # the site's own; else DEFAULT_REQUEST_HEADERS has crawl.accept_language
            headers["Accept-Language"] = language
        state = self.crawl_state
        if entry.role == "article" and state is not None and state.refetch_after_days > 0:
            previous = state.previous_capture(entry.url)
            if previous is not None and (previous.etag or previous.last_modified):  # a conditional GET
                meta[PREVIOUS_KEY] = previous
                if previous.etag:
                    headers["If-None-Match"] = previous.etag
                if previous.last_modified:
                    headers["If-Modified-Since"] = previous.last_modified
        return scrapy.Request(entry.request_url, callback=self.parse, errback=self.errback, meta=meta,
                              headers=headers, dont_filter=True)

    # ---------------------------------------------------------------------------- callbacks

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Any]:
        """Turn a 2xx response into its :class:`PageOutcome`, then the requests it leads to."""
        task: PageTask = response.meta["newsclean"]
        site = self.config.site(task.site)
        maxsize = self.settings.getint("DOWNLOAD_MAXSIZE") if hasattr(self, "crawler") else 0
        kind, body = page_kind(response, expect_html=task.role == "article", max_size=maxsize)
        category, fields, facts = task.category, [], {}
        if kind in _INDEX_KINDS:
            if self._past_deadline():
                self._put_back(task)
                return
            page_type, outcome, reason = kind, "listing", None
            urls, facts = self._index_links(kind, body, response, task, site)
        elif kind == "html":
            fields.append(("charset", response.encoding))
            if task.role == "article":
                page_type, outcome, reason = "article", "stored", None
                section = article_section(response) if "meta" in site.category_from else None
                if section:
                    fields.append(("article-section", section))
                fields += sitemap_fields(self._sitemap_facts.pop(task.key, None))
                category = category_for(response.url, site, task.category, self.config.crawl.fallback_category,
                                        section)
                follow = site.follows_article_links
            else:
                page_type, outcome, reason, follow = "listing", "listing", None, True
            urls = self._classified(html_links(response), site) if follow else []
            if task.role == "article":
                urls = [(u, role) for u, role in urls if followed_from_article(u, role, site)]
            urls = [(u, role, task.depth + 1) for u, role in urls] if task.depth < self.config.crawl.depth_limit else []
        elif kind == "too_large":  # a gzip sitemap that unpacks past download_maxsize: a decompression bomb
            page_type, outcome, reason, urls = "other", "failed", "too_large", []
        else:
            ctype = content_type(response) or "none"
            page_type, outcome, reason, urls = "other", "skipped", f"{'binary' if kind == 'binary' else 'non_html'}:{ctype}", []
        entries = self._follow_all(urls, task, response.url, interruptible=kind in _INDEX_KINDS)
        if entries is None:  # max_time came while a sitemap's or feed's links were followed
            self._put_back(task)
            return
        for entry in entries:  # kept until the article is parsed or fails
            if entry.role == "article" and entry.request_url in facts:
                self._sitemap_facts[entry.url] = facts[entry.request_url]
        yield self._outcome(task, response.meta, response.url, category, page_type, outcome, reason, entries,
                            fields)
        self.frontier.add(entries)
        yield from self._released()

    def errback(self, failure: Failure) -> Iterator[PageOutcome | scrapy.Request]:
        """Turn a failed request (HTTP error status, refused, timed out, ...) into its :class:`PageOutcome`, then
        the requests its end lets into the downloader (:class:`Frontier`)."""
        task: PageTask | None = failure.request.meta.get("newsclean")
        if task is None:
            return
        yield from self._failed(failure, task)
        self.frontier.done(task)
        yield from self._released()

    def _failed(self, failure: Failure, task: PageTask) -> Iterator[PageOutcome]:
        request = failure.request
        exc = failure.value
        fields = sitemap_fields(self._sitemap_facts.pop(task.key, None))
        previous = request.meta.get(PREVIOUS_KEY)
        if isinstance(exc, HttpError) and exc.response.status == 304 and previous is not None:
            yield self._outcome(task, request.meta, exc.response.url, task.category, "article", "skipped",
                                "not_modified", [], fields, previous)
            return
        target = refused_redirect_target(exc.response) if isinstance(exc, HttpError) else None
        if target is not None:  # a redirect to file:, ftp:, ... that Scrapy does not follow
            url, outcome, reason = target, "failed", FetchReason.BAD_SCHEME
            fields.append(("error", f"redirect to {target[:200]}: scheme is not http(s)"))
        elif isinstance(exc, HttpError):
            url = exc.response.url
            outcome, reason = "failed", f"http_{exc.response.status}"
            retry_after = request.meta.get("newsclean_retry_after")
            if retry_after is not None:
                fields.append(("retry-after", f"{retry_after:g}"))
        else:
            url = request.url
            chain_urls = [*request.meta.get("redirect_urls", []), request.url]
            outcome, reason = failure_reason(exc, chain_urls)
            fields.append(("error", f"{type(exc).__name__}: {exc}"))
            if reason in {"duplicate_in_job", "known_article"}:
                if not request.meta.get(CAPTURES_KEY):
                    return  # the same URL is (or was) fetched by another request of this job
                outcome, reason = "skipped", "redirect_to_known"
        yield self._outcome(task, request.meta, url, task.category, "other", outcome, reason, [], fields)

    # ------------------------------------------------------------------------------ helpers

    def _released(self) -> Iterator[scrapy.Request]:
        """The requests of the entries :attr:`frontier` lets into the downloader now."""
        for entry in self.frontier.release():
            yield self._request(entry)

    def _outcome(self, task: PageTask, meta: dict[str, Any], url: str, category: str, page_type: str, outcome: str,
                 reason: str | None, links: list[FrontierEntry], fields: list[tuple[str, str]],
                 previous: PreviousCapture | None = None) -> PageOutcome:
        """The item of one page; ``meta`` is the final request's meta (it holds the captures)."""
        self.frontier.done(task)
        captures: list[Capture] = list(meta.get(CAPTURES_KEY, []))
        # The page answers for the URLs that got a response (not a redirect target that was refused).
        chain = tuple(dict.fromkeys(canonical_url(c.url) for c in captures))
        return PageOutcome(task=task, url=url, chain=chain,
                           captures=captures, category=category, page_type=page_type, outcome=outcome,
                           reason=reason,
                           fetched_at=captures[-1].started if captures else datetime.now(UTC),
                           links=links, fields=fields, previous=previous)

    def _index_links(self, kind: str, body: bytes | None, response: Response, task: PageTask,
                     site: SiteConfig) -> tuple[list[tuple[str, str, int]], dict[str, SitemapFacts]]:
        """``(url, role, depth)`` of what a robots.txt, sitemap or feed lists, and a sitemap's facts."""
        facts: dict[str, SitemapFacts] = {}
        if kind == "robots":
            return [(u, "sitemap", task.depth) for u in in_site_links(robots_sitemaps(response), site)], facts
        if kind == "sitemap":
            document = read_sitemap(body, response.url)
            urls, facts = document.urls, document.facts
            if document.type == "sitemapindex":
                return [(u, "sitemap", task.depth) for u in in_site_links(urls, site)], facts
        else:
            urls = feed_links(body, response.url, (response.headers.get("Content-Type") or b"").decode("latin-1"))
        if task.depth >= self.config.crawl.depth_limit:
            return [], facts
        return [(u, role, task.depth + 1) for u, role in self._classified(urls, site)], facts

    @staticmethod
    def _classified(urls: list[str], site: SiteConfig) -> list[tuple[str, str]]:
        """The in-site ``urls`` with their role (``listing`` / ``article``); unclassified ones dropped."""
        out = []
        for url in in_site_links(urls, site):
            role = classify_url(url, site)
            if role is not None:
                out.append((url, role))
        return out

    def _past_deadline(self) -> bool:
        """Whether the crawl ran ``max_time`` (Scrapy's ``CLOSESPIDER_TIMEOUT``, counted from :meth:`start`)."""
        return time.monotonic() >= self._deadline

    def _put_back(self, task: PageTask) -> None:
        """Leave a fetched sitemap, feed or robots.txt unread because ``max_time`` came: no outcome, so its frontier
        row stays pending and the next run of the job (or the next crawl, :meth:`_start_entries`) fetches it again;
        reading it now would hold the closing crawl up (a sitemap may list 50,000 URLs)."""
        self.frontier.done(task)
        if self.crawl_state is not None:
            self.crawl_state.release((task.key,))
        self.logger.info("max_time reached: %s left pending for the next run", task.key)

    def _follow_all(self, urls: list[tuple[str, str, int]], parent: PageTask, referrer: str, *,
                    interruptible: bool) -> list[FrontierEntry] | None:
        """The frontier entries of a page's ``(url, role, depth)`` links (:meth:`_follow`); ``None`` when
        ``interruptible`` and ``max_time`` came before or while following them (checked every 1,000 links)."""
        entries = []
        for i, (url, role, depth) in enumerate(urls):
            if interruptible and i % 1000 == 0 and self._past_deadline():
                return None
            entry = self._follow(url, role, depth, parent, referrer)
            if entry is not None:
                entries.append(entry)
        return entries

    def _follow(self, url: str, role: str, depth: int, parent: PageTask, referrer: str) -> FrontierEntry | None:
        """The frontier entry for a discovered URL, or ``None`` when it is not requested (:meth:`_admit`)."""
        category = parent.category
        if role == "article":
            category = category_for(url, self.config.site(parent.site), parent.category,
                                    self.config.crawl.fallback_category)
        admission, key = self._admit(url, parent.site, category, role)
        if admission is not Admission.ISSUED:
            return None
        return FrontierEntry(key, url, parent.site, category, depth, role, referrer)

    def _admit(self, url: str, site: str, category: str, role: str, key: str = "") -> tuple[Admission, str]:
        """Whether this job requests ``url`` (a ``role`` page of ``site``/``category``; ``key``: its canonical
        form, computed when empty), with that key (``""`` when over a budget): ``DEFERRED`` over
        ``max_pages_per_category``, ``max_pages_per_host`` or ``max_pages``; ``COVERED`` when seen in this job or
        a known article (counted ``skipped_known``); else ``ISSUED``, counted against the budgets."""
        if key in self._seen:  # a request this job has anyway is covered, whatever the budgets
            return Admission.COVERED, key
        # the budgets first: they are cheap, and past them a sitemap's remaining URLs need no canonical form
        if self._over_cap(site, category) or self._over_host_budget(url) or self._over_crawl_budget():
            return Admission.DEFERRED, ""
        key = key or canonical_url(url)
        if key in self._seen:
            return Admission.COVERED, key
        self._seen.add(key)
        if role == "article" and self.crawl_state is not None and self.crawl_state.is_known_article(key):
            self.report.skipped_known(site, category)
            return Admission.COVERED, key
        self._issued[(site, category)] += 1
        self._per_host[_hostname(url)] += 1
        return Admission.ISSUED, key

    def _over_host_budget(self, url: str) -> bool:
        """Whether ``url``'s host already had ``crawl.max_pages_per_host`` requests (0: no budget)."""
        budget = self.config.crawl.max_pages_per_host
        host = _hostname(url)
        if not budget or self._per_host[host] < budget:
            return False
        if ("host", host) not in self._capped:
            self._capped.add(("host", host))
            self.logger.info("max_pages_per_host=%d reached for %s", budget, host)
        return True

    def _over_crawl_budget(self) -> bool:
        """Whether ``crawl.max_pages`` requests were issued over the whole crawl (0: no budget)."""
        budget = self.config.crawl.max_pages
        if not budget or sum(self._issued.values()) < budget:
            return False
        if ("crawl",) not in self._capped:
            self._capped.add(("crawl",))
            self.logger.warning("max_pages=%d reached: no further page is requested", budget)
        return True

    def _over_cap(self, site: str, category: str) -> bool:
        cap = self.config.crawl.max_pages_per_category
        if not cap or self._issued[(site, category)] < cap:
            return False
        if (site, category) not in self._capped:
            self._capped.add((site, category))
            self.logger.info("max_pages_per_category=%d reached for %s/%s", cap, site, category)
        return True


class Frontier:
    """The requests of a crawl that wait for the downloader: per site, a queue of pages and one of sitemaps, of
    which at most ``window`` pages and ``sitemaps`` sitemaps are handed to Scrapy at a time (scheduled or
    downloading), in discovery order.

    So a page's links do not all go into Scrapy's scheduler at once: a sitemap of 50,000 URLs puts 50,000 entries
    here (they are already pending rows of the crawl store, written with the sitemap's page), and the site's
    articles are fetched while its next sitemap is read, instead of after every sitemap was (Scrapy's breadth-first
    priorities put a site's sitemaps before its articles, and reading them holds the reactor). Sites do not wait
    for each other. ``window`` stays above Scrapy's per-site concurrency, so the downloader never waits on it.
    """

    def __init__(self, window: int = 64, sitemaps: int = 1) -> None:
        self.window = window
        self.sitemaps = sitemaps
        self._queues: dict[tuple[str, bool], deque[FrontierEntry]] = {}
        self._outstanding: dict[tuple[str, bool], set[str]] = {}

    def add(self, entries: Iterable[FrontierEntry]) -> None:
        """Queue ``entries`` behind the ones already waiting for their site."""
        for entry in entries:
            self._queues.setdefault((entry.site, entry.role == "sitemap"), deque()).append(entry)

    def release(self) -> list[FrontierEntry]:
        """The waiting entries that may go to the downloader now: per site, up to ``window`` outstanding pages
        and, besides them, up to ``sitemaps`` sitemaps (so discovery goes on while the pages it found are fetched)."""
        out = []
        for (site, sitemap), queue in self._queues.items():
            mine = self._outstanding.setdefault((site, sitemap), set())
            limit = self.sitemaps if sitemap else self.window
            while queue and len(mine) < limit:
                entry = queue.popleft()
                mine.add(entry.url)
                out.append(entry)
        return out

    def done(self, task: PageTask) -> None:
        """The request of ``task`` ended (its outcome was yielded, or it was dropped as a duplicate)."""
        self._outstanding.get((task.site, task.role == "sitemap"), set()).discard(task.key)

    def idle(self) -> None:
        """Scrapy holds no request (``spider_idle``): forget what was counted outstanding."""
        self._outstanding.clear()

    def waiting(self) -> int:
        """Entries not handed to the downloader yet."""
        return sum(len(q) for q in self._queues.values())


def sitemap_fields(facts: SitemapFacts | None) -> list[tuple[str, str]]:
    """The metadata-record fields (:mod:`newsclean.schemas.contract` names) of a page's sitemap facts."""
    if facts is None:
        return []
    pairs = ((SITEMAP_PUBLICATION_DATE_FIELD, facts.publication_date), (SITEMAP_TITLE_FIELD, facts.title),
             (SITEMAP_LASTMOD_FIELD, facts.lastmod))
    return [(name, value) for name, value in pairs if value]


def site_slot(site: str) -> str:
    """Scrapy download slot of a site's requests: politeness (concurrency, delay, AutoThrottle) is per
    site, whatever host of the site a request goes to."""
    return f"site:{site}"
