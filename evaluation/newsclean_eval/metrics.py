"""Scores of ``newsclean eval``: bag-of-words per page, the trafilatura snippet metric, bootstrap intervals.

Bag of words (per page, macro-averaged over pages): :func:`newsclean.demo.scoring.tokens` and
:func:`newsclean.demo.scoring.prf` (lowercased Unicode ``\\w+`` tokens after NFC, multiset overlap;
the empty cases are defined there). This module adds what only the evaluation run needs.

Snippet metric (trafilatura-eval, as its benchmark scores it: ``tests/eval_common.py`` of
adbar/trafilatura): per page, every must-contain snippet found in the extraction is a true positive
(TP), one not found a false negative (FN); every must-not-contain snippet found is a false positive
(FP), one not found a true negative (TN). Matching is substring matching after collapsing whitespace
runs to one space on both sides. Counts are summed over all pages (micro), then
``P = TP/(TP+FP)``, ``R = TP/(TP+FN)``, ``F1 = 2TP/(2TP+FP+FN)``, ``accuracy = (TP+TN)/all``
(each 0 when its denominator is 0). An empty or failed extraction finds nothing.

Bootstrap: percentile intervals over page resamples (pages drawn with replacement, as many as there
are pages, ``resamples`` times, from ``numpy.random.default_rng(seed)``). The same resample indices
are used for every system of one data set and split (:func:`resample_indices`), so differences
between systems get a paired interval (:func:`macro_diff_interval`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

_SPACE = re.compile(r"\s+")

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0
DEFAULT_LEVEL = 0.95


class SnippetCounts(NamedTuple):
    """Confusion counts of one page (or a sum of pages) under the snippet metric; all >= 0."""

    tp: int
    fn: int
    fp: int
    tn: int


@dataclass(frozen=True)
class SnippetScores:
    """Micro scores from summed :class:`SnippetCounts`: precision, recall, F1 and accuracy in [0, 1]."""

    precision: float
    recall: float
    f1: float
    accuracy: float


def normalize_space(text: str) -> str:
    """``text`` with every whitespace run collapsed to one space, stripped (snippet matching)."""
    return _SPACE.sub(" ", text).strip()


def snippet_counts(text: str | None, must_contain: Sequence[str], must_not_contain: Sequence[str]) -> SnippetCounts:
    """Counts of one page: ``text`` is the extraction (None or "" = nothing extracted)."""
    hay = normalize_space(text or "")
    tp = sum(1 for s in must_contain if hay and normalize_space(s) in hay)
    fp = sum(1 for s in must_not_contain if hay and normalize_space(s) in hay)
    return SnippetCounts(tp, len(must_contain) - tp, fp, len(must_not_contain) - fp)


def snippet_scores(counts: Iterable[SnippetCounts | Sequence[int]]) -> SnippetScores:
    """Micro scores of the summed per-page ``counts`` (``(tp, fn, fp, tn)`` each); zeros for no counts."""
    tp = fn = fp = tn = 0
    for c in counts:
        tp, fn, fp, tn = tp + c[0], fn + c[1], fp + c[2], tn + c[3]
    return _scores(np.array([tp]), np.array([fn]), np.array([fp]), np.array([tn]))[0]


def _scores(tp: np.ndarray, fn: np.ndarray, fp: np.ndarray, tn: np.ndarray) -> list[SnippetScores]:
    """Vectorised micro scores: arrays of shape (k,) give k :class:`SnippetScores`."""
    def ratio(num, den):
        """num / den elementwise, 0 where den is 0."""
        return np.divide(num, den, out=np.zeros(len(num), dtype=float), where=den > 0)

    p, r = ratio(tp, tp + fp), ratio(tp, tp + fn)
    f1, acc = ratio(2 * tp, 2 * tp + fp + fn), ratio(tp + tn, tp + fn + fp + tn)
    return [SnippetScores(float(a), float(b), float(c), float(d)) for a, b, c, d in zip(p, r, f1, acc)]


def resample_indices(n: int, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> np.ndarray:
    """Bootstrap page indices: int array of shape ``(resamples, n)``, values in ``[0, n)``.

    Deterministic for a seed. Raises ValueError when ``n`` < 1 or ``resamples`` < 1.
    """
    if n < 1 or resamples < 1:
        raise ValueError(f"need n >= 1 and resamples >= 1, got n={n}, resamples={resamples}")
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def _percentiles(stats: np.ndarray, level: float) -> tuple[float, float]:
    tail = (1.0 - level) / 2 * 100
    lo, hi = np.percentile(stats, [tail, 100 - tail])
    return float(lo), float(hi)


def macro_interval(values: Sequence[float], indices: np.ndarray, level: float = DEFAULT_LEVEL) -> tuple[float, float]:
    """Percentile interval of the mean of per-page ``values`` (shape (n,)) over ``indices`` (shape (R, n))."""
    stats = np.asarray(values, dtype=float)[indices].mean(axis=1)
    return _percentiles(stats, level)


def macro_diff_interval(a: Sequence[float], b: Sequence[float], indices: np.ndarray,
                        level: float = DEFAULT_LEVEL) -> tuple[float, float]:
    """Paired percentile interval of ``mean(a) - mean(b)``: ``a`` and ``b`` score the same n pages, in order."""
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    return macro_interval(diff, indices, level)


def snippet_interval(counts: Sequence[Sequence[int]], indices: np.ndarray, level: float = DEFAULT_LEVEL,
                     metric: str = "f1") -> tuple[float, float]:
    """Percentile interval of a micro snippet score (``metric``: precision, recall, f1 or accuracy).

    ``counts``: per-page ``(tp, fn, fp, tn)``, shape (n, 4); ``indices`` from :func:`resample_indices`.
    """
    arr = np.asarray(counts, dtype=np.int64).reshape(-1, 4)[indices].sum(axis=1)  # (R, 4)
    scores = _scores(arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3])
    return _percentiles(np.array([getattr(s, metric) for s in scores]), level)
