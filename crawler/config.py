"""Load and validate ``sites.toml``: which sites to crawl, their categories and start points.

The file has an optional ``[crawl]`` table of politeness and output options and one
``[[site]]`` table per site (format and defaults: ``crawler/README.md``). Everything is
checked up front so that a bad config fails before any request is made, with a
``ValueError`` whose message names the file and the offending key, e.g.
``sites.toml: site[1].categories.politics[0]: start URL 'ftp://x/' is not http(s)``.

The parsed result is a tree of frozen dataclasses (:class:`SitesConfig`), hashable and
picklable, which the spider, the settings builder and the WARC writer share.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
import unicodedata
from dataclasses import dataclass, field, fields, replace
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

DEFAULT_USER_AGENT = "newsclean/0.1 (+https://example.org/newsclean)"

#: Site and category names become path segments and file-name parts of the WARC layout.
SAFE_NAME = re.compile(r"[A-Za-z0-9_.-]+")
#: Longest site or category name, in bytes of UTF-8. Both are parts of a WARC file name
#: (``<site>-<category>-<stamp>-<serial>.warc.gz.open``: 37 bytes besides them), which stays well under the
#: 255 bytes most file systems allow in one path component (ext4, XFS, Btrfs, ZFS, APFS; NTFS counts 255
#: UTF-16 units, which a UTF-8 bound of 80 bytes also keeps).
MAX_NAME_BYTES = 80
#: Device names Windows reserves in any directory, with or without an extension (Microsoft, "Naming Files,
#: Paths, and Namespaces"): a name whose first dot-separated part is one of them gets a leading ``_``.
_RESERVED_STEMS = frozenset({"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)),
                             *(f"lpt{i}" for i in range(10))})
# A host name or IPv4 address as written in allowed_domains: labels of letters, digits, '-', '_'.
_HEADER_VALUE = re.compile(r"[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?")
_HOST = re.compile(r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*")


@dataclass(frozen=True)
class CrawlOptions:
    """The ``[crawl]`` table: politeness, safety, incremental and output options shared by all sites.

    Attributes:
        user_agent: ``User-Agent`` header sent with every request (and noted in warcinfo); ``None``
            builds ``newsclean/<version> (+<contact_url>)`` (see :meth:`agent`).
        contact_url: URL where site operators can learn about the crawl and reach its operator;
            goes into the default User-Agent.
        depth_limit: link hops followed from a start page; 0 fetches the start pages only. Child
            sitemaps of a sitemap index or of robots.txt do not count as hops.
        max_pages_per_category: cap on requests issued per (site, category), start pages
            included; 0 means unlimited. Default 5000: a trap (calendar, faceted search) ends there.
        max_pages_per_host: cap on requests issued per host name over the whole crawl (a per-host
            page budget, as Heritrix's queue budgets); 0 means unlimited.
        max_pages: cap on pages requested over the whole crawl, start points included (a page's redirects
            and retries count as that page), for trial runs of a new config; 0 means no limit. The crawl
            then ends as usual once those pages are done (the links beyond the cap are not requested, and
            not kept for a later run: the next run finds them again).
        max_time: the crawl stops after this many seconds (Scrapy ``CLOSESPIDER_TIMEOUT``: requests in flight
            still finish, and with a ``JOBDIR`` the next run goes on with the same job); 0 means no limit.
        download_maxsize: largest response body accepted, in bytes (Scrapy ``DOWNLOAD_MAXSIZE``;
            0 means no limit). Larger downloads are cancelled and reported as ``too_large``.
        max_header_bytes, max_headers: bounds on a response's header section, in bytes (status
            line included) and in header lines; a response past either is given up and reported as
            ``too_large`` (:mod:`newsclean.crawler.fetch`).
        download_timeout: seconds a download may take (Scrapy ``DOWNLOAD_TIMEOUT``).
        retry_times: extra attempts after a timeout, a connection error or a 5xx/429 response.
        max_retry_after: longest ``Retry-After`` (seconds) of a 429/503 that is waited for before
            the retry; a longer one gives up at once.
        max_redirects: redirect hops followed per request (Scrapy ``REDIRECT_MAX_TIMES``).
        warc_max_bytes: a WARC file is closed and a new one started once it reaches this many
            (compressed) bytes.
        concurrent_requests_per_domain: simultaneous requests to one site (default 2).
        download_delay: seconds between requests to one site, a floor (AutoThrottle's minimum when
            on); default 1.0, as StormCrawler's ``fetcher.server.delay``.
        max_crawl_delay: a robots.txt ``Crawl-delay`` is honoured up to this many seconds (a longer
            one is cut to it).
        autothrottle: adapt the delay to the server's latency (Scrapy AutoThrottle).
        obey_robots: honour robots.txt (for every request, sitemaps and feeds included).
        allow_private_networks: allow hosts that resolve to private, loopback, link-local or other
            non-global addresses (tests, the demo, intranet sites); refused by default.
        state_db: path of the SQLite crawl store (what was fetched, for incremental re-crawls and
            resume); ``None`` means ``OUT/crawl-state.sqlite3``. A relative path is taken relative
            to the directory of the sites.toml.
        refetch_after_days: a known article URL is fetched again once its last fetch is older than
            this many days; 0 never refetches known articles.
        fallback_category: category of pages whose category the site's rules cannot tell.
        accept_language: ``Accept-Language`` header sent with every request (RFC 9110 section
            12.5.4 syntax, e.g. ``"de-DE, de;q=0.9, en;q=0.5"``); a site's own ``accept_language``
            overrides it. Default ``"en"``.
    """

    user_agent: str | None = None
    contact_url: str | None = None
    depth_limit: int = 2
    max_pages_per_category: int = 5000
    max_pages_per_host: int = 20000
    max_pages: int = 0
    max_time: float = 0.0
    download_maxsize: int = 10 * 1024 * 1024
    max_header_bytes: int = 256 * 1024
    max_headers: int = 500
    download_timeout: float = 30.0
    retry_times: int = 1
    max_retry_after: float = 60.0
    max_redirects: int = 5
    warc_max_bytes: int = 100 * 1024 * 1024
    concurrent_requests_per_domain: int = 2
    download_delay: float = 1.0
    max_crawl_delay: float = 30.0
    autothrottle: bool = True
    obey_robots: bool = True
    allow_private_networks: bool = False
    state_db: str | None = None
    refetch_after_days: float = 0.0
    fallback_category: str = "uncategorized"
    accept_language: str = "en"

    def agent(self) -> str:
        """The ``User-Agent`` to send: :attr:`user_agent`, else built from :attr:`contact_url`, else
        :data:`DEFAULT_USER_AGENT` (whose contact URL is a placeholder)."""
        if self.user_agent:
            return self.user_agent
        if self.contact_url:
            return f"newsclean/{_package_version()} (+{self.contact_url})"
        return DEFAULT_USER_AGENT


#: Where a site's category rules may take a page's category from (``category_from``).
CATEGORY_SOURCES = ("config", "url", "meta")


@dataclass(frozen=True)
class CategoryConfig:
    """One category of a site: its ``name`` and the ``start_urls`` (section pages, feeds, sitemaps,
    or a ``/robots.txt`` whose ``Sitemap:`` lines name the sitemaps)."""

    name: str
    start_urls: tuple[str, ...]


@dataclass(frozen=True)
class SiteConfig:
    """One ``[[site]]`` table.

    Attributes:
        name: site name, a safe path segment (``[A-Za-z0-9_.-]+``).
        allowed_domains: lower-case host names (no scheme, port or path); a host matches a
            domain when equal to it or a subdomain of it, as in Scrapy's OffsiteMiddleware.
        categories: the site's categories, in file order.
        article_allow, article_deny: regexes (``re.search`` on the absolute URL) telling article
            URLs: a discovered URL is an article when it matches no deny pattern and some allow
            pattern (or the allow list is empty).
        listing_allow, listing_deny: the same for listing pages (section fronts, pagination); a URL
            matching both kinds is a listing. Listings are fetched again on every run, articles once.
        follow_article_links: also follow the links of article pages (within ``depth_limit``);
            ``None`` (default) follows them only when the site has no URL patterns at all.
        category_from: where an article's category comes from, tried in order: ``"config"`` (the
            category whose start URL's section is the longest prefix of the article's path, else
            the one whose start point led to it; see
            :func:`~newsclean.crawler.discovery.config_category`), ``"url"``
            (:attr:`category_pattern`), ``"meta"`` (``<meta property="article:section">``). When
            none yields a name the page goes to ``crawl.fallback_category``.
        category_pattern: regex with one group, searched in the URL, whose group is the category
            (for ``"url"``).
        category_aliases: ``(raw, category)`` pairs mapping a raw URL segment or section name
            (lower-cased, slugified) to a category name.
        download_delay, concurrent_requests: per-site overrides of the ``[crawl]`` politeness
            options (``None``: use those).
        accept_language: the site's ``Accept-Language`` header (``None``: ``crawl.accept_language``),
            e.g. ``"fr"`` for a French site in a multilingual crawl.
    """

    name: str
    allowed_domains: tuple[str, ...]
    categories: tuple[CategoryConfig, ...]
    article_allow: tuple[str, ...] = ()
    article_deny: tuple[str, ...] = ()
    listing_allow: tuple[str, ...] = ()
    listing_deny: tuple[str, ...] = ()
    follow_article_links: bool | None = None
    category_from: tuple[str, ...] = ("config",)
    category_pattern: str | None = None
    category_aliases: tuple[tuple[str, str], ...] = ()
    download_delay: float | None = None
    concurrent_requests: int | None = None
    accept_language: str | None = None

    def category(self, name: str) -> CategoryConfig:
        """The category called ``name``; raises ``KeyError`` when the site has none."""
        for cat in self.categories:
            if cat.name == name:
                return cat
        raise KeyError(f"site {self.name!r} has no category {name!r}")

    def owns_url(self, url: str) -> bool:
        """Whether ``url``'s host is one of :attr:`allowed_domains` or a subdomain of one (port ignored)."""
        return host_in_domains(url, self.allowed_domains)

    @property
    def has_url_patterns(self) -> bool:
        """Whether any article or listing allow pattern is configured."""
        return bool(self.article_allow or self.listing_allow)

    @property
    def follows_article_links(self) -> bool:
        """:attr:`follow_article_links` with ``None`` resolved (True only for a site without patterns)."""
        if self.follow_article_links is None:
            return not self.has_url_patterns
        return self.follow_article_links


