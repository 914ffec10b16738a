"""Run a crawl: ``sites.toml`` in, WARC files out, a :class:`CrawlSummary` back.

Two ways in:

- :func:`run_crawl` runs Scrapy's ``CrawlerProcess`` *in the current process* and blocks until
  the crawl ends. Twisted's reactor can run only once per process, so a process can call it
  once; a second call raises ``RuntimeError``.
- :func:`run_crawl_subprocess`, or the command line ``python -m newsclean.crawler.run --config sites.toml
  --out DIR``, runs the crawl in a child process: use it from tests, notebooks and anything
  that crawls more than once.
"""

from __future__ import annotations

import argparse
import logging
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from scrapy.crawler import CrawlerProcess

from newsclean.crawler.config import SitesConfig, config_to_toml, load_config, with_overrides
from newsclean.crawler.report import CategoryReport, CrawlSummary
from newsclean.crawler.settings import build_settings
from newsclean.crawler.spiders.news import NewsSpider
from newsclean.crawler.state import CrawlState

__all__ = ["CategoryReport", "CrawlSummary", "build_arg_parser", "main", "run_crawl", "run_crawl_subprocess"]


def run_crawl(config: SitesConfig | str | Path, out_dir: str | Path, *, log_level: str = "INFO",
              jobdir: str | Path | None = None, summary_json: str | Path | None = None) -> CrawlSummary:
    """Crawl ``config`` (a :class:`SitesConfig` or a ``sites.toml`` path) into WARC files under ``out_dir``.

    Runs a Scrapy ``CrawlerProcess`` in this process and blocks until the crawl ends. Call it at
    most once per process (Twisted's reactor cannot restart); use :func:`run_crawl_subprocess`
    otherwise. ``jobdir``: Scrapy ``JOBDIR`` for pause/resume (a crawl stopped by a signal or
    killed resumes when started again with the same ``jobdir``). ``summary_json``: also write the
    report there (it is always written as ``out_dir/crawl-report-*.json``). Logging: when the root
    logger has no handler, Scrapy installs its own at ``log_level``; when the caller already
    configured logging, Scrapy's records go to the caller's handlers, with the ``scrapy`` and
    ``crawler`` loggers set to ``log_level``.

    Raises:
        ValueError: the config is invalid.
        RuntimeError: the reactor already ran in this process, or the crawl failed to start
            (e.g. another crawl holds the lock on ``out_dir``).
    """
    cfg = config if isinstance(config, SitesConfig) else load_config(config)
    _check_reactor_unused()
    settings = build_settings(cfg, out_dir, log_level=log_level, jobdir=jobdir, summary_json=summary_json)
    app_logging = bool(logging.getLogger().handlers)
    if app_logging:  # the caller configured logging: use its handlers rather than add Scrapy's
        settings.set("LOG_INSTALL_ROOT_HANDLER", False, priority="cmdline")
    process = CrawlerProcess(settings)
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
                         jobdir: str | Path | None = None) -> CrawlSummary:
    """Run :func:`run_crawl` in a child Python process (``python -m newsclean.crawler.run``) and return its summary.

    The child's log goes to this process's stderr. ``timeout`` is in seconds; ``jobdir`` as
    :func:`run_crawl`.

    Raises:
        ValueError: the config is invalid (checked here before starting the child).
        RuntimeError: the child exited with a non-zero status.
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
        result = subprocess.run(cmd, timeout=timeout, check=False)  # noqa: S603 (our own module)
        if result.returncode != 0:
            raise RuntimeError(f"crawl subprocess exited with status {result.returncode}: {' '.join(cmd)}")
        return CrawlSummary.from_json(summary_path.read_text(encoding="utf-8"))


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
    ``--jobdir``, ``--refetch-after``, ``--allow-private-networks``."""
    parser.add_argument("--jobdir", type=Path, metavar="DIR",
                        help="Scrapy JOBDIR: pause with Ctrl-C (or SIGTERM), resume by running again with the same "
                             "DIR; a killed crawl resumes too, without fetching or writing anything twice")
    parser.add_argument("--refetch-after", type=float, metavar="DAYS", dest="refetch_after",
                        help="fetch known article URLs again once their last fetch is older than DAYS "
                             "(default: [crawl] refetch_after_days, 0 = never)")
    parser.add_argument("--allow-private-networks", action="store_true", default=None,
                        help="allow hosts on private, loopback or link-local addresses (tests, demos, intranets)")


def apply_crawl_options(config: SitesConfig, args: argparse.Namespace) -> SitesConfig:
    """``config`` with the command-line overrides of :func:`add_crawl_options` applied."""
    return with_overrides(config, refetch_after_days=args.refetch_after,
                          allow_private_networks=args.allow_private_networks)


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
    """Command-line entry: crawl, print the report, return the exit status (2 for a bad config, 1 when
    the crawl did not finish, e.g. stopped by a signal or refused to start)."""
    args = build_arg_parser().parse_args(argv)
    try:
        config = apply_crawl_options(load_config(args.config), args)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        summary = run_crawl(config, args.out, log_level=args.log_level, jobdir=args.jobdir,
                            summary_json=args.summary_json)
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(summary.format())
    return 0 if summary.finish_reason == "finished" else 1


if __name__ == "__main__":
    sys.exit(main())
