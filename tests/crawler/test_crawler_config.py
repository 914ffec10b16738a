"""sites.toml parsing and validation, Scrapy settings, and the spider's start requests (no network)."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest

from newsclean.crawler.config import (
    CategoryConfig,
    CrawlOptions,
    SiteConfig,
    SitesConfig,
    config_to_toml,
    host_in_domains,
    load_config,
    parse_config,
)
from newsclean.crawler.settings import WARC_MIDDLEWARE_ORDER, build_settings
from newsclean.crawler.spiders.news import NewsSpider

GOOD = """\
[crawl]
user_agent = "newsclean-test/1.0 (+https://example.org/newsclean)"
depth_limit = 3
max_pages_per_category = 50
download_maxsize = 2048
warc_max_bytes = 4096
concurrent_requests_per_domain = 2
download_delay = 0.5
autothrottle = false
obey_robots = true

[[site]]
name = "example"
allowed_domains = ["example.com", "cdn.example.net"]
[site.categories]
politics = ["https://example.com/politics/", "https://www.example.com/politics/feed.xml"]
sports   = ["http://cdn.example.net/sports/"]

[[site]]
name = "other.site_2"
allowed_domains = ["127.0.0.2"]
[site.categories]
news = ["http://127.0.0.2:8080/news/"]
"""

MINIMAL_SITE = """\
[[site]]
name = "example"
allowed_domains = ["example.com"]
[site.categories]
politics = ["https://example.com/politics/"]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sites.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_full_config_parses_into_frozen_dataclasses(tmp_path):
    config = load_config(write(tmp_path, GOOD))
    assert config.crawl == CrawlOptions(
        user_agent="newsclean-test/1.0 (+https://example.org/newsclean)", depth_limit=3,
        max_pages_per_category=50, download_maxsize=2048, warc_max_bytes=4096,
        concurrent_requests_per_domain=2, download_delay=0.5, autothrottle=False, obey_robots=True)
    example = config.site("example")
    assert example.allowed_domains == ("example.com", "cdn.example.net")
    assert example.category("politics").start_urls == (
        "https://example.com/politics/", "https://www.example.com/politics/feed.xml")
    assert [c.name for c in example.categories] == ["politics", "sports"]
    assert config.site("other.site_2").category("news").start_urls == ("http://127.0.0.2:8080/news/",)
    assert config.source == str(tmp_path / "sites.toml")
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.crawl.depth_limit = 5  # type: ignore[misc]
    hash(config)  # immutable all the way down


def test_crawl_table_is_optional_and_defaults_apply(tmp_path):
    config = load_config(write(tmp_path, MINIMAL_SITE))
    assert config.crawl == CrawlOptions()
    assert config.crawl.obey_robots and config.crawl.autothrottle
    assert config.crawl.depth_limit == 2
    assert config.start_points() == [("example", "politics", "https://example.com/politics/")]


def test_toml_round_trip(tmp_path):
    config = load_config(write(tmp_path, GOOD))
    again = load_config(write(tmp_path, config_to_toml(config)))
    assert dataclasses.replace(again, source=None) == dataclasses.replace(config, source=None)


def test_domains_are_matched_by_host_ignoring_port():
    assert host_in_domains("http://127.0.0.2:8080/x", ["127.0.0.2"])
    assert host_in_domains("https://www.example.com/a", ["example.com"])
    assert host_in_domains("https://EXAMPLE.com/a", ["example.com"])
    assert not host_in_domains("https://badexample.com/a", ["example.com"])
    assert not host_in_domains("https://example.com.evil.org/", ["example.com"])
    assert not host_in_domains("mailto:someone@example.com", ["example.com"])


