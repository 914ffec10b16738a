"""Side content kept beside the article: related links, share and newsletter boxes, "read also" teasers,
date lines and photo credits that the learned classifier keeps on sites it never saw.

A page-level step after the block classifier, in the manner of the class/id weighting of Readability's
``grabArticle`` (negative class names: comment, share, related, ...) and of Dragnet's CSS-token features
(Peters & Lecocq 2013 §3), but applied only to what the classifier kept and only *off the article's main
text*: the main region is :func:`newsclean.transforms.refine.region.main_region` (the container holding most
kept words and its same-signature siblings). A kept block's *own ancestors* are the elements from its
container up to, not including, the first one that also holds the main region; a class or id on those
names only the block's own box. Wrappers around the whole article (``<div class="post comment-free">``)
hold the main region and are never read, so a class word there removes nothing.

:func:`side_content_keep` drops a kept block whose content probability is below ``drop_below`` when

* one of its own ancestors has a class/id *token* (class and id split at non-alphanumerics and camelCase
  humps, lowercased) in ``class_words`` (:data:`SIDE_CLASS_WORDS`) or a tag in ``tags`` (``<aside>``), or
* (``thread_headings``) it lies in a reader-comment thread (:func:`comment_thread_items`): the repeated items
  right after a block that reads as a comments heading ("Comments", "12 Comments", "Reader comments (3)",
  :data:`COMMENT_HEADING`), where at least half of the main region's kept words come before that heading (a
  thread follows the article; a "3 Comments" link in a byline does not), or
* (``link_density`` set) it is a short line of links (link density >= ``link_density``, at most
  ``link_max_words`` words): a "read also" teaser inside or beside the article; with ``link_label_words``
  set, only one that opens with an unlinked label of at most that many words ending in a colon
  ("Read also: <a>...</a>", "Lea también: ...", "MIRA: ...").

It never drops every kept block and, with ``max_drop_share`` set, never more than that share of the kept
words (boxes that hold most of what was kept are not side content on that page: a section named ``caption``
or ``widget`` that holds the article, a comment thread that is the page's content). Measured on
leave-one-data-set-out tune pages: docs/DECISIONS.md, "Side content".
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Container, Sequence
from dataclasses import dataclass

from lxml import etree

from newsclean.transforms.ancestor_filter import under_any_named
from newsclean.transforms.context import PageContext
from newsclean.transforms.dom import class_tokens, paragraph_of, shared_elements, tag_class_signature, under_any
from newsclean.transforms.refine.recurring import is_title_like
from newsclean.transforms.refine.region import is_prose, main_region, text_containers
from newsclean.transforms.refine.teaser_cards import element_counts
from newsclean.transforms.types import TextBlock

COMMENT_CLASS_WORDS = ("comment", "comments", "disqus", "respond", "reply", "replies")
"""Class/id tokens of a reader-comment box (WordPress ``#comments``/``#respond``, Disqus ``#disqus_thread``)."""

SIDE_CLASS_WORDS = (
    "related", "recommended", "newsletter", "subscribe", "subscription", "share", "sharing", "social", "promo",
    "cta", "callout", "popup", "modal", "ad", "ads", "advert", "advertisement", "sponsored", "disclosure",
    "widget", "sidebar", "footer", "breadcrumb", "breadcrumbs", "meta", "credit", "credits", "gallery",
) + COMMENT_CLASS_WORDS
"""Class/id tokens naming a box beside the article (Readability's negative class names, narrowed to whole
tokens so that ``header``, ``shared-content`` or ``tagdiv`` do not match ``ad``, ``share`` or ``tag``).
With the reader-comment words (:data:`COMMENT_CLASS_WORDS`): a news corpus counts comments as non-article text,
CleanEval's 2007 blog golds keep them (-0.0003 there, docs/DECISIONS.md). Left out because the data sets' gold
conventions disagree on them: ``caption`` (CleanPortalEval golds keep captions), ``byline``/``author``/``bio``
(Dragnet golds keep bylines) and ``tag`` (trafilatura-eval keeps some tag lines). ``gallery`` (a photo
gallery's captions beside the article: CNN's ``cnnArticleGalleryPhotoContainer``) is in the list; ``slideshow``
is not (Readability's expected pages keep a Yahoo slideshow's captions); docs/DECISIONS.md "Side content"."""

SIDE_TAGS = ("aside",)
"""Tags of an own ancestor that make a block side content (HTML5 ``<aside>``: content tangential to the
article). ``<figcaption>`` is left out: Readability's expected pages keep captions."""

CAPTION_CLASS_WORDS = ("caption", "captions")
"""Class/id tokens of a photo caption box (with the ``<figcaption>`` tag, :data:`CAPTION_TAGS`)."""

CAPTION_TAGS = ("figcaption",)
"""Tags of a photo caption (HTML5 ``<figcaption>``); not in the default's :data:`SIDE_TAGS`."""

BYLINE_CLASS_WORDS = ("byline", "author", "bio", "dateline", "timestamp")
"""Class/id tokens of a byline, author bio or date line box."""

ARTICLE_BODY_SIDE_CONTENT_WORDS = SIDE_CLASS_WORDS + CAPTION_CLASS_WORDS + BYLINE_CLASS_WORDS
"""The ``precision`` chain's class words (transforms/chain.py): the default's (reader comments among them), plus
the two groups whose place in an article the data sets' gold conventions disagree on (captions, bylines), for a
corpus of article bodies only. Measured per group on leave-one-data-set-out tune pages: docs/DECISIONS.md "Side
content"."""



@dataclass(frozen=True)
class SideContentParams:
    """Settings of :func:`side_content_keep`; the defaults are the measured recommendation (docs/DECISIONS.md,
    "Side content"), on in the shipped configuration.

    drop_below: only kept blocks with content probability below it are dropped, in [0, 1].
    class_words: class/id tokens of an own ancestor that mark side content (lowercase; () = none).
    tags: tags of an own ancestor that mark side content (() = none).
    max_words: only blocks of at most this many words are dropped (None = any length).
    link_density: when set, in [0, 1], a kept block with at least this link density (linked words / words)
    and at most ``link_max_words`` words is dropped too (None = off); with ``link_label_words`` set, only
    when its text opens with a label of at most that many words ending in ":" (:func:`has_label`; None: any
    short line of links).
    max_drop_share: when set, in [0, 1], the step changes nothing on a page where it would drop more than this
    share of the kept words (``TextBlock.num_words``; None = off: only the every-block guard). Off in the
    default, 0.5 in the ``precision`` chain (docs/DECISIONS.md "Side content").
    protect_title / protect_first_paragraph / protect_share: ancestors never read for a class word or tag
    (:func:`protected_ancestors`): those of the page's title block (an ``<h1>``, or a kept block whose words are
    the title's), those of the first kept paragraph of prose in the main region, and (``protect_share`` in [0, 1]) every element that
    holds more than that share of the kept words: a wrapper named ``share-btns`` around the headline and intro, a
    ``gallery-body`` around the lead paragraph, is the article's, not a side box.
    thread_headings: also drop the kept blocks of a reader-comment thread after a comments heading
    (:func:`comment_thread_items`), whatever its class names (on in the default, docs/DECISIONS.md "Side content").

    Raises ValueError for a probability, density or share outside [0, 1] or a negative word count.
    """

    drop_below: float = 0.99
    class_words: tuple[str, ...] = SIDE_CLASS_WORDS
    tags: tuple[str, ...] = SIDE_TAGS
    max_words: int | None = None
    link_density: float | None = 0.6
    link_max_words: int = 25
    link_label_words: int | None = 3
    max_drop_share: float | None = None
    protect_title: bool = False
    protect_first_paragraph: bool = False
    protect_share: float | None = None
    thread_headings: bool = True

    def __post_init__(self):
        if not 0.0 <= self.drop_below <= 1.0:
            raise ValueError(f"drop_below must be in [0, 1], got {self.drop_below!r}")
        if self.link_density is not None and not 0.0 <= self.link_density <= 1.0:
            raise ValueError(f"link_density must be in [0, 1] or None, got {self.link_density!r}")
        for name in ("max_drop_share", "protect_share"):
            value = getattr(self, name)
            if value is not None and not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in [0, 1] or None, got {value!r}")
        counts = (self.max_words, self.link_max_words, self.link_label_words)
        if any(c is not None and c < 0 for c in counts):
            raise ValueError(f"word counts must be >= 0 or None, got {counts!r}")
        if isinstance(self.class_words, str) or isinstance(self.tags, str):
            raise ValueError("class_words and tags must be sequences of strings, not one string")

    def __call__(self, blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool],
                 ctx: PageContext) -> list[bool]:
        """The step (:class:`~newsclean.transforms.refine.RefineStep`): :func:`side_content_keep` with the page's title."""
        return side_content_keep(blocks, probs, keep, self, ctx.title)


