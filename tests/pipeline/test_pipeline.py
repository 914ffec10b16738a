"""End to end on the DirectRunner: WARC files with good and bad pages -> Parquet + summary.json.

One pipeline run (module-scoped fixture) over a small crawl written with warcio: 2 sites,
3 (site, category) keys, an exact duplicate under another URL, a 404, an image, an empty body,
broken HTML, junk bytes, a body whose Content-Encoding is not what it says, cp1252 pages without
a charset and with a wrong one, and a gzip-encoded page. Checks the accounting: every WARC response record
ends as one article row, one reject row or one counted duplicate.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow.parquet as pq
import pytest
from warc_builder import Response, article_page, paragraph, write_warc
from warcio.archiveiterator import ArchiveIterator as WarcioIterator

from newsclean.pipeline.clean import build_pipeline, run_clean
from newsclean.pipeline.options import CleanConfig
from newsclean.pipeline.stages import with_settings
from newsclean.schemas.records import ARTICLE_SCHEMA, REJECT_SCHEMA
from newsclean.transforms.text import content_hash

T0 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
HTML_CT = [("Content-Type", "text/html; charset=utf-8")]
ACCENTED = "Le café du coin servait une crème brûlée naïve, disait l’élève « très réservé » à la gare."


def _articles(site: str, category: str, n: int, seed: int) -> list[Response]:
    out = []
    for i in range(n):
        html = article_page(site, category, f"{site} {category} story {i}",
                            [paragraph(seed + 10 * i + j) for j in range(3)])
        out.append(Response(f"http://{site}.test/{category}/story-{i}.html", html.encode(),
                            headers=HTML_CT, date=T0 + timedelta(minutes=i)))
    return out


def _corpus(root: Path) -> dict:
    """Write the test crawl under ``root``; return what each URL should become."""
    alpha_pol = _articles("alpha", "politics", 4, 100)
    # An exact duplicate of story-0 under another URL, fetched *earlier*: it wins although its URL sorts later.
    original = alpha_pol[0]
    dup = Response("http://alpha.test/politics/zz-syndicated-copy.html", original.body, headers=HTML_CT,
                   date=T0 - timedelta(hours=1))
    write_warc(root / "alpha" / "politics" / "alpha-politics-20240501T100000Z-00000.warc.gz",
               "alpha", "politics", alpha_pol)
    write_warc(root / "alpha" / "politics" / "alpha-politics-20240501T110000Z-00001.warc.gz",
               "alpha", "politics", [dup])

    alpha_sp = _articles("alpha", "sports", 4, 200)
    body_1 = article_page("alpha", "sports", "Café story", [ACCENTED + " " + paragraph(250), paragraph(251),
                                                            paragraph(252)], charset_meta=False)
    alpha_sp[1] = Response(alpha_sp[1].url, body_1.encode("cp1252"), headers=[("Content-Type", "text/html")],
                           date=alpha_sp[1].date)  # cp1252, no charset anywhere
    body_2 = article_page("alpha", "sports", "Naïve story", [paragraph(260), ACCENTED + " " + paragraph(261),
                                                             paragraph(262)], charset_meta=False)
    alpha_sp[2] = Response(alpha_sp[2].url, body_2.encode("cp1252"), headers=HTML_CT,
                           date=alpha_sp[2].date)  # cp1252 but the header says utf-8
    alpha_sp[3] = Response(alpha_sp[3].url, gzip.compress(alpha_sp[3].body),
                           headers=[("Content-Type", "text/html"), ("Content-Encoding", "gzip")],
                           date=alpha_sp[3].date)
    write_warc(root / "alpha" / "sports" / "alpha-sports-20240501T100000Z-00000.warc.gz",
               "alpha", "sports", alpha_sp)

    beta = _articles("beta", "world", 3, 300)
    broken = ("<html><head><title>Broken</title><body><div><p>" + paragraph(390)
              + "<table><tr><td><p>" + paragraph(391) + "</div></i></b></span></html><p>" + paragraph(392))
    bad = {
        "http://beta.test/world/missing.html": (Response("http://beta.test/world/missing.html",
                                                         b"<html><body>Not found</body></html>", status=404,
                                                         headers=HTML_CT), "http_status"),
        "http://beta.test/world/logo.png": (Response("http://beta.test/world/logo.png", b"\x89PNG\r\n\x1a\n" + bytes(200),
                                                     headers=[("Content-Type", "image/png")]), "not_html"),
        "http://beta.test/world/empty.html": (Response("http://beta.test/world/empty.html", b"",
                                                       headers=HTML_CT), "empty_body"),
        "http://beta.test/world/bad-gzip.html": (Response("http://beta.test/world/bad-gzip.html", b"<html>plain</html>",
                                                          headers=[("Content-Type", "text/html"),
                                                                   ("Content-Encoding", "gzip")]), "decode_error"),
        "http://beta.test/world/junk.html": (Response("http://beta.test/world/junk.html", bytes(range(256)) * 8,
                                                      headers=HTML_CT), "not_html"),  # sniffed as binary
        "http://beta.test/world/broken.html": (Response("http://beta.test/world/broken.html", broken.encode(),
                                                        headers=HTML_CT), None),
    }
    write_warc(root / "beta" / "world" / "beta-world-20240501T100000Z-00000.warc.gz",
               "beta", "world", beta + [r for r, _ in bad.values()])
    return {
        "good": [r.url for r in alpha_pol + alpha_sp + beta],
        "dup_winner": dup.url,
        "dup_loser": original.url,
        "bad": {url: reason for url, (_, reason) in bad.items()},
        "records": len(alpha_pol) + 1 + len(alpha_sp) + len(beta) + len(bad),
        "gzip_url": alpha_sp[3].url,
        "cp1252_urls": [alpha_sp[1].url, alpha_sp[2].url],
    }


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("crawl")
    expected = _corpus(root / "warc")
    out = root / "out"
    summary = run_clean(CleanConfig(warc=str(root / "warc" / "**" / "*.warc.gz"), out=str(out), neighbour_sample=10),
                        ["--runner", "DirectRunner"])
    articles = pq.read_table(out / "articles")
    rejects = pq.read_table(out / "rejects")
    return {"out": out, "summary": summary, "expected": expected,
            "articles": {r["url"]: r for r in articles.to_pylist()},
            "rejects": {r["url"]: r for r in rejects.to_pylist()},
            "article_table": articles, "reject_table": rejects}


def test_every_record_is_accounted_for_exactly_once(run):
    exp, s = run["expected"], run["summary"]
    assert s.records_read == exp["records"]
    assert s.duplicates_dropped == 1
    assert s.articles_written == len(run["articles"]) and s.rejects_total == len(run["rejects"])
    assert s.articles_written + s.rejects_total + s.duplicates_dropped == s.records_read
    assert s.balanced
    # At URL level (all URLs are distinct here): articles, rejects and the duplicate partition the input.
    assert not set(run["articles"]) & set(run["rejects"])
    all_urls = set(exp["good"]) | set(exp["bad"]) | {exp["dup_winner"]}
    assert set(run["articles"]) | set(run["rejects"]) | {exp["dup_loser"]} == all_urls
    assert run["article_table"].num_rows == len(run["articles"])  # no URL twice


def test_exact_duplicates_are_rows_of_duplicates_too(run):
    """Every input record can be traced to a row: the article dropped as an exact duplicate is a ``duplicates`` row
    (before: only counted) with its WARC provenance and the kept row's cluster_id."""
    exp = run["expected"]
    dups = pq.read_table(run["out"] / "duplicates").to_pylist()
    kept = run["articles"][exp["dup_winner"]]
    assert [(d["url"], d["reason"], d["cluster_id"], d["content_hash"]) for d in dups] == [
        (exp["dup_loser"], "exact_duplicate", kept["cluster_id"], kept["content_hash"])]
    assert dups[0]["warc_file"].endswith(".warc.gz") and dups[0]["warc_offset"] > 0
    assert set(run["articles"]) | set(run["rejects"]) | {d["url"] for d in dups} == (
        set(exp["good"]) | set(exp["bad"]) | {exp["dup_winner"]})


