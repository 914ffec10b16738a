"""Incremental runs: only new WARC files are cleaned, rows are appended, dedup (exact and near) and
versions are against the corpus already built, and a run with nothing new costs nothing."""

from __future__ import annotations

import dataclasses
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from warc_builder import Response, article_page, paragraph, write_warc

from newsclean.pipeline.clean import run_clean
from newsclean.pipeline.incremental import index_row, read_index, read_manifest, read_runs
from newsclean.pipeline.options import CleanConfig
from newsclean.schemas.records import Article, from_row

T0 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
DAY2 = T0 + timedelta(days=1)


def _paragraphs(seed: int) -> list[str]:
    return [paragraph(seed * 100 + j) for j in range(6)]  # about 280 words: 3 changed words keep J > 0.8


def _page(url: str, title: str, paras: list[str], date: datetime) -> Response:
    return Response(url, article_page("alpha", "news", title, paras).encode(), date=date)


def _edit(paras: list[str]) -> list[str]:
    """Three words of the second paragraph changed."""
    words = paras[1].split()
    for i in (5, 15, 25):
        words[i] = "changedword"
    return [paras[0], " ".join(words), *paras[2:]]


def _warc(root: Path, name: str, pages: list[Response]) -> Path:
    return write_warc(root / "alpha" / "news" / f"alpha-news-{name}.warc.gz", "alpha", "news", pages)


def _articles(out: Path) -> list[dict]:
    return pq.read_table(out / "articles").to_pylist()


def _clean(warc: Path, out: Path, incremental: bool = True):
    return run_clean(CleanConfig(warc=str(warc), out=str(out), incremental=incremental), ["--runner", "DirectRunner"])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("incr")
    warc, out = root / "warc", root / "out"
    first = [_page(f"http://alpha.test/news/story-{i}.html", f"Story {i}", _paragraphs(i), T0 + timedelta(minutes=i))
             for i in range(4)]
    _warc(warc, "20240501T100000Z-00000", first[:2])
    _warc(warc, "20240501T100000Z-00001", first[2:])
    s1 = _clean(warc, out)
    run1_files = sorted(p.name for p in (out / "articles").iterdir())
    s2 = _clean(warc, out)  # nothing new

    second = [
        _page("http://alpha.test/news/story-9.html", "Story 9", _paragraphs(9), DAY2),  # new article
        _page("http://wire.test/copy-of-0.html", "Story 0", _paragraphs(0), DAY2),  # exact copy of a corpus text
        _page("http://wire.test/near-copy-of-1.html", "Story 1", _edit(_paragraphs(1)), DAY2),  # near-duplicate
        _page("http://alpha.test/news/story-2.html", "Story 2", _edit(_paragraphs(2)), DAY2),  # same URL, changed
    ]
    _warc(warc, "20240502T100000Z-00000", second)
    shutil.copy(warc / "alpha" / "news" / "alpha-news-20240501T100000Z-00000.warc.gz",
                warc / "alpha" / "news" / "moved-copy.warc.gz")  # a file already cleaned, under another path
    s3 = _clean(warc, out)
    return {"out": out, "warc": warc, "s1": s1, "s2": s2, "s3": s3, "run1_files": run1_files,
            "runs": read_runs(str(out)), "manifest": read_manifest(str(out))}


def test_first_run_builds_the_corpus_and_the_manifest(runs):
    s1 = runs["s1"]
    assert s1.balanced and s1.records_read == 4 and s1.articles_written == 4
    first = runs["runs"][0]
    assert (first["files_cleaned"], first["files_skipped"], first["articles_added"]) == (2, 0, 4)


def test_a_run_with_nothing_new_cleans_nothing(runs):
    second = runs["runs"][1]
    assert (second["files_cleaned"], second["files_skipped"], second["records_read"]) == (0, 2, 0)
    assert runs["s2"].articles_written == 4 and runs["s2"].records_read == 4


def test_the_run_line_says_what_a_run_with_nothing_new_added(runs):
    from newsclean.pipeline.incremental import format_run

    line = format_run(runs["runs"][1])
    assert "0 WARC files cleaned, 2 skipped" in line and "0 records read, 0 articles and 0 rejects added" in line
    assert "3 skipped" in format_run(runs["runs"][2]) and "1 WARC files cleaned" in format_run(runs["runs"][2])


