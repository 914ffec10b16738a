"""Cost of the per-site evidence (issue #17, transforms/site_profile.py) on real pages (run by hand).

    python bench/bench_site_profile.py [--datasets msv-big9,dragnet,cleanportaleval] [--neighbours 10] [--rounds 3] [--vote]

One process: pages are decoded once up front (untimed). Per neighbour group, the signature is learnt from
its first N pages without and with the site profile (``learn_static_noise(..., profile=None)`` vs the
default); the difference is the profile's learning cost, printed per neighbour page learnt from and per
page cleaned (the group's learning spread over its pages, as ``newsclean eval`` charges it). Then, on
every page, the site feature group (:func:`~newsclean.transforms.site_profile.site_features`) is timed
against all block features (:func:`~newsclean.transforms.features.block_features`). Median of ``--rounds``;
also the profile's size (bytes stored, pickled). Times are this process's CPU time (``time.process_time``),
not wall time: on a shared machine the wall clock also counts the other processes' turns.

``--vote``: also the site vote's learning (:func:`~newsclean.transforms.site_signature.learn_site_signature` with the
default chain plus ``SiteVoteParams()``, each neighbour parsed once) against the static signature and profile
alone, and against learning the vote by parsing each neighbour again (``prepare_blocks`` from the HTML), per
neighbour page and per page cleaned; and the vote's size.
"""

from __future__ import annotations

import argparse
import pickle
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from newsclean.transforms.chain import DEFAULT_CONFIG, LEARNED_CONFIG, prepare_blocks  # noqa: E402
from newsclean.transforms.errors import ExtractionError  # noqa: E402
from newsclean.transforms.features import PageContext, block_features  # noqa: E402
from newsclean.transforms.learned import content_probabilities  # noqa: E402
from newsclean.transforms.parse import decode_html  # noqa: E402
from newsclean.transforms.site_profile import site_features  # noqa: E402
from newsclean.transforms.site_signature import learn_site_signature  # noqa: E402
from newsclean.transforms.site_vote import SiteVoteParams, learn_site_vote, page_vote  # noqa: E402
from newsclean.transforms.static_noise import learn_static_noise  # noqa: E402
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


VOTE_CONFIG = DEFAULT_CONFIG.with_(learned=replace(DEFAULT_CONFIG.learned, site_vote=SiteVoteParams()))


def vote_reparsed(sample: list[str]):
    """The site vote learnt the naive way: the signature, then every neighbour parsed again by the chain."""
    sig = learn_static_noise(sample)
    votes = []
    for html in sample:
        try:
            page = prepare_blocks(html, sig, VOTE_CONFIG)
        except ExtractionError:
            continue
        votes.append(page_vote(page.blocks, content_probabilities(page.blocks, page.context(sig), VOTE_CONFIG.learned)))
    return learn_site_vote(votes, VOTE_CONFIG.learned.site_vote)


def bench(dataset: str, n: int, rounds: int, vote: bool = False) -> None:
    groups = groups_of(dataset)
    learnt = cleaned = 0
    t_plain = t_site = t_feats = t_all = t_vote = t_reparse = 0.0
    sizes, pickled, vote_sizes = [], [], []
    if vote:
        learn_site_signature(next(iter(groups.values()))[:2], VOTE_CONFIG)  # load the models untimed
    for htmls in groups.values():
        sample = htmls[:n]
        tp, _ = timed(rounds, learn_static_noise, sample, profile=None)
        ts, sig = timed(rounds, learn_static_noise, sample)
        t_plain, t_site = t_plain + tp, t_site + ts
        if vote:
            tv, vsig = timed(rounds, learn_site_signature, sample, VOTE_CONFIG)
            t_vote += tv
            t_reparse += timed(rounds, vote_reparsed, sample)[0]
            if vsig.profile is not None and vsig.profile.vote is not None:
                vote_sizes.append(vsig.profile.vote.nbytes())
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
    if vote:
        print(f"  site vote: learning + {1000 * (t_vote - t_site) / learnt:.1f} ms per neighbour page over the profile "
              f"({1000 * (t_vote - t_site) / cleaned:.1f} ms per page cleaned); parsing each neighbour again instead: "
              f"+ {1000 * (t_reparse - t_site) / learnt:.1f} ms per neighbour page")
        if vote_sizes:
            print(f"  vote size: median {statistics.median(vote_sizes):.0f} B, max {max(vote_sizes)} B")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="msv-big9,dragnet,cleanportaleval")
    ap.add_argument("--neighbours", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--vote", action="store_true", help="also time learning the site vote")
    args = ap.parse_args()
    for dataset in args.datasets.split(","):
        bench(dataset, args.neighbours, args.rounds, args.vote)
    return 0


if __name__ == "__main__":
    sys.exit(main())
