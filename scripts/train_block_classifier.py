"""Train the learned block classifier (transforms/classifier/model.py) on the *tune* half of the shared data.

    python scripts/train_block_classifier.py [--out transforms/models/block_classifier.txt] [--jobs 2]

Pages: every data set of ``TRAIN_SETS`` (wcxb-dev, ``EVAL_ONLY_SETS``, is scored, never trained on). Full-text gold labels every block; trafilatura-eval's snippet gold labels
only the blocks that hold a must-contain (1) or must-not-contain (0) snippet. Only
pages whose site falls in the ``tune`` split (``newsclean_eval.datasets.split_of``) are used, so
``newsclean eval``'s ``test`` columns are held out.

Blocks come from the ``learned`` chain configuration up to classification (static noise learnt
from up to 10 neighbour pages of the same group, as in the pipeline). A block's label is 1 when
at least half of its tokens are matched by an in-order alignment (difflib) of the page's tokens
with the gold tokens. (It measured better than the earlier rule, "half of its word trigrams occur
anywhere in the gold": short boilerplate such as "Filed under" is no longer labelled content because
its words occur somewhere in the article; soft labels measured no better. Figures:
docs/DECISIONS.md, "Block labels".) Each block is weighted by its share
of the page's words, so that every page weighs the same, as in the macro-averaged metric.

The boilerplate lexicon (``transforms/classifier/lexicon.py``) is learnt from the same labelled blocks; its
features on the training blocks come from the lexicons of the other site folds (out of fold, as
stage 2's stage-1 probabilities), so no block is scored by its own words. ``--ensemble K`` trains
K boosters per stage with seeds SEED..SEED+K-1 and averages them (K = 3 measured no better than one
on either half, at three times the prediction time; one is shipped). ``--train-split test`` trains
the swapped direction into ``transforms/models/crossfit/``: ``newsclean eval``'s ``crossfit`` row
scores tune pages with it, so that every page is scored by a model that never saw its site.
``--holdout-set NAME`` (or ``all``) trains leave-one-data-set-out models into ``out/lodo/NAME/``:
the same recipe on the tune pages of the other sets of ``TRAIN_SETS``, printing the block accuracy on the held-out
set's tune pages; ``newsclean eval --lodo out/lodo --split tune`` scores each set with the model that
never saw it, beside trafilatura (the selection protocol, docs/DECISIONS.md: choices are made on that table,
the test halves are scored once per release).
Requires lightgbm (the ``[train]`` extra). Prints the tune/test block accuracy.
"""

from __future__ import annotations

import argparse
import difflib
import gzip
import hashlib
import pickle
import sys
import time
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, replace
from multiprocessing import Pool
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from newsclean.demo.scoring import tokens  # noqa: E402  (the scoring tokens: labels match the metric)
from newsclean.transforms.chain import LEARNED_CONFIG, prepare_blocks  # noqa: E402
from newsclean.transforms.classifier.features import (  # noqa: E402
    CONTEXT_FEATURE_NAMES,
    block_features,
    context_features,
    context_groups,
    feature_columns,
    group_feature_names,
)
from newsclean.transforms.classifier.lexicon import (  # noqa: E402
    block_terms,
    learn_lexicon,
    lexicon_features,
    save_lexicon,
)
from newsclean.transforms.classifier.model import (  # noqa: E402
    DEFAULT_CONTEXT_MODEL,
    DEFAULT_LEXICON,
    DEFAULT_MODEL,
    ENSEMBLE_SEPARATOR,
)
from newsclean.transforms.errors import ExtractionError  # noqa: E402
from newsclean.transforms.noise_removal import NoiseRemovalParams  # noqa: E402
from newsclean.transforms.site_evidence import learn_site_evidence  # noqa: E402
from newsclean.transforms.vocab import FEATURE_GROUPS, FEATURE_NAMES, LEXICON_FEATURE_NAMES  # noqa: E402
from newsclean_eval.datasets import EvalPage, load  # noqa: E402
from newsclean_eval.runner import decode_page  # noqa: E402
from newsclean_eval.systems import CROSSFIT_MODELS  # noqa: E402

