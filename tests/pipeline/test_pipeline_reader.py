"""The WARC reader (newsclean.pipeline.warc_reader) and the per-element stage functions, without Beam."""

from __future__ import annotations

import gzip
import io
import os
import uuid
import zlib
from datetime import UTC, datetime
from pathlib import Path

import pytest
from repo import SHARED_DATA
from warc_builder import Response, article_page, paragraph, write_warc
from warcio.archiveiterator import ArchiveIterator as WarcioIterator

from newsclean.pipeline.clean import globstar_variants, resolve_warc_patterns
from newsclean.pipeline.dedup_decisions import pick_winner
from newsclean.pipeline.errors import NoInputError
from newsclean.pipeline.output import prepare_output
from newsclean.pipeline.stages import (
    article_id,
    classify_response,
    clean_page,
    looks_like_html,
)
from newsclean.pipeline.warc_reader import (
    MAX_BODY_BYTES,
    ContentDecodingError,
    ReadStats,
    decode_content_encoding,
    folder_category,
    iter_warc_file,
    parse_content_type,
    parse_warc_date,
)
from newsclean.schemas.records import Article, Page, Provenance, Reject

CC_SAMPLE = SHARED_DATA / "warc-samples" / "warcfile.warc.gz"

HTML = article_page("alpha", "politics", "A title", [paragraph(i) for i in range(3)]).encode()


def _read(path: Path) -> tuple[list, ReadStats]:
    stats = ReadStats()
    return list(iter_warc_file(str(path), stats=stats)), stats


# --- the real Common Crawl sample ------------------------------------------------------------


@pytest.mark.shared_data
@pytest.mark.skipif(not CC_SAMPLE.exists(), reason=f"{CC_SAMPLE} not present (needs ../shared/data)")
def test_reads_real_common_crawl_sample():
    items, stats = _read(CC_SAMPLE)
    # The sample holds 16 response records (its README); request and metadata records are skipped.
    assert stats.records_read == 16 and stats.pages == 16 and stats.rejects == 0
    assert all(isinstance(p, Page) for p in items)
    with open(CC_SAMPLE, "rb") as f:
        it = WarcioIterator(f)
        expected = [(r.rec_headers.get_header("WARC-Record-ID"), it.get_record_offset(),
                     r.rec_headers.get_header("WARC-Target-URI"))
                    for r in it if r.rec_type == "response"]
    assert [(p.provenance.record_id, p.provenance.offset, p.url) for p in items] == expected
    for page in items:
        assert page.fetched_at.tzinfo is not None and page.fetched_at.utcoffset().total_seconds() == 0
        assert page.status == 200 and page.content_type == "text/html" and page.html
        assert page.provenance.warc_file == str(CC_SAMPLE)
    charsets = {p.url: p.charset for p in items}
    assert charsets["http://01spb.ru/company/"] == "windows-1251"
    assert charsets["http://003338.cn/l41/481397.html"] is None
    assert items[0].fetched_at == datetime(2020, 8, 8, 17, 27, 41, tzinfo=UTC)


# --- synthetic files ---------------------------------------------------------------------------


def test_page_fields_and_content_encodings(tmp_path):
    import brotli

    deflate = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    responses = [
        Response("http://alpha.test/p/plain.html", HTML,
                 headers=[("Content-Type", 'text/html; Charset="ISO-8859-1"')],
                 date=datetime(2024, 5, 1, 12, 30, 15, tzinfo=UTC)),
        Response("http://alpha.test/p/gzip.html", gzip.compress(HTML),
                 headers=[("Content-Type", "text/html"), ("Content-Encoding", "gzip")]),
        Response("http://alpha.test/p/zlib.html", zlib.compress(HTML),
                 headers=[("Content-Type", "text/html"), ("Content-Encoding", "deflate")]),
        Response("http://alpha.test/p/raw-deflate.html", deflate.compress(HTML) + deflate.flush(),
                 headers=[("Content-Type", "text/html"), ("Content-Encoding", "deflate")]),
        Response("http://alpha.test/p/br.html", brotli.compress(HTML),
                 headers=[("Content-Type", "text/html"), ("Content-Encoding", "br")]),
    ]
    path = write_warc(tmp_path / "alpha" / "politics" / "f.warc.gz", "alpha", "politics", responses)
    pages, stats = _read(path)
    assert stats == ReadStats(records_read=5, pages=5, rejects=0)
    assert [p.url for p in pages] == [r.url for r in responses]
    assert all(p.html == HTML for p in pages)
    first = pages[0]
    assert (first.site, first.category, first.status) == ("alpha", "politics", 200)
    assert (first.content_type, first.charset) == ("text/html", "ISO-8859-1")
    assert first.fetched_at == datetime(2024, 5, 1, 12, 30, 15, tzinfo=UTC)
    with open(path, "rb") as f:
        it = WarcioIterator(f)
        offsets = [it.get_record_offset() for r in it if r.rec_type == "response"]
    assert [p.provenance.offset for p in pages] == offsets


