"""What grew with the corpus in one process (docs/DECISIONS.md "Local runner and memory at scale").

- The reading and cleaning stage holds no per-article table: exact dedup is a GroupByKey, not a combiner that a
  runner lifts into that stage (Beam's pre-combining table kept every article's decoded key for the whole bundle,
  which in the ``in_memory`` mode is the whole input).
- A run whose DoFns execute in the launching process (``in_memory``) allocates Arrow memory from the system
  allocator, not from pyarrow's default pool (mimalloc or jemalloc), which kept the pages freed by the last stage's
  Parquet readers and writers; and every local run fixes glibc's mmap threshold (and caps its arenas) in the
  launching process, which in ``multi_processing`` is the runner holding the shuffles' buffers, so that large freed
  blocks go back to the system instead of raising the heap's high-water.
- The spill carries each article's MinHash, so the index rows need no join that held every signature until the
  last stage.

The allocator settings themselves are checked in test_runner.py.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pyarrow.parquet as pq
from warc_builder import Response, article_page, paragraph, write_warc

from newsclean.pipeline import runner, stages
from newsclean.pipeline.clean import run_clean
from newsclean.pipeline.dedup_decisions import ArticleKey, SignatureEntry, first_fetched
from newsclean.pipeline.options import CleanConfig
from newsclean.schemas.records import ARTICLE_SCHEMA, SPILL_SCHEMA, SPILL_SIGNATURE


def _key(url: str, minute: int, offset: int) -> ArticleKey:
    fetched = datetime(2024, 5, 1, 12, minute, tzinfo=UTC)
    return ArticleKey(("a.warc.gz", offset), "same-hash", (fetched, url, "a.warc.gz", offset),
                      SignatureEntry(f"id-{offset}", (1,), b"\0" * 8))


def test_the_earliest_fetch_wins_in_any_order_and_the_others_are_losers():
    late, early_z, early_a = _key("http://a/1", 30, 10), _key("http://z/2", 5, 20), _key("http://a/3", 5, 30)
    for order in ([late, early_z, early_a], [early_a, late, early_z], [early_z, early_a, late]):
        winner, n, losers = first_fetched(order)
        assert winner is early_a and n == 3
        assert sorted(loser.record for loser in losers) == [("a.warc.gz", 10), ("a.warc.gz", 20)]
    assert first_fetched([late]) == (late, 1, ())


def test_the_reading_stage_holds_no_pre_combining_table(tmp_path):
    from test_scale_pipeline import _fused_stages, _stage_of

    stages_ = _fused_stages(tmp_path)
    read = _stage_of(stages_, "ReadWarc/ReadRecords")
    assert _stage_of(stages_, "DedupExact/KeepFirstFetched/GroupByContentHash/Write") == read
    assert not [name for name in stages_[read] if "Precombine" in name or "Combine" in name]


def test_the_spill_schema_is_the_article_row_and_its_minhash_versioned_on_its_own():
    assert SPILL_SCHEMA.names == [*ARTICLE_SCHEMA.names, SPILL_SIGNATURE]
    assert SPILL_SCHEMA.field(SPILL_SIGNATURE).type == pa.binary()
    assert SPILL_SCHEMA.metadata[b"newsclean.record"] == b"article_spill"
    assert SPILL_SCHEMA.metadata[b"newsclean.schema_version"] == b"1"


def test_the_index_join_is_gone_from_the_graph(tmp_path):
    from test_scale_pipeline import _fused_stages

    names = {name for stage in _fused_stages(tmp_path) for name in stage}
    assert not [name for name in names if "JoinSignatures" in name and name.startswith("WriteIndex")]


def test_an_in_memory_run_cleans_with_the_system_pool_and_gives_the_same_rows(tmp_path, monkeypatch):
    monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL", raising=False)
    t0 = datetime(2017, 6, 1, 9, 0, tzinfo=UTC)
    pages = [Response(f"http://alpha.test/news/{i}.html",
                      article_page("alpha", "news", f"Story {i}", [paragraph(10 * i + j) for j in range(3)]).encode(),
                      headers=[("Content-Type", "text/html; charset=utf-8")], date=t0 + timedelta(minutes=i))
             for i in range(4)]
    warc = write_warc(tmp_path / "warc" / "a.warc.gz", "alpha", "news", pages)
    seen: list[str] = []
    clean_page = stages.clean_page

    def spy(*args, **kwargs):  # looked up in stages' globals at call time, in this process
        seen.append(pa.default_memory_pool().backend_name)
        return clean_page(*args, **kwargs)

    before = pa.default_memory_pool().backend_name
    monkeypatch.setattr(stages, "clean_page", spy)
    tuned: list[int] = []
    monkeypatch.setattr(runner, "tune_glibc_malloc", lambda: tuned.append(1))
    summary = run_clean(CleanConfig(warc=str(warc.parent), out=str(tmp_path / "out")),
                        ["--direct_running_mode", "in_memory"])
    assert seen == ["system"] * 4 and tuned == [1]
    assert pa.default_memory_pool().backend_name == before
    rows = pq.read_table(tmp_path / "out" / "articles").to_pylist()
    assert summary.articles_written == len(rows) == 4
    assert sorted(r["url"] for r in rows) == [p.url for p in pages]
