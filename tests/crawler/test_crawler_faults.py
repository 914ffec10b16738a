"""One crawl of a local news site with every start-point kind and every fault, checked in the report and the WARCs.

Served on 127.0.0.2 (site ``news``) and 127.0.0.3 (site ``beta``) by newsclean.demo.localsite; the crawl runs
in a child process (``python -m newsclean.crawler.run``). Start points: robots.txt announcing a sitemap index
(a plain sitemap, a gzip news sitemap and a gzip bomb), an RSS feed, and a section page with pagination, articles
and fault endpoints: 404, 500, 503 with a short and a long Retry-After, a redirect loop, redirects
off the site, a slow page past the timeout, an oversized body, a binary body served as text/html,
a page disallowed by robots.txt and a windows-1251 listing whose charset is only in a meta tag.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import textwrap
from collections import Counter
from contextlib import redirect_stdout
from io import StringIO
from types import SimpleNamespace
from urllib.parse import quote

import pytest
from repo import ROOT
from test_crawler import read_warc, warc_files
from warcio.checker import Checker

from newsclean.crawler.run import CrawlSummary
from newsclean.demo.localsite import LocalSites, Resource, StaticSite

REPO = ROOT
CYRILLIC_PATH = "/politics/статья.html"
MAXSIZE = 50_000


def page(*hrefs: str, text: str = "Some text.", head: str = "") -> str:
    links = "".join(f'<li><a href="{h}">link</a></li>' for h in hrefs)
    return f"<html><head><title>t</title>{head}</head><body><p>{text}</p><ul>{links}</ul></body></html>"


def retry_once(hit: int) -> Resource:
    """503 with ``Retry-After: 1`` on the first request, then the article."""
    if hit == 1:
        return Resource(b"busy", status=503, headers=(("Retry-After", "1"),))
    return Resource(page(text="Served on the second try.").encode())


def build_news(base: str, beta: str) -> StaticSite:
    site = StaticSite("news")
    site.add("/robots.txt", f"User-agent: *\nDisallow: /private/\nSitemap: {base}/sitemap-index.xml\n",
             content_type="text/plain")
    site.add("/sitemap-index.xml", f"""<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>{base}/sitemaps/world.xml</loc></sitemap>
<sitemap><loc>{base}/sitemaps/news.xml.gz</loc></sitemap>
<sitemap><loc>{base}/sitemaps/bomb.xml.gz</loc></sitemap>
</sitemapindex>""", content_type="application/xml")
    # a gzip bomb: a few hundred bytes that unpack to 4 x download_maxsize
    bomb = b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' + b" " * (4 * MAXSIZE)
    site.add("/sitemaps/bomb.xml.gz", gzip.compress(bomb), content_type="application/x-gzip")
    site.add("/sitemaps/world.xml", f"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>{base}/world/w1.html</loc><lastmod>2024-05-01</lastmod></url>
<url><loc>{base}/world/w2.html</loc></url>
</urlset>""", content_type="application/xml")
    news_sitemap = f"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">
