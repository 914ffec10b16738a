"""The compiled kernel against the Python reference on the shared pages: are text, HTML, counts and scores the same?

For every neighbour group of the shared data sets (as ``newsclean eval`` groups them), in one process per group,
both implementations (:mod:`newsclean.transforms.kernel`: the kernel, and the reference forced by
``kernel.python_only``) run

* the site evidence learnt from the group's neighbour sample (static-noise keys and site profile);
* every named chain on every page (``extract_article``: title, text, cleaned HTML, counts, metadata, or the
  reject), and the default chain's page again from a tree parsed up front (as ``bench/bench_chain.py`` hands
  learning's trees to the chain);
* the default chain's text blocks (text, word counts, text density, container, pieces), the noise counts, the
  stage-1 feature matrix, the stage-1 and the stage-2 probabilities, compared bit for bit.

Prints what was compared and every difference; exits 1 on any::

    python -m newsclean_eval.kernel_identity [--datasets all] [--chains all] [--jobs 2] [--every N]

``--every N`` takes every N-th group only (a sample; the test suite runs one). Without the kernel built, it says so
and exits 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from newsclean_eval.datasets import LOADERS, load
from newsclean_eval.fingerprint import extraction_digest
from newsclean_eval.runner import Runner, default_jobs, group_pages, neighbour_sample, quiet_worker
from newsclean_eval.systems import DEFAULT_NEIGHBOURS


@dataclass
class Tally:
    """What one comparison covered and where the two implementations differed."""

    pages: int = 0
    extractions: int = 0
    blocks: int = 0
    feature_values: int = 0
    scores: int = 0
    groups: int = 0
    differences: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        for name in ("pages", "extractions", "blocks", "feature_values", "scores", "groups"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.differences += other.differences


def _extraction(html: str, evidence, config, root=None) -> str:
    from newsclean.transforms.chain import extract_article
    from newsclean.transforms.errors import ExtractionError

    try:
        return extraction_digest(extract_article(html, evidence, config, root=root))
    except ExtractionError as exc:
        return f"reject:{exc.reason.value}:{exc.message}"
    except Exception as exc:  # noqa: BLE001 - a crash is an output too, and must be the same
        return f"crash:{type(exc).__name__}:{exc}"


def _details(html: str, evidence):
    """The default chain's blocks (container and pieces as paths), noise counts, stage-1 features and both stages'
    probabilities (as bytes: compared bit for bit); None for a rejected page."""
    import numpy as np

    from newsclean.transforms.chain import DEFAULT_CONFIG, prepare_blocks
    from newsclean.transforms.classifier.features import block_features
    from newsclean.transforms.classifier.lexicon import load_lexicon
    from newsclean.transforms.classifier.model import DEFAULT_LEXICON, DEFAULT_MODEL, content_probabilities, load_model
    from newsclean.transforms.errors import ExtractionError

    try:
        page = prepare_blocks(html, evidence, DEFAULT_CONFIG)
    except ExtractionError:
        return None
    tree = page.root.getroottree()

    def where(el):
        return tree.getpath(el) if isinstance(el.tag, str) else (tree.getpath(el.getparent()), el.getparent().index(el))

    blocks = [(b.text, b.num_words, b.num_linked_words, repr(b.text_density), where(b.container),
               tuple((where(e), s) for e, s in b.pieces)) for b in page.blocks]
    out = {"blocks": blocks, "counts": (page.dynamic_marked, page.removed, page.non_informative)}
    if page.blocks:
        ctx = page.context(evidence, html)
        stage1 = load_model(str(DEFAULT_MODEL))
        features = block_features(page.blocks, ctx, load_lexicon(str(DEFAULT_LEXICON)), stage1.feature_names)
        out["features"] = features.tobytes()
        out["stage1"] = stage1.predict(features).tobytes()
        out["stage2"] = np.asarray(content_probabilities(page.blocks, ctx, DEFAULT_CONFIG.learned)).tobytes()
        out["shape"] = features.shape
    return out


def compare_group(task: tuple) -> Tally:
    """Both implementations on one neighbour group (see the module docstring)."""
    from newsclean.transforms import kernel
    from newsclean.transforms.chain import CONFIGS
    from newsclean.transforms.parse import parse_html
    from newsclean.transforms.site_evidence import learn_site_evidence
    from newsclean_eval.runner import decode_page

    dataset, pages, chains, neighbours = task
    quiet_worker()
    tally = Tally(groups=1)
    htmls = {p.page_id: decode_page(p) for p in pages}
    sample = [htmls[p.page_id] for p in neighbour_sample(pages, neighbours)] if len(pages) > 1 else []
    learnt = {}
    for compiled in (False, True):
        with kernel.python_only(not compiled):
            learnt[compiled] = learn_site_evidence([h for h in sample if h]) if sample else None
    if learnt[False] != learnt[True]:
        tally.differences.append(f"{dataset}\t{pages[0].group}\tsite evidence")
    evidence = learnt[False]
    for page in pages:
        html = htmls[page.page_id]
        tally.pages += 1
        if not html:
            continue
        compiled_outputs = {}
        for name in chains:
            outputs = []
            for compiled in (False, True):
                with kernel.python_only(not compiled):
                    outputs.append(_extraction(html, evidence, CONFIGS[name]))
            tally.extractions += 1
            compiled_outputs[name] = outputs[1]
            if outputs[0] != outputs[1]:
                tally.differences.append(f"{dataset}\t{page.page_id}\t{name}")
        try:
            root = parse_html(html)
        except Exception:  # noqa: BLE001 - a rejected page: extract_article rejects it alike
            root = None
        # the default chain from the page's HTML, as the loop above computed it with the kernel (or computed here)
        from_html = compiled_outputs.get("default") if kernel.enabled() else None
        if root is not None and _extraction(html, evidence, CONFIGS["default"], root=root) != \
                (from_html or _extraction(html, evidence, CONFIGS["default"])):
            tally.differences.append(f"{dataset}\t{page.page_id}\tdefault from a tree parsed up front")
        details = []
        for compiled in (False, True):
            with kernel.python_only(not compiled):
                details.append(_details(html, evidence))
        reference, compiled_details = details
        if reference is not None:
            tally.blocks += len(reference["blocks"])
            if "shape" in reference:
                tally.feature_values += reference["shape"][0] * reference["shape"][1]
                tally.scores += 2 * reference["shape"][0]
        if reference != compiled_details:
            parts = [k for k in (reference or {}) if (compiled_details or {}).get(k) != reference[k]] or ["page"]
            tally.differences.append(f"{dataset}\t{page.page_id}\tdefault {', '.join(parts)}")
    return tally


def compare_all(datasets: Sequence[str], chains: Sequence[str], jobs: int, every: int = 1,
                neighbours: int = DEFAULT_NEIGHBOURS) -> Tally:
    """:func:`compare_group` over every ``every``-th neighbour group of ``datasets``, summed."""
    tasks = []
    for dataset in datasets:
        for k, pages in enumerate(group_pages(load(dataset)).values()):
            if k % every == 0:
                tasks.append((dataset, tuple(pages), tuple(chains), neighbours))
    tasks.sort(key=lambda t: -len(t[1]))
    total = Tally()
    with Runner(jobs, progress=lambda line: None) as runner:
        results = runner.pool.imap_unordered(compare_group, tasks) if runner.pool else map(compare_group, tasks)
        for tally in results:
            total.add(tally)
    total.differences.sort()
    return total


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m newsclean_eval.kernel_identity", description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default="all", help="comma-separated data sets, or all")
    parser.add_argument("--chains", default="all", help="comma-separated chain names, or all")
    parser.add_argument("--jobs", type=int, default=default_jobs())
    parser.add_argument("--every", type=int, default=1, help="every N-th neighbour group only (default: all)")
    args = parser.parse_args(argv)
    from newsclean.transforms import kernel
    from newsclean.transforms.chain import CONFIGS

    if not kernel.available():
        print("the compiled kernel is not built here (pip install . with a C compiler builds it)", file=sys.stderr)
        return 2
    datasets = list(LOADERS) if args.datasets == "all" else args.datasets.split(",")
    chains = list(CONFIGS) if args.chains == "all" else args.chains.split(",")
    tally = compare_all(datasets, chains, args.jobs, args.every)
    for line in tally.differences[:50]:
        print(line)
    print(f"{tally.groups} groups, {tally.pages} pages: {tally.extractions} extractions ({len(chains)} chains), "
          f"{tally.blocks} blocks, {tally.feature_values} feature values, {tally.scores} probabilities compared; "
          f"{len(tally.differences)} differences", file=sys.stderr)
    return 1 if tally.differences else 0


if __name__ == "__main__":
    sys.exit(main())
