"""Per-crawl state shared by the spider, the downloader and the item pipeline: store, job, report, lock.

:class:`CrawlState` is a Scrapy extension (``EXTENSIONS``). Built with the crawler, it

1. takes an exclusive lock on the output directory (``OUT/.crawl.lock``, ``fcntl.flock``), so two
   crawls never write into one directory and recovery never touches a live file;
2. opens the :class:`~newsclean.crawler.store.CrawlStore`;
3. picks the **job**: with a Scrapy ``JOBDIR``, the job recorded in ``JOBDIR/newsclean-job.json``
   unless it finished (then a new one); without, a new job per process. A job that the store
   already knows is a *resume*: its pending frontier rows are requested again and nothing it
   completed is fetched again;
4. repairs ``.open`` WARC leftovers of a killed crawl (:func:`newsclean.crawler.warc.recover_open_files`).

On ``spider_closed`` it marks the job finished (when Scrapy's reason is ``finished``), builds the
:class:`~newsclean.crawler.report.CrawlSummary`, writes it as JSON next to the WARC files, closes the store
and releases the lock.

:class:`JobDedupMiddleware` (downloader middleware) makes a resumed job fetch each URL once,
whatever Scrapy's own queue files replay: a request for a URL completed in this job, or in flight
for another request, is refused (``duplicate_in_job``).

JOBDIR and the store divide the work: JOBDIR names the job (``newsclean-job.json``); the store's
frontier, written in the same transaction as each acknowledged page, holds what is left to do and
survives a hard kill (SIGKILL, OOM; power loss of the machine aside). Scrapy's own queue files in
JOBDIR are stale after a hard kill, so they are discarded at every start
(:func:`discard_scheduler_queue`) and never replayed.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.job import job_dir

from newsclean.crawler.report import CrawlReport, CrawlSummary, RecoveredWarc
from newsclean.crawler.safety import RefusedRequest
from newsclean.crawler.store import CrawlStore, canonical_url
from newsclean.crawler.warc import PreviousCapture, WarcTotals, read_previous_capture, recover_open_files

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request

logger = logging.getLogger(__name__)

JOB_FILE = "newsclean-job.json"
LOCK_FILE = ".crawl.lock"


class OutputLockedError(RuntimeError):
    """Another crawl holds the lock on the output directory."""


def lock_output(out_dir: Path):
    """Take the exclusive lock ``out_dir/.crawl.lock``; returns the open lock file (close it to release).

    Raises :class:`OutputLockedError` when another process holds it.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    fh = open(out_dir / LOCK_FILE, "a+")  # noqa: SIM115 (held for the crawl, closed in close())
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.close()
        raise OutputLockedError(f"another crawl is writing into {out_dir} (lock {out_dir / LOCK_FILE})") from None
    fh.seek(0)
    fh.truncate()
    fh.write(f"{os.getpid()}\n")
    fh.flush()
    return fh


def read_job_file(jobdir: str | Path) -> dict[str, Any] | None:
    """The ``newsclean-job.json`` of ``jobdir`` (``{"job": id, "finished": bool}``), or ``None``."""
    path = Path(jobdir) / JOB_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_job_file(jobdir: str | Path, job: str, finished: bool) -> None:
    """Write ``newsclean-job.json`` atomically (write then rename)."""
    path = Path(jobdir) / JOB_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"job": job, "finished": finished}), encoding="utf-8")
    os.replace(tmp, path)


def discard_scheduler_queue(jobdir: str | Path) -> None:
    """Remove Scrapy's disk queue (``JOBDIR/requests.queue``) before the scheduler opens it.

    The store's frontier holds every request the queue could (it is written in the same transaction
    as the page that led to it), and the spider re-issues its pending rows on resume. The queue files
    are only consistent after a graceful stop: after a SIGKILL their index (``active.json``, queuelib's
    ``info.json``) is stale, and repeated kills made a stale record come out in place of a live request,
    which was then lost. So the queue is never replayed.
    """
    queue = Path(jobdir) / "requests.queue"
    if queue.exists():
        shutil.rmtree(queue)


