"""``newsclean explain PAGE [--neighbours DIR]``: write the per-stage report of one page.

PAGE is an HTML file. ``--neighbours DIR`` names a folder of HTML files from the same site and
category (``*.htm``, ``*.html``, searched recursively); up to ``--neighbour-sample`` of them
(smallest names first) teach the static-noise signature, as the pipeline does with neighbour
pages. The report (:mod:`newsclean.transforms.explain`) goes to ``--out`` (default ``PAGE.explain.html``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from newsclean.pipeline.errors import NewscleanError, UsageError

if TYPE_CHECKING:
    from newsclean.transforms.site_evidence import SiteEvidence

EXPLAIN_DESCRIPTION = (
    "Write one self-contained HTML report of PAGE that shows, over the page's own text, what each stage "
    "removed (static noise, dynamic noise, non-informative tags, hidden elements, boilerplate, ancestor filter, "
    "learned classifier, or the site's neighbour evidence) in distinct colours and what was kept, with counts per "
    "stage."
)


def add_explain_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``newsclean explain``."""
    from newsclean.transforms.chain import CONFIGS

    parser.add_argument("page", metavar="PAGE", help="HTML file of the page to explain")
    parser.add_argument("--neighbours", metavar="DIR", help="folder of HTML pages of the same site and category "
                        "(static noise and the site profile are learnt from them, as `newsclean clean` learns them for --chain; "
                        "without it the static stage is skipped)")
    parser.add_argument("--neighbour-sample", type=int, default=10, metavar="N",
                        help="neighbour pages to learn from (default 10, as StaDyNoT §4)")
    parser.add_argument("--chain", choices=sorted(CONFIGS), default="default", help="chain configuration (default: default)")
    parser.add_argument("--charset", help="charset of the files when they declare none (default: sniffed)")
    parser.add_argument("--out", metavar="FILE", help="report file (default: PAGE.explain.html)")


def _read(path: Path, charset: str | None) -> str:
    from newsclean.transforms.errors import ExtractionError
    from newsclean.transforms.parse import decode_html

    try:
        return decode_html(path.read_bytes(), charset)[0]
    except OSError as exc:
        raise NewscleanError(f"cannot read {path}: {exc.strerror}") from None
    except ExtractionError as exc:
        raise NewscleanError(f"{path}: {exc.message}") from None


def neighbour_files(folder: Path, page: Path, limit: int) -> list[Path]:
    """Up to ``limit`` HTML files under ``folder`` (sorted by path), ``page`` itself excluded."""
    if not folder.is_dir():
        raise UsageError(f"--neighbours {folder}: not a directory")
    files = sorted(p for p in folder.rglob("*") if p.suffix.lower() in (".htm", ".html") and p.resolve() != page.resolve())
    return files[:limit]


def describe_evidence(evidence: SiteEvidence) -> str:
    """One line on what was learnt from the neighbours: static-noise node keys and, with a site profile, its
    content containers and recurring texts (:class:`~newsclean.transforms.site_profile.SiteProfile`)."""
    line = f"static noise: {len(evidence.static)} node keys learnt from {evidence.pages} neighbour pages"
    profile = evidence.profile
    if profile is not None:
        line += (f"; site profile: {len(profile.content)} content containers, "
                 f"{len(profile.texts())} recurring texts")
    return line


def cmd_explain(args: argparse.Namespace) -> int:
    """Run ``newsclean explain``; prints where the report went and the words per label. Returns 0."""
    from newsclean.transforms.chain import CONFIGS
    from newsclean.transforms.errors import ExtractionError
    from newsclean.transforms.explain import explain_page
    from newsclean.transforms.site_evidence import learn_site_evidence

    page, config = Path(args.page), CONFIGS[args.chain]
    evidence = None
    if args.neighbours:
        if config.static is None:
            print(f"static noise: not learnt (chain {config.name} has no static stage)")
        else:
            files = neighbour_files(Path(args.neighbours), page, args.neighbour_sample)
            evidence = learn_site_evidence([_read(f, args.charset) for f in files], config.static)
            print(describe_evidence(evidence))
    try:
        report = explain_page(_read(page, args.charset), evidence, config, source=str(page))
    except ExtractionError as exc:
        raise NewscleanError(f"{page}: {exc.message}") from None
    out = Path(args.out) if args.out else page.with_name(page.name + ".explain.html")
    out.write_text(report.html, encoding="utf-8")
    print(f"report written to {out}")
    print("words: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in report.words.items()))
    return 0
