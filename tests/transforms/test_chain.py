"""The whole chain on a small hand-written news template with neighbour pages."""

import pytest

from newsclean.schemas.records import RejectReason
from newsclean.transforms.chain import (
    CONFIGS,
    DEFAULT_CONFIG,
    HEURISTIC_CONFIG,
    MIN_ARTICLE_WORDS,
    PAPER_CONFIG,
    extract_article,
)
from newsclean.transforms.errors import ExtractionError
from newsclean.transforms.site_evidence import learn_site_evidence

TEMPLATE = """<html lang="en"><head><title>{title} - Daily Planet</title>
<meta property="article:published_time" content="2013-05-04T10:20:00-04:00"></head><body>
<div id="top"><a href="/">Home</a> | <a href="/world">World</a> | <a href="/sports">Sports</a></div>
<div id="main"><div class="story"><h1>{title}</h1>
{paragraphs}
</div>
<div class="related"><h3>Related</h3><ul>{related}</ul></div></div>
<div id="share">Share this story: Facebook Twitter Email</div>
<div id="foot">Copyright 2013 Daily Planet. All rights reserved. Terms of use. Privacy policy.</div>
<script>var tracking = "should never be text";</script>
</body></html>"""


def make_page(i: int) -> tuple[str, list[str]]:
    paragraphs = [
        f"Reporters in city {i} said on Monday that the council had voted to approve the new budget, "
        f"which includes funding for {i + 3} schools and a long-delayed bridge over the river.",
        f"The mayor, speaking at a press conference, called the vote <em>historic</em> and said "
        f"construction of part {i} would begin next spring if the state also agrees to help pay.",
        f"Critics argued that the plan number {i} spends too much on roads and too little on parks, "
        f"and several residents asked the council to hold another public hearing before the summer.",
    ]
    related = "".join(f"<li><a href='/story/{i}-{j}'>Another headline {i} {j} about things</a></li>" for j in range(4))
    html = TEMPLATE.format(title=f"Council approves budget {i}", paragraphs="".join(f"<p>{p}</p>" for p in paragraphs), related=related)
    return html, paragraphs


PAGES = [make_page(i) for i in range(6)]


@pytest.fixture(scope="module")
def signature():
    return learn_site_evidence([html for html, _ in PAGES[1:]])


@pytest.mark.parametrize("config", [DEFAULT_CONFIG, HEURISTIC_CONFIG], ids=lambda c: c.name)
def test_chain_keeps_the_article_and_drops_the_template(signature, config):
    html, paragraphs = PAGES[0]
    result = extract_article(html, signature, config)
    for p in paragraphs:
        assert p.replace("<em>", "").replace("</em>", "") in result.text
    for noise in ("Home", "Related", "Another headline", "Share this story", "Copyright", "tracking"):
        assert noise not in result.text


@pytest.mark.parametrize("config", [DEFAULT_CONFIG, HEURISTIC_CONFIG], ids=lambda c: c.name)
def test_chain_counts_what_each_stage_removed(signature, config):
    html, _ = PAGES[0]
    counts = extract_article(html, signature, config).counts
    assert counts.static_nodes_removed >= 4  # Home, World, Sports, share bar, footer, "Related"
    assert counts.dynamic_nodes_marked >= 1  # the related-links list
    # Honest counts: the learned chain keeps marked dynamic noise on the tree (a feature), the papers' removes it.
    assert counts.dynamic_nodes_removed == (0 if config.learned else counts.dynamic_nodes_marked)
    assert counts.noninformative_nodes_removed >= 1  # the script
    assert 0 < counts.blocks_kept <= counts.blocks_total


def test_cleaned_html_keeps_formatting_and_drops_noise(signature):
    html, _ = PAGES[0]
    cleaned = extract_article(html, signature, DEFAULT_CONFIG).html
    assert "<em>historic</em>" in cleaned
    assert "Copyright" not in cleaned and "<script" not in cleaned and "data-newsclean" not in cleaned


def test_metadata_is_read_before_cleaning(signature):
    result = extract_article(PAGES[0][0], signature)
    assert result.title == "Council approves budget 0"  # as readers see it; the raw <title> kept apart
    assert result.metadata.title == "Council approves budget 0 - Daily Planet"
    assert result.published_at.isoformat() == "2013-05-04T14:20:00+00:00"
    assert result.language == "en"


