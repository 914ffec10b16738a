"""Never empty when the page says where its article is.

The block classifier and the steps after it sometimes keep nothing of a page that plainly holds an article: a page
of ~3,300 blocks whose consent region (:mod:`~newsclean.transforms.refine.consent`) outscored the body paragraphs,
the ``articleBody`` check then rightly dropping the wrong picks. When the kept blocks hold at most
``max_kept_words`` words, :func:`article_fallback_keep` selects the blocks that match the page's strongest
evidence of its article, first found first used:

1. the JSON-LD/microdata ``articleBody``, when the page's blocks hold at least ``min_found`` of its words (it is
   this page's text): every block with at least ``min_words`` words and a bigram support
   (:func:`~newsclean.transforms.structure.body_support`) of at least ``min_support``;
2. (``markup``) the element marked as the article body (an ``itemprop``/``property`` ``articleBody``, or an
   article-body class/id name, :data:`~newsclean.transforms.vocab.BODY_NAME`) holding the most words of
   prose (:func:`~newsclean.transforms.refine.region.is_prose`): its prose blocks.

Blocks inside consent regions (:func:`~newsclean.transforms.refine.consent.consent_regions` under ``consent``, the
settings of the chain's consent step: :class:`~newsclean.transforms.chain.ChainConfig` refuses a chain whose two
differ) are never selected. Pages without such evidence stay empty (a section front, an
error page: the ``no_content`` reject is right for them); the peer rescue
(:mod:`~newsclean.transforms.refine.peer_rescue`) may still act on a page that declares an article.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lxml import etree

from newsclean.transforms.context import PageContext
from newsclean.transforms.refine.consent import ConsentParams, consent_regions
from newsclean.transforms.refine.region import is_prose
from newsclean.transforms.structure import FOUND_SUPPORT, article_marks, blocks_body_support
from newsclean.transforms.types import TextBlock


@dataclass(frozen=True)
class ArticleFallbackParams:
    """Settings of :func:`article_fallback_keep` (module docstring).

    max_kept_words: the step acts when the kept blocks hold at most this many words (``TextBlock.num_words``).
    min_found: in [0, 1]: the ``articleBody`` is used when the blocks with support >= 0.5 hold this share of its words.
    min_support: in [0, 1]: a block's bigram support in the body for it to be selected.
    min_words: selected blocks have at least this many words.
    markup: whether the marked article-body element is the second source.
    consent: the consent regions whose blocks are never selected (the chain's consent step's settings).
    """

    max_kept_words: int = 0
    min_found: float = 0.6
    min_support: float = FOUND_SUPPORT
    min_words: int = 3
    markup: bool = True
    consent: ConsentParams = ConsentParams()

    def __call__(self, blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool],
                 ctx: PageContext) -> list[bool]:
        """The step (:class:`~newsclean.transforms.refine.RefineStep`): :func:`article_fallback_keep` with the
        page's ``articleBody``."""
        return article_fallback_keep(blocks, keep, ctx.article_body, self)


def body_marked_prose(blocks: Sequence[TextBlock], allowed: Sequence[bool]) -> list[bool]:
    """Per block, whether it is prose (10 words, a sentence end, link density <= 0.3) inside the article-body
    element (``articleBody`` property or body class name) that holds the most prose words among the ``allowed``
    blocks; all False when no marked element holds prose."""
    prose = [a and is_prose(b, 10, 0.3) for b, a in zip(blocks, allowed)]
    held: dict[etree._Element, int] = {}
    for b, p in zip(blocks, prose):
        if p:
            for el in (b.container, *b.container.iterancestors()):
                _, body_prop, body_name = article_marks(el)
                if body_prop or body_name:
                    held[el] = held.get(el, 0) + b.num_words
    if not held:
        return [False] * len(blocks)
    best = max(held, key=held.__getitem__)
    return [p and (b.container is best or any(a is best for a in b.container.iterancestors()))
            for b, p in zip(blocks, prose)]


def article_fallback_keep(blocks: Sequence[TextBlock], keep: Sequence[bool], article_body: str | None,
                          params: ArticleFallbackParams = ArticleFallbackParams()) -> list[bool]:
    """``keep``, or where it holds at most ``params.max_kept_words`` words, the blocks the page's article evidence
    selects (module docstring) added to it. One flag per block."""
    if sum(b.num_words for b, k in zip(blocks, keep) if k) > params.max_kept_words or not blocks:
        return list(keep)
    allowed = [not c for c in consent_regions(blocks, params.consent)]
    body = blocks_body_support(blocks, article_body)
    chosen = [False] * len(blocks)
    if body is not None and body.found >= params.min_found * body.body_words:
        chosen = [a and s >= params.min_support and b.num_words >= params.min_words
                  for b, s, a in zip(blocks, body.support, allowed)]
    if not any(chosen) and params.markup:
        chosen = body_marked_prose(blocks, allowed)
    return [k or c for k, c in zip(keep, chosen)]
