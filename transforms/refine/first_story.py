"""One page, one story: a page whose HTML also holds the next stories (infinite scroll) keeps its own.

News sites with infinite scroll serve the next article (or three) in the same HTML, each in its own article
element; the block classifier rightly keeps every one of them as prose, and the page then yields two stories: the
corpus's exact dedup drops the page that really carried the second one, and the row is mislabelled. A *story* is
an outermost element marked as an article (``<article>``, an ``itemprop``/``property`` ``articleBody``, an
article-body class/id name: :func:`~newsclean.transforms.structure.article_marks`) holding at least
``min_story_words`` kept words of prose (:func:`~newsclean.transforms.refine.region.is_prose`). When the kept text
holds two or more disjoint stories, :func:`first_story_keep` keeps the page's own, and drops what was kept inside
the others: the story holding the page's title (a kept block of at least three words whose tokens are the title's,
:func:`~newsclean.transforms.refine.recurring.is_title_like`), else the one whose blocks the ``articleBody``
supports most (:func:`~newsclean.transforms.structure.blocks_body_support`). Where neither tells, nothing changes:
a blog front or a forum thread holds several posts and is the page's content (the "first story" fallback lowered
CleanEval by 0.018 on leave-one-data-set-out tune pages). Kept blocks outside every story (a headline above the
article element) stay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lxml import etree

from newsclean.transforms.context import PageContext
from newsclean.transforms.metadata import declares_article
from newsclean.transforms.refine.recurring import is_title_like
from newsclean.transforms.refine.region import is_prose
from newsclean.transforms.structure import article_marks, blocks_body_support
from newsclean.transforms.types import TextBlock


@dataclass(frozen=True)
class FirstStoryParams:
    """Settings of :func:`first_story_keep`: ``min_story_words``, the kept words of prose (``TextBlock.num_words``)
    that make a marked element a story; ``declared_only``: act only on pages that declare an article."""

    min_story_words: int = 100
    declared_only: bool = True

    def __call__(self, blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool],
                 ctx: PageContext) -> list[bool]:
        """The step (:class:`~newsclean.transforms.refine.RefineStep`): :func:`first_story_keep` with the page's
        title and ``articleBody``; with ``declared_only``, only on a page that declares one article (an
        ``articleBody``, ``og:type`` ``article`` or a schema.org Article type: ``PageContext.page_types``)."""
        if self.declared_only and not (ctx.article_body or declares_article(ctx.page_types)):
            return list(keep)
        return first_story_keep(blocks, keep, ctx.title, ctx.article_body, self)


def _is_story(node: etree._Element) -> bool:
    """Whether ``node`` is marked as an article (:func:`~newsclean.transforms.structure.article_marks`: an article
    container but ``<main>``, an ``articleBody`` property, a body class/id name); never ``body``, ``html``, ``main``."""
    if not isinstance(node.tag, str) or node.tag in ("body", "html", "main"):
        return False
    container, body_prop, body_name = article_marks(node)
    return (container and node.tag != "main") or body_prop or body_name


def _outermost_stories(containers: Sequence[etree._Element | None]) -> list[etree._Element | None]:
    """Per element (None: None), the outermost of it and its ancestors that is a story (:func:`_is_story`), None when
    none is; each element is judged once (the answers of an element's ancestors are shared by the elements below)."""
    memo: dict[etree._Element, etree._Element | None] = {}
    out = []
    for el in containers:
        path = []
        node = el
        while node is not None and node not in memo:
            path.append(node)
            node = node.getparent()
        found = memo[node] if node is not None else None
        for n in reversed(path):
            if found is None and _is_story(n):
                found = n
            memo[n] = found
        out.append(found)
    return out


def first_story_keep(blocks: Sequence[TextBlock], keep: Sequence[bool], title: str | None = None,
                     article_body: str | None = None, params: FirstStoryParams = FirstStoryParams()) -> list[bool]:
    """``keep`` with the kept blocks of every story but the page's own dropped (module docstring); unchanged when
    fewer than two stories hold ``params.min_story_words`` kept words of prose. One flag per block."""
    stories = _outermost_stories([b.container if k else None for b, k in zip(blocks, keep)])
    prose: dict[etree._Element, int] = {}
    for b, s in zip(blocks, stories):
        if s is not None and is_prose(b, 10, 0.3):
            prose[s] = prose.get(s, 0) + b.num_words
    big = [s for s, n in prose.items() if n >= params.min_story_words]
    if len(big) < 2:
        return list(keep)
    own = next((s for b, s in zip(blocks, stories) if s in big and b.num_words >= 3 and is_title_like(b.text, title)),
               None)
    if own is None and article_body:
        support = blocks_body_support(blocks, article_body)
        if support is not None:
            backed = {s: sum(b.num_words * v for b, v, t in zip(blocks, support.support, stories) if t is s)
                      for s in big}
            best = max(big, key=backed.__getitem__)
            own = best if backed[best] > 0 else None
    if own is None:
        return list(keep)
    return [k and (s is None or s is own or s not in big) for k, s in zip(keep, stories)]
