"""Discovery: what a response is, which URLs it leads to, what kind of page a URL is, and its category.

Built on Scrapy's and well-kept libraries' parsers rather than hand-written XML walking:

* sitemaps (urlset, sitemap index, news sitemaps, gzip-compressed ``.xml.gz``) with
  :class:`scrapy.utils.sitemap.Sitemap` and :func:`scrapy.utils.gz.gunzip`, the machinery of
  Scrapy's ``SitemapSpider`` (:func:`sitemap_body` mirrors its ``_get_sitemap_body``);
* ``Sitemap:`` lines of robots.txt with :func:`scrapy.utils.sitemap.sitemap_urls_from_robots`;
* RSS 0.9x/1.0/2.0 and Atom feeds with ``feedparser`` (fed bytes, never a URL: it fetches nothing);
* HTML ``<a href>`` links with Scrapy's ``LinkExtractor``.

URL classification (:func:`classify_url`) applies a site's ``listing_allow`` / ``listing_deny`` /
``article_allow`` / ``article_deny`` regexes; categories come from :func:`category_for`.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urldefrag, urljoin, urlsplit

import feedparser
import lxml.etree
from scrapy.http import HtmlResponse, Response, TextResponse, XmlResponse
from scrapy.linkextractors import LinkExtractor
from scrapy.utils._compression import _DecompressionMaxSizeExceeded
from scrapy.utils.gz import gunzip, gzip_magic_number
from scrapy.utils.sitemap import Sitemap, sitemap_urls_from_robots

from newsclean.crawler.config import SiteConfig, name_key, slug_name
from newsclean.schemas.sniff import looks_binary

#: Page kinds :func:`page_kind` tells apart (``too_large``: a gzip sitemap that unpacks past its size bound).
KINDS = ("robots", "sitemap", "feed", "html", "binary", "too_large", "other")

#: Bound on an unpacked sitemap, in bytes, when the crawl sets no ``download_maxsize``: the sitemaps.org
#: protocol's limit of 50 MiB (52,428,800 bytes) uncompressed per sitemap file.
SITEMAP_MAX_BYTES = 50 * 1024 * 1024


class SitemapTooLargeError(ValueError):
    """A gzip sitemap body unpacks past its size bound (a decompression bomb, or a sitemap over the limit)."""

_A_HREF = LinkExtractor(tags=("a", "area"), attrs=("href",))


def content_type(response: Response) -> str:
    """The response's MIME type, lower-case, without parameters (``""`` when absent)."""
    value = (response.headers.get("Content-Type") or b"").decode("latin-1")
    return value.split(";", 1)[0].strip().lower()


def sitemap_body(response: Response, max_size: int = 0) -> bytes | None:
    """The XML of a sitemap or feed response, or ``None`` when it is not XML.

    As Scrapy's ``SitemapSpider``: an ``XmlResponse`` as it is; a gzip body (``sitemap.xml.gz``
    served as ``application/x-gzip``) unpacked with :func:`scrapy.utils.gz.gunzip`, at most
    ``max_size`` bytes (0: :data:`SITEMAP_MAX_BYTES`); a body at a ``.xml`` / ``.xml.gz`` URL as it is.

    Raises :class:`SitemapTooLargeError` when the gzip body unpacks past that bound (a corrupt gzip body is
    ``None``: not a usable sitemap).
    """
    if isinstance(response, XmlResponse):
        return response.body
    if gzip_magic_number(response):
        try:
            return gunzip(response.body, max_size=max_size or SITEMAP_MAX_BYTES)
        except _DecompressionMaxSizeExceeded as exc:
            raise SitemapTooLargeError(f"{response.url}: {exc}") from exc
        except Exception:  # noqa: BLE001 (corrupt gzip: not a usable sitemap)
            return None
    path = urlsplit(response.url).path
    if path.endswith((".xml", ".xml.gz")):
        return response.body
    return None


def xml_kind(body: bytes) -> str | None:
    """``"sitemap"`` for a urlset or sitemap index, ``"feed"`` for RSS/Atom, else ``None``."""
    try:
        if Sitemap(body).type in {"urlset", "sitemapindex"}:
            return "sitemap"
    except (lxml.etree.XMLSyntaxError, StopIteration, ValueError):
        pass
    parsed = feedparser.parse(io.BytesIO(body))
    return "feed" if parsed.get("version") else None


