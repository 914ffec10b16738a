"""Choosing and configuring the runner (pipeline/runner.py): local worker count, the DirectRunner without Prism,
the allocator settings of local runs and the workers' stderr noise."""

from __future__ import annotations

import platform

import pyarrow as pa
import pytest
from apache_beam.options.pipeline_options import PipelineOptions

from newsclean.pipeline.runner import (
    IN_PROCESS_MALLOPT,
    arrow_system_pool,
    runs_in_process,
    runs_locally,
    tune_glibc_malloc,
)


def test_worker_noise_is_dropped_and_other_stderr_lines_pass(capfd):
    """Lines a child process writes to the inherited stderr: Beam's worker start-up noise is dropped, a real
    error line passes, in order, and stderr is restored afterwards."""
    import subprocess
    import sys

    from newsclean.pipeline.runner import WORKER_NOISE, worker_noise_dropped

    script = ("import sys; w = sys.stderr.write; "
              f"w({WORKER_NOISE[0].decode()!r} + ', and bigquery ...\\n'); w('Traceback: worker failed\\n'); "
              f"w({WORKER_NOISE[1].decode()!r} + '\\n'); w('last line\\n')")
    with worker_noise_dropped():
        subprocess.run([sys.executable, "-c", script], check=True)
    print("after", file=sys.stderr)
    err = capfd.readouterr().err
    assert err == "Traceback: worker failed\nlast line\nafter\n"


def test_local_mode_is_added_only_when_nothing_else_is_asked(tmp_path):
    from apache_beam.options.pipeline_options import PipelineOptions

    from newsclean.pipeline.runner import LOCAL_PARALLEL_MODE, MIN_PARALLEL_WARC_BYTES, with_local_mode

    small, big = tmp_path / "small", tmp_path / "big"
    for folder, size in ((small, 1000), (big, MIN_PARALLEL_WARC_BYTES * 2)):
        folder.mkdir()
        for name in ("a.warc.gz", "b.warc.gz"):
            with open(folder / name, "wb") as f:
                f.truncate(size)  # sparse: only the size matters
    patterns = [str(big / "*.warc.gz")]  # 4 x 8 MiB: four workers' worth
    plenty = 64 << 30
    parallel = [LOCAL_PARALLEL_MODE, "--direct_num_workers=4"]
    assert with_local_mode(None, patterns, cores=4, memory=plenty) == parallel
    assert with_local_mode(["--job_name=x"], patterns, cores=4, memory=plenty) == ["--job_name=x", *parallel]
    for asked in (["--runner", "DirectRunner"], ["--runner=PortableRunner"], ["--direct_running_mode", "in_memory"],
                  ["--direct_num_workers=3"]):
        assert with_local_mode(asked, patterns, cores=4, memory=plenty) == asked
    assert with_local_mode(None, patterns, cores=1, memory=plenty) is None
    assert with_local_mode(None, [str(small / "*.warc.gz")], cores=4, memory=plenty) is None
    ready = PipelineOptions([])
    assert with_local_mode(ready, patterns, cores=4) is ready