def test_undecodable_records_become_decode_error_rejects(tmp_path):
    responses = [
        Response("http://alpha.test/p/bad-gzip.html", b"not gzip at all",
                 headers=[("Content-Type", "text/html"), ("Content-Encoding", "gzip")]),
        Response("http://alpha.test/p/compress.html", HTML,
                 headers=[("Content-Type", "text/html"), ("Content-Encoding", "compress")]),
        Response("http://alpha.test/p/truncated-gzip.html", gzip.compress(HTML)[:40],
                 headers=[("Content-Type", "text/html"), ("Content-Encoding", "gzip")]),
        Response("http://alpha.test/p/ok.html", HTML),
    ]
    path = write_warc(tmp_path / "alpha" / "politics" / "f.warc.gz", "alpha", "politics", responses)
    items, stats = _read(path)
    assert stats == ReadStats(records_read=4, pages=1, rejects=3)
    rejects = [i for i in items if isinstance(i, Reject)]
    assert [(r.url, r.stage, r.reason) for r in rejects] == [
        (responses[i].url, "decode", "decode_error") for i in range(3)]
    assert "unsupported Content-Encoding 'compress'" in rejects[1].message
    assert all(r.warc_record_id.startswith("<urn:uuid:") and r.warc_offset > 0 for r in rejects)


def _raw_record(body: bytes, *, date: str | None = "2024-01-02T03:04:05Z", uri: str | None = "http://x.test/a") -> bytes:
    """One gzipped WARC response record with an arbitrary (possibly broken) HTTP block."""
    head = ["WARC/1.0", "WARC-Type: response", f"WARC-Record-ID: <urn:uuid:{uuid.uuid4()}>"]
    if date:
        head.append(f"WARC-Date: {date}")
    if uri:
        head.append(f"WARC-Target-URI: {uri}")
    head += ["Content-Type: application/http; msgtype=response", f"Content-Length: {len(body)}"]
    return gzip.compress(("\r\n".join(head) + "\r\n\r\n").encode() + body + b"\r\n\r\n")


def test_broken_http_and_missing_headers_are_rejected_not_raised(tmp_path):
    ok = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html><body>hi</body></html>"
    path = tmp_path / "s" / "c" / "raw.warc.gz"
    path.parent.mkdir(parents=True)
    path.write_bytes(
        _raw_record(b"\x00\x01 garbage, no HTTP status line")
        + _raw_record(b"HTTP/1.1 abc OK\r\nContent-Type: text/html\r\n\r\nbody")
        + _raw_record(ok, date=None)
        + _raw_record(ok, uri=None)
        + _raw_record(ok, date="2024-01-02")  # W3C-DTF date-only precision is valid
    )
    items, stats = _read(path)
    assert stats == ReadStats(records_read=5, pages=1, rejects=4)
    reasons = [(type(i).__name__, getattr(i, "stage", None)) for i in items]
    assert reasons == [("Reject", "read")] * 4 + [("Page", None)]
    assert "status line" in items[0].message and "WARC-Date" in items[2].message
    assert items[4].fetched_at == datetime(2024, 1, 2, tzinfo=UTC)
    assert (items[4].site, items[4].category) == ("x.test", "unknown")  # from the URL, not the folder names


