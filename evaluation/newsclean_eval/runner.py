"""Run every system over every page of the data sets, in parallel over neighbour groups.

Neighbour groups are the data set's :attr:`~newsclean_eval.datasets.EvalPage.group` (msv-big9: site and
year; dragnet: site; cleanportaleval: site section; the single-page sets: one page each). One task is
one group with every system to run on it, so a group's pages are decoded once and its static-noise
signatures learnt once per (sample, parameters) in the worker.

Static-noise signature of a page (StaDyNoT §3.1 needs neighbour pages of the same site and category):
learnt from a sample of at most N pages of the page's group, the N with the smallest SHA-1 of their
page id, as ``newsclean.pipeline.stages.LearnSiteEvidence`` samples the N smallest SHA-1s of the URL. By default
the signature is the group's, as in production: **the target page is part of the sample** whenever it
is among those N (always, for groups of at most N pages). With ``exclude_target`` every page gets its
own signature from N pages of its group *other than itself* (leave-one-out; N learning runs per page).
A single-page group therefore learns from one page (or none), which gives an empty signature
(``StaticNoiseParams.min_pages``): the single-page sets run without static noise. The signature comes
with the group's site profile (:mod:`newsclean.transforms.site_evidence`), learnt from the same sample in the
same call; none from fewer than two pages.

Timing (``seconds`` per page) covers extraction only: the system's call on the decoded page, plus,
for the chain, its share of the signature learning (a group signature's learning time split evenly
over the group's pages). Decoding is shared and not timed. All systems run interleaved in the same
worker processes, so each sees the same load.

The pipeline's corpus filter ``--min-words`` (a page with fewer kept words becomes a ``too_short``
reject) is not applied here: it is a corpus policy, not extraction, and no peer has it.

Errors: the chain's ``ExtractionError`` (``no_content``, ``parse_error``, ...) is a reject, scored as an
empty extraction, as the pipeline writes no article for it; any other exception of the chain or a peer
is scored the same way and counted as an error (``error`` starts with ``crash:``).
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
import time
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from multiprocessing import get_context

from newsclean.demo.scoring import prf, tokens
from newsclean_eval.datasets import NEIGHBOUR_SETS, EvalPage, page_era, page_year
from newsclean_eval.metrics import SnippetCounts, snippet_counts
from newsclean_eval.systems import DEFAULT_NEIGHBOURS, PEERS, System

QUIET_LOGGERS = ("trafilatura", "htmldate", "courlan", "readability", "readability.readability", "boilerpy3",
                 "justext", "charset_normalizer")


@dataclass(frozen=True)
class PageResult:
    """The score of one system on one page.

    precision/recall/f1: bag of words in [0, 1] for text gold; for snippet gold, the page's own snippet
    scores (the data set's scores are micro sums of ``snippets``). snippets: ``(tp, fn, fp, tn)`` for
    snippet gold, None otherwise. seconds: extraction wall time (see module docstring). error: "" when
    the system returned text, a reject reason (``too_short``) or ``crash:<ExceptionType>``.
    """

    dataset: str
    group: str
    page_id: str
    split: str
    system: str
    precision: float
    recall: float
    f1: float
    pred_tokens: int
    gold_tokens: int
    seconds: float
    error: str = ""
    snippets: SnippetCounts | None = None
    era: str = ""  # newsclean_eval.datasets.page_era of the page ("" where not computed)


@dataclass(frozen=True)
class GroupTask:
    """One neighbour group to evaluate: its pages and the systems to run on them.

    neighbours: the run's N (a system's own ``neighbours`` overrides it); exclude_target: leave-one-out
    signatures (module docstring).
    """

    dataset: str
    group: str
    pages: tuple[EvalPage, ...]
    systems: tuple[System, ...]
    neighbours: int = DEFAULT_NEIGHBOURS
    exclude_target: bool = False


@dataclass
class DatasetRun:
    """What one data set's run produced: per-page ``results``, wall ``seconds``, page and group counts."""

    dataset: str
    results: list[PageResult] = field(default_factory=list)
    seconds: float = 0.0
    pages: int = 0
    groups: int = 0


