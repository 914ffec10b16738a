"""Page-level steps after the block classifier: each revises the keep flags of one page's text blocks.

The learned classifier (:mod:`newsclean.transforms.classifier`) decides per block; these steps look at the page
as a whole (where its article region lies, what the site's neighbour pages share, what the JSON-LD
``articleBody`` says) and revise that decision. A chain configuration lists its steps in order
(``ChainConfig.refine``, :data:`newsclean.transforms.chain.DEFAULT_CONFIG`); :func:`refine_keep` runs them one
after the other. Every step has the one signature of :class:`RefineStep` and reads the keep flags the steps
before it left; no step runs another, but the empty-page fallback reads the consent regions with the consent
step's settings (``ArticleFallbackParams.consent``).

The shipped order (:data:`newsclean.transforms.chain.LEARNED_STEPS`, every shipped chain with page-level steps):
:mod:`~newsclean.transforms.refine.consent` (cookie banners, privacy modals, vendor lists),
:mod:`~newsclean.transforms.refine.coherence` (dropped prose of the main container; prose between kept blocks),
:mod:`~newsclean.transforms.refine.region_recall` (dropped prose of the article region, twice),
:mod:`~newsclean.transforms.refine.body_evidence` (the ``articleBody`` as evidence),
:mod:`~newsclean.transforms.refine.site_check` (the site's content container),
:mod:`~newsclean.transforms.refine.article_lists` (a list or table after a kept block of its parent),
:mod:`~newsclean.transforms.refine.side_content` (related, share and teaser boxes),
:mod:`~newsclean.transforms.refine.recurring` (short texts that recur on the site),
:mod:`~newsclean.transforms.refine.teaser_cards` (repeated teaser cards beside the article),
:mod:`~newsclean.transforms.refine.paragraph_lines` (the lines of a ``<br>``-split paragraph take its decision),
:mod:`~newsclean.transforms.refine.first_story` (one story per page),
:mod:`~newsclean.transforms.refine.article_fallback` (where nothing was kept, the article that the ``articleBody``
or the markup declares),
:mod:`~newsclean.transforms.refine.peer_rescue` (trafilatura's vote on a collapsed page).

What the steps share is in :mod:`~newsclean.transforms.refine.region` (the main region, prose) and
:mod:`~newsclean.transforms.dom` (class tokens, tree helpers); a few helpers are read from a sibling step's module (``recurring.is_title_like``, ``teaser_cards.element_counts``,
``consent.consent_regions``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from newsclean.transforms.context import PageContext
from newsclean.transforms.types import TextBlock


class RefineStep(Protocol):
    """One page-level step: its frozen parameters, called on one page.

    ``blocks``: the page's text blocks in document order; ``probs``: the classifier's content probability of
    each, in [0, 1]; ``keep``: the keep flags so far, one per block; ``ctx``: the page's
    :class:`~newsclean.transforms.context.PageContext`. Returns new keep flags, one per block (a new list).
    """

    def __call__(self, blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool],
                 ctx: PageContext) -> list[bool]: ...


def refine_keep(blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool], ctx: PageContext,
                steps: Sequence[RefineStep]) -> list[bool]:
    """``keep`` after each of ``steps`` in turn (see :class:`RefineStep`); a new list, one flag per block.

    Raises:
        ValueError: ``blocks``, ``probs`` and ``keep`` differ in length.
    """
    if not len(blocks) == len(probs) == len(keep):
        raise ValueError(f"blocks, probs and keep differ in length: {len(blocks)}, {len(probs)}, {len(keep)}")
    keep = list(keep)
    for step in steps:
        keep = step(blocks, probs, keep, ctx)
    return keep
