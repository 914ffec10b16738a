"""The learned page-type decision (transforms/page_type.py: page_features, the shipped model, learned_type)."""

import gzip

import lxml.html
import pytest

from newsclean.transforms.blocks import extract_blocks
from newsclean.transforms.chain import extract_article
from newsclean.transforms.page_type import (
    PAGE_FEATURE_NAMES,
    PAGE_MODEL,
    PageStats,
    PageTypeParams,
    has_article_evidence,
    largest_prose_region,
    learned_type,
    listing_probabilities,
    load_page_model,
    page_features,
    page_type,
    rule_type,
)
from newsclean.transforms.types import BlockParams
from newsclean.transforms.vocab import INLINE_TAGS

SENTENCES = ("The council voted on Tuesday to close the old bridge for repairs, after engineers found cracks in two "
             "of its supports. Traffic will be sent through the town centre for at least six months. ")
ARTICLE_PAGE = ("<html><head><title>Old bridge to close for repairs</title>"
                "<meta property='article:published_time' content='2024-03-05T10:00:00Z'></head><body>"
                "<article><h1>Old bridge to close for repairs</h1><p class='byline'>By Jane Doe, 5 March 2024</p>"
                + "".join(f"<p>{SENTENCES}</p>" for _ in range(6)) + "</article></body></html>")


def _cards(n: int) -> str:
    return "".join(f"<div class='card'><h3><a href='/world/story-{i}'>Headline number {i} of the world section</a>"
                   f"</h3><p>A short teaser of story {i}.</p></div>" for i in range(n))


LISTING_PAGE = (f"<html><head><title>World news</title></head><body><h1>World news</h1><div class='grid'>{_cards(20)}"
                "</div></body></html>")


def _blocks(html: str):
    root = lxml.html.document_fromstring(html)
    return extract_blocks(root, BlockParams(non_separator_tags=INLINE_TAGS, separate_marked=True))


def _row(blocks, dated: bool, title: str):
    keep = [True] * len(blocks)
    params = PageTypeParams()
    stats = PageStats.of(blocks, keep, (), params)
    region = largest_prose_region(blocks, stats.prose)
    rule = rule_type(blocks, keep, stats, params, title, dated)
    return page_features(blocks, keep, stats, title, dated, False, region, rule)


def _typed(html: str, monkeypatch) -> tuple[str, tuple[float, float, float]]:
    """The default chain's page type of ``html`` and the model's probabilities it was decided with."""
    seen = []
    monkeypatch.setattr("newsclean.transforms.page_type.listing_probabilities",
                        lambda features, path=None: seen.append(listing_probabilities(features, path)) or seen[-1])
    return extract_article(html).page_type, seen[-1]


def test_the_model_says_listing_for_a_card_grid_and_article_for_a_dated_article(monkeypatch):
    kind, listing = _typed(LISTING_PAGE, monkeypatch)
    assert kind == "listing" and listing[1] > 0.5 and listing[1] > listing[0]
    kind, article = _typed(ARTICLE_PAGE, monkeypatch)
    assert kind == "article" and article[0] > 0.9
    assert sum(listing) == pytest.approx(1.0) and sum(article) == pytest.approx(1.0)


def test_a_page_with_article_evidence_is_never_a_listing_whatever_the_model_says(monkeypatch):
    sure_listing = (0.0, 1.0, 0.0)
    for rule in ("article", "other"):
        assert learned_type(rule, sure_listing, evident=True, declared_article=False) != "listing"
        assert learned_type(rule, sure_listing, evident=False, declared_article=True) != "listing"
    assert learned_type("other", sure_listing, evident=False, declared_article=False) == "listing"
    monkeypatch.setattr("newsclean.transforms.page_type.listing_probabilities", lambda features, path=None: sure_listing)
    blocks = _blocks(LISTING_PAGE)
    keep = [True] * len(blocks)
    assert page_type(blocks, keep, dated=True) == "other"  # a date or an author
    assert page_type(blocks, keep, dated=False, has_body=True) == "other"  # an articleBody
    assert page_type(blocks, keep, ("newsarticle",), dated=False) == "other"  # an article type
    assert page_type(blocks, keep, dated=False) == "listing"


