"""Unit tests without a reactor: discovery, URL and category rules, config keys, the store, WARC recovery,
address checks and Retry-After parsing."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
from scrapy.http import HtmlResponse, Response, TextResponse, XmlResponse
from test_crawler import _group, read_warc

from newsclean.crawler.config import (
    MAX_NAME_BYTES,
    CategoryConfig,
    CrawlOptions,
    SiteConfig,
    SitesConfig,
    config_to_toml,
    is_safe_name,
    load_config,
    parse_config,
    with_overrides,
)
from newsclean.crawler.discovery import (
    article_section,
    category_for,
    classify_url,
    config_category,
    feed_links,
    page_kind,
    robots_sitemaps,
    sitemap_links,
)
from newsclean.crawler.politeness import parse_retry_after
from newsclean.crawler.safety import (
    PrivateAddressError,
    PublicOnlyResolver,
    RefusedRequest,
    SafetyMiddleware,
    is_private_address_failure,
    is_public_address,
)
from newsclean.crawler.spiders.news import NewsSpider, failure_reason
from newsclean.crawler.store import CrawlStore, FrontierEntry, PageRow, canonical_url
from newsclean.crawler.warc import (
    PageFacts,
    RecordFactory,
    WarcFiles,
    complete_members_end,
    recover_open_files,
    warc_file_name,
)
from newsclean.schemas.sniff import looks_binary

SITE = SiteConfig("s", ("example.com",), (CategoryConfig("news", ("https://example.com/",)),),
                  article_allow=(r"/\d{4}/\d\d/",), article_deny=(r"/video/",),
                  listing_allow=(r"/section/", r"\?page=\d+$"), listing_deny=(r"/section/archive",))


@pytest.mark.parametrize(("url", "role"), [
    ("https://example.com/2024/05/story.html", "article"),
    ("https://example.com/2024/05/video/clip.html", None),
    ("https://example.com/section/world", "listing"),
    ("https://example.com/section/archive", None),
    ("https://example.com/section/2024/05/x", "listing"),  # a listing pattern wins
    ("https://example.com/news?page=2", "listing"),
    ("https://example.com/about", None),
])
def test_classify_url_with_allow_and_deny_patterns(url, role):
    assert classify_url(url, SITE) == role


def test_without_patterns_everything_is_an_article_and_article_links_are_followed():
    plain = SiteConfig("p", ("example.com",), SITE.categories)
    assert classify_url("https://example.com/anything", plain) == "article"
    assert plain.follows_article_links and not SITE.follows_article_links


def test_category_rules_url_meta_aliases_and_fallback():
    site = SiteConfig("s", ("example.com",), SITE.categories, category_from=("meta", "url"),
                      category_pattern=r"^https?://[^/]+/([^/]+)/", category_aliases=(("политика", "politics"),
                                                                                        ("pol", "politics")))
    assert category_for("https://example.com/pol/x.html", site, "news", "uncategorized") == "politics"
    assert category_for("https://example.com/World News/x", site, "news", "uncategorized") == "world-news"
    assert category_for("https://example.com/x.html", site, "news", "uncategorized") == "uncategorized"
    assert category_for("https://example.com/x.html", site, "news", "fb", section="Политика") == "politics"
    assert category_for("https://example.com/x.html", site, "news", "fb", section="Спорт") == "спорт"
    assert category_for("https://example.com/sports/x.html", site, "news", "fb", section="Tech") == "tech"
    config_first = SiteConfig("s", ("example.com",), SITE.categories)
    assert category_for("https://example.com/pol/x.html", config_first, "news", "fb") == "news"


META = SiteConfig("s", ("example.com",), (CategoryConfig("World", ("https://example.com/",)),),
                  category_from=("meta",))


@pytest.mark.parametrize(("section", "expected"), [
    ("Économie", "économie"),
    ("E\u0301conomie", "économie"),  # NFD in, NFC out
    ("Наука и техника", "наука-и-техника"),
    ("समाचार", "समाचार"),  # the vowel signs are marks inside the word, not separators
    ("Straße", "strasse"),  # full case folding: one name for STRASSE and Straße
    ("../../etc/passwd", "etc-passwd"),
    ('a<b>c:d"e|f?g*h\\i', "a-b-c-d-e-f-g-h-i"),  # what NTFS refuses
    ("CON", "_con"), ("lpt1.old", "_lpt1.old"),  # Windows device names
    ("WORLD", "World"),  # the configured spelling of the same name
])
def test_category_names_from_pages_keep_unicode_letters_and_are_safe(section, expected):
    name = category_for("https://example.com/x.html", META, "World", "fb", section=section)
    assert name == expected and is_safe_name(name)


def test_category_names_from_long_sections_are_bounded_in_bytes_and_stay_apart():
    names = {category_for("https://example.com/x.html", META, "World", "fb", section=section)
             for section in ("é" * 1000, "é" * 999 + "a", "x" * 1000, "Économie " + "long " * 200)}
    assert len(names) == 4  # a common start does not merge them
    assert all(is_safe_name(n) and len(n.encode("utf-8")) <= MAX_NAME_BYTES for n in names)
    longest = warc_file_name("s" * MAX_NAME_BYTES, max(names, key=len), datetime.now(UTC), 99999) + ".open"
    assert len(longest.encode("utf-8")) < 255  # one path component on ext4, APFS, NTFS


def test_names_differing_only_in_case_never_share_a_directory(tmp_path):
    doc = {"site": [{"name": "s", "allowed_domains": ["example.com"],
                     "categories": {"World": ["https://example.com/w/"], "world": ["https://example.com/x/"]}}]}
    with pytest.raises(ValueError, match="differ only in case"):
        parse_config(doc)
    doc = {"site": [{"name": "s", "allowed_domains": ["example.com"], "categories": {"a": ["https://example.com/"]},
                     "category_aliases": {"monde": "World", "welt": "world"}}]}
    with pytest.raises(ValueError, match="differ only in case"):
        parse_config(doc)
    with pytest.raises(ValueError, match="at most 80"):
        parse_config({"site": [{"name": "s" * 81, "allowed_domains": ["example.com"],
                                "categories": {"a": ["https://example.com/"]}}]})
    files = WarcFiles(tmp_path, 1 << 20, {"software": "t"})
    records = [RecordFactory().metadata("http://example.com/", datetime.now(UTC), None,
                                        PageFacts("s", "World", 0, "other"))]
    files.write_group("s", "World", records)
    with pytest.raises(ValueError, match="differs only in case"):
        files.write_group("s", "world", records)
    with pytest.raises(ValueError, match="not a safe path segment"):
        files.write_group("s", "x" * 300, records)
    files.close()


SECTIONS = SiteConfig("s", ("example.com",), (
    CategoryConfig("top", ("https://example.com/",)),
    CategoryConfig("politics", ("https://example.com/politics/", "https://example.com/feeds/politics.rss")),
    CategoryConfig("business", ("https://example.com/section/business/index.html",)),
    CategoryConfig("sport", ("https://example.com/section/sport",)),
    CategoryConfig("elsewhere", ("https://other.example.com/politics/",)),
))


@pytest.mark.parametrize(("url", "inherited", "expected"), [
    # the longest start-URL section path decides, whichever start point led here
    ("https://example.com/politics/2024/x.html", "top", "politics"),
    ("https://example.com/politics/2024/x.html", "sport", "politics"),
    ("https://example.com/section/business/2024/x", "top", "business"),  # index.html is not a segment
    ("https://example.com/section/sport/x", "business", "sport"),
    ("https://example.com/feeds/x", "top", "politics"),  # a feed file's folder is its section
    # no section shared, or two sections share as much: the start point that led here
    ("https://example.com/2024/05/x.html", "sport", "sport"),
    ("https://example.com/section/x", "top", "top"),  # business and sport tie on /section
    ("https://example.com/politicsx/y", "top", "top"),  # whole segments only
    # another host's start URLs never claim an article
    ("https://www.example.com/politics/x", "top", "top"),
])
def test_config_category_follows_the_longest_start_url_section(url, inherited, expected):
    assert config_category(url, SECTIONS, inherited) == expected
    assert category_for(url, SECTIONS, inherited, "fb") == expected


def test_article_section_meta():
    html = b'<html><head><meta property="article:section" content=" Business "></head></html>'
    assert article_section(HtmlResponse("https://example.com/", body=html)) == "Business"
    assert article_section(HtmlResponse("https://example.com/", body=b"<html></html>")) is None


def test_sitemaps_index_gzip_news_and_robots():
    index = b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>/a.xml</loc></sitemap></sitemapindex>'
    assert sitemap_links(index, "https://example.com/s.xml") == ("sitemapindex", ["https://example.com/a.xml"])
    news = (b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:news="http://www.google.com/'
            b'schemas/sitemap-news/0.9"><url><loc>https://example.com/1</loc><news:news><news:title>T</news:title>'
            b'</news:news></url></urlset>')
    response = Response("https://example.com/news.xml.gz", body=gzip.compress(news),
                        headers={"Content-Type": "application/x-gzip"})
    kind, body = page_kind(response, expect_html=False)
    assert kind == "sitemap" and sitemap_links(body, response.url) == ("urlset", ["https://example.com/1"])
    robots = TextResponse("https://example.com/robots.txt", body=b"User-agent: *\nSitemap: /s1.xml\nsitemap: https://example.com/s2.xml\n")
    assert page_kind(robots, expect_html=False)[0] == "robots"
    assert robots_sitemaps(robots) == ["https://example.com/s1.xml", "https://example.com/s2.xml"]


def test_feeds_rss_atom_and_kinds():
    atom = (b'<feed xmlns="http://www.w3.org/2005/Atom"><entry><link rel="alternate" href="/a"/></entry>'
            b'<entry><link href="https://example.com/b"/></entry></feed>')
    assert feed_links(atom, "https://example.com/feed") == ["https://example.com/a", "https://example.com/b"]
    assert page_kind(XmlResponse("https://example.com/feed", body=atom), expect_html=False)[0] == "feed"
    assert page_kind(XmlResponse("https://example.com/x.xml", body=atom), expect_html=True)[0] == "other"
    binary = HtmlResponse("https://example.com/b", body=b"GIF89a\x00\x01")
    assert page_kind(binary, expect_html=True)[0] == "binary"
    # one stray NUL in an HTML page, as the cleaner sniffs it (WHATWG: the HTML signature comes first): a page
    stray = HtmlResponse("https://example.com/s", body=b"<!DOCTYPE html><html><body><p>a\x00b</p></body></html>")
    assert page_kind(stray, expect_html=True)[0] == "html"
    assert page_kind(HtmlResponse("https://example.com/c", body=b"\x00\x01\x02 <p>x</p>"), expect_html=True)[0] == "binary"
    assert not looks_binary("<p>ok</p>".encode("utf-16"))  # a BOM: text
    png = Response("https://example.com/p", body=b"\x89PNG", headers={"Content-Type": "image/png"})
    assert page_kind(png, expect_html=True)[0] == "other"


def test_new_config_keys_round_trip_and_validate(tmp_path):
    text = """
