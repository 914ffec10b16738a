"""The cleaning pipeline's stages: one composite ``PTransform`` per stage, with stable labels.

    ReadWarc ─► FilterResponses ─┬─► LearnStaticNoise ──(side input, per (site, category))─┐
                                 └──────────────────────────► CleanPages ◄──────────────────┘
                                                                 │
                                          DedupExact ◄───────────┘ ─► WriteParquet, WriteCounts

Every WARC response record ends as exactly one article row, one reject row, or one counted
duplicate. Rejects leave each stage on a tagged dead-letter output (:data:`REJECTS_TAG`) and are
flattened into ``rejects/*.parquet``; small ``(name, int)`` count pairs (:data:`COUNTS_TAG`) give
the run summary its records-read and duplicates-dropped numbers without relying on runner
metrics. ``Metrics.counter`` counters (namespace ``newsclean``) are kept too: ``records_read``,
``pages_read``, ``rejects_<reason>``, ``articles``, ``duplicates``.

The per-element logic lives in plain functions (:func:`classify_response`,
:func:`learn_signature`, :func:`clean_page`, :func:`pick_winner`), testable without Beam. lxml
trees never leave a function: elements between steps are :class:`~newsclean.schemas.records.Page`,
:class:`~newsclean.schemas.records.Article`, :class:`~newsclean.schemas.records.Reject` and static-noise signatures, all picklable.
Memory per worker is bounded: signatures come from at most N neighbour pages per key (a
``Top`` combiner), and duplicates are resolved by a combiner that keeps one article per hash.
"""

from __future__ import annotations

import hashlib
import logging
from datetime import UTC, datetime

import apache_beam as beam
from apache_beam.io.fileio import EmptyMatchTreatment, MatchAll
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics

from newsclean.pipeline.budget import RecordTimeout, time_budget
from newsclean.pipeline.options import resolve_chain_config
from newsclean.pipeline.warc_reader import COUNTS_TAG, METRICS_NAMESPACE, REJECTS_TAG, ReadWarcFileFn
from newsclean.schemas.contract import NOT_ARTICLE_PAGE_TYPES
from newsclean.schemas.records import (
    ARTICLE_SCHEMA,
    REJECT_SCHEMA,
    Article,
    Page,
    Reject,
    RejectReason,
    Stage,
    to_row,
)
from newsclean.transforms.chain import MIN_ARTICLE_WORDS, ChainConfig, Extraction, extract_article
from newsclean.transforms.errors import ExtractionError
from newsclean.transforms.metadata import (
    Metadata,
    absolute_url,
    identify_language,
    parse_iso_date,
    plausible,
    registered_domain,
)
from newsclean.transforms.parse import decode_html, looks_binary
from newsclean.transforms.static_noise import StaticNoiseSignature, learn_static_noise
from newsclean.transforms.text import content_hash

log = logging.getLogger(__name__)

#: MIME types accepted as HTML documents.
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
#: Longest reject message stored, in characters.
#: Wall-clock seconds one page may take to decode, parse and clean (:func:`clean_page`) before it becomes a
#: ``timeout`` reject (:mod:`newsclean.pipeline.budget`); pages of the shared data take well under 2 s.
RECORD_TIME_BUDGET_S = 30.0
#: Name of the articles / rejects / counts outputs under ``--out``.
ARTICLES_DIR, REJECTS_DIR, COUNTS_DIR = "articles", "rejects", "_counts"
PARQUET_SUFFIX = ".parquet"

__all__ = [
    "ReadWarc", "FilterResponses", "LearnStaticNoise", "CleanPages", "DedupExact", "WriteParquet",
    "WriteCounts", "classify_response", "looks_like_html", "learn_signature", "clean_page",
    "build_article", "pick_winner", "make_reject", "article_id",
]


def _inc(name: str, n: int = 1) -> None:
    """Increment the ``newsclean`` counter ``name`` by ``n``."""
    Metrics.counter(METRICS_NAMESPACE, name).inc(n)