def _site(**overrides) -> str:
    fields = {"name": '"example"', "allowed_domains": '["example.com"]'}
    fields.update(overrides)
    body = "".join(f"{k} = {v}\n" for k, v in fields.items() if v is not None)
    return "[[site]]\n" + body


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        (_site(name=None) + '[site.categories]\na = ["https://example.com/"]\n', ["site[0].name", "missing"]),
        (_site(), ["site[0] ('example').categories", "at least one category"]),
        (_site() + "[site.categories]\n", ["site[0] ('example').categories", "at least one category"]),
        (_site() + '[site.categories]\npolitics = ["https://elsewhere.org/politics/"]\n',
         ["site[0] ('example').categories.politics[0]", "outside allowed_domains"]),
        (_site() + '[site.categories]\npolitics = ["ftp://example.com/politics/"]\n',
         ["categories.politics[0]", "is not http(s)"]),
        (_site() + '[site.categories]\npolitics = []\n', ["categories.politics", "non-empty list"]),
        (_site() + '[site.categories]\npolitics = "https://example.com/"\n', ["categories.politics", "list"]),
        (_site(name='"../etc"') + '[site.categories]\na = ["https://example.com/"]\n',
         ["site[0].name", "safe path segment"]),
        (_site(name='".."') + '[site.categories]\na = ["https://example.com/"]\n', ["site[0].name"]),
        (_site() + '[site.categories]\n"pol itics" = ["https://example.com/"]\n',
         ["categories.pol itics", "safe path segment"]),
        (_site(allowed_domains='["https://example.com"]') + '[site.categories]\na = ["https://example.com/"]\n',
         ["allowed_domains[0]", "not a host name"]),
        (_site(allowed_domains='["example.com:8080"]') + '[site.categories]\na = ["https://example.com/"]\n',
         ["allowed_domains[0]", "not a host name"]),
        (_site(allowed_domains="[]") + '[site.categories]\na = ["https://example.com/"]\n',
         ["allowed_domains", "non-empty list"]),
        (_site(colour='"red"') + '[site.categories]\na = ["https://example.com/"]\n',
         ["site[0] ('example')", "unknown key 'colour'"]),
        (MINIMAL_SITE + MINIMAL_SITE, ["site[1].name", "duplicate site name 'example'"]),
        ("[crawl]\ndepth_limit = 2\n", ["'site'", "at least one [[site]]"]),
        ("[crawl]\ndepht_limit = 2\n" + MINIMAL_SITE, ["crawl", "unknown key 'depht_limit'"]),
        ("[crawl]\ndepth_limit = -1\n" + MINIMAL_SITE, ["crawl.depth_limit", ">= 0"]),
        ("[crawl]\ndepth_limit = true\n" + MINIMAL_SITE, ["crawl.depth_limit", "integer"]),
        ("[crawl]\nconcurrent_requests_per_domain = 0\n" + MINIMAL_SITE,
         ["crawl.concurrent_requests_per_domain", ">= 1"]),
        ("[crawl]\nautothrottle = 1\n" + MINIMAL_SITE, ["crawl.autothrottle", "true or false"]),
        ("[crawl]\nuser_agent = \"\"\n" + MINIMAL_SITE, ["crawl.user_agent", "non-empty string"]),
        ("[crawl]\ndownload_delay = \"fast\"\n" + MINIMAL_SITE, ["crawl.download_delay", "number"]),
        ("[sites]\nname = 1\n" + MINIMAL_SITE, ["top level", "unknown key 'sites'"]),
        ("[[site]\nname = 1\n", ["invalid TOML"]),
    ],
)
def test_malformed_config_names_file_and_key(tmp_path, text, fragments):
    path = write(tmp_path, text)
    with pytest.raises(ValueError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}:"), message
    for fragment in fragments:
        assert fragment in message, message


def test_missing_file_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_config(tmp_path / "nope.toml")


def test_download_delay_accepts_integers():
    config = parse_config({"crawl": {"download_delay": 1}, "site": [
        {"name": "s", "allowed_domains": ["example.com"], "categories": {"c": ["http://example.com/"]}}]})
    assert config.crawl.download_delay == 1.0 and isinstance(config.crawl.download_delay, float)


