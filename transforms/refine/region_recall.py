"""Recall of the article's region beyond the classifier's main container (the "recall collapse": on sites no
model saw, the classifier keeps one fragment of an article and drops the rest at moderate probability).

:mod:`newsclean.transforms.refine.coherence` rescues dropped prose only in the container holding most kept words
and its siblings of the same tag and class. Modern article markup splits one article further: paragraphs sit in
sibling *wrappers* of the same structure (``div.story-text`` in each ``div.container__row``, split by inline ads,
embeds and pull quotes), under an ``<article>``, an ``itemprop="articleBody"`` element or a body class
(``article-body``, ``entry-content``). The *article region* here is, by ``scope``:

* ``"ancestor"``: every text container inside the main container's ``levels``-th ancestor, as long as that
  ancestor holds at most ``max_scope_share`` of the page's words (not the whole page);
* ``"markup"``: every text container inside the outermost ancestor-or-self of the main container marked as
  an article (``<article>``, ``<main>``, ``role=main``, ``itemprop``/``property`` ``articleBody``, or an
  article-body class/id name: :data:`newsclean.transforms.vocab.BODY_NAME`) that holds at most
  ``max_scope_share`` of the page's words (a ``div.story-text`` wrapper inside ``<article>``: the article).

The shipped default runs the step twice (:data:`REGION_RECALL_STEPS`). Inside the region a dropped block is kept
when it reads as prose (:func:`newsclean.transforms.refine.region.is_prose`) and its content probability is at
least ``min_probability``; comment threads (class/id tokens in :data:`COMMENT_WORDS`) are never rescued. With
``max_kept_share`` set the step acts only on pages where the region's kept words are less than that share of its
kept plus candidate words: a page whose kept text is a fragment of the prose around it is re-examined, a page
whose article was kept whole is left alone. The same container rule as Readability's ``grabArticle`` (sibling
paragraphs of the top candidate join it) and Viveros-Jiménez 2018 §4's ancestor groups, applied after a learned
classifier. Measured on leave-one-data-set-out tune pages in docs/DECISIONS.md, "Article region recall".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lxml import etree

from newsclean.transforms.ancestor_filter import under_element
from newsclean.transforms.context import PageContext
from newsclean.transforms.dom import class_tokens, nth_ancestor
from newsclean.transforms.refine.region import is_prose, main_container, text_containers
from newsclean.transforms.structure import article_marks
from newsclean.transforms.types import TextBlock

SCOPES = ("ancestor", "markup")

COMMENT_WORDS = ("comment", "comments", "reply", "respond", "disqus")
"""Class/id tokens of comment threads, whose paragraphs repeat the article's structure: never rescued."""


@dataclass(frozen=True)
class RegionRecallParams:
    """Settings of :func:`region_recall_keep`. ``scope``: one of :data:`SCOPES` (module docstring);
    ``levels``: ancestors up to the scope element (``"ancestor"``); ``max_scope_share`` in [0, 1]: the scope
    element may hold at most this share of the page's block words; ``min_probability`` in [0, 1],
    ``max_link_density`` (linked words / words), ``min_words`` and ``sentence_end``: which dropped blocks are prose
    worth keeping (:func:`~newsclean.transforms.refine.region.is_prose`); ``max_kept_share`` in [0, 1] or None: act
    only when the kept words in the region are below this share of the kept words plus the candidates' (None:
    always); ``skip_words``: class/id tokens (:func:`~newsclean.transforms.dom.class_tokens`) that exclude
    a candidate when its container or one of its ``skip_levels`` nearest ancestors carries one (comment threads
    repeat the article's paragraph structure).
    Raises ValueError for a scope not in :data:`SCOPES` or negative ``levels``."""

    scope: str = "markup"
    levels: int = 2
    max_scope_share: float = 0.9
    min_probability: float = 0.1
    max_link_density: float = 0.2
    min_words: int = 10
    sentence_end: bool = True
    max_kept_share: float | None = None
    skip_words: tuple[str, ...] = COMMENT_WORDS
    skip_levels: int = 5

    def __post_init__(self):
        if self.scope not in SCOPES:
            raise ValueError(f"scope must be one of {SCOPES}, got {self.scope!r}")
        if self.levels < 0:
            raise ValueError(f"levels must be >= 0, got {self.levels}")

    def __call__(self, blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool],
                 ctx: PageContext) -> list[bool]:
        """The step (:class:`~newsclean.transforms.refine.RefineStep`): :func:`region_recall_keep`."""
        return region_recall_keep(blocks, probs, keep, self)


