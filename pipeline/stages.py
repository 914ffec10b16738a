"""The cleaning pipeline's stages before and after dedup: one composite ``PTransform`` per stage, stable labels.

    FindWarcFiles ─┬─► LearnSiteEvidence: refs (key, SHA-1 of URL, file, offset) ─► sample ─► re-read ─► learn
                   │        └─► sections of other crawlers' URLs (side input) ─┐              │ (side input)
                   └─► ReadWarc ◄──────────────────────────────────────────────┘              │
                          └─► FilterResponses ─► CleanPages ◄─────────────────────────────────┘
                                                               │
                                                   (dedup: pipeline/dedup.py) ─► WriteParquet, WriteCounts

Every WARC response record ends as exactly one article row, one reject row, or one counted
duplicate. Rejects leave each stage on a tagged dead-letter output (:data:`REJECTS_TAG`) and are
flattened into ``rejects/*.parquet``; small ``(name, int)`` count pairs (:data:`COUNTS_TAG`) give
the run summary its records-read and duplicates-dropped numbers without relying on runner
metrics. ``Metrics.counter`` counters (namespace ``newsclean``) are kept too: ``records_read``,
``pages_read``, ``rejects_<reason>``, ``articles``, ``duplicates``.

The per-element logic lives in plain functions (:func:`classify_response`,
:func:`evidence_for_key`, :func:`clean_page`, :func:`build_article`), testable without Beam. lxml
trees never leave a function: elements between steps are :class:`~newsclean.schemas.records.Page`,
:class:`~newsclean.schemas.records.Article`, :class:`~newsclean.schemas.records.Reject` and site evidence, all picklable.

**Memory.** A runner holds what crosses a shuffle or feeds a side input (Beam's in-memory
DirectRunner holds all of it at once), so no page HTML and no article text crosses one: the WARC files are
read twice, once for ``(site, category) -> (SHA-1 of URL, WARC file, offset)`` references from which the
neighbour sample is chosen (the sampled pages' HTML is re-read by offset for learning), and once streaming
``read -> filter -> clean`` with the per-key site evidence as a side input. The cleaned articles then wait on
disk while dedup decides on small keys (:mod:`newsclean.pipeline.dedup`).
Parallelism is per WARC file (the files are spread; pages of one file are cleaned in order).
"""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import UTC, datetime
from typing import NamedTuple

import apache_beam as beam
import pyarrow as pa
from apache_beam.io.fileio import EmptyMatchTreatment, MatchAll
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from newsclean.pipeline.budget import RecordTimeout, measures_cpu_time, time_budget
from newsclean.pipeline.formats import write_rows
from newsclean.pipeline.options import CleanConfig
from newsclean.pipeline.progress import CountProgress
from newsclean.pipeline.warc_reader import (
    COUNTS_TAG,
    REJECTS_TAG,
    ReadWarcFileFn,
    inc_counter,
    iter_warc_file,
)
from newsclean.schemas.contract import NOT_ARTICLE_PAGE_TYPES, UNKNOWN, PageType
from newsclean.schemas.records import (
    ARTICLE_SCHEMA,
    REJECT_SCHEMA,
    Article,
    Page,
    Provenance,
    Reject,
    RejectReason,
    Stage,
    to_row,
)
from newsclean.transforms.chain import DEFAULT_CONFIG, MIN_ARTICLE_WORDS, ChainConfig, Extraction, extract_article
from newsclean.transforms.errors import ExtractionError
from newsclean.transforms.finish import PageFacts
from newsclean.transforms.metadata import Metadata
from newsclean.transforms.parse import decode_html, html_refusal, looks_like_html
from newsclean.transforms.site_evidence import SiteEvidence, learn_site_evidence, pages_needed
from newsclean.transforms.text import content_hash

log = logging.getLogger(__name__)

#: Seconds of CPU time (of the thread cleaning the page; wall-clock time where the platform has no thread CPU
#: clock) one page may take to decode, parse and clean (:func:`clean_page`) before it becomes a ``timeout`` reject
#: (:mod:`newsclean.pipeline.budget`); pages of the shared data take well under 2 s, a flat page of 200,000
#: paragraphs about 8 s. The chain's one-time work (imports, models) is done before (:func:`warm_up`).
RECORD_TIME_BUDGET_S = 30.0
#: Name of the articles / rejects / counts outputs under ``--out``.
ARTICLES_DIR, REJECTS_DIR, COUNTS_DIR = "articles", "rejects", "_counts"
#: Parquet row group of ``OUT/articles``, in bytes of Arrow data, and the rows turned into Arrow at once: what
#: each writer holds before it writes (Beam's defaults, 64 MiB and 1,000 rows of text and HTML, were most of a
#: worker's peak in the last stage).
ARTICLE_ROW_GROUP_BYTES, ARTICLE_RECORD_BATCH = 16 << 20, 100
PARQUET_SUFFIX = ".parquet"

