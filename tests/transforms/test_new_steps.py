"""The page-level steps for today's news pages: paragraph lines, teaser cards, consent regions, the empty-page
fallback, and the side-content step's protections (transforms/refine/*.py)."""

import gc
import weakref

import lxml.html
import pytest

from newsclean.transforms import dom
from newsclean.transforms.blocks import extract_blocks
from newsclean.transforms.chain import CONFIGS, LEARNED_CONFIG
from newsclean.transforms.context import PageContext
from newsclean.transforms.refine import refine_keep
from newsclean.transforms.refine.article_fallback import ArticleFallbackParams, article_fallback_keep
from newsclean.transforms.refine.article_lists import ArticleListsParams, article_lists_keep
from newsclean.transforms.refine.consent import CONSENT_WORDS, ConsentParams, consent_keep, consent_regions
from newsclean.transforms.refine.paragraph_lines import ParagraphLinesParams, line_runs, paragraph_lines_keep
from newsclean.transforms.refine.region import text_containers
from newsclean.transforms.refine.side_content import SideContentParams, side_content_keep
from newsclean.transforms.refine.teaser_cards import TeaserCardsParams, element_words, teaser_cards_keep
from newsclean.transforms.types import BlockParams
from newsclean.transforms.vocab import INLINE_TAGS

PROSE = ("The council voted on Tuesday to close the old bridge for repairs, after engineers found cracks in "
         "two of its supports. ")
DESCRIPTION = " ".join(["The mayor said the new library will open next spring with longer hours."] * 3)


def _blocks(body: str):
    root = lxml.html.document_fromstring(f"<html><body>{body}</body></html>")
    return extract_blocks(root, BlockParams(non_separator_tags=INLINE_TAGS, separate_marked=True))


def _by_text(blocks, flags):
    return {b.text: f for b, f in zip(blocks, flags)}


# ------------------------------------------------------------------------------------------ paragraph lines


def test_lines_split_by_br_take_the_paragraphs_decision():
    blocks = _blocks(f"<p>{PROSE}<br>Name: Jane Doe<br><a href='/src'>Source link</a></p><p>{PROSE}</p>"
                     "<div>Menu<br>Home</div>")
    assert [len(r) for r in line_runs(blocks)] == [3, 1, 2]
    keep = [True, False, False, True, False, False]
    out = _by_text(blocks, paragraph_lines_keep(blocks, keep))
    assert out["Name: Jane Doe"] and out["Source link"]  # the kept paragraph's lines
    assert not out["Menu"] and not out["Home"]  # a dropped run stays dropped
    assert paragraph_lines_keep(blocks, keep, ParagraphLinesParams(min_kept_share=1.0)) == keep


def test_a_stray_kept_line_of_a_dropped_paragraph_is_dropped_only_when_asked():
    blocks = _blocks(f"<p>Share this<br>{PROSE}{PROSE}</p>")
    keep = [True, False]
    assert paragraph_lines_keep(blocks, keep) == keep
    assert paragraph_lines_keep(blocks, keep, ParagraphLinesParams(drop_share=0.2)) == [False, False]
    with pytest.raises(ValueError):
        ParagraphLinesParams(drop_share=0.6)


# --------------------------------------------------------------------------------------------- teaser cards


def _cards(n: int, words: str = "A short description of another story on the site, with a full stop.") -> str:
    return "".join(f"<li class='card'><a href='/s{i}'>Headline number {i} here</a><p>{words}</p></li>"
                   for i in range(n))


def test_repeated_cards_after_the_body_are_dropped_a_list_inside_the_text_is_not():
    article = f"<div class='body'><p>{PROSE * 3}</p><p>{PROSE * 2}</p><ul><li>{PROSE}</li><li>{PROSE}</li></ul></div>"
    blocks = _blocks(article + f"<ul class='related'>{_cards(4)}</ul>")
    out = teaser_cards_keep(blocks, [0.9] * len(blocks), [True] * len(blocks))
    assert out[:4] == [True] * 4  # the article's paragraphs and its plain list (no links): kept
    assert not any(out[4:])
    two = _blocks(article + f"<ul class='related'>{_cards(2)}</ul>")
    assert all(teaser_cards_keep(two, [0.9] * len(two), [True] * len(two)))  # two cards are no group
    assert all(teaser_cards_keep(blocks, [0.9] * len(blocks), [True] * len(blocks), TeaserCardsParams(drop_below=0.5)))


def test_a_page_of_cards_is_left_to_the_page_type():
    blocks = _blocks(f"<p>{PROSE}</p><ul>{_cards(8)}</ul>")
    assert all(teaser_cards_keep(blocks, [0.9] * len(blocks), [True] * len(blocks)))


