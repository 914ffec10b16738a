"""The demo: the generated news network (newsclean.demo.network) and the full ``newsclean demo`` run."""

from __future__ import annotations

import re
import subprocess
import sys
import urllib.request
from collections import Counter, deque

import lxml.html
import pytest
from repo import ROOT

from newsclean.demo.localsite import LocalSites
from newsclean.demo.network import SPECS, build_demo_network
from newsclean.demo.scoring import tokens

REPO = ROOT
#: Floor for the demo's overall macro F1 (seed 0): measured 0.967 with the papers' chain and
#: 0.996 with the learned default (0.970 before it dropped the ledger's reader comments); the synthetic sites are
#: unlike its training data.
DEMO_F1_FLOOR = 0.88
#: Floor for each site's macro precision in the same run: measured 0.98 (ledger: its byline line) to 1.0.
DEMO_SITE_PRECISION_FLOOR = 0.95


@pytest.fixture(scope="module")
def network():
    return build_demo_network(seed=0)


def _digest(net) -> list[tuple[str, str, bytes]]:
    return [(s.name, p, r.body) for s in net.sites for p, r in sorted(s.resources.items())]


def _visible_text(body: bytes, encoding: str) -> str:
    root = lxml.html.fromstring(body.decode(encoding))
    for bad in root.xpath("//script|//style"):
        bad.drop_tree()
    return " ".join(root.itertext())  # blocks often touch ("</h1><p>"): keep words apart


def test_deterministic_for_a_seed(network):
    assert _digest(network) == _digest(build_demo_network(seed=0))
    assert _digest(network) != _digest(build_demo_network(seed=1))


def test_shape_three_sites_two_categories_ten_articles(network):
    assert len(network.sites) >= 3
    for spec in SPECS:
        assert len(network.start_paths[spec.name]) == 2
        assert len(network.gold[spec.name]) == 20
    assert network.article_count() == 60


def test_templates_are_distinct(network):
    def tags(site):
        body = next(r.body for p, r in site.resources.items() if p in network.gold[site.name])
        return Counter(el.tag for el in lxml.html.fromstring(body).iter() if isinstance(el.tag, str))

    ledger, courier, harbor = (tags(s) for s in network.sites)
    assert ledger["table"] >= 3 and ledger["font"] >= 5 and ledger["article"] == 0
    assert courier["div"] >= 15 and courier["table"] == 0 and courier["article"] == 0
    assert harbor["article"] >= 2 and harbor["aside"] >= 1 and harbor["main"] == 1 and harbor["table"] == 0


def test_gold_is_on_the_page_among_noise(network):
    for spec, site in zip(SPECS, network.sites):
        for path, gold in network.gold[spec.name].items():
            page = Counter(tokens(_visible_text(site.resources[path].body, spec.encoding)))
            want = Counter(tokens(gold))
            assert not want - page, f"{spec.name}{path}: gold words missing from the page"
            # Noise (menus, comments, most read, footers...) is a real share of every page.
            assert sum(page.values()) > 1.3 * sum(want.values())
            assert len(tokens(gold)) > 150


def test_reader_comments_stay_out_of_a_ledger_article(network):
    """The ledger's reader comments (a table after a "Reader comments (N)" line, each comment ``<B>handle</B>
    wrote:`` and its text) are not article text, as the demo's gold says; the article's words all stay."""
    import newsclean
    from newsclean.demo.scoring import prf

    spec, site = SPECS[0], network.sites[0]
    paths = sorted(network.gold[spec.name])
    evidence = newsclean.learn_site_evidence(site.resources[p].body for p in paths[:10])
    for path in paths[:3]:
        body = site.resources[path].body
        root = lxml.html.fromstring(body.decode(spec.encoding))
        cells = root.xpath("//table[@class='comments']//font[@size='2']")
        comments = [" ".join(f.text_content().split()) for f in cells]
        assert len(comments) >= 2, path  # the trap is on the page
        text = " ".join(newsclean.extract(body, evidence=evidence).text.split())
        assert not [c for c in comments if c in text], path
        assert prf(tokens(text), tokens(network.gold[spec.name][path]))[1] >= 0.95, path


