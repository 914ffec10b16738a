"""Scrapy settings for a newsclean crawl, derived from a :class:`~newsclean.crawler.config.SitesConfig`.

Politeness comes from the config's ``[crawl]`` table (robots.txt, AutoThrottle, per-domain
concurrency, delay, User-Agent, size limit). The crawl order is breadth-first (Scrapy's
documented BFO recipe: ``DEPTH_PRIORITY = 1`` with FIFO queues), so pages near the section
pages are fetched first and keep the category of the nearest start page.

``REQUEST_FINGERPRINTER_IMPLEMENTATION`` is not set: Scrapy 2.19 removed the setting (the
``"2.7"`` fingerprinter is the only one left), so setting it would only add noise.

``Accept-Encoding`` is pinned to the codings the pipeline decodes (:func:`accept_encoding`).

Components (all built with ``from_crawler``):

========================================  ====  ============================================
``newsclean.crawler.politeness.HostPolitenessMiddleware`` 40  downloader: delay floor, Crawl-delay, Retry-After holds
``newsclean.crawler.safety.SafetyMiddleware``         50  downloader: own site's domains, http(s), public
                                                addresses (replaces Scrapy's OffsiteMiddleware)
``newsclean.crawler.state.JobDedupMiddleware``        60  downloader: each URL once per job
``newsclean.crawler.robots.RobotsMiddleware``        100  downloader: robots.txt per RFC 9309
``newsclean.crawler.politeness.RetryAfterMiddleware`` 550  downloader: Scrapy's retries + ``Retry-After``
``newsclean.crawler.safety.ProxyTargetMiddleware``   760  downloader: target address check behind a proxy
``newsclean.crawler.warc.CaptureMiddleware``         950  downloader: raw captures for the WARC records
``newsclean.crawler.pipelines.ArchivePipeline``      300  item pipeline: WARC page groups, store, report
``newsclean.crawler.state.CrawlState``               (ext) store, job, report, output lock, recovery
========================================  ====  ============================================
"""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path

from scrapy.settings import Settings

from newsclean.crawler.config import SitesConfig

logger = logging.getLogger(__name__)

#: Order of :class:`newsclean.crawler.warc.CaptureMiddleware` in ``DOWNLOADER_MIDDLEWARES``: above
#: RetryMiddleware (550), HttpCompressionMiddleware (590) and RedirectMiddleware (600), so its
#: ``process_response`` sees bodies as received, every 3xx and every retried attempt.
WARC_MIDDLEWARE_ORDER = 950


def accept_encoding() -> str:
    """``Accept-Encoding`` to send: the codings the pipeline's WARC reader decodes (docs/CONTRACTS.md).

    Bodies are stored as received, so advertising a coding the reader cannot undo (Scrapy also
    offers ``zstd`` when a zstd module is installed) would turn pages into decode errors.
    ``br`` is offered only when the ``brotli`` module is importable.
    """
    return "gzip, deflate, br" if importlib.util.find_spec("brotli") else "gzip, deflate"


