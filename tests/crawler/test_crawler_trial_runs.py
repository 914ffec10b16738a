"""A new user's first crawls: the README's minimal sites.toml on a 20-article site, trial-run bounds
(``--max-pages``, ``--max-time``, ``-s NAME=VALUE``), and a crawl whose every start point is refused.

Sites are served by newsclean.demo.localsite on 127.0.0.2 only; crawls run in child processes
(``python -m newsclean.crawler.run``: Twisted's reactor runs once per process).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from repo import ROOT

from newsclean.crawler.config import CategoryConfig, SiteConfig, SitesConfig, with_overrides
from newsclean.crawler.discovery import followed_from_article, in_start_sections
from newsclean.crawler.report import CategoryReport, CrawlSummary
from newsclean.crawler.run import crawl_problem, parse_setting_overrides
from newsclean.crawler.settings import build_settings
from newsclean.demo.localsite import LocalSites, Resource, StaticSite
from newsclean.demo.network import SPECS, build_site

COURIER = next(spec for spec in SPECS if spec.name == "courier")
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"  # /news/<category>/<slug>-<yyyymmdd> articles
JUNK_PER_ARTICLE = 30


def with_junk_links(site: StaticSite, article_paths: list[str]) -> StaticSite:
    """Every article page of ``site`` also links to 30 pages of its own (tags, authors, comments, share and print
    versions) outside the sections, none of which exists: the links a real article page carries."""
    for n, path in enumerate(article_paths):
        slug = path.rstrip("/").rsplit("/", 1)[1]
        junk = [f"/tag/{slug}-{i}/" for i in range(10)] + [f"/author/writer-{n}-{i}/" for i in range(10)] + [
            f"/comments/{slug}/{i}" for i in range(5)] + [f"/share/{slug}/{i}" for i in range(4)] + [f"/print/{slug}"]
        links = "".join(f'<a href="{href}">more</a>' for href in junk)
        body = site.resources[path].body.replace(b"</body>", links.encode() + b"</body>")
        site.resources[path] = Resource(body, content_type=COURIER.content_type)
    return site


def twenty_article_site() -> tuple[StaticSite, list[str]]:
    site, gold = build_site(COURIER, seed=0, per_category=10)
    assert len(gold) == 20
    return with_junk_links(site, sorted(gold)), sorted(gold)


def minimal_toml(base: str, extra: str = "") -> str:
    """The README's minimal sites.toml (start URLs, no URL patterns), for a loopback site crawled fast."""
    host = base.split("//")[1].split(":")[0]
    return textwrap.dedent(f"""\
        [crawl]
        depth_limit = 2
        contact_url = "https://example.org/newsclean-tests"
        allow_private_networks = true
        download_delay = 0.0
        autothrottle = false
        concurrent_requests_per_domain = 4
        {extra}
        [[site]]
        name = "example"
        allowed_domains = ["{host}"]
        [site.categories]
        sports = ["{base}/news/sports/"]
        technology = ["{base}/news/technology/"]
        """)


def crawl_cli(tmp_path: Path, toml: str, *flags: str, timeout: float = 180) -> tuple[subprocess.CompletedProcess,
                                                                                       CrawlSummary | None]:
    config, summary = tmp_path / "sites.toml", tmp_path / "summary.json"
    config.write_text(toml, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "newsclean.crawler.run", "--config", str(config),
                           "--out", str(tmp_path / "warc"), "--log-level", "WARNING", "--summary-json", str(summary),
                           *flags], capture_output=True, text=True, timeout=timeout, cwd=ROOT, check=False)
    return proc, (CrawlSummary.from_json(summary.read_text(encoding="utf-8")) if summary.exists() else None)


# --- the README's minimal config crawls the site and stops ---------------------------------------


def test_minimal_config_crawls_the_twenty_articles_and_stops(tmp_path):
    site, articles = twenty_article_site()
    with LocalSites([site]) as servers:
        proc, summary = crawl_cli(tmp_path, minimal_toml(servers.base_urls["courier"]))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert all(site.hits[path] == 1 for path in articles)  # every article, once
    assert summary.total("stored") >= 20
    not_found = sum(n for path, n in site.hits.items() if path not in site.resources and path != "/robots.txt")
    assert not_found == 0, sorted(p for p in site.hits if p not in site.resources)[:20]
    assert summary.total_responses <= 40  # 2 start pages, their links, in-section links of the articles


