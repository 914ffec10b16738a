"""The pipeline path of ``newsclean eval`` (newsclean_eval.main_job): pages packed as WARC files, cleaned by the
main job, rows joined back by URL; it must score a page exactly as the API path does wherever the page yields an
article row, and score 0 where it yields none."""

from __future__ import annotations

import pytest

from newsclean_eval.command import EvalOptions, main_job_page_types, render_markdown, run_eval
from newsclean_eval.datasets import EvalPage, load, shared_data_dir
from newsclean_eval.main_job import (
    MAIN_JOB,
    PackedPage,
    RowOutcome,
    clean_folder,
    pack_pages,
    page_texts,
    page_type_counts,
    page_url,
    score_main_job,
)
from newsclean_eval.systems import named_configs

PARAGRAPH = ("The harbour council met on {day} and voted to approve the plan for the new quay, after a debate "
             "that lasted {hours} hours; members said the cost would be shared by the town and the port. ")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday")


def _article(i: int) -> bytes:
    body = "".join(f"<p>{PARAGRAPH.format(day=DAYS[i], hours=h + i * 7)}</p>" for h in range(6))
    return (f"<html><head><title>Quay plan {i}</title></head><body><nav><a href='/'>Home</a></nav>"
            f"<article><h1>Quay plan {i}</h1>{body}</article></body></html>").encode()


def _page(i: int, gold: str | None = None, url: str | None = None, kind: str = "article") -> EvalPage:
    return EvalPage("synthetic", f"g{i}", f"p{i}", _article(i), gold if gold is not None else PARAGRAPH, url,
                    page_type=kind)


def test_page_urls_are_unique_in_a_run():
    taken: set[str] = set()
    a, b = _page(0, url="http://x.test/a"), _page(1, url="http://x.test/a")
    assert page_url(a, taken) == "http://x.test/a"
    assert page_url(b, taken) == "http://x.test/a?eval-page=p1"
    assert page_url(_page(2), taken) == "http://synthetic.eval/p2"


def test_a_page_without_a_row_scores_zero_and_a_duplicate_its_clusters_kept_text():
    pages = [_page(0, url="http://x.test/a"), _page(1, url="http://x.test/b"), _page(2, url="http://x.test/c")]
    packed = [PackedPage(p.url, p) for p in pages]
    found = {"http://x.test/a": RowOutcome("article", PARAGRAPH, "article"),
             "http://x.test/b": RowOutcome("not_article")}
    run = score_main_job(packed, found, MAIN_JOB + "default")
    f1 = {r.page_id: r.f1 for r in run.results}
    assert f1["p0"] == pytest.approx(1.0) and f1["p1"] == 0.0 and f1["p2"] == 0.0
    assert run.outcomes == {"p0": "article", "p1": "not_article", "p2": "missing"}
    assert [r.error for r in run.results] == ["", "not_article", "missing"]


def test_the_main_job_and_the_api_path_agree_on_pages_that_yield_a_row(tmp_path):
    """Four distinct article pages (single-page groups: no neighbour evidence on either path) and one that the
    corpus filter rejects (a page of three words): the main job's rows score exactly what the API path scores,
    the rejected page 0."""
    pages = [_page(i, gold=PARAGRAPH.format(day=DAYS[i], hours=i * 7) * 6) for i in range(4)]
    tiny = EvalPage("synthetic", "g9", "p9", b"<html><body><p>Three words here</p></body></html>", "Three words here")
    systems = [s for s in named_configs() if s.id == "default"]
    opts = EvalOptions(["synthetic"], systems, resamples=10, out=None, csv=None, main_job=["default"])
    result = run_eval(opts, loader=lambda name: pages + [tiny], progress=lambda line: None)
    rows = {(r.system, r.page_id): r for r in result.runs[0].results}
    for page in pages:
        api, job = rows["default", page.page_id], rows[MAIN_JOB + "default", page.page_id]
        assert job.error == "" and job.f1 == api.f1 and job.precision == api.precision and job.f1 > 0.9
    assert rows[MAIN_JOB + "default", "p9"].f1 == 0.0 and rows[MAIN_JOB + "default", "p9"].error == "too_short"
    table = main_job_page_types(result)
    assert "| main-job:default | synthetic | 4 / 5 (0.800) | – |" in table
    empty = [EvalPage("synthetic", "g8", "p8", b"<html><body><p>Not found</p></body></html>", "")]
    assert page_type_counts(result.main_job_runs[0], pages + [tiny] + empty)["articles kept"] == (4, 5)
    assert "newsclean default" in render_markdown(opts, result)


def test_page_texts_reads_articles_duplicates_and_rejects(tmp_path):
    """Two copies of one article and a listing of links: one article row, one duplicate row scoring the kept
    text, one reject; every URL accounted for."""
    pages = [_page(0, url="http://x.test/a"), EvalPage("synthetic", "g0", "p1", _article(0), PARAGRAPH,
                                                       "http://x.test/b")]
    links = "".join(f"<li><a href='/s{i}'>Story number {i} of the day</a></li>" for i in range(30))
    pages.append(EvalPage("synthetic", "g2", "p2", f"<html><body><ul>{links}</ul></body></html>".encode(), "", None))
    packed = pack_pages(pages, tmp_path / "warc")
    clean_folder(tmp_path / "warc", tmp_path / "out", "default")
    found = page_texts(tmp_path / "out")
    outcomes = sorted(found[p.url].outcome for p in packed)
    assert outcomes[:2] == ["article", "duplicate"] and len(found) == 3
    a, b = found["http://x.test/a"], found["http://x.test/b"]
    assert a.text == b.text and PARAGRAPH.format(day="Monday", hours=0).strip()[:40] in a.text


@pytest.mark.skipif(shared_data_dir() is None, reason="needs ../shared/data (wcxb-dev)")
def test_wcxb_dev_loads_with_its_page_types():
    pages = load("wcxb-dev")
    kinds = {p.page_type for p in pages}
    assert len(pages) == 1495 and sum(p.page_type == "article" for p in pages) == 792
    assert kinds == {"article", "service", "product", "collection", "forum", "listing", "documentation"}
