"""The crawl -> clean contract in code: every name and value the crawler writes and the pipeline reads.

Both sides import this module (``newsclean.crawler`` writes, ``newsclean.pipeline`` reads); neither
spells these strings itself. The prose version, with the record layout of a WARC file, is
docs/CONTRACTS.md ("WARC files the crawler writes"); WARC itself is the IIPC WARC/1.1 specification,
whose §4 lets a producer add its own ``WARC-*`` extension fields (ours start with ``WARC-Newsclean-``).

Values are :class:`enum.StrEnum` members, so they are ``str``: they compare equal to the plain strings
in WARC headers, metadata records and Parquet columns, and ``str(member)`` is the value. The module
imports nothing from the rest of newsclean, so any part may import it without a cycle.
"""

from __future__ import annotations

import enum
from typing import Final

# ------------------------------------------------------------------------- WARC extension headers

#: The page's site name (warcinfo, request, response and metadata records).
SITE_HEADER: Final = "WARC-Newsclean-Site"
#: The page's category (warcinfo, request, response and metadata records).
CATEGORY_HEADER: Final = "WARC-Newsclean-Category"
#: Link hops from the start point, a decimal integer (request, response and metadata records).
DEPTH_HEADER: Final = "WARC-Newsclean-Depth"
#: What the crawler found at the URL, a :class:`PageType` value (request, response and metadata records).
PAGE_TYPE_HEADER: Final = "WARC-Newsclean-Page-Type"

# ------------------------------------------------------------------ metadata record fields (warc-fields)

#: ``news:publication_date`` of the page's entry in a news sitemap, as written there (W3C Datetime, e.g.
#: ``2024-05-01T08:30:00+02:00``; Google News sitemap format) — in the page's ``metadata`` record.
SITEMAP_PUBLICATION_DATE_FIELD: Final = "sitemap-publication-date"
#: ``news:title`` of the page's news sitemap entry (one line; whitespace folded).
SITEMAP_TITLE_FIELD: Final = "sitemap-title"
#: ``lastmod`` of the page's sitemap entry, as written there (W3C Datetime; sitemaps.org protocol).
SITEMAP_LASTMOD_FIELD: Final = "sitemap-lastmod"

#: Site and category of a record that says neither in its headers nor in its path ``.../<site>/<category>/<file>``.
UNKNOWN: Final = "unknown"


class PageType(enum.StrEnum):
    """What a fetched URL turned out to be (``WARC-Newsclean-Page-Type``)."""

    ARTICLE = "article"  # a page the crawl stored as an article
    LISTING = "listing"  # a section or listing page whose links were followed
    FEED = "feed"  # an RSS or Atom feed
    SITEMAP = "sitemap"  # a sitemap or sitemap index (XML)
    ROBOTS = "robots"  # a robots.txt configured as a start point
    OTHER = "other"  # errors, redirects not followed, non-HTML bodies


#: Page types the pipeline rejects as ``not_article`` without cleaning them; ``other`` and a missing header
#: (WARC files from other crawlers) go through the usual checks.
NOT_ARTICLE_PAGE_TYPES: Final = frozenset({PageType.LISTING, PageType.FEED, PageType.SITEMAP, PageType.ROBOTS})


class Role(enum.StrEnum):
    """What the crawler expected at a URL when it requested it (metadata field ``role``)."""

    START = "start"  # a configured start point: section page, feed, sitemap or robots.txt
    LISTING = "listing"  # a listing page found by a ``listing_allow`` pattern
    ARTICLE = "article"  # a link that looked like an article
    SITEMAP = "sitemap"  # a child of a sitemap index or of robots.txt


class Outcome(enum.StrEnum):
    """What became of a page in the crawl (metadata field ``outcome``, crawl report)."""

    STORED = "stored"  # an article page stored
    LISTING = "listing"  # a listing, feed, sitemap or robots.txt fetched and followed
    SKIPPED = "skipped"  # not fetched or not kept, with a reason code
    FAILED = "failed"  # no usable response, with a reason code


class FetchReason(enum.StrEnum):
    """Reason codes of a ``failed`` page in the crawl (metadata field ``reason``, crawl report) that name what went
    wrong below HTTP, or after it; the others are ``http_<status>``, ``timeout``, ``too_large``, ``connection``, ...
    (docs/CONTRACTS.md)."""

    DNS = "dns"  # the host name did not resolve (the page's, or its robots.txt's: RFC 9309 has no host to ask)
    NOT_HTTP = "not_http"  # the server answered with bytes that are not an HTTP/1.x response (RFC 9112 section 2)
    BAD_SCHEME = "bad_scheme"  # a URL, or a redirect's Location, whose scheme is not http(s) (file:, ftp:, ...)
    STORAGE_ERROR = "storage_error"  # fetched, but its WARC records could not be written (disk full, name refused)


class RejectReason(enum.StrEnum):
    """Closed set of reasons a WARC response record does not become an article (Reject ``reason`` column)."""

    HTTP_STATUS = "http_status"  # status other than 200 (404, 500, redirects kept as records)
    NOT_ARTICLE = "not_article"  # the crawler recorded a listing page, feed, sitemap or robots.txt
    NOT_HTML = "not_html"  # Content-Type is not an HTML type
    EMPTY_BODY = "empty_body"  # zero bytes (or only whitespace) of payload
    DECODE_ERROR = "decode_error"  # payload or Content-Encoding could not be decoded
    PARSE_ERROR = "parse_error"  # lxml could not build a tree
    NO_CONTENT = "no_content"  # the cleaning chain kept no text block
    TOO_SHORT = "too_short"  # kept text below the minimum article length
    LANGUAGE = "language"  # identified language not among --languages (or not identified)
    INTERNAL_ERROR = "internal_error"  # unexpected exception inside a stage (bug: report it)
    TRUNCATED_RECORD = "truncated_record"  # the WARC file ends inside a record (cut download, full disk)
    NOT_WARC = "not_warc"  # bytes that are not WARC records (a whole file, or the rest of one)
    TOO_LARGE = "too_large"  # payload or decoded body over the per-record size cap
    TIMEOUT = "timeout"  # cleaning the page ran over the per-record time budget
    TOO_DEEP = "too_deep"  # markup nested deeper than the parser's depth bound