def test_summary_json(run):
    data = json.loads((run["out"] / "_summary.json").read_text())
    s = run["summary"]
    assert data["records_read"] == s.records_read and data["balanced"] is True
    assert data["accounted"] == data["records_read"]
    assert data["rejects"] == s.rejects and data["duplicates_dropped"] == 1
    assert sum(data["articles_by_site"].values()) == data["articles_written"]
    assert "check:" in s.format() and "ok" in s.format()
    assert s.out == str(run["out"])  # the published folder, not the run's staging folder
    assert "out" not in data and data["warc"] == "../warc/**/*.warc.gz"  # no path of the machine that ran


def test_good_pages_become_articles(run):
    exp, arts = run["expected"], run["articles"]
    assert set(exp["good"]) - {exp["dup_loser"]} <= set(arts)
    for url in set(exp["good"]) - {exp["dup_loser"]}:
        a = arts[url]
        assert "Story" in a["text"] and a["word_count"] >= 100, url
        assert a["site"] == url.split("//")[1].split(".")[0]
        assert a["category"] == url.split("/")[3]


def test_bad_pages_get_their_reject_reasons(run):
    rejects = run["rejects"]
    for url, reason in run["expected"]["bad"].items():
        if reason is not None:
            assert rejects[url]["reason"] == reason, url
    assert rejects["http://beta.test/world/missing.html"]["stage"] == "filter"
    assert rejects["http://beta.test/world/bad-gzip.html"]["stage"] == "decode"
    assert rejects["http://beta.test/world/missing.html"]["message"] == "HTTP status 404"
    # Broken HTML ends somewhere, with a reason from the closed set, and crashes nothing.
    for url in ("http://beta.test/world/broken.html",):
        assert (url in run["articles"]) != (url in rejects)
        if url in rejects:
            assert rejects[url]["reason"] in {"parse_error", "no_content", "too_short", "empty_body"}


