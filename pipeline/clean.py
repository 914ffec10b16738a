"""Build and run the cleaning pipeline: WARC files -> articles and rejects in Parquet + summary.

Entry points: :func:`run_clean` (what ``newsclean clean`` calls), :func:`build_pipeline` (the
graph alone, e.g. for a test or another driver) and :func:`main` for
``python -m newsclean.pipeline.clean --warc ... --out ... [beam options]``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import re
import sys
import threading
from collections.abc import Iterator, Sequence

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions
from apache_beam.runners.runner import PipelineState

from newsclean.pipeline.dedup import DUPLICATES_DIR, NearDedup, SignatureEntry, WriteDuplicates, article_of
from newsclean.pipeline.errors import AccountingError, NewscleanError, NoInputError
from newsclean.pipeline.incremental import (
    INDEX_DIR,
    WriteIndex,
    add_corpus_dedup,
    corpus_of,
    plan_run,
    record_run,
    run_incremental,
)
from newsclean.pipeline.options import CleanConfig, clean_config_from_options, resolve_chain_config
from newsclean.pipeline.output import (
    discard_staging,
    new_staging,
    partition_articles,
    prepare_output,
    publish_output,
)
from newsclean.pipeline.progress import PROGRESS, CountProgress
from newsclean.pipeline.stages import (
    ARTICLES_DIR,
    COUNTS_DIR,
    REJECTS_DIR,
    ArticleKey,
    CleanPages,
    DedupExact,
    FilterResponses,
    LearnSiteEvidence,
    ReadSpilled,
    ReadWarc,
    SpillArticles,
    WriteCounts,
    WriteParquet,
    keyed_article,
)
from newsclean.pipeline.summary import (
    CARD_FILE,
    LEGACY_SUMMARY_FILE,
    SUMMARY_FILE,
    RunSummary,
    summarize_output,
    write_dataset_card,
    write_summary,
)
from newsclean.transforms.minhash import NearDupParams

log = logging.getLogger(__name__)

#: What ``--warc DIR`` reads below a directory: gzipped WARC files (the crawler's) and uncompressed ones.
WARC_SUFFIXES = (".warc.gz", ".warc")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)
_WILDCARD = re.compile(r"[*?\[]")


def _is_url(path: str) -> bool:
    return bool(_SCHEME.match(path))


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


def _count_matches(patterns: list[str]) -> int:
    """Number of distinct files the Beam file patterns match."""
    results = FileSystems.match(patterns)
    return len({m.path for r in results for m in r.metadata_list if not m.path.endswith(("/", "\\"))})


def resolve_warc_patterns(warc: str) -> list[str]:
    """Turn ``--warc`` into Beam file patterns, and check that they match at least one file.

    ``warc`` may be a glob (``*``, ``?``, ``[..]``, ``**`` across directories, ``**/`` also
    matching none), one file, or a directory (= every ``*.warc.gz`` and ``*.warc`` below it). Local relative
    paths become absolute (they are also the provenance stored in the rows).

    Raises:
        NoInputError: nothing matches.
    """
    if not warc:
        raise NoInputError("--warc is empty")
    path = warc if _is_url(warc) else os.path.abspath(os.path.expanduser(warc))
    if warc.endswith(("/", "\\")) or (not _is_url(path) and os.path.isdir(path)):
        patterns = directory_patterns(path)
    else:
        patterns = globstar_variants(path)
        if not _WILDCARD.search(path) and _count_matches(patterns) == 0:
            patterns = directory_patterns(path)  # a "directory" on an object store
    try:
        n = _count_matches(patterns)
    except Exception as exc:  # BeamIOError, missing filesystem plugin (e.g. gcsio not installed)
        raise NoInputError(f"--warc {warc!r}: cannot list files: {exc}") from exc
    if n == 0:
        raise NoInputError(f"--warc {warc!r} matches no WARC file")
    log.info("--warc %r: %d WARC files via %s", warc, n, patterns)
    return patterns


def build_pipeline(p: beam.Pipeline, patterns: list[str], config: CleanConfig) -> None:
    """Add the cleaning graph to ``p``: ReadWarc -> LearnSiteEvidence (sample references, re-read, learn) /
    FilterResponses -> CleanPages -> ArticleKeys -> SpillArticles (rows and MinHash) + DedupExact (keys) ->
    ReadSpilled -> NearDedup -> WriteIndex + WriteParquet + WriteCounts (labels are stable for update/drain).

    ``patterns`` come from :func:`resolve_warc_patterns`; outputs go under ``config.out`` (and the articles
    wait in ``config.out/_spill/``, inside the run's staging folder). No page HTML or article text crosses a
    shuffle or a side input (see :mod:`newsclean.pipeline.stages`).
    """
    params = NearDupParams()
    read = p | "ReadWarc" >> ReadWarc(patterns)
    evidence = read["paths"] | "LearnSiteEvidence" >> LearnSiteEvidence(config.neighbour_sample, config.chain)
    filtered = read["pages"] | "FilterResponses" >> FilterResponses()
    cleaned = filtered["pages"] | "CleanPages" >> CleanPages(evidence, config.chain, config.min_words,
                                                                   config.text_includes, config.keep_listings)
    keyed = cleaned["articles"] | "ArticleKeys" >> beam.Map(keyed_article, params)  # the MinHash, computed once
    spilled = keyed | "SpillArticles" >> SpillArticles(config.out)
    dedup = keyed | "DedupExact" >> DedupExact()
    kept = spilled | "ReadSpilled" >> ReadSpilled(dedup["losers"])
    keys, corpus_counts, corpus = dedup["keys"], [], None
    if config.incremental:  # pipeline/incremental.py: exact dedup and versions against OUT's corpus index
        kept, counts, corpus, keys = add_corpus_dedup(p, kept, corpus_of(config.out), keys)
        corpus_counts = [counts]
    entries = keys | "NearEntries" >> beam.Map(_near_entry)
    # pipeline/dedup.py: MinHash LSH, Jaccard 0.8
    near = kept | "NearDedup" >> NearDedup(params, existing=corpus, entries=entries)
    _ = near["articles"] | "WriteIndex" >> WriteIndex(config.out)  # each article's MinHash came with it
    _ = near["duplicates"] | "WriteDuplicates" >> WriteDuplicates(config.out)
    rejects = (read["rejects"], filtered["rejects"], cleaned["rejects"]) | "CollectRejects" >> beam.Flatten()
    articles = near["articles"] | "Articles" >> beam.Map(article_of)
    _ = {"articles": articles, "rejects": rejects} | "WriteParquet" >> WriteParquet(config.out)
    _ = (read["counts"], dedup["counts"], near["counts"], *corpus_counts) | "WriteCounts" >> WriteCounts(config.out)
    # Progress on stderr (pipeline/progress.py): side branches that count and output nothing.
    for label, pcoll, what in (("ProgressRead", read["pages"], "read"), ("ProgressReadRejects", read["rejects"], "read"),
                               ("ProgressArticles", cleaned["articles"], "articles"),
                               ("ProgressRejects", rejects, "rejects")):
        _ = pcoll | label >> beam.ParDo(CountProgress(what))


def _near_entry(key: ArticleKey) -> SignatureEntry:
    return key.near


#: The local mode of a run that names no runner and no ``--direct_*`` flag (issue 15, chosen by
#: ``bench/bench_corpus.py``; docs/DECISIONS.md "Local runner"): Beam's ``multi_processing`` with
#: :func:`local_workers` SDK worker processes, when that is more than one.
LOCAL_PARALLEL_MODE = "--direct_running_mode=multi_processing"
#: WARC bytes of input per local worker process (8 MiB): a run stays in one process (``in_memory``) below twice
#: this, since starting a worker (it imports Beam and loads the chain's models) costs more than it saves on a
#: small input; on 16 cores the 37 MiB shared corpus ran as fast on 4 workers as on 16 (41.6 vs 44.6 s).
MIN_PARALLEL_WARC_BYTES = 8 << 20
#: Memory set aside per local worker process (1 GiB): measured peak ~0.4-0.6 GiB RSS a worker (16 workers, 20,000
#: generated pages: 10.5 GiB in all), so the workers of a run fit in the memory the machine has available.
WORKER_MEMORY_BYTES = 1 << 30
_LOCAL_FLAGS = ("--runner", "--direct_running_mode", "--direct_num_workers", "--environment_type")


def _warc_bytes(patterns: list[str]) -> int:
    """Total size in bytes of the distinct files ``patterns`` match."""
    sizes = {m.path: m.size_in_bytes for r in FileSystems.match(patterns) for m in r.metadata_list}
    return sum(sizes.values())


def available_memory(meminfo: str = "/proc/meminfo") -> int | None:
    """Bytes of memory the machine can give new processes (Linux ``MemAvailable``); None where it is not known."""
    try:
        with open(meminfo, encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024  # kB
    except (OSError, ValueError, IndexError):
        return None
    return None


def local_workers(cores: int, warc_bytes: int, memory: int | None) -> int:
    """SDK worker processes for a local run: one per :data:`MIN_PARALLEL_WARC_BYTES` of WARC input, at most one
    per core and, when ``memory`` (bytes available) is known, at most one per :data:`WORKER_MEMORY_BYTES` of it;
    at least 1 (1 means: stay in one process)."""
    workers = min(cores, warc_bytes // MIN_PARALLEL_WARC_BYTES)
    if memory is not None:
        workers = min(workers, memory // WORKER_MEMORY_BYTES)
    return max(int(workers), 1)


def with_local_mode(beam_args: Sequence[str] | PipelineOptions | None, patterns: list[str],
                    cores: int | None = None, memory: int | None = None) -> Sequence[str] | PipelineOptions | None:
    """``beam_args`` plus :data:`LOCAL_PARALLEL_MODE` and ``--direct_num_workers`` = :func:`local_workers` when
    they name no runner and no ``--direct_*`` flag (so the run is on the DirectRunner by default) and that is more
    than one worker; otherwise ``beam_args`` unchanged (ready ``PipelineOptions`` always are). ``cores`` defaults
    to the CPUs this process may use, ``memory`` to :func:`available_memory`."""
    if isinstance(beam_args, PipelineOptions):
        return beam_args
    args = list(beam_args or [])
    if any(a.split("=", 1)[0] in _LOCAL_FLAGS for a in args):
        return beam_args
    cores = cores if cores is not None else len(os.sched_getaffinity(0))
    if cores <= 1:
        return beam_args
    memory = memory if memory is not None else available_memory()
    workers = local_workers(cores, _warc_bytes(patterns), memory)
    if workers <= 1:
        return beam_args
    return [*args, LOCAL_PARALLEL_MODE, f"--direct_num_workers={workers}"]


def _as_options(beam_args: Sequence[str] | PipelineOptions | None) -> PipelineOptions:
    if isinstance(beam_args, PipelineOptions):
        return beam_args
    return PipelineOptions(list(beam_args or []))


def _interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it was raised from) is a KeyboardInterrupt wrapped by the runner."""
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, KeyboardInterrupt) or "KeyboardInterrupt" in str(exc)[:2000]:
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def run_clean(config: CleanConfig, beam_args: Sequence[str] | PipelineOptions | None = None,
              *, check: bool = True, progress: bool = False) -> RunSummary:
    """Run the cleaning pipeline to completion and publish its output folder (pipeline/output.py).

    The job writes into ``OUT/_staging-<id>/``; only when it finished are ``articles/``, ``rejects/``,
    ``duplicates/``, ``_counts/``, ``_summary.json`` and the dataset card ``README.md`` replaced
    (``--partition-by``: articles rewritten Hive-partitioned first). A failed, cancelled or interrupted
    run leaves the earlier output as it was. ``progress``: print progress lines on stderr.

    Args:
        config: ``--warc``, ``--out``, ``--neighbour-sample``, ``--chain``.
        beam_args: Beam flags (``["--runner", "DirectRunner", ...]``) or ready ``PipelineOptions``;
            DirectRunner when none is given.
        check: raise :class:`AccountingError` when articles + rejects + duplicates != records read.

    Returns the :class:`RunSummary` read back from the outputs.

    Raises:
        NoInputError: ``--warc`` matches nothing. UsageError: bad ``--chain``.
        NewscleanError: the job did not finish (failed or cancelled), with the runner's message.
        KeyboardInterrupt: Ctrl-C (also when the runner reports it as its own error).
    """
    patterns = resolve_warc_patterns(config.warc)
    resolve_chain_config(config.chain)  # fail before launching when the chain is unavailable
    out = prepare_output(config.out)
    plan = plan_run(out, patterns, config.incremental)  # pipeline/incremental.py: the manifest of cleaned files
    if config.incremental:
        summary = run_incremental(config, out, plan, beam_args, progress, run_staged=_run_staged)
        if check and not summary.balanced:
            raise AccountingError(f"accounting mismatch over the corpus: {summary.accounted} != {summary.records_read}")
        return summary
    staging = new_staging(out)
    try:
        summary = _run_staged(dataclasses.replace(config, out=staging), patterns, beam_args, progress)
        if config.partition_by:
            partition_articles(FileSystems.join(staging, ARTICLES_DIR), config.partition_by)
        summary.out = out
        write_summary(summary, staging)
        write_dataset_card(summary, config.partition_by, staging)
    except BaseException:
        discard_staging(staging)
        raise
    publish_output(staging, out, (ARTICLES_DIR, REJECTS_DIR, DUPLICATES_DIR, COUNTS_DIR, INDEX_DIR),
                   (SUMMARY_FILE, CARD_FILE), stale=(LEGACY_SUMMARY_FILE,))
    record_run(out, plan, summary)
    if check and not summary.balanced:
        raise AccountingError(
            f"accounting mismatch: {summary.articles_written} articles + {summary.rejects_total} rejects + "
            f"{summary.duplicates_dropped} duplicates = {summary.accounted} != {summary.records_read} records read")
    return summary