class CrawlState:
    """Scrapy extension holding one crawl's store, job, report and in-flight requests.

    Settings: ``NEWSCLEAN_WARC_DIR`` (required, else ``NotConfigured``), ``NEWSCLEAN_STATE_DB``
    (default ``OUT/crawl-state.sqlite3``), ``NEWSCLEAN_REFETCH_AFTER_DAYS``, ``JOBDIR``,
    ``NEWSCLEAN_SUMMARY_JSON`` (an extra path for the JSON report).

    Raises :class:`OutputLockedError` when another crawl writes into the same directory.
    """

    def __init__(self, crawler: Crawler, out_dir: Path, store_path: Path, jobdir: str | None,
                 refetch_after_days: float, summary_json: str | None = None) -> None:
        self.crawler = crawler
        self.out_dir = out_dir
        self.jobdir = jobdir
        self.refetch_after_days = refetch_after_days
        self.summary_json = summary_json
        self.report = CrawlReport()
        self.inflight: dict[str, str] = {}
        self.summary: CrawlSummary | None = None
        #: The WARC files closed so far; the item pipeline hands over its own (no import of it here).
        self.warc_totals: WarcTotals | None = None
        self._started = time.monotonic()
        self._lock = lock_output(out_dir)
        try:
            self.store = CrawlStore(store_path)
            self.job, self.resumed = self._pick_job()
            self.recovered = tuple(RecoveredWarc(r.path, r.final, r.kept, r.dropped)
                                   for r in recover_open_files(out_dir, self.store))
        except BaseException:
            self._lock.close()
            raise

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CrawlState:
        """Build from the crawler's settings and connect ``spider_closed``."""
        settings = crawler.settings
        out = settings.get("NEWSCLEAN_WARC_DIR")
        if not out:
            raise NotConfigured("NEWSCLEAN_WARC_DIR is not set")
        out_dir = Path(out)
        store_path = Path(settings.get("NEWSCLEAN_STATE_DB") or out_dir / "crawl-state.sqlite3")
        ext = cls(crawler, out_dir, store_path, job_dir(settings),
                  settings.getfloat("NEWSCLEAN_REFETCH_AFTER_DAYS"), settings.get("NEWSCLEAN_SUMMARY_JSON"))
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def _pick_job(self) -> tuple[str, bool]:
        previous = read_job_file(self.jobdir) if self.jobdir else None
        if previous and not previous.get("finished") and not self.store.job_finished(previous["job"]):
            job = previous["job"]
        else:
            job = uuid.uuid4().hex
        resumed = self.store.start_job(job)
        if self.jobdir:
            write_job_file(self.jobdir, job, finished=False)
            discard_scheduler_queue(self.jobdir)
        if resumed:
            logger.info("resuming crawl job %s (JOBDIR %s)", job, self.jobdir)
        return job, resumed

    # ------------------------------------------------------------------------ in-flight claims

    def claim(self, url: str, token: str) -> bool:
        """Claim canonical ``url`` for the request ``token``; False when another request holds it or
        the job already completed it."""
        owner = self.inflight.get(url)
        if owner is not None:
            return owner == token
        if self.store.done_in_job(self.job, url):
            return False
        self.inflight[url] = token
        return True

    def release(self, urls) -> None:
        """Drop the claims on ``urls`` (the page was acknowledged or given up)."""
        for url in urls:
            self.inflight.pop(url, None)

    def previous_capture(self, url: str) -> PreviousCapture | None:
        """The stored 2xx article capture of canonical ``url`` (for a conditional refetch), or ``None``."""
        row = self.store.page(url)
        if not row or row["page_type"] != "article" or not (200 <= (row["status"] or 0) < 300) or not row["warc_file"]:
            return None
        return read_previous_capture(self.out_dir, row["warc_file"], row["warc_offset"])

    def is_known_article(self, url: str) -> bool:
        """Whether canonical ``url`` is an article the store knows (within ``refetch_after_days``)."""
        return self.store.is_known_article(url, self.refetch_after_days)

    # ------------------------------------------------------------------------------- closing

    def spider_closed(self, spider, reason: str) -> None:
        """Finish the job (when ``reason`` is ``finished``), write the JSON report, close the store,
        release the lock."""
        try:
            if reason == "finished":
                self.store.finish_job(self.job)
                if self.jobdir:
                    write_job_file(self.jobdir, self.job, finished=True)
            self.summary = self.build_summary(reason)
            path = self.write_report(self.summary)
            self.summary = replace(self.summary, report_path=str(path))
        finally:
            self.store.close()
            self._lock.close()

    def build_summary(self, reason: str | None) -> CrawlSummary:
        """The :class:`CrawlSummary` of this process so far."""
        totals = self.warc_totals
        stats = self.crawler.stats.get_stats()
        categories = dict(sorted(self.report.categories.items()))
        return CrawlSummary(
            warc_files=tuple(totals.paths) if totals else (),
            responses={k: v.responses for k, v in categories.items() if v.responses},
            statuses=dict(sorted(self.report.statuses.items())),
            warc_bytes=totals.bytes if totals else 0,
            payload_bytes=sum(v.bytes for v in categories.values()),
            requests=int(stats.get("downloader/request_count", 0)),
            finish_reason=reason,
            elapsed_s=time.monotonic() - self._started,
            categories=categories, job=self.job, resumed=self.resumed, recovered=self.recovered)

    def write_report(self, summary: CrawlSummary) -> Path:
        """Write ``summary`` as ``OUT/crawl-report-<UTC stamp>-<serial>.json`` (and to
        ``NEWSCLEAN_SUMMARY_JSON`` when set); returns the path under ``OUT``."""
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        serial = 0
        while True:
            path = self.out_dir / f"crawl-report-{stamp}-{serial:03d}.json"
            try:
                with open(path, "x", encoding="utf-8") as fh:
                    fh.write(replace(summary, report_path=str(path)).to_json())
                break
            except FileExistsError:
                serial += 1
        if self.summary_json:
            Path(self.summary_json).write_text(replace(summary, report_path=str(path)).to_json(), encoding="utf-8")
        return path