__all__ = [
    "FindWarcFiles", "ReadWarc", "FilterResponses", "LearnSiteEvidence", "CleanPages", "WriteParquet", "WriteCounts",
    "classify_response", "looks_like_html", "evidence_for_key", "clean_page", "page_facts", "build_article", "make_reject",
    "language_reject", "article_id", "read_pages_at", "read_and_clean", "Cleaned",
]


#: ``(site, category)``: the key pages share their static noise under.
SiteKey = tuple[str, str]
#: One sampled neighbour page: ``(sort key: hex SHA-1 of the URL, body bytes, HTTP charset or None)``.
SampleEntry = tuple[str, bytes, str | None]
#: Where a page lies, for choosing the sample without its HTML: ``(hex SHA-1 of the URL, WARC file, byte offset)``.
SampleRef = tuple[str, str, int]


def make_reject(page: Page, stage: Stage, reason: RejectReason, message: str) -> Reject:
    """The reject row of a ``page`` (every stage after reading): :meth:`Reject.of` with the page's provenance."""
    return Reject.of(page.url, page.site, page.category, page.provenance, stage, reason, message)


class _RejectCountingFn(beam.DoFn):
    """Base for DoFns with a dead-letter output: counts each reject by reason."""

    @staticmethod
    def dead_letter(reject: Reject):
        inc_counter(f"rejects_{reject.reason}")
        return beam.pvalue.TaggedOutput(REJECTS_TAG, reject)


# --------------------------------------------------------------------------------------------
# ReadWarc
# --------------------------------------------------------------------------------------------


def _metadata_path(metadata) -> str:
    return metadata.path


class FindWarcFiles(beam.PTransform):
    """The distinct WARC file paths the file patterns match, not yet spread over workers.

    Input: the pipeline (``PBegin``). Args: ``patterns``: file patterns for Beam's ``FileSystems.match`` (``*``:
    within a directory, ``**``: across directories); :func:`newsclean.pipeline.clean.resolve_warc_patterns` turns a
    user's glob or directory into these. Files matched by several patterns are read once.
    """

    def __init__(self, patterns: list[str]):
        super().__init__()
        self.patterns = list(patterns)

    def expand(self, pbegin):
        return distinct_paths(pbegin, self.patterns)


class ReadWarc(beam.PTransform):
    """Read the response records of WARC files.

    Input: WARC file paths (:class:`FindWarcFiles`). Output: a dict of PCollections ``{"pages": Page, "rejects":
    Reject, "counts": (str, int)}``.

    Pages are not reshuffled: a runner would hold every page's HTML at that shuffle. Work
    spreads per file; one file's pages are read and cleaned in one fused step, streaming. The two reads
    must not share the spread step: a runner that fused the sample's read with the pages' read could not
    fuse the cleaning into it (its side input, the site evidence, would be computed downstream of the same
    step), and would hold every page between reading and cleaning.

    Args:
        sections: PCollection of ``((site, section), pages)`` (:class:`LearnSiteEvidence`'s ``sections``): the
            URL sections a page of another crawler may take as its category (a side input); None: every section.
        read_from: path -> byte offset to read that file's records from (``CleanConfig.read_from``); others whole.
        hosts: ``CleanConfig.hosts``: response records of other hosts are counted skips (``outside_hosts``).
    """

    def __init__(self, sections=None, read_from: dict[str, int] | None = None, hosts: tuple[str, ...] = ()):
        super().__init__()
        self.sections = sections
        self.read_from = read_from or {}
        self.hosts = hosts

    def expand(self, paths):
        sections = () if self.sections is None else (beam.pvalue.AsDict(self.sections),)
        read = (paths
                | "SpreadFiles" >> beam.Reshuffle()
                | "ReadRecords" >> beam.ParDo(ReadWarcFileFn(self.read_from, self.hosts), *sections).with_outputs(
                    REJECTS_TAG, COUNTS_TAG, main="pages"))
        return {"pages": read.pages, "rejects": read[REJECTS_TAG], "counts": read[COUNTS_TAG]}


def distinct_paths(pbegin, patterns: list[str]):
    """The distinct WARC file paths matched by ``patterns`` (labels ``Patterns``, ``MatchFiles``, ``Paths``,
    ``DistinctPaths``), not yet spread over workers."""
    return (
        pbegin
        | "Patterns" >> beam.Create(patterns)
        | "MatchFiles" >> MatchAll(EmptyMatchTreatment.ALLOW)
        | "Paths" >> beam.Map(_metadata_path)
        | "DistinctPaths" >> beam.Distinct()
    )


# --------------------------------------------------------------------------------------------
# FilterResponses
# --------------------------------------------------------------------------------------------


