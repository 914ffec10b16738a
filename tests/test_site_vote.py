"""The site vote: the classifier's say per recurring block structure on the neighbours (transforms/site_vote.py, #17)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from newsclean.transforms.blocks import extract_blocks
from newsclean.transforms.chain import DEFAULT_CONFIG, LEARNED_CONFIG, extract_article
from newsclean.transforms.learned import keep_flags
from newsclean.transforms.parse import parse_html
from newsclean.transforms.site_profile import SiteVote
from newsclean.transforms.site_signature import learn_site_signature
from newsclean.transforms.site_vote import (
    SiteVoteParams,
    learn_site_vote,
    page_vote,
    structure_keys,
    vote_probabilities,
)
from newsclean.transforms.static_noise import learn_static_noise, learn_static_noise_trees

STORIES = [
    ("Harbour wall repaired", "The council finished repairs to the harbour wall on Monday, after storms and floods had "
     "left it cracked. Fishermen said the work came just in time, and the cost was lower than feared."),
    ("Library opens late", "The town library will stay open until nine on weekdays, the mayor said, following a petition "
     "and months of debate. Students welcomed the change, while staff asked for more hands."),
    ("Bridge closed for checks", "Engineers closed the old rail bridge for two days of checks, diverting buses and walkers "
     "through the centre. A report on its state is expected before the summer holidays."),
    ("School wins prize", "A primary school on the hill won a national prize for its garden, planted by pupils and "
     "teachers over three years. The money will buy a greenhouse, tools and seeds for the next class."),
]


def page(k: int, promo: bool = True) -> str:
    """A page of one site: an article container, and (``promo``) a promotion box whose text differs per page."""
    title, body = STORIES[k]
    box = (f'<div class="promo"><p>Offer {k}: subscribe this week and get {k + 2} months for the price of one, '
           f"plus a tote bag number {k}.</p></div>") if promo else ""
    return (f"<html><head><title>{title}</title></head><body><div class=\"article\"><h1>{title}</h1><p>{body}</p>"
            f'<p><a href="/more/{k}">More stories from the town desk {k}</a></p></div>{box}</body></html>')


def blocks_of(html: str):
    return extract_blocks(parse_html(html), LEARNED_CONFIG.blocks)


def is_promo(block) -> bool:
    return block.text.startswith("Offer")


def vote_from(pages: list[str], prob_of, params: SiteVoteParams = SiteVoteParams()) -> SiteVote | None:
    """A vote learnt from hand-set probabilities (``prob_of(block)``) instead of the classifier's."""
    votes = []
    for html in pages:
        blocks = blocks_of(html)
        votes.append(page_vote(blocks, [prob_of(b) for b in blocks]))
    return learn_site_vote(votes, params)


def test_a_structure_dropped_on_every_neighbour_pulls_an_unsure_block_down():
    vote = vote_from([page(k) for k in range(4)], lambda b: 0.05 if is_promo(b) else 0.95)
    blocks = blocks_of(page(3))
    probs = [0.6 if is_promo(b) else 0.55 for b in blocks]
    voted = vote_probabilities(blocks, probs, vote, SiteVoteParams(weight=0.5))
    promo = [i for i, b in enumerate(blocks) if is_promo(b)]
    assert len(promo) == 1
    # 0.5 * 0.6 + 0.5 * round(0.05 * 255) / 255 = 0.3255: below the threshold, so the box is dropped
    assert voted[promo[0]] == pytest.approx(0.3255, abs=1e-3)
    assert keep_flags(voted, [b.num_words for b in blocks])[promo[0]] is False
    others = [i for i in range(len(blocks)) if i not in promo]
    assert all(voted[i] > probs[i] for i in others)  # the site keeps its article blocks: pulled up


def test_too_few_neighbours_or_a_split_site_leave_the_block_alone():
    few = vote_from([page(0), page(1), page(2, promo=False), page(3, promo=False)], lambda b: 0.05 if is_promo(b) else 0.95,
                    SiteVoteParams(min_pages=2))
    blocks = blocks_of(page(3))
    probs = [0.6] * len(blocks)
    promo = next(i for i, b in enumerate(blocks) if is_promo(b))
    assert vote_probabilities(blocks, probs, few, SiteVoteParams(min_pages=3))[promo] == 0.6  # box on 2 neighbours
    assert vote_probabilities(blocks, probs, few, SiteVoteParams(min_pages=2))[promo] < 0.5
    split = vote_from([page(k) for k in range(4)], lambda b: (0.3 if "Offer 0" in b.text or "Offer 1" in b.text else 0.8)
                      if is_promo(b) else 0.95)  # site mean 0.55: no agreement
    assert vote_probabilities(blocks, probs, split, SiteVoteParams(min_margin=0.3))[promo] == 0.6