def test_the_console_of_a_run_with_nothing_new_says_it_read_nothing(runs, tmp_path, capsys):
    """Its first line says that this run read nothing; the corpus's figures follow, labelled as its total (before:
    "newsclean clean: 8 WARC response records read from ...", as if this run had read them)."""
    from newsclean.cli import main

    out = tmp_path / "out"
    shutil.copytree(runs["out"], out)
    capsys.readouterr()
    assert main(["clean", "--incremental", "--warc", str(runs["warc"]), "--out", str(out),
                 "--runner", "DirectRunner"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ("newsclean clean: nothing new read this run (0 records read; 4 WARC files already cleaned "
                        "into this output)")
    assert lines[1].startswith(f"  this run {read_runs(str(out))[-1]['run']}: 0 WARC files cleaned, 4 skipped")
    assert lines[2].startswith("corpus total (every run into this output): 8 WARC response records read from ")
    assert any(line.split() == ["articles", "written", "6"] for line in lines[3:]), lines  # the corpus's 6


def test_only_the_new_file_is_cleaned_and_appended(runs):
    third, out = runs["runs"][2], runs["out"]
    assert third["files_cleaned"] == 1 and third["files_skipped"] == 3  # the copied file is known by its digest
    assert third["records_read"] == 4
    files = sorted(p.name for p in (out / "articles").iterdir())
    assert set(runs["run1_files"]) <= set(files)  # earlier rows stay, untouched
    assert len(runs["manifest"]) == 3 and all(e["sha256"] for e in runs["manifest"])


def test_dedup_and_versions_against_the_corpus(runs):
    s3, out = runs["s3"], runs["out"]
    rows = _articles(out)
    urls = sorted(r["url"] for r in rows)
    assert "http://wire.test/copy-of-0.html" not in urls  # exact duplicate of a corpus row
    assert "http://wire.test/near-copy-of-1.html" not in urls  # near-duplicate of a corpus row
    assert "http://alpha.test/news/story-9.html" in urls
    story2 = sorted((r for r in rows if r["url"] == "http://alpha.test/news/story-2.html"), key=lambda r: r["version"])
    assert [r["version"] for r in story2] == [1, 2]  # a new version, although a near-duplicate of version 1
    assert story2[1]["first_seen"] == story2[0]["fetched_at"] == T0 + timedelta(minutes=2)
    assert story2[1]["last_seen"] == DAY2
    assert s3.duplicates == {"exact_duplicate": 1, "near_duplicate": 1}
    assert s3.articles_written == 6 and s3.records_read == 8 and s3.balanced  # the whole corpus
    dup = pq.read_table(out / "duplicates").to_pylist()
    kept_1 = next(r for r in rows if r["url"] == "http://alpha.test/news/story-1.html")
    kept_0 = next(r for r in rows if r["url"] == "http://alpha.test/news/story-0.html")
    assert sorted((d["url"], d["reason"], d["cluster_id"]) for d in dup) == [  # the exact one: before, counted only
        ("http://wire.test/copy-of-0.html", "exact_duplicate", kept_0["article_id"]),
        ("http://wire.test/near-copy-of-1.html", "near_duplicate", kept_1["article_id"])]
    assert sorted(read_index(str(out)).column("article_id").to_pylist()) == sorted(r["article_id"] for r in rows)


def test_each_index_row_holds_the_minhash_of_its_article_text(runs):
    from newsclean.pipeline.dedup_decisions import NearDupParams, signature_entry

    index = {r["article_id"]: r["signature"] for r in read_index(str(runs["out"])).to_pylist()}
    rows = _articles(runs["out"])
    assert sorted(index) == sorted(r["article_id"] for r in rows)
    for row in rows:  # carried through the spill, not recomputed
        assert index[row["article_id"]] == signature_entry(from_row(Article, row), NearDupParams()).signature


def test_a_full_run_replaces_corpus_and_manifest(runs, tmp_path):
    out = tmp_path / "full"
    shutil.copytree(runs["out"], out)
    s = _clean(runs["warc"], out, incremental=False)
    assert s.records_read == 10  # every file, the copied one too (2 + 2 + 4 + 2 records)
    assert len(read_runs(str(out))) == 1 and len(read_manifest(str(out))) == 4
    assert s.out == str(out) and "_staging-" not in (out / "_summary.json").read_text()  # not the staging folder


def test_other_hosts_are_other_settings_of_an_incremental_run(runs, tmp_path):
    from newsclean.pipeline.errors import SettingsMismatchError

    out = tmp_path / "hosts"
    shutil.copytree(runs["out"], out)
    runs_before = len(read_runs(str(out)))

    def incremental(**kwargs):
        return run_clean(CleanConfig(warc=str(runs["warc"]), out=str(out), incremental=True, **kwargs),
                         ["--runner", "DirectRunner"])

    # the corpus read every host; a run of one host would leave the cleaned files' other hosts as they are
    with pytest.raises(SettingsMismatchError, match=r'hosts null there, \["wire.test"\] now'):
        incremental(hosts=("www.wire.test",))
    assert len(read_runs(str(out))) == runs_before  # refused before anything was recorded
    summary = incremental(hosts=("wire.test",), allow_mixed_settings=True)  # as other settings: allowed when asked
    assert read_runs(str(out))[-1]["files_cleaned"] == 0 and summary.articles_written == len(_articles(out))


def test_an_index_row_takes_the_signature_its_article_carries():
    from newsclean.pipeline.dedup import spill_row, spilled_article
    from newsclean.pipeline.dedup_decisions import NearDupParams, keyed_article, signature_entry

    article = Article(article_id="a1", url="http://alpha.test/1", site="alpha", category="news", fetched_at=T0,
                      title=None, published_at=None, language="en", text=" ".join(f"w{i}" for i in range(40)),
                      html="<p></p>", word_count=40, content_hash="h", static_nodes_removed=0,
                      dynamic_nodes_removed=0, noninformative_nodes_removed=0, blocks_kept=1, blocks_total=1,
                      warc_file="a.warc.gz", warc_record_id="r", warc_offset=0)
    back = spilled_article(spill_row(keyed_article(article)))  # through the spill row, as ReadSpilled reads it
    minhash = signature_entry(article, NearDupParams()).signature
    assert back == (article, minhash)
    assert index_row(back) == {"article_id": "a1", "url": "http://alpha.test/1", "content_hash": "h", "version": 1,
                               "first_seen": T0, "last_seen": T0, "signature": minhash}


# --- a WARC file that grows: only its new records are read ------------------------------------------


def _append(path: Path, pages: list[Response]) -> int:
    """Append the records of ``pages`` (a request and a response each, one gzip member per record, no warcinfo) to
    the WARC file ``path``, as a crawler writing on into it does. Returns the file's size before."""
    import zlib

    tail = write_warc(path.with_name(path.name + ".tail"), "alpha", "news", pages)
    data = tail.read_bytes()
    tail.unlink()
    inflater = zlib.decompressobj(31)
    inflater.decompress(data)  # the first member: the warcinfo record
    size = path.stat().st_size
    with open(path, "ab") as f:
        f.write(data[len(data) - len(inflater.unused_data):])
    return size


@pytest.fixture(scope="module")
def grown(tmp_path_factory):
    root = tmp_path_factory.mktemp("grown")
    warc, out = root / "warc", root / "out"
    pages = [_page(f"http://alpha.test/news/story-{i}.html", f"Story {i}", _paragraphs(i), T0 + timedelta(minutes=i))
             for i in range(13)]
    path = _warc(warc, "20240501T100000Z-00000", pages)
    s1 = _clean(warc, out)
    first = {r["url"]: r for r in _articles(out)}
    again = dataclasses.replace(pages[3], date=DAY2)  # the same capture fetched again: same URL, same bytes
    changed = _page("http://alpha.test/news/story-5.html", "Story 5", _edit(_paragraphs(5)), DAY2)
    old_size = _append(path, [again, changed])
    s2 = _clean(warc, out)
    return {"out": out, "path": path, "old_size": old_size, "s1": s1, "s2": s2, "first": first,
            "runs": read_runs(str(out)), "manifest": read_manifest(str(out))}


def test_a_grown_file_is_read_from_its_old_end(grown):
    first, second = grown["runs"]
    assert first["records_read"] == 13
    assert (second["files_cleaned"], second["records_read"]) == (1, 2)  # before: 15, the whole file again
    assert grown["manifest"][-1]["start"] == grown["old_size"]
    s2 = grown["s2"]
    assert s2.records_read == 15 and s2.records_found == 15 and s2.balanced  # the corpus: 13 + 2, each read once


def test_a_grown_file_adds_only_its_new_versions(grown):
    rows = _articles(grown["out"])
    by_url: dict[str, list[int]] = {}
    for row in rows:
        by_url.setdefault(row["url"], []).append(row["version"])
    assert len(rows) == 14 and sorted(by_url) == sorted(grown["first"])  # 13 captures' rows, one changed text
    assert {url: sorted(v) for url, v in by_url.items() if v != [1]} == {"http://alpha.test/news/story-5.html": [1, 2]}
    old = {r["url"]: r for r in rows if r["version"] == 1}
    assert old == grown["first"]  # the first run's rows, untouched
    dup = pq.read_table(grown["out"] / "duplicates").to_pylist()
    assert [(d["url"], d["reason"], d["cluster_id"]) for d in dup] == [  # the capture fetched again: no version 2
        ("http://alpha.test/news/story-3.html", "exact_duplicate", grown["first"]["http://alpha.test/news/story-3.html"]
         ["article_id"])]


def test_a_grown_file_is_read_whole_unless_only_appended_to(tmp_path):
    from newsclean.pipeline.incremental import file_digest, grown_file

    pages = [_page(f"http://alpha.test/news/story-{i}.html", f"Story {i}", _paragraphs(i), T0) for i in range(3)]
    path = _warc(tmp_path, "a", pages[:2])
    cleaned = {"path": str(path), "size": path.stat().st_size, "sha256": file_digest(str(path))}
    size = _append(path, pages[2:])
    assert grown_file(str(path), path.stat().st_size, cleaned) == (file_digest(str(path)), size)
    assert grown_file(str(path), path.stat().st_size, {**cleaned, "sha256": None})[1] == 0  # no digest: whole
    data = bytearray(path.read_bytes())
    data[100] ^= 0xFF  # a byte of the old part changed
    path.write_bytes(bytes(data))
    assert grown_file(str(path), len(data), cleaned)[1] == 0
    cut = _warc(tmp_path, "b", pages[:2])
    whole = cut.read_bytes()
    cut.write_bytes(whole[:-40])  # cleaned while its last record was being written
    cleaned = {"path": str(cut), "size": len(whole) - 40, "sha256": file_digest(str(cut))}
    cut.write_bytes(whole)
    _append(cut, pages[2:])
    assert grown_file(str(cut), cut.stat().st_size, cleaned)[1] == 0  # no record starts at the old end
