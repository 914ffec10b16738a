"""The article region recall step (transforms/refine/region_recall.py) on a hand-built page whose article paragraphs sit
in repeated wrappers (``div.row > div.col > div.story-text``) cut by an ad row, with a comment box outside."""

import pytest

from newsclean.transforms.chain import DEFAULT_CONFIG, prepare_blocks
from newsclean.transforms.context import PageContext
from newsclean.transforms.refine import refine_keep
from newsclean.transforms.refine.coherence import coherent_keep
from newsclean.transforms.refine.region_recall import (
    REGION_RECALL_STEPS,
    RegionRecallParams,
    article_region,
    region_recall_keep,
)

# Twelve words each (counted by hand), each with a sentence end: prose for the default thresholds.
LEAD = "The governor said on Monday that the new budget cuts ten programs."
KEPT1 = "Critics said the plan was unfair to families across the northern counties."
KEPT2 = "Officials said the cuts would start in April and last two years."
LAST = "The opposition leader called for a vote before the end of March."
AD = "Buy the new phone today and save on the best offer ever."
COMMENT = "I think the governor is right and the critics are wrong again."
PROBS = {LEAD: 0.15, KEPT1: 0.9, KEPT2: 0.95, LAST: 0.3, AD: 0.3, COMMENT: 0.3}


def _row(cls: str, *paras: str) -> str:
    return f"<div class='row'><div class='col'><div class='{cls}'>" + "".join(f"<p>{p}</p>" for p in paras) + "</div></div></div>"


def _page(comments: int = 3):
    body = ("<article class='story'>" + _row("story-text", LEAD) + _row("ad", AD) + _row("story-text", KEPT1, KEPT2)
            + _row("story-text", LAST) + "</article><div class='comments'>"
            + "".join(f"<div class='comment'><p>{COMMENT}</p></div>" for _ in range(comments)) + "</div>")
    blocks = prepare_blocks(f"<html><head><title>Budget</title></head><body>{body}</body></html>", None, DEFAULT_CONFIG).blocks
    texts = [b.text for b in blocks]
    assert sorted(set(texts)) == sorted(PROBS) and all(b.num_words == 12 for b in blocks)
    probs = [PROBS[t] for t in texts]
    return blocks, texts, probs, [p >= 0.5 for p in probs]


def _kept(texts, keep):
    return {t for t, k in zip(texts, keep) if k}


def test_coherence_alone_misses_the_paragraphs_in_other_wrappers():
    blocks, texts, probs, keep = _page()
    assert _kept(texts, coherent_keep(blocks, probs, keep)) == {KEPT1, KEPT2}  # the bug this step targets


def test_ancestor_and_markup_scopes_take_everything_in_the_article():
    blocks, texts, probs, keep = _page()
    # third ancestor of div.story-text (col, row, article) = the <article>, which is also the nearest marked element
    for params in (RegionRecallParams(scope="ancestor", levels=3), RegionRecallParams(scope="markup")):
        out = region_recall_keep(blocks, probs, keep, params)
        assert _kept(texts, out) == {LEAD, KEPT1, KEPT2, LAST, AD}  # the ad row too: the price of a wide scope
    # the scope may hold at most max_scope_share of the page's words: the article holds 60 of 96 (0.625)
    narrow = RegionRecallParams(scope="markup", max_scope_share=0.6)
    assert region_recall_keep(blocks, probs, keep, narrow) == keep
    assert article_region(blocks, keep, RegionRecallParams(scope="markup", max_scope_share=0.63)) == [
        t != COMMENT for t in texts]


def test_max_kept_share_acts_only_on_fragments():
    blocks, texts, probs, keep = _page()
    # region (the <article>, p >= 0.1): kept 24 words (KEPT1, KEPT2), candidates 36 (LEAD, AD, LAST): kept share 0.4
    acts = region_recall_keep(blocks, probs, keep, RegionRecallParams(scope="markup", max_kept_share=0.41))
    assert _kept(texts, acts) == {LEAD, KEPT1, KEPT2, LAST, AD}
    assert region_recall_keep(blocks, probs, keep, RegionRecallParams(scope="markup", max_kept_share=0.4)) == keep


def test_nothing_kept_nothing_done_and_unknown_scopes_refused():
    blocks, _, probs, _ = _page()
    none = [False] * len(blocks)
    assert region_recall_keep(blocks, probs, none, RegionRecallParams()) == none
    with pytest.raises(ValueError, match="scope"):
        RegionRecallParams(scope="path")


def test_comment_threads_are_never_rescued():
    blocks, texts, probs, _ = _page()
    keep = [t == COMMENT for t in texts]  # the classifier kept one comment: the main container is a div.comment
    parent = RegionRecallParams(scope="ancestor", levels=1)  # div.comment's parent div.comments: every comment
    assert region_recall_keep(blocks, probs, keep, parent) == keep  # class token "comment" (COMMENT_WORDS)
    unskipped = RegionRecallParams(scope="ancestor", levels=1, skip_words=())
    assert sum(region_recall_keep(blocks, probs, keep, unskipped)) == 3


def test_the_recommended_steps_run_in_order_and_ship_in_the_default():
    assert [s for s in DEFAULT_CONFIG.refine if isinstance(s, RegionRecallParams)] == list(REGION_RECALL_STEPS)
    blocks, texts, probs, keep = _page()
    ctx = PageContext("Budget", False, None, None)
    assert refine_keep(blocks, probs, keep, ctx, ()) == keep
    # the markup step: the <article> (60 of 96 words) is the outermost marked element; LAST (0.3), the ad row (0.3)
    # and LEAD (0.15) are prose above 0.1 inside it; the comments are outside
    assert _kept(texts, refine_keep(blocks, probs, keep, ctx, REGION_RECALL_STEPS)) == {LEAD, KEPT1, KEPT2, LAST, AD}
    # the ancestor step alone (grandparent of div.story-text = div.row): nothing new in the main row
    assert refine_keep(blocks, probs, keep, ctx, REGION_RECALL_STEPS[1:]) == keep