#: ``(site, category)``: the key pages share their static noise under.
SiteKey = tuple[str, str]
#: One sampled neighbour page: ``(sort key: hex SHA-1 of the URL, body bytes, HTTP charset or None)``.
SampleEntry = tuple[str, bytes, str | None]


def make_reject(page: Page, stage: Stage, reason: RejectReason, message: str) -> Reject:
    """The reject row of a ``page`` (every stage after reading): :meth:`Reject.of` with the page's provenance."""
    return Reject.of(page.url, page.site, page.category, page.provenance, stage, reason, message)


class _RejectCountingFn(beam.DoFn):
    """Base for DoFns with a dead-letter output: counts each reject by reason."""

    @staticmethod
    def dead_letter(reject: Reject):
        _inc(f"rejects_{reject.reason}")
        return beam.pvalue.TaggedOutput(REJECTS_TAG, reject)


# --------------------------------------------------------------------------------------------
# ReadWarc
# --------------------------------------------------------------------------------------------


def _metadata_path(metadata) -> str:
    return metadata.path


class ReadWarc(beam.PTransform):
    """Match WARC files and read their response records.

    Input: the pipeline (``PBegin``). Output: a dict of PCollections
    ``{"pages": Page, "rejects": Reject, "counts": (str, int)}``.

    Args:
        patterns: file patterns for Beam's ``FileSystems.match`` (``*``: within a directory,
            ``**``: across directories); :func:`newsclean.pipeline.clean.resolve_warc_patterns` turns a user's
            glob or directory into these. Files matched by several patterns are read once.
    """

    def __init__(self, patterns: list[str]):
        super().__init__()
        self.patterns = list(patterns)

    def expand(self, pbegin):
        paths = (
            pbegin
            | "Patterns" >> beam.Create(self.patterns)
            | "MatchFiles" >> MatchAll(EmptyMatchTreatment.ALLOW)
            | "Paths" >> beam.Map(_metadata_path)
            | "DistinctPaths" >> beam.Distinct()
            | "SpreadFiles" >> beam.Reshuffle()
        )
        read = paths | "ReadRecords" >> beam.ParDo(ReadWarcFileFn()).with_outputs(
            REJECTS_TAG, COUNTS_TAG, main="pages")
        # One file holds many pages: break fusion so that cleaning spreads over workers.
        pages = read.pages | "SpreadPages" >> beam.Reshuffle()
        return {"pages": pages, "rejects": read[REJECTS_TAG], "counts": read[COUNTS_TAG]}


# --------------------------------------------------------------------------------------------
# FilterResponses
# --------------------------------------------------------------------------------------------