@dataclass(frozen=True)
class SitesConfig:
    """A whole ``sites.toml``: crawl options, the sites, and the file it came from (``None`` if built in code)."""

    sites: tuple[SiteConfig, ...]
    crawl: CrawlOptions = field(default_factory=CrawlOptions)
    source: str | None = None

    def site(self, name: str) -> SiteConfig:
        """The site called ``name``; raises ``KeyError`` when there is none."""
        for site in self.sites:
            if site.name == name:
                return site
        raise KeyError(f"no site {name!r}")

    def start_points(self) -> list[tuple[str, str, str]]:
        """Every start URL as ``(site, category, url)``, in file order."""
        return [(s.name, c.name, u) for s in self.sites for c in s.categories for u in c.start_urls]

    def state_db_path(self, out_dir: str | Path) -> Path:
        """Path of the SQLite crawl store for a crawl into ``out_dir``: ``crawl.state_db`` (relative
        to the config file's directory, or to the working directory for a config built in code), else
        ``out_dir/crawl-state.sqlite3``."""
        if not self.crawl.state_db:
            return Path(out_dir) / DEFAULT_STATE_DB
        path = Path(self.crawl.state_db).expanduser()
        if not path.is_absolute() and self.source and Path(self.source).exists():
            path = Path(self.source).resolve().parent / path
        return path


