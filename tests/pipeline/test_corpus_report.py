"""``newsclean report OUT``: the corpus's HTML report, its numbers checked against the corpus and by hand.

The crawl is test_batches.py's (sites alpha, beta and gamma.test; one exact and one near duplicate, each a cluster of
two; an ``empty_body`` and an ``http_status`` reject; every page fetched on 2024-05-01 and undated) plus three pages
of a site ``delta`` that carry an ``article:published_time``: two on 2024-04-28, one on 2024-04-29, fetched on
2024-05-03. The browser test opens the report in Debian's Chromium (``/usr/bin/chromium``) through Playwright."""

from __future__ import annotations

import base64
import gzip
import json
import shutil
import tempfile
from datetime import timedelta
from pathlib import Path

import pyarrow.dataset as ds
import pytest
from lxml import html as lxml_html
from test_batches import T0, _crawl, _paragraphs
from warc_builder import Response, article_page, write_warc

from newsclean.cli import main
from newsclean.pipeline.clean import run_clean
from newsclean.pipeline.options import CleanConfig
from newsclean.pipeline.report import write_report

CHROMIUM = Path("/usr/bin/chromium")
#: Published days of the delta pages (their order in the WARC file).
DELTA_DAYS = ("2024-04-28", "2024-04-28", "2024-04-29")


def _dated(i: int, day: str) -> Response:
    page = article_page("delta", "world", f"Dated story {i}", _paragraphs(60 + i)).replace(
        "<head>", f'<head><meta property="article:published_time" content="{day}T08:00:00Z">')
    return Response(f"http://delta.test/world/dated-{i}.html", page.encode(), date=T0 + timedelta(days=2))


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    root = tmp_path_factory.mktemp("report")
    warc = _crawl(root)
    write_warc(warc / "delta" / "world" / "delta-world-20240503T100000Z-00000.warc.gz", "delta", "world",
               [_dated(i, day) for i, day in enumerate(DELTA_DAYS)])
    for fmt in ("parquet", "jsonl"):
        run_clean(CleanConfig(warc=str(warc), out=str(root / fmt), neighbour_sample=3, batch_bytes=0,
                              output_format=fmt), [])
    return root


def _rows(out: Path, table: str) -> list[dict]:
    """The rows of a table read without newsclean: pyarrow for Parquet, gzip + json for JSON Lines."""
    files = sorted((out / table).rglob("*.jsonl.gz"))
    if files:
        return [json.loads(line) for f in files for line in gzip.open(f, "rt", encoding="utf-8") if line.strip()]
    return ds.dataset(str(out / table), format="parquet").to_table().to_pylist()


def _table(doc, css_id: str) -> dict[str, str]:
    return {tr[0].text_content().strip(): tr[1].text_content().strip() for tr in doc.get_element_by_id(css_id)
            if tr[0].tag == "td"}


def _report(corpora, fmt: str, tmp_path: Path):
    path = write_report(str(corpora / fmt), str(tmp_path / "r.html"))
    return Path(path).read_text(encoding="utf-8"), lxml_html.fromstring(Path(path).read_bytes())


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_the_report_numbers_are_the_corpus(corpora, fmt, tmp_path):
    _, doc = _report(corpora, fmt, tmp_path)
    articles, rejects, dups = (_rows(corpora / fmt, t) for t in ("articles", "rejects", "duplicates"))
    # by hand: 16 records of the batches crawl + 3 delta pages; 12 + 3 articles, 2 rejects, 2 duplicates
    assert (len(articles), len(rejects), len(dups)) == (15, 2, 2)
    assert _table(doc, "totals") == {"WARC response records read": "19", "articles written": "15", "rejects": "2",
                                     "duplicates dropped": "2", "exact_duplicate": "1", "near_duplicate": "1"}
    assert doc.get_element_by_id("check").text_content().endswith("read: ok")
    assert _table(doc, "sites") == {"alpha": "5", "gamma.test": "4", "beta": "3", "delta": "3"}
    assert _table(doc, "days") == {"2024-04-28": "2 + 0", "2024-04-29": "1 + 0", "2024-05-01": "0 + 12"}
    assert _table(doc, "rejects") == {"empty_body": "1", "http_status": "1"}
    assert _table(doc, "clusters") == {"2 articles": "2"}
    assert "13 articles have no duplicate" in doc.text_content()
    assert _table(doc, "languages") == {"en": "15"}
    page_types = {}
    for row in articles:
        page_types[row["page_type"]] = page_types.get(row["page_type"], 0) + 1
    assert _table(doc, "page-types") == {k: str(n) for k, n in page_types.items()}
    words = _table(doc, "words")
    assert sum(int(n) for n in words.values()) == 15
    lowest = min(row["word_count"] for row in articles)
    assert next(iter(words)).startswith(str(lowest))


