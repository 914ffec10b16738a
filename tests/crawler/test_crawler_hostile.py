"""The crawler against small hostile or fragile servers on 127.0.0.x: each test bounded in requests and time.

The servers are raw sockets (:class:`RawServer`), so a response can be anything: endless header lines, 20,000
headers, a robots.txt that never answers. Crawls run in a child process (:func:`run_crawl_subprocess`).
"""

from __future__ import annotations

import os
import socket
import socketserver
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from newsclean.crawler.config import CategoryConfig, CrawlOptions, SiteConfig, SitesConfig
from newsclean.crawler.robots import ROBOTS_PARSE_BYTES, robots_status_rule, truncate_robots
from newsclean.crawler.run import run_crawl_subprocess
from newsclean.crawler.store import canonical_url

#: A route answers ``(path, hit)`` (path with its query; hit counts requests for the path without query, from 1)
#: with the raw response bytes, or an iterator of byte chunks (streamed until the client goes away).
Route = Callable[[str, int], "bytes | Iterator[bytes]"]


def http(body: bytes | str, status: str = "200 OK", ctype: str = "text/html; charset=utf-8",
         headers: tuple[str, ...] = ()) -> bytes:
    data = body.encode() if isinstance(body, str) else body
    head = [f"HTTP/1.1 {status}", f"Content-Type: {ctype}", f"Content-Length: {len(data)}", "Connection: close",
            *headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + data


def page(*hrefs: str, text: str = "Some text.") -> bytes:
    links = "".join(f'<a href="{h}">link</a> ' for h in hrefs)
    return http(f"<html><head><title>t</title></head><body><p>{text}</p>{links}</body></html>")


class RawServer:
    """A threaded TCP server on loopback ``host``; each connection gets one response from ``route``.

    ``log``: ``(monotonic time, path)`` of each request as it arrived; ``hits``: requests per path
    (query dropped); ``sent``: bytes written per path until the client closed; ``heads``: the last request
    head received per path.
    """

    def __init__(self, host: str, route: Route) -> None:
        assert host.startswith("127."), "loopback only"
        self.route, self.log, self.hits, self.sent, self.heads = route, [], Counter(), Counter(), {}
        self.stop = threading.Event()
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                outer._serve(self.request)

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True
            request_queue_size = 64

        self.server = Server((host, 0), Handler)
        self.base = f"http://{host}:{self.server.server_address[1]}"
        self.host = host

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(10)
        data = b""
        while b"\r\n\r\n" not in data and len(data) < 65536:
            chunk = conn.recv(4096)
            if not chunk:
                return
            data += chunk
        target = data.split(b" ", 2)[1].decode("latin-1")
        path = target.split("?", 1)[0]
        self.log.append((time.monotonic(), target))
        self.heads[path] = data
        self.hits[path] += 1
        answer = self.route(target, self.hits[path])
        try:
            for chunk in [answer] if isinstance(answer, bytes) else answer:
                if self.stop.is_set():
                    break
                conn.sendall(chunk)
                self.sent[path] += len(chunk)
        except OSError:  # the client gave up: what a guard should make it do
            pass

    def times(self, *, skip_robots: bool = True) -> list[float]:
        return [t for t, p in self.log if not (skip_robots and p.startswith("/robots.txt"))]

    def __enter__(self) -> RawServer:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


def site(name: str, server: RawServer, *starts: str, **options) -> SiteConfig:
    urls = tuple(server.base + s for s in starts or ("/news/",))
    return SiteConfig(name, (server.host,), (CategoryConfig("news", urls),), **options)


def crawl(tmp_path, sites: list[SiteConfig], timeout: float = 60, settings: dict[str, str] | None = None, **options):
    crawl_options = {"autothrottle": False, "download_delay": 0.0, "allow_private_networks": True,
                     "concurrent_requests_per_domain": 2, "retry_times": 1, **options}
    config = SitesConfig(sites=tuple(sites), crawl=CrawlOptions(**crawl_options))
    return run_crawl_subprocess(config, tmp_path / "warc", log_level="WARNING", timeout=timeout, settings=settings)


def static(routes: dict[str, bytes]) -> Route:
    return lambda target, hit: routes.get(target, routes.get(target.split("?")[0], http("gone", "404 Not Found")))


# ------------------------------------------------------------------------------------------ 1. headers


def endless_headers(target: str, hit: int) -> Iterator[bytes]:
    yield b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
    line = b": " + b"a" * 1000 + b"\r\n"
    for i in range(50_000):  # at most ~50 MB, unless the client hangs up first
        yield b"X-Pad-%d" % i + line


def many_headers() -> bytes:
    body = b"<html><body><p>A small page under a huge header block.</p></body></html>"
    block = b"".join(b"X-H-%d: %s\r\n" % (i, b"b" * 480) for i in range(20_000))  # ~10 MB
    return (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\nConnection: close\r\n"
            % len(body)) + block + b"\r\n" + body


def test_endless_or_huge_header_sections_are_cut_and_reported_too_large(tmp_path):
    routes = {"/news/": page("/endless.html", "/many.html", "/ok.html"), "/ok.html": page(text="Fine."),
              "/many.html": many_headers(), "/robots.txt": http("User-agent: *\nAllow: /\n", ctype="text/plain")}

    def route(target, hit):
        return endless_headers(target, hit) if target == "/endless.html" else static(routes)(target, hit)

    with RawServer("127.0.0.21", route) as server:
        summary = crawl(tmp_path, [site("hostile", server)], download_timeout=8.0, max_header_bytes=65536)
    report = summary.categories[("hostile", "news")]
    assert report.failed == {"too_large": 2}, report
    assert report.stored == 1 and report.listings == 1  # /ok.html and /news/
    assert server.hits["/endless.html"] == 1 and server.hits["/many.html"] == 1  # not retried
    # the client hung up early: far less than the 50 MB the server would have sent (socket buffers aside)
    assert server.sent["/endless.html"] < 8_000_000, server.sent


# ------------------------------------------------------------------------------------------ 5. robots


def test_robots_status_rules_follow_rfc_9309():
    assert [robots_status_rule(s) for s in (200, 204, 301, 401, 403, 404, 410, 429, 500, 503)] == [
        "parse", "parse", "allow_all", "allow_all", "allow_all", "allow_all", "allow_all",
        "disallow_all", "disallow_all", "disallow_all"]


def test_truncate_robots_keeps_whole_lines_of_the_first_500_kib():
    body = b"User-agent: *\nDisallow: /a\n" + b"# x\n" * 200_000
    cut = truncate_robots(body)
    assert len(cut) <= ROBOTS_PARSE_BYTES == 512_000 and cut.endswith(b"\n") and cut.startswith(b"User-agent")
    assert truncate_robots(b"short") == b"short"


def never_answers(target: str, hit: int) -> Iterator[bytes]:
    time.sleep(2.5)  # past the crawl's 1 s download timeout
    yield b""


def robots_site(robots: bytes | Callable) -> Route:
    routes = {"/news/": page("/a.html"), "/a.html": page(text="Article.")}

    def route(target, hit):
        if target == "/robots.txt":
            return robots(target, hit) if callable(robots) else robots
        return static(routes)(target, hit)

    return route


def test_robots_txt_per_rfc_9309(tmp_path):
    big = b"User-agent: *\nDisallow: /\n" + b"# padding line of a huge robots.txt\n" * 40_000  # 1.4 MB
    sitemap_robots = {}
    cases = {
        "s500": robots_site(http("oops", "500 Internal Server Error")),
        "s503": robots_site(http("busy", "503 Service Unavailable")),
        "dead": robots_site(never_answers),
        "s404": robots_site(http("none", "404 Not Found")),
        "big": robots_site(http(big, ctype="text/plain")),
        "start": lambda t, h: sitemap_robots.get(t.split("?")[0], http("gone", "404 Not Found")),
    }
    servers = {name: RawServer(f"127.0.0.{30 + i}", route) for i, (name, route) in enumerate(cases.items())}
    for server in servers.values():
        server.__enter__()
    try:
        base = servers["start"].base
        sitemap_robots.update({
            "/robots.txt": http(f"User-agent: *\nDisallow: /private/\nSitemap: {base}/sitemap.xml\n", ctype="text/plain"),
            "/sitemap.xml": http(f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                                 f"<url><loc>{base}/a.html</loc></url></urlset>", ctype="application/xml"),
            "/a.html": page(text="Article.")})
        sites = [site(name, server) for name, server in servers.items() if name != "start"]
        sites.append(site("start", servers["start"], "/robots.txt"))
        summary = crawl(tmp_path, sites, download_timeout=1.0, download_maxsize=200_000, retry_times=0)
    finally:
        for server in servers.values():
            server.__exit__(None, None, None)
    for name in ("s500", "s503", "dead"):  # unreachable robots.txt: complete disallow
        assert servers[name].hits["/news/"] == 0 and servers[name].hits["/a.html"] == 0, name
        assert summary.categories[(name, "news")].skipped == {"robots_unavailable": 1}, name
    assert servers["s404"].hits["/a.html"] == 1  # 4xx: no restrictions
    assert servers["big"].hits["/news/"] == 0  # larger than download_maxsize: its first 500 KiB still count
    assert summary.categories[("big", "news")].skipped == {"robots_txt": 1}
    assert servers["start"].hits["/robots.txt"] == 1  # a start point and the robots rules: fetched once
    assert servers["start"].hits["/a.html"] == 1
    assert summary.categories[("start", "news")].stored == 1


# ------------------------------------------------------------------------------------------ 6. politeness


def gaps(times: list[float]) -> list[float]:
    return [b - a for a, b in zip(times, times[1:], strict=False)]


def articles_site(n: int, robots: str = "User-agent: *\nAllow: /\n") -> dict[str, bytes]:
    routes = {f"/a{i}.html": page(text=f"Article {i}.") for i in range(n)}
    routes["/news/"] = page(*routes)
    routes["/robots.txt"] = http(robots, ctype="text/plain")
    return routes


def test_crawl_delay_is_honoured_up_to_the_cap(tmp_path):
    slow = RawServer("127.0.0.41", static(articles_site(3, "User-agent: *\nCrawl-delay: 0.4\n")))
    capped = RawServer("127.0.0.42", static(articles_site(3, "User-agent: *\nCrawl-delay: 100\n")))
    with slow, capped:
        started = time.monotonic()
        summary = crawl(tmp_path, [site("slow", slow), site("capped", capped)], download_delay=0.02,
                        max_crawl_delay=0.6)
        elapsed = time.monotonic() - started
    assert summary.total_responses == 8
    assert min(gaps(slow.times())) >= 0.4 - ARRIVAL_JITTER_S, gaps(slow.times())
    assert min(gaps(capped.times())) >= 0.6 - ARRIVAL_JITTER_S, gaps(capped.times())
    assert elapsed < 30  # the 100 s Crawl-delay was cut to 0.6 s


ARRIVAL_JITTER_S = 0.1
"""How much earlier than the crawl delay a request may arrive after the one before it: the server notes arrival times,
and on a loaded machine one request's connection can be late (0.54 s after the one before it under a 0.6 s delay,
the next one 0.60 s). Still far from the 0.02 s download delay the delays replace."""


def test_retry_after_holds_the_whole_site(tmp_path):
    routes = articles_site(10)

    def route(target, hit):
        if target == "/a0.html" and hit == 1:
            return http("slow down", "429 Too Many Requests", headers=("Retry-After: 2",))
        return static(routes)(target, hit)

    with RawServer("127.0.0.43", route) as server:  # 0.2 s between requests: ~7 would fall in the 1.5 s window
        summary = crawl(tmp_path, [site("busy", server)], download_delay=0.2)
    assert summary.categories[("busy", "news")].stored == 10
    (t429,) = [t for t, p in server.log if p == "/a0.html"][:1]
    during = [p for t, p in server.log if t429 + 0.3 < t < t429 + 1.8]
    assert during == [], during
    retried = [t for t, p in server.log if p == "/a0.html"][1]
    assert retried >= t429 + 1.9


def test_default_politeness_floor_is_one_second(tmp_path):
    # The server logs a request when its thread reads it, which a loaded machine delays by a few tenths of a second
    # now and then: one gap may look short, the span of five requests (four floors of 1 s) cannot shrink by more
    # than such a delay. A floor of 0.2 s would give a span of about 0.8 s.
    with RawServer("127.0.0.44", static(articles_site(6))) as server:
        config = SitesConfig(sites=(site("plain", server),),
                             crawl=CrawlOptions(allow_private_networks=True, max_pages_per_category=5))
        summary = run_crawl_subprocess(config, tmp_path / "warc", log_level="WARNING", timeout=60)
    assert summary.total_responses == 5
    times = server.times()
    assert times[-1] - times[0] >= 3.5 and min(gaps(times)) >= 0.5, gaps(times)


# ------------------------------------------------------------------------------------------ 7. traps


def test_canonical_url_drops_session_and_tracking_parameters():
    assert canonical_url("http://a.test/x.html?sid=1&page=2") == "http://a.test/x.html?page=2"
    assert canonical_url("http://a.test/x.html;jsessionid=AB12?utm_source=feed&UTM_MEDIUM=rss") == "http://a.test/x.html"
    assert canonical_url("http://a.test/x.html?fbclid=z#top") == "http://a.test/x.html"
    assert canonical_url("http://a.test/x.html?side=1") == "http://a.test/x.html?side=1"  # a real parameter


def test_session_id_trap_and_per_host_page_budget(tmp_path):
    counter = iter(range(10**6))

    def trap(target, hit):  # every page links to fresh session-id variants of itself and of /b.html
        if target.startswith("/robots.txt"):
            return http("User-agent: *\nAllow: /\n", ctype="text/plain")
        n = next(counter)
        return page(f"/a.html?sid={n}", f"/b.html;jsessionid={n}", f"/a.html?utm_source=x{n}", text=f"Page {n}.")

    big = articles_site(12)
    with RawServer("127.0.0.45", trap) as trapped, RawServer("127.0.0.46", static(big)) as budgeted:
        summary = crawl(tmp_path, [site("trap", trapped), site("budget", budgeted)], depth_limit=5,
                        max_pages_per_host=4)
    by_page = Counter(p.split(";")[0] for p in trapped.hits.elements())
    assert by_page["/a.html"] == 1 and by_page["/b.html"] == 1, trapped.hits
    assert sum(n for p, n in budgeted.hits.items() if p != "/robots.txt") == 4, budgeted.hits
    assert summary.categories[("budget", "news")].stored == 3


def test_default_caps_bound_a_crawl():
    options = CrawlOptions()
    assert 0 < options.max_pages_per_category <= options.max_pages_per_host
    assert options.download_delay >= 1.0 and options.concurrent_requests_per_domain <= 2


# ------------------------------------------------------------------------------------------ 3. proxy


def test_proxy_does_not_bypass_the_private_address_check(tmp_path, monkeypatch):
    proxy = RawServer("127.0.0.47", lambda target, hit: page(text="served by the proxy"))
    with proxy:
        for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
            monkeypatch.setenv(name, proxy.base)
        for name in ("no_proxy", "NO_PROXY"):
            monkeypatch.delenv(name, raising=False)
        target = SiteConfig("local", ("localhost",), (CategoryConfig("news", ("http://localhost:9/news/",)),))
        config = SitesConfig(sites=(target,), crawl=CrawlOptions(download_delay=0.0, autothrottle=False,
                                                                 retry_times=0))
        summary = run_crawl_subprocess(config, tmp_path / "warc", log_level="WARNING", timeout=60)
    assert proxy.log == []  # nothing was sent through the proxy
    assert summary.categories[("local", "news")].failed == {"private_address": 1}


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__, "-q"])