#: File name of the crawl store inside the output directory when ``crawl.state_db`` is unset.
DEFAULT_STATE_DB = "crawl-state.sqlite3"


def _package_version() -> str:
    try:
        return metadata.version("newsclean")
    except metadata.PackageNotFoundError:
        return "0"


def _name_char(ch: str) -> bool:
    """Whether ``ch`` may stay in a name: a Unicode letter, mark or number (categories L*, M*, N*), ``_`` or ``.``."""
    return ch in "_." or unicodedata.category(ch)[0] in "LMN"


def name_key(name: str) -> str:
    """The form under which two names are one on a case-insensitive file system (APFS, NTFS, exFAT by default):
    NFC of the Unicode full case folding (Unicode 15, section 3.13), so ``"World"`` and ``"world"``, or
    ``"Straße"`` and ``"STRASSE"``, have one key."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())


def slug_name(text: str) -> str:
    """A name for a site or category, made from text a page carries (an ``article:section``, a URL segment):
    :func:`name_key` of ``text`` (so lower-case, NFC), every run of characters other than letters, marks, digits,
    ``_`` and ``.`` turned into one ``-``, without leading or trailing ``-`` and ``.``; at most
    :data:`MAX_NAME_BYTES` bytes of UTF-8 (a longer one is cut at a character boundary and ends with ``-`` and
    8 hex digits of the SHA-1 of the whole, so two long names that share their start stay apart); a Windows
    device name (``con``, ``lpt1.x``) gets a leading ``_``. ``""`` when nothing is left.

    ``"World News"`` -> ``"world-news"``, ``"Économie"`` -> ``"économie"``, ``"Наука и техника"`` ->
    ``"наука-и-техника"``. The result passes :func:`is_safe_name` (or is empty).
    """
    out: list[str] = []
    for ch in name_key(text):
        if _name_char(ch):
            out.append(ch)
        elif out and out[-1] != "-":
            out.append("-")
    name = "".join(out).strip("-.")
    data = name.encode("utf-8")
    if len(data) > MAX_NAME_BYTES:
        digest = hashlib.sha1(data).hexdigest()[:8]  # noqa: S324 (a name, not a security digest)
        head = data[: MAX_NAME_BYTES - 9].decode("utf-8", "ignore").rstrip("-.")
        name = f"{head}-{digest}"
    if name.split(".", 1)[0] in _RESERVED_STEMS:
        name = "_" + name
    return name


def is_safe_name(name: str) -> bool:
    """Whether ``name`` may be a path segment and a file-name part on every common file system: non-empty, at most
    :data:`MAX_NAME_BYTES` bytes of UTF-8, NFC, only letters, marks, digits, ``_``, ``.`` and ``-``, neither
    starting nor ending with ``.`` (hidden files; Windows drops trailing dots), not a Windows device name."""
    return (bool(name) and len(name.encode("utf-8")) <= MAX_NAME_BYTES
            and unicodedata.is_normalized("NFC", name) and all(ch == "-" or _name_char(ch) for ch in name)
            and not name.startswith(".") and not name.endswith(".")
            and name.split(".", 1)[0].lower() not in _RESERVED_STEMS)


def _check_case_clashes(names: list[str], where: str) -> None:
    """Raise ``ValueError`` when two of ``names`` differ but have one :func:`name_key` (one directory on a
    case-insensitive file system)."""
    seen: dict[str, str] = {}
    for name in names:
        other = seen.setdefault(name_key(name), name)
        if other != name:
            raise ValueError(f"{where}: {other!r} and {name!r} differ only in case: they would share one "
                             "directory on a case-insensitive file system")


def host_in_domains(url: str, domains: tuple[str, ...] | list[str]) -> bool:
    """Whether the host of ``url`` equals one of ``domains`` or is a subdomain of one.

    Compares the host name only (not the port), like Scrapy's OffsiteMiddleware. Scrapy's
    ``url_is_from_any_domain`` (behind ``LinkExtractor(allow_domains=...)``) compares the
    netloc *with* its port, which rejects every ``host:port`` URL; hence this helper.
    """
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:
        return False
    return bool(host) and any(host == d or host.endswith("." + d) for d in domains)


def load_config(path: str | Path) -> SitesConfig:
    """Read and validate the TOML file at ``path``.

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: the file is not valid TOML or breaks a rule of the format; the message
            starts with the file name and names the bad key.
    """
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: invalid TOML: {exc}") from exc
    return parse_config(data, source=str(path))


def parse_config(data: dict[str, Any], source: str = "<config>") -> SitesConfig:
    """Validate an already-parsed TOML document (a ``dict``) into a :class:`SitesConfig`.

    ``source`` names the document in error messages. Raises ``ValueError`` as :func:`load_config`.
    """
    _check_keys(data, {"crawl", "site"}, source, "top level")
    crawl = _parse_crawl(data.get("crawl", {}), source)
    raw_sites = data.get("site")
    if not isinstance(raw_sites, list) or not raw_sites:
        raise ValueError(f"{source}: 'site': at least one [[site]] table is required")
    sites = tuple(_parse_site(raw, f"site[{i}]", source) for i, raw in enumerate(raw_sites))
    names = [s.name for s in sites]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ValueError(f"{source}: site[{i}].name: duplicate site name {name!r}")
    _check_case_clashes(names, f"{source}: site names")
    for site in sites:
        _check_case_clashes([c.name for c in site.categories] + [cat for _, cat in site.category_aliases]
                            + [crawl.fallback_category], f"{source}: site {site.name!r}: category names")
    return SitesConfig(sites=sites, crawl=crawl, source=source)


def config_to_toml(config: SitesConfig) -> str:
    """Write ``config`` back as ``sites.toml`` text that :func:`load_config` reads to an equal value
    (apart from ``source``). Useful to hand a config built in code to ``python -m newsclean.crawler.run``.
    Options left at ``None`` (unset) are not written."""
    lines = ["[crawl]"]
    for f in fields(CrawlOptions):
        value = getattr(config.crawl, f.name)
        if value is not None:
            lines.append(f"{f.name} = {_toml_value(value)}")
    for site in config.sites:
        lines += ["", "[[site]]", f"name = {_toml_value(site.name)}"]
        lines.append(f"allowed_domains = {_toml_value(list(site.allowed_domains))}")
        for name in _SITE_OPTIONS:
            value = getattr(site, name)
            if value is not None and value != _SITE_DEFAULTS[name]:
                lines.append(f"{name} = {_toml_value(list(value) if isinstance(value, tuple) else value)}")
        if site.category_aliases:
            lines.append("[site.category_aliases]")
            lines += [f"{_toml_value(raw)} = {_toml_value(cat)}" for raw, cat in site.category_aliases]
        lines.append("[site.categories]")
        for cat in site.categories:
            lines.append(f"{_toml_value(cat.name)} = {_toml_value(list(cat.start_urls))}")
    return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str:
    # JSON strings, numbers, booleans and arrays of them are valid TOML values.
    return json.dumps(value, ensure_ascii=False)


def _check_keys(table: Any, known: set[str], source: str, where: str) -> None:
    if not isinstance(table, dict):
        raise ValueError(f"{source}: {where}: expected a table, got {type(table).__name__}")
    unknown = sorted(set(table) - known)
    if unknown:
        raise ValueError(
            f"{source}: {where}: unknown key {unknown[0]!r} (known keys: {', '.join(sorted(known))})"
        )


# Value kind of each [crawl] key: "bool", "int", "float", "str" (non-empty), "name" (a safe name) or
# "header" (a non-empty HTTP header value: visible ASCII and spaces, RFC 9110 section 5.5).
_CRAWL_KINDS = {
    "user_agent": "str", "contact_url": "url", "depth_limit": "int", "max_pages_per_category": "int",
    "max_pages_per_host": "int", "max_pages": "int", "max_time": "float", "max_header_bytes": "int",
    "max_headers": "int", "max_crawl_delay": "float",
    "download_maxsize": "int", "download_timeout": "float", "retry_times": "int",
    "max_retry_after": "float", "max_redirects": "int", "warc_max_bytes": "int",
    "concurrent_requests_per_domain": "int", "download_delay": "float", "autothrottle": "bool",
    "obey_robots": "bool", "allow_private_networks": "bool", "state_db": "str",
    "refetch_after_days": "float", "fallback_category": "name", "accept_language": "header",
}
_MIN_VALUE = {"concurrent_requests_per_domain": 1, "max_header_bytes": 1024, "max_headers": 10,
              "warc_max_bytes": 1, "max_redirects": 1,
              "download_timeout": 0.1}


def _parse_crawl(raw: Any, source: str) -> CrawlOptions:
    _check_keys(raw, set(_CRAWL_KINDS), source, "crawl")
    values = {name: _typed_value(_CRAWL_KINDS[name], raw[name], f"{source}: crawl.{name}",
                                 _MIN_VALUE.get(name, 0)) for name in raw}
    return CrawlOptions(**values)


def _typed_value(kind: str, value: Any, where: str, minimum: float = 0) -> Any:
    """Check ``value`` against ``kind`` (see :data:`_CRAWL_KINDS`); return it normalised (ints to float
    for ``float``). Raises ``ValueError`` naming ``where``."""
    if kind == "bool":
        if not isinstance(value, bool):
            raise ValueError(f"{where}: expected true or false, got {value!r}")
        return value
    if kind == "header":
        if not isinstance(value, str) or not _HEADER_VALUE.fullmatch(value):
            raise ValueError(f"{where}: expected a non-empty HTTP header value (visible ASCII), got {value!r}")
        return value
    if kind in {"str", "url", "name"}:
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{where}: expected a non-empty string, got {value!r}")
        if kind == "url" and urlsplit(value).scheme not in {"http", "https", "mailto"}:
            raise ValueError(f"{where}: expected an http(s) or mailto URL, got {value!r}")
        if kind == "name" and not (SAFE_NAME.fullmatch(value) and is_safe_name(value)):
            raise ValueError(f"{where}: {value!r} is not a safe path segment (use [A-Za-z0-9_.-]+, at most "
                             f"{MAX_NAME_BYTES} characters, not starting or ending with '.', not a device name)")
        return value
    numeric = (int, float) if kind == "float" else (int,)
    if isinstance(value, bool) or not isinstance(value, numeric):
        raise ValueError(f"{where}: expected {'a number' if kind == 'float' else 'an integer'}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{where}: must be >= {minimum}, got {value!r}")
    return float(value) if kind == "float" else value


# Optional [[site]] keys and their value kinds ("regexes", "bool", "sources", "regex1", "float", "int").
_SITE_OPTIONS = {
    "article_allow": "regexes", "article_deny": "regexes", "listing_allow": "regexes",
    "listing_deny": "regexes", "follow_article_links": "bool", "category_from": "sources",
    "category_pattern": "regex1", "download_delay": "float", "concurrent_requests": "int",
    "accept_language": "header",
}
_SITE_DEFAULTS = {f.name: f.default for f in fields(SiteConfig) if f.name in _SITE_OPTIONS}


def _parse_site(raw: Any, where: str, source: str) -> SiteConfig:
    if not isinstance(raw, dict):
        raise ValueError(f"{source}: {where}: expected a table, got {type(raw).__name__}")
    name = _safe_name(raw.get("name"), f"{where}.name", source)
    where = f"{where} ({name!r})"
    _check_keys(raw, {"name", "allowed_domains", "categories", "category_aliases", *_SITE_OPTIONS}, source, where)
    domains = _parse_domains(raw.get("allowed_domains"), f"{where}.allowed_domains", source)
    raw_cats = raw.get("categories")
    if not isinstance(raw_cats, dict) or not raw_cats:
        raise ValueError(f"{source}: {where}.categories: at least one category is required")
    cats = tuple(
        _parse_category(cat, urls, domains, f"{where}.categories.{cat}", source)
        for cat, urls in raw_cats.items()
    )
    options = {key: _site_option(_SITE_OPTIONS[key], raw[key], f"{source}: {where}.{key}")
               for key in _SITE_OPTIONS if key in raw}
    if "url" in options.get("category_from", ()) and not options.get("category_pattern"):
        raise ValueError(f"{source}: {where}.category_pattern: required when category_from has \"url\"")
    aliases = _parse_aliases(raw.get("category_aliases", {}), f"{source}: {where}.category_aliases")
    return SiteConfig(name=name, allowed_domains=domains, categories=cats, category_aliases=aliases, **options)


def _site_option(kind: str, value: Any, where: str) -> Any:
    if kind in {"bool", "float", "int", "header"}:
        return _typed_value(kind, value, where, 1 if kind == "int" else 0)
    if kind == "regex1":
        pattern = _compile(value, where)
        if pattern.groups != 1:
            raise ValueError(f"{where}: needs exactly one group, has {pattern.groups}")
        return value
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where}: expected a list of strings, got {value!r}")
    if kind == "regexes":
        for v in value:
            _compile(v, where)
        return tuple(value)
    if not value or any(v not in CATEGORY_SOURCES for v in value):  # kind == "sources"
        raise ValueError(f"{where}: expected a non-empty list of {list(CATEGORY_SOURCES)}, got {value!r}")
    return tuple(value)


def _compile(value: Any, where: str) -> re.Pattern[str]:
    if not isinstance(value, str):
        raise ValueError(f"{where}: expected a regular expression string, got {value!r}")
    try:
        return re.compile(value)
    except re.error as exc:
        raise ValueError(f"{where}: invalid regular expression {value!r}: {exc}") from exc


def _parse_aliases(raw: Any, where: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: expected a table of raw name = category, got {raw!r}")
    pairs = []
    for key, cat in raw.items():
        _typed_value("name", cat, f"{where}.{key}")
        pairs.append((name_key(str(key)), cat))
    return tuple(pairs)


def _safe_name(value: Any, where: str, source: str) -> str:
    if value is None:
        raise ValueError(f"{source}: {where}: missing (required)")
    if not isinstance(value, str) or not SAFE_NAME.fullmatch(value) or not is_safe_name(value):
        raise ValueError(
            f"{source}: {where}: {value!r} is not a safe path segment (use [A-Za-z0-9_.-]+, at most "
            f"{MAX_NAME_BYTES} characters, not starting or ending with '.', not a device name such as 'con')"
        )
    return value


def _parse_domains(raw: Any, where: str, source: str) -> tuple[str, ...]:
    if not isinstance(raw, list) or not raw:
        raise ValueError(f"{source}: {where}: expected a non-empty list of host names, got {raw!r}")
    domains = []
    for i, dom in enumerate(raw):
        if not isinstance(dom, str) or not _HOST.fullmatch(dom.lower()):
            raise ValueError(
                f"{source}: {where}[{i}]: {dom!r} is not a host name (no scheme, port or path: 'example.com')"
            )
        domains.append(dom.lower())
    return tuple(domains)


def _parse_category(
    name: str, raw: Any, domains: tuple[str, ...], where: str, source: str
) -> CategoryConfig:
    _safe_name(name, where, source)
    if not isinstance(raw, list) or not raw:
        raise ValueError(f"{source}: {where}: expected a non-empty list of start URLs, got {raw!r}")
    for i, url in enumerate(raw):
        _check_start_url(url, domains, f"{where}[{i}]", source)
    return CategoryConfig(name=name, start_urls=tuple(raw))


def _check_start_url(url: Any, domains: tuple[str, ...], where: str, source: str) -> None:
    if not isinstance(url, str):
        raise ValueError(f"{source}: {where}: expected a URL string, got {url!r}")
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError as exc:
        raise ValueError(f"{source}: {where}: malformed URL {url!r}: {exc}") from exc
    if parts.scheme not in {"http", "https"}:
        raise ValueError(f"{source}: {where}: start URL {url!r} is not http(s)")
    if not host:
        raise ValueError(f"{source}: {where}: start URL {url!r} has no host")
    if not host_in_domains(url, domains):
        raise ValueError(
            f"{source}: {where}: start URL {url!r} is outside allowed_domains {list(domains)}"
        )


def with_overrides(config: SitesConfig, *, refetch_after_days: float | None = None,
                   allow_private_networks: bool | None = None, max_pages: int | None = None,
                   max_time: float | None = None) -> SitesConfig:
    """``config`` with ``[crawl]`` options replaced by command-line values (``None`` keeps the file's).

    Raises ``ValueError`` for a negative ``refetch_after_days``, ``max_pages`` or ``max_time``.
    """
    changes: dict[str, Any] = {}
    for name, value, kind in (("refetch_after_days", refetch_after_days, "float"), ("max_pages", max_pages, "int"),
                              ("max_time", max_time, "float")):
        if value is not None:
            changes[name] = _typed_value(kind, value, name)
    if allow_private_networks is not None:
        changes["allow_private_networks"] = bool(allow_private_networks)
    if not changes:
        return config
    return replace(config, crawl=replace(config.crawl, **changes))
