"""Incremental re-crawls (the SQLite crawl store) and pause/resume (JOBDIR), on 127.0.0.2 only.

* two runs back to back: the second fetches the listing and the feed again, skips the known articles
  and writes no duplicate article record; ``--refetch-after`` brings them back;
* a crawl killed (SIGKILL, and SIGTERM) in the middle against a slow server, then started again with
  the same ``--jobdir``: every acknowledged page is still there, no URL is written twice, the ``.open``
  leftover is recovered (a torn record at its end is cut off) and every file passes ``warcio check``.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections import Counter
from contextlib import redirect_stdout
from io import StringIO
from pathlib import Path
from types import SimpleNamespace

import pytest
from repo import ROOT
from test_crawler import read_warc, warc_files
from warcio.checker import Checker

from newsclean.crawler.run import CrawlSummary
from newsclean.crawler.store import CrawlStore, canonical_url
from newsclean.demo.localsite import LocalSites, Resource, StaticSite

REPO = ROOT


def page(*hrefs: str, text: str = "Some text.") -> str:
    links = "".join(f'<li><a href="{h}">link</a></li>' for h in hrefs)
    return f"<html><head><title>t</title></head><body><p>{text}</p><ul>{links}</ul></body></html>"


def write_config(path: Path, base: str, extra: str = "", category_from: str = "['config']") -> Path:
    host = base.split("//")[1].split(":")[0]
    path.write_text(textwrap.dedent(f"""\
        [crawl]
        autothrottle = false
        download_delay = 0.0
        allow_private_networks = true
        concurrent_requests_per_domain = 2
        download_timeout = 10
        {extra}
        [[site]]
        name = "solo"
        allowed_domains = ["{host}"]
        article_allow = ['/a/']
        category_from = {category_from}
        [site.categories]
        news = ["{base}/news/", "{base}/feed.xml"]
        """), encoding="utf-8")
    return path


def crawl_cmd(config: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "newsclean.crawler.run", "--config", str(config), "--out", str(out),
            "--log-level", "WARNING", *extra]


def run(config: Path, out: Path, *extra: str) -> CrawlSummary:
    summary = out.parent / f"summary-{time.monotonic_ns()}.json"
    proc = subprocess.run([*crawl_cmd(config, out, *extra), "--summary-json", str(summary)], capture_output=True,
                          text=True, timeout=120, cwd=REPO, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    return CrawlSummary.from_json(summary.read_text(encoding="utf-8"))


def responses(out: Path) -> list:
    return [r for f in warc_files(out) for r in read_warc(f) if r.type == "response"]


def check_warcs(out: Path) -> None:
    assert not list(out.rglob("*.open")), list(out.rglob("*.open"))
    with redirect_stdout(StringIO()) as report:
        status = Checker(SimpleNamespace(inputs=[str(f) for f in warc_files(out)], verbose=False)).process_all()
    assert status == 0, report.getvalue()


def news_site(articles: list[str], delay: float = 0.0) -> StaticSite:
    site = StaticSite("solo")
    site.add("/news/", page(*[f"/a/{a}.html" for a in articles]))
    site.add("/feed.xml", "<rss version='2.0'><channel>" + "".join(
        f"<item><link>/a/{a}.html</link></item>" for a in articles[:2]) + "</channel></rss>",
        content_type="application/rss+xml")
    for a in articles:
        site.resources[f"/a/{a}.html"] = Resource(page(text=f"Article {a}.").encode(), delay=delay)
    return site


def test_second_run_skips_known_articles_and_refetch_after_revisits(tmp_path):
    site = news_site(["one", "two", "three"])
    out = tmp_path / "warc"
    with LocalSites([site]) as servers:
        base = servers.base_urls["solo"]
        config = write_config(tmp_path / "sites.toml", base)
        first = run(config, out)
        site.resources["/news/"] = Resource(page("/a/one.html", "/a/two.html", "/a/three.html", "/a/four.html").encode())
        site.add("/a/four.html", page(text="New today."))
        second = run(config, out)
        time.sleep(1.2)
        third = run(config, out, "--refetch-after", "0.00001")  # 0.86 s
    news = ("solo", "news")
    assert (first.categories[news].stored, first.categories[news].listings) == (3, 2)
    assert (second.categories[news].stored, second.categories[news].skipped_known) == (1, 3)
    assert second.categories[news].listings == 2  # the listing and the feed are fetched again
    assert third.categories[news].stored == 4 and third.categories[news].skipped_known == 0
    assert first.job != second.job != third.job and not second.resumed
    records = responses(out)
    articles = Counter(r.uri for r in records if r.headers["WARC-Newsclean-Page-Type"] == "article")
    assert articles == {f"{base}/a/{a}.html": 2 for a in ("one", "two", "three", "four")}  # run 1 or 2, and run 3
    assert Counter(r.uri for r in records)[f"{base}/news/"] == 3
    assert site.hits["/a/one.html"] == 2 and site.hits["/a/four.html"] == 2
    check_warcs(out)
    store = CrawlStore(out / "crawl-state.sqlite3")
    row = store.page(canonical_url(f"{base}/a/one.html"))
    store.close()
    assert row["page_type"] == "article" and row["status"] == 200 and row["first_fetch"] < row["last_fetch"]
    assert row["payload_digest"].startswith("sha1:") and (out / row["warc_file"]).is_file()  # relative to OUT
    assert row["warc_file"].endswith(".warc.gz") and row["job"] == third.job


def acked_articles(store_path: Path) -> set[str]:
    if not store_path.exists():
        return set()
    db = sqlite3.connect(f"file:{store_path}?mode=ro", uri=True)
    try:
        return {u for (u,) in db.execute("SELECT url FROM pages WHERE page_type = 'article'")}
    except sqlite3.OperationalError:
        return set()
    finally:
        db.close()


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["sigkill", "sigterm"])
def test_killed_crawl_resumes_without_loss_or_duplicates(tmp_path, sig):
    names = [f"n{i:02d}" for i in range(48)]
    site = news_site(names, delay=0.1)
    out, jobdir = tmp_path / "warc", tmp_path / "job"
    with LocalSites([site]) as servers:
        base = servers.base_urls["solo"]
        config = write_config(tmp_path / "sites.toml", base)
        proc = subprocess.Popen(crawl_cmd(config, out, "--jobdir", str(jobdir)), cwd=REPO,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while len(acked_articles(out / "crawl-state.sqlite3")) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        acked = acked_articles(out / "crawl-state.sqlite3")
        assert 4 <= len(acked) < len(names), (len(acked), err[-2000:])
        assert proc.returncode != 0
        leftovers = list(out.rglob("*.open"))
        if sig == signal.SIGKILL:
            assert leftovers, "a killed crawl leaves its open WARC file"
            with open(leftovers[0], "ab") as fh:  # a record torn by the kill
                fh.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage")
        else:
            assert not leftovers, "a graceful stop closes its files"
        hits_before = Counter(site.hits)
        resumed = run(config, out, "--jobdir", str(jobdir))
    assert resumed.resumed and resumed.finish_reason == "finished"
    if sig == signal.SIGKILL:
        assert resumed.recovered and resumed.recovered[0].dropped > 0 and resumed.recovered[0].final
    records = responses(out)
    urls = Counter(r.uri for r in records)
    expected = {f"{base}/a/{n}.html" for n in names}
    assert {u for u in urls if "/a/" in u} == expected  # nothing lost
    assert max(urls.values()) == 1, [u for u, n in urls.items() if n > 1]  # nothing written twice
    assert {canonical_url(u) for u in expected} >= acked
    for url in acked:  # acknowledged before the kill: never fetched again
        assert site.hits[url.split(base)[1]] == hits_before[url.split(base)[1]]
    check_warcs(out)
    job = json.loads((jobdir / "newsclean-job.json").read_text(encoding="utf-8"))
    assert job == {"job": resumed.job, "finished": True}


def pending_rows(store_path: Path) -> int:
    db = sqlite3.connect(f"file:{store_path}?mode=ro", uri=True)
    try:
        return db.execute("SELECT COUNT(*) FROM frontier WHERE state = 'pending'").fetchone()[0]
    finally:
        db.close()


def test_three_sigkills_with_out_spelled_three_ways_lose_and_repeat_nothing(tmp_path):
    """Kill, resume, kill, resume, kill, resume to the end, ``--out`` given as an absolute
    path, a relative one and a relative one with ``..``: every article stored exactly once, nothing left pending."""
    from fastwarc.warc import ArchiveIterator

    names = [f"k{i:02d}" for i in range(40)]
    site = news_site(names, delay=0.05)
    out, jobdir = tmp_path / "warc", tmp_path / "job"
    spellings = [str(out), "warc", "job/../warc"]  # run with cwd=tmp_path
    with LocalSites([site]) as servers:
        base = servers.base_urls["solo"]
        config = write_config(tmp_path / "sites.toml", base)
        for kill, spelled in enumerate(spellings):
            proc = subprocess.Popen(crawl_cmd(config, Path(spelled), "--jobdir", str(jobdir)), cwd=tmp_path,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            deadline = time.monotonic() + 60
            while len(acked_articles(out / "crawl-state.sqlite3")) < 6 * (kill + 1) and time.monotonic() < deadline:
                time.sleep(0.02)
            proc.kill()
            _, err = proc.communicate(timeout=60)
            assert len(acked_articles(out / "crawl-state.sqlite3")) < len(names), err[-2000:]
        summary = out.parent / "summary.json"
        proc = subprocess.run([*crawl_cmd(config, Path("warc"), "--jobdir", str(jobdir)), "--summary-json",
                               str(summary)], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    resumed = CrawlSummary.from_json(summary.read_text(encoding="utf-8"))
    assert resumed.resumed and resumed.finish_reason == "finished"
    urls = Counter(r.uri for r in responses(out))
    assert {u for u in urls if "/a/" in u} == {f"{base}/a/{n}.html" for n in names}  # nothing lost
    assert max(urls.values()) == 1, [u for u, n in urls.items() if n > 1]  # nothing written twice
    assert pending_rows(out / "crawl-state.sqlite3") == 0
    check_warcs(out)
    for path in warc_files(out):  # a second, independent reader verifies every digest
        with open(path, "rb") as fh:
            assert all(rec.verify_block_digest() for rec in ArchiveIterator(fh, parse_http=False)), path


def meta_site(sections: dict[str, str]) -> StaticSite:
    """A listing linking one article per ``sections`` entry (path name -> ``article:section``)."""
    site = StaticSite("solo")
    site.add("/news/", page(*[f"/a/{a}.html" for a in sections]))
    for name, section in sections.items():
        site.add(f"/a/{name}.html", f'<html><head><title>t</title><meta property="article:section" '
                                    f'content="{section}"></head><body><p>Article {name}.</p></body></html>')
    return site


def run_cli(config: Path, out: Path) -> tuple[subprocess.CompletedProcess, CrawlSummary]:
    summary = out.parent / f"summary-{time.monotonic_ns()}.json"
    proc = subprocess.run([*crawl_cmd(config, out), "--summary-json", str(summary)], capture_output=True,
                          text=True, timeout=120, cwd=REPO, check=False)
    return proc, CrawlSummary.from_json(summary.read_text(encoding="utf-8"))


def test_a_thousand_character_section_is_stored_under_a_bounded_name(tmp_path):
    site = meta_site({"long": "Économie " + "très longue rubrique " * 48, "short": "Économie"})
    out = tmp_path / "warc"
    with LocalSites([site]) as servers:
        config = write_config(tmp_path / "sites.toml", servers.base_urls["solo"], category_from="['meta']")
        proc, summary = run_cli(config, out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    stored = {c: r.stored for (_, c), r in summary.categories.items() if r.stored}
    assert len(stored) == 2 and "économie" in stored, stored  # the long one under its own, bounded name
    assert all(len(part.encode("utf-8")) < 200 for f in warc_files(out) for part in f.relative_to(out).parts)
    assert pending_rows(out / "crawl-state.sqlite3") == 0
    check_warcs(out)


def test_a_page_the_file_system_refuses_fails_the_crawl_and_is_fetched_again_next_run(tmp_path):
    site = meta_site({"one": "Sport", "two": "Politics"})
    out = tmp_path / "warc"
    (out / "solo").mkdir(parents=True)
    (out / "solo" / "sport").write_text("a file where the category's directory would go")
    with LocalSites([site]) as servers:
        config = write_config(tmp_path / "sites.toml", servers.base_urls["solo"], category_from="['meta']")
        first, failed = run_cli(config, out)
        (out / "solo" / "sport").unlink()
        second, fixed = run_cli(config, out)
    assert first.returncode == 1, first.stderr[-3000:]
    assert "could not be written" in first.stderr and "storage_error" in first.stderr
    assert failed.categories[("solo", "sport")].failed == {"storage_error": 1}
    assert failed.categories[("solo", "politics")].stored == 1
    assert pending_rows(out / "crawl-state.sqlite3") == 0  # counted, not left pending
    assert second.returncode == 0, second.stderr[-3000:]
    assert fixed.categories[("solo", "sport")].stored == 1 and site.hits["/a/one.html"] == 2  # fetched again
    assert fixed.total("skipped_known") == 1 and site.hits["/a/two.html"] == 1  # stored in the first run
    check_warcs(out)


def test_requests_a_stopped_crawl_left_pending_are_issued_by_the_next_one(tmp_path):
    names = [f"p{i:02d}" for i in range(24)]
    site = news_site(names, delay=0.5)
    out = tmp_path / "warc"
    with LocalSites([site]) as servers:
        config = write_config(tmp_path / "sites.toml", servers.base_urls["solo"])
        # CONCURRENT_REQUESTS=2: the requests Scrapy's downloader already holds still finish after max_time
        first = run(config, out, "--max-time", "2", "-s", "CONCURRENT_REQUESTS=2")
        left = pending_rows(out / "crawl-state.sqlite3")
        site.add("/news/", page())  # the next run finds no link to them
        site.add("/feed.xml", "<rss version='2.0'><channel></channel></rss>", content_type="application/rss+xml")
        second = run(config, out)
    assert first.finish_reason == "closespider_timeout" and 0 < left <= len(names)
    assert first.total("stored") + second.total("stored") == len(names)
    assert all(site.hits[f"/a/{n}.html"] == 1 for n in names)  # each once, over the two runs
    assert pending_rows(out / "crawl-state.sqlite3") == 0
