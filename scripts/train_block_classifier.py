"""Train the learned block classifier (transforms/learned.py) on the *tune* half of the shared data.

    python scripts/train_block_classifier.py [--out transforms/models/block_classifier.txt] [--jobs 2]

Pages: every data set. Full-text gold labels every block; trafilatura-eval's snippet gold labels
only the blocks that hold a must-contain (1) or must-not-contain (0) snippet. Only
pages whose site falls in the ``tune`` split (``pipeline.datasets.split_of``) are used, so
``newsclean eval``'s ``test`` columns are held out.

Blocks come from the ``learned`` chain configuration up to classification (static noise learnt
from up to 10 neighbour pages of the same group, as in the pipeline). A block's label is 1 when
most of it is in the gold text: at least half of its word trigrams occur in the gold, or, for
blocks under 4 tokens, its token sequence occurs in the gold. Each block is weighted by its share
of the page's words, so that every page weighs the same, as in the macro-averaged metric.
Requires lightgbm (the ``[train]`` extra). Prints the tune/test block accuracy.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import unicodedata
from collections import defaultdict
from multiprocessing import Pool
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pipeline.datasets import EvalPage, load  # noqa: E402
from transforms.chain import LEARNED_CONFIG, prepare_blocks  # noqa: E402
from transforms.errors import ExtractionError  # noqa: E402
from transforms.features import FEATURE_NAMES, PageContext, block_features  # noqa: E402
from transforms.parse import decode_html  # noqa: E402
from transforms.static_noise import learn_static_noise  # noqa: E402

TRAIN_SETS = ("msv-big9", "dragnet", "cleanportaleval", "cleaneval", "readability-test-pages", "trafilatura-eval")
NEIGHBOURS = 10
SNIPPET_PAGE_WEIGHT = 1.0  # a snippet page weighs as much as a full-text page (3.0 measured no better)
_TOKEN = re.compile(r"\w+")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(unicodedata.normalize("NFC", text).lower())


class Gold:
    """Gold text indexed for block labelling: trigram set and the space-joined token sequence."""

    def __init__(self, text: str):
        toks = tokens(text)
        self.trigrams = set(zip(toks, toks[1:], toks[2:]))
        self.joined = " " + " ".join(toks) + " "

    def label(self, text: str) -> int:
        toks = tokens(text)
        if not toks:
            return 0
        if len(toks) < 4:
            return int(" " + " ".join(toks) + " " in self.joined)
        tri = list(zip(toks, toks[1:], toks[2:]))
        return int(sum(t in self.trigrams for t in tri) / len(tri) >= 0.5)


def page_blocks(html: str, signature):
    """Blocks and features of one page exactly as the learned chain sees them."""
    page = prepare_blocks(html, signature, LEARNED_CONFIG)
    return page.blocks, block_features(page.blocks, PageContext(page.meta.title, bool(signature)))


def group_rows(pages: list[EvalPage]):
    htmls = []
    for p in pages:
        try:
            htmls.append(decode_html(p.html)[0])
        except ExtractionError:
            htmls.append("")
    signature = learn_static_noise([h for h in htmls[:NEIGHBOURS] if h])
    rows = []
    for page, html in zip(pages, htmls):
        if not html:
            continue
        try:
            blocks, feats = page_blocks(html, signature)
        except ExtractionError:
            continue
        rows.extend(text_gold_rows(page, blocks, feats) if page.gold is not None else snippet_rows(page, blocks, feats))
    return rows


def text_gold_rows(page: EvalPage, blocks, feats):
    """Every block labelled against full-text gold, weighted by its share of the page's words."""
    gold = Gold(page.gold)
    total = sum(b.num_words for b in blocks) or 1
    return [(f, gold.label(b.text), b.num_words / total, page.split) for b, f in zip(blocks, feats)]


def _touches(block_text: str, snippet: str) -> bool:
    snippet = " ".join(snippet.split())
    return bool(snippet) and (snippet in block_text or (len(block_text) >= 20 and block_text in snippet))


def snippet_rows(page: EvalPage, blocks, feats):
    """Only the blocks that hold a must-contain (label 1) or must-not-contain (label 0) snippet;
    the page's weight is spread over them."""
    labelled = []
    for b, f in zip(blocks, feats):
        if any(_touches(b.text, s) for s in page.must_not_contain):
            labelled.append((f, 0))
        elif any(_touches(b.text, s) for s in page.must_contain):
            labelled.append((f, 1))
    return [(f, y, SNIPPET_PAGE_WEIGHT / len(labelled), page.split) for f, y in labelled]


def collect(jobs: int):
    groups: dict[tuple[str, str], list[EvalPage]] = defaultdict(list)
    for name in TRAIN_SETS:
        for page in load(name):
            groups[(name, page.group)].append(page)
    with Pool(jobs) as pool:
        return [r for rows in pool.imap_unordered(group_rows, groups.values(), chunksize=2) for r in rows]


def train(rows, out: Path) -> None:
    import lightgbm as lgb
    import numpy as np

    tune = [r for r in rows if r[3] == "tune"]
    test = [r for r in rows if r[3] == "test"]
    X = np.array([r[0] for r in tune], dtype=float)
    y = np.array([r[1] for r in tune])
    w = np.array([r[2] for r in tune])
    data = lgb.Dataset(X, y, weight=w, feature_name=list(FEATURE_NAMES), free_raw_data=False)
    params = dict(objective="binary", learning_rate=0.05, num_leaves=31, min_data_in_leaf=40,
                  feature_fraction=0.8, bagging_fraction=0.8, bagging_freq=1, lambda_l2=1.0,
                  seed=13, deterministic=True, num_threads=2, verbose=-1)
    booster = lgb.train(params, data, num_boost_round=400)
    out.parent.mkdir(parents=True, exist_ok=True)
    booster.save_model(str(out))
    for name, part in (("tune", tune), ("test", test)):
        if part:
            pred = booster.predict(np.array([r[0] for r in part], dtype=float)) >= 0.5
            weights = np.array([r[2] for r in part])
            acc = float(((pred == np.array([r[1] for r in part])) * weights).sum() / weights.sum())
            print(f"{name}: {len(part)} blocks, word-weighted block accuracy {acc:.3f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=REPO / "transforms" / "models" / "block_classifier.txt")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    t0 = time.time()
    rows = collect(args.jobs)
    print(f"{len(rows)} blocks from {len(TRAIN_SETS)} data sets in {time.time() - t0:.0f} s", file=sys.stderr)
    train(rows, args.out)
    print(f"model written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
