"""Article metadata read from the page before cleaning, from well-kept libraries.

What a news corpus row carries besides its text (the fields of trafilatura's metadata, news-please
and CC-News): title, authors, publication and modification time, description, lead image,
canonical URL, site name, section, tags and the declared language. Sources, best first:

1. Structured data read with extruct (https://github.com/scrapinghub/extruct): JSON-LD items of
   an article type (``NewsArticle``, ``Article``, ``BlogPosting``, ..., also inside ``@graph``;
   schema.org properties ``headline``, ``author``, ``datePublished``, ``dateModified``,
   ``description``, ``image``, ``articleSection``, ``keywords``, ``publisher``, ``url``,
   ``isAccessibleForFree`` also in ``hasPart``: :func:`accessible_for_free`), then
   schema.org microdata of an article type, then OpenGraph (ogp.me: ``og:*``, ``article:*``).
2. Plain ``<meta name=...>`` tags (``author``, ``description``, ``keywords``, Dublin Core, ...),
   ``<link rel=canonical>``, ``<title>`` / ``<h1>``, ``<html lang>``.

Dates: an ISO 8601 value of the structured data keeps its time and zone (``datetime.fromisoformat``;
a value without zone is taken as UTC); otherwise the publication date comes from htmldate
(Barbaresi 2020, JOSS 5(51) 2439: ``original_date=True``, no extensive search), at day precision
(midnight UTC). Every date must lie in :data:`MIN_DATE` .. now + 1 day, else it is dropped. No
field is ever filled from today's date (dateutil's default-filling turned "2019" into 2019-<today>).

Language (:func:`identify_language`): py3langid 0.4 (Lui & Baldwin 2012, "langid.py", ACL demo; its retrained
model, which ships inside the wheel, has the 140 labels of :func:`language_labels`) on the cleaned article text,
with its normalised probability; the
declared ``<html lang>`` / ``content-language`` / ``og:locale`` is kept apart as
``declared_language`` and only when it looks like a BCP 47 tag (never a charset name).

Registered domain (:func:`registered_domain`): tldextract with the Public Suffix List snapshot
bundled in its wheel (``suffix_list_urls=()``: no network, no cache directory).

Nothing here raises on bad markup: an unreadable value is None (or an empty tuple).
"""

from __future__ import annotations

import codecs
import functools
import html
import logging
import re
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from urllib.parse import urljoin, urlsplit

from lxml import etree

from newsclean.transforms import kernel
from newsclean.transforms.text import collapse_ws

log = logging.getLogger(__name__)

#: Earliest plausible publication or modification time of a web news page.
MIN_DATE = datetime(1995, 1, 1, tzinfo=UTC)
#: Longest author name, description and tag kept, in characters; most authors and tags kept per page.
MAX_NAME_CHARS, MAX_DESCRIPTION_CHARS, MAX_ITEMS = 120, 2000, 20
MAX_BODY_CHARS = 100_000  # articleBody kept as evidence for the structure features
#: Characters of article text given to the language identifier (langid.py is linear in its input).
LANGID_CHARS = 3000

#: schema.org types read as the page's article (https://schema.org/Article and its subtypes seen on news sites).
ARTICLE_TYPES = frozenset({
    "article", "newsarticle", "reportagenewsarticle", "analysisnewsarticle", "opinionnewsarticle",
    "reviewnewsarticle", "backgroundnewsarticle", "blogposting", "liveblogposting", "socialmediaposting",
    "scholarlyarticle", "techarticle", "report", "webpage",
})



def declares_article(page_types: Iterable[str]) -> bool:
    """Whether ``page_types`` (:attr:`Metadata.page_types`, lowercased) declare an article: ``og:type`` ``article``
    or a schema.org Article type (:data:`ARTICLE_TYPES` but ``webpage``)."""
    return any(t in ARTICLE_TYPES and t != "webpage" for t in page_types)


_TITLE_META = ("og:title", "twitter:title", "dc.title", "title", "headline")
_AUTHOR_META = ("author", "article:author", "dc.creator", "dcterms.creator", "parsely-author", "sailthru.author",
                "byl", "byline")
_PUBLISHED_META = (
    "article:published_time", "og:published_time", "datepublished", "pubdate", "publishdate",
    "dc.date.issued", "dcterms.issued", "dcterms.created", "sailthru.date", "parsely-pub-date",
)
_MODIFIED_META = ("article:modified_time", "og:updated_time", "datemodified", "dcterms.modified", "last-modified")
_DESCRIPTION_META = ("og:description", "description", "twitter:description", "dc.description")
_IMAGE_META = ("og:image", "og:image:url", "og:image:secure_url", "twitter:image", "twitter:image:src")
_SITE_META = ("og:site_name", "application-name")
_SECTION_META = ("article:section", "parsely-section", "section")
_TAG_META = ("article:tag", "news_keywords", "keywords", "parsely-tags")