<url><loc>{base}/world/n1.html</loc><news:news><news:publication><news:name>News</news:name>
<news:language>en</news:language></news:publication><news:publication_date>2024-05-01</news:publication_date>
<news:title>Breaking</news:title></news:news></url>
</urlset>"""
    site.add("/sitemaps/news.xml.gz", gzip.compress(news_sitemap.encode()), content_type="application/x-gzip")
    for path in ("/world/w1.html", "/world/w2.html", "/world/n1.html", "/tech/t1.html", "/tech/t2.html",
                 "/politics/p1.html"):
        site.add(path, page(text=f"Article {path}."))
    site.add("/tech/feed.rss", f"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>Tech</title><link>{base}/tech/</link>
<item><title>t1</title><link>{base}/tech/t1.html</link></item>
<item><title>t2</title><link>/tech/t2.html</link></item>
<item><title>off</title><link>{beta}/economy/e9.html</link></item>
</channel></rss>""", content_type="application/rss+xml")
    site.add("/politics/", page(
        "/politics/p1.html", "/politics/page/2", "/politics/page/3", "/faults/404", "/faults/500",
        "/faults/503-retry", "/faults/503-long", "/faults/loop-a", "/faults/offsite", "/faults/elsewhere",
        "/faults/slow", "/faults/big", "/faults/binary", "/private/secret.html", "/about/team"))
    site.add("/politics/page/2", page("/politics/p2.html"))
    site.add("/politics/p2.html", page(text="Match report.", head='<meta property="article:section" content="Sport">'))
    cp1251 = ('<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1251">'
              f'<title>Новости</title></head><body><p>Главные новости дня.</p><a href="{CYRILLIC_PATH}">Статья</a>'
              '</body></html>')
    site.add("/politics/page/3", cp1251.encode("cp1251"), content_type="text/html")
    site.add(quote(CYRILLIC_PATH), page(text="Cyrillic URL reached."))
    site.add("/faults/500", page(text="Server error."), status=500)
    site.resources["/faults/503-retry"] = retry_once
    site.add("/faults/503-long", b"come back tomorrow", status=503, headers=(("Retry-After", "3600"),))
    site.add("/faults/loop-a", b"", status=302, headers=(("Location", "/faults/loop-b"),))
    site.add("/faults/loop-b", b"", status=302, headers=(("Location", "/faults/loop-a"),))
    site.add("/faults/offsite", b"", status=302, headers=(("Location", f"{beta}/start/"),))
    site.add("/faults/elsewhere", b"", status=301, headers=(("Location", "http://127.0.0.9:9/x.html"),))
    site.resources["/faults/slow"] = Resource(page(text="Too late.").encode(), delay=3.0)
    site.add("/faults/big", b"<html><body>" + b"x" * (4 * MAXSIZE) + b"</body></html>")
    site.add("/faults/binary", b"\x00\x01\x02GIF89a\x00\x00binary\xff\xfe" * 20, content_type="text/html")
    site.add("/private/secret.html", page(text="Secret."))
    return site


def build_beta() -> StaticSite:
    site = StaticSite("beta")
    site.add("/start/", page("/economy/e1.html", "/misc.html"))
    site.add("/economy/e1.html", page(text="Economy."))
    site.add("/misc.html", page(text="No section in the URL."))
    return site


def config_text(base: str, beta: str) -> str:
    host, beta_host = base.split("//")[1].split(":")[0], beta.split("//")[1].split(":")[0]
    return textwrap.dedent(f"""\
        [crawl]
        contact_url = "https://example.org/newsclean-tests"
        depth_limit = 2
        autothrottle = false
        download_delay = 0.0
        concurrent_requests_per_domain = 8
        allow_private_networks = true
        download_timeout = 1.5
        download_maxsize = {MAXSIZE}
        retry_times = 1
        max_retry_after = 5
        max_redirects = 5

        [[site]]
        name = "news"
        allowed_domains = ["{host}"]
        article_allow = ['\\.html$', '/faults/']
        listing_allow = ['/page/\\d+$']
        category_from = ["meta", "config"]
        [site.category_aliases]
        sport = "sports"
        [site.categories]
        world = ["{base}/robots.txt"]
        tech = ["{base}/tech/feed.rss"]
        politics = ["{base}/politics/"]

        [[site]]
        name = "beta"
        allowed_domains = ["{beta_host}"]
        category_from = ["url"]
        category_pattern = '^https?://[^/]+/([a-z]+)/[^/]+\\.html$'
        [site.categories]
        front = ["{beta}/start/"]
        """)


class Result(SimpleNamespace):
    def responses(self, url: str) -> list:
        return [r for r in self.records if r.type == "response" and r.uri == url]

    def metadata(self, url: str) -> dict[str, str]:
        (rec,) = [r for r in self.records if r.type == "metadata" and r.uri == url]
        return dict(line.split(": ", 1) for line in rec.payload.decode().splitlines() if line)