def test_exact_duplicate_keeps_earliest_fetch(run):
    exp, arts = run["expected"], run["articles"]
    assert exp["dup_winner"] in arts and exp["dup_loser"] not in arts and exp["dup_loser"] not in run["rejects"]
    hashes = [a["content_hash"] for a in arts.values()]
    assert len(hashes) == len(set(hashes))


def test_encodings_are_decoded(run):
    arts = run["articles"]
    assert "Story" in arts[run["expected"]["gzip_url"]]["text"]
    for url in run["expected"]["cp1252_urls"]:
        text = arts[url]["text"]
        assert "café" in text and "naïve" in text and "l’élève" in text, url


def test_article_rows_are_consistent(run):
    for url, a in run["articles"].items():
        assert a["content_hash"] == content_hash(a["text"])
        assert a["article_id"] == hashlib.sha1(f"{url}\n{a['content_hash']}".encode()).hexdigest()
        assert a["fetched_at"].tzinfo is not None and a["fetched_at"].utcoffset() == timedelta(0)
        assert a["blocks_kept"] <= a["blocks_total"] and a["html"]
        assert "All rights reserved" not in a["text"], url  # the footer is static noise


def test_provenance_points_at_the_record(run):
    for rows in (run["articles"], run["rejects"]):
        for url, row in rows.items():
            with open(row["warc_file"], "rb") as f:
                f.seek(row["warc_offset"])
                record = next(iter(WarcioIterator(f)))
                assert record.rec_headers.get_header("WARC-Record-ID") == row["warc_record_id"]
                assert record.rec_headers.get_header("WARC-Target-URI") == url


def test_parquet_opens_in_pyarrow_pandas_duckdb(run):
    out = run["out"]
    settings = json.loads((out / "_summary.json").read_text())["settings"]  # the run's, in each file's metadata
    assert run["article_table"].schema.equals(with_settings(ARTICLE_SCHEMA, settings), check_metadata=True)
    assert run["reject_table"].schema.equals(with_settings(REJECT_SCHEMA, settings), check_metadata=True)
    df = pd.read_parquet(out / "articles")
    assert len(df) == run["summary"].articles_written and str(df["fetched_at"].dtype) == "datetime64[us, UTC]"
    n, sites = duckdb.sql(f"SELECT count(*), count(DISTINCT site) FROM '{out}/articles/*.parquet'").fetchall()[0]
    assert (n, sites) == (run["summary"].articles_written, 2)
    by_reason = dict(duckdb.sql(f"SELECT reason, count(*) FROM '{out}/rejects/*.parquet' GROUP BY reason").fetchall())
    assert by_reason == run["summary"].rejects


def test_empty_output_is_a_readable_parquet_file(tmp_path):
    write_warc(tmp_path / "warc" / "s" / "c" / "only-404.warc.gz", "s", "c",
               [Response("http://s.test/gone", b"gone", status=404, headers=HTML_CT)])
    summary = run_clean(CleanConfig(warc=str(tmp_path / "warc"), out=str(tmp_path / "out")))
    assert (summary.records_read, summary.articles_written, summary.rejects) == (1, 0, {"http_status": 1})
    files = sorted((tmp_path / "out" / "articles").glob("*.parquet"))
    assert len(files) == 1
    table = pq.read_table(files[0])
    assert table.num_rows == 0 and table.schema.equals(with_settings(ARTICLE_SCHEMA, summary.settings),
                                                       check_metadata=True)
    assert len(pd.read_parquet(files[0])) == 0
    assert duckdb.sql(f"SELECT count(*) FROM '{files[0]}'").fetchall()[0] == (0,)


def test_stage_labels_are_stable(tmp_path):
    import apache_beam as beam

    p = beam.Pipeline()
    build_pipeline(p, [str(tmp_path / "*.warc.gz")], CleanConfig(warc="x", out=str(tmp_path)))
    top = [t.full_label for t in p.transforms_stack[0].parts]
    for label in ("ReadWarc", "FilterResponses", "LearnSiteEvidence", "CleanPages", "DedupExact",
                  "CollectRejects", "WriteParquet", "WriteCounts"):
        assert label in top
