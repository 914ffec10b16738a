"""``newsclean eval``: arguments, system selection, the run, and the written report.

    newsclean eval                                  # everything: all data sets, configs, ablations, peers
    newsclean eval --quick                          # named configs + trafilatura and readability only
    newsclean eval --datasets msv-big9,dragnet --configs default,paper,depth --peers trafilatura
    newsclean eval --split test --out /tmp/eval.md  # report the held-out half only
    newsclean eval --lodo out/lodo --split tune --configs default --peers trafilatura  # leave-one-data-set-out
    newsclean eval --lodo-boilernet out/boilernet/lodo --split tune --configs boilernet --peers trafilatura

``--configs`` takes a comma list of system ids and groups: ``all`` (named configs and every ablation),
``named`` (the configs of ``newsclean.transforms.chain.CONFIGS``), ``ablations``, an ablation group (``stages``,
``algorithm``, ``depth``, ``filters``, ``neighbours``), single ids (``default``, ``no-static``, ``filter1``,
``n5``, ``heuristic:depth3``, ...) or ``none``. Ablations are of the configurations ``--ablate`` names
(default: ``default``, plus the papers' chain when the default uses the learned classifier).
``--peers``: a comma list of peer names, ``all`` or ``none``.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from newsclean.pipeline.errors import NewscleanError, UsageError
from newsclean.transforms.boilernet import DEFAULT_BOILERNET_MODEL
from newsclean.transforms.chain import BOILERNET_CONFIG, CONFIGS, DEFAULT_CONFIG
from newsclean.transforms.classifier.model import DEFAULT_CONTEXT_MODEL, DEFAULT_LEXICON, DEFAULT_MODEL
from newsclean_eval import main_job, report
from newsclean_eval.datasets import ERA_YEAR, ERAS, LOADERS, NEIGHBOUR_SETS, REPO_ROOT, TUNE_SHARE, EvalPage, load
from newsclean_eval.metrics import DEFAULT_RESAMPLES, DEFAULT_SEED
from newsclean_eval.runner import DatasetRun, Runner, build_tasks, default_jobs
from newsclean_eval.systems import (
    ABLATION_GROUPS,
    DEFAULT_NEIGHBOURS,
    PEERS,
    QUICK_PEERS,
    System,
    ablations,
    crossfit_systems,
    default_ablation_bases,
    describe_base,
    named_configs,
    resolve_peers,
)

DEFAULT_OUT = Path("eval-out/eval.md")
DEFAULT_CSV = Path("out/eval/pages.csv")


@dataclass
class EvalOptions:
    """A resolved ``newsclean eval`` run (see :func:`add_eval_arguments` for each field's meaning)."""

    datasets: list[str]
    systems: list[System]
    notes: list[str] = field(default_factory=list)
    split: str = "all"
    neighbours: int = DEFAULT_NEIGHBOURS
    exclude_target: bool = False
    max_groups: int | None = None
    jobs: int = 1
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    out: Path | None = DEFAULT_OUT
    csv: Path | None = DEFAULT_CSV
    command: str = "newsclean eval"
    bases: list[str] = field(default_factory=lambda: ["default"])
    lodo: Path | None = None  # folder of leave-one-data-set-out models, one subfolder per data set
    lodo_boilernet: Path | None = None  # the same for BoilerNet (scripts/train_boilernet.py --holdout-set)
    main_job: list[str] = field(default_factory=list)  # chain rows also scored via newsclean clean (CLI: default)
    page_type_header: bool = False  # pack the main job's WARC files with the crawler's page-type header


def main_job_systems(opts: EvalOptions) -> list[System]:
    """The rows scored through the main job (``--main-job``): each chain row of ``opts.systems`` it names, as
    system ``main-job:<id>``."""
    chains = {s.id: s for s in opts.systems if s.is_chain}
    return [replace(chains[i], id=main_job.MAIN_JOB + i, label=f"{chains[i].label}, through newsclean clean",
                    kind="main-job") for i in opts.main_job if i in chains]


@dataclass
class EvalResult:
    """What :func:`run_eval` produced: per data set runs, the aggregates, total wall seconds, the report text."""

    runs: list[DatasetRun]
    agg: report.Aggregates
    seconds: float
    markdown: str = ""
    main_job_runs: list[main_job.MainJobRun] = field(default_factory=list)
    pages: dict[str, list[EvalPage]] = field(default_factory=dict)  # data set -> the pages of the split


# -------------------------------------------------------------------------------------- selection


def _items(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def resolve_bases(spec: str | None) -> list[str]:
    """Configuration names to ablate for ``--ablate`` (None: :func:`default_ablation_bases`).

    Raises UsageError for a name not in ``newsclean.transforms.chain.CONFIGS``.
    """
    names = _items(spec) if spec else default_ablation_bases()
    unknown = [n for n in names if n not in CONFIGS]
    if unknown:
        raise UsageError(f"--ablate: unknown {', '.join(unknown)}; choose from {', '.join(CONFIGS)}")
    return names


def resolve_configs(spec: str, neighbours: int = DEFAULT_NEIGHBOURS, bases: Sequence[str] = ("default",)) -> list[System]:
    """Chain systems for a ``--configs`` value (module docstring), in table order, without duplicates.

    ``bases`` are the configurations whose ablations the groups name. Raises UsageError naming an
    unknown id or group.
    """
    named = named_configs() + crossfit_systems()
    abl = [s for b in bases for s in ablations(CONFIGS[b], neighbours)]
    groups = {"all": named + abl, "named": named, "ablations": abl, "none": []}
    groups.update({g: [s for s in abl if s.group == g] for g in ABLATION_GROUPS})
    by_id = {s.id: s for s in named + abl}
    for name, config in CONFIGS.items():  # a config run under its twin's row (named_configs) selects that row
        by_id.setdefault(name, next((s for s in named if s.config == config.with_(name=s.config.name)), None))
    chosen: dict[str, System] = {}
    for item in _items(spec) or ["none"]:
        if item in groups:
            chosen.update({s.id: s for s in groups[item]})
        elif item in by_id:
            chosen[item] = by_id[item]
        else:
            raise UsageError(f"--configs: unknown {item!r}; use ids ({', '.join(by_id)}) or groups "
                             f"({', '.join(groups)})")
    order = [s.id for s in named + abl]
    return sorted(chosen.values(), key=lambda s: order.index(s.id))


def resolve_peer_names(spec: str) -> list[str]:
    """Peer names for a ``--peers`` value: ``all``, ``none`` or a comma list. Raises UsageError for an unknown name."""
    items = _items(spec)
    if items == ["all"]:
        return list(PEERS)
    if items in ([], ["none"]):
        return []
    unknown = [i for i in items if i not in PEERS]
    if unknown:
        raise UsageError(f"--peers: unknown {', '.join(unknown)}; choose from {', '.join(PEERS)}, all, none")
    return items


def resolve_datasets(spec: str | None) -> list[str]:
    """Data set names for ``--datasets`` (None or ``all``: every loader). Raises UsageError for an unknown name."""
    items = _items(spec or "all")
    if items == ["all"]:
        return list(LOADERS)
    unknown = [i for i in items if i not in LOADERS]
    if unknown:
        raise UsageError(f"--datasets: unknown {', '.join(unknown)}; choose from {', '.join(LOADERS)}")
    return items


LODO_FILES = (DEFAULT_MODEL.name, DEFAULT_CONTEXT_MODEL.name, DEFAULT_LEXICON.name)


def lodo_system(folder: Path, dataset: str) -> System:
    """The default chain with the classifier trained without ``dataset`` (``folder/<dataset>/``, written by
    ``scripts/train_block_classifier.py --holdout-set``): the leave-one-data-set-out row."""
    files = [str(folder / dataset / name) for name in LODO_FILES]
    learned = replace(DEFAULT_CONFIG.learned, model_path=files[0], context_model_path=files[1], lexicon_path=files[2])
    return System(report.LODO_SYSTEM, "newsclean default, leave-one-set-out", "config",
                  DEFAULT_CONFIG.with_(learned=learned))


def check_lodo_folder(folder: Path, datasets: Sequence[str]) -> None:
    """Raise UsageError naming the first model file of ``folder`` missing for one of ``datasets``."""
    for d in datasets:
        for name in LODO_FILES:
            if not (folder / d / name).is_file():
                raise UsageError(f"--lodo: {folder / d / name} missing; train it with "
                                 f"scripts/train_block_classifier.py --holdout-set {d} --lodo-dir {folder}")


#: Data sets BoilerNet never trains on (snippet gold: no block labels), so every model of
#: ``scripts/train_boilernet.py`` left them out; their BoilerNet LODO row runs the shipped model.
BOILERNET_UNTRAINED_SETS = ("trafilatura-eval",)


def lodo_boilernet_path(folder: Path, dataset: str) -> Path:
    """The BoilerNet model that never saw ``dataset``: ``folder/<dataset>/boilernet.npz`` (written by
    ``scripts/train_boilernet.py --holdout-set``), or the shipped model for :data:`BOILERNET_UNTRAINED_SETS`."""
    return DEFAULT_BOILERNET_MODEL if dataset in BOILERNET_UNTRAINED_SETS else folder / dataset / "boilernet.npz"


def lodo_boilernet_system(folder: Path, dataset: str) -> System:
    """The ``boilernet`` chain with the model trained without ``dataset``: BoilerNet's leave-one-data-set-out row."""
    params = replace(BOILERNET_CONFIG.boilernet, model_path=str(lodo_boilernet_path(folder, dataset)))
    return System(report.LODO_BOILERNET_SYSTEM, "newsclean boilernet, leave-one-set-out", "config",
                  BOILERNET_CONFIG.with_(boilernet=params))


def check_lodo_boilernet_folder(folder: Path, datasets: Sequence[str]) -> None:
    """Raise UsageError naming the first BoilerNet LODO model of ``folder`` missing for one of ``datasets``."""
    for d in datasets:
        if not lodo_boilernet_path(folder, d).is_file():
            raise UsageError(f"--lodo-boilernet: {lodo_boilernet_path(folder, d)} missing; train it with "
                             f"scripts/train_boilernet.py --holdout-set {d} --lodo-dir {folder}")


def with_boilernet_model(systems: Sequence[System], model: Path) -> list[System]:
    """``systems`` with the ``boilernet`` row running ``model`` (a ``.npz`` of ``scripts/train_boilernet.py``)
    instead of the shipped one, its label naming the file. Raises UsageError when the file is missing or
    no ``boilernet`` row is selected."""
    if not model.is_file():
        raise UsageError(f"--boilernet-model: {model} not found")
    if not any(s.id == "boilernet" for s in systems):
        raise UsageError("--boilernet-model needs the boilernet row (--configs boilernet)")
    return [replace(s, label=f"newsclean boilernet ({model})",
                    config=s.config.with_(boilernet=replace(s.config.boilernet, model_path=str(model))))
            if s.id == "boilernet" else s for s in systems]


def systems_for_dataset(opts: EvalOptions, dataset: str) -> list[System]:
    """``opts.systems`` with the leave-one-data-set-out rows (``--lodo``, ``--lodo-boilernet``) bound to
    ``dataset``'s models."""
    bound = {report.LODO_SYSTEM: opts.lodo and lodo_system(opts.lodo, dataset),
             report.LODO_BOILERNET_SYSTEM: opts.lodo_boilernet and lodo_boilernet_system(opts.lodo_boilernet, dataset)}
    return [bound.get(s.id) or s for s in opts.systems]


def options_from_args(args: argparse.Namespace, argv: Sequence[str] | None = None) -> EvalOptions:
    """Resolve parsed ``newsclean eval`` arguments; ``--quick`` changes only the defaults of --configs/--peers."""
    if args.neighbours < 1 or args.jobs < 1 or args.resamples < 1 or (args.max_groups is not None and args.max_groups < 1):
        raise UsageError("--neighbours, --jobs, --resamples and --max-groups must be at least 1")
    bases = resolve_bases(args.ablate)
    configs = resolve_configs(args.configs or ("named" if args.quick else "all"), args.neighbours, bases)
    peers, notes = resolve_peers(resolve_peer_names(args.peers or (",".join(QUICK_PEERS) if args.quick else "all")))
    command = "newsclean eval" + ("" if not argv else " " + shlex.join(argv))
    datasets = resolve_datasets(args.datasets)
    lodo = Path(args.lodo) if getattr(args, "lodo", None) else None
    if lodo is not None:
        check_lodo_folder(lodo, datasets)
        configs = configs + [lodo_system(lodo, datasets[0])]  # bound to each data set's models by run_eval
    if getattr(args, "boilernet_model", None):
        configs = with_boilernet_model(configs, Path(args.boilernet_model))
    lodo_bn = Path(args.lodo_boilernet) if getattr(args, "lodo_boilernet", None) else None
    if lodo_bn is not None:
        check_lodo_boilernet_folder(lodo_bn, datasets)
        configs = configs + [lodo_boilernet_system(lodo_bn, datasets[0])]
    return EvalOptions(datasets, configs + peers, notes, args.split, args.neighbours,
                       args.exclude_target, args.max_groups, args.jobs, args.resamples, args.seed,
                       None if args.out == "-" else Path(args.out), None if args.csv == "-" else Path(args.csv),
                       command, bases, lodo, lodo_bn, resolve_main_job(getattr(args, "main_job", None), configs),
                       bool(getattr(args, "page_type_header", False)))


def resolve_main_job(spec: str | None, configs: Sequence[System]) -> list[str]:
    """The chain rows ``--main-job`` names (comma list of row ids or ``none``; default: ``default``, and ``lodo``
    with ``--lodo``), each one that runs. Raises UsageError for a row that is not selected by ``--configs``."""
    ids = [s.id for s in configs]
    if spec is None:
        return [i for i in ("default", report.LODO_SYSTEM) if i in ids]
    wanted = [] if spec == "none" else _items(spec)
    unknown = [i for i in wanted if i not in ids]
    if unknown:
        raise UsageError(f"--main-job: {', '.join(unknown)} not among the chain rows that run ({', '.join(ids)})")
    return wanted


# ------------------------------------------------------------------------------------------- run


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run_eval(opts: EvalOptions, loader: Callable[[str], list[EvalPage]] = load,
             progress: Callable[[str], None] = _stderr) -> EvalResult:
    """Run every system of ``opts`` on its data sets and aggregate; writes nothing.

    ``loader(name)`` gives a data set's pages (default :func:`newsclean_eval.datasets.load`). With ``opts.split``
    ``tune`` or ``test`` only that split's pages run (and reach the CSV), so that a tune-only study never scores a
    test page. Raises FileNotFoundError when the shared data are absent.
    """
    runs, jobs, kept, start = [], [], {}, time.perf_counter()
    n_sys = len(opts.systems)
    progress(f"newsclean eval: {len(opts.datasets)} data sets x up to {n_sys} systems, {opts.jobs} processes")
    with Runner(opts.jobs, progress) as runner:
        for i, name in enumerate(opts.datasets, 1):
            pages = [p for p in loader(name) if opts.split == "all" or p.split == opts.split]
            kept[name] = pages
            articles = [p for p in pages if p.page_type == "article"]  # the API path scores gold articles only
            tasks = build_tasks(name, articles, systems_for_dataset(opts, name), neighbours=opts.neighbours,
                                exclude_target=opts.exclude_target, max_groups=opts.max_groups)
            progress(f"[{i}/{len(opts.datasets)}] {name}: {sum(len(t.pages) for t in tasks)} pages in {len(tasks)} "
                     f"groups x {len(tasks[0].systems) if tasks else 0} systems")
            run = runner.run_dataset(name, tasks)
            eras = {r.page_id: r.era for r in run.results if r.era}  # the API path found each page's era already
            for system in main_job_systems(replace(opts, systems=systems_for_dataset(opts, name))):
                progress(f"[{i}/{len(opts.datasets)}] {name}: {len(pages)} pages through newsclean clean, "
                         f"{system.id}")
                job = main_job.run_main_job(pages, system.id.removeprefix(main_job.MAIN_JOB), system.config,
                                            opts.page_type_header, eras=eras)
                jobs.append(job)
                run.results.extend(job.results)
            runs.append(run)
            progress(f"[{i}/{len(opts.datasets)}] {name}: done in {run.seconds:.1f} s{_glance(run)}")
    results = [r for run in runs for r in run.results]
    agg = report.aggregate(results, opts.resamples, opts.seed)
    return EvalResult(runs, agg, time.perf_counter() - start, main_job_runs=jobs, pages=kept)


def _glance(run: DatasetRun) -> str:
    """``; default F1 0.961, trafilatura 0.945`` style summary of one data set (macro F1 or snippet micro F1)."""
    from newsclean_eval.report import aggregate

    agg = aggregate(run.results, resamples=1)
    shown = [s for s in ("default", main_job.MAIN_JOB + "default", "trafilatura", "readability")
             if agg.get(run.dataset, "all", s)]
    return "; " + ", ".join(f"{s} F1 {agg.get(run.dataset, 'all', s).f1:.3f}" for s in shown) if shown else ""


# ---------------------------------------------------------------------------------------- report


def _git_state() -> str:
    """``abc1234`` (plus ``+ uncommitted changes``) of the repository, or ``unknown``."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO_ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"`{head}`" + (" + uncommitted changes" if dirty else "")


def render_markdown(opts: EvalOptions, result: EvalResult) -> str:
    """The full Markdown report: header (how it was made, how to read it), summaries, targets, per data set."""
    agg, runs = result.agg, result.runs
    datasets = [r.dataset for r in runs]
    peers = [s for s in opts.systems if s.kind == "peer"]
    rows = opts.systems + main_job_systems(opts)
    parts = [_header(opts, result), f"## Summary: F1 per data set ({_split_words(opts.split)})\n",
             "Bag-of-words macro F1; trafilatura-eval: snippet micro F1. Best of each column in bold. Rows "
             f"`{main_job.MAIN_JOB}<id>`: the same chain through the main job (`newsclean_eval.main_job`: WARC files "
             + ("with" if opts.page_type_header else "without") + " the crawler's page-type header, `newsclean "
             "clean`, rows joined by URL, a page without an article row scoring 0).\n",
             report.summary_table(agg, datasets, rows, opts.split)]
    if opts.split == "all":
        parts += ["\n## Summary: F1 on the test split (held out from tuning)\n",
                  report.summary_table(agg, datasets, rows, "test")]
    if result.main_job_runs:
        parts += ["\n## Page types through the main job\n", main_job_page_types(result)]
    checks = report.target_checks(agg, datasets, peers, opts.split, NEIGHBOUR_SETS)
    if opts.split == "all":
        checks += report.target_checks(agg, datasets, peers, "test", NEIGHBOUR_SETS)
        checks += report.target_checks(agg, datasets, peers, "all", NEIGHBOUR_SETS, system="crossfit")
    if checks:
        parts += ["\n## Targets\n",
                  "Default chain against the best peer on the per-site sets and against trafilatura on the "
                  "single-page sets; Δ = newsclean − reference with a paired bootstrap interval. *met* compares "
                  "the point estimates; an interval that holds 0 means the difference is within sampling noise. "
                  "Split `all` includes the tune half the classifier was trained on; `test` is held out; "
                  "`all, crossfit` scores every page with a classifier that never saw its site (the `crossfit` "
                  "row: tune pages by a model trained on the test half), the estimate for unseen pages with "
                  "the most pages behind it.\n",
                  report.targets_table(sorted(checks, key=lambda c: (datasets.index(c.dataset), _check_rank(c))))]
    if opts.lodo is not None:
        parts += [f"\n## Leave-one-data-set-out ({_split_words(opts.split)})\n",
                  "Each data set scored by the default chain whose classifier and lexicon were trained on the "
                  "other data sets only (`scripts/train_block_classifier.py --holdout-set all`, models in "
                  f"`{opts.lodo}`): the selection protocol (docs/DECISIONS.md), an estimate for sites and page styles no "
                  "model saw. *at or above* compares point estimates with trafilatura's.\n",
                  report.lodo_table(agg, datasets, opts.split)]
        lodo_job = main_job.MAIN_JOB + report.LODO_SYSTEM
        if report.LODO_SYSTEM in opts.main_job:
            parts += ["\nThe same, through the main job (`newsclean clean`):\n",
                      report.lodo_table(agg, datasets, opts.split, system=lodo_job, shipped=main_job.MAIN_JOB + "default")]
        if opts.split == "all":
            parts += ["\n### Tune pages only: the figures models and rules are chosen on\n",
                      "The same rows on each set's *tune* pages only; the test halves are scored once per release, "
                      "never to choose. How each release moved these figures: evaluation/EXPERIMENTS.md.\n",
                      report.lodo_table(agg, datasets, "tune")]
        results = [r for run in runs for r in run.results]
        parts += [f"\n### Per era ({_split_words(opts.split)})\n",
                  f"The same LODO row by the pages' era: before {ERA_YEAR} and from {ERA_YEAR} on, by the year each "
                  "set gives (msv-big9: its crawl year; dragnet, cleaneval, cleanportaleval: their collection year, "
                  "all before 2015; trafilatura-eval and Readability: the gold's date where it has one) or else the "
                  "page's own publication date (JSON-LD, meta tags or htmldate); `undated` when none is known "
                  "(`newsclean_eval.datasets.page_era`).\n",
                  report.lodo_era_table(results, datasets, opts.split, ERAS)]
        if report.LODO_SYSTEM in opts.main_job:
            parts += ["\nThrough the main job:\n", report.lodo_era_table(results, datasets, opts.split, ERAS,
                                                                       system=lodo_job)]
        if opts.split == "all":
            parts += ["\nTune pages only:\n", report.lodo_era_table(results, datasets, "tune", ERAS)]
    if opts.lodo_boilernet is not None:
        parts += [f"\n## BoilerNet, leave-one-data-set-out ({_split_words(opts.split)})\n",
                  "Each data set scored by the `boilernet` chain whose model was trained on the other text-gold "
                  "sets' tune pages only (`scripts/train_boilernet.py --holdout-set all`, models in "
                  f"`{opts.lodo_boilernet}`); {', '.join(BOILERNET_UNTRAINED_SETS)} (snippet gold) is never "
                  "trained on and uses the shipped model. *at or above* compares point estimates with "
                  "trafilatura's; the last column is the shipped `boilernet` row.\n",
                  report.lodo_table(agg, datasets, opts.split, system=report.LODO_BOILERNET_SYSTEM,
                                    shipped="boilernet")]
    for run in runs:
        splits = {sp: sum(1 for r in run.results if r.system == run.results[0].system and r.split == sp)
                  for sp in ("tune", "test")} if run.results else {"tune": 0, "test": 0}
        grouping = (f"{run.groups} neighbour groups" if run.dataset in NEIGHBOUR_SETS
                    else "single-page groups (no neighbours)")
        parts += [f"\n## {run.dataset}\n",
                  f"{run.pages} pages in {grouping}; tune {splits['tune']}, test {splits['test']}; "
                  f"{run.seconds:.0f} s wall.\n",
                  report.dataset_table(agg, run.dataset, rows, opts.split)]
    return "\n".join(parts)


def main_job_page_types(result: EvalResult) -> str:
    """Markdown: per main-job row and data set, the gold articles kept as rows and the gold listings and
    collections not typed article (:func:`newsclean_eval.main_job.page_type_counts`), then the confusion of gold
    page type against outcome (the row's page type, or the reject reason) summed over the data sets."""
    lines = ["| row | data set | gold articles kept | listings and collections not typed article |",
             "|---|---|---:|---:|"]
    confusion: dict[str, Counter] = {}
    for job in result.main_job_runs:
        pages = result.pages[job.dataset]
        counts = main_job.page_type_counts(job, pages)
        (kept, n), (untyped, m) = counts["articles kept"], counts["lists not typed article"]
        lines.append(f"| {job.system} | {job.dataset} | {kept} / {n} ({kept / n:.3f}) | "
                     + (f"{untyped} / {m} ({untyped / m:.3f})" if m else "–") + " |")
        confusion.setdefault(job.system, Counter()).update(main_job.confusion(job, pages))
    for system, table in confusion.items():
        outcomes = sorted({o for _, o in table})
        golds = sorted({g for g, _ in table}, key=lambda g: (g != "article", g))
        lines += ["", f"Confusion, {system} (rows: gold page type; columns: row page type or reject reason):", "",
                  "| gold | " + " | ".join(outcomes) + " |", "|---|" + "---:|" * len(outcomes)]
        lines += [f"| {g} | " + " | ".join(str(table[g, o]) for o in outcomes) + " |" for g in golds]
    return "\n".join(lines) + "\n"


def _check_rank(check: report.TargetCheck) -> int:
    """Row order of a data set's targets: held-out test half, cross-fitted all pages, then the rest."""
    return 0 if check.split == "test" else 1 if check.system == "crossfit" else 2


def _load() -> str:
    """`` (machine load average at the end: 1.9)`` where the OS tells it; other processes slow pages/s down."""
    try:
        return f" (machine load average over the last 5 min: {os.getloadavg()[1]:.1f})"
    except (AttributeError, OSError):
        return ""


def _split_words(split: str) -> str:
    return "all pages" if split == "all" else f"{split} split only"


def _header(opts: EvalOptions, result: EvalResult) -> str:
    peers = [s for s in opts.systems if s.kind == "peer"]
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    signature = ("learnt for each page from N pages of its group **other than the page itself** (leave-one-out)"
                 if opts.exclude_target else
                 "learnt once per neighbour group from its N pages with the smallest SHA-1 of the page id (as the "
                 "pipeline samples the smallest SHA-1s of the URL), so **the target page is part of the sample** "
                 "whenever it is among those N (always in groups of at most N pages), as in production; "
                 "`--exclude-target` learns leave-one-out instead")
    lines = [
        "# newsclean eval: extraction quality on the shared data sets", "",
        f"Generated by `{opts.command}` (regenerate: `make eval`) on {when}, code {_git_state()}, "
        f"Python {platform.python_version()}, {opts.jobs} worker processes on {default_jobs()} CPUs; the run took "
        f"{result.seconds / 60:.1f} min wall{_load()}.", "",
        "How to read it:", "",
        "- **Data**: every data set of `../shared/data` (loaders: `newsclean_eval/datasets.py`). Neighbour groups: "
        "msv-big9 site + year, dragnet site, cleanportaleval site section; cleaneval, readability-test-pages and "
        "trafilatura-eval have one page per group (no neighbours, so no static noise)."
        + (f" Only {opts.max_groups} groups per data set (`--max-groups`)." if opts.max_groups else ""),
        f"- **Static noise**: N = {opts.neighbours} neighbour pages (StaDyNoT §4); the signature is {signature}.",
        "- **Metric**: per page, bag-of-words precision, recall and F1 over lowercased Unicode `\\w+` tokens after "
        "NFC normalisation, multiset overlap (`newsclean_eval/metrics.py`); a rejected or failed extraction scores as "
        "empty. Tables give the macro mean over pages. trafilatura-eval has snippet gold: its P, R, F1 and accuracy "
        "are micro over all snippets as trafilatura's benchmark counts them (must-contain found = TP, missing = FN; "
        "must-not-contain found = FP, absent = TN; whitespace-collapsed substring match).",
        f"- **95 % CI**: percentile bootstrap over pages ({opts.resamples} resamples, seed {opts.seed}), "
        "the same resamples for every system of a data set and split (paired differences in the targets table).",
        f"- **Split**: `tune` / `test` by SHA-1 of `dataset:site` (`newsclean_eval.datasets.split_of`, tune share "
        f"{TUNE_SHARE:.0%}), so every page of a site, hence of all its neighbour groups, falls on one side; the "
        "single-page sets split per page. Tune on `tune`, report on `test` (the learned block classifier is trained "
        "on `tune` only; the `crossfit` row scores `tune` pages with a second classifier trained on `test` only, "
        "`evaluation/newsclean_eval/models/crossfit/`, so that its all-pages F1 is out of sample for every page). "
        f"Main columns: {_split_words(opts.split)}.",
        "- **pages/s**: pages divided by the summed wall time of the extraction calls only (decoding shared and "
        "untimed; the chain's static-noise learning included, split over the group's pages), i.e. the speed of "
        f"one process; every system ran in the same {opts.jobs} processes, interleaved.",
        "- **Peers** get the same decoded text as the chain and run with their defaults (trafilatura as its own "
        "benchmark runs it: tables on, comments off; jusText with the stoplist of the page's `<html lang>`): "
        + (", ".join(s.label for s in peers) or "none") + ".",
        "- **Ablations** change one thing of a base configuration ("
        + "; ".join(describe_base(CONFIGS[b], opts.neighbours) for b in opts.bases)
        + "); the base's own row is the omitted point of each series. A base with the learned classifier gets "
        "no Boilerpipe or ancestor-filter rows (they are its features, computed with fixed parameters: no effect). "
        "Static-noise and neighbour-size ablations run on the per-site sets only (`–` elsewhere); msv-big9 "
        "groups have 10 pages, so 10 and 20 neighbours coincide there.",
        "- **rejects**: pages where the chain wrote no article (too short, no content); **errors**: crashes.",
    ]
    lines += [f"- Note: {n}" for n in opts.notes]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------ CLI


def add_eval_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``newsclean eval`` flags (see ``newsclean eval --help``)."""
    parser.add_argument("--datasets", metavar="LIST",
                        help=f"comma list of data sets (default all: {', '.join(LOADERS)})")
    parser.add_argument("--configs", metavar="LIST",
                        help="chain systems: all (default), named, ablations, a group (" + ", ".join(ABLATION_GROUPS)
                             + "), ids such as " + ",".join(CONFIGS) + ",no-static,filter1,n5 (ablations of a "
                             "base other than default are prefixed: heuristic:depth3), or none")
    parser.add_argument("--peers", metavar="LIST",
                        help=f"peer extractors: all (default), none, or a comma list of {', '.join(PEERS)}")
    parser.add_argument("--ablate", metavar="LIST",
                        help="named configs whose ablations the ablation groups hold (default: "
                             + ",".join(default_ablation_bases()) + "); ablation ids of a base other than "
                             "default are prefixed, e.g. heuristic:depth3")
    parser.add_argument("--quick", action="store_true",
                        help=f"no ablations and only {', '.join(QUICK_PEERS)} (unless --configs/--peers say otherwise)")
    parser.add_argument("--split", choices=report.SPLITS, default="all",
                        help="pages that run and that the report and --csv hold (default all, with tune and test "
                             "F1 columns beside; tune or test: only that half runs); the split is by site, see the "
                             "report header")
    parser.add_argument("--neighbours", type=int, default=DEFAULT_NEIGHBOURS, metavar="N",
                        help=f"neighbour pages per group to learn static noise from (default {DEFAULT_NEIGHBOURS})")
    parser.add_argument("--exclude-target", action="store_true",
                        help="learn each page's static noise from N other pages of its group (leave-one-out) "
                             "instead of the group's shared sample")
    parser.add_argument("--max-groups", type=int, metavar="N",
                        help="only N neighbour groups per data set (a quick sample; default all)")
    parser.add_argument("--jobs", type=int, default=default_jobs(), metavar="J",
                        help=f"worker processes (default: CPUs available, {default_jobs()} here)")
    parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES, help="bootstrap resamples (default 1000)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="bootstrap seed (default 0)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), metavar="MD",
                        help=f"Markdown report to write (default {DEFAULT_OUT}; - writes none)")
    parser.add_argument("--lodo", metavar="DIR",
                        help="add the leave-one-data-set-out row: each data set scored with the models of DIR/<data set>/ "
                             "(scripts/train_block_classifier.py --holdout-set all), and its table beside trafilatura")
    parser.add_argument("--boilernet-model", metavar="NPZ",
                        help="run the boilernet row with this model instead of the shipped one "
                             "(e.g. one trained by scripts/train_boilernet.py --sets cleaneval)")
    parser.add_argument("--lodo-boilernet", metavar="DIR",
                        help="add BoilerNet's leave-one-data-set-out row: each data set scored with DIR/<data set>/"
                             "boilernet.npz (scripts/train_boilernet.py --holdout-set all; trafilatura-eval: the "
                             "shipped model), and its table beside trafilatura")
    parser.add_argument("--main-job", metavar="LIST",
                        help="chain rows also scored through the main job: their pages packed as WARC files, "
                             "cleaned by newsclean clean, the rows joined back by URL, a page without an article "
                             "row scoring 0 (default: default, and lodo with --lodo; 'none': the API path only)")
    parser.add_argument("--page-type-header", action="store_true",
                        help="pack the main job's WARC files with the crawler's page-type header (default: "
                             "without, as Common Crawl's files are)")
    parser.add_argument("--csv", default=str(DEFAULT_CSV), metavar="CSV",
                        help=f"per-page scores to write (default {DEFAULT_CSV}; - writes none)")


EVAL_DESCRIPTION = (
    "Measure the cleaning chain on every shared data set (../shared/data): bag-of-words P/R/F1 per page, "
    "macro mean with a bootstrap 95 % interval (trafilatura-eval: its snippet metric), beside the peer "
    "extractors (trafilatura, readability-lxml, jusText, boilerpy3, resiliparse; pip install -e '.[eval]') "
    "and ablations of the default chain, with pages/s. Prints the Markdown report, writes it to --out and "
    "the per-page scores to --csv; progress goes to stderr. A full run takes a few minutes on 2 cores.")
EVAL_EPILOG = (
    "Examples: newsclean eval --quick; newsclean eval --datasets msv-big9 --configs default,depth "
    "--peers trafilatura --out -; newsclean eval --split test. Exit status 1 when the shared data are absent.")


def cmd_eval(args: argparse.Namespace, argv: Sequence[str] | None = None) -> int:
    """Run ``newsclean eval`` from parsed arguments: print the report, write --out and --csv. Returns 0.

    Raises UsageError for bad selections and NewscleanError when the data are absent.
    """
    opts = options_from_args(args, argv)
    if not opts.systems:
        raise UsageError("nothing to run: --configs none and no peer available")
    try:
        result = run_eval(opts)
    except FileNotFoundError as exc:
        raise NewscleanError(str(exc)) from None
    result.markdown = render_markdown(opts, result)
    print(result.markdown)
    if opts.out is not None:
        opts.out.parent.mkdir(parents=True, exist_ok=True)
        opts.out.write_text(result.markdown, encoding="utf-8")
    if opts.csv is not None:
        report.write_csv([r for run in result.runs for r in run.results], opts.csv)
    _stderr(f"newsclean eval: {result.seconds / 60:.1f} min; wrote "
            + ", ".join(str(p) for p in (opts.out, opts.csv) if p is not None))
    return 0
