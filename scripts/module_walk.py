"""Which newsclean modules one page's cleaning passes through, in order (run by hand).

    python scripts/module_walk.py [PAGE.html] [--chain default]

Runs ``newsclean.transforms.chain.extract_article`` on the page (default: a small built-in news page) under a
``sys.setprofile`` hook. Prints the *stage walk*: each call from the chain (``transforms/chain.py``) or from the
page-level step loop (``transforms/refine/__init__.py``) into another newsclean module, in order: the stages of the
chain as its configuration lists them. Then, for every module of that walk, how often the page's cleaning entered
it from another module (at any depth): a stage module entered more than once means some other stage calls back
into it. Shared base modules (text, marks, blocks, the records) are called from everywhere and are listed apart.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from newsclean.transforms import chain  # noqa: E402

PAGE = ("<html><head><title>Council votes on the budget</title></head><body><nav><a href='/'>Home</a> "
        "<a href='/w'>World</a></nav><article><h1>Council votes on the budget</h1>" + "".join(
            f"<p>The council met on day {i} and voted on the budget for the year, after a long debate.</p>"
            for i in range(6)) + "</article><footer>Copyright 2024 Example</footer></body></html>")


BASE = ("newsclean.transforms.text", "newsclean.transforms.marks", "newsclean.transforms.blocks",
        "newsclean.schemas.records", "newsclean.transforms.errors", "newsclean.transforms.context",
        "newsclean.transforms.refine.region", "newsclean.transforms.structure", "newsclean.transforms.site_profile",
        "newsclean.transforms.ancestor_filter")
"""Modules of shared helpers and records, which every stage may call (the ancestor filter's module also gives the
paragraph of a block, :func:`~newsclean.transforms.dom.paragraph_of`)."""
ORCHESTRATORS = ("newsclean.transforms.chain", "newsclean.transforms.refine")


def walk(html: str, config) -> tuple[list[str], dict[str, int], dict[str, int]]:
    """``(stages, calls, entries)``: the modules the chain and the step loop call, in order; per module the number of
    those calls; and per newsclean module the number of times the cleaning of ``html`` entered it from another."""
    stages: list[str] = []
    calls: dict[str, int] = {}
    entries: dict[str, int] = {}

    def hook(frame, event, arg):
        if event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        caller = frame.f_back.f_globals.get("__name__", "") if frame.f_back is not None else ""
        if not module.startswith("newsclean") or module == caller or frame.f_code.co_name.startswith("<"):
            return  # a lambda or comprehension runs its own module's code on another's behalf: no entry
        entries[module] = entries.get(module, 0) + 1
        if caller in ORCHESTRATORS and module not in ORCHESTRATORS:
            calls[module] = calls.get(module, 0) + 1
            if not stages or stages[-1] != module:
                stages.append(module)

    chain.extract_article(html, None, config)  # models loaded before the walk is recorded
    sys.setprofile(hook)
    try:
        chain.extract_article(html, None, config)
    finally:
        sys.setprofile(None)
    return stages, calls, entries


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("page", nargs="?", type=Path)
    ap.add_argument("--chain", default="default")
    args = ap.parse_args(argv)
    html = args.page.read_text(encoding="utf-8", errors="replace") if args.page else PAGE
    stages, calls, entries = walk(html, chain.CONFIGS[args.chain])
    print("stage walk (calls from transforms.chain and the page-level step loop):")
    for n, module in enumerate(stages, 1):
        print(f"  {n:2d}. {module}  (entered {entries[module]}x)")
    again = sorted(m for m in set(stages) if m not in BASE and entries[m] > calls[m])
    print(f"{len(stages)} stage calls, {len(set(stages))} modules; stage modules entered from elsewhere too: "
          f"{', '.join(again) or 'none'}")
    print("base modules: " + ", ".join(f"{m.rsplit('.', 1)[1]} {entries[m]}x" for m in BASE if m in entries))
    return 0


if __name__ == "__main__":
    sys.exit(main())