# ------------------------------------------------------------------------------------------ 9-12. WARC fidelity


def slow_body(target: str, hit: int) -> Iterator[bytes]:
    body = b"<html><body><p>A body that takes its time.</p></body></html>"
    yield b"HTTP/1.1 200 Fine Thanks\r\nContent-Type: text/html\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
    time.sleep(1.5)
    yield body


def test_warc_date_reason_phrase_bombs_and_brotli(tmp_path):
    import gzip

    import brotli
    from fastwarc.warc import ArchiveIterator, WarcRecordType
    from test_crawler import read_warc, warc_files

    bomb = gzip.compress(b"\0" * 3_000_000)  # 3 MB once decompressed, 3 KB on the wire
    routes = {
        "/news/": page("/slow.html", "/bomb.html", "/br.html"),
        "/robots.txt": http("User-agent: *\nAllow: /\n", ctype="text/plain"),
        "/bomb.html": http(bomb, headers=("Content-Encoding: gzip",)),
        "/br.html": http(brotli.compress(b"<html><body><p>Brotli body.</p></body></html>"),
                         headers=("Content-Encoding: br",)),
    }
    arrived: dict[str, float] = {}

    def route(target, hit):
        arrived[target] = time.time()
        return slow_body(target, hit) if target == "/slow.html" else static(routes)(target, hit)

    with RawServer("127.0.0.48", route) as server:
        summary = crawl(tmp_path, [site("warc", server)], download_maxsize=1_000_000)
    report = summary.categories[("warc", "news")]
    assert report.failed == {"too_large": 1}, report  # the decompression bomb, not "ignored"
    records = [r for f in warc_files(tmp_path / "warc") for r in read_warc(f)]
    (slow,) = [r for r in records if r.type == "response" and r.uri.endswith("/slow.html")]
    from datetime import datetime

    warc_date = datetime.fromisoformat(slow.headers["WARC-Date"].replace("Z", "+00:00")).timestamp()
    assert abs(warc_date - arrived["/slow.html"]) < 0.5  # capture start, not the body's end 1.5 s later
    (meta,) = [r for r in records if r.type == "metadata" and r.uri.endswith("/slow.html")]
    assert b"http-header-fidelity: re-serialised" in meta.payload  # "200 Fine Thanks" became "200 OK"
    (info,) = {r.payload for r in records if r.type == "warcinfo"}
    assert b"http-header-fidelity: re-serialised: reason phrase from the status code" in info
    for path in warc_files(tmp_path / "warc"):  # a second reader that copes with brotli bodies (warcio 1.8.1 crashes)
        with open(path, "rb") as fh:  # block digests over the raw block, payload digests past the HTTP head
            blocks = [rec.verify_block_digest() for rec in ArchiveIterator(fh, parse_http=False)]
        with open(path, "rb") as fh:
            payloads = [rec.verify_payload_digest() for rec in ArchiveIterator(fh, parse_http=True)
                        if rec.record_type == WarcRecordType.response]
        assert len(payloads) == 4 and all(blocks) and all(payloads), (path, blocks, payloads)