[crawl]
contact_url = "https://example.org/crawl"
allow_private_networks = true
state_db = "state/crawl.sqlite3"
refetch_after_days = 7
fallback_category = "misc"
download_timeout = 5
retry_times = 2
max_retry_after = 30
max_redirects = 3

[[site]]
name = "s"
allowed_domains = ["example.com"]
article_allow = ['/\\d{4}/']
listing_deny = ["/tag/"]
follow_article_links = false
category_from = ["url", "config"]
category_pattern = '^https?://[^/]+/([a-z]+)/'
download_delay = 2.5
concurrent_requests = 1
[site.category_aliases]
pol = "politics"
[site.categories]
news = ["https://example.com/"]
"""
    path = tmp_path / "sites.toml"
    path.write_text(text, encoding="utf-8")
    config = load_config(path)
    assert config.crawl.agent().endswith("(+https://example.org/crawl)")
    assert config.state_db_path(tmp_path / "out") == tmp_path / "state" / "crawl.sqlite3"
    site = config.site("s")
    assert site.category_aliases == (("pol", "politics"),) and site.concurrent_requests == 1
    path.write_text(config_to_toml(config), encoding="utf-8")
    again = load_config(path)
    assert again.crawl == config.crawl and again.sites == config.sites
    assert with_overrides(config, refetch_after_days=1, allow_private_networks=False).crawl.refetch_after_days == 1.0


@pytest.mark.parametrize(("site_keys", "fragment"), [
    ("article_allow = ['(']", "invalid regular expression"),
    ('category_from = ["url"]', "category_pattern: required"),
    ("category_from = ['url']\ncategory_pattern = 'no-group'", "exactly one group"),
    ('category_from = ["guess"]', "category_from"),
    ("follow_article_links = 1", "true or false"),
])
def test_bad_site_rules_are_refused(site_keys, fragment):
    import tomllib

    text = f'[[site]]\nname = "s"\nallowed_domains = ["example.com"]\n{site_keys}\n[site.categories]\nn = ["https://example.com/"]\n'
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(")):
        parse_config(tomllib.loads(text))


def test_fallback_category_must_be_a_safe_name():
    with pytest.raises(ValueError, match="safe path segment"):
        parse_config({"crawl": {"fallback_category": "../x"}, "site": [
            {"name": "s", "allowed_domains": ["example.com"], "categories": {"c": ["https://example.com/"]}}]})


def test_store_known_articles_refetch_window_and_jobs(tmp_path):
    store = CrawlStore(tmp_path / "s.sqlite3")
    assert not store.start_job("j1") and store.start_job("j1")
    url = canonical_url("https://example.com/b?z=1&a=2#frag")
    assert url == "https://example.com/b?a=2&z=1"
    week_ago = datetime.now(UTC) - timedelta(days=7)
    store.ack("j1", PageRow((url,), "s", "c", "article", 200, week_ago, "f.warc.gz", 10, "sha1:X", "stored"),
              links=[FrontierEntry("https://example.com/n", "https://example.com/n", "s", "c", 1, "article")])
    assert store.is_known_article(url) and store.is_known_article(url, refetch_after_days=30)
    assert not store.is_known_article(url, refetch_after_days=3)
    assert store.done_in_job("j1", url) and not store.done_in_job("j2", url)
    assert [e.url for e in store.pending("j1")] == ["https://example.com/n"]
    store.ack("j1", PageRow(("https://example.com/gone",), "s", "c", "other", 404, week_ago, "f", 1, None, "http_404"))
    assert not store.is_known_article("https://example.com/gone")
    store.finish_job("j1")
    assert store.job_finished("j1")
    store.close()
    store.close()


def test_recovery_cuts_to_the_last_acknowledged_group(tmp_path, monkeypatch):
    store = CrawlStore(tmp_path / "s.sqlite3")
    files, factory = WarcFiles(tmp_path / "out", 10**9, {"software": "t"}, store, "j"), RecordFactory()
    first = files.write_group("s", "c", _group(factory, "http://127.0.0.2:1/1.html"))
    stored_as = files.relative(first.path)
    assert stored_as == f"s/c/{Path(first.path).name}"  # relative to the output folder, not to the CWD
    store.ack("j", PageRow(("u1",), "s", "c", "article", 200, datetime.now(UTC), stored_as, 0, None,
                           "stored"), warc_file=stored_as, acked_bytes=first.end)
    second = files.write_group("s", "c", _group(factory, "http://127.0.0.2:1/2.html"))  # never acknowledged
    files._outputs[("s", "c")]._fh.write(b"\x1f\x8b\x08\x00torn")  # a member cut by the kill
    files._outputs[("s", "c")]._fh.flush()
    path = Path(first.path)
    assert complete_members_end(path)[0] == second.end
    monkeypatch.chdir(tmp_path)  # the resumed crawl spells --out another way: relative to a new CWD
    (done,) = recover_open_files(Path("out"), store)
    assert done.kept == first.end and done.final and not path.exists()
    assert [r.type for r in read_warc(Path(done.final))] == ["warcinfo", "response", "request", "metadata"]
    assert store.page("u1")["warc_file"] == stored_as.removesuffix(".open")
    # without a store: cut to the last complete record
    other = WarcFiles(tmp_path / "o2", 10**9, {"software": "t"})
    group = other.write_group("s", "c", _group(factory, "http://127.0.0.2:1/3.html"))
    other._outputs[("s", "c")]._fh.write(b"\x1f\x8b\x08\x00torn")
    other._outputs[("s", "c")]._fh.flush()
    (done,) = recover_open_files(tmp_path / "o2")
    assert done.kept == group.end
    # a file holding only its warcinfo is removed
    empty = WarcFiles(tmp_path / "o3", 10**9, {"software": "t"})
    empty._output("s", "c")._open()
    (done,) = recover_open_files(tmp_path / "o3")
    assert done.final is None and not list((tmp_path / "o3").rglob("*.warc.gz*"))
    store.close()


@pytest.mark.parametrize(("address", "public"), [
    ("8.8.8.8", True), ("2001:4860:4860::8888", True), ("127.0.0.2", False), ("10.1.2.3", False),
    ("192.168.0.1", False), ("169.254.169.254", False), ("::1", False), ("fe80::1", False),
    ("::ffff:127.0.0.1", False), ("100.64.0.1", False), ("224.0.0.1", False), ("example.com", False),
])
def test_public_addresses(address, public):
    assert is_public_address(address) is public


def test_safety_middleware_refusals():
    mw = SafetyMiddleware({"a": ["example.com"], "b": ["example.org"]}, allow_private=False)
    from newsclean.crawler.items import PageTask

    task = PageTask("a", "c", 0, "start", None, "k", "t")
    mw.check("https://www.example.com/x", {"newsclean": task})
    for url, meta, reason in [
        ("ftp://example.com/x", {"newsclean": task}, "bad_scheme"),
        ("file:///etc/passwd", {"newsclean": task}, "bad_scheme"),
        ("https://example.org/x", {"newsclean": task}, "offsite"),
        ("https://example.org/x", {"newsclean": task, "redirect_urls": ["https://example.com/"]}, "offsite_redirect"),
    ]:
        with pytest.raises(RefusedRequest) as info:
            mw.check(url, meta)
        assert info.value.reason == reason
    mw.check("https://example.org/robots.txt", {})  # robots.txt of any configured site
    private = SafetyMiddleware({"a": ["127.0.0.2"]}, allow_private=False)
    with pytest.raises(RefusedRequest, match="not a public address"):
        private.check("http://127.0.0.2:8080/", {"newsclean": task})
    SafetyMiddleware({"a": ["127.0.0.2"]}, allow_private=True).check("http://127.0.0.2:8080/", {"newsclean": task})


def test_resolver_refuses_private_answers():
    with pytest.raises(PrivateAddressError):
        PublicOnlyResolver._check_public("127.0.0.1", "localhost")
    assert PublicOnlyResolver._check_public("93.184.216.34", "example.com") == "93.184.216.34"


def test_retry_after_values():
    now = datetime(2015, 10, 21, 7, 28, 0, tzinfo=UTC)
    assert parse_retry_after(b"120") == 120.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now=now) == 30.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now=now) == 0.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_crawl_flags_of_the_cli_override_the_config(tmp_path):
    from newsclean.cli import build_parser
    from newsclean.crawler.run import apply_crawl_options, build_arg_parser

    config = parse_config({"site": [{"name": "s", "allowed_domains": ["example.com"],
                                     "categories": {"c": ["https://example.com/"]}}]})
    for parser, head in ((build_parser(), ["crawl"]), (build_parser(), ["run"]), (build_arg_parser(), [])):
        args, _ = parser.parse_known_args([*head, "--config", "x", "--out", "o", "--jobdir", "j",
                                           "--refetch-after", "3", "--allow-private-networks"])
        crawl = apply_crawl_options(config, args).crawl
        assert (crawl.refetch_after_days, crawl.allow_private_networks, str(args.jobdir)) == (3.0, True, "j")
        args, _ = parser.parse_known_args([*head, "--config", "x", "--out", "o"])
        assert apply_crawl_options(config, args) == config and args.jobdir is None


# ------------------------------------------------------------------ requests earlier jobs left pending


def _adopting_spider(store: CrawlStore, job: str, **crawl) -> NewsSpider:
    """A spider of a two-category site starting ``job`` in ``store``, with ``[crawl]`` options ``crawl``."""
    site = SiteConfig("s", ("example.com",), (CategoryConfig("a", ("https://example.com/a/",)),
                                              CategoryConfig("b", ("https://example.com/b/",))))
    spider = NewsSpider(SitesConfig((site,), CrawlOptions(**crawl)))
    store.start_job(job)
    spider.crawl_state = SimpleNamespace(store=store, job=job, resumed=False, is_known_article=store.is_known_article)
    return spider


def _left_pending(store: CrawlStore, job: str, paths: list[str]) -> None:
    """``job`` leaves one pending article request per ``/<category>/<name>`` path."""
    store.start_job(job)
    store.add_frontier(job, [FrontierEntry(f"https://example.com{p}", f"https://example.com{p}", "s",
                                           p.split("/")[1], 1, "article") for p in paths])


def test_requests_over_a_budget_of_the_new_job_stay_pending_for_a_later_one(tmp_path):
    store = CrawlStore(tmp_path / "s.sqlite3")
    _left_pending(store, "j1", ["/a/1", "/a/2", "/a/3"])
    spider = _adopting_spider(store, "j2", max_pages=3)  # the two start points and one request left pending
    assert [e.url for e in spider._start_entries() if e.role == "article"] == ["https://example.com/a/1"]
    assert [e.url for e in store.pending("j1")] == ["https://example.com/a/2", "https://example.com/a/3"]
    later = _adopting_spider(store, "j3")
    adopted = [e.url for e in later._start_entries() if e.role == "article"]
    assert sorted(adopted) == ["https://example.com/a/1", "https://example.com/a/2", "https://example.com/a/3"]
    assert store.pending("j1") == store.pending("j2") == []  # j2's start points are j3's too
    store.close()


def test_adopted_requests_respect_max_pages_per_category_and_known_articles(tmp_path):
    store = CrawlStore(tmp_path / "s.sqlite3")
    known = "https://example.com/b/known"
    store.ack("j0", PageRow((known,), "s", "b", "article", 200, datetime.now(UTC), "f.warc.gz", 0, None, "stored"))
    _left_pending(store, "j1", ["/a/1", "/a/2", "/a/3", "/b/known", "/b/1", "/b/2"])
    spider = _adopting_spider(store, "j2", max_pages_per_category=2)  # a start point and one more per category
    entries = spider._start_entries()
    assert [(e.category, e.url) for e in entries if e.role == "article"] == [
        ("a", "https://example.com/a/1"), ("b", "https://example.com/b/1")]
    assert spider.report.category("s", "b").skipped_known == 1
    assert [e.url for e in store.pending("j1")] == ["https://example.com/a/2", "https://example.com/a/3",
                                                    "https://example.com/b/2"]  # the known article is settled
    store.close()


def test_a_dns_failure_of_any_layer_is_named_dns_and_a_listed_refusal_private_address():
    from twisted.internet.error import DNSLookupError
    from twisted.python.failure import Failure
    from twisted.web._newclient import ResponseFailed

    assert failure_reason(DNSLookupError("no such host"), ["https://example.com/"]) == ("failed", "dns")
    listed = ResponseFailed([Failure(PrivateAddressError("refused by the resolver"))])
    assert is_private_address_failure(listed)
    assert failure_reason(listed, ["https://example.com/"]) == ("failed", "private_address")


def test_category_names_of_a_site_are_computed_once_not_per_url(monkeypatch):
    import newsclean.crawler.discovery as discovery

    calls = []
    real = discovery.name_key
    monkeypatch.setattr(discovery, "name_key", lambda name: calls.append(name) or real(name))
    site = SiteConfig("s", ("example.com",), tuple(CategoryConfig(f"Cat{i}", (f"https://example.com/c{i}/",))
                                                   for i in range(20)),
                      category_from=("url",), category_pattern=r"^https?://[^/]+/([^/]+)/",
                      category_aliases=(("pol", "politics"),))
    names = [category_for(f"https://example.com/CAT{i % 20}/x{i}.html", site, "Cat0", "fb") for i in range(200)]
    assert names == [f"Cat{i % 20}" for i in range(200)]  # the configured spelling
    assert category_for("https://example.com/pol/x.html", site, "Cat0", "fb") == "politics"
    assert len(calls) <= 2 * 201 + 22  # two keys a URL, the site's 22 names once