#: Start of the lines each of Beam's local SDK worker processes (``--direct_running_mode multi_processing``)
#: writes to the stderr it inherits before its log level applies: an import-time warning (GCP client
#: libraries half installed; it also makes ``logging`` install a stderr handler) and that handler's first line.
WORKER_NOISE = (b"WARNING:root:apitools not found", b"INFO:__main__:Logging handler created.")


@contextlib.contextmanager
def worker_noise_dropped(noise: tuple[bytes, ...] = WORKER_NOISE) -> Iterator[None]:
    """While the block runs, drop the lines written to file descriptor 2 (by this process and by the worker
    processes it starts, which inherit it) that start with one of ``noise``; every other line passes to the
    real stderr, in order. File descriptor 2 is restored on leaving, also on an exception."""
    sys.stderr.flush()
    real = os.dup(2)
    read_end, write_end = os.pipe()
    os.dup2(write_end, 2)
    os.close(write_end)

    def forward() -> None:
        with os.fdopen(read_end, "rb") as lines:
            for line in lines:
                if not line.startswith(noise):
                    os.write(real, line)

    pump = threading.Thread(target=forward, name="newsclean-stderr", daemon=True)
    pump.start()
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(real, 2)  # the pipe ends when the workers that inherited it have exited too
        pump.join(timeout=5.0)
        if not pump.is_alive():
            os.close(real)


