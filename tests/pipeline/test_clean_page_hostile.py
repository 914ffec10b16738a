"""Pages whose bytes mislead, through the pipeline's per-page function (:func:`clean_page`, no Beam): what a
cleaning run publishes for them, an article with the right text or a reject with a reason."""

from __future__ import annotations

import codecs
import json
from datetime import UTC, datetime

from newsclean.pipeline.stages import clean_page
from newsclean.schemas.records import Article, Page, Provenance, Reject
from newsclean.transforms.chain import DEFAULT_CONFIG

EN = "The council approved the new budget on Monday after a long debate about schools, roads and parks."
RU = "Новые правила вступили в силу в понедельник, сообщили в министерстве. Жители города довольны переменами."


def html_page(paragraph: str) -> str:
    return ('<html><head><meta charset="utf-8"><title>Headline</title></head><body><article><h1>Headline</h1>'
            + f"<p>{paragraph}</p>" * 12 + "</article></body></html>")


def page(body: bytes, charset: str | None = None, content_type: str = "text/html") -> Page:
    return Page(url="http://a.test/1", site="a", category="c", fetched_at=datetime(2024, 1, 1, tzinfo=UTC),
                status=200, content_type=content_type, charset=charset, html=body,
                provenance=Provenance("/w/f.warc.gz", "<urn:uuid:1>", 0))


def test_utf16be_with_bom_is_an_english_article():
    out = clean_page(page(codecs.BOM_UTF16_BE + html_page(EN).encode("utf-16-be")), None, DEFAULT_CONFIG)
    assert isinstance(out, Article) and EN in out.text and out.language == "en"


def test_utf8_body_under_a_windows_1251_header_is_a_russian_article():
    out = clean_page(page(html_page(RU).encode("utf-8"), charset="windows-1251"), None, DEFAULT_CONFIG)
    assert isinstance(out, Article) and RU in out.text and out.language == "ru"


def test_text_encoded_twice_is_repaired_into_the_article():
    double = html_page(RU).encode("utf-8").decode("cp1251").encode("utf-8")  # published as UTF-8 mojibake
    out = clean_page(page(double, charset="utf-8"), None, DEFAULT_CONFIG)
    assert isinstance(out, Article) and RU in out.text and out.language == "ru"


def test_mojibake_that_cannot_be_undone_is_a_decode_error_not_an_article():
    lost = html_page(RU).encode("utf-8").decode("cp1252", errors="ignore").encode("utf-8")  # bytes lost on the way
    out = clean_page(page(lost, charset="utf-8"), None, DEFAULT_CONFIG)
    assert isinstance(out, Reject) and (out.stage, out.reason) == ("decode", "decode_error")


def test_json_served_as_html_is_not_html():
    body = json.dumps({"items": [{"title": "Headline", "body": EN}] * 10}).encode()
    out = clean_page(page(body, charset="utf-8"), None, DEFAULT_CONFIG)
    assert isinstance(out, Reject) and out.reason == "not_html"


def test_a_json_body_is_rejected_before_cleaning():
    from newsclean.pipeline.stages import classify_response

    body = json.dumps({"items": [{"title": "Headline", "body": EN}] * 10}).encode()
    assert classify_response(page(body, charset="utf-8")) == (
        "not_html", "Content-Type text/html but the body is a JSON document")
    assert classify_response(page(b"<html><body><p>[1, 2, 3]</p></body></html>", charset="utf-8")) is None
