"""Aggregate per-page results into scores with bootstrap intervals, and write the Markdown and CSV reports.

Per data set, split (``all``, ``tune``, ``test``) and system: the macro mean of per-page P, R and F1
(text gold) or the micro snippet scores (snippet gold), a bootstrap 95 % interval of F1
(:mod:`newsclean_eval.metrics`), pages per second and counts of rejects and errors.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from newsclean_eval.datasets import ERA_MEMBERS
from newsclean_eval.metrics import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    macro_diff_interval,
    macro_interval,
    resample_indices,
    snippet_interval,
    snippet_scores,
)
from newsclean_eval.runner import PageResult
from newsclean_eval.systems import System

SPLITS = ("all", "tune", "test")
#: Data sets whose targets compare the default chain with the best peer (the others: with trafilatura).
PER_SITE_TARGET = "above the best peer"
SINGLE_PAGE_TARGET = "at least trafilatura"


@dataclass(frozen=True)
class Score:
    """Scores of one system on one data set and split.

    pages: pages scored; precision/recall/f1 in [0, 1]; ci: (low, high) bootstrap interval of f1;
    accuracy: snippet accuracy (None for text gold); snippets: snippets scored (0 for text gold);
    pages_per_s: pages / summed extraction seconds (one process); rejects / errors: pages with a reject
    reason / a crash.
    """

    pages: int
    precision: float
    recall: float
    f1: float
    ci: tuple[float, float]
    accuracy: float | None
    snippets: int
    pages_per_s: float
    rejects: int
    errors: int


Key = tuple[str, str, str]  # (dataset, split, system id)


def _page_order(results: Iterable[PageResult]) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """Per (dataset, split): the sorted (group, page id) list every system is aligned on."""
    pages: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    for r in results:
        for split in ("all", r.split):
            pages[(r.dataset, split)].add((r.group, r.page_id))
    return {k: sorted(v) for k, v in pages.items()}


def _by_key(results: Iterable[PageResult]) -> dict[Key, dict[tuple[str, str], PageResult]]:
    out: dict[Key, dict[tuple[str, str], PageResult]] = defaultdict(dict)
    for r in results:
        for split in ("all", r.split):
            out[(r.dataset, split, r.system)][(r.group, r.page_id)] = r
    return out


@dataclass
class Aggregates:
    """Scores for every (dataset, split, system) plus what paired comparisons need.

    scores: :class:`Score` per key; f1s: per-page F1 vectors aligned on the split's page order (text gold);
    counts: per-page snippet counts (snippet gold); indices: bootstrap indices per (dataset, split).
    """

    scores: dict[Key, Score]
    f1s: dict[Key, np.ndarray]
    counts: dict[Key, np.ndarray]
    indices: dict[tuple[str, str], np.ndarray]

    def get(self, dataset: str, split: str, system: str) -> Score | None:
        """The score, or None when that system did not run there (or the split has no page)."""
        return self.scores.get((dataset, split, system))

    def diff_interval(self, dataset: str, split: str, a: str, b: str) -> tuple[float, float] | None:
        """Paired bootstrap interval of F1(a) - F1(b) (text gold: macro; snippet gold: micro F1)."""
        ka, kb, idx = (dataset, split, a), (dataset, split, b), self.indices.get((dataset, split))
        if idx is None:
            return None
        if ka in self.f1s and kb in self.f1s:
            return macro_diff_interval(self.f1s[ka], self.f1s[kb], idx)
        if ka in self.counts and kb in self.counts:
            fa, fb = _snippet_f1_resamples(self.counts[ka], idx), _snippet_f1_resamples(self.counts[kb], idx)
            lo, hi = np.percentile(fa - fb, [2.5, 97.5])
            return float(lo), float(hi)
        return None


def _snippet_f1_resamples(counts: np.ndarray, idx: np.ndarray) -> np.ndarray:
    s = counts[idx].sum(axis=1)
    den = 2 * s[:, 0] + s[:, 1] + s[:, 2]
    return np.divide(2 * s[:, 0], den, out=np.zeros(len(den)), where=den > 0)


def aggregate(results: Sequence[PageResult], resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> Aggregates:
    """Scores of every (dataset, split, system) of ``results``.

    Bootstrap indices are drawn once per (dataset, split) from ``seed`` and shared by its systems.
    A system missing some page of a split (it should not happen) is scored on the pages it has.
    """
    order, keyed = _page_order(results), _by_key(results)
    indices = {k: resample_indices(len(v), resamples, seed) for k, v in order.items()}
    agg = Aggregates({}, {}, {}, indices)
    for key, rows in keyed.items():
        pages = order[key[:2]]
        aligned = [rows[p] for p in pages if p in rows]
        idx = indices[key[:2]] if len(aligned) == len(pages) else resample_indices(len(aligned), resamples, seed)
        agg.scores[key] = _score(key, aligned, idx, agg)
    return agg


def _score(key: Key, rows: list[PageResult], idx: np.ndarray, agg: Aggregates) -> Score:
    seconds = sum(r.seconds for r in rows)
    rejects = sum(1 for r in rows if r.error and not r.error.startswith("crash:"))
    errors = sum(1 for r in rows if r.error.startswith("crash:"))
    speed = len(rows) / seconds if seconds > 0 else float("inf")
    if rows and rows[0].snippets is not None:
        counts = np.array([r.snippets for r in rows], dtype=np.int64)
        agg.counts[key] = counts
        s = snippet_scores(counts)
        return Score(len(rows), s.precision, s.recall, s.f1, snippet_interval(counts, idx), s.accuracy,
                     int(counts.sum()), speed, rejects, errors)
    f1 = np.array([r.f1 for r in rows])
    agg.f1s[key] = f1
    return Score(len(rows), float(np.mean([r.precision for r in rows])), float(np.mean([r.recall for r in rows])),
                 float(f1.mean()), macro_interval(f1, idx), None, 0, speed, rejects, errors)


# ---------------------------------------------------------------------------------------------- CSV

CSV_COLUMNS = ("dataset", "group", "page_id", "split", "system", "precision", "recall", "f1", "tp", "fn", "fp", "tn",
               "pred_tokens", "gold_tokens", "seconds", "error", "era")


def write_csv(results: Iterable[PageResult], path: Path) -> None:
    """One row per (page, system) with :data:`CSV_COLUMNS`, sorted by dataset, system, group, page.

    Snippet counts are empty for text gold. Creates the parent folder.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(CSV_COLUMNS)
        for r in sorted(results, key=lambda r: (r.dataset, r.system, r.group, r.page_id)):
            snips = list(r.snippets) if r.snippets is not None else ["", "", "", ""]
            w.writerow([r.dataset, r.group, r.page_id, r.split, r.system, f"{r.precision:.4f}", f"{r.recall:.4f}",
                        f"{r.f1:.4f}", *snips, r.pred_tokens, r.gold_tokens, f"{r.seconds:.5f}", r.error, r.era])


