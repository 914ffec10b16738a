"""The stored records' dataclasses and pyarrow schemas describe the same rows (schemas/records.py)."""

from __future__ import annotations

import dataclasses
import typing
from datetime import UTC, datetime

import pyarrow as pa
import pytest

from newsclean.schemas.records import (
    ARTICLE_SCHEMA,
    REJECT_SCHEMA,
    SCHEMA_VERSION,
    SCHEMAS,
    Article,
    Reject,
    RejectReason,
    Stage,
    from_row,
    to_row,
)

STORED = [(Article, ARTICLE_SCHEMA), (Reject, REJECT_SCHEMA)]


def _optional(hint) -> bool:
    """Whether a type hint admits None (``X | None`` / ``Optional[X]``)."""
    return type(None) in typing.get_args(hint)


@pytest.mark.parametrize("cls, schema", STORED, ids=["Article", "Reject"])
def test_field_names_and_order_match(cls, schema):
    assert [f.name for f in dataclasses.fields(cls)] == schema.names


@pytest.mark.parametrize("cls, schema", STORED, ids=["Article", "Reject"])
def test_nullability_matches(cls, schema):
    hints = typing.get_type_hints(cls)
    for name in schema.names:
        assert schema.field(name).nullable == _optional(hints[name]), name


@pytest.mark.parametrize("cls, schema", STORED, ids=["Article", "Reject"])
def test_python_types_fit_arrow_types(cls, schema):
    expected = {str: pa.types.is_string, int: pa.types.is_integer, datetime: pa.types.is_timestamp,
                float: pa.types.is_floating, bool: pa.types.is_boolean}
    hints = typing.get_type_hints(cls)
    for name in schema.names:
        hint = hints[name]
        arrow = schema.field(name).type
        if typing.get_origin(hint) is tuple:  # tuple[str, ...] <-> list<string>
            assert pa.types.is_list(arrow) and expected[typing.get_args(hint)[0]](arrow.value_type), name
            continue
        base = [t for t in typing.get_args(hint) if t is not type(None)] or [hint]
        assert expected[base[0]](arrow), name


@pytest.mark.parametrize("schema", [ARTICLE_SCHEMA, REJECT_SCHEMA])
def test_every_column_is_described_in_the_field_metadata(schema):
    for f in schema:
        assert len((f.metadata or {}).get(b"description", b"")) >= 15, f.name


def test_article_schema_has_the_news_metadata_columns():
    assert SCHEMA_VERSION == "4"
    types = {f.name: f.type for f in ARTICLE_SCHEMA}
    assert types["captions"] == pa.list_(pa.string()) and types["lead"] == pa.string()
    assert types["page_type"] == pa.string() and types["page_title"] == pa.string()
    assert types["is_accessible_for_free"] == pa.bool_() and ARTICLE_SCHEMA.field("is_accessible_for_free").nullable
    assert not ARTICLE_SCHEMA.field("page_type").nullable and ARTICLE_SCHEMA.field("lead").nullable
    assert types["authors"] == pa.list_(pa.string()) and types["tags"] == pa.list_(pa.string())
    for name in ("description", "image_url", "canonical_url", "domain", "site_name", "section", "declared_language"):
        assert types[name] == pa.string(), name
    assert types["modified_at"] == pa.timestamp("us", tz="UTC") and pa.types.is_floating(types["language_score"])


@pytest.mark.parametrize("schema", [ARTICLE_SCHEMA, REJECT_SCHEMA])
def test_schema_metadata_carries_version(schema):
    assert schema.metadata[b"newsclean.schema_version"] == SCHEMA_VERSION.encode()
    assert schema.metadata[b"newsclean.record"] in (b"article", b"reject")
    assert all(pa.types.is_timestamp(f.type) and f.type.tz == "UTC"
               for f in schema if pa.types.is_timestamp(f.type))


def test_schemas_registry():
    assert SCHEMAS == {Article: ARTICLE_SCHEMA, Reject: REJECT_SCHEMA}


def _article() -> Article:
    return Article(
        article_id="a" * 40, url="http://x.test/a", site="x", category="news",
        fetched_at=datetime(2024, 5, 1, 12, tzinfo=UTC), title=None, published_at=None,
        language="en", text="Some text.", html="<p>Some text.</p>", word_count=2, content_hash="b" * 40,
        static_nodes_removed=1, dynamic_nodes_removed=2, noninformative_nodes_removed=3, blocks_kept=1,
        blocks_total=4, warc_file="/w/x.warc.gz", warc_record_id="<urn:uuid:1>", warc_offset=123,
    )


def test_rows_round_trip_through_arrow():
    article = dataclasses.replace(
        _article(), authors=("Ann Lee", "Bo Chen"), tags=("budget",), description="d", image_url="http://x.test/i.jpg",
        canonical_url="http://x.test/a", domain="x.test", site_name="X", section="News", language_score=0.99,
        modified_at=datetime(2024, 5, 2, 8, tzinfo=UTC), declared_language="en-gb")
    reject = Reject(url="http://x.test/b", site="x", category="news", stage=Stage.FILTER.value,
                    reason=RejectReason.HTTP_STATUS.value, message="HTTP status 404",
                    warc_file="/w/x.warc.gz", warc_record_id="<urn:uuid:2>", warc_offset=456)
    for record, schema in ((article, ARTICLE_SCHEMA), (reject, REJECT_SCHEMA)):
        table = pa.Table.from_pylist([to_row(record)], schema=schema)
        assert table.schema.equals(schema, check_metadata=True)
        assert from_row(type(record), table.to_pylist()[0]) == record


def test_from_row_rejects_unknown_keys():
    with pytest.raises(TypeError):
        from_row(Reject, {**to_row(_article())})
