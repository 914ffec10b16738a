"""Throughput of the cleaning chain's configurations against trafilatura, on real pages (run by hand).

    python bench/bench_chain.py [--dataset msv-big9] [--pages 90] [--repeat 2]

One process, one core: pages are decoded once up front, static noise is learnt per neighbour
group (counted in the chain's time), then each system extracts every page ``--repeat`` times.
Prints pages/s per system and the ratio to the baseline (trafilatura when installed, else the
``paper`` configuration) measured in the same run.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from newsclean.transforms.chain import CONFIGS, extract_article, learn_static_noise  # noqa: E402
from newsclean.transforms.errors import ExtractionError  # noqa: E402
from newsclean.transforms.parse import decode_html  # noqa: E402
from newsclean_eval.datasets import load  # noqa: E402


def chain_runner(config):
    def run(groups):
        for htmls in groups.values():
            signature = learn_static_noise(htmls[:10])
            for html in htmls:
                try:
                    extract_article(html, signature, config)
                except ExtractionError:
                    pass
    return run


def trafilatura_runner():
    try:
        import trafilatura
    except ImportError:
        return None

    def run(groups):
        for htmls in groups.values():
            for html in htmls:
                trafilatura.extract(html)
    return run


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="msv-big9")
    ap.add_argument("--pages", type=int, default=90)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    groups: dict[str, list[str]] = defaultdict(list)
    for page in load(args.dataset)[: args.pages]:
        groups[page.group].append(decode_html(page.html)[0])
    n = sum(map(len, groups.values())) * args.repeat
    systems = {name: chain_runner(cfg) for name, cfg in CONFIGS.items() if name != "learned"}
    traf = trafilatura_runner()
    if traf:
        systems["trafilatura"] = traf
    baseline = "trafilatura" if traf else "paper"
    rates = {}
    for name, run in systems.items():
        run({k: v[:1] for k, v in groups.items()})  # warm-up: imports, model loading
        t0 = time.perf_counter()
        for _ in range(args.repeat):
            run(groups)
        rates[name] = n / (time.perf_counter() - t0)
    print(f"{n} page extractions ({args.dataset}), one process")
    for name, rate in rates.items():
        print(f"{name:12s} {rate:7.1f} pages/s   x{rate / rates[baseline]:.2f} vs {baseline}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