class JobDedupMiddleware:
    """Downloader middleware (order 60): each URL is fetched once per job (see the module docstring).

    A redirect or retry of a request keeps its claim (same ``PageTask.token``). Refused requests
    raise :class:`~newsclean.crawler.safety.RefusedRequest` with reason ``redirect_loop`` for a redirect
    back to a URL of its own redirect chain (:func:`redirects_to_its_chain`: the loop is given up at its
    first repeated URL, not at ``max_redirects``), ``duplicate_in_job``, or ``known_article`` for a
    redirect to an article the store knows (not fetched again).
    """

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> JobDedupMiddleware:
        """Build the middleware (the :class:`CrawlState` is looked up per request)."""
        return cls(crawler)

    def process_request(self, request: Request) -> None:
        """Claim the request's URL for it, or refuse the request."""
        if redirects_to_its_chain(request):
            raise RefusedRequest("redirect_loop", f"{request.url} redirects back to itself: "
                                                  f"{' -> '.join([*request.meta['redirect_urls'], request.url])}")
        task = request.meta.get("newsclean")
        state = self.crawler.get_extension(CrawlState)
        if task is None or state is None:
            return
        url = canonical_url(request.url)
        if request.meta.get("redirect_urls") and url != task.key and state.is_known_article(url):
            raise RefusedRequest("known_article", f"{request.url} (a redirect target) is a known article")
        if not state.claim(url, task.token):
            raise RefusedRequest("duplicate_in_job", f"{request.url} was already fetched in this job")


def redirects_to_its_chain(request: Request) -> bool:
    """Whether ``request`` follows a redirect to a URL its redirect chain already requested (Scrapy's
    ``meta["redirect_urls"]``: the URLs before this one), compared as requested: a redirect loop. A URL that
    differs only in tracking or session parameters (``?sid=``) is another URL here, as it is to the server."""
    return request.url in request.meta.get("redirect_urls", ())
