#!/usr/bin/env python
"""Score the whole chain on a real data set served as real sites: replay -> crawl -> clean -> score.

    .venv/bin/python scripts/eval_crawl.py --dataset msv-big9 --out out/eval-big9
    .venv/bin/python scripts/eval_crawl.py --dataset msv-big9 --limit-per-group 4 --sites cnn_com,bbc_co_uk --out /tmp/e

Every site of the data set is served on its own 127.0.0.N host (:mod:`newsclean_eval.replay`), one category per
page group (a crawl year for msv-big9), start point an XML sitemap per category. The crawl runs as
``python -m newsclean.crawler.run`` and the clean as ``newsclean clean`` (child processes); the article text in
Parquet is scored against the gold text with bag-of-words P/R/F1 per page, macro-averaged per site and
overall (:mod:`newsclean.demo.scoring`). A gold page with no article row (rejected, dropped as a duplicate,
not crawled) scores 0.

Writes under ``--out``: ``sites.toml``, ``warc/``, ``clean/``, ``score.md`` (the table) and ``pages.csv``
(one row per gold page: url, site, P, R, F1, token counts, reject reason). Prints the table.
Needs ``../shared/data`` (or an unpacked data set under ``$NEWSCLEAN_DATA``); exit status 2 when absent.
Everything stays on 127.0.0.0/8.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from newsclean.demo.run import LOOPBACK_CRAWL, RunResult, crawl_clean_score
from newsclean_eval.datasets import LOADERS, load
from newsclean_eval.replay import INDEX_KINDS, build_replay, limit_per_group, replay_pages, select

#: Data sets whose gold is plain text (trafilatura-eval has snippets only, which a crawl cannot be scored on).
TEXT_GOLD_SETS = sorted(name for name in LOADERS if name != "trafilatura-eval")


def build_parser() -> argparse.ArgumentParser:
    """Arguments: ``--dataset``, ``--out``, ``--limit-per-group``, ``--sites``, ``--categories``, ``--index``,
    ``--depth-limit``; anything else goes to ``newsclean clean`` (``--neighbour-sample``, ``--chain``, Beam flags)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dataset", default="msv-big9", choices=TEXT_GOLD_SETS,
                   help="data set with plain-text gold (default msv-big9)")
    p.add_argument("--out", type=Path, required=True, help="output folder (warc/, clean/, score.md, pages.csv)")
    p.add_argument("--limit-per-group", type=int, default=None, metavar="N",
                   help="serve only the first N pages of every (site, category) group (default: all)")
    p.add_argument("--sites", default="", help="comma-separated site names to keep (e.g. cnn_com,bbc_co_uk)")
    p.add_argument("--categories", default="", help="comma-separated categories to keep (e.g. y2005,y2013)")
    p.add_argument("--index", default="sitemap", choices=INDEX_KINDS, help="start point per category")
    p.add_argument("--log-level", default="WARNING", help="crawl log level (default WARNING)")
    return p


def _split(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def write_pages_csv(result: RunResult, path: Path) -> None:
    """One CSV row per gold page: url, site, precision, recall, f1, pred/gold/overlap tokens, reject reason."""
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["url", "site", "precision", "recall", "f1", "pred_tokens", "gold_tokens", "overlap", "missing",
                    "reject_reason"])
        for s in result.scores:
            w.writerow([s.key, s.site, f"{s.precision:.4f}", f"{s.recall:.4f}", f"{s.f1:.4f}", s.pred_tokens,
                        s.gold_tokens, s.overlap, int(s.missing), result.rejected.get(s.key, "")])


def run(args: argparse.Namespace, clean_args: list[str]) -> RunResult:
    """Load, serve, crawl, clean and score as ``args`` say; returns the :class:`~newsclean.demo.run.RunResult`.

    Raises FileNotFoundError when the data set is unavailable, ValueError when the filters keep no page.
    """
    pages = replay_pages(load(args.dataset))
    pages = limit_per_group(select(pages, _split(args.sites), _split(args.categories)), args.limit_per_group)
    if not pages:
        raise ValueError("no page left after --sites/--categories/--limit-per-group")
    network = build_replay(pages, index=args.index)
    print(f"{args.dataset}: serving {network.article_count()} pages of {len(network.sites)} sites on 127.0.0.x",
          flush=True)
    crawl = {**LOOPBACK_CRAWL, "depth_limit": 1}
    return crawl_clean_score(network, args.out, crawl_options=crawl, clean_args=clean_args, log_level=args.log_level)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry; returns the exit status (0 ok, 2 data set unavailable or nothing selected)."""
    args, clean_args = build_parser().parse_known_args(argv)
    try:
        result = run(args, clean_args)
    except (FileNotFoundError, ValueError) as exc:
        print(f"eval_crawl: {exc}", file=sys.stderr)
        return 2
    write_pages_csv(result, args.out / "pages.csv")
    o = result.overall
    print(f"\n{result.table}\noverall macro F1: {o.f1:.3f} (P {o.precision:.3f}, R {o.recall:.3f}) over {o.pages} "
          f"pages; {o.missing} without an article row; " +
          ", ".join(f"{k} {v:.1f} s" for k, v in result.timings.items()))
    print(f"written: {args.out / 'score.md'}, {args.out / 'pages.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
