"""The pipeline keeps page HTML and article text out of its shuffles.

The neighbour sample is chosen from references (SHA-1 of the URL, WARC file, offset) and the sampled pages are
read again by offset; articles wait in ``OUT/_spill`` while dedup decides on small keys. These tests check that
the re-read finds the very records the sequential reader yields, and that the rows are those of the plain
per-page functions run on every page in memory.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from warc_builder import Response, article_page, paragraph, write_warc

from newsclean.pipeline import stages
from newsclean.pipeline.clean import run_clean
from newsclean.pipeline.options import CleanConfig
from newsclean.pipeline.stages import evidence_for_key, read_pages_at, read_sample, url_hash
from newsclean.pipeline.warc_reader import iter_warc_file
from newsclean.schemas.records import Page
from newsclean.transforms.chain import CONFIGS, DEFAULT_CONFIG

T0 = datetime(2017, 6, 1, 9, 0, tzinfo=UTC)


def _responses(n: int) -> list[Response]:
    """``n`` pages, every other one with a metadata record of sitemap facts after it, one in Latin-1."""
    out = []
    for i in range(n):
        html = article_page("alpha", "news", f"Story {i}", [paragraph(10 * i + j) for j in range(3)])
        body, headers = html.encode("utf-8"), [("Content-Type", "text/html; charset=utf-8")]
        if i == 2:
            body, headers = html.encode("latin-1", "replace"), [("Content-Type", "text/html; charset=iso-8859-1")]
        meta = [("sitemap-title", f"Title {i}")] if i % 2 else None
        out.append(Response(f"http://alpha.test/news/{i}.html", body, headers=headers,
                            date=T0 + timedelta(minutes=i), metadata=meta))
    return out


@pytest.fixture(params=["warc.gz", "warc"])
def warc_file(request, tmp_path) -> Path:
    path = write_warc(tmp_path / "a.warc.gz", "alpha", "news", _responses(5))
    if request.param == "warc":  # the same records uncompressed: offsets are then record starts in the plain file
        plain = tmp_path / "a.warc"
        plain.write_bytes(gzip.decompress(path.read_bytes()))
        path.unlink()
        return plain
    return path


def test_read_pages_at_finds_the_records_the_reader_yields(warc_file):
    pages = [p for p in iter_warc_file(str(warc_file)) if isinstance(p, Page)]
    assert len(pages) == 5 and len({p.provenance.offset for p in pages}) == 5
    wanted = [(p.provenance.offset, url_hash(p.url)) for p in (pages[3], pages[0], pages[4])]
    found = read_pages_at(str(warc_file), wanted)
    assert sorted(found) == sorted(wanted)
    for page in (pages[0], pages[3], pages[4]):
        again = found[page.provenance.offset, url_hash(page.url)]
        assert (again.url, again.html, again.charset) == (page.url, page.html, page.charset)
        assert again.sitemap_title == page.sitemap_title  # the metadata record after it is still read
    assert pages[3].sitemap_title == "Title 3"


def test_read_pages_at_leaves_out_an_offset_that_is_no_response(warc_file):
    pages = [p for p in iter_warc_file(str(warc_file)) if isinstance(p, Page)]
    assert read_pages_at(str(warc_file), [(0, url_hash(pages[0].url))]) == {}  # offset 0 is the warcinfo record


def test_a_warc_gzipped_whole_samples_each_page_once(tmp_path):
    """A ``.warc.gz`` compressed as one gzip member: its records share the member's offset, and the sample still
    reads each sampled page, not the member's first page for all of them."""
    path = write_warc(tmp_path / "a.warc.gz", "alpha", "news", _responses(5))
    path.write_bytes(gzip.compress(gzip.decompress(path.read_bytes())))
    pages = [p for p in iter_warc_file(str(path)) if isinstance(p, Page)]
    assert len(pages) == 5 and {p.provenance.offset for p in pages} == {0}
    refs = [(url_hash(p.url), str(path), 0) for p in pages[1:4]]
    assert read_sample(refs) == sorted((url_hash(p.url), p.html, p.charset) for p in pages[1:4])


def test_read_sample_gives_the_entries_in_the_order_of_the_full_sample(warc_file):
    pages = [p for p in iter_warc_file(str(warc_file)) if isinstance(p, Page)]
    refs = [(hashlib.sha1(p.url.encode()).hexdigest(), str(warc_file), p.provenance.offset) for p in pages[1:4]]
    expected = sorted((hashlib.sha1(p.url.encode()).hexdigest(), p.html, p.charset) for p in pages[1:4])
    assert read_sample(list(reversed(refs))) == expected
    assert read_sample(refs + [(refs[0][0], str(warc_file.parent / "gone.warc.gz"), 0)]) == expected


def _sample_refs(warc_file, n):
    pages = [p for p in iter_warc_file(str(warc_file)) if isinstance(p, Page)][:n]
    return [(hashlib.sha1(p.url.encode()).hexdigest(), str(warc_file), p.provenance.offset) for p in pages]


def _read_sample_fn(chain):
    fn = stages.ReadSampleFn(CONFIGS[chain])
    fn.setup()
    return fn


