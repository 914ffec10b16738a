"""Common Crawl's news crawl (CC-NEWS) as input: monthly path listings, file-name time stamps, the download cache,
the --hosts filter and its accounting, CC's site mapping; all served by a local HTTP server on 127.0.0.1."""

from __future__ import annotations

import gzip
import json
import shutil
import threading
from collections import Counter
from datetime import UTC, datetime
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from repo import SHARED_DATA
from warc_builder import Response, article_page, paragraph, write_warc

from newsclean.cli import main
from newsclean.pipeline.cc_news import CCNewsInput, cc_news_files, parse_date_range, select_paths, warc_timestamp
from newsclean.pipeline.errors import NewscleanError, NoInputError
from newsclean.pipeline.progress import PREFIX as PROGRESS_PREFIX
from newsclean.pipeline.warc_reader import OUTSIDE_HOSTS, ReadStats, check_read, item_offset, iter_warc_file
from newsclean.schemas.records import Page

SHARED_SLICE = SHARED_DATA / "warc-samples" / "warcfile.warc.gz"
needs_slice = pytest.mark.skipif(not SHARED_SLICE.is_file(),
                                 reason=f"the genuine Common Crawl slice {SHARED_SLICE} is absent (../shared/data)")
RUNNER = ["--runner", "DirectRunner", "--direct_running_mode", "in_memory"]
MONTH = "crawl-data/CC-NEWS/2020/08/"
#: The listing's files: the genuine slice (crawled 2020-08-08), and two of news pages made here.
SLICE, NEWS_A, NEWS_B = (MONTH + "CC-NEWS-20200808170000-00001.warc.gz", MONTH + "CC-NEWS-20200815120000-00002.warc.gz",
                         MONTH + "CC-NEWS-20200825090000-00003.warc.gz")


def _news(host: str, section: str, seed: int, n: int = 3) -> list[Response]:
    return [Response(f"https://{host}/{section}/story-{seed + i}.html",
                     article_page(host, section, f"Story {seed + i}", [paragraph(seed + 10 * i + j) for j in range(3)]
                                  ).encode()) for i in range(n)]


class _Handler(SimpleHTTPRequestHandler):
    """Serves the server's folder; logs each GET path; a path in ``cut`` is sent with its full Content-Length but
    only half its bytes, then the connection closes (a cut download)."""

    def do_GET(self):  # noqa: N802 - http.server's name
        self.server.requests.append(self.path)
        if self.path.lstrip("/") in self.server.cut:
            data = (Path(self.directory) / self.path.lstrip("/")).read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[:len(data) // 2])
            self.close_connection = True
            return
        super().do_GET()

    def log_message(self, *args):
        pass


@pytest.fixture
def server(tmp_path):
    """A CC-NEWS mirror on 127.0.0.1: ``crawl-data/CC-NEWS/2020/08/warc.paths.gz`` naming three files (the slice's
    bytes when ../shared is there, else one more made file), and what it was asked for."""
    root = tmp_path / "mirror"
    write_warc(root / NEWS_A, "x", "y", _news("www.news-a.test", "politics", 100) + _news("news-b.test", "sports", 200),
               newsclean_headers="none")
    write_warc(root / NEWS_B, "x", "y", _news("www.news-a.test", "politics", 300), newsclean_headers="none")
    if SHARED_SLICE.is_file():
        shutil.copyfile(SHARED_SLICE, root / SLICE)
    else:
        write_warc(root / SLICE, "x", "y", _news("other.test", "world", 400), newsclean_headers="none")
    listing = "\n".join([SLICE, NEWS_A, NEWS_B, "crawl-data/CC-NEWS/2020/08/../../../../etc/passwd", ""])
    (root / MONTH / "warc.paths.gz").write_bytes(gzip.compress(listing.encode()))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(root)))
    httpd.requests, httpd.cut = [], set()
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    httpd.base = f"http://127.0.0.1:{httpd.server_address[1]}/"
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _warc_gets(httpd) -> list[str]:
    return [path for path in httpd.requests if path.endswith(".warc.gz")]


# --- dates and listings ---------------------------------------------------------------------------------------


def test_date_ranges_include_both_ends():
    utc = partial(datetime, tzinfo=UTC)
    assert parse_date_range("2020-08..2020-09-15") == (utc(2020, 8, 1), utc(2020, 9, 16))
    assert parse_date_range("2020-12") == (utc(2020, 12, 1), utc(2021, 1, 1))  # one month, across the year's end
    assert parse_date_range("2020-08-10..2020-08-10") == (utc(2020, 8, 10), utc(2020, 8, 11))
    for bad in ("2020-13", "2020-09..2020-08", "yesterday", "2020-02-30"):
        with pytest.raises(ValueError):
            parse_date_range(bad)