TRAIN_SETS = ("msv-big9", "dragnet", "cleanportaleval", "cleaneval", "readability-test-pages", "trafilatura-eval")
#: Sets scored under leave-one-data-set-out but never trained on (their held-out model is trained on every set of
#: :data:`TRAIN_SETS`): wcxb-dev's articles in the training measured worse on the cross-fitted tune pages of the
#: older sets (docs/DECISIONS.md, "Training sets").
EVAL_ONLY_SETS = ("wcxb-dev",)
NEIGHBOURS = 10
FOLDS = 4  # stage-1 out-of-fold predictions for stage 2, folds by site
ROUNDS = 400
CONTEXT_ROUNDS = 300  # stage 2: its first 300 trees held LODO F1 and predict 34 % faster (docs/DECISIONS.md)
SHIPPED_GROUPS = tuple(g for g in FEATURE_GROUPS if g not in ("site", "structure"))  # trained, not shipped (DECISIONS)
ENSEMBLE = 1  # boosters per stage, averaged (3 measured no better on either half, at 3x the prediction time)
PARAMS = dict(objective="binary", learning_rate=0.05, num_leaves=31, min_data_in_leaf=40,
              feature_fraction=0.8, bagging_fraction=0.8, bagging_freq=1, lambda_l2=1.0,
              seed=13, deterministic=True, num_threads=2, verbose=-1)
LEXICON_DROPOUT = 0.25  # share of training sites whose lexical features are silenced (an unseen language)
SNIPPET_PAGE_WEIGHT = 1.0  # a snippet page weighs as much as a full-text page (3.0 measured no better)
#: Data set -> factor on its pages' block weights (``--set-weight NAME=W``; 1.0 for every set by default).
SET_WEIGHTS: dict[str, float] = {}


@dataclass(frozen=True)
class Boosting:
    """One stage's boosting recipe: LightGBM rounds (trees), learning rate and leaves per tree.
    Prediction time is linear in ``rounds`` (docs/DECISIONS.md, "Model size and prediction")."""

    rounds: int = ROUNDS
    learning_rate: float = PARAMS["learning_rate"]
    num_leaves: int = PARAMS["num_leaves"]

    def params(self, seed: int) -> dict:
        """LightGBM parameters of this recipe with ``seed``."""
        return {**PARAMS, "learning_rate": self.learning_rate, "num_leaves": self.num_leaves, "seed": seed}


SHIPPED = Boosting()  # the recipe of the shipped stage 1
SHIPPED_CONTEXT = Boosting(rounds=CONTEXT_ROUNDS)  # the recipe of the shipped stage 2


TRAINING_CONFIG = LEARNED_CONFIG.with_(removal=NoiseRemovalParams())
"""The learned chain as the shipped models were trained on it: §3.3's non-informative tags as printed. The chain
also removes drop-downs (``FORM_CONTROL_TAGS``) since 2026-11-26, at inference only: retraining with them removed
measured worse under LODO (docs/DECISIONS.md, "Form controls"), so ``make models`` still gives the shipped models."""


def page_blocks(html: str, signature):
    """Blocks and features of one page as the learned chain sees them when training (:data:`TRAINING_CONFIG`;
    lexical features 0: :func:`fill_lexical_features` sets them)."""
    page = prepare_blocks(html, signature, TRAINING_CONFIG)
    return page.blocks, block_features(page.blocks, page.context(signature))


@dataclass
class PageRows:
    """One page's training rows: features, labels, weights, and what stage 2 needs (groups, words)."""

    key: str  # dataset:site, for the tune/test split and the stage-1 folds
    page_id: str
    split: str
    feats: np.ndarray  # blocks x FEATURE_NAMES (newsclean.transforms.classifier.features.block_features)
    labels: list
    weights: list
    groups: list
    words: list
    terms: list  # per block: newsclean.transforms.classifier.lexicon.block_terms

    @property
    def dataset(self) -> str:
        """The data set the page comes from (the part of ``key`` before the first colon)."""
        return self.key.split(":", 1)[0]


