"""Peer rescue of a collapsed extraction (transforms/refine/peer_rescue.py): when it runs, what it adds."""

import lxml.html
import pytest

from newsclean.transforms.blocks import extract_blocks
from newsclean.transforms.chain import DEFAULT_CONFIG, extract_article
from newsclean.transforms.context import PageContext
from newsclean.transforms.refine import peer_rescue, refine_keep
from newsclean.transforms.refine.peer_rescue import PeerRescueParams, rescue_keep
from newsclean.transforms.text import scoring_tokens
from newsclean.transforms.types import BlockParams
from newsclean.transforms.vocab import INLINE_TAGS

STORY = [
    "The council voted on Tuesday to close the old bridge for repairs after engineers found deep cracks in two "
    "of its stone supports during a routine inspection last month.",
    "Drivers will be sent through the eastern ring road, which the transport office expects to add about "
    "fifteen minutes to the morning journey for commuters from the northern villages.",
    "Work on the supports is due to start in the spring and should take most of the summer, the engineers "
    "said, although the schedule depends on the weather and on the river level.",
]
MENU = ["Home", "World news", "Sport results", "Contact us"]


def _page(paragraphs=STORY) -> str:
    menu = "".join(f"<li><a href='/{i}'>{m}</a></li>" for i, m in enumerate(MENU))
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return f"<html><head><title>Bridge closes</title></head><body><ul>{menu}</ul><div>{body}</div></body></html>"


def _blocks(html: str):
    return extract_blocks(lxml.html.document_fromstring(html), BlockParams(non_separator_tags=INLINE_TAGS))


def _peer(monkeypatch, text: str | None):
    """Replace trafilatura by ``text`` (None: fail the test if the peer is asked at all)."""
    def fake(html):
        if text is None:
            pytest.fail("the peer was asked although the page did not collapse")
        return text
    monkeypatch.setattr(peer_rescue, "peer_text", fake)


UNSURE = 0.5


def _kept(blocks, flags):
    return {b.text for b, k in zip(blocks, flags) if k}


def test_a_page_that_kept_enough_words_is_left_alone_without_asking_the_peer(monkeypatch):
    html = _page()
    blocks = _blocks(html)
    keep = [b.text in STORY for b in blocks]
    _peer(monkeypatch, None)
    assert rescue_keep(html, blocks, [UNSURE] * len(blocks), keep, PeerRescueParams(max_kept_words=20)) == keep


def test_an_unsure_fragment_gets_the_blocks_the_peer_extracted_and_no_others(monkeypatch):
    html = _page()
    blocks = _blocks(html)
    keep = [b.text == STORY[0] for b in blocks]  # one fragment kept: 27 words
    _peer(monkeypatch, "\n".join(STORY[:2]))  # the peer finds the first two paragraphs
    out = rescue_keep(html, blocks, [UNSURE] * len(blocks), keep, PeerRescueParams(max_kept_words=100, min_peer_words=40))
    assert _kept(blocks, out) == {STORY[0], STORY[1]}


def test_a_fragment_the_classifier_is_sure_of_and_a_page_it_emptied_are_left_alone(monkeypatch):
    """A short article kept at p >= 0.8 stays as it is; so does a page with nothing kept (a section front)."""
    html = _page()
    blocks = _blocks(html)
    keep = [b.text == STORY[0] for b in blocks]
    probs = [0.85 if k else 0.1 for k in keep]
    _peer(monkeypatch, None)
    assert rescue_keep(html, blocks, probs, keep, PeerRescueParams(min_peer_words=40)) == keep
    assert rescue_keep(html, blocks, [0.1] * len(blocks), [False] * len(blocks)) == [False] * len(blocks)
    _peer(monkeypatch, "\n".join(STORY))
    lenient = PeerRescueParams(min_peer_words=40, max_kept_probability=0.9)
    assert _kept(blocks, rescue_keep(html, blocks, probs, keep, lenient)) == set(STORY)


def test_a_peer_text_shorter_than_min_peer_words_changes_nothing(monkeypatch):
    html = _page()
    blocks = _blocks(html)
    keep = [b.text == MENU[0] for b in blocks]  # one word kept
    probs = [UNSURE] * len(blocks)
    _peer(monkeypatch, STORY[1])  # 29 tokens
    assert rescue_keep(html, blocks, probs, keep, PeerRescueParams(min_peer_words=30)) == keep
    assert _kept(blocks, rescue_keep(html, blocks, probs, keep, PeerRescueParams(min_peer_words=29))) == {MENU[0], STORY[1]}


