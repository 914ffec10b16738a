"""What kind of page this is: an article, a listing (section front, search results, portal), or other.

A crawler knows what it fetched (``WARC-Newsclean-Page-Type``); a foreign WARC (Common Crawl) does not say, and
its section fronts, portals and spam pages must not come out as articles. :func:`page_type` decides from the
page's structure and what it says of itself, after the block decision:

* what the page declares (``Metadata.page_types``: ``og:type`` and the JSON-LD/microdata ``@type`` names): an
  article type (``article``, ``NewsArticle``, ``BlogPosting``, ...) or a listing type (``CollectionPage``,
  ``ItemList``, ``SearchResultsPage``, ...);
* the kept prose: blocks of at least 10 words with a sentence end and link density at most 0.3
  (:func:`~newsclean.transforms.refine.region.is_prose`);
* the repeated cards (:class:`~newsclean.transforms.refine.teaser_cards.CardGroups`: three or more sibling elements
  of one signature, each a link plus a short text) and the page's link density (linked words / words).

Rules (:class:`PageTypeParams`): a page that declares another kind of page (:data:`DECLARED_OTHER`: a product,
a forum thread, a Q&A page, ...) and no article type is ``other``; a page with at least ``min_prose_words`` kept
words of prose, not mostly inside cards, is an ``article``, unless it declares a listing type and no article type;
a page that declares an article type is never a ``listing`` (on the shared sets, scholarly and blog articles with
long reference or related lists were: 3 of trafilatura-eval's pages); a page that declares a listing type is a
``listing``; a page whose words lie mostly in cards or in links is a ``listing`` only without article evidence
(:func:`has_article_evidence`: a date or an author, an ``articleBody``, ``min_region_words`` of prose under one
parent), ``other`` with it: ``listing`` is what a foreign WARC's page is rejected for, and a rejected article
costs a corpus more than a listing kept as an ``other`` row; any other
page (little prose, no list: an error page, a login wall, a photo post, spam) is ``other``. A page declaring an
article type needs only ``min_declared_words``. A news article says when it was published or who wrote it: a page with neither (``dated`` False) needs
``min_undated_words`` of kept prose (an "about us" or a landing page declaring ``og:type`` ``article``, common on
WordPress sites, is ``other``; on every third page of the shared sets 3 of 435 gold articles fall below, and 9 of
Readability's 41, mostly its synthetic test cases). An article's kept text holds its headline: a page whose title's
character bigrams are less than ``min_title_support`` in the kept text (a spam page's keyword title) is no article
(on the shared sets' pages the share is 0.64 or more at the 1st percentile; docs: evaluation/experiments-accuracy.md).

A learned decision revises the rules (:func:`learned_type`, ``PageTypeParams.learned``): a small LightGBM model
(:data:`PAGE_MODEL`, trained by ``scripts/train_page_type.py`` on the shared sets' tune halves) reads
:func:`page_features` (structural and language-neutral, the rules' verdict among them) and gives P(article),
P(listing), P(other). A rules' ``article`` the model finds unlikely (P(article) under ``article_confidence``) is
``other``; a rules' ``listing`` it finds likely an article (``rescue_confidence``) is ``other``; a page becomes a
``listing`` by the model alone only when it is confident (``listing_confidence``) and the page has no article
evidence. Figures that chose the thresholds: docs/DECISIONS.md, "Page type"; confusion table: docs/page-types.md.
"""

from __future__ import annotations

import functools
import gzip
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from newsclean.schemas.contract import PageType
from newsclean.transforms import kernel
from newsclean.transforms.metadata import declares_article
from newsclean.transforms.refine.region import is_prose
from newsclean.transforms.refine.teaser_cards import CardGroups, TeaserCardsParams, element_words, in_card_groups
from newsclean.transforms.types import TextBlock

PAGE_TYPES = (PageType.ARTICLE.value, PageType.LISTING.value, PageType.OTHER.value)

DECLARED_LISTING = frozenset({"collectionpage", "itemlist", "searchresultspage", "profilepage", "mediagallery",
                              "imagegallery", "videogallery"})
"""``Metadata.page_types`` values that declare a listing (schema.org CollectionPage and its kin). ``Blog`` is not one:
blog posts carry it (the blog they belong to) as often as blog fronts do."""

