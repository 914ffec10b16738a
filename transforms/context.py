"""What the block decision and the page-level steps after it know of a page besides its text blocks.

One small base module, so that the learned classifier (:mod:`newsclean.transforms.classifier`) and the
page-level steps (:mod:`newsclean.transforms.refine`) share it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from newsclean.transforms.site_profile import SiteProfile


@dataclass(frozen=True)
class PageContext:
    """Page-level inputs of one page's block decision.

    title: the page's title (None: none); has_signature: whether static noise was learnt from neighbour pages
    (StaDyNoT §3.1; a feature of the classifier); site: the site's per-site evidence from the same neighbours
    (:class:`~newsclean.transforms.site_profile.SiteProfile`; None: none); article_body: the page's
    JSON-LD/microdata ``articleBody`` (``Metadata.article_body``; None: none); html: the decoded page itself,
    no feature: only the peer rescue (:mod:`newsclean.transforms.refine.peer_rescue`) reads it; page_types: what the
    page says it is (``Metadata.page_types``: ``og:type``, JSON-LD/microdata ``@type``), no feature.
    """

    title: str | None = None
    has_signature: bool = False
    site: SiteProfile | None = None
    article_body: str | None = None
    html: str | None = field(default=None, repr=False, compare=False)
    page_types: tuple[str, ...] = ()
