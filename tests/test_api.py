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
