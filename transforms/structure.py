"""Structural priors of article markup as block features (the ``structure`` group of
:mod:`newsclean.transforms.features`).

Pages since ~2011 say where their article is: HTML5 sectioning (``<article>``, ``<main>``; WHATWG
HTML §4.3.2, §4.4.14), the ARIA ``main`` landmark (``role="main"``, WAI-ARIA 1.1 §5.3.3), schema.org
microdata or RDFa ``articleBody`` (https://schema.org/articleBody), class/id names of the article
body (``article-body``, ``entry-content``, ``story-body``, ...: the names Readability's and
trafilatura's body XPaths look for), and a JSON-LD ``NewsArticle`` whose ``articleBody`` holds the
article's text (read once with extruct in :mod:`newsclean.transforms.metadata`, passed in through
:class:`~newsclean.transforms.features.PageContext`). The 2005–2013 training pages seldom carry
these, so they enter as evidence for the classifier, next to how much of the page the marked
container holds (an ``<article>`` around the whole page says little), never as a hard rule.

Features per block (all floats; see :data:`STRUCTURE_FEATURE_NAMES`):

- ``in_article_container``: 1 inside ``<article>``, ``<main>``, ``[role=main]`` or ``[itemprop/property=articleBody]``;
- ``in_article_body_prop``: 1 inside an element whose ``itemprop`` or ``property`` names ``articleBody``;
- ``body_class_id``: 1 when an ancestor-or-self's class or id is an article-body name (:data:`BODY_NAME`);
- ``container_word_share``: share in [0, 1] of the page's words inside the block's nearest such
  container or body-named element (0 outside one);
- ``page_has_container``: 1 when any block of the page lies in one;
- ``ld_body_share``: share in [0, 1] of the block's word bigrams (a one-word block: its word) that occur
  in the page's ``articleBody`` text, lowercased (0 without one);
- ``ld_body_present``: 1 when the page has an ``articleBody`` of at least :data:`MIN_BODY_WORDS` words;
- ``ld_body_coverage``: the ``articleBody``'s words over the page's block words, capped at 1 (a teaser
  ``articleBody`` covers little of a long article; 0 without one).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from lxml import etree

from newsclean.transforms.blocks import TextBlock

STRUCTURE_FEATURE_NAMES = (
    "in_article_container", "in_article_body_prop", "body_class_id", "container_word_share",
    "page_has_container", "ld_body_share", "ld_body_present", "ld_body_coverage",
)

ARTICLE_TAGS = frozenset({"article", "main"})
BODY_NAME = re.compile(
    r"(?:^|[\s_-])(?:article|story|entry|post|news|blog|td-post|single|main)[_-]?(?:body|content|text|copy)(?:$|[\s_-])"
    r"|articlebody|article__body|story__body|body[_-]?text|bodytext|post__content|rich[_-]?text"
    r"|field-name-body|field--name-body|itemprop-articlebody|c-entry-content|zn-body",
)
"""Class/id names of article bodies (lowercased ``class`` and ``id`` joined by a space)."""
MIN_BODY_WORDS = 20
_WORD = re.compile(r"\w+")


def article_marks(el: etree._Element) -> tuple[bool, bool, bool]:
    """(article container, articleBody property, body class/id name) of ``el`` itself."""
    tag = el.tag if isinstance(el.tag, str) else ""
    prop = f"{el.get('itemprop') or ''} {el.get('property') or ''}".lower()
    body_prop = "articlebody" in prop
    container = tag in ARTICLE_TAGS or (el.get("role") or "").lower() == "main" or body_prop
    names = f"{el.get('class') or ''} {el.get('id') or ''}".lower()
    return container, body_prop, bool(names.strip()) and bool(BODY_NAME.search(names))


class _PathMarks:
    """Per element, the structural marks of it and its ancestors, and the nearest marked element
    (computed once per element from its parent's: linear in the tree)."""

    def __init__(self):
        self._memo: dict[etree._Element, tuple[bool, bool, bool, etree._Element | None]] = {}

    def of(self, el: etree._Element) -> tuple[bool, bool, bool, etree._Element | None]:
        chain = []
        node = el
        while node is not None and node not in self._memo:
            chain.append(node)
            node = node.getparent()
        state = self._memo[node] if node is not None else (False, False, False, None)
        for node in reversed(chain):
            container, body_prop, body_name = article_marks(node)
            nearest = node if (container or body_name) else state[3]
            state = (state[0] or container, state[1] or body_prop, state[2] or body_name, nearest)
            self._memo[node] = state
        return state


def _lower_words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _bigrams(ws: Sequence[str]) -> set[tuple[str, str]]:
    return set(zip(ws, ws[1:]))


def body_support(block_text: str, body_words: Sequence[str], body_bigrams: set[tuple[str, str]]) -> float:
    """Share in [0, 1] of ``block_text``'s word bigrams found in ``body_bigrams`` (a one-word block:
    1.0 when the word is in ``body_words``; 0.0 for a block without words). Words: ``\\w+`` runs, lowercased."""
    ws = _lower_words(block_text)
    if len(ws) == 1:
        return float(ws[0] in body_words)
    pairs = list(zip(ws, ws[1:]))
    return sum(p in body_bigrams for p in pairs) / len(pairs) if pairs else 0.0


def body_words_and_bigrams(article_body: str | None) -> tuple[list[str], set[tuple[str, str]]]:
    """The lowercased ``\\w+`` words of ``article_body`` (None: none) and their bigrams."""
    ws = _lower_words(article_body or "")
    return ws, _bigrams(ws)


#: :func:`body_support` at or above which a block's words count as found in the ``articleBody``.
FOUND_SUPPORT = 0.5


class BodySupport(NamedTuple):
    """The ``articleBody`` against a page's text blocks: ``support``, per block its :func:`body_support` (in
    [0, 1]); ``found``, the words (:attr:`TextBlock.num_words`) of the blocks with support >= :data:`FOUND_SUPPORT`;
    ``body_words``, the body's ``\\w+`` words."""

    support: list[float]
    found: int
    body_words: int


def blocks_body_support(blocks: Sequence[TextBlock], article_body: str | None) -> BodySupport | None:
    """:class:`BodySupport` of ``blocks`` against ``article_body``; None when the body has fewer than
    :data:`MIN_BODY_WORDS` words (None or empty: none), too few to judge by."""
    words, pairs = body_words_and_bigrams(article_body)
    if len(words) < MIN_BODY_WORDS:
        return None
    body_set = set(words)
    support = [body_support(b.text, body_set, pairs) for b in blocks]
    return BodySupport(support, sum(b.num_words for b, s in zip(blocks, support) if s >= FOUND_SUPPORT), len(words))


def structure_features(blocks: Sequence[TextBlock], article_body: str | None = None) -> np.ndarray:
    """The :data:`STRUCTURE_FEATURE_NAMES` of ``blocks`` (one page, document order): shape
    ``(len(blocks), 8)``, float64. ``article_body``: the page's JSON-LD/microdata ``articleBody`` text
    (None or empty: the ``ld_*`` columns are 0). Linear in the blocks and the elements above them."""
    out = np.zeros((len(blocks), len(STRUCTURE_FEATURE_NAMES)))
    if not blocks:
        return out
    marks = _PathMarks()
    states = [marks.of(b.container) for b in blocks]
    page_words = sum(b.num_words for b in blocks) or 1
    held: dict[etree._Element, int] = {}
    for b, (_, _, _, nearest) in zip(blocks, states):
        if nearest is not None:
            held[nearest] = held.get(nearest, 0) + b.num_words
    totals = dict(held)  # a container's words include those of the containers nested in it
    for inner, n in held.items():
        for anc in inner.iterancestors():
            if anc in held:
                totals[anc] += n
    has_container = float(bool(held))
    body = blocks_body_support(blocks, article_body)
    coverage = min(1.0, body.body_words / page_words) if body is not None else 0.0
    for i, (container, body_prop, body_name, nearest) in enumerate(states):
        out[i] = [
            float(container), float(body_prop), float(body_name),
            totals[nearest] / page_words if nearest is not None else 0.0,
            has_container,
            body.support[i] if body is not None else 0.0,
            float(body is not None), coverage,
        ]
    return out
