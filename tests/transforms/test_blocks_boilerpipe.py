"""Kohlschütter 2010: atomic text blocks, shallow features, Eq. (1), Algorithms 1 and 2, filters."""

import lxml.html
import pytest

from newsclean.transforms.blocks import extract_blocks, hidden_elements, text_density, wrap_lines
from newsclean.transforms.boilerpipe import (
    BoilerpipeParams,
    _Features,
    algorithm1,
    algorithm2,
    boilerpipe,
    classify_blocks,
)
from newsclean.transforms.text import count_words
from newsclean.transforms.types import BlockParams
from newsclean.transforms.vocab import INLINE_TAGS

WORD9 = "abcdefghi"  # 9 characters: 8 of them and 7 spaces fill 79 of 80 columns


def blocks_of(body: str, **kw):
    return extract_blocks(lxml.html.document_fromstring(f"<html><body>{body}</body></html>"), BlockParams(**kw))


def test_anchor_is_not_a_separator_and_gives_link_density():
    (block,) = blocks_of("<p>one two <a href='/'>three four</a> five six</p>")
    assert block.text == "one two three four five six"
    assert (block.num_words, block.num_linked_words) == (6, 2)
    assert block.link_density == pytest.approx(2 / 6)


def test_other_tags_separate_blocks_in_the_paper_configuration():
    texts = [b.text for b in blocks_of("<p>one <em>two</em> three</p><div>four</div>")]
    assert texts == ["one", "two", "three", "four"]


def test_inline_tags_can_be_made_non_separators():
    texts = [b.text for b in blocks_of("<p>one <em>two</em> three</p><div>four</div>", non_separator_tags=INLINE_TAGS)]
    assert texts == ["one two three", "four"]


def test_words_need_a_letter_or_digit():
    (block,) = blocks_of("<p>a - | 42 —</p>")
    assert block.num_words == 2


def test_blocks_without_words_are_dropped():
    assert [b.text for b in blocks_of("<p> | </p><p>word</p>")] == ["word"]


def test_text_a_browser_never_shows_is_no_block():
    # libxml2 keeps an iframe's inside (fallback markup, here a script writing an ad) as text; browsers show none
    body = ("<p>before</p><iframe src='/ad'><script>document.write('<a href=\"/ad\">Buy cars now</a>')</script>"
            "Your browser does not support frames</iframe><embed src='a.swf'><noembed>No plugin here</noembed><p>after</p>")
    assert [b.text for b in blocks_of(body)] == ["before", "after"]


def test_hidden_elements_are_no_blocks_when_skip_hidden():
    body = ("<p>shown one</p><div style='color: red; DISPLAY : none'>menu one</div><p hidden>menu two</p>"
            "<span aria-hidden='true'>icon</span><div style='visibility:hidden'>menu three</div>"
            "<div style='display: block'>shown two</div>")
    assert [b.text for b in blocks_of(body, skip_hidden=True)] == ["shown one", "shown two"]
    assert len(blocks_of(body)) == 6  # the papers' configuration reads all text


def test_only_the_outermost_hidden_elements_are_returned():
    root = lxml.html.document_fromstring(
        "<html><body><div id='a' hidden><p id='b' style='display:none'>x</p></div><p id='c' aria-hidden='TRUE'>y</p>"
        "<p aria-hidden='false'>a visible paragraph long enough to be most of the page</p></body></html>")
    assert [el.get("id") for el in hidden_elements(root.find("body"))] == ["a", "c"]


def test_a_page_that_hides_nearly_all_its_text_is_read_as_shown():
    # a script reveals the article on load; the big script outside it is not text a reader sees
    body = ("<div style='display:none'><p>the whole article, revealed later by a script</p></div><p>ad</p>"
            f"<script>var data = '{'x' * 500}';</script>")
    assert [b.text for b in blocks_of(body, skip_hidden=True)] == [
        "the whole article, revealed later by a script", "ad"]
    assert [b.text for b in blocks_of(body, skip_hidden=True, max_hidden_share=1.0)] == ["ad"]


def test_text_wraps_to_three_lines_at_80_columns():
    text = " ".join([WORD9] * 20)
    assert [len(line) for line in wrap_lines(text, 80)] == [8, 8, 4]
    # Eq. (1): tokens on all lines but the last (16) over lines - 1 (2).
    assert text_density(text, 80) == 8.0


def test_one_line_block_density_is_its_word_count():
    assert text_density("five words on one line", 80) == 5.0


def test_han_and_kana_words_follow_unicode_word_boundaries():
    # UAX #29: each ideograph and each Hiragana character is a word, a Katakana run is one word;
    # full-width punctuation is no word. 東京 (2) + タワー (1) + へ (1) + 行きました (5) + 2017 (1).
    (block,) = blocks_of("<p>東京タワーへ行きました。2017</p>")
    assert block.num_words == 10
    assert count_words("海外留学生") == 5