DECLARED_OTHER = frozenset({"product", "og:product", "product.group", "productgroup", "individualproduct",
                            "product.item", "offer", "offercatalog", "discussionforumposting", "qapage", "itempage",
                            "contactpage", "softwareapplication", "course", "service"})
"""``Metadata.page_types`` values that declare a page of another kind than an article (schema.org Product, Offer,
DiscussionForumPosting, QAPage, ItemPage, ContactPage, SoftwareApplication, Course, Service and their OpenGraph
forms): such a page, declaring no article type too, is ``other``. ``FAQPage``, ``ItemList`` and ``Event`` are not
here: articles carry them beside their own (on the shared sets, 36 pages typed article declaring ``FAQPage`` are
gold articles)."""


@dataclass(frozen=True)
class PageTypeParams:
    """Thresholds of :func:`page_type` (module docstring); words are ``TextBlock.num_words``, shares in [0, 1].
    ``learned``: revise the rules with the page-type model (:func:`learned_type`, whose probability thresholds in
    [0, 1] are the three ``*_confidence`` fields); ``model_path``: its file (None: :data:`PAGE_MODEL`)."""

    min_prose_words: int = 80
    min_declared_words: int = 30
    max_card_share: float = 0.5
    listing_card_share: float = 0.4
    listing_link_density: float = 0.5
    min_title_support: float = 0.3
    min_undated_words: int = 300
    min_region_words: int = 20
    cards: TeaserCardsParams = TeaserCardsParams()
    learned: bool = True
    listing_confidence: float = 0.9
    article_confidence: float = 0.6
    rescue_confidence: float = 0.5
    model_path: str | None = None


def largest_prose_region(blocks: Sequence[TextBlock], prose: Sequence[bool]) -> int:
    """Words (``TextBlock.num_words``) of the prose blocks (``prose`` flags, one per block) under the one parent
    element that holds the most of them: an article's paragraphs share a parent, a listing's teasers mostly do
    not. 0 without prose."""
    regions: dict = {}  # parent element -> words; the key holds the element, so lxml gives the same proxy again
    for block, is_prose_block in zip(blocks, prose):
        if is_prose_block:
            parent = block.container.getparent() if block.container is not None else None
            regions[parent] = regions.get(parent, 0) + block.num_words
    return max(regions.values(), default=0)


def title_support(title: str | None, blocks: Sequence[TextBlock], keep: Sequence[bool]) -> float | None:
    """Share in [0, 1] of the ``title``'s character bigrams (letters and digits, case-folded: works for scripts
    without spaces) found in the kept blocks' text; None without a title."""
    folded = _folded(title or "")
    wanted = {folded[i:i + 2] for i in range(len(folded) - 1)}
    if not wanted:
        return None
    kept = _folded(" ".join(b.text for b, k in zip(blocks, keep) if k))
    return sum(g in kept for g in wanted) / len(wanted)


_NOT_ALNUM = re.compile(r"[\W_]+")


@kernel.twin("alnum_casefold")
def _folded(text: str) -> str:
    """``text`` case-folded, letters and digits only (by the compiled kernel where
    :func:`newsclean.transforms.kernel.enabled` holds)."""
    return _NOT_ALNUM.sub("", text.casefold())


@dataclass(frozen=True)
class PageStats:
    """What :func:`page_type`'s rules and :func:`page_features` read of one page, computed once: word counts are
    ``TextBlock.num_words``; ``carded`` and ``prose`` hold one flag per block (in a card group; kept prose)."""

    declared: frozenset[str]
    total: int
    carded: list[bool]
    prose: list[bool]
    card_words: int
    prose_words: int
    prose_in_cards: int
    linked: int

    @property
    def declared_article(self) -> bool:
        """Whether the page declares an article type (:func:`~newsclean.transforms.metadata.declares_article`)."""
        return declares_article(self.declared)

    @property
    def declared_listing(self) -> bool:
        """Whether the page declares a listing type (:data:`DECLARED_LISTING`) and no article type."""
        return bool(self.declared & DECLARED_LISTING) and not self.declared_article

    @classmethod
    def of(cls, blocks: Sequence[TextBlock], keep: Sequence[bool], declared: Sequence[str],
           params: PageTypeParams) -> PageStats:
        """The stats of ``blocks`` with the chain's ``keep`` flags and the page's ``declared`` types."""
        carded = in_card_groups(blocks, [b.container for b in blocks], params.cards) if blocks else []
        prose = [k and is_prose(b, 10, 0.3) for b, k in zip(blocks, keep)]
        return cls(frozenset(d.lower() for d in declared), sum(b.num_words for b in blocks), carded, prose,
                   sum(b.num_words for b, c in zip(blocks, carded) if c),
                   sum(b.num_words for b, p in zip(blocks, prose) if p),
                   sum(b.num_words for b, p, c in zip(blocks, prose, carded) if p and c),
                   sum(b.num_linked_words for b in blocks))