def test_missing_contact_url_is_warned_about(caplog):
    from newsclean.crawler.settings import build_settings

    config = SitesConfig(sites=(SiteConfig("s", ("a.test",), (CategoryConfig("c", ("http://a.test/",)),)),))
    with caplog.at_level("WARNING", logger="newsclean.crawler.settings"):
        build_settings(config, "out")
    assert "contact_url is not set" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="newsclean.crawler.settings"):
        build_settings(SitesConfig(sites=config.sites, crawl=CrawlOptions(contact_url="https://me.test/bot")), "out")
    assert "contact_url" not in caplog.text


# ------------------------------------------------------------------------------------------ 8. conditional refetch


def test_conditional_refetch_writes_a_revisit_record_for_304(tmp_path):
    from fastwarc.warc import ArchiveIterator
    from test_crawler import read_warc, warc_files
    from warcio.archiveiterator import ArchiveIterator as WarcioIterator

    lm = "Wed, 01 May 2024 10:00:00 GMT"
    routes = {"/news/": page("/a1.html", "/a2.html"), "/robots.txt": http("User-agent: *\nAllow: /\n", ctype="text/plain")}
    server: RawServer

    def route(target, hit):
        head = server.heads.get(target, b"")
        if target == "/a1.html":
            if b'if-none-match: "v1"' in head.lower():
                return b'HTTP/1.1 304 Not Modified\r\nETag: "v1"\r\nConnection: close\r\n\r\n'
            return http("<html><body><p>First article.</p></body></html>", headers=('ETag: "v1"',))
        if target == "/a2.html":  # changed since: a conditional request gets the new page
            return http(f"<html><body><p>Second article, version {hit}.</p></body></html>",
                        headers=(f"Last-Modified: {lm}",))
        return static(routes)(target, hit)

    with RawServer("127.0.0.49", route) as server:
        first = crawl(tmp_path, [site("cond", server)])
        time.sleep(1.2)  # the store keeps fetch times in whole seconds
        second = crawl(tmp_path, [site("cond", server)], refetch_after_days=0.00001)
        heads = dict(server.heads)
    assert first.categories[("cond", "news")].stored == 2
    report = second.categories[("cond", "news")]
    assert report.skipped == {"not_modified": 1} and report.stored == 1, report
    assert b"if-modified-since: " + lm.lower().encode() in heads["/a2.html"].lower()
    records = [r for f in warc_files(tmp_path / "warc") for r in read_warc(f)]
    (original,) = [r for r in records if r.type == "response" and r.uri.endswith("/a1.html")]
    (revisit,) = [r for r in records if r.type == "revisit"]
    assert revisit.uri == original.uri
    with open(revisit.file, "rb") as fh:  # the revisit holds the 304's HTTP head, no body
        (head,) = [rec.http_headers for rec in WarcioIterator(fh) if rec.rec_type == "revisit"]
    assert head.get_statuscode() == "304" and head.get_header("ETag") == '"v1"'
    assert revisit.headers["WARC-Profile"] == "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
    assert revisit.headers["WARC-Refers-To-Date"] == original.headers["WARC-Date"]
    assert revisit.headers["WARC-Refers-To"] == original.headers["WARC-Record-ID"]
    assert len([r for r in records if r.type == "response" and r.uri.endswith("/a2.html")]) == 2
    for path in warc_files(tmp_path / "warc"):
        with open(path, "rb") as fh:
            assert all(rec.verify_block_digest() for rec in ArchiveIterator(fh, parse_http=False)), path


