"""Command-line options of the cleaning pipeline, shared by ``newsclean clean`` and Beam.

newsclean's own flags are ``--warc GLOB --out DIR --neighbour-sample N --chain NAME --min-words N --languages CODES``, ...
(:func:`add_clean_arguments`); :func:`clean_config_from_flags` turns them into a :class:`CleanConfig` (the one builder,
for ``newsclean clean`` and for Beam's options), whose ``chain`` is the run's :class:`ChainConfig`, resolved once.
Every other flag is a Beam pipeline option (``--runner``,
``--direct_running_mode``, ``--project``, ``--temp_location``, ...). DirectRunner is the default.

:class:`NewscleanOptions` registers newsclean's flags with Beam's options machinery, so that a
plain ``PipelineOptions(argv).view_as(NewscleanOptions)`` works too (e.g. from a Dataflow
template or a notebook). None of its flags is ``required`` there: Beam parses every registered
options class for every pipeline in the process, and a required flag would break unrelated
pipelines. :class:`CleanConfig` checks them instead.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from datetime import datetime

from apache_beam.options.pipeline_options import PipelineOptions, _BeamArgumentParser

from newsclean.pipeline.cc_news import CC_NEWS_BASE, CCNewsInput, parse_date_range
from newsclean.pipeline.errors import UsageError
from newsclean.pipeline.formats import OUTPUT_FORMATS
from newsclean.pipeline.warc_reader import without_www
from newsclean.transforms.chain import CONFIGS as CHAIN_CONFIGS  # the names ``--chain`` accepts
from newsclean.transforms.chain import DEFAULT_TEXT_INCLUDES, MIN_ARTICLE_WORDS, ChainConfig, named_config
from newsclean.transforms.roles import TEXT_PARTS

#: StaDyNoT §4 learns static noise from 10 neighbour pages per site.
DEFAULT_NEIGHBOUR_SAMPLE = 10
#: ``--batch-mib``: WARC MiB of one batch of a local run whose runner newsclean chooses (pipeline/batches.py), and
#: the input size above which such a run goes in batches: the 37 MiB shared corpus runs as one graph
#: (docs/runners.md has the measurements).
DEFAULT_BATCH_MIB = 128


def _int_at_least(minimum: int):
    """An argparse ``type``: the text as an integer >= ``minimum``, else ``ArgumentTypeError``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


_positive_int = _int_at_least(1)
_non_negative_int = _int_at_least(0)


def chain_choices_help() -> str:
    """Every ``--chain`` name with its one-line summary (:attr:`ChainConfig.summary`), ``default`` first."""
    names = sorted(CHAIN_CONFIGS, key=lambda name: (name != "default", name))
    return "; ".join(f"'{name}' ({CHAIN_CONFIGS[name].summary})" for name in names)