REGION_RECALL_STEPS = (
    RegionRecallParams(scope="markup"),
    RegionRecallParams(scope="ancestor", levels=2, max_kept_share=0.5),
)
"""The measured recommendation (docs/DECISIONS.md, "Article region recall"), applied in order: prose of the
outermost article-marked element around the main container, then, on pages whose kept text is less than half
of the prose around it, the prose under the main container's grandparent. Shipped in the default configuration."""


def _words_under(scope: etree._Element, blocks: Sequence[TextBlock],
                 containers: Sequence[etree._Element]) -> tuple[list[bool], int]:
    """Per block, whether its container lies under ``scope`` (or is it), and the words of those blocks.

    Decided from the containers' ancestors (:func:`~newsclean.transforms.ancestor_filter.under_element`), not from
    ``scope``'s whole subtree."""
    inside = under_element(containers, scope)
    return inside, sum(b.num_words for b, i in zip(blocks, inside) if i)


def _has_class_word(el: etree._Element, words: Sequence[str], levels: int) -> bool:
    node = el
    for _ in range(levels + 1):
        if node is None:
            return False
        if (node.get("class") or node.get("id")) and not class_tokens(node).isdisjoint(words):
            return True
        node = node.getparent()
    return False


def article_region(blocks: Sequence[TextBlock], keep: Sequence[bool], params: RegionRecallParams) -> list[bool]:
    """Per block, True when its text container (:func:`~newsclean.transforms.refine.region.text_container`) lies in
    the article region of ``params.scope`` around the main container (:func:`~newsclean.transforms.refine.region.main_container`).
    All False when no block with words is kept or the scope has no element of allowed size."""
    main = main_container(blocks, keep)
    if main is None:
        return [False] * len(blocks)
    if params.scope == "ancestor":
        scopes = [nth_ancestor(main, params.levels)]
    else:  # markup: the marked elements around the main container, outermost first (the first of allowed size)
        scopes = [n for n in reversed((main, *main.iterancestors())) if isinstance(n.tag, str) and any(article_marks(n))]
    limit = params.max_scope_share * sum(b.num_words for b in blocks)
    containers = text_containers(blocks) if scopes else []
    for node in scopes:
        inside, held = _words_under(node, blocks, containers)
        if held <= limit:
            return inside
    return [False] * len(blocks)


def region_recall_keep(blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool],
                       params: RegionRecallParams = RegionRecallParams()) -> list[bool]:
    """``keep`` with the dropped prose blocks of the article region (:func:`article_region`) whose probability
    is at least ``params.min_probability`` kept too; with ``params.max_kept_share`` only when the region's kept
    words are below that share of its prose words. Never drops a block. One flag per block."""
    region = article_region(blocks, keep, params)
    if not any(region):
        return list(keep)
    candidates = [r and not k and p >= params.min_probability
                  and is_prose(b, params.min_words, params.max_link_density, params.sentence_end)
                  and not (params.skip_words and _has_class_word(b.container, params.skip_words, params.skip_levels))
                  for b, p, k, r in zip(blocks, probs, keep, region)]
    if params.max_kept_share is not None:
        kept = sum(b.num_words for b, k, r in zip(blocks, keep, region) if k and r)
        prose_words = kept + sum(b.num_words for b, c in zip(blocks, candidates) if c)
        if kept >= params.max_kept_share * prose_words:
            return list(keep)
    return [k or c for k, c in zip(keep, candidates)]