def test_build_settings_maps_crawl_options(tmp_path):
    config = load_config(write(tmp_path, GOOD))
    settings = build_settings(config, tmp_path / "warc", log_level="WARNING")
    assert settings.getbool("ROBOTSTXT_OBEY") is True
    assert settings.getbool("AUTOTHROTTLE_ENABLED") is False
    assert settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN") == 2
    assert settings.getfloat("DOWNLOAD_DELAY") == 0.5
    assert settings.getint("DOWNLOAD_MAXSIZE") == 2048
    assert settings.getint("DEPTH_LIMIT") == 0  # the spider enforces depth_limit (child sitemaps are no hops)
    assert settings.get("USER_AGENT") == config.crawl.user_agent
    assert settings.get("LOG_LEVEL") == "WARNING"
    assert settings.getbool("TELNETCONSOLE_ENABLED") is False
    assert settings.getbool("REMOTE_CONTROL_ENABLED") is False
    assert settings.getint("RETRY_TIMES") <= 2
    assert 10 <= settings.getint("DOWNLOAD_TIMEOUT") <= 60
    middlewares = settings.getdict("DOWNLOADER_MIDDLEWARES")
    assert middlewares["newsclean.crawler.warc.CaptureMiddleware"] == WARC_MIDDLEWARE_ORDER
    assert WARC_MIDDLEWARE_ORDER > 600  # outside Retry (550), HttpCompression (590) and Redirect (600)
    assert middlewares["scrapy.downloadermiddlewares.offsite.OffsiteMiddleware"] is None  # ours is per site
    assert middlewares["newsclean.crawler.safety.SafetyMiddleware"] < 100  # before robots.txt is fetched
    assert settings.get("TWISTED_DNS_RESOLVER") == "newsclean.crawler.safety.PublicOnlyResolver"
    assert settings.getdict("ITEM_PIPELINES") == {"newsclean.crawler.pipelines.ArchivePipeline": 300}
    assert settings.get("NEWSCLEAN_STATE_DB") == str(tmp_path / "warc" / "crawl-state.sqlite3")
    assert settings.getdict("DOWNLOAD_SLOTS")["site:example"] == {"concurrency": 2, "delay": 0.5}
    assert settings.get("NEWSCLEAN_WARC_DIR") == str(tmp_path / "warc")
    assert settings.getint("NEWSCLEAN_WARC_MAX_BYTES") == 4096
    assert build_settings(dataclasses.replace(config, crawl=CrawlOptions()), tmp_path).get("LOG_LEVEL") == "INFO"


def _start_requests(spider: NewsSpider) -> list:
    async def collect():
        return [request async for request in spider.start()]

    return asyncio.run(collect())


def test_spider_start_requests_carry_site_category_depth(tmp_path):
    spider = NewsSpider(config=load_config(write(tmp_path, GOOD)))
    requests = _start_requests(spider)
    tasks = [r.meta["newsclean"] for r in requests]
    assert [(r.url, t.site, t.category, t.depth, t.role) for r, t in zip(requests, tasks)] == [
        ("https://example.com/politics/", "example", "politics", 0, "start"),
        ("https://www.example.com/politics/feed.xml", "example", "politics", 0, "start"),
        ("http://cdn.example.net/sports/", "example", "sports", 0, "start"),
        ("http://127.0.0.2:8080/news/", "other.site_2", "news", 0, "start"),
    ]
    assert all(r.errback == spider.errback and r.meta["download_slot"] == f"site:{t.site}"
               for r, t in zip(requests, tasks))
    assert all(r.dont_filter for r in requests)
    assert spider.allowed_domains == ["127.0.0.2", "cdn.example.net", "example.com"]


def test_spider_accepts_a_config_path(tmp_path):
    spider = NewsSpider(config=str(write(tmp_path, MINIMAL_SITE)))
    assert spider.config.site("example").categories == (
        CategoryConfig("politics", ("https://example.com/politics/",)),)


def test_spider_without_config_is_an_error():
    with pytest.raises(ValueError, match="config"):
        NewsSpider()


def test_config_built_in_code():
    config = SitesConfig(sites=(SiteConfig("s", ("example.com",), (CategoryConfig("c", ("http://example.com/",)),)),))
    assert config.crawl == CrawlOptions()
    assert config.site("s").owns_url("http://sub.example.com/x")
    with pytest.raises(KeyError):
        config.site("t")
