"""``newsclean demo``: generate a news network, serve it on loopback, crawl it, clean it, score it.

Nothing leaves 127.0.0.0/8: the sites come from :mod:`newsclean.demo.network` and are served by
:class:`newsclean.demo.localsite.LocalSites` on 127.0.0.2, 127.0.0.3, ...; the crawl runs as a child process
(``python -m newsclean.crawler.run``: Twisted's reactor runs once per process, so the demo can be called from any
process), the cleaning pipeline in this process (:func:`newsclean.pipeline.clean.run_clean`, DirectRunner unless Beam
flags say otherwise). The output folder holds::

    OUT/sites.toml        the crawl config used (the ports are gone once the demo ends)
    OUT/warc/             the crawl: <site>/<category>/*.warc.gz
    OUT/clean/            the pipeline output: articles/*.parquet, rejects/*.parquet, _summary.json
    OUT/score.md          precision/recall/F1 of the article text against the generated gold text

The generic flow (:func:`crawl_clean_score`) also serves ``scripts/eval_crawl.py`` and the real-data
integration test, with a :class:`newsclean.demo.served.ServedNetwork` built from a data set instead.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from newsclean.demo.localsite import LocalSites
from newsclean.demo.scoring import (
    PageScore,
    Summary,
    by_site,
    macro,
    markdown_table,
    pair_with_gold,
    read_articles,
    read_reject_urls,
    score_pages,
)
from newsclean.demo.served import ServedNetwork
from newsclean.pipeline.errors import NewscleanError

#: ``[crawl]`` options for loopback sites we serve ourselves: no AutoThrottle start delay (5 s per
#: domain by default), more parallel requests. robots.txt is still obeyed.
LOOPBACK_CRAWL = {"autothrottle": False, "download_delay": 0.0, "concurrent_requests_per_domain": 8,
                  "allow_private_networks": True}

#: Port the demo serves every site on (each site has its own loopback host): the URLs, hence the neighbour pages
#: sampled per (site, category) (the smallest SHA-1 of the URL) and the scores, are the same from run to run. A
#: port taken on a host falls back to one the OS picks (:class:`~newsclean.demo.localsite.LocalSites`).
DEMO_PORT = 8470


@dataclass
class RunResult:
    """Outcome of :func:`crawl_clean_score`.

    ``scores``: one :class:`PageScore` per gold page (key = URL). ``rejected``: gold URL -> reject reason
    for gold pages that became reject rows. ``table``: the Markdown score table. ``timings``: seconds
    per step (``crawl``, ``clean``, ``score``). ``clean_output``: what ``newsclean clean`` printed.
    """

    out_dir: Path
    scores: list[PageScore]
    rejected: dict[str, str]
    articles: int
    table: str
    clean_output: str = ""
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def overall(self) -> Summary:
        """Macro average over every gold page."""
        return macro(self.scores)

    @property
    def per_site(self) -> dict[str, Summary]:
        """Macro average per site."""
        return by_site(self.scores)


DemoResult = RunResult


def run_crawl_step(network: ServedNetwork, out_dir: Path, crawl_options: Mapping[str, object],
                   log_level: str = "WARNING", timeout: float | None = 600) -> dict[str, str]:
    """Serve ``network`` on loopback (and :meth:`~newsclean.demo.served.ServedNetwork.bind` it), write
    ``out_dir/sites.toml`` and crawl into ``out_dir/warc``.

    Runs ``python -m newsclean.crawler.run`` as a child process (its summary goes to this process's stdout).
    Returns the base URL per site as served. Raises RuntimeError when the crawl fails.
    """
    config = out_dir / "sites.toml"
    with LocalSites(network.sites, port=DEMO_PORT) as served:
        network.bind(served.base_urls)
        config.write_text(network.sites_toml(served.base_urls, crawl=dict(crawl_options)), encoding="utf-8")
        cmd = [sys.executable, "-m", "newsclean.crawler.run", "--config", str(config), "--out", str(out_dir / "warc"),
               "--log-level", log_level]
        sys.stdout.flush()
        result = subprocess.run(cmd, check=False, timeout=timeout)  # noqa: S603 (our own module)
        if result.returncode != 0:
            raise RuntimeError(f"crawl exited with status {result.returncode}: {' '.join(cmd)}")
        return dict(served.base_urls)


def clean_command(warc: Path, out: Path, extra: Sequence[str] = ()) -> list[str]:
    """The ``newsclean clean`` command line for this interpreter (``python -m newsclean.cli clean``: no need for the
    console script on PATH)."""
    return [sys.executable, "-m", "newsclean.cli", "clean", "--warc", str(warc), "--out", str(out), *extra]


def run_clean_step(warc_dir: Path, clean_dir: Path, extra: Sequence[str] = (), *, in_process: bool = False,
                   timeout: float | None = 900) -> str:
    """Run the cleaning pipeline on ``warc_dir`` into ``clean_dir``; return its printed summary.

    ``in_process``: call :func:`newsclean.pipeline.clean.run_clean` here (DirectRunner unless ``extra`` names
    another runner); otherwise run ``newsclean clean`` as a child process (``timeout`` in seconds).
    ``extra``: Beam flags and ``--neighbour-sample``/``--chain``. Raises RuntimeError when it fails.
    """
    if in_process:
        return _clean_in_process(warc_dir, clean_dir, extra)
    cmd = clean_command(warc_dir, clean_dir, extra)
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)  # noqa: S603
    if result.returncode != 0:
        raise RuntimeError(f"clean exited with status {result.returncode}\n{result.stdout}\n{result.stderr}")
    return result.stdout


def _clean_in_process(warc_dir: Path, clean_dir: Path, extra: Sequence[str]) -> str:
    from apache_beam.options.pipeline_options import PipelineOptions  # noqa: PLC0415

    from newsclean.pipeline.clean import run_clean  # noqa: PLC0415
    from newsclean.pipeline.errors import NewscleanError  # noqa: PLC0415
    from newsclean.pipeline.options import clean_config_from_options  # noqa: PLC0415

    options = PipelineOptions(["--warc", str(warc_dir), "--out", str(clean_dir), *extra])
    try:
        return run_clean(clean_config_from_options(options), options).format() + "\n"
    except NewscleanError as exc:
        raise RuntimeError(f"clean failed: {exc}") from exc


def score_output(network: ServedNetwork, base_urls: Mapping[str, str], clean_dir: Path) -> tuple[list[PageScore], dict[str, str], int]:
    """Score ``clean_dir``'s articles against ``network``'s gold. Returns (scores, rejected gold URLs, article rows)."""
    gold = network.gold_by_url(base_urls)
    articles = read_articles(clean_dir)
    rejects = read_reject_urls(clean_dir)
    scores = score_pages(pair_with_gold(gold, articles))
    rejected = {s.key: rejects[s.key] for s in scores if s.missing and s.key in rejects}
    return scores, rejected, len(articles)


def crawl_clean_score(network: ServedNetwork, out_dir: Path, *, crawl_options: Mapping[str, object] | None = None,
                      clean_args: Sequence[str] = (), clean_in_process: bool = False, log_level: str = "WARNING",
                      echo: Callable[[str], None] = print) -> RunResult:
    """Serve, crawl, clean and score ``network`` under ``out_dir`` (created if needed).

    ``crawl_options``: the ``[crawl]`` table (default :data:`LOOPBACK_CRAWL`, depth limit 2).
    ``clean_args``: extra flags for ``newsclean clean`` (Beam options, ``--neighbour-sample``...);
    ``clean_in_process``: run the pipeline in this process rather than as ``newsclean clean``.
    ``echo`` receives the pipeline summary. Writes ``out_dir/score.md``; ``out_dir/warc`` and
    ``out_dir/clean`` from an earlier run are deleted first (old WARC files would mix two crawls).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in (out_dir / "warc", out_dir / "clean"):
        shutil.rmtree(old, ignore_errors=True)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    base_urls = run_crawl_step(network, out_dir, {"depth_limit": 2, **(crawl_options or LOOPBACK_CRAWL)}, log_level)
    t1 = time.perf_counter()
    clean_output = run_clean_step(out_dir / "warc", out_dir / "clean", clean_args, in_process=clean_in_process)
    t2 = time.perf_counter()
    echo(clean_output.rstrip())
    scores, rejected, articles = score_output(network, base_urls, out_dir / "clean")
    timings.update(crawl=t1 - t0, clean=t2 - t1, score=time.perf_counter() - t2)
    table = markdown_table(scores)
    (out_dir / "score.md").write_text(table, encoding="utf-8")
    return RunResult(out_dir, scores, rejected, articles, table, clean_output, timings)


def format_report(result: RunResult) -> str:
    """The score table plus one ``overall macro F1: ...`` line (parsed by tests) and the step timings."""
    o = result.overall
    rejected = ", ".join(f"{reason}" for reason in sorted(set(result.rejected.values()))) or "none"
    return (f"\nBag-of-words scores against the generated gold text (macro average per page):\n\n{result.table}\n"
            f"overall macro F1: {o.f1:.3f} (P {o.precision:.3f}, R {o.recall:.3f}) over {o.pages} gold articles; "
            f"{o.missing} without an article row (reject reasons: {rejected})\n"
            f"timings: " + ", ".join(f"{k} {v:.1f} s" for k, v in result.timings.items()))


def run_demo(out_dir: Path, *, seed: int = 0, articles_per_category: int = 10,
             clean_args: Sequence[str] = (), echo: Callable[[str], None] = print) -> DemoResult:
    """Build the demo network (``seed``), serve it, crawl, clean, score; print the summary and the scores.

    Returns the :class:`RunResult`. Raises :class:`newsclean.pipeline.errors.NewscleanError` (which ``newsclean``
    reports in one line) when the crawl or the clean step fails.
    """
    from newsclean.demo.network import build_demo_network  # noqa: PLC0415

    network = build_demo_network(seed, articles_per_category)
    echo(f"demo: {len(network.sites)} sites, {network.article_count()} articles, serving on 127.0.0.x; "
         f"output in {out_dir}")
    try:
        result = crawl_clean_score(network, Path(out_dir), clean_args=clean_args, clean_in_process=True, echo=echo)
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        raise NewscleanError(f"demo failed: {exc}") from exc
    echo(format_report(result))
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m newsclean.demo.run [--out DIR] [--seed N]``: run the demo; exit status 0 on success."""
    parser = argparse.ArgumentParser(prog="newsclean demo", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("demo-out"), help="output folder (default: demo-out)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated network (default: 0)")
    args, beam_args = parser.parse_known_args(argv)
    run_demo(args.out, seed=args.seed, clean_args=beam_args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
