"""``Accept-Language`` per site and the ``[crawl]`` default, checked on what a loopback server receives.

Servers: newsclean.demo.localsite on 127.0.0.2 and 127.0.0.3 only.
"""

from __future__ import annotations

import textwrap

import pytest

from newsclean.crawler.config import config_to_toml, load_config, parse_config
from newsclean.crawler.run import run_crawl_subprocess
from newsclean.demo.localsite import LocalSites, StaticSite


def _page(text: str) -> str:
    return f"<html><head><title>t</title></head><body><p>{text}</p></body></html>"


def test_each_site_receives_its_configured_accept_language(tmp_path):
    french, other = StaticSite("french"), StaticSite("other")
    french.add("/une/", _page("Bonjour."))
    other.add("/news/", _page("Hallo."))
    with LocalSites([french, other]) as servers:
        fr_url, other_url = servers.base_urls["french"], servers.base_urls["other"]
        config = tmp_path / "sites.toml"
        config.write_text(textwrap.dedent(f"""\
            [crawl]
            depth_limit = 0
            download_delay = 0.0
            autothrottle = false
            allow_private_networks = true
            accept_language = "de-DE, de;q=0.9"

            [[site]]
            name = "french"
            allowed_domains = ["127.0.0.2"]
            accept_language = "fr-FR, fr;q=0.9, en;q=0.5"
            [site.categories]
            front = ["{fr_url}/une/"]

            [[site]]
            name = "other"
            allowed_domains = ["127.0.0.3"]
            [site.categories]
            front = ["{other_url}/news/"]
            """), encoding="utf-8")
        run_crawl_subprocess(config, tmp_path / "out", log_level="WARNING", timeout=120)
    assert french.received["/une/"]["Accept-Language"] == "fr-FR, fr;q=0.9, en;q=0.5"
    assert other.received["/news/"]["Accept-Language"] == "de-DE, de;q=0.9"


def test_accept_language_defaults_to_en_and_round_trips(tmp_path):
    config = parse_config({"crawl": {"accept_language": "es"}, "site": [
        {"name": "a", "allowed_domains": ["a.example"], "accept_language": "ca, es;q=0.8",
         "categories": {"news": ["https://a.example/"]}},
        {"name": "b", "allowed_domains": ["b.example"], "categories": {"news": ["https://b.example/"]}}]})
    assert config.crawl.accept_language == "es"
    assert [s.accept_language for s in config.sites] == ["ca, es;q=0.8", None]
    default = parse_config({"site": [{"name": "b", "allowed_domains": ["b.example"],
                                      "categories": {"news": ["https://b.example/"]}}]})
    assert default.crawl.accept_language == "en"
    path = tmp_path / "sites.toml"
    path.write_text(config_to_toml(config), encoding="utf-8")
    again = load_config(path)
    assert (again.crawl, again.sites) == (config.crawl, config.sites)


@pytest.mark.parametrize("value", ["", "fr\r\nX-Injected: 1", " fr", 7])
def test_bad_accept_language_is_a_config_error(value):
    with pytest.raises(ValueError, match=r"site\[0\].*accept_language"):
        parse_config({"site": [{"name": "a", "allowed_domains": ["a.example"], "accept_language": value,
                                "categories": {"news": ["https://a.example/"]}}]}, source="sites.toml")
    with pytest.raises(ValueError, match=r"crawl\.accept_language"):
        parse_config({"crawl": {"accept_language": value}, "site": [
            {"name": "a", "allowed_domains": ["a.example"], "categories": {"news": ["https://a.example/"]}}]},
            source="sites.toml")
