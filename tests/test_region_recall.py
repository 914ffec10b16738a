"""The article region recall step (transforms/region_recall.py) on a hand-built page whose article paragraphs sit
in repeated wrappers (``div.row > div.col > div.story-text``) cut by an ad row, with a comment box outside."""

import pytest

from newsclean.transforms.chain import DEFAULT_CONFIG, prepare_blocks
from newsclean.transforms.coherence import coherent_keep
from newsclean.transforms.features import PageContext
from newsclean.transforms.learned import LearnedParams, page_level_keep
from newsclean.transforms.region_recall import (
    REGION_RECALL_STEPS,
    BodyRecallParams,
    RegionRecallParams,
    article_region,
    body_recall_keep,
    region_recall_keep,
    structural_path,
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


def test_path_scope_keeps_prose_in_wrappers_of_the_same_structure_only():
    blocks, texts, probs, keep = _page()
    out = region_recall_keep(blocks, probs, keep, RegionRecallParams(scope="path", levels=2, min_probability=0.1))
    assert _kept(texts, out) == {LEAD, KEPT1, KEPT2, LAST}  # not the ad (div.ad) nor the comments (div.comment)
    floor = region_recall_keep(blocks, probs, keep, RegionRecallParams(scope="path", levels=2, min_probability=0.2))
    assert _kept(texts, floor) == {KEPT1, KEPT2, LAST}  # the lead's 0.15 is below the floor


def test_structural_path_is_tag_and_class_of_the_container_and_its_ancestors():
    blocks, texts, _, _ = _page()
    lead = blocks[texts.index(LEAD)].container  # the <p>
    assert structural_path(lead.getparent(), 2) == (("div", "story-text"), ("div", "col"), ("div", "row"))
    assert structural_path(lead, 0) == (("p", ""),)


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
    # region (path, p >= 0.1): kept 24 words (KEPT1, KEPT2), candidates 24 (LEAD, LAST): kept share 0.5
    acts = region_recall_keep(blocks, probs, keep, RegionRecallParams(scope="path", max_kept_share=0.51))
    assert _kept(texts, acts) == {LEAD, KEPT1, KEPT2, LAST}
    assert region_recall_keep(blocks, probs, keep, RegionRecallParams(scope="path", max_kept_share=0.5)) == keep


def test_nothing_kept_nothing_done_and_lengths_checked():
    blocks, _, probs, _ = _page()
    none = [False] * len(blocks)
    assert region_recall_keep(blocks, probs, none, RegionRecallParams()) == none
    with pytest.raises(ValueError, match="differ in length"):
        region_recall_keep(blocks, probs[:-1], none)
    with pytest.raises(ValueError, match="scope"):
        RegionRecallParams(scope="page")


def test_comment_threads_are_never_rescued():
    blocks, texts, probs, _ = _page()
    keep = [t == COMMENT for t in texts]  # the classifier kept one comment: the main container is a div.comment
    path = RegionRecallParams(scope="path", levels=1)  # div.comment < div.comments: every comment matches
    assert region_recall_keep(blocks, probs, keep, path) == keep  # class token "comment" (COMMENT_WORDS)
    assert sum(region_recall_keep(blocks, probs, keep, RegionRecallParams(scope="path", levels=1, skip_words=()))) == 3


def test_page_level_keep_runs_the_recommended_steps_in_order_and_ships_in_the_default():
    assert LearnedParams().region_recall is None and DEFAULT_CONFIG.learned.region_recall == REGION_RECALL_STEPS
    blocks, texts, probs, keep = _page()
    ctx = PageContext("Budget", False, None, None)
    assert page_level_keep(blocks, probs, keep, ctx, LearnedParams()) == keep
    on = LearnedParams(region_recall=REGION_RECALL_STEPS)
    # the markup step: the <article> (60 of 96 words) is the outermost marked element; LAST (0.3), the ad row (0.3)
    # and LEAD (0.15) are prose above 0.1 inside it; the comments are outside
    assert _kept(texts, page_level_keep(blocks, probs, keep, ctx, on)) == {LEAD, KEPT1, KEPT2, LAST, AD}
    # the ancestor step alone (grandparent of div.story-text = div.row): nothing new in the main row
    assert page_level_keep(blocks, probs, keep, ctx, LearnedParams(region_recall=REGION_RECALL_STEPS[1:])) == keep


# ---------------------------------------------------------------------------------------- articleBody recall

def test_body_recall_keeps_the_body_only_when_the_kept_text_is_a_fragment_of_it():
    blocks, texts, probs, _ = _page()
    body = " ".join((LEAD, KEPT1, KEPT2, LAST))  # 48 words, all on the page
    only_first = [t == KEPT1 for t in texts]  # 12 of the body's 48 words kept: share 0.25
    out = body_recall_keep(blocks, probs, only_first, body)
    assert _kept(texts, out) == {LEAD, KEPT1, KEPT2, LAST}  # support 1.0; the ad and comments have none
    half = [t in (KEPT1, KEPT2) for t in texts]  # 24 of 48: share 0.5, not below max_kept_share 0.5
    assert body_recall_keep(blocks, probs, half, body) == half
    assert _kept(texts, body_recall_keep(blocks, probs, half, body, BodyRecallParams(max_kept_share=0.6))) == {
        LEAD, KEPT1, KEPT2, LAST}
    floor = body_recall_keep(blocks, probs, only_first, body, BodyRecallParams(min_probability=0.2))
    assert _kept(texts, floor) == {KEPT1, KEPT2, LAST}  # the lead's 0.15 is below the floor


def test_body_recall_ignores_a_body_that_is_not_on_the_page_or_too_short():
    blocks, texts, probs, _ = _page()
    only_first = [t == KEPT1 for t in texts]
    teaser = LEAD + " " + " ".join(f"other{i} words of another story" for i in range(8))  # 12 of 52 words found
    assert body_recall_keep(blocks, probs, only_first, teaser) == only_first
    assert body_recall_keep(blocks, probs, only_first, LEAD) == only_first  # 12 words < MIN_BODY_WORDS (20)
    assert body_recall_keep(blocks, probs, only_first, None) == only_first
    assert LearnedParams().body_recall is None and DEFAULT_CONFIG.learned.body_recall is None


def test_eval_has_the_region_recall_ablation_row():
    from newsclean_eval.systems import ablations

    rows = {s.id: s for s in ablations(DEFAULT_CONFIG)}
    row = rows["no-region-recall"]  # the default carries the step: the row takes it out
    assert row.config.learned.region_recall is None
    assert row.config.learned.side_content == DEFAULT_CONFIG.learned.side_content  # one thing changed
    assert "region-recall" not in rows
    off = DEFAULT_CONFIG.with_(learned=row.config.learned)
    assert {s.id: s for s in ablations(off)}["region-recall"].config.learned.region_recall == REGION_RECALL_STEPS


def test_headings_of_the_region_only_when_asked():
    body = (f"<article><h2>Budget cuts explained</h2><div class='story-text'><p>{KEPT1}</p><p>{KEPT2}</p></div></article>"
            f"<div class='side'><h2>Most read stories</h2><p>{AD}</p></div>")
    blocks = prepare_blocks(f"<html><body>{body}</body></html>", None, DEFAULT_CONFIG).blocks
    texts = [b.text for b in blocks]
    probs = [0.9 if t in (KEPT1, KEPT2) else 0.3 for t in texts]
    keep = [p >= 0.5 for p in probs]
    assert region_recall_keep(blocks, probs, keep, RegionRecallParams()) == keep  # a 3-word heading is no prose
    out = region_recall_keep(blocks, probs, keep, RegionRecallParams(heading_probability=0.2))
    assert _kept(texts, out) == {"Budget cuts explained", KEPT1, KEPT2}  # not the side box's heading (outside)
    assert region_recall_keep(blocks, probs, keep, RegionRecallParams(heading_probability=0.4)) == keep
