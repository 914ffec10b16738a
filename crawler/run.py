"""Run a crawl: ``sites.toml`` in, WARC files out, a :class:`CrawlSummary` back.

Two ways in:

- :func:`run_crawl` runs Scrapy's ``CrawlerProcess`` *in the current process* and blocks until
  the crawl ends. Twisted's reactor can run only once per process, so a process can call it
  once; a second call raises ``RuntimeError``.
- :func:`run_crawl_subprocess`, or the command line ``python -m crawler.run --config sites.toml
  --out DIR``, runs the crawl in a child process: use it from tests, notebooks and anything
  that crawls more than once.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scrapy.crawler import CrawlerProcess

from crawler.config import SitesConfig, config_to_toml, load_config
from crawler.settings import build_settings
from crawler.spiders.news import NewsSpider
from crawler.warc import WarcCounts, WarcWriterMiddleware


@dataclass(frozen=True)
class CrawlSummary:
    """What one crawl recorded.

    Attributes:
        warc_files: paths of the WARC files written, in closing order.
        responses: response records per ``(site, category)``.
        statuses: response records per HTTP status code.
        warc_bytes: total size of the WARC files, in bytes (compressed).
        payload_bytes: total size of the stored response bodies as received, in bytes.
        requests: requests Scrapy sent (robots.txt and retries included).
        finish_reason: Scrapy's finish reason (``"finished"`` for a crawl that ran out of work).
        elapsed_s: wall time of the crawl in seconds.
    """

    warc_files: tuple[str, ...] = ()
    responses: dict[tuple[str, str], int] = field(default_factory=dict)
    statuses: dict[int, int] = field(default_factory=dict)
    warc_bytes: int = 0
    payload_bytes: int = 0
    requests: int = 0
    finish_reason: str | None = None
    elapsed_s: float = 0.0

    @property
    def total_responses(self) -> int:
        """Response records written, over all sites and categories."""
        return sum(self.responses.values())

    def to_json(self) -> str:
        """JSON text; :meth:`from_json` reads it back to an equal summary."""
        data = {
            **dataclasses.asdict(self),
            "warc_files": list(self.warc_files),
            "responses": [[s, c, n] for (s, c), n in sorted(self.responses.items())],
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
        }
        return json.dumps(data, indent=2)

    @classmethod
    def from_json(cls, text: str) -> CrawlSummary:
        """Parse what :meth:`to_json` wrote; raises ``ValueError`` (or ``KeyError``) on other input."""
        data = json.loads(text)
        data["warc_files"] = tuple(data["warc_files"])
        data["responses"] = {(s, c): n for s, c, n in data["responses"]}
        data["statuses"] = {int(k): v for k, v in data["statuses"].items()}
        return cls(**data)

    def format(self) -> str:
        """A few lines for humans: totals, statuses, then responses per site/category."""
        lines = [
            f"crawl {self.finish_reason or 'did not finish'} in {self.elapsed_s:.2f} s: "
            f"{self.total_responses} responses recorded in {len(self.warc_files)} WARC files "
            f"({self.warc_bytes / 1024:.1f} KiB; {self.requests} requests sent)",
            "  by status: " + (" ".join(f"{k}={v}" for k, v in sorted(self.statuses.items())) or "-"),
        ]
        lines += [f"  {s}/{c}: {n}" for (s, c), n in sorted(self.responses.items())]
        return "\n".join(lines)


def summarise(counts: WarcCounts, stats: dict[str, Any]) -> CrawlSummary:
    """Build a :class:`CrawlSummary` from the WARC writer's counts and Scrapy's crawl stats."""
    return CrawlSummary(
        warc_files=tuple(counts.files),
        responses=dict(counts.responses),
        statuses=dict(counts.statuses),
        warc_bytes=counts.warc_bytes,
        payload_bytes=counts.payload_bytes,
        requests=int(stats.get("downloader/request_count", 0)),
        finish_reason=stats.get("finish_reason"),
        elapsed_s=float(stats.get("elapsed_time_seconds", 0.0)),
    )


def run_crawl(config: SitesConfig | str | Path, out_dir: str | Path, *,
              log_level: str = "INFO") -> CrawlSummary:
    """Crawl ``config`` (a :class:`SitesConfig` or a ``sites.toml`` path) into WARC files under ``out_dir``.

    Runs a Scrapy ``CrawlerProcess`` in this process and blocks until the crawl ends. Call it at
    most once per process (Twisted's reactor cannot restart); use :func:`run_crawl_subprocess`
    otherwise. Logging: when the root logger has no handler, Scrapy installs its own at
    ``log_level``; when the caller already configured logging, Scrapy's records go to the
    caller's handlers, with the ``scrapy`` and ``crawler`` loggers set to ``log_level``.

    Raises:
        ValueError: the config is invalid.
        RuntimeError: the reactor already ran in this process, or the crawl failed to start.
    """
    cfg = config if isinstance(config, SitesConfig) else load_config(config)
    _check_reactor_unused()
    settings = build_settings(cfg, out_dir, log_level=log_level)
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
        raise RuntimeError(f"crawl failed: {failures[0].value!r}") from failures[0].value
    return summarise(_writer_counts(crawler), crawler.stats.get_stats())


def run_crawl_subprocess(config: SitesConfig | str | Path, out_dir: str | Path, *,
                         log_level: str = "INFO", timeout: float | None = None) -> CrawlSummary:
    """Run :func:`run_crawl` in a child Python process (``python -m crawler.run``) and return its summary.

    The child's log goes to this process's stderr. ``timeout`` is in seconds.

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
        cmd = [sys.executable, "-m", "crawler.run", "--config", str(config_path), "--out", str(out_dir),
               "--log-level", log_level, "--summary-json", str(summary_path)]
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
            "its own process (crawler.run.run_crawl_subprocess or `python -m crawler.run`)"
        )


def _writer_counts(crawler) -> WarcCounts:
    try:
        writer = crawler.get_downloader_middleware(WarcWriterMiddleware)
    except RuntimeError:  # the engine was never created
        writer = None
    return writer.counts if writer is not None else WarcCounts()


def build_arg_parser() -> argparse.ArgumentParser:
    """The ``python -m crawler.run`` argument parser (``--config``, ``--out``, ``--log-level``, ``--summary-json``)."""
    parser = argparse.ArgumentParser(
        prog="python -m crawler.run",
        description="Crawl the sites of a sites.toml into WARC files: OUT/<site>/<category>/*.warc.gz",
    )
    parser.add_argument("--config", required=True, type=Path, help="sites.toml to crawl")
    parser.add_argument("--out", required=True, type=Path, help="WARC output root directory")
    parser.add_argument("--log-level", default="INFO", help="Scrapy log level (default: INFO)")
    parser.add_argument("--summary-json", type=Path, help="also write the crawl summary as JSON here")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: crawl, print the summary, return the exit status (2 for a bad config)."""
    args = build_arg_parser().parse_args(argv)
    try:
        config = load_config(args.config)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    summary = run_crawl(config, args.out, log_level=args.log_level)
    if args.summary_json:
        args.summary_json.write_text(summary.to_json(), encoding="utf-8")
    print(summary.format())
    return 0 if summary.finish_reason == "finished" else 1


if __name__ == "__main__":
    sys.exit(main())