def classify_response(page: Page) -> tuple[RejectReason, str] | None:
    """Why ``page`` cannot be an article before any parsing, or None when it may be one.

    Checked in this order: HTTP status other than 200 (``http_status``), a page the crawler
    recorded as a listing page, feed, sitemap or robots.txt (``not_article``, from its
    ``WARC-Newsclean-Page-Type``; records without the header, e.g. from other crawlers, and type
    ``other`` go on to the next checks), a ``Content-Type`` that is not HTML (``not_html``; a missing one is
    accepted when the body sniffs as HTML), a body of zero bytes or only whitespace (``empty_body``), and a
    body that sniffs as binary or as a JSON document whatever its Content-Type says (``not_html``,
    :func:`~newsclean.schemas.sniff.looks_binary`, :func:`~newsclean.transforms.parse.looks_like_json`); the checks
    after the page type are :func:`~newsclean.transforms.parse.html_refusal`, which ``newsclean extract`` applies too.
    """
    if page.status != 200:
        return RejectReason.HTTP_STATUS, f"HTTP status {page.status}"
    if page.page_type in NOT_ARTICLE_PAGE_TYPES:
        return RejectReason.NOT_ARTICLE, f"the crawler recorded a {page.page_type} page"
    return html_refusal(page.html, page.content_type)


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
# LearnSiteEvidence
# --------------------------------------------------------------------------------------------


def site_key(page: Page) -> SiteKey:
    """The key pages share their static noise under: ``(site, category)``."""
    return page.site, page.category


def sample_ref(page: Page) -> tuple[SiteKey, SampleRef]:
    """``((site, category), (sha1(url), WARC file, offset))``: the hash orders a deterministic sample, the file
    and offset find the page again (:func:`read_pages_at`)."""
    prov = page.provenance
    return site_key(page), (url_hash(page.url), prov.warc_file, prov.offset)


def url_hash(url: str) -> str:
    """Hex SHA-1 of a URL: the sort key of the neighbour sample."""
    return hashlib.sha1(url.encode("utf-8")).hexdigest()


def read_pages_at(path: str, wanted: list[tuple[int, str]]) -> dict[tuple[int, str], Page]:
    """The pages of ``wanted`` ``(offset, URL hash)`` pairs of ``path``: the response records at byte ``offset``
    whose URL has that :func:`url_hash`.

    Offsets are as the reader records them (``Provenance.offset``: the start of the gzip member holding the record
    in a ``.warc.gz``, the record's first byte in a ``.warc``); the URL hash tells apart the records of one gzip
    member (a ``.warc.gz`` compressed whole holds every record in one). The file is opened once, uncompressed
    (Beam's ``FileSystems``: local paths or any filesystem URL), and read from each offset with
    :func:`~newsclean.pipeline.warc_reader.iter_warc_file` while the items lie at that offset and pages are still
    wanted there. Returns ``{(offset, hash): Page}``; a pair found nowhere is absent. Raises ``OSError`` when the
    file cannot be opened.
    """
    by_offset: dict[int, set[str]] = {}
    for offset, digest in wanted:
        by_offset.setdefault(offset, set()).add(digest)
    found: dict[tuple[int, str], Page] = {}
    with FileSystems.open(path, mime_type="application/octet-stream",
                          compression_type=CompressionTypes.UNCOMPRESSED) as stream:
        for offset, digests in sorted(by_offset.items()):
            stream.seek(offset)
            items = iter_warc_file(path, stream=stream)
            for item in items:
                if (item.provenance.offset if isinstance(item, Page) else item.warc_offset) != offset:
                    break  # a later record's
                digest = url_hash(item.url)
                if isinstance(item, Page) and digest in digests:
                    found[(offset, digest)] = item
                    digests.discard(digest)
                    if not digests:
                        break
            items.close()
    return found


def read_sample(refs: list[SampleRef]) -> list[SampleEntry]:
    """The sampled neighbour pages of ``refs`` as :data:`SampleEntry` items, in ascending order (as
    ``Top.SmallestPerKey`` over the entries themselves would give them). A page that cannot be read again
    (the file changed or went away since the first read) is left out."""
    by_file: dict[str, list[SampleRef]] = {}
    for ref in refs:
        by_file.setdefault(ref[1], []).append(ref)
    entries = []
    for path, file_refs in sorted(by_file.items()):
        try:
            pages = read_pages_at(path, [(offset, key) for key, _, offset in file_refs])
        except OSError:
            log.warning("cannot re-read %s for the neighbour sample", path)
            continue
        entries.extend((key, pages[offset, key].html, pages[offset, key].charset)
                       for key, _, offset in file_refs if (offset, key) in pages)
    return sorted(entries)


#: The tagged output of :class:`SampleRefsFn`: ``(WARC file path, sites)``, the sites of the file's pages.
FILE_SITES_TAG = "file_sites"