def test_unreadable_file_remainder_is_one_reject(tmp_path):
    good = write_warc(tmp_path / "a" / "b" / "good.warc.gz", "a", "b",
                      [Response(f"http://a.test/{i}", HTML) for i in range(3)])
    data = good.read_bytes()
    corrupt = tmp_path / "a" / "b" / "corrupt.warc.gz"
    corrupt.write_bytes(data + b"\x1f\x8b\x08\x00" + b"\x00" * 64)  # a broken gzip member at the end
    garbage = tmp_path / "a" / "b" / "garbage.warc.gz"
    garbage.write_bytes(b"this is not a WARC file\n" * 20)
    items, stats = _read(corrupt)
    assert stats == ReadStats(records_read=4, pages=3, rejects=1)
    assert isinstance(items[-1], Reject) and items[-1].warc_record_id == "" and items[-1].stage == "read"
    items, stats = _read(garbage)
    assert stats == ReadStats(records_read=1, pages=0, rejects=1)
    assert "no WARC record" in items[0].message and items[0].reason == "not_warc"


def test_site_and_category_fallbacks(tmp_path):
    r = [Response("http://www.a-news.co.uk/world/1.html", HTML)]
    by_header = write_warc(tmp_path / "x" / "y" / "h.warc.gz", "alpha", "politics", r)
    by_info = write_warc(tmp_path / "x" / "y" / "i.warc.gz", "beta", "sports", r, newsclean_headers="warcinfo")
    by_path = write_warc(tmp_path / "x" / "y" / "p.warc.gz", "gamma", "world", r, newsclean_headers="none")
    got = [(p.site, p.category) for f in (by_header, by_info, by_path) for p in _read(f)[0]]
    assert got == [("alpha", "politics"), ("beta", "sports"), ("www.a-news.co.uk", "world")]  # no headers: the URL


# --- small pure helpers --------------------------------------------------------------------------


def test_decode_content_encoding():
    assert decode_content_encoding(gzip.compress(b"a") + gzip.compress(b"b"), "gzip") == b"ab"
    assert decode_content_encoding(gzip.compress(zlib.compress(b"x")), "deflate, gzip") == b"x"
    assert decode_content_encoding(b"plain", None) == b"plain"
    assert decode_content_encoding(b"plain", "identity") == b"plain"
    assert decode_content_encoding(b"", "gzip") == b""
    with pytest.raises(ContentDecodingError):
        decode_content_encoding(b"zz", "gzip")
    with pytest.raises(ContentDecodingError, match="exceeds"):
        decode_content_encoding(gzip.compress(b"\0" * (MAX_BODY_BYTES + 1)), "gzip")


def test_parse_helpers():
    assert parse_content_type('Text/HTML; charset="utf-8"; q=1') == ("text/html", "utf-8")
    assert parse_content_type(None) == ("", None)
    assert parse_content_type("image/png") == ("image/png", None)
    assert parse_warc_date("2024-01-02T03:04:05.5Z") == datetime(2024, 1, 2, 3, 4, 5, 500000, tzinfo=UTC)
    assert parse_warc_date("yesterday") is None
    layout = "alpha/politics/alpha-politics-20240501T100000Z-00000.warc.gz"  # the crawler's folder layout
    assert folder_category("/data/warc/" + layout) == "politics" == folder_category("gs://bucket/" + layout)
    assert folder_category("/data/warc/alpha/politics/x.warc.gz") is None  # folders of some other layout
    assert folder_category("gs://bucket/politics/x.warc.gz") is None and folder_category("x.warc.gz") is None
    assert folder_category("/w/a/arts-&amp;-more/a-arts-&amp;-more-1.warc.gz") == "arts-&-more"


def _page(url="http://a.test/1", status=200, content_type="text/html", html=HTML, fetched=12, page_type=None) -> Page:
    return Page(url=url, site="a", category="c", fetched_at=datetime(2024, 1, 1, fetched, tzinfo=UTC),
                status=status, content_type=content_type, charset=None, html=html,
                provenance=Provenance("/w/f.warc.gz", "<urn:uuid:1>", 0), page_type=page_type)


def test_classify_response():
    assert classify_response(_page()) is None
    assert classify_response(_page(page_type="article")) is None
    assert classify_response(_page(page_type="listing"))[0].value == "not_article"
    assert classify_response(_page(page_type="feed"))[0].value == "not_article"
    assert classify_response(_page(page_type="other", content_type="image/png"))[0].value == "not_html"
    assert classify_response(_page(status=404))[0].value == "http_status"
    assert classify_response(_page(content_type="image/png"))[0].value == "not_html"
    assert classify_response(_page(html=b" \n "))[0].value == "empty_body"
    assert classify_response(_page(content_type="application/xhtml+xml")) is None
    assert classify_response(_page(content_type="")) is None  # sniffed as HTML
    assert classify_response(_page(content_type="", html=b"\x89PNG..."))[0].value == "not_html"
    assert looks_like_html(b"\xef\xbb\xbf  <!DOCTYPE html><html>")