# --------------------------------------------------------------------------------------- grouping


def group_pages(pages: Iterable[EvalPage]) -> dict[str, list[EvalPage]]:
    """Pages by neighbour group, groups sorted by name and pages by id inside each (deterministic)."""
    groups: dict[str, list[EvalPage]] = defaultdict(list)
    for page in pages:
        groups[page.group].append(page)
    return {g: sorted(groups[g], key=lambda p: p.page_id) for g in sorted(groups)}


def sample_key(page: EvalPage) -> str:
    """Sampling order of a page inside its group: SHA-1 of its page id (hex)."""
    return hashlib.sha1(page.page_id.encode("utf-8")).hexdigest()


def neighbour_sample(pages: Sequence[EvalPage], n: int, exclude: EvalPage | None = None) -> list[EvalPage]:
    """At most ``n`` pages of ``pages`` (one group), those with the smallest :func:`sample_key`, leaving
    out ``exclude`` (compared by page id). Raises ValueError when ``n`` < 1."""
    if n < 1:
        raise ValueError(f"neighbour sample size must be >= 1, got {n}")
    pool = [p for p in pages if exclude is None or p.page_id != exclude.page_id]
    return sorted(pool, key=sample_key)[:n]


def select_groups(groups: dict[str, list[EvalPage]], max_groups: int | None) -> dict[str, list[EvalPage]]:
    """The first ``max_groups`` groups in SHA-1 order of their names (a spread sample); None keeps all."""
    if max_groups is None:
        return groups
    chosen = sorted(groups, key=lambda g: hashlib.sha1(g.encode("utf-8")).hexdigest())[:max_groups]
    return {g: groups[g] for g in sorted(chosen)}


def systems_for(dataset: str, systems: Sequence[System]) -> list[System]:
    """The systems that run on ``dataset``: neighbour-only ablations only on :data:`NEIGHBOUR_SETS`."""
    return [s for s in systems if not s.neighbour_only or dataset in NEIGHBOUR_SETS]


def build_tasks(dataset: str, pages: Iterable[EvalPage], systems: Sequence[System], *,
                neighbours: int = DEFAULT_NEIGHBOURS, exclude_target: bool = False,
                max_groups: int | None = None) -> list[GroupTask]:
    """One :class:`GroupTask` per neighbour group of ``pages``, largest group first (load balance)."""
    chosen = systems_for(dataset, systems)
    groups = select_groups(group_pages(pages), max_groups)
    tasks = [GroupTask(dataset, g, tuple(ps), tuple(chosen), neighbours, exclude_target) for g, ps in groups.items()]
    return sorted(tasks, key=lambda t: -len(t.pages))


# ----------------------------------------------------------------------------------------- worker


def quiet_worker() -> None:
    """Silence the peers' logging and warnings (pool initializer; also used when running inline)."""
    warnings.filterwarnings("ignore")
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL)


def decode_page(page: EvalPage) -> str:
    """The page's HTML as text (:func:`newsclean.transforms.parse.decode_html`), "" for an empty payload."""
    from newsclean.transforms.errors import ExtractionError
    from newsclean.transforms.parse import decode_html

    try:
        return decode_html(page.html)[0]
    except ExtractionError:
        return ""


class _Signatures:
    """Memo of learnt site evidence per (sample page ids, static parameters): ``(evidence, seconds)``."""

    def __init__(self, htmls: dict[str, str]):
        self.htmls = htmls
        self.memo: dict = {}

    def get(self, sample: Sequence[EvalPage], params):
        """``(evidence, learning seconds)`` for the sample's pages and ``StaticNoiseParams``, learnt once
        (:func:`newsclean.transforms.site_evidence.learn_site_evidence`)."""
        from newsclean.transforms.site_evidence import learn_site_evidence

        key = (tuple(p.page_id for p in sample), params)
        if key not in self.memo:
            start = time.perf_counter()
            htmls = [self.htmls[p.page_id] for p in sample if self.htmls[p.page_id]]
            try:
                evidence = learn_site_evidence(htmls, params)
            except Exception:  # noqa: BLE001 - as the pipeline does: clean the group without static noise
                evidence = None
            self.memo[key] = (evidence, time.perf_counter() - start)
        return self.memo[key]