def test_element_words_memo_answers_only_the_same_list_and_settings():
    """The last page's counts are given again only for the same list of blocks and link settings."""
    blocks = _blocks(f"<div id='a'><p>{PROSE}</p><ul>{_cards(3)}</ul></div>")
    body = blocks[0].container.getparent().getparent()
    total = sum(b.num_words for b in blocks)
    links = sum(b.num_words >= 2 and b.link_density >= 0.5 for b in blocks)
    assert element_words(blocks)[body] == (total, links, sum(b.num_linked_words for b in blocks)) and links == 3
    assert element_words(blocks) is element_words(blocks)
    assert element_words(blocks, 2, 0.5) is element_words(blocks)
    assert element_words(blocks, 50, 0.5)[body][1] == 0  # other settings: counted again, no link block that long
    fewer = blocks[:1]
    assert element_words(fewer)[body] == (blocks[0].num_words, 0, 0)  # another list: counted again
    assert element_words(list(blocks))[body][0] == total  # an equal list that is not the same object: counted again


def test_the_page_memos_keep_no_finished_page_alive():
    """The answers the page-level steps share (text containers, element words) live as long as the page's blocks:
    once a page is done and dropped, its blocks and tree are freed, not kept until the next page asks."""
    blocks = _blocks(f"<div id='a'><p>{PROSE}</p><p><a href='/x'>a link of four words</a></p></div>")
    containers = text_containers(blocks)
    assert element_words(blocks)[containers[0]][0] == sum(b.num_words for b in blocks)
    assert text_containers(blocks) is containers  # kept for the page
    alive = [weakref.ref(blocks[0]), weakref.ref(containers[0])]
    del blocks, containers
    gc.collect()
    assert [ref() for ref in alive] == [None, None]


def test_text_containers_memo_answers_only_the_same_list():
    blocks = _blocks(f"<div id='a'><p>{PROSE}</p><p>{PROSE}</p></div><section><div>{PROSE}</div></section>")
    first = text_containers(blocks)
    assert [el.tag for el in first] == ["div", "div", "section"] and first[0] is first[1]
    assert text_containers(blocks) is first
    assert [el.tag for el in text_containers(blocks[2:])] == ["section"]  # another list: found again
    assert text_containers(list(blocks)) is not first and text_containers(list(blocks)) == first


def test_class_tokens_of_long_class_names_are_not_kept():
    """A page's class names are tokenised once each, but a hostile page's huge ones are not kept (bounded memory)."""
    el = lxml.html.fragment_fromstring(f"<div class='RelatedCoverage-box {'x' * 5000}' id='main'></div>")
    before = dom._cached_tokens.cache_info().currsize
    assert dom.class_tokens(el) == {"related", "coverage", "box", "x" * 5000, "main"}
    assert dom.hinted_class_tokens(el, dom.word_hint(frozenset({"related"}))) == dom.class_tokens(el)
    assert dom._cached_tokens.cache_info().currsize == before
    short = lxml.html.fragment_fromstring("<div class='RelatedCoverage-boxOnlyHere'></div>")
    assert dom.class_tokens(short) == {"related", "coverage", "box", "only", "here"}
    assert dom._cached_tokens.cache_info().currsize == before + 1


# ------------------------------------------------------------------------------------------------- consent


def test_consent_regions_by_name_and_body_level_dialogs_with_privacy_prose():
    body = (f"<div id='qc-cmp2-container'><p>We value your privacy. {PROSE}</p></div>"
            f"<div role='dialog'><p>We and our partners use cookies. {PROSE}</p></div>"
            f"<div role='dialog'><p>{PROSE}</p></div>"
            f"<article class='cookie-story'><h1>Cookies</h1><p>{PROSE}</p></article>")
    blocks = _blocks(body)
    assert consent_regions(blocks) == [True, True, False, False, False]
    assert consent_keep(blocks, [True] * len(blocks)) == [False, False, True, True, True]


def test_component_classes_named_cmp_are_a_consent_region_only_with_privacy_prose():
    # Adobe Experience Manager prefixes every component with cmp- (the article's text too); a consent manager's
    # cmp element talks of cookies or privacy.
    body = (f"<div class='cmp-container'><div class='cmp-text'><p>{PROSE}</p><p>{PROSE}</p></div></div>"
            f"<div class='cmp-banner'><p>We and our partners use cookies to personalise ads. {PROSE}</p></div>")
    assert consent_regions(_blocks(body)) == [False, False, True]


# ---------------------------------------------------------------------------------------- empty-page fallback