# ----------------------------------------------------------------------------------------- Markdown


def _f(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def _speed(x: float) -> str:
    return "–" if x == float("inf") else (f"{x:.0f}" if x >= 10 else f"{x:.1f}")


def _row_label(system: System) -> str:
    if system.kind == "ablation":
        return system.label
    return f"**{system.label}**" if system.id == "default" else system.label


def dataset_table(agg: Aggregates, dataset: str, systems: Sequence[System], split: str) -> str:
    """Markdown table of one data set: a row per system that ran on it.

    Columns: P, R, F1 [95 % CI] on ``split`` (plus accuracy for snippet gold), F1 on tune and test when
    ``split`` is ``all``, pages/s, rejects and errors.
    """
    first = next((agg.get(dataset, split, s.id) for s in systems if agg.get(dataset, split, s.id)), None)
    if first is None:
        return "_no page in this split_\n"
    snippet = first.accuracy is not None
    both = split == "all"
    head = ["system", "P", "R", "F1 [95 % CI]"] + (["accuracy"] if snippet else []) + \
           (["F1 tune", "F1 test"] if both else []) + ["pages/s", "rejects", "errors"]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for system in systems:
        s = agg.get(dataset, split, system.id)
        if s is None:
            continue
        cells = [_row_label(system), _f(s.precision), _f(s.recall), f"{s.f1:.3f} [{s.ci[0]:.3f}, {s.ci[1]:.3f}]"]
        if snippet:
            cells.append(_f(s.accuracy))
        if both:
            cells += [_f(getattr(agg.get(dataset, sp, system.id), "f1", None)) for sp in ("tune", "test")]
        cells += [_speed(s.pages_per_s), str(s.rejects), str(s.errors)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def summary_table(agg: Aggregates, datasets: Sequence[str], systems: Sequence[System], split: str) -> str:
    """Markdown table of F1 on ``split``: rows = systems, columns = data sets; the best of each column in bold.

    "–" where a system did not run (neighbour-only ablations on single-page sets). Snippet F1 for
    trafilatura-eval.
    """
    best = {d: max((agg.get(d, split, s.id).f1 for s in systems if agg.get(d, split, s.id)), default=None)
            for d in datasets}
    lines = ["| system | " + " | ".join(datasets) + " |", "|---" + "|---:" * len(datasets) + "|"]
    for system in systems:
        cells = []
        for d in datasets:
            s = agg.get(d, split, system.id)
            cells.append("–" if s is None else (f"**{s.f1:.3f}**" if s.f1 == best[d] else f"{s.f1:.3f}"))
        if any(c != "–" for c in cells):
            lines.append(f"| {_row_label(system)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class TargetCheck:
    """The accuracy target on one data set and split: ``system``'s F1 (the default chain, or its
    cross-fitted row) against the reference peer's."""

    dataset: str
    split: str
    default_f1: float
    reference: str
    reference_f1: float
    diff_ci: tuple[float, float] | None
    rule: str
    met: bool
    system: str = "default"


def target_checks(agg: Aggregates, datasets: Sequence[str], peers: Sequence[System], split: str,
                  neighbour_sets: Sequence[str], system: str = "default") -> list[TargetCheck]:
    """Accuracy targets per data set: on the per-site sets (``neighbour_sets``) the F1 of ``system``
    (the default chain) must be above the best peer's, elsewhere at least trafilatura's. Data sets
    where ``system`` or the reference peer did not run are left out."""
    out = []
    for d in datasets:
        dflt = agg.get(d, split, system)
        if dflt is None:
            continue
        if d in neighbour_sets:
            ran = [(agg.get(d, split, p.id).f1, p.id) for p in peers if agg.get(d, split, p.id)]
            if not ran:
                continue
            ref_f1, ref = max(ran)
            met, rule = dflt.f1 > ref_f1, PER_SITE_TARGET
        else:
            ref_score = agg.get(d, split, "trafilatura")
            if ref_score is None:
                continue
            ref, ref_f1 = "trafilatura", ref_score.f1
            met, rule = dflt.f1 >= ref_f1, SINGLE_PAGE_TARGET
        out.append(TargetCheck(d, split, dflt.f1, ref, ref_f1, agg.diff_interval(d, split, system, ref), rule, met,
                               system))
    return out


def targets_table(checks: Sequence[TargetCheck]) -> str:
    """Markdown table of :func:`target_checks` (one row per data set and split)."""
    lines = ["| data set | split | newsclean F1 | reference | reference F1 | Δ [95 % CI, paired] | target | met |",
             "|---|---|---:|---|---:|---:|---|---|"]
    for c in checks:
        ci = f" [{c.diff_ci[0]:+.3f}, {c.diff_ci[1]:+.3f}]" if c.diff_ci else ""
        split = c.split if c.system == "default" else f"{c.split}, {c.system}"
        lines.append(f"| {c.dataset} | {split} | {c.default_f1:.3f} | {c.reference} | {c.reference_f1:.3f} | "
                     f"{c.default_f1 - c.reference_f1:+.3f}{ci} | {c.rule} | {'yes' if c.met else '**no**'} |")
    return "\n".join(lines) + "\n"


LODO_SYSTEM = "lodo"
"""System id of the leave-one-data-set-out row (``newsclean eval --lodo DIR``)."""
LODO_BOILERNET_SYSTEM = "lodo-boilernet"
"""System id of BoilerNet's leave-one-data-set-out row (``newsclean eval --lodo-boilernet DIR``)."""


def lodo_table(agg: Aggregates, datasets: Sequence[str], split: str, reference: str = "trafilatura",
               system: str = LODO_SYSTEM, shipped: str = "default") -> str:
    """Markdown table of the leave-one-data-set-out protocol (the selection protocol): per data set, the F1 of the
    chain whose classifier never saw that set (:data:`LODO_SYSTEM`) beside ``reference``'s and the
    shipped default's, Δ = LODO − reference with its paired bootstrap interval, and whether LODO is at
    or above the reference. Precision and recall are given for the LODO row; text gold: macro over
    pages; snippet gold: micro over snippets. Data sets where the LODO row did not run are left out.
    ``system``/``shipped``: the LODO row and the shipped row beside it (BoilerNet's: ``lodo-boilernet``/``boilernet``)."""
    lines = [f"| data set | pages | LODO F1 (P / R) | {reference} F1 | Δ [95 % CI, paired] | at or above | "
             f"shipped {shipped} F1 |", "|---|---:|---:|---:|---:|---|---:|"]
    for d in datasets:
        lodo, ref, shipped_row = (agg.get(d, split, s) for s in (system, reference, shipped))
        if lodo is None:
            continue
        ci = agg.diff_interval(d, split, system, reference) if ref else None
        delta = f"{lodo.f1 - ref.f1:+.3f}" + (f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "") if ref else "–"
        met = ("yes" if lodo.f1 >= ref.f1 else "**no**") if ref else "–"
        lines.append(f"| {d} | {lodo.pages} | {lodo.f1:.3f} ({lodo.precision:.3f} / {lodo.recall:.3f}) | "
                     f"{_f(ref.f1 if ref else None)} | {delta} | {met} | {_f(shipped_row.f1 if shipped_row else None)} |")
    return "\n".join(lines) + "\n"


def era_scores(results: Iterable[PageResult], dataset: str, split: str, system: str, era: str) -> tuple[float, int] | None:
    """``(F1, pages)`` of ``system`` on the pages of ``dataset`` in ``split`` (``all``, ``tune``, ``test``) whose
    era (:func:`newsclean_eval.datasets.page_era`) is ``era``: macro F1 for text gold, micro snippet F1 for snippet
    gold. None when no such page was scored. An era covers the finer eras of
    :data:`~newsclean_eval.datasets.ERA_MEMBERS` (``2015+`` holds the ``2020+`` pages)."""
    members = ERA_MEMBERS.get(era, {era})
    rows = [r for r in results if r.dataset == dataset and r.system == system and r.era in members
            and split in ("all", r.split)]
    if not rows:
        return None
    if rows[0].snippets is not None:
        return snippet_scores(r.snippets for r in rows).f1, len(rows)
    return float(np.mean([r.f1 for r in rows])), len(rows)


def lodo_era_table(results: Sequence[PageResult], datasets: Sequence[str], split: str, eras: Sequence[str],
                   reference: str = "trafilatura", system: str = LODO_SYSTEM) -> str:
    """Markdown table of the leave-one-data-set-out row per data set and era (:func:`era_scores`): pages, LODO F1,
    ``reference``'s F1 and Δ = LODO − reference (point estimates; eras with few pages are noisy)."""
    lines = [f"| data set | era | pages | LODO F1 | {reference} F1 | Δ |", "|---|---|---:|---:|---:|---:|"]
    for d in datasets:
        for era in eras:
            lodo, ref = era_scores(results, d, split, system, era), era_scores(results, d, split, reference, era)
            if lodo is None:
                continue
            delta = f"{lodo[0] - ref[0]:+.3f}" if ref else "–"
            lines.append(f"| {d} | {era} | {lodo[1]} | {lodo[0]:.3f} | {_f(ref[0] if ref else None)} | {delta} |")
    return "\n".join(lines) + "\n"