_LANG_TAG = re.compile(r"^[a-z]{2,3}(-[a-z0-9]{1,8})*$")
_BY = re.compile(r"^\s*(?:by|par|von|por|door|di)\s+", re.I)  # "By" in en, fr, de, es/pt, nl, it bylines
_AUTHOR_SPLIT = re.compile(r"\s*(?:,|;|\||\band\b|&)\s*", re.I)


@dataclass(frozen=True)
class Metadata:
    """What a page says about itself; every field may be None (tuples may be empty).

    Attributes:
        title: headline. published_at / modified_at: aware UTC datetimes in the plausible range.
        language: the *declared* language (BCP 47 tag, lowercased, ``_`` -> ``-``), not identified.
        authors: author names in page order, without "By ". description: summary (<= 2,000 characters).
        image_url / canonical_url: as written in the page (may be relative: see :func:`absolute_url`).
        site_name: publication name. section: the site's section of the article. tags: keywords.
        article_body: the JSON-LD/microdata ``articleBody`` text (<= 100,000 characters; evidence for
            :mod:`newsclean.transforms.structure`, not output).
        headline: the title as readers see it: :attr:`title` without the site name a ``<title>`` adds
            ("... - Los Angeles Times", "... | TechCrunch"; :func:`reader_title`).
        page_title: the raw ``<title>`` text (whitespace collapsed), None without one.
        page_types: what the page says it is: ``og:type`` values and the ``@type`` names of its JSON-LD and
            microdata objects, lowercased, in page order without repeats (``("article", "newsarticle")``).
        is_accessible_for_free: the schema.org ``isAccessibleForFree`` of the article (False: behind a paywall,
            in whole or in part); None when the page does not say (:func:`accessible_for_free`).
    """

    title: str | None = None
    published_at: datetime | None = None
    language: str | None = None
    authors: tuple[str, ...] = ()
    description: str | None = None
    image_url: str | None = None
    canonical_url: str | None = None
    site_name: str | None = None
    modified_at: datetime | None = None
    section: str | None = None
    tags: tuple[str, ...] = ()
    article_body: str | None = field(default=None, repr=False)
    headline: str | None = None
    page_title: str | None = None
    page_types: tuple[str, ...] = ()
    is_accessible_for_free: bool | None = None

    @property
    def declared_language(self) -> str | None:
        """The language the page declares (same as :attr:`language`)."""
        return self.language


# ------------------------------------------------------------------------------------ libraries


@functools.cache
def _extractors():
    """extruct's JSON-LD, microdata and OpenGraph extractors (imported once: extruct pulls in rdflib)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from extruct.jsonld import JsonLdExtractor
        from extruct.opengraph import OpenGraphExtractor
        from extruct.w3cmicrodata import MicrodataExtractor
    return JsonLdExtractor(), MicrodataExtractor(), OpenGraphExtractor()


@functools.cache
def _language_identifier():
    """py3langid's identifier with probabilities normalised to [0, 1] (model loaded once per process)."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


@functools.cache
def _domain_extractor():
    import tldextract

    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


@functools.cache
def _quiet_htmldate() -> None:
    """Silence htmldate's and dateparser's loggers (once per process: ``setLevel`` clears logging's caches), and
    the warning dateutil's parser gives, under htmldate, for a time-zone name it does not know ("PST"): htmldate
    reads the date all the same, and a worker's warnings reach the user's terminal."""
    from dateutil.parser import UnknownTimezoneWarning

    for name in ("htmldate", "htmldate.core", "htmldate.extractors", "htmldate.validators", "dateparser"):
        logging.getLogger(name).setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=UnknownTimezoneWarning)


# ------------------------------------------------------------------------------------ values


def _clean(value, limit: int = MAX_DESCRIPTION_CHARS) -> str | None:
    if isinstance(value, dict):
        value = value.get("name") or value.get("@value") or value.get("url")
    if not isinstance(value, str):
        return None
    text = collapse_ws(html.unescape(value) if "&" in value else value)
    return text[:limit] if text else None


def _first_text(value) -> str | None:
    """The longest string of a schema.org text value (a string or a list of them; None: none)."""
    texts = [v for v in _as_list(value) if isinstance(v, str)]
    return max(texts, key=len) if texts else None


def _first(*values) -> str | None:
    for v in values:
        text = _clean(v)
        if text:
            return text
    return None