def page_type(blocks: Sequence[TextBlock], keep: Sequence[bool], declared: Sequence[str] = (),
              params: PageTypeParams = PageTypeParams(), title: str | None = None, dated: bool = True,
              has_body: bool = False) -> str:
    """One of :data:`PAGE_TYPES` for a page's ``blocks`` and the chain's ``keep`` flags; ``declared``: what the page
    says it is (``Metadata.page_types``); ``title``: the page's title (None: none); ``dated``: whether the page gives
    a publication date or an author; ``has_body``: whether it carries an ``articleBody`` (JSON-LD or microdata).

    The rules (:func:`rule_type`) decide, revised by the learned page-type model where ``params.learned``
    (:func:`learned_type`). ``listing`` is the confident verdict a foreign WARC's page is rejected for
    (``not_article``), so a page with article evidence (:func:`has_article_evidence`) is never one by the rules'
    card or link test nor by the model: it is ``other`` at most. Raises ``FileNotFoundError`` when
    ``params.learned`` and the model file is missing."""
    stats = PageStats.of(blocks, keep, declared, params)
    rule = rule_type(blocks, keep, stats, params, title, dated, has_body)
    if not params.learned or not stats.total:
        return rule
    region = largest_prose_region(blocks, stats.prose)
    features = page_features(blocks, keep, stats, title, dated, has_body, region, rule)
    probabilities = listing_probabilities(features, params.model_path)
    return learned_type(rule, probabilities, has_article_evidence(dated, has_body, region, params),
                        stats.declared_article, params, stats.declared_listing)


def rule_type(blocks: Sequence[TextBlock], keep: Sequence[bool], stats: PageStats,
              params: PageTypeParams = PageTypeParams(), title: str | None = None, dated: bool = True,
              has_body: bool = False) -> str:
    """The hand-chosen rules of the module docstring: one of :data:`PAGE_TYPES` for ``blocks`` with ``keep`` and
    their :class:`PageStats` (the other arguments as in :func:`page_type`)."""
    said = stats.declared
    is_declared_article, is_declared_listing = stats.declared_article, stats.declared_listing
    if not stats.total or (said & DECLARED_OTHER and not is_declared_article and not is_declared_listing):
        return PageType.OTHER.value
    needed = params.min_declared_words if is_declared_article else params.min_prose_words
    if not dated:
        needed = max(needed, params.min_undated_words)
    if (stats.prose_words >= needed and stats.prose_in_cards <= params.max_card_share * stats.prose_words
            and not is_declared_listing):
        support = title_support(title, blocks, keep)
        if support is None or support >= params.min_title_support:
            return PageType.ARTICLE.value
    if is_declared_article:  # what the page says of itself outweighs its cards: at most "other", never rejected
        return PageType.OTHER.value
    links = stats.linked >= params.listing_link_density * stats.total
    if is_declared_listing:
        return PageType.LISTING.value
    if stats.card_words >= params.listing_card_share * stats.total or links:
        region = largest_prose_region(blocks, stats.prose)
        evident = has_article_evidence(dated, has_body, region, params)
        return PageType.OTHER.value if evident else PageType.LISTING.value
    return PageType.OTHER.value