#: glibc ``mallopt`` parameters (malloc.h: ``M_MMAP_THRESHOLD`` -3, ``M_ARENA_MAX`` -8), their environment names
#: (which win: a user's ``MALLOC_MMAP_THRESHOLD_`` / ``MALLOC_ARENA_MAX``) and the values :func:`tune_glibc_malloc`
#: sets for runs in this process: blocks of 128 KiB or more always mapped on their own (returned to the system when
#: freed), at most 2 arenas.
IN_PROCESS_MALLOPT = ((-3, "MALLOC_MMAP_THRESHOLD_", 128 << 10), (-8, "MALLOC_ARENA_MAX", 2))

#: Environment of Beam's local SDK worker processes, which inherit this process's: the glibc malloc settings of
#: :data:`IN_PROCESS_MALLOPT` by their environment names (arenas capped at 2: each worker thread otherwise gets its
#: own, which keep freed memory; a fixed 128 KiB mmap threshold: 4,000 generated pages, ``multi_processing`` x 2,
#: peak RSS of the tree 1,275 -> 1,116 MiB, PSS 1,072 -> 899, wall +2-6 %) and Arrow's allocator the system one
#: (its default, jemalloc, keeps freed pages after the Parquet writers flush). Same output (docs/DECISIONS.md
#: "Local runner and memory at scale"). A value already set is kept.
WORKER_ENV = {**{env: str(value) for _, env, value in IN_PROCESS_MALLOPT}, "ARROW_DEFAULT_MEMORY_POOL": "system"}


