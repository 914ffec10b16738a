"""Article rows carry captions, lead, page type and the raw <title>; a foreign WARC's listing pages are not_article
rejects unless --keep-listings; --text-includes decides what text holds (pipeline/stages.py, pipeline/options.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from newsclean.pipeline import stages
from newsclean.pipeline.errors import UsageError
from newsclean.pipeline.options import CleanConfig, add_clean_arguments
from newsclean.schemas.records import Article, Provenance, Reject
from newsclean.transforms.chain import DEFAULT_CONFIG

PROSE = ("The council voted on Tuesday to close the old bridge for repairs, after engineers found cracks in "
         "two of its supports. ")
CAPTION = "The old bridge, seen from the river bank."
ARTICLE = (f"<html><head><title>Bridge to close - The Daily Planet</title>"
           "<meta property='article:published_time' content='2023-05-01T10:00:00Z'></head><body><div class='story'>"
           f"<h1>Bridge to close</h1><figure><img src='a.jpg'><figcaption>{CAPTION}</figcaption></figure>"
           f"<p>{PROSE * 3}</p><p>{PROSE * 3}</p><p>{PROSE * 2}</p></div></body></html>")
LISTING = ("<html><head><title>World news</title></head><body><h1>World news</h1><ul>"
           + "".join(f"<li class='card'><a href='/s{i}'>Headline number {i} of the world section</a>"
                     f"<p>A short description of that story, with more words.</p></li>" for i in range(15))
           + "</ul></body></html>")


def _page(html: str, page_type: str | None = None):
    from newsclean.schemas.records import Page

    return Page(url="http://alpha.test/world/1.html", site="alpha", category="world",
                fetched_at=datetime(2024, 1, 1, tzinfo=UTC), status=200, content_type="text/html", charset="utf-8",
                html=html.encode(), provenance=Provenance("f.warc.gz", "<urn:uuid:1>", 0), page_type=page_type)


def test_an_article_row_has_its_captions_title_and_page_type():
    row = stages.clean_page(_page(ARTICLE), None, DEFAULT_CONFIG)
    assert isinstance(row, Article)
    assert row.captions == (CAPTION,) and CAPTION not in row.text and row.page_type == "article"
    undated_html = ARTICLE.replace("<meta property='article:published_time' content='2023-05-01T10:00:00Z'>", "")
    undated = stages.clean_page(_page(undated_html), None, DEFAULT_CONFIG)
    assert undated.page_type == "other"  # 160 words, no date, no author: an "about us" page, not news
    assert row.title == "Bridge to close" and row.page_title == "Bridge to close - The Daily Planet"
    both = stages.clean_page(_page(ARTICLE), None, DEFAULT_CONFIG.with_(text_includes=("captions",)))
    assert CAPTION in both.text


def test_a_foreign_listing_is_rejected_unless_kept_a_crawled_one_keeps_the_crawlers_type():
    out = stages.clean_page(_page(LISTING), None, DEFAULT_CONFIG)
    assert isinstance(out, Reject) and out.reason == "not_article" and "listing" in out.message
    kept = stages.clean_page(_page(LISTING), None, DEFAULT_CONFIG.with_(listing_text=True), keep_listings=True)
    assert isinstance(kept, Article) and kept.page_type == "listing"
    assert kept.text.splitlines()[0] == "Headline number 0 of the world section A short description of that story, " \
                                        "with more words."
    crawled = stages.clean_page(_page(LISTING, page_type="article"), None, DEFAULT_CONFIG)
    assert isinstance(crawled, Article) and crawled.page_type == "article"  # the crawler's word


def test_text_includes_option():
    import argparse

    parser = argparse.ArgumentParser()
    add_clean_arguments(parser)
    args = parser.parse_args(["--warc", "w", "--out", "o", "--text-includes", "captions,lead", "--keep-listings"])
    assert args.text_includes == ("captions", "lead") and args.keep_listings is True
    assert parser.parse_args(["--warc", "w", "--out", "o"]).text_includes is None  # the chain's own
    assert parser.parse_args(["--warc", "w", "--out", "o", "--text-includes", "none"]).text_includes == ()
    with pytest.raises(SystemExit):
        parser.parse_args(["--warc", "w", "--out", "o", "--text-includes", "comments"])
    with pytest.raises(UsageError):
        CleanConfig(warc="w", out="o", text_includes=("comments",))
