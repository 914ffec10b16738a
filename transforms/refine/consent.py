"""Consent and cookie regions: a cookie banner, a privacy modal, a vendor list is never the article.

Since the GDPR (2018) news pages carry a consent manager in their HTML: a body-level overlay with long privacy
prose and, in the IAB TCF managers, a list of hundreds of vendors, each with a purpose text and a privacy-policy
link. Its prose has sentence ends and few links, so the block classifier, which never saw one in its 2005-2013
training pages, keeps it, and on pages of ~3,000 blocks it can outweigh the body. A *consent region*
(:func:`consent_regions`) is recognised by words and structure, never by a site list:

* words: a class/id token (:func:`~newsclean.transforms.dom.class_tokens`, trailing digits left out:
  ``qc-cmp2``) in :data:`CONSENT_WORDS` (``cookie``, ``consent``, ``gdpr``, ``cmp``, ...) on the element;
* structure: a dialog (``role="dialog"``/``"alertdialog"`` or ``aria-modal="true"``) within ``max_depth`` levels
  of ``<body>`` (a body-level overlay), whose text has a privacy word (:data:`PRIVACY_TEXT`).

An element holding the page's first ``<h1>``, an ``<article>``/``<main>`` element, and ``<body>``/``<html>`` are
never consent regions. :func:`consent_keep` drops every kept block inside one, whatever its probability (the later
steps, the ``articleBody`` evidence and the empty-page fallback, then find the article). Nothing of it is
recognised on the 2005-2013 shared sets; the unit tests hold the shapes.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from lxml import etree

from newsclean.transforms.ancestor_filter import under_any_named
from newsclean.transforms.context import PageContext
from newsclean.transforms.dom import hinted_class_tokens, word_hint
from newsclean.transforms.types import TextBlock

CONSENT_WORDS = ("cookie", "cookies", "consent", "gdpr", "cmp", "onetrust", "didomi", "truste", "usercentrics",
                 "cookiebot", "quantcast", "privacymanager", "cookiebanner", "cookienotice", "sp_message")
"""Class/id tokens of consent managers and cookie banners (the IAB TCF ``cmp``, the names the common managers give
their root elements)."""

PROSE_CHECKED_WORDS = frozenset({"cmp"})
"""Tokens of :data:`CONSENT_WORDS` that name a consent region only when its text has a privacy word
(:data:`PRIVACY_TEXT`): Adobe Experience Manager's core components prefix every component with ``cmp-``
(``cmp-text``, ``cmp-container``), so on such pages the article itself carries the token (two wcxb-dev articles
lost every block to it)."""

PRIVACY_TEXT = re.compile(
    r"cookie|consent|privacy|gdpr|datenschutz|einwilligung|confidentialit|consentement|privacidad|"
    r"consentimiento|privacy|riservatezza|prywatno|zgod", re.I)
"""Words of privacy prose (en, de, fr, es/pt, it, pl stems) that make a body-level dialog a consent region."""

DIALOG_ROLES = ("dialog", "alertdialog")
_DIGITS = "0123456789"


@dataclass(frozen=True)
class ConsentParams:
    """Settings of :func:`consent_keep`.

    words: class/id tokens of a consent region (lowercase). dialogs: whether body-level dialogs with privacy
    prose count too. max_depth: a dialog counts when at most this many levels below ``<body>`` (1: a child).
    """

    words: tuple[str, ...] = CONSENT_WORDS
    dialogs: bool = True
    max_depth: int = 3

    def __call__(self, blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool],
                 ctx: PageContext) -> list[bool]:
        """The step (:class:`~newsclean.transforms.refine.RefineStep`): :func:`consent_keep`."""
        return consent_keep(blocks, keep, self)


@functools.cache
def _word_set(words: tuple[str, ...]) -> frozenset[str]:
    return frozenset(words)


def _depth_below_body(el: etree._Element) -> int | None:
    depth = 0
    for node in el.iterancestors():
        depth += 1
        if node.tag == "body":
            return depth
    return None


def is_consent_region(el: etree._Element, params: ConsentParams = ConsentParams()) -> bool:
    """Whether ``el`` is a consent region by words or structure (module docstring); elements holding an ``<h1>``,
    ``<article>``/``<main>`` elements and ``<body>``/``<html>`` never are."""
    if not isinstance(el.tag, str) or el.tag in ("body", "html", "article", "main"):
        return False
    tokens = hinted_class_tokens(el, word_hint(params.words))
    matched = _word_set(params.words).intersection(t.rstrip(_DIGITS) for t in tokens) if tokens else frozenset()
    named = bool(matched - PROSE_CHECKED_WORDS) or (bool(matched) and _has_privacy_prose(el))
    if not named and params.dialogs:
        role = (el.get("role") or "").strip().lower()
        if role in DIALOG_ROLES or (el.get("aria-modal") or "").strip().lower() == "true":
            depth = _depth_below_body(el)
            named = depth is not None and depth <= params.max_depth and _has_privacy_prose(el)
    return named and next(el.iter("h1"), None) is None


def _has_privacy_prose(el: etree._Element) -> bool:
    """Whether the first 5,000 characters of ``el``'s text hold a privacy word (:data:`PRIVACY_TEXT`)."""
    return bool(PRIVACY_TEXT.search(" ".join(el.itertext())[:5000]))


def consent_regions(blocks: Sequence[TextBlock], params: ConsentParams = ConsentParams()) -> list[bool]:
    """Per block, whether its container lies in a consent region (:func:`is_consent_region`)."""
    return under_any_named([b.container for b in blocks], lambda el: is_consent_region(el, params),
                           attributes=DIALOG_ATTRIBUTES, class_words=params.words)


DIALOG_ATTRIBUTES = ("role", "aria-modal")
"""The attributes without which no element is a consent dialog; a consent region by words needs one of the words in
its class or id (:func:`is_consent_region` reads nothing else)."""


def consent_keep(blocks: Sequence[TextBlock], keep: Sequence[bool], params: ConsentParams = ConsentParams()) -> list[bool]:
    """``keep`` with every kept block inside a consent region dropped. One flag per block."""
    if not any(keep):
        return list(keep)
    inside = consent_regions([b for b, k in zip(blocks, keep) if k], params)
    it = iter(inside)
    return [k and not next(it) for k in keep]
