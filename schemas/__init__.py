"""pyarrow schemas and mirroring dataclasses of the records newsclean stores (versioned)."""

from newsclean.schemas.records import (
    ARTICLE_SCHEMA,
    PIPELINE_VERSION,
    REJECT_SCHEMA,
    SCHEMA_VERSION,
    Article,
    Page,
    Provenance,
    Reject,
    RejectReason,
    Stage,
    StageCounts,
    from_row,
    to_row,
)

__all__ = [
    "ARTICLE_SCHEMA", "PIPELINE_VERSION", "REJECT_SCHEMA", "SCHEMA_VERSION", "Article", "Page",
    "Provenance", "Reject", "RejectReason", "Stage", "StageCounts", "from_row", "to_row",
]