@contextlib.contextmanager
def worker_env(env: dict[str, str] = WORKER_ENV) -> Iterator[None]:
    """While the block runs, ``os.environ`` holds each of ``env`` that is not set yet (processes started inside
    inherit them); on leaving, the variables it added are removed again, also on an exception."""
    added = [name for name in env if name not in os.environ]
    os.environ.update({name: env[name] for name in added})
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


@contextlib.contextmanager
def arrow_system_pool() -> Iterator[None]:
    """While the block runs, pyarrow's default memory pool is the system allocator (``malloc``), unless the user
    chose one with ``ARROW_DEFAULT_MEMORY_POOL``; the previous pool is restored on leaving, also on an exception.

    For runs whose SDK harness is this process (the DirectRunner's ``in_memory`` mode): the same choice as
    :data:`WORKER_ENV` makes for worker processes, which cannot be made by environment here because pyarrow is
    already imported. Its default pool (mimalloc or jemalloc, by build) kept the pages freed by the Parquet readers
    and writers of the last stage (issue 15: 576 -> 522 MiB peak RSS on 2,000 generated pages; docs/DECISIONS.md "Local runner and
    memory at scale"). Only the allocator changes, not a byte of output.
    """
    import pyarrow as pa

    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        yield
        return
    previous = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    try:
        yield
    finally:
        pa.set_memory_pool(previous)




