"""Listing pages in a site group: "this page is not an article" from the contrast with the site's articles (issue #17).

A section front page of a news site (CleanPortalEval's bbc.co.uk_news_04/05: "this page contains no
article") is a column of teasers, each a linked headline and a one-line standfirst. The block classifier,
trained on articles, is unsure of every block there (p 0.2-0.8, none at or above 0.8): it keeps a handful of
teasers, and any output scores 0 against the empty gold. One page alone cannot tell such a page from an
article in a layout the classifier has never seen (issue #11's recall collapse: the whole article at
p ~ 0.5). Its neighbours can: when the classifier is *sure* of an article on most pages of the same
site/category, a page of the same site with no block it is sure of, whose kept text is only short
blocks, is a different kind of page, not an article the model cannot read.

Evidence (learnt with the site vote's pass over the neighbour sample, :mod:`newsclean.transforms.site_signature`,
stored as :attr:`newsclean.transforms.site_profile.SiteVote.article_pages`): the number of neighbour
pages holding at least ``article_words`` words in blocks of content probability >= ``sure``.

Decision (:func:`listing_reason`), all of:

- the site: at least ``min_site_share`` of the neighbour pages are such articles;
- the page: no block at probability >= ``sure`` (after the site vote, when on);
- its kept text: at least ``min_teasers`` kept blocks and none of ``max_teaser_words`` words or more.

The page is then a ``not_article`` reject with the reason (the chain raises
:class:`~newsclean.transforms.errors.ExtractionError`; :func:`newsclean.transforms.learned.classify_learned`),
never an empty article. Without neighbours (fewer than two: no vote) nothing changes. Off by default
(``LearnedParams.listing`` None). Measured on leave-one-data-set-out tune pages: docs/DECISIONS.md
"Listing pages". Not from a paper: a project rule; the contrast with neighbour pages is the idea of
StaDyNoT (Barua et al. 2014 §3.1) applied to the page's kind rather than to its nodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from newsclean.transforms.blocks import TextBlock, check_block_lengths
from newsclean.transforms.site_profile import SiteVote


@dataclass(frozen=True)
class ListingParams:
    """Parameters of the listing check (module docstring).

    sure: content probability in (0, 1] at which the classifier is sure of a block.
    article_words: words (:attr:`TextBlock.num_words`) in sure blocks that make a neighbour page an article.
    min_site_share: share of neighbour pages (in (0, 1]) that must be such articles.
    min_teasers: kept blocks a listing page shows at least.
    max_teaser_words: a kept block of this many words or more is a paragraph: not a listing.

    Raises:
        ValueError: a value outside these ranges.
    """

    sure: float = 0.8
    article_words: int = 50
    min_site_share: float = 0.5
    min_teasers: int = 5
    max_teaser_words: int = 30

    def __post_init__(self) -> None:
        if not 0.0 < self.sure <= 1.0:
            raise ValueError(f"sure must be in (0, 1], got {self.sure}")
        if not 0.0 < self.min_site_share <= 1.0:
            raise ValueError(f"min_site_share must be in (0, 1], got {self.min_site_share}")
        if self.article_words < 1 or self.min_teasers < 1 or self.max_teaser_words < 1:
            raise ValueError("article_words, min_teasers and max_teaser_words must be >= 1, got "
                             f"{self.article_words}, {self.min_teasers}, {self.max_teaser_words}")


def is_sure_article(blocks: Sequence[TextBlock], probs: Sequence[float], params: ListingParams = ListingParams()) -> bool:
    """Whether a (neighbour) page holds at least ``article_words`` words in blocks at probability >= ``sure``.

    Raises:
        ValueError: ``blocks`` and ``probs`` differ in length.
    """
    if len(blocks) != len(probs):
        raise ValueError(f"{len(blocks)} blocks but {len(probs)} probabilities")
    return sum(b.num_words for b, p in zip(blocks, probs) if p >= params.sure) >= params.article_words


def listing_reason(blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool], vote: SiteVote | None,
                   params: ListingParams = ListingParams()) -> str | None:
    """Why the page is a listing, not an article (module docstring), or None when it is not judged one.

    ``probs``: content probability per block in [0, 1]; ``keep``: the final keep flags; ``vote``: the site's
    evidence (None, or fewer than two neighbour pages: None returned).

    Raises:
        ValueError: ``blocks``, ``probs`` and ``keep`` differ in length.
    """
    check_block_lengths(blocks, probs, keep)
    if vote is None or vote.pages < 2 or vote.article_pages < params.min_site_share * vote.pages:
        return None
    if any(p >= params.sure for p in probs):
        return None
    kept = [b.num_words for b, k in zip(blocks, keep) if k]
    if len(kept) < params.min_teasers or max(kept) >= params.max_teaser_words:
        return None
    return (f"listing page: {len(kept)} short kept blocks (longest {max(kept)} words), none at p >= {params.sure:g}, "
            f"while {vote.article_pages} of {vote.pages} neighbour pages hold a sure article")
