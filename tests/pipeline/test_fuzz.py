"""Bounded fuzz: mutated WARC byte streams and mutated pages through the reader and the cleaner.

The generator is ``bench/fuzz_clean.py`` (the long run, ≥ 10,000 inputs through ``newsclean clean``,
lives there). Here a few hundred seeded inputs go through :func:`iter_warc_file`,
:func:`stages.classify_response`, :func:`learn_static_noise` and :func:`stages.clean_page` directly,
plus one small DirectRunner run. Pass = no exception escapes, and every record the reader counts
ends as exactly one article or reject (``articles + rejects + duplicates == records read``).
"""

from __future__ import annotations

import io
import random
from collections import Counter

import pytest
from bench_modules import bench_module

from newsclean.pipeline import stages
from newsclean.pipeline.warc_reader import ReadStats, check_read, item_offset, iter_warc_file
from newsclean.schemas.records import Page, Reject
from newsclean.transforms.chain import DEFAULT_CONFIG
from newsclean.transforms.parse import decode_html
from newsclean.transforms.site_evidence import learn_site_evidence

fuzz = bench_module("fuzz_clean")

pytest.importorskip("brotli")


def _read(data: bytes, name: str = "fuzz.warc.gz") -> tuple[list[Page | Reject], ReadStats]:
    stats = ReadStats()
    items = list(iter_warc_file(name, stream=io.BytesIO(data), stats=stats))
    return items, stats


def _clean_all(items: list[Page | Reject], learn: bool = False) -> Counter:
    """Articles and rejects (by reason) of what the reader gave, cleaned as the pipeline does (no dedup)."""
    out: Counter = Counter()
    pages = []
    for item in items:
        if isinstance(item, Reject):
            out["reject:" + item.reason] += 1
            continue
        verdict = stages.classify_response(item)
        if verdict is not None:
            out["reject:" + verdict[0].value] += 1
        else:
            pages.append(item)
    signature = None
    if learn and pages:  # hostile pages as each other's neighbours: learning must not raise either
        htmls = [decode_html(p.html, p.charset)[0] for p in pages[:10] if _decodes(p)]
        signature = learn_site_evidence(htmls)
    for page in pages:
        result = stages.clean_page(page, signature, DEFAULT_CONFIG)
        out["article" if not isinstance(result, Reject) else "reject:" + result.reason] += 1
    return out


def _decodes(page: Page) -> bool:
    try:
        decode_html(page.html, page.charset)
    except Exception:
        return False
    return True


def test_mutated_warc_streams_are_accounted_for():
    kinds: Counter = Counter()
    for seed in range(300):
        kind, data = fuzz.mutated_warc(random.Random(seed))
        kinds[kind] += 1
        name = "f.warc" if kind.endswith("_plain") else "f.warc.gz"
        items, stats = _read(data, name)
        assert stats.records_read == stats.pages + stats.rejects == len(items), (seed, kind, stats)
        check_read(name, stats, Counter(item_offset(i) for i in items), io.BytesIO(data))
        assert stats.missed == 0, (seed, kind, stats)  # the independent count finds nothing the reader missed
        outcome = _clean_all(items)
        assert sum(outcome.values()) == stats.records_read, (seed, kind, outcome)
    assert len(kinds) == 9, kinds  # every kind of damage was drawn


def _cuts(gz: bool):
    """Cuts of a 4-page WARC at 60 seeded offsets and 12 inside response headers: ``(cut, items, stats, responses started before the cut, at a
    record boundary)``."""
    rng = random.Random(11)
    data, bounds = fuzz._clean_stream(rng, 4, gz)
    responses = bounds[2::2]  # warcinfo, then request + response pairs
    assert len(responses) == 4
    header_cuts = {off + d for off in responses for d in (5, 15, 25)}  # inside a response's WARC header
    for cut in sorted(set(rng.sample(range(1, len(data)), 60)) | header_cuts):
        items, stats = _read(data[:cut], "t.warc.gz" if gz else "t.warc")
        yield cut, items, stats, sum(off < cut for off in responses), cut in bounds


