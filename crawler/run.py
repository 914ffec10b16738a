"""Run a crawl: ``sites.toml`` in, WARC files out, a :class:`CrawlSummary` back.

Two ways in:

- :func:`run_crawl` runs Scrapy's ``CrawlerProcess`` *in the current process* and blocks until
  the crawl ends. Twisted's reactor can run only once per process, so a process can call it
  once; a second call raises ``RuntimeError``.
- :func:`run_crawl_subprocess`, or the command line ``python -m newsclean.crawler.run --config sites.toml
  --out DIR``, runs the crawl in a child process: use it from tests, notebooks and anything
  that crawls more than once.

Both return the crawl's :class:`CrawlSummary`; :func:`crawl_problem` says whether it is a failure for a
command's exit status (stopped before the end, or nothing fetched because every start point was refused).
Scrapy settings may be overridden as with ``scrapy crawl -s NAME=VALUE`` (:func:`parse_setting_overrides`):
they take Scrapy's ``cmdline`` priority, above the settings built from ``sites.toml``.
"""

from __future__ import annotations

import argparse
import logging
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scrapy.crawler import CrawlerProcess

from newsclean.crawler.config import SitesConfig, config_to_toml, load_config, with_overrides
from newsclean.crawler.report import CategoryReport, CrawlSummary
from newsclean.crawler.settings import build_settings
from newsclean.crawler.spiders.news import NewsSpider
from newsclean.crawler.state import CrawlState
from newsclean.schemas.contract import FetchReason

_SETTING_NAME = re.compile(r"[A-Z][A-Z0-9_]*")

__all__ = ["COMPLETE_FINISH_REASONS", "CategoryReport", "CrawlSummary", "build_arg_parser", "crawl_problem", "main",
           "parse_setting_overrides", "run_crawl", "run_crawl_subprocess"]

#: Scrapy finish reasons of a crawl that did what it was asked: it ran out of work (``max_pages`` included), or
#: reached ``max_time`` (``CLOSESPIDER_TIMEOUT``) or another ``CLOSESPIDER_*`` bound given with ``-s``. Any other
#: reason (``shutdown`` after a signal, ...) is a crawl stopped before its end.
COMPLETE_FINISH_REASONS = frozenset({"finished", "closespider_pagecount", "closespider_timeout",
                                     "closespider_itemcount", "closespider_errorcount",
                                     "closespider_timeout_no_item", "closespider_pagecount_no_item"})


def crawl_problem(summary: CrawlSummary) -> str | None:
    """Why a finished crawl is a failure for a command's exit status, or ``None`` when it is not: it stopped
    before its end (a finish reason outside :data:`COMPLETE_FINISH_REASONS`), fetched pages it could not store
    (failed ``storage_error``: the file system refused their WARC records; the next crawl fetches them again), or
    fetched nothing because every start point was refused (:meth:`CrawlSummary.start_refusal`, naming the setting
    that would allow it)."""
    if summary.finish_reason not in COMPLETE_FINISH_REASONS:
        return f"crawl stopped before the end (Scrapy finish reason: {summary.finish_reason})"
    not_stored = summary.reasons("failed").get(FetchReason.STORAGE_ERROR, 0)
    if not_stored:
        return (f"{not_stored} fetched page(s) could not be written to the WARC files ({FetchReason.STORAGE_ERROR}; "
                "the log names each and why); the next crawl fetches them again")
    return summary.start_refusal()


def parse_setting_overrides(pairs: Sequence[str] | None) -> dict[str, str]:
    """``NAME=VALUE`` strings (``scrapy crawl -s`` syntax) as a dict, in order (a later NAME wins). Values stay
    strings: Scrapy's ``Settings.getint`` / ``getbool`` / ``getlist`` / ``getdict`` convert them where read.

    Raises ``ValueError`` for an item without ``=`` or with an empty or lower-case-only NAME.
    """
    out: dict[str, str] = {}
    for pair in pairs or ():
        name, sep, value = pair.partition("=")
        name = name.strip()
        if not sep or not name or not _SETTING_NAME.fullmatch(name):
            raise ValueError(f"-s {pair!r}: expected NAME=VALUE with a Scrapy setting NAME (e.g. DOWNLOAD_DELAY=2)")
        out[name] = value
    return out