def looks_like_html(body: bytes) -> bool:
    """Sniff an HTML document in the first 1024 bytes (``<!doctype html``, ``<html``, ``<head``, ``<body``)."""
    head = body[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return any(tag in head for tag in (b"<!doctype html", b"<html", b"<head", b"<body"))


def classify_response(page: Page) -> tuple[RejectReason, str] | None:
    """Why ``page`` cannot be an article before any parsing, or None when it may be one.

    Checked in this order: HTTP status other than 200 (``http_status``), a page the crawler
    recorded as a listing page, feed, sitemap or robots.txt (``not_article``, from its
    ``WARC-Newsclean-Page-Type``; records without the header, e.g. from other crawlers, and type
    ``other`` go on to the next checks), a ``Content-Type`` that is not HTML (``not_html``; a missing one is
    accepted when the body sniffs as HTML), a body of zero bytes or only whitespace (``empty_body``), and a
    body that sniffs as binary whatever its Content-Type says (``not_html``,
    :func:`~newsclean.transforms.parse.looks_binary`).
    """
    if page.status != 200:
        return RejectReason.HTTP_STATUS, f"HTTP status {page.status}"
    if page.page_type in NOT_ARTICLE_PAGE_TYPES:
        return RejectReason.NOT_ARTICLE, f"the crawler recorded a {page.page_type} page"
    if page.content_type and page.content_type not in HTML_TYPES:
        return RejectReason.NOT_HTML, f"Content-Type {page.content_type}"
    if not page.html.strip():
        return RejectReason.EMPTY_BODY, "payload has no bytes"
    if not page.content_type and not looks_like_html(page.html):
        return RejectReason.NOT_HTML, "no Content-Type and the body does not look like HTML"
    if looks_binary(page.html):
        return RejectReason.NOT_HTML, f"Content-Type {page.content_type or 'missing'} but the body is binary data"
    return None


class FilterResponseFn(_RejectCountingFn):
    """``Page`` -> the same page (main output) or a stage ``filter`` reject (``REJECTS_TAG``)."""

    def process(self, page: Page):
        verdict = classify_response(page)
        if verdict is None:
            yield page
        else:
            yield self.dead_letter(make_reject(page, Stage.FILTER, *verdict))


class FilterResponses(beam.PTransform):
    """Keep HTML 200 responses with a body. Output: ``{"pages": Page, "rejects": Reject}``."""

    def expand(self, pages):
        out = pages | "Classify" >> beam.ParDo(FilterResponseFn()).with_outputs(REJECTS_TAG, main="pages")
        return {"pages": out.pages, "rejects": out[REJECTS_TAG]}


# --------------------------------------------------------------------------------------------
# LearnStaticNoise
# --------------------------------------------------------------------------------------------


def site_key(page: Page) -> SiteKey:
    """The key pages share their static noise under: ``(site, category)``."""
    return page.site, page.category


def _sample_entry(page: Page) -> tuple[SiteKey, SampleEntry]:
    """``((site, category), (sha1(url), body, charset))``; the hash orders a deterministic sample."""
    return site_key(page), (hashlib.sha1(page.url.encode("utf-8")).hexdigest(), page.html, page.charset)


def learn_signature(key: SiteKey, sample: list[SampleEntry],
                    config: ChainConfig) -> tuple[SiteKey, StaticNoiseSignature | None]:
    """Learn the static-noise signature (StaDyNoT §3.1) of ``key`` from its sampled neighbour pages.

    Args:
        key: ``(site, category)``.
        sample: at most N neighbour pages (:data:`SampleEntry`); a page that does not decode is skipped.
        config: the chain; its ``static`` parameters (None: static stage off) go to
            :func:`~newsclean.transforms.static_noise.learn_static_noise`, which also decides how few
            pages are too few.

    Returns ``(key, StaticNoiseSignature | None)``: None when the static stage is off, or when
    learning fails (logged, counted as ``signature_errors``); pages of that key are then cleaned
    without static-noise removal.
    """
    params = config.static
    if params is None:
        return key, None
    htmls = []
    for _, body, charset in sample:
        try:
            htmls.append(decode_html(body, charset)[0])
        except ExtractionError:
            continue
    try:
        signature = learn_static_noise(htmls, params)
    except Exception:  # a bug in transforms/ must not stop the job: pages still get cleaned
        log.exception("learn_static_noise failed for %s", key)
        _inc("signature_errors")
        return key, None
    _inc("signatures")
    return key, signature


class _ChainFn(beam.DoFn):
    """Base for DoFns that run the chain: holds the chain's name (it pickles), and resolves the
    configuration object in ``setup`` on the worker."""

    def __init__(self, chain: str):
        super().__init__()
        self.chain = chain
        self._config: ChainConfig | None = None

    def setup(self):
        self._config = resolve_chain_config(self.chain)


class LearnSignatureFn(_ChainFn):
    """``((site, category), [sampled entries])`` -> ``((site, category), signature | None)``."""

    def process(self, kv):
        yield learn_signature(kv[0], kv[1], self._config)


class LearnStaticNoise(beam.PTransform):
    """Pages -> ``((site, category), StaticNoiseSignature | None)``, one per key.

    StaDyNoT §3.1 learns static noise from neighbour pages of the same site; here from a bounded,
    deterministic sample of at most ``neighbour_sample`` pages per (site, category): the pages
    with the smallest SHA-1 of their URL (``Top.SmallestPerKey``, a combiner, so no worker holds
    more than N pages of a key). Deterministic rather than ``Sample.FixedSizePerKey`` so that
    two runs over the same WARC files give the same articles.

    Args:
        neighbour_sample: N, pages sampled per key (>= 1).
        chain: ``--chain`` name; its static-noise parameters are used.
    """

    def __init__(self, neighbour_sample: int, chain: str = "default"):
        super().__init__()
        self.neighbour_sample = neighbour_sample
        self.chain = chain

    def expand(self, pages):
        return (
            pages
            | "KeyBySiteCategory" >> beam.Map(_sample_entry)
            | "SampleNeighbours" >> beam.combiners.Top.SmallestPerKey(self.neighbour_sample)
            | "Learn" >> beam.ParDo(LearnSignatureFn(self.chain))
        )


# --------------------------------------------------------------------------------------------
# CleanPages
# --------------------------------------------------------------------------------------------


def article_id(url: str, text_hash: str) -> str:
    """Stable article id: hex SHA-1 of ``url + "\\n" + content_hash`` (40 characters)."""
    return hashlib.sha1(f"{url}\n{text_hash}".encode()).hexdigest()


def _utc(dt: datetime | None) -> datetime | None:
    """``dt`` as aware UTC (a naive value is taken as UTC); None stays None."""
    if dt is None:
        return None
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def build_article(page: Page, extraction: Extraction) -> Article:
    """The :class:`~newsclean.schemas.records.Article` row for ``page`` cleaned into ``extraction``: ids and hash of the text,
    the page's metadata, the identified language and the per-stage counts.

    What the page itself says comes first; where it says nothing, the crawler's sitemap facts fill in
    (``page.sitemap_*``, from the WARC metadata record): ``news:title`` for the title,
    ``news:publication_date`` for ``published_at``, ``lastmod`` for ``modified_at`` (ISO 8601 / W3C
    Datetime only, within the plausible range of :func:`~newsclean.transforms.metadata.plausible`)."""
    text_hash = content_hash(extraction.text)
    counts = extraction.counts
    prov = page.provenance
    meta = extraction.metadata or Metadata()
    fetched = _utc(page.fetched_at)
    language, language_score = identify_language(extraction.text)
    return Article(
        article_id=article_id(page.url, text_hash),
        url=page.url,
        site=page.site,
        category=page.category,
        fetched_at=fetched,
        title=extraction.title or page.sitemap_title,
        published_at=plausible(extraction.published_at, now=fetched)
        or plausible(parse_iso_date(page.sitemap_publication_date), now=fetched),
        language=language,
        text=extraction.text,
        html=extraction.html,
        word_count=int(extraction.word_count),
        content_hash=text_hash,
        static_nodes_removed=counts.static_nodes_removed,
        dynamic_nodes_removed=counts.dynamic_nodes_removed,
        dynamic_nodes_marked=counts.dynamic_nodes_marked,
        noninformative_nodes_removed=counts.noninformative_nodes_removed,
        blocks_kept=counts.blocks_kept,
        blocks_total=counts.blocks_total,
        warc_file=prov.warc_file,
        warc_record_id=prov.record_id,
        warc_offset=prov.offset,
        authors=tuple(meta.authors),
        description=meta.description,
        image_url=absolute_url(page.url, meta.image_url),
        canonical_url=absolute_url(page.url, meta.canonical_url),
        domain=registered_domain(page.url),
        site_name=meta.site_name,
        modified_at=plausible(meta.modified_at, now=fetched)
        or plausible(parse_iso_date(page.sitemap_lastmod), now=fetched),
        section=meta.section,
        tags=tuple(meta.tags),
        language_score=language_score,
        declared_language=extraction.language,
    )


def clean_page(page: Page, signature: StaticNoiseSignature | None, config: ChainConfig,
               min_words: int = MIN_ARTICLE_WORDS) -> Article | Reject:
    """Decode, clean and extract one page: an :class:`~newsclean.schemas.records.Article`, or a :class:`~newsclean.schemas.records.Reject`.

    Args:
        page: an HTML 200 page with a body (after :class:`FilterResponses`).
        signature: the static-noise signature of the page's (site, category), or None.
        config: the chain.
        min_words: the corpus filter (``CleanConfig.min_words``): fewer kept words is a ``too_short`` reject.

    Never raises: :class:`~newsclean.transforms.errors.ExtractionError` becomes a reject with its reason
    (stage ``decode`` from :func:`~newsclean.transforms.parse.decode_html`, ``clean`` from the chain); any
    other exception becomes ``internal_error`` with the exception's type and message; running over
    :data:`RECORD_TIME_BUDGET_S` (read at call time) becomes ``timeout``.
    """
    stage = Stage.DECODE
    try:
        with time_budget(RECORD_TIME_BUDGET_S):
            html, _codec = decode_html(page.html, page.charset)
            stage = Stage.CLEAN
            extraction = extract_article(html, signature, config, url=page.url, min_words=min_words)
            return build_article(page, extraction)
    except RecordTimeout:
        return make_reject(page, stage, RejectReason.TIMEOUT, f"cleaning took over {RECORD_TIME_BUDGET_S} s")
    except ExtractionError as exc:
        return make_reject(page, stage, exc.reason, exc.message)
    except Exception as exc:  # a bug must cost one page, not the job
        log.warning("internal error cleaning %s: %s: %s", page.url, type(exc).__name__, exc)
        return make_reject(page, stage, RejectReason.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")


class CleanPageFn(_ChainFn, _RejectCountingFn):
    """``Page`` (+ side input ``{(site, category): signature}``) -> Article or reject (``REJECTS_TAG``)."""

    def __init__(self, chain: str, min_words: int = MIN_ARTICLE_WORDS):
        super().__init__(chain)
        self.min_words = min_words

    def process(self, page: Page, signatures):
        out = clean_page(page, signatures.get(site_key(page)), self._config, self.min_words)
        if isinstance(out, Article):
            yield out
        else:
            yield self.dead_letter(out)


class CleanPages(beam.PTransform):
    """Pages -> ``{"articles": Article, "rejects": Reject}``, with per-key signatures as a side input.

    Args:
        signatures: PCollection of ``((site, category), signature | None)`` from :class:`LearnStaticNoise`,
            used as ``beam.pvalue.AsDict`` (one small signature per key).
        chain: ``--chain`` name (a key of ``newsclean.transforms.chain.CONFIGS``).
        min_words: ``--min-words``, the corpus filter (fewer kept words: a ``too_short`` reject).
    """

    def __init__(self, signatures, chain: str = "default", min_words: int = MIN_ARTICLE_WORDS):
        super().__init__()
        self.signatures = signatures
        self.chain = chain
        self.min_words = min_words

    def expand(self, pages):
        out = pages | "Extract" >> beam.ParDo(
            CleanPageFn(self.chain, self.min_words), signatures=beam.pvalue.AsDict(self.signatures)
        ).with_outputs(REJECTS_TAG, main="articles")
        return {"articles": out.articles, "rejects": out[REJECTS_TAG]}


# --------------------------------------------------------------------------------------------
# DedupExact
# --------------------------------------------------------------------------------------------


def _rank(article: Article) -> tuple:
    """Sort key of the winner among exact duplicates: earliest fetch, then smallest URL (then provenance)."""
    return article.fetched_at, article.url, article.warc_file, article.warc_offset


def pick_winner(a: Article | None, b: Article | None) -> Article | None:
    """The article that stays when ``a`` and ``b`` have the same content hash (None-safe)."""
    if a is None:
        return b
    if b is None:
        return a
    return a if _rank(a) <= _rank(b) else b


class FirstFetchedFn(beam.CombineFn):
    """CombineFn over articles of one content hash -> ``(winner, number of articles)``.

    The accumulator is ``(best article or None, count)``: one article per key in memory.
    """

    def create_accumulator(self):
        return None, 0

    def add_input(self, acc, article):
        return pick_winner(acc[0], article), acc[1] + 1

    def merge_accumulators(self, accumulators):
        best, n = None, 0
        for a, c in accumulators:
            best, n = pick_winner(best, a), n + c
        return best, n

    def extract_output(self, acc):
        return acc


def _by_hash(article: Article):
    return article.content_hash, article


class EmitWinnerFn(beam.DoFn):
    """``(hash, (winner, n))`` -> the winner; ``("duplicates_dropped", n - 1)`` on ``COUNTS_TAG``."""

    def process(self, kv):
        _, (winner, n) = kv
        _inc("articles")
        yield winner
        if n > 1:
            _inc("duplicates", n - 1)
            yield beam.pvalue.TaggedOutput(COUNTS_TAG, ("duplicates_dropped", n - 1))


class DedupExact(beam.PTransform):
    """Drop exact duplicates (same normalised text, i.e. same ``content_hash``).

    Output: ``{"articles": Article, "counts": ("duplicates_dropped", int)}``. The winner is the
    earliest fetch, then the smallest URL, so the result does not depend on the runner's order.
    """

    def expand(self, articles):
        out = (
            articles
            | "KeyByContentHash" >> beam.Map(_by_hash)
            | "KeepFirstFetched" >> beam.CombinePerKey(FirstFetchedFn())
            | "EmitWinners" >> beam.ParDo(EmitWinnerFn()).with_outputs(COUNTS_TAG, main="articles")
        )
        return {"articles": out.articles, "counts": out[COUNTS_TAG]}


# --------------------------------------------------------------------------------------------
# WriteParquet / WriteCounts
# --------------------------------------------------------------------------------------------


def output_prefix(out: str, name: str) -> str:
    """File prefix of output ``name`` under ``out``: ``OUT/<name>/part``."""
    return FileSystems.join(out, name, "part")


class WriteParquet(beam.PTransform):
    """Write ``{"articles": Article, "rejects": Reject}`` to ``OUT/articles/part-*.parquet``
    and ``OUT/rejects/part-*.parquet`` with the schemas of :mod:`newsclean.schemas.records` (snappy).

    An empty PCollection still
    gives one Parquet file with the schema and no rows (Beam writes an empty shard), which
    pyarrow, pandas and DuckDB read as an empty table.
    """

    def __init__(self, out: str):
        super().__init__()
        self.out = out

    def expand(self, pcolls):
        rejects = pcolls["rejects"]
        a = (pcolls["articles"] | "ArticleRows" >> beam.Map(to_row)
             | "WriteArticles" >> beam.io.WriteToParquet(
                 output_prefix(self.out, ARTICLES_DIR), ARTICLE_SCHEMA, codec="snappy",
                 file_name_suffix=PARQUET_SUFFIX))
        r = (rejects | "RejectRows" >> beam.Map(to_row)
             | "WriteRejects" >> beam.io.WriteToParquet(
                 output_prefix(self.out, REJECTS_DIR), REJECT_SCHEMA, codec="snappy",
                 file_name_suffix=PARQUET_SUFFIX))
        return {"articles": a, "rejects": r}


def _json_line(kv) -> str:
    import json

    return json.dumps({"name": kv[0], "value": kv[1]}, sort_keys=True)


class WriteCounts(beam.PTransform):
    """Sum ``(name, int)`` count pairs and write them to ``OUT/_counts/counts.jsonl``.

    One JSON object per line, ``{"name": ..., "value": ...}``; a name that never occurred is
    absent (read as 0). Input: a list/tuple of PCollections or one PCollection.
    """

    def __init__(self, out: str):
        super().__init__()
        self.out = out

    def expand(self, counts):
        if isinstance(counts, (list, tuple)):
            counts = tuple(counts) | "FlattenCounts" >> beam.Flatten()
        return (
            counts
            | "Sum" >> beam.CombinePerKey(sum)
            | "ToJson" >> beam.Map(_json_line)
            | "Write" >> beam.io.WriteToText(FileSystems.join(self.out, COUNTS_DIR, "counts"),
                                             file_name_suffix=".jsonl", shard_name_template="")
        )
