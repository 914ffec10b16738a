"""newsclean: news web sites -> a clean, deduplicated article corpus (crawl with Scrapy, clean with Beam).

The one-page API, for notebooks and scripts (no Beam, no Scrapy involved)::

    import newsclean
    evidence = newsclean.learn_site_evidence(neighbour_pages)   # once per site/category, reusable
    article = newsclean.extract(html, url=url, evidence=evidence)
    print(article.title, article.text[:200])

Subpackages: :mod:`newsclean.transforms` (the algorithms over lxml trees), :mod:`newsclean.pipeline`
(the Beam pipeline), :mod:`newsclean.crawler` (the Scrapy crawler), :mod:`newsclean.cli` (the ``newsclean``
command, the one module that reaches the crawler, the pipeline and the demo),
:mod:`newsclean.schemas` (the stored records), :mod:`newsclean.demo` (the built-in loopback demo),
:mod:`newsclean.schemas.contract` (the crawl -> clean contract both sides import).
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version

from newsclean.transforms.chain import (
    CONFIGS,
    MIN_ARTICLE_WORDS,
    ChainConfig,
    Extraction,
    extract_article,
    named_config,
)
from newsclean.transforms.errors import ExtractionError
from newsclean.transforms.parse import decode_html
from newsclean.transforms.site_evidence import SiteEvidence
from newsclean.transforms.site_evidence import learn_site_evidence as _learn_site_evidence
from newsclean.transforms.static_noise import StaticNoiseParams

try:
    __version__ = version("newsclean")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = [
    "extract", "learn_site_evidence", "Extraction", "ExtractionError", "SiteEvidence", "ChainConfig",
    "CONFIGS", "__version__",
]


def _as_text(page: str | bytes, argument: str = "html") -> str:
    """Decoded HTML: ``str`` as given; ``bytes`` decoded as the pipeline does (BOM, ``<meta charset>``, sniffing).

    Raises ``TypeError`` naming ``argument`` for anything else."""
    if isinstance(page, str):
        return page
    if isinstance(page, (bytes, bytearray, memoryview)):
        return decode_html(bytes(page))[0]
    raise TypeError(f"{argument} must be str or bytes, got {type(page).__name__}")


def learn_site_evidence(neighbours: Iterable[str | bytes], params: StaticNoiseParams = StaticNoiseParams()) -> SiteEvidence:
    """Learn a site's evidence from its neighbour pages: its static-noise signature (StaDyNoT §3.1) and site profile.

    ``neighbours``: HTML pages (``str``, or ``bytes`` to be decoded as the pipeline decodes them) of the same site
    and category, typically 5–20. The result is small (a set of 64-bit key digests, and where the site puts its
    articles, which block structures and texts recur: a few KB; :mod:`newsclean.transforms.site_evidence`),
    picklable and reusable for every page of that site/category. :func:`newsclean.transforms.site_evidence.learn_site_evidence`
    over decoded pages. Raises :class:`ExtractionError` for a page that is empty.
    """
    return _learn_site_evidence([_as_text(page, "each neighbour page") for page in neighbours], params)


def extract(html: str | bytes, url: str | None = None, neighbours: Iterable[str | bytes] | None = None,
            chain: str | ChainConfig = "default",
            evidence: SiteEvidence | None = None, min_words: int = MIN_ARTICLE_WORDS) -> Extraction:
    """Clean one page: the article's title, text, cleaned HTML, dates, language and per-stage counts.

    ``html``: the page (``str``, or ``bytes`` decoded as the pipeline does). ``neighbours``: other pages of
    the same site/category whose shared nodes are static noise (StaDyNoT §3.1); or pass the ``evidence``
    learned once with :func:`learn_site_evidence` (``neighbours`` is then ignored). ``chain``: a name of
    :data:`CONFIGS` (``default``, ``paper``, ``heuristic``, …) or a :class:`ChainConfig`. ``min_words``:
    an extraction with fewer words (``word_count``) is refused as ``too_short``, as the pipeline's
    ``--min-words`` does (default 10; 0 accepts any non-empty text).

    Returns an :class:`Extraction` (``text``: kept text blocks, one per line; ``word_count`` in words), its fields
    finished as the pipeline's article rows are (:mod:`newsclean.transforms.finish`, with ``url`` as the page's
    URL): ``language`` is identified in ``text`` (py3langid), ``declared_language`` what the page declares, and a
    field holds what the Parquet column of the same name holds for the same page.
    Raises :class:`ExtractionError` (``reason``: ``empty_body``, ``parse_error``, ``no_content``,
    ``too_short``), ``TypeError`` for an ``html`` or neighbour page that is neither ``str`` nor ``bytes`` or a
    ``chain`` that is neither a name nor a :class:`ChainConfig`, and ``ValueError`` for an unknown chain name (the
    message lists the names).
    """
    config = chain if isinstance(chain, ChainConfig) else named_config(chain)
    text = _as_text(html)
    if evidence is None and neighbours is not None:
        evidence = learn_site_evidence(neighbours)
    return extract_article(text, evidence, config, url=url, min_words=min_words)
