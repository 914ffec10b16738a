"""Article metadata read from the page before cleaning: title, publication time, language.

Sources, in order: Open Graph / article meta tags, then HTML (``<title>``, ``<time>``,
``<html lang>``). Dates are parsed with python-dateutil and returned as aware UTC datetimes
(a time without zone is taken as UTC); unparseable values give None, never an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from dateutil import parser as dateparser
from lxml import etree

from newsclean.transforms.text import collapse_ws

_TITLE_META = ("og:title", "twitter:title", "dc.title", "title", "headline")
_DATE_META = (
    "article:published_time", "og:published_time", "datepublished", "pubdate", "publishdate",
    "date", "dc.date.issued", "dc.date", "dcterms.created", "sailthru.date", "parsely-pub-date",
)


@dataclass(frozen=True)
class Metadata:
    """title (str), published_at (aware UTC datetime), language (BCP 47-ish tag, lowercased); each may be None."""

    title: str | None = None
    published_at: datetime | None = None
    language: str | None = None


def _meta_values(root: etree._Element) -> dict[str, str]:
    values: dict[str, str] = {}
    for m in root.iter("meta"):
        key = (m.get("property") or m.get("name") or m.get("itemprop") or m.get("http-equiv") or "").strip().lower()
        content = collapse_ws(m.get("content"))
        if key and content and key not in values:
            values[key] = content
    return values


def find_title(root: etree._Element, meta: dict[str, str]) -> str | None:
    """Headline: og/twitter/dc title meta, else ``<title>``, else the first ``<h1>``."""
    for key in _TITLE_META:
        if meta.get(key):
            return meta[key]
    for path in (".//title", ".//h1"):
        el = root.find(path)
        if el is not None:
            text = collapse_ws(el.text_content())
            if text:
                return text
    return None


def parse_date(value: str | None) -> datetime | None:
    """Parse a date string to an aware UTC datetime; None when absent or unparseable."""
    if not value:
        return None
    try:
        dt = dateparser.parse(value)
    except (ValueError, OverflowError, TypeError):
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    try:
        return dt.astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def find_published(root: etree._Element, meta: dict[str, str]) -> datetime | None:
    """Publication time from date meta tags, else the first ``<time datetime>``."""
    for key in _DATE_META:
        dt = parse_date(meta.get(key))
        if dt:
            return dt
    for t in root.iter("time"):
        dt = parse_date(t.get("datetime"))
        if dt:
            return dt
    return None


def find_language(root: etree._Element, meta: dict[str, str]) -> str | None:
    """Language from ``<html lang>``, else ``content-language`` / ``og:locale`` meta."""
    value = root.get("lang") or root.get("xml:lang") or meta.get("content-language") or meta.get("og:locale")
    if not value:
        return None
    return value.split(",")[0].strip().replace("_", "-").lower() or None


def read_metadata(root: etree._Element) -> Metadata:
    """Read :class:`Metadata` from a parsed page (call before any node is removed)."""
    meta = _meta_values(root)
    return Metadata(find_title(root, meta), find_published(root, meta), find_language(root, meta))