def _chain_signatures(task: GroupTask, system: System, sigs: _Signatures) -> list[tuple[object, float]]:
    """Per page of the task: ``(signature or None, seconds of learning charged to the page)``."""
    params = system.config.static
    if params is None:
        return [(None, 0.0)] * len(task.pages)
    n = system.neighbours or task.neighbours
    if task.exclude_target:
        return [sigs.get(neighbour_sample(task.pages, n, exclude=p), params) for p in task.pages]
    sig, seconds = sigs.get(neighbour_sample(task.pages, n), params)
    return [(sig, seconds / len(task.pages))] * len(task.pages)


def _run_chain(html: str, signature, config) -> tuple[str, str]:
    """``(text, error)`` of the chain on one decoded page."""
    from newsclean.transforms.chain import extract_article
    from newsclean.transforms.errors import ExtractionError

    if not html:
        return "", "empty_body"
    try:
        return extract_article(html, signature, config).text, ""
    except ExtractionError as exc:
        return "", exc.reason.value
    except Exception as exc:  # noqa: BLE001 - a bug on one page must not stop the run; counted as an error
        return "", f"crash:{type(exc).__name__}"


def _run_peer(name: str, html: str) -> tuple[str, str]:
    """``(text, error)`` of peer ``name`` on one decoded page."""
    if not html:
        return "", "empty_body"
    try:
        return PEERS[name].run(html) or "", ""
    except Exception as exc:  # noqa: BLE001 - peers fail on odd pages; scored as empty output
        return "", f"crash:{type(exc).__name__}"


def score_text(page: EvalPage, text: str, gold_tokens: list[str] | None) -> tuple[float, float, float, int, SnippetCounts | None]:
    """``(P, R, F1, predicted tokens, snippet counts)`` of ``text`` for ``page``.

    Text gold: bag-of-words :func:`newsclean.demo.scoring.prf` (``gold_tokens`` are the page's gold tokens).
    Snippet gold (``page.gold`` None): the page's snippet scores, and its counts.
    """
    pred = tokens(text)
    if page.gold is not None:
        p, r, f1, _ = prf(pred, gold_tokens if gold_tokens is not None else tokens(page.gold))
        return p, r, f1, len(pred), None
    c = snippet_counts(text, page.must_contain, page.must_not_contain)
    p = c.tp / (c.tp + c.fp) if c.tp + c.fp else 0.0
    r = c.tp / (c.tp + c.fn) if c.tp + c.fn else 0.0
    f1 = 2 * c.tp / (2 * c.tp + c.fp + c.fn) if c.tp else 0.0
    return p, r, f1, len(pred), c


WARM_UP_HTML = ("<html><head><title>Warm-up</title></head><body><div><h1>Warm-up</h1><p>"
                + "Some words of a paragraph. " * 20 + "</p><p><a href='/x'>a link</a></p></div></body></html>")
_warmed: set[str] = set()


def warm_up(system: System) -> None:
    """Run ``system`` once, untimed, on a small page the first time this process meets it, so that lazy
    imports and one-time set-ups (a model file, a stoplist) are not charged to the first real page."""
    if system.id in _warmed:
        return
    _warmed.add(system.id)
    if system.is_chain:
        from newsclean.transforms.site_evidence import learn_site_evidence

        signature = learn_site_evidence([WARM_UP_HTML] * 2, system.config.static) if system.config.static else None
        _run_chain(WARM_UP_HTML, signature, system.config)
        if system.tune_config is not None:
            _run_chain(WARM_UP_HTML, signature, system.tune_config)
    else:
        _run_peer(system.id, WARM_UP_HTML)


