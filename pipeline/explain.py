"""``newsclean explain PAGE [--neighbours DIR]``: write the per-stage report of one page.

PAGE is an HTML file. ``--neighbours DIR`` names a folder of HTML files from the same site and
category (``*.htm``, ``*.html``, searched recursively); up to ``--neighbour-sample`` of them
(smallest names first) teach the static-noise signature, as the pipeline does with neighbour
pages. The report (:mod:`newsclean.transforms.explain`) goes to ``--out`` (default ``PAGE.explain.html``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from newsclean.pipeline.errors import NewscleanError, UsageError

EXPLAIN_DESCRIPTION = (
    "Write one self-contained HTML report of PAGE that shows, over the page's own text, what each stage "
    "removed (static noise, dynamic noise, non-informative tags, boilerplate, ancestor filter or learned "
    "classifier) in distinct colours and what was kept, with counts per stage."
)


def add_explain_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``newsclean explain``."""
    from newsclean.transforms.chain import CONFIGS

    parser.add_argument("page", metavar="PAGE", help="HTML file of the page to explain")
    parser.add_argument("--neighbours", metavar="DIR", help="folder of HTML pages of the same site and category "
                        "(static noise is learnt from them; without it the static stage is skipped)")
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


def cmd_explain(args: argparse.Namespace) -> int:
    """Run ``newsclean explain``; prints where the report went and the words per label. Returns 0."""
    from newsclean.transforms.chain import CONFIGS, learn_static_noise
    from newsclean.transforms.errors import ExtractionError
    from newsclean.transforms.explain import explain_page

    page = Path(args.page)
    signature = None
    if args.neighbours:
        files = neighbour_files(Path(args.neighbours), page, args.neighbour_sample)
        signature = learn_static_noise([_read(f, args.charset) for f in files])
        print(f"static noise: {len(signature)} node keys learnt from {signature.pages} neighbour pages")
    try:
        report = explain_page(_read(page, args.charset), signature, CONFIGS[args.chain], source=str(page))
    except ExtractionError as exc:
        raise NewscleanError(f"{page}: {exc.message}") from None
    out = Path(args.out) if args.out else page.with_name(page.name + ".explain.html")
    out.write_text(report.html, encoding="utf-8")
    print(f"report written to {out}")
    print("words: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in report.words.items()))
    return 0
