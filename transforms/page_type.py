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
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

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
    """Thresholds of :func:`page_type` (module docstring); words are ``TextBlock.num_words``, shares in [0, 1]."""

    min_prose_words: int = 80
    min_declared_words: int = 30
    max_card_share: float = 0.5
    listing_card_share: float = 0.4
    listing_link_density: float = 0.5
    min_title_support: float = 0.3
    min_undated_words: int = 300
    min_region_words: int = 20
    cards: TeaserCardsParams = TeaserCardsParams()


def largest_prose_region(blocks: Sequence[TextBlock], prose: Sequence[bool]) -> int:
    """Words (``TextBlock.num_words``) of the prose blocks (``prose`` flags, one per block) under the one parent
    element that holds the most of them: an article's paragraphs share a parent, a listing's teasers mostly do
    not. 0 without prose."""
    regions: dict[int, int] = {}
    for block, is_prose_block in zip(blocks, prose):
        if is_prose_block:
            parent = block.container.getparent() if block.container is not None else None
            regions[id(parent)] = regions.get(id(parent), 0) + block.num_words
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


def page_type(blocks: Sequence[TextBlock], keep: Sequence[bool], declared: Sequence[str] = (),
              params: PageTypeParams = PageTypeParams(), title: str | None = None, dated: bool = True,
              has_body: bool = False) -> str:
    """One of :data:`PAGE_TYPES` for a page's ``blocks`` and the chain's ``keep`` flags; ``declared``: what the page
    says it is (``Metadata.page_types``); ``title``: the page's title (None: none); ``dated``: whether the page gives
    a publication date or an author; ``has_body``: whether it carries an ``articleBody`` (JSON-LD or microdata).

    ``listing`` is the confident verdict a foreign WARC's page is rejected for (``not_article``), so a page with
    article evidence (:func:`has_article_evidence`) is never one: it is ``other`` at most."""
    said = {d.lower() for d in declared}
    is_declared_article = declares_article(said)
    is_declared_listing = bool(said & DECLARED_LISTING) and not is_declared_article
    total = sum(b.num_words for b in blocks)
    if not total or (said & DECLARED_OTHER and not is_declared_article and not is_declared_listing):
        return PageType.OTHER.value
    carded = in_card_groups(blocks, [b.container for b in blocks], params.cards)
    card_words = sum(b.num_words for b, c in zip(blocks, carded) if c)
    prose = [k and is_prose(b, 10, 0.3) for b, k in zip(blocks, keep)]
    prose_words = sum(b.num_words for b, p in zip(blocks, prose) if p)
    prose_in_cards = sum(b.num_words for b, p, c in zip(blocks, prose, carded) if p and c)
    needed = params.min_declared_words if is_declared_article else params.min_prose_words
    if not dated:
        needed = max(needed, params.min_undated_words)
    if prose_words >= needed and prose_in_cards <= params.max_card_share * prose_words and not is_declared_listing:
        support = title_support(title, blocks, keep)
        if support is None or support >= params.min_title_support:
            return PageType.ARTICLE.value
    if is_declared_article:  # what the page says of itself outweighs its cards: at most "other", never rejected
        return PageType.OTHER.value
    linked = sum(b.num_linked_words for b in blocks)
    links = linked >= params.listing_link_density * total
    if is_declared_listing:
        return PageType.LISTING.value
    if card_words >= params.listing_card_share * total or links:
        region = largest_prose_region(blocks, prose)
        evident = has_article_evidence(dated, has_body, region, params)
        return PageType.OTHER.value if evident else PageType.LISTING.value
    return PageType.OTHER.value


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
