"""Typed records that flow between newsclean's stages and what is stored in Parquet.

Each stored record has a frozen dataclass (what the code passes around) and a pyarrow
schema (what lands on disk), with a version number in the schema metadata. A test keeps
the two field lists equal (tests/test_schemas.py). Source: ../shared/DESIGN.md, "Records".

Units: times are timezone-aware UTC ``datetime``; byte offsets count bytes from the start
of the (compressed) WARC file; ``word_count`` counts whitespace-separated tokens that hold
at least one letter or digit (Kohlschütter 2010 §3.3 definition of a word).
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pyarrow as pa

SCHEMA_VERSION = "1"
PIPELINE_VERSION = "0.1.0"

_TS = pa.timestamp("us", tz="UTC")


class RejectReason(str, enum.Enum):
    """Closed set of reasons a WARC response record does not become an article."""

    HTTP_STATUS = "http_status"  # status other than 200 (404, 500, redirects kept as records)
    NOT_ARTICLE = "not_article"  # the crawler recorded a listing page, feed, sitemap or robots.txt
    NOT_HTML = "not_html"  # Content-Type is not an HTML type
    EMPTY_BODY = "empty_body"  # zero bytes (or only whitespace) of payload
    DECODE_ERROR = "decode_error"  # payload or Content-Encoding could not be decoded
    PARSE_ERROR = "parse_error"  # lxml could not build a tree
    NO_CONTENT = "no_content"  # the cleaning chain kept no text block
    TOO_SHORT = "too_short"  # kept text below the minimum article length
    INTERNAL_ERROR = "internal_error"  # unexpected exception inside a stage (bug: report it)


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


@dataclass(frozen=True)
class StageCounts:
    """Per-stage counts of one page's cleaning (DOM nodes for noise stages, text blocks for Boilerpipe)."""

    static_nodes_removed: int = 0
    dynamic_nodes_removed: int = 0
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


def _schema(fields: list[tuple[str, pa.DataType, bool]], name: str) -> pa.Schema:
    meta = {b"newsclean.record": name.encode(), b"newsclean.schema_version": SCHEMA_VERSION.encode()}
    return pa.schema([pa.field(n, t, nullable=nl) for n, t, nl in fields], metadata=meta)


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


def to_row(record: Article | Reject) -> dict[str, Any]:
    """Turn a stored record into the ``dict`` row that its pyarrow schema describes."""
    return dataclasses.asdict(record)


def from_row(cls: type, row: dict[str, Any]):
    """Build ``cls`` (Article or Reject) from a Parquet row dict; extra keys raise ``TypeError``."""
    return cls(**row)