@pytest.mark.parametrize("gz", [True, False], ids=["warc.gz", "warc"])
def test_truncated_streams_lose_no_started_record(gz):
    """Cut anywhere: every response record that started before the cut is read (as a page or a
    reject), plus at most one reject for the cut tail. (Before the reader also took fastwarc's
    ``no_type`` record for a cut header, a plain .warc cut in a response header lost the record.)"""
    for cut, _items, stats, started, _at_bound in _cuts(gz):
        assert started <= stats.records_read <= started + 1, (cut, stats)


@pytest.mark.parametrize("gz", [True, False], ids=["warc.gz", "warc"])
def test_a_cut_inside_a_record_is_never_silent(gz):
    for cut, items, _stats, _started, at_bound in _cuts(gz):
        if not at_bound:
            reasons = {i.reason for i in items if isinstance(i, Reject)}
            assert reasons & {"truncated_record", "not_warc"}, (cut, reasons)


def test_mutated_pages_are_accounted_for_and_hostile_ones_rejected():
    rng = random.Random(5)
    n = 80
    inputs = [fuzz.mutated_page(rng, "alpha", "politics") for _ in range(n)]
    data = b"".join(fuzz.page_record(rng, page, "alpha", "politics", i) for i, page in enumerate(inputs))
    items, stats = _read(data)
    assert stats.records_read == n == len(items)  # well-framed records: one read per page, in order
    outcome = _clean_all(items, learn=True)
    assert sum(outcome.values()) == n, outcome
    mutations = Counter(p.mutation for p in inputs)
    assert len(mutations) >= 20, mutations
    for page, item in zip(inputs, items, strict=True):
        if page.mutation in ("gzip_bomb", "brotli_bomb"):
            assert isinstance(item, Reject) and item.reason == "too_large", (page.mutation, item)
        if page.mutation == "binary" and len(page.body) >= 512:
            assert isinstance(item, Reject) or stages.classify_response(item) is not None, page.mutation
        if page.mutation == "plain":
            result = stages.clean_page(item, None, DEFAULT_CONFIG)
            assert not isinstance(result, Reject), result  # the undamaged page stays an article


def test_small_batch_through_the_pipeline_balances(tmp_path):
    """One DirectRunner run over a mixed batch: the summary balances and reads what the reader counts."""
    from newsclean.pipeline.clean import run_clean
    from newsclean.pipeline.options import CleanConfig

    batch = fuzz.make_batch(seed=3, n_inputs=24, pages_per_file=8)
    root = fuzz.write_batch(batch, tmp_path / "warc")
    summary = run_clean(CleanConfig(warc=f"{root}/**/*.warc*", out=str(tmp_path / "out")), ["--runner", "DirectRunner"])
    assert summary.records_read == fuzz.reader_count(root) > 0
    assert summary.balanced, summary.to_dict()


def test_many_damaged_spans_are_all_read_past():
    """The heavy WARC generator: 1,200 records each followed by damage; every record is read, each span is one
    reject, and the independent count finds the 1,200 records (the reader once gave up after 1,000 spans)."""
    kind, data = fuzz.many_damaged_spans(random.Random(2))
    items, stats = _read(data)
    assert kind == "many_damaged_spans"
    assert stats.pages == 1200 and stats.rejects == 1200 == sum(isinstance(i, Reject) for i in items)
    check_read("f.warc.gz", stats, Counter(item_offset(i) for i in items), io.BytesIO(data))
    assert stats.found == 1200 and stats.missed == 0


def test_a_huge_flat_page_is_framed_as_one_page():
    """The heavy page generator (not cleaned here): 200,000 sibling ``<p>`` elements, ~3 MiB, one well-framed
    record that the reader gives as one page, under its body limit; a batch with ``heavy_share`` holds some."""
    page = fuzz.huge_flat_page(random.Random(4))
    assert page.body.count(b"<p>") == 200_000 and 2 << 20 < len(page.body) < 5 << 20
    items, stats = _read(fuzz.page_record(random.Random(4), page, "alpha", "politics", 0))
    assert stats.pages == 1 and items[0].html == page.body
    batch = fuzz.make_batch(seed=1, n_inputs=20, pages_per_file=8, heavy_share=0.5)
    assert batch.page_mutations.get("huge_flat_page") and batch.warc_mutations.get("many_damaged_spans")
