"""Choosing and configuring the Beam runner of a cleaning job, and running it to completion.

:func:`runner_options` turns the user's Beam flags into ``PipelineOptions``: a run that names no runner and no
``--direct_*`` flag runs locally on the DirectRunner, in ``multi_processing`` mode with :func:`local_workers` SDK
worker processes when the input is big enough (measured in ``bench/bench_corpus.py``; docs/DECISIONS.md "Local
runner"). :func:`new_pipeline` builds the ``beam.Pipeline`` (on :func:`direct_fn_api_runner` for the
DirectRunner), and :func:`run_to_completion` runs it, with the local tuning that changes the allocators and the
terminal noise, never a row of output:

- :func:`tune_glibc_malloc` and :func:`arrow_system_pool` for the process that holds a local run's data,
  :func:`worker_env` for the local worker processes it starts (docs/DECISIONS.md "Local runner and memory at
  scale");
- :func:`worker_noise_dropped`: the start-up lines every local worker writes to the inherited stderr.

Other runners (``--runner DataflowRunner``, ``FlinkRunner``, ``PortableRunner``, ...) are left to Beam as given.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions
from apache_beam.runners.runner import PipelineState, create_runner

from newsclean.pipeline.errors import NewscleanError, UsageError, first_line

log = logging.getLogger(__name__)

#: Beam flags or ready options, as a caller of :func:`newsclean.pipeline.clean.run_clean` gives them.
BeamArgs = Sequence[str] | PipelineOptions | None

# --------------------------------------------------------------------------------------------
# Which runner, how many local workers
# --------------------------------------------------------------------------------------------

#: The local mode of a run that names no runner and no ``--direct_*`` flag (chosen by ``bench/bench_corpus.py``;
#: docs/DECISIONS.md "Local runner"): Beam's ``multi_processing`` with :func:`local_workers` SDK worker processes,
#: when that is more than one.
LOCAL_PARALLEL_MODE = "--direct_running_mode=multi_processing"
#: WARC bytes of input per local worker process (8 MiB): a run stays in one process (``in_memory``) below twice
#: this, since starting a worker (it imports Beam and loads the chain's models) costs more than it saves on a
#: small input; on 16 cores the 37 MiB shared corpus ran as fast on 4 workers as on 16 (41.6 vs 44.6 s).
MIN_PARALLEL_WARC_BYTES = 8 << 20
#: Memory set aside per local worker process (1 GiB): measured peak ~0.4-0.6 GiB RSS a worker (16 workers, 20,000
#: generated pages: 10.5 GiB in all), so the workers of a run fit in the memory the machine has available.
WORKER_MEMORY_BYTES = 1 << 30
_LOCAL_FLAGS = ("--runner", "--direct_running_mode", "--direct_num_workers", "--environment_type")
#: Runner names (the last dotted part of ``--runner``) of Beam's DirectRunner.
_DIRECT_RUNNERS = ("DirectRunner", "SwitchingDirectRunner", "BundleBasedDirectRunner")


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


def chooses_local_mode(beam_args: BeamArgs) -> bool:
    """Whether newsclean chooses how a run with ``beam_args`` runs locally: they name no runner and no
    ``--direct_*`` or ``--environment_type`` flag (a list of flags, such as the CLI's; ready ``PipelineOptions``
    are taken as they are). Such a run is on the DirectRunner, with :func:`with_local_mode`'s workers, and in
    batches of files when its input is large (pipeline/batches.py)."""
    if isinstance(beam_args, PipelineOptions):
        return False
    return not any(a.split("=", 1)[0] in _LOCAL_FLAGS for a in beam_args or [])


def with_local_mode(beam_args: BeamArgs, patterns: list[str], cores: int | None = None,
                    memory: int | None = None) -> BeamArgs:
    """``beam_args`` plus :data:`LOCAL_PARALLEL_MODE` and ``--direct_num_workers`` = :func:`local_workers` when
    they name no runner and no ``--direct_*`` flag (so the run is on the DirectRunner by default) and that is more
    than one worker; otherwise ``beam_args`` unchanged (ready ``PipelineOptions`` always are). ``cores`` defaults
    to the CPUs this process may use, ``memory`` to :func:`available_memory`."""
    if not chooses_local_mode(beam_args):
        return beam_args
    args = list(beam_args or [])
    cores = cores if cores is not None else len(os.sched_getaffinity(0))
    if cores <= 1:
        return beam_args
    memory = memory if memory is not None else available_memory()
    workers = local_workers(cores, _warc_bytes(patterns), memory)
    if workers <= 1:
        return beam_args
    return [*args, LOCAL_PARALLEL_MODE, f"--direct_num_workers={workers}"]


def as_options(beam_args: BeamArgs) -> PipelineOptions:
    """``beam_args`` as ``PipelineOptions`` (ready options as they are; None: no flags, the DirectRunner)."""
    if isinstance(beam_args, PipelineOptions):
        return beam_args
    return PipelineOptions(list(beam_args or []))


def runner_options(beam_args: BeamArgs, patterns: list[str]) -> PipelineOptions:
    """The options a run over the WARC files of ``patterns`` runs with: :func:`with_local_mode` of ``beam_args``."""
    return as_options(with_local_mode(beam_args, patterns))


def _runner_name(options: PipelineOptions) -> str:
    """The class name of ``options``' ``--runner`` (the last dotted part of a path); ``DirectRunner`` when none."""
    return str(options.get_all_options().get("runner") or "DirectRunner").rsplit(".", 1)[-1]


def _direct_mode(options: PipelineOptions) -> str | None:
    """``--direct_running_mode`` when ``options`` run on the DirectRunner (the default runner), else None."""
    if _runner_name(options) not in _DIRECT_RUNNERS:
        return None
    return options.view_as(DirectOptions).direct_running_mode