@pytest.fixture(scope="module")
def result(tmp_path_factory) -> Result:
    tmp = tmp_path_factory.mktemp("faults")
    out, config = tmp / "warc", tmp / "sites.toml"
    news, beta = StaticSite("news"), build_beta()
    with LocalSites([news, beta]) as servers:
        base, beta_url = servers.base_urls["news"], servers.base_urls["beta"]
        news.resources.update(build_news(base, beta_url).resources)
        config.write_text(config_text(base, beta_url), encoding="utf-8")
        proc = subprocess.run([sys.executable, "-m", "newsclean.crawler.run", "--config", str(config), "--out", str(out),
                               "--log-level", os.environ.get("NC_LOG", "INFO"), "--summary-json", str(tmp / "summary.json")],
                              capture_output=True, text=True, timeout=120, cwd=REPO, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    assert "Traceback" not in proc.stderr and "Spider error" not in proc.stderr, proc.stderr[-4000:]
    files = warc_files(out)
    return Result(out=out, base=base, beta=beta_url, files=files, records=[r for f in files for r in read_warc(f)],
                  summary=CrawlSummary.from_json((tmp / "summary.json").read_text(encoding="utf-8")),
                  hits=news.hits, beta_hits=beta.hits, stdout=proc.stdout, stderr=proc.stderr)


def test_every_file_passes_warcio_check(result):
    assert result.files and not list(result.out.rglob("*.open"))
    with redirect_stdout(StringIO()) as report:
        status = Checker(SimpleNamespace(inputs=[str(f) for f in result.files], verbose=False)).process_all()
    assert status == 0, report.getvalue()


def test_every_page_group_has_a_metadata_record_linked_to_its_final_response(result):
    ids = {r.headers["WARC-Record-ID"]: r for r in result.records if r.type == "response"}
    metadata = [r for r in result.records if r.type == "metadata"]
    assert metadata
    for meta in metadata:
        final = ids[meta.headers["WARC-Concurrent-To"]]
        assert final.file == meta.file and final.index == meta.index - 2  # response, request, metadata
        assert meta.headers["WARC-Newsclean-Page-Type"] == final.headers["WARC-Newsclean-Page-Type"]
        fields = dict(line.split(": ", 1) for line in meta.payload.decode().splitlines() if line)
        assert {"site", "category", "page-type", "depth", "role", "outcome"} <= set(fields)
        assert (fields["site"], fields["category"]) == (meta.headers["WARC-Newsclean-Site"],
                                                       meta.headers["WARC-Newsclean-Category"])


def test_pipeline_reader_sees_one_page_per_response_record(result):
    from newsclean.pipeline.warc_reader import iter_warc_file

    for path in result.files:
        items = list(iter_warc_file(str(path)))
        assert len(items) == sum(1 for r in read_warc(path) if r.type == "response"), path


def test_robots_txt_sitemap_index_and_gzip_news_sitemap(result):
    b = result.base
    world = result.summary.categories[("news", "world")]
    assert (world.stored, world.listings, world.failed, world.skipped) == (3, 4, {"too_large": 1}, {})
    assert result.metadata(f"{b}/sitemaps/bomb.xml.gz")["reason"] == "too_large"  # not non_html:application/x-gzip
    for url in (f"{b}/world/w1.html", f"{b}/world/w2.html", f"{b}/world/n1.html"):
        (rec,) = result.responses(url)
        assert rec.headers["WARC-Newsclean-Category"] == "world"
        assert rec.headers["WARC-Newsclean-Page-Type"] == "article"
    assert result.metadata(f"{b}/robots.txt")["page-type"] == "robots"
    assert result.metadata(f"{b}/sitemap-index.xml")["page-type"] == "sitemap"
    gz = result.responses(f"{b}/sitemaps/news.xml.gz")[0]
    assert gz.payload[:2] == b"\x1f\x8b"  # stored as received
    # the sitemap hops are not link hops: articles of a robots.txt start point are at depth 1
    assert result.metadata(f"{b}/world/n1.html")["depth"] == "1"
    assert result.metadata(f"{b}/world/n1.html")["via"] == f"{b}/sitemaps/news.xml.gz"


def test_rss_feed_entries_stay_on_their_site(result):
    tech = result.summary.categories[("news", "tech")]
    assert (tech.stored, tech.listings) == (2, 1)
    assert result.metadata(f"{result.base}/tech/feed.rss")["page-type"] == "feed"
    assert "/economy/e9.html" not in result.beta_hits


def test_listing_pages_followed_and_category_from_article_section(result):
    b = result.base
    assert result.metadata(f"{b}/politics/page/2")["page-type"] == "listing"
    (p2,) = result.responses(f"{b}/politics/p2.html")
    assert p2.headers["WARC-Newsclean-Category"] == "sports"  # article:section "Sport" through the alias
    assert p2.file.parent.name == "sports"
    assert result.metadata(f"{b}/politics/p2.html")["requested-category"] == "politics"
    assert result.summary.categories[("news", "sports")].stored == 1
    assert "/about/team" not in result.hits  # matches no article or listing pattern: not followed


def test_category_from_url_path_and_the_fallback(result):
    beta = result.summary.categories
    assert beta[("beta", "economy")].stored == 1
    assert beta[("beta", "uncategorized")].stored == 1  # /misc.html: the URL rule cannot tell
    (misc,) = result.responses(f"{result.beta}/misc.html")
    assert misc.file.parent.name == "uncategorized"


def test_windows_1251_page_declared_only_in_meta(result):
    b = result.base
    (listing,) = result.responses(f"{b}/politics/page/3")
    assert "Главные".encode("cp1251") in listing.payload  # bytes as received
    assert result.metadata(f"{b}/politics/page/3")["charset"] == "cp1251"
    (article,) = result.responses(f"{b}{quote(CYRILLIC_PATH)}")  # the link was decoded as windows-1251
    assert article.status == 200


def fault(result, path: str) -> tuple[list[int], dict[str, str] | None]:
    url = f"{result.base}{path}"
    statuses = [r.status for r in result.records if r.type == "response" and r.uri.startswith(url)]
    metas = [r for r in result.records if r.type == "metadata" and r.uri == url]
    return statuses, (result.metadata(url) if metas else None)


def test_fault_endpoints_in_the_report_and_the_warcs(result):
    politics = result.summary.categories[("news", "politics")]
    assert politics.failed == {"http_404": 1, "http_500": 1, "http_503": 1, "redirect_loop": 1,
                               "offsite_redirect": 2, "timeout": 1, "too_large": 1}
    assert politics.skipped == {"binary:text/html": 1, "robots_txt": 1}
    statuses, meta = fault(result, "/faults/404")
    assert statuses == [404] and meta["reason"] == "http_404"
    statuses, meta = fault(result, "/faults/500")
    assert statuses == [500, 500]  # retried once, each attempt recorded
    statuses, meta = fault(result, "/faults/503-retry")
    assert statuses == [503, 200] and meta["outcome"] == "stored"
    statuses, meta = fault(result, "/faults/503-long")
    assert statuses == [503] and meta["retry-after"] == "3600" and meta["reason"] == "http_503"
    statuses, meta = fault(result, "/faults/loop-")  # given up at the first repeated URL, not at max_redirects
    assert statuses == [302] * 2 and Counter(r.uri[-1] for r in result.records
                                              if r.type == "response" and "/faults/loop-" in r.uri) == {"a": 1, "b": 1}
    assert result.metadata(f"{result.base}/faults/loop-b")["reason"] == "redirect_loop"  # its last response
    assert (result.hits["/faults/loop-a"], result.hits["/faults/loop-b"]) == (1, 1)
    statuses, meta = fault(result, "/faults/offsite")
    assert statuses == [302] and meta["reason"] == "offsite_redirect"
    assert "/start/" in result.beta_hits and result.beta_hits["/start/"] == 1  # beta's own crawl only
    statuses, meta = fault(result, "/faults/elsewhere")
    assert statuses == [301] and meta["reason"] == "offsite_redirect"
    for path in ("/faults/slow", "/faults/big"):  # no response: nothing in the WARC files, reported only
        assert fault(result, path) == ([], None)
    assert result.hits["/faults/slow"] == 2  # timed out, retried once
    statuses, meta = fault(result, "/faults/binary")
    assert statuses == [200] and meta["reason"] == "binary:text/html"
    assert result.responses(f"{result.base}/faults/binary")[0].payload.startswith(b"\x00\x01\x02GIF89a")
    assert "/private/secret.html" not in result.hits


def test_report_json_next_to_the_warcs_and_printed(result):
    reports = sorted(result.out.glob("crawl-report-*.json"))
    assert len(reports) == 1
    assert CrawlSummary.from_json(reports[0].read_text(encoding="utf-8")) == result.summary
    assert result.summary.report_path == str(reports[0])
    assert "news/politics: fetched" in result.stdout and "failed 8 (http_404=1" in result.stdout
    totals = result.summary
    assert totals.total("stored") == sum(c.stored for c in totals.categories.values())
    assert totals.total("bytes") == totals.payload_bytes == sum(
        len(r.payload) for r in result.records if r.type == "response")
    for entry in totals.categories.values():
        assert entry.fetched + entry.skipped_known <= entry.stored + entry.listings + sum(
            entry.skipped.values()) + sum(entry.failed.values()) + entry.skipped_known


def test_user_agent_names_the_contact_url(result):
    requests = [r for r in result.records if r.type == "request"]
    assert requests
    assert all("+https://example.org/newsclean-tests" in r.http_header("User-Agent") for r in requests)
