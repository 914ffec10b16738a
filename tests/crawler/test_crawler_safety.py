"""By default the crawler refuses hosts on private, loopback or link-local addresses (IP literals and names).

Nothing is contacted: the loopback server below must see no request at all.
"""

from __future__ import annotations

from newsclean.crawler.config import CategoryConfig, CrawlOptions, SiteConfig, SitesConfig
from newsclean.crawler.run import run_crawl_subprocess
from newsclean.demo.localsite import LocalSites, StaticSite


def test_private_addresses_are_refused_unless_allowed(tmp_path):
    site = StaticSite("solo")
    site.add("/news/", "<html><body><a href='/news/1.html'>1</a></body></html>")
    site.add("/news/1.html", "<html><body>One.</body></html>")
    with LocalSites([site]) as servers:
        base = servers.base_urls["solo"]
        port = base.rsplit(":", 1)[1]
        config = SitesConfig(sites=(
            SiteConfig("literal", ("127.0.0.2",), (CategoryConfig("news", (f"{base}/news/",)),)),
            SiteConfig("named", ("localhost",), (CategoryConfig("news", (f"http://localhost:{port}/news/",)),)),
        ), crawl=CrawlOptions(autothrottle=False, download_delay=0.0, retry_times=1))
        summary = run_crawl_subprocess(config, tmp_path / "warc", log_level="WARNING", timeout=120)
        assert not site.hits, dict(site.hits)  # never contacted
        allowed = run_crawl_subprocess(
            SitesConfig(sites=config.sites[:1], crawl=CrawlOptions(autothrottle=False, download_delay=0.0, allow_private_networks=True)),
            tmp_path / "warc2", log_level="WARNING", timeout=120)
    assert summary.categories[("literal", "news")].failed == {"private_address": 1}
    assert summary.categories[("named", "news")].failed == {"private_address": 1}  # refused at DNS resolution
    assert summary.warc_files == () and summary.requests <= 2  # localhost: robots.txt and the page, refused at DNS
    assert allowed.categories[("literal", "news")].stored == 1
