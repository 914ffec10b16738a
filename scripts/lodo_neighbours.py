"""Leave-one-data-set-out F1 of the shipped default against the number of neighbour pages.

    nice python scripts/lodo_neighbours.py out/lodo [--sets msv-big9,dragnet,cleanportaleval] [--out FILE.md]

For each per-site set, its *tune* pages are cleaned by the default chain with the classifier of
``DIR/<set>/`` (trained without that set: ``scripts/train_block_classifier.py --holdout-set all``), the
static-noise signature and site profile learnt from N = 1, 2, 5, 10, 20 neighbour pages sampled as
``newsclean eval`` samples them (``newsclean_eval.runner.neighbour_sample``), and, at N = 10, with one piece of
per-site evidence left out at a time (:data:`VARIANTS`: the static-noise marks, the site check, the recurring
texts: the per-site evidence's ablation rows), and with all of it left out where the sampled neighbour pages are
unlike (:func:`sample_alikeness` below a bound: a site whose neighbour pages are other kinds of page). Scoring:
``newsclean_eval.runner.score_text`` (bag-of-words macro F1 over pages). ``--variant TEXT`` (repeatable) runs only
the variants whose label holds one of the texts (labels hold commas, so the texts are not comma-separated).
Prints a Markdown table of F1 (P/R) per variant and set; the trafilatura row is evaluation/results/eval.md's LODO table.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from newsclean.transforms.chain import DEFAULT_CONFIG, blocks_text, prepare_blocks, select_blocks
from newsclean.transforms.errors import ExtractionError
from newsclean.transforms.parse import parse_html
from newsclean.transforms.refine.recurring import RecurringTextParams
from newsclean.transforms.refine.site_check import SiteCheckParams
from newsclean.transforms.site_evidence import learn_site_evidence
from newsclean.transforms.static_noise import distinct_indices, page_keys
from newsclean_eval.datasets import load
from newsclean_eval.metrics import snippet_scores
from newsclean_eval.runner import decode_page, group_pages, neighbour_sample, score_text

SETS = ("msv-big9", "dragnet", "cleanportaleval", "cleaneval", "readability-test-pages", "trafilatura-eval")
TRAFILATURA = {"msv-big9": 0.951, "dragnet": 0.893, "cleanportaleval": 0.925, "cleaneval": 0.874,
               "readability-test-pages": 0.931, "trafilatura-eval": 0.911}  # evaluation/results/eval.md LODO table, tune pages

#: Row label -> (neighbour pages N, the piece of per-site evidence left out or None). At N = 1 no profile is
#: learnt (``SiteProfileParams.min_pages``), so every per-site piece is off there already.
VARIANTS = {f"N = {n}, shipped default": (n, None) for n in (1, 2, 5, 10, 20)}
VARIANTS.update({f"N = 10, no {piece}": (10, piece) for piece in ("static-noise marks", "site check", "recurring texts")})
#: Evidence left out where the sample's :func:`sample_alikeness` is below the bound.
UNLIKE = {f"N = 10, no evidence where alikeness < {bound}": bound for bound in (0.1, 0.2, 0.3)}
VARIANTS.update({label: (10, label) for label in UNLIKE})


def sample_alikeness(htmls: list[str]) -> float | None:
    """How alike a neighbour sample's pages are: the mean Jaccard similarity in [0, 1] of the static-noise key
    sets (:func:`~newsclean.transforms.static_noise.page_keys`) of each pair of its distinct pages
    (:func:`~newsclean.transforms.static_noise.distinct_indices`); None with fewer than two."""
    keys = []
    for html in htmls:
        try:
            keys.append(page_keys(parse_html(html)))
        except ExtractionError:
            continue
    distinct = [keys[i] for i in distinct_indices(keys)]
    pairs = [len(a & b) / len(a | b) for a, b in itertools.combinations(distinct, 2) if a | b]
    return sum(pairs) / len(pairs) if pairs else None


def ablated(config, piece: str | None):
    """``config`` with one piece of per-site evidence left out (an :data:`UNLIKE` variant: as it is; its evidence
    is left out per sample, in :func:`run`)."""
    if piece == "static-noise marks":
        return config.with_(static=None)
    if piece == "site check":
        return config.without_steps(SiteCheckParams)
    if piece == "recurring texts":
        return config.without_steps(RecurringTextParams)
    return config


def extracted_text(html: str, evidence, config) -> str:
    """The chain's text of ``html`` under ``config``, with ``evidence`` (the static-noise signature and site
    profile, or None); '' when the chain rejects the page."""
    try:
        prep = prepare_blocks(html, evidence, config)
        ctx = replace(prep.context(evidence, html), has_signature=bool(evidence) and config.static is not None)
        keep = select_blocks(prep.blocks, config, ctx)
        return blocks_text([b for b, k in zip(prep.blocks, keep) if k])
    except ExtractionError:
        return ""


def run(folder: Path, sets, variants: dict) -> dict:
    results = {}
    for name in sets:
        files = [str(folder / name / f) for f in ("block_classifier.txt.gz", "block_classifier_context.txt.gz",
                                                   "boilerplate_lexicon.tsv.gz")]
        learned = replace(DEFAULT_CONFIG.learned, model_path=files[0], context_model_path=files[1], lexicon_path=files[2])
        base = DEFAULT_CONFIG.with_(learned=learned)
        runs = {v: (n, ablated(base, piece)) for v, (n, piece) in variants.items()}  # label -> (N, config)
        pages = [p for p in load(name) if p.split == "tune"]
        per = {v: [] for v in variants}
        t0 = time.time()
        for group in group_pages(pages).values():
            htmls = {p.page_id: decode_page(p) for p in group}
            sigs, alike = {}, None
            for n in sorted({n for n, _ in variants.values()}):
                sample = [htmls[p.page_id] for p in neighbour_sample(group, n) if htmls[p.page_id]]
                try:
                    sigs[n] = learn_site_evidence(sample, DEFAULT_CONFIG.static)
                except Exception:  # noqa: BLE001 - as the runner does
                    sigs[n] = None
                if n == 10:
                    alike = sample_alikeness(sample)
            unlike = {v: alike is not None and alike < bound for v, bound in UNLIKE.items()}
            for page in group:
                html = htmls[page.page_id]
                outs = {v: extracted_text(html, None if unlike.get(v) else sigs[n], config) if html else ""
                        for v, (n, config) in runs.items()}
                for v, text in outs.items():
                    per[v].append(score_text(page, text, None))
        results[name] = per
        print(f"{name}: {len(pages)} pages in {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    return results


def summarise(per: list) -> tuple[float, float, float]:
    if per and per[0][4] is not None:
        s = snippet_scores([r[4] for r in per])
        return s.precision, s.recall, s.f1
    return tuple(float(np.mean([r[i] for r in per])) for i in (0, 1, 2))  # type: ignore[return-value]


def table(results: dict) -> str:
    sets = list(results)
    lines = ["| variant | " + " | ".join(sets) + " |", "|---|" + "---:|" * len(sets)]
    for v in results[sets[0]]:
        cells = []
        for s in sets:
            p, r, f = summarise(results[s][v])
            cells.append(f"{f:.3f} ({p:.3f}/{r:.3f})")
        lines.append(f"| {v} | " + " | ".join(cells) + " |")
    lines.append("| trafilatura F1 | " + " | ".join(f"{TRAFILATURA[s]:.3f}" for s in sets) + " |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--sets", default="msv-big9,dragnet,cleanportaleval")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--variant", action="append", metavar="TEXT",
                    help="only the variants whose label holds TEXT (repeatable; default: all)")
    args = ap.parse_args()
    texts = args.variant or [""]
    variants = {v: nv for v, nv in VARIANTS.items() if any(t in v for t in texts)}
    text = table(run(args.folder, args.sets.split(","), variants))
    print(text)
    if args.out:
        args.out.write_text(f"LODO tune pages, models {args.folder}; F1 (P/R)\n\n{text}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