def build_settings(config: SitesConfig, out_dir: str | Path, *, log_level: str = "INFO",
                   jobdir: str | Path | None = None, summary_json: str | Path | None = None) -> Settings:
    """Scrapy :class:`~scrapy.settings.Settings` (``project`` priority) for crawling ``config`` into ``out_dir``.

    ``out_dir`` is the WARC root (``OUT`` in ``OUT/<site>/<category>/...``), created at the start.
    ``log_level`` is a logging level name. ``jobdir``: Scrapy's ``JOBDIR`` for pause/resume (see
    :mod:`newsclean.crawler.state`). ``summary_json``: an extra path for the JSON crawl report.
    """
    crawl = config.crawl
    if not crawl.user_agent and not crawl.contact_url:
        logger.warning("[crawl] contact_url is not set: the User-Agent names the placeholder %r; site operators "
                       "cannot reach you (set contact_url to a page about your crawl)", crawl.agent())
    values = {
        "BOT_NAME": "newsclean",
        "SPIDER_MODULES": ["newsclean.crawler.spiders"],
        "USER_AGENT": crawl.agent(),
        "ROBOTSTXT_OBEY": crawl.obey_robots,
        "AUTOTHROTTLE_ENABLED": crawl.autothrottle,
        "CONCURRENT_REQUESTS_PER_DOMAIN": crawl.concurrent_requests_per_domain,
        "DOWNLOAD_DELAY": crawl.download_delay,
        "DOWNLOAD_SLOTS": site_slots(config),
        "DOWNLOAD_MAXSIZE": crawl.download_maxsize,
        "DOWNLOAD_HANDLERS": {"http": "newsclean.crawler.fetch.GuardedHTTP11DownloadHandler",
                              "https": "newsclean.crawler.fetch.GuardedHTTP11DownloadHandler"},
        "NEWSCLEAN_MAX_HEADER_BYTES": crawl.max_header_bytes,
        "NEWSCLEAN_MAX_HEADERS": crawl.max_headers,
        # download_delay is a floor, not an average (Scrapy would wait 0.5-1.5 times it).
        "DOWNLOAD_DELAY_JITTER": 0.0,
        "AUTOTHROTTLE_START_DELAY": crawl.download_delay,
        "NEWSCLEAN_MAX_CRAWL_DELAY": crawl.max_crawl_delay,
        "DOWNLOAD_TIMEOUT": crawl.download_timeout,
        "DEFAULT_REQUEST_HEADERS": {
            "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
            "Accept-Language": crawl.accept_language,
            "Accept-Encoding": accept_encoding(),
        },
        "CLOSESPIDER_TIMEOUT": crawl.max_time,  # crawl.max_pages is the spider's (exact, not responses)
        "RETRY_TIMES": crawl.retry_times,
        "REDIRECT_MAX_TIMES": crawl.max_redirects,
        # The spider enforces depth_limit itself (child sitemaps are not hops); Scrapy's would not know.
        "DEPTH_LIMIT": 0,
        "DEPTH_PRIORITY": 1,
        "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
        "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
        "LOG_LEVEL": log_level,
        # No interactive back doors in a batch crawler: the telnet console and Scrapy 2.19's
        # RemoteControl extension (an HTTP endpoint that runs Python code in the crawl process).
        "TELNETCONSOLE_ENABLED": False,
        "REMOTE_CONTROL_ENABLED": False,
        "DOWNLOADER_MIDDLEWARES": {
            "scrapy.downloadermiddlewares.offsite.OffsiteMiddleware": None,
            "newsclean.crawler.politeness.HostPolitenessMiddleware": 40,
            "newsclean.crawler.safety.SafetyMiddleware": 50,
            "newsclean.crawler.state.JobDedupMiddleware": 60,
            "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
            "newsclean.crawler.robots.RobotsMiddleware": 100,
            "scrapy.downloadermiddlewares.retry.RetryMiddleware": None,
            "newsclean.crawler.politeness.RetryAfterMiddleware": 550,
            "newsclean.crawler.safety.ProxyTargetMiddleware": 760,
            "newsclean.crawler.warc.CaptureMiddleware": WARC_MIDDLEWARE_ORDER,
        },
        "ITEM_PIPELINES": {"newsclean.crawler.pipelines.ArchivePipeline": 300},
        "EXTENSIONS": {"newsclean.crawler.state.CrawlState": 0},
        "NEWSCLEAN_WARC_DIR": str(Path(out_dir)),
        "NEWSCLEAN_WARC_MAX_BYTES": crawl.warc_max_bytes,
        "NEWSCLEAN_STATE_DB": str(config.state_db_path(out_dir)),
        "NEWSCLEAN_REFETCH_AFTER_DAYS": crawl.refetch_after_days,
        "NEWSCLEAN_MAX_RETRY_AFTER": crawl.max_retry_after,
        "NEWSCLEAN_ALLOW_PRIVATE_NETWORKS": crawl.allow_private_networks,
        "NEWSCLEAN_SITE_DOMAINS": {site.name: list(site.allowed_domains) for site in config.sites},
    }
    if not crawl.allow_private_networks:
        values["TWISTED_DNS_RESOLVER"] = "newsclean.crawler.safety.PublicOnlyResolver"
    if jobdir is not None:
        values["JOBDIR"] = str(Path(jobdir))
    if summary_json is not None:
        values["NEWSCLEAN_SUMMARY_JSON"] = str(Path(summary_json))
    return Settings(values, priority="project")


def site_slots(config: SitesConfig) -> dict[str, dict[str, float]]:
    """``DOWNLOAD_SLOTS``: one slot per site (``site:<name>``, see :func:`newsclean.crawler.spiders.news.site_slot`)
    with the site's ``concurrent_requests`` / ``download_delay`` overrides, else the ``[crawl]`` values."""
    crawl = config.crawl
    return {
        f"site:{site.name}": {
            "concurrency": site.concurrent_requests or crawl.concurrent_requests_per_domain,
            "delay": site.download_delay if site.download_delay is not None else crawl.download_delay,
        }
        for site in config.sites
    }
