"""``newsclean clean`` loses nothing and never falls over.

One test (or a few) per hazard: a page twice in its neighbour sample, truncated / non-WARC files and skipped
record types, deep nesting, a clean exit, decoder caps (brotli), the per-record size cap and time budget, content
sniffing and chunked transfer coding, site and category of foreign WARC files.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import subprocess
import sys
import time
import tracemalloc
import uuid
from datetime import UTC, datetime
from pathlib import Path

import apache_beam as beam
import pyarrow.parquet as pq
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from repo import SHARED_DATA
from warc_builder import Response, article_page, paragraph, write_warc
from warcio.archiveiterator import ArchiveIterator as WarcioIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from newsclean.pipeline import stages
from newsclean.pipeline.budget import RecordTimeout, time_budget
from newsclean.pipeline.warc_reader import (
    MAX_BODY_BYTES,
    BodyTooLargeError,
    ContentDecodingError,
    ReadStats,
    ReadWarcFileFn,
    category_from_url,
    decode_chunked,
    decode_content_encoding,
    iter_warc_file,
    site_from_url,
    url_section,
)
from newsclean.schemas.records import Page, Provenance, Reject
from newsclean.schemas.sniff import looks_binary
from newsclean.transforms.chain import DEFAULT_CONFIG
from newsclean.transforms.parse import MAX_DEPTH
from newsclean.transforms.site_evidence import learn_site_evidence

CC_SAMPLE = SHARED_DATA / "warc-samples" / "warcfile.warc.gz"
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def _read(path: Path | str, data: bytes | None = None) -> tuple[list, ReadStats]:
    stats = ReadStats()
    stream = io.BytesIO(data) if data is not None else None
    return list(iter_warc_file(str(path), stream=stream, stats=stats)), stats


def _page(html: bytes | str, url: str = "http://alpha.test/politics/1.html", **kw) -> Page:
    body = html.encode() if isinstance(html, str) else html
    fields = dict(url=url, site="alpha", category="politics", fetched_at=T0, status=200,
                  content_type="text/html", charset="utf-8", html=body,
                  provenance=Provenance("f.warc.gz", "<urn:uuid:1>", 0))
    fields.update(kw)
    return Page(**fields)


def _article(seed: int) -> str:
    return article_page("alpha", "politics", f"Story {seed}", [paragraph(seed * 10 + j) for j in range(3)])


# --- a page twice in its neighbour sample ---------------------------------------------------------


def test_page_fetched_twice_is_not_learned_as_its_own_static_noise():
    html = _article(1)
    signature = learn_site_evidence([html, html])  # the same page fetched twice (e.g. a tracking parameter)
    out = stages.clean_page(_page(html), signature, DEFAULT_CONFIG)
    assert out.__class__.__name__ == "Article", out  # before: no_content (all text "on every neighbour")
    assert paragraph(10) in out.text


def test_near_identical_fetches_are_one_neighbour():
    html = article_page("alpha", "politics", "Long story", [paragraph(200 + j) for j in range(40)])
    variant = html.replace("By Staff Reporter", "By Staff Reporter, updated 12:05")  # a re-crawl
    assert len(learn_site_evidence([html, variant]).static.keys) == 0  # one neighbour: nothing is static
    other = _article(3)  # a real second neighbour still gives the template
    assert len(learn_site_evidence([html, variant, other]).static.keys) > 0


# --- truncated and non-WARC files, skipped record types -------------------------------------------


def _demo_warc(tmp_path: Path) -> tuple[bytes, list[int], set[int]]:
    """A small .warc.gz; returns its bytes, the offsets of its response records, and every record boundary."""
    path = write_warc(tmp_path / "s" / "c" / "f.warc.gz", "s", "c",
                      [Response(f"http://s.test/c/{i}.html", _article(i).encode()) for i in range(3)])
    data = path.read_bytes()
    offsets, bounds = [], {0, len(data)}
    it = WarcioIterator(io.BytesIO(data))
    for rec in it:
        if rec.rec_type == "response":
            offsets.append(it.get_record_offset())
        bounds.add(it.get_record_offset())
    return data, offsets, bounds


def test_every_cut_of_a_warc_gz_is_accounted_for(tmp_path):
    data, offsets, bounds = _demo_warc(tmp_path)
    silent = []
    for cut in range(1, len(data), 3):
        items, stats = _read("cut.warc.gz", data[:cut])
        started = sum(1 for off in offsets if off < cut)
        assert stats.records_read == stats.pages + stats.rejects == len(items)
        assert started <= stats.records_read <= started + 1, (cut, stats)
        reasons = {i.reason for i in items if isinstance(i, Reject)}
        if cut not in bounds and not reasons & {"truncated_record", "not_warc"}:
            silent.append(cut)
    assert not silent, f"cuts read as a complete file: {silent[:10]} ({len(silent)} in all)"
    items, stats = _read("whole.warc.gz", data)
    assert stats == ReadStats(records_read=3, pages=3, rejects=0)


@pytest.mark.skipif(not CC_SAMPLE.exists(), reason="needs ../shared/data/warc-samples/warcfile.warc.gz; absent here")
def test_cut_common_crawl_sample_is_accounted_for():
    data = CC_SAMPLE.read_bytes()
    for cut in range(1000, len(data), 997):
        items, stats = _read("cc.warc.gz", data[:cut])
        assert stats.records_read == stats.pages + stats.rejects
        assert any(isinstance(i, Reject) and i.reason in ("truncated_record", "not_warc") for i in items), cut


def test_random_bytes_are_not_warc(tmp_path):
    for data in (os.urandom(3000), gzip.compress(os.urandom(3000)), b"<html>not a warc</html>\n" * 50):
        items, stats = _read("junk.warc.gz", data)
        assert stats == ReadStats(records_read=1, pages=0, rejects=1)
        assert items[0].reason == "not_warc"
    items, stats = _read("empty.warc.gz", b"")
    assert (items, stats) == ([], ReadStats())


def _warc_with_other_record_types(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=True)
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        w.write_record(w.create_warc_record("http://a.test/x/1.html", "response", payload=io.BytesIO(b"<p>hi</p>"),
                                           length=9, http_headers=http))
        w.write_record(w.create_revisit_record("http://a.test/x/1.html", "sha1:AAAA", "http://a.test/x/1.html",
                                               "20240501120000"))
        w.write_record(w.create_warc_record("http://a.test/x/logo.txt", "resource", payload=io.BytesIO(b"logo"),
                                            length=4, warc_content_type="text/plain"))
        w.write_record(w.create_warc_record("http://a.test/x/1.html", "metadata", payload=io.BytesIO(b"a: b\r\n"),
                                            length=6, warc_content_type="application/warc-fields"))
    return path


def test_skipped_record_types_are_counted(tmp_path):
    path = _warc_with_other_record_types(tmp_path / "f.warc.gz")
    items, stats = _read(path)
    assert stats.records_read == 1 and stats.skipped == {"revisit": 1, "resource": 1, "metadata": 1}
    fn = ReadWarcFileFn()
    fn.setup()
    counts = dict(o.value for o in fn.process(str(path)) if getattr(o, "tag", None) == "counts")
    assert counts == {"records_read": 1, "records_found": 1, "records_missed": 0, "skipped_revisit": 1,
                      "skipped_resource": 1, "skipped_metadata": 1}


# --- deep nesting -----------------------------------------------------------------------------------


def test_deep_unclosed_tags_keep_every_paragraph():
    paras = [f"Paragraph number {i} of the story has a few words to keep it long enough." for i in range(400)]
    html = "<html><body>" + "".join(f"<font><p>{p}</p>" for p in paras) + "</body></html>"
    out = stages.clean_page(_page(html), None, DEFAULT_CONFIG)
    assert out.text.count("Paragraph number") == 400  # libxml2's depth cut kept 253


def test_too_deep_is_a_reject_with_its_own_reason():
    html = "<html><body>" + "<div>" * (MAX_DEPTH + 50) + "<p>" + paragraph(7) + "</p></body></html>"
    out = stages.clean_page(_page(html), None, DEFAULT_CONFIG)
    assert (out.reason, out.stage) == ("too_deep", "clean")  # before: no_content, the text cut away


# --- a clean exit -----------------------------------------------------------------------------------


def test_time_budget_watchdog_does_not_outlive_the_interpreter():
    """The interpreter exits with status 0 while the budget's watchdog thread waits (it is a daemon)."""
    code = ("from newsclean.pipeline.budget import time_budget\n"
            "with time_budget(30):\n    pass\n")
    assert subprocess.run([sys.executable, "-c", code], timeout=60).returncode == 0