def test_han_text_wraps_at_two_columns_per_character():
    # 50 ideographs without a space: East Asian Wide, so 40 fit in 80 columns, 10 go to line 2;
    # Eq. (1) density is the 40 words of the first line (before, the run was one 1-word line).
    text = "字" * 50
    assert [len(line) for line in wrap_lines(text, 80)] == [40, 10]
    assert text_density(text, 80) == 40.0
    # Glued to Latin text, no space is charged: 78 + 2 columns fill line 1, the next 字 wraps.
    assert wrap_lines("a" * 78 + "字字", 80) == [["a" * 78, "字"], ["字"]]


def test_wrap_width_is_a_parameter():
    text = " ".join([WORD9] * 20)
    assert len(wrap_lines(text, 40)) == 5  # 4 tokens (39 columns) per line


F = _Features


@pytest.mark.parametrize(
    "prev,curr,nxt,content",
    [
        (F(0, 5, 0), F(0, 5, 0), F(0, 5, 0), True),  # prev_td 5 > 4
        (F(0, 4, 0), F(0, 5, 0), F(0, 5, 0), False),  # prev_td <= 4
        (F(0, 0, 0), F(0, 5, 0), F(0, 11, 0), True),  # next_td > 10
        (F(0, 0, 0), F(0, 10, 0), F(0, 0, 0), False),  # curr_td > 9, next_td = 0
        (F(0, 0, 0), F(0, 10, 0), F(0, 1, 0), True),  # curr_td > 9, next_td > 0
        (F(0.6, 0, 0), F(0, 20, 0), F(0, 11, 0), False),  # prev_ld > .555556, next_td <= 11
        (F(0.6, 0, 0), F(0, 20, 0), F(0, 12, 0), True),  # next_td > 11
        (F(0, 20, 0), F(0.34, 20, 0), F(0, 20, 0), False),  # curr_ld > .333333
    ],
)
def test_algorithm1_branches(prev, curr, nxt, content):
    assert algorithm1(prev, curr, nxt) is content


@pytest.mark.parametrize(
    "prev,curr,nxt,content",
    [
        (F(0, 0, 5), F(0, 0, 10), F(0, 0, 10), True),  # prev_nw 5 > 4
        (F(0, 0, 4), F(0, 0, 10), F(0, 0, 15), False),  # prev_nw <= 4, next_nw <= 15
        (F(0, 0, 0), F(0, 0, 16), F(0, 0, 16), True),  # next_nw > 15
        (F(0, 0, 0), F(0, 0, 17), F(0, 0, 0), True),  # curr_nw > 16
        (F(0.6, 0, 0), F(0, 0, 40), F(0, 0, 17), False),  # prev_ld > .555556, curr <= 40, next <= 17
        (F(0.6, 0, 0), F(0, 0, 40), F(0, 0, 18), True),  # next_nw > 17
        (F(0.6, 0, 0), F(0, 0, 41), F(0, 0, 0), True),  # curr_nw > 40
        (F(0, 0, 99), F(0.4, 0, 99), F(0, 0, 99), False),  # curr_ld > .333333
    ],
)
def test_algorithm2_branches(prev, curr, nxt, content):
    assert algorithm2(prev, curr, nxt) is content


def test_first_block_sees_an_empty_previous_block():
    # A lone 10-word block: prev and next are empty (0 words) -> Algorithm 2 says boilerplate.
    blocks = blocks_of("<p>" + " ".join(["word"] * 10) + "</p>")
    assert classify_blocks(blocks, BoilerpipeParams(algorithm=2)) == [False]


def test_largest_content_filter_keeps_one_block():
    long1 = " ".join(["alpha"] * 30)
    long2 = " ".join(["beta"] * 50)
    blocks = blocks_of(f"<p>{long1}</p><p>{long2}</p>")
    assert boilerpipe(blocks, BoilerpipeParams()) == [True, True]
    assert boilerpipe(blocks, BoilerpipeParams(largest_content=True)) == [False, True]


def test_main_content_filter_cuts_at_comments_and_before_title():
    body = " ".join(["gamma"] * 60)
    comment = " ".join(["delta"] * 70)
    blocks = blocks_of(f"<p>{' '.join(['pre'] * 45)}</p><h1>The Headline Of This Story</h1><p>{body}</p>"
                       f"<h3>Comments</h3><p>{comment}</p>")
    keep = boilerpipe(blocks, BoilerpipeParams(main_content=True), title="The Headline Of This Story - Site")
    assert [b.text.split()[0] for b, k in zip(blocks, keep) if k] == ["gamma"]


def test_unknown_algorithm_is_rejected():
    with pytest.raises(ValueError):
        BoilerpipeParams(algorithm=3)
