"""The one-page API (``newsclean.extract``, ``newsclean.learn_site_evidence``): what it raises for bad arguments."""

from __future__ import annotations

import pytest
from warc_builder import article_page, paragraph

import newsclean

PAGE = article_page("alpha", "politics", "A story", [paragraph(j) for j in range(4)])


def test_extract_takes_str_and_bytes_alike():
    assert newsclean.extract(PAGE).text == newsclean.extract(PAGE.encode("utf-8")).text


@pytest.mark.parametrize("html", [42, None, ["<p>x</p>"]])
def test_extract_of_something_that_is_no_page_is_a_type_error_naming_the_argument(html):
    with pytest.raises(TypeError, match=rf"^html must be str or bytes, got {type(html).__name__}$"):
        newsclean.extract(html)


def test_a_neighbour_page_that_is_no_page_is_a_type_error():
    with pytest.raises(TypeError, match="^each neighbour page must be str or bytes, got int$"):
        newsclean.extract(PAGE, neighbours=[PAGE, 7])


def test_an_unknown_chain_name_is_a_value_error_listing_the_names():
    with pytest.raises(ValueError) as caught:
        newsclean.extract(PAGE, chain="nope")
    message = str(caught.value)
    assert "'nope'" in message
    assert all(repr(name) in message for name in newsclean.CONFIGS)


def test_a_chain_that_is_neither_name_nor_config_is_a_type_error():
    with pytest.raises(TypeError, match="^chain must be a chain name"):
        newsclean.extract(PAGE, chain=3)


def test_to_dict_holds_every_field_and_round_trips_through_json():
    import dataclasses
    import json
    from datetime import UTC, datetime

    page = article_page("alpha", "politics", "A story", [paragraph(j) for j in range(4)]).replace(
        "<head>", '<head><meta property="article:published_time" content="2024-05-01T10:30:00+02:00">'
                  '<meta property="og:image" content="/img/a.jpg">')
    article = newsclean.extract(page, url="https://alpha.example/politics/1.html")
    data = article.to_dict()
    assert list(data) == [f.name for f in dataclasses.fields(newsclean.Extraction)]
    assert json.loads(json.dumps(data)) == data  # JSON types only: no tuple, datetime or dataclass left
    assert article.published_at == datetime(2024, 5, 1, 8, 30, tzinfo=UTC)
    assert data["published_at"] == "2024-05-01T08:30:00+00:00" and data["modified_at"] is None
    assert data["metadata"]["published_at"] == "2024-05-01T08:30:00+00:00"
    assert data["metadata"]["authors"] == list(article.metadata.authors) and data["captions"] == []
    assert data["counts"]["blocks_kept"] == article.counts.blocks_kept > 0
    assert data["image_url"] == "https://alpha.example/img/a.jpg" and data["is_accessible_for_free"] is None
    assert data["text"] == article.text and "Story 0 reports" in data["text"]