def page_kind(response: Response, *, expect_html: bool, max_size: int = 0) -> tuple[str, bytes | None]:
    """What ``response`` is (one of :data:`KINDS`) and, for sitemaps and feeds, their XML.

    ``expect_html``: the URL was classified as an article, so XML is not looked for (an XML body
    there is ``other``). robots.txt is recognised by its path. ``max_size``: the bound of an unpacked
    gzip sitemap, in bytes (:func:`sitemap_body`); past it the kind is ``too_large``.
    """
    if not expect_html:
        if urlsplit(response.url).path == "/robots.txt":
            return "robots", None
        try:
            body = sitemap_body(response, max_size)
        except SitemapTooLargeError:
            return "too_large", None
        if body is not None:
            kind = xml_kind(body)
            if kind:
                return kind, body
    if isinstance(response, HtmlResponse):
        return ("binary" if looks_binary(response.body) else "html"), None
    return "other", None


def html_links(response: HtmlResponse) -> list[str]:
    """Absolute URLs of the ``<a href>`` / ``<area href>`` links of an HTML page (deduplicated, in page
    order). ``LinkExtractor`` skips binary extensions (``.png``, ``.pdf``, ...)."""
    return [link.url for link in _A_HREF.extract_links(response)]


@dataclass(frozen=True)
class SitemapFacts:
    """What a sitemap says about one page, as written there (strings, whitespace folded; ``None`` when absent).

    Attributes:
        publication_date: ``<news:news><news:publication_date>`` (W3C Datetime; Google News sitemap format).
        title: ``<news:news><news:title>``.
        lastmod: ``<lastmod>`` of the ``<url>`` entry (W3C Datetime; sitemaps.org protocol 0.9).
    """

    publication_date: str | None = None
    title: str | None = None
    lastmod: str | None = None

    def __bool__(self) -> bool:
        return any((self.publication_date, self.title, self.lastmod))


@dataclass(frozen=True)
class SitemapDocument:
    """One sitemap read by :func:`read_sitemap`.

    Attributes:
        type: the root element's local name: ``"sitemapindex"`` (``urls`` are child sitemaps), ``"urlset"``
            (``urls`` are pages; news sitemaps are urlsets too), anything else (``""`` for no XML) lists nothing.
        urls: absolute ``<loc>`` URLs in document order, without repeats.
        facts: page URL -> :class:`SitemapFacts` of the urlset entries that carry any.
    """

    type: str
    urls: list[str]
    facts: dict[str, SitemapFacts]


def read_sitemap(body: bytes, base_url: str) -> SitemapDocument:
    """Read a sitemap or sitemap index (sitemaps.org protocol 0.9, Google News extension) in one pass.

    The settings of Scrapy's :class:`~scrapy.utils.sitemap.Sitemap` (lxml ``iterparse``: recover, no entities, no
    network, comments and processing instructions dropped), but each ``<url>`` / ``<sitemap>`` entry is read and
    freed as soon as it ends, keeping its nested ``<news:news>`` (which ``Sitemap`` flattens away): time linear in
    the body's size (about 0.5 s for the protocol's maximum of 50,000 entries), memory bounded by one entry
    besides the result. Tags are matched by local name, whatever their namespace; relative locations are joined
    to ``base_url``. A broken document gives what was read before the break; no XML at all gives type ``""``.
    """
    parser = lxml.etree.iterparse(io.BytesIO(body), events=("start", "end"), recover=True, remove_comments=True,
                                  resolve_entities=False, no_network=True, huge_tree=False, remove_pis=True,
                                  collect_ids=False)
    urls: dict[str, None] = {}
    facts: dict[str, SitemapFacts] = {}
    try:
        _, root = next(parser)
        for event, entry in parser:
            if event != "end" or entry.getparent() is not root:
                continue
            if _local(entry) in {"url", "sitemap"}:
                _read_entry(entry, base_url, urls, facts)
            entry.clear()
            while entry.getprevious() is not None:
                del root[0]
    except (lxml.etree.XMLSyntaxError, StopIteration):
        if not urls:
            return SitemapDocument("", [], {})
    kind = _local(root)
    return SitemapDocument(kind, list(urls), facts if kind == "urlset" else {})


def _read_entry(entry, base_url: str, urls: dict[str, None], facts: dict[str, SitemapFacts]) -> None:
    """Add one ``<url>`` / ``<sitemap>`` entry's location to ``urls`` and its facts to ``facts``."""
    texts = {_local(el): el for el in entry}
    loc = texts.get("loc")
    if loc is None or not (loc.text or "").strip():
        return
    url = _join(base_url, loc.text)
    urls.setdefault(url, None)
    news = texts.get("news")
    news_texts = {_local(el): _text(el) for el in news} if news is not None else {}
    lastmod = texts.get("lastmod")
    found = SitemapFacts(news_texts.get("publication_date"), news_texts.get("title"),
                         _text(lastmod) if lastmod is not None else None)
    if found:
        facts.setdefault(url, found)