_LABEL = re.compile(r"^\W*([^:]{1,40}):\s*\S")


def has_label(text: str, max_words: int) -> bool:
    """True when ``text`` opens with a label of 1 to ``max_words`` words ending in a colon and more text
    follows ("Read also: ...", "VEA TAMBIÉN: ..."); words are whitespace-separated."""
    m = _LABEL.match(text)
    return bool(m) and 1 <= len(m.group(1).split()) <= max_words


def names_side_box(el: etree._Element, tags: Container[str], words: frozenset[str]) -> bool:
    """Whether ``el`` itself marks side content: its tag is in ``tags`` or one of its class/id tokens
    (:func:`class_tokens`) is in ``words``."""
    if isinstance(el.tag, str) and el.tag in tags:
        return True
    return bool(words) and bool(el.get("class") or el.get("id")) and not words.isdisjoint(class_tokens(el))


def protected_ancestors(blocks: Sequence[TextBlock], keep: Sequence[bool], params: SideContentParams,
                        title: str | None = None) -> set[etree._Element]:
    """The elements whose class words and tags :func:`side_content_keep` never reads (:class:`SideContentParams`
    ``protect_*``): the containers and ancestors of the title block (the first ``<h1>`` block, else the first kept
    block whose tokens are the ``title``'s, :func:`~newsclean.transforms.refine.recurring.is_title_like`), of the
    first kept block of prose in the main region (:func:`~newsclean.transforms.refine.region.main_region`) (:func:`~newsclean.transforms.refine.region.is_prose`: 10 words, a sentence end,
    link density at most 0.2), and every ancestor holding more than ``protect_share`` of the kept words."""
    anchors = []
    if params.protect_title:
        heading = _first_in_h1(blocks)
        heading = heading or next((b for b, k in zip(blocks, keep) if k and is_title_like(b.text, title)), None)
        anchors.append(heading)
    if params.protect_first_paragraph:
        region = main_region(blocks, keep)
        anchors.append(next((b for b, k, el in zip(blocks, keep, text_containers(blocks))
                             if k and el in region and is_prose(b, 10, 0.2)), None))
    out = shared_elements({b.container for b in anchors if b is not None})
    if params.protect_share is not None:
        kept = [b for b, k in zip(blocks, keep) if k]
        total = sum(b.num_words for b in kept)
        out.update(el for el, (n, _, _) in element_counts(kept).items() if n > params.protect_share * total)
    return out