@pytest.mark.parametrize("chain", ["default", "paper"])
def test_a_one_page_sample_is_not_read_and_learns_what_its_page_would_teach(warc_file, monkeypatch, chain):
    """A (site, category) with one page learns no keys and no profile from it (static noise needs two pages),
    so the page is not read again; its signature equals the one learnt from the page itself."""
    one = _sample_refs(warc_file, 1)
    config = CONFIGS[chain]
    from_page = evidence_for_key(("alpha", "news"), read_sample(one), config)[1]
    assert not from_page.static.keys and from_page.profile is None
    monkeypatch.setattr(stages, "read_sample", lambda refs: pytest.fail("a one-page sample was read again"))
    [(key, entries)] = _read_sample_fn(chain).process((("alpha", "news"), iter(one)))
    assert key == ("alpha", "news") and entries == []
    skipped = evidence_for_key(key, entries, config)[1]
    assert (skipped.static.keys, skipped.profile, bool(skipped)) == (from_page.static.keys, from_page.profile, bool(from_page))


def test_a_sample_of_two_pages_is_read_and_learnt_from(warc_file):
    two = _sample_refs(warc_file, 2)
    [(_, entries)] = _read_sample_fn("default").process((("alpha", "news"), iter(two)))
    assert entries == read_sample(two) and len(entries) == 2
    assert evidence_for_key(("alpha", "news"), entries, DEFAULT_CONFIG)[1].static.keys  # the shared layout is static


def test_a_chain_that_learns_from_one_page_reads_it(warc_file):
    """``StaticNoiseParams(min_pages=1)`` learns every node of a single page: that page must be read."""
    config = DEFAULT_CONFIG.with_(static=dataclasses.replace(DEFAULT_CONFIG.static, min_pages=1))
    assert stages.needs_reading(_sample_refs(warc_file, 1), config)
    assert not stages.needs_reading(_sample_refs(warc_file, 1), DEFAULT_CONFIG)
    assert not stages.needs_reading(_sample_refs(warc_file, 3), DEFAULT_CONFIG.with_(static=None))


# --- what the runner holds: fusion of the graph ------------------------------------------------------


def _fused_stages(tmp_path) -> list[set[str]]:
    """The transform names of each stage Beam's FnApiRunner (the DirectRunner) executes for the cleaning graph.

    Whatever crosses from one stage to another is held by the runner; within a stage elements stream.
    """
    import apache_beam as beam
    from apache_beam.runners.portability.fn_api_runner import fn_runner

    from newsclean.pipeline.clean import build_pipeline

    p = beam.Pipeline()
    build_pipeline(p, [str(tmp_path / "*.warc.gz")], CleanConfig(warc="x", out=str(tmp_path / "out")))
    runner = fn_runner.FnApiRunner()
    _, stages = runner.create_stages(p.to_runner_api(default_environment=runner._default_environment))  # noqa: SLF001
    return [{t.unique_name for t in stage.transforms} for stage in stages]


def _stage_of(stages: list[set[str]], part: str) -> int:
    found = [i for i, names in enumerate(stages) if any(part in n for n in names)]
    assert len(found) == 1, f"{part}: in stages {found}"
    return found[0]


def test_pages_are_read_cleaned_and_spilled_in_one_stage(tmp_path):
    """No page HTML crosses a stage boundary: reading, filtering, cleaning, spilling the article rows and
    making the dedup keys are one fused stage (before, the sample's read shared the files' spread step, which
    kept the cleaning out of it, and the runner held every page)."""
    stages = _fused_stages(tmp_path)
    read = _stage_of(stages, "ReadWarc/ReadRecords")
    for part in ("FilterResponses/Classify", "CleanPages/Extract", "SpillArticles/Write/Write/WriteImpl/WriteBundles",
                 "DedupKeys"):
        assert _stage_of(stages, part) == read, part
    assert _stage_of(stages, "LearnSiteEvidence/ReadSample") != read


def test_spilled_articles_are_filtered_and_written_in_one_stage(tmp_path):
    """No article text crosses a stage boundary after the spill: reading it back, dropping exact and near
    duplicates, writing the rows and writing each kept article's index row (its fields and the MinHash it carries
    from the spill, no join by article id) are one fused stage."""
    stages = _fused_stages(tmp_path)
    back = _stage_of(stages, "ReadSpilled/Read/ReadAllFiles/ReadAllFiles/ReadRange")
    for part in ("ReadSpilled/KeepWinners", "NearDedup/AssignClusters", "WriteParquet/WriteArticles/Write/WriteImpl/WriteBundles",
                 "WriteIndex/IndexFields"):
        assert _stage_of(stages, part) == back, part
    assert _stage_of(stages, "WriteIndex/WriteIndexFiles/Write/WriteImpl/WriteBundles") == back


def test_local_runs_never_try_prism(tmp_path, monkeypatch):
    """Beam's DirectRunner first tries its Prism runner, which downloads a binary from github.com: a local run
    (default runner or ``--runner DirectRunner``) must run on the FnApiRunner straight away (no network, the runner
    every local figure was measured on), and still give the run's rows."""
    from apache_beam.runners.portability import prism_runner

    tried = []
    monkeypatch.setattr(prism_runner.PrismRunner, "run_pipeline",
                        lambda self, *a, **k: tried.append(1) or (_ for _ in ()).throw(RuntimeError("no prism")))
    write_warc(tmp_path / "warc" / "alpha" / "news" / "alpha-news-00000.warc.gz", "alpha", "news", _responses(3))
    summary = run_clean(CleanConfig(warc=str(tmp_path / "warc"), out=str(tmp_path / "out")),
                        ["--runner", "DirectRunner", "--direct_running_mode", "in_memory"])
    assert tried == []
    assert summary.articles_written == 3
