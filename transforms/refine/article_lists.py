"""Lists and tables inside the article: a dropped list or table that follows a kept block of its own parent is part
of the article.

The classifier scores list items and table cells one by one. Short and often without a sentence end, they look like
navigation, so an article's own lists (steps, features, ingredients, a timeline, a ratings table) are dropped while
the paragraph that introduces them is kept. A list (``ul``, ``ol``, ``dl``) or table is kept whole
(:func:`article_lists_keep`) when

* it holds a dropped text block (a block's structure: the nearest list or table among the block's container and
  that container's ``max_levels - 1`` nearest ancestors: an item's text, or a paragraph inside an item);
* the block just before its first block in document order is kept, and that block's container lies at most
  ``max_depth`` levels below the structure's parent element (the introducing paragraph is a sibling, or inside one);
* at most ``max_link_density`` of its words are linked (menus and link lists are not kept).

A list in another column fails the parent test. Measured on leave-one-data-set-out tune pages: docs/DECISIONS.md,
"Lists and tables".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lxml import etree

from newsclean.transforms.context import PageContext
from newsclean.transforms.types import TextBlock

STRUCTURE_TAGS = frozenset({"ul", "ol", "dl", "table"})
"""The elements whose blocks are kept or dropped together (HTML's lists and tables, WHATWG HTML §4.4, §4.9)."""


@dataclass(frozen=True)
class ArticleListsParams:
    """Thresholds of :func:`article_lists_keep`: ``tags``, the structures; ``max_levels``, how many elements from a
    block's container up are searched for its structure; ``max_depth``, how far below the structure's parent the
    kept block before it may lie, in levels; ``max_link_density``, linked words / words of the structure's blocks, in
    [0, 1]."""

    tags: frozenset[str] = STRUCTURE_TAGS
    max_levels: int = 4
    max_depth: int = 3
    max_link_density: float = 0.2

    def __call__(self, blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool],
                 ctx: PageContext) -> list[bool]:
        """The step (:class:`~newsclean.transforms.refine.RefineStep`): :func:`article_lists_keep`."""
        return article_lists_keep(blocks, keep, self)


def article_lists_keep(blocks: Sequence[TextBlock], keep: Sequence[bool],
                       params: ArticleListsParams = ArticleListsParams()) -> list[bool]:
    """``keep`` with every block of a list or table kept where the module docstring's three tests hold. One flag per
    block; a kept block is never dropped."""
    containers = [b.container for b in blocks]
    out = list(keep)
    for structure, members in _structures(containers, params).items():
        first = members[0] - 1
        if all(keep[i] for i in members) or first < 0 or not keep[first]:
            continue
        if not _below(containers[first], structure.getparent(), params.max_depth):
            continue
        words = sum(blocks[i].num_words for i in members)
        if words and sum(blocks[i].num_linked_words for i in members) <= params.max_link_density * words:
            for i in members:
                out[i] = True
    return out


def _structures(containers: Sequence[etree._Element], params: ArticleListsParams) -> dict[etree._Element, list[int]]:
    """``{list or table element: indexes of its blocks, ascending}`` (each block under its nearest structure)."""
    out: dict[etree._Element, list[int]] = {}
    for i, el in enumerate(containers):
        for _ in range(params.max_levels):
            if el is None:
                break
            if el.tag in params.tags:
                out.setdefault(el, []).append(i)
                break
            el = el.getparent()
    return out


def _below(el: etree._Element | None, ancestor: etree._Element | None, max_depth: int) -> bool:
    """Whether ``ancestor`` is among the ``max_depth`` nearest ancestors of ``el``."""
    for _ in range(max_depth):
        el = el.getparent() if el is not None else None
        if el is None:
            return False
        if el is ancestor:
            return True
    return False