def _as_list(value) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _dedupe(names: Iterable[str], limit: int = MAX_ITEMS) -> tuple[str, ...]:
    seen, out = set(), []
    for name in names:
        key = name.casefold()
        if name and key not in seen:
            seen.add(key)
            out.append(name)
    return tuple(out[:limit])


def plausible(dt: datetime | None, now: datetime | None = None) -> datetime | None:
    """``dt`` as aware UTC when it lies in [:data:`MIN_DATE`, now + 1 day], else None (naive = UTC)."""
    if dt is None:
        return None
    dt = dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)
    upper = (now or datetime.now(UTC)) + timedelta(days=1)
    return dt if MIN_DATE <= dt <= upper else None


def parse_iso_date(value: str | None) -> datetime | None:
    """An ISO 8601 date or date-time (``2024-05-01``, ``2024-05-01T10:30:00+02:00``, ``...Z``) as aware UTC.

    Only complete values parse: no part is ever filled from today (``"2019"``, ``"Tuesday"`` and
    ``"10:30"`` give None). Out of the plausible range (:func:`plausible`) gives None. Never raises.
    """
    if not isinstance(value, str):
        return None
    value = value.strip()
    if len(value) < 10 or not value[:4].isdigit():
        return None
    try:
        dt = datetime.fromisoformat(value.replace("z", "Z"))
    except ValueError:
        try:  # "2024-05-01 10:30:00 +0200" and similar: keep the date part only
            dt = datetime.fromisoformat(value[:10])
        except ValueError:
            return None
    return plausible(dt)


def htmldate_published(root: etree._Element) -> datetime | None:
    """The original publication date found by htmldate (day precision, midnight UTC), or None.

    htmldate reads JSON-LD, meta tags, ``<time>``, the URL and date patterns in the page
    (``original_date=True``: the first publication, not the last update; ``extensive_search=False``).
    It copies the tree before pruning it, so ``root`` is not changed.
    """
    from htmldate import find_date

    _quiet_htmldate()
    try:
        found = find_date(root, original_date=True, extensive_search=False, outputformat="%Y-%m-%d",
                          min_date=MIN_DATE.strftime("%Y-%m-%d"))
    except Exception as exc:  # htmldate on hostile markup: a missing date, not a lost page
        log.debug("htmldate failed: %s: %s", type(exc).__name__, exc)
        return None
    return parse_iso_date(found) if found else None


def declared_language(value: str | None) -> str | None:
    """A declared language tag normalised (``en_US`` -> ``en-us``), or None when it is not one.

    Accepted: a BCP 47-shaped tag (RFC 5646 §2.1: 2-3 letter primary subtag, then subtags of 1-8
    letters/digits). Rejected: charset names (``utf-8``, ``iso-8859-1``: anything ``codecs`` knows),
    empty values and free text.
    """
    if not value:
        return None
    tag = value.split(",")[0].split(";")[0].strip().replace("_", "-").lower()
    if not _LANG_TAG.match(tag):
        return None
    try:
        codecs.lookup(tag)
        return None  # a charset name, not a language
    except LookupError:
        return tag


def identify_language(text: str) -> tuple[str | None, float | None]:
    """``(language code, probability in [0, 1])`` of ``text`` by py3langid; ``(None, None)`` without letters.

    Reads the first :data:`LANGID_CHARS` characters. The code is one of :func:`language_labels`, so it is never a
    charset name.
    """
    sample = text[:LANGID_CHARS] if text else ""
    if not any(ch.isalpha() for ch in sample):
        return None, None
    lang, prob = _language_identifier().classify(sample)
    return str(lang), round(float(prob), 4)


def language_labels() -> frozenset[str]:
    """The codes :func:`identify_language` can return: the labels of py3langid 0.4's model, 140 of them (its README,
    "Languages"): 139 languages, 114 by their two-letter ISO 639-1 code (``en``, ``de``, ``fr``, ...) and 25 by a
    three-letter ISO 639-3 code (``ary``, ``kik``, ``yue``, ...), and ``zxx`` (ISO 639-2: no linguistic content;
    numbers, markup, identifiers). Loads the model once per process (about 1 s)."""
    return frozenset(_language_identifier().labels)


def registered_domain(url: str | None) -> str | None:
    """The registered domain of ``url`` (``https://www.bbc.co.uk/news`` -> ``bbc.co.uk``), by the bundled
    Public Suffix List; the bare host for an IP address or a name under no public suffix; None without host."""
    if not url:
        return None
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    if not host:
        return None
    parts = _domain_extractor()(host)
    top = (parts.top_domain_under_public_suffix if hasattr(parts, "top_domain_under_public_suffix")
           else parts.registered_domain)
    return (top or host).lower()