def test_local_workers_follow_input_size_cores_and_memory(tmp_path):
    """One worker per 8 MiB of WARC input, at most one per core, at most one per GiB available (16 workers
    on the 37 MiB shared corpus were no faster than 4 and held 9.4 GB)."""
    from newsclean.pipeline.runner import MIN_PARALLEL_WARC_BYTES, WORKER_MEMORY_BYTES, available_memory, local_workers

    mib8, gib = MIN_PARALLEL_WARC_BYTES, WORKER_MEMORY_BYTES
    assert local_workers(16, 37 << 20, 100 * gib) == 4
    assert local_workers(16, 351 << 20, 100 * gib) == 16
    assert local_workers(16, 351 << 20, 6 * gib + gib // 2) == 6
    assert local_workers(16, 351 << 20, None) == 16  # memory unknown: cores and input decide
    assert local_workers(2, mib8 - 1, 100 * gib) == 1
    assert local_workers(2, 100 * mib8, gib // 2) == 1  # no room for even one worker: stay in one process
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       32000000 kB\nMemFree:  1000 kB\nMemAvailable:   20971520 kB\n")
    assert available_memory(str(meminfo)) == 20 * gib
    meminfo.write_text("MemTotal: 1 kB\n")
    assert available_memory(str(meminfo)) is None
    assert available_memory(str(tmp_path / "missing")) is None


def test_worker_env_is_added_for_the_block_and_a_user_value_is_kept(monkeypatch):
    import os

    from newsclean.pipeline.runner import WORKER_ENV, worker_env

    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")  # the user's choice wins
    with worker_env():
        assert os.environ["MALLOC_ARENA_MAX"] == WORKER_ENV["MALLOC_ARENA_MAX"] == "2"
        assert os.environ["MALLOC_MMAP_THRESHOLD_"] == "131072"  # 128 KiB, as tune_glibc_malloc sets in-process
        assert os.environ["ARROW_DEFAULT_MEMORY_POOL"] == "jemalloc"
    assert "MALLOC_ARENA_MAX" not in os.environ and os.environ["ARROW_DEFAULT_MEMORY_POOL"] == "jemalloc"


def test_direct_fn_api_runner_only_for_the_direct_runner():
    """The DirectRunner's FnApiRunner, with the pipeline options handed on to its SDK workers; other runners are
    left to Beam (None)."""
    from apache_beam.options.pipeline_options import PipelineOptions
    from apache_beam.runners.portability.fn_api_runner.fn_runner import FnApiRunner

    from newsclean.pipeline.runner import direct_fn_api_runner

    for args in ([], ["--runner", "DirectRunner"], ["--runner=apache_beam.runners.direct.direct_runner.DirectRunner"]):
        runner = direct_fn_api_runner(PipelineOptions([*args, "--direct_num_workers=3"]))
        assert isinstance(runner, FnApiRunner)
        handed_on = runner._provision_info.provision_info.pipeline_options
        assert float(handed_on["beam:option:direct_num_workers:v1"]) == 3  # a number or its text, as Beam encodes it
    for other in ("PrismRunner", "PortableRunner", "DataflowRunner", "BundleBasedDirectRunner"):
        assert direct_fn_api_runner(PipelineOptions(["--runner", other])) is None


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_malloc_settings_are_set_unless_the_user_chose_them(monkeypatch):
    for _, env, _ in IN_PROCESS_MALLOPT:
        monkeypatch.delenv(env, raising=False)
    assert tune_glibc_malloc() == [env for _, env, _ in IN_PROCESS_MALLOPT]
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert tune_glibc_malloc() == ["MALLOC_MMAP_THRESHOLD_"]


def test_the_system_pool_holds_inside_the_block_and_the_previous_one_comes_back(monkeypatch):
    monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL", raising=False)
    before = pa.default_memory_pool()
    with arrow_system_pool():
        assert pa.default_memory_pool().backend_name == "system"
    assert pa.default_memory_pool().backend_name == before.backend_name
    try:
        with arrow_system_pool():
            raise KeyError("boom")
    except KeyError:
        pass
    assert pa.default_memory_pool().backend_name == before.backend_name


def test_a_pool_the_user_chose_is_kept(monkeypatch):
    monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", "mimalloc")  # read at pyarrow's import; only presence matters
    before = pa.default_memory_pool().backend_name
    with arrow_system_pool():
        assert pa.default_memory_pool().backend_name == before


def test_only_runs_in_this_process_count_as_in_process():
    def opts(*args):
        return PipelineOptions(list(args))

    assert runs_in_process(opts())
    assert runs_in_process(opts("--runner", "DirectRunner", "--direct_running_mode", "in_memory"))
    assert runs_in_process(opts("--direct_running_mode=multi_threading"))
    assert not runs_in_process(opts("--direct_running_mode", "multi_processing", "--direct_num_workers", "2"))
    assert not runs_in_process(opts("--runner", "PortableRunner"))
    assert not runs_in_process(opts("--runner", "DataflowRunner"))


def test_the_malloc_settings_go_to_every_local_run_and_to_no_cluster_launcher():
    def opts(*args):
        return PipelineOptions(list(args))

    assert runs_locally(opts())
    assert runs_locally(opts("--direct_running_mode", "in_memory"))
    assert runs_locally(opts("--direct_running_mode", "multi_processing", "--direct_num_workers", "2"))  # the runner
    assert not runs_locally(opts("--runner", "PortableRunner"))
    assert not runs_locally(opts("--runner", "DataflowRunner"))