# --- every decoder capped ---------------------------------------------------------------------------


def test_brotli_bomb_stops_at_the_cap():
    brotli = pytest.importorskip("brotli")
    bomb = brotli.compress(b"\0" * (8 * MAX_BODY_BYTES), quality=1)  # 80 MiB of zeros in a few KB
    tracemalloc.start()
    try:
        with pytest.raises(BodyTooLargeError):
            decode_content_encoding(bomb, "br")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * MAX_BODY_BYTES  # before: the whole 80 MiB was inflated, then measured
    assert decode_content_encoding(brotli.compress(b"<p>ok</p>"), "br") == b"<p>ok</p>"
    with pytest.raises(ContentDecodingError):
        decode_content_encoding(brotli.compress(b"<p>ok</p>" * 1000)[:-5], "br")


def _raw_record(http_block: bytes, uri: str = "http://x.test/news/a.html") -> bytes:
    head = ["WARC/1.0", "WARC-Type: response", f"WARC-Record-ID: <urn:uuid:{uuid.uuid4()}>",
            "WARC-Date: 2024-01-02T03:04:05Z", f"WARC-Target-URI: {uri}",
            "Content-Type: application/http; msgtype=response", f"Content-Length: {len(http_block)}"]
    return gzip.compress(("\r\n".join(head) + "\r\n\r\n").encode() + http_block + b"\r\n\r\n")


