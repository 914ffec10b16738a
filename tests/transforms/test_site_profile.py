"""Per-site evidence from neighbour pages (transforms/site_profile.py)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from newsclean.transforms.blocks import extract_blocks
from newsclean.transforms.classifier.features import block_features, site_features
from newsclean.transforms.context import PageContext
from newsclean.transforms.dom import element_token
from newsclean.transforms.parse import parse_html
from newsclean.transforms.refine.site_check import SiteCheckParams, site_recheck
from newsclean.transforms.site_evidence import learn_site_evidence
from newsclean.transforms.site_profile import SiteProfileParams, learn_site_profile, summarise_page
from newsclean.transforms.types import SITE_BLOCKS
from newsclean.transforms.vocab import FEATURE_GROUPS, FEATURE_NAMES, SITE_FEATURE_NAMES

STORIES = [
    ("Harbour wall repaired", "The council finished repairs to the harbour wall on Monday, after storms, floods and a long winter "
     "had left it cracked. Fishermen said the work came just in time, and the cost was lower than feared."),
    ("Library opens late", "The town library will stay open until nine on weekdays, the mayor said, following a petition, a survey "
     "and months of debate. Students welcomed the change, while staff asked for more hands."),
    ("Bridge closed for checks", "Engineers closed the old rail bridge for two days of checks, diverting buses, cyclists and walkers "
     "through the centre. A report on its state is expected before the summer holidays."),
    ("School wins prize", "A primary school on the hill won a national prize for its garden, planted by pupils, parents and "
     "teachers over three years. The money will buy a greenhouse, tools and seeds for the next class."),
]


def page(k: int, related: tuple[str, ...] = ("One", "Two", "Three")) -> str:
    """A news page of one site: the same menu, an article container whose id holds the story number,
    a related-stories box with other links on every page."""
    title, body = STORIES[k]
    links = "".join(f'<li class="item item-{k}{j}"><a href="/r/{k}{j}">{t} story {k}{j} here</a></li>'
                    for j, t in enumerate(related))
    return (f"<html><head><title>{title}</title></head><body>"
            '<ul class="menu"><li><a href="/">Home</a></li><li><a href="/news">News</a></li><li><a href="/sport">Sport</a></li></ul>'
            f'<div class="main"><div class="article-body post-{k}" id="story-{k}"><h1>{title}</h1>'
            f"<p>{body}</p><p>{body.upper()}</p></div>"
            f'<div class="related"><h3>Related</h3><ul>{links}</ul></div></div>'
            '<div class="footer"><p>Copyright Town News. All rights reserved.</p></div></body></html>')


def blocks_of(html: str):
    return extract_blocks(parse_html(html), SITE_BLOCKS)


def profile_of(pages: list[str], **kw):
    return learn_site_profile([summarise_page(parse_html(h)) for h in pages], SiteProfileParams(**kw))


def column(name: str) -> int:
    return SITE_FEATURE_NAMES.index(name)


def block_row(blocks, feats, text: str) -> np.ndarray:
    return feats[next(i for i, b in enumerate(blocks) if text in b.text)]


def test_element_token_drops_names_with_digits_and_sorts():
    el = parse_html('<div class="Story post-4711 body" id="a1">x</div>').find(".//div")
    assert element_token(el) == "div.body.story"  # id "a1" holds a digit: left out
    el = parse_html('<div class="b a" id="Main">x</div>').find(".//div")
    assert element_token(el) == "div.a.b#main"


def test_profile_finds_the_article_container_the_boxes_and_the_recurring_texts():
    profile = profile_of([page(k) for k in range(3)])
    assert profile.pages == 3
    assert len(profile.content) == 1 and profile.content[0][1] == 1.0  # all three agree on the container
    blocks = blocks_of(page(3))  # a fourth page of the site, not a neighbour
    feats = site_features(blocks, profile)
    prose = block_row(blocks, feats, "primary school on the hill")
    related = block_row(blocks, feats, "story 31 here")
    menu = block_row(blocks, feats, "Home")
    assert prose[column("site_in_content")] == 1.0 and related[column("site_in_content")] == 0.0
    assert prose[column("site_path_text_varies")] == 1.0  # article text differs on every neighbour
    assert related[column("site_path_support")] == 1.0 and related[column("site_path_text_varies")] == 1.0
    assert related[column("site_path_link_density")] == 1.0 and prose[column("site_path_link_density")] == 0.0
    assert prose[column("site_path_word_share")] > 0.5 > related[column("site_path_word_share")]
    assert menu[column("site_text_support")] == 1.0 and prose[column("site_text_support")] == 0.0
    assert menu[column("site_path_text_varies")] == 0.0  # the same menu on every neighbour
    article_words = sum(b.num_words for b in blocks if b.container.get("id") == "story-3" or
                        b.container.getparent().get("id") == "story-3")
    assert feats[0, column("site_content_here")] == pytest.approx(article_words / sum(b.num_words for b in blocks))


def test_no_profile_from_one_page_and_zero_features_without_one():
    assert profile_of([page(0)]) is None
    blocks = blocks_of(page(1))
    assert not site_features(blocks, None).any()


def test_profile_stays_small_and_bounded():
    profile = profile_of([page(k, related=tuple(f"R{j}" for j in range(40))) for k in range(4)], max_structures=5, max_texts=7)
    assert len(profile.structures()) <= 5 and len(profile.texts()) <= 7
    assert profile.nbytes() < 200
    assert pickle.loads(pickle.dumps(profile)) == profile
    hash(profile)  # frozen and hashable: safe as part of a Beam side input


def test_learn_static_noise_carries_the_profile_of_distinct_neighbours():
    sig = learn_site_evidence([page(0), page(0), page(1), page(2)])
    assert sig.pages == 3 and sig.profile is not None and sig.profile.pages == 3  # the copy counts once
    assert learn_site_evidence([page(0), page(1)], profile=None).profile is None
    assert learn_site_evidence([page(0)]).profile is None


def test_site_group_is_a_feature_group_computed_from_the_page_context():
    assert FEATURE_GROUPS["site"] == SITE_FEATURE_NAMES and set(SITE_FEATURE_NAMES) <= set(FEATURE_NAMES)
    profile = profile_of([page(k) for k in range(3)])
    blocks = blocks_of(page(3))
    with_site = block_features(blocks, PageContext("t", True, profile), names=SITE_FEATURE_NAMES)
    assert np.array_equal(with_site, site_features(blocks, profile))
    assert not block_features(blocks, PageContext("t", True, None), names=SITE_FEATURE_NAMES).any()


def test_site_recheck_readmits_the_container_when_kept_text_lies_outside_it():
    profile = profile_of([page(k) for k in range(3)])
    blocks = blocks_of(page(3))
    inside = [b.container.get("id") == "story-3" or b.container.getparent().get("id") == "story-3" for b in blocks]
    probs = [0.3 if i else 0.9 for i in inside]
    keep = [not i for i in inside]  # the classifier kept everything but the article
    rechecked = site_recheck(blocks, probs, keep, profile, SiteCheckParams())
    assert all(rechecked[j] for j, i in enumerate(inside) if i)
    assert [k for k, i in zip(rechecked, inside) if not i] == [k for k, i in zip(keep, inside) if not i]
    low = site_recheck(blocks, [0.1 if i else 0.9 for i in inside], keep, profile, SiteCheckParams())
    assert low == keep  # below the relaxed threshold nothing is re-admitted
    good = [i for i in inside]
    assert site_recheck(blocks, probs, good, profile, SiteCheckParams()) == good  # the article kept: unchanged
    assert site_recheck(blocks, probs, keep, None, SiteCheckParams()) == keep


def test_default_chain_runs_the_site_check():
    from newsclean.transforms.chain import DEFAULT_CONFIG, PAPER_CONFIG
    from newsclean.transforms.refine.site_check import SiteCheckParams

    assert DEFAULT_CONFIG.step(SiteCheckParams) == SiteCheckParams()
    assert PAPER_CONFIG.learned is None and PAPER_CONFIG.refine == ()  # no classifier, hence no site check