def runs_in_process(options: PipelineOptions) -> bool:
    """Whether ``options`` run the pipeline's DoFns in this process (the DirectRunner without worker processes)."""
    mode = _direct_mode(options)
    return mode is not None and mode != "multi_processing"


def runs_locally(options: PipelineOptions) -> bool:
    """Whether ``options`` run on the DirectRunner, in any mode: this process then holds the run's data, as the SDK
    harness (``in_memory``) or as the runner of local worker processes that buffers every shuffle (``multi_processing``)."""
    return _direct_mode(options) is not None


def has_local_workers(options: PipelineOptions) -> bool:
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


def check_runner(options: PipelineOptions) -> None:
    """Check that ``options``' ``--runner`` names a runner Beam can build (a name it knows or a runner class's
    dotted path, with its extras installed), before anything is written.

    Raises:
        UsageError: an unknown runner, or one whose module cannot be imported (Beam's message, first line).
    """
    name = options.get_all_options().get("runner")
    if not name or not isinstance(name, str) or _runner_name(options) in ("DirectRunner", "SwitchingDirectRunner"):
        return
    try:
        create_runner(name)
    except (ValueError, ImportError) as exc:
        raise UsageError(f"--runner {name}: {first_line(exc, None)}") from None


def new_pipeline(options: PipelineOptions) -> beam.Pipeline:
    """An empty ``beam.Pipeline`` for ``options``, on :func:`direct_fn_api_runner` where that applies.
    Raises :class:`UsageError` for an unknown ``--runner`` (:func:`check_runner`)."""
    check_runner(options)
    return beam.Pipeline(runner=direct_fn_api_runner(options), options=options)


# --------------------------------------------------------------------------------------------
# Local tuning: allocators, worker environment, terminal noise
# --------------------------------------------------------------------------------------------

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

#: Start of the lines each of Beam's local SDK worker processes (``--direct_running_mode multi_processing``)
#: writes to the stderr it inherits before its log level applies: an import-time warning (GCP client
#: libraries half installed; it also makes ``logging`` install a stderr handler) and that handler's first line.
WORKER_NOISE = (b"WARNING:root:apitools not found", b"INFO:__main__:Logging handler created.")


def tune_glibc_malloc(settings=IN_PROCESS_MALLOPT) -> list[str]:
    """Set glibc's malloc ``settings`` (:data:`IN_PROCESS_MALLOPT`) in this process, each unless its environment
    variable is set; returns the names of those set (none where the C library is not glibc).

    For local runs: where the SDK harness is this process (``in_memory``), and where it is the runner of local worker
    processes (``multi_processing``), which holds every shuffle's buffers (7,736 generated pages, 2 workers: the
    runner's peak RSS 407 -> 288 MiB); the counterpart of :data:`WORKER_ENV`, which cannot be given by environment
    here because the process is running. glibc raises its mmap threshold to the size of each
    mapped block freed (up to 32 MiB), so that the large buffers of the Parquet readers and writers, lxml and numpy
    came from the heap afterwards and the heap kept its high-water: the last stage's peak grew with the corpus
    although what it holds is bounded (8,000 generated pages: peak RSS 694 -> 596 MiB, about 4% more CPU
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
    and writers of the last stage (576 -> 522 MiB peak RSS on 2,000 generated pages; docs/DECISIONS.md "Local
    runner and memory at scale"). Only the allocator changes, not a byte of output.
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


@contextlib.contextmanager
def local_tuning(options: PipelineOptions) -> Iterator[None]:
    """The context that a run with ``options`` runs in: for a local run, :func:`tune_glibc_malloc` (set on entry,
    kept), :func:`arrow_system_pool` where the DoFns run in this process, :func:`worker_env` and, unless INFO is
    logged, :func:`worker_noise_dropped` where local worker processes start; nothing for other runners."""
    if runs_locally(options):
        tune_glibc_malloc()
    with contextlib.ExitStack() as stack:
        if has_local_workers(options):
            if not logging.getLogger().isEnabledFor(logging.INFO):
                stack.enter_context(worker_noise_dropped())
            stack.enter_context(worker_env())
        if runs_in_process(options):
            stack.enter_context(arrow_system_pool())
        yield


# --------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------


def _interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it was raised from) is a KeyboardInterrupt wrapped by the runner."""
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, KeyboardInterrupt) or "KeyboardInterrupt" in str(exc)[:2000]:
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def run_to_completion(p: beam.Pipeline, options: PipelineOptions) -> None:
    """Run ``p`` (built by :func:`new_pipeline` for ``options``) in :func:`local_tuning` and wait until it ends.

    Raises:
        NewscleanError: the job failed (with the runner's first message line) or ended in a state other than DONE.
        KeyboardInterrupt: Ctrl-C, also when the runner reports it as its own error.
    """
    try:
        with local_tuning(options):
            state = p.run().wait_until_finish()
    except KeyboardInterrupt:
        raise
    except Exception as exc:
        if _interrupted(exc):
            raise KeyboardInterrupt from None
        log.debug("pipeline failed", exc_info=True)
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        raise NewscleanError(f"pipeline failed: {type(exc).__name__}: {first}") from exc
    if state not in (PipelineState.DONE, None):
        raise NewscleanError(f"pipeline ended in state {state}")


def run_graph(build: Callable[[beam.Pipeline], None], beam_args: BeamArgs, patterns: list[str]) -> None:
    """Build a graph over the WARC files of ``patterns`` with ``build(p)`` on :func:`new_pipeline` of
    :func:`runner_options` and run it with :func:`run_to_completion` (which raises what it raises)."""
    options = runner_options(beam_args, patterns)
    p = new_pipeline(options)
    build(p)
    run_to_completion(p, options)
