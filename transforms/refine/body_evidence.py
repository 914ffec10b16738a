"""The page's JSON-LD/microdata ``articleBody`` (schema.org) as evidence for the block decision.

Not blindly: only when the page's blocks hold most of its words (it is this page's text, not a teaser or
another article's), and only against blocks the classifier is not sure of. The shipped setting drops kept
blocks the body does not contain (related links, teasers, newsletter boxes) below p 0.9, and only when the
body is long enough against what was kept (a teaser body, the lede or description only, common in 2015-2020
JSON-LD, is found on the page but must not drop the rest of the article). Measured on leave-one-data-set-out
tune pages: docs/DECISIONS.md, "articleBody evidence".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from newsclean.transforms.context import PageContext
from newsclean.transforms.structure import blocks_body_support
from newsclean.transforms.text import count_words
from newsclean.transforms.types import TextBlock


@dataclass(frozen=True)
class BodyEvidenceParams:
    """Thresholds of :func:`body_evidence_keep`. The ``articleBody`` is trusted only when the page's blocks
    with at least half of their bigrams in it hold at least ``min_found`` of its words (in [0, 1]: the text
    is on the page, not a teaser or another article's). Then a dropped block with ``support`` >= ``keep_support``
    and probability >= ``keep_probability`` is kept, and (``drop_below`` set) a kept block of at least
    ``min_words`` words with support <= ``drop_support`` and probability < ``drop_below`` is dropped, but only
    when the body's words (:func:`~newsclean.transforms.text.count_words`, as blocks count theirs) are at least
    ``min_body_share`` (in [0, 1]; 0 = always) of the words kept before the drop: a teaser body (the lede or
    description only, common in 2015-2020 JSON-LD) is found on the page but must not drop the rest of the
    article."""

    min_found: float = 0.6
    keep_support: float = 0.8
    keep_probability: float = 0.05
    drop_support: float = 0.1
    drop_below: float | None = None
    min_words: int = 3
    min_body_share: float = 0.5

    def __call__(self, blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool],
                 ctx: PageContext) -> list[bool]:
        """The step (:class:`~newsclean.transforms.refine.RefineStep`): :func:`body_evidence_keep` with the page's body."""
        return body_evidence_keep(blocks, probs, keep, ctx.article_body, self)


def body_evidence_keep(blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool],
                       article_body: str | None, params: BodyEvidenceParams = BodyEvidenceParams()) -> list[bool]:
    """``keep`` revised with the page's JSON-LD/microdata ``articleBody`` as evidence (:class:`BodyEvidenceParams`),
    each block's support being :func:`newsclean.transforms.structure.body_support` (share in [0, 1] of its word
    bigrams in the body). Unchanged without a body of :data:`~newsclean.transforms.structure.MIN_BODY_WORDS` words
    or when the body is not found on the page. One flag per block."""
    body = blocks_body_support(blocks, article_body)
    if body is None or body.found < params.min_found * body.body_words:
        return list(keep)
    kept_words = sum(b.num_words for b, k in zip(blocks, keep) if k)  # the body in the same units: count_words
    drop = params.drop_below is not None and count_words(article_body or "") >= params.min_body_share * kept_words
    out = []
    for b, p, k, s in zip(blocks, probs, keep, body.support):
        if not k and s >= params.keep_support and p >= params.keep_probability and b.num_words >= params.min_words:
            k = True
        elif k and drop and s <= params.drop_support and p < params.drop_below and b.num_words >= params.min_words:
            k = False
        out.append(k)
    return out