PAGE_FEATURE_NAMES = (
    "log_words", "kept_share", "log_prose_words", "prose_share", "card_share", "prose_card_share", "link_density",
    "kept_link_density", "log_region_words", "region_share", "log_blocks", "kept_block_share", "log_prose_blocks",
    "mean_block_words", "short_block_share", "heading_share", "list_item_share", "paragraph_share", "cell_share",
    "price_share", "digit_share", "title_support", "dated", "has_body", "declared_article", "declared_listing",
    "declared_other", "rule_article", "rule_listing", "link_block_share", "log_card_words", "largest_block_share",
    "first_prose_position")
"""Columns of :func:`page_features`, in order; the model file records them and :func:`load_page_model` refuses a
model trained with other names."""

_CURRENCY = re.compile(r"[$\u00a2-\u00a5\u20a0-\u20c0]\s?\d|\d\s?[$\u00a2-\u00a5\u20a0-\u20c0]")
_DIGIT = re.compile(r"\d")


def page_features(blocks: Sequence[TextBlock], keep: Sequence[bool], stats: PageStats, title: str | None,
                  dated: bool, has_body: bool, region: int, rule: str) -> list[float]:
    """The learned page-type model's row for one page (:data:`PAGE_FEATURE_NAMES`): word and block counts (log1p of
    ``TextBlock.num_words`` and of blocks), shares in [0, 1] of words (kept, prose, in cards, linked, in the largest
    prose region ``region``, in the largest block) and of blocks (kept, under 5 words, in a heading, a list item, a
    paragraph, a table cell, with a price: a currency sign beside a digit, mostly linked), the first prose block's
    position, digits per character, ``title_support`` (NaN without a
    title), the page's own evidence and declarations as 0/1, and the rules' verdict ``rule`` (:func:`rule_type`).
    Structural and language-neutral: no word lists, no URL. Raises ``ZeroDivisionError`` for a page without
    words (:func:`page_type` decides those by the rules)."""
    n, total, said = len(blocks), stats.total, stats.declared
    kept_words = sum(b.num_words for b, k in zip(blocks, keep) if k)
    tags = [b.container.tag if b.container is not None and isinstance(b.container.tag, str) else "" for b in blocks]
    chars = sum(len(b.text) for b in blocks) or 1
    support = title_support(title, blocks, keep)
    return [
        math.log1p(total), kept_words / total, math.log1p(stats.prose_words), stats.prose_words / total,
        stats.card_words / total, stats.prose_in_cards / stats.prose_words if stats.prose_words else 0.0,
        stats.linked / total, sum(b.num_linked_words for b, k in zip(blocks, keep) if k) / (kept_words or 1),
        math.log1p(region), region / stats.prose_words if stats.prose_words else 0.0, math.log1p(n),
        sum(keep) / n, math.log1p(sum(stats.prose)), total / n, sum(b.num_words < 5 for b in blocks) / n,
        sum(t in _HEADINGS for t in tags) / n, tags.count("li") / n, tags.count("p") / n,
        sum(t in ("td", "th") for t in tags) / n, sum(bool(_CURRENCY.search(b.text)) for b in blocks) / n,
        sum(len(_DIGIT.findall(b.text)) for b in blocks) / chars, math.nan if support is None else support,
        float(dated), float(has_body), float(stats.declared_article), float(bool(said & DECLARED_LISTING)),
        float(bool(said & DECLARED_OTHER)), float(rule == PageType.ARTICLE.value), float(rule == PageType.LISTING.value),
        sum(b.link_density > 0.8 for b in blocks) / n, math.log1p(stats.card_words), max(b.num_words for b in blocks) / total,
        next((i for i, p in enumerate(stats.prose) if p), n) / n,
    ]


_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
PAGE_MODEL = Path(__file__).resolve().parent / "models" / "page_type.txt.gz"
"""The shipped page-type model: a gzipped LightGBM multiclass text model, classes :data:`MODEL_CLASSES`
(``scripts/train_page_type.py``)."""
MODEL_CLASSES = (PageType.ARTICLE.value, PageType.LISTING.value, PageType.OTHER.value)


