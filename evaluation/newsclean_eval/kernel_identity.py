"""The compiled kernel against the Python reference on the shared pages: are text, HTML, counts and scores the same?

For every neighbour group of the shared data sets (as ``newsclean eval`` groups them), in one process per group,
both implementations (:mod:`newsclean.transforms.kernel`: the kernel, and the reference forced by
``kernel.python_only``) run

* the site evidence learnt from the group's neighbour sample (static-noise keys and site profile);
* every named chain on every page (``extract_article``: title, text, cleaned HTML, counts, metadata, or the
  reject), and the default chain's page again from a tree parsed up front (as ``bench/bench_chain.py`` hands
  learning's trees to the chain);
* the default chain's text blocks (text, word counts, text density, container, pieces), the noise counts, the
  stage-1 feature matrix, the stage-1 and the stage-2 probabilities, compared bit for bit (read from the page the
  default chain's extraction prepared: ``extract_article`` is ``prepare_blocks`` then ``extract_from_blocks``).

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


def _digest_or_reject(make) -> str:
    """The :func:`extraction_digest` of ``make()``, or its reject or crash as a string (a crash is an output too,
    and must be the same)."""

    try:
        return extraction_digest(make())
    except Exception as exc:  # noqa: BLE001 - a crash is an output too, and must be the same
        return _failure(exc)


def _failure(exc: Exception) -> str:
    """A reject (:class:`~newsclean.transforms.errors.ExtractionError`) or a crash, as the output compared."""
    from newsclean.transforms.errors import ExtractionError

    if isinstance(exc, ExtractionError):
        return f"reject:{exc.reason.value}:{exc.message}"
    return f"crash:{type(exc).__name__}:{exc}"


def _extraction(html: str, evidence, config, root=None) -> str:
    from newsclean.transforms.chain import extract_article

    return _digest_or_reject(lambda: extract_article(html, evidence, config, root=root))


def _default_outputs(html: str, evidence) -> tuple[str, dict | None]:
    """The default chain's extraction (as :func:`_extraction`) and its :func:`_details`, from one
    ``prepare_blocks`` and one classification: ``extract_article`` is ``prepare_blocks`` then
    ``extract_from_blocks``, which takes the probabilities the details computed; the details are read before the
    extraction changes the tree."""
    from newsclean.transforms.chain import DEFAULT_CONFIG, extract_from_blocks, prepare_blocks

    try:
        page = prepare_blocks(html, evidence, DEFAULT_CONFIG)
    except Exception as exc:  # noqa: BLE001 - as _digest_or_reject
        return _failure(exc), None
    details, content = _details(page, html, evidence)
    return _digest_or_reject(lambda: extract_from_blocks(page, html, evidence, DEFAULT_CONFIG,
                                                         probabilities=content)), details


def _details(page, html: str, evidence) -> tuple[dict, list[float] | None]:
    """The default chain's blocks of the prepared ``page`` (container and pieces as paths), noise counts, stage-1
    features and both stages' probabilities (as bytes: compared bit for bit); and the content probabilities
    themselves (None without blocks)."""
    import numpy as np

    from newsclean.transforms.chain import DEFAULT_CONFIG
    from newsclean.transforms.classifier.model import stage_probabilities

    tree = page.root.getroottree()

    def where(el):
        return tree.getpath(el) if isinstance(el.tag, str) else (tree.getpath(el.getparent()), el.getparent().index(el))

    blocks = [(b.text, b.num_words, b.num_linked_words, repr(b.text_density), where(b.container),
               tuple((where(e), s) for e, s in b.pieces)) for b in page.blocks]
    out = {"blocks": blocks, "counts": (page.dynamic_marked, page.removed, page.non_informative)}
    if not page.blocks:
        return out, None
    stages = stage_probabilities(page.blocks, page.context(evidence, html), DEFAULT_CONFIG.learned)
    out["features"] = stages.features.tobytes()
    out["stage1"] = np.asarray(stages.stage1).tobytes()
    out["stage2"] = np.asarray(stages.content).tobytes()
    out["shape"] = stages.features.shape
    return out, list(stages.content)


def _compare_page(tally: Tally, where: str, html: str, evidence, chains: Sequence[str]) -> None:
    """Both implementations on one page's ``html`` (see the module docstring); differences named ``where``."""
    from newsclean.transforms import kernel
    from newsclean.transforms.chain import CONFIGS
    from newsclean.transforms.parse import parse_html

    compiled_outputs, details = {}, []
    for name in chains:
        outputs = []
        for compiled in (False, True):
            with kernel.python_only(not compiled):
                if name == "default":
                    output, page_details = _default_outputs(html, evidence)
                    details.append(page_details)
                else:
                    output = _extraction(html, evidence, CONFIGS[name])
                outputs.append(output)
        tally.extractions += 1
        compiled_outputs[name] = outputs[1]
        if outputs[0] != outputs[1]:
            tally.differences.append(f"{where}\t{name}")
    try:
        root = parse_html(html)
    except Exception:  # noqa: BLE001 - a rejected page: extract_article rejects it alike
        root = None
    # the default chain from the page's HTML, as the loop above computed it with the kernel (or computed here)
    from_html = compiled_outputs.get("default") if kernel.enabled() else None
    if root is not None and _extraction(html, evidence, CONFIGS["default"], root=root) != \
            (from_html or _extraction(html, evidence, CONFIGS["default"])):
        tally.differences.append(f"{where}\tdefault from a tree parsed up front")
    if not details:
        for compiled in (False, True):
            with kernel.python_only(not compiled):
                details.append(_default_outputs(html, evidence)[1])
    _compare_details(tally, where, *details)


def _compare_details(tally: Tally, where: str, reference: dict | None, compiled: dict | None) -> None:
    """Count the reference's blocks, feature values and scores into ``tally``; a difference when the two differ."""
    if reference is not None:
        tally.blocks += len(reference["blocks"])
        if "shape" in reference:
            tally.feature_values += reference["shape"][0] * reference["shape"][1]
            tally.scores += 2 * reference["shape"][0]
    if reference != compiled:
        parts = [k for k in (reference or {}) if (compiled or {}).get(k) != reference[k]] or ["page"]
        tally.differences.append(f"{where}\tdefault {', '.join(parts)}")


def compare_group(task: tuple) -> Tally:
    """Both implementations on one neighbour group (see the module docstring)."""
    from newsclean.transforms import kernel
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
        tally.pages += 1
        if htmls[page.page_id]:
            _compare_page(tally, f"{dataset}\t{page.page_id}", htmls[page.page_id], evidence, chains)
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