def run_crawl(config: SitesConfig | str | Path, out_dir: str | Path, *, log_level: str = "INFO",
              jobdir: str | Path | None = None, summary_json: str | Path | None = None,
              settings: Mapping[str, Any] | None = None) -> CrawlSummary:
    """Crawl ``config`` (a :class:`SitesConfig` or a ``sites.toml`` path) into WARC files under ``out_dir``.

    Runs a Scrapy ``CrawlerProcess`` in this process and blocks until the crawl ends. Call it at
    most once per process (Twisted's reactor cannot restart); use :func:`run_crawl_subprocess`
    otherwise. ``jobdir``: Scrapy ``JOBDIR`` for pause/resume (a crawl stopped by a signal or
    killed resumes when started again with the same ``jobdir``). ``summary_json``: also write the
    report there (it is always written as ``out_dir/crawl-report-*.json``). Logging: when the root
    logger has no handler, Scrapy installs its own at ``log_level``; when the caller already
    configured logging, Scrapy's records go to the caller's handlers, with the ``scrapy`` and
    ``crawler`` loggers set to ``log_level``. ``settings``: Scrapy settings that override the ones built
    from ``config`` (priority ``cmdline``, as ``scrapy crawl -s``; see :func:`parse_setting_overrides`).

    The summary of a crawl that fetched nothing because every start point was refused is returned like any
    other: :func:`crawl_problem` tells a caller that it is a failure.

    Raises:
        ValueError: the config is invalid.
        RuntimeError: the reactor already ran in this process, or the crawl failed to start
            (e.g. another crawl holds the lock on ``out_dir``).
    """
    cfg = config if isinstance(config, SitesConfig) else load_config(config)
    _check_reactor_unused()
    scrapy_settings = build_settings(cfg, out_dir, log_level=log_level, jobdir=jobdir, summary_json=summary_json)
    scrapy_settings.setdict(dict(settings or {}), priority="cmdline")
    app_logging = bool(logging.getLogger().handlers)
    if app_logging:  # the caller configured logging: use its handlers rather than add Scrapy's
        scrapy_settings.set("LOG_INSTALL_ROOT_HANDLER", False, priority="cmdline")
    process = CrawlerProcess(scrapy_settings)
    if app_logging:  # Scrapy sets its loggers to DEBUG; apply log_level to what reaches the caller's handlers
        for name in ("scrapy", "crawler"):
            logging.getLogger(name).setLevel(log_level)
    crawler = process.create_crawler(NewsSpider)
    failures: list[Any] = []
    process.crawl(crawler, config=cfg).addErrback(failures.append)
    process.start()
    if failures:
        raise RuntimeError(f"crawl failed: {failures[0].value}") from failures[0].value
    try:
        state = crawler.get_extension(CrawlState)
    except RuntimeError:  # the extension manager was never created
        state = None
    if state is None or state.summary is None:
        raise RuntimeError("crawl failed: no crawl report (the crawl did not start)")
    return state.summary


def run_crawl_subprocess(config: SitesConfig | str | Path, out_dir: str | Path, *,
                         log_level: str = "INFO", timeout: float | None = None,
                         jobdir: str | Path | None = None, settings: Mapping[str, Any] | None = None) -> CrawlSummary:
    """Run :func:`run_crawl` in a child Python process (``python -m newsclean.crawler.run``) and return its summary.

    The child's log goes to this process's stderr. ``timeout`` is in seconds; ``jobdir`` and ``settings``
    as :func:`run_crawl` (``settings`` values go to the child as ``-s NAME=VALUE``, so as strings).

    Raises:
        ValueError: the config is invalid (checked here before starting the child).
        RuntimeError: the child exited with a non-zero status and no report of a crawl that ran to its end (a
            crawl that fetched nothing because every start point was refused exits with 1 and is returned:
            see :func:`crawl_problem`).
        subprocess.TimeoutExpired: the crawl ran past ``timeout``.
    """
    cfg = config if isinstance(config, SitesConfig) else load_config(config)
    with tempfile.TemporaryDirectory(prefix="newsclean-crawl-") as tmp:
        config_path = Path(tmp) / "sites.toml"
        config_path.write_text(config_to_toml(cfg), encoding="utf-8")
        summary_path = Path(tmp) / "summary.json"
        cmd = [sys.executable, "-m", "newsclean.crawler.run", "--config", str(config_path), "--out", str(out_dir),
               "--log-level", log_level, "--summary-json", str(summary_path)]
        if jobdir is not None:
            cmd += ["--jobdir", str(jobdir)]
        for name, value in (settings or {}).items():
            cmd += ["-s", f"{name}={value}"]
        result = subprocess.run(cmd, timeout=timeout, check=False)  # noqa: S603 (our own module)
        summary = CrawlSummary.from_json(summary_path.read_text(encoding="utf-8")) if summary_path.exists() else None
        if result.returncode != 0 and (summary is None or summary.finish_reason not in COMPLETE_FINISH_REASONS):
            raise RuntimeError(f"crawl subprocess exited with status {result.returncode}: {' '.join(cmd)}")
        if summary is None:
            raise RuntimeError(f"crawl subprocess wrote no report: {' '.join(cmd)}")
        return summary