def add_clean_arguments(parser: argparse.ArgumentParser, *, require: bool = False,
                        with_warc: bool = True, with_out: bool = True) -> None:
    """Add newsclean's pipeline flags to ``parser``.

    Args:
        parser: an ``argparse`` parser (or Beam's ``_BeamArgumentParser``).
        require: make ``--warc`` and ``--out`` required (the CLI); False for Beam's registry.
        with_warc: add ``--warc`` (``newsclean run`` derives it from ``--out`` instead).
        with_out: add ``--out`` (``newsclean run`` has its own).
    """
    if with_warc:
        source = parser.add_mutually_exclusive_group(required=require)
        source.add_argument(
            "--warc", dest="warc", metavar="GLOB",
            help="WARC files to read: a glob ('warc/**/*.warc.gz'; '**/' also matches no directory), "
                 "a single file, or a directory (= every *.warc.gz and *.warc below it). Local paths or gs://, s3://, ... URLs.")
        add_cc_news_arguments(parser, source)
    if with_out:
        parser.add_argument(
            "--out", dest="out", required=require, metavar="DIR",
            help="output directory (local or gs://...): articles/*.parquet, rejects/*.parquet, _summary.json, "
                 "README.md (dataset card). Earlier outputs are replaced only when the run succeeds.")
    parser.add_argument(
        "--hosts", dest="hosts", type=_host_list, default=(), metavar="HOSTS",
        help="read only the response records whose WARC-Target-URI host is one of these comma-separated hosts or "
             "a subdomain of one ('bbc.co.uk' takes www.bbc.co.uk and news.bbc.co.uk; a leading 'www.' is dropped); "
             "the others are counted as skipped 'outside_hosts' (default: every host)")
    parser.add_argument(
        "--neighbour-sample", "--neighbour_sample", dest="neighbour_sample", type=_positive_int,
        default=DEFAULT_NEIGHBOUR_SAMPLE, metavar="N",
        help="neighbour pages sampled per (site, category) to learn static noise "
             f"(default {DEFAULT_NEIGHBOUR_SAMPLE}, as in StaDyNoT §4)")
    parser.add_argument(
        "--chain", dest="chain", choices=sorted(CHAIN_CONFIGS), default="default",
        help="cleaning chain configuration: " + chain_choices_help())
    parser.add_argument(
        "--min-words", "--min_words", dest="min_words", type=_non_negative_int, default=MIN_ARTICLE_WORDS,
        metavar="N",
        help=f"corpus filter: a page whose cleaned text has fewer than N words becomes a 'too_short' reject "
             f"(default {MIN_ARTICLE_WORDS}; 0 keeps every non-empty extraction)")
    parser.add_argument(
        "--languages", dest="languages", type=_language_codes, default=None, metavar="CODES",
        help="corpus filter: keep only articles whose identified language (the 'language' column, py3langid 0.4: "
             "ISO 639-1 two-letter codes for 114 languages, ISO 639-3 three-letter ones for 25 others, 'zxx' for "
             "no language) is one of these comma-separated codes, e.g. en,de; the others become 'language' rejects, "
             "and so does an article whose language could not be identified (no letters): a corpus asked for in "
             "these languages takes no unknown ones unseen (default: no filter)")
    parser.add_argument(
        "--text-includes", "--text_includes", dest="text_includes", type=_text_parts, default=None,
        metavar="PARTS",
        help="what the text column holds besides the article body: a comma list of 'captions' (image captions "
             "and credits) and 'lead' (standfirst, dek, key points), in page order, or 'none' (the body only); "
             f"default: the chain's ({','.join(DEFAULT_TEXT_INCLUDES)}); both are always in their own columns")
    parser.add_argument(
        "--keep-listings", "--keep_listings", dest="keep_listings", type=_flag_value, nargs="?", const=True,
        default=False,
        help="keep the listing pages of WARC files without a crawler page type (Common Crawl: section fronts, "
             "portals) as rows whose text is one item a line (default: 'not_article' rejects)")
    parser.add_argument(
        "--batch-mib", "--batch_mib", dest="batch_mib", type=_non_negative_int, default=DEFAULT_BATCH_MIB,
        metavar="N",
        help="local runs without --runner or --direct_* flags: an input of more than N MiB of WARC files is "
             "cleaned in batches of files of at most N MiB, so memory follows the batch, not the corpus; the rows "
             f"are those of one run (default {DEFAULT_BATCH_MIB}; 0: always one run)")
    parser.add_argument(
        "--format", "--output-format", "--output_format", dest="output_format", choices=OUTPUT_FORMATS,
        default=OUTPUT_FORMATS[0],
        help="how articles/, rejects/ and duplicates/ are stored: 'parquet' (part-*.parquet, the default) or "
             "'jsonl' (gzip-compressed JSON Lines, part-*.jsonl.gz: one row a line, the Parquet columns' fields, "
             "timestamps ISO 8601 UTC)")
    parser.add_argument(
        "--partition-by", "--partition_by", dest="partition_by", choices=["crawl_date", "site"], default=None,
        help="write articles/ Hive-partitioned: articles/crawl_date=YYYY-MM-DD/ (UTC fetch day) or "
             "articles/site=NAME/ (default: not partitioned)")
    # Scale-out flags (pipeline/incremental.py, pipeline/launch.py). `--flag` or `--flag=true|false`
    # (a Dataflow flex template passes every parameter with a value).
    parser.add_argument(
        "--incremental", dest="incremental", type=_flag_value, nargs="?", const=True, default=False,
        help="clean only WARC files not yet listed in OUT/_manifest, append to the corpus and dedup (exact and "
             "near) against it; the same URL with changed text becomes a new version")
    parser.add_argument(
        "--allow-mixed-settings", "--allow_mixed_settings", dest="allow_mixed_settings", type=_flag_value,
        nargs="?", const=True, default=False,
        help="with --incremental: append to a corpus made with other settings (chain, --min-words, "
             "--neighbour-sample, --languages, model files, newsclean version); each run's files and manifest line keep its own")
    parser.add_argument(
        "--wait-for-lock", "--wait_for_lock", dest="wait_for_lock", type=_flag_value, nargs="?", const=True,
        default=False,
        help="when another run is writing into --out (its lock OUT/.clean.lock), wait for it to end instead of "
             "refusing to start")
    parser.add_argument(
        "--no-wait", "--no_wait", dest="no_wait", type=_flag_value, nargs="?", const=True, default=False,
        help="submit the job, print its id and exit; 'newsclean summarize OUT' publishes the outputs afterwards")


