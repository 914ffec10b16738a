"""Typed records that flow between newsclean's stages and what is stored in Parquet.

Each stored record has a frozen dataclass (what the code passes around) and a pyarrow
schema (what lands on disk), with a version number in the schema metadata. A test keeps
the two field lists equal (tests/schemas/test_schemas.py). Where each record is made and read:
docs/ARCHITECTURE.md, "Data flow of a cleaning run".

Units: times are timezone-aware UTC ``datetime``; byte offsets count bytes from the start
of the (compressed) WARC file; ``word_count`` counts whitespace-separated tokens that hold
at least one letter or digit (Kohlschütter 2010 §3.3 definition of a word), each Han or Kana
character a word of its own (``newsclean.transforms.text.words``).
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

import pyarrow as pa

# Reject reasons are part of the crawl -> clean contract; re-exported here for the records that carry them.
from newsclean.schemas.contract import RejectReason as RejectReason

SCHEMA_VERSION = "4"  # 2: article metadata columns (authors ... declared_language), column descriptions, dynamic_nodes_marked
# 3: captions, lead, page_type, page_title; title without the site-name suffix; text = the body (+ --text-includes)
# 4: is_accessible_for_free
PIPELINE_VERSION = "0.1.0"

_TS = pa.timestamp("us", tz="UTC")


class Stage(str, enum.Enum):
    """Pipeline stage that produced a reject."""

    READ = "read"
    FILTER = "filter"
    DECODE = "decode"
    CLEAN = "clean"


@dataclass(frozen=True)
class Provenance:
    """Where a record came from: WARC file path, WARC-Record-ID and byte offset of the record."""

    warc_file: str
    record_id: str
    offset: int


@dataclass(frozen=True)
class Page:
    """One WARC response record, as read from a crawl (not stored in Parquet by default)."""

    url: str
    site: str
    category: str
    fetched_at: datetime
    status: int
    content_type: str
    charset: str | None
    html: bytes
    provenance: Provenance
    page_type: str | None = None  # WARC-Newsclean-Page-Type: article, listing, feed, sitemap, robots, other
    # What a (news) sitemap said of the page, as written there, from the page's WARC metadata record
    # (schemas.contract SITEMAP_*_FIELD): news:publication_date, news:title, lastmod; None when absent.
    sitemap_publication_date: str | None = None
    sitemap_title: str | None = None
    sitemap_lastmod: str | None = None
    # True when the category came from the URL (a WARC of another crawler: neither a header nor the folder layout
    # gave one); the pipeline keeps it only for a section with enough pages (pipeline/stages.py).
    category_from_url: bool = False


@dataclass(frozen=True)
class StageCounts:
    """Per-stage counts of one page's cleaning (DOM nodes for noise stages, text blocks for Boilerpipe)."""

    static_nodes_removed: int = 0
    dynamic_nodes_removed: int = 0
    #: nodes marked as dynamic noise (StaDyNoT §3.2); equal to ``dynamic_nodes_removed`` except under the
    #: learned chain, which keeps them on the tree as a feature of its classifier (and removes none)
    dynamic_nodes_marked: int = 0
    noninformative_nodes_removed: int = 0
    blocks_total: int = 0
    blocks_kept: int = 0


