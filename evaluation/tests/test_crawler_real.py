"""Real pages (msv-big9 from ../shared/data) crawled through robots.txt -> sitemap index -> per-year sitemaps.

newsclean_eval.replay serves the pages on 127.0.0.N with one sitemap per year; this test adds a sitemap index
and announces it in robots.txt, starts each site from its robots.txt only, and lets a URL rule give
each page its year as category. Skips, saying why, where ``../shared/data`` is absent.
"""

from __future__ import annotations

from collections import Counter
from contextlib import redirect_stdout
from io import StringIO
from types import SimpleNamespace

import pytest
from test_crawler import read_warc, warc_files
from warcio.checker import Checker

from newsclean.crawler.config import CategoryConfig, CrawlOptions, SiteConfig, SitesConfig
from newsclean.crawler.run import run_crawl_subprocess
from newsclean.demo.localsite import LocalSites
from newsclean_eval.datasets import load, shared_data_dir
from newsclean_eval.replay import build_replay, limit_per_group, replay_pages, select

SHARED_DATA = shared_data_dir()
SITES = ["bbc_co_uk", "cnn_com", "forbes_com"]
YEARS = ["y2009", "y2010"]

pytestmark = [
    pytest.mark.shared_data,
    pytest.mark.skipif(SHARED_DATA is None or not (SHARED_DATA / "msv-big9.tar.gz").exists(),
                       reason="needs ../shared/data/msv-big9.tar.gz beside the repository (or NEWSCLEAN_SHARED "
                              "naming the shared folder); absent here"),
]


def announce_sitemap_index(site, base: str) -> None:
    """Add /sitemap-index.xml (listing the per-year sitemaps) and announce it in robots.txt."""
    sitemaps = sorted(p for p in site.resources if p.endswith("/sitemap.xml"))
    site.add("/sitemap-index.xml", '<?xml version="1.0" encoding="UTF-8"?>\n'
             '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
             + "".join(f"<sitemap><loc>{base}{p}</loc></sitemap>" for p in sitemaps) + "</sitemapindex>",
             content_type="application/xml")
    robots = site.resources["/robots.txt"].body.decode()
    robots = robots.replace("User-agent: *\n", "User-agent: *\nAllow: /robots.txt$\nAllow: /sitemap-index.xml$\n")
    site.add("/robots.txt", robots + f"Sitemap: {base}/sitemap-index.xml\n", content_type="text/plain")


def test_real_pages_through_robots_txt_and_a_sitemap_index(tmp_path):
    pages = limit_per_group(select(replay_pages(load("msv-big9")), SITES, YEARS), 3)
    network = build_replay(pages, index="sitemap")
    with LocalSites(network.sites) as served:
        network.bind(served.base_urls)
        for site in network.sites:
            announce_sitemap_index(site, served.base_urls[site.name])
        config = SitesConfig(sites=tuple(
            SiteConfig(name, (url.split("//")[1].split(":")[0],), (CategoryConfig("all", (f"{url}/robots.txt",)),),
                       category_from=("url",), category_pattern=r"^https?://[^/]+/(y\d{4})/")
            for name, url in sorted(served.base_urls.items())),
            crawl=CrawlOptions(autothrottle=False, download_delay=0.0, allow_private_networks=True, depth_limit=1,
                               concurrent_requests_per_domain=8))
        summary = run_crawl_subprocess(config, tmp_path / "warc", log_level="WARNING", timeout=300)
        base_urls = dict(served.base_urls)
    expected = Counter((p.site, p.category) for p in pages)
    stored = Counter({key: c.stored for key, c in summary.categories.items() if c.stored})
    assert stored == expected
    assert sorted({site for site, _ in expected}) == SITES
    for site in SITES:  # robots.txt + sitemap index + one sitemap per year, all under the config's category
        assert summary.categories[(site, "all")].listings == 2 + len(network.start_paths[site])
        assert not summary.categories[(site, "all")].failed
    files = warc_files(tmp_path / "warc")
    records = [r for f in files for r in read_warc(f) if r.type == "response"]
    articles = [r for r in records if r.headers["WARC-Newsclean-Page-Type"] == "article"]
    served = {base_urls[site] + path for site, paths in network.gold.items() for path in paths}
    assert sorted(r.uri for r in articles) == sorted(served)  # every page once
    for rec in articles:
        assert rec.headers["WARC-Newsclean-Category"] == rec.uri.split("/")[3]
    with redirect_stdout(StringIO()) as report:
        assert Checker(SimpleNamespace(inputs=[str(f) for f in files], verbose=False)).process_all() == 0, report.getvalue()
