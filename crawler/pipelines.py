"""Item pipeline: write each page's WARC records, acknowledge it in the crawl store, count it.

:class:`ArchivePipeline` receives every :class:`~newsclean.crawler.items.PageOutcome` the spider yields
(fetched, skipped or failed pages alike). For a page with at least one HTTP response it writes one
page group into ``OUT/<site>/<category>/`` (:class:`newsclean.crawler.warc.WarcFiles`): a response and a
request record per exchange (redirect hops and retries included), then a ``metadata`` record with
the crawl facts. Then it acknowledges the page in the store (:meth:`newsclean.crawler.store.CrawlStore.ack`,
one transaction, after the records were flushed) and counts it in the crawl report. A page whose records the
file system refuses (disk full, a name too long for it) is counted as failed ``storage_error``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured

from newsclean.crawler.items import PageOutcome
from newsclean.crawler.state import CrawlState
from newsclean.crawler.store import PageRow
from newsclean.crawler.warc import HTTP_HEADER_FIDELITY_SHORT, PageFacts, RecordFactory, WarcFiles, warcinfo_fields
from newsclean.schemas.contract import FetchReason, Outcome

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


class ArchivePipeline:
    """Scrapy item pipeline for :class:`~newsclean.crawler.items.PageOutcome` items (other items pass through).

    Settings: ``NEWSCLEAN_WARC_DIR`` (required, else ``NotConfigured``),
    ``NEWSCLEAN_WARC_MAX_BYTES`` (rotation threshold, bytes), ``USER_AGENT`` and ``ROBOTSTXT_OBEY``
    (noted in warcinfo). Needs the :class:`~newsclean.crawler.state.CrawlState` extension.
    """

    def __init__(self, crawler: Crawler, out_dir: str, max_bytes: int, info: dict[str, str]) -> None:
        self.crawler = crawler
        self.out_dir = out_dir
        self.max_bytes = max_bytes
        self.info = info
        self.files: WarcFiles | None = None
        self.state: CrawlState | None = None
        self.records = RecordFactory()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ArchivePipeline:
        """Build from the crawler's settings."""
        settings = crawler.settings
        out_dir = settings.get("NEWSCLEAN_WARC_DIR")
        if not out_dir:
            raise NotConfigured("NEWSCLEAN_WARC_DIR is not set")
        info = warcinfo_fields(settings.get("USER_AGENT"), settings.getbool("ROBOTSTXT_OBEY"))
        return cls(crawler, out_dir, settings.getint("NEWSCLEAN_WARC_MAX_BYTES", 100 * 1024 * 1024), info)

    def open_spider(self) -> None:
        """Open the WARC outputs (files are created lazily, per site and category)."""
        self.state = self.crawler.get_extension(CrawlState)
        if self.state is None:
            raise NotConfigured("ArchivePipeline needs the newsclean.crawler.state.CrawlState extension")
        self.files = WarcFiles(self.out_dir, self.max_bytes, self.info, self.state.store, self.state.job)
        self.state.warc_totals = self.files.totals

    def close_spider(self) -> None:
        """Close every WARC file."""
        if self.files is not None:
            self.files.close()

    def process_item(self, item):
        """Write, acknowledge and count one page; returns the item."""
        if not isinstance(item, PageOutcome):
            return item
        task, state = item.task, self.state
        warc_file = offset = digest = acked = written = None
        if item.captures:
            try:
                group, response_id = self._write(item)
            except (OSError, ValueError) as exc:  # the file system refused the file, or a name is not safe
                self._not_stored(item, exc)
            else:
                warc_file, acked = self.files.relative(group.path), group.end
                written = warc_file
                offset = group.offsets[group.final_response]
                digest = response_id
        status = item.captures[-1].status if item.captures else None
        if item.reason == "not_modified" and item.previous is not None:  # the stored capture stays the page's
            warc_file, offset, digest, status = (item.previous.warc_file, item.previous.warc_offset,
                                                 item.previous.payload_digest, 200)
        row = PageRow(urls=tuple(dict.fromkeys((task.key, *item.chain))), site=task.site, category=item.category,
                      page_type=item.page_type, status=status, fetched_at=item.fetched_at, warc_file=warc_file,
                      warc_offset=offset, payload_digest=digest, outcome=item.reason or item.outcome)
        state.store.ack(state.job, row, item.links, warc_file=written, acked_bytes=acked)
        state.release(row.urls)
        state.report.add_outcome(task.site, item.category, item.outcome, item.reason,
                                 [c.status for c in item.captures], sum(len(c.body) for c in item.captures))
        return item

    @staticmethod
    def _not_stored(item: PageOutcome, exc: Exception) -> None:
        """Make a page whose records could not be written failed ``storage_error``: logged, then (in
        :meth:`process_item`) in the report, which makes the crawl's exit status non-zero, and done in the store
        without a ``pages`` row, so the next crawl fetches it again; the links it led to stay pending as usual."""
        logger.error("could not store %s in %s/%s: %s: %s", item.url, item.task.site, item.category[:100],
                     type(exc).__name__, exc)
        item.outcome, item.reason = Outcome.FAILED, FetchReason.STORAGE_ERROR
        item.fields.append(("error", f"{type(exc).__name__}: {exc}"))

    def _write(self, item: PageOutcome):
        """Write the page group; returns ``(WrittenGroup, payload digest of the final response)``; the
        group's ``final_response`` is the position of the final response record in it."""
        facts = PageFacts(item.task.site, item.category, item.task.depth, item.page_type, tuple(self._fields(item)))
        records = []
        final = None
        for capture in item.captures:
            if capture.status == 304 and item.previous is not None:  # not modified: a revisit record
                final, request = self.records.revisit(capture, facts, item.previous)
            else:
                final, request = self.records.exchange(capture, facts)
            records += (final, request)
        final_position = records.index(final)
        final_id = final.rec_headers.get_header("WARC-Record-ID")
        final_capture = item.captures[-1]
        records.append(self.records.metadata(final_capture.url, final_capture.started, final_id, facts))
        group = self.files.write_group(item.task.site, item.category, records)
        group.final_response = final_position
        return group, final.rec_headers.get_header("WARC-Payload-Digest")

    @staticmethod
    def _fields(item: PageOutcome) -> list[tuple[str, str]]:
        fields = [("role", item.task.role), ("outcome", item.outcome)]
        if item.reason:
            fields.append(("reason", item.reason))
        if item.task.referrer:
            fields.append(("via", item.task.referrer))
        if item.task.category != item.category:
            fields.append(("requested-category", item.task.category))
        if item.captures and item.url != item.captures[-1].url:  # a redirect that was not followed
            fields.append(("redirect-to", item.url))
        if len(item.captures) > 1:
            fields += [("fetch", f"{c.status} {c.url}") for c in item.captures]
        fields += item.fields
        if item.captures:
            fields.append(("http-header-fidelity", HTTP_HEADER_FIDELITY_SHORT))
        fields.append(("outlinks", str(len(item.links))))
        return fields