def test_an_empty_page_gets_the_blocks_its_article_body_holds():
    body = (f"<div class='cmp-consent'><p>{PROSE * 2}</p></div><div><p>{DESCRIPTION}</p><p>{DESCRIPTION}</p></div>"
            "<div><p>Sign up for our newsletter today.</p></div>")
    blocks = _blocks(body)
    nothing = [False] * len(blocks)
    out = article_fallback_keep(blocks, nothing, DESCRIPTION)
    assert out == [False, True, True, False]
    assert article_fallback_keep(blocks, nothing, None) == nothing  # no evidence: stays empty
    kept = [False, False, False, True]
    assert article_fallback_keep(blocks, kept, DESCRIPTION) == kept  # only acts on an empty page
    assert article_fallback_keep(blocks, kept, DESCRIPTION, ArticleFallbackParams(max_kept_words=10))[1]


def test_without_a_body_the_marked_article_element_gives_its_prose():
    blocks = _blocks(f"<div class='nav'><p>{PROSE}</p></div><div itemprop='articleBody'><p>{PROSE}</p>"
                     f"<p>Short line</p><p>{PROSE * 2}</p></div>")
    assert article_fallback_keep(blocks, [False] * len(blocks), None) == [False, True, False, True]


TRUENDO = ConsentParams(words=CONSENT_WORDS + ("truendo",))
"""A chain's consent settings that also name the TRUENDO consent manager, which the default words do not."""


def _truendo_page():
    return _blocks(f"<div itemprop='articleBody'><p>{PROSE}</p><div class='truendo-panel'><p>We and our partners "
                   f"store data. {PROSE}</p></div><p>{PROSE * 2}</p></div>")


def test_the_fallback_never_selects_blocks_in_the_consent_regions_it_is_given():
    blocks = _truendo_page()
    nothing = [False] * len(blocks)
    assert consent_regions(blocks) == [False, False, False] and consent_regions(blocks, TRUENDO)[1]
    assert article_fallback_keep(blocks, nothing, None) == [True, True, True]  # the default words: not consent
    assert article_fallback_keep(blocks, nothing, None, ArticleFallbackParams(consent=TRUENDO)) == [True, False, True]


def test_a_chains_fallback_reads_the_consent_regions_of_its_consent_step():
    blocks = _truendo_page()
    nothing = [False] * len(blocks)
    chain = LEARNED_CONFIG.with_(refine=(TRUENDO, ArticleFallbackParams(consent=TRUENDO)))
    assert refine_keep(blocks, [0.1] * len(blocks), nothing, PageContext(), chain.refine) == [True, False, True]
    with pytest.raises(ValueError, match="consent regions differ"):  # the default consent words in the fallback
        LEARNED_CONFIG.with_(refine=(TRUENDO, ArticleFallbackParams()))
    for config in CONFIGS.values():  # every shipped chain's fallback reads its own consent step's regions
        fallback = config.step(ArticleFallbackParams)
        assert fallback is None or fallback.consent == config.step(ConsentParams)


# ------------------------------------------------------------------------------- side content, protections


def test_side_content_never_reads_the_wrapper_of_the_title_and_first_paragraph():
    body = (f"<div class='share-btns'><h1>Bridge to close</h1><p>{PROSE}</p></div>"
            f"<div class='article-body'><p>{PROSE * 3}</p><p>{PROSE * 3}</p></div>"
            "<div class='social-share'><span>Share this story</span></div>")
    blocks = _blocks(body)
    probs, keep = [0.8] * len(blocks), [True] * len(blocks)
    old = _by_text(blocks, side_content_keep(blocks, probs, keep))
    assert not old["Bridge to close"]  # the wrapper's "share" token dropped the headline and the intro
    params = SideContentParams(protect_title=True, protect_first_paragraph=True)
    new = _by_text(blocks, side_content_keep(blocks, probs, keep, params, "Bridge to close"))
    assert new["Bridge to close"] and new[PROSE.strip()] and not new["Share this story"]


def test_side_content_cap_and_share_protection():
    body = f"<div class='gallery-body'><p>{PROSE * 3}</p></div><div class='main'><p>{PROSE * 4}</p></div>"
    blocks = _blocks(body)
    probs, keep = [0.8] * len(blocks), [True] * len(blocks)
    assert side_content_keep(blocks, probs, keep) == [False, True]
    assert side_content_keep(blocks, probs, keep, SideContentParams(max_drop_share=0.3)) == [True, True]
    assert side_content_keep(blocks, probs, keep, SideContentParams(protect_share=0.4)) == [True, True]
    with pytest.raises(ValueError):
        SideContentParams(protect_share=1.5)


# ----------------------------------------------------------------------------------------------- first story