def test_clean_page_never_raises(monkeypatch):
    from newsclean.transforms.chain import DEFAULT_CONFIG

    out = clean_page(_page(), None, DEFAULT_CONFIG)
    assert isinstance(out, Article) and out.article_id == article_id(out.url, out.content_hash)
    short = clean_page(_page(html=b"<html><body><p>Too short.</p></body></html>"), None, DEFAULT_CONFIG)
    assert isinstance(short, Reject) and short.stage == "clean" and short.reason in ("too_short", "no_content")
    empty = clean_page(_page(html=b"   "), None, DEFAULT_CONFIG)
    assert (empty.stage, empty.reason) == ("decode", "empty_body")

    def boom(*a, **k):
        raise KeyError("surprise")

    monkeypatch.setattr("newsclean.pipeline.stages.extract_article", boom)
    out = clean_page(_page(), None, DEFAULT_CONFIG)
    assert isinstance(out, Reject) and out.reason == "internal_error" and out.stage == "clean"
    assert out.message == "KeyError: 'surprise'"


def test_pick_winner_is_earliest_fetch_then_url():
    from newsclean.transforms.chain import DEFAULT_CONFIG

    def art(url, hour):
        return clean_page(_page(url=url, fetched=hour), None, DEFAULT_CONFIG)

    early_z, late_a, early_a = art("http://z.test/", 9), art("http://a.test/", 10), art("http://a.test/", 9)
    assert pick_winner(late_a, early_z) is early_z
    assert pick_winner(early_z, early_a) is early_a
    assert pick_winner(None, late_a) is late_a


# --- --warc patterns and output preparation ------------------------------------------------------


def test_globstar_variants():
    assert globstar_variants("/w/**/*.warc.gz") == ["/w/**/*.warc.gz", "/w/*.warc.gz"]
    assert globstar_variants("/w/*.warc.gz") == ["/w/*.warc.gz"]
    assert len(globstar_variants("/w/**/x/**/*.gz")) == 4


def test_resolve_warc_patterns(tmp_path, monkeypatch):
    r = [Response("http://a.test/1", HTML)]
    write_warc(tmp_path / "warc" / "top.warc.gz", "a", "b", r)
    write_warc(tmp_path / "warc" / "a" / "b" / "deep.warc.gz", "a", "b", r)
    from apache_beam.io.filesystems import FileSystems

    def matched(patterns):
        return sorted(os.path.basename(m.path) for res in FileSystems.match(patterns) for m in res.metadata_list)

    monkeypatch.chdir(tmp_path)
    assert matched(resolve_warc_patterns("warc")) == ["deep.warc.gz", "top.warc.gz"]
    assert sorted(set(matched(resolve_warc_patterns("warc/**/*.warc.gz")))) == ["deep.warc.gz", "top.warc.gz"]
    assert matched(resolve_warc_patterns("warc/*/*/*.warc.gz")) == ["deep.warc.gz"]
    assert matched(resolve_warc_patterns("warc/top.warc.gz")) == ["top.warc.gz"]
    assert all(os.path.isabs(p) for p in resolve_warc_patterns("warc"))
    with pytest.raises(NoInputError, match="matches no WARC file"):
        resolve_warc_patterns("nowhere/**/*.warc.gz")


def test_a_directory_means_gzipped_and_uncompressed_warc_files(tmp_path):
    # Foreign crawls (wget --warc-file --no-warc-compression, some archives) write plain .warc; a crawl in
    # progress leaves .warc.gz.open files, which must not be read.
    r = [Response("http://a.test/1", HTML)]
    write_warc(tmp_path / "top.warc.gz", "a", "b", r)
    plain = tmp_path / "a" / "plain.warc"
    plain.parent.mkdir()
    plain.write_bytes(gzip.decompress((tmp_path / "top.warc.gz").read_bytes()))
    (tmp_path / "a" / "busy.warc.gz.open").write_bytes(b"x")
    (tmp_path / "a" / "notes.txt").write_text("x")
    from apache_beam.io.filesystems import FileSystems

    found = [m.path for res in FileSystems.match(resolve_warc_patterns(str(tmp_path))) for m in res.metadata_list]
    assert sorted(os.path.basename(p) for p in found) == ["plain.warc", "top.warc.gz"]