def test_gzip_bomb_record_is_too_large(tmp_path):
    bomb = gzip.compress(b"\0" * (MAX_BODY_BYTES + 1024))
    block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n\r\n" + bomb
    items, _ = _read("bomb.warc.gz", _raw_record(block))
    assert (items[0].reason, items[0].stage) == ("too_large", "decode")  # before: decode_error


# --- per-record size cap and time budget -----------------------------------------------------------


def test_oversized_payload_is_too_large():
    block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>" + b"x" * (MAX_BODY_BYTES + 10)
    items, stats = _read("big.warc.gz", _raw_record(block))
    assert stats.records_read == 1 and items[0].reason == "too_large"


def test_time_budget_interrupts_python_code():
    t0 = time.monotonic()
    with pytest.raises(RecordTimeout):
        with time_budget(0.2):
            while True:
                pass
    assert time.monotonic() - t0 < 5
    with time_budget(5):  # finishing in time leaves no exception behind
        sum(range(1000))
    time.sleep(0.05)


def test_time_budget_on_the_direct_runner(monkeypatch):
    """A page that never finishes becomes a ``timeout`` reject inside a Beam worker; the others still clean."""
    real = stages.extract_article

    def slow_for_one_page(html, signature, config, url=None, **kw):
        if url.endswith("/hang.html"):
            while True:
                pass
        return real(html, signature, config, url=url, **kw)

    monkeypatch.setattr(stages, "extract_article", slow_for_one_page)
    monkeypatch.setattr(stages, "RECORD_TIME_BUDGET_S", 1.0)
    pages = [_page(_article(5), url="http://alpha.test/politics/ok.html"),
             _page(_article(6), url="http://alpha.test/politics/hang.html")]
    with TestPipeline(runner="FnApiRunner") as p:  # the DirectRunner would try to fetch Prism first
        signatures = p | "NoSignatures" >> beam.Create([])
        out = p | beam.Create(pages) | stages.CleanPages(signatures)
        reasons = out["rejects"] | "Reasons" >> beam.Map(lambda r: (r.url, r.reason))
        urls = out["articles"] | "Urls" >> beam.Map(lambda a: a.url)
        from apache_beam.testing.util import assert_that, equal_to

        assert_that(reasons, equal_to([("http://alpha.test/politics/hang.html", "timeout")]), label="CheckRejects")
        assert_that(urls, equal_to(["http://alpha.test/politics/ok.html"]), label="CheckArticles")


