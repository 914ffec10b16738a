"""The crawler end to end on 127.0.0.1 loopback sites, and its WARC output against docs/CONTRACTS.md.

Crawls run in child processes (Twisted's reactor runs once per process). Sites are served by
newsclean.demo.localsite on 127.0.0.2, 127.0.0.3: never any other address.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
import subprocess
import sys
import textwrap
from contextlib import redirect_stdout
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from types import SimpleNamespace

import pytest
from repo import ROOT
from scrapy.http import HtmlResponse, Request, Response, XmlResponse
from warcio.archiveiterator import ArchiveIterator
from warcio.checker import Checker

from newsclean.crawler.config import CategoryConfig, CrawlOptions, SiteConfig, SitesConfig
from newsclean.crawler.discovery import page_links
from newsclean.crawler.items import PageTask
from newsclean.crawler.run import CrawlSummary, run_crawl_subprocess
from newsclean.crawler.warc import (
    CAPTURES_KEY,
    CaptureMiddleware,
    PageFacts,
    RecordFactory,
    WarcFiles,
    http_response_headers,
)
from newsclean.demo.localsite import LocalSites, StaticSite

REPO = ROOT
NAME_RE = re.compile(r"(?P<site>[A-Za-z0-9_.-]+)-(?P<cat>[A-Za-z0-9_.-]+)-\d{8}T\d{6}Z-\d{5}\.warc\.gz")
USER_AGENT = "newsclean-test/0.1 (+https://example.org/newsclean)"
GZIP_HTML = b'<html><body><p>Compressed page.</p><a href="/politics/from-gzip.html">more</a></body></html>'


class HitLog(dict):
    """A site's resource map that remembers every path the test server looked up."""

    def __init__(self) -> None:
        super().__init__()
        self.hits: list[str] = []

    def get(self, key, default=None):  # called by the server for every GET
        self.hits.append(key)
        return super().get(key, default)


def page(*hrefs: str, text: str = "Some text.") -> str:
    links = "".join(f'<li><a href="{h}">link</a></li>' for h in hrefs)
    return f"<html><head><title>t</title></head><body><p>{text}</p><ul>{links}</ul></body></html>"


