"""Page-level steps after the block classifier: each revises the keep flags of one page's text blocks.

The learned classifier (:mod:`newsclean.transforms.classifier`) decides per block; these steps look at the page
as a whole (where its article region lies, what the site's neighbour pages share, what the JSON-LD
``articleBody`` says) and revise that decision. A chain configuration lists its steps in order
(``ChainConfig.refine``, :data:`newsclean.transforms.chain.DEFAULT_CONFIG`); :func:`refine_keep` runs them one
after the other. Every step has the one signature of :class:`RefineStep`, and no step calls another.

The shipped order: :mod:`~newsclean.transforms.refine.coherence` (dropped prose of the main container),
:mod:`~newsclean.transforms.refine.region_recall` (dropped prose of the article region, twice),
:mod:`~newsclean.transforms.refine.body_evidence` (the ``articleBody`` as evidence),
:mod:`~newsclean.transforms.refine.site_check` (the site's content container),
:mod:`~newsclean.transforms.refine.side_content` (related, share and teaser boxes),
:mod:`~newsclean.transforms.refine.recurring` (short texts that recur on the site),
:mod:`~newsclean.transforms.refine.peer_rescue` (trafilatura's vote on a collapsed page). What the steps share
(the main region, prose, class tokens) is in :mod:`~newsclean.transforms.refine.region`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from newsclean.transforms.blocks import TextBlock
from newsclean.transforms.context import PageContext


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