def test_a_page_holding_the_next_story_keeps_its_own():
    from newsclean.transforms.refine.first_story import first_story_keep

    body = (f"<article><h2>Bridge to close for repairs</h2><p>{PROSE * 3}</p><p>{PROSE * 3}</p></article>"
            f"<article><h2>Library opens in the town centre</h2><p>{DESCRIPTION * 2}</p><p>{DESCRIPTION * 2}</p>"
            "</article>")
    blocks = _blocks(body)
    keep = [True] * len(blocks)
    assert first_story_keep(blocks, keep) == keep  # nothing tells which is the page's own: a blog front, a thread
    by_title = first_story_keep(blocks, keep, title="Library opens in the town centre - Daily Planet")
    assert by_title == [False, False, False, True, True, True]
    by_body = first_story_keep(blocks, keep, article_body=DESCRIPTION * 4)
    assert by_body == [False, False, False, True, True, True]
    one = _blocks(f"<article><p>{PROSE * 6}</p></article><article><p>Short teaser.</p></article>")
    assert first_story_keep(one, [True, True]) == [True, True]  # one story only: unchanged


# ------------------------------------------------------------------------------------- the chain, end to end


def test_a_consent_overlay_never_replaces_the_article():
    import json

    from newsclean.transforms.chain import DEFAULT_CONFIG, extract_article

    privacy = ("We and our 842 partners store and access information on your device, such as cookies, and process "
               "personal data, such as unique identifiers and standard information sent by a device. ")
    vendors = "".join(f"<li><span>Vendor number {i} Ltd.</span> <a href='/p{i}'>Privacy policy</a></li>"
                      for i in range(60))
    body = PROSE * 3
    page = ("<html><head><title>Bridge to close</title><script type='application/ld+json'>"
            + json.dumps({"@type": "NewsArticle", "headline": "Bridge to close", "articleBody": body * 2})
            + f"</script></head><body><div class='fc-consent-root'><p>{privacy * 4}</p><p>{privacy * 3}</p>"
            f"<ul>{vendors}</ul></div><article><h1>Bridge to close</h1><p>{body}</p><p>{body}</p></article>"
            "</body></html>")
    out = extract_article(page, config=DEFAULT_CONFIG)
    assert PROSE.strip()[:40] in out.text and "842 partners" not in out.text and "Vendor number" not in out.text


# --------------------------------------------------------------------------------- lists and tables in articles


def _kept_where(blocks, kept_texts):
    return [b.text in kept_texts for b in blocks]


def test_a_list_after_a_kept_paragraph_of_its_parent_is_kept_whole():
    intro = "The new release brings three tools for developers:"
    blocks = _blocks(f"<article><p>{PROSE}</p><p>{intro}</p><ul><li>Page inspector</li><li>Web console</li>"
                     "<li>Network monitor</li></ul></article>"
                     "<ul><li>Page inspector two</li><li>Web console two</li></ul>")
    keep = _kept_where(blocks, {PROSE.strip(), intro})
    out = _by_text(blocks, article_lists_keep(blocks, keep))
    assert out["Page inspector"] and out["Web console"] and out["Network monitor"]
    # a list whose preceding block is dropped (here: the first list's last item before this step ran) stays as it was
    assert not out["Page inspector two"] and not out["Web console two"]


def test_a_table_after_a_kept_paragraph_is_kept_a_list_in_another_column_is_not():
    blocks = _blocks(f"<div><div class='body'><p>{PROSE}</p></div><div class='side'><div><div><ul>"
                     "<li>Weather today</li><li>Horoscope</li></ul></div></div></div></div>"
                     f"<div><p>{PROSE} Results by district follow.</p><table><tr><td>North</td><td>52 %</td></tr>"
                     "<tr><td>South</td><td>48 %</td></tr></table></div>")
    keep = _kept_where(blocks, {PROSE.strip(), f"{PROSE}Results by district follow."})
    out = _by_text(blocks, article_lists_keep(blocks, keep))
    assert not out["Weather today"] and not out["Horoscope"]  # the kept paragraph is 3 levels below the list's parent
    assert out["North"] and out["52 %"] and out["South"]
    assert article_lists_keep(blocks, keep, ArticleListsParams(max_depth=0)) == keep  # its paragraph is 1 level down


def test_a_list_of_links_after_a_kept_paragraph_stays_dropped():
    blocks = _blocks(f"<div><p>{PROSE}</p><ul><li><a href='/a'>Bridge closures this week</a></li>"
                     "<li><a href='/b'>More local news</a></li><li>Sponsored</li></ul></div>")
    keep = _kept_where(blocks, {PROSE.strip()})
    assert article_lists_keep(blocks, keep) == keep  # 8 of 9 words linked
    looser = ArticleListsParams(max_link_density=0.9)
    assert article_lists_keep(blocks, keep, looser) == [True] * len(blocks)
