"""Near-duplicate removal through the pipeline on real pages (msv-big9) and their near-duplicate copies made by the
corpus benchmark (three words changed, a timestamp line, another URL): one article per pair, the copies traced to it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pyarrow.parquet as pq
import pytest
from bench_modules import bench_module
from real_pages import shared_pages
from warc_builder import Response, write_warc

from newsclean.pipeline.clean import run_clean
from newsclean.pipeline.options import CleanConfig

T0 = datetime(2017, 6, 1, 9, 0, tzinfo=UTC)
bench_corpus = bench_module("bench_corpus")  # one near-copy generator for the test and the benchmark




N_PAGES = 4


def near_copy(html: bytes, gold: str, stamp: str) -> bytes:
    """The benchmark's near-duplicate of a page (``bench/bench_corpus.py``: three words of its longest gold
    paragraph of ≥ 20 words changed, a timestamp line before it); every page used here has one."""
    copy = bench_corpus.near_copy(html, gold, stamp)
    assert copy is not None, "no gold paragraph of 20 words to edit"
    return copy


@pytest.fixture(scope="module")
def near_run(tmp_path_factory):
    pages = shared_pages("msv-big9", N_PAGES, group="bbc.co.uk/2013")
    root = tmp_path_factory.mktemp("near")
    originals, copies = [], []
    for i, page in enumerate(pages):
        ct = [("Content-Type", "text/html; charset=utf-8")]
        originals.append(Response(f"http://news.test/story-{i}.html", page.html, headers=ct,
                                  date=T0 + timedelta(minutes=i)))
        copies.append(Response(f"http://wire.test/syndicated/{i}.html", near_copy(page.html, page.gold, f"2017-06-02 1{i}:05 UTC"),
                               headers=ct, date=T0 + timedelta(days=1, minutes=i)))
    write_warc(root / "warc" / "news" / "all" / "news-all-20170601T090000Z-00000.warc.gz", "news", "all", originals)
    write_warc(root / "warc" / "wire" / "all" / "wire-all-20170602T090000Z-00000.warc.gz", "wire", "all", copies)
    summary = run_clean(CleanConfig(warc=str(root / "warc"), out=str(root / "out")), ["--runner", "DirectRunner"])
    articles = pq.read_table(root / "out" / "articles").to_pylist()
    duplicates = pq.read_table(root / "out" / "duplicates").to_pylist()
    return summary, articles, duplicates


def test_real_near_duplicate_pairs_yield_one_article_each(near_run):
    summary, articles, duplicates = near_run
    assert summary.balanced
    assert summary.rejects_total == 0, summary.rejects
    assert sorted(a["url"] for a in articles) == [f"http://news.test/story-{i}.html" for i in range(N_PAGES)]
    assert summary.duplicates == {"exact_duplicate": 0, "near_duplicate": N_PAGES}
    assert summary.to_dict()["duplicates"]["near_duplicate"] == N_PAGES


def test_dropped_copies_point_at_the_kept_article(near_run):
    _, articles, duplicates = near_run
    kept = {a["url"].rsplit("-", 1)[1].split(".")[0]: a for a in articles}
    assert len(duplicates) == N_PAGES
    for d in duplicates:
        assert d["reason"] == "near_duplicate"
        i = d["url"].rsplit("/", 1)[1].split(".")[0]
        assert d["cluster_id"] == kept[i]["article_id"]
    for a in articles:
        assert a["cluster_id"] == a["article_id"]  # each kept row is its cluster's kept member
        assert a["first_seen"] == a["fetched_at"] == a["last_seen"] and a["version"] == 1
