"""Recurring texts as boilerplate (transforms/refine/recurring.py): a short kept block whose exact text other
pages of the site hold is dropped, unless the classifier is sure of it or it is the page's own headline."""

from __future__ import annotations

from array import array

import pytest
from lxml import etree

from newsclean.transforms.context import PageContext
from newsclean.transforms.refine import refine_keep
from newsclean.transforms.refine.recurring import RecurringTextParams, is_title_like, recurring_text_keep
from newsclean.transforms.site_profile import SiteProfile, text_digest
from newsclean.transforms.types import TextBlock


def block(text: str) -> TextBlock:
    n = len(text.split())
    return TextBlock(text, n, 0, float(n), etree.Element("p"))


COPYRIGHT = "© 2005 The Associated Press. All rights reserved."
HEADLINE = "Katrina death toll rises to 832"
ABOUT = " ".join(["The press office of the company publishes news about its products"] * 3)  # 33 words
BODY = "The storm's toll rose again on Thursday, officials said, as crews searched the flooded parishes."


def profile(texts: dict[str, int], pages: int = 10) -> SiteProfile:
    """A site profile whose recurring texts are ``texts`` (text -> neighbour pages holding it)."""
    return SiteProfile(pages, text_keys=array("Q", [text_digest(t) for t in texts]).tobytes(),
                       text_support=bytes(round(c / pages * 255) for c in texts.values()))


BLOCKS = [block(HEADLINE), block(BODY), block(COPYRIGHT), block(ABOUT)]
KEEP = [True, True, True, True]
SITE = profile({HEADLINE: 3, COPYRIGHT: 9, ABOUT: 6})  # the headline recurs in other pages' teaser lists


def test_a_recurring_short_unsure_line_is_dropped_and_nothing_else():
    probs = [0.7, 0.99, 0.6, 0.6]
    out = recurring_text_keep(BLOCKS, probs, KEEP, "Katrina death toll rises to 832 - Yahoo! News", SITE)
    # the headline is kept (it is in the page's title), the body does not recur, the 33-word paragraph is long
    assert out == [True, True, False, True]


def test_sure_blocks_weak_support_and_no_profile_keep_everything():
    assert recurring_text_keep(BLOCKS, [0.7, 0.99, 0.95, 0.6], KEEP, None, SITE)[2]  # p >= 0.9: kept
    assert recurring_text_keep(BLOCKS, [0.7, 0.99, 0.6, 0.6], KEEP, None, profile({COPYRIGHT: 2}))[2]  # 3 needed
    assert not recurring_text_keep(BLOCKS, [0.7, 0.99, 0.6, 0.6], KEEP, None, profile({COPYRIGHT: 3}))[2]
    assert not recurring_text_keep(BLOCKS, [0.7, 0.99, 0.6, 0.6], KEEP, None, profile({COPYRIGHT: 2}),
                                   RecurringTextParams(min_support=2))[2]
    assert recurring_text_keep(BLOCKS, [0.6] * 4, KEEP, None, None) == KEEP  # no neighbours: unchanged


def test_a_copyright_line_recurs_with_another_year_but_other_numbers_still_differ():
    site = profile({"© 2006 The Associated Press. All rights reserved.": 9, "Posted: 2:51 pm": 9})
    blocks = [block(COPYRIGHT), block("Posted: 3:47 pm"), block("© 2005 The Associated Press sold 2006 photos.")]
    out = recurring_text_keep(blocks, [0.6] * 3, [True] * 3, None, site)
    assert out == [False, True, True]  # the 2005 line is the 2006 one; a time or another sentence is not
    assert text_digest("© 1999 AP") == text_digest("© 2024 AP") != text_digest("© 1899 AP")


def test_it_only_drops():
    keep = [False, True, False, False]
    assert recurring_text_keep(BLOCKS, [0.3] * 4, keep, None, SITE) == keep


def test_title_likeness_ignores_case_punctuation_and_quotes():
    assert is_title_like("Romney’s ‘all’ proved not enough", "ROMNEY'S 'ALL' PROVED NOT ENOUGH | Politics")
    assert is_title_like("Politics", "Romney's all proved not enough | Politics")  # a run of the title's tokens
    assert not is_title_like("Romney proved enough", "Romney's all proved not enough")
    assert not is_title_like("anything", None)


def test_parameters_are_checked():
    with pytest.raises(ValueError):
        RecurringTextParams(min_support=1)
    with pytest.raises(ValueError):
        RecurringTextParams(drop_below=0.0)


def test_a_step_reading_the_page_title_and_site_profile_and_on_in_the_shipped_chain():
    from newsclean.transforms.chain import DEFAULT_CONFIG

    ctx = PageContext("Katrina death toll rises to 832", True, SITE)
    probs = [0.7, 0.99, 0.6, 0.6]
    assert refine_keep(BLOCKS, probs, KEEP, ctx, ()) == KEEP
    assert refine_keep(BLOCKS, probs, KEEP, ctx, (RecurringTextParams(),)) == [True, True, False, True]
    assert refine_keep(BLOCKS, probs, KEEP, PageContext("Katrina death toll rises to 832"), (RecurringTextParams(),)) == KEEP
    assert RecurringTextParams() in DEFAULT_CONFIG.refine
