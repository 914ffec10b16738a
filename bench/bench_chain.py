"""Throughput of the cleaning chain against trafilatura and a bare lxml parse, on real pages (run by hand).

    python bench/bench_chain.py [--datasets all] [--pages N] [--rounds 3] [--no-stages] [--peer-metadata]
                                [--without-htmldate] [--models DIR]

One process, one core: pages are decoded once up front (untimed), site evidence (static noise and the site
profile) is learnt per neighbour group from up to 10 of its pages (counted in the chain's time; each of those
pages is parsed once, and the chain then cleans the tree learning read), then every system
extracts every page, ``--rounds`` times, the systems taking turns group by group so that they share
the machine's load; pages/s is the median round. Systems: ``lxml parse`` (``lxml.html`` parse of
the decoded text, nothing else: the floor every extractor pays), the chain's ``default`` and
``paper`` configurations, the default with the compiled kernel off (the Python reference; where the kernel is
built) and ``trafilatura`` (with its defaults, when installed). Prints pages/s per
system, the ratio default / trafilatura (the target: >= 3) and default / lxml parse, then
the default chain's time per page by stage, from one more pass with the chain's stage functions
wrapped by timers (``--no-stages`` skips it). ``--models DIR`` adds the default chain with the model files
of DIR (a candidate model, e.g. a smaller one) as one more system of the same run. ``--peer-metadata`` adds
trafilatura with ``with_metadata=True``: the chain always reads a page's metadata (title, date, authors), trafilatura's
defaults do not, so this is the same work; the target stays the ratio to trafilatura's defaults.
``--without-htmldate`` adds the default chain with htmldate's date search left out (dates from the structured data
only; every other output the same): what htmldate costs in place, a measurement and not a product setting.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import lxml.html

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from newsclean.transforms import chain, kernel, metadata, site_evidence  # noqa: E402
from newsclean.transforms.chain import CONFIGS, extract_article  # noqa: E402
from newsclean.transforms.classifier import model as learned  # noqa: E402
from newsclean.transforms.errors import ExtractionError  # noqa: E402
from newsclean.transforms.parse import decode_html  # noqa: E402
from newsclean_eval.datasets import LOADERS, load  # noqa: E402

NEIGHBOURS = 10
PYTHON_DEFAULT = "default, Python reference"
PEER_METADATA = "trafilatura with metadata"
WITHOUT_HTMLDATE = "default without htmldate"
Groups = dict[str, list[str]]


def load_groups(datasets: list[str], pages: int | None) -> Groups:
    """Decoded HTML per neighbour group (``dataset/group``), at most ``pages`` pages per data set."""
    groups: Groups = defaultdict(list)
    for name in datasets:
        for page in load(name)[:pages]:
            try:
                groups[f"{name}/{page.group}"].append(decode_html(page.html)[0])
            except ExtractionError:
                continue
    return groups


def chain_runner(config) -> Callable[[Groups], None]:
    """The chain over each group: site evidence learnt from its first :data:`NEIGHBOURS` pages, each parsed once
    (the trees learning read are the ones the chain then cleans), then every page extracted."""
    def run(groups: Groups) -> None:
        for htmls in groups.values():
            trees: dict[int, object] = {}
            signature = None
            if len(htmls) > 1:
                for i, html in enumerate(htmls[:NEIGHBOURS]):
                    try:
                        trees[i] = chain.parse_html(html)  # looked up on the module: stage_table() times it
                    except ExtractionError:
                        continue  # learning skips it; extraction parses it again and rejects it
                signature = site_evidence.learn_site_evidence(list(trees.values()))
            for i, html in enumerate(htmls):
                try:
                    extract_article(html, signature, config, root=trees.pop(i, None))
                except ExtractionError:
                    pass
    return run


def python_reference(run: Callable[[Groups], None]) -> Callable[[Groups], None]:
    """``run`` with the compiled kernel switched off (:func:`newsclean.transforms.kernel.python_only`): the Python
    reference modules do the tree walks and LightGBM the predictions."""
    def reference(groups: Groups) -> None:
        with kernel.python_only():
            run(groups)
    return reference


def without_htmldate(run: Callable[[Groups], None]) -> Callable[[Groups], None]:
    """``run`` with :func:`newsclean.transforms.metadata.htmldate_published` finding no date (the chain then takes
    dates from the structured data only)."""
    def run_without(groups: Groups) -> None:
        saved = metadata.htmldate_published
        metadata.htmldate_published = lambda root: None
        try:
            run(groups)
        finally:
            metadata.htmldate_published = saved
    return run_without


def models_config(folder: Path):
    """The default configuration with the model and lexicon files found in ``folder`` (same names as the
    shipped ones, :data:`newsclean.transforms.classifier.model.DEFAULT_MODEL` and its siblings; a missing one stays
    the shipped file)."""
    files = {field: folder / default.name for field, default in (
        ("model_path", learned.DEFAULT_MODEL), ("context_model_path", learned.DEFAULT_CONTEXT_MODEL),
        ("lexicon_path", learned.DEFAULT_LEXICON))}
    config = CONFIGS["default"]
    return config.with_(learned=replace(config.learned, **{k: str(f) for k, f in files.items() if f.is_file()}))


def lxml_runner(groups: Groups) -> None:
    for htmls in groups.values():
        for html in htmls:
            try:
                lxml.html.document_fromstring(html)
            except (ValueError, lxml.etree.ParserError):
                pass


def trafilatura_runner(with_metadata: bool = False) -> Callable[[Groups], None] | None:
    """``trafilatura.extract`` of every page, with its defaults (text only) or with ``with_metadata=True`` (title,
    date by htmldate, authors and the rest read as well: the work the chain does, which always reads a page's
    metadata); None when trafilatura is not installed."""
    try:
        import trafilatura
    except ImportError:
        return None

    def run(groups: Groups) -> None:
        for htmls in groups.values():
            for html in htmls:
                trafilatura.extract(html, with_metadata=with_metadata)
    return run


def measure(systems: dict[str, Callable[[Groups], None]], groups: Groups, rounds: int) -> dict[str, float]:
    """Median pages/s of each system over ``rounds`` rounds. Within a round the systems take turns group by
    group (the order rotating), so that a busy spell of a shared machine slows them alike."""
    n = sum(map(len, groups.values()))
    for run in systems.values():
        run({k: v[:1] for k, v in list(groups.items())[:20]})  # warm-up: imports, model loading
    names = list(systems)
    times: dict[str, list[float]] = defaultdict(list)
    for _ in range(rounds):
        spent = dict.fromkeys(names, 0.0)
        for i, (key, htmls) in enumerate(groups.items()):
            for name in names[i % len(names):] + names[:i % len(names)]:
                t0 = time.perf_counter()
                systems[name]({key: htmls})
                spent[name] += time.perf_counter() - t0
        for name, seconds in spent.items():
            times[name].append(seconds)
    return {name: n / statistics.median(ts) for name, ts in times.items()}


# Stage functions of the chain (module, attribute, stage label), wrapped by timers in stage_table().
STAGES = (
    (chain, "parse_html", "parse"), (chain, "read_metadata", "metadata"), (chain, "apply_link_filter", "link filter"),
    (chain, "mark_static_noise", "static noise mark"), (chain, "mark_dynamic_noise", "dynamic noise mark"),
    (chain, "remove_noise", "noise removal"), (chain, "remove_non_informative", "non-informative removal"),
    (chain, "extract_blocks", "text blocks"), (learned, "block_features", "block features"),
    (learned, "context_groups", "stage-2 context"), (learned, "context_features", "stage-2 context"),
    (chain, "blocks_text", "output text"), (chain, "cleaned_html", "output HTML"),
    (site_evidence, "learn_site_evidence", "site evidence learning"),
    (chain, "refine_keep", "page-level steps"), (chain, "page_type", "page type"), (chain, "block_roles", "roles"),
    (chain, "byline_names", "bylines"),
)


def stage_table(groups: Groups, config=CONFIGS["default"]) -> list[tuple[str, float]]:
    """(stage, ms per page) of one pass of ``config`` over ``groups``, stages as :data:`STAGES` plus the
    two model predictions; ``other`` is the rest of the chain's time."""
    spent: dict[str, float] = defaultdict(float)
    saved = [(mod, attr, getattr(mod, attr)) for mod, attr, _ in STAGES]
    predict = learned.ModelEnsemble.predict

    def timed(fn, label):
        def wrapper(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[label] += time.perf_counter() - t0
        return wrapper

    def timed_predict(self, rows, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return predict(self, rows, *args, **kwargs)
        finally:
            stage2 = self.feature_names[-len(learned.CONTEXT_FEATURE_NAMES):] == learned.CONTEXT_FEATURE_NAMES
            spent["stage-2 predict" if stage2 else "stage-1 predict"] += time.perf_counter() - t0

    try:
        for mod, attr, label in STAGES:
            setattr(mod, attr, timed(getattr(mod, attr), label))
        learned.ModelEnsemble.predict = timed_predict
        t0 = time.perf_counter()
        chain_runner(config)(groups)
        total = time.perf_counter() - t0
    finally:
        for mod, attr, fn in saved:
            setattr(mod, attr, fn)
        learned.ModelEnsemble.predict = predict
    n = sum(map(len, groups.values()))
    rows = sorted(spent.items(), key=lambda kv: -kv[1])
    rows.append(("other", total - sum(spent.values())))
    return [(label, 1000 * s / n) for label, s in rows] + [("total", 1000 * total / n)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="all", help=f"comma list of data sets (default all: {', '.join(LOADERS)})")
    ap.add_argument("--pages", type=int, help="at most N pages per data set (default all)")
    ap.add_argument("--rounds", type=int, default=3, help="timed rounds per system; the median counts (default 3)")
    ap.add_argument("--no-stages", action="store_true", help="skip the per-stage table of the default chain")
    ap.add_argument("--peer-metadata", action="store_true", help="also time trafilatura reading metadata "
                    "(with_metadata=True: the same work as the chain, which always reads it); the target stays "
                    "against trafilatura's defaults")
    ap.add_argument("--without-htmldate", action="store_true", help="also time the default chain with htmldate's "
                    "date search left out (dates from the structured data only): what htmldate costs in place")
    ap.add_argument("--models", type=Path, metavar="DIR", help="also run the default chain with the model files "
                    "of DIR (block_classifier*.txt.gz, boilerplate_lexicon.tsv.gz; a missing one: the shipped one)")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    datasets = list(LOADERS) if args.datasets == "all" else args.datasets.split(",")
    groups = load_groups(datasets, args.pages)
    systems = {"lxml parse": lxml_runner, "default": chain_runner(CONFIGS["default"]),
               "paper": chain_runner(CONFIGS["paper"])}
    if kernel.enabled():
        systems[PYTHON_DEFAULT] = python_reference(chain_runner(CONFIGS["default"]))
    if args.without_htmldate:
        systems[WITHOUT_HTMLDATE] = without_htmldate(chain_runner(CONFIGS["default"]))
    if args.models:
        systems[f"default ({args.models})"] = chain_runner(models_config(args.models))
    traf = trafilatura_runner()
    if traf:
        systems["trafilatura"] = traf
        if args.peer_metadata:
            systems[PEER_METADATA] = trafilatura_runner(with_metadata=True)
    rates = measure(systems, groups, args.rounds)
    n = sum(map(len, groups.values()))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{n} pages ({', '.join(datasets)}), one process, median of {args.rounds} rounds; load average {load:.2f}")
    for name, rate in rates.items():
        print(f"  {name:{max(12, *map(len, rates))}s} {rate:8.1f} pages/s")
    if traf:
        print(f"default / trafilatura: x{rates['default'] / rates['trafilatura']:.2f} (target x3)")
        if PYTHON_DEFAULT in rates:
            print(f"{PYTHON_DEFAULT} / trafilatura: x{rates[PYTHON_DEFAULT] / rates['trafilatura']:.2f}")
        if PEER_METADATA in rates:
            print(f"default / {PEER_METADATA}: x{rates['default'] / rates[PEER_METADATA]:.2f} (same work; not the target)")
        if WITHOUT_HTMLDATE in rates:
            print(f"{WITHOUT_HTMLDATE} / trafilatura: x{rates[WITHOUT_HTMLDATE] / rates['trafilatura']:.2f} (not a setting)")
        if args.models:
            print(f"default ({args.models}) / trafilatura: x{rates[f'default ({args.models})'] / rates['trafilatura']:.2f}")
    print(f"default / lxml parse: x{rates['default'] / rates['lxml parse']:.3f}")
    if not args.no_stages:
        compiled = dict(stage_table(groups))
        print("\ndefault chain, ms per page by stage (one instrumented pass each):")
        if kernel.enabled():
            with kernel.python_only():
                reference = dict(stage_table(groups))
            print(f"  {'stage':26s} {'kernel':>7s} {'Python':>7s}")
            for label, ms in compiled.items():
                print(f"  {label:26s} {ms:7.2f} {reference.get(label, 0.0):7.2f}")
        else:
            for label, ms in compiled.items():
                print(f"  {label:26s} {ms:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
