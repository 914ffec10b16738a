"""The schema.org ``isAccessibleForFree`` of a page, from a WARC record to the ``is_accessible_for_free`` column of
its Parquet article row (transforms/metadata.py, transforms/finish.py, pipeline/stages.py)."""

from __future__ import annotations

import pyarrow.parquet as pq
from warc_builder import Response, article_page, paragraph, write_warc

from newsclean.pipeline.clean import run_clean
from newsclean.pipeline.options import CleanConfig


def _page(seed: int, free: str | None) -> bytes:
    """An article whose JSON-LD says ``"isAccessibleForFree": free`` (None: says nothing)."""
    said = "" if free is None else f', "isAccessibleForFree": {free}'
    jsonld = ('<script type="application/ld+json">{"@context": "https://schema.org", "@type": "NewsArticle", '
              f'"headline": "Story {seed}"{said}}}</script>')
    html = article_page("alpha", "world", f"Story {seed}", [paragraph(100 * seed + j) for j in range(4)])
    return html.replace("</head>", jsonld + "</head>").encode("utf-8")


def test_the_parquet_row_has_the_pages_is_accessible_for_free(tmp_path):
    said = {"http://alpha.test/world/1.html": "false", "http://alpha.test/world/2.html": '"True"',
            "http://alpha.test/world/3.html": None}
    write_warc(tmp_path / "warc" / "alpha" / "world" / "alpha-world-20240501T100000Z-00000.warc.gz", "alpha", "world",
               [Response(url, _page(i, free)) for i, (url, free) in enumerate(said.items(), 1)])
    summary = run_clean(CleanConfig(warc=str(tmp_path / "warc"), out=str(tmp_path / "out")), [])
    assert summary.articles_written == 3
    table = pq.read_table(tmp_path / "out" / "articles")
    assert table.schema.field("is_accessible_for_free").type == "bool"
    rows = {r["url"]: r["is_accessible_for_free"] for r in table.to_pylist()}
    assert rows == {"http://alpha.test/world/1.html": False, "http://alpha.test/world/2.html": True,
                    "http://alpha.test/world/3.html": None}