def build_alpha(beta_url: str) -> StaticSite:
    """Site alpha: three categories (politics, sports, an RSS-fed world) and every awkward case."""
    site = StaticSite("alpha", resources=HitLog())
    site.add("/robots.txt", "User-agent: *\nDisallow: /private/\n", content_type="text/plain")
    site.add("/politics/", page(
        "/politics/a1.html", "/missing.html", "/politics/gz.html", "/media/photo", "/politics/empty.html",
        "/private/secret.html", f"{beta_url}/offsite.html", "/sports/", "/old-url", "/politics/broken.html",
        "/politics/logo.png", "mailto:desk@example.org", "javascript:void(0)", "/sports/s1.html"))
    site.add("/politics/a1.html", page("/politics/a2.html", "/politics/"))
    site.add("/politics/a2.html", page("/politics/a3.html"))
    site.add("/politics/a3.html", page(text="Too deep."))
    site.add("/politics/gz.html", gzip.compress(GZIP_HTML), headers=(("Content-Encoding", "gzip"),))
    site.add("/politics/from-gzip.html", page(text="Reached through a gzip page."))
    site.add("/politics/empty.html", b"")
    site.add("/politics/broken.html", page(text="Server error."), status=500)
    site.add("/old-url", b"", status=301, headers=(("Location", "/politics/moved.html"),))
    site.add("/politics/moved.html", page(text="Moved here."))
    site.add("/media/photo", b'\x89PNG\r\n\x1a\n<a href="/from-image.html">x</a>', content_type="image/png")
    site.add("/sports/", page("/sports/s1.html"))
    site.add("/sports/s1.html", page(text="Match report."))
    site.add("/world/feed.xml", f"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>World</title>
<item><title>w1</title><link>/world/w1.html</link></item>
<item><title>off</title><link>{beta_url}/offsite-feed.html</link></item>
</channel></rss>""", content_type="application/rss+xml")
    site.add("/world/w1.html", page(text="World news."))
    return site


def build_beta(alpha_url: str) -> StaticSite:
    """Site beta: one category; it links to alpha, which beta's crawl must not follow."""
    site = StaticSite("beta", resources=HitLog())
    site.add("/news/", page("/news/b1.html", f"{alpha_url}/from-beta.html"))
    site.add("/news/b1.html", page(text="Beta article."))
    site.add("/offsite.html", page(text="Only alpha links here."))
    return site


def host_of(url: str) -> str:
    return url.split("//", 1)[1].split(":", 1)[0]


@dataclass
class Rec:
    """One WARC record, read back."""

    file: Path
    index: int
    type: str
    headers: dict[str, str]
    status: int | None
    http_headers: list[tuple[str, str]]
    payload: bytes

    @property
    def uri(self) -> str:
        return self.headers.get("WARC-Target-URI", "")

    def http_header(self, name: str) -> str | None:
        return next((v for k, v in self.http_headers if k.lower() == name.lower()), None)


def read_warc(path: Path) -> list[Rec]:
    out = []
    with open(path, "rb") as fh:
        for i, record in enumerate(ArchiveIterator(fh)):
            http = record.http_headers if record.rec_type in {"request", "response"} else None
            status = int(http.get_statuscode()) if http is not None and record.rec_type == "response" else None
            out.append(Rec(path, i, record.rec_type, dict(record.rec_headers.headers), status,
                           list(http.headers) if http is not None else [], record.raw_stream.read()))
    return out


def warc_files(out: Path) -> list[Path]:
    return sorted(out.rglob("*.warc.gz"))


@dataclass
class Crawl:
    out: Path
    files: list[Path]
    records: list[Rec]
    summary: CrawlSummary
    stdout: str
    alpha: str
    beta: str
    alpha_hits: list[str]
    beta_hits: list[str]

    def responses(self, site: str | None = None, category: str | None = None) -> list[Rec]:
        return [r for r in self.records if r.type == "response"
                and site in (None, r.headers["WARC-Newsclean-Site"])
                and category in (None, r.headers["WARC-Newsclean-Category"])]

    def response(self, url: str) -> Rec:
        (match,) = [r for r in self.responses() if r.uri == url]
        return match


def crawl_config_text(alpha: str, beta: str) -> str:
    return textwrap.dedent(f"""\
        [crawl]
        user_agent = "{USER_AGENT}"
        depth_limit = 2
        download_delay = 0.0
        autothrottle = false
        obey_robots = true
        concurrent_requests_per_domain = 8
        allow_private_networks = true

        [[site]]
        name = "alpha"
        allowed_domains = ["{host_of(alpha)}"]
        [site.categories]
        politics = ["{alpha}/politics/"]
        sports = ["{alpha}/sports/"]
        world = ["{alpha}/world/feed.xml"]

        [[site]]
        name = "beta"
        allowed_domains = ["{host_of(beta)}"]
        [site.categories]
        news = ["{beta}/news/"]
        """)


@pytest.fixture(scope="module")
def crawl(tmp_path_factory) -> Crawl:
    """One crawl of alpha + beta through the command line, ``python -m newsclean.crawler.run``."""
    tmp = tmp_path_factory.mktemp("crawl")
    out, config_path, summary_path = tmp / "warc", tmp / "sites.toml", tmp / "summary.json"
    alpha_site, beta_site = StaticSite("alpha", resources=HitLog()), StaticSite("beta", resources=HitLog())
    with LocalSites([alpha_site, beta_site]) as servers:
        alpha, beta = servers.base_urls["alpha"], servers.base_urls["beta"]
        alpha_site.resources.update(build_alpha(beta).resources)
        beta_site.resources.update(build_beta(alpha).resources)
        config_path.write_text(crawl_config_text(alpha, beta), encoding="utf-8")
        proc = subprocess.run(
            [sys.executable, "-m", "newsclean.crawler.run", "--config", str(config_path), "--out", str(out),
             "--summary-json", str(summary_path)],
            capture_output=True, text=True, timeout=120, cwd=REPO, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    assert "Spider error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-4000:]
    files = warc_files(out)
    records = [rec for f in files for rec in read_warc(f)]
    summary = CrawlSummary.from_json(summary_path.read_text(encoding="utf-8"))
    return Crawl(out, files, records, summary, proc.stdout, alpha, beta,
                 alpha_site.resources.hits, beta_site.resources.hits)


def test_files_follow_the_path_layout(crawl):
    assert crawl.files, "no WARC file written"
    assert not list(crawl.out.rglob("*.open")), "a WARC file was left open"
    dirs = set()
    for path in crawl.files:
        rel = path.relative_to(crawl.out)
        assert len(rel.parts) == 3, rel
        site, category, name = rel.parts
        match = NAME_RE.fullmatch(name)
        assert match and (match["site"], match["cat"]) == (site, category), name
        dirs.add((site, category))
    assert dirs == {("alpha", "politics"), ("alpha", "sports"), ("alpha", "world"), ("beta", "news")}


def test_warcinfo_first_in_every_file(crawl):
    for path in crawl.files:
        records = read_warc(path)
        site, category = path.parent.parent.name, path.parent.name
        info = records[0]
        assert info.type == "warcinfo"
        assert [r.type for r in records[1:]].count("warcinfo") == 0
        assert info.headers["WARC-Filename"] == path.name
        assert info.headers["WARC-Newsclean-Site"] == site
        assert info.headers["WARC-Newsclean-Category"] == category
        fields = dict(line.split(": ", 1) for line in info.payload.decode().splitlines() if line)
        assert fields["software"].startswith("newsclean/")
        assert fields["format"] == "WARC File Format 1.1"
        assert fields["robots"] == "obey"
        assert fields["http-header-user-agent"] == USER_AGENT
        assert (fields["site"], fields["category"]) == (site, category)


def test_every_response_has_its_request(crawl):
    requests = [r for r in crawl.records if r.type == "request"]
    by_concurrent = {r.headers["WARC-Concurrent-To"]: r for r in requests}
    assert len(by_concurrent) == len(requests) == len(crawl.responses())
    for resp in crawl.responses():
        req = by_concurrent[resp.headers["WARC-Record-ID"]]
        assert req.file == resp.file
        assert req.uri == resp.uri
        assert req.headers["WARC-Date"] == resp.headers["WARC-Date"]
        for name in ("WARC-Newsclean-Site", "WARC-Newsclean-Category", "WARC-Newsclean-Depth"):
            assert req.headers[name] == resp.headers[name]
        assert req.http_header("User-Agent") == USER_AGENT
        assert "zstd" not in req.http_header("Accept-Encoding")  # only codings the pipeline decodes
        assert req.http_header("Host") == resp.uri.split("/")[2]


def test_site_and_category_headers_match_the_path(crawl):
    for rec in crawl.records:
        site, category = rec.file.parent.parent.name, rec.file.parent.name
        assert rec.headers["WARC-Newsclean-Site"] == site
        assert rec.headers["WARC-Newsclean-Category"] == category
        if rec.type != "warcinfo":
            assert rec.headers["WARC-Newsclean-Depth"].isdigit()


def test_recorded_pages_per_category(crawl):
    a, b = crawl.alpha, crawl.beta
    got = {key: sorted(r.uri for r in crawl.responses(*key))
           for key in [("alpha", "politics"), ("alpha", "sports"), ("alpha", "world"), ("beta", "news")]}
    assert got[("alpha", "politics")] == sorted([
        f"{a}/politics/", f"{a}/politics/a1.html", f"{a}/politics/a2.html", f"{a}/missing.html",
        f"{a}/politics/gz.html", f"{a}/politics/from-gzip.html", f"{a}/media/photo",
        f"{a}/politics/empty.html", f"{a}/old-url", f"{a}/politics/moved.html",
        # RetryMiddleware retries a 500 (RETRY_TIMES = 1): each attempt is a recorded fetch
        f"{a}/politics/broken.html", f"{a}/politics/broken.html",
    ])
    # the sports start page, linked from politics, is recorded once, under its own category; so is the sports
    # article both start pages link to (its URL is under /sports/), whichever crawl path reaches it first
    assert got[("alpha", "sports")] == [f"{a}/sports/", f"{a}/sports/s1.html"]
    assert got[("alpha", "world")] == [f"{a}/world/feed.xml", f"{a}/world/w1.html"]
    assert got[("beta", "news")] == [f"{b}/news/", f"{b}/news/b1.html"]


def test_excluded_urls_never_reach_the_server(crawl):
    never = {
        "/politics/a3.html",  # depth 3 > depth_limit 2
        "/private/secret.html",  # disallowed by robots.txt
        "/from-image.html",  # link inside a non-HTML body
        "/politics/logo.png",  # binary extension, skipped by LinkExtractor
        "/from-beta.html",  # alpha page linked from beta: off-site for beta
    }
    assert never.isdisjoint(crawl.alpha_hits), sorted(never & set(crawl.alpha_hits))
    assert "/robots.txt" in crawl.alpha_hits and "/robots.txt" in crawl.beta_hits
    # beta pages linked from alpha (a page and an RSS item) are off-site for alpha
    assert "/offsite.html" not in crawl.beta_hits
    assert "/offsite-feed.html" not in crawl.beta_hits


def test_robots_txt_is_not_recorded(crawl):
    assert not [r for r in crawl.records if r.uri.endswith("/robots.txt")]


def test_depth_header_counts_link_hops(crawl):
    a = crawl.alpha
    expected = {f"{a}/politics/": 0, f"{a}/politics/a1.html": 1, f"{a}/politics/a2.html": 2,
                f"{a}/politics/gz.html": 1, f"{a}/politics/from-gzip.html": 2,
                f"{a}/old-url": 1, f"{a}/politics/moved.html": 1,  # a redirect is not a hop
                f"{a}/world/feed.xml": 0, f"{a}/world/w1.html": 1}
    for url, depth in expected.items():
        assert crawl.response(url).headers["WARC-Newsclean-Depth"] == str(depth), url
    assert max(int(r.headers["WARC-Newsclean-Depth"]) for r in crawl.responses()) == 2


def test_gzip_body_is_stored_as_received(crawl):
    rec = crawl.response(f"{crawl.alpha}/politics/gz.html")
    assert rec.http_header("Content-Encoding") == "gzip"
    assert rec.payload[:2] == b"\x1f\x8b"
    assert gzip.decompress(rec.payload) == GZIP_HTML
    assert rec.http_header("Content-Length") == str(len(rec.payload))


def test_errors_redirects_empty_and_binary_bodies_are_recorded(crawl):
    a = crawl.alpha
    assert crawl.response(f"{a}/missing.html").status == 404
    redirect = crawl.response(f"{a}/old-url")
    assert redirect.status == 301 and redirect.http_header("Location") == "/politics/moved.html"
    assert {r.status for r in crawl.responses() if r.uri == f"{a}/politics/broken.html"} == {500}
    empty = crawl.response(f"{a}/politics/empty.html")
    assert empty.status == 200 and empty.payload == b""
    photo = crawl.response(f"{a}/media/photo")
    assert photo.http_header("Content-Type") == "image/png" and photo.payload.startswith(b"\x89PNG")
    assert not [r for r in crawl.responses() if r.http_header("Transfer-Encoding")]


def test_digests_are_valid(crawl):
    with redirect_stdout(StringIO()) as report:
        status = Checker(SimpleNamespace(inputs=[str(f) for f in crawl.files], verbose=False)).process_all()
    assert status == 0, report.getvalue()
    for rec in crawl.records:
        if rec.type in {"request", "response"}:
            digest = "sha1:" + base64.b32encode(hashlib.sha1(rec.payload).digest()).decode()
            assert rec.headers["WARC-Payload-Digest"] == digest, rec.uri
            assert "WARC-Block-Digest" in rec.headers


def test_summary_matches_the_warc_files(crawl):
    summary = crawl.summary
    assert summary.finish_reason == "finished"
    assert sorted(Path(f) for f in summary.warc_files) == crawl.files
    assert summary.total_responses == len(crawl.responses())
    assert summary.responses[("alpha", "sports")] == 2
    assert summary.statuses[404] == 1 and summary.statuses[301] == 1
    assert summary.warc_bytes == sum(f.stat().st_size for f in crawl.files)
    assert summary.payload_bytes == sum(len(r.payload) for r in crawl.responses())
    assert f"{summary.total_responses} responses recorded" in crawl.stdout
    # 10 pages (the 301 and its target are one page), 12 responses (the 500 was retried once)
    assert "alpha/politics: fetched 10, stored 6, listings 1" in crawl.stdout
    politics = summary.categories[("alpha", "politics")]
    assert (politics.fetched, politics.responses, politics.stored, politics.listings) == (10, 12, 6, 1)
    assert politics.failed == {"http_404": 1, "http_500": 1}
    assert politics.skipped == {"non_html:image/png": 1, "robots_txt": 1}


def small_config(url: str, **crawl: object) -> SitesConfig:
    options = CrawlOptions(autothrottle=False, download_delay=0.0, allow_private_networks=True, **crawl)
    site = SiteConfig("solo", (host_of(url),), (CategoryConfig("news", (f"{url}/news/",)),))
    return SitesConfig(sites=(site,), crawl=options)


def serve_small_site(n_articles: int) -> LocalSites:
    site = StaticSite("solo")
    site.add("/news/", page(*[f"/news/{i}.html" for i in range(n_articles)]))
    for i in range(n_articles):
        site.add(f"/news/{i}.html", page(text=f"Article {i}. " * 50))
    return LocalSites([site])


def test_rotation_starts_new_files_each_with_warcinfo(tmp_path):
    with serve_small_site(4) as servers:
        summary = run_crawl_subprocess(small_config(servers.base_urls["solo"], warc_max_bytes=1),
                                       tmp_path, log_level="WARNING", timeout=120)
    files = warc_files(tmp_path)
    assert summary.total_responses == 5
    assert len(files) == 5, files  # max 1 byte: each file holds warcinfo + one page group
    serials = sorted(NAME_RE.fullmatch(f.name).group(0)[-14:-8] for f in files)
    assert serials == [f"-{i:05d}" for i in range(5)]
    for path in files:
        types = [r.type for r in read_warc(path)]
        assert types == ["warcinfo", "response", "request", "metadata"], (path, types)


def test_max_pages_per_category_caps_requests(tmp_path):
    with serve_small_site(6) as servers:
        summary = run_crawl_subprocess(small_config(servers.base_urls["solo"], max_pages_per_category=3),
                                       tmp_path, log_level="WARNING", timeout=120)
    assert summary.responses == {("solo", "news"): 3}
    assert len(warc_files(tmp_path)) == 1


def test_cli_rejects_a_bad_config(tmp_path):
    bad = tmp_path / "sites.toml"
    bad.write_text('[[site]]\nname = "x"\nallowed_domains = ["example.com"]\n', encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "newsclean.crawler.run", "--config", str(bad), "--out", str(tmp_path / "o")],
                          capture_output=True, text=True, timeout=60, cwd=REPO, check=False)
    assert proc.returncode == 2
    assert f"{bad}: site[0] ('x').categories" in proc.stderr
    assert not (tmp_path / "o").exists()


def test_run_crawl_refuses_a_second_crawl_in_one_process(tmp_path):
    config_path = tmp_path / "sites.toml"
    script = textwrap.dedent(f"""
        import sys
        from newsclean.demo.localsite import LocalSites, StaticSite
        from newsclean.crawler.config import load_config
        from newsclean.crawler.run import run_crawl
        site = StaticSite("solo"); site.add("/news/", "<html><body>x</body></html>")
        with LocalSites([site]) as servers:
            url = servers.base_urls["solo"]
            host = url.split("//")[1].split(":")[0]
            open({str(config_path)!r}, "w").write(
                '[crawl]\\nautothrottle = false\\nallow_private_networks = true\\n[[site]]\\nname = "solo"\\n'
                f'allowed_domains = ["{{host}}"]\\n[site.categories]\\nnews = ["{{url}}/news/"]\\n')
            first = run_crawl({str(config_path)!r}, {str(tmp_path / "o")!r}, log_level="WARNING")
            assert first.total_responses == 1, first
            try:
                run_crawl({str(config_path)!r}, {str(tmp_path / "o2")!r}, log_level="WARNING")
            except RuntimeError as exc:
                print("refused:", exc)
                sys.exit(0)
            sys.exit(3)
        """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          cwd=REPO, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert "refused: the Twisted reactor already ran" in proc.stdout


# --- unit tests of the pieces, without a reactor -------------------------------------------------

def _fetch(url: str, body: bytes = b"<html></html>", headers=None, **meta) -> tuple[Request, Response]:
    request = Request(url, meta=meta)
    response = HtmlResponse(url, body=body, headers=headers or {"Content-Type": "text/html"}, request=request)
    return request, response


def _task(url: str, site: str = "s", category: str = "c") -> PageTask:
    return PageTask(site, category, 1, "article", None, url, "t")


def test_capture_middleware_skips_requests_without_a_task():
    mw = CaptureMiddleware()
    request, response = _fetch("http://127.0.0.2:1/robots.txt", dont_obey_robotstxt=True)
    assert mw.process_response(request, response) is response
    assert CAPTURES_KEY not in request.meta
    request, response = _fetch("http://127.0.0.2:1/a.html", newsclean=_task("http://127.0.0.2:1/a.html"))
    mw.process_response(request, response)
    (capture,) = request.meta[CAPTURES_KEY]
    assert capture.status == 200 and capture.body == b"<html></html>" and capture.url == request.url


def _group(factory: RecordFactory, url: str) -> list:
    request, response = _fetch(url, newsclean=_task(url))
    CaptureMiddleware().process_response(request, response)
    facts = PageFacts("s", "c", 1, "article")
    records = list(factory.exchange(request.meta[CAPTURES_KEY][0], facts))
    records.append(factory.metadata(url, request.meta[CAPTURES_KEY][0].started,
                                    records[0].rec_headers.get_header("WARC-Record-ID"), facts))
    return records


def test_warc_files_rotate_and_close(tmp_path):
    files, factory = WarcFiles(tmp_path, 1, {"software": "test"}), RecordFactory()
    for i in range(3):
        files.write_group("s", "c", _group(factory, f"http://127.0.0.2:1/{i}.html"))
    files.close()
    files.close()  # idempotent
    paths = sorted((tmp_path / "s" / "c").iterdir())
    assert [f.name[-13:] for f in paths] == ["00000.warc.gz", "00001.warc.gz", "00002.warc.gz"]
    assert len(files.totals.paths) == 3
    assert [r.type for r in read_warc(paths[1])] == ["warcinfo", "response", "request", "metadata"]


def test_stored_headers_drop_transfer_encoding_and_keep_content_encoding():
    response = Response("http://127.0.0.2:1/", status=200, body=b"\x1f\x8b", headers={
        "Transfer-Encoding": "chunked", "Content-Encoding": "gzip", "Set-Cookie": ["a=1", "b=2"]})
    stored = http_response_headers(response)
    names = [name.lower() for name, _ in stored.headers]
    assert "transfer-encoding" not in names
    assert stored.get_header("Content-Encoding") == "gzip"
    assert names.count("set-cookie") == 2
    assert stored.statusline == "200 OK"


def test_page_links_stay_on_the_site_and_ignore_ports():
    site = SiteConfig("s", ("127.0.0.2",), (CategoryConfig("c", ("http://127.0.0.2:8000/",)),))
    body = page("/a.html", "http://127.0.0.2:8000/b.html#frag", "http://127.0.0.3:8000/c.html",
                "/img.png", "mailto:x@example.org").encode()
    response = HtmlResponse("http://127.0.0.2:8000/", body=body)
    assert page_links(response, site) == ["http://127.0.0.2:8000/a.html", "http://127.0.0.2:8000/b.html"]
    binary = Response("http://127.0.0.2:8000/p", body=body, headers={"Content-Type": "image/png"})
    assert page_links(binary, site) == []


@pytest.mark.parametrize("xml", [
    '<rss version="2.0"><channel><item><link>http://h/1</link></item><item><link>/2</link></item></channel></rss>',
    '<feed xmlns="http://www.w3.org/2005/Atom"><entry><link href="http://h/1"/></entry>'
    '<entry><link rel="alternate" href="/2"/><link rel="enclosure" href="/x.mp3"/></entry></feed>',
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://h/1</loc></url>'
    '<url><loc> /2 </loc></url></urlset>',
])
def test_feed_links_read_rss_atom_and_sitemaps(xml):
    site = SiteConfig("s", ("h",), (CategoryConfig("c", ("http://h/feed",)),))
    response = XmlResponse("http://h/feed", body=xml.encode())
    assert page_links(response, site) == ["http://h/1", "http://h/2"]


def test_summary_json_round_trip():
    from newsclean.crawler.report import CategoryReport

    summary = CrawlSummary(warc_files=("a.warc.gz",), responses={("s", "c"): 2}, statuses={200: 1, 404: 1},
                           warc_bytes=10, payload_bytes=5, requests=3, finish_reason="finished", elapsed_s=0.5,
                           categories={("s", "c"): CategoryReport(fetched=2, stored=1, failed={"http_404": 1})},
                           job="j")
    assert CrawlSummary.from_json(summary.to_json()) == summary
    data = json.loads(summary.to_json())
    assert data["statuses"] == {"200": 1, "404": 1}
    assert data["sites"]["s"]["c"]["failed"] == {"http_404": 1}
    assert "s/c: fetched 2, stored 1" in summary.format()


def test_warc_files_refuse_unsafe_names(tmp_path):
    files = WarcFiles(tmp_path, 10**6, {"software": "test"})
    with pytest.raises(ValueError, match="safe path segment"):
        files.write_group("..", "c", _group(RecordFactory(), "http://127.0.0.2:1/x"))
    assert list(tmp_path.iterdir()) == []
