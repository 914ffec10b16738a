"""Structural priors (transforms/structure.py), the articleBody read from JSON-LD (transforms/metadata.py)
and the page-level coherence rule (transforms/refine/coherence.py), on hand-built pages."""

import json

import pytest

from newsclean.transforms.chain import DEFAULT_CONFIG, prepare_blocks
from newsclean.transforms.classifier.features import block_features, structure_features
from newsclean.transforms.context import PageContext
from newsclean.transforms.refine.body_evidence import BodyEvidenceParams, body_evidence_keep
from newsclean.transforms.refine.coherence import CoherenceParams, ModuleSplitParams, coherent_keep, module_split_keep
from newsclean.transforms.refine.region import is_prose, main_region, text_container
from newsclean.transforms.structure import body_support
from newsclean.transforms.vocab import STRUCTURE_FEATURE_NAMES

FIRST = "The minister said on Monday that the budget would be cut by ten percent next year."
SECOND = "Critics said the plan was unfair to families and would hurt the schools of the north."
TEASER = "Ten things you missed this week in politics, sport and the arts."


def _blocks(body: str, head: str = ""):
    page = prepare_blocks(f"<html><head><title>Budget</title>{head}</head><body>{body}</body></html>", None, DEFAULT_CONFIG)
    return page.blocks, page.meta


def _by_text(blocks, X):
    return {b.text: dict(zip(STRUCTURE_FEATURE_NAMES, row)) for b, row in zip(blocks, X)}


def test_article_containers_and_body_names_mark_only_their_blocks():
    blocks, _ = _blocks(
        "<div class='menu'><p>Home and world news sections</p></div>"
        f"<main><div itemprop='articleBody'><p>{FIRST}</p></div><div class='story-body'><p>{SECOND}</p></div></main>"
        f"<div class='teasers'><p>{TEASER}</p></div>")
    rows = _by_text(blocks, structure_features(blocks))
    menu, first, second, teaser = (rows[t] for t in ("Home and world news sections", FIRST, SECOND, TEASER))
    assert (first["in_article_container"], first["in_article_body_prop"], first["body_class_id"]) == (1, 1, 0)
    assert (second["in_article_container"], second["in_article_body_prop"], second["body_class_id"]) == (1, 0, 1)
    assert menu["in_article_container"] == teaser["in_article_container"] == teaser["body_class_id"] == 0
    words = {b.text: b.num_words for b in blocks}
    total = sum(words.values())
    # nearest marked element: the articleBody div holds FIRST, the story-body div SECOND
    assert first["container_word_share"] == pytest.approx(words[FIRST] / total)
    assert second["container_word_share"] == pytest.approx(words[SECOND] / total)
    assert menu["container_word_share"] == 0
    assert all(r["page_has_container"] == 1 for r in rows.values())


def test_container_share_counts_nested_containers_words():
    blocks, _ = _blocks(f"<article><p>{FIRST}</p><div class='entry-content'><p>{SECOND}</p></div></article><p>{TEASER}</p>")
    rows = _by_text(blocks, structure_features(blocks))
    words = {b.text: b.num_words for b in blocks}
    total = sum(words.values())
    assert rows[FIRST]["container_word_share"] == pytest.approx((words[FIRST] + words[SECOND]) / total)
    assert rows[SECOND]["container_word_share"] == pytest.approx(words[SECOND] / total)
    assert rows[SECOND]["body_class_id"] == 1 and rows[FIRST]["body_class_id"] == 0


def test_body_class_names_need_a_whole_name_not_a_substring():
    blocks, _ = _blocks(f"<div class='nobody-content-ads'><p>{TEASER}</p></div><div id='post-content'><p>{FIRST}</p></div>")
    rows = _by_text(blocks, structure_features(blocks))
    assert rows[FIRST]["body_class_id"] == 1
    assert rows[TEASER]["body_class_id"] == 0


