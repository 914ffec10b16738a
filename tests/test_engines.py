"""Beam's real engines on this machine, beside the FnApiRunner that every other test uses.

Flink (marker ``flink``): the standalone cluster of ``infra/flink/local-cluster.sh`` on 127.0.0.1, from the pinned
packages of ``infra/flink/versions.env``, starts with the pinned Flink, one TaskManager with 2 slots and the SDK
worker pool, and ``stop`` leaves none of its processes; ``newsclean clean --runner FlinkRunner`` on it gives the same
article, reject and duplicate rows as the local runner. The tests download nothing: ``.ci/run`` fetches Flink (PyPI,
~235 MB, SHA-256 checked) into ``NEWSCLEAN_INFRA_CACHE`` (default ``~/.cache/newsclean-infra``) before the suite, and
the tests skip, naming the fetch command, where it is not there or there is no Java; each test cluster has its own
state folder and free ports. The pipeline test also needs Beam's Flink job server jar (``local-cluster.sh
fetch-job-server``, Maven Central, also tried by ``.ci/run``): it skips where the registry did not serve it.

Prism (marker ``prism``): ``--runner PrismRunner`` gives the same rows as the local runner, with the SDK harness in
the launching process (LOOPBACK) and in a process of Beam's SDK worker pool (EXTERNAL). Needs the binary that
``make prism`` builds from the Go module proxy (``$NEWSCLEAN_INFRA_CACHE/bin/prism``; ``.ci/run`` does); skipped
without it. ``make prism`` keeps a binary of the pinned version instead of rebuilding it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from warc_builder import Response, article_page, paragraph, write_warc

from newsclean.pipeline.clean import run_clean
from newsclean.pipeline.options import CleanConfig

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "infra" / "flink" / "local-cluster.sh"
START_LIMIT_S = 600  # the first start downloads Flink
RUN_LIMIT_S = 420  # one launcher run on the cluster
T0 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)


def versions() -> dict[str, str]:
    """The ``KEY=value`` pins of ``infra/flink/versions.env``."""
    lines = (ROOT / "infra" / "flink" / "versions.env").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


def _java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and Path(home, "bin", "java").exists():
        return str(Path(home, "bin", "java"))
    return shutil.which("java")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


class Cluster:
    """One cluster of ``local-cluster.sh``: its environment (ports, state folder) and its commands."""

    def __init__(self, state: Path):
        self.rest, self.rpc, self.pool = _free_port(), _free_port(), _free_port()
        self.state = state
        self.env = {**os.environ, "NEWSCLEAN_FLINK_STATE": str(state), "FLINK_REST_PORT": str(self.rest),
                    "FLINK_RPC_PORT": str(self.rpc), "BEAM_WORKER_POOL_PORT": str(self.pool),
                    "PYTHON": sys.executable}

    def run(self, command: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", str(SCRIPT), command], env=self.env, capture_output=True, text=True,
                              timeout=timeout)

    def pids(self) -> list[int]:
        """The pids in the cluster's pid files that are alive."""
        alive = []
        for f in (self.state / "pid").glob("*.pid"):
            for line in f.read_text().split():
                try:
                    os.kill(int(line), 0)
                    alive.append(int(line))
                except (ProcessLookupError, ValueError):
                    pass
        return alive

    def rest_get(self, path: str) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.rest}{path}", timeout=10) as r:
            return json.load(r)

    def flags(self) -> list[str]:
        return self.run("flags").stdout.split()


def _needs_java() -> None:
    if _java() is None:
        pytest.skip("no Java (java on PATH or JAVA_HOME): Flink needs Java 11+")


def infra_cache() -> Path:
    """Where ``local-cluster.sh`` and ``make prism`` keep what they fetched (``NEWSCLEAN_INFRA_CACHE``)."""
    return Path(os.environ.get("NEWSCLEAN_INFRA_CACHE") or Path.home() / ".cache" / "newsclean-infra")


def _needs_cached(path: Path, what: str, fetch: str) -> None:
    """Skip unless ``path`` was fetched before the tests: the suite itself downloads nothing."""
    if not path.exists():
        pytest.skip(f"{what} is not in {infra_cache()}: `bash infra/flink/local-cluster.sh {fetch}` fetches it "
                    "(.ci/run does, before the tests)")


def _needs_flink() -> None:
    _needs_java()
    _needs_cached(infra_cache() / f"flink-{versions()['FLINK_VERSION']}" / ".complete", "Flink", "fetch-flink")


