"""Page-level coherence of the learned classifier's decision: a kept fragment inside a larger run of
similar prose is a recall bug (the "recall collapse" on modern article markup).

On modern article markup the classifier is sometimes sure of one paragraph and unsure of its
siblings (paragraphs split by inline ads and embeds into sibling containers). An article's paragraphs
share a container, or sibling containers of the same tag and class: the main region
(:func:`~newsclean.transforms.refine.region.main_region`). Inside it, a dropped block is kept again when it
reads as prose (few linked words, a sentence end, enough words) and the classifier gave it a moderate
probability (:func:`coherent_keep`; it only raises recall inside the region the classifier already chose).
Where the split is into containers of other kinds, a dropped prose block with kept blocks close on both sides is
kept (:func:`module_split_keep`, inline-module splits). Measured on leave-one-data-set-out tune pages:
docs/DECISIONS.md, "Coherence".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from newsclean.transforms.context import PageContext
from newsclean.transforms.refine.region import is_prose, main_region, text_containers
from newsclean.transforms.types import TextBlock


@dataclass(frozen=True)
class CoherenceParams:
    """Thresholds of :func:`coherent_keep`: a dropped block of the main region is kept when its content
    probability is at least ``min_probability`` (in [0, 1]), its link density (linked words / words)
    at most ``max_link_density``, it has at least ``min_words`` words and (``sentence_end``) a sentence end.
    ``same_signature_siblings``: the region includes the main container's siblings of the same tag and class."""

    min_probability: float = 0.2
    max_link_density: float = 0.2
    min_words: int = 10
    sentence_end: bool = True
    same_signature_siblings: bool = True

    def __call__(self, blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool],
                 ctx: PageContext) -> list[bool]:
        """The step (:class:`~newsclean.transforms.refine.RefineStep`): :func:`coherent_keep`."""
        return coherent_keep(blocks, probs, keep, self)


def coherent_keep(blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool],
                  params: CoherenceParams = CoherenceParams()) -> list[bool]:
    """``keep`` with the dropped prose blocks of the main region (:func:`~newsclean.transforms.refine.region.main_region`)
    whose probability is at least ``params.min_probability`` kept too
    (:func:`~newsclean.transforms.refine.region.is_prose`). One flag per block; a kept block is never dropped."""
    region = main_region(blocks, keep, params.same_signature_siblings)
    if not region:
        return list(keep)
    return [k or (p >= params.min_probability and el in region
                  and is_prose(b, params.min_words, params.max_link_density, params.sentence_end))
            for b, p, k, el in zip(blocks, probs, keep, text_containers(blocks))]


@dataclass(frozen=True)
class ModuleSplitParams:
    """Thresholds of :func:`module_split_keep` (inline-module splits): a dropped block is kept when the nearest
    kept blocks before and after it are each at most ``max_gap`` blocks away (counted in blocks, so a block right
    next to a kept one is 1 away), its content probability is at least ``min_probability`` (in [0, 1]) and it reads
    as prose (:func:`~newsclean.transforms.refine.region.is_prose` with ``min_words``, ``max_link_density`` in
    [0, 1] and ``sentence_end``, as :class:`CoherenceParams`). Chosen on leave-one-data-set-out tune pages:
    docs/DECISIONS.md, "Coherence"."""

    max_gap: int = 2
    min_probability: float = 0.1
    max_link_density: float = 0.2
    min_words: int = 10
    sentence_end: bool = True

    def __call__(self, blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool],
                 ctx: PageContext) -> list[bool]:
        """The step (:class:`~newsclean.transforms.refine.RefineStep`): :func:`module_split_keep`."""
        return module_split_keep(blocks, probs, keep, self)


def _nearest_kept(blocks: Sequence[TextBlock], keep: Sequence[bool], order: range) -> list[int | None]:
    """For each block (by index), the index of the last kept block with words met before it when walking
    ``order``; None where there is none."""
    nearest: list[int | None] = [None] * len(blocks)
    last = None
    for i in order:
        nearest[i] = last
        if keep[i] and blocks[i].num_words:
            last = i
    return nearest


def module_split_keep(blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool],
                      params: ModuleSplitParams = ModuleSplitParams()) -> list[bool]:
    """``keep`` with the dropped prose blocks that lie between two kept blocks, each at most ``params.max_gap``
    blocks away, kept too: a paragraph an inline module (a teaser, an ad slot, a related-articles box) split off the
    kept run, which the classifier judged with its neighbour module. One flag per block; a kept block is never
    dropped."""
    before = _nearest_kept(blocks, keep, range(len(blocks)))
    after = _nearest_kept(blocks, keep, range(len(blocks) - 1, -1, -1))
    return [k or (b_ is not None and a_ is not None and i - b_ <= params.max_gap and a_ - i <= params.max_gap
                  and p >= params.min_probability
                  and is_prose(b, params.min_words, params.max_link_density, params.sentence_end))
            for i, (b, p, k, b_, a_) in enumerate(zip(blocks, probs, keep, before, after))]
