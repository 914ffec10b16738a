"""What each kept text block is to a reader: body text, an image caption, or the lead (standfirst, dek, key points).

The data sets' gold conventions disagree on captions and credits (CleanPortalEval's golds and one held-out set keep
them, others drop them) and on standfirsts, so no fixed rule of what ``text`` holds suits every corpus. The chain
therefore gives them their own place: :func:`block_roles` labels the blocks, the article's ``text`` holds the body
(:data:`BODY`) and, where the configuration asks (``ChainConfig.text_includes``), captions and lead in page order;
``captions`` and ``lead`` are always there as data.

* **caption**: a block inside ``<figcaption>``, or inside a ``<figure>``, or below an element whose class/id tokens
  (:func:`~newsclean.transforms.dom.class_tokens`) name a caption or a photo credit
  (:data:`CAPTION_WORDS`) and that holds at most ``max_caption_words`` words (a section named ``caption`` around a
  whole article is not one). Kept captions, and the dropped ones inside the article's scope (the main container's
  ``scope_levels``-th ancestor: the captions of the article's own images, which the classifier often drops), are
  captions.
* **lead**: a kept block below an element whose class/id tokens name a standfirst, dek, summary or key points
  (:data:`LEAD_WORDS`) holding at most ``max_lead_words`` words; or a kept block before the article's first
  paragraph of prose whose words are the page's description (``og:description``: the standfirst most sites copy
  there), at least ``min_description_overlap`` of them.

Everything else that is kept is body. HTML5's ``<figure>``/``<figcaption>`` (WHATWG HTML §4.4.12-13) and the class
names the news templates use (the same kind of evidence as Readability's class weights).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lxml import etree

from newsclean.transforms import kernel
from newsclean.transforms.ancestor_filter import under_element
from newsclean.transforms.dom import hinted_class_tokens, nth_ancestor, word_hint
from newsclean.transforms.refine.region import is_prose, main_container, text_containers
from newsclean.transforms.refine.teaser_cards import element_words
from newsclean.transforms.text import scoring_tokens
from newsclean.transforms.types import TextBlock

BODY, CAPTION, LEAD = "body", "caption", "lead"
ROLES = (BODY, CAPTION, LEAD)
TEXT_PARTS = (CAPTION + "s", LEAD)
"""What ``ChainConfig.text_includes`` may add to the body in ``text``: ``captions``, ``lead``."""

CAPTION_WORDS = frozenset({
    "caption", "captions", "figcaption", "imagecaption", "photocaption", "mediacaption", "credit", "credits",
    "photocredit", "imagecredit", "legende", "legend", "bildunterschrift",
})
"""Class/id tokens of an image caption or photo credit box."""

LEAD_WORDS = frozenset({
    "standfirst", "dek", "deck", "subtitle", "subheadline", "subhead", "subheading", "strapline", "summary",
    "excerpt", "intro", "highlights", "keypoints", "takeaways", "chapo", "chapeau", "bajada", "entradilla",
    "sumario", "occhiello", "abstract",
})
"""Class/id tokens of a standfirst, dek, summary or key points box (en, fr ``chapo``, es ``bajada``/``entradilla``,
it ``occhiello``)."""

#: A block read as the lead for repeating the description has at least this many words (not a one-word label).
MIN_LEAD_WORDS = 5


@dataclass(frozen=True)
class RoleParams:
    """Settings of :func:`block_roles` (module docstring). Word counts are ``TextBlock.num_words``; shares in [0, 1]."""

    max_caption_words: int = 80
    max_lead_words: int = 150
    scope_levels: int = 3
    min_description_overlap: float = 0.8
    caption_words: frozenset[str] = CAPTION_WORDS
    lead_words: frozenset[str] = LEAD_WORDS


class _Boxes:
    """Memo of the nearest named box (caption or lead) of each element, and of the words under each element."""

    def __init__(self, blocks: Sequence[TextBlock], params: RoleParams):
        self.params = params
        self.blocks = blocks
        self.memo: dict[etree._Element, str | None] = {}
        self.hint_words = tuple(sorted(params.caption_words | params.lead_words))
        self.hint = word_hint(self.hint_words)

    @kernel.twin("box_roles", adapt=lambda roles, boxes, elements: roles(
        list(boxes.blocks), list(elements), boxes._own, boxes.params.max_caption_words, boxes.hint_words))
    def roles_of(self, elements: Sequence[etree._Element]) -> list[str | None]:
        """:meth:`role_of` of each element (walked by the compiled kernel where
        :func:`newsclean.transforms.kernel.enabled` holds)."""
        held = element_words(self.blocks)  # words under each element (links not read)
        return [self.role_of(el, held) for el in elements]

    def role_of(self, el: etree._Element, held: dict) -> str | None:
        """The role of the outermost of ``el`` and its ancestors that has one of its own (:meth:`_own`)."""
        path = []
        node = el
        while node is not None and node not in self.memo:
            path.append(node)
            node = node.getparent()
        role = self.memo.get(node) if node is not None else None
        for n in reversed(path):
            role = role or self._own(n, held.get(n, (0, 0, 0))[0])
            self.memo[n] = role
        return role

    def _own(self, el: etree._Element, words: int) -> str | None:
        """The role ``el`` names itself: ``words``, the words of the page's blocks under it."""
        tag = el.tag if isinstance(el.tag, str) else ""
        if tag in ("body", "html"):
            return None
        if tag in ("figcaption", "figure") and words <= self.params.max_caption_words:
            return CAPTION
        tokens = hinted_class_tokens(el, self.hint)
        if not tokens.isdisjoint(self.params.caption_words) and words <= self.params.max_caption_words:
            return CAPTION
        if not tokens.isdisjoint(self.params.lead_words) and words <= self.params.max_lead_words:
            return LEAD
        return None


def block_roles(blocks: Sequence[TextBlock], keep: Sequence[bool], description: str | None = None,
                params: RoleParams = RoleParams()) -> list[str | None]:
    """Per block, its role (:data:`BODY`, :data:`CAPTION`, :data:`LEAD`) or None for a block that is not part of
    the article (dropped, and no caption in the article's scope). ``keep``: the chain's flags; ``description``: the
    page's description (``Metadata.description``; None: none)."""
    main = main_container(blocks, keep)
    if main is None:
        return [None] * len(blocks)
    boxes = _Boxes(blocks, params)
    scope = nth_ancestor(main, params.scope_levels)
    first_prose = next((i for i, (b, k, el) in enumerate(zip(blocks, keep, text_containers(blocks)))
                        if k and el is main and is_prose(b, 10, 0.3)), len(blocks))
    wanted = set(scoring_tokens(description or ""))
    roles: list[str | None] = []
    for i, (b, k, box) in enumerate(zip(blocks, keep, boxes.roles_of([b.container for b in blocks]))):
        if box == CAPTION and (k or under_element([b.container], scope)[0]):
            roles.append(CAPTION)
        elif not k:
            roles.append(None)
        elif box == LEAD or (i < first_prose and wanted and b.num_words >= MIN_LEAD_WORDS
                             and _overlap(b.text, wanted) >= params.min_description_overlap):
            roles.append(LEAD)
        else:
            roles.append(BODY)
    return roles


def _overlap(text: str, wanted: set[str]) -> float:
    """Share in [0, 1] of ``text``'s scoring tokens that are in ``wanted`` (0 without tokens)."""
    toks = scoring_tokens(text)
    return sum(t in wanted for t in toks) / len(toks) if toks else 0.0
