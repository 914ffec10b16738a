"""The listing check (transforms/listing.py, issue #17): a page of unsure short teasers on a site whose
neighbour pages hold articles the classifier is sure of is a ``not_article`` reject; articles are not."""

from __future__ import annotations

import pytest
from lxml import etree

from newsclean.schemas.records import RejectReason
from newsclean.transforms.blocks import TextBlock
from newsclean.transforms.errors import ExtractionError
from newsclean.transforms.features import PageContext
from newsclean.transforms.learned import LearnedParams, classify_learned
from newsclean.transforms.listing import ListingParams, is_sure_article, listing_reason
from newsclean.transforms.site_profile import SiteProfile, SiteVote


def block(words: int, link_words: int = 0) -> TextBlock:
    return TextBlock(" ".join(["word"] * words), words, link_words, float(words), etree.Element("p"))


TEASERS = [block(6, 6), block(22), block(5, 5), block(18), block(7, 7), block(25), block(4, 4)]
TEASER_PROBS = [0.55, 0.6, 0.52, 0.7, 0.51, 0.74, 0.3]
TEASER_KEEP = [p >= 0.5 for p in TEASER_PROBS]  # 6 kept blocks, the longest 25 words
SITE = SiteVote(pages=10, article_pages=8)  # 8 of 10 neighbours hold a sure article


def test_teaser_page_on_an_article_site_is_a_listing():
    reason = listing_reason(TEASERS, TEASER_PROBS, TEASER_KEEP, SITE)
    assert reason is not None and "6 short kept blocks" in reason and "8 of 10" in reason


@pytest.mark.parametrize("vote", [None, SiteVote(pages=1, article_pages=1), SiteVote(pages=10, article_pages=4)])
def test_no_decision_without_neighbours_or_when_the_site_has_few_sure_articles(vote):
    # no vote / one neighbour: nothing to contrast with; 4 of 10 sure articles: the model may not read this
    # site's layout at all (issue #11's unseen layouts), so unsure teasers say nothing
    assert listing_reason(TEASERS, TEASER_PROBS, TEASER_KEEP, vote) is None


def test_an_article_is_not_a_listing():
    sure = TEASER_PROBS[:-1] + [0.81]  # one block the classifier is sure of
    assert listing_reason(TEASERS, sure, TEASER_KEEP, SITE) is None
    paragraph = [*TEASERS[:-1], block(30)]  # a kept 30-word paragraph
    assert listing_reason(paragraph, TEASER_PROBS[:-1] + [0.6], TEASER_KEEP[:-1] + [True], SITE) is None
    few = [True, True, True, True, False, False, False]  # 4 kept blocks: a short article, not a column of teasers
    assert listing_reason(TEASERS, TEASER_PROBS, few, SITE) is None


def test_sure_article_counts_words_at_or_above_sure():
    blocks = [block(30), block(20), block(40)]
    assert is_sure_article(blocks, [0.8, 0.9, 0.79])  # 50 sure words
    assert not is_sure_article(blocks, [0.8, 0.79, 0.79])  # 30
    with pytest.raises(ValueError):
        is_sure_article(blocks, [0.9])


def test_params_are_checked():
    with pytest.raises(ValueError):
        ListingParams(sure=0.0)
    with pytest.raises(ValueError):
        ListingParams(min_site_share=1.5)
    with pytest.raises(ValueError):
        ListingParams(min_teasers=0)


def test_classify_learned_rejects_a_listing_only_when_set(monkeypatch):
    import newsclean.transforms.learned as learned

    monkeypatch.setattr(learned, "content_probabilities", lambda blocks, ctx, params: list(TEASER_PROBS))
    ctx = PageContext(None, True, SiteProfile(pages=10, vote=SITE))
    assert classify_learned(TEASERS, ctx, LearnedParams()) == TEASER_KEEP  # off: the page's teasers are kept
    with pytest.raises(ExtractionError) as err:
        classify_learned(TEASERS, ctx, LearnedParams(listing=ListingParams()))
    assert err.value.reason == RejectReason.NOT_ARTICLE and "listing page" in err.value.message


def test_off_in_the_shipped_chain():
    from newsclean.transforms.chain import DEFAULT_CONFIG, LEARNED_CONFIG

    assert DEFAULT_CONFIG.learned.listing is None and LEARNED_CONFIG.learned.listing is None


def site_page(k: int, words: int) -> str:
    """A page of one site: a nav bar and an article of ``words`` words whose text differs per page."""
    body = " ".join(f"w{k}x{i}" for i in range(words))
    return (f"<html><head><title>Story {k}</title></head><body><div class='nav'><a href='/'>Home</a> "
            f"<a href='/news'>News</a></div><div class='article'><h1>Story {k}</h1><p>{body}.</p></div></body></html>")


@pytest.mark.parametrize(("prob", "expected"), [(0.9, 3), (0.79, 0)])
def test_learning_counts_neighbours_holding_a_sure_article(monkeypatch, prob, expected):
    import newsclean.transforms.site_signature as site_signature
    from newsclean.transforms.chain import DEFAULT_CONFIG
    from newsclean.transforms.site_signature import classifies_neighbours, learn_site_signature

    # the classifier is stubbed: every block at ``prob``; pages 0-2 hold a 60-word article, page 3 only 20 words
    monkeypatch.setattr(site_signature, "content_probabilities", lambda blocks, ctx, params: [prob] * len(blocks))
    pages = [site_page(k, 60) for k in range(3)] + [site_page(3, 20)]
    config = DEFAULT_CONFIG.with_(learned=LearnedParams(listing=ListingParams()))
    assert classifies_neighbours(config) and not classifies_neighbours(DEFAULT_CONFIG)
    vote = learn_site_signature(pages, config).profile.vote
    assert vote.pages == 4 and vote.article_pages == expected
    assert vote.table() == {}  # no site vote asked for: no structures stored, the probabilities stay as they are
    assert learn_site_signature(pages[:1], config).profile is None  # one page: no profile, no evidence


def test_eval_has_its_ablation_row():
    from newsclean.transforms.chain import DEFAULT_CONFIG
    from newsclean_eval.systems import ablations

    rows = {s.id: s for s in ablations(DEFAULT_CONFIG)}
    assert rows["listing"].config.learned.listing == ListingParams() and rows["listing"].neighbour_only
    assert rows["listing"].config.learned.site_check == DEFAULT_CONFIG.learned.site_check
    on = DEFAULT_CONFIG.with_(learned=rows["listing"].config.learned)
    rows_on = {s.id: s for s in ablations(on)}
    assert rows_on["no-listing"].config.learned.listing is None and "listing" not in rows_on
