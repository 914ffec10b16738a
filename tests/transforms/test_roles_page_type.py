"""Captions, lead and body as data (transforms/roles.py), the page type (transforms/page_type.py), and what the
chain's text holds (ChainConfig.text_includes)."""

import lxml.html
import pytest

from newsclean.transforms.blocks import extract_blocks
from newsclean.transforms.chain import DEFAULT_CONFIG, ChainConfig, extract_article
from newsclean.transforms.page_type import PageTypeParams, listing_lines, page_type
from newsclean.transforms.roles import BODY, CAPTION, LEAD, block_roles
from newsclean.transforms.types import BlockParams
from newsclean.transforms.vocab import INLINE_TAGS

PROSE = ("The council voted on Tuesday to close the old bridge for repairs, after engineers found cracks in "
         "two of its supports. ")
CAPTION_TEXT = "The old bridge, seen from the river bank. Photo: Jane Doe"
DEK = "Engineers found cracks in two supports of the hundred-year-old bridge"
RULES = PageTypeParams(learned=False)  # the rules alone (the learned decision: test_page_type_model.py)


def _blocks(body: str):
    root = lxml.html.document_fromstring(f"<html><body>{body}</body></html>")
    return extract_blocks(root, BlockParams(non_separator_tags=INLINE_TAGS, separate_marked=True))


ARTICLE = (f"<div class='story'><h1>Bridge to close</h1><p class='standfirst'>{DEK}</p>"
           f"<figure><img src='a.jpg'><figcaption>{CAPTION_TEXT}</figcaption></figure>"
           f"<div class='body'><p>{PROSE * 3}</p><p>{PROSE * 2}</p>"
           f"<div class='image-caption'>A map of the closed roads</div><p>{PROSE * 2}</p></div></div>")


def test_roles_caption_lead_body_and_dropped_captions_of_the_article():
    blocks = _blocks(ARTICLE + "<div class='footer'>Contact us</div>")
    keep = [True, True, False, True, True, False, True, False]  # both captions dropped by the classifier
    roles = dict(zip((b.text for b in blocks), block_roles(blocks, keep)))
    assert roles[DEK] == LEAD and roles[CAPTION_TEXT] == CAPTION and roles["A map of the closed roads"] == CAPTION
    assert roles["Bridge to close"] == BODY and roles[(PROSE * 3).strip()] == BODY
    assert roles["Contact us"] is None


def test_a_section_named_caption_around_the_whole_article_is_body():
    blocks = _blocks(f"<div class='caption'><p>{PROSE * 4}</p><p>{PROSE * 4}</p></div>")
    assert block_roles(blocks, [True, True]) == [BODY, BODY]


def test_the_standfirst_repeated_in_the_description_is_the_lead():
    blocks = _blocks(f"<div><h2>{DEK}</h2><p>{PROSE * 3}</p><p>{PROSE}</p></div>")
    assert block_roles(blocks, [True] * 3, description=DEK + ".")[0] == LEAD
    assert block_roles(blocks, [True] * 3)[0] == BODY


PAGE = f"<html><head><title>Bridge to close - The Daily Planet</title></head><body>{ARTICLE}</body></html>"


def test_text_is_the_body_and_lead_by_default_captions_and_lead_as_the_configuration_says():
    default = extract_article(PAGE, config=DEFAULT_CONFIG)
    assert DEFAULT_CONFIG.text_includes == ("lead",) and DEK in default.text and CAPTION_TEXT not in default.text
    body_only = extract_article(PAGE, config=DEFAULT_CONFIG.with_(text_includes=()))
    assert CAPTION_TEXT in body_only.captions and body_only.lead == DEK
    assert CAPTION_TEXT not in body_only.text and DEK not in body_only.text and PROSE.strip() in body_only.text
    both = extract_article(PAGE, config=DEFAULT_CONFIG.with_(text_includes=("captions", "lead")))
    assert both.text.index(DEK) < both.text.index(CAPTION_TEXT) < both.text.index(PROSE.strip())  # page order
    assert both.captions == body_only.captions and both.word_count > body_only.word_count
    assert body_only.title == "Bridge to close" and body_only.metadata.page_title == "Bridge to close - The Daily Planet"
    with pytest.raises(ValueError, match="text_includes"):
        ChainConfig(text_includes=("comments",))


def _cards(n: int) -> str:
    return "".join(f"<li class='card'><a href='/s{i}'>Headline number {i} of the section</a>"
                   f"<p>A short description of that story.</p></li>" for i in range(n))


def test_page_type_article_listing_other():
    article = _blocks(ARTICLE)
    assert page_type(article, [True] * len(article)) == "article"
    listing = _blocks(f"<h1>World news</h1><ul>{_cards(12)}</ul>")
    keep = [True] * len(listing)
    assert page_type(listing, keep, dated=False, params=RULES) == "listing"
    assert page_type(listing, keep, ("collectionpage",)) == "listing"
    # a page declaring an article is never a listing, whatever its cards (a paper with a long reference list)
    assert page_type(listing, keep, ("scholarlyarticle",)) == "other"
    assert page_type(listing, keep, ("article", "collectionpage")) == "other"
    assert listing_lines(listing)[0] == "Headline number 0 of the section A short description of that story."
    assert len(listing_lines(listing)) == 12
    error = _blocks("<h1>Page not found</h1><p>Sorry.</p>")
    assert page_type(error, [True, True]) == "other"
    short = _blocks(f"<p>{PROSE * 2}</p>")  # 40 words of prose: an article only when the page declares one
    assert page_type(short, [True]) == "other" and page_type(short, [True], ("newsarticle",)) == "article"


def test_a_card_page_with_article_evidence_is_never_a_listing():
    """Only a confident listing is rejected: a date or author, an articleBody, or 20 words of prose under one
    parent element make a page of cards ``other`` (kept as a row, not typed article)."""
    listing = _blocks(f"<h1>World news</h1><ul>{_cards(12)}</ul>")
    keep = [True] * len(listing)
    assert page_type(listing, keep, dated=False, params=RULES) == "listing"
    assert page_type(listing, keep, dated=True) == "other"
    assert page_type(listing, keep, dated=False, has_body=True) == "other"
    paragraph = "The council met on Monday evening and voted to approve the new plan for the harbour. "  # 16 words
    region = _blocks(f"<h1>World news</h1><div><p>{paragraph}</p><p>{paragraph}</p></div><ul>{_cards(12)}</ul>")
    assert page_type(region, [True] * len(region), dated=False) == "other"
    one = _blocks(f"<h1>World news</h1><div><p>{paragraph}</p></div><ul>{_cards(12)}</ul>")  # 16 words: too few
    assert page_type(one, [True] * len(one), dated=False, params=RULES) == "listing"
    assert page_type(listing, keep, ("collectionpage",), dated=True) == "listing"  # what it declares decides


def test_a_page_declaring_a_product_or_a_forum_thread_is_other_however_much_prose():
    article = _blocks(ARTICLE)
    keep = [True] * len(article)
    assert page_type(article, keep, ("product", "website")) == "other"
    assert page_type(article, keep, ("discussionforumposting",)) == "other"
    assert page_type(article, keep, ("product", "newsarticle")) == "article"  # an article type outweighs it
    assert page_type(article, keep, ("faqpage", "website")) == "article"  # articles carry FAQPage beside their own