def test_the_report_references_nothing_outside_itself(corpora, tmp_path):
    text, doc = _report(corpora, "parquet", tmp_path)
    images = doc.findall(".//img")
    assert len(images) == 7  # sites, days, words, languages, page types, rejects, clusters
    for img in images:
        head, _, data = img.get("src").partition(",")
        assert head == "data:image/svg+xml;base64"
        assert b"<svg" in base64.b64decode(data)
    assert not doc.xpath("//@href | //script | //link | //iframe | //object")
    assert "url(" not in text


def test_the_cli_writes_into_the_corpus_by_default(corpora, tmp_path, capsys):
    out = tmp_path / "corpus"
    shutil.copytree(corpora / "jsonl", out)
    assert main(["report", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"report: {out / 'report.html'}"
    assert (out / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def _cut_part_file(corpora, tmp_path) -> Path:
    out = tmp_path / "cut"
    shutil.copytree(corpora / "parquet", out)
    part = next((out / "articles").glob("*.parquet"))
    part.write_bytes(part.read_bytes()[:100])
    return out


@pytest.mark.parametrize("case, message", [
    ("missing", "no such folder"),
    ("file", "not a folder"),
    ("empty", "holds no newsclean corpus"),
    ("cut", "the corpus cannot be read"),
])
def test_a_folder_that_is_no_readable_corpus_fails_in_one_line(corpora, tmp_path, capsys, case, message):
    (tmp_path / "empty").mkdir()
    (tmp_path / "file").write_text("x")
    out = _cut_part_file(corpora, tmp_path) if case == "cut" else tmp_path / case
    assert main(["report", str(out), "--html", str(tmp_path / "r.html")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("newsclean: error: ") and message in err and "\n" not in err, err
    assert not (tmp_path / "r.html").exists()


#: Milliseconds Chromium may take to start, and any page action (a loose bound: it only catches a browser that hangs).
LAUNCH_TIMEOUT_MS = 120_000
#: Chromium's flags for a run with no network, no profile and no GPU.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium (Debian's chromium; .ci/run installs it)")
def test_the_report_renders_in_chromium(corpora, tmp_path):
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    from PIL import Image

    report = Path(write_report(str(corpora / "parquet"), str(tmp_path / "r.html")))
    errors, requests = [], []
    with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
        context = p.chromium.launch_persistent_context(profile, executable_path=str(CHROMIUM), headless=True,
                                                       args=CHROMIUM_ARGS, viewport={"width": 1000, "height": 800},
                                                       timeout=LAUNCH_TIMEOUT_MS)
        try:
            context.set_default_timeout(LAUNCH_TIMEOUT_MS)  # every page action too: a stuck browser fails, never hangs
            page = context.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: requests.append(r.url) if not r.url.startswith(("file:", "data:")) else None)
            page.goto(report.as_uri(), wait_until="load")
            drawn = page.evaluate("[...document.images].map(i => i.complete && i.naturalWidth > 0)")
            shot = tmp_path / "shot.png"
            page.screenshot(path=str(shot), full_page=True)
        finally:
            context.close()
    assert errors == [] and requests == []
    assert drawn == [True] * 7
    image = Image.open(shot).convert("RGB")
    counted = image.getcolors(image.width * image.height)  # (pixels, colour) pairs
    colours = len(counted)
    not_white = sum(n for n, colour in counted if min(colour) < 240) / (image.width * image.height)
    assert colours > 50 and not_white > 0.05, (colours, not_white)