def group_rows(pages: list[EvalPage]) -> list[PageRows]:
    htmls = [decode_page(p) for p in pages]
    signature = learn_site_evidence([h for h in htmls[:NEIGHBOURS] if h])
    out = []
    for page, html in zip(pages, htmls):
        if not html:
            continue
        try:
            blocks, feats = page_blocks(html, signature)
        except ExtractionError:
            continue
        labelled = text_gold_rows(page, blocks) if page.gold is not None else snippet_rows(page, blocks)
        if not any(lw is not None for lw in labelled):
            continue
        groups, words = context_groups(blocks), [b.num_words for b in blocks]
        out.append(PageRows(f"{page.dataset}:{page.site or page.group}", page.page_id, page.split, feats,
                            [lw[0] if lw else 0 for lw in labelled], [lw[1] if lw else 0.0 for lw in labelled],
                            groups, words, [block_terms(b.text) for b in blocks]))
    return out


def aligned_labels(blocks, gold_text: str) -> list[int]:
    """1 for blocks whose tokens are mostly matched by an in-order alignment of the page's tokens
    with the gold tokens (difflib, no junk heuristic); a short block's words elsewhere in the gold
    do not count, only where the alignment puts them."""
    page_tokens, owner = [], []
    for i, b in enumerate(blocks):
        toks = tokens(b.text)
        page_tokens += toks
        owner += [i] * len(toks)
    matched = [0] * len(blocks)
    sm = difflib.SequenceMatcher(None, page_tokens, tokens(gold_text), autojunk=False)
    for a, _, size in sm.get_matching_blocks():
        for k in range(a, a + size):
            matched[owner[k]] += 1
    return [int(m > 0 and m >= 0.5 * len(tokens(b.text))) for b, m in zip(blocks, matched)]


def text_gold_rows(page: EvalPage, blocks):
    """(label, weight) for every block against full-text gold, weighted by its share of the page's words."""
    labels = aligned_labels(blocks, page.gold)
    total = sum(b.num_words for b in blocks) or 1
    return [(y, b.num_words / total) for y, b in zip(labels, blocks)]


def _touches(block_text: str, snippet: str) -> bool:
    snippet = " ".join(snippet.split())
    return bool(snippet) and (snippet in block_text or (len(block_text) >= 20 and block_text in snippet))


def snippet_rows(page: EvalPage, blocks):
    """(label, weight) only for blocks holding a must-contain (1) or must-not-contain (0) snippet;
    weight 0 elsewhere (unlabelled). The page's weight is spread over its labelled blocks."""
    labels = []
    for b in blocks:
        text = unicodedata.normalize("NFC", b.text)  # as the extraction is (newsclean.transforms.chain.blocks_text)
        if any(_touches(text, s) for s in page.must_not_contain):
            labels.append(0)
        elif any(_touches(text, s) for s in page.must_contain):
            labels.append(1)
        else:
            labels.append(None)
    n = sum(lab is not None for lab in labels) or 1
    return [None if lab is None else (lab, SNIPPET_PAGE_WEIGHT / n) for lab in labels]


def collect(jobs: int) -> list[PageRows]:
    groups: dict[tuple[str, str], list[EvalPage]] = defaultdict(list)
    for name in TRAIN_SETS + EVAL_ONLY_SETS:
        for page in load(name):
            if page.page_type == "article":  # wcxb-dev's other page types: an article extractor's negatives, not its blocks
                groups[(name, page.group)].append(page)
    with Pool(jobs) as pool:
        pages = [r for rows in pool.imap_unordered(group_rows, groups.values(), chunksize=2) for r in rows]
    return sorted(pages, key=lambda p: (p.key, p.page_id))  # same order every run: same model


