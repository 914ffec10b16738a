"""newsclean_eval.replay: serving a data set as loopback sites (a tiny fake msv-big9, no shared data needed)."""

from __future__ import annotations

import re
import tomllib
import urllib.error
import urllib.request

import pytest

from newsclean.crawler.config import parse_config
from newsclean.demo.localsite import LocalSites
from newsclean_eval.datasets import EvalPage, load_msv_big9
from newsclean_eval.replay import (
    build_replay,
    category_name,
    limit_per_group,
    render_sites_toml,
    replay_pages,
    select,
    site_name,
    slugify,
)

CSV = """folder,year,html,gold,site,site_hits,runner_up_hits
big5-05,2005,big5-05/html/amd (1).htm,big5-05/gold/amd (1).txt,forbes.com,3,0
big5-05,2005,big5-05/html/amd (10).htm,big5-05/gold/amd (10).txt,forbes.com,3,0
big5-05,2005,big5-05/html/amd (2).htm,big5-05/gold/amd (2).txt,forbes.com,3,0
big5-09,2009,big5-09/html/Cell phone (1).html,big5-09/gold/Cell phone (1).txt,yahoo.com (Yahoo! News),3,0
"""
# cp1252 page without any charset declaration: the bytes must reach the client unchanged.
HTML_CP1252 = "<html><body><p>Caf\u00e9 \u201cquoted\u201d</p></body></html>".encode("cp1252")


@pytest.fixture()
def fake_big9(tmp_path):
    """A data root holding a fake ``msv-big9/``; returns the replay pages of its 4 pages."""
    base = tmp_path / "msv-big9"
    base.mkdir()
    (base / "sites.csv").write_text(CSV, encoding="utf-8")
    for folder in ("big5-05", "big5-09"):
        (base / folder / "html").mkdir(parents=True)
        (base / folder / "gold").mkdir(parents=True)
    for line in CSV.splitlines()[1:]:
        _, _, html_rel, gold_rel, *_ = line.split(",")
        (base / html_rel).write_bytes(HTML_CP1252)
        (base / gold_rel).write_bytes(f"Head {html_rel}\n\nBody ".encode() + b"\x93x\x94")
    return replay_pages(load_msv_big9(tmp_path))


def test_names():
    assert slugify("amd (1)") == "amd-1" and slugify("Cell phone (10)") == "cell-phone-10" and slugify("()") == "page"
    assert site_name("yahoo.com (Yahoo! News)") == "yahoo_com" and site_name("bbc.co.uk") == "bbc_co_uk"


def test_category_names_and_snippet_gold_refused():
    page = EvalPage("msv-big9", "cnn.com/2005", "x.htm", b"", "gold", site="cnn.com")
    assert category_name(page) == "y2005"
    assert category_name(EvalPage("dragnet", "blogs.nfl.com", "R1.html", b"", "gold")) == "all"
    with pytest.raises(ValueError):
        replay_pages([EvalPage("trafilatura-eval", "u", "f.html", b"", None)])


def test_load_limit_select(fake_big9):
    pages = fake_big9
    assert [(p.site, p.category, p.slug) for p in pages] == [
        ("forbes_com", "y2005", "amd-1"), ("forbes_com", "y2005", "amd-2"), ("forbes_com", "y2005", "amd-10"),
        ("yahoo_com", "y2009", "cell-phone-1")]
    assert [p.slug for p in limit_per_group(pages, 2)] == ["amd-1", "amd-2", "cell-phone-1"]
    assert [p.site for p in select(pages, sites=["yahoo_com"])] == ["yahoo_com"]
    assert select(pages, categories=["y2013"]) == []


def test_build_replay_layout_and_gold(fake_big9):
    net = build_replay(fake_big9, index="html")
    assert [s.name for s in net.sites] == ["forbes_com", "yahoo_com"]
    assert net.start_paths == {"forbes_com": {"y2005": ["/y2005/"]}, "yahoo_com": {"y2009": ["/y2009/"]}}
    forbes = net.sites[0].resources
    assert forbes["/y2005/amd-10.html"].body == HTML_CP1252
    assert forbes["/y2005/amd-10.html"].content_type == "text/html"
    assert net.gold["forbes_com"]["/y2005/amd-1.html"] == "Head big5-05/html/amd (1).htm\n\nBody \u201cx\u201d"
    assert net.article_count() == 4
    index = forbes["/y2005/"].body.decode()
    assert all(f'href="/y2005/amd-{n}.html"' in index for n in (1, 2, 10))
    robots = forbes["/robots.txt"].body.decode()
    assert "Allow: /y2005/amd-1.html$" in robots and robots.rstrip().endswith("Disallow: /")


def test_served_over_loopback_with_sitemap_start(fake_big9):
    net = build_replay(fake_big9)
    assert net.start_paths["forbes_com"] == {"y2005": ["/y2005/sitemap.xml"]}
    with LocalSites(net.sites) as served:
        net.bind(served.base_urls)
        base = served.base_urls["forbes_com"]
        assert base.startswith("http://127.0.0.")
        with urllib.request.urlopen(base + "/y2005/amd-2.html", timeout=5) as resp:
            assert resp.read() == HTML_CP1252
            assert resp.headers["Content-Type"] == "text/html"
        with urllib.request.urlopen(base + "/y2005/sitemap.xml", timeout=5) as resp:
            assert resp.headers["Content-Type"] == "application/xml"
            locs = re.findall(r"<loc>([^<]+)</loc>", resp.read().decode())
        assert locs == [f"{base}/y2005/amd-{n}.html" for n in (1, 2, 10)]
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(base + "/nothing.html", timeout=5)
        assert err.value.code == 404
        gold = net.gold_by_url(served.base_urls)
        assert gold[base + "/y2005/amd-2.html"][0] == "forbes_com"
        config = parse_config(tomllib.loads(net.sites_toml(served.base_urls, crawl={"depth_limit": 1})))
    assert config.crawl.depth_limit == 1
    assert [c.start_urls for c in config.site("forbes_com").categories] == [(base + "/y2005/sitemap.xml",)]
    assert config.site("forbes_com").allowed_domains == (base.split("//")[1].split(":")[0],)


def test_render_sites_toml_quotes_odd_keys():
    text = render_sites_toml({"s": {"a b": ["/x"]}}, {"s": "http://127.0.0.9:1"})
    assert tomllib.loads(text)["site"][0]["categories"] == {"a b": ["http://127.0.0.9:1/x"]}
    assert "[crawl]" not in text


def test_unknown_index_kind(fake_big9):
    with pytest.raises(ValueError):
        build_replay(fake_big9, index="rss")


def test_site_options_reach_the_site_tables():
    import tomllib

    from newsclean.crawler.config import parse_config
    from newsclean_eval.replay import render_sites_toml

    text = render_sites_toml({"a": {"news": ["/news/"]}}, {"a": "http://127.0.0.2:8000"},
                             site_options={"a": {"article_allow": [r"/\d{4}/"]}})
    config = parse_config(tomllib.loads(text))
    assert config.site("a").article_allow == (r"/\d{4}/",)
