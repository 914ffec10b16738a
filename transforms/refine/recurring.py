"""Recurring texts as boilerplate: a kept block whose exact text other pages of the site also hold.

The site profile already stores the digests of block texts found on two or more neighbour pages
(:class:`newsclean.transforms.site_profile.SiteProfile` evidence 3, a soft StaDyNoT: Barua et al. 2014 §3.1
need a node on *every* neighbour, with the same attributes). Copyright lines ("© 2005 The Associated
Press. All rights reserved ..."), subscription offers and archive banners recur that way, and the
classifier keeps some of them on msv-big9. Two things recur too and are content: the page's *own
headline* (its title appears in the "latest"/"related" teaser lists of the other pages) and, in
Dragnet's golds, whole recurring paragraphs (a press office's "about us" paragraph, comment guidelines)
that the annotators kept. So a kept block is dropped (:func:`recurring_text_keep`) only when:

- its text (case and whitespace folded) is held by at least ``min_support`` neighbour pages (the page
  itself counts when it is in the neighbour sample, as it is for groups of at most N pages; 3 by default:
  2 lowered dragnet by 0.0001 on leave-one-data-set-out tune pages, 3 lowers none);
- it is short (fewer than ``max_words`` words: a line, not a paragraph);
- the classifier is not sure of it (probability below ``drop_below``);
- it is not the page's title, nor a part of it, nor does it contain it (compared on scoring tokens:
  ``\\w+`` runs, lower case).

Costs no neighbour pass: the texts are in the profile the static-noise learning builds. Without a
profile (fewer than two neighbour pages) nothing changes. A step of the shipped default
(:data:`newsclean.transforms.chain.LEARNED_STEPS`). Measured on leave-one-data-set-out tune pages: docs/DECISIONS.md "Recurring texts".
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from newsclean.transforms.context import PageContext
from newsclean.transforms.site_profile import SiteProfile, text_digest
from newsclean.transforms.text import scoring_tokens
from newsclean.transforms.types import TextBlock


@dataclass(frozen=True)
class RecurringTextParams:
    """Parameters of :func:`recurring_text_keep` (module docstring).

    min_support: neighbour pages (>= 2) that must hold the block's exact text.
    max_words: blocks of this many words or more are kept whatever recurs.
    drop_below: content probability in (0, 1]; blocks at or above it are kept.

    Raises:
        ValueError: a value outside these ranges.
    """

    min_support: int = 3
    max_words: int = 30
    drop_below: float = 0.9

    def __post_init__(self) -> None:
        if self.min_support < 2:
            raise ValueError(f"min_support must be >= 2, got {self.min_support}")
        if self.max_words < 1:
            raise ValueError(f"max_words must be >= 1, got {self.max_words}")
        if not 0.0 < self.drop_below <= 1.0:
            raise ValueError(f"drop_below must be in (0, 1], got {self.drop_below}")

    def __call__(self, blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool],
                 ctx: PageContext) -> list[bool]:
        """The step (:class:`~newsclean.transforms.refine.RefineStep`): :func:`recurring_text_keep` with the page's
        title and site profile."""
        return recurring_text_keep(blocks, probs, keep, ctx.title, ctx.site, self)


def _token_line(text: str) -> str:
    return " ".join(scoring_tokens(text))


_title_line = functools.lru_cache(maxsize=16)(_token_line)  # a page's title is compared with each of its blocks


def is_title_like(text: str, title: str | None) -> bool:
    """Whether ``text``'s tokens are a run of ``title``'s or the other way round (False without a title)."""
    t = _title_line(title or "")
    if not t:
        return False
    x = _token_line(text)
    return bool(x) and (x in t or t in x)


def recurring_text_keep(blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool], title: str | None,
                        profile: SiteProfile | None, params: RecurringTextParams = RecurringTextParams()) -> list[bool]:
    """New keep flags (one per block): kept blocks whose text recurs on the site (module docstring) dropped.

    ``probs``: content probability per block in [0, 1]; ``title``: the page's title (None: none);
    ``profile``: the site's (None: flags returned unchanged, as a new list).
    """
    keep = list(keep)
    if profile is None or not profile.text_keys:
        return keep
    texts = profile.texts()  # share of the neighbour pages (quantised to 1/255) -> pages, rounded
    for i, (b, p) in enumerate(zip(blocks, probs)):
        if (keep[i] and b.num_words < params.max_words and p < params.drop_below
                and round(texts.get(text_digest(b.text), 0.0) * profile.pages) >= params.min_support
                and not is_title_like(b.text, title)):
            keep[i] = False
    return keep