@dataclass(frozen=True)
class Article:
    """A cleaned article: one row of ``articles/*.parquet``."""

    article_id: str
    url: str
    site: str
    category: str
    fetched_at: datetime
    title: str | None
    published_at: datetime | None
    language: str | None
    text: str
    html: str
    word_count: int
    content_hash: str
    static_nodes_removed: int
    dynamic_nodes_removed: int
    noninformative_nodes_removed: int
    blocks_kept: int
    blocks_total: int
    warc_file: str
    warc_record_id: str
    warc_offset: int
    pipeline_version: str = PIPELINE_VERSION
    # Near-dedup and versions (pipeline/dedup.py, pipeline/incremental.py): the article id of the kept member
    # of this row's near-duplicate cluster ("" before near-dedup); the URL's text version (1 = first text seen
    # at this URL; +1 for each changed text in later incremental runs); first and last fetch of this text.
    cluster_id: str = ""
    version: int = 1
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    # What the page says about itself (newsclean.transforms.metadata), and the identified language.
    authors: tuple[str, ...] = ()
    description: str | None = None
    image_url: str | None = None
    canonical_url: str | None = None
    domain: str | None = None
    site_name: str | None = None
    modified_at: datetime | None = None
    section: str | None = None
    tags: tuple[str, ...] = ()
    language_score: float | None = None
    declared_language: str | None = None
    # nodes marked as dynamic noise (the learned chain keeps them as features); see StageCounts.
    dynamic_nodes_marked: int = 0
    captions: tuple[str, ...] = ()
    lead: str | None = None
    page_type: str = "article"
    page_title: str | None = None
    is_accessible_for_free: bool | None = None  # schema.org isAccessibleForFree; None: the page does not say


@dataclass(frozen=True)
class Reject:
    """A WARC response record that did not become an article: one row of ``rejects/*.parquet``."""

    url: str
    site: str
    category: str
    stage: str
    reason: str
    message: str
    warc_file: str
    warc_record_id: str
    warc_offset: int
    pipeline_version: str = PIPELINE_VERSION

    #: Longest ``message`` kept, in characters (a traceback or a huge header is cut there).
    MAX_MESSAGE: ClassVar[int] = 2000

    @classmethod
    def of(cls, url: str, site: str, category: str, provenance: Provenance, stage: Stage,
           reason: RejectReason, message: str) -> Reject:
        """The one constructor of reject rows (the WARC reader and every later stage use it): provenance
        copied in, enum values stored as their strings, ``message`` cut to :attr:`MAX_MESSAGE` characters."""
        return cls(url=url, site=site, category=category, stage=stage.value, reason=reason.value,
                   message=message[:cls.MAX_MESSAGE], warc_file=provenance.warc_file,
                   warc_record_id=provenance.record_id, warc_offset=provenance.offset)