def _first_in_h1(blocks: Sequence[TextBlock]) -> TextBlock | None:
    """The first block whose container is or lies in an ``<h1>`` (None: none; a page without one is not walked)."""
    if not blocks or next(blocks[0].container.getroottree().getroot().iter("h1"), None) is None:
        return None
    inside = under_any_named([b.container for b in blocks], lambda el: el.tag == "h1", tags=("h1",))
    return next((b for b, h1 in zip(blocks, inside) if h1), None)


def side_content_keep(blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool],
                      params: SideContentParams = SideContentParams(), title: str | None = None) -> list[bool]:
    """``keep`` with the kept side-content blocks (module docstring) below ``params.drop_below`` dropped.

    ``probs``: the classifier's content probabilities in [0, 1], one per block; ``title``: the page's title (for
    ``params.protect_title``; None: only an ``<h1>`` marks the title block). A dropped block is never kept; when
    the rule would drop every kept block with words, or more than ``params.max_drop_share`` of the kept words,
    ``keep`` is returned unchanged.
    """
    region = main_region(blocks, keep)
    if not region:
        return list(keep)
    shared = shared_elements(region) | protected_ancestors(blocks, keep, params, title)
    candidates = [k and p < params.drop_below and (params.max_words is None or b.num_words <= params.max_words)
                  for b, p, k in zip(blocks, probs, keep)]
    words = frozenset(params.class_words)
    nodes = [b.container if c else None for b, c in zip(blocks, candidates)]
    # a side box: the block's container or an ancestor of it below the main region's elements names one
    boxed = under_any_named(nodes, lambda el: names_side_box(el, params.tags, words), shared,
                            tags=params.tags, class_words=words)
    threads = comment_thread_items(blocks, keep, region, shared) if params.thread_headings else set()
    if threads:  # or it lies in a comment thread after a comments heading
        boxed = [box or t for box, t in zip(boxed, under_any(nodes, threads.__contains__, shared))]
    out = []
    for b, k, c, box in zip(blocks, keep, candidates, boxed):
        if c:
            k = not (_is_link_line(b, params) or box)
        out.append(k)
    if not any(k and b.num_words for b, k in zip(blocks, out)) or _drops_too_much(blocks, keep, out, params):
        return list(keep)
    return out


COMMENT_HEADING = re.compile(
    r"^\W*(?:(?:\d+\s+)?(?:reader|readers'?|user|your)?\s*(?:comments|responses|replies|kommentare|commentaires|"
    r"comentarios|comentários|commenti|reacties|komentarze|komentarzy)\s*(?:\(\d+\)|:?\s*\d+)?"
    r"|1\s+(?:comment|response|reply|kommentar|commentaire|comentario|comentário|commento|reactie|komentarz))\W*$",
    re.IGNORECASE)
