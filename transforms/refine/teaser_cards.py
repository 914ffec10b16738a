"""Repeated teaser cards beside the article: a related list, a breaking-news ticker, a trending rail.

A news page repeats one template for each teaser it shows: three or more sibling elements (``<li>``, ``<div>``,
``<article>``) of the same tag and class, each a headline link plus a short description. The block classifier
reads each card alone, and a 40-80 word description with a sentence end looks like article prose: on sites it
never saw it keeps them at 0.6-0.99. Decided on structure only, never on a site list:

* a *card* is an element of a card tag (:data:`CARD_TAGS`: ``li``, ``div``, ``article``, ``section``, ``ul``,
  ``ol``; never a paragraph or a table row) holding at most ``max_card_words`` words (``TextBlock.num_words`` of the blocks inside
  it) and a headline link: a block of at least ``min_link_words`` words with link density at least
  ``min_link_density`` (a paragraph with a link in it is no card);
* a *card group* is a parent element with at least ``min_cards`` children of one tag-and-class signature
  (:func:`~newsclean.transforms.dom.tag_class_signature`) of which at least ``min_card_share`` are cards;
* a kept block is dropped (below ``drop_below``) when one of its *own ancestors* (from its container up to, not
  including, the first element holding the main region,
  :func:`~newsclean.transforms.refine.region.main_region`, as in
  :mod:`~newsclean.transforms.refine.side_content`) is a card of a card group: cards outside the article's region,
  or inside it after its paragraphs (a related list at the foot of the body).

Never more than ``max_drop_share`` of the kept words: a page whose kept text is mostly cards is a listing, and is
left to the page type (:mod:`newsclean.transforms.page_type`). The repeated-structure idea of the wrapper-induction
and record-detection literature (MDR, Liu, Grossman & Zhai 2003: "data records" are similar sibling subtrees)
applied to what the classifier kept. Measured on leave-one-data-set-out tune pages:
evaluation/experiments-accuracy.md.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass

from lxml import etree

from newsclean.transforms import kernel
from newsclean.transforms.context import PageContext
from newsclean.transforms.dom import shared_elements, tag_class_signature, under_any
from newsclean.transforms.refine.region import main_container, main_region, page_memo
from newsclean.transforms.types import TextBlock

CARD_TAGS = frozenset({"li", "div", "article", "section", "ul", "ol"})
"""Tags of a teaser card: list items, boxes, and lists (a "read more" list of one link repeated through the body); a
paragraph, a table row or a cell is text, not a card."""


@dataclass(frozen=True)
class TeaserCardsParams:
    """Settings of :func:`teaser_cards_keep` (module docstring).

    min_cards: sibling cards of one signature that make a group (>= 2).
    min_card_share: in (0, 1]: share of the same-signature siblings that must be cards.
    max_card_words: a card's words at most (``TextBlock`` counts).
    min_link_words / min_link_density: its headline link: a block of at least that many words, at least that
    link density (linked words / words, in [0, 1]).
    min_description_words: its unlinked words at least (the description beside the headline; 0: any).
    skip_card_pages: change nothing where the main container (:func:`~newsclean.transforms.refine.region.main_container`)
    is itself inside a card of a group: the page's content is the cards (an archive, a list of abstracts).
    drop_below: in (0, 1]: only kept blocks below this content probability are dropped (1.0: any).
    max_drop_share: in [0, 1]: the step changes nothing where it would drop more than this share of the kept words.

    Raises ValueError for values outside these ranges.
    """

    min_cards: int = 3
    min_card_share: float = 0.67
    max_card_words: int = 120
    min_link_words: int = 2
    min_link_density: float = 0.5
    min_description_words: int = 0
    drop_below: float = 1.0
    max_drop_share: float = 0.5
    skip_card_pages: bool = False

    def __post_init__(self) -> None:
        if self.min_cards < 2 or self.max_card_words < 1 or self.min_link_words < 1:
            raise ValueError("min_cards must be >= 2, max_card_words and min_link_words >= 1")
        for name in ("min_card_share", "drop_below"):
            if not 0.0 < getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be in (0, 1], got {getattr(self, name)!r}")
        if not 0.0 <= self.max_drop_share <= 1.0:
            raise ValueError(f"max_drop_share must be in [0, 1], got {self.max_drop_share!r}")

    def __call__(self, blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool],
                 ctx: PageContext) -> list[bool]:
        """The step (:class:`~newsclean.transforms.refine.RefineStep`): :func:`teaser_cards_keep`."""
        return teaser_cards_keep(blocks, probs, keep, self)


def element_words(blocks: Sequence[TextBlock], min_link_words: int = 2,
                  min_link_density: float = 0.5) -> dict[etree._Element, tuple[int, int, int]]:
    """Per element holding a block: ``(words, link blocks, linked words)`` of the blocks under it (itself and its
    descendants' containers): their ``TextBlock.num_words``, how many of them are links (at least
    ``min_link_words`` words, link density at least ``min_link_density``), and their ``num_linked_words``.

    Several steps ask for one page's (the teaser cards, the page type, the roles): the answer is kept for the page
    (:func:`~newsclean.transforms.refine.region.page_memo`; shared: read it, do not change it). The compiled
    kernel counts where :func:`newsclean.transforms.kernel.enabled` holds."""
    return _page_element_words(blocks, min_link_words, min_link_density)


def element_counts(blocks: Sequence[TextBlock], min_link_words: int = 2,
                   min_link_density: float = 0.5) -> dict[etree._Element, tuple[int, int, int]]:
    """:func:`element_words` counted afresh (not kept: for a list of blocks of one step's own, e.g. the kept ones),
    by the compiled kernel where :func:`newsclean.transforms.kernel.enabled` holds."""
    return _element_words(blocks, min_link_words, min_link_density)


_page_element_words = page_memo(element_counts)


@kernel.twin("element_words", adapt=lambda counts, blocks, *link: counts(list(blocks), *link))
def _element_words(blocks: Sequence[TextBlock], min_link_words: int,
                   min_link_density: float) -> dict[etree._Element, tuple[int, int, int]]:
    held: dict[etree._Element, tuple[int, int, int]] = {}
    for b in blocks:
        if not b.num_words:
            continue
        link = int(b.num_words >= min_link_words and b.link_density >= min_link_density)
        el = b.container
        while el is not None:
            w, links, linked = held.get(el, (0, 0, 0))
            held[el] = (w + b.num_words, links + link, linked + b.num_linked_words)
            el = el.getparent()
    return held


class CardGroups:
    """Which elements are cards of a card group (:class:`TeaserCardsParams`), each parent's siblings judged once."""

    def __init__(self, held: dict[etree._Element, tuple[int, int]], params: TeaserCardsParams):
        self.held, self.params = held, params
        self._groups: dict[etree._Element, dict[tuple[str, str], bool]] = {}

    def is_card(self, el: etree._Element) -> bool:
        """Whether ``el`` is a card: a :data:`CARD_TAGS` element holding at most ``max_card_words`` words (and some),
        a link block, and ``min_description_words`` words outside links (a comment or an element holding no
        block's words is none)."""
        counts = self.held.get(el)
        if counts is None:
            return False
        words, links, linked = counts
        return (0 < words <= self.params.max_card_words and links > 0
                and words - linked >= self.params.min_description_words and el.tag in CARD_TAGS)

    def __call__(self, el: etree._Element) -> bool:
        """Whether ``el`` is a card among at least ``min_cards`` same-signature sibling cards."""
        if not self.is_card(el):
            return False
        parent = el.getparent()
        if parent is None:
            return False
        groups = self._groups.get(parent)
        if groups is None:
            groups = self._groups[parent] = self._judge(parent)
        return groups.get(tag_class_signature(el), False)

    def _judge(self, parent: etree._Element) -> dict[tuple[str, str], bool]:
        """Per signature (:func:`~newsclean.transforms.dom.tag_class_signature`) of ``parent``'s children
        holding words: whether at least ``min_cards`` of them, and ``min_card_share`` of them, are cards (empty when
        fewer than ``min_cards`` children are cards: no signature has enough)."""
        if sum(map(self.is_card, parent)) < self.params.min_cards:
            return {}
        tally: dict[tuple[str, str], tuple[int, int]] = {}
        for child in parent:
            if child in self.held:
                sig = tag_class_signature(child)
                same, cards = tally.get(sig, (0, 0))
                tally[sig] = (same + 1, cards + self.is_card(child))
        return {sig: cards >= self.params.min_cards and cards >= self.params.min_card_share * same
                for sig, (same, cards) in tally.items()}


def in_card_groups(blocks: Sequence[TextBlock], nodes: Sequence[etree._Element | None], params: TeaserCardsParams,
                   stop: Container[etree._Element] = ()) -> list[bool]:
    """Per node (None: False), whether it or one of its ancestors below the first element of ``stop`` is a card of a
    card group (:class:`CardGroups` over the :func:`element_words` of ``blocks`` with ``params``' link settings:
    :func:`~newsclean.transforms.dom.under_any`). The compiled kernel walks where
    :func:`newsclean.transforms.kernel.enabled` holds."""
    return _card_flags(blocks, nodes, params, stop)


@kernel.twin("card_flags", adapt=lambda flags, blocks, nodes, *settings: flags(list(blocks), list(nodes), *settings))
def _card_flags(blocks: Sequence[TextBlock], nodes: Sequence[etree._Element | None], params: TeaserCardsParams,
                stop: Container[etree._Element]) -> list[bool]:
    """:func:`in_card_groups` with its ``stop`` given."""
    groups = CardGroups(element_words(blocks, params.min_link_words, params.min_link_density), params)
    return under_any(nodes, groups, stop=stop)


def teaser_cards_keep(blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool],
                      params: TeaserCardsParams = TeaserCardsParams()) -> list[bool]:
    """``keep`` with the kept blocks inside repeated teaser cards (module docstring) below ``params.drop_below``
    dropped; unchanged when that would drop more than ``params.max_drop_share`` of the kept words or every kept
    block. ``probs``: content probabilities in [0, 1], one per block."""
    region = main_region(blocks, keep)
    if not region:
        return list(keep)
    stop = shared_elements(region)
    candidates = [k and p < params.drop_below for p, k in zip(probs, keep)]
    if not any(candidates):
        return list(keep)
    if params.skip_card_pages:
        main = main_container(blocks, keep)
        if main is not None and in_card_groups(blocks, [main], params)[0]:
            return list(keep)
    carded = in_card_groups(blocks, [b.container if c else None for b, c in zip(blocks, candidates)], params, stop)
    out = [k and not c for k, c in zip(keep, carded)]
    kept = sum(b.num_words for b, k in zip(blocks, keep) if k)
    dropped = sum(b.num_words for b, k, o in zip(blocks, keep, out) if k and not o)
    if dropped > params.max_drop_share * kept or dropped >= kept:
        return list(keep)
    return out
