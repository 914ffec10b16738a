"""The row-finishing policy: what an extraction's fields mean, decided once for ``newsclean.extract`` and the corpus.

The chain (:func:`newsclean.transforms.chain.extract_article`) keeps text blocks; :func:`finish_fields` turns what it
found into the fields a reader of one page and a user of the Parquet corpus both see, with one meaning each:

* ``language``: the language *identified* in the cleaned text (py3langid, :func:`~newsclean.transforms.metadata.identify_language`),
  ``language_score`` its probability; ``declared_language`` what the page declares (``<html lang>``,
  ``content-language``, ``og:locale``);
* ``title``: the headline as readers see it (:attr:`Metadata.headline`, else the metadata title) in Unicode NFC, else
  the title a sitemap gave (``news:title``);
* ``published_at`` / ``modified_at``: the page's dates where plausible for the fetch time (in [metadata.MIN_DATE (1995), fetch + 1 day],
  :func:`~newsclean.transforms.metadata.plausible`), else the sitemap's (``news:publication_date``, ``lastmod``; ISO
  8601 / W3C Datetime only);
* ``image_url`` / ``canonical_url``: the page's, resolved against its URL (http(s) only); ``domain``: the URL's
  registered domain (Public Suffix List);
* ``page_type``: the type the crawler recorded for the page (article, listing, other) where it recorded one of those,
  else the chain's structural verdict (:mod:`newsclean.transforms.page_type`);
* ``is_accessible_for_free``: the page's schema.org ``isAccessibleForFree`` (False: paywalled, in whole or in part;
  :func:`~newsclean.transforms.metadata.accessible_for_free`), None when the page does not say.

What is known of a page besides its HTML (its URL, fetch time, a sitemap's facts, the crawler's page type) comes in a
:class:`PageFacts`; the pipeline fills it from the WARC record, ``newsclean.extract`` from its ``url`` argument.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import NamedTuple

from newsclean.schemas.contract import PageType
from newsclean.transforms.metadata import (
    Metadata,
    absolute_url,
    identify_language,
    parse_iso_date,
    plausible,
    registered_domain,
)

__all__ = ["PageFacts", "FinishedFields", "finish_fields", "RECORDED_PAGE_TYPES"]

#: The crawler's page types a finished extraction carries (``page_type``): where the crawler recorded one of these,
#: the field says it; otherwise the chain's structural verdict.
RECORDED_PAGE_TYPES = frozenset({PageType.ARTICLE, PageType.LISTING, PageType.OTHER})


@dataclass(frozen=True)
class PageFacts:
    """What is known of a page besides its HTML; every field may be None.

    Attributes:
        url: the page's URL (resolves relative image and canonical URLs; gives the registered domain).
        fetched_at: when it was fetched (naive = UTC); the upper bound of a plausible date is one day later
            (None: now).
        title: a sitemap's ``news:title``, used where the page gives no title.
        published: a sitemap's ``news:publication_date``, ``modified``: its ``lastmod``, as written there (ISO
            8601 / W3C Datetime; anything else is ignored), used where the page gives no plausible date.
        page_type: the crawler's recorded page type (``WARC-Newsclean-Page-Type``), used when it is one of
            :data:`RECORDED_PAGE_TYPES`.
    """

    url: str | None = None
    fetched_at: datetime | None = None
    title: str | None = None
    published: str | None = None
    modified: str | None = None
    page_type: str | None = None


class FinishedFields(NamedTuple):
    """The finished fields of one extraction (the same names in :class:`~newsclean.transforms.chain.Extraction`
    and the Parquet article row; meanings in the module docstring)."""

    title: str | None
    published_at: datetime | None
    modified_at: datetime | None
    language: str | None
    language_score: float | None
    declared_language: str | None
    image_url: str | None
    canonical_url: str | None
    domain: str | None
    page_type: str
    is_accessible_for_free: bool | None


def finish_fields(text: str, meta: Metadata, page_type: str, facts: PageFacts = PageFacts()) -> FinishedFields:
    """The :class:`FinishedFields` of a page whose cleaned ``text`` (characters) and ``meta`` (what the page says of
    itself) the chain found, with the structural ``page_type`` and what ``facts`` knows of the page. Never raises
    on the values the chain and a WARC record give."""
    now = facts.fetched_at
    now = now.replace(tzinfo=UTC) if now is not None and now.tzinfo is None else now
    headline = meta.headline or meta.title
    language, score = identify_language(text)
    return FinishedFields(
        title=(unicodedata.normalize("NFC", headline) if headline else headline) or facts.title,
        published_at=plausible(meta.published_at, now=now) or plausible(parse_iso_date(facts.published), now=now),
        modified_at=plausible(meta.modified_at, now=now) or plausible(parse_iso_date(facts.modified), now=now),
        language=language, language_score=score, declared_language=meta.language,
        image_url=absolute_url(facts.url, meta.image_url), canonical_url=absolute_url(facts.url, meta.canonical_url),
        domain=registered_domain(facts.url),
        page_type=facts.page_type if facts.page_type in RECORDED_PAGE_TYPES else page_type,
        is_accessible_for_free=meta.is_accessible_for_free,
    )