"""A block's whole text when it heads a reader-comment thread: "Comments", "12 Comments", "Reader comments (3)",
"Comments: 4", "1 Comment", and the plural in German, French, Spanish, Portuguese, Italian, Dutch and Polish
(the Main Content Filter of Kohlschütter 2010 §4.3.2 drops content after a block that is solely a comments
indicator: :data:`newsclean.transforms.boilerpipe.COMMENT_INDICATORS`; here with a count). A bare singular
("Comment") is not one: it labels a table column or a button."""

THREAD_AFTER_SHARE = 0.5
"""Share of the main region's kept words (``TextBlock.num_words``) that must come before a comments heading in
document order for the items after it to be a thread (:func:`comment_thread_items`)."""

MAX_HEADING_WORDS = 4
"""Most words (``TextBlock.num_words``) of a block read as a comments heading."""

_CELL_TAGS = ("td", "th", "tr")


def comment_thread_items(blocks: Sequence[TextBlock], keep: Sequence[bool], region: Container[etree._Element],
                         shared: Container[etree._Element]) -> set[etree._Element]:
    """The elements of the page's reader-comment threads: for each block whose text matches
    :data:`COMMENT_HEADING` (at most :data:`MAX_HEADING_WORDS` words) with at least :data:`THREAD_AFTER_SHARE` of
    the kept words of the main ``region`` (its text containers) before it, and whose paragraph element
    (:func:`~newsclean.transforms.dom.paragraph_of`) holds at most :data:`MAX_HEADING_WORDS`
    whitespace-separated words (a line of its own, not a table holding a column header), the items of
    :func:`thread_after` that paragraph; never an element of ``shared`` (the main region's containers and their
    ancestors). Empty when the page has no such heading."""
    inside = [k and el in region for k, el in zip(keep, text_containers(blocks))]
    total = sum(b.num_words for b, i in zip(blocks, inside) if i)
    out: set[etree._Element] = set()
    before = 0
    for b, i in zip(blocks, inside):
        before += b.num_words if i else 0
        if (b.num_words <= MAX_HEADING_WORDS and before >= THREAD_AFTER_SHARE * total
                and COMMENT_HEADING.match(b.text.strip())):
            heading = paragraph_of(b.container)
            if len(heading.text_content().split()) <= MAX_HEADING_WORDS:
                out.update(el for el in thread_after(heading) if el not in shared)
    return out


def thread_after(heading: etree._Element) -> list[etree._Element]:
    """The repeated items after ``heading`` (the heading's paragraph element), climbing at most 2 ancestors while an
    element has no following sibling element: the following siblings of the most frequent tag and class
    (:func:`~newsclean.transforms.dom.tag_class_signature`; at least 2), else the first following sibling
    when its children repeat so (through wrappers of one child), else none. None in a table cell: a cell's label
    heads a column, not a thread."""
    el, sibs = heading, []
    for _ in range(3):
        sibs = [s for s in el.itersiblings() if isinstance(s.tag, str)]
        if sibs or el.getparent() is None:
            break
        el = el.getparent()
    if not sibs or el.tag in _CELL_TAGS:
        return []
    items = _repeated(sibs)
    if items:
        return items
    box = sibs[0]
    while len(kids := [c for c in box if isinstance(c.tag, str)]) == 1:
        box = kids[0]
    return [box] if _repeated(kids) else []


def _repeated(els: Sequence[etree._Element]) -> list[etree._Element]:
    """The elements of ``els`` with the most frequent tag-class signature (the first on a tie) when at least 2 share
    it, else []."""
    sigs = [tag_class_signature(e) for e in els]
    counts = Counter(sigs)
    best, n = max(counts.items(), key=lambda item: item[1], default=(None, 0))  # the first on a tie: insertion order
    return [e for e, sig in zip(els, sigs) if sig == best] if n >= 2 else []


def _drops_too_much(blocks: Sequence[TextBlock], keep: Sequence[bool], out: Sequence[bool],
                    params: SideContentParams) -> bool:
    """Whether ``out`` drops more than ``params.max_drop_share`` of the words ``keep`` kept."""
    if params.max_drop_share is None:
        return False
    kept = sum(b.num_words for b, k in zip(blocks, keep) if k)
    dropped = sum(b.num_words for b, k, o in zip(blocks, keep, out) if k and not o)
    return dropped > params.max_drop_share * kept


def _is_link_line(block: TextBlock, params: SideContentParams) -> bool:
    if params.link_density is None or not 0 < block.num_words <= params.link_max_words:
        return False
    if block.link_density < params.link_density:
        return False
    return params.link_label_words is None or has_label(block.text, params.link_label_words)
