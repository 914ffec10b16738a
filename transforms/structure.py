"""Structural priors of article markup: where a page says its article is.

Pages since ~2011 say where their article is: HTML5 sectioning (``<article>``, ``<main>``; WHATWG
HTML §4.3.2, §4.4.14), the ARIA ``main`` landmark (``role="main"``, WAI-ARIA 1.1 §5.3.3), schema.org
microdata or RDFa ``articleBody`` (https://schema.org/articleBody), class/id names of the article
body (``article-body``, ``entry-content``, ``story-body``, ...: the names Readability's and
trafilatura's body XPaths look for), and a JSON-LD ``NewsArticle`` whose ``articleBody`` holds the
article's text (read once with extruct in :mod:`newsclean.transforms.metadata`). The 2005–2013 training pages
seldom carry these, so they enter the learned classifier as evidence (its ``structure`` feature group,
:func:`newsclean.transforms.classifier.features.structure_features`), next to how much of the page the marked
container holds (an ``<article>`` around the whole page says little), never as a hard rule; the page-level
steps read them too (:mod:`newsclean.transforms.refine.region_recall`, :mod:`newsclean.transforms.refine.body_evidence`).

Here: the marks of one element (:func:`article_marks`), of each element's ancestors (:class:`PathMarks`), and
the support of the page's text blocks in the ``articleBody`` (:func:`blocks_body_support`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from lxml import etree

from newsclean.transforms.types import TextBlock
from newsclean.transforms.vocab import BODY_NAME

ARTICLE_TAGS = frozenset({"article", "main"})
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


class PathMarks:
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