def sitemap_links(body: bytes, base_url: str) -> tuple[str, list[str]]:
    """``(type, urls)`` of a sitemap (:func:`read_sitemap`)."""
    document = read_sitemap(body, base_url)
    return document.type, document.urls


def _local(el) -> str:
    return el.tag.rpartition("}")[2] if isinstance(el.tag, str) else ""


def _text(el) -> str | None:
    return " ".join("".join(el.itertext()).split()) or None


def feed_links(body: bytes, base_url: str, content_type_header: str = "") -> list[str]:
    """Entry links of an RSS/Atom feed (the ``alternate`` link of each entry), in feed order."""
    parsed = feedparser.parse(io.BytesIO(body), response_headers={
        "content-location": base_url, "content-type": content_type_header or "application/xml"})
    urls = []
    for entry in parsed.get("entries", []):
        link = entry.get("link") or next((l.get("href") for l in entry.get("links", []) if l.get("href")), None)
        if link:
            urls.append(_join(base_url, link))
    return list(dict.fromkeys(urls))


def robots_sitemaps(response: Response) -> list[str]:
    """Sitemap URLs announced by a robots.txt response (``Sitemap:`` lines)."""
    return list(dict.fromkeys(sitemap_urls_from_robots(response.body, base_url=response.url)))


def _join(base: str, url: str) -> str:
    return urldefrag(urljoin(base, url.strip())).url


def in_site_links(urls: list[str], site: SiteConfig) -> list[str]:
    """The http(s) ``urls`` inside ``site``'s domains, without ``#fragment``, deduplicated in order."""
    kept = (urldefrag(u).url for u in urls if urlsplit(u).scheme in {"http", "https"} and site.owns_url(u))
    return list(dict.fromkeys(kept))


def page_links(response: Response, site: SiteConfig) -> list[str]:
    """In-site links of an HTML page, or of a feed / sitemap (empty for anything else)."""
    kind, body = page_kind(response, expect_html=False)
    if kind == "html":
        return in_site_links(html_links(response), site)
    if kind == "feed":
        return in_site_links(feed_links(body, response.url), site)
    if kind == "sitemap":
        return in_site_links(sitemap_links(body, response.url)[1], site)
    return []


# ------------------------------------------------------------------------------- classification


def _matches(patterns: tuple[str, ...], url: str) -> bool:
    return any(re.search(p, url) for p in patterns)


def classify_url(url: str, site: SiteConfig) -> str | None:
    """``"listing"``, ``"article"`` or ``None`` (not followed) for a URL found on a page of ``site``.

    A URL is a listing when it matches a ``listing_allow`` pattern and no ``listing_deny`` one;
    otherwise an article when it matches no ``article_deny`` pattern and some ``article_allow``
    pattern (any URL when ``article_allow`` is empty); otherwise it is not followed.
    """
    if site.listing_allow and _matches(site.listing_allow, url) and not _matches(site.listing_deny, url):
        return "listing"
    if _matches(site.article_deny, url):
        return None
    if not site.article_allow or _matches(site.article_allow, url):
        return "article"
    return None


# ------------------------------------------------------------------------------------ category


def _named(raw: str, site: SiteConfig, fallback: str) -> str | None:
    """The category a raw URL segment or section name stands for: its alias, else its :func:`slug_name`
    spelled as the configured name with the same :func:`name_key` (a category, an alias target or ``fallback``),
    so that ``World`` from a page and ``world`` in the config are one category; ``None`` when nothing is left."""
    aliases, configured = _site_names(site, fallback)
    name = slug_name(raw)
    for key in (name_key(raw.strip()), name):
        if key in aliases:
            return aliases[key]
    if not name:
        return None
    return configured.get(name_key(name), name)


@lru_cache(maxsize=256)  # asked for every discovered URL (up to 50,000 a sitemap); a crawl has few sites
def _site_names(site: SiteConfig, fallback: str) -> tuple[dict[str, str], dict[str, str]]:
    """``site``'s aliases (raw -> category) and its configured names by :func:`name_key` (``fallback``, alias
    targets, categories; a later one wins on a shared key), for :func:`_named`. Cached: the config is frozen."""
    aliases = dict(site.category_aliases)
    return aliases, {name_key(n): n for n in (fallback, *aliases.values(), *(c.name for c in site.categories))}


