"""Sitemap facts (``news:publication_date``, ``news:title``, ``lastmod``) reach each page's WARC metadata record.

Servers: newsclean.demo.localsite on 127.0.0.2 only.
"""

from __future__ import annotations

import gzip
import textwrap

from warcio.archiveiterator import ArchiveIterator

from newsclean.crawler.discovery import SitemapFacts, read_sitemap
from newsclean.crawler.run import run_crawl_subprocess
from newsclean.demo.localsite import LocalSites, StaticSite
from newsclean.schemas.contract import SITEMAP_LASTMOD_FIELD, SITEMAP_PUBLICATION_DATE_FIELD, SITEMAP_TITLE_FIELD

NEWS_NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"'


def news_sitemap(base: str) -> str:
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<urlset {NEWS_NS}>
<url><loc>{base}/world/n1.html</loc><lastmod>2024-05-02T10:00:00Z</lastmod>
<news:news><news:publication><news:name>Daily</news:name><news:language>en</news:language></news:publication>
<news:publication_date>2024-05-01T08:30:00+02:00</news:publication_date>
<news:title>  Storm hits
 the coast </news:title></news:news></url>
<url><loc>/world/n2.html</loc><lastmod>2023-12-31</lastmod></url>
<url><loc>{base}/world/n3.html</loc></url>
</urlset>"""


def test_read_sitemap_reads_news_and_lastmod():
    facts = read_sitemap(news_sitemap("http://h.example").encode(), "http://h.example/sitemap.xml").facts
    assert facts == {
        "http://h.example/world/n1.html": SitemapFacts("2024-05-01T08:30:00+02:00", "Storm hits the coast",
                                                       "2024-05-02T10:00:00Z"),
        "http://h.example/world/n2.html": SitemapFacts(lastmod="2023-12-31"),
    }  # n3 says nothing; n2's relative loc is joined to the sitemap's URL


def test_read_sitemap_has_no_facts_for_an_index_or_a_broken_body():
    index = b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>http://h/a.xml</loc>' \
            b'<lastmod>2024-01-01</lastmod></sitemap></sitemapindex>'
    assert read_sitemap(index, "http://h/").facts == {}
    assert read_sitemap(b"\x00\x01 not xml", "http://h/").facts == {}
    assert read_sitemap(b"", "http://h/").facts == {}


def _metadata_fields(out) -> dict[str, dict[str, str]]:
    """Target URI -> fields of its metadata record, over every WARC file under ``out``."""
    found = {}
    for path in sorted(out.rglob("*.warc.gz")):
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream):
                if record.rec_type == "metadata":
                    body = record.content_stream().read().decode("utf-8")
                    pairs = (line.split(": ", 1) for line in body.splitlines() if line)
                    found[record.rec_headers.get_header("WARC-Target-URI")] = dict(pairs)
    return found


def test_crawled_news_sitemap_facts_reach_the_metadata_record(tmp_path):
    site = StaticSite("daily")
    with LocalSites([site]) as servers:
        base = servers.base_urls["daily"]
        site.add("/news-sitemap.xml.gz", gzip.compress(news_sitemap(base).encode()),
                 content_type="application/x-gzip")
        for name in ("n1", "n2", "n3"):
            site.add(f"/world/{name}.html", f"<html><body><p>Article {name}.</p></body></html>")
        config = tmp_path / "sites.toml"
        config.write_text(textwrap.dedent(f"""\
            [crawl]
            depth_limit = 1
            download_delay = 0.0
            autothrottle = false
            allow_private_networks = true

            [[site]]
            name = "daily"
            allowed_domains = ["127.0.0.2"]
            article_allow = ['/world/']
            [site.categories]
            world = ["{base}/news-sitemap.xml.gz"]
            """), encoding="utf-8")
        run_crawl_subprocess(config, tmp_path / "out", log_level="WARNING", timeout=120)
    fields = _metadata_fields(tmp_path / "out")
    n1, n2, n3 = (fields[f"{base}/world/{name}.html"] for name in ("n1", "n2", "n3"))
    assert n1[SITEMAP_PUBLICATION_DATE_FIELD] == "2024-05-01T08:30:00+02:00"
    assert n1[SITEMAP_TITLE_FIELD] == "Storm hits the coast"
    assert n1[SITEMAP_LASTMOD_FIELD] == "2024-05-02T10:00:00Z"
    assert n2[SITEMAP_LASTMOD_FIELD] == "2023-12-31" and SITEMAP_TITLE_FIELD not in n2
    assert not any(name.startswith("sitemap-") for name in n3)
    sitemap_page = fields[f"{base}/news-sitemap.xml.gz"]
    assert not any(name.startswith("sitemap-") for name in sitemap_page)