def test_jsonld_article_body_reaches_the_features_through_metadata():
    ld = json.dumps({"@context": "https://schema.org", "@type": "NewsArticle", "headline": "Budget",
                     "articleBody": f"{FIRST} {SECOND} And a third sentence of the article that is long enough."})
    blocks, meta = _blocks(f"<div><p>{FIRST}</p><p>{TEASER}</p><p>{SECOND}</p></div>",
                           f"<script type='application/ld+json'>{ld}</script>")
    assert meta.article_body and meta.article_body.startswith("The minister said")
    X = block_features(blocks, PageContext("Budget", article_body=meta.article_body), names=STRUCTURE_FEATURE_NAMES)
    rows = _by_text(blocks, X)
    assert rows[FIRST]["ld_body_share"] == 1 and rows[SECOND]["ld_body_share"] == 1
    assert rows[TEASER]["ld_body_share"] < 0.2  # "in politics" etc. share no bigram run with the body
    assert all(r["ld_body_present"] == 1 for r in rows.values())
    body_words = len(meta.article_body.split())
    page_words = sum(b.num_words for b in blocks)
    assert rows[FIRST]["ld_body_coverage"] == pytest.approx(min(1.0, body_words / page_words))
    # without the articleBody the evidence is absent, not guessed
    X0 = block_features(blocks, PageContext("Budget"), names=STRUCTURE_FEATURE_NAMES)
    assert not X0[:, [STRUCTURE_FEATURE_NAMES.index(n) for n in ("ld_body_share", "ld_body_present", "ld_body_coverage")]].any()


def test_a_teaser_article_body_is_not_evidence():
    short = "The minister said on Monday."  # under MIN_BODY_WORDS words: a teaser, not the article
    blocks, _ = _blocks(f"<p>{FIRST}</p>")
    X = structure_features(blocks, short)
    assert X[0, STRUCTURE_FEATURE_NAMES.index("ld_body_present")] == 0
    assert X[0, STRUCTURE_FEATURE_NAMES.index("ld_body_share")] == 0


def test_body_support_counts_bigrams_in_order():
    body = "the cat sat on the mat".split()
    pairs = set(zip(body, body[1:]))
    assert body_support("The cat sat", set(body), pairs) == 1.0
    assert body_support("sat cat the", set(body), pairs) == 0.0  # same words, no bigram in order
    assert body_support("mat", set(body), pairs) == 1.0 and body_support("dog", set(body), pairs) == 0.0
    assert body_support("", set(body), pairs) == 0.0


# ---------------------------------------------------------------------------------------- coherence

def _article_split_by_ads():
    """An article whose paragraphs sit in sibling ``div.para`` containers, cut by an ad and a link list."""
    paras = [FIRST, SECOND, "Officials said the cuts would start in April and last for at least two years.",
             "The opposition leader called for a vote in parliament before the end of the month."]
    body = (f"<div class='body'><div class='para'><p>{paras[0]}</p></div><div class='para'><p>{paras[1]}</p></div>"
            "<div class='ad'><p>Advertisement: buy the new phone today, the best offer of the year.</p></div>"
            f"<div class='para'><p>{paras[2]}</p></div><div class='para'><p>{paras[3]}</p></div></div>"
            "<ul class='related'><li><a href='/a'>Read more about the budget cuts and the schools of the north</a></li></ul>"
            f"<div class='teasers'><p>{TEASER}</p></div>")
    blocks, _ = _blocks(body)
    return blocks, paras


def test_coherence_keeps_the_dropped_prose_of_the_main_region_only():
    blocks, paras = _article_split_by_ads()
    texts = [b.text for b in blocks]
    probs = {paras[0]: 0.9, paras[1]: 0.9, paras[2]: 0.35, paras[3]: 0.1}
    p = [probs.get(t, 0.3) for t in texts]  # ad, related link and teaser at 0.3: above the floor too
    keep = [q >= 0.5 for q in p]
    out = coherent_keep(blocks, p, keep, CoherenceParams(min_probability=0.2))
    kept = {t for t, k in zip(texts, out) if k}
    assert paras[2] in kept  # same-signature sibling container, prose, p 0.35
    assert paras[3] not in kept  # below the probability floor
    assert not any("Advertisement" in t or "Read more" in t for t in kept)  # other signature / linked
    assert TEASER not in kept  # outside the region
    assert all(o for o, k in zip(out, keep) if k)  # nothing kept is dropped


def test_coherence_without_siblings_stays_in_the_main_container():
    blocks, paras = _article_split_by_ads()
    texts = [b.text for b in blocks]
    p = [0.9 if t == paras[0] else 0.4 for t in texts]
    out = coherent_keep(blocks, p, [q >= 0.5 for q in p], CoherenceParams(same_signature_siblings=False))
    assert [t for t, k in zip(texts, out) if k] == [paras[0]]  # each paragraph has its own div.para