class SampleRefsFn(beam.DoFn):
    """WARC file path -> ``(category from the URL?, ((site, category), SampleRef))`` for each page that
    :func:`classify_response` lets through (the first of the two reads; rejects and counts are left to
    ``ReadWarc``'s read). A page of another crawler has its URL's section as category here, flagged
    (``Page.category_from_url``), until :func:`section_key` knows the section's size. ``hosts``: as the reader's
    (``--hosts``), so no evidence is learnt for pages that are not read. Tagged :data:`FILE_SITES_TAG`, once a
    file: ``(path, sites)``, the sorted sites of those pages (the sites whose evidence the file needs)."""

    def __init__(self, hosts: tuple[str, ...] = ()):
        super().__init__()
        self.hosts = hosts

    def process(self, path: str):
        sites = set()
        for item in iter_warc_file(path, hosts=self.hosts):
            if isinstance(item, Page) and classify_response(item) is None:
                sites.add(item.site)
                yield item.category_from_url, sample_ref(item)
        yield beam.pvalue.TaggedOutput(FILE_SITES_TAG, (path, tuple(sorted(sites))))


def _section_page(flagged) -> bool:
    from_url, (key, _) = flagged
    return from_url and key[1] != UNKNOWN


def _one_page(flagged) -> tuple[SiteKey, int]:
    return flagged[1][0], 1


def _has_pages(kv: tuple[SiteKey, int], n: int) -> bool:
    return kv[1] >= n


def section_key(flagged, sections: dict[SiteKey, int]) -> tuple[SiteKey, SampleRef]:
    """The sample key of a page: its ``(site, category)``, except that a category taken from the URL stays only
    for one of ``sections`` (sections with enough pages); other such pages go to ``(site, "unknown")``, the host's
    group (:func:`~newsclean.pipeline.warc_reader.category_from_url` gives the pages the same category)."""
    from_url, (key, ref) = flagged
    if from_url and key not in sections:
        return (key[0], UNKNOWN), ref
    return key, ref


class _ChainFn(beam.DoFn):
    """Base for DoFns that run the chain: holds the run's :class:`ChainConfig` itself (``CleanConfig.chain``, a
    frozen dataclass that pickles in a few KB with the DoFn), so that no worker looks a chain up by name."""

    def __init__(self, chain: ChainConfig):
        super().__init__()
        self._config = chain


def needs_reading(refs: list[SampleRef], config: ChainConfig) -> bool:
    """Whether the sampled pages of one key are worth reading again: the sample has at least the pages that
    chain ``config`` learns anything from (:func:`~newsclean.transforms.site_evidence.pages_needed`). A
    smaller one (a (site, category) with a single page) learns no keys and no profile, so its evidence is the
    same without reading or parsing its page."""
    needed = pages_needed(config.static)
    return needed is not None and len(refs) >= needed


class ReadSampleFn(_ChainFn):
    """``((site, category), [SampleRef])`` -> ``((site, category), [SampleEntry])`` (:func:`read_sample`); empty
    when the sample is too small to learn from (:func:`needs_reading`)."""

    def process(self, kv):
        refs = list(kv[1])
        yield kv[0], read_sample(refs) if needs_reading(refs, self._config) else []


