"""Build and run the cleaning pipeline: WARC files -> articles, rejects and duplicates in Parquet + summary.

Entry points: :func:`run_clean` (what ``newsclean clean`` calls), :func:`build_pipeline` (the graph alone, e.g.
for a test or another driver) and :func:`main` for ``python -m newsclean.pipeline.clean --warc ... --out ...
[beam options]``. Which runner runs the graph, and how it is tuned, is :mod:`newsclean.pipeline.runner`'s job.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Sequence

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions

from newsclean.pipeline.batches import (
    adopt_staging,
    batched_resume_key,
    clean_in_batches,
    runs_in_batches,
    spilled_batches,
    start_resumable,
)
from newsclean.pipeline.cc_news import cc_news_files
from newsclean.pipeline.dedup import WriteDuplicates, deduplicate, key_of, spill_articles
from newsclean.pipeline.dedup_decisions import NearDupParams, article_of
from newsclean.pipeline.errors import NewscleanError, NoInputError, UsageError
from newsclean.pipeline.file_patterns import literal_pattern
from newsclean.pipeline.formats import check_corpus_format
from newsclean.pipeline.incremental import (
    ReadIndex,
    WriteIndex,
    corpus_of,
    finish_run,
    matched_files,
    nothing_new,
    plan_run,
    run_settings,
    staged_config,
)
from newsclean.pipeline.options import CleanConfig, clean_config_from_options
from newsclean.pipeline.output import discard_staging, hold_output, is_url, new_staging, use_filesystem_options
from newsclean.pipeline.progress import PROGRESS
from newsclean.pipeline.runner import BeamArgs, as_options, check_runner, run_graph
from newsclean.pipeline.stages import (
    FindWarcFiles,
    LearnSiteEvidence,
    WriteCounts,
    WriteParquet,
    read_and_clean,
)
from newsclean.pipeline.summary import RunSummary, check_balanced, check_something_read

log = logging.getLogger(__name__)


def build_pipeline(p: beam.Pipeline, patterns: list[str], config: CleanConfig) -> None:
    """Add the cleaning graph to ``p``, stage by stage (labels are stable for a runner's update/drain).

    ``patterns`` come from :func:`resolve_warc_patterns`; outputs go under ``config.out`` (the run's staging
    folder; the articles wait in ``config.out/_spill/`` while dedup decides). No page HTML or article text crosses
    a shuffle or a side input (:mod:`newsclean.pipeline.stages`, :mod:`newsclean.pipeline.dedup`).
    """
    # Learn each (site, category)'s evidence from a sample of its pages (StaDyNoT §3.1; a side input below), and
    # which URL sections of other crawlers' files have pages enough to be a category.
    paths = p | "FindWarcFiles" >> FindWarcFiles(patterns)
    learnt = paths | "LearnSiteEvidence" >> LearnSiteEvidence(config.neighbour_sample, config.chain, config.hosts)
    cleaned = read_and_clean(paths, learnt["sections"], learnt["evidence"], config)
    # Each article's dedup key (its MinHash computed once); the articles wait in the spill while dedup decides.
    keyed, spilled = spill_articles(cleaned.articles, config.out, NearDupParams())
    keys = keyed | "DedupKeys" >> beam.Map(key_of)
    dedup_and_write(p, keys, spilled, cleaned.rejects, (cleaned.counts,), config)


def build_batches_dedup(p: beam.Pipeline, folders: list[str], config: CleanConfig) -> None:
    """The last run of the batched executor (:mod:`newsclean.pipeline.batches`): :func:`dedup_and_write` over what
    the batches in ``folders`` spilled and wrote (:func:`~newsclean.pipeline.batches.spilled_batches`), into
    ``config.out`` (the run's staging folder)."""
    batches = spilled_batches(p, folders)
    dedup_and_write(p, batches.keys, batches.spilled, batches.rejects, (batches.counts,), config)


def dedup_and_write(p: beam.Pipeline, keys, spilled, rejects, counts: tuple, config: CleanConfig) -> None:
    """The graph's stages after cleaning, whichever executor runs it: exact and near dedup
    (:func:`~newsclean.pipeline.dedup.deduplicate`; incremental runs: also against the corpus already in OUT),
    then the sinks, the run's settings in each file's metadata: the corpus index, ``duplicates/``, ``articles/``
    and ``rejects/`` (:class:`~newsclean.pipeline.stages.WriteParquet`; ``config.output_format``: Parquet or JSON
    Lines, :mod:`newsclean.pipeline.formats`), ``_counts/`` (the dedup counts and
    ``counts``, a tuple of PCollections of ``(name, int)`` pairs). ``keys``: each article's
    :class:`~newsclean.pipeline.dedup_decisions.ArticleKey`; ``spilled``: the paths of the spill files that hold
    the articles; ``rejects``: :class:`~newsclean.schemas.records.Reject` records."""
    corpus_index = p | "ReadCorpusIndex" >> ReadIndex(corpus_of(config.out)) if config.incremental else None
    kept = deduplicate(keys, spilled, NearDupParams(), corpus_index=corpus_index)
    settings = run_settings(config)
    _ = kept.articles | "WriteIndex" >> WriteIndex(config.out)  # each article's MinHash came with it
    _ = kept.duplicates | "WriteDuplicates" >> WriteDuplicates(config.out, settings, config.output_format)
    articles = kept.articles | "Articles" >> beam.Map(article_of)
    _ = {"articles": articles, "rejects": rejects} | "WriteParquet" >> WriteParquet(config.out, settings,
                                                                                    config.output_format)
    _ = (*counts, *kept.counts) | "WriteCounts" >> WriteCounts(config.out)


def run_clean(config: CleanConfig, beam_args: BeamArgs = None, *, check: bool = True,
              progress: bool = False) -> RunSummary:
    """Run the cleaning pipeline to completion and publish its output folder (pipeline/output.py).

    The run holds ``OUT/.clean.lock`` throughout (:func:`~newsclean.pipeline.output.hold_output`: another run
    into ``OUT`` refuses, or waits with ``config.wait_for_lock``). The job writes into ``OUT/_staging-<id>/``; only
    when it finished are ``articles/``, ``rejects/``,
    ``duplicates/``, ``_counts/``, ``_index/``, ``_summary.json`` and the dataset card ``README.md`` replaced
    (``--partition-by``: articles rewritten Hive-partitioned first), or, with ``--incremental``, the new rows
    appended (:func:`~newsclean.pipeline.incremental.finish_run`). A failed, cancelled or interrupted run leaves
    the earlier output as it was; a batched one (pipeline/batches.py) also leaves its staging folder, which the
    next run with the same settings and input files resumes (a one-graph run starts over).
    ``progress``: print progress lines on stderr.

    Args:
        config: ``--warc``, ``--out``, ``--neighbour-sample``, ``--chain``, ...; ``config.chain`` is the chain every
            worker runs (a named chain or any :class:`~newsclean.transforms.chain.ChainConfig`, resolved when
            ``config`` was made: nothing is looked up by name during the run).
        beam_args: Beam flags (``["--runner", "DirectRunner", ...]``) or ready ``PipelineOptions``;
            the local DirectRunner when none is given (:func:`~newsclean.pipeline.runner.runner_options`).
        check: raise :class:`~newsclean.pipeline.errors.NothingReadError` when no WARC response record could be
            read (the output folder is published all the same, with its rejects) and, for an incremental run,
            :class:`~newsclean.pipeline.errors.AccountingError` when the whole corpus's articles + rejects +
            duplicates != records read. The run's own rows are always balanced against its records before they
            are published (:func:`~newsclean.pipeline.summary.read_staged_summary`: ``AccountingError``, nothing
            published), whatever ``check`` says.

    Returns the :class:`RunSummary` read back from the outputs (incremental runs: the whole corpus's).

    Raises:
        NoInputError: ``--warc`` matches nothing (or ``--cc-news`` names no file). UsageError: bad ``--runner``, an
            http(s) ``--warc``. NewscleanError: a ``--cc-news`` listing or file that cannot be fetched.
        OutputLockedError: another run holds ``OUT``.
        NewscleanError: the job did not finish (failed or cancelled), with the runner's message.
        KeyboardInterrupt: Ctrl-C (also when the runner reports it as its own error).
    """
    use_filesystem_options(beam_args)  # s3:// and gs:// paths are listed with the run's options
    check_runner(as_options(beam_args))  # fail before launching (or downloading) when the runner is unavailable
    patterns = input_patterns(config)
    with hold_output(config.out, config.wait_for_lock, keep_resumable=True) as out:  # one run at a time
        # pipeline/incremental.py: the manifest of cleaned files, and the corpus's settings and format
        if config.incremental:
            check_corpus_format(out, config.output_format)
        plan = plan_run(out, patterns, config.incremental, run_settings(config), config.allow_mixed_settings)
        if config.incremental and not plan.files:
            adopt_staging(out, None)  # deletes what interrupted runs left
            summary, _ = nothing_new(out, plan, config.source)
        else:
            run_patterns = plan.patterns if config.incremental else patterns
            staging, key = _staging_for(out, staged_config(config, out, plan), run_patterns, beam_args)
            try:
                _run_staged(staged_config(config, staging, plan), run_patterns, beam_args, progress)
                summary, line = finish_run(staging, out, plan, config.source, config.partition_by)
            except BaseException:
                if key is None:
                    discard_staging(staging)
                else:
                    log.warning("kept %s: the same command resumes the run", staging)
                raise
            log.info("run %s: %d files cleaned, %d skipped, %d articles added", plan.run_id,
                     line["files_cleaned"], line["files_skipped"], line["articles_added"])
    if check:
        if config.incremental:  # the corpus's every run; this run's rows were balanced before publishing
            check_balanced(summary)
        if not (config.incremental and not plan.files):
            check_something_read(summary)
    return summary


def _staging_for(out: str, config: CleanConfig, patterns: list[str], beam_args: BeamArgs) -> tuple[str, dict | None]:
    """The staging folder of the run of ``config`` over ``patterns`` into ``out`` and its resume key: a batched
    run's (:func:`~newsclean.pipeline.batches.batched_resume_key`) adopts the staging folder an interrupted run
    with the same key left (:func:`~newsclean.pipeline.batches.adopt_staging`) or records the key in a new one; a
    one-graph run gets a new one and None. Other runs' staging folders in ``out`` are deleted."""
    key = batched_resume_key(config, patterns, beam_args) if not is_url(out) else None
    staging = adopt_staging(out, key)
    if staging is None:
        staging = new_staging(out)
        if key is not None:
            start_resumable(staging, key)
    return staging, key


def _run_staged(config: CleanConfig, patterns: list[str], beam_args: BeamArgs, progress: bool) -> None:
    """Run the cleaning of the files of ``patterns`` into ``config.out`` (the staging folder) to completion: in
    batches (:func:`~newsclean.pipeline.batches.clean_in_batches`, then :func:`build_batches_dedup` in one more
    run) when newsclean chooses the local mode and the files hold more than ``config.batch_bytes``, else as one
    graph (:func:`build_pipeline`). The progress tally's total: the bytes of the files, each from the offset it is
    read from (``config.read_from``)."""
    files = matched_files(patterns)
    read_from = dict(config.read_from)
    PROGRESS.reset(sum(max(size - read_from.get(path, 0), 0) for path, size in files))
    PROGRESS.enabled = progress
    try:
        if runs_in_batches(beam_args, files, config.batch_bytes):
            folders = clean_in_batches(config, files, beam_args)
            run_graph(lambda p: build_batches_dedup(p, folders, config), beam_args, [])  # no WARC input: no workers
        else:
            run_graph(lambda p: build_pipeline(p, patterns, config), beam_args, patterns)
    finally:
        PROGRESS.finish()
        PROGRESS.enabled = False


#: What ``--warc DIR`` reads below a directory: gzipped WARC files (the crawler's) and uncompressed ones.
WARC_SUFFIXES = (".warc.gz", ".warc")
_WILDCARD = re.compile(r"[*?\[]")


def directory_patterns(directory: str) -> list[str]:
    """The patterns for every ``*.warc.gz`` and ``*.warc`` at any depth under ``directory`` (``DIR/**.warc.gz``,
    ``DIR/**.warc``; Beam's ``*`` patterns are anchored at the end, so no file matches both)."""
    return [FileSystems.join(directory.rstrip("/\\") or "/", "**" + suffix) for suffix in WARC_SUFFIXES]


def globstar_variants(pattern: str, limit: int = 4) -> list[str]:
    """``pattern`` plus its variants where ``**/`` matches zero directories, as in a shell's globstar.

    Beam turns ``**`` into the regex ``.*``, so ``warc/**/*.warc.gz`` needs at least one
    directory below ``warc``; the variant ``warc/*.warc.gz`` covers the files directly in it.
    With k occurrences of ``**/`` there are 2**k variants; beyond ``limit`` occurrences only
    the original and the all-removed variant are returned.
    """
    parts = pattern.split("**/")
    k = len(parts) - 1
    if k == 0:
        return [pattern]
    if k > limit:
        return [pattern, "".join(parts)]
    variants = []
    for mask in range(2 ** k):
        s = parts[0]
        for i in range(k):
            s += ("**/" if not mask >> i & 1 else "") + parts[i + 1]
        variants.append(s)
    return variants


def _is_file(path: str) -> bool:
    """Whether ``path`` (a local path or a URL) names an existing file, taken literally; False where the file
    system cannot tell (a missing plugin)."""
    if not is_url(path):
        return os.path.isfile(path)
    try:
        return FileSystems.exists(path)
    except Exception:  # BeamIOError, missing filesystem plugin: resolve_warc_patterns reports it
        return False


def input_patterns(config: CleanConfig) -> list[str]:
    """The Beam file patterns of the run's input files: one literal pattern per ``--cc-news`` file (listed and, over
    http(s), downloaded first: :func:`~newsclean.pipeline.cc_news.cc_news_files`), else
    :func:`resolve_warc_patterns` of ``--warc``. Raises what those raise."""
    if config.cc_news is None:
        return resolve_warc_patterns(config.warc)
    return [literal_pattern(path) for path in cc_news_files(config.cc_news)]


def resolve_warc_patterns(warc: str) -> list[str]:
    """Turn ``--warc`` into Beam file patterns, and check that they match at least one file.

    ``warc`` may be a glob (``*``, ``?``, ``[..]``, ``**`` across directories, ``**/`` also
    matching none), one file, or a directory (= every ``*.warc.gz`` and ``*.warc`` below it). A file or directory
    that exists is taken literally before ``warc`` is taken as a glob (a name such as ``a[1]*?.warc.gz``:
    :func:`~newsclean.pipeline.file_patterns.literal_pattern`). Local relative paths become absolute (they are
    also the provenance stored in the rows).

    Raises:
        NoInputError: nothing matches. UsageError: an http(s) URL (Beam has no http filesystem).
    """
    if not warc:
        raise NoInputError("--warc is empty")
    if warc.lower().startswith(("http://", "https://")):
        raise UsageError(f"--warc {warc}: Beam reads no http(s) URL; download the WARC files first, or read Common "
                         "Crawl's news crawl with --cc-news FROM..TO, which downloads them")
    path = warc if is_url(warc) else os.path.abspath(os.path.expanduser(warc))
    if _WILDCARD.search(path) and _is_file(path):
        patterns = [literal_pattern(path)]
    elif warc.endswith(("/", "\\")) or (not is_url(path) and os.path.isdir(path)):
        patterns = directory_patterns(literal_pattern(path) if os.path.isdir(path) else path)
    else:
        patterns = globstar_variants(path)
        if not _WILDCARD.search(path) and len(matched_files(patterns)) == 0:
            patterns = directory_patterns(path)  # a "directory" on an object store
    try:
        n = len(matched_files(patterns))
    except Exception as exc:  # BeamIOError, missing filesystem plugin (e.g. gcsio not installed)
        raise NoInputError(f"--warc {warc!r}: cannot list files: {exc}") from exc
    if n == 0:
        raise NoInputError(f"--warc {warc!r} matches no WARC file")
    log.info("--warc %r: %d WARC files via %s", warc, n, patterns)
    return patterns


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m newsclean.pipeline.clean --warc GLOB --out DIR [beam options]``: run and print the summary."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    options = PipelineOptions(list(sys.argv[1:] if argv is None else argv))
    try:
        summary = run_clean(clean_config_from_options(options), options)
    except NewscleanError as exc:
        print(f"newsclean: error: {exc}", file=sys.stderr)
        return 1
    print(summary.format())
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