@functools.lru_cache(maxsize=4)
def load_page_model(path: str | None = None):
    """The LightGBM booster of the page-type model at ``path`` (None: :data:`PAGE_MODEL`), read once per process.
    Raises ``FileNotFoundError`` when the file is missing and ``ValueError`` when its feature names are not
    :data:`PAGE_FEATURE_NAMES` or it has not one class per :data:`MODEL_CLASSES`."""
    import lightgbm

    file = Path(path) if path else PAGE_MODEL
    with gzip.open(file, "rt", encoding="utf-8") as f:
        booster = lightgbm.Booster(model_str=f.read())
    if tuple(booster.feature_name()) != PAGE_FEATURE_NAMES or booster.num_model_per_iteration() != len(MODEL_CLASSES):
        raise ValueError(f"{file}: page-type model of other features or classes than newsclean's; retrain it "
                         "(scripts/train_page_type.py)")
    return booster


def listing_probabilities(features: Sequence[float], path: str | None = None) -> tuple[float, float, float]:
    """The model's probabilities (article, listing, other), summing to 1, for one :func:`page_features` row.

    One thread (``num_threads=1``): LightGBM's OpenMP threads, once started for a prediction, keep spinning on the
    other cores after it (one row is no work to share), which doubled the CPU time of the chain a page and took
    the core of the job's other worker process (shared corpus, the chain in the job: 27.0 -> 16.4 ms of CPU a page)."""
    row = np.asarray([features], dtype=np.float64)
    article, listing, other = load_page_model(path).predict(row, num_threads=1)[0]
    return float(article), float(listing), float(other)


def learned_type(rule: str, probabilities: tuple[float, float, float], evident: bool, declared_article: bool,
                 params: PageTypeParams = PageTypeParams(), declared_listing: bool = False) -> str:
    """The page type from the rules' verdict ``rule`` and the model's ``probabilities`` (article, listing, other),
    biased to keep articles: ``listing`` (rejected in a foreign WARC) only where P(listing) is at least
    ``params.listing_confidence`` or the rules say ``listing`` and P(article) is under ``params.rescue_confidence``
    (a page declaring a listing type, ``declared_listing``, stays the rules' ``listing``), and never for a page with article evidence
    (``evident``: :func:`has_article_evidence`) or declaring an article type (``declared_article``) unless the rules
    give it (a declared listing); an ``article`` of the rules whose P(article) is under
    ``params.article_confidence`` is ``other`` (kept as a row, not typed article)."""
    article, listing, _ = probabilities
    if rule == PageType.LISTING.value:
        return PageType.OTHER.value if article >= params.rescue_confidence and not declared_listing else rule
    if listing >= params.listing_confidence and not evident and not declared_article:
        return PageType.LISTING.value
    if rule == PageType.ARTICLE.value and article < params.article_confidence:
        return PageType.OTHER.value
    return rule


def has_article_evidence(dated: bool, has_body: bool, region_words: int, params: PageTypeParams = PageTypeParams()) -> bool:
    """Whether a page whose words lie mostly in cards or links still shows it is an article: it gives a publication
    date or an author (``dated``), carries an ``articleBody`` (``has_body``), or keeps at least
    ``params.min_region_words`` words of prose under one parent element (``region_words``:
    :func:`largest_prose_region`). Such a page is never typed ``listing`` (so never rejected ``not_article``).

    The threshold was chosen on the tune halves of the seven shared sets: at 10 to 20 words, 4 of the 29 gold
    articles typed listing stay listings, 6 at 25 (docs/DECISIONS.md, "Page type")."""
    return dated or has_body or region_words >= params.min_region_words


def listing_lines(blocks: Sequence[TextBlock], params: TeaserCardsParams = TeaserCardsParams()) -> list[str]:
    """The items of a listing page, one line each, in page order: the blocks of each card
    (:class:`~newsclean.transforms.refine.teaser_cards.CardGroups`) joined by spaces. Empty without cards."""
    groups = CardGroups(element_words(blocks, params.min_link_words, params.min_link_density), params)
    lines: list[str] = []
    current = None
    for b in blocks:
        card = _card_of(b, groups)
        if card is None:
            current = None
            continue
        if card is current:
            lines[-1] += " " + b.text
        else:
            lines.append(b.text)
            current = card
    return lines


def _card_of(block: TextBlock, groups: CardGroups):
    node = block.container
    while node is not None:
        if groups(node):
            return node
        node = node.getparent()
    return None
