"""Site and category of WARC files from other crawlers (Common Crawl, wget, Heritrix): no newsclean headers.

Site = the URL's host; category = the crawler's folder layout when the file has it, else the section the URL
names when that section alone fills a neighbour sample, else the host's group (``unknown``). docs/CONTRACTS.md.
"""

from __future__ import annotations

from collections import Counter

import pyarrow.parquet as pq
import pytest
from warc_builder import Response, article_page, paragraph, write_warc

from newsclean.pipeline.clean import run_clean
from newsclean.pipeline.options import CleanConfig

SAMPLE = 3  # --neighbour-sample: a section needs 3 pages to be a category of its own


def _pages(host: str, paths: list[str], seed: int) -> list[Response]:
    return [Response(f"http://{host}{path}", article_page(host, "news", f"Story {seed + i}",
                                                          [paragraph(seed + 10 * i + j) for j in range(3)]).encode())
            for i, path in enumerate(paths)]


@pytest.fixture(scope="module")
def foreign(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("foreign")
    pages = (_pages("virtualgeek.typepad.com", [f"/2009/05/post-{i}.html" for i in range(3)], 100)
             + _pages("legaltimes.typepad.com", [f"/2009/06/law-{i}.html" for i in range(3)], 200)
             + _pages("www.forbes.test", [f"/business/story-{i}.html" for i in range(3)], 300)
             + _pages("www.forbes.test", ["/tech/a.html", "/life/b.html", "/sports/c.html"], 400)
             + _pages("arts.test", [f"/arts-&amp;-entertainment/s{i}.html" for i in range(3)], 500))
    write_warc(tmp / "warc" / "crawl" / "CC-MAIN-00000.warc.gz", "x", "y", pages, newsclean_headers="none")
    write_warc(tmp / "warc" / "delta" / "culture" / "delta-culture-20240501T100000Z-00000.warc.gz", "x", "y",
               _pages("delta.test", [f"/p/{i}.html" for i in range(2)], 600), newsclean_headers="none")
    out = tmp / "out"
    run_clean(CleanConfig(warc=str(tmp / "warc"), out=str(out), neighbour_sample=SAMPLE, chain="paper"),
              ["--runner", "DirectRunner", "--direct_running_mode", "in_memory"])
    return {r["url"]: r for r in pq.read_table(out / "articles").to_pylist()}


def test_site_is_the_host(foreign):
    sites = Counter(r["site"] for r in foreign.values())
    assert sites["virtualgeek.typepad.com"] == 3 and sites["legaltimes.typepad.com"] == 3  # before: one site
    assert sites["www.forbes.test"] == 6 and sites["delta.test"] == 2


def test_small_sections_join_their_hosts_group(foreign):
    forbes = {url.rsplit("/", 2)[1]: r["category"] for url, r in foreign.items() if "forbes" in url}
    assert forbes == {"business": "business", "tech": "unknown", "life": "unknown", "sports": "unknown"}  # before:
    # 4 categories, three of a single page each, from which nothing static could be learnt
    small = [r for url, r in foreign.items() if "forbes" in url and "/business/" not in url]
    assert all(r["static_nodes_removed"] > 0 for r in small)  # learnt from the host's group of 3 pages


def test_folder_layout_and_entities(foreign):
    assert {r["category"] for url, r in foreign.items() if "delta.test" in url} == {"culture"}  # before: "p"
    assert {r["category"] for url, r in foreign.items() if "arts.test" in url} == {"arts-&-entertainment"}
    typepad = {r["category"] for url, r in foreign.items() if "typepad" in url}
    assert typepad == {"unknown"}  # /2009/... names no section
