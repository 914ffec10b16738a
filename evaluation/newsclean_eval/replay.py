"""Serve a real extraction data set as real web sites on loopback, for crawl -> clean -> score runs.

Every site of the data set becomes one origin (a :class:`~newsclean.demo.localsite.StaticSite`, served on its own
127.0.0.N host by :class:`~newsclean.demo.localsite.LocalSites`), every group of pages (a crawl year for msv-big9)
one category. Pages are served at stable, URL-safe paths (``/y2005/amd-1.html``) with their **original
bytes** and ``Content-Type: text/html`` without a charset, so the pipeline must sniff the encoding as it
would on the web. Each category gets a start point listing its pages: an XML sitemap
(``/y2005/sitemap.xml``, default) or an HTML index page (``/y2005/``); see :func:`build_replay`. ``robots.txt`` allows exactly the index pages and the served pages, so the crawler does not
wander into the thousands of relative links the saved pages carry (they would all be 404 here).

Pages come from the data-set loaders of :mod:`newsclean_eval.datasets` (one loader per data set, shared with
``newsclean eval``): :func:`replay_pages` gives each :class:`~newsclean_eval.datasets.EvalPage` with plain-text
gold its crawl names (site, category, slug). msv-big9 is the set the tests and ``scripts/eval_crawl.py``
use; dragnet and cleanportaleval replay the same way (a site per neighbour group's site).

Also here: :func:`render_sites_toml`, the ``sites.toml`` writer shared with :mod:`newsclean.demo.network`.
"""

from __future__ import annotations

import html
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from newsclean.demo.localsite import Resource, StaticSite
from newsclean.demo.served import BASE_PLACEHOLDER, ServedNetwork, render_sites_toml  # noqa: F401 (re-used here)

if TYPE_CHECKING:  # the loaders live in newsclean_eval.datasets; only their record type is named here
    from newsclean_eval.datasets import EvalPage

# ---------------------------------------------------------------------------------------- datasets


@dataclass(frozen=True)
class ReplayPage:
    """One data-set page with its crawl names: ``site`` and ``category`` (``[a-z0-9_]``, used in URLs and
    WARC paths) and a ``slug`` unique within them; ``page`` holds the HTML bytes and the gold text."""

    site: str
    category: str
    slug: str
    page: EvalPage


def slugify(text: str) -> str:
    """URL-safe slug: lowercase ASCII letters and digits joined by single hyphens (``"amd (1)" -> "amd-1"``)."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug or "page"


def site_name(label: str) -> str:
    """Crawl name of a site label: first word, dots to underscores (``"yahoo.com (Yahoo! News)" -> "yahoo_com"``)."""
    first = label.strip().split()[0].lower()
    return re.sub(r"[^a-z0-9]+", "_", first).strip("_")


def category_name(page: EvalPage) -> str:
    """Crawl name of a page's category: the part of its neighbour group below the site (msv-big9 groups
    are ``site/year``; a bare year ``2005`` becomes ``y2005``), ``all`` when the group is the whole site."""
    site = page.site or page.group
    rest = page.group[len(site) + 1:] if page.group.startswith(site + "/") else ""
    name = re.sub(r"[^a-z0-9]+", "_", rest.lower()).strip("_")
    if not name:
        return "all"
    return f"y{name}" if name.isdigit() else name


def replay_pages(pages: Iterable[EvalPage]) -> list[ReplayPage]:
    """``pages`` (from :func:`newsclean_eval.datasets.load`) with their crawl names, sorted by site, category and
    slug (``amd-2`` before ``amd-10``). Raises ValueError for a page without plain-text gold (snippet gold,
    as in trafilatura-eval, cannot be scored on crawled output)."""
    out = []
    for page in pages:
        if page.gold is None:
            raise ValueError(f"{page.dataset}/{page.page_id}: no plain-text gold to score a replay against")
        out.append(ReplayPage(site_name(page.site or page.group), category_name(page),
                              slugify(Path(page.page_id).stem), page))
    return sorted(out, key=lambda p: (p.site, p.category, _natural_key(p.slug)))


def _natural_key(text: str) -> list:
    """Sort key that orders ``amd-2`` before ``amd-10``."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


def limit_per_group(pages: Iterable[ReplayPage], limit: int | None) -> list[ReplayPage]:
    """The first ``limit`` pages of every (site, category) group, input order kept; None keeps all."""
    seen: dict[tuple[str, str], int] = defaultdict(int)
    out = []
    for page in pages:
        key = (page.site, page.category)
        if limit is None or seen[key] < limit:
            seen[key] += 1
            out.append(page)
    return out