def tune_glibc_malloc(settings=IN_PROCESS_MALLOPT) -> list[str]:
    """Set glibc's malloc ``settings`` (:data:`IN_PROCESS_MALLOPT`) in this process, each unless its environment
    variable is set; returns the names of those set (none where the C library is not glibc).

    For local runs: where the SDK harness is this process (``in_memory``), and where it is the runner of local worker
    processes (``multi_processing``), which holds every shuffle's buffers (7,736 generated pages, 2 workers: the
    runner's peak RSS 407 -> 288 MiB); the counterpart of :data:`WORKER_ENV`, which cannot be given by environment
    here because the process is running. glibc raises its mmap threshold to the size of each
    mapped block freed (up to 32 MiB), so that the large buffers of the Parquet readers and writers, lxml and numpy
    came from the heap afterwards and the heap kept its high-water: the last stage's peak grew with the corpus
    although what it holds is bounded (issue 15; 8,000 generated pages: peak RSS 694 -> 596 MiB, about 4% more CPU
    time, in mmap system calls; docs/DECISIONS.md "Local runner and memory at scale"). Setting the threshold turns
    that adjustment off for the rest of the process (glibc cannot give it back), which is not undone. Only the
    allocator changes, not a byte of output.
    """
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (macOS, musl without mallopt, Windows)
        return []
    done = []
    for param, env, value in settings:
        if os.environ.get(env) is None and mallopt(param, value) == 1:
            done.append(env)
    return done


#: Runner names (the last dotted part of ``--runner``) of Beam's DirectRunner.
_DIRECT_RUNNERS = ("DirectRunner", "SwitchingDirectRunner", "BundleBasedDirectRunner")


def _runner_name(options: PipelineOptions) -> str:
    """The class name of ``options``' ``--runner`` (the last dotted part of a path); ``DirectRunner`` when none."""
    return str(options.get_all_options().get("runner") or "DirectRunner").rsplit(".", 1)[-1]


def _direct_mode(options: PipelineOptions) -> str | None:
    """``--direct_running_mode`` when ``options`` run on the DirectRunner (the default runner), else None."""
    if _runner_name(options) not in _DIRECT_RUNNERS:
        return None
    return options.view_as(DirectOptions).direct_running_mode