@pytest.mark.flink
def test_cluster_starts_with_the_pinned_flink_and_stop_leaves_no_process(tmp_path):
    _needs_flink()
    c = Cluster(tmp_path / "state")
    started = c.run("start", timeout=START_LIMIT_S)
    try:
        assert started.returncode == 0, started.stdout[-2000:] + started.stderr[-3000:]
        assert len(c.pids()) == 3  # JobManager, TaskManager, worker pool
        overview = c.rest_get("/overview")
        assert overview["flink-version"] == versions()["FLINK_VERSION"]
        assert (overview["taskmanagers"], overview["slots-total"]) == (1, 2)
        (tm,) = c.rest_get("/taskmanagers")["taskmanagers"]
        memory = c.rest_get(f"/taskmanagers/{tm['id']}")["memoryConfiguration"]
        # taskmanager.memory.process.size = 1280m: the JVM's share of the 2-core, shared machine is bounded.
        assert sum(memory[k] for k in ("frameworkHeap", "taskHeap", "frameworkOffHeap", "taskOffHeap",
                                       "networkMemory", "managedMemory", "jvmMetaspace", "jvmOverhead")) == 1280 << 20
        assert _listening(c.pool)  # the Beam SDK worker pool (EXTERNAL environment)
        assert c.run("status").returncode == 0
        assert c.run("start").returncode != 0  # a second start refuses while this one runs
    finally:
        stopped = c.run("stop")
    assert stopped.returncode == 0, stopped.stderr[-2000:]
    assert c.pids() == [] and not any(_listening(p) for p in (c.rest, c.pool))
    assert c.run("stop").returncode == 0
    assert c.run("status").returncode == 1


@pytest.fixture
def cluster(tmp_path):
    """A started cluster whose job server jar is at hand; stopped (every process) after the test."""
    _needs_flink()
    v = versions()
    _needs_cached(infra_cache() / "jars" / f"beam-runners-flink-{v['FLINK_MINOR']}-job-server-{v['BEAM_VERSION']}.jar",
                  "Beam's Flink job server jar (Maven Central does not serve it here)", "fetch-job-server")
    c = Cluster(tmp_path / "state")
    started = c.run("start", timeout=START_LIMIT_S)
    try:
        assert started.returncode == 0, started.stdout[-2000:] + started.stderr[-3000:]
        yield c
    finally:
        c.run("stop")
        assert c.pids() == []


@pytest.fixture(scope="module")
def warc(tmp_path_factory) -> Path:
    """Two sites x 5 stories, a 404, an exact copy of a story on a second URL and a near copy (one word changed)."""
    root = tmp_path_factory.mktemp("flink-warc")
    for site, cat, seed in (("alpha", "politics", 10), ("beta", "world", 50)):
        stories = [[paragraph(seed + 3 * i + j) for j in range(3)] for i in range(5)]
        pages = [Response(f"http://{site}.test/{cat}/story-{i}.html",
                          article_page(site, cat, f"{site} story {i}", paras).encode(),
                          date=T0 + timedelta(minutes=i)) for i, paras in enumerate(stories)]
        near = [*stories[0][:2], stories[0][2].replace("reports:", "writes:")]  # one word of 135
        pages += [Response(f"http://{site}.test/{cat}/copy.html",
                           article_page(site, cat, f"{site} story 0", stories[0]).encode(), date=T0 + timedelta(hours=1)),
                  Response(f"http://{site}.test/{cat}/update.html",
                           article_page(site, cat, f"{site} story 0", near).encode(), date=T0 + timedelta(hours=2)),
                  Response(f"http://{site}.test/{cat}/gone.html", b"<html>gone</html>", status=404)]
        write_warc(root / "warc" / site / cat / f"{site}-{cat}-20240501T100000Z-00000.warc.gz", site, cat, pages)
    return root


def _rows(out: Path, name: str) -> list[dict]:
    return sorted(pq.read_table(out / name).to_pylist(), key=lambda r: json.dumps(r, sort_keys=True, default=str))


@pytest.fixture(scope="module")
def local(warc) -> Path:
    """The crawl cleaned on the local runner (the FnApiRunner, in this process)."""
    out = warc / "out-local"
    run_clean(CleanConfig(warc=str(warc / "warc"), out=str(out)), ["--runner", "DirectRunner"])
    assert sorted(r["reason"] for r in _rows(out, "duplicates")) == ["exact_duplicate"] * 2 + ["near_duplicate"] * 2
    return out


