"""Sites served on loopback for a crawl: :class:`ServedNetwork` (sites + what a crawl should find) and
the ``sites.toml`` writer :func:`render_sites_toml`, shared by the demo network (:mod:`newsclean.demo.network`)
and the evaluation harness's data-set replay (``newsclean_eval.replay``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from urllib.parse import urlsplit

from newsclean.demo.localsite import Resource, StaticSite

# ------------------------------------------------------------------------------------- sites.toml


def _toml_value(value) -> str:
    """TOML literal for a str, bool, int, float or list of those (JSON strings are valid TOML strings)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML rendering for {type(value).__name__}")


def _toml_key(key: str) -> str:
    """A bare TOML key when possible, else a quoted one."""
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def _toml_pairs(values: Mapping[str, object] | None) -> list[str]:
    return [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in (values or {}).items()]


def render_sites_toml(
    start_paths: Mapping[str, Mapping[str, Sequence[str]]],
    base_urls: Mapping[str, str],
    *,
    crawl: Mapping[str, object] | None = None,
    site_options: Mapping[str, Mapping[str, object]] | None = None,
) -> str:
    """``sites.toml`` text (format: ``crawler/config.py``) with one ``[[site]]`` table per site of ``start_paths``.

    ``start_paths[site][category]`` lists URL paths (``/politics/``) that are joined to ``base_urls[site]``
    (``http://127.0.0.N:PORT``); ``allowed_domains`` is that base URL's host (no port: Scrapy compares
    hosts). ``crawl`` becomes the ``[crawl]`` table (``depth_limit``, ``autothrottle``, ...), written
    only when given; ``site_options[site]`` adds keys to that site's table (``article_allow``, ...). Raises KeyError when a site has no base URL, TypeError for values that have no
    TOML form here.
    """
    lines = ["[crawl]", *_toml_pairs(crawl)] if crawl else []
    for site, categories in start_paths.items():
        base = base_urls[site].rstrip("/")
        lines += ["", "[[site]]", f"name = {_toml_value(site)}",
                  f"allowed_domains = {_toml_value([urlsplit(base).hostname])}",
                  *_toml_pairs((site_options or {}).get(site)), "[site.categories]"]
        lines += [f"{_toml_key(cat)} = {_toml_value([base + p for p in paths])}" for cat, paths in categories.items()]
    return "\n".join(lines).lstrip("\n") + "\n"


# ------------------------------------------------------------------------------------ served sites


#: Placeholder for the served base URL (``http://127.0.0.N:PORT``) in :attr:`ServedNetwork.templated` bodies.
BASE_PLACEHOLDER = b"{{BASE_URL}}"


@dataclass
class ServedNetwork:
    """Sites to serve plus what a crawl of them should find.

    ``sites``: the :class:`StaticSite` objects (pass to :class:`~newsclean.demo.localsite.LocalSites`).
    ``start_paths[site][category]``: the crawl's start paths. ``gold[site][path]``: gold article text per
    URL path of an article page (pages without gold, such as indexes, are not listed).
    ``templated[site][path]``: resources whose body needs the served base URL (sitemaps must list
    absolute URLs); :meth:`bind` adds them to the sites once the ports are known.
    ``site_options[site]``: extra keys of the site's table in ``sites.toml`` (URL patterns, ...).
    """

    sites: list[StaticSite]
    start_paths: dict[str, dict[str, list[str]]]
    gold: dict[str, dict[str, str]] = field(default_factory=dict)
    templated: dict[str, dict[str, Resource]] = field(default_factory=dict)
    site_options: dict[str, dict[str, object]] = field(default_factory=dict)

    def bind(self, base_urls: Mapping[str, str]) -> None:
        """Add the :attr:`templated` resources to the sites with :data:`BASE_PLACEHOLDER` replaced by
        ``base_urls[site]``. Call it right after :class:`~newsclean.demo.localsite.LocalSites` has started
        (the servers read ``site.resources`` on every request)."""
        for site in self.sites:
            base = base_urls[site.name].rstrip("/").encode("ascii")
            for path, res in self.templated.get(site.name, {}).items():
                site.resources[path] = replace(res, body=res.body.replace(BASE_PLACEHOLDER, base))

    def sites_toml(self, base_urls: Mapping[str, str], **options) -> str:
        """The crawl config for these sites served at ``base_urls`` (site -> ``http://127.0.0.N:PORT``).

        ``options`` go to :func:`render_sites_toml` (``crawl={...}``: the ``[crawl]`` table).
        """
        return render_sites_toml(self.start_paths, base_urls, site_options=self.site_options, **options)

    def gold_by_url(self, base_urls: Mapping[str, str]) -> dict[str, tuple[str, str]]:
        """Full URL -> ``(site, gold text)`` for every gold page, given the served ``base_urls``."""
        return {base_urls[site].rstrip("/") + path: (site, text)
                for site, pages in self.gold.items() for path, text in pages.items()}

    def article_count(self) -> int:
        """Number of pages with gold text."""
        return sum(len(pages) for pages in self.gold.values())