def test_the_decision_thresholds():
    params = PageTypeParams(listing_confidence=0.9, article_confidence=0.2, rescue_confidence=0.5)
    assert learned_type("other", (0.05, 0.89, 0.06), False, False, params) == "other"  # not confident enough
    assert learned_type("other", (0.05, 0.90, 0.05), False, False, params) == "listing"
    assert learned_type("article", (0.19, 0.3, 0.51), False, False, params) == "other"  # not article: kept as a row
    assert learned_type("article", (0.2, 0.3, 0.5), False, False, params) == "article"
    assert learned_type("listing", (0.49, 0.5, 0.01), False, False, params) == "listing"
    assert learned_type("listing", (0.5, 0.5, 0.0), False, False, params) == "other"  # the model sees an article
    assert has_article_evidence(False, False, 19) is False  # the guard's own threshold is unchanged


def test_the_rules_alone_without_the_model(monkeypatch):
    def fail(features, path=None):
        raise AssertionError("the model ran")

    monkeypatch.setattr("newsclean.transforms.page_type.listing_probabilities", fail)
    blocks = _blocks(LISTING_PAGE)
    assert page_type(blocks, [True] * len(blocks), dated=False, params=PageTypeParams(learned=False)) == "listing"


def test_the_model_file_is_small_loads_once_and_checks_its_features(tmp_path):
    assert PAGE_MODEL.stat().st_size < 200_000
    assert load_page_model() is load_page_model()
    assert len(_row(_blocks(ARTICLE_PAGE), True, "x")) == len(PAGE_FEATURE_NAMES)
    with gzip.open(PAGE_MODEL, "rt", encoding="utf-8") as f:
        text = f.read()
    other = tmp_path / "other.txt.gz"
    with gzip.open(other, "wt", encoding="utf-8") as f:
        f.write(text.replace("feature_names=log_words ", "feature_names=words "))
    with pytest.raises(ValueError, match="other features"):
        load_page_model(str(other))
    with pytest.raises(FileNotFoundError):
        load_page_model(str(tmp_path / "missing.txt.gz"))


def test_a_prediction_leaves_no_thread_spinning_on_other_cores():
    """One page's prediction runs on the calling thread alone: LightGBM's OpenMP threads, once started, spin after
    each prediction on the other cores (a worker process of the job would take its neighbour's core)."""
    import os
    import time

    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: OpenMP starts no other thread to spin")
    row = [0.5] * len(PAGE_FEATURE_NAMES)
    listing_probabilities(row)
    process, thread = time.process_time(), time.thread_time()
    for _ in range(300):
        listing_probabilities(row)
        time.sleep(0.001)  # the job's chain between two pages: other threads' spinning would go on meanwhile
    others = (time.process_time() - process) - (time.thread_time() - thread)
    assert others < 0.15, f"{others:.2f} s of CPU in other threads during 300 predictions"


def test_the_largest_prose_region_counts_one_parent_element_not_all():
    """Each paragraph under its own section: the largest region is one paragraph's words, however lxml reuses the
    Python objects of the parent elements between two lookups (none of them is held by the caller)."""
    sections = "".join(f"<section><p>{' '.join(['word'] * (10 + i))} end.</p></section>" for i in range(6))
    blocks = _blocks(f"<html><body>{sections}</body></html>")
    words = [b.num_words for b in blocks]
    assert len(blocks) == 6 and words == sorted(words)
    assert largest_prose_region(blocks, [True] * 6) == max(words)
    paragraphs = "".join(f"<p>{' '.join(['word'] * 12)} end.</p>" for _ in range(3))
    together = _blocks(f"<html><body><section>{paragraphs}</section></body></html>")
    assert largest_prose_region(together, [True] * 3) == sum(b.num_words for b in together)