def collect_cached(jobs: int, cache: Path | None) -> list[PageRows]:
    """:func:`collect`, or its pages read back from ``cache`` (a pickle this function wrote) when that file
    exists. The cache holds every feature column, so ``--feature-groups``/``--drop-groups`` ablations
    can share it; delete it after changing the features' code."""
    if cache is not None and cache.exists():
        with open(cache, "rb") as fh:
            pages = pickle.load(fh)
        width = pages[0].feats.shape[1] if pages else len(FEATURE_NAMES)
        if width != len(FEATURE_NAMES):  # groups appended since: their columns are missing
            print(f"{cache}: collected with the first {width} of the code's {len(FEATURE_NAMES)} feature "
                  "columns; only those can be trained on (delete the cache to collect again)", file=sys.stderr)
        return pages
    pages = collect(jobs)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        with open(cache, "wb") as fh:
            pickle.dump(pages, fh, protocol=pickle.HIGHEST_PROTOCOL)
    return pages


def _lexicon(pages: list[PageRows]) -> dict[str, float]:
    """Lexicon (transforms/classifier/lexicon.py) from the labelled blocks (weight > 0) of ``pages``."""
    rows = [(t, lab, p.key) for p in pages for t, lab, w in zip(p.terms, p.labels, p.weights) if w > 0]
    return learn_lexicon([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])


_LEXICAL_COLUMNS = feature_columns(LEXICON_FEATURE_NAMES)


def _set_lexical(page: PageRows, lexicon: dict[str, float]) -> None:
    """Fill the lexicon features' columns (by name) of ``page``'s rows from ``lexicon``."""
    for row, t in zip(page.feats, page.terms):
        row[_LEXICAL_COLUMNS] = lexicon_features(t, lexicon)


def _lexicon_dropped(key: str) -> bool:
    """True for the :data:`LEXICON_DROPOUT` share of sites trained as if in a language the lexicon
    never saw (all lexical features 0): the model learns to decide from the other features there."""
    return int(hashlib.sha1(f"lexicon-dropout:{key}".encode()).hexdigest(), 16) % 1000 < LEXICON_DROPOUT * 1000


def fill_lexical_features(train_pages: list[PageRows], other_pages: list[PageRows]) -> dict[str, float]:
    """Set the lexical features: out of fold (by site, :func:`_fold`) on ``train_pages``, so that no
    block's own words score it (silenced on the :func:`_lexicon_dropped` sites), and from the lexicon
    of all ``train_pages`` on ``other_pages``.
    Returns that lexicon (the one shipped)."""
    for k in range(FOLDS):
        lexicon = _lexicon([p for p in train_pages if _fold(p.key) != k])
        for p in train_pages:
            if _fold(p.key) == k:
                _set_lexical(p, {} if _lexicon_dropped(p.key) else lexicon)
    lexicon = _lexicon(train_pages)
    for p in other_pages:
        _set_lexical(p, lexicon)
    return lexicon


def _matrix(pages: list[PageRows], extra=None):
    """Rows of every page's blocks (stage 1 features, then ``extra[i]``'s columns for page i), labels, weights."""
    X = np.vstack([np.hstack([p.feats, np.asarray(extra[i], dtype=float).reshape(len(p.feats), -1)]) if extra else p.feats
                   for i, p in enumerate(pages)])
    y = [lab for p in pages for lab in p.labels]
    w = [wt * SET_WEIGHTS.get(p.dataset, 1.0) for p in pages for wt in p.weights]
    return X, np.array(y), np.array(w)


def _fit(pages, names, extra=None, seeds=(PARAMS["seed"],), recipe: Boosting = SHIPPED) -> list:
    """One LightGBM booster per seed (a seed ensemble: newsclean.transforms.classifier.model.ModelEnsemble)."""
    import lightgbm as lgb

    X, y, w = _matrix(pages, extra)
    return [lgb.train(recipe.params(seed), lgb.Dataset(X, y, weight=w, feature_name=list(names)),
                      num_boost_round=recipe.rounds) for seed in seeds]


def _predict(boosters, pages, extra=None) -> list[list[float]]:
    """Per page, the members' mean probability per block."""
    X, _, _ = _matrix(pages, extra)
    flat = list(np.mean([b.predict(X) for b in boosters], axis=0))
    out, i = [], 0
    for p in pages:
        out.append(flat[i:i + len(p.feats)])
        i += len(p.feats)
    return out