def add_cc_news_arguments(parser: argparse.ArgumentParser, source) -> None:
    """Add ``--cc-news FROM..TO`` to ``source`` (the group of ``--warc``, which it excludes) and ``--cc-news-base``,
    ``--cc-news-cache`` to ``parser`` (:mod:`newsclean.pipeline.cc_news`)."""
    source.add_argument(
        "--cc-news", "--cc_news", dest="cc_news", type=_date_range, default=None, metavar="FROM..TO",
        help="read Common Crawl's news crawl instead of --warc: the WARC files of the CC-NEWS monthly listings "
             "(crawl-data/CC-NEWS/YYYY/MM/warc.paths.gz) whose file-name time stamp (UTC) lies in FROM..TO, each "
             "YYYY-MM-DD or YYYY-MM, both included; over http(s) downloaded into --cc-news-cache first")
    parser.add_argument(
        "--cc-news-base", "--cc_news_base", dest="cc_news_base", default=None, metavar="URL",
        help=f"where CC-NEWS's crawl-data/ lies: an http(s) URL (default {CC_NEWS_BASE}) or s3://commoncrawl/ "
             "(read in place by Beam's S3 filesystem)")
    parser.add_argument(
        "--cc-news-cache", "--cc_news_cache", dest="cc_news_cache", default=None, metavar="DIR",
        help="folder of the downloaded CC-NEWS WARC files; a file already complete there is not fetched again "
             "(default $XDG_CACHE_HOME/newsclean-cc-news or ~/.cache/newsclean-cc-news)")