def test_article_links_followed_only_in_the_start_sections():
    site = SiteConfig("s", ("example.com",), (CategoryConfig("politics", ("https://example.com/politics/",)),
                                              CategoryConfig("feed", ("https://example.com/sport/rss.xml",))))
    assert in_start_sections("https://example.com/politics/2024/05/01/vote.html", site)
    assert in_start_sections("https://example.com/sport/match-report", site)  # the feed's section: /sport/
    assert not in_start_sections("https://example.com/tag/politics/", site)
    assert not in_start_sections("https://other.example.com/politics/x", site)  # another host
    assert not in_start_sections("https://example.com/politicsx/y", site)  # whole segments only
    home = SiteConfig("h", ("example.com",), (CategoryConfig("all", ("https://example.com/",)),))
    assert in_start_sections("https://example.com/tag/x/", home)  # a home page's section is the whole host
    assert followed_from_article("https://example.com/tag/x/", "listing", site)  # listing_allow said so
    patterns = SiteConfig("p", ("example.com",), site.categories, article_allow=(r"/\d{4}/",))
    assert followed_from_article("https://example.com/2024/x.html", "article", patterns)
    assert not followed_from_article("https://example.com/author/jane/", "article", site)


# --- trial-run bounds and Scrapy settings ---------------------------------------------------------


def test_max_pages_stops_a_trial_run_and_s_sets_a_scrapy_setting(tmp_path):
    site, _ = twenty_article_site()
    with LocalSites([site]) as servers:
        proc, summary = crawl_cli(tmp_path, minimal_toml(servers.base_urls["courier"]), "--max-pages", "5",
                                  "-s", "USER_AGENT=trial-run/1.0 (+https://example.org/t)")
    assert proc.returncode == 0, proc.stderr[-3000:]  # a trial run that reached its bound did what was asked
    assert summary.finish_reason == "finished" and "max_pages=5 reached" in proc.stderr
    assert summary.total_responses == 5 and sum(n for p, n in site.hits.items() if p != "/robots.txt") == 5
    agents = {headers.get("User-Agent") for headers in site.received.values()}
    assert agents == {"trial-run/1.0 (+https://example.org/t)"}


