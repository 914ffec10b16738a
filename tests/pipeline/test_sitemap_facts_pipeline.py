"""Sitemap facts in the WARC metadata record reach the Page (reader) and the Article row (build_article).

WARC files are written with tests/warc_builder.py (warcio), as the crawler lays them out: response,
request, then a ``metadata`` record ``WARC-Concurrent-To`` the response.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pyarrow.parquet as pq
from warc_builder import Response, article_page, paragraph, write_warc

from newsclean.pipeline.clean import run_clean
from newsclean.pipeline.options import CleanConfig
from newsclean.pipeline.warc_reader import ReadStats, iter_warc_file, parse_warc_fields
from newsclean.schemas.contract import SITEMAP_LASTMOD_FIELD, SITEMAP_PUBLICATION_DATE_FIELD, SITEMAP_TITLE_FIELD
from newsclean.schemas.records import Page

BASE = "https://daily.example.org/world"


def _untitled_page(seed: int) -> str:
    return "<html><body><article>" + "".join(f"<p>{paragraph(seed + i)}</p>" for i in range(4)) + \
        "</article></body></html>"


def _dated_page(seed: int) -> str:
    html = article_page("daily", "world", "Own headline", [paragraph(seed + i) for i in range(4)])
    return html.replace("<head>", '<head><meta property="article:published_time" content="2024-04-01T09:00:00Z">')


def _responses() -> list[Response]:
    facts = [(SITEMAP_PUBLICATION_DATE_FIELD, "2024-04-30T08:30:00+02:00"), (SITEMAP_TITLE_FIELD, "Sitemap headline"),
             (SITEMAP_LASTMOD_FIELD, "2024-04-30T12:00:00Z")]
    return [
        Response(f"{BASE}/titled.html", article_page("daily", "world", "Page headline",
                                                     [paragraph(10 + i) for i in range(4)]).encode(),
                 metadata=[("site", "daily"), ("outcome", "stored"), *facts]),
        Response(f"{BASE}/untitled.html", _untitled_page(20).encode(), metadata=[("site", "daily"), *facts]),
        Response(f"{BASE}/dated.html", _dated_page(30).encode(), metadata=facts),
        Response(f"{BASE}/missing.html", b"not found", status=404, metadata=[("outcome", "failed")]),
        Response(f"{BASE}/bare.html", _untitled_page(40).encode()),  # no metadata record (another crawler)
    ]


def test_parse_warc_fields():
    block = b"site: daily\r\nsitemap-title: A: B \r\nno colon line\r\nsite: other\r\n\xff: x\r\n"
    assert parse_warc_fields(block) == {"site": "daily", "sitemap-title": "A: B", "\ufffd": "x"}


def test_reader_attaches_the_facts_to_their_page_in_file_order(tmp_path):
    path = write_warc(tmp_path / "daily" / "world" / "a.warc.gz", "daily", "world", _responses())
    stats = ReadStats()
    items = list(iter_warc_file(str(path), stats=stats))
    assert [i.url for i in items] == [r.url for r in _responses()]
    assert all(isinstance(i, Page) for i in items)  # the 404 is a page too: the filter stage rejects it
    titled, untitled, dated, missing, bare = items
    assert (titled.sitemap_publication_date, titled.sitemap_title, titled.sitemap_lastmod) == (
        "2024-04-30T08:30:00+02:00", "Sitemap headline", "2024-04-30T12:00:00Z")
    assert untitled.sitemap_title == "Sitemap headline"
    assert (missing.sitemap_publication_date, missing.sitemap_title, missing.sitemap_lastmod) == (None, None, None)
    assert (bare.sitemap_publication_date, bare.sitemap_title) == (None, None)
    assert titled.html.startswith(b"<!DOCTYPE html>")  # the body is still there after the metadata read
    assert (stats.records_read, stats.pages, stats.skipped["metadata"]) == (5, 5, 4)


def test_articles_fall_back_to_sitemap_facts_end_to_end(tmp_path):
    write_warc(tmp_path / "warc" / "daily" / "world" / "a.warc.gz", "daily", "world", _responses())
    out = tmp_path / "out"
    run_clean(CleanConfig(warc=str(tmp_path / "warc" / "**" / "*.warc.gz"), out=str(out)), ["--runner", "DirectRunner"])
    rows = {r["url"].rsplit("/", 1)[1]: r for r in pq.read_table(out / "articles").to_pylist()}
    assert set(rows) == {"titled.html", "untitled.html", "dated.html", "bare.html"}
    from_sitemap = datetime(2024, 4, 30, 6, 30, tzinfo=UTC)  # 08:30+02:00
    # The page says nothing of its date: the sitemap's; the page's own title wins over the sitemap's.
    assert rows["titled.html"]["published_at"] == from_sitemap
    assert rows["titled.html"]["title"] != "Sitemap headline" and "Page headline" in rows["titled.html"]["title"]
    assert rows["titled.html"]["modified_at"] == datetime(2024, 4, 30, 12, tzinfo=UTC)
    # No title on the page: the sitemap's news:title.
    assert rows["untitled.html"]["title"] == "Sitemap headline"
    # The page's own publication date wins over the sitemap's.
    assert rows["dated.html"]["published_at"] == datetime(2024, 4, 1, 9, tzinfo=UTC)
    # No metadata record: nothing to fall back to.
    assert rows["bare.html"]["published_at"] is None and rows["bare.html"]["title"] is None