def _context(pages, probs):
    return [context_features(pr, p.groups, p.words) for p, pr in zip(pages, probs)]


def _fold(key: str) -> int:
    return int(hashlib.sha1(key.encode()).hexdigest(), 16) % FOLDS


def out_of_fold(tune: list[PageRows], seeds, names=FEATURE_NAMES, recipe: Boosting = SHIPPED) -> list[list[float]]:
    """Stage-1 probabilities for every tune page from a model that never saw its site
    (``tune``'s rows hold the columns ``names``; stage 1 fitted with ``recipe``)."""
    probs: list[list[float] | None] = [None] * len(tune)
    for k in range(FOLDS):
        train = [p for p in tune if _fold(p.key) != k]
        held = [i for i, p in enumerate(tune) if _fold(p.key) == k]
        boosters = _fit(train, names, seeds=seeds, recipe=recipe)
        for i, pr in zip(held, _predict(boosters, [tune[i] for i in held])):
            probs[i] = pr
    return probs


def accuracy(probs, pages) -> float:
    hits = total = 0.0
    for pr, p in zip(probs, pages):
        for q, lab, w in zip(pr, p.labels, p.weights):
            hits += w * ((q >= 0.5) == bool(lab))
            total += w
    return hits / total if total else 0.0


def save(boosters, path: Path) -> None:
    """Write the LightGBM text models joined by ENSEMBLE_SEPARATOR, gzipped when ``path`` ends in
    ``.gz`` (no name, fixed mtime: same bytes each run)."""
    text = ENSEMBLE_SEPARATOR.join(b.model_to_string() for b in boosters)
    if path.suffix == ".gz":
        with open(path, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as fh:
            fh.write(text.encode("utf-8"))
    else:
        path.write_text(text, encoding="utf-8")


def select_columns(pages: list[PageRows], names) -> list[PageRows]:
    """``pages`` with their feature rows cut to the columns ``names`` (in that order)."""
    cols = feature_columns(names)
    width = min((p.feats.shape[1] for p in pages), default=len(FEATURE_NAMES))
    missing = [n for n, c in zip(names, cols) if c >= width]
    if missing:
        raise SystemExit(f"the collected pages lack the columns of {', '.join(missing)} "
                         "(a --features-cache older than those features: delete it to collect again)")
    return [replace(p, feats=p.feats[:, cols]) for p in pages]


def train(pages: list[PageRows], out: Path, context_out: Path, lexicon_out: Path, split: str = "tune",
          seeds=(PARAMS["seed"],), holdout: str | None = None, names=FEATURE_NAMES, stage1_only: bool = False,
          recipes: tuple[Boosting, Boosting] = (SHIPPED, SHIPPED_CONTEXT)) -> None:
    """Fit the lexicon and both stages on the pages of ``split``, write them, print the accuracy on the other split.

    ``holdout``: a data set left out (leave-one-data-set-out): the model is fitted on the ``split`` pages
    of the other sets only and the accuracy printed is on the held-out set's pages of ``split``.
    ``names``: the block features to train on (a feature-group ablation; the model files record them).
    ``stage1_only``: fit and write stage 1 only (a sixth of the work: no out-of-fold fits; for quick
    ablations, scored with ``LearnedParams(use_context=False)``).
    ``recipes``: the boosting recipes of stage 1 and stage 2 (a model-size variant; default the shipped one).
    """
    scored = "tune" if split == "all" else split  # the held-out set's pages the accuracy is printed on
    if holdout is None:
        tune = [p for p in pages if in_split(p, split) and p.dataset in TRAIN_SETS]
        test = [p for p in pages if not in_split(p, split) and p.dataset in TRAIN_SETS]
    else:
        tune = [p for p in pages if in_split(p, split) and p.dataset != holdout and p.dataset in TRAIN_SETS]
        test = [p for p in pages if p.split == scored and p.dataset == holdout]
    lexicon = fill_lexical_features(tune, test)
    tune, test = select_columns(tune, names), select_columns(test, names)
    stage1 = _fit(tune, names, seeds=seeds, recipe=recipes[0])
    out.parent.mkdir(parents=True, exist_ok=True)
    save(stage1, out)
    save_lexicon(lexicon, lexicon_out)
    if stage1_only:
        if test:
            print(f"held-out {holdout or 'split'}: stage 1 word-weighted accuracy {accuracy(_predict(stage1, test), test):.3f}")
        return
    stage2 = _fit(tune, (*names, *CONTEXT_FEATURE_NAMES), _context(tune, out_of_fold(tune, seeds, names, recipes[0])),
                  seeds=seeds, recipe=recipes[1])
    save(stage2, context_out)
    if test:
        p1 = _predict(stage1, test)
        p2 = _predict(stage2, test, _context(test, p1))
        print(f"held-out {'split' if holdout is None else holdout + ' (' + scored + ' pages)'}: {sum(len(p.feats) for p in test)} blocks, word-weighted accuracy "
              f"stage 1 {accuracy(p1, test):.3f}, stage 2 {accuracy(p2, test):.3f}")


LODO_DIR = REPO / "out" / "lodo"


def in_split(page: PageRows, split: str) -> bool:
    """Whether ``page`` is trained on for ``--train-split split`` (``all``: every page of both halves)."""
    return split == "all" or page.split == split


def feature_names(args: argparse.Namespace) -> tuple[str, ...]:
    """The features of ``--feature-groups`` less ``--drop-groups`` and ``--drop-features``. Raises KeyError for an
    unknown group or feature."""
    drop = [g for g in args.drop_groups.split(",") if g]
    group_feature_names(drop)  # unknown names fail
    drop_features = [n for n in args.drop_features.split(",") if n]
    feature_columns(drop_features)  # unknown names fail
    names = group_feature_names([g for g in args.feature_groups.split(",") if g and g not in drop])
    return tuple(n for n in names if n not in drop_features)


def recipes(args: argparse.Namespace) -> tuple[Boosting, Boosting]:
    """Stage 1's and stage 2's boosting recipes from ``--rounds``/``--learning-rate``/``--num-leaves`` and their
    ``--context-*`` counterparts (each unset one: stage 1's value, or the shipped one)."""
    stage1 = Boosting(args.rounds or ROUNDS, args.learning_rate or PARAMS["learning_rate"],
                      args.num_leaves or PARAMS["num_leaves"])
    stage2 = Boosting(args.context_rounds or CONTEXT_ROUNDS, args.context_learning_rate or stage1.learning_rate,
                      args.context_num_leaves or stage1.num_leaves)
    return stage1, stage2


def train_lodo(args: argparse.Namespace) -> int:
    """Leave-one-data-set-out models: for each held-out set (``args.holdout_set``, or every set for
    ``all``), the three model files trained without it, in ``args.lodo_dir/<set>/``."""
    t0 = time.time()
    pages = collect_cached(args.jobs, args.features_cache)
    print(f"{len(pages)} pages, {sum(len(p.feats) for p in pages)} blocks in {time.time() - t0:.0f} s", file=sys.stderr)
    seeds = tuple(range(args.seed, args.seed + args.ensemble))
    for name in TRAIN_SETS + EVAL_ONLY_SETS if args.holdout_set == "all" else (args.holdout_set,):
        folder = args.lodo_dir / name
        copies = [PageRows(**{**vars(p), "feats": p.feats.copy()}) for p in pages]  # lexical columns are rewritten
        train(copies, folder / DEFAULT_MODEL.name, folder / DEFAULT_CONTEXT_MODEL.name, folder / DEFAULT_LEXICON.name,
              args.train_split, seeds, holdout=name, names=feature_names(args), stage1_only=args.stage1_only,
              recipes=recipes(args))
        print(f"{name} held out: models in {folder} after {time.time() - t0:.0f} s", flush=True)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help=f"stage-1 model file (default {DEFAULT_MODEL.name} in the models folder)")
    ap.add_argument("--context-out", type=Path, help=f"stage-2 model file (default {DEFAULT_CONTEXT_MODEL.name})")
    ap.add_argument("--lexicon-out", type=Path, help=f"boilerplate lexicon file (default {DEFAULT_LEXICON.name})")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=PARAMS["seed"], help="first LightGBM seed (bagging and feature sampling)")
    ap.add_argument("--ensemble", type=int, default=ENSEMBLE,
                    help=f"members per stage, seeds SEED, SEED+1, ... (default {ENSEMBLE})")
    ap.add_argument("--train-split", choices=("tune", "test", "all"), default="tune",
                    help="split to train on (test: the swapped direction; its default files go to "
                         f"{CROSSFIT_MODELS.relative_to(REPO)}/, for newsclean eval's cross-fitted row only; "
                         "all: both halves; with --holdout-set the held-out set's tune pages are still the ones "
                         "its accuracy is printed on)")
    ap.add_argument("--holdout-set", metavar="NAME", choices=(*TRAIN_SETS, *EVAL_ONLY_SETS, "all"),
                    help="leave-one-data-set-out: train on the --train-split pages of the other sets only and "
                         "write to LODO_DIR/NAME/ (all: one model per set, features collected once); "
                         "score with newsclean eval --lodo LODO_DIR")
    ap.add_argument("--lodo-dir", type=Path, default=LODO_DIR,
                    help=f"folder of the leave-one-data-set-out models (default {LODO_DIR.relative_to(REPO)})")
    ap.add_argument("--feature-groups", default=",".join(SHIPPED_GROUPS),
                    help="comma-separated feature groups to train on (default: the shipped ones, every group of "
                         "newsclean.transforms.vocab.FEATURE_GROUPS but site and structure)")
    ap.add_argument("--features-cache", type=Path, default=None, metavar="FILE",
                    help="read the collected pages from FILE when it exists, else collect and write them there")
    ap.add_argument("--drop-groups", default="", help="comma-separated feature groups left out (an ablation)")
    ap.add_argument("--set-weight", action="append", default=[], metavar="NAME=W",
                    help="multiply the block weights of data set NAME's pages by W (repeatable; default 1 for all)")
    ap.add_argument("--stage1-only", action="store_true",
                    help="train and write stage 1 only (quick ablations; score with use_context=False)")
    ap.add_argument("--drop-features", default="", help="comma-separated single features left out (an ablation "
                    "of one piece of evidence inside a group, e.g. site_text_support)")
    for prefix, stage in (("", "stage 1"), ("context-", "stage 2")):
        default = "stage 1's" if prefix else None
        ap.add_argument(f"--{prefix}rounds", type=int,
                        help=f"{stage} boosting rounds (default {CONTEXT_ROUNDS if prefix else ROUNDS})")
        ap.add_argument(f"--{prefix}learning-rate", type=float,
                        help=f"{stage} learning rate (default {default or PARAMS['learning_rate']})")
        ap.add_argument(f"--{prefix}num-leaves", type=int,
                        help=f"{stage} leaves per tree (default {default or PARAMS['num_leaves']})")
    args = ap.parse_args(argv)
    SET_WEIGHTS.update({name: float(w) for name, w in (item.split("=", 1) for item in args.set_weight)})
    try:
        feature_names(args)
    except KeyError as err:
        ap.error(str(err))
    if args.holdout_set:
        return train_lodo(args)
    folder = CROSSFIT_MODELS if args.train_split == "test" else DEFAULT_MODEL.parent
    args.out = args.out or folder / DEFAULT_MODEL.name
    args.context_out = args.context_out or folder / DEFAULT_CONTEXT_MODEL.name
    args.lexicon_out = args.lexicon_out or folder / DEFAULT_LEXICON.name
    t0 = time.time()
    pages = collect_cached(args.jobs, args.features_cache)
    print(f"{len(pages)} pages, {sum(len(p.feats) for p in pages)} blocks from {len(TRAIN_SETS)} data sets "
          f"in {time.time() - t0:.0f} s", file=sys.stderr)
    train(pages, args.out, args.context_out, args.lexicon_out, args.train_split,
          tuple(range(args.seed, args.seed + args.ensemble)), names=feature_names(args), recipes=recipes(args))
    print(f"models written to {args.out}, {args.context_out} and {args.lexicon_out} in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
