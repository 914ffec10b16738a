"""The ``newsclean`` command: crawl news sites into WARC files, clean them into Parquet, or both.

    newsclean crawl --config sites.toml --out DIR
    newsclean clean --warc 'warc/**/*.warc.gz' --out DIR [--neighbour-sample N] [--chain NAME] [beam options]
    newsclean clean --cc-news FROM..TO [--hosts H1,H2] [--cc-news-base URL] [--cc-news-cache DIR] --out DIR [...]
    newsclean run   --config sites.toml --out DIR [--neighbour-sample N] [--chain ...] [beam options]
    newsclean demo  [--out DIR] [--seed N] [beam options]
    newsclean eval  [--quick] [--datasets LIST] [--configs LIST] [--peers LIST] [--split all|tune|test] [--out MD]
    newsclean explain PAGE [--neighbours DIR] [--neighbour-sample N] [--chain NAME] [--out FILE]
    newsclean extract PAGE|URL|- [--format text|json|markdown] [--chain NAME] [--url URL] [--min-words N]
    newsclean report OUT [--html FILE] [beam options]
    newsclean summarize OUT [beam options]

Beam options are any flags of Beam's ``PipelineOptions`` (``--runner DataflowRunner
--project P --region R --temp_location gs://...``, ``--direct_running_mode multi_processing``,
...); the default runner is DirectRunner. Exit status: 0 success; 1 failure (a one-line message
on stderr, e.g. a ``--warc`` glob that matches nothing, WARC files of which no record could be read, an output
folder that cannot be written or a full disk, another run holding the output folder; ``--verbose`` adds the
traceback); 2 usage error (bad flags, an unknown ``--runner``, a missing or invalid sites.toml); 3 (``extract``) a
page that is no article; 130 interrupted.

This module is the application layer: it is the one place that reaches the crawler
(:mod:`newsclean.crawler`), the pipeline (:mod:`newsclean.pipeline`), the demo (:mod:`newsclean.demo`) and,
through the ``newsclean.commands`` entry point group, the evaluation harness; none of them imports it.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import urlsplit

from newsclean.pipeline.errors import NewscleanError, UsageError, first_line

if TYPE_CHECKING:
    from newsclean.transforms.site_evidence import SiteEvidence

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2

_EPILOG_BEAM = (
    "Any other --flag is passed to Apache Beam's PipelineOptions, e.g. --runner DataflowRunner "
    "--project P --region R --temp_location gs://B/tmp --setup_file ./setup.py, or "
    "--runner FlinkRunner --flink_master HOST:8081, or --direct_running_mode multi_processing "
    "--direct_num_workers 4. Default runner: DirectRunner. See infra/README.md."
)


class _DropNoise(logging.Filter):
    """Drop Beam's import-time 'apitools not found' warning (GCP extras half installed) and, unless ``verbose``,
    the tracebacks Beam's runners log for a failing step: the run's one-line error says what failed
    (``--verbose`` shows them)."""

    def __init__(self, verbose: bool = False):
        super().__init__()
        self.verbose = verbose

    def filter(self, record: logging.LogRecord) -> bool:
        if str(record.msg).startswith("apitools not found"):
            return False
        return self.verbose or not (record.exc_info and record.name.startswith("apache_beam"))


def _setup_logging(verbose: bool) -> None:
    """Log to stderr: WARNING by default, INFO with ``--verbose``.

    Adds a stderr handler only when the root logger has none (an embedding application or
    pytest keeps its own), and filters Beam's import-time noise on every root handler.
    """
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    for handler in root.handlers:
        for old in [f for f in handler.filters if isinstance(f, _DropNoise)]:
            handler.removeFilter(old)
        handler.addFilter(_DropNoise(verbose))
    root.setLevel(logging.INFO if verbose else logging.WARNING)


def _version() -> str:
    """The installed distribution's version (``newsclean --version``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("newsclean")
    except PackageNotFoundError:  # a source tree on sys.path without an install
        from newsclean.schemas.records import PIPELINE_VERSION

        return PIPELINE_VERSION


