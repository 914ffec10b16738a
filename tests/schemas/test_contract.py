"""The crawl -> clean contract (newsclean.schemas.contract): what the crawler writes, the reader reads back."""

from __future__ import annotations

import ast
from datetime import UTC, datetime
from pathlib import Path

from repo import ROOT
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders

from newsclean.crawler.warc import Capture, PageFacts, RecordFactory, WarcFiles, http_request_headers
from newsclean.pipeline.stages import classify_response
from newsclean.pipeline.warc_reader import iter_warc_file
from newsclean.schemas import contract
from newsclean.schemas.contract import (
    CATEGORY_HEADER,
    DEPTH_HEADER,
    NOT_ARTICLE_PAGE_TYPES,
    PAGE_TYPE_HEADER,
    SITE_HEADER,
    PageType,
    RejectReason,
)
from newsclean.schemas.records import Page, Reject

HTML = b"<html><head><title>t</title></head><body><p>" + b"word " * 80 + b"</p></body></html>"


def _capture(url: str) -> Capture:
    from scrapy.http import Request

    head = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
    return Capture(url, datetime(2024, 5, 1, 12, tzinfo=UTC), http_request_headers(Request(url)), b"", 200,
                   head, HTML)


def _crawl_warc(out: Path, pages: list[tuple[str, PageType]]) -> Path:
    """A WARC file written by the crawler's own writer: one page group per (url, page type)."""
    files = WarcFiles(out, max_bytes=1 << 30, info_fields={"software": "tests"})
    factory = RecordFactory()
    for url, page_type in pages:
        facts = PageFacts("daily", "world", 2, page_type, (("role", "article"), ("outcome", "stored")))
        response, request = factory.exchange(_capture(url), facts)
        meta = factory.metadata(url, datetime(2024, 5, 1, 12, tzinfo=UTC),
                                response.rec_headers.get_header("WARC-Record-ID"), facts)
        files.write_group("daily", "world", [response, request, meta])
    files.close()
    (path,) = files.totals.paths
    return Path(path)


def test_crawler_headers_are_read_back_by_the_reader(tmp_path):
    # The crawler writes its facts under the contract's header names; the reader finds them there.
    path = _crawl_warc(tmp_path / "elsewhere", [("http://daily.test/a", PageType.ARTICLE),
                                                ("http://daily.test/news", PageType.LISTING)])
    # The file sits under OUT/daily/world/, so move it where the path says nothing: the site and
    # category the reader reports must then come from the headers, not from the path fallback.
    moved = tmp_path / "x.warc.gz"
    path.rename(moved)
    with open(moved, "rb") as fh:
        written = [dict(r.rec_headers.headers) for r in ArchiveIterator(fh) if r.rec_type == "response"]
    assert [h[PAGE_TYPE_HEADER] for h in written] == ["article", "listing"]
    assert all(h[SITE_HEADER] == "daily" and h[CATEGORY_HEADER] == "world" and h[DEPTH_HEADER] == "2"
               for h in written)

    pages = list(iter_warc_file(str(moved)))
    assert all(isinstance(p, Page) for p in pages)
    assert [(p.url, p.site, p.category, p.page_type) for p in pages] == [
        ("http://daily.test/a", "daily", "world", "article"), ("http://daily.test/news", "daily", "world", "listing")]
    # ...and the pipeline acts on the page type: the listing is not cleaned, the article is.
    assert classify_response(pages[0]) is None
    assert classify_response(pages[1])[0] is RejectReason.NOT_ARTICLE


def test_without_the_headers_the_reader_falls_back(tmp_path, monkeypatch):
    path = _crawl_warc(tmp_path, [("http://daily.test/a", PageType.ARTICLE)])
    # same bytes, crawler headers stripped from every record: no site anywhere but the path
    from warcio.warcwriter import WARCWriter

    bare = tmp_path / "bare.warc.gz"
    with open(path, "rb") as src, open(bare, "wb") as dst:
        writer = WARCWriter(dst, gzip=True)
        for record in ArchiveIterator(src):
            for name in (SITE_HEADER, CATEGORY_HEADER, DEPTH_HEADER, PAGE_TYPE_HEADER):
                record.rec_headers.remove_header(name)
            writer.write_record(record)
    monkeypatch.chdir(tmp_path)  # a bare file name: the path names no site either
    (page,) = [p for p in iter_warc_file(bare.name) if not isinstance(p, Reject)]
    # No page type, and site/category from the reader's fallbacks (URL host, else ``unknown``), never the crawl's.
    assert page.page_type is None and page.category == contract.UNKNOWN and page.site not in ("daily", "world")


def test_a_unicode_category_is_written_and_read_back(tmp_path):
    # A category from a page's article:section keeps its letters (NFC UTF-8) in the path and the headers.
    files = WarcFiles(tmp_path, max_bytes=1 << 30, info_fields={"software": "tests"})
    factory = RecordFactory()
    facts = PageFacts("daily", "économie", 1, PageType.ARTICLE, (("role", "article"), ("outcome", "stored")))
    response, request = factory.exchange(_capture("http://daily.test/a"), facts)
    files.write_group("daily", "économie", [response, request])
    files.close()
    (path,) = files.totals.paths
    assert Path(path).parent == tmp_path / "daily" / "économie"
    assert [(p.site, p.category) for p in iter_warc_file(path)] == [("daily", "économie")]


def test_contract_values_are_plain_strings():
    # Headers, metadata records and Parquet columns hold plain strings: the members must equal them.
    assert PageType.LISTING == "listing" and str(PageType.LISTING) == "listing"
    assert f"{RejectReason.TOO_SHORT}" == "too_short"
    assert PageType.ARTICLE not in NOT_ARTICLE_PAGE_TYPES and PageType.OTHER not in NOT_ARTICLE_PAGE_TYPES
    assert "robots" in NOT_ARTICLE_PAGE_TYPES


def test_no_side_spells_the_extension_header_names_itself():
    # Only the contract module may hold a "WARC-Newsclean-*" string literal (docstrings aside).
    offenders = []
    for folder in ("crawler", "pipeline", "transforms", "demo", "src/newsclean"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                          if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                          and node.body and isinstance(node.body[0], ast.Expr)
                          and isinstance(node.body[0].value, ast.Constant)}
            offenders += [f"{path.relative_to(ROOT)}:{node.lineno}" for node in ast.walk(tree)
                          if isinstance(node, ast.Constant) and isinstance(node.value, str)
                          and "WARC-Newsclean-" in node.value and id(node) not in docstrings]
    assert offenders == []
