"""The JSON-LD ``articleBody`` as evidence (transforms/refine/body_evidence.py ``body_evidence_keep``) with the shipped
thresholds: a teaser body (only the lede, as many 2015-2020 sites publish) must not drop the rest of the
article; a complete body still drops the kept blocks it does not contain. Hand-built pages."""

from dataclasses import replace

from newsclean.transforms.chain import DEFAULT_CONFIG, prepare_blocks
from newsclean.transforms.refine.body_evidence import BodyEvidenceParams, body_evidence_keep

SHIPPED = DEFAULT_CONFIG.step(BodyEvidenceParams)
LEDE = ("The minister said on Monday that the national budget would be cut by ten percent next year, "
        "the largest cut since the war, and that schools and hospitals would be spared.")
REST = [
    "Critics said the plan was unfair to families and would hurt the towns of the north most of all.",
    "Officials said the cuts would start in April and last for at least two years, with a review in 2019.",
    "The opposition leader called the announcement a betrayal and promised a vote against it in parliament.",
    "Economists were divided on whether the savings could ever reduce the debt of the state.",
]
PROMO = "Sign up for our morning newsletter and get the best stories delivered to your inbox."


def _page(paragraphs):
    html = "<html><head><title>Budget</title></head><body>" + "".join(f"<p>{t}</p>" for t in paragraphs) + "</body></html>"
    blocks = prepare_blocks(html, None, DEFAULT_CONFIG).blocks
    assert [b.text for b in blocks] == paragraphs
    return blocks


def test_shipped_chain_drops_with_body_evidence_and_guards_against_teasers():
    assert SHIPPED.drop_below is not None and SHIPPED.min_body_share > 0


def test_a_lede_only_body_keeps_the_other_paragraphs():
    blocks = _page([LEDE, *REST])
    probs = [0.95, 0.7, 0.6, 0.8, 0.75]  # the classifier keeps all, sure only of the lede
    keep = [True] * len(blocks)
    assert body_evidence_keep(blocks, probs, keep, LEDE, SHIPPED) == keep
    # without the guard (min_body_share 0) the article collapses to its lede
    assert body_evidence_keep(blocks, probs, keep, LEDE, replace(SHIPPED, min_body_share=0.0)) == [True] + [False] * 4


def test_a_complete_body_still_drops_a_kept_block_it_does_not_hold():
    blocks = _page([LEDE, REST[0], PROMO, *REST[1:]])
    probs = [0.95, 0.7, 0.6, 0.6, 0.8, 0.75]
    keep = [True] * len(blocks)
    body = " ".join([LEDE, *REST])
    assert body_evidence_keep(blocks, probs, keep, body, SHIPPED) == [True, True, False, True, True, True]
    # a block the classifier is sure of is kept whatever the body says
    sure = probs[:2] + [0.95] + probs[3:]
    assert body_evidence_keep(blocks, sure, keep, body, SHIPPED) == keep