def describe_product(with_chains: bool = True) -> str:
    """The one-paragraph description of ``newsclean --help``: the crawl, the cleaning and its deduplication, and
    (``with_chains``) the named chain configurations of :data:`newsclean.transforms.chain.CONFIGS`, counted and
    named from there (imports the chain: lxml and numpy, never Beam or Scrapy)."""
    text = ("Crawl news sites into WARC files (Scrapy) and clean them with Apache Beam into an article corpus in "
            "Parquet, with exact and near-duplicate (MinHash LSH) articles removed.")
    if not with_chains:
        return text
    from newsclean.transforms.chain import CONFIGS

    return (f"{text} Cleaning chains (--chain): {len(CONFIGS)} named configurations, {', '.join(CONFIGS)}: "
            "StaDyNoT static/dynamic noise removal, then text blocks (Kohlschütter 2010) kept by Boilerpipe and the "
            "ancestor filter, a learned block classifier or BoilerNet.")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``newsclean`` argument parser (subcommands crawl, clean, run, demo, eval, explain, extract, summarize, report).

    ``command``: give only that subcommand its arguments (the others keep their name and help line), so that
    ``newsclean --help`` or ``newsclean summarize`` imports neither Scrapy nor Beam (``""``: no subcommand's);
    None: every subcommand's.
    """
    def wanted(name: str) -> bool:
        return command is None or command == name

    parser = argparse.ArgumentParser(
        prog="newsclean", description=describe_product(with_chains=command in (None, "", "clean", "run")),
        allow_abbrev=False)
    parser.add_argument("-v", "--verbose", action="store_true", help="log INFO messages and show tracebacks")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    crawl = sub.add_parser(
        "crawl", allow_abbrev=False, help="crawl the sites of a config into WARC files",
        description="Crawl every site and category of a sites.toml into "
                    "DIR/<site>/<category>/<site>-<category>-<UTC stamp>-<serial>.warc.gz "
                    "(robots.txt obeyed, AutoThrottle, size-limited downloads).")
    if wanted("crawl"):
        _add_crawl_arguments(crawl)
    crawl.set_defaults(subparser=crawl)

    clean = sub.add_parser(
        "clean", allow_abbrev=False, help="clean WARC files into articles/ and rejects/ Parquet",
        description="Run the Beam cleaning pipeline: read WARC response records, learn static noise per "
                    "(site, category) from neighbour pages, clean every page with the --chain configuration, drop "
                    "exact and near duplicates (MinHash LSH), and "
                    "write DIR/articles/*.parquet, DIR/rejects/*.parquet (*.jsonl.gz with --format jsonl), DIR/_summary.json "
                    "and the dataset card "
                    "DIR/README.md (the earlier output is replaced only when the run succeeds).",
        epilog=_EPILOG_BEAM)
    if wanted("clean"):
        from newsclean.pipeline.options import add_clean_arguments

        add_clean_arguments(clean, require=True)
    clean.set_defaults(subparser=clean)

    run = sub.add_parser(
        "run", allow_abbrev=False, help="crawl into DIR/warc, then clean into DIR",
        description="newsclean crawl --out DIR/warc, then newsclean clean --warc DIR/warc --out DIR.",
        epilog=_EPILOG_BEAM)
    if wanted("run"):
        from newsclean.pipeline.options import add_clean_arguments

        _add_crawl_arguments(run, out_help="output directory: WARC files go to DIR/warc, Parquet to DIR")
        add_clean_arguments(run, require=False, with_warc=False, with_out=False)
    run.set_defaults(subparser=run)

    demo = sub.add_parser(
        "demo", allow_abbrev=False, help="generate, serve (127.0.0.1), crawl and clean a small news network",
        description="The built-in end-to-end example: needs no network beyond 127.0.0.1. Prints the run "
                    "summary and precision/recall/F1 against the generated article bodies.",
        epilog="Beam options given here are passed to the cleaning step. " + _EPILOG_BEAM)
    demo.add_argument("--out", default="demo-out", metavar="DIR", help="output directory (default: demo-out)")
    demo.add_argument("--seed", type=int, default=0, help="seed of the generated news network (default 0)")
    demo.set_defaults(subparser=demo)

    _add_eval_parser(sub, with_arguments=wanted("eval"))

    explain = sub.add_parser(
        "explain", allow_abbrev=False, help="write an HTML report of what each cleaning stage removed from a page",
        description=EXPLAIN_DESCRIPTION)
    if wanted("explain"):
        add_explain_arguments(explain)
    explain.set_defaults(subparser=explain)

    extract = sub.add_parser("extract", allow_abbrev=False, help="print the article of one page, URL or stdin",
                             description=EXTRACT_DESCRIPTION, epilog=EXTRACT_EPILOG)
    if wanted("extract"):
        add_extract_arguments(extract)
    extract.set_defaults(subparser=extract)

    summarize = sub.add_parser(
        "summarize", allow_abbrev=False, help="publish a --no-wait run's outputs and write OUT/_summary.json",
        description="After 'newsclean clean --no-wait' (or a flex template job) finished: publish its staged "
                    "outputs into OUT and write OUT/_summary.json from what the job wrote; with nothing pending, "
                    "rebuild the summary from OUT. Exit 1 when the job has not finished or the counts do not balance.")
    summarize.add_argument("out", metavar="OUT", help="the output folder of the run (local, s3://... or gs://...; "
                           "Beam flags such as --s3_endpoint_url reach it)")
    summarize.set_defaults(subparser=summarize)

    report = sub.add_parser(
        "report", allow_abbrev=False, help="write a self-contained HTML report of a corpus (plots and totals)",
        description="Write one HTML file describing the corpus in OUT (Parquet or JSON Lines): the totals of "
                    "'newsclean summarize' and plots of articles per site and per day, words per article, "
                    "languages, page types, reject reasons and duplicate cluster sizes, embedded in the file.")
    report.add_argument("out", metavar="OUT", help="the output folder of 'newsclean clean' (local, s3://... or "
                        "gs://...; Beam flags such as --s3_endpoint_url reach it)")
    report.add_argument("--html", metavar="FILE", help="where to write the report (default: OUT/report.html)")
    report.set_defaults(subparser=report)
    return parser


def _add_crawl_arguments(parser: argparse.ArgumentParser, out_help: str | None = None) -> None:
    parser.add_argument("--config", required=True, metavar="SITES_TOML",
                        help="sites config (TOML: [[site]] tables with name, allowed_domains, categories)")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help=out_help or "output directory for the WARC files")
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                        help="Scrapy log level (default INFO)")
    from newsclean.crawler.run import add_crawl_options

    add_crawl_options(parser)  # --jobdir, --refetch-after DAYS, --allow-private-networks


#: The subcommands that take Beam flags: the pipeline's, and those that read an output folder through Beam's
#: filesystems (``--s3_endpoint_url ...`` for an ``s3://`` folder: ``pipeline.output.use_filesystem_options``).
BEAM_FLAG_COMMANDS = ("clean", "run", "demo", "summarize", "report")


def _beam_args(command: str, extras: list[str], out: str | None = None) -> list[str]:
    """Check that ``extras`` are Beam pipeline options (:data:`BEAM_FLAG_COMMANDS`; crawl only into an object store,
    ``out`` a URL, for the upload) or absent (crawl into a local folder)."""
    from newsclean.pipeline.options import unknown_beam_flags

    if not extras:
        return []
    if command not in BEAM_FLAG_COMMANDS and not (command == "crawl" and _is_url(out or "")):
        raise UsageError(f"{command}: unrecognized arguments: {' '.join(extras)}")
    unknown = unknown_beam_flags(extras)
    if unknown:
        raise UsageError(f"{command}: unrecognized arguments (neither newsclean nor Beam options): {' '.join(unknown)}")
    return extras


def _load_sites_config(path: str, args: argparse.Namespace | None = None):
    """Load and validate sites.toml, with the crawl flags of ``args`` applied (``--refetch-after``,
    ``--allow-private-networks``). A missing or invalid file is a usage error (exit 2), as in
    ``python -m newsclean.crawler.run``; the message names the file and the bad key."""
    from newsclean.crawler.config import load_config
    from newsclean.crawler.run import apply_crawl_options

    try:
        config = load_config(path)
        return apply_crawl_options(config, args) if args is not None else config
    except FileNotFoundError:
        raise UsageError(f"config file not found: {path}") from None
    except (OSError, ValueError) as exc:  # newsclean.crawler.config reports every format error as ValueError
        raise UsageError(str(exc)) from None


def _is_url(path: str) -> bool:
    from newsclean.pipeline.output import is_url

    return is_url(str(path))


def warc_folder(out: str) -> str:
    """Where ``newsclean run --out OUT`` crawls to: ``OUT/warc``, joined as a URL for an object store
    (``gs://b/c`` -> ``gs://b/c/warc``; ``pathlib`` would make it the local ``gs:/b/c/warc``)."""
    return f"{out.rstrip('/')}/warc" if _is_url(out) else str(Path(out) / "warc")


def _crawl(config, out, args: argparse.Namespace, beam_args: Sequence[str] = ()):
    """Run the crawl in this process and print its report (also written as JSON next to the WARCs).

    ``out``: a local folder, or an object-store folder (``s3://``, ``gs://``): Scrapy writes locally, so the crawl
    runs into a temporary local folder and its finished WARC files and report are then uploaded through Beam's
    filesystems with ``beam_args`` (``--s3_endpoint_url ...``; :func:`_upload_crawl`).
    ``args``: ``--log-level``, ``--jobdir`` (Scrapy JOBDIR for pause/resume) and ``-s NAME=VALUE`` Scrapy settings.
    Raises UsageError for a malformed ``-s``, NewscleanError when Scrapy fails, stops before running out of work
    or fetched nothing because every start point was refused (:func:`newsclean.crawler.run.crawl_problem`),
    OSError when the upload fails.
    """
    if _is_url(out):
        import tempfile

        with tempfile.TemporaryDirectory(prefix="newsclean-crawl-") as local:
            summary = _crawl(config, local, args)
            _upload_crawl(local, str(out), beam_args)
        return summary
    from newsclean.crawler.run import crawl_problem, parse_setting_overrides, run_crawl

    try:
        settings = parse_setting_overrides(getattr(args, "scrapy_settings", None))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        extra = {"jobdir": args.jobdir} if args.jobdir is not None else {}
        summary = run_crawl(config, out, log_level=args.log_level, settings=settings, **extra)
    except RuntimeError as exc:  # run_crawl's way of reporting a failed crawl
        raise NewscleanError(str(exc).splitlines()[0] if str(exc) else "crawl failed") from exc
    print(summary.format())
    problem = crawl_problem(summary)
    if problem:
        raise NewscleanError(problem)
    return summary


def _upload_crawl(local: str, out: str, beam_args: Sequence[str]) -> None:
    """Upload the WARC files (``*.warc.gz``) and crawl reports (``crawl-report-*.json``) under ``local`` to the
    object-store folder ``out``, keeping ``<site>/<category>/`` (the crawl state database stays behind)."""
    from newsclean.pipeline.output import upload_tree, use_filesystem_options

    use_filesystem_options(beam_args)
    written = upload_tree(local, out, keep=lambda name: name.endswith(".warc.gz") or (
        name.startswith("crawl-report-") and name.endswith(".json")))
    print(f"uploaded {len(written)} files to {out}")


def cmd_crawl(args: argparse.Namespace, beam_args: Sequence[str] = ()) -> int:
    """``newsclean crawl``: crawl into ``--out`` (a local folder, or an object store: :func:`_crawl`)."""
    _crawl(_load_sites_config(args.config, args), args.out, args, beam_args)
    return EXIT_OK


def quiet_workers(beam_args: list[str], verbose: bool) -> list[str]:
    """``beam_args`` plus ``--default_sdk_harness_log_level=ERROR`` unless ``verbose`` or already given.

    Beam's SDK worker processes (``--direct_running_mode multi_processing``, portable runners) log at
    INFO to the terminal, and warn "Discarding unparseable args" for newsclean's own flags, which they
    parse without newsclean's options class; the worker applies this level before it parses the options
    (``apache_beam.runners.worker.sdk_worker_main.create_harness``), so both stay quiet; errors still show.
    """
    if verbose or any(a.startswith("--default_sdk_harness_log_level") for a in beam_args):
        return list(beam_args)
    return [*beam_args, "--default_sdk_harness_log_level=ERROR"]


def _clean(warc: str, out: str, args: argparse.Namespace, beam_args: list[str]) -> int:
    from newsclean.pipeline.clean import run_clean
    from newsclean.pipeline.options import clean_config_from_flags

    config = clean_config_from_flags(args, warc=warc, out=out)
    beam_args = quiet_workers(beam_args, args.verbose)
    if args.no_wait:  # pipeline/launch.py: submit, print the job id, exit
        from newsclean.pipeline.launch import launch_clean

        print(f"job id: {launch_clean(config, beam_args)}\nwhen it is done: newsclean summarize {out}")
        return EXIT_OK
    summary = run_clean(config, beam_args, progress=True)
    if not config.incremental:
        print(summary.format())
        return EXIT_OK
    from newsclean.pipeline.incremental import format_incremental, read_runs

    print(format_incremental(summary, read_runs(out)[-1]))  # this run's reading first, then the corpus's total
    return EXIT_OK


def cmd_clean(args: argparse.Namespace, beam_args: list[str]) -> int:
    """``newsclean clean``: run the Beam pipeline and print the summary."""
    return _clean(args.warc, args.out, args, beam_args)


def cmd_run(args: argparse.Namespace, beam_args: list[str]) -> int:
    """``newsclean run``: crawl into ``OUT/warc``, then clean it into ``OUT``."""
    from newsclean.pipeline.errors import NoInputError
    from newsclean.pipeline.options import clean_config_from_flags

    warc_dir = warc_folder(args.out)
    clean_config_from_flags(args, warc=warc_dir, out=args.out)  # the cleaning flags checked before the crawl
    _crawl(_load_sites_config(args.config, args), warc_dir, args, beam_args)
    try:
        return _clean(warc_dir, args.out, args, beam_args)
    except NoInputError:
        raise NewscleanError(f"the crawl wrote no WARC file under {warc_dir}") from None


def cmd_demo(args: argparse.Namespace, beam_args: list[str]) -> int:
    """``newsclean demo``: the built-in end-to-end example (``newsclean.demo.run.run_demo``)."""
    from newsclean.demo.run import run_demo

    run_demo(Path(args.out), seed=args.seed, clean_args=beam_args)
    return EXIT_OK


# --- newsclean explain ---------------------------------------------------------------------------

EXPLAIN_DESCRIPTION = (
    "Write one self-contained HTML report of PAGE that shows, over the page's own text, what each stage "
    "removed (static noise, dynamic noise, non-informative tags, hidden elements, boilerplate, ancestor filter, "
    "learned classifier, or the site's neighbour evidence) in distinct colours and what was kept, with counts per "
    "stage."
)


def add_explain_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``newsclean explain``."""
    from newsclean.pipeline.options import DEFAULT_NEIGHBOUR_SAMPLE
    from newsclean.transforms.chain import CONFIGS

    parser.add_argument("page", metavar="PAGE", help="HTML file of the page to explain")
    parser.add_argument("--neighbours", metavar="DIR", help="folder of HTML pages of the same site and category "
                        "(static noise and the site profile are learnt from them, as `newsclean clean` learns them for --chain; "
                        "without it the static stage is skipped)")
    parser.add_argument("--neighbour-sample", type=int, default=DEFAULT_NEIGHBOUR_SAMPLE, metavar="N",
                        help=f"neighbour pages to learn from (default {DEFAULT_NEIGHBOUR_SAMPLE}, as StaDyNoT §4)")
    parser.add_argument("--chain", choices=sorted(CONFIGS), default="default", help="chain configuration (default: default)")
    parser.add_argument("--charset", help="charset of the files when they declare none (default: sniffed)")
    parser.add_argument("--out", metavar="FILE", help="report file (default: PAGE.explain.html)")


def _read_html(path: Path, charset: str | None) -> str:
    """The decoded text of the HTML file ``path`` (as the pipeline decodes a body); NewscleanError when it
    cannot be read or decoded."""
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
    """``newsclean explain PAGE``: write the per-stage report of one page (:mod:`newsclean.transforms.explain`)
    to ``--out`` (default ``PAGE.explain.html``); prints where it went and the words per label. Returns 0.

    ``--neighbours DIR`` names a folder of HTML files from the same site and category (``*.htm``, ``*.html``,
    searched recursively); up to ``--neighbour-sample`` of them (smallest paths first) teach the site evidence,
    as the pipeline learns it from neighbour pages."""
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
            evidence = learn_site_evidence([_read_html(f, args.charset) for f in files], config.static)
            print(describe_evidence(evidence))
    try:
        report = explain_page(_read_html(page, args.charset), evidence, config, source=str(page))
    except ExtractionError as exc:
        raise NewscleanError(f"{page}: {exc.message}") from None
    out = Path(args.out) if args.out else page.with_name(page.name + ".explain.html")
    out.write_text(report.html, encoding="utf-8")
    print(f"report written to {out}")
    print("words: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in report.words.items()))
    return 0


# --- newsclean extract ---------------------------------------------------------------------------

#: Exit status of ``newsclean extract`` for a page that was read but is no article (the line names the reject reason).
EXIT_NOT_ARTICLE = 3
#: Largest page ``newsclean extract`` reads, in bytes, after its content coding is removed: the WARC reader's bound on
#: a payload (``newsclean.pipeline.warc_reader.MAX_BODY_BYTES``); a larger page is ``too_large``.
MAX_PAGE_BYTES = 10 * 1024 * 1024
#: Seconds ``newsclean extract URL`` waits to connect, for each read, and for the whole body.
FETCH_TIMEOUT_S = 30.0

EXTRACT_DESCRIPTION = (
    "Clean one page and print its article. PAGE is an HTML file, an http(s) URL (fetched: at most 10 MiB, 30 s) or "
    "- for standard input; its bytes are decoded as 'newsclean clean' decodes a response (BOM, the HTTP charset, "
    "<meta charset>, sniffing). --format text (default): the article text, one paragraph a line. json: one JSON "
    "object in UTF-8, every field of the extraction (title, text, html, published_at and modified_at in ISO 8601, "
    "language, word_count, metadata, counts, is_accessible_for_free, ...: Extraction.to_dict()). markdown: the "
    "title as a '# ' heading (the text's first paragraph left out where it is the title), then the text's "
    "paragraphs separated by blank lines, as plain text: subheadings and list items are paragraphs of their own, "
    "not marked up, and nothing is escaped.")
EXTRACT_EPILOG = (
    "Exit status: 0 the article printed; 1 the page could not be read or fetched (a missing file, a network error, "
    "a timeout); 2 a usage error; 3 the page is no article, with the reject reason 'newsclean clean' would give it "
    "(http_status, not_html, empty_body, decode_error, too_large, parse_error, no_content, too_short, not_article: "
    "a listing page).")


def add_extract_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``newsclean extract``."""
    from newsclean.transforms.chain import CONFIGS, MIN_ARTICLE_WORDS

    parser.add_argument("page", metavar="PAGE", help="an HTML file, an http(s) URL, or - for standard input")
    parser.add_argument("--format", choices=("text", "json", "markdown"), default="text",
                        help="what to print (default: text)")
    parser.add_argument("--chain", choices=sorted(CONFIGS), default="default", help="chain configuration (default: default)")
    parser.add_argument("--url", metavar="URL", help="the page's address: resolves its relative image and canonical "
                        "URLs and gives its domain (default: the URL fetched, after redirects; none for a file or -)")
    parser.add_argument("--min-words", type=int, default=MIN_ARTICLE_WORDS, metavar="N",
                        help=f"fewer words is too_short (default {MIN_ARTICLE_WORDS}; 0: any text)")


class PageBytes(NamedTuple):
    """A page as read: ``body`` (bytes, content coding removed), its ``mime_type`` (lower-cased; a file or standard
    input is taken as ``text/html``), the HTTP ``charset`` (None: not given) and the ``url`` it came from (None: a
    file or standard input)."""

    body: bytes
    mime_type: str
    charset: str | None
    url: str | None


def read_page(source: str) -> PageBytes:
    """The page ``source`` names: ``-`` (standard input), an http(s) URL (:func:`fetch_page`) or a file path.

    Raises :class:`NewscleanError` when it cannot be read, ``ExtractionError`` (``too_large``) over
    :data:`MAX_PAGE_BYTES`."""
    if source == "-":
        return PageBytes(_read_bounded(sys.stdin.buffer, "standard input"), "text/html", None, None)
    if urlsplit(source).scheme.lower() in ("http", "https"):
        return fetch_page(source)
    try:
        with open(source, "rb") as f:
            return PageBytes(_read_bounded(f, source), "text/html", None, None)
    except OSError as exc:
        raise NewscleanError(f"cannot read {source}: {exc.strerror or exc}") from None


def _read_bounded(stream, name: str) -> bytes:
    data = stream.read(MAX_PAGE_BYTES + 1)
    if len(data) > MAX_PAGE_BYTES:
        _too_large(name)
    return data


def _too_large(name: str):
    from newsclean.schemas.records import RejectReason
    from newsclean.transforms.errors import ExtractionError

    raise ExtractionError(RejectReason.TOO_LARGE, f"{name} holds over {MAX_PAGE_BYTES} bytes")


def fetch_page(url: str) -> PageBytes:
    """GET ``url`` with requests (redirects followed, the content coding removed), bounded by
    :data:`FETCH_TIMEOUT_S` seconds and :data:`MAX_PAGE_BYTES` bytes. Raises :class:`NewscleanError` for a network
    error or timeout, ``ExtractionError`` for a status other than 200 (``http_status``) or a body over the bound."""
    import requests

    from newsclean.schemas.records import RejectReason
    from newsclean.transforms.errors import ExtractionError
    from newsclean.transforms.parse import parse_content_type

    deadline = time.monotonic() + FETCH_TIMEOUT_S
    headers = {"User-Agent": f"newsclean/{_version()} (newsclean extract)"}
    try:
        with requests.get(url, timeout=FETCH_TIMEOUT_S, stream=True, headers=headers) as response:
            if response.status_code != 200:
                raise ExtractionError(RejectReason.HTTP_STATUS, f"HTTP status {response.status_code} from {response.url}")
            chunks, size = [], 0
            for chunk in response.iter_content(64 * 1024):
                size += len(chunk)
                if size > MAX_PAGE_BYTES:
                    _too_large(url)
                if time.monotonic() > deadline:
                    raise NewscleanError(f"cannot fetch {url}: no whole body within {FETCH_TIMEOUT_S:g} s")
                chunks.append(chunk)
            mime, charset = parse_content_type(response.headers.get("Content-Type"))
            return PageBytes(b"".join(chunks), mime, charset, response.url)
    except requests.RequestException as exc:
        raise NewscleanError(f"cannot fetch {url}: {os_error_line(OSError(str(exc)))}") from None


def extract_page(page: PageBytes, url: str | None, chain: str, min_words: int):
    """The :class:`~newsclean.transforms.chain.Extraction` of ``page`` as the pipeline makes an article row: refused
    as no HTML page (:func:`~newsclean.transforms.parse.html_refusal`), decoded with its HTTP charset
    (:func:`~newsclean.transforms.parse.decode_html`), cleaned by :func:`newsclean.extract` with ``url`` (None: the
    page's own), and refused as ``not_article`` when its structure is a listing. Raises ``ExtractionError``."""
    import newsclean
    from newsclean.schemas.contract import PageType
    from newsclean.schemas.records import RejectReason
    from newsclean.transforms.errors import ExtractionError
    from newsclean.transforms.parse import decode_html, html_refusal

    refusal = html_refusal(page.body, page.mime_type)
    if refusal:
        raise ExtractionError(*refusal)
    text = decode_html(page.body, page.charset)[0]
    extraction = newsclean.extract(text, url=url or page.url, chain=chain, min_words=min_words)
    if extraction.page_type == PageType.LISTING:
        raise ExtractionError(RejectReason.NOT_ARTICLE, "the page's structure is a listing (repeated cards, links, "
                                                        "og:type, JSON-LD @type)")
    return extraction


def render_extraction(extraction, form: str) -> str:
    """What ``newsclean extract --format form`` prints (``text``, ``json`` or ``markdown``: :data:`EXTRACT_DESCRIPTION`),
    ending in a newline."""
    if form == "json":
        return json.dumps(extraction.to_dict(), ensure_ascii=False) + "\n"
    if form == "markdown":
        paragraphs = [p for p in extraction.text.splitlines() if p.strip()]
        if not extraction.title:
            return "\n\n".join(paragraphs) + "\n"
        if paragraphs and paragraphs[0].split() == extraction.title.split():
            paragraphs = paragraphs[1:]  # the headline the text starts with is the heading
        return "\n\n".join([f"# {extraction.title}", *paragraphs]) + "\n"
    return extraction.text + "\n"


def cmd_extract(args: argparse.Namespace) -> int:
    """``newsclean extract PAGE``: print the article of one page (:func:`read_page`, :func:`extract_page`,
    :func:`render_extraction`) in UTF-8 on stdout. Returns 0, or :data:`EXIT_NOT_ARTICLE` with one line on stderr
    for a page that is no article; raises :class:`NewscleanError` for one that cannot be read, UsageError for a
    negative ``--min-words``."""
    from newsclean.transforms.errors import ExtractionError

    if args.min_words < 0:
        raise UsageError(f"--min-words {args.min_words}: give 0 or more")
    try:
        extraction = extract_page(read_page(args.page), args.url, args.chain, args.min_words)
    except ExtractionError as exc:
        print(f"newsclean: error: {args.page}: no article ({exc.reason.value}): {exc.message}", file=sys.stderr)
        return EXIT_NOT_ARTICLE
    out = render_extraction(extraction, args.format)
    stream = getattr(sys.stdout, "buffer", None)
    if stream is None:  # a text stream without bytes underneath (an embedding application's)
        sys.stdout.write(out)
        return EXIT_OK
    sys.stdout.flush()
    stream.write(out.encode("utf-8"))
    stream.flush()
    return EXIT_OK


#: What ``newsclean eval`` says where the evaluation harness (a separate distribution) is not installed.
EVAL_MISSING = ("newsclean eval needs the evaluation harness, which the newsclean wheel does not ship: "
                "from a source checkout, pip install -e ./evaluation (or make eval)")


#: Entry-point group through which another distribution adds a subcommand (the product never imports it):
#: the evaluation harness declares ``eval = "newsclean_eval.command"`` there (evaluation/pyproject.toml).
COMMANDS_GROUP = "newsclean.commands"


def plugin_command(name: str):
    """The module registered as subcommand ``name`` in :data:`COMMANDS_GROUP`, or None when no installed
    distribution registers it. The module provides ``add_eval_arguments(parser)``,
    ``cmd_eval(args, argv) -> int``, ``EVAL_DESCRIPTION`` and ``EVAL_EPILOG``."""
    from importlib.metadata import entry_points

    for entry in entry_points(group=COMMANDS_GROUP, name=name):
        return entry.load()
    return None


def _add_eval_parser(sub, with_arguments: bool = True) -> None:
    """The ``eval`` subcommand: the harness's own arguments when it is installed (and ``with_arguments``: the
    harness is imported only then), else a stub whose run explains how to install it."""
    from importlib.metadata import entry_points

    if not with_arguments and entry_points(group=COMMANDS_GROUP, name="eval"):
        sub.add_parser("eval", help="measure the chain, its ablations and peer extractors on the shared data")
        return
    harness = plugin_command("eval")
    if harness is None:
        evaluate = sub.add_parser("eval", help="(needs the evaluation harness: pip install -e ./evaluation)",
                                  description=EVAL_MISSING)
        evaluate.set_defaults(subparser=evaluate)
        return
    evaluate = sub.add_parser(
        "eval", allow_abbrev=False, help="measure the chain, its ablations and peer extractors on the shared data",
        description=harness.EVAL_DESCRIPTION, epilog=harness.EVAL_EPILOG)
    harness.add_eval_arguments(evaluate)
    evaluate.set_defaults(subparser=evaluate)


def cmd_eval(args: argparse.Namespace, argv: Sequence[str]) -> int:
    """``newsclean eval``: measure on the shared data sets (the harness in ``evaluation/``, a separate
    distribution found through :data:`COMMANDS_GROUP`). Raises :class:`UsageError` where it is not installed."""
    harness = plugin_command("eval")
    if harness is None:
        raise UsageError(EVAL_MISSING)
    return harness.cmd_eval(args, argv[argv.index("eval") + 1:] if "eval" in argv else [])


#: Flags of the top-level parser that may also be written after the subcommand (``newsclean clean -v ...``).
GLOBAL_FLAGS = ("-v", "--verbose", "--version")


def hoist_global_flags(argv: list[str]) -> list[str]:
    """``argv`` with :data:`GLOBAL_FLAGS` moved before the subcommand (argparse reads them only there).

    Words after a ``--`` separator are left alone.
    """
    end = argv.index("--") if "--" in argv else len(argv)
    flags = [a for a in argv[:end] if a in GLOBAL_FLAGS]
    rest = [a for a in argv[:end] if a not in GLOBAL_FLAGS]
    return [*dict.fromkeys(flags), *rest, *argv[end:]]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``newsclean`` console script. Returns the exit status (0, 1, 2 or 130)."""
    try:
        return _main(hoist_global_flags(list(sys.argv[1:] if argv is None else argv)))
    except KeyboardInterrupt:  # also while Beam and the parser are being imported
        return _interrupted()


def _main(argv: list[str]) -> int:
    _setup_logging("-v" in argv or "--verbose" in argv)
    if "--version" in argv[:argv.index("--") if "--" in argv else len(argv)]:
        print(f"newsclean {_version()}")
        return EXIT_OK
    parser = build_parser(next((a for a in argv if not a.startswith("-")), ""))
    try:
        args, extras = parser.parse_known_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        return int(exc.code or 0) if isinstance(exc.code, int) or exc.code is None else EXIT_USAGE
    try:
        beam_args = _beam_args(args.command, extras, getattr(args, "out", None))
        if args.command == "crawl":
            return cmd_crawl(args, beam_args)
        if args.command == "clean":
            return cmd_clean(args, beam_args)
        if args.command == "run":
            return cmd_run(args, beam_args)
        if args.command == "eval":
            return cmd_eval(args, argv)
        if args.command == "explain":
            return cmd_explain(args)
        if args.command == "extract":
            return cmd_extract(args)
        if args.command == "summarize":
            from newsclean.pipeline.launch import summarize_out

            print(summarize_out(args.out, beam_args=beam_args).format())
            return EXIT_OK
        if args.command == "report":
            from newsclean.pipeline.report import write_report

            print(f"report: {write_report(args.out, args.html, beam_args=beam_args)}")
            return EXIT_OK
        return cmd_demo(args, beam_args)
    except UsageError as exc:  # one line, as every error after parsing (argparse's own errors print the usage)
        print(f"newsclean: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except NewscleanError as exc:
        if args.verbose:
            traceback.print_exc()
        print(f"newsclean: error: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except OSError as exc:  # a full disk, a read-only or missing folder, a filesystem's error (BeamIOError)
        if args.verbose:
            traceback.print_exc()
        print(f"newsclean: error: {os_error_line(exc)}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        return _interrupted()


def os_error_line(exc: OSError) -> str:
    """One line on an ``OSError``: ``"<file>: <strerror>"`` (``"No space left on device"``, ``"Permission
    denied"``, ...) where the error names them, else the first line of its message (at most 300 characters)."""
    if exc.strerror and exc.filename:
        return f"{exc.filename}: {exc.strerror}"
    return exc.strerror[:300] if exc.strerror else first_line(exc)


def _interrupted() -> int:
    """Ctrl-C: one line on stderr, exit status 130 (128 + SIGINT); later log records of runner threads
    that are still shutting down are dropped instead of printing their tracebacks."""
    logging.disable(logging.CRITICAL)
    print("\nnewsclean: interrupted", file=sys.stderr)
    return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