#: What each stored column holds: written into the Arrow field metadata (key ``description``), so that
#: ``pq.read_schema(path).field(name).metadata`` and the dataset card (OUT/README.md) explain every column.
DESCRIPTIONS: dict[str, str] = {
    "article_id": "Stable row id: hex SHA-1 of url + newline + content_hash (40 characters).",
    "url": "URL the page was fetched from (WARC-Target-URI).",
    "site": "Site name from the crawl config (WARC-Newsclean-Site), else the URL's host (other crawlers' files).",
    "category": "Category from the crawl config (WARC-Newsclean-Category), else the crawler's folder layout, else the "
                "URL's first path segment when that section has enough pages, else 'unknown' (docs/CONTRACTS.md).",
    "fetched_at": "When the crawler fetched the page (WARC-Date), UTC.",
    "title": "Headline as readers see it: og:title / twitter:title / dc.title meta, JSON-LD headline, <title> or "
             "first <h1>, without the site name a <title> adds ('... - Los Angeles Times'; raw: page_title).",
    "published_at": "First publication time, UTC: JSON-LD datePublished or article:published_time meta "
                    "(time kept), else htmldate's original date (midnight UTC); null when none in 1995..fetch+1 day.",
    "language": "Language of the article text identified by py3langid 0.4 (ISO 639-1 code, e.g. 'en'; ISO 639-3 "
                "for 25 languages, e.g. 'yue'; 'zxx': no linguistic content).",
    "text": "Cleaned article text: the body's kept text blocks, one paragraph per line; image captions and the "
            "lead are in their own columns, and in text too where the run said so (--text-includes).",
    "html": "Cleaned HTML of the kept content (formatting tags kept).",
    "word_count": "Words of text (tokens with a letter or digit; Han/Kana characters counted by word boundaries).",
    "content_hash": "Hex SHA-1 of the whitespace-normalised text (exact-duplicate key).",
    "static_nodes_removed": "DOM nodes removed as static noise learned from neighbour pages (StaDyNoT).",
    "dynamic_nodes_removed": "DOM nodes removed as dynamic noise (StaDyNoT §3.2); 0 under the learned chain, "
                             "which keeps them on the tree as a classifier feature (see dynamic_nodes_marked).",
    "dynamic_nodes_marked": "DOM nodes marked as dynamic noise (StaDyNoT §3.2), removed or not.",
    "noninformative_nodes_removed": "DOM nodes removed as non-informative (scripts, styles, forms, ...).",
    "blocks_kept": "Text blocks kept as article content.",
    "blocks_total": "Text blocks of the page after noise removal.",
    "warc_file": "WARC file the record was read from.",
    "warc_record_id": "WARC-Record-ID of the response record.",
    "warc_offset": "Byte offset of the record in the (compressed) WARC file.",
    "pipeline_version": "newsclean version that wrote the row.",
    "cluster_id": "article_id of the kept member of this row's near-duplicate cluster ('' before near-dedup).",
    "version": "Text version of this URL (1 = first text seen; +1 for each changed text in later runs).",
    "first_seen": "First fetch of this text of the URL, UTC.",
    "last_seen": "Last fetch of this text of the URL, UTC.",
    "authors": "Author names: JSON-LD/microdata author, else author meta tags ('By ' removed); empty when none.",
    "description": "Summary the page gives: JSON-LD description, og:description or description meta.",
    "image_url": "Lead image: JSON-LD image, og:image or twitter:image, absolute URL.",
    "canonical_url": "Canonical URL: <link rel=canonical>, og:url or JSON-LD url, absolute.",
    "domain": "Registered domain of url (Public Suffix List, e.g. 'bbc.co.uk'); the host for IP addresses.",
    "site_name": "Publication name: og:site_name, JSON-LD publisher name or application-name meta.",
    "modified_at": "Last modification time, UTC: JSON-LD dateModified or article:modified_time meta.",
    "section": "Section of the site the page gives: JSON-LD articleSection or article:section meta.",
    "tags": "Keywords: JSON-LD keywords, else article:tag / news_keywords / keywords meta.",
    "language_score": "py3langid's probability of language, in [0, 1].",
    "declared_language": "Language the page declares (<html lang>, content-language, og:locale) as a "
                         "lowercased BCP 47 tag; null when absent or not a language tag (e.g. a charset).",
    "captions": "Image captions and photo credits of the article, one string each, in page order.",
    "lead": "Standfirst, dek or key points of the article (null when none).",
    "page_type": "What the page is: article, listing or other; the crawler's WARC-Newsclean-Page-Type where it "
                 "recorded one, else decided from the page's structure (repeated cards, links, og:type, JSON-LD @type).",
    "page_title": "The page's raw <title> text (null when none).",
    "is_accessible_for_free": "schema.org isAccessibleForFree of the JSON-LD/microdata article or of a hasPart "
                              "WebPageElement: false when any says false (paywalled, in whole or in part), true "
                              "when one says true; null when the page does not say.",
    "stage": "Pipeline stage that rejected the record: read, filter, decode or clean.",
    "reason": "Why the record is not an article (a RejectReason value, e.g. http_status, no_content).",
    "message": "Details of the reject, for a person (at most 2,000 characters).",
}


def _schema(fields: list[tuple[str, pa.DataType, bool]], name: str) -> pa.Schema:
    meta = {b"newsclean.record": name.encode(), b"newsclean.schema_version": SCHEMA_VERSION.encode()}
    return pa.schema([pa.field(n, t, nullable=nl, metadata={b"description": DESCRIPTIONS.get(n, "").encode()})
                      for n, t, nl in fields], metadata=meta)


