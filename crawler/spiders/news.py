"""The config-driven news spider: start pages per (site, category), links followed within the site.

Every request carries ``meta = {"site", "category", "depth"}``; :class:`crawler.warc.WarcWriterMiddleware`
records the response of each such request. A followed link keeps the category of the page it
was found on; start URLs of every category are reserved up front, so a section page linked
from another section is still fetched (and recorded) under its own category.

What is parsed for links:

- HTML responses (Scrapy ``HtmlResponse``) with status 200: ``<a href>`` links, through
  Scrapy's ``LinkExtractor`` (which skips binary extensions such as ``.png``, ``.pdf``).
- RSS/Atom feeds and XML sitemaps (an ``XmlResponse``, status 200): ``<item><link>``,
  ``<entry><link href>``, ``<url><loc>`` and ``<sitemap><loc>``; gzip-compressed sitemap files
  are not unpacked.
- Nothing else: images, other non-HTML types and non-200 responses (which are still recorded).

Only links whose host belongs to the *same site's* ``allowed_domains`` are followed. The spider's
``allowed_domains`` (all sites together) also feeds Scrapy's OffsiteMiddleware, which guards
redirects. ``LinkExtractor(allow_domains=...)`` is not used for the per-site check because it
compares the host *with its port* and so rejects every ``host:port`` URL.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urlsplit

import scrapy
from scrapy.http import HtmlResponse, Response, XmlResponse
from scrapy.linkextractors import LinkExtractor
from w3lib.url import canonicalize_url

from crawler.config import SiteConfig, SitesConfig, load_config

_FEED_LINKS_XPATH = (
    "//item/link/text()"
    " | //entry/link[not(@rel) or @rel='alternate']/@href"
    " | //url/loc/text()"
    " | //sitemap/loc/text()"
)


_A_HREF = LinkExtractor(tags=("a",), attrs=("href",))


def html_links(response: HtmlResponse) -> list[str]:
    """Absolute URLs of the ``<a href>`` links of an HTML page (deduplicated, in page order)."""
    return [link.url for link in _A_HREF.extract_links(response)]


def feed_links(response: XmlResponse) -> list[str]:
    """Absolute URLs listed by an RSS/Atom feed or an XML sitemap (deduplicated, in document order)."""
    selector = scrapy.Selector(response=response, type="xml")
    selector.remove_namespaces()
    urls = (response.urljoin(u.strip()) for u in selector.xpath(_FEED_LINKS_XPATH).getall() if u.strip())
    return list(dict.fromkeys(urls))


def page_links(response: Response, site: SiteConfig) -> list[str]:
    """The http(s) links of ``response`` that stay within ``site``, without ``#fragment``, deduplicated
    in page order (empty for non-HTML, non-feed responses)."""
    if isinstance(response, HtmlResponse):
        urls = html_links(response)
    elif isinstance(response, XmlResponse):
        urls = feed_links(response)
    else:
        return []
    kept = (urldefrag(u).url for u in urls if urlsplit(u).scheme in {"http", "https"} and site.owns_url(u))
    return list(dict.fromkeys(kept))


class NewsSpider(scrapy.Spider):
    """Crawl the sites of a :class:`~crawler.config.SitesConfig` category by category.

    Args:
        config: the config, or the path of a ``sites.toml`` (so ``scrapy crawl news -a config=sites.toml``
            works too). Raises ``ValueError`` as :func:`crawler.config.load_config`.

    Limits: links are followed from pages at depth < ``crawl.depth_limit`` (start pages have
    depth 0); with ``crawl.max_pages_per_category`` > 0, at most that many requests are issued
    per (site, category), start pages included (start pages are always issued).
    """

    name = "news"

    def __init__(self, config: SitesConfig | str | Path | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if config is None:
            raise ValueError("NewsSpider needs config= (a SitesConfig or a sites.toml path)")
        self.config = config if isinstance(config, SitesConfig) else load_config(config)
        self.allowed_domains = sorted({d for s in self.config.sites for d in s.allowed_domains})
        self._seen = {canonicalize_url(url) for _, _, url in self.config.start_points()}
        self._issued: Counter[tuple[str, str]] = Counter()
        self._capped: set[tuple[str, str]] = set()

    async def start(self) -> AsyncIterator[scrapy.Request]:
        """The start requests: every start URL of every category, at depth 0, exempt from the dupe filter
        (two categories may share a start page)."""
        for site, category, url in self.config.start_points():
            self._issued[(site, category)] += 1
            yield self._request(url, site, category, 0, dont_filter=True)

    def parse(self, response: Response, **kwargs: Any) -> Iterator[scrapy.Request]:
        """Follow the in-site links of a 200 HTML page or feed, keeping its site and category."""
        meta = response.meta
        site, category, depth = meta["site"], meta["category"], int(meta.get("depth", 0))
        if response.status != 200 or depth >= self.config.crawl.depth_limit:
            return
        for url in page_links(response, self.config.site(site)):
            request = self._follow(url, site, category, depth + 1)
            if request is not None:
                yield request

    def _follow(self, url: str, site: str, category: str, depth: int) -> scrapy.Request | None:
        key = canonicalize_url(url)
        if key in self._seen or self._over_cap(site, category):
            return None
        self._seen.add(key)
        self._issued[(site, category)] += 1
        return self._request(url, site, category, depth)

    def _over_cap(self, site: str, category: str) -> bool:
        cap = self.config.crawl.max_pages_per_category
        if not cap or self._issued[(site, category)] < cap:
            return False
        if (site, category) not in self._capped:
            self._capped.add((site, category))
            self.logger.info("max_pages_per_category=%d reached for %s/%s", cap, site, category)
        return True

    def _request(self, url: str, site: str, category: str, depth: int, **kwargs: Any) -> scrapy.Request:
        meta = {"site": site, "category": category, "depth": depth}
        return scrapy.Request(url, callback=self.parse, meta=meta, **kwargs)