def test_main_region_is_the_container_with_most_kept_words():
    blocks, paras = _article_split_by_ads()
    keep = [b.text == TEASER for b in blocks]
    region = main_region(blocks, keep)
    assert region == {text_container(b) for b in blocks if b.text == TEASER}
    assert main_region(blocks, [False] * len(blocks)) == set()
    assert coherent_keep(blocks, [0.4] * len(blocks), [False] * len(blocks)) == [False] * len(blocks)


def test_prose_needs_words_a_sentence_end_and_few_links():
    blocks, _ = _blocks(f"<p>{FIRST}</p><p>Ten things you missed this week in politics and sport</p>"
                        "<p><a href='/x'>Budget cuts explained in ten charts, with maps and tables.</a></p><p>Short one.</p>")
    params = CoherenceParams()
    flags = [is_prose(b, params.min_words, params.max_link_density, params.sentence_end) for b in blocks]
    assert flags == [True, False, False, False]


def test_module_splits_keep_dropped_prose_close_between_kept_blocks_only():
    """A paragraph an inline module split off the kept run is kept when a kept block lies at most two blocks away on
    each side; not when it is linked, below the probability floor, farther from a kept block, or after the last."""
    words = ["budget", "harbour", "school", "bridge", "tram", "library", "museum", "market", "stadium", "airport"]
    paras = [f"The council said the {w} plan would be debated again in the spring, before a vote in May." for w in words]
    link = "<p><a href='/x'>Read more about the budget cuts and the schools of the north</a></p>"
    blocks, _ = _blocks("".join(f"<div class='c{i}'><p>{t}</p></div>" for i, t in enumerate(paras[:1]))
                        + link + "".join(f"<section><p>{t}</p></section>" for t in paras[1:]))
    texts = [b.text for b in blocks]
    assert len(blocks) == 11 and texts[1].startswith("Read more")
    #        0    1    2     3    4     5    6    7    8    9    10
    p = [0.9, 0.3, 0.15, 0.9, 0.05, 0.9, 0.3, 0.3, 0.3, 0.9, 0.3]
    keep = [q >= 0.5 for q in p]
    out = module_split_keep(blocks, p, keep, ModuleSplitParams())
    assert [i for i, k in enumerate(out) if k and not keep[i]] == [2, 7]
    # 1: linked; 4: p 0.05; 6: the next kept block 3 away; 8: the last kept 3 away; 10: none after
    assert module_split_keep(blocks, p, keep, ModuleSplitParams(max_gap=3)) == [*out[:6], True, True, True, *out[9:]]
    assert module_split_keep(blocks, p, [False] * 11) == [False] * 11


def test_default_chain_runs_coherence_then_the_body_evidence():
    kinds = [type(step) for step in DEFAULT_CONFIG.refine]
    assert DEFAULT_CONFIG.step(CoherenceParams) == CoherenceParams()
    assert DEFAULT_CONFIG.step(ModuleSplitParams) == ModuleSplitParams()
    assert kinds.index(CoherenceParams) < kinds.index(ModuleSplitParams) < kinds.index(BodyEvidenceParams)


def test_article_body_evidence_keeps_its_blocks_and_can_drop_others():
    third = "Officials said the cuts would start in April and last for at least two years."
    blocks, _ = _blocks(f"<p>{FIRST}</p><p>{TEASER}</p><p>{SECOND}</p><p>{third}</p>")
    texts = [b.text for b in blocks]
    body = f"{FIRST} {SECOND} {third}"
    p = {FIRST: 0.9, TEASER: 0.6, SECOND: 0.1, third: 0.02}
    probs = [p[t] for t in texts]
    keep = [q >= 0.5 for q in probs]
    out = dict(zip(texts, body_evidence_keep(blocks, probs, keep, body)))
    assert out[SECOND] and out[FIRST]  # in the body, p 0.1 >= 0.05
    assert not out[third]  # in the body but p 0.02: the classifier's word still counts
    assert out[TEASER]  # dropping is off by default
    out = dict(zip(texts, body_evidence_keep(blocks, probs, keep, body, BodyEvidenceParams(drop_below=0.7))))
    assert not out[TEASER] and out[FIRST]
    # a body not found on the page (another article's, a translation) changes nothing
    other = " ".join(["Completely different words about football results and the weather in spring"] * 3)
    assert body_evidence_keep(blocks, probs, keep, other, BodyEvidenceParams(drop_below=0.7)) == keep
    assert body_evidence_keep(blocks, probs, keep, None) == keep