def test_a_page_without_neighbours_is_unchanged():
    blocks = blocks_of(page(0))
    probs = [0.2, 0.7, 0.45, 0.6][:len(blocks)]
    assert vote_probabilities(blocks, probs, None, SiteVoteParams()) == probs
    assert learn_site_vote([page_vote(blocks, probs)]) is None  # one page shows nothing recurring
    config = DEFAULT_CONFIG.with_(learned=replace(DEFAULT_CONFIG.learned, site_vote=SiteVoteParams()))
    alone = learn_site_signature([page(0)], config)
    assert alone is not None and alone.profile is None
    assert extract_article(page(0), alone, config).text == extract_article(page(0), alone, DEFAULT_CONFIG).text


def test_link_blocks_are_a_structure_of_their_own():
    blocks = blocks_of(page(0))
    keys = dict(zip([b.text[:5] for b in blocks], structure_keys(blocks)))
    prose, link = keys["The c"], keys["More "]
    assert prose != link  # same container path (div.article > p), but one is a link block
    assert structure_keys(blocks_of(page(1)))[1] == prose  # the same structure on another page of the site


def test_the_vote_is_bounded_and_keeps_the_most_supported_structures():
    rows = [{k: 0.1 for k in range(100 + j)} for j in range(3)]  # keys 0-99 on 3 pages, 100 on 2, 101 on 1
    vote = learn_site_vote(rows, SiteVoteParams(min_pages=2, max_structures=5))
    table = vote.table()
    assert len(table) == 5 and vote.nbytes() == 5 * 10
    assert all(support == 3 for support, _ in table.values())
    assert learn_site_vote(rows, SiteVoteParams(min_pages=3, max_structures=512)).table().keys() == set(range(100))


@pytest.mark.parametrize("bad", [dict(weight=1.5), dict(weight=-0.1), dict(min_pages=1), dict(min_margin=0.6),
                                 dict(max_structures=0)])
def test_bad_parameters_raise(bad):
    with pytest.raises(ValueError):
        SiteVoteParams(**bad)


def test_mismatched_lengths_raise():
    blocks = blocks_of(page(0))
    with pytest.raises(ValueError):
        page_vote(blocks, [0.5])
    vote = vote_from([page(k) for k in range(3)], lambda b: 0.5)
    with pytest.raises(ValueError):
        vote_probabilities(blocks, [0.5], vote)


def test_learning_parses_once_and_matches_static_noise_without_a_vote():
    pages = [page(k) for k in range(4)] + [page(0)]  # the last is a copy: not a second neighbour
    plain = learn_static_noise(pages)
    signature, trees = learn_static_noise_trees(pages)
    assert signature == plain and len(trees) == 4
    assert learn_site_signature(pages, DEFAULT_CONFIG) == plain  # no vote setting: exactly the static signature
    assert learn_site_signature(pages, DEFAULT_CONFIG.with_(static=None)) is None
    config = DEFAULT_CONFIG.with_(learned=replace(DEFAULT_CONFIG.learned, site_vote=SiteVoteParams(min_pages=2)))
    voted = learn_site_signature(pages, config)
    assert voted.keys == plain.keys and voted.profile.vote is not None and voted.profile.vote.pages == 4
    article = structure_keys(blocks_of(page(0)))[1]
    assert voted.profile.vote.table()[article][0] == 4  # the article's paragraph structure, on all four
    assert extract_article(page(2), voted, config).text  # the chain runs with it


def test_off_in_the_default_and_eval_has_its_ablation_row():
    from newsclean_eval.systems import ablations

    assert DEFAULT_CONFIG.learned.site_vote is None and LEARNED_CONFIG.learned.site_vote is None
    rows = {s.id: s for s in ablations(DEFAULT_CONFIG)}
    assert rows["site-vote"].config.learned.site_vote == SiteVoteParams()
    assert rows["site-vote"].config.learned.site_check == DEFAULT_CONFIG.learned.site_check
    assert rows["site-vote"].neighbour_only
    on = DEFAULT_CONFIG.with_(learned=rows["site-vote"].config.learned)
    rows_on = {s.id: s for s in ablations(on)}
    assert rows_on["no-site-vote"].config.learned.site_vote is None and "site-vote" not in rows_on


def test_the_pipeline_and_the_api_learn_the_vote_when_the_chain_has_one():
    pytest.importorskip("apache_beam")
    import newsclean
    from newsclean.pipeline.stages import learn_signature

    config = DEFAULT_CONFIG.with_(learned=replace(DEFAULT_CONFIG.learned, site_vote=SiteVoteParams(min_pages=2)))
    sample = [(f"https://town.example/news/{k}", page(k).encode("utf-8"), "utf-8") for k in range(4)]
    _, plain = learn_signature(("town.example", "news"), sample, DEFAULT_CONFIG)
    _, voted = learn_signature(("town.example", "news"), sample, config)
    assert plain.profile.vote is None and voted.profile.vote is not None
    assert voted.keys == plain.keys
    text = newsclean.extract(page(1), neighbours=[page(k) for k in range(4)], chain=config).text
    assert text.startswith("Library opens late")