def _clean_equals_local(warc: Path, local: Path, name: str, flags: list[str], env: dict) -> None:
    """``newsclean clean`` with ``flags`` in a child process writes the rows of ``local``."""
    out = warc / f"out-{name}"
    env = {**env, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")}
    proc = subprocess.run([sys.executable, "-m", "newsclean.cli", "clean", "--warc", str(warc / "warc"),
                           "--out", str(out), *flags], env=env, capture_output=True, text=True, timeout=RUN_LIMIT_S)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "10 + 2 + 4 = 16 vs 16 read: ok" in proc.stdout  # 2 exact copies counted, 2 near copies in duplicates/
    for rows in ("articles", "rejects", "duplicates"):
        assert _rows(out, rows) == _rows(local, rows), rows


@pytest.mark.flink
def test_flink_runner_rows_equal_the_local_runners(cluster, warc, local):
    _clean_equals_local(warc, local, "flink", cluster.flags(), cluster.env)


def prism_binary() -> Path:
    """Where ``make prism`` puts Beam's Prism runner."""
    return infra_cache() / "bin" / "prism"


def _needs_prism() -> None:
    if not prism_binary().exists():
        pytest.skip(f"no Prism binary at {prism_binary()} (make prism builds it from the Go module proxy)")


@pytest.mark.prism
def test_prism_runner_rows_equal_the_local_runners(warc, local):
    _needs_prism()
    _clean_equals_local(warc, local, "prism", ["--runner", "PrismRunner", "--prism_location", str(prism_binary())],
                        dict(os.environ))


class WorkerPool:
    """Beam's SDK worker pool (``worker_pool_main``) on a free port, in a session of its own; ``workers`` collects the
    pids of the SDK harness processes it starts (sampled every 0.1 s while it runs)."""

    def __init__(self, log: Path):
        self.port = _free_port()
        self.log = log
        self.workers: set[int] = set()
        self._done = threading.Event()
        # The pool starts workers with the `python` on PATH: the virtualenv's, so that they import newsclean.
        env = {**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")}
        with log.open("wb") as err:
            self.proc = subprocess.Popen([sys.executable, "-m", "apache_beam.runners.worker.worker_pool_main",
                                          "--service_port", str(self.port)], env=env, stdout=subprocess.DEVNULL,
                                         stderr=err, start_new_session=True)
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()

    def _sample(self) -> None:
        while not self._done.wait(0.1):
            self.workers.update(pid for pid, ppid, cmd in _processes()
                                if ppid == self.proc.pid and b"SdkHarness" in cmd)

    def started(self) -> list[str]:
        """The worker ids of the pool's StartWorker calls, from its log."""
        return [line.split('worker_id="', 1)[1].split('"', 1)[0]
                for line in self.log.read_text().splitlines() if "Starting worker with command" in line]

    def stop(self) -> None:
        """SIGTERM to the pool's session (the pool and its workers), SIGKILL after 30 s."""
        self._done.set()
        self._sampler.join()
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        except ProcessLookupError:
            pass

    def alive(self) -> list[int]:
        """The pool's and its workers' pids that still run (zombies have no command line and do not count)."""
        return [pid for pid, _, cmd in _processes() if pid in {self.proc.pid, *self.workers} and cmd]


def _processes() -> list[tuple[int, int, bytes]]:
    """(pid, parent pid, command line) of every process now, from Linux's /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        if entry.name.isdigit():
            found.append((int(entry.name), int(stat.rsplit(")", 1)[1].split()[1]), cmd))
    return found


@pytest.fixture
def worker_pool(tmp_path):
    """A started SDK worker pool; stopped after the test, leaving none of its processes."""
    _needs_prism()
    pool = WorkerPool(tmp_path / "pool.log")
    try:
        deadline = time.monotonic() + 120  # generous: the pool imports Beam on a busy machine
        while not _listening(pool.port):
            assert pool.proc.poll() is None and time.monotonic() < deadline, pool.log.read_text()[-2000:]
            time.sleep(0.2)
        yield pool
    finally:
        pool.stop()
    assert pool.alive() == []
    assert not _listening(pool.port)


@pytest.mark.prism
def test_prism_runner_with_an_external_worker_pool_rows_equal_the_local_runners(warc, local, worker_pool):
    """The SDK harness runs in a process the pool starts, not in the launcher. Prism 2.77 asks the pool for one worker
    per environment of the pipeline (one here) and reads no ``--sdk_worker_parallelism``, so one process it is."""
    flags = ["--runner", "PrismRunner", "--prism_location", str(prism_binary()), "--environment_type", "EXTERNAL",
             "--environment_config", f"127.0.0.1:{worker_pool.port}"]
    _clean_equals_local(warc, local, "prism-external", flags, dict(os.environ))
    (worker_id,) = worker_pool.started()
    assert worker_id.endswith("_default_environment_1")
    assert len(worker_pool.workers) == 1


def _fake_go(tmp_path: Path) -> tuple[Path, Path]:
    """A ``go`` that logs its arguments and GOTOOLCHAIN and installs an empty ``prism`` into GOBIN."""
    fake, log = tmp_path / "fake-bin", tmp_path / "go.log"
    fake.mkdir()
    (fake / "go").write_text(f'#!/bin/sh\necho "$GOTOOLCHAIN $*" >> {log}\n'
                             '[ "$1" = install ] && mkdir -p "$GOBIN" && printf "#!/bin/sh\\n" > "$GOBIN/prism" '
                             '&& chmod +x "$GOBIN/prism"\nexit 0\n')
    (fake / "go").chmod(0o755)
    return fake, log


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_make_prism_builds_the_pinned_version_once(tmp_path):
    fake, log = _fake_go(tmp_path)
    env = {**os.environ, "PATH": f"{fake}{os.pathsep}{os.environ.get('PATH', '')}", "GOTOOLCHAIN": "local"}
    make = ["make", "-s", "-C", str(ROOT), "prism", f"INFRA_CACHE={tmp_path / 'cache'}"]
    stamp = tmp_path / "cache" / "bin" / "prism.version"
    for _ in range(2):
        done = subprocess.run(make, env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert stamp.read_text().strip() == versions()["PRISM_VERSION"]
    builds = [line for line in log.read_text().splitlines() if " install " in line]
    assert builds == [f"auto install github.com/apache/beam/sdks/v2/go/cmd/prism@v{versions()['PRISM_VERSION']}"]
    stamp.write_text("2.76.0\n")  # a binary of another version is rebuilt
    assert subprocess.run(make, env=env, capture_output=True, timeout=60).returncode == 0
    assert sum(" install " in line for line in log.read_text().splitlines()) == 2


def test_spilled_article_paths_leave_at_epoch_not_at_the_end_of_time(tmp_path, local):
    """WriteToParquet emits its paths at the end of time, which Prism never scheduled into ReadSpilled's stage."""
    import apache_beam as beam
    from apache_beam.testing.util import assert_that, equal_to

    from newsclean.pipeline.dedup import SpillArticles, keyed_article
    from newsclean.schemas.records import Article, from_row

    articles = [from_row(Article, row) for row in _rows(local, "articles")[:2]]
    with beam.Pipeline() as p:
        stamps = (p | beam.Create(articles) | beam.Map(keyed_article) | SpillArticles(str(tmp_path))
                  | beam.Map(lambda path, ts=beam.DoFn.TimestampParam: ts.micros))
        assert_that(stamps, equal_to([0]))


def test_the_clusters_flags_are_beam_flags_for_its_flink_and_worker_pool(tmp_path):
    from apache_beam.options.pipeline_options import FlinkRunnerOptions, PipelineOptions, PortableOptions

    from newsclean.pipeline.options import unknown_beam_flags

    c = Cluster(tmp_path / "state")
    flags = c.flags()
    assert unknown_beam_flags(flags) == []
    options = PipelineOptions(flags)
    flink, portable = options.view_as(FlinkRunnerOptions), options.view_as(PortableOptions)
    assert flink.flink_version == versions()["FLINK_MINOR"] and flink.flink_version in flink.PUBLISHED_FLINK_VERSIONS
    assert flink.flink_master == f"127.0.0.1:{c.rest}"
    assert flink.flink_job_server_jar.endswith(f"-job-server-{versions()['BEAM_VERSION']}.jar")
    assert versions()["BEAM_VERSION"] == versions()["PRISM_VERSION"] == __import__("apache_beam").__version__
    assert (portable.environment_type, portable.environment_config) == ("EXTERNAL", f"127.0.0.1:{c.pool}")
