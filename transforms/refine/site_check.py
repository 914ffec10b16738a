"""The site check: a page whose kept text disagrees with where the site puts its articles is re-examined.

The neighbour pages of the page's (site, category) agree on a content container (the site profile's first
piece of evidence: :class:`~newsclean.transforms.site_profile.SiteProfile`, learnt with the static-noise
signature). When this page holds that container but the classifier kept little of it, or kept mostly text
outside it, the container's blocks the classifier was not sure against are kept too. A page-level step of the
shipped default (:data:`newsclean.transforms.chain.DEFAULT_CONFIG`); without a profile (fewer than two
neighbour pages) nothing changes. Measured on leave-one-data-set-out tune pages: docs/DECISIONS.md
"Site check".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from newsclean.transforms.context import PageContext
from newsclean.transforms.site_profile import SiteProfile, content_supports
from newsclean.transforms.types import TextBlock


@dataclass(frozen=True)
class SiteCheckParams:
    """The page-level check of :func:`site_recheck`.

    min_support: share of neighbours (in (0, 1]) that must agree on the content container.
    min_cover: kept share of the container's words below which the page is re-examined.
    min_inside: share of the kept words that must lie in the container; below it the page is re-examined.
    relaxed: the threshold for the container's blocks on a re-examined page (content probability in [0, 1]).
    max_link_density: blocks above this link density are not re-admitted.
    """

    min_support: float = 0.5
    min_cover: float = 0.5
    min_inside: float = 0.5
    relaxed: float = 0.2
    max_link_density: float = 0.5

    def __call__(self, blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool],
                 ctx: PageContext) -> list[bool]:
        """The step (:class:`~newsclean.transforms.refine.RefineStep`): :func:`site_recheck` with the page's site profile."""
        return site_recheck(blocks, probs, keep, ctx.site, self)


def site_recheck(blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool], profile: SiteProfile | None,
                 params: SiteCheckParams = SiteCheckParams()) -> list[bool]:
    """Re-examine a page whose kept text disagrees with the site's content container (module docstring).

    When neighbours agree (support >= ``params.min_support``) on a content container present on this page,
    and the kept blocks cover less than ``min_cover`` of its words or less than ``min_inside`` of the
    kept words lie in it, the container's blocks with probability >= ``relaxed`` and link density <=
    ``max_link_density`` are kept too. Other pages' flags are returned unchanged (a new list).
    """
    keep = list(keep)
    if profile is None or not blocks:
        return keep
    content = {k: s for k, s in profile.content if s >= params.min_support}
    if not content:
        return keep
    inside = [support > 0 for support in content_supports(blocks, content)]
    in_words = sum(b.num_words for b, i in zip(blocks, inside) if i)
    if not in_words:
        return keep
    kept_in = sum(b.num_words for b, i, k in zip(blocks, inside, keep) if i and k)
    kept_all = sum(b.num_words for b, k in zip(blocks, keep) if k)
    if kept_in >= params.min_cover * in_words and kept_in >= params.min_inside * kept_all:
        return keep
    return [k or (i and p >= params.relaxed and b.link_density <= params.max_link_density)
            for b, p, k, i in zip(blocks, probs, keep, inside)]