def test_the_file_name_time_stamp_selects_the_files(caplog):
    assert warc_timestamp("s3://commoncrawl/" + NEWS_A) == datetime(2020, 8, 15, 12, 0, 0, tzinfo=UTC)
    assert warc_timestamp("CC-MAIN-20200808165417-20200808195417-00395.warc.gz") is None
    lines = [SLICE, NEWS_A, NEWS_B, "crawl-data/CC-NEWS/2020/08/../../x/CC-NEWS-20200810000000-00009.warc.gz", ""]
    start, end = parse_date_range("2020-08-08..2020-08-15")
    assert select_paths(lines, start, end, "listing") == [SLICE, NEWS_A]  # 12:00 on the 15th is in; the 25th out
    assert "1 lines that are no CC-NEWS WARC path" in caplog.text  # a path out of the mirror is never fetched


# --- downloads ---------------------------------------------------------------------------------------------------


def test_the_range_picks_the_files_and_a_second_run_fetches_none(server, tmp_path):
    spec = CCNewsInput(*parse_date_range("2020-08-10..2020-08-20"), base=server.base, cache=str(tmp_path / "cache"))
    files = cc_news_files(spec)
    assert files == [str(tmp_path / "cache" / NEWS_A)]
    assert Path(files[0]).read_bytes() == (tmp_path / "mirror" / NEWS_A).read_bytes()
    assert _warc_gets(server) == ["/" + NEWS_A]  # nothing else of the month, and never the '..' line
    assert cc_news_files(spec) == files
    assert _warc_gets(server) == ["/" + NEWS_A]  # the second run asked for the listing only


def test_a_cut_download_is_not_taken_as_complete(server, tmp_path):
    spec = CCNewsInput(*parse_date_range("2020-08-25"), base=server.base, cache=str(tmp_path / "cache"))
    server.cut.add(NEWS_B)
    with pytest.raises(NewscleanError, match="CC-NEWS-20200825090000-00003.warc.gz"):
        cc_news_files(spec)
    assert not list((tmp_path / "cache").rglob("*.warc.gz*"))  # neither the file nor a .part left behind
    server.cut.clear()
    assert cc_news_files(spec) == [str(tmp_path / "cache" / NEWS_B)]
    assert _warc_gets(server) == ["/" + NEWS_B] * 2  # fetched again, whole
    assert (tmp_path / "cache" / NEWS_B).read_bytes() == (tmp_path / "mirror" / NEWS_B).read_bytes()


def test_no_file_in_range_and_a_missing_listing_are_one_line_errors(server, tmp_path):
    cache = str(tmp_path / "cache")
    with pytest.raises(NoInputError, match="no WARC file .* has a time stamp in 2020-08-01..2020-08-05"):
        cc_news_files(CCNewsInput(*parse_date_range("2020-08-01..2020-08-05"), base=server.base, cache=cache))
    with pytest.raises(NewscleanError, match=r"CC-NEWS/2020/09/warc.paths.gz: 404"):  # a month not published
        cc_news_files(CCNewsInput(*parse_date_range("2020-08..2020-09"), base=server.base, cache=cache))


# --- the reader: hosts and sites ---------------------------------------------------------------------------------


def _read(path: Path, **kwargs) -> tuple[list, ReadStats]:
    stats = ReadStats()
    items = list(iter_warc_file(str(path), stats=stats, **kwargs))
    rows = Counter(item_offset(item) for item in items)
    return items, check_read(str(path), stats, rows)


@needs_slice
def test_hosts_filter_counts_its_skips_and_the_second_pass_balances(tmp_path):
    path = tmp_path / "CC-NEWS-20200808170000-00001.warc.gz"
    shutil.copyfile(SHARED_SLICE, path)
    items, stats = _read(path, hosts=("live-radsport.ch",))  # its subdomain 06.live-radsport.ch: 2 of 16 responses
    assert [item.site for item in items] == ["06.live-radsport.ch"] * 2
    assert stats.records_read == 2 and stats.skipped[OUTSIDE_HOSTS] == 14
    assert stats.found == 16 and stats.missed == 0  # every response: a row or a counted skip
    _, every = _read(path)
    assert every.records_read == 16 and OUTSIDE_HOSTS not in every.skipped