def absolute_url(base: str | None, href: str | None) -> str | None:
    """``href`` resolved against ``base`` (http(s) results only; None for ``javascript:``, ``data:``, ...)."""
    if not href:
        return None
    try:
        url = urljoin(base or "", href.strip())
    except ValueError:
        return None
    return url if url.lower().startswith(("http://", "https://")) else None


# ------------------------------------------------------------------------------------ structured data


def _iter_jsonld(items) -> Iterator[dict]:
    """Every JSON object in JSON-LD ``items`` (lists and ``@graph`` flattened)."""
    for item in _as_list(items):
        if isinstance(item, list):
            yield from _iter_jsonld(item)
        elif isinstance(item, dict):
            yield item
            if "@graph" in item:
                yield from _iter_jsonld(item["@graph"])


def _types(obj: dict) -> set[str]:
    return {str(t).rsplit("/", 1)[-1].lower() for t in _as_list(obj.get("@type") or obj.get("type"))}


def _article_object(objects: list[dict]) -> dict:
    """The first object of an article type (``WebPage`` only when no article type is present)."""
    best = {}
    for obj in objects:
        types = _types(obj)
        if types & (ARTICLE_TYPES - {"webpage"}):
            return obj
        if "webpage" in types and not best:
            best = obj
    return best


def _names(value) -> list[str]:
    """Author names of a schema.org ``author`` value: text, Person/Organization objects or lists of them."""
    names = []
    for v in _as_list(value):
        if isinstance(v, dict):
            v = v.get("name") or (v.get("properties") or {}).get("name")
            if isinstance(v, list):
                v = v[0] if v else None
        text = _clean(v, MAX_NAME_CHARS)
        if text and not text.lower().startswith(("http://", "https://")):
            names.append(_BY.sub("", text))
    return names


def _split_authors(text: str) -> list[str]:
    return [p for p in (_BY.sub("", s).strip() for s in _AUTHOR_SPLIT.split(text)) if p]


def _keywords(value) -> list[str]:
    out = []
    for v in _as_list(value):
        text = _clean(v, MAX_NAME_CHARS * 4)
        if text:
            out += [t.strip() for t in text.split(",") if t.strip()]
    return [t[:MAX_NAME_CHARS] for t in out]


def _image(value) -> str | None:
    for v in _as_list(value):
        if isinstance(v, dict):
            v = v.get("url") or v.get("contentUrl") or v.get("@id")
        if isinstance(v, str) and v.strip():
            return v.strip()
    return None


#: schema.org ``Boolean`` values of ``isAccessibleForFree`` as pages write them, case-folded: JSON ``true``/``false``
#: aside, the strings ``"True"``/``"False"``, ``"yes"``/``"no"`` and the enumeration members ``https://schema.org/True``
#: and ``https://schema.org/False`` (their last path segment).
_BOOLEAN_WORDS = {"true": True, "yes": True, "false": False, "no": False}