def article_section(response: Response) -> str | None:
    """The ``article:section`` meta value of an HTML page (``property`` or ``name`` attribute), or ``None``."""
    if not isinstance(response, TextResponse):
        return None
    value = response.xpath('//meta[@property="article:section" or @name="article:section"]/@content').get()
    return value.strip() if value and value.strip() else None


def _path_segments(url: str) -> tuple[str, tuple[str, ...]]:
    """``url``'s lower-case host name and its non-empty path segments."""
    parts = urlsplit(url)
    return (parts.hostname or ""), tuple(seg for seg in parts.path.split("/") if seg)


@lru_cache(maxsize=4096)  # asked once per category start URL for every discovered link
def _section_prefix(start_url: str) -> tuple[str, tuple[str, ...]]:
    """The host and section path of a start URL: its path segments without a last one naming a file
    (holding a ``.``: ``/politics/index.html`` and ``/feeds/politics.rss`` are in ``politics`` and
    ``feeds``). Cached: a crawl has few start URLs and asks for each of them once per link."""
    host, segments = _path_segments(start_url)
    if segments and "." in segments[-1]:
        segments = segments[:-1]
    return host, segments


def in_start_sections(url: str, site: SiteConfig) -> bool:
    """Whether ``url`` lies in the section of one of ``site``'s start URLs: on the start URL's host, its path
    starting, in whole segments, with the start URL's section path (:func:`_section_prefix`:
    ``/politics/2024/x.html`` is in the section of ``/politics/``). A start URL at the root of its host (a
    home page, ``/robots.txt``, ``/sitemap.xml``) has every path of the host in its section."""
    host, segments = _path_segments(url)
    return any(start_host == host and segments[:len(prefix)] == prefix
               for cat in site.categories for start_host, prefix in map(_section_prefix, cat.start_urls))


def followed_from_article(url: str, role: str, site: SiteConfig) -> bool:
    """Whether a link of an article page, classified ``role`` (:func:`classify_url`), is followed (when the
    site follows article links at all): a listing, or an article by the site's ``article_allow`` patterns;
    for a site without ``article_allow``, where any URL counts as an article, only a URL in the section of one
    of its start URLs (:func:`in_start_sections`). So a minimal config (start URLs, no patterns) follows from
    article to article within the configured sections, and not into the tag, author, share, comment and
    static pages every article links to; the depth limit, counted from the start URLs, bounds the rest."""
    return role == "listing" or bool(site.article_allow) or in_start_sections(url, site)


def config_category(url: str, site: SiteConfig, inherited: str) -> str:
    """The configured category of an article at ``url``: the one of ``site.categories`` whose start
    URL's section path is the longest prefix, in whole path segments and on the same host, of the
    article's path; ``inherited`` (the category of the start point that led here) when no start URL
    shares a segment with it or two categories tie.

    An article linked from two categories' start points is then filed under the same category on
    every run (``/politics/2024/x`` under the category started at ``/politics/``), not under the one
    whose crawl path happened to reach it first; neighbour-page groups follow the site's sections.
    """
    host, segments = _path_segments(url)
    best, best_len, tie = inherited, 0, False
    for cat in site.categories:
        length = max((len(prefix) for start_host, prefix in map(_section_prefix, cat.start_urls)
                      if start_host == host and segments[:len(prefix)] == prefix), default=0)
        if length > best_len:
            best, best_len, tie = cat.name, length, False
        elif length == best_len and length and cat.name != best:
            tie = True
    return inherited if tie or not best_len else best


def category_for(url: str, site: SiteConfig, inherited: str, fallback: str, section: str | None = None) -> str:
    """The category of an article at ``url`` following ``site.category_from``.

    ``inherited``: the category of the start point that led here, refined by :func:`config_category`
    (source ``config``); ``section``: the page's ``article:section`` (source ``meta``; ``None``
    before the page is fetched). Raw names go through ``category_aliases`` and are slugified.
    ``fallback`` when no source tells. Names from a page are :func:`~newsclean.crawler.config.slug_name`:
    Unicode letters kept (NFC, case-folded), bounded in bytes, safe as a path segment on every file system.
    """
    for source in site.category_from:
        if source == "config":
            return config_category(url, site, inherited)
        if source == "url" and site.category_pattern:
            match = re.search(site.category_pattern, url)
            name = _named(match.group(1), site, fallback) if match and match.group(1) else None
            if name:
                return name
        if source == "meta" and section:
            name = _named(section, site, fallback)
            if name:
                return name
    return fallback
