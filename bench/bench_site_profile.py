"""Cost of the site profile (transforms/site_profile.py) on real pages (run by hand).

    python bench/bench_site_profile.py [--datasets msv-big9,dragnet,cleanportaleval] [--neighbours 10] [--rounds 3]

One process: pages are decoded once up front (untimed). Per neighbour group, the signature is learnt from
its first N pages without and with the site profile (``learn_site_evidence(..., profile=None)`` vs the
default); the difference is the profile's learning cost, printed per neighbour page learnt from and per
page cleaned (the group's learning spread over its pages, as ``newsclean eval`` charges it). Then, on
every page, the site feature group (:func:`~newsclean.transforms.classifier.features.site_features`) is timed
against all block features (:func:`~newsclean.transforms.classifier.features.block_features`). Median of ``--rounds``;
also the profile's size (bytes stored, pickled). Times are this process's CPU time (``time.process_time``),
not wall time: on a shared machine the wall clock also counts the other processes' turns.
"""

from __future__ import annotations

import argparse
import pickle
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from newsclean.transforms.chain import LEARNED_CONFIG, prepare_blocks  # noqa: E402
from newsclean.transforms.classifier.features import block_features, site_features  # noqa: E402
from newsclean.transforms.context import PageContext  # noqa: E402
from newsclean.transforms.errors import ExtractionError  # noqa: E402
from newsclean.transforms.parse import decode_html  # noqa: E402
from newsclean.transforms.site_evidence import learn_site_evidence  # noqa: E402
from newsclean_eval.datasets import load  # noqa: E402


def groups_of(dataset: str) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = defaultdict(list)
    for page in load(dataset):
        try:
            groups[page.group].append(decode_html(page.html)[0])
        except ExtractionError:
            continue
    return {g: h for g, h in groups.items() if len(h) > 1}


def timed(rounds: int, fn, *args, **kw) -> tuple[float, object]:
    """Median CPU seconds of ``fn(*args, **kw)`` over ``rounds`` calls, and its result."""
    times, out = [], None
    for _ in range(rounds):
        start = time.process_time()
        out = fn(*args, **kw)
        times.append(time.process_time() - start)
    return statistics.median(times), out


def bench(dataset: str, n: int, rounds: int) -> None:
    groups = groups_of(dataset)
    learnt = cleaned = 0
    t_plain = t_site = t_feats = t_all = 0.0
    sizes, pickled = [], []
    for htmls in groups.values():
        sample = htmls[:n]
        tp, _ = timed(rounds, learn_site_evidence, sample, profile=None)
        ts, sig = timed(rounds, learn_site_evidence, sample)
        t_plain, t_site = t_plain + tp, t_site + ts
        learnt, cleaned = learnt + len(sample), cleaned + len(htmls)
        if sig.profile is not None:
            sizes.append(sig.profile.nbytes())
            pickled.append(len(pickle.dumps(sig.profile)))
        for html in htmls:
            try:
                page = prepare_blocks(html, sig, LEARNED_CONFIG)
            except ExtractionError:
                continue
            ctx = PageContext(page.meta.title, bool(sig), sig.profile)
            t_feats += timed(rounds, site_features, page.blocks, sig.profile)[0]
            t_all += timed(rounds, block_features, page.blocks, ctx)[0]
    extra = t_site - t_plain
    print(f"{dataset}: {len(groups)} groups, {cleaned} pages, N = {n}")
    print(f"  learning: static noise {1000 * t_plain / learnt:.1f} ms, + site profile {1000 * extra / learnt:.1f} ms "
          f"per neighbour page; profile per page cleaned {1000 * extra / cleaned:.1f} ms")
    print(f"  features: site group {1000 * t_feats / cleaned:.2f} ms of all groups {1000 * t_all / cleaned:.1f} ms per page")
    if sizes:
        print(f"  profile size: median {statistics.median(sizes):.0f} B stored, {statistics.median(pickled):.0f} B pickled, "
              f"max {max(pickled)} B")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="msv-big9,dragnet,cleanportaleval")
    ap.add_argument("--neighbours", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    for dataset in args.datasets.split(","):
        bench(dataset, args.neighbours, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
