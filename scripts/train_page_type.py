"""Train the learned page-type model (transforms/page_type.py) on the *tune* half of the shared data.

    python scripts/train_page_type.py [--out transforms/models/page_type.txt.gz] [--jobs 2] [--cache PICKLE]

Pages: the tune pages (``newsclean_eval.datasets.split_of``: split by site, so the test halves stay held out) of
the seven shared sets. Labels: wcxb-dev's page types (``article``; ``listing`` and ``collection`` as
``listing``; forum, product, service, documentation as ``other``); every page of the six other sets is an
``article``. A page's row is :func:`newsclean.transforms.page_type.page_features` as the default chain computes
it at the page-type step (static noise learnt from up to 10 neighbour pages of the page's group, as the
pipeline does), with the rules' verdict among the columns.

The script prints, from out-of-fold probabilities (5 folds by site: no page is scored by a model that saw its
site), how many gold articles the decision would type ``listing`` (rejected in a foreign WARC) and how many gold
listings it would not type ``article``, for a grid of ``PageTypeParams.listing_confidence`` and
``article_confidence``; the shipped thresholds were read off that grid (docs/DECISIONS.md, "Page type").
Then it fits the model on every tune page and writes it (gzipped LightGBM text, 3 classes).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import itertools
import pickle
import sys
from collections import defaultdict
from dataclasses import dataclass, replace
from multiprocessing import Pool
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "evaluation"))

from newsclean.transforms.chain import DEFAULT_CONFIG, prepare_blocks, select_blocks  # noqa: E402
from newsclean.transforms.errors import ExtractionError  # noqa: E402
from newsclean.transforms.page_type import (  # noqa: E402
    MODEL_CLASSES,
    PAGE_FEATURE_NAMES,
    PAGE_MODEL,
    PageStats,
    PageTypeParams,
    has_article_evidence,
    largest_prose_region,
    learned_type,
    page_features,
    rule_type,
)
from newsclean.transforms.site_evidence import learn_site_evidence  # noqa: E402
from newsclean_eval.datasets import LOADERS, EvalPage, load  # noqa: E402
from newsclean_eval.runner import decode_page  # noqa: E402

NEIGHBOURS = 10
FOLDS = 5
LIST_TYPES = frozenset({"listing", "collection"})
PARAMS = dict(objective="multiclass", num_class=len(MODEL_CLASSES), learning_rate=0.05, num_leaves=7,
              min_data_in_leaf=10, feature_fraction=0.8, bagging_fraction=0.8, bagging_freq=1, lambda_l2=1.0,
              seed=13, deterministic=True, num_threads=2, verbose=-1)
ROUNDS = 150
LISTING_WEIGHT = 5.0  # a gold listing weighs 5 pages: 107 listings among 1,941 tune pages (docs/DECISIONS.md)
RULES_ONLY = replace(DEFAULT_CONFIG, page_types=PageTypeParams(learned=False))
LISTING_GRID = (0.8, 0.9, 0.95)
ARTICLE_GRID = (0.1, 0.3, 0.5, 0.6, 0.7)
RESCUE_GRID = (0.3, 0.5, 0.7)


@dataclass
class PageRow:
    """One page's row: ``key`` (dataset:site, for the folds), its gold class (an index of ``MODEL_CLASSES``),
    features, the rules' verdict and the page's article evidence (the decision's guards)."""

    key: str
    page_id: str
    label: int
    feats: list[float]
    rule: str
    evident: bool
    declared_article: bool


def gold_class(page: EvalPage) -> int:
    """Index in ``MODEL_CLASSES`` of the page's gold type (wcxb-dev's label; ``article`` elsewhere)."""
    if page.page_type == "article":
        return 0
    return 1 if page.page_type in LIST_TYPES else 2


def page_row(page: EvalPage, html: str, evidence) -> PageRow | None:
    """The row of one decoded page with its group's ``evidence``; None where the chain rejects it first."""
    prepared = prepare_blocks(html, evidence, RULES_ONLY)
    blocks, meta, params = prepared.blocks, prepared.meta, RULES_ONLY.page_types
    keep = select_blocks(blocks, RULES_ONLY, prepared.context(evidence, html))
    dated, has_body = meta.published_at is not None or bool(meta.authors), bool(meta.article_body)
    stats = PageStats.of(blocks, keep, meta.page_types, params)
    if not stats.total:
        return None
    rule = rule_type(blocks, keep, stats, params, meta.title, dated, has_body)
    region = largest_prose_region(blocks, stats.prose)
    return PageRow(f"{page.dataset}:{page.site or page.group}", page.page_id, gold_class(page),
                   page_features(blocks, keep, stats, meta.title, dated, has_body, region, rule), rule,
                   has_article_evidence(dated, has_body, region, params), stats.declared_article)


def group_rows(pages: list[EvalPage]) -> list[PageRow]:
    """Rows of one neighbour group's pages (evidence from the first :data:`NEIGHBOURS` pages that decode)."""
    htmls = [decode_page(p) for p in pages]
    try:
        evidence = learn_site_evidence([h for h in htmls if h][:NEIGHBOURS])
    except Exception:  # noqa: BLE001 - as the pipeline does: the group without static noise
        evidence = None
    rows = []
    for page, html in zip(pages, htmls):
        try:
            row = page_row(page, html, evidence) if html else None
        except ExtractionError:
            row = None
        if row is not None:
            rows.append(row)
    return rows


def collect(jobs: int, split: str = "tune") -> list[PageRow]:
    """Rows of every page of ``split`` of the seven sets, in a fixed order."""
    groups: dict[tuple[str, str], list[EvalPage]] = defaultdict(list)
    for name in LOADERS:
        for page in load(name):
            if page.split == split:
                groups[(name, page.group)].append(page)
    ordered = [sorted(ps, key=lambda p: hashlib.sha1(p.page_id.encode()).hexdigest()) for ps in groups.values()]
    with Pool(jobs) as pool:
        rows = [r for part in pool.imap_unordered(group_rows, ordered, chunksize=4) for r in part]
    return sorted(rows, key=lambda r: (r.key, r.page_id))


def fit(rows: list[PageRow]):
    """A LightGBM multiclass booster over ``rows`` (a gold listing weighted :data:`LISTING_WEIGHT`)."""
    import lightgbm

    data = lightgbm.Dataset(np.array([r.feats for r in rows]), np.array([r.label for r in rows]),
                            weight=np.array([LISTING_WEIGHT if r.label == 1 else 1.0 for r in rows]),
                            feature_name=list(PAGE_FEATURE_NAMES), free_raw_data=False)
    return lightgbm.train(PARAMS, data, num_boost_round=ROUNDS)


def _fold(key: str) -> int:
    return int(hashlib.sha1(key.encode()).hexdigest(), 16) % FOLDS


def out_of_fold(rows: list[PageRow]) -> np.ndarray:
    """Per row, (article, listing, other) probabilities from a model fitted on the other site folds."""
    probs = np.zeros((len(rows), len(MODEL_CLASSES)))
    for k in range(FOLDS):
        held = [i for i, r in enumerate(rows) if _fold(r.key) == k]
        booster = fit([r for r in rows if _fold(r.key) != k])
        probs[held] = booster.predict(np.array([rows[i].feats for i in held]))
    return probs


def grid(rows: list[PageRow], probs: np.ndarray) -> list[str]:
    """Lines: per threshold triple, gold articles typed listing, gold articles typed article, gold listings not
    typed article (of how many)."""
    articles = sum(r.label == 0 for r in rows)
    lists = sum(r.label == 1 for r in rows)
    lines = [f"tune rows: {len(rows)}; gold articles {articles}, listings {lists}",
             "listing_conf article_conf rescue_conf | articles->listing articles->article | listings not article"]
    rules = [r.rule for r in rows]
    lines.append(f"rules only | {_count(rows, rules, 0, 'listing')} {_count(rows, rules, 0, 'article')} | "
                 f"{lists - _count(rows, rules, 1, 'article')} of {lists}")
    for lc, ac, rc in itertools.product(LISTING_GRID, ARTICLE_GRID, RESCUE_GRID):
        params = PageTypeParams(listing_confidence=lc, article_confidence=ac, rescue_confidence=rc)
        types = [learned_type(r.rule, tuple(p), r.evident, r.declared_article, params, _declared_listing(r))
                 for r, p in zip(rows, probs)]
        lines.append(f"{lc:.2f} {ac:.2f} {rc:.2f} | {_count(rows, types, 0, 'listing')} "
                     f"{_count(rows, types, 0, 'article')} | {lists - _count(rows, types, 1, 'article')} of {lists}")
    return lines


def _declared_listing(row: PageRow) -> bool:
    return bool(row.feats[PAGE_FEATURE_NAMES.index("declared_listing")]) and not row.declared_article


def _count(rows: list[PageRow], types: list[str], label: int, kind: str) -> int:
    return sum(r.label == label and t == kind for r, t in zip(rows, types))


def collect_cached(jobs: int, cache: Path | None) -> list[PageRow]:
    """:func:`collect`, or its rows read back from ``cache`` (a pickle this function wrote); delete the cache
    after changing the features' code."""
    if cache is not None and cache.exists():
        with open(cache, "rb") as fh:
            return pickle.load(fh)
    rows = collect(jobs)
    if cache is not None:
        with open(cache, "wb") as fh:
            pickle.dump(rows, fh, protocol=pickle.HIGHEST_PROTOCOL)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=PAGE_MODEL, help="model file (gzipped LightGBM text)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--cache", type=Path, help="pickle of the collected rows (read when it exists)")
    args = parser.parse_args(argv)
    rows = collect_cached(args.jobs, args.cache)
    print("\n".join(grid(rows, out_of_fold(rows))))
    text = fit(rows).model_to_string()
    with gzip.open(args.out, "wt", encoding="utf-8", compresslevel=9) as f:
        f.write(text)
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