def test_max_time_stops_a_slow_crawl(tmp_path):
    site, articles = twenty_article_site()
    for path in articles:
        site.resources[path] = Resource(site.resources[path].body, delay=0.5)
    with LocalSites([site]) as servers:
        # CONCURRENT_REQUESTS=2: Scrapy lets the requests its downloader already holds finish after the timeout
        proc, summary = crawl_cli(tmp_path, minimal_toml(servers.base_urls["courier"]), "--max-time", "2",
                                  "-s", "CONCURRENT_REQUESTS=2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert summary.finish_reason == "closespider_timeout"
    assert summary.elapsed_s < 10 and sum(site.hits[p] for p in articles) < 15  # 20 articles take 5 s and more


def test_max_time_holds_while_huge_sitemaps_are_read_and_articles_come_meanwhile(tmp_path):
    max_time, maps, per_map = 20, 5, 50_000
    site = StaticSite("huge")
    article = Resource(b"<html><head><title>a</title></head><body><p>An article.</p></body></html>")
    with LocalSites([site]) as servers:
        base = servers.base_urls["huge"]
        index = "".join(f"<sitemap><loc>{base}/sitemaps/{m}.xml</loc></sitemap>" for m in range(maps))
        site.add("/sitemap-index.xml", f'<?xml version="1.0"?><sitemapindex xmlns="{SITEMAP_NS}">{index}</sitemapindex>',
                 content_type="application/xml")
        for m in range(maps):
            paths = [f"/news/{m}/{i:06d}.html" for i in range(per_map)]
            site.resources.update(dict.fromkeys(paths, article))
            urls = "\n".join(f"<url><loc>{base}{path}</loc></url>" for path in paths)
            site.add(f"/sitemaps/{m}.xml", f'<?xml version="1.0"?><urlset xmlns="{SITEMAP_NS}">{urls}</urlset>',
                     content_type="application/xml")
        toml = minimal_toml(base).replace(f'sports = ["{base}/news/sports/"]\ntechnology = ["{base}/news/technology/"]',
                                          f'news = ["{base}/sitemap-index.xml"]')
        started = time.monotonic()
        proc, summary = crawl_cli(tmp_path, toml, "--max-time", str(max_time), timeout=300)
        wall = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert summary.finish_reason == "closespider_timeout"
    assert summary.elapsed_s < 3 * max_time and wall < 3 * max_time + 60, (summary.elapsed_s, wall)  # + start-up
    assert summary.total("stored") >= 1 and any(p.startswith("/news/") for p in site.hits), summary.format()
    db = sqlite3.connect(tmp_path / "warc" / "crawl-state.sqlite3")
    pending = db.execute("SELECT COUNT(*) FROM frontier WHERE state = 'pending'").fetchone()[0]
    db.close()
    assert pending > 0  # what max_time left is kept for the next run


def test_bad_s_item_is_a_usage_error(tmp_path):
    proc, summary = crawl_cli(tmp_path, minimal_toml("http://127.0.0.2:9"), "-s", "download_delay")
    assert proc.returncode == 2 and "NAME=VALUE" in proc.stderr and summary is None


def test_setting_overrides_and_trial_bounds_reach_scrapy(tmp_path):
    assert parse_setting_overrides(["DOWNLOAD_DELAY=2", "LOG_FILE=a=b.log", "DOWNLOAD_DELAY=3"]) == {
        "DOWNLOAD_DELAY": "3", "LOG_FILE": "a=b.log"}
    for bad in ("DOWNLOAD_DELAY", "=1", "download_delay=1"):
        with pytest.raises(ValueError, match="NAME=VALUE"):
            parse_setting_overrides([bad])
    site = SiteConfig("s", ("example.com",), (CategoryConfig("c", ("https://example.com/c/",)),))
    config = SitesConfig(sites=(site,))
    bounded = with_overrides(config, max_pages=50, max_time=30)
    assert bounded.crawl.max_pages == 50 and build_settings(bounded, tmp_path).getfloat("CLOSESPIDER_TIMEOUT") == 30.0
    assert build_settings(config, tmp_path).getfloat("CLOSESPIDER_TIMEOUT") == 0  # no bound by default
    with pytest.raises(ValueError, match="max_pages"):
        with_overrides(config, max_pages=-1)


# --- a crawl whose every start point is refused ---------------------------------------------------


def test_all_starts_refused_as_private_addresses_exits_1_naming_the_setting(tmp_path):
    site = StaticSite("solo")
    site.add("/news/sports/", "<html><body><a href='/news/sports/a'>a</a></body></html>")
    with LocalSites([site]) as servers:
        toml = minimal_toml(servers.base_urls["solo"]).replace("allow_private_networks = true\n", "")
        proc, summary = crawl_cli(tmp_path, toml)
    assert not site.hits  # never contacted
    assert proc.returncode == 1, proc.stdout + proc.stderr[-3000:]
    assert "nothing was fetched" in proc.stderr and "allow_private_networks = true" in proc.stderr
    assert summary.reasons("failed") == {"private_address": 2}


def test_all_starts_disallowed_by_robots_exits_1_naming_the_setting(tmp_path):
    site = StaticSite("solo")
    site.add("/robots.txt", "User-agent: *\nDisallow: /\n", content_type="text/plain")
    site.add("/news/sports/", "<html><body><p>Sports.</p></body></html>")
    with LocalSites([site]) as servers:
        proc, summary = crawl_cli(tmp_path, minimal_toml(servers.base_urls["solo"]))
    assert proc.returncode == 1, proc.stdout + proc.stderr[-3000:]
    assert "obey_robots = false" in proc.stderr and "/news/sports/" not in site.hits
    assert summary.reasons("skipped") == {"robots_txt": 2}


def _summary(**categories: CategoryReport) -> CrawlSummary:
    return CrawlSummary(finish_reason="finished", categories={("s", name): c for name, c in categories.items()})


def test_start_refusal_only_when_every_page_was_refused():
    refused = _summary(a=CategoryReport(failed={"private_address": 1}), b=CategoryReport(skipped={"robots_txt": 1}),
                       c=CategoryReport(fetched=1, failed={"offsite_redirect": 1}))
    message = crawl_problem(refused)
    assert message.startswith("nothing was fetched")
    assert "allow_private_networks" in message and "obey_robots" in message and "allowed_domains" in message
    assert crawl_problem(_summary(a=CategoryReport(failed={"private_address": 1}),
                                  b=CategoryReport(fetched=1, stored=1))) is None  # one category got pages
    assert crawl_problem(_summary(a=CategoryReport(fetched=1, failed={"http_404": 1}))) is None  # a plain failure
    assert crawl_problem(_summary()) is None
    stopped = CrawlSummary(finish_reason="shutdown")
    assert "stopped before the end" in crawl_problem(stopped)
    assert crawl_problem(CrawlSummary(finish_reason="closespider_timeout",
                                      categories={("s", "a"): CategoryReport(fetched=3, stored=3)})) is None
    assert json.loads(refused.to_json())["finish_reason"] == "finished"