def test_a_block_needs_min_block_share_of_its_tokens_in_the_peer_text(monkeypatch):
    html = _page()
    blocks = _blocks(html)
    keep = [b.text == MENU[0] for b in blocks]
    probs = [UNSURE] * len(blocks)
    first = scoring_tokens(STORY[0])
    partial = " ".join(first[: int(len(first) * 0.8)]) + " " + " ".join(scoring_tokens(STORY[2]))
    _peer(monkeypatch, partial)  # 80 % of the first paragraph's tokens, all of the third's
    strict = rescue_keep(html, blocks, probs, keep, PeerRescueParams(min_peer_words=10, min_block_share=0.9))
    assert _kept(blocks, strict) == {MENU[0], STORY[2]}
    loose = rescue_keep(html, blocks, probs, keep, PeerRescueParams(min_peer_words=10, min_block_share=0.75))
    assert _kept(blocks, loose) == {MENU[0], STORY[0], STORY[2]}


def test_scoring_tokens_fold_case_and_compose_unicode():
    assert scoring_tokens("Caf\u0065\u0301 OPENS, café opens!") == ["café", "opens", "café", "opens"]


def test_the_peer_is_not_given_a_page_over_the_size_bound_and_its_failure_is_no_text(monkeypatch):
    assert peer_rescue.peer_text("<p>x</p>" * (peer_rescue.MAX_PEER_HTML_CHARS // 8 + 1)) == ""
    import trafilatura

    def broken(*args, **kwargs):
        raise RuntimeError("peer bug")
    monkeypatch.setattr(trafilatura, "extract", broken)
    assert peer_rescue.peer_text(_page()) == ""


@pytest.mark.parametrize("kw", [{"min_block_share": 0.0}, {"min_block_share": 1.5}, {"max_kept_words": -1},
                                {"max_kept_probability": 0.0}])
def test_params_out_of_range_are_refused(kw):
    with pytest.raises(ValueError):
        PeerRescueParams(**kw)


def test_the_page_level_steps_rescue_an_unsure_fragment_with_the_real_peer():
    """trafilatura itself (not a stand-in) finds the nine paragraphs of the story; the menu stays dropped."""
    html = _page(STORY * 3)
    blocks = _blocks(html)
    keep = [b is blocks[len(MENU)] for b in blocks]  # the first paragraph only
    steps = (PeerRescueParams(),)
    out = refine_keep(blocks, [UNSURE] * len(blocks), keep, PageContext(html=html), steps)
    assert _kept(blocks, out) == set(STORY) and sum(out) == 9
    assert refine_keep(blocks, [UNSURE] * len(blocks), keep, PageContext(), steps) == keep  # no page, no peer


def test_the_chain_gives_the_peer_the_page_it_cleans(monkeypatch):
    seen = []

    def spy(html, blocks, probs, keep, params, empty_too=False):
        seen.append(html)
        return list(keep)
    monkeypatch.setattr(peer_rescue, "rescue_keep", spy)
    html = _page(STORY * 3)
    extract_article(html, None, DEFAULT_CONFIG)
    assert seen == [html] and DEFAULT_CONFIG.refine[-1] == PeerRescueParams(declared_empty=True)


def test_an_empty_page_gets_the_peers_vote_only_when_it_declares_an_article(monkeypatch):
    monkeypatch.setattr(peer_rescue, "peer_text", lambda html: " ".join(STORY * 3))
    html = _page(STORY * 3)
    blocks = _blocks(html)
    nothing = [False] * len(blocks)
    step = PeerRescueParams(declared_empty=True)
    assert refine_keep(blocks, [UNSURE] * len(blocks), nothing, PageContext(html=html), (step,)) == nothing
    declared = PageContext(html=html, page_types=("newsarticle",))
    assert _kept(blocks, refine_keep(blocks, [UNSURE] * len(blocks), nothing, declared, (step,))) == set(STORY)
    assert refine_keep(blocks, [UNSURE] * len(blocks), nothing, declared, (PeerRescueParams(),)) == nothing
