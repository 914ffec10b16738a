"""Page-level coherence of the learned classifier's decision: a kept fragment inside a larger run of
similar prose is a recall bug (issue #11, failure mode "recall collapse").

On modern article markup the classifier is sometimes sure of one paragraph and unsure of its
siblings (paragraphs split by inline ads and embeds into sibling containers). An article's paragraphs
share a container, or sibling containers of the same tag and class: the main text region is the
container holding most of the kept words plus its siblings of the same signature (the cluster idea of
Readability's ``grabArticle`` and of Viveros-Jiménez 2018 §4's ancestor groups, applied after the
classifier). Inside that region, a dropped block is kept again when it reads as prose (few linked
words, a sentence end, enough words) and the classifier gave it a moderate probability
(:func:`coherent_keep`; it only raises recall inside the region the classifier already chose, unless
its optional pruning is set).

:func:`body_evidence_keep` uses the page's JSON-LD/microdata ``articleBody`` (schema.org) as evidence,
not blindly: only when the page's blocks hold most of its words (it is this page's text, not a
teaser), and only against blocks the classifier is not sure of. The shipped setting drops kept
blocks the body does not contain (related links, teasers, newsletter boxes) below p 0.9.
Measured on leave-one-data-set-out tune pages: docs/DECISIONS.md, "Page-level steps" (issue #11).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from lxml import etree

from newsclean.transforms.ancestor_filter import paragraph_of
from newsclean.transforms.blocks import TextBlock, check_block_lengths
from newsclean.transforms.structure import blocks_body_support
from newsclean.transforms.text import count_words

_SENTENCE_END = re.compile(r"[.!?\u3002\uff01\uff1f\u0964](?:\s|$|[\"'\u201d\u2019)\u00bb])")


@dataclass(frozen=True)
class CoherenceParams:
    """Thresholds of :func:`coherent_keep`: a dropped block of the main region is kept when its content
    probability is at least ``min_probability`` (in [0, 1]), its link density (linked words / words)
    at most ``max_link_density``, it has at least ``min_words`` words and (``sentence_end``) a sentence end.
    ``same_signature_siblings``: the region includes the main container's siblings of the same tag and class.
    ``prune_below``: when set (in [0, 1]), a kept block outside the main container's ``scope_levels``-th
    ancestor (1: its parent) whose probability is below it is dropped (off by default: see docs)."""

    min_probability: float = 0.2
    max_link_density: float = 0.2
    min_words: int = 10
    sentence_end: bool = True
    same_signature_siblings: bool = True
    prune_below: float | None = None
    scope_levels: int = 2


def text_container(block: TextBlock) -> etree._Element:
    """The element holding the block's paragraph: the parent of :func:`~newsclean.transforms.ancestor_filter.paragraph_of`
    its container (the paragraph itself at the root)."""
    para = paragraph_of(block.container)
    parent = para.getparent()
    return para if parent is None else parent


def tag_class_signature(el: etree._Element) -> tuple[str, str]:
    """``(tag, class tokens sorted and space-joined)`` of ``el``: siblings with equal signatures are one
    repeated container (``("", ...)`` for a comment or processing instruction)."""
    return (el.tag if isinstance(el.tag, str) else "", " ".join(sorted((el.get("class") or "").split())))


def main_container(blocks: Sequence[TextBlock], keep: Sequence[bool]) -> etree._Element | None:
    """The text container (:func:`text_container`) holding most words of the kept blocks, the first in
    document order on a tie; None when no block with words is kept."""
    held: dict[etree._Element, int] = {}
    for b, k in zip(blocks, keep):
        if k and b.num_words:
            el = text_container(b)
            held[el] = held.get(el, 0) + b.num_words
    return max(held, key=held.__getitem__) if held else None  # dicts keep insertion order: first maximum


def main_region(blocks: Sequence[TextBlock], keep: Sequence[bool], same_signature_siblings: bool = True) -> set[etree._Element]:
    """The text containers (:func:`text_container`) of the main region: the one holding most kept words
    (first in document order on a tie) and, with ``same_signature_siblings``, its siblings of the same
    tag and class attribute. Empty when no block with words is kept."""
    best = main_container(blocks, keep)
    if best is None:
        return set()
    region = {best}
    parent = best.getparent()
    if same_signature_siblings and parent is not None:
        sig = tag_class_signature(best)
        region.update(el for el in parent if el is not best and tag_class_signature(el) == sig)
    return region


def is_prose(block: TextBlock, params: CoherenceParams) -> bool:
    """True when ``block`` reads as running text: at least ``min_words`` words, link density at most
    ``max_link_density``, and a sentence end (``. ! ?``, CJK and Devanagari full stops) when ``sentence_end``."""
    return (block.num_words >= params.min_words and block.link_density <= params.max_link_density
            and (not params.sentence_end or bool(_SENTENCE_END.search(block.text + " "))))


def coherent_keep(blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool],
                  params: CoherenceParams = CoherenceParams()) -> list[bool]:
    """``keep`` with the dropped prose blocks of the main region (:func:`main_region`) whose probability
    is at least ``params.min_probability`` kept too (:func:`is_prose`). Same length as ``blocks``;
    a kept block is never dropped. Raises ValueError when the three sequences differ in length."""
    check_block_lengths(blocks, probs, keep)
    region = main_region(blocks, keep, params.same_signature_siblings)
    if not region:
        return list(keep)
    out = [k or (p >= params.min_probability and text_container(b) in region and is_prose(b, params))
           for b, p, k in zip(blocks, probs, keep)]
    if params.prune_below is not None:
        scope = set(article_scope(blocks, keep, params.scope_levels).iter())
        out = [k and (p >= params.prune_below or b.container in scope) for b, p, k in zip(blocks, probs, out)]
    return out


def article_scope(blocks: Sequence[TextBlock], keep: Sequence[bool], levels: int = 2) -> etree._Element:
    """The ``levels``-th ancestor (1: the parent; the root at most) of the container holding most kept
    words (:func:`main_region`'s first container). Raises ValueError when no block with words is kept."""
    node = main_container(blocks, keep)
    if node is None:
        raise ValueError("no kept block with words: no article scope")
    for _ in range(levels):
        if node.getparent() is None:
            break
        node = node.getparent()
    return node


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
    article (issue #11)."""

    min_found: float = 0.6
    keep_support: float = 0.8
    keep_probability: float = 0.05
    drop_support: float = 0.1
    drop_below: float | None = None
    min_words: int = 3
    min_body_share: float = 0.5


def body_evidence_keep(blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool],
                       article_body: str | None, params: BodyEvidenceParams = BodyEvidenceParams()) -> list[bool]:
    """``keep`` revised with the page's JSON-LD/microdata ``articleBody`` as evidence (:class:`BodyEvidenceParams`),
    each block's support being :func:`newsclean.transforms.structure.body_support` (share in [0, 1] of its word
    bigrams in the body). Unchanged without a body of :data:`~newsclean.transforms.structure.MIN_BODY_WORDS` words
    or when the body is not found on the page. Raises ValueError when the sequences differ in length."""
    check_block_lengths(blocks, probs, keep)
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