def page_published(html: str):
    """The page's own publication date (``Metadata.published_at``: JSON-LD, meta tags or htmldate), None when it
    has none or does not parse."""
    from newsclean.transforms.errors import ExtractionError
    from newsclean.transforms.metadata import read_metadata
    from newsclean.transforms.parse import parse_html

    try:
        return read_metadata(parse_html(html)).published_at if html else None
    except ExtractionError:
        return None


def era_of(page: EvalPage, html: str) -> str:
    """:func:`newsclean_eval.datasets.page_era` of ``page``, reading the page's own date only where the set
    gives none (``html``: the decoded page)."""
    return page_era(page, page_published(html) if page_year(page) is None else None)


def run_group(task: GroupTask) -> list[PageResult]:
    """Every system of ``task`` on every page of its group; results in (system, page) order."""
    htmls = {p.page_id: decode_page(p) for p in task.pages}
    eras = {p.page_id: era_of(p, htmls[p.page_id]) for p in task.pages}
    golds = {p.page_id: tokens(p.gold) if p.gold is not None else None for p in task.pages}
    sigs = _Signatures(htmls)
    out = []
    for system in task.systems:
        warm_up(system)
        learnt = _chain_signatures(task, system, sigs) if system.is_chain else [(None, 0.0)] * len(task.pages)
        for page, (signature, learn_seconds) in zip(task.pages, learnt):
            html = htmls[page.page_id]
            start = time.perf_counter()
            config = system.config_for(page.split)
            text, error = _run_chain(html, signature, config) if system.is_chain else _run_peer(system.id, html)
            seconds = time.perf_counter() - start + learn_seconds
            p, r, f1, n_pred, snips = score_text(page, text, golds[page.page_id])
            out.append(PageResult(task.dataset, task.group, page.page_id, page.split, system.id, p, r, f1, n_pred,
                                  len(golds[page.page_id] or ()), seconds, error, snips, eras[page.page_id]))
    return out


# ------------------------------------------------------------------------------------------ driver


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def default_jobs() -> int:
    """Worker processes by default: the CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class Runner:
    """Runs :class:`GroupTask` lists on ``jobs`` worker processes (inline when ``jobs`` is 1).

    Use as a context manager so the pool is closed. ``progress`` receives one-line messages.
    """

    def __init__(self, jobs: int = 1, progress: Callable[[str], None] = _stderr):
        if jobs < 1:
            raise ValueError(f"jobs must be >= 1, got {jobs}")
        self.jobs, self.progress, self.pool = jobs, progress, None

    def __enter__(self) -> Runner:
        if self.jobs > 1:
            # Not "fork": a child forked after LightGBM's OpenMP threads ran in this process hangs.
            self.pool = get_context("forkserver" if sys.platform == "linux" else "spawn").Pool(self.jobs, initializer=quiet_worker)
        else:
            quiet_worker()
        return self

    def __exit__(self, *exc) -> None:
        if self.pool is None:
            return
        if exc[0] is not None:  # interrupted or failed: do not wait for the queued groups
            self.pool.terminate()
        else:
            self.pool.close()
        self.pool.join()

    def run_dataset(self, dataset: str, tasks: list[GroupTask]) -> DatasetRun:
        """Run all ``tasks`` of one data set; reports progress at every quarter of its groups."""
        run = DatasetRun(dataset, groups=len(tasks), pages=sum(len(t.pages) for t in tasks))
        start, done, marks = time.perf_counter(), 0, {len(tasks) * q // 4 for q in (1, 2, 3)} if len(tasks) >= 40 else set()
        results = self.pool.imap_unordered(run_group, tasks) if self.pool else map(run_group, tasks)
        for group_results in results:
            run.results.extend(group_results)
            done += 1
            if done in marks:
                self.progress(f"  {dataset}: {done}/{len(tasks)} groups, {time.perf_counter() - start:.0f} s")
        run.seconds = time.perf_counter() - start
        return run