def test_paper_configuration_also_runs(signature):
    result = extract_article(PAGES[0][0], signature, PAPER_CONFIG)
    assert "council had voted to approve the new budget" in result.text


LINKS_ONLY = "<html><body><ul><li><a href='/a'>a</a></li><li><a href='/b'>b</a></li></ul></body></html>"


def test_page_without_article_is_rejected_with_a_reason():
    with pytest.raises(ExtractionError) as err:
        extract_article(LINKS_ONLY, None, HEURISTIC_CONFIG)
    assert err.value.reason is RejectReason.NO_CONTENT  # Boilerpipe keeps no link-only block
    with pytest.raises(ExtractionError) as err:
        extract_article(LINKS_ONLY, None, DEFAULT_CONFIG, min_words=MIN_ARTICLE_WORDS)  # the pipeline's filter
    assert err.value.reason in (RejectReason.NO_CONTENT, RejectReason.TOO_SHORT)


def test_short_extraction_is_rejected_as_too_short():
    body = "<p>" + " ".join(["word"] * 60) + "</p><p>" + " ".join(["word"] * 60) + "</p>"
    with pytest.raises(ExtractionError) as err:
        extract_article(f"<html><body>{body}</body></html>", None, DEFAULT_CONFIG, min_words=500)
    assert err.value.reason is RejectReason.TOO_SHORT


def test_stages_can_be_switched_off():
    html, _ = PAGES[0]
    everything = HEURISTIC_CONFIG.with_(static=None, dynamic=None, boilerpipe=None, ancestor=None)
    text = extract_article(html, None, everything).text
    assert "Another headline" in text and "Copyright" in text


def test_text_and_title_come_out_in_nfc():
    # "Cafe" + combining acute (decomposed) and Bengali U+09DC (NFC decomposes it to U+09A1 U+09BC).
    body = "<p>" + "Cafe\u0301 \u09dc " * 20 + "</p>"
    html = f"<html><head><title>Cafe\u0301</title></head><body>{body}</body></html>"
    everything = HEURISTIC_CONFIG.with_(static=None, dynamic=None, boilerpipe=None, ancestor=None)
    out = extract_article(html, None, everything)
    assert "Caf\u00e9 \u09a1\u09bc" in out.text and "\u0301" not in out.text and "\u09dc" not in out.text
    assert out.title == "Caf\u00e9"


def test_a_config_refuses_settings_its_block_decision_would_ignore():
    from newsclean.transforms.boilerpipe import BoilerpipeParams
    from newsclean.transforms.classifier.model import LearnedParams

    # The learned classifier decides: Boilerpipe/ancestor parameters would do nothing, so they are refused.
    with pytest.raises(ValueError, match="'boilerpipe' would be ignored"):
        DEFAULT_CONFIG.with_(boilerpipe=BoilerpipeParams(algorithm=1))
    with pytest.raises(ValueError, match="'boilerpipe' and 'ancestor' would be ignored"):
        HEURISTIC_CONFIG.with_(learned=LearnedParams())
    with pytest.raises(ValueError, match="link_filter"):
        HEURISTIC_CONFIG.with_(link_filter=4)
    # The papers' decision with its stages, or the learned one without them, are fine.
    assert HEURISTIC_CONFIG.with_(learned=LearnedParams(), boilerpipe=None, ancestor=None).learned is not None
    assert DEFAULT_CONFIG.boilerpipe is None and DEFAULT_CONFIG.ancestor is None
    assert all(c.name == name for name, c in CONFIGS.items())  # every shipped configuration passes the check


def test_min_words_is_an_argument_not_a_chain_setting():
    body = "<p>" + " ".join(["word"] * 12) + "</p>"
    html = f"<html><body>{body}</body></html>"
    everything = HEURISTIC_CONFIG.with_(static=None, dynamic=None, boilerpipe=None, ancestor=None)
    assert extract_article(html, None, everything).word_count == 12  # the chain alone filters nothing
    with pytest.raises(ExtractionError) as err:
        extract_article(html, None, everything, min_words=13)
    assert err.value.reason is RejectReason.TOO_SHORT
    assert not hasattr(everything, "min_words")