def test_a_cc_news_files_site_is_the_host_without_www(tmp_path):
    pages = _news("www.news-a.test", "politics", 100, n=2)
    cc = write_warc(tmp_path / "CC-NEWS-20200815120000-00002.warc.gz", "x", "y", pages, newsclean_headers="none")
    other = write_warc(tmp_path / "crawl" / "CC-MAIN-00000.warc.gz", "x", "y", pages, newsclean_headers="none")
    cc_pages = [item for item in _read(cc)[0] if isinstance(item, Page)]
    assert {(p.site, p.category) for p in cc_pages} == {("news-a.test", "politics")}  # the URL's section
    assert {p.category for p in _read(cc, sections=())[0]} == {"unknown"}  # a section too small: the host's group
    assert {p.site for p in _read(other)[0]} == {"www.news-a.test"}  # other foreign WARCs keep the host as it is


# --- the command ---------------------------------------------------------------------------------------------------


def _err(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines()
            if line.strip() and "apitools" not in line and not line.startswith(PROGRESS_PREFIX)]


def test_an_http_warc_is_a_one_line_error_naming_cc_news(tmp_path, capsys):
    rc = main(["clean", "--warc", "https://127.0.0.1:9/x.warc.gz", "--out", str(tmp_path / "out"), *RUNNER])
    err = _err(capsys)
    assert rc == 2 and len(err) == 1 and "Traceback" not in err[0], err  # before: a traceback, exit 0
    assert err[0].startswith("newsclean: error: --warc https://") and "--cc-news" in err[0], err


def test_cc_news_flags_are_checked(tmp_path, capsys):
    out = ["--out", str(tmp_path / "out")]
    assert main(["clean", "--cc-news", "2020-08", "--warc", "w", *out]) == 2  # argparse: not both
    assert main(["clean", "--cc-news", "2020-08", "--cc-news-base", "ftp://x/", *out]) == 2
    assert main(["clean", "--warc", "w", "--cc-news-cache", "c", *out]) == 2
    assert main(["clean", "--cc-news", "2020-08", "--hosts", "https://bbc.co.uk/", *out]) == 2
    assert "--cc-news-base 'ftp://x/': give an http(s):// or s3:// URL" in capsys.readouterr().err


@needs_slice
def test_clean_cc_news_writes_the_hosts_articles_and_balances(server, tmp_path, capsys):
    out, cache = tmp_path / "out", tmp_path / "cache"
    argv = ["clean", "--cc-news", "2020-08-01..2020-08-20", "--hosts", "news-a.test,live-radsport.ch",
            "--cc-news-base", server.base, "--cc-news-cache", str(cache), "--out", str(out), "--chain", "paper",
            "--neighbour-sample", "3", *RUNNER]
    assert main(argv) == 0, capsys.readouterr().err
    summary = json.loads((out / "_summary.json").read_text())
    assert summary["articles_by_site"] == {"news-a.test": 3}  # news-b.test (in range) and the 25th's file: not read
    assert summary["skipped"][OUTSIDE_HOSTS] == 14 + 3  # the slice's other hosts, news-b.test's pages
    assert summary["records_read"] == 2 + 3 and summary["balanced"]  # the slice's live-radsport.ch pages are rejects
    assert summary["records_found"] == summary["records_read"] + summary["skipped"][OUTSIDE_HOSTS]
    assert summary["records_missed"] == 0
    assert summary["warc"] == server.base + "crawl-data/CC-NEWS/ (2020-08-01..2020-08-20)"
    assert sorted(_warc_gets(server)) == ["/" + SLICE, "/" + NEWS_A]
    assert main(argv) == 0  # again: from the cache
    assert sorted(_warc_gets(server)) == ["/" + SLICE, "/" + NEWS_A]


def test_a_no_wait_launch_checks_the_runner_before_it_downloads(server, tmp_path):
    from newsclean.pipeline.errors import UsageError
    from newsclean.pipeline.launch import launch_clean
    from newsclean.pipeline.options import CleanConfig

    spec = CCNewsInput(*parse_date_range("2020-08-10..2020-08-20"), base=server.base, cache=str(tmp_path / "cache"))
    config = CleanConfig(warc="", out=str(tmp_path / "out"), cc_news=spec)
    with pytest.raises(UsageError, match="--runner NoSuchRunner"):
        launch_clean(config, ["--runner", "NoSuchRunner"])
    assert server.requests == [] and not (tmp_path / "cache").exists()  # neither the listing nor a file fetched