# --- content sniffing and chunked transfer coding ---------------------------------------------------


def test_binary_declared_html_is_not_html():
    png = b"\x89PNG\r\n\x1a\n" + os.urandom(4000)
    assert stages.classify_response(_page(png))[0].value == "not_html"  # before: None, then an "article"
    noise = bytes(range(256)) * 20
    assert stages.classify_response(_page(noise))[0].value == "not_html"
    assert not looks_binary(_article(1).encode()) and not looks_binary("\ufeff<p>é</p>".encode("utf-16"))
    assert stages.classify_response(_page(_article(1))) is None


def _kept_paragraphs(html: bytes, seed: int) -> tuple[str, str]:
    """The text of ``html`` through ``newsclean clean``'s path (the filter, then :func:`stages.clean_page`) and through
    ``newsclean.extract``, each checked to hold the three paragraphs of :func:`_article` ``(seed)``."""
    import newsclean

    assert stages.classify_response(_page(html)) is None
    row = stages.clean_page(_page(html), None, DEFAULT_CONFIG)
    assert not isinstance(row, Reject), row
    texts = row.text, newsclean.extract(html).text
    for text in texts:
        assert all(paragraph(seed * 10 + j)[:60] in text for j in range(3))
    return texts


_C0_BUT_NEWLINE_AND_TAB = re.compile("[\x00-\x08\x0b-\x1f]")


@pytest.mark.parametrize("control", [b"\x0b", b"\x08", b"\x00"])
def test_html_page_with_a_stray_control_byte_is_an_article(control):
    # The first KiB holds an HTML signature first (WHATWG MIME Sniffing 7.1), so one control byte there does not
    # make the page binary (before: a not_html reject in the pipeline, an article through newsclean.extract).
    html = _article(5).encode().replace(b"<title>", b"<title>" + control, 1).replace(b"<h1>", b"<h1>" + control, 1)
    assert html.index(control) < 1024
    for text in _kept_paragraphs(html, 5):
        assert not _C0_BUT_NEWLINE_AND_TAB.search(text)


def test_character_references_to_controls_leave_no_control_in_the_text():
    html = _article(6).replace("<h1>", "<h1>&#8;&#x0B;&#0;&#X1f", 1).encode()
    html = html.replace(b"</p>", b"&#11;</p>", 1)
    for text in _kept_paragraphs(html, 6):
        assert not _C0_BUT_NEWLINE_AND_TAB.search(text)


@pytest.mark.parametrize("body", [
    b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8,
    b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n" + bytes(range(32)) * 8,
    gzip.compress(b"<html><body><p>compressed twice</p></body></html>" * 20, mtime=0),
    bytes(range(256)) * 20,                                          # control-heavy, no signature
    b"\x00\x01\x02\x03<!DOCTYPE html><html><body><p>text</p></body></html>",  # controls before the signature
    b"<htmlx>\x00\x01\x02 <p>text</p>",                             # "<html" without a tag-terminating byte
])
def test_binary_payloads_are_still_not_html(body):
    assert looks_binary(body)
    assert stages.classify_response(_page(body))[0].value == "not_html"


@pytest.mark.parametrize("fault", [
    lambda html: '<?xml version="1.0" encoding="utf-8">' + html,               # a declaration without its "?"
    lambda html: html.replace('<html lang="en">', "<html lang='en\n"),         # a quote that never closes
    lambda html: html.replace("</head><body>", "<section>").replace("</body>", "</section>"),  # no <body>
    lambda html: (html.replace("</head>", "<script>" + "var viewState = 'abc def';\n" * 1000 + "</script></head>")
                  .replace("<body>", "<body><form id='aspnetForm' method='post'>")
                  .replace("</body>", "</form></body>")),  # a page-wide form beside 4,000 words of script
])
def test_document_frame_faults_are_articles_in_the_pipeline(fault):
    _kept_paragraphs(fault(_article(7)).encode(), 7)


