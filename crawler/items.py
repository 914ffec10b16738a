"""What travels through the crawl: the facts a request carries, and the outcome item of each page.

* :class:`PageTask` rides in ``Request.meta["newsclean"]`` (picklable, so Scrapy's JOBDIR disk
  queue can hold it): site, category, depth, role and referrer of the request.
* :class:`PageOutcome` is the item the spider yields once per page, whether it was fetched,
  skipped or failed; :class:`newsclean.crawler.pipelines.ArchivePipeline` writes its captures as WARC
  records, acknowledges it in the crawl store and counts it in the crawl report.

Roles (what the crawler expects at a URL): ``start`` (a configured start point: a section page, a
feed, a sitemap or a robots.txt), ``listing`` (a listing page found by a ``listing_allow`` pattern),
``article`` and ``sitemap`` (a child of a sitemap index or of robots.txt). Page types (what it
turned out to be): ``article``, ``listing``, ``feed``, ``sitemap``, ``robots``, ``other``.
Outcomes: ``stored`` (an article page stored), ``listing`` (a listing, feed, sitemap or robots.txt
fetched and followed), ``skipped`` and ``failed`` (each with a reason code). The values are the
:class:`~newsclean.schemas.contract.Role`, :class:`~newsclean.schemas.contract.PageType` and
:class:`~newsclean.schemas.contract.Outcome` members of the crawl -> clean contract.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from newsclean.crawler.store import FrontierEntry
from newsclean.crawler.warc import Capture, PreviousCapture


@dataclass(frozen=True)
class PageTask:
    """Crawl facts of one request.

    Attributes:
        site, category: where the page belongs (the category may still change for an article whose
            site takes it from ``article:section``).
        depth: link hops from the start point (child sitemaps do not count).
        role: see the module docstring.
        referrer: URL of the page that led here (``None`` for a start point).
        key: canonical URL of the request (the frontier's key).
        token: unique per issued request, to tell a redirect or retry of this request from another
            request for the same URL.
    """

    site: str
    category: str
    depth: int
    role: str
    referrer: str | None
    key: str
    token: str

    def entry(self, request_url: str) -> FrontierEntry:
        """This task as a frontier row for ``request_url``."""
        return FrontierEntry(self.key, request_url, self.site, self.category, self.depth, self.role, self.referrer)


@dataclass
class PageOutcome:
    """The outcome of one page (the spider's item).

    Attributes:
        task: the request's :class:`PageTask`.
        url: final URL (after redirects), or the requested URL when no response came.
        chain: canonical URLs of every request of the page (redirect hops and the final URL).
        captures: the HTTP exchanges, in order (empty when no response came).
        category: the page's final category.
        page_type: see the module docstring.
        outcome: ``stored``, ``listing``, ``skipped`` or ``failed``.
        reason: reason code for ``skipped`` / ``failed`` (``http_404``, ``timeout``,
            ``non_html:image/png``, ...), else ``None``.
        links: requests the page led to (frontier rows), acknowledged with it.
        fetched_at: time of the final fetch (UTC).
        fields: extra ``(name, value)`` lines for the metadata record (charset, retry-after, ...).
        previous: the earlier capture a conditional refetch asked about; with outcome ``skipped`` /
            ``not_modified`` the 304 exchange is written as a ``revisit`` record referring to it.
    """

    task: PageTask
    url: str
    chain: tuple[str, ...]
    captures: list[Capture]
    category: str
    page_type: str
    outcome: str
    reason: str | None
    fetched_at: datetime
    links: list[FrontierEntry] = field(default_factory=list)
    fields: list[tuple[str, str]] = field(default_factory=list)
    previous: PreviousCapture | None = None

    def __repr__(self) -> str:  # Scrapy logs items: keep bodies out of the log
        return (f"PageOutcome({self.url!r}, {self.task.site}/{self.category}, {self.page_type}, "
                f"{self.outcome}{':' + self.reason if self.reason else ''}, {len(self.captures)} captures, "
                f"{len(self.links)} links)")