# ------------------------------------------------------------------------------- 9. what a failure is called


def offline_resolver(monkeypatch) -> dict[str, str]:
    """Scrapy settings for a crawl whose host names resolve to nothing without asking any DNS server
    (:mod:`offline_resolver`, importable by the child process)."""
    here = str(Path(__file__).parent)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p))
    return {"TWISTED_DNS_RESOLVER": "offline_resolver.LoopbackOnlyResolver"}


def test_failures_are_named_for_what_happened(tmp_path, monkeypatch):
    not_http = b"SSH-2.0-OpenSSH_9.6\r\n\x00\x17\x8f binary noise, no status line\r\n\r\n"
    routes = {"/news/": page("/junk.html", "/to-file.html", "/ok.html"), "/ok.html": page(text="Fine."),
              "/junk.html": not_http,
              "/to-file.html": http("", "302 Found", headers=("Location: file:///etc/passwd",)),
              "/robots.txt": http("User-agent: *\nAllow: /\n", ctype="text/plain")}
    ghost = SiteConfig("ghost", ("nonexistent.invalid",), (CategoryConfig("news", ("http://nonexistent.invalid/news/",)),))
    with RawServer("127.0.0.50", static(routes)) as server:
        summary = crawl(tmp_path, [site("odd", server), ghost], settings=offline_resolver(monkeypatch),
                        download_timeout=5.0, retry_times=0)
    assert summary.categories[("ghost", "news")].failed == {"dns": 1}, summary.categories[("ghost", "news")]
    odd = summary.categories[("odd", "news")]
    assert odd.failed == {"not_http": 1, "bad_scheme": 1}, odd
    assert odd.stored == 1 and server.hits["/junk.html"] == 1
    message = summary.start_refusal() or ""
    assert message == ""  # odd got pages: not a crawl that fetched nothing


def test_a_crawl_whose_hosts_do_not_resolve_says_so(tmp_path, monkeypatch):
    ghost = SiteConfig("ghost", ("nonexistent.invalid",), (CategoryConfig("news", ("http://nonexistent.invalid/news/",)),))
    summary = crawl(tmp_path, [ghost], settings=offline_resolver(monkeypatch))
    assert summary.reasons("failed") == {"dns": 1} and not summary.reasons("skipped")
    message = summary.start_refusal()
    assert message.startswith("nothing was fetched") and "did not resolve" in message
    assert "obey_robots" not in message