ARTICLE_SCHEMA = _schema(
    [
        ("article_id", pa.string(), False),
        ("url", pa.string(), False),
        ("site", pa.string(), False),
        ("category", pa.string(), False),
        ("fetched_at", _TS, False),
        ("title", pa.string(), True),
        ("published_at", _TS, True),
        ("language", pa.string(), True),
        ("text", pa.string(), False),
        ("html", pa.string(), False),
        ("word_count", pa.int32(), False),
        ("content_hash", pa.string(), False),
        ("static_nodes_removed", pa.int32(), False),
        ("dynamic_nodes_removed", pa.int32(), False),
        ("noninformative_nodes_removed", pa.int32(), False),
        ("blocks_kept", pa.int32(), False),
        ("blocks_total", pa.int32(), False),
        ("warc_file", pa.string(), False),
        ("warc_record_id", pa.string(), False),
        ("warc_offset", pa.int64(), False),
        ("pipeline_version", pa.string(), False),
        ("cluster_id", pa.string(), False),
        ("version", pa.int32(), False),
        ("first_seen", _TS, True),
        ("last_seen", _TS, True),
        ("authors", pa.list_(pa.string()), False),
        ("description", pa.string(), True),
        ("image_url", pa.string(), True),
        ("canonical_url", pa.string(), True),
        ("domain", pa.string(), True),
        ("site_name", pa.string(), True),
        ("modified_at", _TS, True),
        ("section", pa.string(), True),
        ("tags", pa.list_(pa.string()), False),
        ("language_score", pa.float64(), True),
        ("declared_language", pa.string(), True),
        ("dynamic_nodes_marked", pa.int32(), False),
        ("captions", pa.list_(pa.string()), False),
        ("lead", pa.string(), True),
        ("page_type", pa.string(), False),
        ("page_title", pa.string(), True),
        ("is_accessible_for_free", pa.bool_(), True),
    ],
    "article",
)

REJECT_SCHEMA = _schema(
    [
        ("url", pa.string(), False),
        ("site", pa.string(), False),
        ("category", pa.string(), False),
        ("stage", pa.string(), False),
        ("reason", pa.string(), False),
        ("message", pa.string(), False),
        ("warc_file", pa.string(), False),
        ("warc_record_id", pa.string(), False),
        ("warc_offset", pa.int64(), False),
        ("pipeline_version", pa.string(), False),
    ],
    "reject",
)

SCHEMAS: dict[type, pa.Schema] = {Article: ARTICLE_SCHEMA, Reject: REJECT_SCHEMA}

#: Column the spill adds to an article row: the article's MinHash signature (``uint32`` little-endian,
#: ``num_perm`` values; pipeline/dedup.py), read back with the row for its ``OUT/_index`` row.
SPILL_SIGNATURE = "minhash"
#: Version of :data:`SPILL_SCHEMA` (1: the article row plus :data:`SPILL_SIGNATURE`).
SPILL_SCHEMA_VERSION = "1"
#: One row of ``OUT/_spill/articles/*.parquet``, where cleaned articles wait inside a run's staging folder for
#: the dedup decisions (pipeline/stages.py): :data:`ARTICLE_SCHEMA` plus :data:`SPILL_SIGNATURE`. Internal to a
#: run (deleted with its staging folder), never published.
SPILL_SCHEMA = ARTICLE_SCHEMA.append(pa.field(SPILL_SIGNATURE, pa.binary(), nullable=False)).with_metadata(
    {b"newsclean.record": b"article_spill", b"newsclean.schema_version": SPILL_SCHEMA_VERSION.encode(),
     b"newsclean.article_schema_version": SCHEMA_VERSION.encode()})


def to_row(record: Article | Reject) -> dict[str, Any]:
    """Turn a stored record into the ``dict`` row that its pyarrow schema describes."""
    return dataclasses.asdict(record)


def from_row(cls: type, row: dict[str, Any]):
    """Build ``cls`` (Article or Reject) from a Parquet row dict (list columns become tuples); extra keys
    raise ``TypeError``."""
    return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in row.items()})