def _check_reactor_unused() -> None:
    if "twisted.internet.reactor" not in sys.modules:
        return
    from twisted.internet import reactor  # noqa: PLC0415

    if getattr(reactor, "_startedBefore", False):
        raise RuntimeError(
            "the Twisted reactor already ran in this process and cannot restart: run each crawl in "
            "its own process (newsclean.crawler.run.run_crawl_subprocess or `python -m newsclean.crawler.run`)"
        )


def add_crawl_options(parser: argparse.ArgumentParser) -> None:
    """Add the crawl-control flags shared by ``python -m newsclean.crawler.run`` and ``newsclean crawl|run``:
    ``--jobdir``, ``--refetch-after``, ``--allow-private-networks``, ``--max-pages``, ``--max-time`` and
    ``-s NAME=VALUE`` (``dest="scrapy_settings"``, a list: :func:`parse_setting_overrides` reads it)."""
    parser.add_argument("--jobdir", type=Path, metavar="DIR",
                        help="Scrapy JOBDIR: pause with Ctrl-C (or SIGTERM), resume by running again with the same "
                             "DIR; a killed crawl resumes too, without fetching or writing anything twice")
    parser.add_argument("--refetch-after", type=float, metavar="DAYS", dest="refetch_after",
                        help="fetch known article URLs again once their last fetch is older than DAYS "
                             "(default: [crawl] refetch_after_days, 0 = never)")
    parser.add_argument("--allow-private-networks", action="store_true", default=None,
                        help="allow hosts on private, loopback or link-local addresses (tests, demos, intranets)")
    parser.add_argument("--max-pages", type=int, metavar="N", dest="max_pages",
                        help="request at most N pages, start points included, for a trial run of a new config "
                             "(default: [crawl] max_pages, 0 = no limit)")
    parser.add_argument("--max-time", type=float, metavar="SECONDS", dest="max_time",
                        help="stop after SECONDS (default: [crawl] max_time, 0 = no limit)")
    parser.add_argument("-s", "--set", action="append", metavar="NAME=VALUE", dest="scrapy_settings", default=[],
                        help="set a Scrapy setting, as `scrapy crawl -s` (repeatable; overrides sites.toml's "
                             "values, e.g. -s DOWNLOAD_DELAY=2)")


def apply_crawl_options(config: SitesConfig, args: argparse.Namespace) -> SitesConfig:
    """``config`` with the command-line overrides of :func:`add_crawl_options` applied (``-s`` settings aside:
    :func:`parse_setting_overrides` of ``args.scrapy_settings`` goes to :func:`run_crawl`). Raises ``ValueError``
    for a negative number."""
    return with_overrides(config, refetch_after_days=args.refetch_after,
                          allow_private_networks=args.allow_private_networks, max_pages=args.max_pages,
                          max_time=args.max_time)


def build_arg_parser() -> argparse.ArgumentParser:
    """The ``python -m newsclean.crawler.run`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="python -m newsclean.crawler.run",
        description="Crawl the sites of a sites.toml into WARC files: OUT/<site>/<category>/*.warc.gz",
    )
    parser.add_argument("--config", required=True, type=Path, help="sites.toml to crawl")
    parser.add_argument("--out", required=True, type=Path, help="WARC output root directory")
    parser.add_argument("--log-level", default="INFO", help="Scrapy log level (default: INFO)")
    parser.add_argument("--summary-json", type=Path, help="also write the crawl report as JSON here")
    add_crawl_options(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: crawl, print the report, return the exit status: 2 for a bad config or ``-s`` item,
    1 when the crawl did not finish (stopped by a signal, refused to start), could not store a fetched page, or
    fetched nothing because every start point was refused (:func:`crawl_problem`; the message names the setting that would allow it), else 0."""
    args = build_arg_parser().parse_args(argv)
    try:
        config = apply_crawl_options(load_config(args.config), args)
        overrides = parse_setting_overrides(args.scrapy_settings)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        summary = run_crawl(config, args.out, log_level=args.log_level, jobdir=args.jobdir,
                            summary_json=args.summary_json, settings=overrides)
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(summary.format())
    problem = crawl_problem(summary)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