def evidence_for_key(key: SiteKey, sample: list[SampleEntry],
                     config: ChainConfig) -> tuple[SiteKey, SiteEvidence | None]:
    """The site evidence of ``key`` (static-noise signature, StaDyNoT §3.1, and site profile) from its sampled
    neighbour pages.

    Args:
        key: ``(site, category)``.
        sample: at most N neighbour pages (:data:`SampleEntry`); a page that does not decode is skipped.
        config: the chain; its ``static`` parameters (None: static stage off) go to
            :func:`~newsclean.transforms.site_evidence.learn_site_evidence`, which also decides how few
            pages are too few.

    Returns ``(key, SiteEvidence | None)``: None when the static stage is off, or when learning fails (logged,
    counted as ``signature_errors``); pages of that key are then cleaned without static-noise removal.
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
        evidence = learn_site_evidence(htmls, params)
    except Exception:  # a bug in transforms/ must not stop the job: pages still get cleaned
        log.exception("learn_site_evidence failed for %s", key)
        inc_counter("signature_errors")
        return key, None
    inc_counter("signatures")
    return key, evidence


class LearnSiteEvidenceFn(_ChainFn):
    """``((site, category), [sampled entries])`` -> ``((site, category), SiteEvidence | None)``."""

    def process(self, kv):
        yield evidence_for_key(kv[0], kv[1], self._config)


class LearnSiteEvidence(beam.PTransform):
    """WARC file paths -> ``{"evidence": ((site, category), SiteEvidence | None) one per key, "sections":
    ((site, section), pages) of each URL section with at least ``neighbour_sample`` pages, "file_sites": (WARC file
    path, sites of its pages) once a file (:class:`SampleRefsFn`'s tagged output, from the same read)}``.

    StaDyNoT §3.1 learns static noise from neighbour pages of the same site; here from a bounded,
    deterministic sample of at most ``neighbour_sample`` pages per (site, category): the pages
    with the smallest SHA-1 of their URL (``Top.SmallestPerKey``, a combiner), among the pages that
    :class:`FilterResponses` keeps. Deterministic rather than ``Sample.FixedSizePerKey`` so that
    two runs over the same WARC files give the same articles.

    Pages of another crawler (no category header, no folder layout) are grouped by their host and the section
    their URL names only when that section alone fills the neighbour sample (``neighbour_sample`` pages or more);
    the pages of smaller sections, and those whose URL names none, form their host's group ``(host, "unknown")``,
    so that a site split into many small sections still learns from a full sample. ``sections`` is a side input
    of :class:`ReadWarc`, which gives each page the same category.

    Only references cross the shuffle (:data:`SampleRef`, about 150 bytes a page); the sampled pages'
    HTML is then read again by offset (:func:`read_sample`, N pages per key), unless the key has fewer pages
    than the chain learns from (:func:`needs_reading`: a (site, category) of one page learns nothing, so its
    page is not read or parsed twice). Among pages with the same URL in one key, the tie is broken by (file, offset).

    Args:
        neighbour_sample: N, pages sampled per key (>= 1), and the pages a URL section needs to be a key.
        chain: the run's chain (``CleanConfig.chain``); its static-noise parameters are used.
        hosts: ``CleanConfig.hosts``: only pages of these hosts are sampled and counted (``()``: every host).
    """

    def __init__(self, neighbour_sample: int, chain: ChainConfig = DEFAULT_CONFIG, hosts: tuple[str, ...] = ()):
        super().__init__()
        self.neighbour_sample = neighbour_sample
        self.chain = chain
        self.hosts = hosts

    def expand(self, paths):
        read = (paths
                | "SpreadFiles" >> beam.Reshuffle()  # its own, see ReadWarc
                | "KeyBySiteCategory" >> beam.ParDo(SampleRefsFn(self.hosts)).with_outputs(FILE_SITES_TAG,
                                                                                         main="refs"))
        refs = read.refs
        sections = (refs
                    | "SectionPages" >> beam.Filter(_section_page)
                    | "OnePage" >> beam.Map(_one_page)
                    | "CountSectionPages" >> beam.CombinePerKey(sum)
                    | "LargeSections" >> beam.Filter(_has_pages, self.neighbour_sample))
        evidence = (refs
                    | "KeyBySection" >> beam.Map(section_key, beam.pvalue.AsDict(sections))
                    | "SampleNeighbours" >> beam.combiners.Top.SmallestPerKey(self.neighbour_sample)
                    | "ReadSample" >> beam.ParDo(ReadSampleFn(self.chain))
                    | "Learn" >> beam.ParDo(LearnSiteEvidenceFn(self.chain)))
        return {"evidence": evidence, "sections": sections, "file_sites": read[FILE_SITES_TAG]}


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


def page_facts(page: Page) -> PageFacts:
    """What the WARC record knows of ``page`` besides its HTML, for the chain's finished fields
    (:func:`~newsclean.transforms.finish.finish_fields`): its URL, fetch time, the crawler's sitemap facts
    (``page.sitemap_*``, from the WARC metadata record: ``news:title``, ``news:publication_date``, ``lastmod``) and
    its recorded page type."""
    return PageFacts(url=page.url, fetched_at=page.fetched_at, title=page.sitemap_title,
                     published=page.sitemap_publication_date, modified=page.sitemap_lastmod, page_type=page.page_type)


def build_article(page: Page, extraction: Extraction) -> Article:
    """The :class:`~newsclean.schemas.records.Article` row for ``page`` cleaned into ``extraction``: the row's ids
    (``article_id``, ``content_hash`` of the text), the record's provenance and fetch time (aware UTC), and the
    extraction's fields as they are. The extraction is finished with the page's facts (:func:`page_facts`, as
    :func:`clean_page` runs the chain): language, dates, title, URLs and page type mean in the row what they mean in
    :class:`~newsclean.transforms.chain.Extraction` (:mod:`newsclean.transforms.finish`)."""
    text_hash = content_hash(extraction.text)
    counts = extraction.counts
    prov = page.provenance
    meta = extraction.metadata or Metadata()
    return Article(
        article_id=article_id(page.url, text_hash),
        url=page.url,
        site=page.site,
        category=page.category,
        fetched_at=_utc(page.fetched_at),
        title=extraction.title,
        published_at=extraction.published_at,
        language=extraction.language,
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
        image_url=extraction.image_url,
        canonical_url=extraction.canonical_url,
        domain=extraction.domain,
        site_name=meta.site_name,
        modified_at=extraction.modified_at,
        section=meta.section,
        tags=tuple(meta.tags),
        language_score=extraction.language_score,
        declared_language=extraction.declared_language,
        captions=tuple(extraction.captions),
        lead=extraction.lead,
        page_type=extraction.page_type,
        page_title=meta.page_title,
        is_accessible_for_free=extraction.is_accessible_for_free,
    )


def structure_reject(page: Page, extraction: Extraction, keep_listings: bool) -> str | None:
    """Why a cleaned page of a foreign WARC (no crawler page type) is no article: the message of a ``not_article``
    reject when the chain's structure says ``listing`` and ``keep_listings`` is off, else None."""
    if page.page_type or keep_listings or extraction.page_type != PageType.LISTING:
        return None
    return "no crawler page type; the page's structure is a listing (repeated cards, links, og:type, JSON-LD @type)"


def language_reject(extraction: Extraction, languages: tuple[str, ...] | None) -> str | None:
    """Why a cleaned page is not in the corpus's languages: the message of a ``language`` reject when ``languages``
    (``--languages``: codes :func:`~newsclean.transforms.metadata.identify_language` returns) is given and the
    page's identified ``language`` is not one of them (naming it and its probability), or is None (no letters to
    identify); else None."""
    if languages is None or extraction.language in languages:
        return None
    wanted = ",".join(languages)
    if extraction.language is None:
        return f"no language identified (no letters in the text), not one of --languages {wanted}"
    return (f"identified language {extraction.language} (score {extraction.language_score}), "
            f"not one of --languages {wanted}")


#: The page :func:`warm_up` cleans: an English article with JSON-LD, OpenGraph, a date and its author in a byline
#: only (the byline step runs), so that the libraries and models the chain and :func:`build_article` load on first
#: use are loaded.
WARM_UP_PAGE = Page(
    url="http://warm-up.invalid/news/2024/05/01/harbour.html", site="warm-up.invalid", category="news",
    fetched_at=datetime(2024, 5, 1, tzinfo=UTC), status=200, content_type="text/html", charset="utf-8",
    provenance=Provenance("", "", 0), html=(
        '<html lang="en"><head><meta charset="utf-8"><title>Council approves the harbour plan</title>'
        '<meta property="og:title" content="Council approves the harbour plan">'
        '<meta property="article:published_time" content="2024-05-01T09:00:00Z">'
        '<script type="application/ld+json">{"@context": "https://schema.org", "@type": "NewsArticle", '
        '"headline": "Council approves the harbour plan"}'
        '</script></head><body><nav><a href="/">Home</a> <a href="/news/">News</a></nav><article>'
        '<h1>Council approves the harbour plan</h1><div class="byline">By Ann Lee</div>' + "".join(
            f"<p>The council voted on Monday, after {i} hours of debate, to approve the plan for the harbour, "
            "and members said the costs would be shared by the town and the port authority.</p>"
            for i in range(2, 8)) + '</article><footer>Copyright 2024</footer></body></html>').encode())

_WARMED_UP: set[ChainConfig] = set()


def warm_up(config: ChainConfig) -> None:
    """Do the one-time work of cleaning with ``config`` in this process (imports, models, the compiled kernel,
    first-use tables) by cleaning :data:`WARM_UP_PAGE` once, outside any page's time budget, so that the first
    page a worker cleans is not charged for it. Later calls with the same ``config`` return at once. Never
    raises (a warm-up page that does not become an article is logged)."""
    if config in _WARMED_UP:
        return
    _WARMED_UP.add(config)
    out = _clean_within(None, WARM_UP_PAGE, None, config, MIN_ARTICLE_WORDS, False)
    if isinstance(out, Reject):
        log.debug("warming up the chain: the warm-up page became a %s reject: %s", out.reason, out.message)


def clean_page(page: Page, evidence: SiteEvidence | None, config: ChainConfig,
               min_words: int = MIN_ARTICLE_WORDS, keep_listings: bool = False,
               languages: tuple[str, ...] | None = None) -> Article | Reject:
    """Decode, clean and extract one page: an :class:`~newsclean.schemas.records.Article`, or a :class:`~newsclean.schemas.records.Reject`.

    Args:
        page: an HTML 200 page with a body (after :class:`FilterResponses`).
        evidence: the site evidence of the page's (site, category), or None.
        config: the chain.
        min_words: the corpus filter (``CleanConfig.min_words``): fewer kept words is a ``too_short`` reject.
        keep_listings: keep a foreign WARC's listing pages as rows (``--keep-listings``); off: ``not_article``
            rejects (:func:`structure_reject`).
        languages: the language filter (``CleanConfig.languages``): another identified language, or none, is a
            ``language`` reject (:func:`language_reject`); None: no filter.

    Never raises: :class:`~newsclean.transforms.errors.ExtractionError` becomes a reject with its reason
    (stage ``decode`` from :func:`~newsclean.transforms.parse.decode_html`, ``clean`` from the chain); any
    other exception becomes ``internal_error`` with the exception's type and message; running over
    :data:`RECORD_TIME_BUDGET_S` of CPU time (read at call time; :mod:`newsclean.pipeline.budget`) becomes
    ``timeout``. The chain's one-time work is done first, outside the budget (:func:`warm_up`).
    """
    warm_up(config)
    return _clean_within(RECORD_TIME_BUDGET_S, page, evidence, config, min_words, keep_listings, languages)


def _clean_within(budget_s: float | None, page: Page, evidence: SiteEvidence | None, config: ChainConfig,
                  min_words: int, keep_listings: bool, languages: tuple[str, ...] | None = None) -> Article | Reject:
    """:func:`clean_page` with a budget of ``budget_s`` seconds (None: none)."""
    stage = Stage.DECODE
    try:
        with time_budget(budget_s):
            html, _codec = decode_html(page.html, page.charset)
            stage = Stage.CLEAN
            extraction = extract_article(html, evidence, config, url=page.url, min_words=min_words,
                                         facts=page_facts(page))
            why = structure_reject(page, extraction, keep_listings)
            if why:
                return make_reject(page, stage, RejectReason.NOT_ARTICLE, why)
            why = language_reject(extraction, languages)
            if why:
                return make_reject(page, stage, RejectReason.LANGUAGE, why)
            return build_article(page, extraction)
    except RecordTimeout:
        clock = "CPU time" if measures_cpu_time() else "wall-clock time"
        return make_reject(page, stage, RejectReason.TIMEOUT, f"cleaning took over {budget_s} s of {clock}")
    except ExtractionError as exc:
        return make_reject(page, stage, exc.reason, exc.message)
    except Exception as exc:  # a bug must cost one page, not the job
        log.warning("internal error cleaning %s: %s: %s", page.url, type(exc).__name__, exc)
        return make_reject(page, stage, RejectReason.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")


class CleanPageFn(_ChainFn, _RejectCountingFn):
    """``Page`` (+ side input ``{(site, category): SiteEvidence}``) -> Article or reject (``REJECTS_TAG``)."""

    def __init__(self, chain: ChainConfig, min_words: int = MIN_ARTICLE_WORDS, keep_listings: bool = False,
                 languages: tuple[str, ...] | None = None):
        super().__init__(chain)
        self.min_words, self.keep_listings, self.languages = min_words, keep_listings, languages

    def setup(self):
        warm_up(self._config)  # models and libraries loaded before the first page's budget starts

    def process(self, page: Page, evidence):
        out = clean_page(page, evidence.get(site_key(page)), self._config, self.min_words, self.keep_listings,
                         self.languages)
        if isinstance(out, Article):
            yield out
        else:
            yield self.dead_letter(out)


class CleanPages(beam.PTransform):
    """Pages -> ``{"articles": Article, "rejects": Reject}``, with per-key site evidence as a side input.

    Args:
        evidence: PCollection of ``((site, category), SiteEvidence | None)`` from :class:`LearnSiteEvidence`,
            used as ``beam.pvalue.AsDict`` (one small value per key).
        chain: the chain as it runs (``CleanConfig.chain``: ``--chain`` with ``--text-includes`` and
            ``--keep-listings`` applied), used as given.
        min_words: ``--min-words``, the corpus filter (fewer kept words: a ``too_short`` reject).
        keep_listings: ``--keep-listings``: a foreign WARC's listing pages become rows, not ``not_article`` rejects.
        languages: ``--languages``, the language filter (another identified language, or none: a ``language``
            reject); None: no filter.
    """

    def __init__(self, evidence, chain: ChainConfig = DEFAULT_CONFIG, min_words: int = MIN_ARTICLE_WORDS,
                 keep_listings: bool = False, languages: tuple[str, ...] | None = None):
        super().__init__()
        self.evidence = evidence
        self.chain = chain
        self.min_words, self.keep_listings, self.languages = min_words, keep_listings, languages

    def expand(self, pages):
        out = pages | "Extract" >> beam.ParDo(
            CleanPageFn(self.chain, self.min_words, self.keep_listings, self.languages),
            evidence=beam.pvalue.AsDict(self.evidence)
        ).with_outputs(REJECTS_TAG, main="articles")
        return {"articles": out.articles, "rejects": out[REJECTS_TAG]}


# --------------------------------------------------------------------------------------------
# Read, filter, clean: the stages before dedup, together
# --------------------------------------------------------------------------------------------


class Cleaned(NamedTuple):
    """What :func:`read_and_clean` adds to a graph: ``articles`` (cleaned :class:`~newsclean.schemas.records.Article`
    records, before dedup), ``rejects`` (every stage's rejects, flattened) and ``counts`` (the reader's ``(name,
    int)`` count pairs: records read, the second pass's count, skipped records)."""

    articles: beam.PCollection
    rejects: beam.PCollection
    counts: beam.PCollection


def read_and_clean(paths, sections, evidence, config: CleanConfig) -> Cleaned:
    """Add reading, filtering and cleaning of the WARC files ``paths`` (:class:`FindWarcFiles`) to their graph
    (labels ``ReadWarc``, ``FilterResponses``, ``CleanPages``, ``CollectRejects`` and the progress branches).

    ``sections``: PCollection of ``((site, section), pages)``, ``evidence``: of ``((site, category),
    SiteEvidence | None)`` (:class:`LearnSiteEvidence`'s outputs, or the same read back from disk), both side inputs.
    """
    # Read the WARC response records: pages, and a reject for each record that cannot be one.
    read = paths | "ReadWarc" >> ReadWarc(sections, dict(config.read_from), config.hosts)
    # Keep the HTML 200 responses; clean each page into an article or a reject.
    filtered = read["pages"] | "FilterResponses" >> FilterResponses()
    cleaned = filtered["pages"] | "CleanPages" >> CleanPages(evidence, config.chain, config.min_words,
                                                             config.keep_listings, config.languages)
    rejects = (read["rejects"], filtered["rejects"], cleaned["rejects"]) | "CollectRejects" >> beam.Flatten()
    # Progress on stderr (pipeline/progress.py): side branches that count and output nothing (the reader counts
    # each record as read before it passes it on, so a line never shows more articles than records read). Rejects
    # are counted where each stage makes them: a branch of the flattened rejects would run after the reading.
    for label, pcoll, what in (("ProgressArticles", cleaned["articles"], "articles"),
                               ("ProgressReadRejects", read["rejects"], "rejects"),
                               ("ProgressFilterRejects", filtered["rejects"], "rejects"),
                               ("ProgressCleanRejects", cleaned["rejects"], "rejects")):
        _ = pcoll | label >> beam.ParDo(CountProgress(what))
    return Cleaned(cleaned["articles"], rejects, read["counts"])


# --------------------------------------------------------------------------------------------
# WriteParquet / WriteCounts
# --------------------------------------------------------------------------------------------


#: Key of the run's settings (JSON, ``pipeline.incremental.run_settings``) in the metadata of every Parquet file a
#: run writes (``pq.read_schema(path).metadata``): rows appended by runs with other settings keep their own.
SETTINGS_METADATA_KEY = b"newsclean.settings"


def with_settings(schema: pa.Schema, settings: dict | None) -> pa.Schema:
    """``schema`` with ``settings`` (JSON, sorted keys) under :data:`SETTINGS_METADATA_KEY` in its metadata; as
    it is when ``settings`` is None."""
    if settings is None:
        return schema
    return schema.with_metadata({**(schema.metadata or {}),
                                 SETTINGS_METADATA_KEY: json.dumps(settings, sort_keys=True).encode()})


def output_prefix(out: str, name: str) -> str:
    """File prefix of output ``name`` under ``out``: ``OUT/<name>/part``."""
    return FileSystems.join(out, name, "part")


class WriteParquet(beam.PTransform):
    """Write ``{"articles": Article, "rejects": Reject}`` to ``OUT/articles/part-*.parquet``
    and ``OUT/rejects/part-*.parquet`` with the schemas of :mod:`newsclean.schemas.records` (snappy); without
    ``"articles"``, the rejects only (the batches of a bounded local run, pipeline/batches.py).

    An empty PCollection still
    gives one Parquet file with the schema and no rows (Beam writes an empty shard), which
    pyarrow, pandas and DuckDB read as an empty table. ``settings``: the run's, in each file's metadata
    (:func:`with_settings`). ``output_format``: ``jsonl`` writes ``part-*.jsonl.gz`` JSON Lines files of the same
    fields instead (``--format``, :func:`~newsclean.pipeline.formats.write_rows`; no metadata there).
    """

    def __init__(self, out: str, settings: dict | None = None, output_format: str = "parquet"):
        super().__init__()
        self.out = out
        self.settings = settings
        self.output_format = output_format

    def expand(self, pcolls):
        written = {}
        if "articles" in pcolls:
            written["articles"] = write_rows(
                pcolls["articles"] | "ArticleRows" >> beam.Map(to_row), "WriteArticles",
                output_prefix(self.out, ARTICLES_DIR), with_settings(ARTICLE_SCHEMA, self.settings),
                self.output_format, row_group_buffer_size=ARTICLE_ROW_GROUP_BYTES,
                record_batch_size=ARTICLE_RECORD_BATCH)
        written["rejects"] = write_rows(
            pcolls["rejects"] | "RejectRows" >> beam.Map(to_row), "WriteRejects",
            output_prefix(self.out, REJECTS_DIR), with_settings(REJECT_SCHEMA, self.settings), self.output_format)
        return written


def json_line(kv) -> str:
    """One line of ``OUT/_counts/counts.jsonl``: ``{"name": ..., "value": ...}`` of a ``(name, int)`` pair."""
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
            | "ToJson" >> beam.Map(json_line)
            | "Write" >> beam.io.WriteToText(FileSystems.join(self.out, COUNTS_DIR, "counts"),
                                             file_name_suffix=".jsonl", shard_name_template="")
        )