def test_every_article_reachable_within_depth_two(network):
    for site in network.sites:
        seen = {p: 0 for cat in network.start_paths[site.name].values() for p in cat}
        queue = deque(seen)
        while queue:
            path = queue.popleft()
            if seen[path] == 2:
                continue
            root = lxml.html.fromstring(site.resources[path].body)
            for href in root.xpath("//a/@href"):
                if href.startswith("/") and href in site.resources and href not in seen:
                    seen[href] = seen[path] + 1
                    queue.append(href)
        assert set(network.gold[site.name]) <= set(seen)


def test_no_dead_internal_links(network):
    for site in network.sites:
        for path, res in site.resources.items():
            if path == "/robots.txt":
                continue
            hrefs = lxml.html.fromstring(res.body).xpath("//a/@href")
            dead = [h for h in hrefs if h.startswith("/") and h not in site.resources]
            assert not dead, f"{site.name}{path} links to missing pages {dead}"


def test_served_on_loopback_with_declared_charsets(network):
    with LocalSites(network.sites) as served:
        for spec in SPECS:
            path = sorted(network.gold[spec.name])[0]
            with urllib.request.urlopen(served.base_urls[spec.name] + path, timeout=5) as resp:
                assert resp.headers["Content-Type"] == spec.content_type
                assert resp.read() == network.sites[SPECS.index(spec)].resources[path].body


def test_a_fixed_port_keeps_the_urls_and_a_taken_port_falls_back(network):
    import socket

    with socket.socket() as probe:  # a port free on 127.0.0.2 now
        probe.bind(("127.0.0.2", 0))
        port = probe.getsockname()[1]
    with LocalSites(network.sites, port=port) as first:
        urls = dict(first.base_urls)
    with LocalSites(network.sites, port=port) as second:
        assert second.base_urls == urls and urls[SPECS[0].name] == f"http://127.0.0.2:{port}"
    with socket.socket() as taken:  # the port held by another server on the first site's host
        taken.bind(("127.0.0.2", port))
        taken.listen()
        with LocalSites(network.sites, port=port) as served:
            other = served.base_urls[SPECS[0].name]
            assert other.startswith("http://127.0.0.2:") and other != urls[SPECS[0].name]
            path = sorted(network.gold[SPECS[0].name])[0]
            with urllib.request.urlopen(other + path, timeout=5) as resp:
                assert resp.status == 200


def test_sites_toml_is_a_valid_crawl_config(network):
    import tomllib

    from newsclean.crawler.config import parse_config

    base = {s.name: f"http://127.0.0.{i + 2}:8000" for i, s in enumerate(network.sites)}
    config = parse_config(tomllib.loads(network.sites_toml(base, crawl={"depth_limit": 2, "autothrottle": False})))
    assert [s.name for s in config.sites] == ["ledger", "courier", "harbor"]
    assert config.site("courier").category("sports").start_urls == ("http://127.0.0.3:8000/news/sports/",)
    # every gold article's category comes from its URL, whichever category's pages the crawl reached it from
    from newsclean.crawler.discovery import category_for

    for spec in SPECS:
        site = config.site(spec.name)
        for path in network.gold[spec.name]:
            expected = next(c for c in spec.categories if f"/{c}/" in path)
            assert category_for(base[spec.name] + path, site, "elsewhere", "other") == expected


@pytest.mark.integration
def test_newsclean_demo_end_to_end(tmp_path):
    """``newsclean demo`` in a child process: exit 0, article Parquet written, overall F1 above the floor."""
    out = tmp_path / "demo"
    launcher = "import sys; from newsclean.cli import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.run([sys.executable, "-c", launcher, "demo", "--out", str(out)], cwd=REPO,
                          capture_output=True, text=True, timeout=170)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert list((out / "clean" / "articles").glob("*.parquet"))
    match = re.search(r"overall macro F1: ([0-9.]+)", proc.stdout)
    assert match, proc.stdout[-3000:]
    assert float(match.group(1)) >= DEMO_F1_FLOOR, proc.stdout[-3000:]
    # per site, precision: a template's trap kept in the text (the ledger's reader comments) shows here
    site_p = {m[1]: float(m[2]) for m in re.finditer(r"^\| (\w+) \| \d+ \| \d+ \| ([0-9.]+) \|", proc.stdout, re.M)}
    assert len(site_p) == 3 and min(site_p.values()) >= DEMO_SITE_PRECISION_FLOOR, site_p
    assert (out / "score.md").read_text().startswith("| site |")
