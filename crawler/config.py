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

import json
import re
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

DEFAULT_USER_AGENT = "newsclean/0.1 (+https://example.org/newsclean)"

#: Site and category names become path segments and file-name parts of the WARC layout.
SAFE_NAME = re.compile(r"[A-Za-z0-9_.-]+")
# A host name or IPv4 address as written in allowed_domains: labels of letters, digits, '-', '_'.
_HOST = re.compile(r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*")


@dataclass(frozen=True)
class CrawlOptions:
    """The ``[crawl]`` table: politeness and output options shared by all sites.

    Attributes:
        user_agent: ``User-Agent`` header sent with every request (and noted in warcinfo).
        depth_limit: link hops followed from a start page; 0 fetches the start pages only.
        max_pages_per_category: cap on requests issued per (site, category), start pages
            included; 0 means unlimited.
        download_maxsize: largest response body accepted, in bytes (Scrapy ``DOWNLOAD_MAXSIZE``;
            0 means no limit).
        warc_max_bytes: a WARC file is closed and a new one started once it reaches this many
            (compressed) bytes.
        concurrent_requests_per_domain: simultaneous requests to one domain.
        download_delay: seconds between requests to one domain (AutoThrottle's floor when on).
        autothrottle: adapt the delay to the server's latency (Scrapy AutoThrottle).
        obey_robots: honour robots.txt.
    """

    user_agent: str = DEFAULT_USER_AGENT
    depth_limit: int = 2
    max_pages_per_category: int = 0
    download_maxsize: int = 10 * 1024 * 1024
    warc_max_bytes: int = 100 * 1024 * 1024
    concurrent_requests_per_domain: int = 4
    download_delay: float = 0.0
    autothrottle: bool = True
    obey_robots: bool = True


@dataclass(frozen=True)
class CategoryConfig:
    """One category of a site: its ``name`` and the ``start_urls`` (section pages, feeds, sitemaps)."""

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
    """

    name: str
    allowed_domains: tuple[str, ...]
    categories: tuple[CategoryConfig, ...]

    def category(self, name: str) -> CategoryConfig:
        """The category called ``name``; raises ``KeyError`` when the site has none."""
        for cat in self.categories:
            if cat.name == name:
                return cat
        raise KeyError(f"site {self.name!r} has no category {name!r}")

    def owns_url(self, url: str) -> bool:
        """Whether ``url``'s host is one of :attr:`allowed_domains` or a subdomain of one (port ignored)."""
        return host_in_domains(url, self.allowed_domains)


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
    return SitesConfig(sites=sites, crawl=crawl, source=source)


def config_to_toml(config: SitesConfig) -> str:
    """Write ``config`` back as ``sites.toml`` text that :func:`load_config` reads to an equal value
    (apart from ``source``). Useful to hand a config built in code to ``python -m crawler.run``."""
    lines = ["[crawl]"]
    for f in fields(CrawlOptions):
        lines.append(f"{f.name} = {_toml_value(getattr(config.crawl, f.name))}")
    for site in config.sites:
        lines += ["", "[[site]]", f"name = {_toml_value(site.name)}"]
        lines.append(f"allowed_domains = {_toml_value(list(site.allowed_domains))}")
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


def _parse_crawl(raw: Any, source: str) -> CrawlOptions:
    known = {f.name for f in fields(CrawlOptions)}
    _check_keys(raw, known, source, "crawl")
    defaults = CrawlOptions()
    values = {name: _crawl_value(name, raw[name], getattr(defaults, name), source) for name in raw}
    return CrawlOptions(**values)


_MIN_VALUE = {"concurrent_requests_per_domain": 1, "warc_max_bytes": 1}


def _crawl_value(name: str, value: Any, default: Any, source: str) -> Any:
    where = f"{source}: crawl.{name}"
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ValueError(f"{where}: expected true or false, got {value!r}")
        return value
    if isinstance(default, str):
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{where}: expected a non-empty string, got {value!r}")
        return value
    numeric = (int, float) if isinstance(default, float) else (int,)
    if isinstance(value, bool) or not isinstance(value, numeric):
        kind = "a number" if isinstance(default, float) else "an integer"
        raise ValueError(f"{where}: expected {kind}, got {value!r}")
    minimum = _MIN_VALUE.get(name, 0)
    if value < minimum:
        raise ValueError(f"{where}: must be >= {minimum}, got {value!r}")
    return type(default)(value)


def _parse_site(raw: Any, where: str, source: str) -> SiteConfig:
    if not isinstance(raw, dict):
        raise ValueError(f"{source}: {where}: expected a table, got {type(raw).__name__}")
    name = _safe_name(raw.get("name"), f"{where}.name", source)
    where = f"{where} ({name!r})"
    _check_keys(raw, {"name", "allowed_domains", "categories"}, source, where)
    domains = _parse_domains(raw.get("allowed_domains"), f"{where}.allowed_domains", source)
    raw_cats = raw.get("categories")
    if not isinstance(raw_cats, dict) or not raw_cats:
        raise ValueError(f"{source}: {where}.categories: at least one category is required")
    cats = tuple(
        _parse_category(cat, urls, domains, f"{where}.categories.{cat}", source)
        for cat, urls in raw_cats.items()
    )
    return SiteConfig(name=name, allowed_domains=domains, categories=cats)


def _safe_name(value: Any, where: str, source: str) -> str:
    if value is None:
        raise ValueError(f"{source}: {where}: missing (required)")
    if not isinstance(value, str) or not SAFE_NAME.fullmatch(value) or value in {".", ".."}:
        raise ValueError(
            f"{source}: {where}: {value!r} is not a safe path segment (use [A-Za-z0-9_.-]+, not '.' or '..')"
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
