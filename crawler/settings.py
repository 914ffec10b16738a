"""Scrapy settings for a newsclean crawl, derived from a :class:`~crawler.config.SitesConfig`.

Politeness comes from the config's ``[crawl]`` table (robots.txt, AutoThrottle, per-domain
concurrency, delay, User-Agent, size limit). The crawl order is breadth-first (Scrapy's
documented BFO recipe: ``DEPTH_PRIORITY = 1`` with FIFO queues), so pages near the section
pages are fetched first and keep the category of the nearest start page.

``REQUEST_FINGERPRINTER_IMPLEMENTATION`` is not set: Scrapy 2.19 removed the setting (the
``"2.7"`` fingerprinter is the only one left), so setting it would only add noise.

``Accept-Encoding`` is pinned to the codings the pipeline decodes (:func:`accept_encoding`).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from scrapy.settings import Settings

from crawler.config import SitesConfig

#: Order of :class:`crawler.warc.WarcWriterMiddleware` in ``DOWNLOADER_MIDDLEWARES``: above
#: HttpCompressionMiddleware (590) and RedirectMiddleware (600), so its ``process_response``
#: sees bodies as received and every 3xx.
WARC_MIDDLEWARE_ORDER = 950


def accept_encoding() -> str:
    """``Accept-Encoding`` to send: the codings the pipeline's WARC reader decodes (docs/CONTRACTS.md).

    Bodies are stored as received, so advertising a coding the reader cannot undo (Scrapy also
    offers ``zstd`` when a zstd module is installed) would turn pages into decode errors.
    ``br`` is offered only when the ``brotli`` module is importable.
    """
    return "gzip, deflate, br" if importlib.util.find_spec("brotli") else "gzip, deflate"


def build_settings(config: SitesConfig, out_dir: str | Path, *, log_level: str = "INFO") -> Settings:
    """Scrapy :class:`~scrapy.settings.Settings` (``project`` priority) for crawling ``config`` into ``out_dir``.

    ``out_dir`` is the WARC root (``OUT`` in ``OUT/<site>/<category>/...``); it is created
    when the first file is written. ``log_level`` is a logging level name.
    """
    crawl = config.crawl
    values = {
        "BOT_NAME": "newsclean",
        "SPIDER_MODULES": ["crawler.spiders"],
        "USER_AGENT": crawl.user_agent,
        "ROBOTSTXT_OBEY": crawl.obey_robots,
        "AUTOTHROTTLE_ENABLED": crawl.autothrottle,
        "CONCURRENT_REQUESTS_PER_DOMAIN": crawl.concurrent_requests_per_domain,
        "DOWNLOAD_DELAY": crawl.download_delay,
        "DOWNLOAD_MAXSIZE": crawl.download_maxsize,
        "DEFAULT_REQUEST_HEADERS": {
            "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
            "Accept-Language": "en",
            "Accept-Encoding": accept_encoding(),
        },
        "DOWNLOAD_TIMEOUT": 30,
        "RETRY_TIMES": 1,
        # Scrapy's DEPTH_LIMIT 0 means "unlimited"; the spider enforces depth_limit 0 itself.
        "DEPTH_LIMIT": crawl.depth_limit,
        "DEPTH_PRIORITY": 1,
        "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
        "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
        "LOG_LEVEL": log_level,
        # No interactive back doors in a batch crawler: the telnet console and Scrapy 2.19's
        # RemoteControl extension (an HTTP endpoint that runs Python code in the crawl process).
        "TELNETCONSOLE_ENABLED": False,
        "REMOTE_CONTROL_ENABLED": False,
        "DOWNLOADER_MIDDLEWARES": {"crawler.warc.WarcWriterMiddleware": WARC_MIDDLEWARE_ORDER},
        "NEWSCLEAN_WARC_DIR": str(Path(out_dir)),
        "NEWSCLEAN_WARC_MAX_BYTES": crawl.warc_max_bytes,
    }
    return Settings(values, priority="project")