def _chunked(body: bytes, size: int = 1000) -> bytes:
    parts = [b"%x\r\n%s\r\n" % (len(body[i:i + size]), body[i:i + size]) for i in range(0, len(body), size)]
    return b"".join(parts) + b"0\r\n\r\n"


def test_chunked_transfer_coding_is_decoded():
    html = _article(8).encode()
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n"
    items, _ = _read("c.warc.gz", _raw_record(head + b"\r\n" + _chunked(html)))
    assert items[0].html == html  # before: chunk sizes in the text
    items, _ = _read("c.warc.gz", _raw_record(head + b"Content-Encoding: gzip\r\n\r\n" + _chunked(gzip.compress(html))))
    assert items[0].html == html  # before: decode_error
    items, _ = _read("c.warc.gz", _raw_record(head + b"\r\n" + html))  # stored de-chunked, header kept
    assert items[0].html == html


def test_decode_chunked_is_strict():
    assert decode_chunked(b"3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\n\r\n") == b"abcde"
    assert decode_chunked(b"3\nabc\n0\n\n") == b"abc"
    with pytest.raises(ContentDecodingError):
        decode_chunked(b"3\r\nabcXX2\r\nde\r\n0\r\n\r\n")
    with pytest.raises(BodyTooLargeError):
        decode_chunked(_chunked(b"x" * 3000), limit=2000)


# --- site and category of foreign WARC files --------------------------------------------------------


def test_site_and_category_from_the_url():
    assert site_from_url("https://www.bbc.co.uk:443/news/world-123") == "www.bbc.co.uk"  # the host, not the domain
    assert site_from_url("http://virtualgeek.typepad.com/x") != site_from_url("http://legaltimes.typepad.com/x")
    assert site_from_url("http://127.0.0.1:8080/a/b") == "127.0.0.1" and site_from_url("no url") == "unknown"
    assert url_section("https://www.bbc.co.uk/news/world-123") == "news"
    assert url_section("https://x.com/2024/05/story.html") is None and url_section("https://x.com/story.html") is None
    assert url_section("http://x.com/arts-&amp;-entertainment/story") == "arts-&-entertainment"  # entities decoded
    assert category_from_url("https://x.com/news/a", "x.com", {("x.com", "news")}) == "news"
    assert category_from_url("https://x.com/world/a", "x.com", {("x.com", "news")}) == "unknown"  # too few pages
    assert category_from_url("https://x.com/world/a", "x.com") == "world"  # no counts known: every section


@pytest.mark.skipif(not CC_SAMPLE.exists(), reason="needs ../shared/data/warc-samples/warcfile.warc.gz; absent here")
def test_common_crawl_sample_gets_sites_from_urls():
    items, stats = _read(CC_SAMPLE)
    pages = [i for i in items if isinstance(i, Page)]
    assert len(pages) == 16 and stats.skipped == {"request": 17, "metadata": 16}
    sites = {p.site for p in pages}
    assert len(sites) == 15 and not sites & {"data", "warc-samples", "unknown"}  # before: all "data"
    by_url = {p.url: (p.site, p.category) for p in pages}
    assert by_url["http://06.live-radsport.ch/tippspiel/stats_140_petzi.html"] == ("06.live-radsport.ch", "tippspiel")


def test_summary_reads_parquet_without_arrow_threads(tmp_path, monkeypatch):
    """Case 5 pinned: ``pq.read_table`` on a Python file object with Arrow's thread pool aborted the
    interpreter at exit ("terminate called without an active exception", 2 of 40 runs here, 0 of 40
    with ``use_threads=False``; apache/arrow#34314). The run summary must read without the pool."""
    import pyarrow as pa

    from newsclean.pipeline import summary

    (tmp_path / "articles").mkdir()
    pq.write_table(pa.table({"site": ["a", "b"]}), tmp_path / "articles" / "part-0.parquet")
    seen = []
    real = pq.read_table

    def spy(source, *args, **kw):
        seen.append(kw.get("use_threads", True))
        return real(source, *args, **kw)

    monkeypatch.setattr(summary.pq, "read_table", spy)
    assert summary.summarize_output(str(tmp_path)).articles_written == 2
    assert seen and not any(seen)
