"""Per-site evidence: what the neighbour pages of one (site, category) tell about each of its pages.

One bundle, :class:`SiteEvidence`, learnt once per (site, category) from a bounded sample of neighbour pages by
one function, :func:`learn_site_evidence`, and reused for every page of that group (the pipeline ships it to the
workers as a small side input). It holds

* the static-noise signature (StaDyNoT, Barua et al. 2014 §3.1: :mod:`newsclean.transforms.static_noise`), which
  the chain marks and removes, and
* the site profile (:mod:`newsclean.transforms.site_profile`: where the site puts its articles, which block
  structures and texts recur), which the classifier's features and the page-level steps read.

Each neighbour page is parsed once for both (a runner that extracts the same pages may hand over the trees it
parsed: learning only reads them); a page that fails to parse is left out, and near-identical pages count once
(:func:`~newsclean.transforms.static_noise.distinct_indices`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from lxml import etree

from newsclean.transforms.parse import parse_html
from newsclean.transforms.site_profile import SiteProfile, SiteProfileParams, learn_site_profile, summarise_page
from newsclean.transforms.static_noise import (
    StaticNoiseParams,
    StaticNoiseSignature,
    distinct_indices,
    page_keys,
    signature_from_key_sets,
)


@dataclass(frozen=True)
class SiteEvidence:
    """What one (site, category)'s neighbour pages show: ``static``, the static-noise signature (StaDyNoT §3.1),
    and ``profile``, the site profile (None: fewer than two distinct neighbour pages, or not learnt).
    Small (8 bytes a static key, a few KB of profile) and picklable. Its truth value is whether any static
    noise was learnt (that of ``static``)."""

    static: StaticNoiseSignature = field(default_factory=StaticNoiseSignature)
    profile: SiteProfile | None = None

    def __bool__(self) -> bool:
        return bool(self.static)

    @property
    def pages(self) -> int:
        """Distinct neighbour pages learnt from."""
        return self.static.pages


def learn_site_evidence(htmls: Iterable[str | etree._Element], static: StaticNoiseParams = StaticNoiseParams(),
                        profile: SiteProfileParams | None = SiteProfileParams()) -> SiteEvidence:
    """The :class:`SiteEvidence` of a neighbour sample: decoded HTML pages of one site and category, each parsed
    once (:func:`~newsclean.transforms.parse.parse_html`), or trees that function already parsed (read, not
    changed: a runner that extracts the same pages afterwards hands them over instead of parsing twice);
    ``static`` and ``profile`` parameterise the two parts (``profile`` None: no profile learnt).

    Pages that fail to parse are skipped (they do not count as neighbours); near-identical pages count once.
    Never raises for a page's content.
    """
    pages = []
    for html in htmls:
        try:
            root = html if isinstance(html, etree._Element) else parse_html(html)
            pages.append((page_keys(root), summarise_page(root) if profile is not None else None))
        except Exception:  # noqa: BLE001 - a broken neighbour must not stop learning
            continue
    kept = distinct_indices([keys for keys, _ in pages])
    signature = signature_from_key_sets([pages[i][0] for i in kept], static)
    if profile is None:
        return SiteEvidence(signature)
    return SiteEvidence(signature, learn_site_profile([pages[i][1] for i in kept], profile))


def pages_needed(static: StaticNoiseParams | None) -> int | None:
    """Fewest neighbour pages from which :func:`learn_site_evidence` learns anything: the static-noise
    ``min_pages`` (StaDyNoT §3.1: a node is static when the neighbour pages share it, which one page cannot show;
    2 by default). A smaller sample gives evidence with no static keys and no profile (a profile needs 2 pages
    too), whatever its pages hold, so its pages need not be read or parsed. None when the static stage is off
    (``static`` None: nothing is learnt)."""
    return None if static is None else static.min_pages