def test_prepare_output_keeps_earlier_outputs_and_drops_stale_staging(tmp_path):
    # Earlier outputs are replaced only when a new run succeeds (pipeline/output.py); a killed run's staging goes.
    for rel in ("articles/part-00000-of-00002.parquet", "rejects/old.parquet", "_counts/counts.jsonl",
                "_summary.json", "warc/keep.warc.gz", "notes.txt", "_staging-0123/articles/beam-temp-x/p.parquet"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    prepare_output(str(tmp_path))
    left = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert left == ["_counts/counts.jsonl", "_summary.json", "articles/part-00000-of-00002.parquet", "notes.txt",
                    "rejects/old.parquet", "warc/keep.warc.gz"]


def test_reader_takes_the_page_type_header(tmp_path):
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    path = tmp_path / "s" / "c" / "f.warc.gz"
    path.parent.mkdir(parents=True)
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for url, kind in (("http://a.test/", "listing"), ("http://a.test/story", "article")):
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
            rec = writer.create_warc_record(url, "response", payload=io.BytesIO(HTML), length=len(HTML),
                                            http_headers=http, warc_headers_dict={"WARC-Newsclean-Page-Type": kind})
            writer.write_record(rec)
    pages = list(iter_warc_file(str(path)))
    assert [(p.url, p.page_type) for p in pages] == [("http://a.test/", "listing"), ("http://a.test/story", "article")]


def test_a_plain_warc_cut_before_its_last_record_ends_is_a_truncated_record(tmp_path):
    # fastwarc stops silently in an uncompressed file cut inside a record; the reader checks the tail itself.
    write_warc(tmp_path / "t.warc.gz", "a", "b", [Response("http://a.test/1", HTML), Response("http://a.test/2", HTML)])
    data = gzip.decompress((tmp_path / "t.warc.gz").read_bytes())

    def reasons(blob: bytes) -> list[str]:
        stats = ReadStats()
        items = list(iter_warc_file("t.warc", io.BytesIO(blob), stats))
        assert stats.records_read == len(items)
        return [getattr(item, "reason", "page") for item in items]

    assert reasons(data) == ["page", "page"]
    assert reasons(data + b"\r\n\r\n") == ["page", "page"]  # trailing blank lines are no record
    assert reasons(data[:-3]) == ["page", "page", "truncated_record"]  # cut in the closing CRLF CRLF
    assert reasons(data[:-60]) == ["page", "truncated_record"]  # cut in the last response's payload


def test_a_warc_name_with_glob_characters_is_taken_literally(tmp_path):
    """A file or folder that exists is read as named before ``--warc`` is taken as a glob: ``w[1]/a[1]*?.warc.gz``
    as a glob names ``w1/a1?....warc.gz``, the decoy here, and not itself (Beam's patterns cannot quote)."""
    from apache_beam.io.filesystems import FileSystems

    from newsclean.pipeline.clean import run_clean
    from newsclean.pipeline.options import CleanConfig

    pages = [Response(f"http://a.test/b/{i}.html", article_page("a", "b", f"T {i}", [paragraph(i)]).encode())
             for i in range(2)]
    odd = write_warc(tmp_path / "w[1]" / "a[1]*?.warc.gz", "a", "b", pages)
    write_warc(tmp_path / "w1" / "a1xy.warc.gz", "a", "b", pages[:1])  # what the name means as a glob

    def matched(warc: str) -> list[str]:
        return sorted(m.path for r in FileSystems.match(resolve_warc_patterns(warc)) for m in r.metadata_list)

    assert matched(str(odd)) == [str(odd)]  # before: [".../w1/a1xy.warc.gz"]
    assert matched(str(odd.parent)) == [str(odd)]  # a folder with such a name: every WARC file below it
    for warc, extra in ((str(odd), ["--runner", "DirectRunner"]), (str(odd.parent), [])):
        for incremental, batch_bytes in ((False, 1), (True, 128 << 20)):  # batches of one file; a run plan's paths
            out = tmp_path / f"out-{len(extra)}-{incremental}"
            summary = run_clean(CleanConfig(warc=warc, out=str(out), incremental=incremental, batch_bytes=batch_bytes),
                                extra)
            assert summary.records_read == 2 and summary.balanced, (warc, incremental, summary.to_dict())
