"""The pipeline on real pages of the shared data sets: the rows equal the per-page functions' with the full
neighbour sample; a group doubled by byte copies keeps every article and counts the copies as duplicates."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import pyarrow.parquet as pq
from real_pages import shared_pages
from warc_builder import Response, write_warc

from newsclean.pipeline import stages
from newsclean.pipeline.clean import run_clean
from newsclean.pipeline.dedup import SPILL_DIR
from newsclean.pipeline.options import CleanConfig
from newsclean.pipeline.stages import clean_page, evidence_for_key
from newsclean.pipeline.warc_reader import iter_warc_file
from newsclean.schemas.records import Article, Page, Provenance
from newsclean.transforms.chain import DEFAULT_CONFIG
from newsclean.transforms.site_evidence import learn_site_evidence

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def _page(html: bytes) -> Page:
    return Page(url="http://alpha.test/politics/1.html", site="alpha", category="politics", fetched_at=T0, status=200,
                content_type="text/html", charset=None, html=html, provenance=Provenance("f.warc.gz", "<urn:uuid:1>", 0))


def test_doubled_real_group_keeps_every_article():
    """CleanEval pages, each a (site, category) group of its own, plus a byte copy of each."""
    pages = shared_pages("cleaneval", 6)
    lost = []
    for p in pages:
        html = p.html.decode("utf-8", "replace")
        single = stages.clean_page(_page(p.html), learn_site_evidence([html]), DEFAULT_CONFIG)
        doubled = stages.clean_page(_page(p.html), learn_site_evidence([html, html]), DEFAULT_CONFIG)
        if getattr(single, "text", None) != getattr(doubled, "text", None):
            lost.append(p.page_id)
    assert not lost, f"pages whose article changed when their group was doubled: {lost}"


def test_doubled_group_end_to_end_is_articles_plus_duplicates(tmp_path):
    """The pipeline on the DirectRunner: 3 real pages + a copy of each under another URL in one group."""
    pages = shared_pages("cleaneval", 3)
    responses = []
    for i, p in enumerate(pages):
        for copy in ("", "?utm_source=feed"):
            responses.append(Response(f"http://news.test/world/{i}.html{copy}", p.html,
                                      headers=[("Content-Type", "text/html")]))
    write_warc(tmp_path / "warc" / "news" / "world" / "f.warc.gz", "news", "world", responses)

    summary = run_clean(CleanConfig(warc=str(tmp_path / "warc"), out=str(tmp_path / "out")), ["--runner", "DirectRunner"])
    articles = pq.read_table(tmp_path / "out" / "articles").num_rows
    assert summary.records_read == 6
    assert (articles, summary.duplicates_dropped) == (3, 3)  # before: 0 articles, 6 no_content


def test_rows_are_those_of_the_per_page_functions_with_the_full_sample(tmp_path):
    """Six real pages of one site plus an exact copy of the first one fetched a day later in another file:
    the rows equal ``clean_page`` with the signature learned from all seven pages' full HTML, the copy is a
    counted duplicate, and no spill is left in the published output."""
    real = shared_pages("msv-big9", 6, group="bbc.co.uk/2013")
    ct = [("Content-Type", "text/html; charset=utf-8")]
    originals = [Response(f"http://news.test/story-{i}.html", p.html, headers=ct, date=T0 + timedelta(minutes=i))
                 for i, p in enumerate(real)]
    copy = Response("http://news.test/story-0-print.html", real[0].html, headers=ct, date=T0 + timedelta(days=1))
    warc = tmp_path / "warc"
    write_warc(warc / "a" / "news-all-00000.warc.gz", "news", "all", originals)
    write_warc(warc / "b" / "news-all-00001.warc.gz", "news", "all", [copy])

    summary = run_clean(CleanConfig(warc=str(warc), out=str(tmp_path / "out")), ["--runner", "DirectRunner"])
    rows = sorted(pq.read_table(tmp_path / "out" / "articles").to_pylist(), key=lambda r: r["url"])

    pages = [p for f in sorted(warc.rglob("*.warc.gz")) for p in iter_warc_file(str(f)) if isinstance(p, Page)]
    sample = sorted((hashlib.sha1(p.url.encode()).hexdigest(), p.html, p.charset) for p in pages)
    _, signature = evidence_for_key(("news", "all"), sample, DEFAULT_CONFIG)
    expected = sorted((clean_page(p, signature, DEFAULT_CONFIG) for p in pages if p.url != copy.url),
                      key=lambda a: a.url)
    assert all(isinstance(a, Article) for a in expected)
    fields = ("article_id", "url", "text", "html", "static_nodes_removed", "blocks_kept", "warc_file", "warc_offset")
    assert [{f: r[f] for f in fields} for r in rows] == [{f: getattr(a, f) for f in fields} for a in expected]
    assert sum(r["static_nodes_removed"] for r in rows) > 0  # the re-read sample did teach a signature
    assert summary.balanced and summary.duplicates == {"exact_duplicate": 1, "near_duplicate": 0}
    assert not (tmp_path / "out" / SPILL_DIR).exists()
    assert not any(p.name.startswith("_staging") for p in (tmp_path / "out").iterdir())