def _boolean(value) -> bool | None:
    """A schema.org ``Boolean`` (https://schema.org/Boolean) as written in JSON-LD or microdata; None for anything
    else (numbers, objects, other words)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _BOOLEAN_WORDS.get(value.strip().rsplit("/", 1)[-1].casefold())
    return None


def _property(obj, name: str) -> list:
    """The values of property ``name`` of a JSON-LD object or an extruct microdata item (under ``properties``)."""
    if not isinstance(obj, dict):
        return []
    return _as_list(obj.get(name, (obj.get("properties") or {}).get(name)))


def accessible_for_free(article: dict) -> bool | None:
    """Whether the article object (JSON-LD or microdata) says it can be read without paying: the schema.org
    ``isAccessibleForFree`` of the object and of the parts of its ``hasPart`` (the ``WebPageElement`` that marks the
    paywalled section in Google's "Subscription and paywalled content" markup). False when any of them says false
    (the page is paywalled at least in part), True when one says true and none false, None when none says (or only
    with values that are no Boolean: :func:`_boolean`)."""
    values = [*_property(article, "isAccessibleForFree"),
              *(v for part in _property(article, "hasPart") for v in _property(part, "isAccessibleForFree"))]
    said = {flag for flag in map(_boolean, values) if flag is not None}
    return (False not in said) if said else None


_ITEM_TYPES = etree.XPath("//@itemscope/../@itemtype")  # = //*[@itemscope]/@itemtype, a third faster in libxml2


@kernel.twin("item_types")
def item_types(root: etree._Element) -> list[str]:
    """The ``itemtype`` values of the page's microdata items (elements with ``itemscope``), in page order (the compiled
    kernel's walk where :func:`newsclean.transforms.kernel.enabled` holds; else one XPath)."""
    return _ITEM_TYPES(root)


def _has_article_item(root: etree._Element, types: list[str] | None = None) -> bool:
    """Whether any microdata item (``itemscope``) of the page declares an article type (:data:`ARTICLE_TYPES`);
    ``types``: the page's :func:`item_types` (None: read here).

    Without one, :func:`_microdata_article` of extruct's items is empty whatever they are, so extruct's
    microdata pass (which reads every item's properties) is skipped: same result, less work."""
    types = item_types(root) if types is None else types
    return any(t.rsplit("/", 1)[-1].lower() in ARTICLE_TYPES for value in types for t in value.split())


def _microdata_article(items: list[dict]) -> dict:
    """Properties of the first microdata item of an article type, flattened to JSON-LD-like keys."""
    for item in items:
        if isinstance(item, dict) and _types(item) & ARTICLE_TYPES:
            return dict(item.get("properties") or {})
    return {}


def _structured(root: etree._Element, tags: PageTags | None = None) -> tuple[dict, dict[str, list[str]], list[str]]:
    """``(article object from JSON-LD or microdata, {OpenGraph property: [values]}, the JSON-LD objects' and
    microdata items' type names, lowercased)``; empty where absent.

    ``tags``: the page's :func:`page_tags`, when OpenGraph only fills keys missing from ``tags.meta``. A pass
    of extruct that cannot add anything is then skipped: microdata without an article item
    (:func:`_has_article_item`), OpenGraph when every ``<head>`` meta with a property is already a key of
    ``tags.meta``. None: every pass runs."""
    jsonld, microdata, opengraph = _extractors()
    try:
        objects = list(_iter_jsonld(jsonld.extract_items(root)))
    except Exception as exc:  # malformed JSON that even jstyleson cannot read
        log.debug("JSON-LD unreadable: %s", exc)
        objects = []
    article = _article_object(objects)
    types = [t for o in objects for t in sorted(_types(o))]
    items = item_types(root)
    types += [t.rsplit("/", 1)[-1].lower() for value in items for t in value.split()]
    if not article and (tags is None or _has_article_item(root, items)):
        try:
            article = _microdata_article(microdata.extract_items(root, None))
        except Exception as exc:
            log.debug("microdata unreadable: %s", exc)
    publisher = next((o for o in objects if _types(o) & {"newsmediaorganization", "organization"}), {})
    if publisher and "publisher" not in article:
        article = {**article, "publisher": publisher}
    og: dict[str, list[str]] = {}
    if tags is not None and all(prop.lower() in tags.meta for prop in tags.head_properties):
        return article, og, types
    try:
        for item in opengraph.extract_items(root):
            for prop, value in item.get("properties", []):
                og.setdefault(prop.lower(), []).append(value)
    except Exception as exc:
        log.debug("OpenGraph unreadable: %s", exc)
    return article, og, types


# ------------------------------------------------------------------------------------ HTML


#: ``<h1>`` elements whose texts :func:`read_metadata` reads (the first ones, in page order) for the headline.
MAX_HEADINGS = 5


@dataclass(frozen=True)
class PageTags:
    """What one pass over a page's ``<meta>``, ``<link>``, ``<title>`` and ``<h1>`` elements finds (:func:`page_tags`).

    Attributes:
        meta: ``{lowercased name/property/itemprop/http-equiv: [content, ...]}`` of every ``<meta>`` in page
            order (stripped keys, whitespace-collapsed contents, empty ones left out).
        head_properties: the raw ``property`` of every ``<meta>`` child of a ``<head>`` that has both a
            ``property`` and a ``content`` attribute (what extruct's OpenGraph pass reads).
        canonical_url: ``href`` of the first ``<link rel=canonical>`` with a web URL (stripped), or None.
        title_element: the first ``<title>`` below the root (``root.find(".//title")``), or None.
        headings: the first :data:`MAX_HEADINGS` ``<h1>`` elements (``root.iter("h1")``), in page order.
    """

    meta: dict[str, list[str]]
    head_properties: list[str]
    canonical_url: str | None
    title_element: etree._Element | None = None
    headings: tuple[etree._Element, ...] = ()


@kernel.twin("page_tags", adapt=lambda tags, root: PageTags(*tags(root, _is_canonical, MAX_HEADINGS)))
def page_tags(root: etree._Element) -> PageTags:
    """:class:`PageTags` of the page, from one walk of the tree (the compiled kernel's where
    :func:`newsclean.transforms.kernel.enabled` holds)."""
    values: dict[str, list[str]] = {}
    head_properties: list[str] = []
    canonical = title = None
    headings: list[etree._Element] = []
    for el in root.iter("meta", "link", "title", "h1"):
        tag = el.tag
        if tag == "title":
            if title is None and el is not root:
                title = el
        elif tag == "h1":
            if len(headings) < MAX_HEADINGS:
                headings.append(el)
        elif tag == "meta":
            prop = el.get("property")
            key = (prop or el.get("name") or el.get("itemprop") or el.get("http-equiv") or "").strip().lower()
            raw = el.get("content")
            content = collapse_ws(raw)
            if key and content:
                values.setdefault(key, []).append(content)
            parent = el.getparent() if prop is not None and raw is not None else None
            if parent is not None and parent.tag == "head":
                head_properties.append(prop)
        elif canonical is None and _is_canonical(el):
            canonical = el.get("href").strip()
    return PageTags(values, head_properties, canonical, title, tuple(headings))


def _meta(meta: dict[str, list[str]], keys: Iterable[str]) -> str | None:
    for key in keys:
        if meta.get(key):
            return meta[key][0]
    return None


def find_title(root: etree._Element, meta: dict[str, list[str]], article: dict | None = None,
               tags: PageTags | None = None) -> str | None:
    """Headline: og/twitter/dc title meta, else JSON-LD ``headline``, else ``<title>``, else the first ``<h1>``
    (below ``root``); ``tags``: the page's :func:`page_tags`, whose elements spare those two searches."""
    title = _meta(meta, _TITLE_META) or _clean((article or {}).get("headline"), MAX_DESCRIPTION_CHARS)
    if title:
        return title
    if tags is None:
        elements = (root.find(path) for path in (".//title", ".//h1"))
    else:
        elements = (tags.title_element, next((h for h in tags.headings if h is not root), None))
    for el in elements:
        if el is not None:
            text = collapse_ws(el.text_content())
            if text:
                return text
    return None


_TITLE_SEPARATOR = re.compile(r"\s+(?:[|\-\u2013\u2014\u00b7\u2022\u00bb\u00ab~/]|::)\s+")
_NON_ALNUM = re.compile(r"[\W_]+")
#: A ``<title>`` part of at most this many words beside the headline is read as the site's name where nothing names
#: the site (:func:`reader_title`).
MAX_SITE_WORDS = 4


def _folded(text: str) -> str:
    return _NON_ALNUM.sub("", text.casefold())


def _names_site(part: str, site_names: Iterable[str]) -> bool:
    """Whether ``part`` of a title is the site's name: equal to, inside, or (at most about twice as long) holding
    one of ``site_names`` (a site name, the domain's labels), compared on lowercased letters and digits ("The
    Guardian" names ``guardian``; "How we designed Dropbox's ATF" does not name ``dropbox``), or abbreviated as
    domains abbreviate names ("Los Angeles Times" names ``latimes``, "The Wall Street Journal" ``wsj``)."""
    folded = _folded(part)
    short = _abbreviations(part)
    return bool(folded) and any(
        n and (n == folded or n in short
               or (len(n) >= 4 and (folded in n or (n in folded and len(folded) <= 2 * len(n) + 2))))
        for n in map(_folded, site_names))


def _abbreviations(part: str) -> set[str]:
    """How a domain abbreviates a name of two to five words: the initials of every word, or of all but the last
    word followed by it (``Los Angeles Times`` -> ``lat``, ``latimes``), a leading "The" left out."""
    words = [_folded(w) for w in part.split()]
    words = [w for w in words if w]
    if words and words[0] == "the":
        words = words[1:]
    if not 2 <= len(words) <= 5:
        return set()
    initials = "".join(w[0] for w in words)
    return {initials, initials[:-1] + words[-1]}


def reader_title(title: str | None, site_names: Iterable[str] = (), headings: Iterable[str] = (),
                 guess_site: bool = False) -> str | None:
    """``title`` as readers see it on the page: without the site name a ``<title>`` adds before or after the
    headline (separated by `` | ``, `` - ``, `` – ``, `` — ``, `` · ``, `` » ``, `` :: ``, ...).

    ``site_names``: what names the site (``og:site_name``, the publisher, the registered domain's labels);
    ``headings``: the page's ``<h1>`` texts. In order: a heading equal (letters and digits, case-folded) to the
    title's parts without their first or last ones is the headline; else the leading and trailing parts that name
    the site (:func:`_names_site`) are cut; else (``guess_site``, off by default: it cut real subtitles, 168
    against 171 of trafilatura-eval's 210 gold titles right), when no part names the site, one last part of at
    most :data:`MAX_SITE_WORDS` words is cut when the rest is longer. A title with no separator, or made of site names
    only, is returned as it is. None for None."""
    if not title:
        return title
    parts = _TITLE_SEPARATOR.split(title)
    if len(parts) < 2:
        return title
    heads = {_folded(h) for h in headings if h}
    for i, j in ((0, len(parts) - 1), (1, len(parts)), (0, len(parts) - 2), (2, len(parts))):
        if 0 <= i < j <= len(parts) and (i, j) != (0, len(parts)):
            candidate = _join_parts(title, parts, i, j)
            if _folded(candidate) in heads:
                return candidate
    names = [n for n in site_names if n]
    i, j = 0, len(parts)
    while j - i > 1 and _names_site(parts[j - 1], names):
        j -= 1
    while j - i > 1 and _names_site(parts[i], names):
        i += 1
    if guess_site and (i, j) == (0, len(parts)) and not any(_names_site(p, names) for p in parts):
        last, rest = len(parts[-1].split()), len(" ".join(parts[:-1]).split())
        if last <= MAX_SITE_WORDS and rest > last:
            j -= 1
    return _join_parts(title, parts, i, j)


def _join_parts(title: str, parts: list[str], i: int, j: int) -> str:
    """The text of ``title`` from its ``i``-th to before its ``j``-th part, with the separators between them as
    written."""
    starts, pos = [], 0
    for part in parts:
        pos = title.index(part, pos)
        starts.append(pos)
        pos += len(part)
    return title[starts[i]:starts[j - 1] + len(parts[j - 1])].strip()


def find_language(root: etree._Element, meta: dict[str, list[str]]) -> str | None:
    """Declared language: ``<html lang>``, else ``content-language`` / ``og:locale`` meta (see :func:`declared_language`)."""
    for value in (root.get("lang"), root.get("{http://www.w3.org/XML/1998/namespace}lang"), root.get("xml:lang"),
                  _meta(meta, ("content-language", "og:locale"))):
        tag = declared_language(value)
        if tag:
            return tag
    return None


def _web_url(value: str | None) -> str | None:
    """``value`` when it is an http(s) URL, protocol-relative or a relative path (not ``javascript:``, ``data:``)."""
    value = (value or "").strip()
    scheme = re.match(r"^([a-z][a-z0-9+.-]*):", value, re.I)
    return value if value and (not scheme or scheme.group(1).lower() in ("http", "https")) else None


def _is_canonical(link: etree._Element) -> bool:
    return "canonical" in (link.get("rel") or "").lower().split() and bool(_web_url(link.get("href")))


def _published(article: dict, meta: dict[str, list[str]], root: etree._Element) -> datetime | None:
    for value in (*_as_list(article.get("datePublished")), *_as_list(article.get("dateCreated")),
                  *(v for k in _PUBLISHED_META for v in meta.get(k, []))):
        dt = parse_iso_date(value)
        if dt:
            return dt
    return htmldate_published(root)


def _modified(article: dict, meta: dict[str, list[str]]) -> datetime | None:
    for value in (*_as_list(article.get("dateModified")), *(v for k in _MODIFIED_META for v in meta.get(k, []))):
        dt = parse_iso_date(value)
        if dt:
            return dt
    return None


_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
          r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_DATE_WORD = re.compile(
    rf"\b(?:{_MONTH}\.?\s+\d|\d{{1,2}}\.?\s+{_MONTH}\b|{_MONTH}\.?\s*$|(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|"
    r"(?:mon|tue|wed|thu|fri|sat|sun)\b\.?|(?:last\s+)?(?:updated|published|posted|modified)\b)", re.I)
#: Words that make a byline part a job title or a page control, not a name ("Times Staff Writer", "View Profile").
_NOT_NAME_WORDS = frozenset({
    "writer", "staff", "editor", "editors", "correspondent", "reporter", "director", "manager", "scientist", "founder",
    "contributor", "columnist", "producer", "broadcaster", "journalist", "analyst", "president", "ceo", "view",
    "profile", "copyright", "authors", "author", "forum", "admin", "administrator", "email", "follow", "share",
    "comments", "more", "contact", "subscribe", "account", "logged", "login", "sign", "news",
})
_HANDLE = re.compile(r"@\w+")
#: Longest author name kept, in words (a byline box often holds a sentence: "is a reporter covering ...") and in
#: characters (a sentence without spaces, in a script that writes none, is no name either).
MAX_NAME_WORDS, MAX_NAME_LENGTH = 5, 40


def clean_author_names(names: Iterable[str]) -> tuple[str, ...]:
    """Author names as a reader would write them: "By"/"Von"/"Par" and social handles removed, date words
    ("Updated", "March 5", "Tuesday") dropped with what follows them, and digits with what follows them; at most
    :data:`MAX_NAME_WORDS` words, :data:`MAX_NAME_LENGTH` characters and at least two letters each; no job title or page control
    (:data:`_NOT_NAME_WORDS`: "Times Staff Writer", "View Profile"); repeats (case-folded) removed, in order."""
    out = []
    for name in names:
        name = _HANDLE.sub("", _BY.sub("", name))
        date = _DATE_WORD.search(name)
        name = collapse_ws(re.sub(r"\d.*$", "", name[:date.start()] if date else name)).strip(" -–—|,;:.·@")
        words = name.split()
        if sum(ch.isalpha() for ch in name) >= 2 and len(words) <= MAX_NAME_WORDS and len(name) <= MAX_NAME_LENGTH and \
                _NOT_NAME_WORDS.isdisjoint(w.casefold().strip(".,") for w in words):
            out.append(name[:MAX_NAME_CHARS])
    return _dedupe(out)


def _authors(article: dict, meta: dict[str, list[str]]) -> tuple[str, ...]:
    """Authors from structured data, else author meta tags; cleaned by :func:`clean_author_names` (the page's
    visible byline is read after the block decision, near the article: :mod:`newsclean.transforms.byline`)."""
    names = _names(article.get("author")) or _names(article.get("creator"))
    if not names:
        for key in _AUTHOR_META:
            for value in meta.get(key, []):
                if not value.lower().startswith(("http://", "https://")):
                    names += _split_authors(value)
            if names:
                break
    return clean_author_names(n[:MAX_NAME_CHARS] for n in names)


def read_metadata(root: etree._Element) -> Metadata:
    """Read :class:`Metadata` from a parsed page (call before any node is removed; ``root`` is not changed)."""
    page = page_tags(root)
    meta = page.meta
    article, og, types = _structured(root, page)
    for prop, values in og.items():  # OpenGraph lives in <head>; page.meta already holds it, og keeps order
        meta.setdefault(prop, values)
    publisher = article.get("publisher")
    tags = _keywords(article.get("keywords")) or [t for k in _TAG_META for t in _keywords(meta.get(k))]
    title = find_title(root, meta, article, page)
    site_name = _first(_meta(meta, ("og:site_name",)), publisher, _meta(meta, _SITE_META[1:]))
    canonical = page.canonical_url or _web_url(_meta(meta, ("og:url",))) or _web_url(_clean(article.get("url")))
    page_title = _page_title(page.title_element)
    return Metadata(
        title=title,
        published_at=_published(article, meta, root),
        language=find_language(root, meta),
        authors=_authors(article, meta),
        description=_first(article.get("description"), _meta(meta, _DESCRIPTION_META)),
        image_url=_web_url(_image(article.get("image"))) or _web_url(_meta(meta, _IMAGE_META)),
        canonical_url=canonical,
        site_name=site_name,
        modified_at=_modified(article, meta),
        section=_first(*_as_list(article.get("articleSection")), _meta(meta, _SECTION_META)),
        tags=_dedupe(tags),
        article_body=_clean(_first_text(article.get("articleBody")), MAX_BODY_CHARS),
        headline=reader_title(title, (site_name or "", *_domain_labels(canonical)), _headings(page.headings)),
        page_title=page_title,
        page_types=_dedupe((*(t.lower() for t in meta.get("og:type", ())), *types)),
        is_accessible_for_free=accessible_for_free(article),
    )


def _page_title(el: etree._Element | None) -> str | None:
    """The text of the page's ``<title>`` element (:attr:`PageTags.title_element`), whitespace collapsed; None
    without one or without text."""
    return (collapse_ws(el.text_content()) or None) if el is not None else None


def _headings(headings: Iterable[etree._Element]) -> list[str]:
    """The texts of the page's first ``<h1>`` elements (:attr:`PageTags.headings`), whitespace collapsed."""
    return [collapse_ws(h.text_content()) for h in headings]


def _domain_labels(url: str | None) -> tuple[str, ...]:
    """The labels of ``url``'s host left of its public suffix, ``www`` left out (``https://www.latimes.com/x`` ->
    ``("latimes",)``); empty without a host. The bundled Public Suffix List (:func:`registered_domain`)."""
    domain = registered_domain(url)
    if not domain:
        return ()
    parts = _domain_extractor()(domain)
    return tuple(p for p in (parts.domain,) if p and p != "www")