def select(pages: Iterable[ReplayPage], sites: Sequence[str] | None = None,
           categories: Sequence[str] | None = None) -> list[ReplayPage]:
    """Pages whose site is in ``sites`` and category in ``categories`` (None = no filter on that field)."""
    return [p for p in pages if (not sites or p.site in sites) and (not categories or p.category in categories)]


# ------------------------------------------------------------------------------------------ replay


def _index_page(site: str, category: str, links: list[tuple[str, str]]) -> bytes:
    """An HTML section page listing ``links`` (path, anchor text)."""
    items = "\n".join(f'<li><a href="{html.escape(href)}">{html.escape(text)}</a></li>' for href, text in links)
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(site)}: {category}</title>"
            f"</head>\n<body><h1>{html.escape(site)} &mdash; {category}</h1>\n<ul>\n{items}\n</ul></body></html>\n"
            ).encode()


def _sitemap(paths: list[str]) -> bytes:
    """An XML sitemap (sitemaps.org 0.9) of ``paths``; the base URL is filled in by :meth:`ServedNetwork.bind`."""
    base = BASE_PLACEHOLDER.decode("ascii")
    urls = "".join(f"<url><loc>{base}{html.escape(p)}</loc></url>\n" for p in paths)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            f"{urls}</urlset>\n").encode()


def _robots(paths: Iterable[str]) -> str:
    allows = "".join(f"Allow: {p}$\n" for p in sorted(paths))
    return f"User-agent: *\n{allows}Disallow: /\n"


def _unique(slug: str, taken: set[str]) -> str:
    candidate, n = slug, 2
    while candidate in taken:
        candidate, n = f"{slug}-{n}", n + 1
    taken.add(candidate)
    return candidate


INDEX_KINDS = ("sitemap", "html")


def build_replay(pages: Sequence[ReplayPage], *, index: str = "sitemap") -> ServedNetwork:
    """A :class:`ServedNetwork` serving ``pages`` (from :func:`replay_pages`).

    Pages live at ``/<category>/<slug>.html``, served with ``Content-Type: text/html`` and the file's bytes
    unchanged. The category's start point (``index``):

    * ``"sitemap"`` (default): ``/<category>/sitemap.xml``, an XML sitemap (``application/xml``). The
      pipeline rejects it as ``not_html``, so only real pages reach the static-noise neighbour sample;
      an HTML index page of our own making shares no markup with the real pages and, sampled as a
      neighbour, would leave no node with full support (StaDyNoT §3.1), i.e. no static noise at all.
    * ``"html"``: ``/<category>/``, a plain HTML page linking the category's pages.

    Call :meth:`ServedNetwork.bind` once served (sitemaps need absolute URLs). Raises ValueError for an
    unknown ``index``. Reads every file once.
    """
    if index not in INDEX_KINDS:
        raise ValueError(f"index must be one of {INDEX_KINDS}, got {index!r}")
    by_site: dict[str, dict[str, list[ReplayPage]]] = defaultdict(lambda: defaultdict(list))
    for page in pages:
        by_site[page.site][page.category].append(page)
    net = ServedNetwork([], {})
    for name in sorted(by_site):
        net.sites.append(_replay_site(name, by_site[name], index, net))
    return net


def _replay_site(name: str, categories: dict[str, list[ReplayPage]], index: str,
                 net: ServedNetwork) -> StaticSite:
    """Add one site's pages, start points and gold to ``net``; return the site."""
    site, served = StaticSite(name), []
    net.start_paths[name], net.gold[name], net.templated[name] = {}, {}, {}
    for category, group in sorted(categories.items()):
        taken: set[str] = set()
        links = []
        for page in group:
            path = f"/{category}/{_unique(page.slug, taken)}.html"
            site.add(path, page.page.html, content_type="text/html")
            net.gold[name][path] = page.page.gold
            links.append((path, page.slug))
        if index == "sitemap":
            start = f"/{category}/sitemap.xml"
            net.templated[name][start] = Resource(_sitemap([p for p, _ in links]), content_type="application/xml")
        else:
            start = f"/{category}/"
            site.add(start, _index_page(name, category, links))
        net.start_paths[name][category] = [start]
        served += [start] + [href for href, _ in links]
    site.add("/robots.txt", _robots(served), content_type="text/plain")
    return site