def _in_process(options: PipelineOptions) -> bool:
    """Whether ``options`` run the pipeline's DoFns in this process (the DirectRunner without worker processes)."""
    mode = _direct_mode(options)
    return mode is not None and mode != "multi_processing"


def _local_run(options: PipelineOptions) -> bool:
    """Whether ``options`` run on the DirectRunner, in any mode: this process then holds the run's data, as the SDK
    harness (``in_memory``) or as the runner of local worker processes that buffers every shuffle (``multi_processing``)."""
    return _direct_mode(options) is not None


def _local_workers(options: PipelineOptions) -> bool:
    """Whether ``options`` run the DirectRunner with local SDK worker processes (``multi_processing``)."""
    return _direct_mode(options) == "multi_processing"


def direct_fn_api_runner(options: PipelineOptions):
    """The runner of a run on Beam's DirectRunner (the default, or ``--runner DirectRunner``): the FnApiRunner,
    built as the DirectRunner builds it for a batch pipeline (``options`` handed on to its SDK workers, so that
    ``--direct_running_mode``, ``--direct_num_workers``, ``--pickle_library`` and the workers' flags apply), but
    without the DirectRunner's first try of Beam's Prism runner. In Beam 2.77 (checked) that try downloads the Prism
    binary from github.com (and caches and runs it) on every local run where it can, so the same command
    would run on another runner on a machine with internet access than on one without (where the download fails
    and the DirectRunner falls back to this runner), talk to the network unasked, and leave every local figure of
    docs/DECISIONS.md (all on this runner) unmeasured. ``--runner PrismRunner`` still chooses Prism.
    None for any other ``--runner`` (and for ``BundleBasedDirectRunner``): Beam then builds that one.
    Uses Beam's own classes; raises what they raise."""
    if _runner_name(options) not in ("DirectRunner", "SwitchingDirectRunner"):
        return None
    from apache_beam.portability.api import beam_provision_api_pb2
    from apache_beam.runners.portability.fn_api_runner import fn_runner
    from apache_beam.runners.portability.portable_runner import JobServiceHandle

    encoded = JobServiceHandle.encode_pipeline_options(options.get_all_options())
    return fn_runner.FnApiRunner(provision_info=fn_runner.ExtendedProvisionInfo(
        beam_provision_api_pb2.ProvisionInfo(pipeline_options=encoded)))


def new_pipeline(options: PipelineOptions) -> beam.Pipeline:
    """An empty ``beam.Pipeline`` for ``options``, on :func:`direct_fn_api_runner` where that applies."""
    return beam.Pipeline(runner=direct_fn_api_runner(options), options=options)


def _run_staged(config: CleanConfig, patterns: list[str], beam_args, progress: bool) -> RunSummary:
    """Run the job into ``config.out`` (the staging folder) and read its summary back."""
    options = _as_options(with_local_mode(beam_args, patterns))
    p = new_pipeline(options)
    build_pipeline(p, patterns, config)
    PROGRESS.reset()
    PROGRESS.enabled = progress
    local_workers = _local_workers(options)
    if _local_run(options):
        tune_glibc_malloc()
    quiet = local_workers and not logging.getLogger().isEnabledFor(logging.INFO)
    try:
        with (worker_noise_dropped() if quiet else contextlib.nullcontext(),
              worker_env() if local_workers else contextlib.nullcontext(),
              arrow_system_pool() if _in_process(options) else contextlib.nullcontext()):
            state = p.run().wait_until_finish()
    except KeyboardInterrupt:
        raise
    except Exception as exc:
        if _interrupted(exc):
            raise KeyboardInterrupt from None
        log.debug("pipeline failed", exc_info=True)
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        raise NewscleanError(f"pipeline failed: {type(exc).__name__}: {first}") from exc
    finally:
        PROGRESS.finish()
        PROGRESS.enabled = False
    if state not in (PipelineState.DONE, None):
        raise NewscleanError(f"pipeline ended in state {state}")
    return summarize_output(config.out, warc=config.warc)


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