def _date_range(text: str) -> tuple[datetime, datetime]:
    """argparse type of ``--cc-news``: :func:`~newsclean.pipeline.cc_news.parse_date_range`."""
    try:
        return parse_date_range(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


_HOST = re.compile(r"^[\w-]+(\.[\w-]+)*$")


def _host_list(text: str) -> tuple[str, ...]:
    """argparse type of ``--hosts``: comma-separated host names, lower-cased, a trailing dot and a leading ``www.``
    dropped (:func:`~newsclean.pipeline.warc_reader.without_www`); ``ArgumentTypeError`` for a URL or an empty list."""
    hosts = tuple(without_www(h.strip().strip(".").lower()) for h in text.split(",") if h.strip().strip("."))
    bad = [h for h in hosts if not _HOST.match(h)]
    if bad or not hosts:
        raise argparse.ArgumentTypeError(f"give host names such as bbc.co.uk,example.com, got {text!r}")
    return hosts


def _text_parts(text: str) -> tuple[str, ...]:
    """argparse type of ``--text-includes``: a comma list of :data:`~newsclean.transforms.roles.TEXT_PARTS`, or
    ``none`` (the body only: an empty tuple)."""
    parts = tuple(p.strip() for p in text.split(",") if p.strip() and p.strip() != "none")
    unknown = [p for p in parts if p not in TEXT_PARTS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown {', '.join(unknown)}; choose from {', '.join(TEXT_PARTS)}")
    return parts


def _language_codes(text: str) -> tuple[str, ...]:
    """argparse type of ``--languages``: a comma list of language codes, lowercased (checked by
    :class:`CleanConfig`)."""
    return tuple(code.strip().lower() for code in text.split(",") if code.strip())


def _check_languages(languages: tuple[str, ...]) -> None:
    """Raises :class:`UsageError` naming the first code of ``languages`` (``--languages``) that the language
    identifier never returns (:func:`~newsclean.transforms.metadata.language_labels`), or when it is empty."""
    if not languages:
        raise UsageError("--languages is empty: give language codes, e.g. en,de")
    from newsclean.transforms.metadata import language_labels  # loads the identifier's model: only when filtering

    labels = language_labels()
    unknown = [code for code in languages if code not in labels]
    if unknown:
        raise UsageError(f"--languages: {unknown[0]!r} is not a code the language identifier returns; "
                         f"its {len(labels)} codes: {', '.join(sorted(labels))}")


def _flag_value(text: str) -> bool:
    """argparse type of an optional flag value: true/false, yes/no, 1/0."""
    value = text.strip().lower()
    if value in ("true", "yes", "1"):
        return True
    if value in ("false", "no", "0"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


class NewscleanOptions(PipelineOptions):
    """Beam ``PipelineOptions`` view holding newsclean's flags (see :func:`add_clean_arguments`)."""

    @classmethod
    def _add_argparse_args(cls, parser: _BeamArgumentParser) -> None:
        add_clean_arguments(parser, require=False)


@dataclass(frozen=True)
class CleanConfig:
    """What the cleaning pipeline needs besides the runner options.

    Attributes:
        warc: glob, file or directory of WARC files (see ``--warc``).
        out: output directory, local path or filesystem URL.
        neighbour_sample: neighbour pages sampled per (site, category), >= 1.
        chain: the chain as the run's workers run it: given as a key of :data:`CHAIN_CONFIGS` (``--chain``) or a
            :class:`ChainConfig` (a custom chain), held after construction as the effective :class:`ChainConfig`,
            ``text_includes`` and ``keep_listings`` applied (:func:`effective_chain`; a copy made with
            ``dataclasses.replace`` keeps it and looks nothing up again).
        min_words: the corpus filter, in words: a page whose cleaned text is shorter becomes a
            ``too_short`` reject (0: none). The chain extracts; what is long enough to keep is the pipeline's call.
        languages: the language filter (``--languages``), sorted codes of
            :func:`~newsclean.transforms.metadata.language_labels`: an article whose identified ``language`` is
            not one of them, or is None (not identified), becomes a ``language`` reject; None: no filter.
        batch_bytes: ``--batch-mib`` in bytes: a local run whose runner newsclean chooses and whose WARC files
            hold more goes in batches of files of at most this size (pipeline/batches.py; 0: always one graph).
            The rows do not depend on it, so it is not among the run's settings.
        output_format: ``--format``: how ``articles/``, ``rejects/`` and ``duplicates/`` are stored, ``parquet`` or
            ``jsonl`` (:mod:`newsclean.pipeline.formats`).
        read_from: ``(path, byte offset)`` pairs: the records of such a file are read from that offset on (the
            tail a WARC file grew by since an incremental run cleaned it: pipeline/incremental.py); others whole.
        cc_news: ``--cc-news``: the CC-NEWS files to read instead of ``warc`` (:mod:`newsclean.pipeline.cc_news`;
            ``warc`` is then empty); None: ``warc``.
        hosts: ``--hosts``: host names (lower-case, no leading ``www.``); a response record whose
            ``WARC-Target-URI`` host is none of them nor a subdomain of one is a counted skip (``outside_hosts``),
            not a row; ``()``: every host. Among the run's settings (``pipeline.incremental.run_settings``).

    Raises:
        UsageError: a missing ``warc``/``out`` (or both ``warc`` and ``cc_news``), a value out of range, an unknown
            chain, a language code the identifier never returns.
    """

    warc: str
    out: str
    neighbour_sample: int = DEFAULT_NEIGHBOUR_SAMPLE
    chain: ChainConfig | str = "default"  # a ChainConfig once constructed (effective_chain)
    min_words: int = MIN_ARTICLE_WORDS
    partition_by: str | None = None  # None, "crawl_date" or "site" (pipeline/output.py)
    incremental: bool = False  # --incremental: pipeline/incremental.py
    wait_for_lock: bool = False  # --wait-for-lock: pipeline/output.py
    allow_mixed_settings: bool = False  # --allow-mixed-settings: pipeline/incremental.py
    text_includes: tuple[str, ...] | None = None  # --text-includes: captions, lead (None: the chain's own)
    languages: tuple[str, ...] | None = None  # --languages: the language filter (None: none)
    keep_listings: bool = False  # --keep-listings: a foreign WARC's listing pages kept as rows
    batch_bytes: int = DEFAULT_BATCH_MIB << 20  # --batch-mib, in bytes: pipeline/batches.py
    output_format: str = OUTPUT_FORMATS[0]  # --format: pipeline/formats.py
    read_from: tuple[tuple[str, int], ...] = ()  # set by incremental runs (pipeline/incremental.py)
    cc_news: CCNewsInput | None = None  # --cc-news: pipeline/cc_news.py
    hosts: tuple[str, ...] = ()  # --hosts: the reader's host filter (pipeline/warc_reader.py)

    def __post_init__(self):
        if self.warc and self.cc_news is not None:
            raise UsageError("give --warc or --cc-news, not both")
        if not self.warc and self.cc_news is None:
            raise UsageError("--warc is empty: give a WARC file, a folder of WARC files or a glob")
        object.__setattr__(self, "hosts", tuple(sorted({without_www(h.strip(".").lower()) for h in self.hosts})))
        if not self.out:
            raise UsageError("--out is empty: give an output folder")
        if self.neighbour_sample < 1:
            raise UsageError(f"--neighbour-sample must be at least 1, got {self.neighbour_sample}")
        if self.min_words < 0:
            raise UsageError(f"--min-words must be at least 0, got {self.min_words}")
        if self.batch_bytes < 0:
            raise UsageError(f"--batch-mib must be at least 0, got {self.batch_bytes >> 20}")
        if self.output_format not in OUTPUT_FORMATS:
            raise UsageError(f"--format must be one of {', '.join(OUTPUT_FORMATS)}, got {self.output_format!r}")
        if self.partition_by not in (None, "crawl_date", "site"):
            raise UsageError(f"--partition-by must be crawl_date or site, got {self.partition_by!r}")
        if self.languages is not None:
            _check_languages(tuple(self.languages))
            object.__setattr__(self, "languages", tuple(sorted(set(self.languages))))
        if any(part not in TEXT_PARTS for part in self.text_includes or ()):
            raise UsageError(f"--text-includes takes {', '.join(TEXT_PARTS)}, got {self.text_includes!r}")
        object.__setattr__(self, "chain", effective_chain(self.chain, self.text_includes, self.keep_listings))

    @property
    def source(self) -> str:
        """The run's input as the summary names it: ``warc``, or ``--cc-news``'s :attr:`CCNewsInput.label`."""
        return self.warc or self.cc_news.label


def effective_chain(chain: ChainConfig | str, text_includes: tuple[str, ...] | None = None,
                    keep_listings: bool = False) -> ChainConfig:
    """The chain a run's workers run: ``chain`` (a ``--chain`` name, looked up once, or a :class:`ChainConfig`) with
    ``--text-includes`` (None: the chain's own ``text_includes``) and ``--keep-listings`` (sets its ``listing_text``: a
    listing page's text is its items, one a line; a chain whose ``listing_text`` is set keeps it) applied; ``chain`` itself when they change nothing. The one place
    these flags reach the chain.

    Raises:
        UsageError: an unknown chain name, or a ``chain`` that is neither a name nor a :class:`ChainConfig`.
    """
    base = chain if isinstance(chain, ChainConfig) else resolve_chain_config(chain)
    parts = base.text_includes if text_includes is None else tuple(text_includes)
    listing_text = base.listing_text or keep_listings
    if (parts, listing_text) == (base.text_includes, base.listing_text):
        return base
    return base.with_(text_includes=parts, listing_text=listing_text)


def clean_config_from_flags(flags, warc: str | None = None, out: str | None = None) -> CleanConfig:
    """The :class:`CleanConfig` of newsclean's parsed flags (:func:`add_clean_arguments`): an ``argparse.Namespace``
    of ``newsclean clean``/``run``, or Beam's :class:`NewscleanOptions` view. A flag the parser did not define takes
    its default; ``warc``/``out`` (``newsclean run``: derived from its ``--out``) replace ``--warc``/``--out``.

    Raises:
        UsageError: a missing ``--warc``/``--out``, a value out of range, an unknown chain, an unknown language
            code (:class:`CleanConfig`).
    """
    def flag(name: str, default=None):
        return getattr(flags, name, default)

    return CleanConfig(warc=warc if warc is not None else flag("warc") or "",
                       out=out if out is not None else flag("out") or "",
                       neighbour_sample=flag("neighbour_sample", DEFAULT_NEIGHBOUR_SAMPLE),
                       chain=flag("chain", "default"), min_words=flag("min_words", MIN_ARTICLE_WORDS),
                       partition_by=flag("partition_by"), incremental=bool(flag("incremental", False)),
                       wait_for_lock=bool(flag("wait_for_lock", False)),
                       allow_mixed_settings=bool(flag("allow_mixed_settings", False)),
                       text_includes=flag("text_includes"), keep_listings=bool(flag("keep_listings", False)),
                       languages=flag("languages"),
                       batch_bytes=flag("batch_mib", DEFAULT_BATCH_MIB) << 20,
                       output_format=flag("output_format", OUTPUT_FORMATS[0]),
                       cc_news=_cc_news_input(flag("cc_news"), flag("cc_news_base"), flag("cc_news_cache")),
                       hosts=tuple(flag("hosts") or ()))


def _cc_news_input(dates: tuple[datetime, datetime] | None, base: str | None,
                   cache: str | None) -> CCNewsInput | None:
    """The :class:`CCNewsInput` of ``--cc-news`` (``(start, end)``), ``--cc-news-base`` and ``--cc-news-cache``;
    None without ``--cc-news``. Raises :class:`UsageError` for a base or cache flag without it, or a bad base."""
    if dates is None:
        if base or cache:
            raise UsageError("--cc-news-base and --cc-news-cache need --cc-news FROM..TO")
        return None
    return CCNewsInput(dates[0], dates[1], base or CC_NEWS_BASE, cache or "")


def clean_config_from_options(options: PipelineOptions) -> CleanConfig:
    """Read and check newsclean's flags from Beam options (:func:`clean_config_from_flags` of the
    :class:`NewscleanOptions` view). Raises :class:`UsageError` when missing."""
    return clean_config_from_flags(options.view_as(NewscleanOptions))


def resolve_chain_config(name: str) -> ChainConfig:
    """The chain configuration for ``--chain name``.

    Raises:
        UsageError: ``name`` is not a key of ``newsclean.transforms.chain.CONFIGS``.
    """
    try:
        return named_config(name)
    except (TypeError, ValueError):
        raise UsageError(f"--chain must be one of {sorted(CHAIN_CONFIGS)}, got {name!r}") from None


def unknown_beam_flags(flags: list[str]) -> list[str]:
    """The entries of ``flags`` that no registered Beam ``PipelineOptions`` class understands.

    Used by the CLI to turn a typo such as ``--runer`` into a usage error instead of Beam's
    silent "Discarding unparseable args" warning. Positional words count as unknown, and so
    does the value after an unknown flag (``["--runer", "DirectRunner"]``).
    """
    parser = _BeamArgumentParser(allow_abbrev=False)
    seen: set[str] = set()
    for cls in PipelineOptions.__subclasses__():
        if str(cls) in seen:
            continue
        seen.add(str(cls))
        cls._add_argparse_args(parser)  # noqa: SLF001 - Beam's own registry mechanism
    _, unknown = parser.parse_known_args(flags)
    return unknown
