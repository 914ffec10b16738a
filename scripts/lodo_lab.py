"""A fast leave-one-data-set-out experiment harness: many chain variants, one preparation per page.

    nice python scripts/lodo_lab.py out/lodo --variants my_variants.py [--sets all] [--split tune] [--jobs 2]
        [--out /tmp/lab.pkl] [--show 10]

Every page of the chosen sets and split is parsed, marked and cut into text blocks once per distinct preparation
(the variants' configurations with ``refine`` cleared), scored once by the classifier that never saw its set
(``DIR/<set>/``, as ``newsclean eval --lodo``), and then each variant's page-level steps run on the same blocks and
probabilities. Static noise and the site profile come from the N = 10 neighbour pages that ``newsclean eval``
samples (``newsclean_eval.runner.neighbour_sample``). Scores: ``newsclean_eval.runner.score_text`` (bag-of-words
macro F1 over pages; snippet micro F1 on trafilatura-eval), per set, per era (``newsclean_eval.datasets.page_era``)
and against trafilatura and resiliparse (their texts cached in ``--peer-cache``).

``--variants FILE``: a Python file defining ``variants(base) -> dict[str, ChainConfig]`` (``base``: the default chain
with the set's LODO classifier; the first entry is the reference the per-page differences are listed against).
Without it: the shipped default and, for each kind of page-level step, the default without it.
The variants' ``text_includes`` is honoured (``newsclean.transforms.chain.assemble``).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import pickle
import sys
import time
from collections import defaultdict
from multiprocessing import get_context
from pathlib import Path

import numpy as np

from newsclean.transforms.chain import DEFAULT_CONFIG, assemble, prepare_blocks
from newsclean.transforms.classifier.model import content_probabilities, keep_flags
from newsclean.transforms.errors import ExtractionError
from newsclean.transforms.refine import refine_keep
from newsclean.transforms.site_evidence import learn_site_evidence
from newsclean_eval.command import lodo_system
from newsclean_eval.datasets import LOADERS, load, page_era
from newsclean_eval.metrics import snippet_scores
from newsclean_eval.runner import decode_page, group_pages, neighbour_sample, quiet_worker, score_text
from newsclean_eval.systems import PEERS, STEP_ROWS, crossfit_systems

LAB_PEERS = ("trafilatura", "resiliparse")
DEFAULT_PEER_CACHE = Path("/tmp/newsclean-lab-peers")


def default_variants(base):
    """The shipped default and the default without each kind of page-level step."""
    out = {"default": base}
    for kind, (row, _, _) in STEP_ROWS.items():
        if base.step(kind) is not None:
            out[f"no-{row}"] = base.without_steps(kind)
    return out


def base_config(lodo: Path, dataset: str):
    """The default chain with the classifier of ``lodo/<dataset>/``; ``lodo`` named ``crossfit``: the cross-fitted
    model trained on the test half (a quicker proxy for tune pages while LODO models train)."""
    if str(lodo) == "crossfit":
        return crossfit_systems()[0].tune_config
    return lodo_system(lodo, dataset).config


def load_variants(path: Path | None):
    if path is None:
        return default_variants
    spec = importlib.util.spec_from_file_location("lab_variants", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.variants


def _prep_key(config) -> str:
    """What of ``config`` the preparation and the classifier read (variants equal on it share them)."""
    return repr([getattr(config, f) for f in ("link_filter", "static", "dynamic", "removal", "blocks", "learned")])


def run_group(task):
    """Every variant on every page of one neighbour group: ``[(page key, era, {variant: score tuple})]``."""
    dataset, pages, variants_path, lodo = task
    variants = load_variants(variants_path)(base_config(lodo, dataset))
    htmls = {p.page_id: decode_page(p) for p in pages}
    static = DEFAULT_CONFIG.static
    sample = neighbour_sample(pages, 10)
    try:
        evidence = learn_site_evidence([htmls[p.page_id] for p in sample if htmls[p.page_id]], static)
    except Exception:  # noqa: BLE001 - as the runner does
        evidence = None
    preps = defaultdict(list)
    for name, config in variants.items():
        preps[_prep_key(config)].append(name)
    out = []
    for page in pages:
        html = htmls[page.page_id]
        scores, meta = {}, None
        for names in preps.values():
            prep = None
            if html:
                try:
                    prep = prepare_blocks(html, evidence, variants[names[0]])
                except ExtractionError:
                    prep = None
            if prep is not None:
                meta = prep.meta
                ctx = prep.context(evidence, html)
                probs = content_probabilities(prep.blocks, ctx, variants[names[0]].learned)
            for name in names:
                config = variants[name]
                text, kind = "", "rejected"
                if prep is not None:
                    keep = refine_keep(prep.blocks, probs, keep_flags(probs, config.learned), ctx, config.refine)
                    parts = assemble(prep, keep, config)
                    text, kind = parts.text, parts.page_type
                p, r, f1, n, snips = score_text(page, text, None)
                scores[name] = (p, r, f1, n, snips, text, kind)
        out.append(((dataset, page.page_id), page.split, page_era(page, meta.published_at if meta else None), scores))
    return out


def peer_texts(dataset: str, pages, cache: Path) -> dict[str, dict[str, str]]:
    """``{peer: {page id: text}}`` of :data:`LAB_PEERS`, from ``cache/<dataset>.json`` or computed and stored there."""
    path = cache / f"{dataset}.json"
    if path.exists():
        return json.loads(path.read_text())
    quiet_worker()
    out = {name: {} for name in LAB_PEERS}
    for page in pages:
        html = decode_page(page)
        for name in LAB_PEERS:
            try:
                out[name][page.page_id] = (PEERS[name].run(html) or "") if html else ""
            except Exception:  # noqa: BLE001 - scored as empty, as the runner does
                out[name][page.page_id] = ""
    cache.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out))
    return out


def summarise(rows) -> tuple[float, float, float, int]:
    """``(P, R, F1, pages)`` of score tuples (macro for text gold, micro for snippet gold)."""
    if not rows:
        return (float("nan"),) * 3 + (0,)
    if rows[0][4] is not None:
        s = snippet_scores([r[4] for r in rows])
        return s.precision, s.recall, s.f1, len(rows)
    return (*(float(np.mean([r[i] for r in rows])) for i in (0, 1, 2)), len(rows))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("lodo", type=Path)
    ap.add_argument("--variants", type=Path)
    ap.add_argument("--sets", default="all")
    ap.add_argument("--split", default="tune", choices=("tune", "test", "all"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--show", type=int, default=0, help="list the N pages each variant changes most")
    ap.add_argument("--peer-cache", type=Path, default=DEFAULT_PEER_CACHE)
    ap.add_argument("--max-groups", type=int)
    ap.add_argument("--peers-only", action="store_true", help="fill the peer cache and stop")
    args = ap.parse_args()
    sets = list(LOADERS) if args.sets == "all" else args.sets.split(",")
    t0 = time.time()
    tasks, peers, pages_by_key = [], {}, {}
    for name in sets:
        every = load(name)
        pages = [p for p in every if args.split == "all" or p.split == args.split]
        pages_by_key.update({(name, p.page_id): p for p in pages})
        groups = list(group_pages(pages).values())[: args.max_groups]
        tasks += [(name, tuple(g), args.variants, args.lodo) for g in groups]
        peers[name] = peer_texts(name, every, args.peer_cache)
    if args.peers_only:
        return 0
    tasks.sort(key=lambda t: -len(t[1]))
    with get_context("forkserver").Pool(args.jobs, initializer=quiet_worker) as pool:
        results = [r for group in pool.imap_unordered(run_group, tasks) for r in group]
    print(f"{len(results)} pages in {time.time() - t0:.0f} s", file=sys.stderr)
    for key, _, _, scores in results:
        page = pages_by_key[key]
        for peer in LAB_PEERS:
            text = peers[key[0]][peer].get(page.page_id, "")
            scores[peer] = (*score_text(page, text, None), text, "")
    names = list(results[0][3]) if results else []
    report = table(results, names, sets)
    print(report)
    if args.show:
        print(changes(results, names, pages_by_key, args.show))
    if args.out:
        with args.out.open("wb") as fh:
            pickle.dump(results, fh)
    return 0


def table(results, names, sets) -> str:
    """F1 (P/R) per variant and set, then per era (pages before 2015, 2015 and after, undated)."""
    lines = []
    cols = [(s, None) for s in sets] + [(s, e) for s in sets for e in ("before 2015", "2015+")]
    head = [f"{s}" if e is None else f"{s} {e}" for s, e in cols]
    lines.append("| variant | " + " | ".join(head) + " |")
    lines.append("|---|" + "---:|" * len(cols))
    for name in names:
        cells = []
        for s, e in cols:
            rows = [sc[name] for (d, _), _, era, sc in results if d == s and (e is None or era == e)]
            p, r, f, n = summarise(rows)
            cells.append("–" if not n else f"{f:.4f} ({p:.3f}/{r:.3f}) n={n}" if e else f"{f:.4f} ({p:.3f}/{r:.3f})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("\npage types (article/listing/other/rejected) per variant and set:")
    for name in names:
        if name in LAB_PEERS:
            continue
        cells = []
        for s in sets:
            kinds = [sc[name][6] for (d, _), _, _, sc in results if d == s]
            cells.append(f"{s} " + "/".join(str(kinds.count(k)) for k in ("article", "listing", "other", "rejected")))
        lines.append(f"  {name}: " + "; ".join(cells))
    return "\n".join(lines)


def changes(results, names, pages_by_key, show: int) -> str:
    """Per variant, the pages whose F1 moved most against the first variant."""
    ref = names[0]
    out = []
    for name in names[1:]:
        if name in LAB_PEERS:
            continue
        moved = [(sc[name][2] - sc[ref][2], key) for key, _, _, sc in results if sc[name][2] != sc[ref][2]]
        moved.sort()
        gain = sum(d for d, _ in moved)
        out.append(f"\n{name} vs {ref}: {len(moved)} pages changed, summed ΔF1 {gain:+.3f}")
        for d, key in moved[:show] + moved[-show:] if len(moved) > 2 * show else moved:
            out.append(f"  {d:+.3f} {key[0]} {key[1]}")
    return "\n".join(out)


def digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:10]


if __name__ == "__main__":
    sys.exit(main())
